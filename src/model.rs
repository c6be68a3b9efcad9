//! Types that cross the wire between the server and the browser. Pure data: no IO, no
//! `cfg(feature)`, so the same definitions build for wasm32 and for the host.

pub mod blocks;

use serde::{Deserialize, Serialize};

/// A language cited's UI speaks. On the wire it is its BCP 47 tag (`zh-CN`, `en`), the same
/// value forms and `<html lang>` use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Lang {
    #[default]
    #[serde(rename = "zh-CN")]
    ZhCn,
    #[serde(rename = "en")]
    En,
}

impl Lang {
    /// The language a question is written in: Chinese when it has Han characters.
    pub fn of_text(text: &str) -> Lang {
        if crate::text::has_han(text) {
            Lang::ZhCn
        } else {
            Lang::En
        }
    }
    pub const ALL: [Lang; 2] = [Lang::ZhCn, Lang::En];

    /// The BCP 47 tag, as in `<html lang>` and forms.
    pub fn code(self) -> &'static str {
        match self {
            Lang::ZhCn => "zh-CN",
            Lang::En => "en",
        }
    }

    /// A tag cited speaks: `zh`, `zh-CN`, `zh-Hans`… or `en`, `en-GB`…
    pub fn parse(tag: &str) -> Option<Lang> {
        let primary = tag.trim().split(['-', '_']).next()?.to_ascii_lowercase();
        match primary.as_str() {
            "zh" => Some(Lang::ZhCn),
            "en" => Some(Lang::En),
            _ => None,
        }
    }

    /// The language an `Accept-Language` header prefers among those cited speaks (highest
    /// q first, then order); zh-CN when it names none of them.
    pub fn from_accept_language(header: &str) -> Lang {
        let mut best: Option<(f32, usize, Lang)> = None;
        for (position, item) in header.split(',').enumerate() {
            let mut pieces = item.split(';');
            let Some(lang) = pieces.next().and_then(Lang::parse) else {
                continue;
            };
            let q = pieces
                .find_map(|p| p.trim().strip_prefix("q="))
                .and_then(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            if q <= 0.0 {
                continue;
            }
            let better = match best {
                None => true,
                Some((best_q, _, _)) => q > best_q,
            };
            if better {
                best = Some((q, position, lang));
            }
        }
        best.map(|(_, _, lang)| lang).unwrap_or_default()
    }

    /// The language's own name, for the switch.
    pub fn name(self) -> &'static str {
        match self {
            Lang::ZhCn => "中文",
            Lang::En => "English",
        }
    }
}

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

/// Where answers search (PRODUCT.md "Out of the box"; `CITED_SOURCES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sources {
    /// SearXNG when it is healthy, the local knowledge base when it is not.
    #[default]
    Auto,
    Web,
    Knowledge,
    /// SearXNG and the knowledge base together.
    Both,
}

impl Sources {
    pub const ALL: [Sources; 4] = [
        Sources::Auto,
        Sources::Web,
        Sources::Knowledge,
        Sources::Both,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Sources::Auto => "auto",
            Sources::Web => "web",
            Sources::Knowledge => "knowledge",
            Sources::Both => "both",
        }
    }

    /// `auto`, `web`, `knowledge`, or both as `web,knowledge` (either order) or `both`.
    pub fn parse(raw: &str) -> Option<Sources> {
        let mut parts: Vec<String> = raw
            .split(',')
            .map(|p| p.trim().to_ascii_lowercase())
            .filter(|p| !p.is_empty())
            .collect();
        parts.sort();
        parts.dedup();
        match parts
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice()
        {
            ["auto"] => Some(Sources::Auto),
            ["web"] => Some(Sources::Web),
            ["knowledge"] => Some(Sources::Knowledge),
            ["both"] | ["knowledge", "web"] => Some(Sources::Both),
            _ => None,
        }
    }
}

/// What a session remembers about the user's choices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    pub mode: Mode,
    /// The Chat-mode search switch. Kept while Agent or Research mode shows it disabled,
    /// so switching back to Chat restores it.
    pub search_enabled: bool,
    /// Where to search; `None` follows `CITED_SOURCES`.
    #[serde(default)]
    pub sources: Option<Sources>,
    /// The UI language; `None` follows the browser's Accept-Language.
    #[serde(default)]
    pub lang: Option<Lang>,
    /// What web searches look at (the focus picker).
    #[serde(default)]
    pub focus: Focus,
    /// How recent web results must be; `None`: any time.
    #[serde(default)]
    pub period: Option<Period>,
    /// Web searches look only at this site (the site field); `site:` in a question wins.
    #[serde(default)]
    pub site: Option<String>,
    /// The picked model (`endpoint|model`) for the next question; `None`: the default.
    /// Opening a conversation picks the model that last answered in it.
    #[serde(default)]
    pub model: Option<String>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            mode: Mode::Chat,
            search_enabled: true,
            sources: None,
            lang: None,
            focus: Focus::Web,
            period: None,
            site: None,
            model: None,
        }
    }
}

/// What narrowed an answer's web searches, shown with its sources.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Narrowing {
    #[serde(default)]
    pub focus: Focus,
    #[serde(default)]
    pub period: Option<Period>,
    #[serde(default)]
    pub site: Option<String>,
}

impl Narrowing {
    pub fn is_none(&self) -> bool {
        *self == Narrowing::default()
    }
}

/// What web searches look at: each focus is a set of SearXNG categories or engines
/// (`CITED_FOCUS_<NAME>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Focus {
    /// 网页: SearXNG's defaults.
    #[default]
    Web,
    /// 学术: papers (arXiv, Semantic Scholar, PubMed, Crossref…).
    Academic,
    /// 讨论: forums (Reddit, Hacker News…).
    Discussions,
    /// 新闻.
    News,
    /// 代码: repositories and Q&A (GitHub, Stack Overflow…).
    Code,
}

impl Focus {
    pub const ALL: [Focus; 5] = [
        Focus::Web,
        Focus::Academic,
        Focus::Discussions,
        Focus::News,
        Focus::Code,
    ];

    /// The identifier used in forms, variables and the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Focus::Web => "web",
            Focus::Academic => "academic",
            Focus::Discussions => "discussions",
            Focus::News => "news",
            Focus::Code => "code",
        }
    }

    pub fn parse(raw: &str) -> Option<Focus> {
        Focus::ALL
            .into_iter()
            .find(|focus| focus.as_str() == raw.trim())
    }
}

/// How recent web results must be (SearXNG's `time_range`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Period {
    Day,
    Week,
    Month,
    Year,
}

impl Period {
    pub const ALL: [Period; 4] = [Period::Day, Period::Week, Period::Month, Period::Year];

    pub fn as_str(self) -> &'static str {
        match self {
            Period::Day => "day",
            Period::Week => "week",
            Period::Month => "month",
            Period::Year => "year",
        }
    }

    pub fn parse(raw: &str) -> Option<Period> {
        Period::ALL
            .into_iter()
            .find(|period| period.as_str() == raw.trim())
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
    /// The host without `www.`, as shown beside the title.
    #[serde(default)]
    pub domain: String,
    /// Already cut to `CITED_SNIPPET_CHARS` on a character boundary.
    pub snippet: String,
    #[serde(default)]
    pub engines: Vec<String>,
    /// ISO-8601 as the engine gave it, when it gave one.
    #[serde(default)]
    pub published: Option<String>,
    #[serde(default)]
    pub kind: SourceKind,
    /// An image result's picture (`thumbnail_src`, `thumbnail` or `img_src`), http(s) only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
}

/// One picture of the strip above an answer: the page it comes from and its thumbnail,
/// served through cited (`/media/image?…`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    pub page: String,
    pub title: String,
    pub domain: String,
    pub thumbnail: String,
}

/// One numbered source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CitationEntry {
    pub number: u32,
    pub url: String,
    pub title: String,
    pub domain: String,
    pub snippet: String,
    /// The query of the round that first found it.
    pub query: String,
    /// The 1-based search round that first found it.
    pub round: u32,
    pub kind: SourceKind,
    /// Later rounds that found the same URL again (dedup mode only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_in_rounds: Vec<u32>,
}

/// What answers come from, for the empty page's first-run card: a model configured,
/// SearXNG usable (as last checked, within a second or two), and the local knowledge base
/// holding documents (which the example questions need).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setup {
    pub model: bool,
    pub web: bool,
    #[serde(default)]
    pub knowledge: bool,
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

/// How serious a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Info,
    Warning,
    Error,
}

/// A message for the user beside an answer: search degraded, no results, model failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    pub level: Level,
    pub text: String,
}

/// One question and its answer, as the session keeps it and the page shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exchange {
    pub id: u64,
    pub mode: Mode,
    pub question: String,
    /// The answer text with its citation markers, exactly as the model wrote it.
    pub answer: String,
    /// Every source retrieved for this answer, numbered.
    pub sources: Vec<std::sync::Arc<CitationEntry>>,
    /// The numbers the answer cites, sorted.
    pub cited: Vec<u32>,
    pub notices: Vec<Notice>,
    /// Written by the offline extractive answerer, not a model.
    pub offline: bool,
    /// The user pressed stop before the answer was complete.
    pub stopped: bool,
    pub done: bool,
    /// What the Agent did on the way (searches, intermediate text).
    #[serde(default)]
    pub steps: Vec<Step>,
    /// A Research answer's plan, branches, evidence and verdicts.
    #[serde(default)]
    pub research: Option<ResearchPlan>,
    /// Where the answer stands as stored: `Interrupted` when the server stopped mid-answer.
    #[serde(default)]
    pub state: ExchangeState,
    /// A reasoning model's thinking, shown folded; never part of the answer.
    #[serde(default)]
    pub reasoning: String,
    /// How much of the answer's claims carry a valid citation.
    #[serde(default)]
    pub coverage: Option<Coverage>,
    /// Follow-up questions ("相关问题") shown under the finished answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<String>,
    /// What narrowed its web searches: the focus, the time range, the site.
    #[serde(default, skip_serializing_if = "Narrowing::is_none")]
    pub narrowing: Narrowing,
    /// Up to six pictures from SearXNG's images category, shown above the answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
    /// The model that answered (`endpoint|model`); `None` offline or in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The tokens the answer's model calls used.
    #[serde(default)]
    pub usage: Option<TokenUsage>,
    /// Agent mode: the model answered without searching.
    #[serde(default)]
    pub unsearched: bool,
    /// For each found citation of a claim, the passage of its source that best supports
    /// the sentence, and how well (checked after the answer is written).
    #[serde(default)]
    pub alignments: Vec<Alignment>,
    /// The claims the model left uncited, each checked against the answer's sources:
    /// the citation cited added where one supports it, a mark where none does.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<ClaimCheck>,
    /// The answer rendered against its sources, filled in only on its way to a browser (the
    /// browser has no Markdown parser); never stored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rendered: Vec<blocks::Block>,
}

/// How well a cited source supports the sentence that cites it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Support {
    /// The passage states the sentence's claim.
    Supported,
    /// It states part of it (one of two claims, the claim without its number…).
    Partial,
    /// The source says otherwise (a different number, name or date, the opposite
    /// statement, a reversed comparison), or plainly lacks the claim.
    NotFound,
    /// No verdict: the checker could not tell (a sentence in another language than its
    /// source that it cannot match, a paraphrase). Never shown as an accusation.
    NotChecked,
}

impl Support {
    /// Stronger support ranks higher: supported 3, partial 2, not checked 1, not found 0.
    pub fn strength(self) -> u8 {
        match self {
            Support::Supported => 3,
            Support::Partial => 2,
            Support::NotChecked => 1,
            Support::NotFound => 0,
        }
    }

    /// The level's name in JSON and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Support::Supported => "supported",
            Support::Partial => "partial",
            Support::NotFound => "not_found",
            Support::NotChecked => "not_checked",
        }
    }
}

/// The numbers only cited's additions cite (not in `cited`), in the order they are added.
pub fn added_numbers(cited: &[u32], claims: &[ClaimCheck]) -> Vec<u32> {
    let mut numbers = Vec::new();
    for number in claims
        .iter()
        .filter_map(|c| c.added.as_ref().map(|a| a.number))
    {
        if !cited.contains(&number) && !numbers.contains(&number) {
            numbers.push(number);
        }
    }
    numbers
}

/// The answer's checks, cited's additions among them: what a source's best check is
/// picked from.
pub fn all_checks(alignments: &[Alignment], claims: &[ClaimCheck]) -> Vec<Alignment> {
    alignments
        .iter()
        .cloned()
        .chain(claims.iter().filter_map(|c| c.added.clone()))
        .collect()
}

/// The strongest check among an answer's citations of source `number`.
pub fn best_check(alignments: &[Alignment], number: u32) -> Option<&Alignment> {
    alignments
        .iter()
        .filter(|a| a.number == number)
        .max_by_key(|a| a.support.strength())
}

/// One citation of an answer checked against its source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alignment {
    /// The citation's place among the answer's found citations, in reading order.
    pub ordinal: u32,
    pub number: u32,
    pub support: Support,
    /// The source's passage that best matches the sentence ("" when nothing does).
    pub passage: String,
    /// Byte ranges of `passage` holding words the sentence shares.
    pub matched: Vec<(u32, u32)>,
    /// Where the passage starts in the page's readable text; `None` when the page could
    /// not be read and the passage comes from the search snippet.
    pub offset: Option<u32>,
    /// Another of the answer's sources that supports the sentence, when this one does not
    /// (or only in part, or cannot be seen to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub better: Option<Better>,
}

/// A claim sentence the model left without a citation, checked against the answer's
/// sources after the answer (`citation::coverage` reads the sentences).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimCheck {
    /// The sentence's place among the answer's sentences, in reading order.
    pub sentence: u32,
    /// Its text, without markers.
    pub text: String,
    /// The source that supports it, checked: cited's own citation, shown as an addition
    /// ("由 cited 补充"); its `ordinal` is this claim's index among the answer's claims.
    /// `None` when none of the answer's sources supports it: the sentence is marked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added: Option<Alignment>,
}

impl ClaimCheck {
    /// How the claim shows in the answer: a citation cited added, or the mark of a claim
    /// nothing supports.
    pub fn cite(&self, key: u32) -> blocks::Cite {
        match &self.added {
            Some(added) => blocks::Cite::Added {
                number: added.number,
                key,
            },
            None => blocks::Cite::Unsupported,
        }
    }
}

/// A source that supports a sentence its citation's source does not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Better {
    pub number: u32,
    pub url: String,
}

/// The share of an answer's citations whose source supports their sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SupportShare {
    /// Citations with a verdict (supported, partial or not found).
    pub checked: u32,
    pub supported: u32,
    pub partial: u32,
    /// Citations the checker could not judge ("未能核对"), apart from `checked`.
    #[serde(default)]
    pub not_checked: u32,
}

impl SupportShare {
    pub fn of(alignments: &[Alignment]) -> SupportShare {
        let count =
            |support: Support| alignments.iter().filter(|a| a.support == support).count() as u32;
        let not_checked = count(Support::NotChecked);
        SupportShare {
            checked: alignments.len() as u32 - not_checked,
            supported: count(Support::Supported),
            partial: count(Support::Partial),
            not_checked,
        }
    }

    /// Supported citations, 0 to 100 (100 when none was checked).
    pub fn percent(&self) -> u32 {
        if self.checked == 0 {
            100
        } else {
            (u64::from(self.supported) * 100 / u64::from(self.checked)) as u32
        }
    }
}

/// Citation coverage: of the answer's sentences that make claims, how many cite at least
/// one source that exists ([`crate::citation::coverage`] has the rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Coverage {
    pub claims: u32,
    /// Claims with a citation, those cited added included.
    pub cited: u32,
    /// Claims whose citation cited added (the model left them uncited).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub added: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Coverage {
    /// The cited share, 0 to 100 (100 for an answer that claims nothing).
    pub fn percent(&self) -> u32 {
        if self.claims == 0 {
            100
        } else {
            (u64::from(self.cited) * 100 / u64::from(self.claims)) as u32
        }
    }
}

/// Tokens an answer's model calls used, as the server counted them (`estimated` when some
/// call's server gave no count and its streamed pieces stood in).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TokenUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub calls: u32,
    #[serde(default)]
    pub estimated: bool,
    /// What they cost, in millionths of the price's currency, when prices are configured
    /// (`CITED_LLM_PRICE_INPUT` / `_OUTPUT`).
    #[serde(default)]
    pub cost_micros: Option<u64>,
}

impl TokenUsage {
    pub fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// The cost in the price's currency.
    pub fn cost(&self) -> Option<f64> {
        self.cost_micros.map(|micros| micros as f64 / 1e6)
    }
}

/// Where a stored exchange stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExchangeState {
    /// Its answer is being written.
    Answering,
    #[default]
    Done,
    /// The user stopped it.
    Stopped,
    /// The model failed.
    Failed,
    /// The server stopped (restart, crash) while it was being written.
    Interrupted,
}

/// The history list as the page shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// The server's clock (ms since the Unix epoch), so the server and the browser group
    /// the list into today / yesterday / earlier alike.
    pub now: i64,
    /// The search the list answers, if any.
    #[serde(default)]
    pub query: Option<String>,
    /// The conversation the browser is in.
    #[serde(default)]
    pub current: Option<String>,
    pub conversations: Vec<ConversationSummary>,
    /// The signed-in user, when people sign in (`CITED_AUTH`).
    #[serde(default)]
    pub user: Option<String>,
}

/// Which day a conversation belongs to in the history list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Day {
    Today,
    Yesterday,
    Earlier,
}

impl History {
    /// The day group of a time (UTC days), relative to `now`.
    pub fn day_of(&self, at: i64) -> Day {
        const DAY: i64 = 24 * 3600 * 1000;
        match self.now.div_euclid(DAY) - at.div_euclid(DAY) {
            i64::MIN..=0 => Day::Today,
            1 => Day::Yesterday,
            _ => Day::Earlier,
        }
    }
}

/// A conversation to read: its summary (none for the browser's unsaved current one) and
/// its exchanges.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationView {
    #[serde(default)]
    pub summary: Option<ConversationSummary>,
    pub exchanges: Vec<Exchange>,
    /// Exchanges before the first of `exchanges`, not sent (`/api/earlier` reads them).
    #[serde(default)]
    pub earlier: u32,
}

/// A model the picker offers: `id` is `endpoint|model` (`main` is `CITED_LLM_BASE_URL`'s).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelOption {
    pub id: String,
    /// The model's name, after its endpoint's when that is not the main one.
    pub label: String,
}

/// The models to pick from and the one in force for the next question.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelChoices {
    pub options: Vec<ModelOption>,
    pub current: Option<String>,
}

/// One conversation in the history list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationSummary {
    pub id: String,
    pub title: String,
    pub mode: Mode,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    pub updated_at: i64,
    /// Set while the conversation has a share link.
    #[serde(default)]
    pub share_token: Option<String>,
}

/// Where a Research sub-question stands (PRODUCT.md: pending/running/done/failed/pruned).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BranchStatus {
    #[default]
    Pending,
    Running,
    Done,
    Failed,
    /// The verify step judged this direction a dead end; it is never planned again.
    Pruned,
}

/// How far a piece of evidence, or a conclusion, can be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reliability {
    #[default]
    Low,
    Medium,
    High,
}

/// One evidence statement of a Research branch, resting on registry numbers.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Evidence {
    pub statement: String,
    pub reliability: Reliability,
    /// Session registry numbers the statement rests on (only numbers its branch saw).
    pub numbers: Vec<u32>,
}

/// One sub-question of a Research plan and what its branch found.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SubQuestion {
    /// 1-based across the whole answer.
    pub id: u32,
    pub question: String,
    /// What was sent to SearXNG.
    pub query: String,
    /// The search profile's language (`zh-CN`, `en`, …).
    pub language: String,
    pub status: BranchStatus,
    #[serde(default)]
    pub evidence: Option<Evidence>,
    /// Why the branch failed, when it did.
    #[serde(default)]
    pub error: Option<String>,
    /// The registry rounds this branch's searches became (the reference list groups by them).
    #[serde(default)]
    pub rounds: Vec<u32>,
    /// Entities checked against an encyclopedia.
    #[serde(default)]
    pub checked: Vec<String>,
    /// Pages read in full.
    #[serde(default)]
    pub read: Vec<String>,
}

/// The verify step's judgement of the evidence chain after a loop.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Verdict {
    pub sufficient: bool,
    /// The reasoning chain as the verifier sees it.
    pub chain: String,
    /// Directions judged dead ends.
    #[serde(default)]
    pub prune: Vec<String>,
    /// What evidence is still missing, when not sufficient.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub missing: String,
}

/// One plan → branches → verify loop.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ResearchLoop {
    /// 1-based.
    pub number: u32,
    pub sub_questions: Vec<SubQuestion>,
    #[serde(default)]
    pub verdict: Option<Verdict>,
}

/// The one-line answer (结论) and how sure the research is of it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Conclusion {
    pub answer: String,
    pub confidence: Reliability,
}

/// Why the research stopped looping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The verifier judged the evidence chain sufficient.
    Sufficient,
    /// `CITED_RESEARCH_MAX_LOOPS` reached.
    LoopCap,
    /// A loop added no evidence.
    NoNewEvidence,
    /// Every branch of a loop failed.
    AllFailed,
    /// The planner had nothing new to ask.
    NothingToPlan,
    /// The user stopped the answer.
    Stopped,
    /// `CITED_RESEARCH_DEADLINE_SECS` passed: the answer uses the evidence so far.
    Deadline,
}

/// A Research answer's live state: what the plan view shows and `--json` prints.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ResearchPlan {
    pub max_loops: u32,
    pub loops: Vec<ResearchLoop>,
    #[serde(default)]
    pub conclusion: Option<Conclusion>,
    #[serde(default)]
    pub stop: Option<StopReason>,
}

impl ResearchPlan {
    /// Every sub-question of every loop, in plan order.
    pub fn sub_questions(&self) -> impl Iterator<Item = &SubQuestion> {
        self.loops.iter().flat_map(|l| l.sub_questions.iter())
    }

    /// The sub-question whose searches became registry round `round`.
    pub fn for_round(&self, round: u32) -> Option<&SubQuestion> {
        self.sub_questions().find(|q| q.rounds.contains(&round))
    }
}

/// One step of an Agent answer, for the live trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Step {
    /// 搜索 "query" → n 条结果 [first]–[last]; `cached` when the session cache answered.
    Search {
        query: String,
        results: usize,
        first: Option<u32>,
        last: Option<u32>,
        cached: bool,
        /// Why the search failed, if it did.
        error: Option<String>,
    },
    /// The search cap was reached; the tool told the model to answer.
    Capped { query: String },
    /// Text the model wrote before calling tools.
    Thought { text: String },
}

/// What an answer is doing now, for the status line. Typed, so the browser and the command
/// line say it in their own language and know progress from failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Status {
    /// Searching; the query when a model chose it.
    Searching {
        query: Option<String>,
    },
    Generating,
    /// The search failed: the message says why and what to fix. It stays after the answer.
    SearchFailed {
        message: String,
    },
    /// Research loop `round`: planning sub-questions.
    Planning {
        round: u32,
    },
    /// Research: `count` sub-questions researched in parallel.
    Branches {
        count: u32,
    },
    Verifying,
    Summarising,
    /// After the answer: reading the cited pages and checking each citation.
    Aligning,
    /// After the answer: the model writes follow-up questions.
    Relating,
    /// Waiting for a free slot (`CITED_MAX_ANSWERS`): `position` 1 is next.
    Queued {
        position: u32,
    },
}

impl Status {
    /// Progress ends with the answer; a failure stays on the status line.
    pub fn is_progress(&self) -> bool {
        !matches!(self, Status::SearchFailed { .. })
    }
}

/// One line of an answer's stream (newline-delimited JSON), named by its one key:
/// `{"token":{"text":"…"}}`.
///
/// Externally tagged on purpose: an internally tagged enum is read through serde's
/// buffered `Content`, which in the browser compiled a second reader of every type an
/// event carries (sources, plan, patches) beside the one the page's own data uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerEvent {
    /// The answer has an id; `offline` answers come from the extractive answerer;
    /// `question` is what was asked (for a tab that comes back to follow the answer).
    Started {
        id: u64,
        offline: bool,
        #[serde(default)]
        question: String,
        /// What narrows its web searches (shown with its sources).
        #[serde(default, skip_serializing_if = "Narrowing::is_none")]
        narrowing: Narrowing,
    },
    /// What is happening now, for the status line (正在搜索…); `None` clears it. The
    /// browser and the command line put it into words ([`crate::i18n::status_line`]).
    Status {
        status: Option<Status>,
    },
    Notice {
        notice: Notice,
    },
    /// The numbered sources the answer may cite.
    Sources {
        sources: Vec<std::sync::Arc<CitationEntry>>,
    },
    /// A piece of answer text.
    Token {
        text: String,
    },
    /// The answer is complete (or stopped); `cited` lists the numbers it cites, `coverage`
    /// how much of it is cited, `usage` the tokens it took; `unsearched`: an Agent answer
    /// written without searching.
    Done {
        cited: Vec<u32>,
        stopped: bool,
        #[serde(default)]
        coverage: Option<Coverage>,
        #[serde(default)]
        usage: Option<TokenUsage>,
        #[serde(default)]
        unsearched: bool,
    },
    /// Progress of the work behind the status line: seconds since it began and model
    /// tokens streamed so far (0 while searching). Sent every second.
    Progress {
        secs: u32,
        tokens: u64,
    },
    /// A piece of a reasoning model's thinking.
    Reasoning {
        text: String,
    },
    /// The answer failed; `message` says why and what to do.
    Failed {
        message: String,
    },
    /// Pictures for the strip above the answer ("图片").
    Images {
        images: Vec<Image>,
    },
    /// The answer is kept in conversation `id`, titled `title` (at `at`, ms since the Unix
    /// epoch, the server's clock): the history puts it at the top.
    Conversation {
        id: String,
        title: String,
        at: i64,
    },
    /// The model named conversation `id`: its title changes in place in the history.
    Titled {
        id: String,
        title: String,
    },
    /// Follow-up questions for the finished answer ("相关问题").
    Related {
        questions: Vec<String>,
    },
    /// A command (`/reset`, `/search on|off`, an unknown one) answered without a model;
    /// `search`: the search switch as the command left it.
    Command {
        text: String,
        reset: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        search: Option<bool>,
    },
    /// An Agent step: `id` is its index in the exchange's steps (a step with a known id
    /// replaces it).
    Step {
        id: u32,
        step: Step,
    },
    /// The answer text so far is exactly `answer` (text streamed before a tool call was
    /// thinking, now a `Thought` step, not the answer).
    Rewrite {
        answer: String,
    },
    /// The Research plan changed (a sub-question started or finished, a verdict came).
    Plan {
        plan: ResearchPlan,
    },
    /// After `Done`: each citation checked against its source's text; with the answer's
    /// usage again when a model judged the citations (its tokens counted in).
    Aligned {
        alignments: Vec<Alignment>,
        /// The uncited claims checked (see [`Exchange::claims`]).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        claims: Vec<ClaimCheck>,
        /// The coverage with cited's additions counted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        coverage: Option<Coverage>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<TokenUsage>,
    },
    /// Only in a browser's stream, after the event that changed the answer's text or
    /// sources: how its rendering changed (`citation::stream::Framer`).
    Rendered {
        patch: blocks::Patch,
    },
}

impl AnswerEvent {
    /// The event as one NDJSON line.
    pub fn to_line(&self) -> String {
        let mut line = serde_json::to_string(self).expect("answer events always serialise");
        line.push('\n');
        line
    }
}

/// Splits a byte stream into NDJSON events, however the network cut it.
#[derive(Debug, Default)]
pub struct LineDecoder {
    buffer: Vec<u8>,
}

impl LineDecoder {
    /// Feeds bytes; returns every complete event (lines that fail to parse are skipped).
    pub fn push(&mut self, bytes: &[u8]) -> Vec<AnswerEvent> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            if let Ok(event) = serde_json::from_slice::<AnswerEvent>(&line) {
                events.push(event);
            }
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_events_survive_any_split() {
        let events = vec![
            AnswerEvent::Started {
                id: 7,
                offline: false,
                question: "量子计算?".into(),
                narrowing: Narrowing {
                    focus: Focus::News,
                    period: Some(Period::Day),
                    site: Some("example.org".into()),
                },
            },
            AnswerEvent::Token {
                text: "量子计算 [1]\n很强".into(),
            },
            AnswerEvent::Done {
                cited: vec![1],
                stopped: false,
                coverage: Some(Coverage {
                    claims: 2,
                    cited: 1,
                    added: 0,
                }),
                usage: None,
                unsearched: false,
            },
            AnswerEvent::Progress {
                secs: 3,
                tokens: 40,
            },
        ];
        let bytes: Vec<u8> = events
            .iter()
            .flat_map(|e| e.to_line().into_bytes())
            .collect();
        for split in 0..=bytes.len() {
            let mut decoder = LineDecoder::default();
            let mut got = decoder.push(&bytes[..split]);
            got.extend(decoder.push(&bytes[split..]));
            assert_eq!(got, events, "split at {split}");
        }
    }
}
