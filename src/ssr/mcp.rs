//! cited as an MCP server (the Model Context Protocol), for desktop clients, editors and
//! agents: `cited mcp` speaks it over stdio, `cited serve` over streamable HTTP at `/mcp`
//! (`ssr::web::mcp_routes`). Three tools: `ask` (a cited answer, with its sources, their
//! support and CSL-JSON), `search` (SearXNG's results as cited numbers them, no model) and
//! `read` (a page's readable text through the guarded reader); and the caller's
//! conversations as resources (`cited://conversations/<id>`, Markdown).
//!
//! Answers start as every answer does ([`answer::start`]): over HTTP with the caller's rate
//! limits, quota and the answer queue; they land in the history of the key's user (or of
//! `cited mcp --user`). A client's cancellation stops the answer as the stop button does.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Extensions,
    Implementation, JsonObject, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};

use crate::model::{AnswerEvent, Exchange, Focus, Lang, Mode, Narrowing, Period};
use crate::ssr::answer::{self, Asker, Delivery, Question, QuestionError, Refusal};
use crate::ssr::pipeline::search::Searcher;
use crate::ssr::pipeline::TurnInput;
use crate::ssr::search::{ProviderKind, SearchOptions, TimeRange};
use crate::ssr::session::{Session, SessionId};
use crate::ssr::state::AppState;

/// Where a conversation resource lives: `cited://conversations/<id>`.
const CONVERSATIONS: &str = "cited://conversations/";
/// The most conversations listed as resources (the newest).
const LISTED: u32 = 100;
/// `search`: results when the caller names no count, and the most it may ask for.
const DEFAULT_COUNT: u64 = 8;
const MAX_COUNT: u64 = 20;
/// `read`: characters of a page's text when the caller names no limit, and the most.
const DEFAULT_READ_CHARS: u64 = 20_000;
const MAX_READ_CHARS: u64 = 100_000;

/// Who calls: the user whose history the answers land in (none: answers are not kept),
/// where from, and whether the rate limits and quota apply (over HTTP; not to the person
/// who started `cited mcp` on their own machine).
#[derive(Debug, Clone, Default)]
pub struct Caller {
    pub user: Option<String>,
    pub address: Option<IpAddr>,
    pub limited: bool,
}

/// How a request's caller is known: fixed for stdio, from the HTTP request (the web layer
/// reads what its sign-in middleware found) for `/mcp`.
#[derive(Clone)]
pub enum Who {
    Fixed(Caller),
    PerRequest(fn(&Extensions) -> Caller),
}

/// The MCP server: cheap to clone, one per MCP session.
#[derive(Clone)]
pub struct CitedMcp {
    state: AppState,
    who: Who,
}

impl CitedMcp {
    pub fn new(state: AppState, who: Who) -> CitedMcp {
        CitedMcp { state, who }
    }

    fn caller(&self, extensions: &Extensions) -> Caller {
        match &self.who {
            Who::Fixed(caller) => caller.clone(),
            Who::PerRequest(identify) => identify(extensions),
        }
    }
}

/// The tools, their schemas and descriptions, written for a calling model.
pub fn tools() -> Vec<Tool> {
    let narrowing = json!({
        "focus": {
            "type": "string",
            "enum": ["web", "academic", "discussions", "news", "code"],
            "description": "What kind of sources to search: web (default), academic (papers), discussions (forums), news or code (repositories, Q&A)."
        },
        "time_range": {
            "type": "string",
            "enum": ["day", "week", "month", "year"],
            "description": "Only sources from the last day, week, month or year."
        },
        "site": {
            "type": "string",
            "description": "Only pages of this site, e.g. \"docs.python.org\"."
        }
    });
    let with = |extra: Value| -> Value {
        let mut properties = narrowing.clone();
        if let (Some(all), Some(extra)) = (properties.as_object_mut(), extra.as_object()) {
            for (name, schema) in extra {
                all.insert(name.clone(), schema.clone());
            }
        }
        properties
    };
    let ask = Tool::new(
        "ask",
        "Answer a question from web sources (the user's SearXNG) with a cited answer: every claim carries [n] markers that point to a numbered source. Returns the answer text with its numbered source list, and structured content: each cited source (number, title, url, snippet, how well it supports the sentences citing it — supported, partial, not_found or not_checked — and the passage that does), the claims the model left uncited (with the source cited attributed them to, if any), the citation coverage, the supported share, and CSL-JSON for reference managers. Use mode \"research\" for questions that need several searches and a verified report (slower; reports progress).",
        schema(json!({
            "type": "object",
            "properties": with(json!({
                "question": { "type": "string", "description": "The question, in any language; the answer comes in the question's language." },
                "mode": {
                    "type": "string",
                    "enum": ["chat", "agent", "research"],
                    "default": "chat",
                    "description": "chat: one search, one answer (fastest). agent: the model searches as often as it needs. research: a plan of sub-questions, researched in parallel and verified (minutes)."
                }
            })),
            "required": ["question"],
            "additionalProperties": false
        })),
    )
    .with_title("Ask cited")
    .with_raw_output_schema(Arc::new(schema(json!({
        "type": "object",
        "properties": {
            "answer": { "type": "string" },
            "mode": { "type": "string" },
            "sources": { "type": "array", "items": { "type": "object" } },
            "claims": { "type": "array", "items": { "type": "object" } },
            "coverage": { "type": ["object", "null"] },
            "support": { "type": "object" },
            "csl": { "type": "array", "items": { "type": "object" } },
            "conversation": { "type": ["string", "null"] },
            "stopped": { "type": "boolean" }
        },
        "required": ["answer", "sources", "csl"]
    }))))
    .with_annotations(annotations(false));
    let search = Tool::new(
        "search",
        "Search the web (the user's SearXNG; its knowledge base when SearXNG is unavailable) without writing an answer: the results numbered as cited numbers sources, each with title, url and snippet. For agents that want sources and write themselves; use `read` for a result's full text.",
        schema(json!({
            "type": "object",
            "properties": with(json!({
                "query": { "type": "string", "description": "What to search for." },
                "count": { "type": "integer", "minimum": 1, "maximum": MAX_COUNT, "default": DEFAULT_COUNT, "description": "How many results." }
            })),
            "required": ["query"],
            "additionalProperties": false
        })),
    )
    .with_title("Search")
    .with_annotations(annotations(true));
    let read = Tool::new(
        "read",
        "Read a web page's main text (no navigation or ads), fetched by cited's guarded reader: http(s) public addresses only, size and time capped. For a source you want in full.",
        schema(json!({
            "type": "object",
            "properties": {
                "url": { "type": "string", "description": "The page's http(s) URL." },
                "max_chars": { "type": "integer", "minimum": 1, "maximum": MAX_READ_CHARS, "default": DEFAULT_READ_CHARS, "description": "At most this many characters of text." }
            },
            "required": ["url"],
            "additionalProperties": false
        })),
    )
    .with_title("Read a page")
    .with_annotations(annotations(true));
    vec![ask, search, read]
}

fn annotations(read_only: bool) -> ToolAnnotations {
    let mut annotations = ToolAnnotations::default();
    annotations.read_only_hint = Some(read_only);
    annotations.open_world_hint = Some(true);
    annotations
}

/// A JSON Schema as the object MCP wants.
fn schema(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// The arguments of a call, read with messages that say what is wrong.
struct Arguments(JsonObject);

impl Arguments {
    /// Refuses arguments the tool does not take (a misspelt name would be silently
    /// ignored otherwise).
    fn only(&self, tool: &str, names: &[&str]) -> Result<(), ErrorData> {
        match self.0.keys().find(|key| !names.contains(&key.as_str())) {
            Some(key) => Err(ErrorData::invalid_params(
                format!(
                    "`{tool}` has no argument `{key}`; it takes {}",
                    names.join(", ")
                ),
                None,
            )),
            None => Ok(()),
        }
    }

    fn text(&self, name: &str) -> Result<Option<String>, ErrorData> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(ErrorData::invalid_params(
                format!("`{name}` must be a string"),
                None,
            )),
        }
    }

    fn required(&self, name: &str, what: &str) -> Result<String, ErrorData> {
        match self.text(name)? {
            Some(text) if !text.trim().is_empty() => Ok(text),
            _ => Err(ErrorData::invalid_params(
                format!("`{name}` is required: {what}"),
                None,
            )),
        }
    }

    fn number(&self, name: &str, default: u64, max: u64) -> Result<u64, ErrorData> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(default),
            Some(value) => match value.as_u64() {
                Some(n) if (1..=max).contains(&n) => Ok(n),
                _ => Err(ErrorData::invalid_params(
                    format!("`{name}` must be a whole number from 1 to {max}"),
                    None,
                )),
            },
        }
    }

    fn choice<T>(
        &self,
        name: &str,
        parse: impl Fn(&str) -> Option<T>,
        allowed: &str,
    ) -> Result<Option<T>, ErrorData> {
        match self.text(name)? {
            None => Ok(None),
            Some(raw) => parse(&raw).map(Some).ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("`{name}` must be one of {allowed}, not \"{raw}\""),
                    None,
                )
            }),
        }
    }

    /// `focus`, `time_range` and `site`.
    fn narrowing(&self, lang: Lang) -> Result<Narrowing, ErrorData> {
        let focus = self
            .choice(
                "focus",
                Focus::parse,
                "web, academic, discussions, news, code",
            )?
            .unwrap_or_default();
        let period = self.choice("time_range", Period::parse, "day, week, month, year")?;
        let site = match self.text("site")?.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(raw) => Some(crate::text::valid_site(raw).ok_or_else(|| {
                ErrorData::invalid_params(lang.texts().bad_site.replace("{site}", raw), None)
            })?),
        };
        Ok(Narrowing {
            focus,
            period,
            site,
        })
    }
}

/// A failure the calling model should read (not a protocol error).
fn tool_error(message: impl Into<String>) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(message.into())]).into()
}

/// Text for the calling model, and the same as structured content.
fn tool_result(text: String, structured: Value) -> CallToolResponse {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result.into()
}

/// Sends MCP progress notifications when the client asked for them.
struct Progress {
    token: Option<ProgressToken>,
    peer: rmcp::Peer<RoleServer>,
    sent: u32,
}

impl Progress {
    async fn say(&mut self, message: String) {
        let Some(token) = &self.token else {
            return;
        };
        self.sent += 1;
        let note = ProgressNotificationParam::new(token.clone(), f64::from(self.sent))
            .with_message(message);
        // A client slow to read its progress never holds the answer up.
        match tokio::time::timeout(Duration::from_secs(2), self.peer.notify_progress(note)).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::debug!(%error, "an MCP progress notification was not sent"),
            Err(_) => tracing::debug!("an MCP progress notification timed out"),
        }
    }
}

/// Why an answer was not started, as the calling model is told.
fn refused(refusal: Refusal) -> String {
    match refusal {
        Refusal::TooFast(wait) => format!(
            "Too many questions; try again in {} s.",
            wait.as_secs().max(1)
        ),
        Refusal::QuotaFull => "The stored conversations reached their quota (CITED_USER_QUOTA_MB); delete some to ask again.".to_string(),
        Refusal::Busy => "Another answer is still running.".to_string(),
        Refusal::ConversationFull { max } => format!(
            "This conversation holds {max} questions already (CITED_MAX_EXCHANGES); start a new one."
        ),
    }
}

/// Follows an answer to its end, its status lines and steps sent as progress; when the
/// client cancels (or goes away) the answer stops as the stop button stops it, and is
/// saved as stopped. The failure the answer ended with, if any.
async fn follow(
    mut events: crate::ssr::answer::Events,
    cancel: &tokio_util::sync::CancellationToken,
    context: &RequestContext<RoleServer>,
    progress: &mut Progress,
    lang: Lang,
) -> Option<String> {
    let t = lang.texts();
    let mut failed = None;
    let mut cancelled = false;
    loop {
        let event = tokio::select! {
            () = context.ct.cancelled(), if !cancelled => {
                cancelled = true;
                cancel.cancel();
                continue;
            }
            event = events.next() => event,
        };
        let Some(event) = event else { break };
        match event {
            AnswerEvent::Status {
                status: Some(status),
            } => progress.say(crate::i18n::status_line(&status, t)).await,
            AnswerEvent::Step { step, .. } => {
                progress.say(crate::i18n::step_line(&step, t)).await;
            }
            AnswerEvent::Failed { message } => failed = Some(message),
            _ => {}
        }
    }
    failed
}

impl CitedMcp {
    async fn ask(
        &self,
        arguments: Arguments,
        caller: Caller,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        arguments.only("ask", &["question", "mode", "focus", "time_range", "site"])?;
        let raw = arguments.required("question", "the question to answer, as a string")?;
        let question = Question::parse(&raw, self.state.config.max_question_chars).map_err(
            |error| match error {
                QuestionError::Empty => ErrorData::invalid_params(
                    "`question` is required: the question to answer",
                    None,
                ),
                QuestionError::TooLong { length, max } => ErrorData::invalid_params(
                    format!("`question` has {length} characters; at most {max} are accepted"),
                    None,
                ),
            },
        )?;
        let mode = arguments
            .choice("mode", Mode::parse, "chat, agent, research")?
            .unwrap_or(Mode::Chat);
        let lang = Lang::of_text(question.as_str());
        let narrowing = arguments.narrowing(lang)?;
        let session = Session::new(SessionId::random(), Instant::now());
        // A user's answers land in their history; an anonymous caller's are not kept
        // (nobody could open them again).
        let session = Arc::new(match &caller.user {
            Some(user) => session.with_user(Some(user.clone())),
            None => session.unkept(),
        });
        session.update_settings(|settings| {
            settings.focus = narrowing.focus;
            settings.period = narrowing.period;
        });
        let asker = caller.limited.then(|| Asker {
            owner: match &caller.user {
                Some(user) => crate::ssr::store::owner_of_user(user),
                None => "api".to_string(),
            },
            address: caller.address,
        });
        let input = TurnInput {
            id: 0,
            question: question.into_string(),
            search_enabled: true,
            lang,
            mode,
            force_search: false,
            site: narrowing.site,
            model: None,
            files: Vec::new(),
        };
        let running = match answer::start(
            &self.state,
            Arc::clone(&session),
            input,
            asker,
            Delivery::Direct,
        )
        .await
        {
            Ok(running) => running,
            Err(refusal) => return Ok(tool_error(refused(refusal))),
        };
        let mut progress = Progress {
            token: context.meta.get_progress_token(),
            peer: context.peer.clone(),
            sent: 0,
        };
        let failed = follow(
            running.events,
            &running.cancel,
            &context,
            &mut progress,
            lang,
        )
        .await;
        let Ok(exchange) = running.done.await else {
            return Ok(tool_error("The answer failed; try again."));
        };
        if let Some(message) = failed.filter(|_| exchange.answer.trim().is_empty()) {
            return Ok(tool_error(message));
        }
        let conversation = session
            .user
            .as_ref()
            .and(session.conversation_id())
            .map(|id| format!("{CONVERSATIONS}{id}"));
        Ok(tool_result(
            answer_text(&exchange),
            answer_json(&exchange, conversation),
        ))
    }

    async fn search(
        &self,
        arguments: Arguments,
        caller: Caller,
    ) -> Result<CallToolResponse, ErrorData> {
        arguments.only("search", &["query", "focus", "time_range", "site", "count"])?;
        let query = arguments.required("query", "what to search for, as a string")?;
        let count = arguments.number("count", DEFAULT_COUNT, MAX_COUNT)?;
        let lang = Lang::of_text(&query);
        let narrowing = arguments.narrowing(lang)?;
        if let Some(refused) = self.refused(&caller).await {
            return Ok(refused);
        }
        let session = Arc::new(Session::new(SessionId::random(), Instant::now()).unkept());
        let period = narrowing.period;
        let (searcher, notice) =
            Searcher::pick(&self.state, session, lang, narrowing, Vec::new()).await;
        let options = SearchOptions {
            max_results: usize::try_from(count).ok(),
            time_range: period.map(TimeRange::from),
            ..SearchOptions::default()
        };
        let (searched, _) = searcher.web(&query, &options).await;
        let results = match searched {
            Ok(results) => results,
            Err(error) => {
                tracing::warn!(%error, "an MCP search failed");
                // A remote caller is not the operator: no internal addresses.
                let message = if caller.limited {
                    format!("Search is unavailable now ({}).", error.kind())
                } else {
                    crate::ssr::messages::search_error(lang, &error)
                };
                return Ok(tool_error(message));
            }
        };
        let sources: Vec<Value> = results
            .sources
            .iter()
            .take(usize::try_from(count).unwrap_or(usize::MAX))
            .zip(1u32..)
            .map(|(source, number)| {
                json!({
                    "number": number,
                    "title": source.title,
                    "url": source.url,
                    "domain": source.domain,
                    "snippet": source.snippet,
                    "engines": source.engines,
                    "published": source.published,
                    "kind": source.kind,
                })
            })
            .collect();
        let mut text = String::new();
        if let Some(notice) = &notice {
            text.push_str(&notice.text);
            text.push_str("\n\n");
        }
        if sources.is_empty() {
            text.push_str("No results.");
        }
        for source in &sources {
            text.push_str(&format!(
                "[{}] {}\n{}\n{}\n\n",
                source["number"],
                source["title"].as_str().unwrap_or_default(),
                source["url"].as_str().unwrap_or_default(),
                source["snippet"].as_str().unwrap_or_default(),
            ));
        }
        let structured = json!({
            "query": query,
            "provider": match searcher.kind() {
                ProviderKind::Web => "web",
                ProviderKind::Knowledge => "knowledge",
                ProviderKind::Combined => "web and knowledge",
            },
            "notice": notice.map(|n| n.text),
            "results": sources,
            "suggestions": results.suggestions,
        });
        Ok(tool_result(text.trim_end().to_string(), structured))
    }

    async fn read(
        &self,
        arguments: Arguments,
        caller: Caller,
    ) -> Result<CallToolResponse, ErrorData> {
        arguments.only("read", &["url", "max_chars"])?;
        let url = arguments.required("url", "the page's http(s) URL")?;
        let max = arguments.number("max_chars", DEFAULT_READ_CHARS, MAX_READ_CHARS)?;
        if let Some(refused) = self.refused(&caller).await {
            return Ok(refused);
        }
        // The caller chose the URL: public addresses only, whatever `CITED_FETCH_ALLOW`
        // opens to the answers' own reads; the text cut where the caller asked.
        let policy = crate::ssr::fetch::FetchPolicy {
            max_chars: usize::try_from(MAX_READ_CHARS).unwrap_or(usize::MAX) + 1,
            allow: std::collections::HashSet::new(),
            ..self.state.fetch.as_ref().clone()
        };
        let page = match crate::ssr::fetch::deep_read(url.trim(), &policy).await {
            Ok(page) => page,
            Err(error) => {
                tracing::info!(%error, "an MCP read failed");
                let why = match error {
                    crate::ssr::fetch::FetchError::NotHttp { .. } => {
                        "only http and https pages can be read".to_string()
                    }
                    crate::ssr::fetch::FetchError::Blocked { .. } => {
                        "it is on a private or reserved address, which cited does not read"
                            .to_string()
                    }
                    other if !caller.limited => other.to_string(),
                    _ => "it could not be fetched or has no readable text".to_string(),
                };
                return Ok(tool_error(format!("The page cannot be read: {why}.")));
            }
        };
        let max = usize::try_from(max).unwrap_or(usize::MAX);
        let length = page.text.chars().count();
        let text: String = page.text.chars().take(max).collect();
        let structured = json!({
            "url": page.url,
            "title": page.title,
            "text": text,
            "truncated": length > max,
            "chars": length,
        });
        let shown = format!("# {}\n{}\n\n{}", page.title, page.url, text);
        Ok(tool_result(shown, structured))
    }

    /// Over the caller's question rate (searches and reads count as questions), the tool
    /// result that says so; nothing for unlimited callers.
    async fn refused(&self, caller: &Caller) -> Option<CallToolResponse> {
        if !caller.limited {
            return None;
        }
        let owner = Self::owner(caller).unwrap_or_else(|| "api".to_string());
        match crate::ssr::request::may_ask(&self.state, &owner, caller.address).await {
            Ok(()) | Err(crate::ssr::request::Refused::QuotaFull) => None,
            Err(crate::ssr::request::Refused::TooFast(wait)) => Some(tool_error(format!(
                "Too many requests; try again in {} s.",
                wait.as_secs().max(1)
            ))),
        }
    }

    /// The owner whose conversations a caller reads: a user's, nobody's for anonymous
    /// callers (their answers are not kept).
    fn owner(caller: &Caller) -> Option<String> {
        caller.user.as_deref().map(crate::ssr::store::owner_of_user)
    }
}

/// The answer for the calling model: its text with `[n]` markers, then the numbered
/// sources it cites (and those cited's additions cite).
pub fn answer_text(exchange: &Exchange) -> String {
    let mut text = exchange.answer.trim_end().to_string();
    let (_, sources, _) = answer::cited_json(exchange);
    if !sources.is_empty() {
        text.push_str("\n\nSources:\n");
        for source in &sources {
            text.push_str(&format!(
                "[{}] {} {}\n",
                source["number"],
                source["title"].as_str().unwrap_or_default(),
                source["url"].as_str().unwrap_or_default(),
            ));
        }
    }
    text.trim_end().to_string()
}

/// The structured content of an `ask` result.
pub fn answer_json(exchange: &Exchange, conversation: Option<String>) -> Value {
    let (_, sources, claims) = answer::cited_json(exchange);
    let share = crate::model::SupportShare::of(&exchange.alignments);
    let accessed = crate::citation::export::utc(crate::ssr::store::now_millis());
    let references = crate::citation::export::references(
        std::slice::from_ref(exchange),
        accessed.get(..10).unwrap_or_default(),
    );
    let csl =
        serde_json::from_str::<Value>(&crate::citation::export::Format::CslJson.write(&references))
            .unwrap_or_else(|_| json!([]));
    json!({
        "answer": exchange.answer,
        "mode": exchange.mode,
        "sources": sources,
        "claims": claims,
        "coverage": exchange.coverage.map(|c| json!({
            "cited": c.cited,
            "claims": c.claims,
            "added": c.added,
            "percent": c.percent(),
        })),
        "support": {
            "checked": share.checked,
            "supported": share.supported,
            "partial": share.partial,
            "not_checked": share.not_checked,
            "percent": share.percent(),
        },
        "csl": csl,
        "conversation": conversation,
        "stopped": exchange.stopped,
        "offline": exchange.offline,
        "notices": exchange.notices.iter().map(|n| n.text.clone()).collect::<Vec<_>>(),
    })
}

impl ServerHandler for CitedMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(
            Implementation::new("cited", env!("CARGO_PKG_VERSION")).with_title("cited"),
        )
        .with_instructions(
            "cited answers questions from web sources with citations a reader can check. \
             Use `ask` for an answer whose claims carry [n] markers to numbered sources (each with \
             how well it supports its sentences), `search` for the sources alone, and `read` for a \
             page's full text. The user's past conversations are resources \
             (cited://conversations/<id>, Markdown).",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = self.caller(&context.extensions);
        let arguments = Arguments(request.arguments.unwrap_or_default());
        match request.name.as_ref() {
            "ask" => self.ask(arguments, caller, context).await,
            "search" => self.search(arguments, caller).await,
            "read" => self.read(arguments, caller).await,
            other => Err(ErrorData::invalid_params(
                format!("there is no tool `{other}`: the tools are ask, search and read"),
                None,
            )),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let Some(owner) = Self::owner(&self.caller(&context.extensions)) else {
            return Ok(ListResourcesResult::with_all_items(Vec::new()));
        };
        let summaries = self
            .state
            .store
            .list(&owner, LISTED)
            .await
            .map_err(|error| {
                tracing::error!(%error, "cannot list conversations for MCP");
                ErrorData::internal_error("the history cannot be read now", None)
            })?;
        let resources = summaries
            .into_iter()
            .map(|summary| {
                Resource::new(
                    format!("{CONVERSATIONS}{}", summary.id),
                    summary.title.clone(),
                )
                .with_title(summary.title)
                .with_mime_type("text/markdown")
                .with_description(
                    "A cited conversation: questions, answers and their linked references",
                )
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(format!("{CONVERSATIONS}{{id}}"), "conversation")
                .with_title("A cited conversation")
                .with_mime_type("text/markdown")
                .with_description(
                    "One of your conversations as Markdown, with its references linked",
                ),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let not_found = || {
            ErrorData::resource_not_found(
                format!("no conversation at {}", request.uri),
                Some(json!({ "uri": request.uri })),
            )
        };
        let id = request
            .uri
            .strip_prefix(CONVERSATIONS)
            .filter(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric()))
            .ok_or_else(not_found)?;
        let owner = Self::owner(&self.caller(&context.extensions)).ok_or_else(not_found)?;
        let conversation = match self.state.store.conversation(&owner, id).await {
            Ok(Some(conversation)) => conversation,
            Ok(None) => return Err(not_found()),
            Err(error) => {
                tracing::error!(%error, "cannot read a conversation for MCP");
                return Err(ErrorData::internal_error(
                    "the history cannot be read now",
                    None,
                ));
            }
        };
        let markdown = crate::components::conversation::conversation_markdown(
            &conversation.summary.title,
            &conversation.exchanges,
        );
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(markdown, request.uri.clone()).with_mime_type("text/markdown")
        ])
        .into())
    }
}
