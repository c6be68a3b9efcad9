//! The HTTP server: routes, middleware, the knowledge pages and graceful shutdown.
//!
//! `run` takes a listener that is already bound and a shutdown future, so tests start the
//! real server on `127.0.0.1:0` and `main` passes SIGINT/SIGTERM.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::MatchedPath;
use axum::http::{header, HeaderValue, Request, StatusCode};
use axum::routing::{get, MethodFilter};
use axum::{middleware, Router};
use tokio::net::TcpListener;
use tower::ServiceBuilder;
use tower_http::compression::predicate::{DefaultPredicate, NotForContentType, Predicate};
use tower_http::compression::CompressionLayer;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

use crate::app::{shell, Page};
use crate::ssr::state::AppState;

pub mod accounts;
pub mod files_routes;
pub mod guard;
pub mod history_routes;
pub mod knowledge_page;
pub mod mcp_routes;
pub mod media_routes;
pub mod openai_api;
pub mod routes;
pub mod session_layer;

/// How long a handler may take to produce response headers. Streamed bodies (answers) are
/// not cut by it: they end on their own deadlines.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// How often idle sessions are swept.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// The app's routes; what the middleware needs to know of each path is declared in
/// [`routes`].
pub fn router(state: AppState) -> Router {
    // The sealed assets: content-hashed names, so cached for a year; `.br`/`.gz` siblings
    // sent by Accept-Encoding.
    let pkg = ServiceBuilder::new()
        .layer(SetResponseHeaderLayer::overriding(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=31536000, immutable"),
        ))
        .service(
            ServeDir::new(state.config.site_root.join("pkg"))
                .precompressed_br()
                .precompressed_gzip(),
        );
    // Pages and JSON are compressed on the fly; an answer's stream (octet-stream) is not,
    // since compressing would hold its tokens back.
    let compress = CompressionLayer::new().compress_when(
        DefaultPredicate::new().and(NotForContentType::const_new("application/octet-stream")),
    );
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .nest_service("/pkg", pkg)
        .route("/new", axum::routing::post(history_routes::new_chat))
        .route("/login", get(accounts::show).post(accounts::submit))
        .route("/logout", axum::routing::post(accounts::sign_out))
        .route("/v1/models", get(openai_api::models))
        .route("/openapi.json", get(openai_api::openapi))
        .route(
            "/v1/chat/completions",
            axum::routing::post(openai_api::completions),
        )
        .route_service("/mcp", mcp_routes::service(&state))
        .route("/c/{id}/export.md", get(history_routes::export))
        .route(
            "/c/{id}/citations.{ext}",
            get(history_routes::citations_file),
        )
        .route("/media/image", get(media_routes::image))
        .route("/media/icon", get(media_routes::icon))
        // Its limit is `CITED_FILE_MAX_MB`, kept by `guard::body_limit`, not axum's 2 MB.
        .route(
            "/api/files",
            axum::routing::post(files_routes::upload)
                .layer(axum::extract::DefaultBodyLimit::disable()),
        )
        .route("/api/files/list", axum::routing::post(files_routes::list))
        .route(
            "/api/files/remove",
            axum::routing::post(files_routes::remove),
        )
        .route(
            "/knowledge/{*path}",
            get(crate::ssr::web::knowledge_page::show),
        )
        .merge(pages(&state))
        .fallback(leptos_axum::file_and_error_handler_with_context::<
            AppState,
            _,
        >(page_context, shell))
        // Pages are never reused without asking (the assets they name change with a build).
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-cache"),
        ))
        .layer(compress)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            session_layer::attach,
        ))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ))
        // 413 before a handler reads anything: from Content-Length at once, or as soon as a
        // streamed body passes the limit (a file upload's limit is the file size's).
        .layer(middleware::from_fn_with_state(
            state.clone(),
            guard::body_limit,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), guard::guard))
        .layer(
            TraceLayer::new_for_http().make_span_with(|request: &Request<_>| {
                let route = request
                    .extensions()
                    .get::<MatchedPath>()
                    .map(MatchedPath::as_str)
                    .unwrap_or("-");
                let id = request
                    .headers()
                    .get("x-request-id")
                    .and_then(|id| id.to_str().ok())
                    .unwrap_or("-");
                // A share link's token is a capability: logged as its route, never itself.
                let path = request.uri().path();
                let path = if path.starts_with("/s/") { route } else { path };
                tracing::info_span!(
                    "request",
                    id,
                    method = %request.method(),
                    path = %path,
                    route,
                )
            }),
        )
        // Every request gets an id (a proxy's `X-Request-Id` is kept), in its log span and
        // its response.
        .layer(tower_http::request_id::PropagateRequestIdLayer::x_request_id())
        .layer(tower_http::request_id::SetRequestIdLayer::x_request_id(
            MintRequestId,
        ))
        .layer(middleware::map_request(plain_request_id))
        .with_state(state)
}

/// A request id from outside (a proxy's) is kept only when it is short and plain
/// (letters, digits, `-`, `_`, at most 64); otherwise one is minted.
async fn plain_request_id(mut request: axum::extract::Request) -> axum::extract::Request {
    let plain = request
        .headers()
        .get("x-request-id")
        .and_then(|id| id.to_str().ok())
        .is_some_and(|id| {
            !id.is_empty()
                && id.len() <= 64
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    if !plain {
        request.headers_mut().remove("x-request-id");
    }
    request
}

/// Request ids: 64 random bits in hex.
#[derive(Clone, Copy)]
struct MintRequestId;

impl tower_http::request_id::MakeRequestId for MintRequestId {
    fn make_request_id<B>(
        &mut self,
        _request: &Request<B>,
    ) -> Option<tower_http::request_id::RequestId> {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).ok()?;
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        HeaderValue::from_str(&id)
            .ok()
            .map(tower_http::request_id::RequestId::new)
    }
}

/// The pages (`app::Page`), rendered whole and in order so they read the same without
/// JavaScript, and the server functions; both run with the state and [`page_context`].
fn pages(state: &AppState) -> Router<AppState> {
    // Reactive tasks in a page render and server functions run on tokio (an error means
    // it was set already).
    let _ = any_spawner::Executor::init_tokio();
    let context = {
        let state = state.clone();
        move || {
            leptos::prelude::provide_context(state.clone());
            page_context();
        }
    };
    let options = state.leptos_options.clone();
    // The paths `app::Page::of` names; any other renders through the fallback, as a 404.
    let page =
        leptos_axum::render_app_to_stream_in_order_with_context(context.clone(), move || {
            shell(options.clone())
        });
    let mut router = Router::new()
        .route("/", get(page.clone()))
        .route("/c/{id}", get(page.clone()))
        // A share link is a capability: its page is never indexed.
        .route(
            "/s/{token}",
            get(page).layer(tower_http::set_header::SetResponseHeaderLayer::overriding(
                axum::http::HeaderName::from_static("x-robots-tag"),
                axum::http::HeaderValue::from_static("noindex, nofollow"),
            )),
        );
    for (path, method) in server_fn::axum::server_fn_paths() {
        let context = context.clone();
        let handler = move |request: axum::extract::Request| {
            leptos_axum::handle_server_fns_with_context(context.clone(), request)
        };
        // Server functions use POST or GET, which a filter always has.
        if let Ok(filter) = MethodFilter::try_from(method) {
            router = router.route(path, axum::routing::on(filter, handler));
        }
    }
    router
}

/// What every page render gets: the page its path names (`app::Page`), the request's UI
/// language, and the nonce the CSP header names, which the hydration script carries.
fn page_context() {
    use leptos::prelude::{provide_context, use_context};
    // leptos_axum provides the request's parts before this runs.
    if let Some(parts) = use_context::<axum::http::request::Parts>() {
        let uri = &parts.uri;
        provide_context(Page::of(uri.path(), uri.query().unwrap_or_default()));
    }
    provide_context(crate::ssr::request::request_lang());
    if let Some(nonce) = crate::ssr::request::request_nonce() {
        leptos::prelude::provide_context(leptos::nonce::Nonce::from_value(nonce));
    }
}

async fn healthz() -> &'static str {
    "ok"
}

/// Ready to serve: not shutting down, and the database and Redis (when configured) answer;
/// 503 otherwise. One line per dependency says which is failing, SearXNG (when answers
/// search the web) and the model (when one is configured) included; those two only degrade
/// answers, so they do not take the instance out of rotation (every instance shares them).
/// The lines name the kind of failure, never an address; the log has the details. SearXNG
/// and model checks are cached for 30 s, so probes never load them.
async fn readyz(
    axum::extract::State(state): axum::extract::State<AppState>,
) -> (StatusCode, String) {
    if state.shutdown.is_cancelled() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting down\n".to_string(),
        );
    }
    // Each check: what its line says when it passes, or (the kind of failure, details).
    // Live, and bounded: a probe never waits on a database that hangs.
    let database = async {
        match tokio::time::timeout(Duration::from_secs(2), state.store.ping()).await {
            Ok(Ok(())) => Ok("ok".to_string()),
            Ok(Err(error)) => Err(("unreachable".to_string(), error.to_string())),
            Err(_) => Err((
                "unreachable".to_string(),
                "no answer within 2 s".to_string(),
            )),
        }
    };
    let redis = async {
        if !state.shared.is_shared() {
            return Ok("not used (one process)".to_string());
        }
        state
            .shared
            .ping()
            .await
            .map(|()| "ok".to_string())
            .map_err(|error| ("unreachable".to_string(), error))
    };
    let searxng = async {
        if state.config.sources == crate::model::Sources::Knowledge {
            return Ok("not used (CITED_SOURCES=knowledge)".to_string());
        }
        state
            .search_health
            .status(Duration::from_secs(30))
            .await
            .map(|_| "ok".to_string())
            .map_err(|error| (error.kind().to_string(), error.to_string()))
    };
    let model = async {
        match &state.config.llm {
            None => Ok("not used (offline answerer)".to_string()),
            Some(llm) => model_ready(llm)
                .await
                .map(|()| "ok".to_string())
                .map_err(|error| ("unreachable".to_string(), error)),
        }
    };
    let (database, redis, searxng, model) = tokio::join!(database, redis, searxng, model);
    let mut ready = true;
    let mut body = String::new();
    for (name, result, required) in [
        ("database", database, true),
        ("redis", redis, true),
        ("searxng", searxng, false),
        ("model", model, false),
    ] {
        match result {
            Ok(text) => body.push_str(&format!("{name}: {text}\n")),
            Err((kind, error)) => {
                ready &= !required;
                tracing::warn!(dependency = name, %error, "a dependency is failing");
                body.push_str(&format!("{name}: failing ({kind})\n"));
            }
        }
    }
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, body)
}

/// Whether the model endpoint answers its model list (`cited doctor`'s check), remembered
/// for 30 s per endpoint.
async fn model_ready(llm: &crate::ssr::config::LlmConfig) -> Result<(), String> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::time::Instant;
    type Checked = Mutex<HashMap<String, (Instant, Result<(), String>)>>;
    static CHECKED: std::sync::OnceLock<Checked> = std::sync::OnceLock::new();
    let checked = CHECKED.get_or_init(Checked::default);
    let key = llm.base_url.to_string();
    let remembered = checked
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(&key)
        .filter(|(at, _)| at.elapsed() < Duration::from_secs(30))
        .map(|(_, result)| result.clone());
    if let Some(result) = remembered {
        return result;
    }
    let finding = crate::ssr::doctor::check_model(llm).await;
    let result = match finding.verdict {
        crate::ssr::doctor::Verdict::Problem => Err(finding.text),
        _ => Ok(()),
    };
    checked
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(key, (Instant::now(), result.clone()));
    result
}

/// Load in Prometheus's text format: answers running and queued, sessions in memory, free
/// model-call and page-read slots. Counts only; nothing about anyone.
async fn metrics(
    axum::extract::State(state): axum::extract::State<AppState>,
) -> impl axum::response::IntoResponse {
    let limits = &state.limits;
    let (answers, answers_queued) = limits.answers.load();
    let (research, research_queued) = limits.research.load();
    let capacity = &limits.capacity;
    let gauges = [
        ("cited_answers_running", "Answers being written.", answers),
        (
            "cited_answers_queued",
            "Answers waiting for a slot.",
            answers_queued,
        ),
        (
            "cited_answers_capacity",
            "CITED_MAX_ANSWERS.",
            capacity.answers,
        ),
        (
            "cited_research_running",
            "Research answers being written.",
            research,
        ),
        (
            "cited_research_queued",
            "Research answers waiting for a slot.",
            research_queued,
        ),
        (
            "cited_model_calls_free",
            "Model-call slots free.",
            limits.model_calls.available_permits(),
        ),
        (
            "cited_page_reads_free",
            "Page-read slots free.",
            limits.page_reads.available_permits(),
        ),
        (
            "cited_sessions",
            "Browser sessions in memory.",
            state.sessions.len(),
        ),
    ];
    let mut body = String::new();
    for (name, help, value) in gauges {
        body.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}\n"
        ));
    }
    if let Some((running, queued)) = state.shared.gate_load("model-calls").await {
        for (name, help, value) in [
            (
                "cited_shared_model_calls_running",
                "Model calls running on every instance (CITED_MAX_MODEL_CALLS counts them all).",
                running,
            ),
            (
                "cited_shared_model_calls_queued",
                "Model calls waiting for a slot, on every instance.",
                queued,
            ),
        ] {
            body.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}\n"
            ));
        }
    }
    body.push_str(&crate::ssr::metrics::metrics().text());
    body.push_str(&format!(
        "# HELP cited_build_info The running version.\n# TYPE cited_build_info gauge\ncited_build_info{{version=\"{}\"}} 1\n",
        env!("CARGO_PKG_VERSION")
    ));
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
}

/// How long shutdown waits for running answers to stop and be saved, and then for open
/// connections to finish.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Serves until `shutdown` resolves. Then it stops taking connections, stops every running
/// answer (each is saved as stopped), waits for them, and lets open connections finish.
///
/// Its own accept loop rather than `axum::serve`, for what that lacks: a header-read
/// timeout (`CITED_HEADER_TIMEOUT_SECS`, which also closes silent and idle keep-alive
/// connections), a cap on open connections (`CITED_MAX_CONNECTIONS`; more wait in the kernel's queue) and
/// on those of one address (`CITED_MAX_CONNECTIONS_PER_ADDRESS`; more are closed), and
/// the peer address of each request (for rate limits and proxy sign-in).
pub async fn run(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use tower::ServiceExt;

    let sweeper = tokio::spawn(sweep(state.clone()));
    // Stop signals from other instances, and the reaper of answers whose instance died.
    let log = Arc::clone(&state.log);
    state.shared.start(
        Arc::clone(&state.store),
        state.shutdown.clone(),
        Arc::new(move |key: &str| log.stop_here(key)),
    );
    let capacity = state.config.capacity.clone();
    // HTTP/1.1 only: browsers speak HTTP/2 only over TLS, which a proxy in front ends, and
    // telling the versions apart would first wait for bytes without any timeout. The
    // header timer starts as soon as a connection is open, so a silent one is closed too.
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(capacity.header_timeout)
        .max_buf_size(64 * 1024);
    let app = router(state.clone());
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let open = std::sync::Arc::new(tokio::sync::Semaphore::new(capacity.connections));
    let per_address = PerAddress::new(
        capacity.connections_per_address,
        state.config.access.trusted_proxies.clone(),
    );
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = open.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: wait instead of spinning.
                    tracing::warn!(%error, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // One address cannot hold every connection: past its share, its new ones are closed.
        let Some(held) = per_address.admit(peer.ip()) else {
            tracing::debug!(address = %peer.ip(), "too many connections from one address");
            crate::ssr::metrics::metrics()
                .refused
                .with_label_values(&["connections_per_address"])
                .inc();
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let service =
            hyper::service::service_fn(move |mut request: Request<hyper::body::Incoming>| {
                request
                    .extensions_mut()
                    .insert(axum::extract::ConnectInfo(peer));
                app.clone().oneshot(request)
            });
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::trace!(%error, "connection ended with an error");
            }
            drop(held);
            drop(permit);
        });
    }
    drop(listener);
    stop(&state, graceful).await;
    sweeper.abort();
    Ok(())
}

/// Every minute: idle sessions and unused limiter entries dropped, and hourly (and at
/// start) signed-in browsers past their lifetimes signed out.
async fn sweep(state: AppState) {
    let mut ticks = tokio::time::interval(SWEEP_EVERY);
    let mut swept = 0u32;
    loop {
        ticks.tick().await;
        let dropped = state.sessions.sweep(std::time::Instant::now());
        state.limits.sweep();
        if dropped > 0 {
            tracing::debug!(dropped, "expired idle sessions");
        }
        if swept.is_multiple_of(60) {
            match state.store.expire_browsers().await {
                Ok(0) => {}
                Ok(expired) => tracing::info!(expired, "signed out browsers past their lifetime"),
                Err(error) => tracing::warn!(%error, "cannot expire signed-in browsers"),
            }
        }
        swept = swept.wrapping_add(1);
    }
}

/// Stops every running answer (each is saved as stopped) and waits for them, then lets
/// open connections finish, each within the grace period.
async fn stop(state: &AppState, graceful: hyper_util::server::graceful::GracefulShutdown) {
    tracing::info!("stopping running answers");
    state.shutdown.cancel();
    state.answers.close();
    if tokio::time::timeout(SHUTDOWN_GRACE, state.answers.wait())
        .await
        .is_err()
    {
        tracing::warn!("answers still running after the grace period");
    }
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the grace period");
    }
}

/// Resolves on SIGINT (ctrl-c) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!(%error, "cannot listen for ctrl-c");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::error!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down");
}

impl axum::extract::FromRef<AppState> for leptos::config::LeptosOptions {
    fn from_ref(state: &AppState) -> leptos::config::LeptosOptions {
        state.leptos_options.clone()
    }
}

/// Open connections per client address, each capped; trusted proxies (which carry many
/// clients) are not counted.
#[derive(Clone)]
struct PerAddress {
    cap: usize,
    trusted: Arc<Vec<crate::ssr::config::IpNet>>,
    open: Arc<std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>>,
}

/// One admitted connection: its address's count goes down when it closes.
struct Held {
    address: Option<std::net::IpAddr>,
    open: Arc<std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>>,
}

impl PerAddress {
    fn new(cap: usize, trusted: Vec<crate::ssr::config::IpNet>) -> PerAddress {
        PerAddress {
            cap,
            trusted: Arc::new(trusted),
            open: Arc::default(),
        }
    }

    /// A connection from `address`, unless it holds its share already.
    fn admit(&self, address: std::net::IpAddr) -> Option<Held> {
        if self.trusted.iter().any(|net| net.contains(address)) {
            return Some(Held {
                address: None,
                open: Arc::clone(&self.open),
            });
        }
        let mut open = self
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = open.entry(address).or_insert(0);
        if *count >= self.cap {
            return None;
        }
        *count += 1;
        Some(Held {
            address: Some(address),
            open: Arc::clone(&self.open),
        })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(address) = self.address else {
            return;
        };
        let mut open = self
            .open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(count) = open.get_mut(&address) {
            *count -= 1;
            if *count == 0 {
                open.remove(&address);
            }
        }
    }
}
