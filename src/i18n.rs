//! Every user-facing string of the UI, in one place. zh-CN is the default and carries the
//! seeds' exact strings; PRODUCT.md's UI contract relies on these accessible names.

use serde::{Deserialize, Serialize};

use crate::model::Mode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Lang {
    #[default]
    ZhCn,
    En,
}

/// The strings of one UI language.
#[derive(Debug)]
pub struct Texts {
    pub html_lang: &'static str,
    pub app_title: &'static str,
    pub tagline: &'static str,
    pub ask: &'static str,
    pub ask_placeholder: &'static str,
    pub send: &'static str,
    pub stop: &'static str,
    pub mode: &'static str,
    pub settings: &'static str,
    pub conversation: &'static str,
    pub empty_conversation: &'static str,
    pub search_switch: &'static str,
    pub search_switch_help: &'static str,
    pub search_switch_auto: &'static str,
    pub search_switch_auto_research: &'static str,
    pub search_on_confirmed: &'static str,
    pub search_off_confirmed: &'static str,
    pub mode_confirmed: &'static str,
    pub save_failed: &'static str,
    pub no_script: &'static str,
    pub searxng_checking: &'static str,
    pub searxng_ok: &'static str,
    pub searxng_bad: &'static str,
    pub recheck: &'static str,
}

pub const ZH_CN: Texts = Texts {
    html_lang: "zh-CN",
    app_title: "cited",
    tagline: "每一句回答都有出处",
    ask: "提问",
    ask_placeholder: "输入问题，Enter 发送，Shift+Enter 换行",
    send: "发送",
    stop: "停止",
    mode: "模式",
    settings: "设置",
    conversation: "对话记录",
    empty_conversation: "提出一个问题，回答中的每个论断都会链接到它的来源。",
    search_switch: "联网搜索",
    search_switch_help: "启用后将使用SearXNG搜索实时信息",
    search_switch_auto: "Agent 模式下由 AI 自动决策搜索",
    search_switch_auto_research: "深度研究模式下由 AI 自动决策搜索",
    search_on_confirmed: "已开启联网搜索",
    search_off_confirmed: "已关闭联网搜索",
    mode_confirmed: "已切换到",
    save_failed: "设置未能保存",
    no_script: "此页面需要 JavaScript 才能提问；设置和对话记录仍可查看。",
    searxng_checking: "正在检查 SearXNG…",
    searxng_ok: "SearXNG 正常",
    searxng_bad: "SearXNG 不可用",
    recheck: "重新检查",
};

pub const EN: Texts = Texts {
    html_lang: "en",
    app_title: "cited",
    tagline: "Every answer shows where it came from",
    ask: "Ask",
    ask_placeholder: "Ask a question. Enter sends, Shift+Enter adds a line",
    send: "Send",
    stop: "Stop",
    mode: "Mode",
    settings: "Settings",
    conversation: "Conversation",
    empty_conversation: "Ask a question: every claim in the answer links to its source.",
    search_switch: "Web search",
    search_switch_help: "When on, cited searches SearXNG for current information",
    search_switch_auto: "In Agent mode the AI decides when to search",
    search_switch_auto_research: "In Research mode the AI decides when to search",
    search_on_confirmed: "Web search is on",
    search_off_confirmed: "Web search is off",
    mode_confirmed: "Switched to",
    save_failed: "The setting was not saved",
    no_script: "Asking needs JavaScript; settings and the conversation stay readable.",
    searxng_checking: "Checking SearXNG…",
    searxng_ok: "SearXNG is working",
    searxng_bad: "SearXNG is unavailable",
    recheck: "Check again",
};

impl Lang {
    pub fn texts(self) -> &'static Texts {
        match self {
            Lang::ZhCn => &ZH_CN,
            Lang::En => &EN,
        }
    }

    pub fn mode_name(self, mode: Mode) -> &'static str {
        match (self, mode) {
            (Lang::ZhCn, Mode::Chat) => "对话",
            (Lang::ZhCn, Mode::Agent) => "智能体",
            (Lang::ZhCn, Mode::Research) => "深度研究",
            (Lang::En, Mode::Chat) => "Chat",
            (Lang::En, Mode::Agent) => "Agent",
            (Lang::En, Mode::Research) => "Research",
        }
    }
}
