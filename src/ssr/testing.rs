//! The one scripted model of the tests and the benchmarks (`--features testing`): a
//! closure from each request to a [`Reply`] (text in chunks, tool calls, a finish reason and
//! usage, a pace, a wait first, a stream that hangs or fails, or a refused request), every
//! request kept for assertions.
//!
//! ```ignore
//! let model = Model::new(|request| match request.kind {
//!     CallKind::Check => Reply::text("[]").after(Duration::from_millis(50)),
//!     _ => Reply::chunks(["Tokio ", "[1]."]).paced(Duration::from_millis(10)),
//! });
//! ```

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt;

use crate::ssr::config::CallKind;
use crate::ssr::llm::{
    ChatEvent, ChatModel, ChatRequest, ChatStream, FinishReason, LlmError, Message, ModelKind,
    ToolCall, Usage,
};

/// What the stream does at one step, after its pause.
enum Beat {
    Event(ChatEvent),
    Fail(LlmError),
    Hang,
}

/// The model's reply to one request.
pub struct Reply {
    /// `Err`: the request itself is refused (`stream` fails).
    beats: Result<Vec<(Duration, Beat)>, LlmError>,
}

impl Reply {
    /// Exactly these events, at once.
    pub fn events(events: impl IntoIterator<Item = ChatEvent>) -> Reply {
        Reply {
            beats: Ok(events
                .into_iter()
                .map(|event| (Duration::ZERO, Beat::Event(event)))
                .collect()),
        }
    }

    /// The text in these chunks, then the end of the reply (no finish reason, no usage).
    pub fn chunks<S: Into<String>>(chunks: impl IntoIterator<Item = S>) -> Reply {
        Reply::events(
            chunks
                .into_iter()
                .map(|chunk| ChatEvent::Text(chunk.into()))
                .chain([ChatEvent::Done {
                    finish_reason: None,
                    usage: None,
                }]),
        )
    }

    /// One chunk of text, then the end.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply::chunks([text.into()])
    }

    /// `text` (when not empty), then these `web_search` calls, finished for tool calls.
    pub fn searches(text: &str, queries: &[String]) -> Reply {
        let calls = queries
            .iter()
            .enumerate()
            .map(|(index, query)| ToolCall {
                index: index as u32,
                id: format!("call_{index}_{query}"),
                name: "web_search".into(),
                arguments: serde_json::json!({ "query": query }).to_string(),
            })
            .collect();
        let text = (!text.is_empty()).then(|| ChatEvent::Text(text.to_string()));
        Reply::events(text.into_iter().chain([
            ChatEvent::ToolCalls(calls),
            ChatEvent::Done {
                finish_reason: Some(FinishReason::ToolCalls),
                usage: None,
            },
        ]))
    }

    /// The request is refused with `error`.
    pub fn refuse(error: LlmError) -> Reply {
        Reply { beats: Err(error) }
    }

    fn map_beats(mut self, change: impl FnOnce(&mut Vec<(Duration, Beat)>)) -> Reply {
        if let Ok(beats) = &mut self.beats {
            change(beats);
        }
        self
    }

    /// Each step waits `pace` first.
    pub fn paced(self, pace: Duration) -> Reply {
        self.map_beats(|beats| beats.iter_mut().for_each(|(pause, _)| *pause += pace))
    }

    /// The first step waits `delay` more.
    pub fn after(self, delay: Duration) -> Reply {
        self.map_beats(|beats| {
            if let Some((pause, _)) = beats.first_mut() {
                *pause += delay;
            }
        })
    }

    /// `event` after `pause`, at the end.
    pub fn then(self, pause: Duration, event: ChatEvent) -> Reply {
        self.map_beats(|beats| beats.push((pause, Beat::Event(event))))
    }

    /// The end of the reply says `reason` and `usage`.
    pub fn finish(self, reason: Option<FinishReason>, usage: Option<Usage>) -> Reply {
        self.map_beats(|beats| {
            for (_, beat) in beats.iter_mut() {
                if let Beat::Event(ChatEvent::Done {
                    finish_reason,
                    usage: used,
                }) = beat
                {
                    finish_reason.clone_from(&reason);
                    used.clone_from(&usage);
                }
            }
        })
    }

    /// No end: the stream just stops after its last chunk.
    pub fn open(self) -> Reply {
        self.map_beats(|beats| {
            beats.retain(|(_, beat)| !matches!(beat, Beat::Event(ChatEvent::Done { .. })))
        })
    }

    /// After what came, the stream fails with `error` (after `pause`).
    pub fn fail(self, pause: Duration, error: LlmError) -> Reply {
        self.open()
            .map_beats(|beats| beats.push((pause, Beat::Fail(error))))
    }

    /// After what came, the stream never says another word (after `pause`).
    pub fn hang(self, pause: Duration) -> Reply {
        self.open()
            .map_beats(|beats| beats.push((pause, Beat::Hang)))
    }
}

type Script = Box<dyn Fn(&ChatRequest) -> Reply + Send + Sync>;

/// The scripted model.
pub struct Model {
    script: Script,
    requests: Mutex<Vec<ChatRequest>>,
}

impl Model {
    pub fn new(script: impl Fn(&ChatRequest) -> Reply + Send + Sync + 'static) -> Arc<Model> {
        Arc::new(Model {
            script: Box::new(script),
            requests: Mutex::new(Vec::new()),
        })
    }

    /// Answers each request with the chunks `chunks` gives for it.
    pub fn chunks(
        chunks: impl Fn(&ChatRequest) -> Vec<String> + Send + Sync + 'static,
    ) -> Arc<Model> {
        Model::new(move |request| Reply::chunks(chunks(request)))
    }

    /// Always answers `text`.
    pub fn fixed(text: &'static str) -> Arc<Model> {
        Model::new(move |_| Reply::text(text))
    }

    /// Writes a word every 10 ms, for far longer than any test waits.
    pub fn endless() -> Arc<Model> {
        Model::new(|_| {
            Reply::chunks((0..100_000).map(|i| format!("w{i} "))).paced(Duration::from_millis(10))
        })
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub fn last_request(&self) -> ChatRequest {
        self.requests().pop().expect("the model was asked")
    }

    /// How many requests of `kind` it had.
    pub fn asked(&self, kind: CallKind) -> usize {
        self.requests()
            .iter()
            .filter(|request| request.kind == kind)
            .count()
    }
}

/// The first user message of a request (a step's input).
pub fn first_user(request: &ChatRequest) -> String {
    request
        .messages
        .iter()
        .find_map(|m| match m {
            Message::User(text) => Some(text.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The last user message of a request (the question).
pub fn last_user(request: &ChatRequest) -> String {
    request
        .messages
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::User(text) => Some(text.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// A step of a Research answer, told by the JSON shape its system prompt asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResearchStep {
    Plan,
    Reflect,
    Evidence,
    Verify,
    Summary,
    /// The final answer (a request with no JSON shape).
    Format,
}

/// Which Research step `request` is; `None` when it has no system prompt.
pub fn research_step(request: &ChatRequest) -> Option<ResearchStep> {
    let Some(Message::System(system)) = request.messages.first() else {
        return None;
    };
    let asks = |key: &str| system.contains(&format!("\"{key}\""));
    Some(if asks("sub_questions") {
        ResearchStep::Plan
    } else if asks("multi_anchor_hits") {
        ResearchStep::Reflect
    } else if asks("statement") {
        ResearchStep::Evidence
    } else if asks("sufficient") {
        ResearchStep::Verify
    } else if asks("reasoning") {
        ResearchStep::Summary
    } else {
        ResearchStep::Format
    })
}

#[async_trait]
impl ChatModel for Model {
    fn kind(&self) -> ModelKind {
        ModelKind::Remote
    }

    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        let reply = (self.script)(&request);
        self.requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(request);
        let beats = reply.beats?;
        let stream = futures_util::stream::iter(beats).then(|(pause, beat)| async move {
            tokio::time::sleep(pause).await;
            match beat {
                Beat::Event(event) => Ok(event),
                Beat::Fail(error) => Err(error),
                Beat::Hang => std::future::pending().await,
            }
        });
        Ok(Box::pin(stream))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn collect(model: &Model, request: ChatRequest) -> Result<Vec<ChatEvent>, LlmError> {
        let mut stream = model.stream(request).await?;
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            events.push(event?);
        }
        Ok(events)
    }

    #[tokio::test(start_paused = true)]
    async fn replies_come_as_scripted() {
        let model = Model::new(|request| match request.kind {
            CallKind::Check => Reply::refuse(LlmError::BadRequest {
                status: 400,
                message: "no".into(),
            }),
            CallKind::Title => {
                Reply::text("partial").fail(Duration::from_secs(1), LlmError::Truncated)
            }
            _ => Reply::chunks(["a", "b"])
                .paced(Duration::from_secs(2))
                .finish(Some(FinishReason::Stop), None),
        });
        let started = tokio::time::Instant::now();
        let events = collect(&model, ChatRequest::default()).await.unwrap();
        assert_eq!(events.len(), 3);
        assert!(matches!(
            events[2],
            ChatEvent::Done {
                finish_reason: Some(FinishReason::Stop),
                ..
            }
        ));
        assert_eq!(started.elapsed(), Duration::from_secs(6));
        let check = ChatRequest {
            kind: CallKind::Check,
            ..ChatRequest::default()
        };
        assert!(matches!(
            collect(&model, check).await,
            Err(LlmError::BadRequest { .. })
        ));
        let title = ChatRequest {
            kind: CallKind::Title,
            ..ChatRequest::default()
        };
        assert!(matches!(
            collect(&model, title).await,
            Err(LlmError::Truncated)
        ));
        assert_eq!(model.requests().len(), 3);
        assert_eq!(model.asked(CallKind::Check), 1);
    }
}
