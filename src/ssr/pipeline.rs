//! One answer's lifecycle, shared by every mode: the [`Turn`].
//!
//! A `Turn` owns the exchange being written, the channel its events go to, the token that
//! stops it and the session generation it started in. The modes (`chat`, `agent`,
//! `research`) are `async fn run(&mut Turn) -> Result<(), Halted>` built from its steps:
//! status, notice, step, search, register a round, stream the model, fail. Stopping (the
//! stop button, the browser going away, a `/reset`) is one error, [`Halted`], carried by
//! `?`; [`Turn::finish`] records it and saves whatever was written.
//!
//! [`stream_reply`] is the one loop that reads a model's stream: the answer text of every
//! mode and the Research thinker's JSON replies both go through it.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::citation::{render, used_numbers, Allocation, Registry, SourceMap};
use crate::model::{
    AnswerEvent, CitationEntry, Exchange, ExchangeState, Image, Lang, Level, Mode, Notice, Source,
    Status, Step, TokenUsage,
};
use crate::ssr::config::Titles;
use crate::ssr::llm::repetition::RepetitionGuard;
use crate::ssr::llm::{
    CallKind, ChatEvent, ChatModel, ChatRequest, FinishReason, LlmError, Message, ModelKind,
    ToolCall, Usage,
};
use crate::ssr::messages;
use crate::ssr::prompts;
use crate::ssr::search::cache::CacheKey;
use crate::ssr::search::{SearchError, SearchOptions, SearchProvider, SearchResults};
use crate::ssr::session::{Session, SessionId};
use crate::ssr::shared::Shared;
use crate::ssr::state::AppState;

mod checking;
pub mod related;

/// The answer stopped early: the stop button, the browser went away, or a `/reset` began
/// a new conversation. Not a failure; what was written so far is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the answer was stopped")]
pub struct Halted;

/// What the person asked, and how.
#[derive(Debug, Clone)]
pub struct TurnInput {
    pub id: u64,
    pub question: String,
    /// Chat mode's search switch (Agent and Research decide themselves).
    pub search_enabled: bool,
    /// The UI language, for statuses and notices (the answer follows the question).
    pub lang: Lang,
    pub mode: Mode,
    /// Agent: search first whatever the model would do ("搜索后重答").
    pub force_search: bool,
    /// Web searches look only at this site (`cited ask --site`).
    pub site: Option<String>,
    /// The picked model (`endpoint|model`); `None`: the default.
    pub model: Option<String>,
    /// Files searched alongside the web besides the conversation's own (`cited ask --file`).
    pub files: Vec<crate::ssr::knowledge::Document>,
}

impl TurnInput {
    /// A question answered on its own (the API, `cited eval`): searching, in the
    /// question's language.
    pub fn standalone(question: String, mode: Mode) -> TurnInput {
        TurnInput {
            id: 1,
            lang: Lang::of_text(&question),
            question,
            search_enabled: true,
            mode,
            force_search: false,
            site: None,
            model: None,
            files: Vec::new(),
        }
    }
}

/// How an answer's citation numbers are owned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numbering {
    /// Chat: 1..n for this answer only; `exchange.sources` is the whole list.
    PerAnswer,
    /// Agent and Research: the session's registry; the answer lists what it retrieved and
    /// any older number it cites.
    Session,
}

/// Whether a search was answered from the session's cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheUse {
    Hit,
    Miss,
}

/// Searches through the session's LRU cache, then (with `CITED_REDIS_URL`) the cache every
/// instance shares: an identical query (same options, same provider) is answered from
/// memory; only complete successful searches are remembered.
pub async fn cached_search(
    session: &Session,
    shared: &Shared,
    provider: &dyn SearchProvider,
    query: &str,
    options: &SearchOptions,
) -> (Result<SearchResults, SearchError>, CacheUse) {
    let key = CacheKey::new(query, options).from_source(provider.kind());
    let searches = &crate::ssr::metrics::metrics().searches;
    if let Some(results) = session.with_search_cache(|cache| cache.get(&key)) {
        tracing::debug!(session = ?session.id, query, n_results = results.sources.len(), "search cache hit");
        searches.with_label_values(&["hit"]).inc();
        return (Ok(results), CacheUse::Hit);
    }
    let shared_key = format!("{}:{key:?}", env!("CARGO_PKG_VERSION"));
    if let Some(results) = shared.cached_search(&shared_key).await {
        tracing::debug!(session = ?session.id, query, "shared search cache hit");
        session.with_search_cache(|cache| cache.put(key, results.clone()));
        searches.with_label_values(&["shared_hit"]).inc();
        // Told as a fresh search: whether somebody else searched it is not this user's to
        // learn.
        return (Ok(results), CacheUse::Miss);
    }
    tracing::debug!(session = ?session.id, query, "search cache miss");
    let result = provider.search(query, options).await;
    let outcome = match &result {
        Ok(_) => "ok",
        Err(error) => error.kind(),
    };
    searches.with_label_values(&[outcome]).inc();
    if let Ok(results) = &result {
        if !results.partial {
            session.with_search_cache(|cache| cache.put(key, results.clone()));
            shared.cache_search(&shared_key, results).await;
        }
    }
    (result, CacheUse::Miss)
}

/// Why a reply ended before the model said it was done. Each is told to the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// The call's deadline passed ([`ChatRequest::deadline`]).
    Deadline(Duration),
    /// The model was repeating itself; the repeats were dropped.
    Repetition,
    /// The reply reached its `max_tokens`.
    Length,
}

/// A model reply as it ended.
#[derive(Debug, Default)]
pub struct Reply {
    /// All of its text (without repeats cut by [`Cut::Repetition`]).
    pub text: String,
    /// A reasoning model's thinking, apart from the text.
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    /// Set when the model failed (before or during the stream); `text` is what came first.
    pub error: Option<LlmError>,
    pub cut: Option<Cut>,
    /// What the server counted, when it said.
    pub usage: Option<Usage>,
    /// Stream pieces of text and reasoning received: about one token each on llama.cpp,
    /// Ollama and OpenAI, so the progress shown while a reply is written.
    pub pieces: u64,
    /// Reasoning that came as text (before a lone `</think>`) was moved out of `text`.
    pub rethought: bool,
}

/// How far a call has come, for the status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub elapsed: Duration,
    pub pieces: u64,
}

/// Where a reply's text goes while it streams, and when to stop reading it.
pub trait ReplySink: Send {
    /// Resolves when the reply should no longer be read.
    fn halted(&self) -> impl Future<Output = ()> + Send;
    /// A piece of text, as soon as it arrives.
    fn text(&mut self, piece: &str) -> impl Future<Output = Result<(), Halted>> + Send;
    /// A piece of reasoning.
    fn reasoning(&mut self, _piece: &str) -> impl Future<Output = Result<(), Halted>> + Send {
        std::future::ready(Ok(()))
    }
    /// Every second while the call runs.
    fn tick(&mut self, _progress: Progress) -> impl Future<Output = Result<(), Halted>> + Send {
        std::future::ready(Ok(()))
    }
}

/// Reads nothing out loud: the text is only collected (the Research thinker's JSON), and
/// the pieces counted on `meter`, whose owner shows them as progress.
pub struct Collect<'a> {
    pub meter: Option<&'a Meter>,
}

impl ReplySink for Collect<'_> {
    fn halted(&self) -> impl Future<Output = ()> + Send {
        // Thinker calls run inside branches that are aborted as a whole.
        std::future::pending()
    }

    async fn text(&mut self, _piece: &str) -> Result<(), Halted> {
        if let Some(meter) = self.meter {
            meter.piece();
        }
        Ok(())
    }

    async fn reasoning(&mut self, piece: &str) -> Result<(), Halted> {
        self.text(piece).await
    }
}

/// What one answer's model calls add up to, shared by the turn and the Research thinker
/// (whose calls run in branches, away from the turn): pieces streamed so far, the tokens
/// the server counted, and what went wrong quietly that the user should be told.
#[derive(Debug, Default)]
pub struct Meter {
    pieces: AtomicU64,
    usage: std::sync::Mutex<TokenUsage>,
    notes: std::sync::Mutex<Vec<String>>,
}

impl Meter {
    pub fn piece(&self) {
        self.pieces.fetch_add(1, Ordering::Relaxed);
    }

    pub fn pieces(&self) -> u64 {
        self.pieces.load(Ordering::Relaxed)
    }

    /// Adds one call's tokens: the server's count, or the pieces when it gave none.
    pub fn add(&self, reply: &Reply) {
        let mut total = self
            .usage
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        total.calls += 1;
        match reply.usage {
            Some(usage) => {
                total.prompt_tokens += usage.prompt_tokens;
                total.completion_tokens += usage.completion_tokens;
            }
            None => {
                total.completion_tokens += reply.pieces;
                total.estimated = true;
            }
        }
    }

    pub fn usage(&self) -> TokenUsage {
        self.usage
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .clone()
    }

    /// Something to tell the user once (a step that degraded), deduplicated.
    pub fn note(&self, text: String) {
        let mut notes = self
            .notes
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        if !notes.contains(&text) {
            notes.push(text);
        }
    }

    fn take_notes(&self) -> Vec<String> {
        std::mem::take(
            &mut *self
                .notes
                .lock()
                .unwrap_or_else(|poison| poison.into_inner()),
        )
    }
}

/// The one loop that reads a model's stream: text to `sink`, reasoning apart, tool calls
/// collected, the first error kept in the reply. It ends the reply early (and says why in
/// [`Reply::cut`]) at the request's deadline, when the text starts repeating itself, or at
/// `max_tokens`. Dropping the stream (on `Halted` or a cut) closes the request.
pub async fn stream_reply(
    llm: &dyn ChatModel,
    request: ChatRequest,
    sink: &mut impl ReplySink,
) -> Result<Reply, Halted> {
    let mut reply = Reply::default();
    let started = Instant::now();
    let deadline = request.deadline.unwrap_or(NO_DEADLINE);
    let expired = tokio::time::sleep(deadline);
    tokio::pin!(expired);
    let mut ticker = tokio::time::interval_at((started + TICK).into(), TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut repetition = RepetitionGuard::default();
    let mut thinking_repetition = RepetitionGuard::default();
    let start = llm.stream(request);
    tokio::pin!(start);
    let mut stream = loop {
        tokio::select! {
            biased;
            () = sink.halted() => return Err(Halted),
            () = &mut expired => {
                reply.cut = Some(Cut::Deadline(deadline));
                return Ok(reply);
            }
            begun = &mut start => match begun {
                Ok(stream) => break stream,
                Err(error) => {
                    reply.error = Some(error);
                    return Ok(reply);
                }
            },
            _ = ticker.tick() => {
                sink.tick(Progress { elapsed: started.elapsed(), pieces: 0 }).await?;
            }
        }
    };
    loop {
        let next = tokio::select! {
            biased;
            () = sink.halted() => return Err(Halted),
            () = &mut expired => {
                reply.cut = Some(Cut::Deadline(deadline));
                return Ok(reply);
            }
            next = stream.next() => next,
            _ = ticker.tick() => {
                let progress = Progress { elapsed: started.elapsed(), pieces: reply.pieces };
                sink.tick(progress).await?;
                continue;
            }
        };
        match next {
            None => return Ok(unthink(reply)),
            Some(Ok(ChatEvent::Done {
                finish_reason,
                usage,
            })) => {
                reply.usage = usage;
                if finish_reason == Some(FinishReason::Length) {
                    reply.cut = Some(Cut::Length);
                }
                return Ok(unthink(reply));
            }
            Some(Ok(ChatEvent::Text(piece))) => {
                reply.pieces += 1;
                reply.text.push_str(&piece);
                sink.text(&piece).await?;
                // Code may repeat itself legitimately (`[0, 0, 0, …]`): not inside a fence.
                let in_code = reply.text.matches("```").count() % 2 == 1;
                if let Some(keep) = repetition.check(&reply.text).filter(|_| !in_code) {
                    tracing::warn!(
                        chars = reply.text.chars().count(),
                        "the model repeats itself; cut"
                    );
                    reply.text.truncate(keep);
                    reply.cut = Some(Cut::Repetition);
                    return Ok(reply);
                }
            }
            Some(Ok(ChatEvent::Reasoning(piece))) => {
                reply.pieces += 1;
                reply.reasoning.push_str(&piece);
                sink.reasoning(&piece).await?;
                if let Some(keep) = thinking_repetition.check(&reply.reasoning) {
                    reply.reasoning.truncate(keep);
                    reply.cut = Some(Cut::Repetition);
                    return Ok(reply);
                }
            }
            Some(Ok(ChatEvent::ToolCalls(mut calls))) => reply.tool_calls.append(&mut calls),
            Some(Err(error)) => {
                reply.error = Some(error);
                return Ok(reply);
            }
        }
    }
}

/// Chat templates that open the `<think>` block in the prompt (DeepSeek-R1 distills, vLLM
/// without a reasoning parser) stream `thinking…</think>answer`: no opening tag, so it came
/// as text. Once the reply is complete, what precedes a lone `</think>` is reasoning
/// ([`Reply::rethought`]; the answer is then rewritten without it).
fn unthink(mut reply: Reply) -> Reply {
    const CLOSE: &str = "</think>";
    if let Some(at) = reply.text.find(CLOSE) {
        if !reply.text[..at].contains("<think>") {
            let thought: String = reply.text.drain(..at + CLOSE.len()).collect();
            reply.reasoning.push_str(thought[..at].trim());
            reply.text = reply.text.trim_start().to_string();
            reply.rethought = true;
        }
    }
    reply
}

/// How often a running call reports its progress.
const TICK: Duration = Duration::from_secs(1);
/// A request without a deadline (tests, scripted fakes) still ends some day.
const NO_DEADLINE: Duration = Duration::from_secs(24 * 3600);

/// One answer being written.
pub struct Turn {
    pub state: AppState,
    /// The model this answer uses: the picked one, else the default (`state.llm`).
    pub llm: Arc<dyn ChatModel>,
    pub session: Arc<Session>,
    pub input: TurnInput,
    pub exchange: Exchange,
    pub numbering: Numbering,
    /// Registry numbers this answer allocated (session numbering).
    pub retrieved: Vec<u32>,
    events: mpsc::Sender<AnswerEvent>,
    cancel: CancellationToken,
    /// The session's generation when the answer began (a `/reset` changes it).
    generation: u64,
    /// The search provider, picked once per answer.
    provider: Option<Arc<dyn SearchProvider>>,
    /// Where the exchange is stored: its conversation and position, when it could be.
    stored: Option<(String, u32)>,
    /// The conversation's registry as this answer last saw it: what its sources and the
    /// saved registry come from once a `/reset` or another conversation replaced the
    /// session's.
    snapshot: Registry,
    /// What this answer's model calls streamed and used, the thinker's included.
    pub meter: Arc<Meter>,
    /// The answer reached `CITED_MAX_ANSWER_KB`: later text is dropped.
    capped: bool,
    /// Tells other instances the stored exchange is still being written.
    _alive: Option<crate::ssr::shared::Alive>,
    /// When the question came, and whether its first word went out (for metrics).
    began: Instant,
    first_word: bool,
    /// Whether the image strip was searched for (once per answer).
    pub pictures_sought: bool,
    /// The conversation's files (and `--file`s), loaded with the search provider.
    files: Option<Arc<crate::ssr::files::ConversationFiles>>,
}

impl Turn {
    /// Starts an answer: its record and the `Started` event.
    pub async fn begin(
        state: AppState,
        session: Arc<Session>,
        input: TurnInput,
        cancel: CancellationToken,
        events: mpsc::Sender<AnswerEvent>,
    ) -> Turn {
        let default_id = state.models.default_id().map(str::to_string);
        let (model, llm) = match input
            .model
            .as_deref()
            .filter(|id| Some(*id) != default_id.as_deref())
            .and_then(|id| Some((id.to_string(), state.models.chosen(id)?)))
        {
            Some((id, llm)) => (Some(id), llm),
            None => (default_id, Arc::clone(&state.llm)),
        };
        let offline = llm.kind() == ModelKind::Extractive;
        let settings = session.settings();
        let exchange = Exchange {
            id: input.id,
            mode: input.mode,
            question: input.question.clone(),
            offline,
            narrowing: crate::model::Narrowing {
                focus: settings.focus,
                period: settings.period,
                site: input.site.clone(),
            },
            model,
            ..Exchange::default()
        };
        let turn = Turn {
            llm,
            generation: session.generation(),
            numbering: match input.mode {
                Mode::Chat => Numbering::PerAnswer,
                Mode::Agent | Mode::Research => Numbering::Session,
            },
            state,
            session,
            input,
            exchange,
            retrieved: Vec::new(),
            events,
            cancel,
            provider: None,
            stored: None,
            snapshot: Registry::new(),
            meter: Arc::new(Meter::default()),
            capped: false,
            _alive: None,
            began: Instant::now(),
            first_word: false,
            pictures_sought: false,
            files: None,
        };
        // Sent even when a stop already landed, so every answer the browser sees starts;
        // nobody listening is noticed by the first step that checks.
        turn.send_anyway(AnswerEvent::Started {
            id: turn.input.id,
            offline,
            question: turn.input.question.clone(),
            narrowing: turn.exchange.narrowing.clone(),
        })
        .await;
        let mut turn = turn;
        turn.snapshot = turn.registry();
        turn.store_question().await;
        turn
    }

    /// Writes the question (state `answering`) into the session's conversation, starting a
    /// new one when there is none. A database failure is logged and told; the answer goes
    /// on unsaved.
    async fn store_question(&mut self) {
        if !self.session.kept {
            return;
        }
        let owner = self.session.owner();
        let browser = self.session.id.to_string();
        let store = Arc::clone(&self.state.store);
        let conversation = match self.session.conversation_id() {
            Some(id) => Ok(id),
            None => {
                let id = SessionId::random().to_string();
                let title = crate::ssr::store::title_from(&self.input.question);
                match store
                    .create_conversation(&owner, &id, &title, self.input.mode)
                    .await
                {
                    Ok(()) => {
                        // The browser is in it now, unless a `/reset` or another
                        // conversation came meanwhile (this answer still goes into it).
                        if self.session.start_conversation(self.generation, id.clone()) {
                            let saved = if self.session.user.is_some() {
                                store.update_browser_conversation(&browser, Some(&id)).await
                            } else {
                                store.set_browser_conversation(&browser, Some(&id)).await
                            };
                            if let Err(error) = saved {
                                tracing::warn!(%error, "cannot save the browser's conversation");
                            }
                        }
                        Ok(id)
                    }
                    Err(error) => Err(error),
                }
            }
        };
        let mut question = self.exchange.clone();
        question.state = ExchangeState::Answering;
        let saved = match conversation {
            Ok(id) => store
                .begin_exchange(&id, &question)
                .await
                .map(|seq| (id, seq)),
            Err(error) => Err(error),
        };
        match saved {
            Ok(stored) => {
                self._alive = Some(self.state.shared.answering(&stored.0, stored.1));
                self.stored = Some(stored);
                self.browser_changed().await;
            }
            Err(error) => {
                tracing::error!(%error, "cannot save the question; this answer will not be kept");
                let text = self.texts().not_saved;
                let _ = self.notice(Level::Warning, text).await;
            }
        }
    }

    pub fn lang(&self) -> Lang {
        self.input.lang
    }

    pub fn texts(&self) -> &'static crate::i18n::Texts {
        self.input.lang.texts()
    }

    /// Resolves when the answer must stop: the stop button, or the browser went away.
    pub async fn halted(&self) {
        tokio::select! {
            () = self.cancel.cancelled() => {},
            () = self.events.closed() => {},
        }
    }

    /// `Err(Halted)` once the answer must stop.
    pub fn check(&self) -> Result<(), Halted> {
        if self.cancel.is_cancelled() || self.events.is_closed() {
            Err(Halted)
        } else {
            Ok(())
        }
    }

    /// Runs `work` unless the answer stops first. Every second it runs, the status line's
    /// progress says how long it has taken and how many model tokens streamed meanwhile
    /// (a plan, a verdict, branches), so no wait is silent.
    pub async fn guard<T>(&self, work: impl Future<Output = T>) -> Result<T, Halted> {
        self.guard_since(Instant::now(), self.meter.pieces(), work)
            .await
    }

    /// [`Turn::guard`] for one wait of a longer piece of work that began at `started`,
    /// when the meter read `base`: the progress counts from there.
    pub async fn guard_since<T>(
        &self,
        started: Instant,
        base: u64,
        work: impl Future<Output = T>,
    ) -> Result<T, Halted> {
        let first = started + TICK * (started.elapsed().as_secs() as u32 + 1);
        let mut ticker = tokio::time::interval_at(first.into(), TICK);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        tokio::pin!(work);
        loop {
            tokio::select! {
                biased;
                () = self.halted() => return Err(Halted),
                done = &mut work => return Ok(done),
                _ = ticker.tick() => {
                    let tokens = self.meter.pieces().saturating_sub(base);
                    self.progress(started.elapsed(), tokens).await?;
                }
            }
        }
    }

    /// The status line's progress: seconds and tokens.
    pub async fn progress(&self, elapsed: Duration, tokens: u64) -> Result<(), Halted> {
        let secs = u32::try_from(elapsed.as_secs()).unwrap_or(u32::MAX);
        self.send(AnswerEvent::Progress { secs, tokens }).await
    }

    /// Tells the user about a reply that ended early ([`Cut`]); `what` names the limit
    /// for a length cut.
    pub async fn cut_notice(&mut self, cut: Cut, max_tokens: Option<u32>) -> Result<(), Halted> {
        let text = cut_text(self.texts(), cut, max_tokens, CallKind::Answer);
        self.notice(Level::Warning, text).await
    }

    /// Tells what the thinker noted while it worked (a step that degraded), once each.
    pub async fn flush_notes(&mut self) -> Result<(), Halted> {
        for text in self.meter.take_notes() {
            self.notice(Level::Warning, text).await?;
        }
        Ok(())
    }

    /// Sends an event. Never waits past a stop: a full channel (a slow browser) cannot
    /// keep a stopped answer alive.
    pub async fn send(&self, event: AnswerEvent) -> Result<(), Halted> {
        self.check()?;
        tokio::select! {
            sent = self.events.send(event) => sent.map_err(|_| Halted),
            () = self.halted() => Err(Halted),
        }
    }

    /// Sends an event even after a stop (the start and the end of an answer), but never
    /// waits for a browser that has gone.
    async fn send_anyway(&self, event: AnswerEvent) {
        tokio::select! {
            _ = self.events.send(event) => {},
            () = self.events.closed() => {},
        }
    }

    /// A warning notice kept with the answer and sent even after a stop (while it ends).
    async fn warn_anyway(&mut self, text: String) {
        let notice = Notice {
            level: Level::Warning,
            text,
        };
        self.exchange.notices.push(notice.clone());
        self.send_anyway(AnswerEvent::Notice { notice }).await;
    }

    /// Sets the status line (`None` clears it).
    pub async fn status(&self, status: Option<Status>) -> Result<(), Halted> {
        self.send(AnswerEvent::Status { status }).await
    }

    /// A notice beside the answer, kept with it.
    pub async fn notice(&mut self, level: Level, text: impl Into<String>) -> Result<(), Halted> {
        let notice = Notice {
            level,
            text: text.into(),
        };
        self.exchange.notices.push(notice.clone());
        self.send(AnswerEvent::Notice { notice }).await
    }

    /// A step of the trace, kept with the answer.
    pub async fn step(&mut self, step: Step) -> Result<(), Halted> {
        let id = u32::try_from(self.exchange.steps.len()).unwrap_or(u32::MAX);
        self.exchange.steps.push(step.clone());
        self.send(AnswerEvent::Step { id, step }).await
    }

    /// The sources the answer may cite.
    pub async fn sources(&mut self, sources: Vec<Arc<CitationEntry>>) -> Result<(), Halted> {
        self.exchange.sources.clone_from(&sources);
        self.send(AnswerEvent::Sources { sources }).await
    }

    /// Appends answer text. Past `CITED_MAX_ANSWER_KB` the rest is dropped, with one
    /// notice.
    pub async fn token(&mut self, text: String) -> Result<(), Halted> {
        let cap = self.state.config.capacity.answer_bytes;
        if self.capped {
            return self.check();
        }
        let room = cap - self.exchange.answer.len();
        let text = if text.len() > room {
            let mut end = room;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let kept = text[..end].to_string();
            self.capped = true;
            let notice = self
                .texts()
                .answer_too_long
                .replace("{max}", &cap.to_string());
            self.exchange.answer.push_str(&kept);
            self.send(AnswerEvent::Token { text: kept }).await?;
            return self.notice(Level::Warning, notice).await;
        } else {
            text
        };
        if !self.first_word && !text.trim().is_empty() {
            self.first_word = true;
            crate::ssr::metrics::metrics()
                .first_token_seconds
                .with_label_values(&[self.input.mode.as_str()])
                .observe(self.began.elapsed().as_secs_f64());
        }
        self.exchange.answer.push_str(&text);
        self.send(AnswerEvent::Token { text }).await
    }

    /// Waits for the answer's turn under the server's limits (`CITED_MAX_RESEARCH` for
    /// Research, then `CITED_MAX_ANSWERS`), telling the status line its place while it
    /// waits. The slots are held until they are dropped.
    pub async fn admit(&self) -> Result<Vec<crate::ssr::limits::Slot>, Halted> {
        let limits = Arc::clone(&self.state.limits);
        let mut gates = Vec::new();
        if self.input.mode == Mode::Research {
            gates.push(Arc::clone(&limits.research));
        }
        gates.push(Arc::clone(&limits.answers));
        let mut slots = Vec::new();
        let mut queued = false;
        for gate in gates {
            if let Some(slot) = gate.try_enter() {
                slots.push(slot);
                continue;
            }
            queued = true;
            let (places, mut heard) = mpsc::unbounded_channel();
            let enter = gate.enter(move |place| {
                let _ = places.send(place);
            });
            tokio::pin!(enter);
            loop {
                tokio::select! {
                    biased;
                    () = self.halted() => return Err(Halted),
                    slot = &mut enter => {
                        slots.push(slot);
                        break;
                    }
                    Some(place) = heard.recv() => {
                        let position = u32::try_from(place).unwrap_or(u32::MAX);
                        self.status(Some(Status::Queued { position })).await?;
                    }
                }
            }
        }
        if queued {
            self.status(None).await?;
        }
        Ok(slots)
    }

    /// The answer failed: an error notice and the `Failed` event.
    pub async fn fail(&mut self, message: String) -> Result<(), Halted> {
        self.exchange.notices.push(Notice {
            level: Level::Error,
            text: message.clone(),
        });
        self.send(AnswerEvent::Failed { message }).await
    }

    /// The model failed: logged, and told in the UI language.
    pub async fn model_failed(&mut self, error: &LlmError) -> Result<(), Halted> {
        tracing::warn!(%error, "model failed");
        self.fail(messages::llm_error(self.lang(), error)).await
    }

    /// The search failed: a warning notice and the status line say why and what to fix.
    pub async fn search_failed(&mut self, error: &SearchError) -> Result<(), Halted> {
        tracing::warn!(%error, "search failed");
        let message = messages::search_error(self.lang(), error);
        self.notice(Level::Warning, message.clone()).await?;
        self.status(Some(Status::SearchFailed { message })).await
    }

    /// This answer's search provider (the session's source choice), picked once; a fallback
    /// to the knowledge base is announced as a notice.
    pub async fn provider(&mut self) -> Result<Arc<dyn SearchProvider>, Halted> {
        if let Some(provider) = &self.provider {
            return Ok(Arc::clone(provider));
        }
        // The health check may take a SearXNG timeout; stop must not wait for it.
        let choice = self.session.settings().sources;
        let picked = self
            .guard(self.state.pick_search(choice, self.input.lang))
            .await?;
        if let Some(notice) = picked.notice {
            tracing::info!("SearXNG is unavailable; searching the knowledge base");
            self.notice(notice.level, notice.text).await?;
        }
        self.provider = Some(Arc::clone(&picked.provider));
        self.files = self.load_files().await;
        Ok(picked.provider)
    }

    /// The conversation's files (and `--file`s), once the provider is picked.
    pub fn files(&self) -> Option<Arc<crate::ssr::files::ConversationFiles>> {
        self.files.clone()
    }

    /// The conversation's files and the answer's own, indexed; `None` without any.
    async fn load_files(&self) -> Option<Arc<crate::ssr::files::ConversationFiles>> {
        let mut documents = self.input.files.clone();
        if let (true, Some(conversation)) = (self.session.kept, self.session.conversation_id()) {
            match self
                .state
                .store
                .files(&self.session.owner(), &conversation)
                .await
            {
                Ok(files) => documents.extend(files.into_iter().filter_map(|file| {
                    let passages = serde_json::from_str(&file.passages).ok()?;
                    Some(crate::ssr::files::document(
                        &conversation,
                        &file.id,
                        &file.name,
                        passages,
                    ))
                })),
                Err(error) => tracing::warn!(%error, "cannot read the conversation's files"),
            }
        }
        if documents.is_empty() {
            return None;
        }
        let snippet_chars = self.state.config.snippet_chars;
        crate::ssr::blocking::run(move || {
            Arc::new(crate::ssr::files::ConversationFiles::new(
                documents,
                snippet_chars,
            ))
        })
        .await
    }

    /// One search through the session cache, unless the answer stops first.
    pub async fn search(
        &self,
        provider: &dyn SearchProvider,
        query: &str,
        options: &SearchOptions,
    ) -> Result<(Result<SearchResults, SearchError>, CacheUse), Halted> {
        let asked = query;
        let (query, options) = self.filtered(provider, query, options);
        let (searched, cache) = self
            .guard(cached_search(
                &self.session,
                &self.state.shared,
                provider,
                &query,
                &options,
            ))
            .await?;
        // The conversation's files, searched alongside (never through a cache other
        // sessions read); not for pictures.
        let Some(files) = self
            .files
            .as_ref()
            .filter(|_| !options.categories.iter().any(|c| c == "images"))
        else {
            return Ok((searched, cache));
        };
        let Ok(found) = files.search(asked, &SearchOptions::default()).await else {
            return Ok((searched, cache));
        };
        let searched = match searched {
            Ok(mut results) => {
                results.sources.extend(found.sources);
                Ok(results)
            }
            Err(_) if !found.sources.is_empty() => Ok(SearchResults {
                partial: true,
                ..found
            }),
            Err(error) => Err(error),
        };
        Ok((searched, cache))
    }

    /// A web search as the user narrowed it when the answer began (see [`narrowed`]).
    fn filtered(
        &self,
        provider: &dyn SearchProvider,
        query: &str,
        options: &SearchOptions,
    ) -> (String, SearchOptions) {
        if provider.kind() == crate::ssr::search::ProviderKind::Knowledge {
            return (query.to_string(), options.clone());
        }
        let focus = self.state.config.focus.get(self.exchange.narrowing.focus);
        narrowed(&focus, &self.exchange.narrowing, query, options)
    }

    /// Numbers search rounds in the session registry, in order; logs each allocation and
    /// tells the user when a conflict had to be repaired. A `/reset` since the answer began
    /// halts it instead: nothing goes into the fresh registry.
    pub async fn register_rounds(
        &mut self,
        rounds: &[(&str, &[Source])],
    ) -> Result<Vec<Allocation>, Halted> {
        let allocations = self
            .session
            .with_registry_of(self.generation, |registry| {
                let allocations = rounds
                    .iter()
                    .map(|(query, sources)| {
                        let allocation = registry.add_round(query, sources);
                        tracing::debug!(query, n_results = sources.len(), range = ?allocation.new_range, round = allocation.round, "citation numbers allocated");
                        if !allocation.conflicts.is_empty() {
                            tracing::error!(conflicts = ?allocation.conflicts, "citation numbers conflicted; repaired");
                        }
                        allocation
                    })
                    .collect::<Vec<_>>();
                (allocations, registry.clone())
            })
            .ok_or(Halted)?;
        let (allocations, snapshot) = allocations;
        self.snapshot = snapshot;
        for allocation in &allocations {
            self.retrieved.extend(allocation.numbers.iter().copied());
        }
        if allocations.iter().any(|a| !a.conflicts.is_empty()) {
            // Seed 002: should never happen; detected, repaired, and the user is told. The
            // numbers are taken either way: a stop now is noticed by the next step.
            let text = self.texts().registry_conflict;
            let _ = self.notice(Level::Warning, text).await;
        }
        Ok(allocations)
    }

    /// The conversation so far as model messages: each answered exchange is a user
    /// question and the assistant's answer.
    pub fn history(&self) -> Vec<Message> {
        self.session
            .conversation()
            .iter()
            .filter(|exchange| !exchange.answer.trim().is_empty())
            .flat_map(|exchange| {
                [
                    Message::User(exchange.question.clone()),
                    Message::assistant(exchange.answer.clone()),
                ]
            })
            .collect()
    }

    /// A copy of the session registry (never hold its lock across an `.await`).
    pub fn registry(&self) -> Registry {
        self.session.with_registry(|registry| registry.clone())
    }

    /// The conversation's registry: the session's while no `/reset` or switch replaced it,
    /// else this answer's last view of it.
    fn own_registry(&self) -> Registry {
        self.session
            .with_registry_of(self.generation, |registry| registry.clone())
            .unwrap_or_else(|| self.snapshot.clone())
    }

    /// The session-registry entries this answer retrieved, plus older ones its text cites.
    pub fn answer_sources(&self) -> Vec<Arc<CitationEntry>> {
        let registry = self.own_registry();
        let mut numbers = self.retrieved.clone();
        numbers.extend(used_numbers(&self.exchange.answer, &registry));
        numbers.sort_unstable();
        numbers.dedup();
        numbers
            .into_iter()
            .filter_map(|n| registry.shared(n).cloned())
            .collect()
    }

    /// Streams a model reply into the answer, token by token. `clear_status` empties the
    /// status line at the first token. A model failure is returned in the reply (the caller
    /// decides whether it fails the answer).
    ///
    /// The call is bounded by the answer limits unless the request sets its own; a reply cut
    /// short is told in a notice, and repeats cut from the text leave the answer too.
    pub async fn stream_model(
        &mut self,
        mut request: ChatRequest,
        clear_status: bool,
    ) -> Result<Reply, Halted> {
        let limits = &self.state.config.limits;
        request
            .max_tokens
            .get_or_insert(limits.max_tokens(CallKind::Answer));
        request.deadline.get_or_insert(limits.call_deadline);
        let max_tokens = request.max_tokens;
        let llm = Arc::clone(&self.llm);
        let before = self.exchange.answer.len();
        let reasoning_before = self.exchange.reasoning.len();
        let mut sink = AnswerSink {
            turn: self,
            clear_status,
            texted: false,
        };
        let reply = stream_reply(llm.as_ref(), request, &mut sink).await?;
        self.meter.add(&reply);
        if reply.cut == Some(Cut::Repetition) || reply.rethought {
            // The answer and the reasoning are exactly what the reply kept.
            self.exchange.answer.truncate(before);
            self.exchange.answer.push_str(&reply.text);
            self.exchange.reasoning.truncate(reasoning_before);
            self.exchange.reasoning.push_str(&reply.reasoning);
            let answer = self.exchange.answer.clone();
            self.send(AnswerEvent::Rewrite { answer }).await?;
            if reply.rethought {
                let text = reply.reasoning.clone();
                self.send(AnswerEvent::Reasoning { text }).await?;
            }
        }
        if let Some(cut) = reply.cut {
            tracing::warn!(?cut, "the model's reply was cut");
            self.cut_notice(cut, max_tokens).await?;
        }
        Ok(reply)
    }

    /// Ends the answer: stopped or done, the sources it may cite, the numbers it cites,
    /// `Done`, and the exchange saved to the session (unless a `/reset` came since).
    pub async fn finish(mut self, outcome: Result<(), Halted>) -> Exchange {
        if outcome.is_err() || self.cancel.is_cancelled() {
            self.exchange.stopped = true;
        }
        if self.numbering == Numbering::Session {
            self.exchange.sources = self.answer_sources();
            let sources = self.exchange.sources.clone();
            self.send_anyway(AnswerEvent::Sources { sources }).await;
        }
        if let Some(plan) = self.exchange.research.as_mut() {
            if self.exchange.stopped {
                plan.stop = Some(crate::model::StopReason::Stopped);
            }
            let plan = plan.clone();
            self.send_anyway(AnswerEvent::Plan { plan }).await;
        }
        for text in self.meter.take_notes() {
            self.warn_anyway(text).await;
        }
        let sources = SourceMap::new(self.exchange.sources.iter().cloned());
        for problem in render(&self.exchange.answer, &sources).problems {
            // Seed 002 "引用丢失": the marker stays text; the log says so.
            tracing::warn!(number = problem.number, marker = %problem.marker, "引用丢失: the answer cites a number with no source");
        }
        self.exchange.cited = used_numbers(&self.exchange.answer, &sources);
        let answered = !self.exchange.answer.trim().is_empty();
        if answered {
            self.exchange.coverage = Some(crate::citation::coverage::coverage(
                &self.exchange.answer,
                &sources,
            ));
        }
        // Sources were found, the answer cites none of them: say so beside it.
        if answered
            && !self.exchange.offline
            && !self.exchange.stopped
            && !self.exchange.sources.is_empty()
            && self.exchange.cited.is_empty()
        {
            let text = self.texts().uncited_warning.to_string();
            self.warn_anyway(text).await;
        }
        let usage = self.meter.usage();
        if usage.calls > 0 {
            let cost = self
                .state
                .config
                .limits
                .cost(usage.prompt_tokens, usage.completion_tokens);
            self.exchange.usage = Some(crate::model::TokenUsage {
                cost_micros: cost.map(|cost| (cost * 1e6).round() as u64),
                ..usage
            });
        }
        let mut exchange = std::mem::take(&mut self.exchange);
        exchange.done = true;
        tracing::info!(chars = exchange.answer.chars().count(), cited = ?exchange.cited, coverage = ?exchange.coverage, usage = ?exchange.usage, stopped = exchange.stopped, "answer done");
        let done = AnswerEvent::Done {
            cited: exchange.cited.clone(),
            stopped: exchange.stopped,
            coverage: exchange.coverage,
            usage: exchange.usage.clone(),
            unsearched: exchange.unsearched,
        };
        self.send_anyway(done).await;
        // The answer is on screen; now, side by side, its citations are checked against
        // their pages and its follow-up questions are written.
        let checking = !self.state.config.align_deadline.is_zero();
        let check = async {
            if !checking || !answered || exchange.stopped || exchange.cited.is_empty() {
                return None;
            }
            let _ = self.status(Some(crate::model::Status::Aligning)).await;
            let alignments = self.check_citations(&exchange).await;
            let share = crate::model::SupportShare::of(&alignments);
            tracing::info!(
                checked = share.checked,
                supported = share.supported,
                partial = share.partial,
                "citations checked"
            );
            self.send_anyway(AnswerEvent::Aligned {
                alignments: alignments.clone(),
            })
            .await;
            Some(alignments)
        };
        let follow_ups = async {
            let (questions, asked) = self.related(&exchange).await;
            if !questions.is_empty() {
                self.send_anyway(AnswerEvent::Related {
                    questions: questions.clone(),
                })
                .await;
            }
            (questions, asked)
        };
        let (alignments, (related, asked)) = tokio::join!(check, follow_ups);
        // A status line was shown for either: it is cleared.
        if alignments.is_some() || asked {
            let _ = self.status(None).await;
        }
        if let Some(alignments) = alignments {
            exchange.alignments = alignments;
        }
        exchange.related = related;
        exchange.state = if exchange.stopped {
            ExchangeState::Stopped
        } else if exchange.notices.iter().any(|n| n.level == Level::Error) {
            ExchangeState::Failed
        } else {
            ExchangeState::Done
        };
        if let Some((conversation, seq)) = &self.stored {
            let registry = self.own_registry();
            if let Err(error) = self
                .state
                .store
                .finish_exchange(conversation, *seq, &exchange, Some(&registry))
                .await
            {
                tracing::error!(%error, "cannot save the answer");
            }
        }
        if let Some((conversation, 0)) = &self.stored {
            if exchange.state == ExchangeState::Done {
                self.name_conversation(conversation.clone(), &exchange);
            }
        }
        self.session
            .push_exchange(self.generation, exchange.clone());
        self.browser_changed().await;
        self.count(&exchange);
        exchange
    }

    /// Records the ended answer in the metrics.
    fn count(&self, exchange: &Exchange) {
        let metrics = crate::ssr::metrics::metrics();
        let mode = self.input.mode.as_str();
        let outcome = match exchange.state {
            ExchangeState::Stopped => "stopped",
            ExchangeState::Failed => "failed",
            _ => "done",
        };
        metrics.answers.with_label_values(&[mode, outcome]).inc();
        metrics
            .answer_seconds
            .with_label_values(&[mode])
            .observe(self.began.elapsed().as_secs_f64());
        if let Some(usage) = &exchange.usage {
            let tokens = &metrics.model_tokens;
            tokens
                .with_label_values(&["prompt"])
                .inc_by(usage.prompt_tokens);
            tokens
                .with_label_values(&["completion"])
                .inc_by(usage.completion_tokens);
        }
    }

    /// Tells other instances this browser's stored state changed (with `CITED_REDIS_URL`).
    async fn browser_changed(&self) {
        if !self.session.kept {
            return;
        }
        if let Some(version) = self
            .state
            .shared
            .browser_changed(&self.session.id.to_string())
            .await
        {
            self.session.made_version(version);
        }
    }
}

impl Turn {
    /// After a conversation's first answer, a short title written by the model replaces
    /// the question as its title, in the background (`CITED_TITLES=model`, a model
    /// configured). Any failure keeps the question.
    fn name_conversation(&self, conversation: String, exchange: &Exchange) {
        if self.state.config.titles != Titles::Model
            || self.llm.kind() != ModelKind::Remote
            || exchange.answer.trim().is_empty()
        {
            return;
        }
        let llm = Arc::clone(&self.llm);
        let store = Arc::clone(&self.state.store);
        let owner = self.session.owner();
        let asked = crate::ssr::store::title_from(&exchange.question);
        let request = ChatRequest {
            deadline: Some(TITLE_DEADLINE),
            ..ChatRequest::bounded(
                prompts::title_messages(&exchange.question, &exchange.answer),
                CallKind::Title,
                &self.state.config.limits,
            )
        };
        tokio::spawn(async move {
            let written = tokio::time::timeout(
                TITLE_DEADLINE,
                stream_reply(llm.as_ref(), request, &mut Collect { meter: None }),
            )
            .await;
            let Ok(Ok(Reply {
                text, error: None, ..
            })) = written
            else {
                tracing::info!("no title from the model; the question stays the title");
                return;
            };
            let title = clean_title(&text);
            if title.is_empty() {
                return;
            }
            if let Err(error) = store.rename_if(&owner, &conversation, &asked, &title).await {
                tracing::warn!(%error, "cannot save the conversation's title");
            }
        });
    }
}

/// A web search narrowed as the user asked: the focus's categories or engines (unless the
/// search names its own), the period (unless it has its own) and the site (`site:`
/// appended unless the query has one).
pub fn narrowed(
    focus: &crate::ssr::config::FocusSearch,
    narrowing: &crate::model::Narrowing,
    query: &str,
    options: &SearchOptions,
) -> (String, SearchOptions) {
    let mut options = options.clone();
    if options.categories.is_empty() && options.engines.is_empty() {
        options.categories = focus.categories.clone();
        options.engines = focus.engines.clone();
    }
    if options.time_range.is_none() {
        options.time_range = narrowing.period.map(Into::into);
    }
    let query = match &narrowing.site {
        Some(site) if !query.contains("site:") => format!("{query} site:{site}"),
        _ => query.to_string(),
    };
    (query, options)
}

/// The most pictures in the strip above an answer.
const MAX_IMAGES: usize = 6;
/// How long finding and fetching them may hold the answer up.
const IMAGES_DEADLINE: Duration = Duration::from_secs(4);

impl Turn {
    /// Pictures for the strip: SearXNG's images category for `query`, narrowed like the
    /// web searches. None from the knowledge base, with `CITED_IMAGES=off`, or when the
    /// search fails (the answer does not depend on them).
    pub async fn find_images(&self, provider: &dyn SearchProvider, query: &str) -> Vec<Image> {
        if !self.state.media.images || provider.kind() != crate::ssr::search::ProviderKind::Web {
            return Vec::new();
        }
        let options = SearchOptions {
            categories: vec!["images".to_string()],
            max_results: Some(4 * MAX_IMAGES),
            ..SearchOptions::default()
        };
        let found = async {
            let Ok((Ok(results), _)) = self.search(provider, query, &options).await else {
                return Vec::new();
            };
            let mut candidates: Vec<Source> = Vec::new();
            for source in results.sources {
                if source.image.is_some() && candidates.iter().all(|c| c.url != source.url) {
                    candidates.push(source);
                }
            }
            candidates.truncate(MAX_IMAGES + MAX_IMAGES / 2);
            // Fetched now (and kept), so the strip shows only pictures that load, at once.
            let media = &self.state.media;
            let loaded = futures_util::future::join_all(candidates.iter().map(|source| async {
                let src = source.image.as_deref().unwrap_or_default();
                media
                    .get(crate::ssr::media::Kind::Image, src)
                    .await
                    .is_some()
            }))
            .await;
            let mut images: Vec<Image> = Vec::new();
            for (source, loaded) in candidates.into_iter().zip(loaded) {
                let path = match (&source.image, loaded) {
                    (Some(src), true) => media.image_path(&self.state.store, src).await,
                    _ => None,
                };
                if let Some(thumbnail) = path {
                    images.push(Image {
                        page: source.url,
                        title: source.title,
                        domain: source.domain,
                        thumbnail,
                    });
                }
                if images.len() == MAX_IMAGES {
                    break;
                }
            }
            images
        };
        tokio::time::timeout(IMAGES_DEADLINE, found)
            .await
            .unwrap_or_default()
    }

    /// Shows the strip's pictures (none: nothing is sent).
    pub async fn images(&mut self, images: Vec<Image>) -> Result<(), Halted> {
        if images.is_empty() {
            return Ok(());
        }
        self.exchange.images.clone_from(&images);
        self.send(AnswerEvent::Images { images }).await
    }
}

/// How long a title may take.
const TITLE_DEADLINE: Duration = Duration::from_secs(30);

/// How long the model may take to write the follow-up questions.
const RELATED_DEADLINE: Duration = Duration::from_secs(15);

impl Turn {
    /// The finished answer's follow-up questions, in the question's language: the model's
    /// (`CITED_RELATED=model`), filled up from the sources' headings. None for a stopped or
    /// empty answer, or one nobody comes back to (an anonymous API call, `cited eval`).
    /// Also says whether the model was asked.
    async fn related(&self, exchange: &Exchange) -> (Vec<String>, bool) {
        use crate::ssr::config::Related;
        let source = self.state.config.related;
        if source == Related::Off
            || !self.session.kept
            || exchange.stopped
            || exchange.answer.trim().is_empty()
        {
            return (Vec::new(), false);
        }
        let mut questions = Vec::new();
        let asked = source == Related::Model && self.llm.kind() == ModelKind::Remote;
        if asked {
            let request = ChatRequest {
                deadline: Some(RELATED_DEADLINE),
                ..ChatRequest::bounded(
                    prompts::related_messages(&exchange.question, &exchange.answer),
                    CallKind::Title,
                    &self.state.config.limits,
                )
            };
            let _ = self.status(Some(crate::model::Status::Relating)).await;
            let written = tokio::time::timeout(
                RELATED_DEADLINE,
                stream_reply(self.llm.as_ref(), request, &mut Collect { meter: None }),
            )
            .await;
            match written {
                Ok(Ok(Reply {
                    text, error: None, ..
                })) => questions = related::from_reply(&text, &exchange.question),
                _ => tracing::info!(
                    "no follow-up questions from the model; the sources suggest them"
                ),
            }
        }
        let lang = Lang::of_text(&exchange.question);
        let more = related::from_sources(
            &exchange.question,
            &exchange.sources,
            &exchange.cited,
            lang,
            &questions,
        );
        questions.extend(more);
        questions.truncate(related::COUNT);
        (questions, asked)
    }
}

/// The notice for a cut reply of `kind` (whose `max_tokens` variable it names).
pub fn cut_text(
    t: &crate::i18n::Texts,
    cut: Cut,
    max_tokens: Option<u32>,
    kind: CallKind,
) -> String {
    match cut {
        Cut::Deadline(after) => t
            .cut_deadline
            .replace("{secs}", &after.as_secs().to_string()),
        Cut::Repetition => t.cut_repetition.to_string(),
        Cut::Length => t
            .cut_length
            .replace(
                "{tokens}",
                &max_tokens.map_or("?".to_string(), |n| n.to_string()),
            )
            .replace("{var}", kind.variable()),
    }
}

/// A model's title reply as a title: its first non-empty line, without citation markers,
/// quotes, Markdown emphasis or a final full stop.
pub fn clean_title(reply: &str) -> String {
    let line = reply
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("");
    let line = crate::citation::markers::strip(line);
    let decoration = |c: char| {
        matches!(
            c,
            '"' | '\''
                | '“'
                | '”'
                | '「'
                | '」'
                | '《'
                | '》'
                | '*'
                | '_'
                | '`'
                | '#'
                | ' '
                | '。'
                | '.'
                | '！'
                | '!'
        )
    };
    let mut trimmed = line.as_str();
    loop {
        let next = trimmed.trim().trim_matches(decoration);
        if next == trimmed {
            break;
        }
        trimmed = next;
    }
    crate::ssr::store::title_from(trimmed)
}

/// A reply's text streamed into the answer.
struct AnswerSink<'a> {
    turn: &'a mut Turn,
    clear_status: bool,
    /// Answer text has arrived (progress is shown only before).
    texted: bool,
}

impl ReplySink for AnswerSink<'_> {
    fn halted(&self) -> impl Future<Output = ()> + Send {
        self.turn.halted()
    }

    async fn text(&mut self, piece: &str) -> Result<(), Halted> {
        if std::mem::take(&mut self.clear_status) {
            self.turn.status(None).await?;
        }
        self.texted = true;
        self.turn.meter.piece();
        self.turn.token(piece.to_string()).await
    }

    async fn reasoning(&mut self, piece: &str) -> Result<(), Halted> {
        self.turn.meter.piece();
        self.turn.exchange.reasoning.push_str(piece);
        let text = piece.to_string();
        self.turn.send(AnswerEvent::Reasoning { text }).await
    }

    async fn tick(&mut self, progress: Progress) -> Result<(), Halted> {
        // Only while the status line shows (no answer text yet).
        if !self.texted {
            self.turn
                .progress(progress.elapsed, progress.pieces)
                .await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_cleaned() {
        assert_eq!(clean_title("**“Tokio 入门” [1]。**\nmore"), "Tokio 入门");
        assert_eq!(
            clean_title("\n\n# Rust async runtimes.\n"),
            "Rust async runtimes"
        );
        assert_eq!(clean_title("   "), "");
        assert_eq!(clean_title(&"长".repeat(200)).chars().count(), 81);
    }
}
