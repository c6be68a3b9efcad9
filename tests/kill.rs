//! `kill -9` mid-answer: the real `cited` binary is killed with SIGKILL while it streams an
//! answer, then started again on the same database. The question must still be there,
//! marked interrupted, in the same browser's conversation.
#![cfg(feature = "ssr")]
#![allow(clippy::unwrap_used, reason = "a test")]

mod common;

use std::process::{Command, Stdio};

use cited::model::{AnswerEvent, Exchange, ExchangeState, LineDecoder};
use common::{free_port, post_json, scripted_model, start_cited};
use futures_util::StreamExt;

/// Starts the binary on `database` with the scripted model.
async fn start(port: u16, database: &str, model: &str) -> std::process::Child {
    let model = format!("{model}/v1");
    start_cited(
        port,
        &[
            ("CITED_DATABASE_URL", database),
            ("CITED_LLM_BASE_URL", &model),
            ("CITED_LLM_MODEL", "endless"),
            ("CITED_SEARXNG_URL", "http://127.0.0.1:9"),
            ("CITED_SOURCES", "web"),
            ("CITED_TITLES", "question"),
            ("CITED_CHECK", "lexical"),
            ("CITED_LOG", "warn"),
        ],
        Stdio::null(),
    )
    .await
}

#[tokio::test]
async fn kill_9_mid_answer_keeps_the_question_as_interrupted() {
    cited::ssr::net::install_crypto_provider();
    let model = scripted_model().await;
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
        .form(&[("question", "endless: what survives a kill -9?")])
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success());
    let mut body = response.bytes_stream();
    let mut decoder = LineDecoder::default();
    // The browser's stream carries the text in rendering patches.
    let mut patches = 0;
    while patches < 3 {
        let chunk = body.next().await.unwrap().unwrap();
        patches += decoder
            .push(&chunk)
            .iter()
            .filter(|e| matches!(e, AnswerEvent::Rendered { .. }))
            .count();
    }
    // SIGKILL: no shutdown, no finish, nothing flushed by cited itself.
    server.kill().unwrap();
    server.wait().unwrap();
    drop(body);

    let port = free_port();
    let mut server = start(port, &database, &model).await;
    // The cookie jar is per host, so the same browser comes back on the new port.
    let conversation: Vec<Exchange> = post_json(&browser, port, "/api/conversation").await;
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
    assert_eq!(
        conversation[0].question,
        "endless: what survives a kill -9?"
    );
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
        .find(|line| line.ends_with("endless: what survives a kill -9?"))
        .unwrap_or_else(|| panic!("listed: {listed}"));
    let id = line.split_whitespace().next().unwrap();
    assert_eq!(id.len(), 32);
    let shown = cited(&["history", "show", id]);
    assert!(
        shown.contains("(Interrupted) endless: what survives a kill -9?"),
        "{shown}"
    );
    let exported = cited(&["history", "export", id]);
    assert!(
        exported.starts_with("# endless: what survives a kill -9?\n"),
        "{exported}"
    );
    // Its cited sources for a reference manager (an interrupted answer cites none).
    for format in ["bib", "ris", "csl"] {
        let citations = cited(&["history", "export", id, "--format", format]);
        let empty = if format == "csl" { "[]" } else { "" };
        assert_eq!(citations, empty, "{format}");
    }
}
