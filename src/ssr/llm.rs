//! The language model: one `ChatModel` interface, two implementations.
//!
//! - [`openai::OpenAiClient`]: any OpenAI-compatible chat-completions server, streamed over
//!   SSE, with tool calls, retries and timeouts.
//! - [`extractive::Extractive`]: the offline answerer used when no model is configured. It
//!   composes an answer from the best-matching sentences of the sources (BM25), citing them.
//!
//! The pipelines only see [`ChatEvent`]s and [`LlmError`]s, whichever is behind the trait.

pub mod budget;
pub mod deltas;
pub mod extractive;
pub mod limited;
pub mod models;
pub mod openai;
pub mod repetition;
pub mod reply;
pub mod routed;

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::Stream;
use serde_json::{json, Value};

use crate::citation::CitationEntry;
pub use crate::ssr::config::{CallKind, ModelLimits};

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    System(String),
    User(String),
    Assistant {
        content: String,
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        call_id: String,
        content: String,
    },
}

impl Message {
    pub fn assistant(content: impl Into<String>) -> Message {
        Message::Assistant {
            content: content.into(),
            tool_calls: Vec::new(),
        }
    }

    /// The message in OpenAI's wire format.
    pub fn to_json(&self) -> Value {
        match self {
            Message::System(content) => json!({ "role": "system", "content": content }),
            Message::User(content) => json!({ "role": "user", "content": content }),
            Message::Assistant {
                content,
                tool_calls,
            } if tool_calls.is_empty() => {
                json!({ "role": "assistant", "content": content })
            }
            Message::Assistant {
                content,
                tool_calls,
            } => json!({
                "role": "assistant",
                "content": if content.is_empty() { Value::Null } else { Value::String(content.clone()) },
                "tool_calls": tool_calls.iter().map(|call| json!({
                    "id": call.id,
                    "type": "function",
                    "function": { "name": call.name, "arguments": call.arguments },
                })).collect::<Vec<_>>(),
            }),
            Message::Tool { call_id, content } => {
                json!({ "role": "tool", "tool_call_id": call_id, "content": content })
            }
        }
    }

    /// Characters this message costs in the context budget.
    pub fn chars(&self) -> usize {
        match self {
            Message::System(text) | Message::User(text) => text.chars().count(),
            Message::Assistant {
                content,
                tool_calls,
            } => {
                content.chars().count()
                    + tool_calls
                        .iter()
                        .map(|call| call.name.chars().count() + call.arguments.chars().count())
                        .sum::<usize>()
            }
            Message::Tool { content, .. } => content.chars().count(),
        }
    }
}

/// A function the model may call, described by a JSON schema.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

impl ToolSpec {
    pub fn to_json(&self) -> Value {
        json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            }
        })
    }
}

/// A complete tool call. `arguments` is the JSON text exactly as the model wrote it; models
/// often write invalid JSON, so it is parsed only when used ([`ToolCall::parsed_arguments`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub index: u32,
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl ToolCall {
    pub fn parsed_arguments(&self) -> Result<Value, LlmError> {
        let text = if self.arguments.trim().is_empty() {
            "{}"
        } else {
            &self.arguments
        };
        serde_json::from_str(text).map_err(|source| LlmError::ToolArgs {
            index: self.index,
            name: self.name.clone(),
            source,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    Length,
    ToolCalls,
    ContentFilter,
    Other(String),
}

impl FinishReason {
    pub fn parse(raw: &str) -> FinishReason {
        match raw {
            "stop" | "eos" | "end_turn" => FinishReason::Stop,
            "length" | "max_tokens" => FinishReason::Length,
            "tool_calls" | "function_call" => FinishReason::ToolCalls,
            "content_filter" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_string()),
        }
    }
}

/// What a streamed answer is made of.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatEvent {
    /// A piece of answer text, as soon as it arrives.
    Text(String),
    /// A piece of a reasoning model's thinking (`reasoning_content`, or a `<think>` block):
    /// never answer text, never parsed for citations.
    Reasoning(String),
    /// The model asks for tools; every call is complete.
    ToolCalls(Vec<ToolCall>),
    /// The end of this response.
    Done {
        finish_reason: Option<FinishReason>,
        usage: Option<Usage>,
    },
}

/// The question and the numbered sources the answer may cite, in structured form (they are
/// also in the prompt text). The offline answerer works from this.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AnswerContext {
    pub question: String,
    pub sources: Vec<Arc<CitationEntry>>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub context: AnswerContext,
    /// The most tokens the reply may have (`max_tokens`).
    pub max_tokens: Option<u32>,
    /// The reply must be JSON of this shape, where the server can enforce it.
    pub schema: Option<Schema>,
    /// The whole call, first byte to last, may take no longer ([`reply::stream_reply`]
    /// cuts it there and keeps what came).
    pub deadline: Option<Duration>,
    /// What the call is for: [`routed::Routed`] sends all but answers to the fast model.
    pub kind: CallKind,
}

impl ChatRequest {
    /// A request of `kind`, bounded by `limits`.
    pub fn bounded(messages: Vec<Message>, kind: CallKind, limits: &ModelLimits) -> ChatRequest {
        ChatRequest {
            messages,
            kind,
            max_tokens: Some(limits.max_tokens(kind)),
            deadline: Some(limits.call_deadline),
            ..ChatRequest::default()
        }
    }
}

/// A JSON schema the reply should follow (`response_format: json_schema`).
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    pub name: &'static str,
    pub schema: Value,
}

/// Whether the server enforces `response_format: json_schema`, as far as cited knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SchemaSupport {
    /// Not asked yet.
    Unknown,
    Supported,
    /// The server rejected it (or `CITED_LLM_STRUCTURED=off`): tolerant parsing only.
    Unsupported,
}

pub type ChatStream = Pin<Box<dyn Stream<Item = Result<ChatEvent, LlmError>> + Send>>;

/// Which kind of model answers; the UI labels offline answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    Remote,
    /// The offline extractive answerer: "离线抽取模式（未配置语言模型）".
    Extractive,
}

#[async_trait]
pub trait ChatModel: Send + Sync {
    fn kind(&self) -> ModelKind;

    /// What this model's server does with a [`Schema`].
    fn schema_support(&self) -> SchemaSupport {
        SchemaSupport::Unsupported
    }

    /// Starts a streamed completion. Dropping the stream cancels the request.
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError>;
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("cannot connect to the model server at {url}")]
    Unreachable {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("the model server at {url} did not answer within {} s", after.as_secs())]
    Timeout { url: String, after: Duration },
    #[error("the model stream stalled for {} s", after.as_secs())]
    IdleTimeout { after: Duration },
    #[error("the model server rejected the API key ({status})")]
    Unauthorized { status: u16 },
    #[error("the model server does not know the model {model}")]
    ModelNotFound { model: String },
    #[error("the conversation is longer than the model's context window: {message}")]
    ContextTooLong { message: String },
    #[error("the model server is rate limiting requests")]
    RateLimited { retry_after: Option<Duration> },
    #[error("the model server answered {status}: {message}")]
    Server { status: u16, message: String },
    #[error("the model server rejected the request ({status}): {message}")]
    BadRequest { status: u16, message: String },
    #[error("the model stream ended before [DONE]")]
    Truncated,
    #[error("the model sent a chunk that is not valid JSON")]
    Malformed {
        #[source]
        source: serde_json::Error,
    },
    #[error("tool call {index} ({name}) has invalid JSON arguments")]
    ToolArgs {
        index: u32,
        name: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("request to the model server failed")]
    Transport {
        #[source]
        source: reqwest::Error,
    },
}

impl LlmError {}
