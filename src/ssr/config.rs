//! Typed configuration, read once at startup from the environment and an optional `.env`.
//!
//! Raw strings go in, checked values come out. As seed 003 (搜索配置) asks, a value that does
//! not parse or is out of range never stops the app: it is replaced by its default and a
//! [`ConfigWarning`] names the variable, the rejected value, what is accepted and the default
//! used. Each variable is declared once, in [`vars`]. Nothing else in the crate reads the
//! environment. Secrets live in [`Secret`], whose
//! `Debug` and `Display` print `***`, so logging the whole config is safe.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use url::Url;

pub mod vars;

use vars::{Shown, Var, VARS};

/// A value that must never reach a log line, an error message or `Debug` output.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The secret itself, for the one place that needs it (an `Authorization` header).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// The language sent to SearXNG.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchLanguage {
    /// zh-CN for questions with Han characters, otherwise SearXNG's own `auto`.
    Auto,
    /// A fixed SearXNG language code such as `en`, `en-US`, `zh-CN` or `all`.
    Fixed(String),
}

impl fmt::Display for SearchLanguage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SearchLanguage::Auto => f.write_str("auto"),
            SearchLanguage::Fixed(code) => f.write_str(code),
        }
    }
}

/// Where the OpenAI-compatible model lives. Absent when nothing is configured: cited then
/// answers with the offline extractive answerer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmConfig {
    pub base_url: Url,
    /// Optional: Ollama, llama.cpp server and vLLM need no key.
    pub api_key: Option<Secret>,
    pub model: String,
    /// The model for planning, verifying, titles and follow-ups (`CITED_LLM_MODEL_FAST`);
    /// `None`: `model` does everything.
    pub fast_model: Option<String>,
    /// More endpoints whose models the picker offers (`CITED_LLM_ENDPOINTS`).
    pub more: Vec<Endpoint>,
}

/// A further model endpoint: `CITED_LLM_ENDPOINTS=name=url …`, its key in
/// `CITED_LLM_API_KEY_<NAME>` and its default model in `CITED_LLM_MODEL_<NAME>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Lowercase letters, digits, `-` and `_`; shown in the picker.
    pub name: String,
    pub base_url: Url,
    pub api_key: Option<Secret>,
    /// The model asked when the endpoint cannot list its own.
    pub model: Option<String>,
}

impl Endpoint {
    /// The variable holding this endpoint's `suffix` (`API_KEY`, `MODEL`).
    pub fn var(name: &str, suffix: &str) -> String {
        format!(
            "CITED_LLM_{suffix}_{}",
            name.to_ascii_uppercase().replace('-', "_")
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub addr: SocketAddr,
    pub searxng_url: Url,
    pub search_results: usize,
    pub search_timeout: Duration,
    pub search_language: SearchLanguage,
    pub snippet_chars: usize,
    pub llm: Option<LlmConfig>,
    /// Characters of prompt (system, history, sources, question) sent to the model at most.
    pub llm_context_chars: usize,
    /// Searches the Agent may make for one answer.
    pub agent_max_searches: usize,
    /// How long and how much each model call may write.
    pub limits: ModelLimits,
    pub research: ResearchConfig,
    /// Where answers search unless the session chose (`CITED_SOURCES`).
    pub sources: crate::model::Sources,
    /// Files and folders of the local knowledge base (`CITED_KNOWLEDGE_DIR`; default: the
    /// project's own documentation).
    pub knowledge: Vec<PathBuf>,
    /// A `tracing_subscriber::EnvFilter` directive string, already checked.
    pub log: String,
    pub max_question_chars: usize,
    pub session_idle: Duration,
    /// Where conversations are kept: `sqlite:PATH` (default: `cited.db` under the platform
    /// data folder) or `postgres://…` (`CITED_DATABASE_URL`).
    pub database_url: String,
    /// Where conversation titles come from (`CITED_TITLES`).
    pub titles: Titles,
    /// Where the follow-up questions under an answer come from (`CITED_RELATED`).
    pub related: Related,
    /// Who judges the citations (`CITED_CHECK`).
    pub check: Check,
    /// What each focus searches (`CITED_FOCUS_<NAME>`).
    pub focus: FocusMap,
    /// Valkey/Redis shared by every instance (`CITED_REDIS_URL`): the search cache, rate
    /// limits, running answers, their events and stop signals. `None`: all in this process.
    pub redis_url: Option<Url>,
    /// How long a search is answered from the shared cache (`CITED_SEARCH_CACHE_SECS`).
    pub search_cache: Duration,
    /// Logs as one JSON object per line (`CITED_LOG_FORMAT=json`) instead of text.
    pub log_json: bool,
    /// How long checking an answer's citations against their pages may take after the
    /// answer (`CITED_ALIGN_DEADLINE_SECS`; 0 turns the check off).
    pub align_deadline: Duration,
    /// The folder holding `pkg/cited.js`, `pkg/cited.wasm`, `pkg/cited.css` and `public/`'s files.
    pub site_root: PathBuf,
    /// Every variable as it was read, for the startup summary and `cited config`.
    pub settings: Vec<Setting>,
    /// Who may use the app, and the names it may be reached by.
    pub access: AccessConfig,
    /// How much the app takes on at once, and from whom.
    pub capacity: Capacity,
    /// Thumbnails and favicons, fetched through cited.
    pub media: MediaConfig,
}

/// The image strip and the sources' favicons: fetched by cited (never by the browser from
/// third parties) and kept on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaConfig {
    /// Search SearXNG's images category with each web answer (`CITED_IMAGES`, on).
    pub images: bool,
    /// Show the sources' favicons (`CITED_FAVICONS`, on).
    pub favicons: bool,
    /// Where fetched images are kept (`CITED_MEDIA_DIR`; default `cited/media` under the
    /// platform cache folder).
    pub dir: PathBuf,
    /// The most the kept images take, least recently used first out (`CITED_MEDIA_CACHE_MB`).
    pub cache_bytes: u64,
    /// Private addresses server-side fetching may reach anyway (`CITED_FETCH_ALLOW`,
    /// `host:port` list): for intranets and tests.
    pub allow: Vec<SocketAddr>,
}

/// How people sign in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// Nobody signs in: every browser is its own anonymous user. Only allowed on loopback.
    Off,
    /// Accounts in the database (`cited user add`), a login page, sessions bound to a user.
    Accounts,
    /// A reverse proxy in front authenticates and names the user in `header`; requests from
    /// other addresses than `from` are refused.
    Proxy { header: String, from: Vec<IpNet> },
}

/// An address block, such as `10.0.0.0/8` or a single address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpNet {
    pub addr: std::net::IpAddr,
    pub prefix: u8,
}

impl IpNet {
    pub fn parse(raw: &str) -> Option<IpNet> {
        let raw = raw.trim();
        let (addr, prefix) = match raw.split_once('/') {
            Some((addr, prefix)) => (addr, Some(prefix)),
            None => (raw, None),
        };
        let addr: std::net::IpAddr = addr.trim().parse().ok()?;
        let bits = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(prefix) => prefix.trim().parse::<u8>().ok().filter(|p| *p <= bits)?,
            None => bits,
        };
        Some(IpNet { addr, prefix })
    }

    pub fn contains(&self, ip: std::net::IpAddr) -> bool {
        let ip = match ip {
            std::net::IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, std::net::IpAddr::V4),
            v4 => v4,
        };
        let mask = |bits: u32, width: u32| {
            if bits == 0 {
                0u128
            } else {
                (!0u128 << (width - bits)) & (!0u128 >> (128 - width))
            }
        };
        match (self.addr, ip) {
            (std::net::IpAddr::V4(net), std::net::IpAddr::V4(ip)) => {
                let mask = mask(u32::from(self.prefix), 32);
                u128::from(u32::from(net)) & mask == u128::from(u32::from(ip)) & mask
            }
            (std::net::IpAddr::V6(net), std::net::IpAddr::V6(ip)) => {
                let mask = mask(u32::from(self.prefix), 128);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

impl fmt::Display for IpNet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// Who may reach the app and how it answers across origins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessConfig {
    pub auth: Auth,
    /// Host names (no port) requests may name; `None` accepts any.
    pub allowed_hosts: Option<Vec<String>>,
    /// Where people reach the app (`CITED_PUBLIC_URL`): an https URL makes cookies `Secure`
    /// and adds HSTS; its host is always allowed.
    pub public_url: Option<Url>,
    /// Reverse proxies whose `X-Forwarded-For` names the client (`CITED_TRUSTED_PROXIES`;
    /// with proxy sign-in, `CITED_AUTH_PROXY_FROM` too): rate limits then count the client,
    /// not the proxy.
    pub trusted_proxies: Vec<IpNet>,
    /// How long a signed-in session is trusted from memory before the store is asked again
    /// whether its browser is still signed in (signed out elsewhere, a new password, the
    /// user removed by `cited user` in another process). Not a setting: 5 s, shorter in
    /// tests.
    pub recheck: Duration,
}

impl AccessConfig {
    /// Whether cookies need `Secure`.
    pub fn secure_cookies(&self) -> bool {
        self.public_url
            .as_ref()
            .is_some_and(|url| url.scheme() == "https")
    }
}

/// How much the app takes on at once, and from whom. The defaults keep a 2-core host
/// responsive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capacity {
    /// Answers being written at once (all modes); more wait in a fair queue.
    pub answers: usize,
    /// Research answers at once (each is many searches, reads and model calls).
    pub research: usize,
    /// Model calls at once, across all answers.
    pub model_calls: usize,
    /// Page reads at once, across all answers.
    pub page_reads: usize,
    /// Questions one user (or anonymous browser) may ask per minute.
    pub asks_per_minute: u32,
    /// Requests one address may make per minute (assets excluded).
    pub requests_per_minute: u32,
    /// Shared conversations (`/s/<token>`, `/api/shared`) one address may open per minute.
    pub shares_per_minute: u32,
    /// Open connections at once; more wait in the kernel's queue.
    pub connections: usize,
    /// Open connections one address may hold (slow ones and answer streams count); more are
    /// closed at once. Trusted proxies (`CITED_TRUSTED_PROXIES`) are exempt.
    pub connections_per_address: usize,
    /// A connection must send a request's headers within this (also the idle keep-alive).
    pub header_timeout: Duration,
    /// Largest request body accepted.
    pub body_bytes: usize,
    /// Largest file attached to a conversation (`CITED_FILE_MAX_MB`).
    pub file_bytes: usize,
    /// The address space of the child process that reads one file (`CITED_FILE_MEMORY_MB`).
    pub file_memory_bytes: u64,
    /// Its CPU and wall-clock time (`CITED_FILE_SECS`).
    pub file_time: Duration,
    /// Questions one conversation may hold; past it, a new chat (`CITED_MAX_EXCHANGES`).
    pub exchanges_per_conversation: usize,
    /// Most bytes of answer text kept; a longer one is cut with a notice.
    pub answer_bytes: usize,
    /// Most stored conversation data per user; past it new questions are refused.
    pub user_quota_bytes: u64,
}

/// Where a conversation's title comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Titles {
    /// The first question, then a short title the model writes (when one is configured).
    Model,
    /// The first question only.
    Question,
}

/// The SearXNG categories and engines each focus searches. Empty: SearXNG's defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FocusMap {
    pub searches: Vec<(crate::model::Focus, FocusSearch)>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FocusSearch {
    pub categories: Vec<String>,
    pub engines: Vec<String>,
}

impl FocusMap {
    pub fn get(&self, focus: crate::model::Focus) -> FocusSearch {
        self.searches
            .iter()
            .find(|(known, _)| *known == focus)
            .map(|(_, search)| search.clone())
            .unwrap_or_default()
    }
}

impl fmt::Display for FocusSearch {
    /// `categories=science;engines=arxiv,pubmed`, the variable's own form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if !self.categories.is_empty() {
            parts.push(format!("categories={}", self.categories.join(",")));
        }
        if !self.engines.is_empty() {
            parts.push(format!("engines={}", self.engines.join(",")));
        }
        write!(f, "{}", parts.join(";"))
    }
}

/// `categories=a,b;engines=x,y` (either part, or none for SearXNG's defaults).
fn parse_focus(raw: &str) -> Option<FocusSearch> {
    let mut search = FocusSearch::default();
    for part in raw
        .split(';')
        .map(str::trim)
        .filter(|part| !part.is_empty())
    {
        let (key, list) = part.split_once('=')?;
        let names: Vec<String> = list
            .split(',')
            .map(|name| name.trim().to_string())
            .filter(|name| !name.is_empty())
            .collect();
        let valid = |name: &String| {
            name.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '_' | '-' | '.'))
        };
        if names.is_empty() || !names.iter().all(valid) {
            return None;
        }
        match key.trim() {
            "categories" => search.categories = names,
            "engines" => search.engines = names,
            _ => return None,
        }
    }
    Some(search)
}

/// Where the follow-up questions under an answer ("相关问题") come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Related {
    /// The model writes them in a short second call (the sources' headings fill in, and
    /// stand in without a model).
    Model,
    /// The sources' headings and titles only: no extra model call.
    Sources,
    /// None.
    Off,
}

/// Who judges an answer's citations against their sources (`CITED_CHECK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// The configured model (the fast one when there is one), in one batched call after
    /// the answer; the offline checker where it gives no usable verdict, and without a
    /// model.
    Model,
    /// The offline checker only (words, numbers, names, the dictionary).
    Lexical,
    /// No check.
    Off,
}

/// What a model call is for; each kind has its own `max_tokens`, and every kind but
/// `Answer` goes to the fast model when there is one (`CITED_LLM_MODEL_FAST`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CallKind {
    /// Research's plan of sub-questions.
    Plan,
    /// Research's verdict on the chain, and its summary.
    Verify,
    /// A Research branch's reflection and evidence.
    Branch,
    /// The streamed answer of every mode (and the Agent's tool-calling turns).
    #[default]
    Answer,
    /// A conversation's title (and the follow-up questions).
    Title,
    /// The citation check's verdicts (`CITED_CHECK=model`).
    Check,
}

impl CallKind {
    /// The variable that sets this kind's `max_tokens`.
    pub fn variable(self) -> &'static str {
        match self {
            CallKind::Plan => "CITED_LLM_MAX_TOKENS_PLAN",
            CallKind::Verify => "CITED_LLM_MAX_TOKENS_VERIFY",
            CallKind::Branch => "CITED_LLM_MAX_TOKENS_BRANCH",
            CallKind::Answer | CallKind::Title | CallKind::Check => "CITED_LLM_MAX_TOKENS_ANSWER",
        }
    }
}

/// Bounds on every model call: a small local model must finish or be cut, never run on.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelLimits {
    pub max_tokens_plan: u32,
    pub max_tokens_verify: u32,
    pub max_tokens_branch: u32,
    pub max_tokens_answer: u32,
    /// One call, from the request to its last token.
    pub call_deadline: Duration,
    /// Between two stream events.
    pub idle_timeout: Duration,
    /// Ask for JSON through `response_format` where the server accepts it
    /// (`CITED_LLM_STRUCTURED`, default on).
    pub structured: bool,
    /// Price per million prompt / completion tokens, for the cost shown under an answer.
    pub price_input: Option<f64>,
    pub price_output: Option<f64>,
}

impl ModelLimits {
    pub fn max_tokens(&self, kind: CallKind) -> u32 {
        match kind {
            CallKind::Plan => self.max_tokens_plan,
            CallKind::Verify => self.max_tokens_verify,
            CallKind::Branch => self.max_tokens_branch,
            CallKind::Answer => self.max_tokens_answer,
            // Room for a reasoning model to think first.
            CallKind::Title => 200,
            // A verdict and a short quote per citation.
            CallKind::Check => self.max_tokens_answer,
        }
    }

    /// What `usage` costs, when prices are set.
    pub fn cost(&self, prompt_tokens: u64, completion_tokens: u64) -> Option<f64> {
        if self.price_input.is_none() && self.price_output.is_none() {
            return None;
        }
        let per_token =
            |price: Option<f64>, tokens: u64| price.unwrap_or(0.0) * tokens as f64 / 1e6;
        Some(
            per_token(self.price_input, prompt_tokens)
                + per_token(self.price_output, completion_tokens),
        )
    }
}

impl Default for ModelLimits {
    fn default() -> ModelLimits {
        Config::from_vars(|_| None).0.limits
    }
}

/// Research mode's limits and search profiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResearchConfig {
    /// Plan → branches → verify loops at most (seed 004: 4).
    pub max_loops: usize,
    /// Branches running at once (SearXNG's upstream engines rate-limit bursts).
    pub max_branches: usize,
    /// A branch taking longer is recorded as failed.
    pub branch_timeout: Duration,
    /// SearXNG engines asked to check named entities (the encyclopedia step).
    pub encyclopedia_engines: Vec<String>,
    /// Engines for Chinese sub-questions; empty: the instance's defaults.
    pub engines_zh: Vec<String>,
    /// Engines for other sub-questions; empty: the instance's defaults.
    pub engines_en: Vec<String>,
    /// Pages read in full per branch (0 turns deep-reading off).
    pub deep_reads: usize,
    /// Search results a branch reads (`CITED_RESEARCH_RESULTS`).
    pub results: usize,
    /// Characters of each result's snippet a branch reads (`CITED_RESEARCH_SNIPPET_CHARS`).
    pub snippet_chars: usize,
    /// The whole plan → branches → verify research may take no longer; past it the answer
    /// is written from the evidence so far.
    pub deadline: Duration,
}

/// A rejected value, replaced by its default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigWarning {
    pub var: &'static str,
    pub value: String,
    pub accepts: String,
    pub default: String,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}={:?} is invalid (accepts {}); using the default {}",
            self.var, self.value, self.accepts, self.default
        )
    }
}

/// A URL as it may be shown: user name and password (`https://user:pw@host`) removed.
pub fn redacted(url: &Url) -> String {
    let mut shown = url.clone();
    if !shown.username().is_empty() || shown.password().is_some() {
        let _ = shown.set_username("");
        let _ = shown.set_password(None);
    }
    shown.to_string()
}

/// Takes the internal addresses (SearXNG's, the model endpoints') out of what users see
/// when people sign in (`CITED_AUTH`): the app is shared, its addresses are the operator's
/// business. The log keeps the details. Empty, and a no-op, when nobody signs in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Redactor {
    /// (address as messages print it, is a model endpoint), longest first.
    addresses: Vec<(String, bool)>,
}

impl Redactor {
    pub fn of(config: &Config) -> Redactor {
        if config.access.auth == Auth::Off {
            return Redactor::default();
        }
        let mut addresses = vec![(redacted(&config.searxng_url), false)];
        if let Some(llm) = &config.llm {
            addresses.push((redacted(&llm.base_url), true));
            for endpoint in &llm.more {
                addresses.push((redacted(&endpoint.base_url), true));
            }
        }
        // Each with and without its final slash, as messages print either.
        let mut forms: Vec<(String, bool)> = addresses
            .iter()
            .flat_map(|(address, model)| {
                let bare = address.trim_end_matches('/').to_string();
                [(address.clone(), *model), (bare, *model)]
            })
            .filter(|(address, _)| !address.is_empty())
            .collect();
        forms.sort_by_key(|(address, _)| std::cmp::Reverse(address.len()));
        forms.dedup();
        Redactor { addresses: forms }
    }

    /// `text` with each internal address named instead ("SearXNG", "the model server").
    pub fn apply(&self, text: &str, lang: crate::model::Lang) -> String {
        let mut text = text.to_string();
        for (address, model) in &self.addresses {
            if text.contains(address.as_str()) {
                let name = match (model, lang) {
                    (false, _) => "SearXNG",
                    (true, crate::model::Lang::ZhCn) => "模型服务",
                    (true, crate::model::Lang::En) => "the model server",
                };
                text = text.replace(address.as_str(), name);
            }
        }
        text
    }
}

/// `cited/media` under `$XDG_CACHE_HOME`, else `~/.cache`, else the working directory.
fn default_media_dir(get: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    let cache = get("XDG_CACHE_HOME")
        .filter(|dir| !dir.trim().is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            get("HOME")
                .filter(|dir| !dir.trim().is_empty())
                .map(|home| PathBuf::from(home).join(".cache"))
        });
    match cache {
        Some(dir) => dir.join("cited").join("media"),
        None => PathBuf::from("cited-media"),
    }
}

/// `sqlite:` + `cited/cited.db` under `$XDG_DATA_HOME`, else `~/.local/share`, else the
/// working directory.
fn default_database_url(get: &dyn Fn(&str) -> Option<String>) -> String {
    let data = get("XDG_DATA_HOME")
        .filter(|dir| !dir.trim().is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            get("HOME")
                .filter(|dir| !dir.trim().is_empty())
                .map(|home| PathBuf::from(home).join(".local/share"))
        });
    match data {
        Some(dir) => format!("sqlite:{}", dir.join("cited").join("cited.db").display()),
        None => "sqlite:cited.db".to_string(),
    }
}

fn parse_database_url(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let sqlite = raw
        .strip_prefix("sqlite:")
        .is_some_and(|path| !path.trim_start_matches("//").is_empty());
    let postgres = (raw.starts_with("postgres://") || raw.starts_with("postgresql://"))
        && Url::parse(raw).is_ok_and(|url| url.host_str().is_some());
    (sqlite || postgres).then(|| raw.to_string())
}

/// A database URL as it may be logged: a PostgreSQL password removed.
pub fn shown_database_url(url: &str) -> String {
    match Url::parse(url) {
        Ok(parsed) if url.starts_with("postgres") => redacted(&parsed),
        _ => url.to_string(),
    }
}

pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// The name of the endpoint `CITED_LLM_BASE_URL` configures, in model choices (`main|model`).
pub const MAIN_ENDPOINT: &str = "main";

/// Where a value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Default,
    Environment,
    DotEnv,
}

impl Origin {
    fn as_str(self) -> &'static str {
        match self {
            Origin::Default => "default",
            Origin::Environment => "environment",
            Origin::DotEnv => ".env",
        }
    }
}

/// One variable as it was read: its value as it may be printed, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    pub var: &'static Var,
    pub shown: String,
    pub origin: Origin,
}

/// A variable's value as it may be printed: credentials out of URLs, secrets as set or not.
fn shown_value(var: &Var, value: &str) -> String {
    match var.shown {
        _ if value.is_empty() => "none".to_string(),
        Shown::Plain => value.to_string(),
        Shown::Url => match Url::parse(value) {
            Ok(url) if !url.username().is_empty() || url.password().is_some() => redacted(&url),
            _ => shown_raw(value),
        },
        Shown::Secret => "*** (set)".to_string(),
    }
}

impl Config {
    /// This program's own binary (what runs `cited extract` for added files).
    pub fn this_binary() -> std::io::Result<std::path::PathBuf> {
        std::env::current_exe()
    }

    /// Reads the process environment, with `.env` in the working directory as a fallback
    /// for variables the environment does not set.
    pub fn from_env() -> (Config, Vec<ConfigWarning>) {
        let dotenv: Vec<(String, String)> = dotenvy::from_path_iter(".env")
            .map(|iter| iter.filter_map(Result::ok).collect())
            .unwrap_or_default();
        Config::from_lookup(&|name| match std::env::var(name) {
            Ok(value) => Some((value, Origin::Environment)),
            Err(_) => dotenv
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| (value.clone(), Origin::DotEnv)),
        })
    }

    /// Builds the configuration from a variable lookup, so tests never touch the process env.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> (Config, Vec<ConfigWarning>) {
        Config::from_lookup(&|name| get(name).map(|value| (value, Origin::Environment)))
    }

    fn from_lookup(
        lookup: &dyn Fn(&str) -> Option<(String, Origin)>,
    ) -> (Config, Vec<ConfigWarning>) {
        let mut reader = Reader {
            lookup: &|name| lookup(name).filter(|(value, _)| !value.trim().is_empty()),
            warnings: Vec::new(),
            settings: Vec::new(),
        };
        let addr = reader.parse("CITED_ADDR", |raw| raw.trim().parse::<SocketAddr>().ok());
        let searxng_url = reader.parse("CITED_SEARXNG_URL", parse_http_url);
        let search_results = reader.number("CITED_SEARCH_RESULTS");
        let search_timeout = reader.duration("CITED_SEARCH_TIMEOUT_SECS");
        let search_language = reader.parse("CITED_SEARCH_LANGUAGE", parse_language);
        let snippet_chars = reader.number("CITED_SNIPPET_CHARS");
        let log = reader.parse("CITED_LOG", |raw| {
            tracing_subscriber::EnvFilter::try_new(raw.trim())
                .ok()
                .map(|_| raw.trim().to_string())
        });
        let max_question_chars = reader.number("CITED_MAX_QUESTION_CHARS");
        let session_idle = reader.duration("CITED_SESSION_IDLE_MINS");
        let default_database = default_database_url(&|name| reader.raw(name));
        let database_url =
            reader.parse_or("CITED_DATABASE_URL", &default_database, parse_database_url);
        let redis_url = reader.parse("CITED_REDIS_URL", |raw| {
            if raw.trim().is_empty() {
                return Some(None);
            }
            let url = Url::parse(raw.trim()).ok()?;
            (matches!(url.scheme(), "redis" | "rediss" | "valkey" | "valkeys")
                && url.host_str().is_some())
            .then_some(Some(url))
        });
        let search_cache = reader.duration("CITED_SEARCH_CACHE_SECS");
        let log_json = reader.parse("CITED_LOG_FORMAT", |raw| match raw.trim() {
            "text" => Some(false),
            "json" => Some(true),
            _ => None,
        });
        let titles = reader.parse("CITED_TITLES", |raw| match raw.trim() {
            "model" => Some(Titles::Model),
            "question" => Some(Titles::Question),
            _ => None,
        });
        let related = reader.parse("CITED_RELATED", |raw| match raw.trim() {
            "model" => Some(Related::Model),
            "sources" => Some(Related::Sources),
            "off" => Some(Related::Off),
            _ => None,
        });
        let check = reader.parse("CITED_CHECK", |raw| match raw.trim() {
            "model" => Some(Check::Model),
            "lexical" => Some(Check::Lexical),
            "off" => Some(Check::Off),
            _ => None,
        });
        let focus = reader.focus();
        let site_root = reader.parse("CITED_SITE_ROOT", |raw| Some(PathBuf::from(raw.trim())));
        let llm_context_chars = reader.number("CITED_LLM_CONTEXT_CHARS");
        let agent_max_searches = reader.number("CITED_AGENT_MAX_SEARCHES");
        let limits = reader.limits();
        let research = reader.research();
        let sources = reader.parse("CITED_SOURCES", crate::model::Sources::parse);
        let knowledge = reader.parse("CITED_KNOWLEDGE_DIR", |raw| {
            let paths: Vec<PathBuf> = raw
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(PathBuf::from)
                .collect();
            (!paths.is_empty()).then_some(paths)
        });
        let llm = reader.llm();
        let align_deadline = reader.duration("CITED_ALIGN_DEADLINE_SECS");
        let access = reader.access(addr);
        let capacity = reader.capacity();
        let media = reader.media();
        let mut settings = reader.settings;
        settings.sort_by_key(|setting| VARS.iter().position(|var| std::ptr::eq(var, setting.var)));
        let config = Config {
            media,
            access,
            capacity,
            align_deadline,
            research,
            sources,
            knowledge,
            addr,
            searxng_url,
            search_results,
            search_timeout,
            search_language,
            snippet_chars,
            llm,
            llm_context_chars,
            agent_max_searches,
            limits,
            log,
            max_question_chars,
            session_idle,
            database_url,
            redis_url,
            search_cache,
            log_json,
            titles,
            related,
            check,
            focus,
            site_root,
            settings,
        };
        (config, reader.warnings)
    }

    /// Every variable as it was read at start, in the docs' order.
    pub fn settings(&self) -> &[Setting] {
        &self.settings
    }

    /// What the startup log says: where the configuration came from in one line, then each
    /// value that is not a default.
    pub fn summary(&self) -> Vec<String> {
        let count = |origin| {
            self.settings
                .iter()
                .filter(|setting| setting.origin == origin)
                .count()
        };
        let mut lines = vec![format!(
            "configuration: {} from the environment, {} from .env, {} defaults (`cited config` prints them all)",
            count(Origin::Environment),
            count(Origin::DotEnv),
            count(Origin::Default)
        )];
        lines.extend(
            self.settings
                .iter()
                .filter(|setting| setting.origin != Origin::Default)
                .map(|setting| {
                    format!(
                        "{}={} ({})",
                        setting.var.name,
                        setting.shown,
                        setting.origin.as_str()
                    )
                }),
        );
        lines
    }
}

impl fmt::Display for Config {
    /// The configuration as it was read, one `NAME=value` per line, secrets redacted.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, setting) in self.settings.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{}={}", setting.var.name, setting.shown)?;
        }
        Ok(())
    }
}

struct Reader<'a> {
    lookup: &'a dyn Fn(&str) -> Option<(String, Origin)>,
    warnings: Vec<ConfigWarning>,
    settings: Vec<Setting>,
}

impl Reader<'_> {
    /// A variable's raw value, not recorded (the platform's `HOME`, `XDG_*`).
    fn raw(&self, name: &str) -> Option<String> {
        (self.lookup)(name).map(|(value, _)| value)
    }

    /// A whole number in its declared range.
    fn number(&mut self, name: &str) -> usize {
        let var = vars::get(name);
        let (min, max) = match var.accepts {
            vars::Accepts::Count { min, max } => (min, max),
            _ => panic!("{name} is not declared as a count"),
        };
        self.parse(name, |raw| parse_in_range(raw, min, max))
    }

    /// A whole number of seconds or minutes in its declared range.
    fn duration(&mut self, name: &str) -> Duration {
        let var = vars::get(name);
        let (min, max, unit) = match var.accepts {
            vars::Accepts::Seconds { min, max } => (min, max, 1),
            vars::Accepts::Minutes { min, max } => (min, max, 60),
            _ => panic!("{name} is not declared as a duration"),
        };
        self.parse(name, |raw| {
            parse_in_range(raw, min, max).map(|n| Duration::from_secs(n as u64 * unit))
        })
    }

    /// Parses `name`, or its declared default when it is unset or rejected (with a warning).
    fn parse<T>(&mut self, name: &str, parse: impl Fn(&str) -> Option<T>) -> T {
        self.parse_or(name, vars::get(name).default, parse)
    }

    /// As [`Reader::parse`], with a default worked out at start.
    fn parse_or<T>(&mut self, name: &str, default: &str, parse: impl Fn(&str) -> Option<T>) -> T {
        let var = vars::get(name);
        let default_value = || parse(default).expect("every default parses with its own parser");
        let taken = match (self.lookup)(var.name) {
            None => None,
            Some((raw, origin)) => match parse(&raw) {
                Some(value) => Some((value, raw.trim().to_string(), origin)),
                None => {
                    self.warnings.push(ConfigWarning {
                        var: var.name,
                        value: shown_raw(&raw),
                        accepts: var.accepts.words(),
                        default: if default.is_empty() { "none" } else { default }.to_string(),
                    });
                    None
                }
            },
        };
        let (value, raw, origin) =
            taken.unwrap_or_else(|| (default_value(), default.to_string(), Origin::Default));
        self.record(var, &raw, origin);
        value
    }

    fn record(&mut self, var: &'static Var, value: &str, origin: Origin) {
        self.settings.push(Setting {
            var,
            shown: shown_value(var, value),
            origin,
        });
    }

    /// What each focus searches (`CITED_FOCUS_<NAME>`).
    fn focus(&mut self) -> FocusMap {
        let reader = self;
        FocusMap {
            searches: crate::model::Focus::ALL
                .into_iter()
                .map(|focus| {
                    let var = format!("CITED_FOCUS_{}", focus.as_str().to_ascii_uppercase());
                    (focus, reader.parse(vars::get(&var).name, parse_focus))
                })
                .collect(),
        }
    }

    fn on_off(raw: &str) -> Option<bool> {
        match raw.trim() {
            "on" => Some(true),
            "off" => Some(false),
            _ => None,
        }
    }

    /// How long and how much each model call may write, and what it costs.
    fn limits(&mut self) -> ModelLimits {
        let tokens =
            |reader: &mut Reader, var| u32::try_from(reader.number(var)).unwrap_or(u32::MAX);
        ModelLimits {
            max_tokens_plan: tokens(self, "CITED_LLM_MAX_TOKENS_PLAN"),
            max_tokens_verify: tokens(self, "CITED_LLM_MAX_TOKENS_VERIFY"),
            max_tokens_branch: tokens(self, "CITED_LLM_MAX_TOKENS_BRANCH"),
            max_tokens_answer: tokens(self, "CITED_LLM_MAX_TOKENS_ANSWER"),
            call_deadline: self.duration("CITED_LLM_CALL_DEADLINE_SECS"),
            idle_timeout: self.duration("CITED_LLM_IDLE_TIMEOUT_SECS"),
            structured: self.parse("CITED_LLM_STRUCTURED", Reader::on_off),
            price_input: self.parse("CITED_LLM_PRICE_INPUT", parse_price),
            price_output: self.parse("CITED_LLM_PRICE_OUTPUT", parse_price),
        }
    }

    /// Research mode's limits and search profiles.
    fn research(&mut self) -> ResearchConfig {
        ResearchConfig {
            max_loops: self.number("CITED_RESEARCH_MAX_LOOPS"),
            // Chosen with `make bench-research-material` (docs/configuration.md says why).
            results: self.number("CITED_RESEARCH_RESULTS"),
            snippet_chars: self.number("CITED_RESEARCH_SNIPPET_CHARS"),
            max_branches: self.number("CITED_RESEARCH_MAX_BRANCHES"),
            branch_timeout: self.duration("CITED_RESEARCH_BRANCH_TIMEOUT_SECS"),
            encyclopedia_engines: self.parse("CITED_RESEARCH_ENCYCLOPEDIA_ENGINES", parse_engines),
            engines_zh: self.parse("CITED_RESEARCH_ENGINES_ZH", parse_engines),
            engines_en: self.parse("CITED_RESEARCH_ENGINES_EN", parse_engines),
            deep_reads: self.number("CITED_RESEARCH_DEEP_READS"),
            deadline: self.duration("CITED_RESEARCH_DEADLINE_SECS"),
        }
    }

    /// How much the app takes on at once, and from whom.
    fn capacity(&mut self) -> Capacity {
        let per_minute =
            |reader: &mut Reader, var| u32::try_from(reader.number(var)).unwrap_or(u32::MAX);
        let mebibytes = |reader: &mut Reader, var| reader.number(var) as u64 * 1024 * 1024;
        Capacity {
            answers: self.number("CITED_MAX_ANSWERS"),
            research: self.number("CITED_MAX_RESEARCH"),
            model_calls: self.number("CITED_MAX_MODEL_CALLS"),
            page_reads: self.number("CITED_MAX_PAGE_READS"),
            asks_per_minute: per_minute(self, "CITED_RATE_ASKS_PER_MIN"),
            requests_per_minute: per_minute(self, "CITED_RATE_REQUESTS_PER_MIN"),
            shares_per_minute: per_minute(self, "CITED_RATE_SHARES_PER_MIN"),
            connections: self.number("CITED_MAX_CONNECTIONS"),
            connections_per_address: self.number("CITED_MAX_CONNECTIONS_PER_ADDRESS"),
            header_timeout: self.duration("CITED_HEADER_TIMEOUT_SECS"),
            body_bytes: self.number("CITED_MAX_BODY_KB") * 1024,
            file_bytes: self.number("CITED_FILE_MAX_MB") * 1024 * 1024,
            file_memory_bytes: mebibytes(self, "CITED_FILE_MEMORY_MB"),
            file_time: self.duration("CITED_FILE_SECS"),
            exchanges_per_conversation: self.number("CITED_MAX_EXCHANGES"),
            answer_bytes: self.number("CITED_MAX_ANSWER_KB") * 1024,
            user_quota_bytes: mebibytes(self, "CITED_USER_QUOTA_MB"),
        }
    }

    /// Thumbnails and favicons, and where server-side fetching may reach.
    fn media(&mut self) -> MediaConfig {
        let default_dir = default_media_dir(&|name| self.raw(name));
        MediaConfig {
            images: self.parse("CITED_IMAGES", Reader::on_off),
            favicons: self.parse("CITED_FAVICONS", Reader::on_off),
            dir: self.parse_or(
                "CITED_MEDIA_DIR",
                &default_dir.display().to_string(),
                |raw| Some(PathBuf::from(raw.trim())),
            ),
            cache_bytes: self.number("CITED_MEDIA_CACHE_MB") as u64 * 1024 * 1024,
            allow: self.parse("CITED_FETCH_ALLOW", |raw| match raw.trim() {
                "none" | "" => Some(Vec::new()),
                raw => raw
                    .split(',')
                    .map(|addr| addr.trim().parse::<SocketAddr>().ok())
                    .collect(),
            }),
        }
    }

    /// Sign-in, allowed host names and the public URL. Bound to loopback, the allowed hosts
    /// default to the loopback names (a page elsewhere cannot rebind its name to 127.0.0.1
    /// and read the app); elsewhere to any name.
    fn access(&mut self, addr: SocketAddr) -> AccessConfig {
        let public_url = self.parse("CITED_PUBLIC_URL", |raw| match raw.trim() {
            "none" => Some(None),
            raw => parse_http_url(raw).map(Some),
        });
        let auth_kind = self.parse("CITED_AUTH", |raw| match raw.trim() {
            kind @ ("off" | "accounts" | "proxy") => Some(kind.to_string()),
            _ => None,
        });
        // Read whatever the kind, so a typo shows before the day proxy sign-in is turned on.
        let header = self.parse("CITED_AUTH_PROXY_HEADER", |raw| {
            // An HTTP token (RFC 9110), compared lower-cased as headers are.
            let raw = raw.trim();
            let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
            (!raw.is_empty() && raw.chars().all(tchar)).then(|| raw.to_ascii_lowercase())
        });
        let from = self.parse("CITED_AUTH_PROXY_FROM", |raw| {
            raw.split(',').map(IpNet::parse).collect::<Option<Vec<_>>>()
        });
        let auth = match auth_kind.as_str() {
            "accounts" => Auth::Accounts,
            "proxy" => Auth::Proxy { header, from },
            _ => Auth::Off,
        };
        let default_hosts = if addr.ip().is_loopback() {
            "localhost,127.0.0.1,[::1]"
        } else {
            "*"
        };
        let allowed_hosts = self.parse_or("CITED_ALLOWED_HOSTS", default_hosts, parse_hosts);
        let allowed_hosts = allowed_hosts.map(|mut hosts| {
            if let Some(host) = public_url.as_ref().and_then(Url::host_str) {
                let host = host.to_ascii_lowercase();
                if !hosts.contains(&host) {
                    hosts.push(host);
                }
            }
            hosts
        });
        let mut trusted_proxies = self.parse("CITED_TRUSTED_PROXIES", |raw| {
            if raw.trim() == "none" {
                return Some(Vec::new());
            }
            raw.split(',').map(IpNet::parse).collect::<Option<Vec<_>>>()
        });
        if let Auth::Proxy { from, .. } = &auth {
            trusted_proxies.extend(from.iter().copied());
        }
        AccessConfig {
            auth,
            allowed_hosts,
            public_url,
            trusted_proxies,
            recheck: Duration::from_secs(5),
        }
    }

    /// The model endpoint: CITED_LLM_* first, then OPENAI_BASE_URL / OPENAI_API_KEY. With no
    /// base URL and no key there is no model.
    fn llm(&mut self) -> Option<LlmConfig> {
        let openai_key = self.parse("OPENAI_API_KEY", |raw| Some(raw.trim().to_string()));
        let key = self.parse("CITED_LLM_API_KEY", |raw| Some(raw.trim().to_string()));
        let api_key = [key, openai_key]
            .into_iter()
            .find(|key| !key.is_empty())
            .map(Secret::new);
        // A URL that does not parse is left out with a warning; a key still configures
        // OpenAI's endpoint.
        let url = |raw: &str| match raw.trim() {
            "" => Some(None),
            raw => parse_http_url(raw).map(Some),
        };
        let openai_url = self.parse("OPENAI_BASE_URL", url);
        let cited_url = self.parse("CITED_LLM_BASE_URL", url);
        let model = self.parse("CITED_LLM_MODEL", |raw| Some(raw.trim().to_string()));
        let fast_model = self.parse("CITED_LLM_MODEL_FAST", |raw| {
            Some(Some(raw.trim().to_string()).filter(|fast| !fast.is_empty()))
        });
        let more = self.endpoints();
        // `CITED_LLM_BASE_URL`, when set (even to something invalid), wins over
        // `OPENAI_BASE_URL`, which is read only when it is not.
        let chosen = if self.raw("CITED_LLM_BASE_URL").is_some() {
            cited_url
        } else {
            openai_url
        };
        let base_url = match (chosen, &api_key) {
            (Some(url), _) => url,
            (None, Some(_)) => Url::parse(DEFAULT_OPENAI_BASE_URL).expect("literal URL is valid"),
            (None, None) => return None,
        };
        Some(LlmConfig {
            base_url,
            api_key,
            fast_model: fast_model.filter(|fast| *fast != model),
            model,
            more,
        })
    }

    /// `CITED_LLM_ENDPOINTS`: `name=url` pairs separated by spaces, commas or semicolons.
    /// A pair that does not parse is left out with a warning; the rest stand.
    fn endpoints(&mut self) -> Vec<Endpoint> {
        let var = vars::get("CITED_LLM_ENDPOINTS");
        let Some((raw, origin)) = (self.lookup)(var.name) else {
            self.record(var, "", Origin::Default);
            return Vec::new();
        };
        let mut endpoints: Vec<Endpoint> = Vec::new();
        for pair in raw
            .split([' ', ',', ';', '\n', '\t'])
            .filter(|pair| !pair.is_empty())
        {
            let parsed = pair.split_once('=').and_then(|(name, url)| {
                let name = name.trim().to_ascii_lowercase();
                let valid = !name.is_empty()
                    && name.len() <= 32
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                    && name != MAIN_ENDPOINT
                    && !endpoints.iter().any(|e| e.name == name);
                Some((name, parse_http_url(url.trim())?)).filter(|_| valid)
            });
            let Some((name, base_url)) = parsed else {
                self.warnings.push(ConfigWarning {
                    var: var.name,
                    value: shown_raw(pair),
                    accepts: var.accepts.words(),
                    default: "(this endpoint left out)".to_string(),
                });
                continue;
            };
            let api_key = self
                .raw(&Endpoint::var(&name, "API_KEY"))
                .map(|key| key.trim().to_string())
                .filter(|key| !key.is_empty())
                .map(Secret::new);
            let model = self
                .raw(&Endpoint::var(&name, "MODEL"))
                .map(|model| model.trim().to_string())
                .filter(|model| !model.is_empty());
            endpoints.push(Endpoint {
                name,
                base_url,
                api_key,
                model,
            });
        }
        let shown: Vec<String> = endpoints
            .iter()
            .map(|endpoint| {
                let key = if endpoint.api_key.is_some() {
                    " (key set)"
                } else {
                    ""
                };
                format!("{}={}{key}", endpoint.name, redacted(&endpoint.base_url))
            })
            .collect();
        self.settings.push(Setting {
            var,
            shown: if shown.is_empty() {
                "none".to_string()
            } else {
                shown.join(" ")
            },
            origin,
        });
        endpoints
    }
}

/// `CITED_ALLOWED_HOSTS`: `*` (any), or host names; a port (`example.org:3000`) is dropped,
/// as requests' are.
fn parse_hosts(raw: &str) -> Option<Option<Vec<String>>> {
    if raw.trim() == "*" {
        return Some(None);
    }
    let hosts: Vec<String> = raw
        .split(',')
        .map(|host| {
            let host = host.trim().to_ascii_lowercase();
            match host.rsplit_once(':') {
                Some((name, port))
                    if !port.is_empty()
                        && port.bytes().all(|b| b.is_ascii_digit())
                        && (!name.contains(':') || name.ends_with(']')) =>
                {
                    name.to_string()
                }
                _ => host,
            }
        })
        .filter(|host| !host.is_empty())
        .collect();
    let valid = |host: &String| {
        host.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '[' | ']' | ':'))
    };
    (!hosts.is_empty() && hosts.iter().all(valid)).then_some(Some(hosts))
}

/// A price per million tokens (`0.15`), or none.
fn parse_price(raw: &str) -> Option<Option<f64>> {
    match raw.trim() {
        "none" => Some(None),
        raw => raw
            .parse::<f64>()
            .ok()
            .filter(|price| price.is_finite() && *price >= 0.0)
            .map(Some),
    }
}

/// A rejected value as it may be logged: credentials in anything URL-like (`user:pw@`)
/// replaced by `***`.
fn shown_raw(raw: &str) -> String {
    let Some(scheme_end) = raw.find("://") else {
        return raw.to_string();
    };
    let rest = &raw[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{}***@{}", &raw[..scheme_end + 3], &rest[at + 1..]),
        None => raw.to_string(),
    }
}

fn parse_in_range(raw: &str, min: usize, max: usize) -> Option<usize> {
    raw.trim()
        .parse::<usize>()
        .ok()
        .filter(|value| (min..=max).contains(value))
}

/// `none` (no engines) or engine names separated by commas; SearXNG names are words with
/// spaces, hyphens and underscores.
fn parse_engines(raw: &str) -> Option<Vec<String>> {
    let raw = raw.trim();
    if raw.eq_ignore_ascii_case("none") {
        return Some(Vec::new());
    }
    let names: Vec<String> = raw
        .split(',')
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .collect();
    let valid = |name: &String| {
        name.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.'))
    };
    (!names.is_empty() && names.iter().all(valid)).then_some(names)
}

fn parse_http_url(raw: &str) -> Option<Url> {
    Url::parse(raw.trim())
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https") && url.host().is_some())
}

fn parse_language(raw: &str) -> Option<SearchLanguage> {
    let raw = raw.trim();
    if raw.eq_ignore_ascii_case("auto") {
        return Some(SearchLanguage::Auto);
    }
    if raw == "all" {
        return Some(SearchLanguage::Fixed(raw.to_string()));
    }
    // SearXNG's own check: ^[a-z]{2,3}(-[a-zA-Z]{2})?$ (anything else answers 400).
    let (lang, region) = match raw.split_once('-') {
        Some((lang, region)) => (lang, Some(region)),
        None => (raw, None),
    };
    let lang_ok = (2..=3).contains(&lang.len()) && lang.bytes().all(|b| b.is_ascii_lowercase());
    let region_ok =
        region.is_none_or(|r| r.len() == 2 && r.bytes().all(|b| b.is_ascii_alphabetic()));
    (lang_ok && region_ok).then(|| SearchLanguage::Fixed(raw.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn load(vars: &[(&str, &str)]) -> (Config, Vec<ConfigWarning>) {
        Config::from_vars(|name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        })
    }

    #[test]
    fn defaults() {
        let (config, warnings) = load(&[]);
        assert!(warnings.is_empty());
        assert_eq!(config.addr.to_string(), "127.0.0.1:3000");
        assert_eq!(config.searxng_url.as_str(), "http://localhost:8080/");
        assert_eq!(config.search_results, 5);
        assert_eq!(config.search_timeout, Duration::from_secs(5));
        assert_eq!(config.search_language, SearchLanguage::Auto);
        assert_eq!(config.snippet_chars, 200);
        assert_eq!(config.llm, None);
        assert_eq!(config.llm_context_chars, 32000);
        assert_eq!(config.log, vars::get("CITED_LOG").default);
        assert_eq!(config.max_question_chars, 8000);
        assert_eq!(config.session_idle, Duration::from_secs(24 * 3600));
        assert_eq!(config.research.max_loops, 4);
        assert_eq!(config.research.results, 10);
        assert_eq!(config.research.snippet_chars, 400);
        assert_eq!(config.research.max_branches, 4);
        assert_eq!(config.research.encyclopedia_engines, vec!["wikipedia"]);
        assert!(config.research.engines_zh.is_empty());
        assert_eq!(config.sources, crate::model::Sources::Auto);
        assert_eq!(config.knowledge.len(), 4);
    }

    #[test]
    fn sources_accept_both_spellings() {
        for (raw, expected) in [
            ("web,knowledge", crate::model::Sources::Both),
            ("knowledge, web", crate::model::Sources::Both),
            ("Knowledge", crate::model::Sources::Knowledge),
            ("web", crate::model::Sources::Web),
        ] {
            let (config, warnings) = load(&[("CITED_SOURCES", raw)]);
            assert_eq!(warnings, vec![], "{raw}");
            assert_eq!(config.sources, expected, "{raw}");
        }
    }

    #[test]
    fn each_focus_names_categories_or_engines() {
        use crate::model::Focus;
        let (config, warnings) = load(&[
            (
                "CITED_FOCUS_ACADEMIC",
                "engines=arxiv, pubmed ;categories=science",
            ),
            ("CITED_FOCUS_NEWS", "topics=world"),
        ]);
        let academic = config.focus.get(Focus::Academic);
        assert_eq!(academic.engines, vec!["arxiv", "pubmed"]);
        assert_eq!(academic.categories, vec!["science"]);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].var, "CITED_FOCUS_NEWS");
        assert_eq!(config.focus.get(Focus::News).categories, vec!["news"]);
        assert_eq!(config.focus.get(Focus::Web), FocusSearch::default());
        assert_eq!(
            config.focus.get(Focus::Discussions).to_string(),
            "categories=social media"
        );
        // Shown as it was written.
        assert!(config
            .to_string()
            .contains("CITED_FOCUS_ACADEMIC=engines=arxiv, pubmed ;categories=science\n"));
    }

    #[test]
    fn research_engines_are_lists() {
        let (config, warnings) = load(&[
            ("CITED_RESEARCH_ENGINES_ZH", "baidu, sogou ,360search"),
            ("CITED_RESEARCH_ENCYCLOPEDIA_ENGINES", "none"),
            ("CITED_RESEARCH_MAX_LOOPS", "2"),
        ]);
        assert_eq!(warnings, vec![]);
        assert_eq!(
            config.research.engines_zh,
            vec!["baidu", "sogou", "360search"]
        );
        assert!(config.research.encyclopedia_engines.is_empty());
        assert_eq!(config.research.max_loops, 2);
    }

    #[test]
    fn good_values_are_taken() {
        let (config, warnings) = load(&[
            ("CITED_ADDR", "0.0.0.0:8000"),
            ("CITED_SEARXNG_URL", "https://search.example.org/base"),
            ("CITED_SEARCH_RESULTS", "20"),
            ("CITED_SEARCH_TIMEOUT_SECS", " 10 "),
            ("CITED_SEARCH_LANGUAGE", "en-US"),
            ("CITED_SNIPPET_CHARS", "300"),
            ("CITED_LOG", "debug"),
        ]);
        assert_eq!(warnings, vec![]);
        assert_eq!(config.addr.port(), 8000);
        assert_eq!(config.searxng_url.host_str(), Some("search.example.org"));
        assert_eq!(config.search_results, 20);
        assert_eq!(config.search_timeout, Duration::from_secs(10));
        assert_eq!(
            config.search_language,
            SearchLanguage::Fixed("en-US".into())
        );
        assert_eq!(config.snippet_chars, 300);
        assert_eq!(config.log, "debug");
    }

    /// Each bad value is replaced by its default with a warning naming the variable.
    #[track_caller]
    fn check_rejected(var: &'static str, value: &str, default: &str) {
        let (config, warnings) = load(&[(var, value)]);
        assert_eq!(warnings.len(), 1, "{var}={value:?}: {warnings:?}");
        let warning = &warnings[0];
        assert_eq!(warning.var, var);
        assert_eq!(warning.value, value);
        assert_eq!(warning.default, default);
        let text = warning.to_string();
        assert!(
            text.contains(var) && text.contains(value) && text.contains(default),
            "{text}"
        );
        // The default really is in effect.
        assert_eq!(
            config,
            load(&[]).0,
            "{var}={value:?} must leave the defaults"
        );
    }

    #[test]
    fn bad_values_fall_back_to_defaults() {
        check_rejected("CITED_ADDR", "localhost", "127.0.0.1:3000");
        check_rejected("CITED_ADDR", "127.0.0.1:99999", "127.0.0.1:3000");
        check_rejected(
            "CITED_SEARXNG_URL",
            "localhost:8080",
            "http://localhost:8080",
        );
        check_rejected(
            "CITED_SEARXNG_URL",
            "ftp://example.org",
            "http://localhost:8080",
        );
        check_rejected(
            "CITED_SEARXNG_URL",
            "javascript:alert(1)",
            "http://localhost:8080",
        );
        check_rejected("CITED_SEARCH_RESULTS", "0", "5");
        check_rejected("CITED_SEARCH_RESULTS", "21", "5");
        check_rejected("CITED_SEARCH_RESULTS", "five", "5");
        check_rejected("CITED_SEARCH_RESULTS", "-3", "5");
        check_rejected("CITED_SEARCH_TIMEOUT_SECS", "0", "5");
        check_rejected("CITED_SEARCH_TIMEOUT_SECS", "1.5", "5");
        check_rejected("CITED_SEARCH_LANGUAGE", "zh_Hans", "auto");
        check_rejected("CITED_SEARCH_LANGUAGE", "EN", "auto");
        check_rejected("CITED_SEARCH_LANGUAGE", "en-USA", "auto");
        check_rejected("CITED_SNIPPET_CHARS", "5", "200");
        check_rejected("CITED_SNIPPET_CHARS", "2001", "200");
        check_rejected("CITED_LOG", "cited=loud", vars::get("CITED_LOG").default);
        check_rejected("CITED_MAX_QUESTION_CHARS", "10", "8000");
        check_rejected("CITED_SESSION_IDLE_MINS", "0", "1440");
        check_rejected("CITED_LLM_CONTEXT_CHARS", "100", "32000");
        check_rejected("CITED_AGENT_MAX_SEARCHES", "0", "5");
        check_rejected("CITED_RESEARCH_MAX_LOOPS", "0", "4");
        check_rejected("CITED_RESEARCH_RESULTS", "31", "10");
        check_rejected("CITED_RESEARCH_SNIPPET_CHARS", "50", "400");
        check_rejected("CITED_RESEARCH_MAX_BRANCHES", "9", "4");
        check_rejected("CITED_RESEARCH_BRANCH_TIMEOUT_SECS", "1", "180");
        check_rejected("CITED_RESEARCH_ENGINES_EN", "bing;<script>", "none");
        check_rejected("CITED_RESEARCH_DEEP_READS", "5", "2");
        check_rejected("CITED_SOURCES", "bing", "auto");
        check_rejected("CITED_SOURCES", "web,nothing", "auto");
    }

    #[test]
    fn empty_values_count_as_unset() {
        let (config, warnings) = load(&[("CITED_SEARCH_RESULTS", "  "), ("CITED_LLM_API_KEY", "")]);
        assert!(warnings.is_empty());
        assert_eq!(config.search_results, 5);
        assert_eq!(config.llm, None);
    }

    #[test]
    fn llm_falls_back_to_openai_variables() {
        let (config, _) = load(&[("OPENAI_API_KEY", "sk-test-123")]);
        let llm = config.llm.expect("a key alone configures OpenAI");
        assert_eq!(llm.base_url.as_str(), "https://api.openai.com/v1");
        assert_eq!(llm.api_key, Some(Secret::new("sk-test-123")));
        assert_eq!(llm.model, "gpt-4o-mini");

        let (config, _) = load(&[
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
            ("CITED_LLM_BASE_URL", "http://localhost:11434/v1"),
            ("CITED_LLM_MODEL", "qwen2.5:7b"),
        ]);
        let llm = config
            .llm
            .expect("a base URL alone configures a keyless server");
        assert_eq!(llm.base_url.as_str(), "http://localhost:11434/v1");
        assert_eq!(llm.api_key, None);
        assert_eq!(llm.model, "qwen2.5:7b");
    }

    #[test]
    fn a_bad_llm_url_is_not_replaced_by_openai_base_url() {
        let (config, warnings) = load(&[
            ("CITED_LLM_BASE_URL", "not a url"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
        ]);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(
            config.llm, None,
            "no key, and the URL that was set is unusable"
        );
    }

    #[test]
    fn bad_llm_url_warns_and_keeps_the_key() {
        let (config, warnings) = load(&[
            ("CITED_LLM_BASE_URL", "not a url"),
            ("CITED_LLM_API_KEY", "sk-secret"),
        ]);
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].var, "CITED_LLM_BASE_URL");
        let llm = config.llm.expect("the key still configures OpenAI");
        assert_eq!(llm.base_url.as_str(), "https://api.openai.com/v1");
    }

    /// Each declared variable is read, once, and nothing undeclared is: the declarations,
    /// the docs and what is read cannot drift apart.
    #[test]
    fn every_declared_variable_is_read_once() {
        let (config, warnings) = load(&[]);
        assert!(warnings.is_empty(), "{warnings:?}");
        let read: Vec<&str> = config.settings().iter().map(|s| s.var.name).collect();
        let declared: Vec<&str> = VARS.iter().map(|var| var.name).collect();
        assert_eq!(read, declared);
        assert!(config
            .settings()
            .iter()
            .all(|s| s.origin == Origin::Default));
    }

    /// The startup log: one line of where values came from, then only what is not a
    /// default, secrets redacted.
    #[test]
    fn the_summary_says_where_values_came_from() {
        let (config, warnings) = Config::from_lookup(&|name| match name {
            "CITED_SEARCH_RESULTS" => Some(("7".into(), Origin::Environment)),
            "CITED_LLM_API_KEY" => Some(("sk-hidden".into(), Origin::DotEnv)),
            "CITED_REDIS_URL" => Some(("redis://:pw@cache:6379".into(), Origin::DotEnv)),
            "CITED_MAX_ANSWERS" => Some(("0".into(), Origin::Environment)),
            _ => None,
        });
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let lines = config.summary();
        let defaults = VARS.len() - 3;
        assert_eq!(
            lines[0],
            format!("configuration: 1 from the environment, 2 from .env, {defaults} defaults (`cited config` prints them all)")
        );
        // In the docs' order: searching, the model, storage.
        assert_eq!(
            lines[1..],
            [
                "CITED_SEARCH_RESULTS=7 (environment)",
                "CITED_LLM_API_KEY=*** (set) (.env)",
                "CITED_REDIS_URL=redis://cache:6379 (.env)",
            ]
        );
        let all = config.to_string();
        assert_eq!(all.lines().count(), VARS.len());
        assert!(
            all.contains("CITED_MAX_ANSWERS=8\n"),
            "a rejected value shows its default"
        );
        assert!(!all.contains("sk-hidden") && !all.contains(":pw@"), "{all}");
    }

    #[test]
    fn secrets_never_print() {
        let (config, _) = load(&[
            ("CITED_LLM_API_KEY", "sk-very-secret"),
            (
                "CITED_SEARXNG_URL",
                "https://me:hunter2@search.example.org/",
            ),
        ]);
        let shown = format!("{config}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(
            shown.contains("CITED_SEARXNG_URL=https://search.example.org/"),
            "{shown}"
        );
        let shown = format!("{config}\n{config:?}");
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert!(shown.contains("CITED_LLM_API_KEY=*** (set)"), "{shown}");
    }
}

#[cfg(test)]
mod access_tests {
    use super::tests::load;
    use super::*;

    #[test]
    fn sign_in_and_host_names() {
        let (config, warnings) = load(&[]);
        assert!(warnings.is_empty());
        assert_eq!(config.access.auth, Auth::Off);
        assert_eq!(
            config.access.allowed_hosts,
            Some(vec![
                "localhost".to_string(),
                "127.0.0.1".to_string(),
                "[::1]".to_string()
            ])
        );
        assert!(!config.access.secure_cookies());

        let (config, warnings) = load(&[
            ("CITED_ADDR", "0.0.0.0:3000"),
            ("CITED_AUTH", "proxy"),
            ("CITED_AUTH_PROXY_FROM", "10.0.0.0/8, ::1"),
            ("CITED_PUBLIC_URL", "https://cited.example.org"),
        ]);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(config.access.allowed_hosts, None, "any name off loopback");
        assert!(config.access.secure_cookies());
        let Auth::Proxy { header, from } = &config.access.auth else {
            panic!("{:?}", config.access.auth);
        };
        assert_eq!(header, "x-forwarded-user");
        assert!(from[0].contains("10.200.3.4".parse().unwrap()));
        assert!(!from[0].contains("11.0.0.1".parse().unwrap()));
        assert!(from[1].contains("::1".parse().unwrap()));
        assert!(from[0].contains("::ffff:10.0.0.9".parse().unwrap()));

        let (config, _) = load(&[("CITED_ALLOWED_HOSTS", "example.org:3000,[::1]:3000,[::1]")]);
        assert_eq!(
            config.access.allowed_hosts,
            Some(vec![
                "example.org".to_string(),
                "[::1]".to_string(),
                "[::1]".to_string()
            ])
        );
        let (config, _) = load(&[
            ("CITED_ALLOWED_HOSTS", "Cited.Example.org"),
            ("CITED_PUBLIC_URL", "https://public.example.org/"),
        ]);
        assert_eq!(
            config.access.allowed_hosts,
            Some(vec![
                "cited.example.org".to_string(),
                "public.example.org".to_string()
            ])
        );

        let (config, warnings) = load(&[
            ("CITED_AUTH", "passwords"),
            ("CITED_AUTH_PROXY_FROM", "10.0.0.0/33"),
        ]);
        assert_eq!(config.access.auth, Auth::Off);
        // Every variable is read, so a typo shows before proxy sign-in is turned on.
        let vars: Vec<&str> = warnings.iter().map(|w| w.var).collect();
        assert_eq!(vars, ["CITED_AUTH", "CITED_AUTH_PROXY_FROM"]);
        let (_, warnings) = load(&[
            ("CITED_AUTH", "proxy"),
            ("CITED_AUTH_PROXY_FROM", "10.0.0.0/33"),
        ]);
        assert_eq!(warnings[0].var, "CITED_AUTH_PROXY_FROM");
    }

    #[test]
    fn signed_in_readers_see_no_internal_address() {
        let vars = [
            ("CITED_SEARXNG_URL", "http://searx.internal:8080/"),
            ("CITED_LLM_BASE_URL", "http://user:pw@gpu.internal:8000/v1"),
            ("CITED_LLM_MODEL", "m"),
        ];
        let message = "SearXNG (http://searx.internal:8080/) said 403; model at http://gpu.internal:8000/v1 is down";
        let (open, _) = load(&vars);
        assert_eq!(
            Redactor::of(&open).apply(message, crate::model::Lang::En),
            message
        );
        let mut shared_vars = vars.to_vec();
        shared_vars.push(("CITED_AUTH", "accounts"));
        let (shared, _) = load(&shared_vars);
        assert_eq!(
            Redactor::of(&shared).apply(message, crate::model::Lang::En),
            "SearXNG (SearXNG) said 403; model at the model server is down"
        );
        assert_eq!(
            Redactor::of(&shared).apply(
                "无法连接 http://gpu.internal:8000/v1。",
                crate::model::Lang::ZhCn
            ),
            "无法连接 模型服务。"
        );
    }

    #[test]
    fn rejected_values_are_logged_without_credentials() {
        assert_eq!(
            shown_raw("ftp://user:secret@host:21/path"),
            "ftp://***@host:21/path"
        );
        assert_eq!(shown_raw("http://host/a@b"), "http://host/a@b");
        assert_eq!(shown_raw("no url"), "no url");
        let (_, warnings) = load(&[("CITED_SEARXNG_URL", "gopher://me:pw@host")]);
        assert_eq!(warnings[0].value, "gopher://***@host");
        assert!(!warnings[0].to_string().contains("pw"));
    }

    #[test]
    fn capacity_defaults_keep_a_small_host_responsive() {
        let (config, _) = load(&[]);
        let c = &config.capacity;
        assert_eq!(
            (c.answers, c.research, c.model_calls, c.page_reads),
            (8, 2, 8, 8)
        );
        assert_eq!(c.header_timeout, Duration::from_secs(10));
        assert_eq!(c.body_bytes, 256 * 1024);
        let shown = config.to_string();
        for var in [
            "CITED_AUTH=off",
            "CITED_MAX_ANSWERS=8",
            "CITED_ALLOWED_HOSTS=localhost",
        ] {
            assert!(shown.contains(var), "{var}");
        }
    }
}
