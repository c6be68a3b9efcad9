//! cited as an OpenAI-compatible model: `GET /v1/models` lists `cited-chat`, `cited-agent`
//! and `cited-research`; `POST /v1/chat/completions` answers the last user message in that
//! mode, whole or streamed as server-sent events framed as OpenAI frames them. The answer
//! text carries `[n]` markers; `citations` lists the cited URLs in number order (as
//! Perplexity's API does) and `cited_sources` each cited source with its title, snippet,
//! search round and how well it supports the sentences citing it (sources only cited's own
//! additions cite among them), and `cited_claims` the claims the model left uncited, each
//! with the source cited attributed it to, if any. Errors come in OpenAI's
//! `{"error": {...}}` shape.
//!
//! Each request is answered in a session of its own, so requests never see each other.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::model::{AnswerEvent, Exchange, Mode};
use crate::ssr::answer::{self, Asker, Delivery, Question, QuestionError, Refusal, Running};
use crate::ssr::pipeline::TurnInput;
use crate::ssr::state::AppState;

/// The models cited offers, one per mode.
const MODELS: [(&str, Mode); 3] = [
    ("cited-chat", Mode::Chat),
    ("cited-agent", Mode::Agent),
    ("cited-research", Mode::Research),
];

#[derive(Deserialize)]
pub struct CompletionRequest {
    model: String,
    messages: Vec<Message>,
    #[serde(default)]
    stream: bool,
}

#[derive(Deserialize)]
struct Message {
    role: String,
    #[serde(default)]
    content: Option<Content>,
}

/// A message's content: a string, or parts of which the text ones count.
#[derive(Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Deserialize)]
struct Part {
    #[serde(default)]
    text: Option<String>,
}

impl Content {
    fn text(&self) -> String {
        match self {
            Content::Text(text) => text.clone(),
            Content::Parts(parts) => parts
                .iter()
                .filter_map(|part| part.text.as_deref())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// An error in OpenAI's shape.
fn error(status: StatusCode, message: &str, param: Option<&str>, code: &str) -> Response {
    let body = json!({
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": param,
            "code": code,
        }
    });
    (status, Json(body)).into_response()
}

/// `GET /openapi.json`: the API described for generators and tools.
pub async fn openapi() -> Json<Value> {
    let error = json!({ "$ref": "#/components/schemas/Error" });
    Json(json!({
        "openapi": "3.1.0",
        "info": {
            "title": "cited",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "An OpenAI-compatible chat completions API whose answers cite their sources: `[n]` markers in the text, `citations` (URLs) and `cited_sources`.",
        },
        "paths": {
            "/v1/models": { "get": {
                "summary": "The models: cited-chat, cited-agent, cited-research (one per mode)",
                "responses": { "200": { "description": "A list of models" } },
            }},
            "/v1/chat/completions": { "post": {
                "summary": "Answer the last user message with citations; `stream: true` for server-sent events",
                "requestBody": { "required": true, "content": { "application/json": { "schema": {
                    "type": "object",
                    "required": ["model", "messages"],
                    "properties": {
                        "model": { "enum": ["cited-chat", "cited-agent", "cited-research"] },
                        "messages": { "type": "array", "items": { "type": "object", "properties": {
                            "role": { "type": "string" },
                            "content": { "oneOf": [{ "type": "string" }, { "type": "array" }] },
                        }}},
                        "stream": { "type": "boolean", "default": false },
                    },
                }}}},
                "responses": {
                    "200": { "description": "A chat.completion (or chat.completion.chunk events) with `citations`, `cited_sources` (number, title, url, snippet, round, support: supported, partial, not_found or not_checked, passage, added_by_cited) and `cited_claims` (each claim the model left uncited: sentence, the number cited added or null when no source supports it, passage)" },
                    "400": { "description": "Not a chat completion request, or no question", "content": { "application/json": { "schema": error } } },
                    "404": { "description": "Unknown model", "content": { "application/json": { "schema": error } } },
                },
            }},
        },
        "components": { "schemas": { "Error": { "type": "object", "properties": { "error": {
            "type": "object",
            "properties": {
                "message": { "type": "string" },
                "type": { "type": "string" },
                "param": { "type": ["string", "null"] },
                "code": { "type": "string" },
            },
        }}}}},
    }))
}

pub async fn models() -> Json<Value> {
    let data: Vec<Value> = MODELS
        .iter()
        .map(|(id, _)| json!({ "id": id, "object": "model", "created": 0, "owned_by": "cited" }))
        .collect();
    Json(json!({ "object": "list", "data": data }))
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

pub async fn completions(
    State(state): State<AppState>,
    caller: Option<axum::Extension<crate::ssr::request::CurrentSession>>,
    address: Option<axum::Extension<crate::ssr::request::ClientAddress>>,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let (request, mode, question) =
        match read_request(&headers, &body, state.config.max_question_chars) {
            Ok(read) => read,
            Err(refused) => return *refused,
        };
    // Each request answers in a session of its own, the signed-in caller's when there is
    // one (so it counts against their rate and quota).
    let user = caller.and_then(|caller| caller.0 .0.user.clone());
    let session =
        crate::ssr::session::Session::new(crate::ssr::session::SessionId::random(), Instant::now());
    // A user's answers land in their history; an anonymous call's are not kept (nobody
    // could open them again).
    let session = Arc::new(match user {
        Some(user) => session.with_user(Some(user)),
        None => session.unkept(),
    });
    let key = match &session.user {
        Some(user) => crate::ssr::store::owner_of_user(user),
        None => "api".to_string(),
    };
    let asker = Asker {
        owner: key,
        address: address.map(|a| a.0 .0),
    };
    let input = TurnInput::standalone(question.into_string(), mode);
    let running = match answer::start(&state, session, input, Some(asker), Delivery::Direct).await {
        Ok(running) => running,
        Err(refusal) => return refused(refusal),
    };
    let Running {
        events,
        cancel,
        done,
    } = running;
    // The answer is stopped when the client goes away (the body is dropped).
    let guard = cancel.drop_guard();
    let events = match first_word(events).await {
        Ok(events) => events,
        Err(message) => {
            drop(guard);
            return error(StatusCode::BAD_GATEWAY, &message, None, "answer_failed");
        }
    };
    let reply = Reply::new(request.model);
    let answer = Answer {
        events,
        done,
        guard,
    };
    if request.stream {
        // Gzipped like `/api/ask` when the client takes it.
        let gzip = headers
            .get_all(header::ACCEPT_ENCODING)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .any(crate::ssr::request::takes_gzip);
        streamed(reply, answer, mode, gzip)
    } else {
        whole(reply, answer)
    }
}

/// The request's body read as a chat completion request: its model's mode and the last
/// user message as the question, or the error to answer with.
fn read_request(
    headers: &axum::http::HeaderMap,
    body: &[u8],
    max_question_chars: usize,
) -> Result<(CompletionRequest, Mode, Question), Box<Response>> {
    // JSON only: a web page can send a cross-site form or text/plain post without asking,
    // but not application/json.
    let json_body = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().starts_with("application/json"));
    if !json_body {
        return Err(Box::new(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the request as application/json",
            None,
            "unsupported_media_type",
        )));
    }
    let request: CompletionRequest = serde_json::from_slice(body).map_err(|problem| {
        Box::new(error(
            StatusCode::BAD_REQUEST,
            &format!("the request is not a chat completion request: {problem}"),
            None,
            "invalid_request",
        ))
    })?;
    let Some(mode) = MODELS
        .iter()
        .find(|(id, _)| *id == request.model)
        .map(|(_, mode)| *mode)
    else {
        return Err(Box::new(error(
            StatusCode::NOT_FOUND,
            &format!(
                "The model `{}` does not exist: use cited-chat, cited-agent or cited-research",
                request.model
            ),
            Some("model"),
            "model_not_found",
        )));
    };
    let question = request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == "user")
        .and_then(|m| m.content.as_ref())
        .map(Content::text)
        .unwrap_or_default();
    let question =
        Question::parse(&question, max_question_chars).map_err(|problem| match problem {
            QuestionError::Empty => error(
                StatusCode::BAD_REQUEST,
                "messages needs a user message with text: the question",
                Some("messages"),
                "invalid_request",
            ),
            QuestionError::TooLong { length, max } => error(
                StatusCode::BAD_REQUEST,
                &format!("the question has {length} characters; at most {max} are accepted"),
                Some("messages"),
                "question_too_long",
            ),
        })?;
    Ok((request, mode, question))
}

/// Why an answer was not started, in OpenAI's shape.
fn refused(refusal: Refusal) -> Response {
    match refusal {
        Refusal::TooFast(wait) => {
            let mut response = error(
                StatusCode::TOO_MANY_REQUESTS,
                &format!(
                    "too many questions; try again in {} s",
                    wait.as_secs().max(1)
                ),
                None,
                "rate_limit_exceeded",
            );
            if let Ok(value) = wait.as_secs().max(1).to_string().parse() {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            response
        }
        Refusal::QuotaFull => error(
            StatusCode::INSUFFICIENT_STORAGE,
            "the stored conversations reached their quota (CITED_USER_QUOTA_MB)",
            None,
            "quota_exceeded",
        ),
        // A fresh session of its own: never busy, never full.
        Refusal::ConversationFull { .. } => error(
            StatusCode::BAD_REQUEST,
            "the conversation is full (CITED_MAX_EXCHANGES)",
            None,
            "conversation_full",
        ),
        Refusal::Busy => error(
            StatusCode::CONFLICT,
            "another answer is still running",
            None,
            "busy",
        ),
    }
}

/// Waits (at most `FIRST_WORD`) for the answer's first token, its end or its failure,
/// sending nothing meanwhile: an answer that fails before writing anything (the model
/// unreachable, say) answers with an error status in OpenAI's shape instead of a 200 with
/// an empty answer. The events read are replayed.
async fn first_word(mut receiver: crate::ssr::answer::Events) -> Result<Replay, String> {
    let mut early = Vec::new();
    let wait = tokio::time::timeout(FIRST_WORD, async {
        while let Some(event) = receiver.next().await {
            let decisive = matches!(
                event,
                AnswerEvent::Token { .. } | AnswerEvent::Done { .. } | AnswerEvent::Failed { .. }
            );
            early.push(event);
            if decisive {
                break;
            }
        }
    })
    .await;
    let failed = early.iter().find_map(|event| match event {
        AnswerEvent::Failed { message } => Some(message.clone()),
        _ => None,
    });
    match (wait, failed) {
        (Ok(()), Some(message)) => Err(message),
        _ => Ok(Replay {
            early: early.into(),
            rest: receiver,
        }),
    }
}

/// A running answer as the API serves it: its events, the exchange it ends with, and the
/// guard that stops it when the client goes away.
struct Answer {
    events: Replay,
    done: tokio::task::JoinHandle<Exchange>,
    guard: tokio_util::sync::DropGuard,
}

/// What every object of one reply carries.
#[derive(Clone)]
struct Reply {
    id: String,
    created: u64,
    model: String,
}

impl Reply {
    fn new(model: String) -> Reply {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Reply {
            id: format!(
                "chatcmpl-cited-{}",
                NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ),
            created: now_secs(),
            model,
        }
    }

    /// One `chat.completion.chunk`.
    fn chunk(&self, delta: Value, finish: Option<&str>) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
        })
    }

    /// The last chunk: the finish reason, the citations and the usage.
    fn last_chunk(&self, exchange: &Exchange) -> Value {
        let (citations, cited_sources, cited_claims) = answer::cited_json(exchange);
        let mut last = self.chunk(json!({}), Some("stop"));
        last["citations"] = json!(citations);
        last["cited_sources"] = json!(cited_sources);
        last["cited_claims"] = json!(cited_claims);
        last["usage"] = usage_json(exchange);
        last
    }

    /// The whole `chat.completion`.
    fn completion(&self, exchange: &Exchange) -> Value {
        let (citations, cited_sources, cited_claims) = answer::cited_json(exchange);
        json!({
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{
                "index": 0,
                "message": { "role": "assistant", "content": exchange.answer },
                "finish_reason": "stop",
            }],
            "usage": usage_json(exchange),
            "citations": citations,
            "cited_sources": cited_sources,
            "cited_claims": cited_claims,
        })
    }
}

/// The answer as one `chat.completion`: headers go out now, the body when the answer is
/// done, so a long Research answer is not cut by the server's header timeout.
fn whole(reply: Reply, answer: Answer) -> Response {
    let body = futures_util::stream::once(async move {
        let Answer {
            mut events,
            done,
            guard,
        } = answer;
        let _guard = guard;
        while events.recv().await.is_some() {}
        let exchange = done.await.unwrap_or_default();
        Ok::<_, std::convert::Infallible>(reply.completion(&exchange).to_string())
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// The answer as server-sent `chat.completion.chunk` events, then `[DONE]`; gzipped (one
/// stream, flushed after every batch of events, so each frame decodes the moment it
/// arrives) when the client takes it.
fn streamed(reply: Reply, answer: Answer, mode: Mode, gzip: bool) -> Response {
    let first = reply.chunk(json!({ "role": "assistant", "content": "" }), None);
    // Agent text may turn out to be thinking (the model calls a tool after it, and a
    // `Rewrite` takes it back); a stream cannot take text back, so an Agent's text is held
    // until the model's reply is over. Other modes stream each token as it comes.
    let hold = mode == Mode::Agent;
    let Answer {
        events,
        done,
        guard,
    } = answer;
    let frames = futures_util::stream::unfold(
        (events, Some(done), guard, reply, Held::default()),
        move |(mut events, mut done, guard, reply, mut held)| async move {
            loop {
                let event = events.recv().await;
                let ended = event.is_none();
                let out = match event {
                    Some(event) => held.take(event, hold),
                    None => held.flush(),
                };
                if let Some(text) = out.filter(|text| !text.is_empty()) {
                    let frame = reply.chunk(json!({ "content": text }), None);
                    return Some((frame, (events, done, guard, reply, held)));
                }
                if ended {
                    let exchange = done.take()?.await.unwrap_or_default();
                    let last = reply.last_chunk(&exchange);
                    return Some((last, (events, done, guard, reply, held)));
                }
            }
        },
    );
    let events = futures_util::stream::once(async move { first })
        .chain(frames)
        .map(|frame| format!("data: {frame}\n\n"))
        .chain(futures_util::stream::once(async {
            "data: [DONE]\n\n".to_string()
        }));
    let body = crate::ssr::framing::body(events, gzip).map(Ok::<_, std::convert::Infallible>);
    let mut response = Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .header(header::VARY, "accept-encoding");
    if gzip {
        response = response.header(header::CONTENT_ENCODING, "gzip");
    }
    response
        .body(Body::from_stream(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// How long the API waits for an answer's first word before it sends its headers.
const FIRST_WORD: Duration = Duration::from_secs(20);

/// Events already read (while waiting for the first word), then the rest.
struct Replay {
    early: std::collections::VecDeque<AnswerEvent>,
    rest: crate::ssr::answer::Events,
}

impl Replay {
    async fn recv(&mut self) -> Option<AnswerEvent> {
        match self.early.pop_front() {
            Some(event) => Some(event),
            None => self.rest.next().await,
        }
    }
}

/// The answer text streamed so far and what is held back.
#[derive(Default)]
struct Held {
    sent: String,
    pending: String,
}

impl Held {
    /// What to stream after `event`, if anything.
    fn take(&mut self, event: AnswerEvent, hold: bool) -> Option<String> {
        match event {
            AnswerEvent::Token { text } if hold => {
                self.pending.push_str(&text);
                None
            }
            AnswerEvent::Token { text } => {
                self.sent.push_str(&text);
                Some(text)
            }
            AnswerEvent::Rewrite { answer } => {
                // What was sent stays; what is held becomes the rest of the new text.
                self.pending = answer
                    .strip_prefix(self.sent.as_str())
                    .unwrap_or_default()
                    .to_string();
                if hold {
                    None
                } else {
                    self.flush()
                }
            }
            // Between replies (a step, a search, the end): what is held is final.
            AnswerEvent::Progress { .. } | AnswerEvent::Reasoning { .. } => None,
            _ => self.flush(),
        }
    }

    fn flush(&mut self) -> Option<String> {
        let text = std::mem::take(&mut self.pending);
        self.sent.push_str(&text);
        Some(text)
    }
}

fn usage_json(exchange: &Exchange) -> Value {
    match &exchange.usage {
        Some(usage) => json!({
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total(),
        }),
        None => json!({ "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0 }),
    }
}
