//! The models a user can pick (per conversation): every configured endpoint's own list
//! (`GET /models`), and the client for a choice. Answers go to the chosen model; planning,
//! verifying, titles and follow-ups to `CITED_LLM_MODEL_FAST` when it is set
//! ([`super::routed::Routed`]). Every client shares the model-call permits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::Url;

use super::extractive::Extractive;
use super::limited::{CallPermits, Limited};
use super::openai::{ClientOptions, OpenAiClient};
use super::routed::Routed;
use super::ChatModel;
use crate::model::ModelOption;
use crate::ssr::config::{LlmConfig, Secret, MAIN_ENDPOINT};

/// How long a listing is reused.
const LISTING_TTL: Duration = Duration::from_secs(60);
/// How long an endpoint may take to list its models.
const LISTING_TIMEOUT: Duration = Duration::from_secs(5);
/// The most models taken from one endpoint's list.
const MAX_LISTED: usize = 200;

/// One endpoint the picker draws from.
struct Source {
    name: String,
    base_url: Url,
    api_key: Option<Secret>,
    /// The endpoint's configured model: listed even when its `/models` fails.
    model: Option<String>,
}

pub struct Models {
    sources: Vec<Source>,
    /// `main|CITED_LLM_MODEL`; `None` offline.
    default_id: Option<String>,
    /// What answers when nothing (or something no longer configured) was picked.
    default: Arc<dyn ChatModel>,
    /// `CITED_LLM_MODEL_FAST`'s client.
    fast: Option<Arc<dyn ChatModel>>,
    permits: Arc<dyn CallPermits>,
    options: ClientOptions,
    /// One client per chosen id, so each keeps what it learnt of its server.
    clients: Mutex<HashMap<String, Arc<dyn ChatModel>>>,
    listed: tokio::sync::Mutex<Option<(Instant, Vec<ModelOption>)>>,
    http: reqwest::Client,
}

/// `endpoint|model`.
pub fn model_id(endpoint: &str, model: &str) -> String {
    format!("{endpoint}|{model}")
}

fn label(endpoint: &str, model: &str) -> String {
    if endpoint == MAIN_ENDPOINT {
        model.to_string()
    } else {
        format!("{endpoint} · {model}")
    }
}

impl Models {
    /// Offline (`llm` is `None`) there is nothing to pick and the extractive answerer answers.
    pub fn new(
        llm: Option<&LlmConfig>,
        options: ClientOptions,
        permits: Arc<dyn CallPermits>,
    ) -> Models {
        crate::ssr::net::install_crypto_provider();
        let http = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .timeout(LISTING_TIMEOUT)
            .user_agent(concat!("cited/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("a client with rustls and default settings always builds");
        let limited = |config: &LlmConfig| -> Arc<dyn ChatModel> {
            Arc::new(Limited {
                inner: Arc::new(OpenAiClient::new(config, options.clone())),
                permits: Arc::clone(&permits),
            })
        };
        let Some(llm) = llm else {
            return Models {
                sources: Vec::new(),
                default_id: None,
                default: Arc::new(Limited {
                    inner: Arc::new(Extractive),
                    permits: Arc::clone(&permits),
                }),
                fast: None,
                permits,
                options,
                clients: Mutex::new(HashMap::new()),
                listed: tokio::sync::Mutex::new(None),
                http,
            };
        };
        let main = limited(llm);
        let fast = llm.fast_model.as_ref().map(|model| {
            limited(&LlmConfig {
                model: model.clone(),
                ..llm.clone()
            })
        });
        let mut sources = vec![Source {
            name: MAIN_ENDPOINT.to_string(),
            base_url: llm.base_url.clone(),
            api_key: llm.api_key.clone(),
            model: Some(llm.model.clone()),
        }];
        sources.extend(llm.more.iter().map(|endpoint| Source {
            name: endpoint.name.clone(),
            base_url: endpoint.base_url.clone(),
            api_key: endpoint.api_key.clone(),
            model: endpoint.model.clone(),
        }));
        let default_id = model_id(MAIN_ENDPOINT, &llm.model);
        let clients = HashMap::from([(default_id.clone(), Arc::clone(&main))]);
        Models {
            sources,
            default_id: Some(default_id),
            default: main,
            fast,
            permits,
            options,
            clients: Mutex::new(clients),
            listed: tokio::sync::Mutex::new(None),
            http,
        }
    }

    /// The model that answers when nothing was picked (`CITED_LLM_MODEL`, with the fast
    /// model for the rest), or the offline answerer.
    pub fn default_model(&self) -> Arc<dyn ChatModel> {
        self.routed(Arc::clone(&self.default))
    }

    /// The model for `id` (`endpoint|model`), or `None` when its endpoint is not
    /// configured (any more).
    pub fn chosen(&self, id: &str) -> Option<Arc<dyn ChatModel>> {
        let (endpoint, model) = id.split_once('|')?;
        let source = self.sources.iter().find(|s| s.name == endpoint)?;
        if model.trim().is_empty() {
            return None;
        }
        let answer = {
            let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
            let client = clients.entry(id.to_string()).or_insert_with(|| {
                let config = LlmConfig {
                    base_url: source.base_url.clone(),
                    api_key: source.api_key.clone(),
                    model: model.to_string(),
                    fast_model: None,
                    more: Vec::new(),
                };
                Arc::new(Limited {
                    inner: Arc::new(OpenAiClient::new(&config, self.options.clone())),
                    permits: Arc::clone(&self.permits),
                })
            });
            Arc::clone(client)
        };
        Some(self.routed(answer))
    }

    fn routed(&self, answer: Arc<dyn ChatModel>) -> Arc<dyn ChatModel> {
        match &self.fast {
            Some(fast) => Arc::new(Routed {
                answer,
                fast: Arc::clone(fast),
            }),
            None => answer,
        }
    }

    /// Every endpoint's models, the main endpoint's configured model first. An endpoint
    /// that cannot list them offers its configured model alone. Kept a minute.
    pub async fn list(&self) -> Vec<ModelOption> {
        if self.sources.is_empty() {
            return Vec::new();
        }
        let mut listed = self.listed.lock().await;
        if let Some((at, options)) = listed.as_ref() {
            if at.elapsed() < LISTING_TTL {
                return options.clone();
            }
        }
        let lists =
            futures_util::future::join_all(self.sources.iter().map(|source| self.listing(source)))
                .await;
        let mut options: Vec<ModelOption> = Vec::new();
        for (source, names) in self.sources.iter().zip(lists) {
            let configured = source.model.iter().cloned();
            for model in configured.chain(names) {
                let id = model_id(&source.name, &model);
                if options.iter().all(|o| o.id != id) {
                    options.push(ModelOption {
                        label: label(&source.name, &model),
                        id,
                    });
                }
            }
        }
        *listed = Some((Instant::now(), options.clone()));
        options
    }

    /// Whether `id` is one the picker offers now.
    pub async fn offers(&self, id: &str) -> bool {
        self.list().await.iter().any(|option| option.id == id)
    }

    /// The default choice (`main|CITED_LLM_MODEL`); `None` offline.
    pub fn default_id(&self) -> Option<&str> {
        self.default_id.as_deref()
    }

    /// `GET <base>/models`: the ids in `data`, or none when it fails.
    async fn listing(&self, source: &Source) -> Vec<String> {
        let url = format!("{}/models", source.base_url.as_str().trim_end_matches('/'));
        let mut request = self.http.get(&url);
        if let Some(key) = &source.api_key {
            request = request.bearer_auth(key.expose());
        }
        let body = match request.send().await {
            Ok(response) if response.status().is_success() => {
                response.json::<serde_json::Value>().await
            }
            Ok(response) => {
                tracing::warn!(endpoint = %source.name, status = %response.status(), "the model endpoint would not list its models");
                return Vec::new();
            }
            Err(error) => {
                tracing::warn!(endpoint = %source.name, error = %error.without_url(), "cannot list the endpoint's models");
                return Vec::new();
            }
        };
        let Ok(body) = body else {
            tracing::warn!(endpoint = %source.name, "the endpoint's model list is not JSON");
            return Vec::new();
        };
        body.get("data")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.get("id")?.as_str())
            .map(str::trim)
            .filter(|id| !id.is_empty() && id.len() <= 200 && !id.contains('|'))
            .take(MAX_LISTED)
            .map(str::to_string)
            .collect()
    }
}
