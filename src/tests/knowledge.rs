//! The local knowledge base: indexing and search on Chinese and English documents, the
//! document page, and the offline path (no SearXNG, no model) in all three modes.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::searxng::{free_port, TempDir};
use super::TestServer;
use crate::model::Lang;
use crate::model::{Exchange, Level, Mode, SourceKind};
use crate::ssr::config::Config;
use crate::ssr::knowledge::KnowledgeBase;
use crate::ssr::pipeline::TurnInput;
use crate::ssr::search::{SearchOptions, SearchProvider};
use crate::ssr::session::SessionStore;
use crate::ssr::state::AppState;

/// A folder with English, Chinese, HTML, text and ignored files.
fn corpus() -> TempDir {
    let dir = TempDir::new("knowledge");
    let write = |name: &str, text: &str| {
        let path = dir.0.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "guide.md",
        "# Guide\n\n## Running tests\n\nRun `make test` from the project root; it runs every test.\n\n\
         ## Deploying\n\nUse docker compose to deploy the search engine.\n",
    );
    write(
        "指南.md",
        "# 部署指南\n\n## 启用 JSON\n\n在 settings.yml 的 search 下把 json 加入 formats，然后重启。\n\n\
         ## 其他\n\n这一节讲的是无关的天气。\n",
    );
    write(
        "pages/runtime.html",
        "<html><head><title>Async runtimes</title></head><body><nav>Menu</nav><article><h1>Async runtimes</h1>\
         <p>Tokio is the asynchronous runtime most servers use; it schedules tasks across threads \
         and drives network I/O for the whole program.</p><p>Other runtimes exist, such as smol, \
         which is smaller and simpler to embed.</p></article></body></html>",
    );
    write(
        "notes.txt",
        "Plain notes.\n\nThe cache keeps twenty entries per session.\n",
    );
    write("code.rs", "fn main() { /* make test */ }");
    write(".hidden/secret.md", "# Secret\n\nmake test secret\n");
    dir
}

async fn search(base: &KnowledgeBase, query: &str) -> Vec<crate::model::Source> {
    base.search(query, &SearchOptions::default())
        .await
        .expect("the knowledge base never fails")
        .sources
}

#[tokio::test]
async fn indexes_chinese_english_html_and_text() {
    let dir = corpus();
    let root = dir.0.file_name().unwrap().to_string_lossy().into_owned();
    let base = KnowledgeBase::open(vec![dir.0.clone()], 200);
    assert_eq!(
        base.len(),
        4,
        "md, md, html and txt; not .rs, not hidden folders"
    );

    let found = search(&base, "How do I run the tests?").await;
    let first = &found[0];
    assert_eq!(first.title, "Guide › Running tests");
    assert_eq!(first.kind, SourceKind::Knowledge);
    assert_eq!(first.url, format!("/knowledge/{root}/guide.md?p=0#passage"));
    assert_eq!(first.domain, format!("{root}/guide.md"));
    assert!(first.snippet.contains("make test"));
    assert!(found.iter().all(|s| !s.title.contains("Secret")));

    let found = search(&base, "如何启用 JSON 格式？").await;
    assert_eq!(found[0].title, "部署指南 › 启用 JSON");
    assert!(found[0].snippet.contains("formats"));
    assert!(
        found[0].url.contains("%E6%8C%87%E5%8D%97.md"),
        "{}",
        found[0].url
    );
    assert!(
        !found.iter().any(|s| s.snippet.contains("天气")),
        "an unrelated passage does not match: {found:?}"
    );

    let found = search(&base, "which async runtime do servers use").await;
    assert_eq!(found[0].title, "Async runtimes");
    assert!(found[0].snippet.contains("Tokio"));
    assert!(!found[0].snippet.contains("Menu"), "navigation is not text");

    // Query syntax is just text: nothing here is an error.
    for query in ["\"unbalanced", "title:(x", "*", "", "？？？", "AND OR NOT"] {
        let _ = search(&base, query).await;
    }
    assert!(search(&base, "").await.is_empty());
}

#[tokio::test]
async fn changed_files_are_indexed_again() {
    let dir = corpus();
    let base = KnowledgeBase::open(vec![dir.0.clone()], 200);
    assert!(!base.refresh(), "nothing changed");
    assert!(search(&base, "zebra").await.is_empty());
    std::fs::write(
        dir.0.join("zoo.md"),
        "# Zoo\n\nThe zebra lives in the zoo.\n",
    )
    .unwrap();
    assert!(base.refresh());
    assert_eq!(search(&base, "zebra").await[0].title, "Zoo");
    std::fs::remove_file(dir.0.join("zoo.md")).unwrap();
    assert!(base.refresh());
    assert!(search(&base, "zebra").await.is_empty());
}

#[cfg(unix)]
#[tokio::test]
async fn links_are_followed_only_inside_the_folder() {
    use std::os::unix::fs::symlink;
    let outside = TempDir::new("knowledge-outside");
    std::fs::write(
        outside.0.join("credentials.md"),
        "# Keys\n\nThe password of the production database is hunter2 and must stay secret.\n",
    )
    .unwrap();
    std::fs::create_dir_all(outside.0.join("private")).unwrap();
    std::fs::write(
        outside.0.join("private/diary.md"),
        "# Diary\n\nA private diary entry about the walrus.\n",
    )
    .unwrap();
    let dir = corpus();
    symlink(outside.0.join("credentials.md"), dir.0.join("notes.md")).unwrap();
    symlink(outside.0.join("private"), dir.0.join("linked")).unwrap();
    symlink(dir.0.join("guide.md"), dir.0.join("guide-link.md")).unwrap();
    symlink(dir.0.join("pages"), dir.0.join("pages-link")).unwrap();
    let base = KnowledgeBase::open(vec![dir.0.clone()], 200);
    assert!(search(&base, "hunter2 password").await.is_empty());
    assert!(search(&base, "walrus diary").await.is_empty());
    assert_eq!(
        base.len(),
        6,
        "the four files and the two links that stay inside"
    );
    let found = search(&base, "which async runtime do servers use").await;
    assert!(
        found
            .iter()
            .any(|s| s.url.contains("/pages-link/runtime.html")),
        "a link to a folder inside is followed: {found:?}"
    );
}

#[tokio::test]
async fn the_document_page_highlights_the_passage_and_serves_only_indexed_files() {
    let dir = corpus();
    std::fs::write(
        dir.0.join("xss.txt"),
        "<script>alert(1)</script>\n\nText with <img src=x onerror=alert(2)> inside.\n",
    )
    .unwrap();
    let root = dir.0.file_name().unwrap().to_string_lossy().into_owned();
    let knowledge = dir.0.display().to_string();
    let server = TestServer::start(&[("CITED_KNOWLEDGE_DIR", knowledge.as_str())]).await;
    let client = reqwest::Client::new();
    let get = |path: String| {
        let client = client.clone();
        let url = server.url(&path);
        async move {
            let response = client.get(url).send().await.unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        }
    };
    let (status, html) = get(format!("/knowledge/{root}/%E6%8C%87%E5%8D%97.md?p=0")).await;
    assert_eq!(status, 200);
    assert!(
        html.contains("<mark id=\"passage\" class=\"passage\"><p>在 settings.yml"),
        "{html}"
    );
    assert!(html.contains("<h1>部署指南</h1>"));
    let (status, html) = get(format!("/knowledge/{root}/xss.txt?p=0")).await;
    assert_eq!(status, 200);
    assert!(!html.contains("<script>alert"), "{html}");
    assert!(!html.contains("<img"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    for path in [
        format!("/knowledge/{root}/code.rs"),
        format!("/knowledge/{root}/.hidden/secret.md"),
        "/knowledge/Cargo.toml".to_string(),
        format!("/knowledge/{root}/../Cargo.toml"),
        "/knowledge/%2Fetc%2Fpasswd".to_string(),
    ] {
        let (status, html) = get(path.clone()).await;
        assert_eq!(status, 404, "{path}");
        assert!(
            !html.contains("[package]") && !html.contains("root:"),
            "{path}"
        );
    }
}

/// No SearXNG (a closed port), no model: the knowledge base and the extractive answerer.
fn offline_state() -> AppState {
    crate::ssr::net::install_crypto_provider();
    let closed = format!("http://127.0.0.1:{}", free_port());
    let (config, warnings) = Config::from_vars(|name| match name {
        "CITED_SEARXNG_URL" => Some(closed.clone()),
        "CITED_DATABASE_URL" => Some("sqlite::memory:".into()),
        _ => None,
    });
    assert!(warnings.is_empty());
    assert!(config.llm.is_none());
    AppState::new(config)
}

async fn ask_offline(state: &AppState, question: &str, mode: Mode) -> Exchange {
    let session = SessionStore::new(Duration::from_secs(60)).create(Instant::now());
    session.update_settings(|settings| settings.mode = mode);
    let (sender, mut receiver) = mpsc::channel(1024);
    let drain = tokio::spawn(async move { while receiver.recv().await.is_some() {} });
    let input = TurnInput {
        id: 1,
        question: question.to_string(),
        search_enabled: true,
        lang: Lang::ZhCn,
        mode,
        force_search: false,
        site: None,
        model: None,
        files: Vec::new(),
    };
    let cancel = CancellationToken::new();
    let exchange = crate::ssr::answer::run(state.clone(), session, input, cancel, sender).await;
    drain.await.unwrap();
    exchange
}

#[tokio::test]
async fn offline_every_mode_answers_from_the_projects_docs() {
    let state = offline_state();
    assert!(
        !state.knowledge.is_empty(),
        "the project's docs are indexed by default"
    );
    for (question, expected_doc, expected_text) in [
        (
            "如何在 SearXNG 中启用 JSON 格式？",
            "docs/faq.zh-CN.md",
            "formats",
        ),
        ("How do I run the tests?", "README.md", "make test"),
    ] {
        for mode in Mode::ALL {
            let exchange = ask_offline(&state, question, mode).await;
            let context = format!("{mode:?} {question}: {exchange:#?}");
            assert!(exchange.offline, "{context}");
            assert!(
                exchange.notices.iter().any(|n| n.level == Level::Info
                    && n.text
                        .starts_with("SearXNG 不可用，本次改用本地知识库回答。原因：")
                    && n.text.contains("CITED_SEARXNG_URL")),
                "the fallback is announced: {context}"
            );
            assert!(!exchange.cited.is_empty(), "{context}");
            let cited: Vec<_> = exchange
                .sources
                .iter()
                .filter(|e| exchange.cited.contains(&e.number))
                .collect();
            assert!(
                cited
                    .iter()
                    .all(|e| e.kind == SourceKind::Knowledge && e.url.starts_with("/knowledge/")),
                "{context}"
            );
            assert!(cited.iter().any(|e| e.domain == expected_doc), "{context}");
            assert!(exchange.answer.contains(expected_text), "{context}");
        }
    }
}

#[tokio::test]
async fn sources_auto_uses_a_healthy_searxng_and_both_merges() {
    crate::ssr::net::install_crypto_provider();
    let url = super::searxng::shared().url.clone();
    let state_with = |sources: &str| {
        let sources = sources.to_string();
        let url = url.clone();
        let (config, warnings) = Config::from_vars(move |name| match name {
            "CITED_SEARXNG_URL" => Some(url.clone()),
            "CITED_SOURCES" => Some(sources.clone()),
            "CITED_DATABASE_URL" => Some("sqlite::memory:".into()),
            _ => None,
        });
        assert!(warnings.is_empty());
        AppState::new(config)
    };
    let question = "How do Rust tests run?";
    let auto = ask_offline(&state_with("auto"), question, Mode::Chat).await;
    assert!(!auto.sources.is_empty());
    assert!(
        auto.sources.iter().all(|e| e.kind == SourceKind::Web),
        "{auto:#?}"
    );
    assert!(auto.notices.is_empty(), "{auto:#?}");
    let both = ask_offline(&state_with("web,knowledge"), question, Mode::Chat).await;
    assert!(
        both.sources.iter().any(|e| e.kind == SourceKind::Web),
        "{both:#?}"
    );
    assert!(
        both.sources.iter().any(|e| e.kind == SourceKind::Knowledge),
        "{both:#?}"
    );
    // Web first, then knowledge.
    let first_knowledge = both
        .sources
        .iter()
        .position(|e| e.kind == SourceKind::Knowledge)
        .unwrap();
    assert!(both.sources[..first_knowledge]
        .iter()
        .all(|e| e.kind == SourceKind::Web));
}

#[tokio::test]
async fn sources_auto_says_why_it_fell_back_when_json_is_off() {
    crate::ssr::net::install_crypto_provider();
    let url = super::searxng::shared_json_disabled().url.clone();
    let (config, warnings) = Config::from_vars(move |name| match name {
        "CITED_SEARXNG_URL" => Some(url.clone()),
        "CITED_DATABASE_URL" => Some("sqlite::memory:".into()),
        _ => None,
    });
    assert!(warnings.is_empty());
    let exchange = ask_offline(&AppState::new(config), "How do Rust tests run?", Mode::Chat).await;
    assert!(
        exchange
            .sources
            .iter()
            .all(|e| e.kind == SourceKind::Knowledge),
        "{exchange:#?}"
    );
    // The notice says it fell back, why (JSON is off), and the fix.
    assert!(
        exchange.notices.iter().any(|n| n
            .text
            .starts_with("SearXNG 不可用，本次改用本地知识库回答。原因：")
            && n.text.contains("search.formats")),
        "{:?}",
        exchange.notices
    );
}

#[tokio::test]
async fn a_search_keeps_as_many_results_as_configured() {
    let docs = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/docs"));
    let base = KnowledgeBase::open(vec![docs.clone()], 200);
    assert_eq!(search(&base, "cited").await.len(), 5, "the default");
    let base = KnowledgeBase::open(vec![docs], 200).with_results(12);
    assert_eq!(
        search(&base, "cited").await.len(),
        12,
        "CITED_SEARCH_RESULTS"
    );
}

#[tokio::test]
async fn every_first_run_example_is_answered_offline_with_citations() {
    let state = offline_state();
    for lang in [Lang::ZhCn, Lang::En] {
        for question in lang.texts().examples {
            let exchange = ask_offline(&state, question, Mode::Chat).await;
            let context = format!("{question}: {exchange:#?}");
            assert!(exchange.offline, "{context}");
            assert!(!exchange.answer.trim().is_empty(), "{context}");
            assert!(!exchange.cited.is_empty(), "{context}");
            assert!(
                exchange
                    .sources
                    .iter()
                    .filter(|e| exchange.cited.contains(&e.number))
                    .all(|e| e.kind == SourceKind::Knowledge),
                "{context}"
            );
        }
    }
}

#[tokio::test]
async fn the_first_run_offers_examples_only_with_documents_to_answer_them() {
    let setup = |server: &TestServer| {
        let url = server.url("/api/setup");
        async move {
            let response = reqwest::Client::new().post(url).send().await.unwrap();
            assert_eq!(response.status(), 200);
            response.json::<crate::model::Setup>().await.unwrap()
        }
    };
    // Out of the box: no model, no SearXNG (nothing listens), the project's docs.
    let with_docs = TestServer::start(&[("CITED_SEARXNG_URL", "http://127.0.0.1:9")]).await;
    assert_eq!(
        setup(&with_docs).await,
        crate::model::Setup {
            model: false,
            web: false,
            knowledge: true,
        }
    );
    // A folder with nothing to index: no examples to offer.
    let empty = std::env::temp_dir().join(format!("cited-empty-kb-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let folder = empty.display().to_string();
    let without = TestServer::start(&[
        ("CITED_SEARXNG_URL", "http://127.0.0.1:9"),
        ("CITED_KNOWLEDGE_DIR", folder.as_str()),
    ])
    .await;
    assert!(!setup(&without).await.knowledge);
    std::fs::remove_dir_all(&empty).unwrap();
}
