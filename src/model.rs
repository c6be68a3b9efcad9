//! Types that cross the wire between the server and the browser. Pure data: no IO, no
//! `cfg(feature)`, so the same definitions build for wasm32 and for the host.

use serde::{Deserialize, Serialize};

/// The three ways cited answers (PRODUCT.md "The three modes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// 对话: search once (when the switch is on), then answer; numbers are per answer.
    #[default]
    Chat,
    /// 智能体: the model decides when to search; numbers are session-global.
    Agent,
    /// 深度研究: plan, research branches in parallel, verify, answer.
    Research,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Chat, Mode::Agent, Mode::Research];

    /// The stable identifier used in forms, URLs and the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Chat => "chat",
            Mode::Agent => "agent",
            Mode::Research => "research",
        }
    }

    pub fn parse(raw: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|mode| mode.as_str() == raw)
    }

    /// Only Chat mode has a user-controlled search switch; Agent and Research decide
    /// themselves (seed 003 搜索开关控制).
    pub fn has_search_switch(self) -> bool {
        self == Mode::Chat
    }
}

/// What a session remembers about the user's choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    pub mode: Mode,
    /// The Chat-mode search switch. Kept while Agent or Research mode shows it disabled,
    /// so switching back to Chat restores it.
    pub search_enabled: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            mode: Mode::Chat,
            search_enabled: true,
        }
    }
}

/// Where a source came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// A web page found through SearXNG.
    #[default]
    Web,
    /// A document of the local knowledge base.
    Knowledge,
}

/// One search result, normalised: what every search provider hands to the pipelines.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Source {
    pub url: String,
    pub title: String,
    /// Already cut to `CITED_SNIPPET_CHARS` on a character boundary.
    pub snippet: String,
    #[serde(default)]
    pub engines: Vec<String>,
    /// ISO-8601 as the engine gave it, when it gave one.
    #[serde(default)]
    pub published: Option<String>,
    #[serde(default)]
    pub kind: SourceKind,
}

/// The health of an outside service (SearXNG, the model), as the settings panel shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceStatus {
    pub ok: bool,
    /// Where cited looks for the service.
    pub url: String,
    /// What is wrong and how to fix it; empty when `ok`.
    pub message: String,
}
