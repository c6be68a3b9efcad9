//! `cited mcp` as a desktop client starts it: the real binary over stdio, driven by the
//! official MCP Python SDK (`tests/mcp_client.py`, installed by `make mcp-venv`), offline
//! (the knowledge base) with a scripted model: the tools, `search`, `ask`, bad arguments,
//! the account's conversations as resources, and a Research answer the client cancels.
#![cfg(feature = "ssr")]
#![allow(
    clippy::unwrap_used,
    clippy::print_stderr,
    reason = "a test, which says when it skips"
)]

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

/// The SDK's Python, or `None` outside `make test`; under `CI=true` its absence fails.
fn client_python() -> Option<String> {
    let python = std::env::var("CITED_TEST_MCP_PYTHON").unwrap_or_default();
    let ready = !python.is_empty()
        && Command::new(&python)
            .args(["-c", "import mcp"])
            .status()
            .is_ok_and(|status| status.success());
    if !ready {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "the MCP Python SDK is required under CI (make mcp-venv installs it)"
        );
        eprintln!("the MCP Python SDK is not installed: skipped");
        return None;
    }
    Some(python)
}

/// What `cited mcp` runs with: a database of its own, the knowledge base, the model.
fn vars(database: &str, model: &str) -> Vec<(String, String)> {
    [
        ("CITED_DATABASE_URL", database),
        ("CITED_SOURCES", "knowledge"),
        ("CITED_LLM_BASE_URL", model),
        ("CITED_LLM_MODEL", "scripted"),
        ("CITED_TITLES", "question"),
        ("CITED_RELATED", "sources"),
        ("CITED_IMAGES", "off"),
        ("CITED_LOG", "warn"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// `tests/mcp_client.py ARGS…` against the binary, with `vars`; the JSON it prints.
fn client(python: &str, vars: &[(String, String)], args: &[&str]) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_client.py");
    let output = Command::new(python)
        .arg(script)
        .args(args)
        .envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|_| {
        panic!(
            "not JSON: {stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_desktop_client_uses_cited_mcp_over_stdio() {
    let Some(python) = client_python() else {
        return;
    };
    let model = format!("{}/v1", common::scripted_model().await);
    let dir = std::env::temp_dir().join(format!("cited-mcp-stdio-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let database = format!("sqlite:{}", dir.join("cited.db").display());
    let vars = vars(&database, &model);
    let cited = env!("CARGO_BIN_EXE_cited");

    // An account whose history the answers land in.
    let mut add = Command::new(cited)
        .args(["user", "add", "mia"])
        .envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    add.stdin
        .take()
        .unwrap()
        .write_all(b"mia's password\n")
        .unwrap();
    assert!(add.wait().unwrap().success());

    // A user that does not exist is refused before MCP starts.
    let nobody = Command::new(cited)
        .args(["mcp", "--user", "nobody"])
        .envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(nobody.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&nobody.stderr).contains("no user nobody"));

    let python_for_tour = python.clone();
    let tour_vars = vars.clone();
    let out = tokio::task::spawn_blocking(move || {
        client(
            &python_for_tour,
            &tour_vars,
            &[
                "tour",
                "stdio",
                cited,
                "mia",
                "chat",
                "How do I run the tests?",
            ],
        )
    })
    .await
    .unwrap();
    assert_eq!(out["server"], "cited", "{out}");
    assert_eq!(out["tools"].as_object().map(|t| t.len()), Some(3), "{out}");
    // Offline: the knowledge base (the project's docs) is what `search` finds.
    assert_eq!(out["search"]["is_error"], false, "{out}");
    assert_eq!(
        out["search"]["structured"]["provider"], "knowledge",
        "{out}"
    );
    assert!(!out["search"]["structured"]["results"]
        .as_array()
        .unwrap()
        .is_empty());
    let chat = &out["ask"]["chat"];
    assert_eq!(chat["is_error"], false, "{chat}");
    assert!(
        chat["text"].as_str().unwrap().starts_with("w0 w1 "),
        "{chat}"
    );
    assert!(!chat["progress"].as_array().unwrap().is_empty(), "{chat}");
    assert_eq!(out["bad"]["no_question"]["error"]["code"], -32602, "{out}");
    assert_eq!(out["read_private"]["is_error"], true, "{out}");
    // The answer is mia's: a resource, as Markdown.
    let conversation = chat["structured"]["conversation"].as_str().unwrap();
    assert_eq!(out["resources"][0]["uri"], conversation, "{out}");
    let markdown = out["resource_text"].as_str().unwrap();
    assert!(markdown.starts_with("# "), "{markdown}");
    assert!(
        markdown.contains("## How do I run the tests?"),
        "{markdown}"
    );

    // A Research answer cancelled after its first progress; the session goes on.
    let cancel_vars = vars.clone();
    let out = tokio::task::spawn_blocking(move || {
        client(&python, &cancel_vars, &["cancel", "stdio", cited, "mia"])
    })
    .await
    .unwrap();
    assert_eq!(out["finished_before_cancel"], false, "{out}");
    assert!(
        out["progress_before_cancel"].as_u64().unwrap_or(0) >= 1,
        "{out}"
    );
    assert_eq!(out["after"], 3, "{out}");

    // Both answers are in mia's history, the cancelled one saved as stopped.
    let listed = Command::new(cited)
        .args(["history", "list"])
        .envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert_eq!(listed.lines().count(), 2, "{listed}");
    let _ = std::fs::remove_dir_all(&dir);
}
