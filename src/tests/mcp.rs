//! cited's MCP server at `/mcp` driven by a real MCP client: the official Python SDK
//! (`tests/mcp_client.py`, installed by `make mcp-venv`), over streamable HTTP, against the
//! real SearXNG and scripted models: the tools and their schemas, `search`, `ask` in each
//! mode, bad arguments, the guarded reader, the conversations as resources, a Research
//! answer cancelled by the client, the key required when people sign in, and the 2026
//! protocol (no handshake). `tests/mcp_stdio.rs` drives `cited mcp` over stdio.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::{searxng, TestServer};
use crate::ssr::state::AppState;

/// The SDK's Python, or `None` outside `make test` (the test then says so and passes);
/// under `CI=true` its absence fails the test.
fn client_python() -> Option<String> {
    let python = std::env::var("CITED_TEST_MCP_PYTHON").unwrap_or_default();
    let ready = !python.is_empty()
        && std::process::Command::new(&python)
            .args(["-c", "import mcp"])
            .status()
            .is_ok_and(|status| status.success());
    if ready {
        return Some(python);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "the MCP Python SDK is required under CI (make mcp-venv installs it)"
    );
    #[allow(clippy::print_stderr)]
    {
        eprintln!("the MCP Python SDK is not installed: skipped");
    }
    None
}

/// Runs `tests/mcp_client.py ARGS…` (off the runtime the server runs on) and reads the JSON
/// object it prints.
async fn client(python: &str, args: &[&str]) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_client.py");
    let mut command = std::process::Command::new(python);
    command.arg(script).args(args);
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
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

/// Adds `name` with an API key; returns the key.
async fn user_with_key(state: &AppState, name: &str) -> String {
    let hash = crate::ssr::passwords::hash("a password of theirs").unwrap();
    assert!(state.store.create_user(name, &hash).await.unwrap());
    let (key, id) = crate::ssr::passwords::new_api_key().unwrap();
    state
        .store
        .add_api_key(&id, &crate::ssr::passwords::api_key_hash(&key), name, "mcp")
        .await
        .unwrap();
    key
}

/// A server on the shared SearXNG with `model` answering.
async fn server_with(
    model: Arc<dyn crate::ssr::llm::ChatModel>,
    extra: &[(&str, &str)],
) -> TestServer {
    let mut state = AppState::new(super::pipeline_config(&searxng::shared().url, extra));
    state.llm = model;
    TestServer::start_with(state).await
}

/// A server on the shared SearXNG whose model is the scripted OpenAI-compatible server's
/// `model`, with `extra` settings; and the script (what it was asked, whether its stream was
/// dropped).
async fn scripted_server(
    model: &str,
    extra: &[(&str, &str)],
) -> (TestServer, Arc<super::llm::Script>) {
    let (llm, script) = super::llm::fake_openai().await;
    let mut vars = vec![
        ("CITED_SEARXNG_URL", searxng::shared().url.as_str()),
        ("CITED_SOURCES", "web"),
        ("CITED_LLM_BASE_URL", llm.as_str()),
        ("CITED_LLM_MODEL", model),
    ];
    vars.extend_from_slice(extra);
    (TestServer::start(&vars).await, script)
}

fn text<'a>(value: &'a Value, path: &str) -> &'a str {
    value
        .pointer(path)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no text at {path}: {value}"))
}

/// A tool's error message (a JSON-RPC error that says what is wrong).
fn refused<'a>(value: &'a Value, name: &str) -> &'a str {
    let error = &value["bad"][name]["error"];
    assert_eq!(error["code"], -32602, "{name}: {value}");
    error["message"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_real_mcp_client_uses_the_tools_and_resources_over_http() {
    let Some(python) = client_python() else {
        return;
    };
    let (server, _) = scripted_server("text", &[]).await;
    let key = user_with_key(&server.state, "mia").await;
    let url = server.url("/mcp");
    let out = client(&python, &["tour", "http", &url, &key, "chat"]).await;
    assert_eq!(out["server"], "cited", "{out}");

    // The tools, each with what it requires.
    let tools = out["tools"].as_object().unwrap();
    let mut names: Vec<&String> = tools.keys().collect();
    names.sort();
    assert_eq!(names, ["ask", "read", "search"]);
    assert_eq!(tools["ask"]["required"], serde_json::json!(["question"]));
    assert_eq!(
        tools["ask"]["properties"],
        serde_json::json!(["focus", "mode", "question", "site", "time_range"])
    );
    assert_eq!(tools["read"]["required"], serde_json::json!(["url"]));
    assert!(text(&out, "/tools/ask/description").contains("[n]"));

    // `search`: SearXNG's results, numbered, without a model.
    assert_eq!(out["search"]["is_error"], false, "{out}");
    let results = out["search"]["structured"]["results"].as_array().unwrap();
    assert!((1..=3).contains(&results.len()), "{out}");
    for (n, result) in results.iter().enumerate() {
        assert_eq!(result["number"], n + 1);
        assert!(text(result, "/url").starts_with("http"), "{result}");
    }
    assert_eq!(out["search"]["structured"]["provider"], "web");
    assert!(text(&out, "/search/text").starts_with("[1] "), "{out}");

    // `ask`: the answer with its markers and sources, their support, CSL-JSON, progress.
    let chat = &out["ask"]["chat"];
    assert_eq!(chat["is_error"], false, "{chat}");
    assert!(
        text(chat, "/text").starts_with("量子计算很强 [1]。"),
        "{chat}"
    );
    assert!(text(chat, "/text").contains("\n\nSources:\n[1] "), "{chat}");
    let structured = &chat["structured"];
    let sources = structured["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 1, "{structured}");
    assert_eq!(sources[0]["number"], 1);
    assert!(sources[0]["support"].is_string(), "{structured}");
    assert!(structured["support"]["percent"].is_number(), "{structured}");
    assert!(
        structured["coverage"]["percent"].is_number(),
        "{structured}"
    );
    let csl = structured["csl"].as_array().unwrap();
    assert_eq!(csl.len(), 1, "{structured}");
    assert_eq!(csl[0]["URL"], sources[0]["url"], "{structured}");
    assert!(!chat["progress"].as_array().unwrap().is_empty(), "{chat}");

    // Bad arguments: MCP errors that say what is wrong.
    assert!(refused(&out, "no_question").contains("`question` is required"));
    assert!(refused(&out, "bad_mode").contains("chat, agent, research"));
    assert!(refused(&out, "unknown_argument").contains("no argument `langauge`"));
    assert!(refused(&out, "bad_count").contains("from 1 to 20"));
    assert!(refused(&out, "bad_site").contains("not a site"));
    assert!(refused(&out, "unknown_tool").contains("the tools are ask, search and read"));

    // `read` goes through the guarded reader: no private addresses, no files.
    assert_eq!(out["read_private"]["is_error"], true, "{out}");
    assert!(
        text(&out, "/read_private/text").contains("private"),
        "{out}"
    );
    assert_eq!(out["read_file"]["is_error"], true, "{out}");
    assert!(text(&out, "/read_file/text").contains("http"), "{out}");

    // The answer landed in the key's user's history, and is a resource.
    let conversation = text(chat, "/structured/conversation").to_string();
    assert!(conversation.starts_with("cited://conversations/"));
    let resources = out["resources"].as_array().unwrap();
    assert_eq!(resources.len(), 1, "{out}");
    assert_eq!(resources[0]["uri"], conversation.as_str());
    assert_eq!(resources[0]["mime"], "text/markdown");
    let markdown = text(&out, "/resource_text");
    assert!(markdown.starts_with("# "), "{markdown}");
    assert!(markdown.contains("## 量子计算 入门"), "{markdown}");
    assert!(markdown.contains("](http"), "linked references: {markdown}");
    assert_eq!(
        out["templates"],
        serde_json::json!(["cited://conversations/{id}"])
    );
    assert_eq!(out["missing_resource"]["code"], -32002, "{out}");

    // Without a key (no sign-in here), answers are nobody's: no resources.
    let anonymous = client(&python, &["auth", "http", &url, "-"]).await;
    assert_eq!(
        anonymous["tools"],
        serde_json::json!(["ask", "search", "read"]),
        "{anonymous}"
    );
}

#[tokio::test]
async fn agent_and_research_answer_through_mcp() {
    let Some(python) = client_python() else {
        return;
    };
    let agent = super::agent::script(&[&["Tokio runtime"]], |_| {
        "Tokio is an async runtime [1].".into()
    });
    let server = server_with(agent, &[]).await;
    let out = client(
        &python,
        &[
            "ask",
            "http",
            &server.url("/mcp"),
            "-",
            "agent",
            "What is Tokio?",
        ],
    )
    .await;
    let agent = &out["ask"]["agent"];
    assert_eq!(agent["is_error"], false, "{out}");
    assert!(
        text(agent, "/text").starts_with("Tokio is an async runtime [1]."),
        "{agent}"
    );
    assert_eq!(agent["structured"]["mode"], "agent");
    // An Agent's steps (its searches among them) are reported as progress.
    let notes = agent["progress"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|note| text(note, "/message").contains("Tokio runtime")),
        "{agent}"
    );

    let research = super::research::one_loop(vec![super::research::sub_question(
        "What is five alpha?",
        "five alpha",
    )])
    .model();
    let server = server_with(
        research,
        &[("CITED_RESEARCH_ENCYCLOPEDIA_ENGINES", "local wiki")],
    )
    .await;
    let out = client(
        &python,
        &[
            "ask",
            "http",
            &server.url("/mcp"),
            "-",
            "research",
            "What is five alpha?",
        ],
    )
    .await;
    let research = &out["ask"]["research"];
    assert_eq!(research["is_error"], false, "{out}");
    assert_eq!(research["structured"]["mode"], "research");
    assert!(text(research, "/text").contains("[1]"), "{research}");
    let notes = research["progress"].as_array().unwrap();
    assert!(notes.len() >= 2, "planning, researching, …: {research}");
    let values: Vec<f64> = notes
        .iter()
        .filter_map(|note| note["progress"].as_f64())
        .collect();
    assert!(
        values.windows(2).all(|pair| pair[0] < pair[1]),
        "progress only grows: {values:?}"
    );
}

#[tokio::test]
async fn a_cancelled_research_answer_stops_and_is_saved_as_stopped() {
    let Some(python) = client_python() else {
        return;
    };
    let (server, script) = scripted_server("endless", &[]).await;
    let key = user_with_key(&server.state, "noor").await;
    let out = client(&python, &["cancel", "http", &server.url("/mcp"), &key]).await;
    assert_eq!(out["finished_before_cancel"], false, "{out}");
    assert!(
        out["progress_before_cancel"].as_u64().unwrap_or(0) >= 1,
        "{out}"
    );
    assert_eq!(out["after"], 3, "the session goes on: {out}");
    // The answer was saved as stopped, and the model's stream, if the answer had opened
    // one, was dropped. (The first progress notice can come before the first model call:
    // on a loaded machine the cancel may then arrive before any stream is open.)
    let owner = crate::ssr::store::owner_of_user("noor");
    let mut stopped = None;
    let streamed = || script.requested() > 0;
    for _ in 0..100 {
        if let Some(summary) = server.state.store.list(&owner, 5).await.unwrap().first() {
            let conversation = server
                .state
                .store
                .conversation(&owner, &summary.id)
                .await
                .unwrap()
                .unwrap();
            stopped = conversation.exchanges.first().map(|e| e.stopped);
            if stopped == Some(true) && (script.dropped() || !streamed()) {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(stopped, Some(true), "the answer was saved as stopped");
    assert!(
        script.dropped() || !streamed(),
        "the model's stream was dropped ({} requests)",
        script.requested()
    );
}

#[tokio::test]
async fn a_key_is_required_when_people_sign_in() {
    let Some(python) = client_python() else {
        return;
    };
    let (server, _) = scripted_server("text", &[("CITED_AUTH", "accounts")]).await;
    let key = user_with_key(&server.state, "ines").await;
    let url = server.url("/mcp");

    let none = client(&python, &["auth", "http", &url, "-"]).await;
    assert!(none.get("tools").is_none(), "{none}");
    assert!(
        text(&none, "/error/message").contains("requires an account"),
        "{none}"
    );
    assert!(none["statuses"].as_array().unwrap().contains(&401.into()));

    let wrong = client(
        &python,
        &[
            "auth",
            "http",
            &url,
            "cited_00000000000000000000000000000000",
        ],
    )
    .await;
    assert!(wrong.get("tools").is_none(), "{wrong}");
    assert_eq!(text(&wrong, "/error/message"), "The API key is not valid.");
    assert!(wrong["statuses"].as_array().unwrap().contains(&401.into()));

    let right = client(&python, &["auth", "http", &url, &key]).await;
    assert_eq!(
        right["tools"],
        serde_json::json!(["ask", "search", "read"]),
        "{right}"
    );

    // The 2026 protocol (no handshake, a request at a time) with the key.
    let modern = client(&python, &["modern", "http", &url, &key]).await;
    assert_eq!(modern["protocol"], "2026-07-28", "{modern}");
    assert_eq!(modern["search"]["is_error"], false, "{modern}");
    assert_eq!(
        modern["search"]["structured"]["results"]
            .as_array()
            .map(Vec::len),
        Some(2),
        "{modern}"
    );
}
