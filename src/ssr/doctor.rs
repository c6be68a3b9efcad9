//! `cited doctor`: checks SearXNG and the model endpoint and says, for each problem, what
//! to do about it. Returns a report; `main` prints it and turns it into the exit code.

use std::fmt;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use crate::model::Lang;
use crate::ssr::config::{Config, LlmConfig};
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
    vec![search, model]
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
            "{base} does not offer the model {:?}; set CITED_LLM_MODEL to one it does: {}",
            llm.model,
            if shown.is_empty() {
                "(the list is empty)".to_string()
            } else {
                shown.join(", ")
            }
        ))
    }
}
