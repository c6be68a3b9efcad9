//! Safe to expose: host and origin checks, security headers and the CSP nonce, header-read
//! timeouts and the connection cap, body limits, sign-in with accounts and behind a proxy
//! (each user sees only their own conversations), rate limits and quotas, the fair answer
//! queue, and a shutdown that stops and saves running answers.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{CONTENT_SECURITY_POLICY, LOCATION, RETRY_AFTER, SET_COOKIE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{browser, TestServer};
use crate::model::{AnswerEvent, ExchangeState, History, Mode, Status};
use crate::ssr::llm::ChatModel;
use crate::ssr::pipeline::TurnInput;
use crate::ssr::state::AppState;

/// A model that writes one word every 50 ms, for a long time: an answer that is still
/// running when a test acts on it.
fn dribble() -> Arc<dyn ChatModel> {
    super::model::Model::new(|_| {
        super::model::Reply::chunks((0..2000).map(|n| format!("词{n} ")))
            .paced(Duration::from_millis(50))
            .open()
    })
}

fn state_with(vars: &[(&str, &str)], model: Option<Arc<dyn ChatModel>>) -> AppState {
    let app = super::App::searching("http://127.0.0.1:9")
        .var("CITED_SOURCES", "knowledge")
        .vars(vars);
    match model {
        Some(model) => app.model(model),
        None => app,
    }
    .state()
}

fn temp_db(name: &str) -> (super::searxng::TempDir, String) {
    let dir = super::searxng::TempDir::new(name);
    let url = format!("sqlite:{}", dir.0.join("cited.db").display());
    (dir, url)
}

#[tokio::test]
async fn requests_for_other_host_names_are_refused() {
    let server = TestServer::start(&[]).await;
    let client = reqwest::Client::new();
    let port = server.addr.port();
    for (host, status) in [
        (format!("127.0.0.1:{port}"), 200),
        (format!("localhost:{port}"), 200),
        (format!("[::1]:{port}"), 200),
        // A page that rebinds its own name to 127.0.0.1 still sends its name.
        (format!("attacker.example:{port}"), 421),
        ("localhost.attacker.example".to_string(), 421),
    ] {
        let response = client
            .get(server.url("/"))
            .header("host", &host)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), status, "{host}");
    }
    // Health checks come from anywhere.
    let health = client
        .get(server.url("/healthz"))
        .header("host", "10.1.2.3")
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    // Configured names are allowed, and only they.
    let named = TestServer::start(&[("CITED_ALLOWED_HOSTS", "cited.example.org")]).await;
    for (host, status) in [("cited.example.org", 200), ("localhost", 421)] {
        let response = client
            .get(named.url("/"))
            .header("host", host)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), status, "{host}");
    }
}

#[tokio::test]
async fn cross_site_posts_are_refused() {
    let server = TestServer::start(&[]).await;
    let post = |headers: &'static [(&'static str, &'static str)]| {
        let mut request = browser()
            .post(server.url("/api/update_settings"))
            .form(&[("search_enabled", "false")]);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send()
    };
    let own_origin = format!("http://{}", server.addr);
    for headers in [
        &[("origin", "http://attacker.example")][..],
        &[("origin", "null")][..],
        &[("sec-fetch-site", "cross-site")][..],
        &[("sec-fetch-site", "same-site")][..],
        &[
            ("sec-fetch-site", "cross-site"),
            ("origin", "http://127.0.0.1"),
        ][..],
    ] {
        assert_eq!(post(headers).await.unwrap().status(), 403, "{headers:?}");
    }
    for headers in [
        &[][..],
        &[("sec-fetch-site", "same-origin")][..],
        &[("sec-fetch-site", "none")][..],
    ] {
        assert_eq!(post(headers).await.unwrap().status(), 200, "{headers:?}");
    }
    let same = browser()
        .post(server.url("/api/update_settings"))
        .header("origin", own_origin)
        .form(&[("search_enabled", "false")])
        .send()
        .await
        .unwrap();
    assert_eq!(same.status(), 200);
    // Reading is not a change: a GET from anywhere is answered (the host check guards it).
    let read = browser()
        .get(server.url("/"))
        .header("sec-fetch-site", "cross-site")
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), 200);
}

#[tokio::test]
async fn pages_carry_security_headers_and_a_nonce_for_their_one_script() {
    let server = TestServer::start(&[]).await;
    let mut nonces = Vec::new();
    for _ in 0..2 {
        let response = browser().get(server.url("/")).send().await.unwrap();
        let headers = response.headers().clone();
        let csp = headers
            .get(CONTENT_SECURITY_POLICY)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        for directive in [
            "default-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "frame-ancestors 'none'",
            "style-src 'self';",
        ] {
            assert!(csp.contains(directive), "{directive} in {csp}");
        }
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert_eq!(headers["referrer-policy"], "no-referrer");
        assert_eq!(headers["x-frame-options"], "DENY");
        assert!(headers.get("strict-transport-security").is_none());
        let nonce = csp
            .split("'nonce-")
            .nth(1)
            .and_then(|rest| rest.split('\'').next())
            .unwrap()
            .to_string();
        assert_eq!(nonce.len(), 32);
        let html = response.text().await.unwrap();
        // Every inline script carries the nonce; there is at least the hydration script.
        let scripts: Vec<&str> = html.split("<script").skip(1).collect();
        assert!(!scripts.is_empty());
        for script in scripts {
            let tag = script.split('>').next().unwrap();
            assert!(tag.contains(&format!("nonce=\"{nonce}\"")), "{tag}");
        }
        assert!(!html.contains(" style=\""), "no inline style attributes");
        nonces.push(nonce);
    }
    assert_ne!(nonces[0], nonces[1], "a new nonce per page");
    // Behind https the cookie is Secure and HSTS is sent.
    let secure = TestServer::start(&[("CITED_PUBLIC_URL", "https://cited.example.org")]).await;
    let response = browser()
        .post(secure.url("/api/update_settings"))
        .form(&[("search_enabled", "true")])
        .send()
        .await
        .unwrap();
    let cookie = response.headers()[SET_COOKIE].to_str().unwrap().to_string();
    assert!(cookie.contains("; Secure"), "{cookie}");
    assert!(response
        .headers()
        .get("strict-transport-security")
        .is_some());
    // Named `__Host-`, so no sibling site or port can plant one; only that name is read.
    assert!(cookie.starts_with("__Host-cited_session="), "{cookie}");
    let id = cookie
        .split(';')
        .next()
        .unwrap()
        .trim_start_matches("__Host-cited_session=")
        .to_string();
    let again = |name: &'static str| {
        reqwest::Client::new()
            .post(secure.url("/api/update_settings"))
            .header("cookie", format!("{name}={id}"))
            .form(&[("search_enabled", "true")])
            .send()
    };
    let kept = again("__Host-cited_session").await.unwrap();
    assert!(kept.headers().get(SET_COOKIE).is_none(), "its own session");
    let tossed = again("cited_session").await.unwrap();
    let minted = tossed.headers()[SET_COOKIE].to_str().unwrap().to_string();
    assert!(
        !minted.contains(&id),
        "a plain-named cookie is not this browser's: {minted}"
    );
}

/// Reads until the server closes the connection; the bytes it sent.
async fn until_closed(stream: &mut tokio::net::TcpStream) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut buffer = [0u8; 1024];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return seen,
            Ok(n) => seen.extend_from_slice(&buffer[..n]),
        }
    }
}

#[tokio::test]
async fn slow_headers_are_cut_and_connections_are_capped() {
    let server = TestServer::start(&[
        ("CITED_HEADER_TIMEOUT_SECS", "1"),
        ("CITED_MAX_CONNECTIONS", "8"),
    ])
    .await;
    // A client that never finishes its headers is closed by the timeout.
    let mut slow = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    slow.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .await
        .unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(20), until_closed(&mut slow)).await;
    assert!(closed.is_ok(), "the slow connection was closed");
    // Eight idle connections fill the cap: the next request waits for one of them.
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(tokio::net::TcpStream::connect(server.addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(400))
        .build()
        .unwrap();
    assert!(
        client.get(server.url("/healthz")).send().await.is_err(),
        "no connection is free"
    );
    held.clear();
    let client = reqwest::Client::new();
    let answered = client.get(server.url("/healthz")).send().await.unwrap();
    assert_eq!(answered.status(), 200, "a freed connection serves again");
}

/// A connection to `server` from `source` (any 127.0.0.0/8 address on loopback).
async fn connect_from(source: &str, server: std::net::SocketAddr) -> tokio::net::TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(server).await.unwrap()
}

#[tokio::test]
async fn one_address_cannot_hold_every_connection() {
    let server = TestServer::start(&[
        ("CITED_HEADER_TIMEOUT_SECS", "60"),
        ("CITED_MAX_CONNECTIONS", "64"),
        ("CITED_MAX_CONNECTIONS_PER_ADDRESS", "4"),
    ])
    .await;
    // 127.0.0.2 holds its four, silent (slow headers count)…
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(connect_from("127.0.0.2", server.addr).await);
    }
    // …so its fifth is closed at once, unanswered,
    let mut fifth = connect_from("127.0.0.2", server.addr).await;
    fifth
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .ok();
    let seen = tokio::time::timeout(Duration::from_secs(10), until_closed(&mut fifth))
        .await
        .expect("closed, not left waiting");
    assert!(seen.is_empty(), "nothing was answered: {seen:?}");
    // while another address is served as usual.
    let other = reqwest::Client::builder()
        .local_address(std::net::IpAddr::from([127, 0, 0, 3]))
        .build()
        .unwrap();
    let answered = other.get(server.url("/healthz")).send().await.unwrap();
    assert_eq!(answered.status(), 200);
    let metrics = other.get(server.url("/metrics")).send().await.unwrap();
    let metrics = metrics.text().await.unwrap();
    assert!(
        metrics.contains("cited_connections_refused_total{reason=\"connections_per_address\"}"),
        "{metrics}"
    );
    // Its connections closed, the address is served again.
    held.clear();
    let again = reqwest::Client::builder()
        .local_address(std::net::IpAddr::from([127, 0, 0, 2]))
        .build()
        .unwrap();
    let mut status = 0;
    for _ in 0..50 {
        match again.get(server.url("/healthz")).send().await {
            Ok(response) => {
                status = response.status().as_u16();
                break;
            }
            // The server notices the closed ones as it reads them.
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    assert_eq!(status, 200);
}

#[tokio::test]
async fn shared_conversations_have_a_rate_of_their_own() {
    let server = TestServer::start(&[("CITED_RATE_SHARES_PER_MIN", "1")]).await;
    let stranger = browser();
    let token = "0123456789abcdef0123456789abcdef";
    let first = stranger
        .get(server.url(&format!("/s/{token}")))
        .send()
        .await
        .unwrap();
    assert_ne!(first.status(), 429, "no such share, but counted");
    let again = server
        .send(&stranger, "/api/shared", &[("token", token)])
        .await;
    assert_eq!(again.status(), 429);
    assert!(again.headers().contains_key("retry-after"));
    // Its other requests are not held back by it.
    let page = stranger.get(server.url("/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
}

#[tokio::test]
async fn large_bodies_are_refused() {
    let server = TestServer::start(&[("CITED_MAX_BODY_KB", "16")]).await;
    let big = "x".repeat(64 * 1024);
    let response = browser()
        .post(server.url("/api/ask"))
        .form(&[("question", big.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
}

pub(super) async fn history_of(client: &reqwest::Client, server: &TestServer) -> History {
    let response = server.send(client, "/api/history", &[("query", "")]).await;
    let status = response.status();
    let body = response.text().await.unwrap();
    serde_json::from_str(&body).unwrap_or_else(|error| panic!("{status} {body}: {error}"))
}

async fn sign_in(server: &TestServer, name: &str, password: &str) -> (reqwest::Client, u16) {
    let client = browser();
    let response = client
        .post(server.url("/login"))
        .form(&[("name", name), ("password", password)])
        .send()
        .await
        .unwrap();
    (client, response.status().as_u16())
}

async fn add_user(state: &AppState, name: &str, password: &str) {
    let hash = crate::ssr::passwords::hash(password).unwrap();
    assert!(state.store.create_user(name, &hash).await.unwrap());
}

#[tokio::test]
async fn accounts_sign_in_and_see_only_their_own_conversations() {
    let (_dir, db) = temp_db("accounts");
    let state = state_with(
        &[("CITED_AUTH", "accounts"), ("CITED_DATABASE_URL", &db)],
        None,
    );
    add_user(&state, "alice", "alice password").await;
    add_user(&state, "bob", "bob password").await;
    let server = TestServer::start_with(state).await;

    // Nobody signed in: pages go to the sign-in page, the rest is refused.
    let anonymous = browser();
    let home = anonymous.get(server.url("/")).send().await.unwrap();
    assert_eq!(home.status(), 303);
    assert_eq!(home.headers()[LOCATION], "/login");
    for path in ["/api/ask", "/api/history", "/api/update_settings", "/new"] {
        let response = anonymous.post(server.url(path)).send().await.unwrap();
        assert_eq!(response.status(), 401, "{path}");
    }
    let api = anonymous
        .post(server.url("/v1/chat/completions"))
        .json(
            &serde_json::json!({"model": "cited", "messages": [{"role": "user", "content": "hi"}]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(api.status(), 401);
    let form = anonymous
        .get(server.url("/login"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(form.contains("name=\"password\""), "{form}");

    // Wrong passwords and unknown names are refused alike.
    for (name, password) in [("alice", "bob password"), ("carol", "alice password")] {
        let (_, status) = sign_in(&server, name, password).await;
        assert_eq!(status, 401, "{name}");
    }
    let (alice, status) = sign_in(&server, "alice", "alice password").await;
    assert_eq!(status, 303);
    let page = alice
        .get(server.url("/"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("alice"), "the page names who is signed in");

    let events = super::chat::post_ask(&alice, &server, "How do I run the tests?")
        .await
        .unwrap();
    assert!(super::done_event(&events).is_some(), "{events:?}");
    let mine = history_of(&alice, &server).await;
    assert_eq!(mine.conversations.len(), 1);
    assert_eq!(mine.user.as_deref(), Some("alice"));
    let id = mine.conversations[0].id.clone();

    // Bob sees none of it and can touch none of it.
    let (bob, _) = sign_in(&server, "bob", "bob password").await;
    assert!(history_of(&bob, &server).await.conversations.is_empty());
    let opened: Option<serde_json::Value> = server
        .call(&bob, "/api/open_conversation", &[("id", id.as_str())])
        .await;
    assert!(opened.is_none(), "{opened:?}");
    server
        .send(
            &bob,
            "/api/delete_conversation",
            &[("id", id.as_str()), ("deleted", "true")],
        )
        .await;
    let export = bob
        .get(server.url(&format!("/c/{id}/export.md")))
        .send()
        .await
        .unwrap();
    assert_eq!(export.status(), 404);
    assert_eq!(history_of(&alice, &server).await.conversations.len(), 1);

    // Alice on a second browser has the same conversations; signing out everywhere ends
    // both browsers' sessions.
    let (alice_phone, _) = sign_in(&server, "alice", "alice password").await;
    assert_eq!(
        history_of(&alice_phone, &server).await.conversations[0].id,
        id
    );
    let out = alice
        .post(server.url("/logout"))
        .form(&[("everywhere", "1")])
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 303);
    for client in [&alice, &alice_phone] {
        let home = client.get(server.url("/")).send().await.unwrap();
        assert_eq!(home.status(), 303, "signed out");
    }
    assert_eq!(
        bob.get(server.url("/")).send().await.unwrap().status(),
        200,
        "bob is still in"
    );
    // Signing in again restores the history.
    let (alice, _) = sign_in(&server, "alice", "alice password").await;
    assert_eq!(history_of(&alice, &server).await.conversations.len(), 1);
}

#[tokio::test]
async fn sign_in_attempts_are_rate_limited() {
    let state = state_with(&[("CITED_AUTH", "accounts")], None);
    add_user(&state, "alice", "alice password").await;
    let server = TestServer::start_with(state).await;
    let client = reqwest::Client::new();
    let mut statuses = Vec::new();
    for _ in 0..12 {
        let response = client
            .post(server.url("/login"))
            .form(&[("name", "alice"), ("password", "guess guess")])
            .send()
            .await
            .unwrap();
        if response.status() == 429 {
            assert!(response.headers().get(RETRY_AFTER).is_some());
        }
        statuses.push(response.status().as_u16());
    }
    assert!(statuses[..5].iter().all(|s| *s == 401), "{statuses:?}");
    assert_eq!(statuses.last(), Some(&429), "{statuses:?}");
}

/// 1,000 wrong passwords for alice from one address stop that address, never alice: she
/// signs in from another (behind the trusted proxy that names addresses).
#[tokio::test]
async fn a_strangers_guesses_never_lock_the_owner_out() {
    let state = state_with(
        &[
            ("CITED_AUTH", "accounts"),
            ("CITED_TRUSTED_PROXIES", "127.0.0.1/32"),
        ],
        None,
    );
    add_user(&state, "alice", "alice password").await;
    let server = TestServer::start_with(state).await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let attempt = |from: &'static str, password: &'static str| {
        client
            .post(server.url("/login"))
            .header("x-forwarded-for", from)
            .form(&[("name", "alice"), ("password", password)])
            .send()
    };
    let mut refused = 0;
    let mut checked = 0;
    for _ in 0..1_000 {
        match attempt("203.0.113.9", "guess guess")
            .await
            .unwrap()
            .status()
            .as_u16()
        {
            429 => refused += 1,
            401 => checked += 1,
            other => panic!("{other}"),
        }
    }
    // Only the first few were worth a password check.
    assert!(checked <= 10, "{checked} checked");
    assert_eq!(refused + checked, 1_000);
    // The right password from the guesser's address waits too…
    assert_eq!(
        attempt("203.0.113.9", "alice password")
            .await
            .unwrap()
            .status(),
        429
    );
    // …but alice, from her own address, signs in at once.
    let signed = attempt("198.51.100.4", "alice password").await.unwrap();
    assert_eq!(signed.status(), 303);
    assert!(signed.headers().contains_key(SET_COOKIE));
    // And her own mistakes are hers: a typo, then the right one.
    assert_eq!(
        attempt("198.51.100.5", "alice pasword")
            .await
            .unwrap()
            .status(),
        401
    );
    assert_eq!(
        attempt("198.51.100.5", "alice password")
            .await
            .unwrap()
            .status(),
        303
    );
}

#[tokio::test]
async fn a_trusted_proxy_names_the_user() {
    let server = TestServer::start(&[
        ("CITED_AUTH", "proxy"),
        ("CITED_AUTH_PROXY_HEADER", "X-Remote-User"),
        ("CITED_AUTH_PROXY_FROM", "127.0.0.1"),
    ])
    .await;
    let post = |client: &reqwest::Client, user: &str, path: &str| {
        client
            .post(server.url(path))
            .header("x-remote-user", user)
            .form(&[("question", "How do I run the tests?")])
            .send()
    };
    let carol = browser();
    let response = post(&carol, "carol", "/api/ask").await.unwrap();
    assert_eq!(response.status(), 200);
    let _ = response.bytes().await;
    let listed: History = post(&carol, "carol", "/api/history")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed.conversations.len(), 1);
    assert_eq!(listed.user.as_deref(), Some("carol"));
    // Carol's cookie with dave's name is dave's session, not carol's.
    let listed: History = post(&carol, "dave", "/api/history")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        listed.conversations.is_empty(),
        "dave sees nothing of carol's"
    );
    assert_eq!(listed.user.as_deref(), Some("dave"));
    // Without the header nobody is signed in.
    let none = browser()
        .post(server.url("/api/history"))
        .send()
        .await
        .unwrap();
    assert_eq!(none.status(), 401);

    // From an address that is not the proxy, the header means nothing.
    let untrusted = TestServer::start(&[
        ("CITED_AUTH", "proxy"),
        ("CITED_AUTH_PROXY_HEADER", "X-Remote-User"),
        ("CITED_AUTH_PROXY_FROM", "10.0.0.0/8"),
    ])
    .await;
    let response = browser()
        .post(untrusted.url("/api/history"))
        .header("x-remote-user", "carol")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
}

#[tokio::test]
async fn serving_off_loopback_needs_sign_in() {
    let config = super::pipeline_config("http://127.0.0.1:9", &[("CITED_ADDR", "0.0.0.0:0")]);
    let refusal = crate::ssr::cli::exposure_refusal(&config).expect("refused");
    assert!(refusal.contains("CITED_AUTH=accounts"), "{refusal}");
    let exit = crate::ssr::cli::serve(config).await;
    assert_eq!(exit, std::process::ExitCode::FAILURE);
    // On loopback, or with sign-in, the same configuration is served.
    let loopback = super::pipeline_config("http://127.0.0.1:9", &[("CITED_ADDR", "127.0.0.1:0")]);
    assert_eq!(crate::ssr::cli::exposure_refusal(&loopback), None);
    let signed = super::pipeline_config(
        "http://127.0.0.1:9",
        &[("CITED_ADDR", "0.0.0.0:0"), ("CITED_AUTH", "accounts")],
    );
    assert_eq!(crate::ssr::cli::exposure_refusal(&signed), None);
}

#[tokio::test]
async fn asking_too_fast_is_answered_429() {
    let server = TestServer::start(&[("CITED_RATE_ASKS_PER_MIN", "1")]).await;
    let client = browser();
    let ask = || {
        client
            .post(server.url("/api/ask"))
            .form(&[("question", "How do I run the tests?")])
            .send()
    };
    let first = ask().await.unwrap();
    assert_eq!(first.status(), 200);
    let _ = first.bytes().await;
    let second = ask().await.unwrap();
    assert_eq!(second.status(), 429);
    let wait: u64 = second.headers()[RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    let message = second.text().await.unwrap();
    assert!(
        message.contains("秒后再试") || message.contains("try again"),
        "{message}"
    );
    // Another browser has its own allowance.
    let other = browser()
        .post(server.url("/api/ask"))
        .form(&[("question", "How do I run the tests?")])
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 200);
}

#[tokio::test]
async fn a_full_quota_refuses_new_questions() {
    let server = TestServer::start(&[("CITED_USER_QUOTA_MB", "1")]).await;
    let client = browser();
    let events = super::chat::post_ask(&client, &server, "How do I run the tests?")
        .await
        .unwrap();
    assert!(super::done_event(&events).is_some());
    let history = history_of(&client, &server).await;
    let conversation = &history.conversations[0].id;
    // Fill the rest of the quota with one long stored answer.
    let big = crate::model::Exchange {
        question: "q".into(),
        answer: "长".repeat(400_000),
        ..crate::model::Exchange::default()
    };
    server
        .state
        .store
        .begin_exchange(conversation, &big)
        .await
        .unwrap();
    let refused = server
        .send(
            &client,
            "/api/ask",
            &[("question", "How do I run the tests?")],
        )
        .await;
    assert_eq!(refused.status(), 507);
    let message = refused.text().await.unwrap();
    assert!(
        message.contains("存储上限") || message.contains("storage limit"),
        "{message}"
    );
}

#[tokio::test]
async fn added_files_count_in_the_quota_and_uploads_have_a_rate_limit() {
    let server = TestServer::start(&[
        ("CITED_USER_QUOTA_MB", "1"),
        ("CITED_FILE_MAX_MB", "2"),
        ("CITED_RATE_ASKS_PER_MIN", "3"),
    ])
    .await;
    let upload = |client: &reqwest::Client, name: &str, body: Vec<u8>| {
        client
            .post(server.url("/api/files"))
            .query(&[("name", name)])
            .body(body)
            .send()
    };
    // About 1.1 MB of text kept as passages: the quota is full with it.
    let client = browser();
    let text = "灯塔守护者记录每一艘经过的船，并在夜里点亮灯。\n\n".repeat(16_000);
    let added = upload(&client, "log.txt", text.into_bytes()).await.unwrap();
    assert_eq!(added.status(), 200);
    let refused = upload(&client, "more.txt", b"A second file.".to_vec())
        .await
        .unwrap();
    assert_eq!(refused.status(), 507);
    let message = refused.text().await.unwrap();
    assert!(message.contains("存储上限"), "{message}");
    let asked = server
        .send(
            &client,
            "/api/ask",
            &[("question", "What does the keeper log?")],
        )
        .await;
    assert_eq!(asked.status(), 507, "the file's text counts in the quota");

    // Another browser: files at the rate of questions (three a minute here), counted apart
    // from its questions.
    let other = browser();
    for n in 0..3 {
        let added = upload(
            &other,
            &format!("n{n}.txt"),
            b"Ships pass at night.".to_vec(),
        )
        .await
        .unwrap();
        assert_eq!(added.status(), 200, "upload {n}");
    }
    let refused = upload(&other, "n3.txt", b"Ships pass at night.".to_vec())
        .await
        .unwrap();
    assert_eq!(refused.status(), 429);
    assert!(refused.headers().contains_key(RETRY_AFTER));
    let message = refused.text().await.unwrap();
    assert!(message.contains("提问太频繁"), "{message}");
    // Its questions have their own budget.
    let events = super::chat::post_ask(&other, &server, "What passes at night?")
        .await
        .unwrap();
    assert!(super::done_event(&events).is_some());
}

#[tokio::test]
async fn answers_over_the_limit_wait_in_line_and_are_told_their_place() {
    let state = state_with(&[("CITED_MAX_ANSWERS", "1")], Some(dribble()));
    let store = crate::ssr::session::SessionStore::new(Duration::from_secs(600));
    let first_session = store.create(std::time::Instant::now());
    let (sender, mut first_events) = tokio::sync::mpsc::channel(4096);
    let stop_first = tokio_util::sync::CancellationToken::new();
    let first = tokio::spawn(crate::ssr::answer::run(
        state.clone(),
        first_session,
        TurnInput::standalone("first question".into(), Mode::Chat),
        stop_first.clone(),
        sender,
    ));
    // The first is writing.
    loop {
        match first_events.recv().await {
            Some(AnswerEvent::Token { .. }) => break,
            Some(_) => {}
            None => panic!("the first answer ended"),
        }
    }
    let second_state = state.clone();
    let second = tokio::spawn(async move {
        super::answer_collecting(
            &second_state,
            TurnInput::standalone("second question".into(), Mode::Chat),
        )
        .await
    });
    // Wait until the second is in line (bounded: a test fails, it never hangs), then let
    // the first end.
    tokio::time::timeout(Duration::from_secs(20), async {
        while state.limits.answers.load().1 == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the second answer waits in line");
    stop_first.cancel();
    let first = first.await.unwrap();
    assert_eq!(first.state, ExchangeState::Stopped);
    let (exchange, events) = tokio::time::timeout(Duration::from_secs(5), async {
        // The second runs now; stop it once it has written something.
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            if state.limits.answers.load() == (1, 0) {
                break;
            }
        }
        state.shutdown.cancel();
        second.await.unwrap()
    })
    .await
    .unwrap();
    let queued = events.iter().position(|e| {
        matches!(
            e,
            AnswerEvent::Status {
                status: Some(Status::Queued { position: 1 })
            }
        )
    });
    let started = events
        .iter()
        .position(|e| matches!(e, AnswerEvent::Started { .. }));
    assert!(
        started.is_some() && started < queued && queued.is_some(),
        "the status line says it waits, first in line: {events:?}"
    );
    assert_eq!(exchange.state, ExchangeState::Stopped);
}

#[tokio::test]
async fn shutdown_stops_running_answers_and_saves_them() {
    let (_dir, db) = temp_db("shutdown");
    let state = state_with(&[("CITED_DATABASE_URL", &db)], Some(dribble()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(crate::ssr::web::run(listener, state.clone(), async move {
        let _ = stopped.await;
    }));
    let client = browser();
    let response = client
        .post(format!("http://{addr}/api/ask"))
        .form(&[("question", "a long answer please")])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut body = response.bytes_stream();
    let mut seen = String::new();
    while !seen.contains("\"rendered\"") {
        let chunk = body.next().await.unwrap().unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    let _ = stop.send(());
    // The stream ends (the answer stopped) and the server returns.
    while let Some(chunk) = body.next().await {
        if chunk.is_err() {
            break;
        }
    }
    tokio::time::timeout(Duration::from_secs(30), server)
        .await
        .expect("the server stops")
        .unwrap()
        .unwrap();
    let all = state.store.list_all(10).await.unwrap();
    assert_eq!(all.len(), 1);
    let saved = state
        .store
        .conversation_by_id(&all[0].1.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(saved.exchanges.len(), 1);
    assert_eq!(saved.exchanges[0].state, ExchangeState::Stopped);
    assert!(
        saved.exchanges[0].answer.contains("词0"),
        "what was written is kept: {:?}",
        saved.exchanges[0].answer
    );
}

/// A `Write` into a shared buffer, for reading what was logged.
#[derive(Clone, Default)]
struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn logs_at_info_hold_no_question_and_no_credentials() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(
            crate::ssr::config::vars::get("CITED_LOG").default,
        ))
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    // This test's runtime has one thread: everything the server does for it logs here.
    let _guard = tracing::subscriber::set_default(subscriber);
    // The real SearXNG, reached with a password in its URL.
    let searxng = super::searxng::shared()
        .url
        .replacen("http://", "http://searcher:hunter2@", 1);
    let (config, warnings) = crate::ssr::config::Config::from_vars(|name| match name {
        "CITED_SEARXNG_URL" => Some(searxng.clone()),
        "CITED_LLM_BASE_URL" => Some("ftp://model:sesame@127.0.0.1:9/v1".into()),
        "CITED_SOURCES" => Some("web".into()),
        "CITED_DATABASE_URL" => Some("sqlite::memory:".into()),
        _ => None,
    });
    for warning in &warnings {
        tracing::warn!("{warning}");
    }
    for line in config.summary() {
        tracing::info!("{line}");
    }
    let server = TestServer::start_with(AppState::new(config)).await;
    let client = browser();
    let _ = super::chat::post_ask(&client, &server, "紫色长颈鹿 marker-question-7731").await;
    let logged = String::from_utf8_lossy(
        &captured
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    )
    .into_owned();
    assert!(
        logged.contains("search done"),
        "the test saw the answer's logs, the search's included: {logged}"
    );
    assert!(
        logged.contains("CITED_LLM_BASE_URL"),
        "the rejected value was logged: {logged}"
    );
    for secret in ["hunter2", "sesame", "marker-question-7731", "紫色长颈鹿"] {
        assert!(!logged.contains(secret), "{secret} in the log:\n{logged}");
    }
}

#[tokio::test]
async fn api_keys_answer_for_their_user() {
    let state = state_with(&[("CITED_AUTH", "accounts")], None);
    add_user(&state, "erin", "erin password").await;
    let (key, id) = crate::ssr::passwords::new_api_key().unwrap();
    state
        .store
        .add_api_key(
            &id,
            &crate::ssr::passwords::api_key_hash(&key),
            "erin",
            "laptop",
        )
        .await
        .unwrap();
    let server = TestServer::start_with(state).await;
    let ask = |key: &str| {
        reqwest::Client::new()
            .post(server.url("/v1/chat/completions"))
            .bearer_auth(key)
            .json(&serde_json::json!({
                "model": "cited-chat",
                "messages": [{"role": "user", "content": "How do I run the tests?"}]
            }))
            .send()
    };
    let answered = ask(&key).await.unwrap();
    assert_eq!(answered.status(), 200);
    let body: serde_json::Value = answered.json().await.unwrap();
    assert!(body["choices"][0]["message"]["content"]
        .as_str()
        .is_some_and(|t| !t.is_empty()));
    // The answer is erin's: it is in her history.
    let (erin, _) = sign_in(&server, "erin", "erin password").await;
    assert_eq!(history_of(&erin, &server).await.conversations.len(), 1);
    for wrong in ["cited_00000000000000000000000000000000", "unused"] {
        let refused = ask(wrong).await.unwrap();
        assert_eq!(refused.status(), 401, "{wrong}");
        let error: serde_json::Value = refused.json().await.unwrap();
        assert!(error["error"]["message"].is_string(), "{error}");
    }
    assert!(server.state.store.remove_api_key(&id).await.unwrap());
    assert_eq!(ask(&key).await.unwrap().status(), 401, "a revoked key");
}

/// A model that writes five 600-byte pieces at once (distinct characters: a repeated one
/// would be cut as a loop).
fn burst() -> Arc<dyn ChatModel> {
    super::model::Model::new(|_| {
        super::model::Reply::chunks((0..5u32).map(|piece| {
            (0..200u32)
                .filter_map(|i| char::from_u32(0x4e00 + piece * 200 + i))
                .collect::<String>()
        }))
        .open()
    })
}

#[tokio::test]
async fn an_answer_past_the_size_cap_is_cut_with_a_notice() {
    let state = state_with(&[("CITED_MAX_ANSWER_KB", "1")], Some(burst()));
    let (exchange, events) = super::answer_collecting(
        &state,
        TurnInput::standalone("a long one".into(), Mode::Chat),
    )
    .await;
    assert_eq!(exchange.answer.len(), 1023, "cut on a character boundary");
    assert!(exchange
        .answer
        .chars()
        .all(|c| ('\u{4e00}'..'\u{9fff}').contains(&c)));
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            AnswerEvent::Token { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, exchange.answer, "the browser saw what was kept");
    let notices: Vec<&str> = exchange.notices.iter().map(|n| n.text.as_str()).collect();
    assert_eq!(
        notices.iter().filter(|n| n.contains("1024")).count(),
        1,
        "one notice: {notices:?}"
    );
}

#[tokio::test]
async fn a_browser_signed_out_elsewhere_is_out_within_its_recheck() {
    let mut config = super::pipeline_config(
        "http://127.0.0.1:9",
        &[("CITED_AUTH", "accounts"), ("CITED_SOURCES", "knowledge")],
    );
    config.access.recheck = Duration::from_millis(200);
    let state = AppState::new(config);
    add_user(&state, "fay", "fay password").await;
    let server = TestServer::start_with(state).await;
    let (fay, _) = sign_in(&server, "fay", "fay password").await;
    assert_eq!(fay.get(server.url("/")).send().await.unwrap().status(), 200);
    // `cited user passwd` in another process: the rows go, this server's memory stays
    // until its next re-check.
    let hash = crate::ssr::passwords::hash("new fay password").unwrap();
    assert!(server.state.store.set_password("fay", &hash).await.unwrap());
    let mut status = 200;
    for _ in 0..50 {
        status = fay
            .get(server.url("/"))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        if status != 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, 303, "the old session no longer works");
    // Saving settings from the dead session brings nothing back.
    let refused = server
        .send(&fay, "/api/update_settings", &[("mode", "agent")])
        .await;
    assert_eq!(refused.status(), 401);
    let (_, status) = sign_in(&server, "fay", "fay password").await;
    assert_eq!(status, 401, "the old password is gone");
    let (_, status) = sign_in(&server, "fay", "new fay password").await;
    assert_eq!(status, 303);
}

#[tokio::test]
async fn an_anonymous_browser_from_before_sign_in_counts_for_nothing() {
    let server = TestServer::start(&[
        ("CITED_AUTH", "proxy"),
        ("CITED_AUTH_PROXY_FROM", "10.0.0.0/8"),
    ])
    .await;
    let id = crate::ssr::session::SessionId::random().to_string();
    server
        .state
        .store
        .save_browser(
            &id,
            &crate::ssr::store::StoredBrowser {
                settings: crate::model::Settings::default(),
                conversation: None,
                user: None,
            },
        )
        .await
        .unwrap();
    let response = reqwest::Client::new()
        .post(server.url("/api/history"))
        .header("cookie", format!("cited_session={id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
}

#[tokio::test]
async fn silent_connections_are_closed_too() {
    let server = TestServer::start(&[("CITED_HEADER_TIMEOUT_SECS", "1")]).await;
    let mut silent = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(20), until_closed(&mut silent)).await;
    assert!(closed.is_ok(), "a connection that sends nothing is closed");
    // Half an HTTP/2 preface is just as silent.
    let mut preface = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    preface.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(20), until_closed(&mut preface)).await;
    assert!(closed.is_ok(), "a partial preface is closed");
}

#[tokio::test]
async fn readiness_and_metrics_answer_probes_without_sign_in() {
    let server =
        TestServer::start(&[("CITED_AUTH", "accounts"), ("CITED_SOURCES", "knowledge")]).await;
    let client = reqwest::Client::new();
    let ready = client
        .get(server.url("/readyz"))
        .header("host", "10.0.0.7:3000")
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    assert_eq!(
        ready.text().await.unwrap(),
        "database: ok\nredis: not used (one process)\nsearxng: not used (CITED_SOURCES=knowledge)\nmodel: not used (offline answerer)\n"
    );
    let metrics = client.get(server.url("/metrics")).send().await.unwrap();
    assert_eq!(metrics.status(), 200);
    assert!(metrics.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain; version=0.0.4"));
    let text = metrics.text().await.unwrap();
    for line in [
        "cited_answers_running 0",
        "cited_answers_queued 0",
        "cited_answers_capacity 8",
        "cited_model_calls_free 8",
        "# TYPE cited_sessions gauge",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
    }
    // The database gone after a good start: no longer ready, and said so.
    server.state.store.close().await;
    let ready = client.get(server.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 503);
    assert!(
        ready
            .text()
            .await
            .unwrap()
            .starts_with("database: failing (unreachable)\n"),
        "a dead database is not ok"
    );
    // Shutting down: no longer ready.
    server.state.shutdown.cancel();
    let ready = client.get(server.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 503);
}
