//! `cited doctor` against a real SearXNG and a fake model endpoint.

use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

use super::searxng;
use crate::ssr::config::Config;
use crate::ssr::doctor::{self, Verdict};

/// A capable model's streamed replies: a tool call when offered tools, JSON when asked for
/// a schema, else a word.
async fn completions(
    body: String,
) -> Result<([(&'static str, &'static str); 1], String), StatusCode> {
    let request: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    // Like OpenAI: a model it does not have is a 404.
    if request["model"] != "qwen-plus" && request["model"] != "deepseek-chat" {
        return Err(StatusCode::NOT_FOUND);
    }
    let delta = if request.get("tools").is_some() {
        json!({ "tool_calls": [{ "index": 0, "id": "call_1", "type": "function",
            "function": { "name": "web_search", "arguments": "{\"query\": \"rust release\"}" } }] })
    } else if request.get("response_format").is_some() {
        json!({ "content": "{\"answer\": \"blue\"}" })
    } else {
        json!({ "content": "ready" })
    };
    let chunk = json!({ "choices": [{ "index": 0, "delta": delta, "finish_reason": "stop" }] });
    Ok((
        [("content-type", "text/event-stream")],
        format!("data: {chunk}\n\ndata: [DONE]\n\n"),
    ))
}

/// `/v1/models` answering like OpenAI, requiring the key `sk-good`, and a capable
/// `/v1/chat/completions` for the doctor's probes.
async fn fake_models() -> String {
    let app = Router::new()
        .route("/v1/chat/completions", axum::routing::post(completions))
        .route(
        "/v1/models",
        get(|headers: HeaderMap| async move {
            if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some("Bearer sk-good")
            {
                return Err((
                    StatusCode::UNAUTHORIZED,
                    Json(json!({"error": {"message": "Incorrect API key"}})),
                ));
            }
            Ok(Json(
                json!({"object": "list", "data": [{"id": "qwen-plus"}, {"id": "deepseek-chat"}]}),
            ))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

fn config(vars: &[(&str, &str)]) -> Config {
    let (config, warnings) = Config::from_vars(|name| {
        vars.iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.to_string())
    });
    assert!(warnings.is_empty(), "{warnings:?}");
    config
}

fn verdicts(findings: &[doctor::Finding]) -> Vec<(&'static str, Verdict)> {
    findings
        .iter()
        .map(|f| (f.subject, f.verdict.clone()))
        .collect()
}

#[tokio::test]
async fn all_good() {
    let models = fake_models().await;
    let findings = doctor::run(&config(&[
        ("CITED_SEARXNG_URL", &searxng::shared().url),
        ("CITED_LLM_BASE_URL", &models),
        ("CITED_LLM_API_KEY", "sk-good"),
        ("CITED_LLM_MODEL", "qwen-plus"),
    ]))
    .await;
    assert_eq!(
        verdicts(&findings),
        vec![
            ("SearXNG", Verdict::Ok),
            ("model", Verdict::Ok),
            ("streaming", Verdict::Ok),
            ("tool calls", Verdict::Ok),
            ("JSON schema", Verdict::Ok),
            ("modes", Verdict::Ok),
        ],
        "{findings:?}"
    );
    let modes = &findings[5].text;
    assert!(
        modes.contains("the model decides when to search")
            && modes.contains("follow a JSON schema"),
        "{modes}"
    );
}

#[tokio::test]
async fn each_problem_comes_with_its_fix() {
    let models = fake_models().await;
    let findings = doctor::run(&config(&[
        ("CITED_SEARXNG_URL", &searxng::shared_json_disabled().url),
        ("CITED_LLM_BASE_URL", &models),
        ("CITED_LLM_API_KEY", "sk-wrong"),
    ]))
    .await;
    assert_eq!(
        verdicts(&findings),
        vec![("SearXNG", Verdict::Problem), ("model", Verdict::Problem)]
    );
    assert!(
        findings[0].text.contains("search.formats"),
        "{}",
        findings[0]
    );
    assert!(
        findings[1].text.contains("CITED_LLM_API_KEY"),
        "{}",
        findings[1]
    );
    assert!(
        !findings[1].to_string().contains("sk-wrong"),
        "the key never prints"
    );

    let findings = doctor::run(&config(&[
        ("CITED_SEARXNG_URL", &searxng::shared().url),
        ("CITED_LLM_BASE_URL", &models),
        ("CITED_LLM_API_KEY", "sk-good"),
        ("CITED_LLM_MODEL", "gpt-9"),
    ]))
    .await;
    assert_eq!(findings[1].verdict, Verdict::Problem);
    assert!(
        findings[1].text.contains("qwen-plus, deepseek-chat"),
        "{}",
        findings[1]
    );

    let closed = searxng::free_port();
    let findings = doctor::run(&config(&[
        ("CITED_SEARXNG_URL", &searxng::shared().url),
        (
            "CITED_LLM_BASE_URL",
            &format!("http://127.0.0.1:{closed}/v1"),
        ),
    ]))
    .await;
    assert!(
        findings[1].text.contains("is the model server running"),
        "{}",
        findings[1]
    );
}

#[tokio::test]
async fn no_model_is_a_note_not_a_failure() {
    let findings = doctor::run(&config(&[("CITED_SEARXNG_URL", &searxng::shared().url)])).await;
    assert_eq!(
        verdicts(&findings),
        vec![("SearXNG", Verdict::Ok), ("model", Verdict::Note)]
    );
}

#[test]
fn the_shipped_searxng_secret_is_refused_and_a_real_one_passes() {
    // The project's own settings ship the placeholder.
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("searxng/settings.yml");
    let finding = doctor::searxng_secret(&shipped).expect("the shipped placeholder is found");
    assert_eq!(finding.verdict, Verdict::Problem);
    assert!(finding.text.contains("openssl rand -hex 32"), "{finding}");
    // After the sed the finding is gone; without the file there is nothing to say.
    let dir = std::env::temp_dir().join(format!("cited-doctor-secret-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let settings = dir.join("settings.yml");
    let fixed = std::fs::read_to_string(&shipped)
        .unwrap()
        .replace(doctor::SECRET_PLACEHOLDER, &"ab".repeat(32));
    std::fs::write(&settings, fixed).unwrap();
    assert_eq!(doctor::searxng_secret(&settings), None);
    assert_eq!(doctor::searxng_secret(&dir.join("missing.yml")), None);
    std::fs::remove_dir_all(&dir).unwrap();
}
