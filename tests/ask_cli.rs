//! `cited ask` through the real binary, offline (the extractive answerer over the project's
//! own docs): the reference list and the follow-up questions come in the question's
//! language.
#![cfg(feature = "ssr")]
#![allow(clippy::unwrap_used, reason = "a test")]

use std::process::Command;

mod common;

/// `cited ask ARGS…` offline, on the project's docs.
fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cited"))
        .arg("ask")
        .args(args)
        .env("CITED_DATABASE_URL", "sqlite::memory:")
        .env("CITED_SOURCES", "knowledge")
        .env("CITED_ALIGN_DEADLINE_SECS", "0")
        .env("CITED_LOG", "warn")
        .env_remove("CITED_LLM_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap()
}

/// What `cited ask QUESTION` prints, having succeeded.
fn ask(question: &str) -> String {
    let output = run(&[question]);
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn lists_follow_the_language_of_the_question() {
    let english = ask("How do I run the tests?");
    assert!(english.contains("\n**References:**\n"), "{english}");
    assert!(!english.contains("参考文献"), "{english}");
    let follow_ups = english
        .split("**Related questions:**")
        .nth(1)
        .unwrap_or_else(|| panic!("{english}"));
    assert_eq!(
        follow_ups.lines().filter(|l| l.starts_with("- ")).count(),
        3,
        "{english}"
    );

    let chinese = ask("如何在 SearXNG 中启用 JSON 格式？");
    assert!(chinese.contains("\n**参考文献:**\n"), "{chinese}");
    assert!(chinese.contains("**相关问题:**"), "{chinese}");
    assert!(!chinese.contains("References"), "{chinese}");
}

#[test]
fn filters_are_said_and_a_bad_site_is_refused() {
    let narrowed = run(&[
        "How do I run the tests?",
        "--focus",
        "academic",
        "--time",
        "week",
        "--site",
        "Docs.rs",
    ]);
    assert!(narrowed.status.success(), "{narrowed:?}");
    let said = String::from_utf8(narrowed.stderr).unwrap();
    assert!(
        said.contains("Filters: Academic · Past week · site:docs.rs"),
        "{said}"
    );
    let refused = run(&["如何运行测试？", "--site", "https://docs.rs/x"]);
    assert_eq!(refused.status.code(), Some(2));
    let said = String::from_utf8(refused.stderr).unwrap();
    assert!(said.contains("不是一个网站域名"), "{said}");
    let unknown = run(&["q?", "--focus", "images"]);
    assert_eq!(unknown.status.code(), Some(2), "clap refuses it");
}

#[test]
fn files_are_searched_and_cited_and_bad_ones_refused() {
    let dir = std::env::temp_dir().join(format!("cited-ask-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let notes = dir.join("keeper-notes.md");
    std::fs::write(
        &notes,
        "# Keeper notes\n\nThe lighthouse keeper logs every passing ship in the tower book.\n",
    )
    .unwrap();
    let output = run(&[
        "What does the lighthouse keeper log?",
        "--file",
        notes.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("passing ship"), "{stdout}");
    assert!(
        stdout.contains("Keeper notes"),
        "the file is in the references: {stdout}"
    );

    let bad = dir.join("setup.exe");
    std::fs::write(&bad, b"MZ").unwrap();
    let output = run(&["What is this?", "--file", bad.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("Only PDF, Markdown, text, HTML and DOCX"),
        "{stderr}"
    );

    // Offline there is no model to pick.
    let output = run(&["What is this?", "--model", "gpt-4o"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A SearXNG that answers every search with the six-result fixture, and a model that
/// answers citing two of them (one marker twice in a group); their base URLs.
async fn web_and_model() -> (String, String) {
    use axum::routing::{get, post};
    let fixture = include_str!("../src/tests/fixtures/searxng/en_merged_duplicates_6_results.json");
    let searxng = common::serve(axum::Router::new().route(
        "/search",
        get(move || async move {
            (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                fixture,
            )
        }),
    ))
    .await;
    async fn complete() -> impl axum::response::IntoResponse {
        let chunk = |text: &str| {
            format!(
                "data: {}\n\n",
                serde_json::json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]})
            )
        };
        let body = [
            chunk("Tokio is an asynchronous Rust runtime [1]."),
            chunk(" Runtimes are compared in one post [2, 1]."),
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n".to_string(),
        ]
        .concat();
        (
            [(axum::http::header::CONTENT_TYPE, "text/event-stream")],
            body,
        )
    }
    let model =
        common::serve(axum::Router::new().route("/v1/chat/completions", post(complete))).await;
    (searxng, model)
}

/// `cited ask` against the web and the model above, its output piped (not a terminal).
fn ask_web(searxng: &str, model: &str, extra: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_cited"))
        .arg("ask")
        .arg("How do Rust async runtimes compare?")
        .args(extra)
        .env("CITED_DATABASE_URL", "sqlite::memory:")
        .env("CITED_SOURCES", "web")
        .env("CITED_SEARXNG_URL", searxng)
        .env("CITED_LLM_BASE_URL", format!("{model}/v1"))
        .env("CITED_LLM_MODEL", "scripted")
        .env("CITED_IMAGES", "off")
        .env("CITED_RELATED", "off")
        .env("CITED_ALIGN_DEADLINE_SECS", "0")
        .env("CITED_LOG", "warn")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_piped_answer_links_its_markers_unless_asked_not_to() {
    let (searxng, model) = web_and_model().await;
    let linked = ask_web(&searxng, &model, &[]);
    // Once, each marker a link to its source (seed 003).
    assert!(
        linked.starts_with(
            "Tokio is an asynchronous Rust runtime [[1]](https://docs.example.org/tokio/tutorial/). \
             Runtimes are compared in one post [[2]](https://www.example.com/blog/rust-async-runtimes-compared)[[1]](https://docs.example.org/tokio/tutorial/)."
        ),
        "{linked}"
    );
    assert_eq!(
        linked.matches("Tokio is an asynchronous").count(),
        1,
        "{linked}"
    );
    assert!(linked.contains("**References:**"), "{linked}");
    let bare = ask_web(&searxng, &model, &["--bare-markers"]);
    assert!(
        bare.starts_with(
            "Tokio is an asynchronous Rust runtime [1]. Runtimes are compared in one post [2, 1]."
        ),
        "{bare}"
    );
    assert!(!bare.contains("[[1]]"), "{bare}");
}

/// A model that falls into a loop: the same sentence, over and over.
async fn looping_model() -> String {
    use axum::routing::post;
    async fn complete() -> impl axum::response::IntoResponse {
        let chunk = |text: &str| {
            format!(
                "data: {}\n\n",
                serde_json::json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]})
            )
        };
        let mut body: String = (0..30)
            .map(|_| chunk("Tokio is an async runtime. "))
            .collect();
        body.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
        (
            [(axum::http::header::CONTENT_TYPE, "text/event-stream")],
            body,
        )
    }
    common::serve(axum::Router::new().route("/v1/chat/completions", post(complete))).await
}

#[tokio::test(flavor = "multi_thread")]
async fn on_a_terminal_text_the_model_took_back_is_printed_again() {
    let model = looping_model().await;
    let binary = env!("CARGO_BIN_EXE_cited");
    // `script` gives the command a terminal (stdout and stderr both land in its output).
    let output = Command::new("script")
        .args(["-q", "-e", "-c"])
        .arg(format!("'{binary}' ask 'What is Tokio?' --search off"))
        .arg("/dev/null")
        .env("CITED_DATABASE_URL", "sqlite::memory:")
        .env("CITED_LLM_BASE_URL", format!("{model}/v1"))
        .env("CITED_LLM_MODEL", "scripted")
        .env("CITED_RELATED", "off")
        .env("CITED_ALIGN_DEADLINE_SECS", "0")
        .env("CITED_LOG", "warn")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&output.stdout).replace('\r', "");
    assert!(output.status.success(), "{shown}");
    // The loop streamed, then the answer as the cut left it, after a line that says so.
    let (before, after) = shown
        .split_once("↻ Part of the text above was taken back; the answer as it now stands:\n")
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(
        before.matches("Tokio is an async runtime.").count() >= 3,
        "{shown}"
    );
    assert!(after.starts_with("Tokio is an async runtime. "), "{shown}");
    assert_eq!(
        after
            .split("\n")
            .next()
            .unwrap()
            .matches("Tokio is an async runtime.")
            .count(),
        1,
        "{shown}"
    );
    assert!(shown.contains("the repetition was cut"), "{shown}");
}
