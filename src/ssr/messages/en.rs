//! Server messages in English: what a failed search or model call means and how to fix
//! it.

use crate::ssr::llm::LlmError;
use crate::ssr::search::SearchError;

pub const NO_EVIDENCE: &str = "No evidence was found to answer this question, so cited does not guess. Try rephrasing it, adding what you already know, or checking that SearXNG finds relevant pages.";

pub fn search_error(error: &SearchError) -> String {
    match error {
        SearchError::Timeout { url, timeout } => {
            format!("Search timed out: SearXNG ({url}) did not answer within {} s. This answer goes without search; try again later or raise CITED_SEARCH_TIMEOUT_SECS.", timeout.as_secs())
        }
        SearchError::Unreachable { url, .. } => {
            format!("SearXNG is not running at {url}: start it with `docker compose -f searxng/docker-compose.yml up -d`, or point CITED_SEARXNG_URL at your instance.")
        }
        SearchError::JsonDisabled { url } => {
            format!("SearXNG ({url}) has JSON output disabled (403): add `json` to `search.formats` in settings.yml (`formats: [html, json]`), then restart SearXNG.")
        }
        SearchError::RateLimited { url } => {
            format!("SearXNG ({url}) rate-limited cited (429): set `server.limiter: false` in settings.yml, or add cited's IP to `pass_ip` in limiter.toml.")
        }
        SearchError::Redirect { url, location } => {
            format!("SearXNG ({url}) redirected the search to {location}. Queries starting with `!!` jump to external sites; otherwise turn the limiter off (`server.limiter: false`).")
        }
        SearchError::BadRequest { url, message } => {
            format!("SearXNG ({url}) rejected the request: {message}. Check CITED_SEARCH_LANGUAGE.")
        }
        SearchError::Status { url, status } => {
            format!("SearXNG ({url}) answered {status}: check its log with `docker compose -f searxng/docker-compose.yml logs searxng`.")
        }
        SearchError::NotJson { url, content_type } => {
            format!("{url} answered {content_type} instead of JSON: is CITED_SEARXNG_URL really SearXNG, with JSON output enabled?")
        }
        SearchError::Malformed { url, .. } => {
            format!(
                "SearXNG ({url}) sent JSON that cannot be read (perhaps cut off). Try again later."
            )
        }
        SearchError::EnginesFailed { unresponsive } => {
            let names: Vec<&str> = unresponsive.iter().map(|(name, _)| name.as_str()).collect();
            format!("No results: every search engine failed ({}). They may be suspended by CAPTCHAs or rate limits; enable more engines in SearXNG or try again later.", names.join(", "))
        }
        SearchError::Transport { url, .. } => {
            format!("The connection to SearXNG ({url}) failed: check the network, or turn web search off for now.")
        }
    }
}

pub fn llm_error(error: &LlmError) -> String {
    match error {
            LlmError::Unreachable { url, .. } => {
                format!("The language model is unavailable: cannot connect to {url}. Is the model server running (Ollama: `ollama serve`)? Check CITED_LLM_BASE_URL.")
            }
            LlmError::Timeout { url, after } => {
                format!("The language model timed out: {url} did not answer within {} s. Try again later.", after.as_secs())
            }
            LlmError::IdleTimeout { after } => {
                format!("The language model stopped sending for {} s. The answer may be incomplete; try again.", after.as_secs())
            }
            LlmError::Unauthorized { status } => {
                format!("The model server rejected the API key ({status}). Check CITED_LLM_API_KEY (or OPENAI_API_KEY).")
            }
            LlmError::ModelNotFound { model } => {
                format!("The model server has no model named {model}. Set CITED_LLM_MODEL to one it offers (`cited doctor` lists them).")
            }
            LlmError::ContextTooLong { .. } => {
                "The conversation is longer than the model's context window. Start over with /reset, or lower CITED_LLM_CONTEXT_CHARS.".to_string()
            }
            LlmError::RateLimited { retry_after } => {
                let wait = retry_after.map(|d| d.as_secs()).unwrap_or(30);
                format!("The model server is rate limiting (429) and retries did not help. Try again in about {wait} s.")
            }
            LlmError::Server { status, .. } => {
                format!("The model server failed ({status}) and retries did not help. Try again later.")
            }
            LlmError::BadRequest { status, message } => {
                format!("The model server rejected the request ({status}): {message}")
            }
            LlmError::Truncated => {
                "The model's stream was cut before it finished. The answer may be incomplete; try again.".to_string()
            }
            LlmError::Malformed { .. } => {
                "The model server sent data that cannot be read. Is it OpenAI-compatible?"
                        .to_string()
            }
            LlmError::ToolArgs { name, .. } => {
                format!("The model called the tool {name} with invalid arguments.")
            }
            LlmError::Transport { .. } => {
                "The connection to the model server failed. Check the network and try again."
                        .to_string()
            }
        }
}
