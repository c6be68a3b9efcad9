//! A real language model for tests: llama.cpp's `llama-server` serving SmolLM2-135M-Instruct,
//! both installed by `scripts/llama.sh` (which `make test` runs first) under
//! `~/.cache/cited-llama`, or taken from `CITED_TEST_LLAMA_SERVER` and
//! `CITED_TEST_LLAMA_MODEL`. One server per test binary, on a free 127.0.0.1 port, killed
//! when the binary ends (its stdin closing ends a watcher that kills it too).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::searxng::{free_port, TempDir};

pub struct LlamaProcess {
    /// The OpenAI-compatible base URL (`…/v1`).
    pub url: String,
    child: Child,
    _dir: TempDir,
}

impl Drop for LlamaProcess {
    fn drop(&mut self) {
        // Closing its stdin makes the watcher kill the server and exit.
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// `var`, else `default` under `CITED_LLAMA_DIR` (where `scripts/llama.sh` installs),
/// else under `~/.cache/cited-llama`.
fn installed(var: &str, default: &str) -> PathBuf {
    if let Ok(path) = std::env::var(var) {
        return PathBuf::from(path);
    }
    let dir = std::env::var("CITED_LLAMA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            let home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_string());
            PathBuf::from(home).join(".cache/cited-llama")
        });
    let path = dir.join(default);
    assert!(
        path.exists(),
        "no {} for the real-model tests: run `scripts/llama.sh` (make test does) or set {var}",
        path.display()
    );
    path
}

/// The context the server gives the model, in tokens (two slots share it).
pub const CONTEXT: u32 = 8192;

pub fn start() -> LlamaProcess {
    let server = installed("CITED_TEST_LLAMA_SERVER", "bin/llama-server");
    let model = installed("CITED_TEST_LLAMA_MODEL", "smollm2.gguf");
    let port = free_port();
    let dir = TempDir::new("llama");
    let log = dir.0.join("llama.log");
    // `sh` ties the server's life to the test binary's: when our end of its stdin closes
    // (the binary exited, however), `read` returns and the server is killed.
    let script = "\"$0\" \"$@\" & pid=$!; read _ignored; kill $pid 2>/dev/null; wait $pid";
    let child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(&server)
        .args(["-m"])
        .arg(&model)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["-c", &CONTEXT.to_string(), "-np", "2", "-t", "2"])
        .args(["--jinja", "--no-webui"])
        // Greedy, with a fixed seed: a failure repeats on the next run, so it can be read.
        .args(["--temp", "0", "--seed", "42"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("cannot start llama-server");
    let mut process = LlamaProcess {
        url: format!("http://127.0.0.1:{port}/v1"),
        child,
        _dir: dir,
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    let health = format!("http://127.0.0.1:{port}/health");
    loop {
        if let Ok(Some(status)) = process.child.try_wait() {
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            panic!("llama-server exited with {status}:\n{log}");
        }
        if blocking_ok(&health) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "llama-server did not load the model within 120 s:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    process
}

/// `GET url` answered 200 (llama.cpp's `/health` says 503 while the model loads).
fn blocking_ok(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let Ok(mut stream) = std::net::TcpStream::connect(host) else {
        return false;
    };
    use std::io::{Read, Write};
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = write!(stream, "GET /{path} HTTP/1.0\r\nHost: {host}\r\n\r\n");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200")
}

/// The server shared by every real-model test of this binary.
pub fn shared() -> &'static LlamaProcess {
    static INSTANCE: OnceLock<LlamaProcess> = OnceLock::new();
    INSTANCE.get_or_init(start)
}
