//! Every environment variable cited reads, declared once: its name, section, default, what
//! it accepts and what it sets. The reader in [`super`] takes the range, the default and the
//! words of a warning from here, the startup summary and `cited config` print what was read
//! against it, and `cited config --markdown` writes `docs/configuration.md` from it (a test
//! keeps the committed file current).

/// Where a variable is documented, in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Server,
    Search,
    Model,
    Answers,
    Research,
    Storage,
    Media,
    Access,
    Capacity,
}

impl Section {
    pub const ALL: [Section; 9] = [
        Section::Server,
        Section::Search,
        Section::Model,
        Section::Answers,
        Section::Research,
        Section::Storage,
        Section::Media,
        Section::Access,
        Section::Capacity,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Section::Server => "The web app",
            Section::Search => "Searching",
            Section::Model => "The model",
            Section::Answers => "Answers and their citations",
            Section::Research => "Research mode",
            Section::Storage => "Conversations and scale-out",
            Section::Media => "Files, images and fetching",
            Section::Access => "Who may use it",
            Section::Capacity => "Capacity and rate limits",
        }
    }

    /// Prose printed under the section's table.
    fn note(self) -> &'static str {
        match self {
            Section::Server => {
                "The UI speaks zh-CN (default) and English: it follows the browser's Accept-Language until\n\
                 the language is picked in the settings dialog (设置), which the session remembers. Answers follow\n\
                 the language of the question."
            }
            Section::Search => {
                "**Out of the box** (no SearXNG, no model), `make run` still answers with citations: the\n\
                 local knowledge base (the project's own docs, indexed with tantivy and jieba) stands in for\n\
                 SearXNG, and the extractive answerer writes. Ask, in any mode, how to turn on SearXNG's\n\
                 JSON output (in Chinese or English) or how to run the tests; each citation opens the\n\
                 document at `/knowledge/<path>` with the passage highlighted."
            }
            Section::Model => {
                "With neither `CITED_LLM_BASE_URL`/`OPENAI_BASE_URL` nor a key, no model is configured and\n\
                 cited answers with its offline extractive answerer (labelled \"离线抽取模式（未配置语言模型）\"):\n\
                 the best-matching sentences of the sources, ranked with BM25, each cited."
            }
            Section::Research => {
                "**What a Research branch reads** (`CITED_RESEARCH_RESULTS` × `CITED_RESEARCH_SNIPPET_CHARS`,\n\
                 default 10 × 400; seed 004 read 25 × 600). `make bench-research-material` runs the three\n\
                 bench questions in Research mode against llama.cpp with SmolLM2-135M (knowledge-base\n\
                 search, two loops) at 5 × 200, 10 × 400 and 25 × 600. Measured on 2026-11-26 (2 cores):\n\
                 mean wall time 45.8 s, 42.8 s and 131.3 s; mean prompt tokens 4,345, 6,072 and 9,519.\n\
                 10 × 400 gives each branch twice the material of Chat's defaults at no measured cost in\n\
                 time; 25 × 600 triples the time on a local model. A model this small finds sourced evidence\n\
                 too rarely at every setting (0 to 2 of 3 sub-questions) for those figures to rank quality,\n\
                 so quality did not decide; with a large hosted model, raise both."
            }
            _ => "",
        }
    }
}

/// What a variable accepts; a value outside it is replaced by the default, with a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accepts {
    /// A whole number from `min` to `max`, in the unit the name ends with (`_MB`, `_KB`, …).
    Count {
        min: usize,
        max: usize,
    },
    Seconds {
        min: usize,
        max: usize,
    },
    Minutes {
        min: usize,
        max: usize,
    },
    /// Anything else, in words.
    Words(&'static str),
}

impl Accepts {
    /// As a warning says it.
    pub fn words(self) -> String {
        match self {
            Accepts::Count { min, max } => format!("a whole number from {min} to {max}"),
            Accepts::Seconds { min, max } => {
                format!("a whole number of seconds from {min} to {max}")
            }
            Accepts::Minutes { min, max } => {
                format!("a whole number of minutes from {min} to {max}")
            }
            Accepts::Words(words) => words.to_string(),
        }
    }

    fn range(self) -> Option<(usize, usize)> {
        match self {
            Accepts::Count { min, max }
            | Accepts::Seconds { min, max }
            | Accepts::Minutes { min, max } => Some((min, max)),
            Accepts::Words(_) => None,
        }
    }
}

/// How a value may be printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    Plain,
    /// A URL: user name and password left out.
    Url,
    /// Only whether it is set.
    Secret,
}

#[derive(Debug, PartialEq, Eq)]
pub struct Var {
    pub name: &'static str,
    pub section: Section,
    /// The default as it would be written; empty for none.
    pub default: &'static str,
    /// The default in the docs, when it is worked out at start (from other variables or the
    /// platform's folders) rather than `default`.
    pub computed: Option<&'static str>,
    pub accepts: Accepts,
    /// What it sets, in the docs' words (Markdown).
    pub help: &'static str,
    pub shown: Shown,
}

impl Var {
    const fn new(
        name: &'static str,
        section: Section,
        default: &'static str,
        accepts: Accepts,
        help: &'static str,
    ) -> Var {
        Var {
            name,
            section,
            default,
            computed: None,
            accepts,
            help,
            shown: Shown::Plain,
        }
    }

    const fn count(
        name: &'static str,
        section: Section,
        default: &'static str,
        (min, max): (usize, usize),
        help: &'static str,
    ) -> Var {
        Var::new(name, section, default, Accepts::Count { min, max }, help)
    }

    const fn seconds(
        name: &'static str,
        section: Section,
        default: &'static str,
        (min, max): (usize, usize),
        help: &'static str,
    ) -> Var {
        Var::new(name, section, default, Accepts::Seconds { min, max }, help)
    }

    const fn url(self) -> Var {
        Var {
            shown: Shown::Url,
            ..self
        }
    }

    const fn secret(self) -> Var {
        Var {
            shown: Shown::Secret,
            ..self
        }
    }

    const fn computed(self, doc: &'static str) -> Var {
        Var {
            computed: Some(doc),
            ..self
        }
    }

    /// The default as the docs and warnings name it.
    pub fn default_shown(&self) -> String {
        match (self.computed, self.default) {
            (Some(doc), _) => doc.to_string(),
            (None, "") => "none".to_string(),
            (None, default) => format!("`{default}`"),
        }
    }
}

use Section::*;

const ON_OFF: Accepts = Accepts::Words("on or off");
const ENGINES: Accepts = Accepts::Words("comma-separated SearXNG engine names, or none");
const FOCUS: Accepts = Accepts::Words("categories=a,b and/or engines=x,y, separated by ;");
const FOCUS_HELP: &str = "what this focus of the focus picker and `cited ask --focus` searches: \
    `categories=a,b` and/or `engines=x,y` (SearXNG's names), separated by `;`";
const PRICE: Accepts = Accepts::Words("a price per million tokens such as 0.15, or none");
const ADDRESSES: Accepts =
    Accepts::Words("comma-separated addresses or blocks such as 127.0.0.1,10.0.0.0/8, or none");

/// Every variable, in the order the docs list them.
#[rustfmt::skip]
pub static VARS: &[Var] = &[
    Var::new("CITED_ADDR", Server, "127.0.0.1:3000",
        Accepts::Words("a socket address such as 127.0.0.1:3000"),
        "address the web app listens on"),
    Var::new("CITED_SITE_ROOT", Server, "target/site", Accepts::Words("a folder path"),
        "folder with the built `pkg/` (wasm, JS, CSS) and public files"),
    Var::new("CITED_LOG", Server, "cited=info,tower_http=info",
        Accepts::Words("a tracing filter such as info or cited=debug,tower_http=info"),
        "a `tracing` filter"),
    Var::new("CITED_LOG_FORMAT", Server, "text", Accepts::Words("text or json"),
        "`json`: one JSON object per log line, each request's lines carrying its id (also sent as `X-Request-Id`)"),

    Var::new("CITED_SEARXNG_URL", Search, "http://localhost:8080",
        Accepts::Words("an http(s) URL such as http://localhost:8080"),
        "your SearXNG instance (http or https)").url(),
    Var::count("CITED_SEARCH_RESULTS", Search, "5", (1, 20), "results kept per search"),
    Var::seconds("CITED_SEARCH_TIMEOUT_SECS", Search, "5", (1, 120),
        "timeout of one whole search request"),
    Var::new("CITED_SEARCH_LANGUAGE", Search, "auto",
        Accepts::Words("auto, all, or a language code such as en, en-US or zh-CN"),
        "`auto` (zh-CN for questions with Han characters), `all`, or a code such as `en`, `en-US`, `zh-CN`"),
    Var::count("CITED_SNIPPET_CHARS", Search, "200", (20, 2000), "snippet length in characters"),
    Var::new("CITED_SOURCES", Search, "auto",
        Accepts::Words("auto, web, knowledge, or web,knowledge"),
        "where answers search: `auto` (SearXNG while it is healthy, else the local knowledge base, with a notice), `web`, `knowledge`, or `web,knowledge` (both); each session can pick in the settings dialog (设置)"),
    Var::new("CITED_KNOWLEDGE_DIR", Search, "README.md,ARCHITECTURE.md,searxng/README.md,docs",
        Accepts::Words("comma-separated folder or file paths"),
        "files and folders of the local knowledge base (Markdown, text, HTML), comma-separated; re-indexed when they change"),
    Var::new("CITED_FOCUS_WEB", Search, "", FOCUS, FOCUS_HELP),
    Var::new("CITED_FOCUS_ACADEMIC", Search, "categories=science", FOCUS, FOCUS_HELP),
    Var::new("CITED_FOCUS_DISCUSSIONS", Search, "categories=social media", FOCUS, FOCUS_HELP),
    Var::new("CITED_FOCUS_NEWS", Search, "categories=news", FOCUS, FOCUS_HELP),
    Var::new("CITED_FOCUS_CODE", Search, "categories=it", FOCUS, FOCUS_HELP),

    Var::new("CITED_LLM_BASE_URL", Model, "",
        Accepts::Words("an http(s) URL such as http://localhost:11434/v1"),
        "OpenAI-compatible endpoint, e.g. `http://localhost:11434/v1` for Ollama")
        .url()
        .computed("`OPENAI_BASE_URL`, else `https://api.openai.com/v1` when a key is set"),
    Var::new("CITED_LLM_API_KEY", Model, "", Accepts::Words("a key"),
        "API key; servers that need none (Ollama, llama.cpp, vLLM) work without")
        .secret()
        .computed("`OPENAI_API_KEY`"),
    Var::new("OPENAI_BASE_URL", Model, "",
        Accepts::Words("an http(s) URL such as https://api.openai.com/v1"),
        "read when `CITED_LLM_BASE_URL` is not set").url(),
    Var::new("OPENAI_API_KEY", Model, "", Accepts::Words("a key"),
        "read when `CITED_LLM_API_KEY` is not set").secret(),
    Var::new("CITED_LLM_MODEL", Model, "gpt-4o-mini", Accepts::Words("a model name"),
        "model name; the picker's default"),
    Var::new("CITED_LLM_MODEL_FAST", Model, "", Accepts::Words("a model name"),
        "a model on the same endpoint for everything but answers: Research's plan, branches and verdicts, titles, follow-up questions, the citation check"),
    Var::new("CITED_LLM_ENDPOINTS", Model, "",
        Accepts::Words("name=http(s)-URL pairs with distinct names of a-z, 0-9, - and _ (not \"main\")"),
        "more endpoints for the model picker: `name=url` pairs separated by spaces, commas or `;` (names of a–z, 0–9, `-`, `_`; not `main`), e.g. `ollama=http://localhost:11434/v1 cloud=https://api.openai.com/v1`; each one's key in `CITED_LLM_API_KEY_<NAME>` and the model offered when it cannot list its own in `CITED_LLM_MODEL_<NAME>`"),
    Var::count("CITED_LLM_CONTEXT_CHARS", Model, "32000", (2000, 2_000_000),
        "most characters of prompt (system, history, sources, question) sent to the model; the oldest turns go first"),
    Var::count("CITED_LLM_MAX_TOKENS_ANSWER", Model, "2048", (16, 32_768),
        "most tokens of an answer (`max_tokens`); a longer one is cut with a notice"),
    Var::count("CITED_LLM_MAX_TOKENS_PLAN", Model, "512", (16, 32_768),
        "most tokens of a Research plan"),
    Var::count("CITED_LLM_MAX_TOKENS_BRANCH", Model, "768", (16, 32_768),
        "most tokens of a Research branch's reflection or evidence"),
    Var::count("CITED_LLM_MAX_TOKENS_VERIFY", Model, "768", (16, 32_768),
        "most tokens of a Research verdict or summary"),
    Var::seconds("CITED_LLM_CALL_DEADLINE_SECS", Model, "300", (5, 3600),
        "one model call, request to last token, may take no longer; past it what came is kept, with a notice"),
    Var::seconds("CITED_LLM_IDLE_TIMEOUT_SECS", Model, "60", (2, 600),
        "a stream silent this long fails"),
    Var::new("CITED_LLM_STRUCTURED", Model, "on", ON_OFF,
        "ask for Research's JSON through `response_format: json_schema` (probed once per model, remembered; `off`: tolerant parsing only)"),
    Var::new("CITED_LLM_PRICE_INPUT", Model, "none", PRICE,
        "price per million prompt tokens, for the cost shown under each answer"),
    Var::new("CITED_LLM_PRICE_OUTPUT", Model, "none", PRICE,
        "price per million completion tokens"),

    Var::count("CITED_AGENT_MAX_SEARCHES", Answers, "5", (1, 20),
        "searches the Agent may make for one answer; past it the tool tells the model to answer now"),
    Var::count("CITED_MAX_QUESTION_CHARS", Answers, "8000", (100, 100_000),
        "longest question accepted"),
    Var::count("CITED_MAX_ANSWER_KB", Answers, "256", (1, 10_000),
        "kilobytes of answer text kept; the rest is dropped with a notice"),
    Var::new("CITED_TITLES", Answers, "model", Accepts::Words("model or question"),
        "a conversation's title: `model` (the first question, then a short title the configured model writes after the first answer) or `question` (the first question only)"),
    Var::new("CITED_RELATED", Answers, "model", Accepts::Words("model, sources or off"),
        "the three follow-up questions (\"相关问题\") under a finished answer: `model` (a short second model call, filled up from the sources' headings; the headings alone without a model), `sources` (the headings only, no extra call) or `off`"),
    Var::new("CITED_CHECK", Answers, "model", Accepts::Words("model, lexical or off"),
        "who judges each citation after an answer: `model` (the configured model, the fast one when there is one, in one batched call; a verdict counts only when the passage it quotes is in the source; the offline checker wherever it gives none, and without a model), `lexical` (offline only: words, numbers, names, negations, comparisons and the Chinese–English dictionary) or `off`"),
    Var::seconds("CITED_ALIGN_DEADLINE_SECS", Answers, "20", (0, 300),
        "after an answer, how long cited may spend reading the cited pages (each once per conversation) and finding in each the passage that supports the sentence citing it; `0` turns the check off"),

    Var::count("CITED_RESEARCH_MAX_LOOPS", Research, "4", (1, 10),
        "plan → branches → verify loops at most"),
    Var::count("CITED_RESEARCH_MAX_BRANCHES", Research, "4", (1, 8),
        "branches (sub-questions) researched at once"),
    Var::seconds("CITED_RESEARCH_BRANCH_TIMEOUT_SECS", Research, "180", (5, 1800),
        "a branch taking longer is recorded as failed"),
    Var::seconds("CITED_RESEARCH_DEADLINE_SECS", Research, "900", (10, 7200),
        "the plan → branches → verify loops end by then; the answer uses the evidence found so far, with a notice naming what was cut"),
    Var::count("CITED_RESEARCH_RESULTS", Research, "10", (1, 30),
        "search results a branch reads (seed 004 read 25; see below)"),
    Var::count("CITED_RESEARCH_SNIPPET_CHARS", Research, "400", (100, 2000),
        "characters of each result's snippet a branch reads (seed 004: 600)"),
    Var::count("CITED_RESEARCH_DEEP_READS", Research, "2", (0, 4),
        "pages read in full per branch (SSRF-guarded, 2 MB, 15,000 characters)"),
    Var::new("CITED_RESEARCH_ENCYCLOPEDIA_ENGINES", Research, "wikipedia", ENGINES,
        "SearXNG engines that check named entities, comma-separated, or `none`"),
    Var::new("CITED_RESEARCH_ENGINES_ZH", Research, "none", ENGINES,
        "SearXNG engines for Chinese sub-questions (e.g. `baidu,sogou`); `none` = the instance's defaults"),
    Var::new("CITED_RESEARCH_ENGINES_EN", Research, "none", ENGINES,
        "SearXNG engines for other sub-questions (e.g. `google,bing`); `none` = the instance's defaults"),

    Var::new("CITED_DATABASE_URL", Storage, "",
        Accepts::Words("sqlite:PATH, sqlite::memory: or postgres://user@host/database"),
        "where conversations are kept: `sqlite:PATH` (created on first run, WAL mode) or `postgres://user@host/database`; the schema is created and migrated at start")
        .url()
        .computed("`sqlite:~/.local/share/cited/cited.db` (under `$XDG_DATA_HOME` when set)"),
    Var::new("CITED_REDIS_URL", Storage, "",
        Accepts::Words("a redis:// or rediss:// URL such as redis://127.0.0.1:6379"),
        "Valkey or Redis shared by several cited instances (`redis://host:6379/0`): the search cache, rate limits, running answers and their events, stop signals (see [deploy.md](deploy.md)); without it everything lives in the one process").url(),
    Var::seconds("CITED_SEARCH_CACHE_SECS", Storage, "600", (0, 86_400),
        "how long a search is answered from the shared cache (with `CITED_REDIS_URL`)"),
    Var::new("CITED_SESSION_IDLE_MINS", Storage, "1440", Accepts::Minutes { min: 1, max: 43_200 },
        "a browser's session leaves the in-memory cache after this long idle (its conversations stay in the database)"),
    Var::count("CITED_MAX_EXCHANGES", Storage, "500", (2, 100_000),
        "questions one conversation may hold; the next is refused with a message to start a new chat (the conversation stays in the history)"),
    Var::count("CITED_USER_QUOTA_MB", Storage, "200", (1, 1_000_000),
        "conversation data one user (or anonymous browser) may keep; at it, new questions are refused (507) until some are deleted"),

    Var::count("CITED_FILE_MAX_MB", Media, "10", (1, 200),
        "the largest file that can be added to a conversation"),
    Var::count("CITED_FILE_MEMORY_MB", Media, "512", (128, 65_536),
        "the memory of the child process that reads one added file (a decompression bomb ends it, not the server)"),
    Var::seconds("CITED_FILE_SECS", Media, "30", (1, 600),
        "that child's CPU and wall-clock time"),
    Var::new("CITED_IMAGES", Media, "on", ON_OFF,
        "search SearXNG's images category with each web answer for the strip above it (`off`: no images search)"),
    Var::new("CITED_FAVICONS", Media, "on", ON_OFF,
        "show the sources' favicons, fetched through cited"),
    Var::new("CITED_MEDIA_DIR", Media, "", Accepts::Words("a folder path"),
        "where fetched thumbnails and favicons are kept")
        .computed("`~/.cache/cited/media` (under `$XDG_CACHE_HOME` when set)"),
    Var::count("CITED_MEDIA_CACHE_MB", Media, "64", (1, 100_000),
        "the most they take on disk; the least recently used go first"),
    Var::new("CITED_FETCH_ALLOW", Media, "none",
        Accepts::Words("host:port addresses separated by commas, such as 10.0.0.5:443, or none"),
        "`host:port` addresses server-side fetching (page reads, thumbnails, favicons) may reach although they are private, comma-separated: for intranet sites"),

    Var::new("CITED_AUTH", Access, "off", Accepts::Words("off, accounts or proxy"),
        "who may use the app: `off` (nobody signs in; only allowed on a loopback address), `accounts` (built-in accounts, `cited user add NAME`, a sign-in page) or `proxy` (a reverse proxy in front signs people in)"),
    Var::new("CITED_AUTH_PROXY_HEADER", Access, "X-Forwarded-User",
        Accepts::Words("an HTTP header name such as X-Forwarded-User"),
        "with `CITED_AUTH=proxy`: the header in which the proxy names the user"),
    Var::new("CITED_AUTH_PROXY_FROM", Access, "127.0.0.1,::1",
        Accepts::Words("comma-separated addresses or blocks such as 127.0.0.1,10.0.0.0/8"),
        "with `CITED_AUTH=proxy`: addresses or blocks (`10.0.0.0/8`) of the proxy; the header from anywhere else is ignored"),
    Var::new("CITED_ALLOWED_HOSTS", Access, "*",
        Accepts::Words("comma-separated host names such as cited.example.org,localhost, or *"),
        "host names requests may name, comma-separated (others get 421); stops DNS rebinding")
        .computed("the loopback names when bound to loopback, else `*`"),
    Var::new("CITED_TRUSTED_PROXIES", Access, "none", ADDRESSES,
        "reverse proxies in front (addresses or blocks), whose `X-Forwarded-For` names the client for the rate limits; with `CITED_AUTH=proxy`, `CITED_AUTH_PROXY_FROM` counts too"),
    Var::new("CITED_PUBLIC_URL", Access, "none",
        Accepts::Words("an http(s) URL such as https://cited.example.org, or none"),
        "where people reach cited, e.g. `https://cited.example.org`: its host is allowed, and over https the session cookie is `Secure` and HSTS is sent").url(),

    Var::count("CITED_MAX_ANSWERS", Capacity, "8", (1, 1000),
        "answers written at once; more wait in a queue fair between owners (a freed slot goes to the user with the fewest answers running, the earliest among equals), whose place the status line shows (排队中，第 N 位)"),
    Var::count("CITED_MAX_RESEARCH", Capacity, "2", (1, 100),
        "Research answers at once (each is many searches, reads and model calls)"),
    Var::count("CITED_MAX_MODEL_CALLS", Capacity, "8", (1, 1000),
        "model calls open at once across all answers"),
    Var::count("CITED_MAX_PAGE_READS", Capacity, "8", (1, 1000),
        "web pages read at once across all answers"),
    Var::count("CITED_RATE_ASKS_PER_MIN", Capacity, "30", (1, 100_000),
        "questions per user (or anonymous browser) per minute, with a burst of a fifth of it (at least 5); one address may ask ten times as many; over it: 429 with `Retry-After`"),
    Var::count("CITED_RATE_REQUESTS_PER_MIN", Capacity, "1200", (10, 10_000_000),
        "requests per address per minute (assets excluded), with a burst of a fifth of it; over it: 429 with `Retry-After`"),
    Var::count("CITED_RATE_SHARES_PER_MIN", Capacity, "60", (1, 1_000_000),
        "shared conversations (`/s/<token>`, `/api/shared`) one address may open per minute, counted apart from its other requests (a shared conversation is the one page anyone may load without signing in), with a burst of a fifth of it (at least 10); over it: 429"),
    Var::count("CITED_MAX_CONNECTIONS", Capacity, "512", (8, 100_000),
        "open connections at once; more wait in the kernel's queue"),
    Var::count("CITED_MAX_CONNECTIONS_PER_ADDRESS", Capacity, "64", (2, 100_000),
        "open connections one client address may hold (slow headers and answer streams count); more are closed at once, so one client cannot take the whole `CITED_MAX_CONNECTIONS`; trusted proxies are exempt"),
    Var::seconds("CITED_HEADER_TIMEOUT_SECS", Capacity, "10", (1, 300),
        "a connection must send a request's headers within this; it also closes idle keep-alive connections"),
    Var::count("CITED_MAX_BODY_KB", Capacity, "256", (16, 100_000),
        "largest request body (413 beyond)"),
];

/// The declaration of `name`. Every name the reader asks for is declared (a test reads
/// them all), so a missing one is a bug in this file.
pub fn get(name: &str) -> &'static Var {
    VARS.iter()
        .find(|var| var.name == name)
        .unwrap_or_else(|| panic!("{name} is not declared in config/vars.rs"))
}

/// `docs/configuration.md`: every variable, section by section.
pub fn markdown() -> String {
    let mut out = String::from(
        "# Configuration\n\n\
         <!-- Written by `cited config --markdown` (`make docs`) from src/ssr/config/vars.rs: edit there. -->\n\n\
         Environment variables, or a `.env` file in the working directory (the environment wins).\n\
         An invalid value never stops cited: it is replaced by its default, with a warning that names\n\
         the variable, the rejected value and what it accepts. The startup log says how many values\n\
         came from the environment and from `.env` and lists those that are not defaults;\n\
         `cited config` prints every one, secrets redacted.\n",
    );
    for section in Section::ALL {
        out.push_str(&format!(
            "\n## {}\n\n| variable | default | what it sets |\n|---|---|---|\n",
            section.title()
        ));
        for var in VARS.iter().filter(|var| var.section == section) {
            let range = match var.accepts.range() {
                Some((min, max)) => format!(", {min}–{max}"),
                None => String::new(),
            };
            out.push_str(&format!(
                "| `{}` | {} | {}{range} |\n",
                var.name,
                var.default_shown(),
                var.help
            ));
        }
        if !section.note().is_empty() {
            out.push('\n');
            out.push_str(section.note());
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_declared_once() {
        for (i, var) in VARS.iter().enumerate() {
            assert!(
                VARS[..i].iter().all(|earlier| earlier.name != var.name),
                "{} is declared twice",
                var.name
            );
            assert!(
                !var.help.is_empty() && !var.help.contains('|'),
                "{}",
                var.name
            );
        }
    }

    #[test]
    fn every_section_has_variables_in_order() {
        let mut last = 0;
        for var in VARS {
            let at = Section::ALL
                .iter()
                .position(|section| *section == var.section)
                .unwrap_or(usize::MAX);
            assert!(at >= last, "{} is out of its section's order", var.name);
            last = at;
        }
        for section in Section::ALL {
            assert!(VARS.iter().any(|var| var.section == section), "{section:?}");
        }
    }

    /// The committed docs are what `cited config --markdown` writes.
    #[test]
    fn docs_configuration_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/configuration.md");
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed == markdown(),
            "docs/configuration.md is out of date: run `make docs` (cited config --markdown)"
        );
    }
}
