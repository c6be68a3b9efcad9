//! Reading a model's reply as it streams: [`stream_reply`] is the one loop every call goes
//! through (the answer text of every mode, the Research thinker's JSON, titles and
//! follow-up questions). A [`ReplySink`] says where the text goes and when to stop reading;
//! a [`Meter`] adds up what one answer's calls streamed and used.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use futures_util::StreamExt;

use crate::model::TokenUsage;
use crate::ssr::llm::repetition::RepetitionGuard;
use crate::ssr::llm::{
    CallKind, ChatEvent, ChatModel, ChatRequest, FinishReason, LlmError, ToolCall, Usage,
};

/// The answer stopped early: the stop button, the browser went away, or a `/reset` began
/// a new conversation. Not a failure; what was written so far is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the answer was stopped")]
pub struct Halted;

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

    pub fn take_notes(&self) -> Vec<String> {
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
    let mut ticker = tokio::time::interval_at(started + TICK, TICK);
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
pub const TICK: Duration = Duration::from_secs(1);
/// A request without a deadline (tests, scripted fakes) still ends some day.
const NO_DEADLINE: Duration = Duration::from_secs(24 * 3600);

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
