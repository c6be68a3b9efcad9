//! The model client against a scripted OpenAI-compatible server that replays recorded
//! streams; and the SSE decoding fed every possible chunk split.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use futures_util::StreamExt;
use serde_json::{json, Value};

use crate::ssr::config::{LlmConfig, Secret};
use crate::ssr::llm::openai::{events, ClientOptions, OpenAiClient};
use crate::ssr::llm::{
    ChatEvent, ChatModel, ChatRequest, FinishReason, LlmError, Message, ToolCall, ToolSpec, Usage,
};

/// Text, then usage in its own chunk, then `[DONE]` (OpenAI's shape with include_usage).
pub const TEXT: &str = concat!(
    "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"量子计算\"},\"finish_reason\":null}]}\n\n",
    ": keep-alive comment\n\n",
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"很强 [1]。\"},\"finish_reason\":null}]}\r\n\r\n",
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":42,\"completion_tokens\":7,\"total_tokens\":49}}\n\n",
    "data: [DONE]\n\n",
);

/// One tool call whose arguments arrive in fragments (one ends inside a `\u` escape).
pub const TOOL_MULTIPART: &str = concat!(
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"web_search\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"que\"}}]},\"finish_reason\":null}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"ry\\\": \\\"\\\\u91\"}}]},\"finish_reason\":null}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"cf子 计算\\\"}\"}}]},\"finish_reason\":null}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    "data: [DONE]\n\n",
);

/// Two tool calls in one turn, their fragments interleaved.
pub const TWO_TOOLS: &str = concat!(
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"web_search\",\"arguments\":\"{\\\"query\\\":\"}}]}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":\"web_search\",\"arguments\":\"{\\\"query\\\":\"}}]}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"tokio\\\"}\"}}]}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"\\\"smol\\\"}\"}}]}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    "data: [DONE]\n\n",
);

/// Cut off mid-answer: no finish reason, no `[DONE]`.
pub const CUT: &str = concat!(
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"The answer is\"},\"finish_reason\":null}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" partly\"},\"finish_reason\":null}]}\n\n",
);

fn call(index: u32, id: &str, arguments: &str) -> ToolCall {
    ToolCall {
        index,
        id: id.into(),
        name: "web_search".into(),
        arguments: arguments.into(),
    }
}

fn expected(transcript: &str) -> Vec<Result<ChatEvent, String>> {
    let done = |reason, usage| {
        Ok(ChatEvent::Done {
            finish_reason: Some(reason),
            usage,
        })
    };
    match transcript {
        TEXT => vec![
            Ok(ChatEvent::Text("量子计算".into())),
            Ok(ChatEvent::Text("很强 [1]。".into())),
            done(
                FinishReason::Stop,
                Some(Usage {
                    prompt_tokens: 42,
                    completion_tokens: 7,
                }),
            ),
        ],
        TOOL_MULTIPART => vec![
            Ok(ChatEvent::ToolCalls(vec![call(
                0,
                "call_a",
                "{\"query\": \"\\u91cf子 计算\"}",
            )])),
            done(FinishReason::ToolCalls, None),
        ],
        TWO_TOOLS => vec![
            Ok(ChatEvent::ToolCalls(vec![
                call(0, "call_1", "{\"query\":\"tokio\"}"),
                call(1, "call_2", "{\"query\":\"smol\"}"),
            ])),
            done(FinishReason::ToolCalls, None),
        ],
        CUT => vec![
            Ok(ChatEvent::Text("The answer is".into())),
            Ok(ChatEvent::Text(" partly".into())),
            Err("Truncated".into()),
        ],
        _ => unreachable!(),
    }
}

async fn decode(chunks: Vec<Vec<u8>>) -> Vec<Result<ChatEvent, String>> {
    let stream = futures_util::stream::iter(
        chunks
            .into_iter()
            .map(|c| Ok::<_, std::io::Error>(bytes::Bytes::from(c))),
    );
    events(stream, Duration::from_secs(5))
        .map(|item| {
            item.map_err(|error| {
                format!("{error:?}")
                    .split([' ', '{'])
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
        })
        .collect()
        .await
}

#[tokio::test]
async fn every_split_of_every_transcript_decodes_the_same() {
    for transcript in [TEXT, TOOL_MULTIPART, TWO_TOOLS, CUT] {
        let bytes = transcript.as_bytes();
        let want = expected(transcript);
        assert_eq!(decode(vec![bytes.to_vec()]).await, want, "whole transcript");
        for split in 0..=bytes.len() {
            let got = decode(vec![bytes[..split].to_vec(), bytes[split..].to_vec()]).await;
            assert_eq!(got, want, "split at byte {split} of {transcript:?}");
        }
        // And byte by byte.
        let got = decode(bytes.iter().map(|b| vec![*b]).collect()).await;
        assert_eq!(got, want, "one byte at a time");
    }
}

#[test]
fn tool_arguments_parse_or_fail_typed() {
    let good = call(0, "c", "{\"query\": \"\\u91cf子\"}");
    assert_eq!(good.parsed_arguments().unwrap()["query"], "量子");
    let bad = call(3, "c", "{\"query\": \"unterminated");
    let error = bad.parsed_arguments().unwrap_err();
    assert!(
        matches!(error, LlmError::ToolArgs { index: 3, .. }),
        "{error:?}"
    );
    assert!(crate::ssr::messages::llm_error(crate::model::Lang::En, &error).contains("web_search"));
}

/// What the scripted server remembers.
#[derive(Default)]
pub struct Script {
    attempts: AtomicU32,
    requests: Mutex<Vec<Value>>,
    dropped: AtomicBool,
}

impl Script {
    /// Whether a stream it was sending (the "endless" model's) was dropped: the answer
    /// reading it stopped.
    pub fn dropped(&self) -> bool {
        self.dropped.load(Ordering::SeqCst)
    }

    /// How many requests it has been sent.
    pub fn requested(&self) -> usize {
        self.requests.lock().map_or(0, |requests| requests.len())
    }
}

struct DropFlag(Arc<Script>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
    }
}

fn sse(body: Body) -> Response {
    ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
}

/// Chunks of `transcript`, each sent after `gap`.
fn paced(
    transcript: &'static str,
    first_delay: Duration,
    gap: Duration,
    guard: Option<DropFlag>,
) -> Body {
    let chunks: Vec<String> = transcript
        .split_inclusive("\n\n")
        .map(str::to_string)
        .collect();
    let stream = futures_util::stream::unfold((0usize, guard), move |(idx, guard)| {
        let chunks = chunks.clone();
        async move {
            if idx >= chunks.len() {
                return None;
            }
            tokio::time::sleep(if idx == 0 { first_delay } else { gap }).await;
            Some((
                Ok::<_, std::io::Error>(chunks[idx].clone()),
                (idx + 1, guard),
            ))
        }
    });
    Body::from_stream(stream)
}

async fn scripted(State(script): State<Arc<Script>>, Json(body): Json<Value>) -> Response {
    let attempt = script.attempts.fetch_add(1, Ordering::SeqCst);
    script.requests.lock().unwrap().push(body.clone());
    let model = body["model"].as_str().unwrap_or("").to_string();
    let none = Duration::ZERO;
    match model.as_str() {
        "text" => sse(Body::from(TEXT)),
        "tools" => sse(Body::from(TOOL_MULTIPART)),
        "two-tools" => sse(Body::from(TWO_TOOLS)),
        "cut" => sse(Body::from(CUT)),
        "slow-first" => sse(paced(TEXT, Duration::from_millis(600), none, None)),
        "stall" => sse(paced(CUT, none, Duration::from_secs(30), None)),
        "endless" => {
            let endless = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"more \"}}]}\n\n";
            let stream = futures_util::stream::unfold(DropFlag(script.clone()), move |guard| async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Some((Ok::<_, std::io::Error>(endless), guard))
            });
            sse(Body::from_stream(stream))
        }
        "unauthorized" => (StatusCode::UNAUTHORIZED, Json(json!({"error": {"message": "Incorrect API key provided: sk-****"}}))).into_response(),
        "missing" => (StatusCode::NOT_FOUND, Json(json!({"error": {"message": "The model `missing` does not exist"}}))).into_response(),
        "too-long" => (StatusCode::BAD_REQUEST, Json(json!({"error": {"message": "This model's maximum context length is 8192 tokens", "code": "context_length_exceeded"}}))).into_response(),
        "busy-then-ok" if attempt == 0 => (StatusCode::TOO_MANY_REQUESTS, [(header::RETRY_AFTER, "1")], "slow down").into_response(),
        "busy-then-ok" => sse(Body::from(TEXT)),
        "flaky-then-ok" if attempt == 0 => (StatusCode::INTERNAL_SERVER_ERROR, "oops").into_response(),
        "flaky-then-ok" => sse(Body::from(TEXT)),
        "always-busy" => (StatusCode::SERVICE_UNAVAILABLE, "overloaded").into_response(),
        "no-stream-options" if body.get("stream_options").is_some() => {
            (StatusCode::BAD_REQUEST, Json(json!({"error": {"message": "Unrecognized request argument supplied: stream_options"}}))).into_response()
        }
        "no-stream-options" => sse(Body::from(TEXT)),
        // OpenAI's reasoning models: `max_tokens` is refused by name.
        "completion-tokens" if body.get("max_tokens").is_some() => {
            (StatusCode::BAD_REQUEST, Json(json!({"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."}}))).into_response()
        }
        "completion-tokens" => sse(Body::from(TEXT)),
        // A server without structured output.
        "no-schema" if body.get("response_format").is_some() => {
            (StatusCode::BAD_REQUEST, Json(json!({"error": {"message": "response_format is not supported"}}))).into_response()
        }
        "no-schema" => sse(Body::from(TEXT)),
        _ => (StatusCode::BAD_REQUEST, "unknown script").into_response(),
    }
}

pub async fn fake_openai() -> (String, Arc<Script>) {
    let script = Arc::new(Script::default());
    let app = Router::new()
        .route("/v1/chat/completions", post(scripted))
        .with_state(script.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/v1"), script)
}

fn client(base: &str, model: &str, key: Option<&str>) -> OpenAiClient {
    let config = LlmConfig {
        base_url: base.parse().unwrap(),
        api_key: key.map(Secret::new),
        model: model.into(),
        fast_model: None,
        more: Vec::new(),
    };
    OpenAiClient::new(
        &config,
        ClientOptions {
            connect_timeout: Duration::from_secs(2),
            first_byte_timeout: Duration::from_secs(3),
            idle_timeout: Duration::from_millis(800),
            max_retries: 2,
            backoff_base: Duration::from_millis(50),
            max_backoff: Duration::from_secs(2),
            structured: true,
        },
    )
}

fn question() -> ChatRequest {
    ChatRequest {
        messages: vec![
            Message::System("cite as [n]".into()),
            Message::User("量子计算？".into()),
        ],
        ..ChatRequest::default()
    }
}

async fn collect(model: &OpenAiClient, request: ChatRequest) -> Result<Vec<ChatEvent>, LlmError> {
    let mut stream = model.stream(request).await?;
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event?);
    }
    Ok(events)
}

#[tokio::test]
async fn streams_text_with_finish_reason_and_usage() {
    let (base, script) = fake_openai().await;
    let events = collect(&client(&base, "text", Some("sk-test")), question())
        .await
        .unwrap();
    assert_eq!(
        events,
        expected(TEXT)
            .into_iter()
            .map(Result::unwrap)
            .collect::<Vec<_>>()
    );
    let request = script.requests.lock().unwrap()[0].clone();
    assert_eq!(request["stream"], true);
    assert_eq!(request["messages"][1]["content"], "量子计算？");
}

#[tokio::test]
async fn tools_go_out_and_results_come_back() {
    let (base, script) = fake_openai().await;
    let tool = ToolSpec {
        name: "web_search".into(),
        description: "搜索互联网获取实时信息。".into(),
        parameters: json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
    };
    let model = client(&base, "tools", None);
    let mut request = question();
    request.tools = vec![tool];
    let events = collect(&model, request.clone()).await.unwrap();
    let ChatEvent::ToolCalls(calls) = &events[0] else {
        panic!("{events:?}")
    };
    assert_eq!(calls[0].parsed_arguments().unwrap()["query"], "量子 计算");
    // The tool result goes back with its call.
    request.messages.push(Message::Assistant {
        content: String::new(),
        tool_calls: calls.clone(),
    });
    request.messages.push(Message::Tool {
        call_id: "call_a".into(),
        content: "[1] 量子计算 - https://x".into(),
    });
    collect(&model, request).await.unwrap();
    let sent = script.requests.lock().unwrap()[1].clone();
    assert_eq!(sent["tools"][0]["function"]["name"], "web_search");
    assert_eq!(sent["messages"][2]["tool_calls"][0]["id"], "call_a");
    assert_eq!(sent["messages"][3]["role"], "tool");
    assert_eq!(sent["messages"][3]["tool_call_id"], "call_a");
    assert!(sent.get("authorization").is_none());

    let events = collect(&client(&base, "two-tools", None), question())
        .await
        .unwrap();
    assert_eq!(
        events,
        expected(TWO_TOOLS)
            .into_iter()
            .map(Result::unwrap)
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn a_cut_stream_is_an_error_after_its_text() {
    let (base, _) = fake_openai().await;
    let mut stream = client(&base, "cut", None).stream(question()).await.unwrap();
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        ChatEvent::Text("The answer is".into())
    );
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        ChatEvent::Text(" partly".into())
    );
    assert!(matches!(
        stream.next().await,
        Some(Err(LlmError::Truncated))
    ));
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn a_slow_first_token_is_fine_but_a_stall_times_out() {
    let (base, _) = fake_openai().await;
    let events = collect(&client(&base, "slow-first", None), question())
        .await
        .unwrap();
    assert_eq!(events.len(), 3);
    let started = Instant::now();
    let error = collect(&client(&base, "stall", None), question())
        .await
        .unwrap_err();
    assert!(matches!(error, LlmError::IdleTimeout { .. }), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn http_errors_are_typed_and_worded() {
    let (base, _) = fake_openai().await;
    let error = collect(&client(&base, "unauthorized", Some("sk-bad")), question())
        .await
        .unwrap_err();
    assert!(
        matches!(error, LlmError::Unauthorized { status: 401 }),
        "{error:?}"
    );
    assert!(
        crate::ssr::messages::llm_error(crate::model::Lang::ZhCn, &error)
            .contains("CITED_LLM_API_KEY")
    );
    let error = collect(&client(&base, "missing", None), question())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, LlmError::ModelNotFound { model } if model == "missing"),
        "{error:?}"
    );
    let error = collect(&client(&base, "too-long", None), question())
        .await
        .unwrap_err();
    assert!(
        matches!(error, LlmError::ContextTooLong { .. }),
        "{error:?}"
    );
    let closed = super::searxng::free_port();
    let error = collect(
        &client(&format!("http://127.0.0.1:{closed}/v1"), "text", None),
        question(),
    )
    .await
    .unwrap_err();
    assert!(matches!(error, LlmError::Unreachable { .. }), "{error:?}");
}

#[tokio::test]
async fn busy_servers_are_retried_with_backoff_honouring_retry_after() {
    let (base, script) = fake_openai().await;
    let started = Instant::now();
    let events = collect(&client(&base, "busy-then-ok", None), question())
        .await
        .unwrap();
    assert_eq!(events.len(), 3);
    assert_eq!(script.attempts.load(Ordering::SeqCst), 2);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited for Retry-After: 1"
    );

    let (base, script) = fake_openai().await;
    collect(&client(&base, "flaky-then-ok", None), question())
        .await
        .unwrap();
    assert_eq!(script.attempts.load(Ordering::SeqCst), 2);

    let (base, script) = fake_openai().await;
    let error = collect(&client(&base, "always-busy", None), question())
        .await
        .unwrap_err();
    assert!(
        matches!(error, LlmError::Server { status: 503, .. }),
        "{error:?}"
    );
    assert_eq!(
        script.attempts.load(Ordering::SeqCst),
        3,
        "bounded: the first try and 2 retries"
    );

    let (base, script) = fake_openai().await;
    collect(&client(&base, "no-stream-options", None), question())
        .await
        .unwrap();
    assert_eq!(
        script.attempts.load(Ordering::SeqCst),
        2,
        "asked again without stream_options"
    );
}

#[tokio::test]
async fn dropping_the_stream_cancels_the_request() {
    let (base, script) = fake_openai().await;
    let mut stream = client(&base, "endless", None)
        .stream(question())
        .await
        .unwrap();
    assert!(matches!(stream.next().await, Some(Ok(ChatEvent::Text(_)))));
    drop(stream);
    let deadline = Instant::now() + Duration::from_secs(3);
    while !script.dropped.load(Ordering::SeqCst) {
        assert!(
            Instant::now() < deadline,
            "the server kept streaming to nobody"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn the_extractive_answerer_speaks_the_same_interface() {
    use crate::citation::Registry;
    use crate::model::Source;
    use crate::ssr::llm::extractive::Extractive;
    use crate::ssr::llm::AnswerContext;

    let registry = Registry::single_round(
        "q",
        &[Source {
            url: "https://docs.example.org/tests".into(),
            title: "Testing".into(),
            snippet: "Run make test to run every test. It needs nothing else.".into(),
            ..Source::default()
        }],
    );
    let request = ChatRequest {
        messages: vec![Message::User("How do I run the tests?".into())],
        context: AnswerContext {
            question: "How do I run the tests?".into(),
            sources: registry.entries().to_vec(),
        },
        ..ChatRequest::default()
    };
    let events: Vec<ChatEvent> = Extractive
        .stream(request.clone())
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    let ChatEvent::Text(text) = &events[0] else {
        panic!("{events:?}")
    };
    assert!(text.contains("make test") && text.contains("[1]"), "{text}");

    // As an agent: it searches first.
    let mut agent = request;
    agent.tools = vec![ToolSpec {
        name: "web_search".into(),
        description: String::new(),
        parameters: json!({}),
    }];
    let events: Vec<ChatEvent> = Extractive
        .stream(agent)
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    let ChatEvent::ToolCalls(calls) = &events[0] else {
        panic!("{events:?}")
    };
    assert_eq!(
        calls[0].parsed_arguments().unwrap()["query"],
        "How do I run the tests?"
    );
}

fn schema() -> crate::ssr::llm::Schema {
    crate::ssr::llm::Schema {
        name: "answer",
        schema: json!({ "type": "object", "properties": { "answer": { "type": "string" } } }),
    }
}

#[tokio::test]
async fn max_tokens_becomes_max_completion_tokens_when_the_server_asks() {
    let (base, script) = fake_openai().await;
    let model = client(&base, "completion-tokens", None);
    let bounded = || ChatRequest {
        max_tokens: Some(64),
        ..question()
    };
    collect(&model, bounded()).await.unwrap();
    collect(&model, bounded()).await.unwrap();
    let requests = script.requests.lock().unwrap().clone();
    // Refused once, then remembered: three requests for two calls.
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0]["max_tokens"], 64);
    for request in &requests[1..] {
        assert_eq!(request["max_completion_tokens"], 64);
        assert!(request.get("max_tokens").is_none());
    }
}

#[tokio::test]
async fn structured_output_is_probed_once_per_model_and_remembered() {
    use crate::ssr::llm::SchemaSupport;
    let (base, script) = fake_openai().await;
    let with_schema = || ChatRequest {
        schema: Some(schema()),
        ..question()
    };
    // A server that enforces it: asked every time, remembered as supported.
    let supported = client(&base, "text", None);
    assert_eq!(supported.schema_support(), SchemaSupport::Unknown);
    collect(&supported, with_schema()).await.unwrap();
    assert_eq!(supported.schema_support(), SchemaSupport::Supported);
    let sent = script.requests.lock().unwrap().last().cloned().unwrap();
    assert_eq!(sent["response_format"]["type"], "json_schema");
    assert_eq!(sent["response_format"]["json_schema"]["name"], "answer");
    // One that refuses it: the same call goes through without, and later calls skip it.
    let refusing = client(&base, "no-schema", None);
    let events = collect(&refusing, with_schema()).await.unwrap();
    assert!(events.iter().any(|e| matches!(e, ChatEvent::Text(_))));
    assert_eq!(refusing.schema_support(), SchemaSupport::Unsupported);
    let before = script.requests.lock().unwrap().len();
    collect(&refusing, with_schema()).await.unwrap();
    let requests = script.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), before + 1, "no second refusal");
    assert!(requests.last().unwrap().get("response_format").is_none());
}
