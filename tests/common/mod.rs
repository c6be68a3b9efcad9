//! What the binary-level tests share: free ports, small HTTP servers for scripted fakes,
//! and starting `cited serve` until it answers.
#![allow(dead_code, reason = "each test binary uses its own part")]

use std::net::TcpListener as StdListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use axum::response::IntoResponse;
use axum::routing::post;
use axum::Router;

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Serves `app` on a free 127.0.0.1 port; its base URL.
pub async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// An OpenAI-compatible model whose reply depends on the question: "endless" never ends
/// (a word every 15 ms), "short" is three words, anything else 60 words over about a second.
/// Its base URL, without `/v1`.
pub async fn scripted_model() -> String {
    async fn complete(body: String) -> impl IntoResponse {
        let request: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        let asked = request["messages"]
            .as_array()
            .and_then(|messages| messages.last())
            .map(|message| message["content"].to_string())
            .unwrap_or_default();
        let words: Option<u64> = if asked.contains("endless") {
            None
        } else if asked.contains("short") {
            Some(3)
        } else {
            Some(60)
        };
        let chunks = futures_util::stream::unfold(0u64, move |n| async move {
            tokio::time::sleep(Duration::from_millis(15)).await;
            let chunk = match words {
                Some(total) if n == total => {
                    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n".to_string()
                }
                Some(total) if n > total => return None,
                _ => format!(
                    "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"w{n} \"}}}}]}}\n\n"
                ),
            };
            Some((Ok::<_, std::io::Error>(chunk), n + 1))
        });
        (
            [(axum::http::header::CONTENT_TYPE, "text/event-stream")],
            axum::body::Body::from_stream(chunks),
        )
    }
    serve(Router::new().route("/v1/chat/completions", post(complete))).await
}

/// POSTs to `path` on the cited at `port` (a server function without arguments) and reads
/// its JSON answer.
pub async fn post_json<T: serde::de::DeserializeOwned>(
    browser: &reqwest::Client,
    port: u16,
    path: &str,
) -> T {
    browser
        .post(format!("http://127.0.0.1:{port}{path}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Runs `cited serve` on `port` with `vars` and waits until it answers `/healthz`. The
/// image strip's search is off unless `vars` turn it on: these tests count searches.
pub async fn start_cited(port: u16, vars: &[(&str, &str)], stderr: Stdio) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cited"))
        .arg("serve")
        .env("CITED_ADDR", format!("127.0.0.1:{port}"))
        .env("CITED_IMAGES", "off")
        .envs(vars.iter().copied())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let health = format!("http://127.0.0.1:{port}/healthz");
    while Instant::now() < deadline {
        if reqwest::get(&health)
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            return child;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("cited did not start on port {port}");
}
