//! One answer being written: the [`Turn`]. It owns the exchange, the channel its events
//! go to, the token that stops it and the session generation it started in. Its fields are
//! private: the modes change the answer only through its named operations, so the exchange
//! it saves is what its events said.
//!
//! - here: beginning (the question stored), the answer's events, failures;
//! - [`admission`]: waiting for the answer's turn under the server's limits;
//! - [`sources`]: searching, the image strip, citation numbers, the conversation so far;
//! - [`writing`]: the model's reply streamed into the answer, and retracting text;
//! - [`finish`]: the end: `Done`, the citation check, follow-ups, saving, metrics, titles.

mod admission;
mod checking;
mod finish;
mod sources;
mod writing;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::search::Searcher;
use super::{Numbering, TurnInput};
use crate::citation::Registry;
use crate::model::{
    AnswerEvent, CitationEntry, Exchange, ExchangeState, Lang, Level, Mode, Narrowing, Notice,
    ResearchPlan, Status, Step,
};
use crate::ssr::llm::reply::{Halted, Meter, TICK};
use crate::ssr::llm::{ChatModel, LlmError, ModelKind};
use crate::ssr::messages;
use crate::ssr::search::SearchError;
use crate::ssr::session::{Session, SessionId};
use crate::ssr::state::AppState;

/// One answer being written.
pub struct Turn {
    state: AppState,
    /// The model this answer uses: the picked one, else the default (`state.llm`).
    llm: Arc<dyn ChatModel>,
    session: Arc<Session>,
    input: TurnInput,
    exchange: Exchange,
    numbering: Numbering,
    /// Registry numbers this answer allocated (session numbering).
    retrieved: Vec<u32>,
    events: mpsc::Sender<AnswerEvent>,
    cancel: CancellationToken,
    /// The session's generation when the answer began (a `/reset` changes it).
    generation: u64,
    /// How this answer searches, picked at its first search.
    searcher: Option<Searcher>,
    /// Where the exchange is stored: its conversation and position, when it could be.
    stored: Option<(String, u32)>,
    /// The conversation's registry as this answer last saw it: what its sources and the
    /// saved registry come from once a `/reset` or another conversation replaced the
    /// session's.
    snapshot: Registry,
    /// What this answer's model calls streamed and used, the thinker's included.
    meter: Arc<Meter>,
    /// The answer reached `CITED_MAX_ANSWER_KB`: later text is dropped.
    capped: bool,
    /// Tells other instances the stored exchange is still being written.
    _alive: Option<crate::ssr::shared::Alive>,
    /// When the question came, and whether its first word went out (for metrics).
    began: Instant,
    first_word: bool,
    /// Whether the image strip was searched for (once per answer).
    pictures_sought: bool,
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
            searcher: None,
            stored: None,
            snapshot: Registry::new(),
            meter: Arc::new(Meter::default()),
            capped: false,
            _alive: None,
            began: Instant::now(),
            first_word: false,
            pictures_sought: false,
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
        let mut title = None;
        let conversation = match self.session.conversation_id() {
            Some(id) => Ok(id),
            None => {
                let id = SessionId::random().to_string();
                let asked = crate::ssr::store::title_from(&self.input.question);
                match store
                    .create_conversation(&owner, &id, &asked, self.input.mode)
                    .await
                {
                    Ok(()) => {
                        title = Some(asked.clone());
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
                // The history shows the conversation at its top from now on (a continued one
                // under its own title).
                let title = match title {
                    Some(title) => Some(title),
                    None => store.title(&owner, &stored.0).await.ok().flatten(),
                };
                if let Some(title) = title {
                    self.send_anyway(AnswerEvent::Conversation {
                        id: stored.0.clone(),
                        title,
                        at: crate::ssr::store::now_millis(),
                    })
                    .await;
                }
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

    /// The server's state: its configuration, store and limits.
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// What the person asked, and how.
    pub fn input(&self) -> &TurnInput {
        &self.input
    }

    /// The model this answer is written with.
    pub fn llm(&self) -> &Arc<dyn ChatModel> {
        &self.llm
    }

    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// What this answer's model calls streamed and used.
    pub fn meter(&self) -> &Arc<Meter> {
        &self.meter
    }

    pub fn numbering(&self) -> Numbering {
        self.numbering
    }

    /// Registry numbers this answer allocated.
    pub fn retrieved(&self) -> &[u32] {
        &self.retrieved
    }

    /// The answer's text so far.
    pub fn answer(&self) -> &str {
        &self.exchange.answer
    }

    /// What the user narrowed the answer's web searches to.
    pub fn narrowing(&self) -> &Narrowing {
        &self.exchange.narrowing
    }

    /// The answer never searched and cites nothing: said under it, with a button to
    /// search and answer again.
    pub fn mark_unsearched(&mut self) {
        self.exchange.unsearched = true;
    }

    /// Research's live plan (created empty at first use).
    pub fn plan_mut(&mut self) -> &mut ResearchPlan {
        self.exchange
            .research
            .get_or_insert_with(ResearchPlan::default)
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
        let mut ticker = tokio::time::interval_at(first, TICK);
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

    /// Text for the people reading the answer: no internal addresses when they sign in.
    pub fn for_readers(&self, text: &str) -> String {
        crate::ssr::config::Redactor::of(&self.state.config).apply(text, self.lang())
    }

    /// A notice beside the answer, kept with it.
    pub async fn notice(&mut self, level: Level, text: impl Into<String>) -> Result<(), Halted> {
        let notice = Notice {
            level,
            text: self.for_readers(&text.into()),
        };
        self.exchange.notices.push(notice.clone());
        self.send(AnswerEvent::Notice { notice }).await
    }

    /// A notice beside the answer unless the same one is there already (an Agent's
    /// searches failing alike).
    pub async fn notice_once(&mut self, level: Level, text: String) -> Result<(), Halted> {
        let known = self
            .exchange
            .notices
            .iter()
            .any(|notice| notice.level == level && notice.text == text);
        if known {
            return Ok(());
        }
        self.notice(level, text).await
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

    /// The answer failed: an error notice and the `Failed` event.
    pub async fn fail(&mut self, message: String) -> Result<(), Halted> {
        let message = self.for_readers(&message);
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
        let message = self.for_readers(&messages::search_error(self.lang(), error));
        self.notice(Level::Warning, message.clone()).await?;
        self.status(Some(Status::SearchFailed { message })).await
    }
}
