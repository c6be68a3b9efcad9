//! `kill -9` mid-answer: the real `cited` binary is killed with SIGKILL while it streams an
//! answer, then started again on the same database. The question must still be there,
//! marked interrupted, in the same browser's conversation.
#![cfg(feature = "ssr")]
#![allow(clippy::unwrap_used, reason = "a test")]

use std::net::TcpListener as StdListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use axum::response::IntoResponse;
use axum::routing::post;
use axum::Router;
use cited::model::{AnswerEvent, Exchange, ExchangeState, LineDecoder};
use futures_util::StreamExt;

/// An OpenAI-compatible server whose answers never end: a word every 20 ms.
async fn endless_model() -> String {
    async fn complete() -> impl IntoResponse {
        let words = futures_util::stream::unfold(0u64, |n| async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let chunk = format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"w{n} \"}}}}]}}\n\n"
            );
            Some((Ok::<_, std::io::Error>(chunk), n + 1))
        });
        (
            [(axum::http::header::CONTENT_TYPE, "text/event-stream")],
            axum::body::Body::from_stream(words),
        )
    }
    let app = Router::new().route("/v1/chat/completions", post(complete));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts the binary and waits until it answers `/healthz`.
async fn start(port: u16, database: &str, model: &str) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cited"))
        .arg("serve")
        .env("CITED_ADDR", format!("127.0.0.1:{port}"))
        .env("CITED_DATABASE_URL", database)
        .env("CITED_LLM_BASE_URL", model)
        .env("CITED_LLM_MODEL", "endless")
        .env("CITED_SEARXNG_URL", "http://127.0.0.1:9")
        .env("CITED_SOURCES", "web")
        .env("CITED_TITLES", "question")
        .env("CITED_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let health = format!("http://127.0.0.1:{port}/healthz");
    let mut up = false;
    while !up && Instant::now() < deadline {
        up = reqwest::get(&health)
            .await
            .is_ok_and(|r| r.status().is_success());
        if !up {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    if !up {
        let _ = child.kill();
        let _ = child.wait();
        panic!("cited did not start on port {port}");
    }
    child
}

#[tokio::test]
async fn kill_9_mid_answer_keeps_the_question_as_interrupted() {
    cited::ssr::net::install_crypto_provider();
    let model = endless_model().await;
    let database = format!(
        "sqlite:{}",
        std::env::temp_dir()
            .join(format!("cited-kill-{}.db", std::process::id()))
            .display()
    );
    let port = free_port();
    let mut server = start(port, &database, &model).await;
    let browser = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap();
    let response = browser
        .post(format!("http://127.0.0.1:{port}/api/ask"))
        .form(&[("question", "what survives a kill -9?")])
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success());
    let mut body = response.bytes_stream();
    let mut decoder = LineDecoder::default();
    let mut tokens = 0;
    while tokens < 3 {
        let chunk = body.next().await.unwrap().unwrap();
        tokens += decoder
            .push(&chunk)
            .iter()
            .filter(|e| matches!(e, AnswerEvent::Token { .. }))
            .count();
    }
    // SIGKILL: no shutdown, no finish, nothing flushed by cited itself.
    server.kill().unwrap();
    server.wait().unwrap();
    drop(body);

    let port = free_port();
    let mut server = start(port, &database, &model).await;
    // The cookie jar is per host, so the same browser comes back on the new port.
    let conversation: Vec<Exchange> = browser
        .post(format!("http://127.0.0.1:{port}/api/conversation"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let page = browser
        .get(format!("http://127.0.0.1:{port}/"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    server.kill().unwrap();
    let _ = server.wait();
    assert!(page.contains("回答被中断"), "shown as interrupted");
    assert_eq!(conversation.len(), 1, "{conversation:?}");
    assert_eq!(conversation[0].question, "what survives a kill -9?");
    assert_eq!(conversation[0].state, ExchangeState::Interrupted);

    // The command line reads the same database.
    let cited = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_cited"))
            .args(args)
            .env("CITED_DATABASE_URL", &database)
            .env("CITED_LOG", "warn")
            .output()
            .unwrap();
        assert!(output.status.success(), "cited {args:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    let listed = cited(&["history", "list"]);
    let line = listed
        .lines()
        .find(|line| line.ends_with("what survives a kill -9?"))
        .unwrap_or_else(|| panic!("listed: {listed}"));
    let id = line.split_whitespace().next().unwrap();
    assert_eq!(id.len(), 32);
    let shown = cited(&["history", "show", id]);
    assert!(
        shown.contains("(Interrupted) what survives a kill -9?"),
        "{shown}"
    );
    let exported = cited(&["history", "export", id]);
    assert!(
        exported.starts_with("# what survives a kill -9?\n"),
        "{exported}"
    );
}
