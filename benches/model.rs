//! Figures against a real model: llama.cpp's `llama-server` with SmolLM2-135M-Instruct (as
//! `scripts/llama.sh` installs them), searching the project's own documentation (the
//! knowledge base: no network, the same sources every run). For each mode and a fixed set
//! of questions it prints the time to the first answer token, the answer's tokens per
//! second, the wall time, the model calls and tokens, and the citation coverage.
//!
//!     make bench-model
//!
//! (`cargo bench --no-default-features --features ssr --bench model`.) Not a criterion
//! benchmark: each answer takes seconds and the spread between questions is the point.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cited::model::{AnswerEvent, Lang, Mode};
use cited::ssr::config::Config;
use cited::ssr::pipeline::TurnInput;
use cited::ssr::session::SessionStore;
use cited::ssr::state::AppState;
use tokio_util::sync::CancellationToken;

const QUESTIONS: &[&str] = &[
    "How does cited number its citations?",
    "What does cited do when SearXNG is down?",
    "cited 的深度研究模式是怎么工作的？",
];

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Where `scripts/llama.sh` installs: `CITED_LLAMA_DIR`, else `~/.cache/cited-llama`.
fn cache(path: &str) -> std::path::PathBuf {
    let dir = std::env::var("CITED_LLAMA_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| {
            let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
            std::path::PathBuf::from(home).join(".cache/cited-llama")
        });
    dir.join(path)
}

#[allow(clippy::zombie_processes, reason = "Server's Drop kills and waits")]
fn start_server(port: u16) -> Server {
    let server = Command::new(cache("bin/llama-server"))
        .arg("-m")
        .arg(cache("smollm2.gguf"))
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["-c", "8192", "-np", "2", "-t", "2", "--jinja", "--no-webui"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("llama-server: run scripts/llama.sh first");
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        if healthy(port) {
            return Server(server);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("llama-server did not start");
}

/// `GET /health` answers 200 (503 while the model loads).
fn healthy(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = write!(stream, "GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200")
}

struct Figures {
    first_token: Option<Duration>,
    answer_tokens: u64,
    streaming: Duration,
    wall: Duration,
    calls: u32,
    tokens: u64,
    prompt_tokens: u64,
    /// Research: sub-questions answered with sourced evidence, of those asked.
    evidence: String,
    coverage: String,
    /// How the answer ended, and its first notice (why an answer is empty).
    outcome: String,
}

async fn measure(state: &AppState, mode: Mode, question: &str) -> Figures {
    let session = SessionStore::new(Duration::from_secs(600)).create(Instant::now());
    let (sender, mut receiver) = tokio::sync::mpsc::channel(4096);
    let input = TurnInput {
        id: 1,
        question: question.to_string(),
        search_enabled: true,
        lang: if question.is_ascii() {
            Lang::En
        } else {
            Lang::ZhCn
        },
        mode,
        force_search: false,
        site: None,
        model: None,
        files: Vec::new(),
    };
    let started = Instant::now();
    let run = tokio::spawn(cited::ssr::answer::run(
        state.clone(),
        session,
        input,
        CancellationToken::new(),
        sender,
    ));
    let mut first_token = None;
    let mut last_token = started;
    let mut pieces = 0u64;
    while let Some(event) = receiver.recv().await {
        if let AnswerEvent::Token { .. } = event {
            first_token.get_or_insert(started.elapsed());
            last_token = Instant::now();
            pieces += 1;
        }
    }
    let exchange = run.await.expect("the answer task ended");
    let wall = started.elapsed();
    let usage = exchange.usage.clone().unwrap_or_default();
    Figures {
        streaming: first_token.map_or(Duration::ZERO, |first| {
            last_token.duration_since(started).saturating_sub(first)
        }),
        first_token,
        answer_tokens: pieces,
        wall,
        calls: usage.calls,
        tokens: usage.completion_tokens,
        prompt_tokens: usage.prompt_tokens,
        evidence: exchange.research.as_ref().map_or("-".into(), |plan| {
            let asked = plan.sub_questions().count();
            let sourced = plan
                .sub_questions()
                .filter(|s| s.evidence.as_ref().is_some_and(|e| !e.numbers.is_empty()))
                .count();
            format!("{sourced}/{asked}")
        }),
        coverage: exchange
            .coverage
            .map_or("-".into(), |c| format!("{}/{}", c.cited, c.claims)),
        outcome: format!(
            "{:?}{}",
            exchange.state,
            exchange
                .notices
                .first()
                .map_or(String::new(), |n| format!(": {}", n.text))
        ),
    }
}

/// The configuration every run shares, then `extra` (which wins).
fn config(base: &str, extra: &[(&str, String)]) -> Config {
    let base = base.to_string();
    let (config, warnings) = Config::from_vars(|name| {
        if let Some((_, value)) = extra.iter().find(|(key, _)| *key == name) {
            return Some(value.clone());
        }
        match name {
            "CITED_LLM_BASE_URL" => Some(base.clone()),
            "CITED_LLM_MODEL" => Some("smollm2".into()),
            "CITED_SOURCES" => Some("knowledge".into()),
            "CITED_DATABASE_URL" => Some("sqlite::memory:".into()),
            "CITED_TITLES" => Some("question".into()),
            // Figures comparable with earlier runs: no model call after the answer.
            "CITED_CHECK" => Some("lexical".into()),
            "CITED_LLM_CONTEXT_CHARS" => Some("6000".into()),
            "CITED_LLM_MAX_TOKENS_ANSWER" => Some("512".into()),
            "CITED_RESEARCH_MAX_LOOPS" => Some("2".into()),
            "CITED_RESEARCH_DEADLINE_SECS" => Some("300".into()),
            _ => None,
        }
    });
    assert!(warnings.is_empty(), "{warnings:?}");
    config
}

/// `make bench-research-material`: what a Research branch reads (results × snippet
/// characters) against what it costs (prompt tokens, wall time) and finds (sub-questions
/// with sourced evidence, citation coverage), for the settings compared when choosing
/// `CITED_RESEARCH_RESULTS` and `CITED_RESEARCH_SNIPPET_CHARS`.
#[allow(clippy::print_stdout, reason = "the figures are the bench's output")]
fn material(runtime: &tokio::runtime::Runtime, base: &str) {
    println!(
        "{:<10} {:<44} {:>8} {:>7} {:>9} {:>9} {:>6}",
        "material", "question", "wall", "calls", "prompt", "evidence", "cited"
    );
    for (results, chars) in [(5, 200), (10, 400), (25, 600)] {
        let state = AppState::new(config(
            base,
            &[
                ("CITED_RESEARCH_RESULTS", results.to_string()),
                ("CITED_RESEARCH_SNIPPET_CHARS", chars.to_string()),
                // Each passage whole up to the longest setting, so the setting decides.
                ("CITED_SNIPPET_CHARS", "600".to_string()),
            ],
        ));
        let setting = format!("{results}×{chars}");
        let (mut wall, mut prompt) = (Duration::ZERO, 0u64);
        for question in QUESTIONS {
            let figures = runtime.block_on(measure(&state, Mode::Research, question));
            let shown: String = question.chars().take(42).collect();
            println!(
                "{:<10} {:<44} {:>7.1}s {:>7} {:>9} {:>9} {:>6}",
                setting,
                shown,
                figures.wall.as_secs_f64(),
                figures.calls,
                figures.prompt_tokens,
                figures.evidence,
                figures.coverage,
            );
            wall += figures.wall;
            prompt += figures.prompt_tokens;
        }
        let n = QUESTIONS.len() as u32;
        println!(
            "{setting:<10} mean wall {:.1}s, mean prompt tokens {}",
            (wall / n).as_secs_f64(),
            prompt / u64::from(n)
        );
    }
}

#[allow(clippy::print_stdout, reason = "the figures are the bench's output")]
fn main() {
    // `cargo bench` passes `--bench`; a filter argument picks modes by name.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let _server = start_server(port);
    let base = format!("http://127.0.0.1:{port}/v1");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let _guard = runtime.enter();
    if filter.iter().any(|f| f == "material") {
        material(&runtime, &base);
        return;
    }
    let state = AppState::new(config(&base, &[]));
    println!(
        "cited against llama-server + SmolLM2-135M-Instruct (Q4), 2 threads, knowledge-base search"
    );
    println!(
        "{:<9} {:<44} {:>10} {:>9} {:>9} {:>6} {:>7} {:>8}",
        "mode", "question", "1st token", "tokens/s", "wall", "calls", "tokens", "cited"
    );
    for (mode, name) in [
        (Mode::Chat, "chat"),
        (Mode::Agent, "agent"),
        (Mode::Research, "research"),
    ] {
        if !filter.is_empty() && !filter.iter().any(|f| f == name) {
            continue;
        }
        let mut walls = Vec::new();
        for question in QUESTIONS {
            let figures = runtime.block_on(measure(&state, mode, question));
            // A rate needs a stream: several pieces over a measurable time.
            let rate = if figures.answer_tokens < 2 || figures.streaming < Duration::from_millis(50)
            {
                "-".to_string()
            } else {
                format!(
                    "{:.1}",
                    figures.answer_tokens as f64 / figures.streaming.as_secs_f64()
                )
            };
            let shown: String = question.chars().take(42).collect();
            println!(
                "{:<9} {:<44} {:>10} {:>9} {:>8.1}s {:>6} {:>7} {:>8}",
                name,
                shown,
                figures
                    .first_token
                    .map_or("-".into(), |d| format!("{:.2}s", d.as_secs_f64())),
                rate,
                figures.wall.as_secs_f64(),
                figures.calls,
                figures.tokens,
                figures.coverage,
            );
            println!("{:<9} └ {}", "", figures.outcome);
            walls.push(figures.wall);
        }
        let mean = walls.iter().sum::<Duration>() / walls.len().max(1) as u32;
        println!("{name:<9} mean wall time {:.1}s", mean.as_secs_f64());
    }
}
