//! The OpenAI-compatible chat-completions client: `POST {base}/chat/completions` with
//! `stream: true`, read as server-sent events.
//!
//! SSE framing comes from the `eventsource-stream` crate (it follows the spec: CRLF, multi-
//! line `data:`, comments, events split anywhere across network chunks); the OpenAI delta
//! format is assembled by our own sans-IO [`DeltaAssembler`], leniently, because compatible
//! servers (Ollama, vLLM, llama.cpp, DeepSeek, DashScope) differ in small ways a strictly
//! typed client trips over.
//!
//! Every request carries its `max_tokens`; a request with a [`crate::ssr::llm::Schema`]
//! asks for `response_format: json_schema` until the server rejects it once, after which
//! this client (one per model) asks without it.
//!
//! Before the stream starts, 429 and 5xx answers are retried with bounded exponential
//! backoff that honours `Retry-After`. Timeouts: connect, first byte (headers), and idle
//! between stream events. Dropping the returned stream closes the connection.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};
use reqwest::header::HeaderMap;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::ssr::config::{LlmConfig, Secret};
use crate::ssr::llm::deltas::DeltaAssembler;
use crate::ssr::llm::{
    ChatEvent, ChatModel, ChatRequest, ChatStream, LlmError, ModelKind, SchemaSupport,
};

#[derive(Debug, Clone)]
pub struct ClientOptions {
    pub connect_timeout: Duration,
    /// Until the response headers arrive (a slow first token is normal for big models).
    pub first_byte_timeout: Duration,
    /// Between two stream events once streaming has started.
    pub idle_timeout: Duration,
    /// Retries after the first attempt, for 429 and 5xx.
    pub max_retries: u32,
    pub backoff_base: Duration,
    /// No single wait is longer; a `Retry-After` beyond it gives up at once.
    pub max_backoff: Duration,
    /// Ask for `response_format: json_schema` when a request carries a schema.
    pub structured: bool,
}

impl Default for ClientOptions {
    fn default() -> ClientOptions {
        ClientOptions {
            connect_timeout: Duration::from_secs(10),
            first_byte_timeout: Duration::from_secs(120),
            idle_timeout: Duration::from_secs(60),
            max_retries: 3,
            backoff_base: Duration::from_millis(500),
            max_backoff: Duration::from_secs(20),
            structured: true,
        }
    }
}

#[derive(Clone)]
pub struct OpenAiClient {
    http: reqwest::Client,
    base: String,
    /// `base` without credentials, for messages.
    shown: String,
    api_key: Option<Secret>,
    model: String,
    options: ClientOptions,
    /// What the server did with `response_format` the first time it was asked: probed once
    /// per model and remembered ([`SchemaSupport`] as a byte).
    schema_support: Arc<AtomicU8>,
    /// The server asked for `max_completion_tokens` instead of `max_tokens`.
    completion_tokens_field: Arc<AtomicBool>,
}

const SCHEMA_UNKNOWN: u8 = 0;
const SCHEMA_SUPPORTED: u8 = 1;
const SCHEMA_UNSUPPORTED: u8 = 2;

impl OpenAiClient {
    pub fn new(config: &LlmConfig, options: ClientOptions) -> OpenAiClient {
        crate::ssr::net::install_crypto_provider();
        let http = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .user_agent(concat!("cited/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("a client with rustls and default settings always builds");
        OpenAiClient {
            http,
            base: config.base_url.as_str().trim_end_matches('/').to_string(),
            shown: crate::ssr::config::redacted(&config.base_url)
                .trim_end_matches('/')
                .to_string(),
            api_key: config.api_key.clone(),
            model: config.model.clone(),
            schema_support: Arc::new(AtomicU8::new(if options.structured {
                SCHEMA_UNKNOWN
            } else {
                SCHEMA_UNSUPPORTED
            })),
            completion_tokens_field: Arc::new(AtomicBool::new(false)),
            options,
        }
    }

    fn body(&self, request: &ChatRequest, with_stream_options: bool, with_schema: bool) -> Value {
        let mut body = json!({
            "model": self.model,
            "messages": request.messages.iter().map(|m| m.to_json()).collect::<Vec<_>>(),
            "stream": true,
        });
        if with_stream_options {
            body["stream_options"] = json!({ "include_usage": true });
        }
        if !request.tools.is_empty() {
            body["tools"] = request.tools.iter().map(|t| t.to_json()).collect();
        }
        if let Some(max_tokens) = request.max_tokens {
            // OpenAI's reasoning models refuse `max_tokens`; once told, this client says
            // `max_completion_tokens` instead.
            let field = if self.completion_tokens_field.load(Ordering::Relaxed) {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            body[field] = json!(max_tokens);
        }
        if let (Some(schema), true) = (&request.schema, with_schema) {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": { "name": schema.name, "strict": false, "schema": schema.schema },
            });
        }
        body
    }

    fn asks_schema(&self, request: &ChatRequest) -> bool {
        request.schema.is_some()
            && self.schema_support.load(Ordering::Relaxed) != SCHEMA_UNSUPPORTED
    }

    /// Sends the request, retrying 429/5xx, until a successful response starts.
    async fn start(&self, request: &ChatRequest) -> Result<reqwest::Response, LlmError> {
        let url = format!("{}/chat/completions", self.base);
        let mut with_stream_options = true;
        let mut with_schema = self.asks_schema(request);
        let mut attempt = 0;
        loop {
            let mut builder =
                self.http
                    .post(&url)
                    .json(&self.body(request, with_stream_options, with_schema));
            if let Some(key) = &self.api_key {
                builder = builder.bearer_auth(key.expose());
            }
            let response =
                match tokio::time::timeout(self.options.first_byte_timeout, builder.send()).await {
                    Err(_) => {
                        return Err(LlmError::Timeout {
                            url: self.shown.clone(),
                            after: self.options.first_byte_timeout,
                        })
                    }
                    Ok(Err(error)) if error.is_connect() => {
                        return Err(LlmError::Unreachable {
                            url: self.shown.clone(),
                            source: error,
                        })
                    }
                    Ok(Err(error)) if error.is_timeout() => {
                        return Err(LlmError::Timeout {
                            url: self.shown.clone(),
                            after: self.options.connect_timeout,
                        })
                    }
                    Ok(Err(error)) => return Err(LlmError::Transport { source: error }),
                    Ok(Ok(response)) => response,
                };
            let status = response.status();
            if status.is_success() {
                if with_schema {
                    let _ = self.schema_support.compare_exchange(
                        SCHEMA_UNKNOWN,
                        SCHEMA_SUPPORTED,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    );
                }
                return Ok(response);
            }
            let retry_after = retry_after(response.headers());
            // An error body that stalls must not hang the answer.
            let body = tokio::time::timeout(self.options.first_byte_timeout, response.text())
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            let message = error_message(&body);
            // Some older servers reject the `stream_options` field: ask once more without it.
            if status == StatusCode::BAD_REQUEST
                && with_stream_options
                && body.contains("stream_options")
            {
                with_stream_options = false;
                continue;
            }
            if status == StatusCode::BAD_REQUEST
                && body.contains("max_completion_tokens")
                && !self.completion_tokens_field.swap(true, Ordering::Relaxed)
            {
                continue;
            }
            // A server without structured output: remember it for this model, ask without.
            if with_schema && status.is_client_error() && status != StatusCode::TOO_MANY_REQUESTS {
                let lower = body.to_lowercase();
                if ["response_format", "json_schema", "schema", "grammar"]
                    .iter()
                    .any(|word| lower.contains(word))
                {
                    tracing::info!(model = %self.model, "the model server rejects response_format; tolerant JSON parsing only");
                    self.schema_support
                        .store(SCHEMA_UNSUPPORTED, Ordering::Relaxed);
                    with_schema = false;
                    continue;
                }
            }
            let error = classify(status, message, retry_after, &self.model);
            let retryable = status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
            if !retryable || attempt >= self.options.max_retries {
                return Err(error);
            }
            let backoff = self
                .options
                .backoff_base
                .saturating_mul(1 << attempt.min(16));
            let wait = match retry_after {
                Some(wait) if wait > self.options.max_backoff => return Err(error),
                Some(wait) => wait,
                None => backoff.min(self.options.max_backoff),
            };
            tracing::warn!(
                status = status.as_u16(),
                attempt,
                wait_ms = wait.as_millis() as u64,
                "model server busy, retrying"
            );
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }
}

#[async_trait]
impl ChatModel for OpenAiClient {
    fn kind(&self) -> ModelKind {
        ModelKind::Remote
    }

    fn schema_support(&self) -> SchemaSupport {
        match self.schema_support.load(Ordering::Relaxed) {
            SCHEMA_SUPPORTED => SchemaSupport::Supported,
            SCHEMA_UNSUPPORTED => SchemaSupport::Unsupported,
            _ => SchemaSupport::Unknown,
        }
    }

    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        let response = self.start(&request).await?;
        Ok(Box::pin(events(
            response.bytes_stream(),
            self.options.idle_timeout,
        )))
    }
}

/// Turns a byte stream of SSE into chat events, with an idle timeout between events.
pub fn events<S, E>(
    bytes: S,
    idle_timeout: Duration,
) -> impl Stream<Item = Result<ChatEvent, LlmError>> + Send
where
    S: Stream<Item = Result<bytes::Bytes, E>> + Send + Unpin + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    struct State<T> {
        sse: T,
        assembler: DeltaAssembler,
        queue: VecDeque<ChatEvent>,
        finished: bool,
    }
    let state = State {
        sse: bytes.eventsource(),
        assembler: DeltaAssembler::new(),
        queue: VecDeque::new(),
        finished: false,
    };
    futures_util::stream::unfold(state, move |mut state| async move {
        loop {
            if let Some(event) = state.queue.pop_front() {
                return Some((Ok(event), state));
            }
            if state.finished {
                return None;
            }
            let next = match tokio::time::timeout(idle_timeout, state.sse.next()).await {
                Err(_) => {
                    state.finished = true;
                    return Some((
                        Err(LlmError::IdleTimeout {
                            after: idle_timeout,
                        }),
                        state,
                    ));
                }
                Ok(next) => next,
            };
            let pushed = match next {
                None => {
                    state.finished = true;
                    state.assembler.finish()
                }
                Some(Ok(event)) => state.assembler.push(&event.data),
                Some(Err(EventStreamError::Utf8(_) | EventStreamError::Parser(_))) => {
                    Err(LlmError::Truncated)
                }
                // The connection broke mid-stream: whatever came is all there is.
                Some(Err(EventStreamError::Transport(_))) => Err(LlmError::Truncated),
            };
            match pushed {
                Ok(events) => {
                    state.queue.extend(events);
                    if state.assembler.is_done() {
                        state.finished = true;
                    }
                }
                Err(error) => {
                    state.finished = true;
                    return Some((Err(error), state));
                }
            }
        }
    })
}

/// `Retry-After` in seconds (or OpenAI's `retry-after-ms`); HTTP dates are ignored.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let read = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    // Anything huge, negative or not a number is ignored (never a panic on a header).
    if let Some(wait) =
        read("retry-after-ms").and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok())
    {
        return Some(wait);
    }
    read("retry-after").and_then(|secs| Duration::try_from_secs_f64(secs).ok())
}

fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|value| {
        value
            .pointer("/error/message")
            .or_else(|| value.get("error").filter(|e| e.is_string()))
            .or_else(|| value.get("message"))
            .or_else(|| value.get("detail"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let message = message.unwrap_or_else(|| body.trim().to_string());
    crate::citation::prompt::truncate_chars(&message, 300)
}

fn classify(
    status: StatusCode,
    message: String,
    retry_after: Option<Duration>,
    model: &str,
) -> LlmError {
    let lower = message.to_lowercase();
    let too_long = [
        "context_length",
        "context length",
        "maximum context",
        "too long",
        "context window",
        "too many tokens",
        "reduce the length",
        // llama.cpp: "request (4619 tokens) exceeds the available context size".
        "context size",
    ]
    .iter()
    .any(|needle| lower.contains(needle));
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => LlmError::Unauthorized {
            status: status.as_u16(),
        },
        StatusCode::NOT_FOUND if lower.contains("model") => LlmError::ModelNotFound {
            model: model.to_string(),
        },
        StatusCode::TOO_MANY_REQUESTS => LlmError::RateLimited { retry_after },
        _ if too_long => LlmError::ContextTooLong { message },
        status if status.is_server_error() => LlmError::Server {
            status: status.as_u16(),
            message,
        },
        StatusCode::NOT_FOUND => LlmError::BadRequest {
            status: 404,
            message: format!("{message} (does CITED_LLM_BASE_URL end with /v1?)"),
        },
        status => LlmError::BadRequest {
            status: status.as_u16(),
            message,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_headers() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after-ms", "1500".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(1500)));
        for hostile in ["1e30", "-5", "NaN", "inf"] {
            headers.insert("retry-after-ms", hostile.parse().unwrap());
            headers.insert("retry-after", hostile.parse().unwrap());
            assert_eq!(retry_after(&headers), None, "{hostile}");
        }
    }

    #[test]
    fn errors_are_classified() {
        let check = |status: u16, body: &str| {
            let message = error_message(body);
            format!(
                "{:?}",
                classify(StatusCode::from_u16(status).unwrap(), message, None, "m")
            )
        };
        assert!(
            check(401, r#"{"error":{"message":"Incorrect API key provided"}}"#)
                .starts_with("Unauthorized")
        );
        assert!(check(
            404,
            r#"{"error":{"message":"The model `m` does not exist"}}"#
        )
        .starts_with("ModelNotFound"));
        assert!(check(404, "404 page not found").starts_with("BadRequest"));
        assert!(check(400, r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#).starts_with("ContextTooLong"));
        assert!(check(400, r#"{"error":{"code":400,"message":"request (4619 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error"}}"#).starts_with("ContextTooLong"));
        assert!(check(429, "slow down").starts_with("RateLimited"));
        assert!(check(503, "overloaded").starts_with("Server"));
        assert!(check(422, r#"{"detail":"bad field"}"#).contains("bad field"));
    }
}
