//! Signing in and out with built-in accounts (`CITED_AUTH=accounts`): `GET /login` (the
//! form, plain HTML that works without JavaScript), `POST /login` and `POST /logout`
//! (`everywhere=1` signs out every browser of the user). Sign-in attempts are rate-limited
//! per address; an unknown name takes as long to refuse as a wrong password.

use std::net::IpAddr;

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::{Extension, Form};

use super::session_layer::sign_in;
use crate::i18n::Texts;
use crate::ssr::config::Auth;
use crate::ssr::request::{lang_for, session_cookie, ClientAddress, CurrentSession};
use crate::ssr::state::AppState;
use crate::ssr::web::knowledge_page::escape;

#[derive(Debug, serde::Deserialize)]
pub struct SignIn {
    #[serde(default)]
    name: String,
    #[serde(default)]
    password: String,
}

#[derive(Debug, serde::Deserialize)]
pub struct SignOut {
    #[serde(default)]
    everywhere: Option<String>,
}

fn page(
    state: &AppState,
    t: &Texts,
    status: StatusCode,
    problem: Option<&str>,
    name: &str,
) -> Response {
    let problem = problem
        .map(|text| {
            format!(
                "<p class=\"login-problem\" role=\"alert\">{}</p>",
                escape(text)
            )
        })
        .unwrap_or_default();
    let html = format!(
        "<!doctype html><html lang=\"{lang}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><link rel=\"stylesheet\" href=\"/pkg/{css}.css\"></head>\
         <body class=\"login-page\"><main class=\"login\">\
         <h1 class=\"brand\"><span class=\"brand-mark\" aria-hidden=\"true\">[<b>1</b>]</span>cited</h1>\
         <form method=\"post\" action=\"/login\" class=\"login-form\">\
         <h2>{title}</h2>{problem}\
         <label>{user_label}<input name=\"name\" autocomplete=\"username\" required value=\"{name}\"></label>\
         <label>{password_label}<input name=\"password\" type=\"password\" autocomplete=\"current-password\" required></label>\
         <button type=\"submit\">{submit}</button></form></main></body></html>",
        lang = t.html_lang,
        css = state.leptos_options.output_name,
        title = escape(t.sign_in_title),
        user_label = escape(t.user_name),
        password_label = escape(t.password),
        submit = escape(t.sign_in),
        name = escape(name),
    );
    (status, [(header::CACHE_CONTROL, "no-store")], Html(html)).into_response()
}

fn not_here() -> Response {
    StatusCode::NOT_FOUND.into_response()
}

pub async fn show(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if state.config.access.auth != Auth::Accounts {
        return not_here();
    }
    let t = lang_for(None, &headers).texts();
    page(&state, t, StatusCode::OK, None, "")
}

pub async fn submit(
    State(state): State<AppState>,
    address: Option<Extension<ClientAddress>>,
    headers: HeaderMap,
    Form(form): Form<SignIn>,
) -> Response {
    if state.config.access.auth != Auth::Accounts {
        return not_here();
    }
    let t = lang_for(None, &headers).texts();
    // Per address (the client's, behind a trusted proxy) and per account name.
    let address = address.map_or(IpAddr::from([0, 0, 0, 0]), |address| address.0 .0);
    let address = crate::ssr::limits::address_key(address);
    let name = form.name.trim().to_lowercase();
    // The address's attempts (each costs a password hash), and this address's failures
    // for this name. Never the name's failures from everywhere: then anybody could lock
    // its owner out.
    let throttled = match state
        .shared
        .check_rate(&state.limits.sign_ins, &address, &address.to_string())
        .await
    {
        Ok(()) => match state.limits.sign_in_failures.blocked(address, &name) {
            Some(wait) => Err(wait),
            None => Ok(()),
        },
        refused => refused,
    };
    if let Err(wait) = throttled {
        let mut response = page(
            &state,
            t,
            StatusCode::TOO_MANY_REQUESTS,
            Some(t.sign_in_throttled),
            &form.name,
        );
        if let Ok(value) = wait.as_secs().max(1).to_string().parse() {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        return response;
    }
    let name = form.name.trim().to_string();
    let stored = if crate::ssr::passwords::valid_name(&name) {
        state.store.password_hash(&name).await
    } else {
        Ok(None)
    };
    let stored = match stored {
        Ok(stored) => stored,
        Err(error) => {
            tracing::error!(%error, "cannot read the account");
            return StatusCode::SERVICE_UNAVAILABLE.into_response();
        }
    };
    let known = stored.is_some();
    let hash = stored.unwrap_or_else(|| crate::ssr::passwords::decoy().to_string());
    let password = form.password;
    let matches =
        crate::ssr::blocking::run(move || crate::ssr::passwords::verify(&password, &hash))
            .await
            .unwrap_or(false);
    let key = name.to_lowercase();
    if !(known && matches) {
        state.limits.sign_in_failures.failed(address, &key);
        tracing::info!("sign-in refused");
        return page(
            &state,
            t,
            StatusCode::UNAUTHORIZED,
            Some(t.sign_in_failed),
            &name,
        );
    }
    state.limits.sign_in_failures.succeeded(address, &key);
    let session = sign_in(&state, &name).await;
    let mut response = (
        StatusCode::SEE_OTHER,
        [(header::LOCATION, "/"), (header::CACHE_CONTROL, "no-store")],
    )
        .into_response();
    if let Some(cookie) = session_cookie(&state, Some(&session.id.to_string())) {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    response
}

pub async fn sign_out(
    State(state): State<AppState>,
    session: Option<Extension<CurrentSession>>,
    Form(form): Form<SignOut>,
) -> Response {
    if let Some(Extension(CurrentSession(session))) = session {
        crate::ssr::request::stop_answer(&state, &session).await;
        state.sessions.remove(&session.id);
        if let Err(error) = state.store.forget_browser(&session.id.to_string()).await {
            tracing::warn!(%error, "cannot forget the browser");
        }
        if let (Some(user), Some(_)) = (&session.user, &form.everywhere) {
            // Their answers stop too, on whichever instance writes them.
            match state.store.browsers_of_user(user).await {
                Ok(browsers) => {
                    for browser in browsers {
                        state.log.stop(&browser).await;
                    }
                }
                Err(error) => tracing::warn!(%error, "cannot list the user's browsers"),
            }
            state.sessions.remove_user(user);
            match state.store.sign_out_user(user).await {
                Ok(browsers) => tracing::info!(browsers, "signed out everywhere"),
                Err(error) => tracing::warn!(%error, "cannot sign out the other browsers"),
            }
        }
    }
    let next = if state.config.access.auth == Auth::Accounts {
        "/login"
    } else {
        "/"
    };
    let mut response = (
        StatusCode::SEE_OTHER,
        [
            (header::LOCATION, next),
            (header::CACHE_CONTROL, "no-store"),
        ],
    )
        .into_response();
    if let Some(cookie) = session_cookie(&state, None) {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    response
}
