//! The model picker: every configured endpoint's `/models`, answers sent to the picked
//! model, planning-type calls to `CITED_LLM_MODEL_FAST`, the choice kept per conversation,
//! and `update_settings` refusing what is not offered. Fake OpenAI endpoints record which
//! model each call asked for.

use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{browser, searxng, TestServer};
use crate::model::{Exchange, Mode, ModelChoices, Settings};
use crate::ssr::pipeline::TurnInput;
use crate::ssr::state::AppState;

/// One fake endpoint: the models it lists, the key it wants, the models it was asked for.
struct Endpoint {
    models: Vec<&'static str>,
    key: Option<&'static str>,
    asked: Mutex<Vec<String>>,
}

fn authorized(endpoint: &Endpoint, headers: &HeaderMap) -> bool {
    let sent = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    endpoint
        .key
        .is_none_or(|key| sent == Some(format!("Bearer {key}").as_str()))
}

async fn list(State(endpoint): State<Arc<Endpoint>>, headers: HeaderMap) -> Response {
    if !authorized(&endpoint, &headers) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let data: Vec<Value> = endpoint
        .models
        .iter()
        .map(|id| json!({ "id": id, "object": "model" }))
        .collect();
    Json(json!({ "object": "list", "data": data })).into_response()
}

async fn complete(
    State(endpoint): State<Arc<Endpoint>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if !authorized(&endpoint, &headers) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let model = body["model"].as_str().unwrap_or_default().to_string();
    endpoint.asked.lock().unwrap().push(model.clone());
    let text = format!("Written by {model} [1].");
    let chunk =
        json!({ "choices": [{ "index": 0, "delta": { "content": text }, "finish_reason": null }] });
    let end = json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "stop" }] });
    (
        [(header::CONTENT_TYPE, "text/event-stream")],
        format!("data: {chunk}\n\ndata: {end}\n\ndata: [DONE]\n\n"),
    )
        .into_response()
}

async fn endpoint(models: Vec<&'static str>, key: Option<&'static str>) -> (String, Arc<Endpoint>) {
    let endpoint = Arc::new(Endpoint {
        models,
        key,
        asked: Mutex::new(Vec::new()),
    });
    let app = Router::new()
        .route("/v1/models", get(list))
        .route("/v1/chat/completions", post(complete))
        .with_state(Arc::clone(&endpoint));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/v1"), endpoint)
}

/// Three endpoints: `main` (alpha answers, beta is the fast model), `second` behind a key,
/// and `gone`, which does not answer at all.
struct Endpoints {
    main: Arc<Endpoint>,
    second: Arc<Endpoint>,
    vars: Vec<(&'static str, String)>,
}

async fn endpoints() -> Endpoints {
    let (main_url, main) = endpoint(vec!["beta", "alpha"], None).await;
    let (second_url, second) = endpoint(vec!["gamma", "bad|id", ""], Some("k2")).await;
    let gone = format!("http://127.0.0.1:{}/v1", searxng::free_port());
    Endpoints {
        main,
        second,
        vars: vec![
            ("CITED_LLM_BASE_URL", main_url),
            ("CITED_LLM_MODEL", "alpha".into()),
            ("CITED_LLM_MODEL_FAST", "beta".into()),
            (
                "CITED_LLM_ENDPOINTS",
                format!("second={second_url}; gone={gone}"),
            ),
            ("CITED_LLM_API_KEY_SECOND", "k2".into()),
            ("CITED_LLM_MODEL_GONE", "remembered".into()),
        ],
    }
}

impl Endpoints {
    fn vars(&self) -> Vec<(&str, &str)> {
        self.vars.iter().map(|(k, v)| (*k, v.as_str())).collect()
    }
}

#[tokio::test]
async fn the_picker_lists_every_endpoints_models() {
    let endpoints = endpoints().await;
    let state = AppState::new(super::pipeline_config(
        "http://127.0.0.1:9",
        &endpoints.vars(),
    ));
    let options = state.models.list().await;
    let ids: Vec<&str> = options.iter().map(|o| o.id.as_str()).collect();
    // The configured model first; ids with `|` or empty are not offered; an endpoint that
    // cannot list offers its configured model.
    assert_eq!(
        ids,
        ["main|alpha", "main|beta", "second|gamma", "gone|remembered"]
    );
    let labels: Vec<&str> = options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(
        labels,
        ["alpha", "beta", "second · gamma", "gone · remembered"]
    );
    assert_eq!(state.models.default_id(), Some("main|alpha"));
    assert!(state.models.offers("second|gamma").await);
    assert!(!state.models.offers("second|delta").await);

    // Offline there is nothing to pick.
    let offline = AppState::new(super::pipeline_config("http://127.0.0.1:9", &[]));
    assert!(offline.models.list().await.is_empty());
    assert_eq!(offline.models.default_id(), None);
    assert!(offline.models.chosen("main|alpha").is_none());
}

async fn answer(state: &AppState, model: Option<&str>) -> Exchange {
    let session = super::session();
    let input = TurnInput {
        model: model.map(str::to_string),
        ..TurnInput::standalone("What is tokio?".into(), Mode::Chat)
    };
    let (sender, mut receiver) = mpsc::channel(256);
    tokio::spawn(async move { while receiver.recv().await.is_some() {} });
    crate::ssr::answer::run(
        state.clone(),
        session,
        input,
        CancellationToken::new(),
        sender,
    )
    .await
}

#[tokio::test]
async fn answers_go_to_the_picked_model_and_the_rest_to_the_fast_one() {
    let endpoints = endpoints().await;
    let mut vars = endpoints.vars();
    vars.push(("CITED_RELATED", "model"));
    let state = AppState::new(super::pipeline_config(&searxng::shared().url, &vars));

    let picked = answer(&state, Some("second|gamma")).await;
    assert_eq!(picked.model.as_deref(), Some("second|gamma"));
    assert!(
        picked.answer.contains("Written by gamma"),
        "{}",
        picked.answer
    );
    assert_eq!(*endpoints.second.asked.lock().unwrap(), ["gamma"]);
    // The follow-up questions are the fast model's, on the main endpoint.
    assert_eq!(*endpoints.main.asked.lock().unwrap(), ["beta"]);

    endpoints.main.asked.lock().unwrap().clear();
    let default = answer(&state, None).await;
    assert_eq!(default.model.as_deref(), Some("main|alpha"));
    assert_eq!(*endpoints.main.asked.lock().unwrap(), ["alpha", "beta"]);

    // A choice whose endpoint is no longer configured falls back to the default.
    endpoints.main.asked.lock().unwrap().clear();
    let stale = answer(&state, Some("removed|gamma")).await;
    assert_eq!(stale.model.as_deref(), Some("main|alpha"));
    assert_eq!(*endpoints.main.asked.lock().unwrap(), ["alpha", "beta"]);
    assert_eq!(endpoints.second.asked.lock().unwrap().len(), 1);
}

#[test]
fn opening_a_conversation_picks_its_last_model() {
    let session = super::session();
    session.update_settings(|settings| settings.model = Some("main|alpha".into()));
    let exchanges = vec![
        Exchange {
            model: Some("second|gamma".into()),
            ..Exchange::default()
        },
        Exchange::default(),
    ];
    session.open_conversation("c1".into(), exchanges, 0, crate::citation::Registry::new());
    assert_eq!(session.settings().model.as_deref(), Some("second|gamma"));
    // A conversation no model answered in keeps the current choice.
    session.open_conversation(
        "c2".into(),
        vec![Exchange::default()],
        0,
        crate::citation::Registry::new(),
    );
    assert_eq!(session.settings().model.as_deref(), Some("second|gamma"));
}

async fn call(
    client: &reqwest::Client,
    server: &TestServer,
    path: &str,
    form: &[(&str, &str)],
) -> reqwest::Response {
    client
        .post(server.url(path))
        .form(form)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn settings_take_offered_models_and_valid_sites_only() {
    let endpoints = endpoints().await;
    let server = TestServer::start(&endpoints.vars()).await;
    let client = browser();

    let choices: ModelChoices = call(&client, &server, "/api/list_models", &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(choices.options.len(), 4);
    assert_eq!(choices.current.as_deref(), Some("main|alpha"));

    let saved: Settings = call(
        &client,
        &server,
        "/api/update_settings",
        &[("model", "second|gamma")],
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(saved.model.as_deref(), Some("second|gamma"));
    let choices: ModelChoices = call(&client, &server, "/api/list_models", &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(choices.current.as_deref(), Some("second|gamma"));

    let refused = call(
        &client,
        &server,
        "/api/update_settings",
        &[("model", "main|nope")],
    )
    .await;
    assert_eq!(refused.status(), 400);
    assert!(refused.text().await.unwrap().contains("main|nope"));
    let cleared: Settings = call(
        &client,
        &server,
        "/api/update_settings",
        &[("model", "default")],
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(cleared.model, None);

    let site: Settings = call(
        &client,
        &server,
        "/api/update_settings",
        &[("site", " Docs.RS ")],
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(site.site.as_deref(), Some("docs.rs"));
    let refused = call(
        &client,
        &server,
        "/api/update_settings",
        &[("site", "not a site")],
    )
    .await;
    assert_eq!(refused.status(), 400);
    let kept: Settings = call(&client, &server, "/api/get_settings", &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        kept.site.as_deref(),
        Some("docs.rs"),
        "a refused site changes nothing"
    );
    let any: Settings = call(&client, &server, "/api/update_settings", &[("site", "any")])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(any.site, None);
}
