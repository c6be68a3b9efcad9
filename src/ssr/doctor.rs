//! `cited doctor`: checks SearXNG and the model endpoint and says, for each problem, what
//! to do about it. When the model answers, it is probed as each mode will use it:
//! streaming, tool calls, JSON-schema output and the server's context length. Returns a report; `main` prints it and turns it into the exit code.

use std::fmt;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use crate::model::Lang;
use crate::ssr::config::{Config, LlmConfig};
use crate::ssr::llm::openai::{ClientOptions, OpenAiClient};
use crate::ssr::llm::{ChatEvent, ChatModel, ChatRequest, Message, Schema, SchemaSupport};
use crate::ssr::search::health;
use crate::ssr::search::searxng::Searxng;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    /// Works, but something is worth knowing (no model configured, no model list).
    Note,
    Problem,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub verdict: Verdict,
    pub subject: &'static str,
    pub text: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mark = match self.verdict {
            Verdict::Ok => "ok  ",
            Verdict::Note => "note",
            Verdict::Problem => "FAIL",
        };
        write!(f, "[{mark}] {}: {}", self.subject, self.text)
    }
}

/// Runs every check.
pub async fn run(config: &Config) -> Vec<Finding> {
    let searxng = Searxng::new(config);
    let search = match health::check(&searxng).await {
        Ok(()) => Finding {
            verdict: Verdict::Ok,
            subject: "SearXNG",
            text: format!("{} answers and has JSON output on", searxng.shown_url()),
        },
        Err(error) => Finding {
            verdict: Verdict::Problem,
            subject: "SearXNG",
            text: crate::ssr::messages::search_error(Lang::En, &error),
        },
    };
    let model = match &config.llm {
        None => Finding {
            verdict: Verdict::Note,
            subject: "model",
            text:
                "no language model configured: answers come from the offline extractive answerer. \
                   Set CITED_LLM_BASE_URL (and CITED_LLM_API_KEY, CITED_LLM_MODEL) to use one"
                    .to_string(),
        },
        Some(llm) => check_model(llm).await,
    };
    let mut findings = vec![search];
    // A model missing from the list may still be served (llama.cpp answers to any name):
    // the probes tell.
    let unlisted = model.text.contains(UNLISTED);
    let reachable = model.verdict != Verdict::Problem || unlisted;
    findings.push(model);
    if let (Some(llm), true) = (&config.llm, reachable) {
        let probes = probe_model(llm, config).await;
        let answers = probes
            .iter()
            .any(|f| f.subject == "streaming" && f.verdict == Verdict::Ok);
        if unlisted && answers {
            if let Some(model) = findings.last_mut() {
                model.verdict = Verdict::Note;
                model.text = format!(
                    "{} is not in the server's model list, but the server answers requests for it (llama.cpp serves its one model under any name)",
                    llm.model
                );
            }
        }
        findings.extend(probes);
    }
    findings
}

/// The placeholder secret key of the SearXNG settings cited ships (`searxng/settings.yml`).
pub const SECRET_PLACEHOLDER: &str = "change-me-openssl-rand-hex-32";

/// A problem when the SearXNG settings at `path` (cited's compose files use
/// `searxng/settings.yml`) still hold the shipped placeholder secret key: SearXNG refuses
/// only its own placeholder, so it would run with a key anyone can read. Nothing when the
/// file is not there (SearXNG is set up elsewhere).
pub fn searxng_secret(path: &std::path::Path) -> Option<Finding> {
    let settings = std::fs::read_to_string(path).ok()?;
    settings.contains(SECRET_PLACEHOLDER).then(|| Finding {
        verdict: Verdict::Problem,
        subject: "SearXNG secret",
        text: format!(
            "{} still has the placeholder secret_key \"{SECRET_PLACEHOLDER}\"; anyone who reads cited's repository knows it. \
             Generate one: sed -i \"s/{SECRET_PLACEHOLDER}/$(openssl rand -hex 32)/\" {}",
            path.display(),
            path.display()
        ),
    })
}

/// Part of the finding for a model the server does not list.
const UNLISTED: &str = "does not offer the model";

/// How long one probe may take.
const PROBE_DEADLINE: Duration = Duration::from_secs(60);

/// What one probe's stream gave.
#[derive(Debug, Default)]
struct Probe {
    text: String,
    pieces: u64,
    tool_calls: usize,
    first_piece: Option<Duration>,
    error: Option<String>,
}

async fn probe(client: &OpenAiClient, request: ChatRequest) -> Probe {
    use futures_util::StreamExt;
    let started = std::time::Instant::now();
    let mut probe = Probe::default();
    let work = async {
        let mut stream = match client.stream(request).await {
            Ok(stream) => stream,
            Err(error) => {
                probe.error = Some(error.to_string());
                return;
            }
        };
        while let Some(event) = stream.next().await {
            match event {
                Ok(ChatEvent::Text(piece) | ChatEvent::Reasoning(piece)) => {
                    probe.first_piece.get_or_insert(started.elapsed());
                    probe.pieces += 1;
                    probe.text.push_str(&piece);
                }
                Ok(ChatEvent::ToolCalls(calls)) => probe.tool_calls += calls.len(),
                Ok(ChatEvent::Done { .. }) => break,
                Err(error) => {
                    probe.error = Some(error.to_string());
                    break;
                }
            }
        }
    };
    if tokio::time::timeout(PROBE_DEADLINE, work).await.is_err() {
        probe.error = Some(format!("no answer within {} s", PROBE_DEADLINE.as_secs()));
    }
    probe
}

/// Asks the model small things, the way each mode will: does it stream, call tools, follow
/// a JSON schema, and how long a context does the server give it (llama.cpp's `/props`).
/// Ends with what each mode will do with this model.
pub async fn probe_model(llm: &LlmConfig, config: &Config) -> Vec<Finding> {
    let client = OpenAiClient::new(
        llm,
        ClientOptions {
            max_retries: 0,
            structured: config.limits.structured,
            ..ClientOptions::default()
        },
    );
    let (streaming, streams) = probe_streaming(&client).await;
    let (tools, calls_tools) = probe_tools(&client).await;
    let (schema, support) = probe_schema(&client).await;
    let mut findings = vec![streaming, tools, schema];
    findings.extend(probe_context(llm, config).await);
    findings.push(modes(streams, calls_tools, support));
    findings
}

impl Finding {
    fn new(verdict: Verdict, subject: &'static str, text: impl Into<String>) -> Finding {
        Finding {
            verdict,
            subject,
            text: text.into(),
        }
    }
}

/// A one-message request of at most `max_tokens`.
fn small_request(text: &str, max_tokens: u32) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::User(text.to_string())],
        max_tokens: Some(max_tokens),
        ..ChatRequest::default()
    }
}

/// Does the model stream text? (Chat and every mode need it.)
async fn probe_streaming(client: &OpenAiClient) -> (Finding, bool) {
    let streamed = probe(client, small_request("Reply with one word: ready", 16)).await;
    let streams = streamed.error.is_none() && streamed.pieces > 0;
    let finding = match (&streamed.error, streamed.first_piece) {
        (Some(error), _) => Finding::new(
            Verdict::Problem,
            "streaming",
            format!("a streamed reply failed: {error}"),
        ),
        (None, None) => Finding::new(Verdict::Problem, "streaming", "the model streamed no text"),
        (None, Some(first)) => Finding::new(
            Verdict::Ok,
            "streaming",
            format!(
                "first token after {} ms, {} pieces",
                first.as_millis(),
                streamed.pieces
            ),
        ),
    };
    (finding, streams)
}

/// Does the model call a search tool when asked to search? (Agent mode.)
async fn probe_tools(client: &OpenAiClient) -> (Finding, bool) {
    let tool = crate::ssr::llm::ToolSpec {
        name: "web_search".to_string(),
        description: "Search the web. Use it for every factual question.".to_string(),
        parameters: serde_json::json!({
            "type": "object",
            "properties": { "query": { "type": "string" } },
            "required": ["query"],
        }),
    };
    let tooled = probe(
        client,
        ChatRequest {
            tools: vec![tool],
            ..small_request("Search the web for the latest Rust release.", 64)
        },
    )
    .await;
    let calls_tools = tooled.tool_calls > 0;
    let finding = match (&tooled.error, calls_tools) {
        (_, true) => Finding::new(Verdict::Ok, "tool calls", "the model called web_search"),
        (Some(error), false) => Finding::new(
            Verdict::Note,
            "tool calls",
            format!("the server refused tools ({error}); Agent mode falls back to search-then-answer"),
        ),
        (None, false) => Finding::new(
            Verdict::Note,
            "tool calls",
            "the model answered without calling web_search when asked to search; for llama.cpp start llama-server with --jinja",
        ),
    };
    (finding, calls_tools)
}

/// Does the server enforce a JSON schema on the reply? (Research's plans and verdicts.)
async fn probe_schema(client: &OpenAiClient) -> (Finding, SchemaSupport) {
    let schema = Schema {
        name: "probe",
        schema: serde_json::json!({
            "type": "object",
            "properties": { "answer": { "type": "string", "maxLength": 40 } },
            "required": ["answer"],
            "additionalProperties": false,
        }),
    };
    let structured = probe(
        client,
        ChatRequest {
            schema: Some(schema),
            ..small_request("What colour is the sky? Answer in JSON.", 48)
        },
    )
    .await;
    let parsed = serde_json::from_str::<Value>(structured.text.trim())
        .ok()
        .and_then(|v| v.get("answer").cloned())
        .is_some();
    let support = client.schema_support();
    let finding = match (support, parsed) {
        (SchemaSupport::Supported, true) => Finding::new(
            Verdict::Ok,
            "JSON schema",
            "the server enforces response_format json_schema",
        ),
        (SchemaSupport::Supported, false) => Finding::new(
            Verdict::Note,
            "JSON schema",
            "the server accepts response_format but the reply did not follow the schema; Research reads replies tolerantly",
        ),
        _ => Finding::new(
            Verdict::Note,
            "JSON schema",
            "no structured output (the server refused response_format, or CITED_LLM_STRUCTURED=off); Research reads replies tolerantly",
        ),
    };
    (finding, support)
}

/// Does the context the server gives the model hold the prompts cited will send? Only
/// servers that say (llama.cpp) are asked.
async fn probe_context(llm: &LlmConfig, config: &Config) -> Option<Finding> {
    let context = server_context(llm).await?;
    // About three characters of prompt per token, plus room for the answer.
    let needed = config.llm_context_chars / 3 + config.limits.max_tokens_answer as usize;
    Some(if context >= needed {
        Finding::new(
            Verdict::Ok,
            "context",
            format!("the server gives the model {context} tokens of context; CITED_LLM_CONTEXT_CHARS={} fits", config.llm_context_chars),
        )
    } else {
        let fits = context.saturating_sub(config.limits.max_tokens_answer as usize) * 3;
        Finding::new(
            Verdict::Note,
            "context",
            format!(
                "the server gives the model {context} tokens of context, less than CITED_LLM_CONTEXT_CHARS={} needs (~{needed}); set CITED_LLM_CONTEXT_CHARS={} or start the server with a larger context (llama-server -c, Ollama num_ctx)",
                config.llm_context_chars,
                fits.max(2000),
            ),
        )
    })
}

/// What each mode will do with this model.
fn modes(streams: bool, calls_tools: bool, support: SchemaSupport) -> Finding {
    let modes = format!(
        "Chat: {}. Agent: {}. Research: {}.",
        if streams {
            "streams answers"
        } else {
            "cannot stream: answers will fail"
        },
        if calls_tools {
            "the model decides when to search"
        } else {
            "the model may answer without searching; such answers are marked and offer 搜索后重答"
        },
        match support {
            SchemaSupport::Supported => "plans and verdicts follow a JSON schema",
            _ => "plans and verdicts are parsed tolerantly, with one retry",
        },
    );
    let verdict = if streams {
        Verdict::Ok
    } else {
        Verdict::Problem
    };
    Finding::new(verdict, "modes", modes)
}

/// The context size llama.cpp's server gives the model (`GET /props`, beside `/v1`).
async fn server_context(llm: &LlmConfig) -> Option<usize> {
    let base = llm.base_url.as_str().trim_end_matches('/');
    let root = base.strip_suffix("/v1").unwrap_or(base);
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .ok()?;
    let mut request = client.get(format!("{root}/props"));
    if let Some(key) = &llm.api_key {
        request = request.bearer_auth(key.expose());
    }
    let body: Value = request.send().await.ok()?.json().await.ok()?;
    body.pointer("/default_generation_settings/n_ctx")
        .or_else(|| body.get("n_ctx"))
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
}

/// Asks the endpoint for its model list: reachable, key accepted, model offered.
pub async fn check_model(llm: &LlmConfig) -> Finding {
    crate::ssr::net::install_crypto_provider();
    let problem = |text: String| Finding {
        verdict: Verdict::Problem,
        subject: "model",
        text,
    };
    let request_url = format!("{}/models", llm.base_url.as_str().trim_end_matches('/'));
    let shown = crate::ssr::config::redacted(&llm.base_url);
    let base = shown.trim_end_matches('/');
    let url = format!("{base}/models");
    let client = match reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
    {
        Ok(client) => client,
        Err(error) => return problem(format!("cannot build an HTTP client: {error}")),
    };
    let mut request = client.get(&request_url);
    if let Some(key) = &llm.api_key {
        request = request.bearer_auth(key.expose());
    }
    let response = match request.send().await {
        Ok(response) => response,
        Err(error) if error.is_timeout() => {
            return problem(format!(
            "{url} did not answer within 10 s: is the model server overloaded or the URL wrong?"
        ))
        }
        Err(error) if error.is_connect() => {
            return problem(format!(
            "cannot connect to {base}: is the model server running (for Ollama: `ollama serve`)? \
                 Check CITED_LLM_BASE_URL"
        ))
        }
        Err(error) => return problem(format!("request to {url} failed: {error}")),
    };
    match response.status() {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            return problem(format!(
                "{base} rejected the API key ({}): check CITED_LLM_API_KEY (or OPENAI_API_KEY)",
                response.status().as_u16()
            ))
        }
        StatusCode::NOT_FOUND => {
            return Finding {
                verdict: Verdict::Note,
                subject: "model",
                text: format!("{url} does not exist, so the model list cannot be checked; chat requests may still work"),
            }
        }
        status if !status.is_success() => return problem(format!("{url} answered {status}")),
        _ => {}
    }
    let ids: Vec<String> = match response.json::<Value>().await {
        Ok(body) => body
            .get("data")
            .or_else(|| body.get("models"))
            .and_then(Value::as_array)
            .map(|models| {
                models
                    .iter()
                    .filter_map(|m| {
                        m.get("id")
                            .or_else(|| m.get("name"))
                            .and_then(Value::as_str)
                    })
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
        Err(_) => {
            return problem(format!(
            "{url} did not answer with JSON: is CITED_LLM_BASE_URL an OpenAI-compatible /v1 URL?"
        ))
        }
    };
    if ids.iter().any(|id| id == &llm.model) {
        Finding {
            verdict: Verdict::Ok,
            subject: "model",
            text: format!("{base} accepts the key and offers {}", llm.model),
        }
    } else {
        let shown: Vec<&str> = ids.iter().take(10).map(String::as_str).collect();
        problem(format!(
            "{base} {UNLISTED} {:?}; set CITED_LLM_MODEL to one it does: {}",
            llm.model,
            if shown.is_empty() {
                "(the list is empty)".to_string()
            } else {
                shown.join(", ")
            }
        ))
    }
}
