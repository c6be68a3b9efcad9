//! The end of an answer: stopped or done, its sources and the numbers it cites, `Done`;
//! the exchange saved as written; then, side by side, its citations checked against their
//! pages and its follow-up questions written; then the exchange saved again, the metrics
//! counted and, for a new conversation, a title asked of the model in the background.

use std::sync::Arc;
use std::time::Duration;

use super::Turn;
use crate::citation::{render, used_numbers, SourceMap};
use crate::model::{AnswerEvent, Exchange, ExchangeState, Lang, Level};
use crate::ssr::config::Titles;
use crate::ssr::llm::reply::{stream_reply, Collect, Halted, Reply};
use crate::ssr::llm::{CallKind, ChatRequest, ModelKind};
use crate::ssr::pipeline::{related, Numbering};
use crate::ssr::prompts;

/// How long a title may take.
const TITLE_DEADLINE: Duration = Duration::from_secs(30);

/// How long the model may take to write the follow-up questions.
const RELATED_DEADLINE: Duration = Duration::from_secs(15);

/// How long an ended answer waits for a database that went away (a restart, a failover)
/// before it is given up as not kept.
const SAVE_PATIENCE: Duration = Duration::from_secs(20);

/// How long the save of the answer as written may hold up its checks.
const EARLY_SAVE_PATIENCE: Duration = Duration::from_secs(1);

impl Turn {
    /// Ends the answer: stopped or done, the sources it may cite, the numbers it cites,
    /// `Done`, and the exchange saved to the session (unless a `/reset` came since).
    pub async fn finish(mut self, outcome: Result<(), Halted>) -> Exchange {
        let answered = self.conclude(outcome).await;
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
        // A new conversation is named meanwhile (the answer is known now).
        let failed = exchange.notices.iter().any(|n| n.level == Level::Error);
        let naming = match &self.stored {
            Some((conversation, 0)) if answered && !exchange.stopped && !failed => {
                self.name_conversation(conversation.clone(), &exchange)
            }
            _ => None,
        };
        let naming_began = tokio::time::Instant::now();
        // The answer as written is saved at once, so a reload while its citations are
        // checked shows it (once, without waiting for a database that is away: the save
        // below does that).
        exchange.state = settled(&exchange);
        if let Some((conversation, seq)) = &self.stored {
            let registry = self.own_registry();
            let saved = tokio::time::timeout(
                EARLY_SAVE_PATIENCE,
                self.state
                    .store
                    .finish_exchange(conversation, *seq, &exchange, Some(&registry)),
            )
            .await;
            if !matches!(saved, Ok(Ok(()))) {
                tracing::info!("the answer is saved once its citations are checked");
            }
        }
        // The answer is on screen; now, side by side, its citations are checked against
        // their pages and its follow-up questions are written.
        let (checked, (related, asked)) = tokio::join!(
            self.checked(&exchange, answered),
            self.follow_ups(&exchange)
        );
        // A status line was shown for either: it is cleared.
        if checked.is_some() || asked {
            let _ = self.status(None).await;
        }
        if let Some((checks, coverage, usage)) = checked {
            exchange.alignments = checks.alignments;
            exchange.claims = checks.claims;
            exchange.coverage = coverage;
            if usage.is_some() {
                exchange.usage = usage;
            }
        }
        exchange.related = related;
        exchange.state = settled(&exchange);
        self.keep(&mut exchange).await;
        // An open page shows the model's title if it comes soon; it is saved whenever it
        // comes (within its own deadline).
        if let Some(naming) = naming {
            let waited = tokio::time::timeout_at(naming_began + RELATED_DEADLINE, naming).await;
            if let (Ok(Ok(title)), Some((id, _))) = (waited, &self.stored) {
                let id = id.clone();
                self.send_anyway(AnswerEvent::Titled { id, title }).await;
            }
        }
        self.session
            .push_exchange(self.generation, exchange.clone());
        self.browser_changed().await;
        self.count(&exchange);
        exchange
    }

    /// Settles the answer as written: stopped or not, the sources it may cite (sent), the
    /// plan, the notes, the numbers it cites, its coverage, a warning when it cites none
    /// of the sources found, and the usage. True when there is an answer at all.
    async fn conclude(&mut self, outcome: Result<(), Halted>) -> bool {
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
        self.exchange.usage = self.usage();
        answered
    }

    /// The ended answer's citations checked against their pages (`Aligned` sent), with
    /// the coverage counting cited's own attributions and the usage counting the judge's
    /// tokens; `None` when checks are off or there is nothing to check.
    async fn checked(
        &self,
        exchange: &Exchange,
        answered: bool,
    ) -> Option<(
        super::checking::Checks,
        Option<crate::model::Coverage>,
        Option<crate::model::TokenUsage>,
    )> {
        let checking = !self.state.config.align_deadline.is_zero()
            && self.state.config.check != crate::ssr::config::Check::Off;
        if !checking || !answered || exchange.stopped || exchange.sources.is_empty() {
            return None;
        }
        let _ = self.status(Some(crate::model::Status::Aligning)).await;
        let checks = self.check_citations(exchange).await;
        let share = crate::model::SupportShare::of(&checks.alignments);
        let added = checks.claims.iter().filter(|c| c.added.is_some()).count() as u32;
        tracing::info!(
            checked = share.checked,
            supported = share.supported,
            partial = share.partial,
            not_checked = share.not_checked,
            added,
            unsupported_claims = checks.claims.len() as u32 - added,
            judged = checks.judged,
            "citations checked"
        );
        // The judge's tokens join the answer's.
        let usage = checks.judged.then(|| self.usage()).flatten();
        // Claims cited attributed count as cited, and apart.
        let coverage = exchange.coverage.map(|coverage| crate::model::Coverage {
            cited: coverage.cited + added,
            added,
            ..coverage
        });
        self.send_anyway(AnswerEvent::Aligned {
            alignments: checks.alignments.clone(),
            claims: checks.claims.clone(),
            coverage: (added > 0).then_some(coverage).flatten(),
            usage: usage.clone(),
        })
        .await;
        Some((checks, coverage, usage))
    }

    /// The follow-up questions (`Related` sent when there are any), and whether a model
    /// was asked for them.
    async fn follow_ups(&self, exchange: &Exchange) -> (Vec<String>, bool) {
        let (questions, asked) = self.related(exchange).await;
        if !questions.is_empty() {
            self.send_anyway(AnswerEvent::Related {
                questions: questions.clone(),
            })
            .await;
        }
        (questions, asked)
    }

    /// Saves the ended exchange to its conversation, if it has one; when the database
    /// never came back, the answer says it was not kept.
    async fn keep(&self, exchange: &mut Exchange) {
        if let Some((conversation, seq)) = self.stored.clone() {
            if !self.save(&conversation, seq, exchange).await {
                let notice = crate::model::Notice {
                    level: Level::Warning,
                    text: self.texts().not_saved.to_string(),
                };
                exchange.notices.push(notice.clone());
                self.send_anyway(AnswerEvent::Notice { notice }).await;
            }
        }
    }

    /// Writes the ended exchange, trying again while the database is away, for up to
    /// [`SAVE_PATIENCE`]; false when it never came back (or the server is stopping).
    async fn save(&self, conversation: &str, seq: u32, exchange: &Exchange) -> bool {
        let registry = self.own_registry();
        let give_up = tokio::time::Instant::now() + SAVE_PATIENCE;
        let mut wait = Duration::from_millis(250);
        loop {
            let saved = self
                .state
                .store
                .finish_exchange(conversation, seq, exchange, Some(&registry))
                .await;
            match saved {
                Ok(()) => return true,
                Err(error)
                    if tokio::time::Instant::now() + wait < give_up
                        && !self.state.shutdown.is_cancelled() =>
                {
                    tracing::warn!(%error, "cannot save the answer yet; trying again");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(4));
                }
                Err(error) => {
                    tracing::error!(%error, "cannot save the answer");
                    return false;
                }
            }
        }
    }

    /// What the answer's model calls used so far, with their cost when prices are set;
    /// `None` when no model was called.
    fn usage(&self) -> Option<crate::model::TokenUsage> {
        let usage = self.meter.usage();
        (usage.calls > 0).then(|| {
            let limits = &self.state.config.limits;
            let cost = limits.cost(usage.prompt_tokens, usage.completion_tokens);
            crate::model::TokenUsage {
                cost_micros: cost.map(|cost| (cost * 1e6).round() as u64),
                ..usage
            }
        })
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
    pub(super) async fn browser_changed(&self) {
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

    /// After a conversation's first answer, a short title written by the model replaces
    /// the question as its title, in the background (`CITED_TITLES=model`, a model
    /// configured). Any failure keeps the question. The title, once saved, comes through
    /// the returned channel.
    fn name_conversation(
        &self,
        conversation: String,
        exchange: &Exchange,
    ) -> Option<tokio::sync::oneshot::Receiver<String>> {
        if self.state.config.titles != Titles::Model
            || self.llm.kind() != ModelKind::Remote
            || exchange.answer.trim().is_empty()
        {
            return None;
        }
        let (named, naming) = tokio::sync::oneshot::channel();
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
            match store.rename_if(&owner, &conversation, &asked, &title).await {
                Ok(true) => {
                    let _ = named.send(title);
                }
                Ok(false) => {}
                Err(error) => tracing::warn!(%error, "cannot save the conversation's title"),
            }
        });
        Some(naming)
    }

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

/// How an ended exchange ended: stopped, failed (an error notice) or done.
fn settled(exchange: &Exchange) -> ExchangeState {
    if exchange.stopped {
        ExchangeState::Stopped
    } else if exchange.notices.iter().any(|n| n.level == Level::Error) {
        ExchangeState::Failed
    } else {
        ExchangeState::Done
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
