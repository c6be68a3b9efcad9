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
pub mod openai;

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::Stream;
use serde_json::{json, Value};

use crate::citation::CitationEntry;
use crate::i18n::Lang;

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

impl LlmError {
    /// What happened and what to do, for the person using cited.
    pub fn user_message(&self, lang: Lang) -> String {
        let zh = lang == Lang::ZhCn;
        match self {
            LlmError::Unreachable { url, .. } => {
                if zh {
                    format!("语言模型不可用：无法连接 {url}。请确认模型服务正在运行（Ollama：`ollama serve`），并检查 CITED_LLM_BASE_URL。")
                } else {
                    format!("The language model is unavailable: cannot connect to {url}. Is the model server running (Ollama: `ollama serve`)? Check CITED_LLM_BASE_URL.")
                }
            }
            LlmError::Timeout { url, after } => {
                if zh {
                    format!(
                        "语言模型超时：{url} 在 {} 秒内没有回答。请稍后再试。",
                        after.as_secs()
                    )
                } else {
                    format!("The language model timed out: {url} did not answer within {} s. Try again later.", after.as_secs())
                }
            }
            LlmError::IdleTimeout { after } => {
                if zh {
                    format!(
                        "语言模型中途停止了输出（{} 秒无响应）。回答可能不完整，请重试。",
                        after.as_secs()
                    )
                } else {
                    format!("The language model stopped sending for {} s. The answer may be incomplete; try again.", after.as_secs())
                }
            }
            LlmError::Unauthorized { status } => {
                if zh {
                    format!("语言模型拒绝了 API 密钥（{status}）。请检查 CITED_LLM_API_KEY（或 OPENAI_API_KEY）。")
                } else {
                    format!("The model server rejected the API key ({status}). Check CITED_LLM_API_KEY (or OPENAI_API_KEY).")
                }
            }
            LlmError::ModelNotFound { model } => {
                if zh {
                    format!("模型服务没有名为 {model} 的模型。请把 CITED_LLM_MODEL 设为它提供的模型（`cited doctor` 会列出）。")
                } else {
                    format!("The model server has no model named {model}. Set CITED_LLM_MODEL to one it offers (`cited doctor` lists them).")
                }
            }
            LlmError::ContextTooLong { .. } => {
                if zh {
                    "对话超出了模型的上下文长度。请用 /reset 开始新的对话，或调小 CITED_LLM_CONTEXT_CHARS。".to_string()
                } else {
                    "The conversation is longer than the model's context window. Start over with /reset, or lower CITED_LLM_CONTEXT_CHARS.".to_string()
                }
            }
            LlmError::RateLimited { retry_after } => {
                let wait = retry_after.map(|d| d.as_secs()).unwrap_or(30);
                if zh {
                    format!("模型服务限流（429），重试后仍失败。请约 {wait} 秒后再试。")
                } else {
                    format!("The model server is rate limiting (429) and retries did not help. Try again in about {wait} s.")
                }
            }
            LlmError::Server { status, .. } => {
                if zh {
                    format!("模型服务出错（{status}），重试后仍失败。请稍后再试。")
                } else {
                    format!("The model server failed ({status}) and retries did not help. Try again later.")
                }
            }
            LlmError::BadRequest { status, message } => {
                if zh {
                    format!("模型服务拒绝了请求（{status}）：{message}")
                } else {
                    format!("The model server rejected the request ({status}): {message}")
                }
            }
            LlmError::Truncated => {
                if zh {
                    "模型的输出在结束前被切断。回答可能不完整，请重试。".to_string()
                } else {
                    "The model's stream was cut before it finished. The answer may be incomplete; try again.".to_string()
                }
            }
            LlmError::Malformed { .. } => {
                if zh {
                    "模型服务返回了无法解析的数据。它是否兼容 OpenAI 接口？".to_string()
                } else {
                    "The model server sent data that cannot be read. Is it OpenAI-compatible?"
                        .to_string()
                }
            }
            LlmError::ToolArgs { name, .. } => {
                if zh {
                    format!("模型调用工具 {name} 时给出了无效的参数。")
                } else {
                    format!("The model called the tool {name} with invalid arguments.")
                }
            }
            LlmError::Transport { .. } => {
                if zh {
                    "与模型服务的连接出错。请检查网络后重试。".to_string()
                } else {
                    "The connection to the model server failed. Check the network and try again."
                        .to_string()
                }
            }
        }
    }
}
