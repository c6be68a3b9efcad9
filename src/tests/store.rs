//! The conversation store on both backends: SQLite (a file of its own per test) and the
//! PostgreSQL these machines run (`CITED_TEST_DATABASE_URL`, default
//! `postgres://postgres@127.0.0.1:5432/test`; under `CI=true` an unreachable one fails).
//! Then the whole app over it: a restart, a crash mid-answer, a flood of anonymous loads.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::citation::Registry;
use crate::model::{AnswerEvent, Exchange, ExchangeState, Lang, Mode, Settings, Source};
use crate::ssr::pipeline::TurnInput;
use crate::ssr::session::{Session, SessionId};
use crate::ssr::state::AppState;
use crate::ssr::store::{Store, StoredBrowser};

/// A fresh SQLite database file under the system's temp folder.
pub fn sqlite_url() -> String {
    let path = std::env::temp_dir()
        .join("cited-tests")
        .join(format!("{}.db", SessionId::random()));
    format!("sqlite:{}", path.display())
}

/// The test PostgreSQL, or `None` (with a note) when it is not running outside CI.
#[allow(clippy::print_stderr, reason = "a skipped half of a test says so")]
pub async fn postgres() -> Option<Store> {
    let url = std::env::var("CITED_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
    let store = Store::open(&url).unwrap();
    match store.ready().await {
        Ok(()) => Some(store),
        Err(error) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("PostgreSQL at {url} is required under CI: {error}")
        }
        Err(error) => {
            eprintln!(
                "PostgreSQL at {url} is not reachable, its half of the test is skipped: {error}"
            );
            None
        }
    }
}

/// Both backends, ready.
async fn backends() -> Vec<Store> {
    let sqlite = Store::open(&sqlite_url()).unwrap();
    sqlite.ready().await.unwrap();
    let mut stores = vec![sqlite];
    stores.extend(postgres().await);
    stores
}

fn owner() -> String {
    SessionId::random().to_string()
}

fn exchange(question: &str, answer: &str, state: ExchangeState) -> Exchange {
    Exchange {
        question: question.into(),
        answer: answer.into(),
        mode: Mode::Agent,
        state,
        done: state != ExchangeState::Answering,
        ..Exchange::default()
    }
}

/// A new, empty conversation of a new owner: (owner, id).
async fn fresh_conversation(store: &Store, title: &str) -> (String, String) {
    let (me, id) = (owner(), owner());
    store
        .create_conversation(&me, &id, title, Mode::Chat)
        .await
        .unwrap();
    (me, id)
}

/// A conversation of `owner` with one exchange at position 0.
async fn seed(store: &Store, owner: &str, id: &str, title: &str, exchange: &Exchange) {
    store
        .create_conversation(owner, id, title, exchange.mode)
        .await
        .unwrap();
    assert_eq!(store.begin_exchange(id, exchange).await.unwrap(), 0);
}

#[tokio::test]
async fn conversations_round_trip_per_owner() {
    for store in backends().await {
        let backend = store.backend();
        let (alice, bob) = (owner(), owner());
        let first = owner();
        let second = owner();
        seed(
            &store,
            &alice,
            &first,
            "量子计算入门",
            &exchange("量子计算是什么？", "", ExchangeState::Answering),
        )
        .await;
        let mut registry = Registry::new();
        registry.add_round(
            "quantum",
            &[Source {
                url: "https://example.org/q".into(),
                title: "Quantum".into(),
                ..Source::default()
            }],
        );
        let done = exchange(
            "量子计算是什么？",
            "一种计算方式 [1]。",
            ExchangeState::Done,
        );
        store
            .finish_exchange(&first, 0, &done, Some(&registry))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        store
            .create_conversation(&alice, &second, "Rust async", Mode::Agent)
            .await
            .unwrap();

        let listed = store.list(&alice, 50).await.unwrap();
        let ids: Vec<&str> = listed.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            vec![second.as_str(), first.as_str()],
            "{backend:?}: newest first"
        );
        assert!(
            store.list(&bob, 50).await.unwrap().is_empty(),
            "{backend:?}"
        );
        assert!(
            store.conversation(&bob, &first).await.unwrap().is_none(),
            "{backend:?}: not bob's"
        );
        // The command line sees every browser's conversations.
        let all = store.list_all(100_000).await.unwrap();
        assert!(
            all.iter().any(|(who, c)| who == &alice && c.id == first),
            "{backend:?}"
        );
        assert!(store.conversation_by_id(&first).await.unwrap().is_some());

        let loaded = store.conversation(&alice, &first).await.unwrap().unwrap();
        assert_eq!(loaded.exchanges, vec![done], "{backend:?}");
        assert_eq!(loaded.registry, registry, "{backend:?}");
        assert_eq!(loaded.summary.title, "量子计算入门");
        assert_eq!(
            loaded.summary.mode,
            Mode::Agent,
            "{backend:?}: the mode of its last answer"
        );
    }
}

#[tokio::test]
async fn search_finds_words_and_chinese_in_titles_and_answers() {
    for store in backends().await {
        let backend = store.backend();
        let me = owner();
        let (a, b) = (owner(), owner());
        seed(
            &store,
            &me,
            &a,
            "Tokio runtime",
            &exchange(
                "what is tokio",
                "An async runtime for Rust [1].",
                ExchangeState::Done,
            ),
        )
        .await;
        seed(
            &store,
            &me,
            &b,
            "配音演员",
            &exchange("猫眼三姐妹的配音", "结论：姚培华 [2]", ExchangeState::Done),
        )
        .await;
        let found = |query: &'static str| {
            let store = &store;
            let me = me.clone();
            async move {
                store
                    .search(&me, query, 20)
                    .await
                    .unwrap()
                    .into_iter()
                    .map(|c| c.id)
                    .collect::<Vec<_>>()
            }
        };
        assert_eq!(found("ASYNC rust").await, vec![a.clone()], "{backend:?}");
        assert_eq!(
            found("姚培华").await,
            vec![b.clone()],
            "{backend:?}: in an answer"
        );
        assert_eq!(
            found("配音").await,
            vec![b.clone()],
            "{backend:?}: in a title"
        );
        assert!(found("python").await.is_empty(), "{backend:?}");
        assert!(
            found("\" OR * NEAR(").await.is_empty(),
            "{backend:?}: no query syntax"
        );
        assert!(
            store
                .search(&owner(), "tokio", 20)
                .await
                .unwrap()
                .is_empty(),
            "{backend:?}: mine only"
        );
        // Renamed: found by the new title; deleted: gone until restored.
        assert!(store
            .rename(&me, &a, "Async in Rust, 2026 notes")
            .await
            .unwrap());
        assert_eq!(found("2026").await, vec![a.clone()], "{backend:?}");
        assert!(store.set_deleted(&me, &a, true).await.unwrap());
        assert!(found("tokio").await.is_empty(), "{backend:?}");
        assert!(store.list(&me, 50).await.unwrap().iter().all(|c| c.id != a));
        assert!(store.set_deleted(&me, &a, false).await.unwrap());
        assert_eq!(found("tokio").await, vec![a.clone()], "{backend:?}: undo");
    }
}

#[tokio::test]
async fn the_store_numbers_exchanges_even_when_they_race() {
    for store in backends().await {
        let backend = store.backend();
        let (me, id) = fresh_conversation(&store, "race").await;
        let question = exchange("q", "", ExchangeState::Answering);
        let mut seqs: Vec<u32> =
            futures_util::future::join_all((0..4).map(|_| store.begin_exchange(&id, &question)))
                .await
                .into_iter()
                .map(Result::unwrap)
                .collect();
        seqs.sort_unstable();
        assert_eq!(seqs, vec![0, 1, 2, 3], "{backend:?}");
        assert_eq!(store.begin_exchange(&id, &question).await.unwrap(), 4);
        // A model's title only replaces the title it was asked to replace.
        assert!(store.rename(&me, &id, "mine").await.unwrap());
        assert!(!store.rename_if(&me, &id, "race", "model's").await.unwrap());
        assert!(store.rename_if(&me, &id, "mine", "model's").await.unwrap());
    }
}

#[tokio::test]
async fn share_links_open_for_anyone_until_revoked() {
    for store in backends().await {
        let backend = store.backend();
        let (me, id) = fresh_conversation(&store, "shared").await;
        let token = owner();
        assert_eq!(
            store.set_share(&owner(), &id, Some(&token)).await.unwrap(),
            None,
            "{backend:?}: only the owner shares"
        );
        assert_eq!(
            store.set_share(&me, &id, Some(&token)).await.unwrap(),
            Some(token.clone())
        );
        let shared = store.shared(&token).await.unwrap().unwrap();
        assert_eq!(shared.summary.id, id, "{backend:?}");
        assert!(
            store.shared(&owner()).await.unwrap().is_none(),
            "{backend:?}"
        );
        store.set_share(&me, &id, None).await.unwrap();
        assert!(
            store.shared(&token).await.unwrap().is_none(),
            "{backend:?}: revoked"
        );
    }
}

#[tokio::test]
async fn unfinished_answers_become_interrupted_and_browsers_are_remembered() {
    for store in backends().await {
        let backend = store.backend();
        let (me, id) = (owner(), owner());
        seed(
            &store,
            &me,
            &id,
            "cut",
            &exchange("kept?", "half an ans", ExchangeState::Answering),
        )
        .await;
        let interrupted = store.interrupt_unfinished().await.unwrap();
        assert!(interrupted >= 1, "{backend:?}");
        let loaded = store.conversation(&me, &id).await.unwrap().unwrap();
        assert_eq!(
            loaded.exchanges[0].state,
            ExchangeState::Interrupted,
            "{backend:?}"
        );
        assert_eq!(loaded.exchanges[0].question, "kept?");

        let settings = Settings {
            mode: Mode::Research,
            search_enabled: false,
            sources: None,
            lang: Some(Lang::En),
            focus: crate::model::Focus::Academic,
            period: Some(crate::model::Period::Week),
            site: Some("example.org".into()),
            model: Some("main|other-model".into()),
        };
        let browser = StoredBrowser {
            settings,
            conversation: Some(id.clone()),
            user: None,
        };
        store.save_browser(&me, &browser).await.unwrap();
        assert_eq!(
            store.browser(&me).await.unwrap(),
            Some(browser),
            "{backend:?}"
        );
        assert_eq!(store.browser(&owner()).await.unwrap(), None, "{backend:?}");
    }
}

/// Runs one answer in `mode` on `session`, to the end.
async fn answer(state: &AppState, session: &Arc<Session>, question: &str, mode: Mode) -> Exchange {
    answer_events(state, session, question, mode).await.0
}

/// Runs one answer in `mode` on `session`, to the end, with the events it sent.
async fn answer_events(
    state: &AppState,
    session: &Arc<Session>,
    question: &str,
    mode: Mode,
) -> (Exchange, Vec<AnswerEvent>) {
    let (sender, mut receiver) = mpsc::channel(1024);
    let drain = tokio::spawn(async move {
        let mut events = Vec::new();
        while let Some(event) = receiver.recv().await {
            events.push(event);
        }
        events
    });
    let input = TurnInput {
        id: 1,
        question: question.into(),
        search_enabled: true,
        lang: Lang::ZhCn,
        mode,
        force_search: false,
        site: None,
        model: None,
        files: Vec::new(),
    };
    let exchange = crate::ssr::answer::run(
        state.clone(),
        Arc::clone(session),
        input,
        CancellationToken::new(),
        sender,
    )
    .await;
    (exchange, drain.await.unwrap())
}

fn state_on(url: &str, model: Arc<dyn crate::ssr::llm::ChatModel>) -> AppState {
    super::App::searching(&super::searxng::shared().url)
        .var("CITED_DATABASE_URL", url)
        .model(model)
        .state()
}

#[tokio::test]
async fn a_restart_brings_back_the_conversation_and_its_numbering() {
    for url in [
        Some(sqlite_url()),
        postgres().await.map(|_| {
            std::env::var("CITED_TEST_DATABASE_URL")
                .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
        }),
    ]
    .into_iter()
    .flatten()
    {
        let model = super::agent::script(&[&["five a"]], |_| "first [1]".into());
        let before = state_on(&url, model);
        let session = before.sessions.create(Instant::now());
        let first = answer(&before, &session, "q1", Mode::Agent).await;
        assert_eq!(first.cited, vec![1], "{url}");
        let id = session.id.to_string();
        drop(before);

        // A new process: nothing in memory, the same database.
        let model = super::agent::script(&[&["three b"]], |_| "second [6] and [1]".into());
        let after = state_on(&url, model);
        assert!(after.sessions.is_empty());
        let restored = crate::ssr::request::find_session(&after, &id)
            .await
            .expect("the browser is remembered");
        assert_eq!(restored.conversation(), vec![first.clone()], "{url}");
        assert_eq!(restored.with_registry(|r| r.len()), 5, "{url}");
        let second = answer(&after, &restored, "q2", Mode::Agent).await;
        assert_eq!(
            second.cited,
            vec![1, 6],
            "{url}: numbering continues after [5]"
        );
        let stored = after
            .store
            .conversation(&id, &restored.conversation_id().unwrap())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.exchanges.len(), 2, "{url}");
        assert_eq!(stored.registry.len(), 8, "{url}");
        // The Markdown export (the download and `cited history export`) links each marker
        // to its source (seed 003), so the text keeps its citations wherever it is pasted.
        let exported = crate::ssr::web::history_routes::markdown(&stored);
        let url_of = |n: u32| {
            stored
                .exchanges
                .iter()
                .flat_map(|e| &e.sources)
                .find(|s| s.number == n)
                .map(|s| s.url.clone())
                .unwrap()
        };
        assert!(
            exported.contains(&format!(
                "second [[6]]({}) and [[1]]({})",
                url_of(6),
                url_of(1)
            )),
            "{url}: {exported}"
        );
        assert!(
            exported.contains(&format!("first [[1]]({})", url_of(1))),
            "{exported}"
        );
    }
}

#[test]
fn a_crash_mid_answer_leaves_the_question_interrupted() {
    let url = sqlite_url();
    let owner_id = {
        // The "process" that dies: its runtime is torn down while the answer streams, so
        // nothing after the first tokens runs (no finish, no save), as with `kill -9`.
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let url = url.clone();
        let id = runtime.block_on(async move {
            let state = state_on(&url, super::chat::Scripted::endless());
            let session = state.sessions.create(Instant::now());
            let (sender, mut receiver) = mpsc::channel(1024);
            let input = TurnInput {
                id: 1,
                question: "a question that must not be lost".into(),
                search_enabled: false,
                lang: Lang::ZhCn,
                mode: Mode::Chat,
                force_search: false,
                site: None,
                model: None,
                files: Vec::new(),
            };
            tokio::spawn(crate::ssr::answer::run(
                state,
                Arc::clone(&session),
                input,
                CancellationToken::new(),
                sender,
            ));
            while let Some(event) = receiver.recv().await {
                match event {
                    crate::model::AnswerEvent::Token { .. } => break,
                    crate::model::AnswerEvent::Notice { notice } => {
                        panic!("the question was not stored: {notice:?}")
                    }
                    _ => {}
                }
            }
            // The "browser" stays connected: a closed stream would end the answer cleanly
            // (saved as stopped), which is not what a crash does.
            (session.id.to_string(), receiver)
        });
        runtime.shutdown_background();
        let (id, receiver) = id;
        std::thread::sleep(Duration::from_millis(200));
        drop(receiver);
        id
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async move {
        let state = state_on(&url, super::chat::Scripted::endless());
        assert_eq!(state.store.interrupt_unfinished().await.unwrap(), 1);
        let session = crate::ssr::request::find_session(&state, &owner_id)
            .await
            .unwrap();
        let exchanges = session.conversation();
        assert_eq!(exchanges.len(), 1);
        assert_eq!(exchanges[0].question, "a question that must not be lost");
        assert_eq!(exchanges[0].state, ExchangeState::Interrupted);
    });
}

// Its own worker threads, so 10,500 requests do not starve the rest of the suite.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_anonymous_requests_loses_no_one() {
    use futures_util::StreamExt;

    let server = super::TestServer::start(&[
        ("CITED_SEARXNG_URL", "http://127.0.0.1:9"),
        ("CITED_DATABASE_URL", &sqlite_url()),
        // About sessions, not rate limits (`exposure` tests those).
        ("CITED_RATE_REQUESTS_PER_MIN", "10000000"),
    ])
    .await;
    let alice = super::browser();
    ask_http(&alice, &server, "How do I enable SearXNG's JSON output?").await;
    let conversation = |client: reqwest::Client| {
        let url = server.url("/api/conversation");
        async move {
            client
                .post(url)
                .send()
                .await
                .unwrap()
                .json::<Vec<Exchange>>()
                .await
                .unwrap()
        }
    };
    let before = conversation(alice.clone()).await;
    assert_eq!(before.len(), 1);
    // More cookie-less requests than the session cache holds (10,000). The old middleware
    // minted a session for each; a page load mints none either
    // (`server::page_is_server_rendered_with_the_ui_contract`).
    let anonymous = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let loads = futures_util::stream::iter(0..10_500)
        .map(|_| {
            let request = anonymous.post(server.url("/api/get_settings")).send();
            async move {
                let response = request.await.unwrap();
                assert!(response.headers().get("set-cookie").is_none());
                response.status()
            }
        })
        .buffer_unordered(4)
        .filter(|status| std::future::ready(!status.is_success()))
        .collect::<Vec<_>>()
        .await;
    assert!(loads.is_empty(), "every request succeeded: {loads:?}");
    assert_eq!(
        conversation(alice.clone()).await,
        before,
        "alice keeps her conversation"
    );
}

/// Asks over HTTP and reads the whole answer.
async fn ask_http(client: &reqwest::Client, server: &super::TestServer, question: &str) {
    let events = super::chat::post_ask(client, server, question)
        .await
        .unwrap();
    assert!(matches!(
        super::done_event(&events),
        Some(crate::model::AnswerEvent::Done { .. })
    ));
}

async fn history(
    client: &reqwest::Client,
    server: &super::TestServer,
    query: Option<&str>,
) -> crate::model::History {
    let mut form = Vec::new();
    if let Some(query) = query {
        form.push(("query", query));
    }
    client
        .post(server.url("/api/history"))
        .form(&form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn history_pages_share_and_export_work_over_plain_http() {
    let server = super::TestServer::start(&[
        ("CITED_SEARXNG_URL", "http://127.0.0.1:9"),
        ("CITED_DATABASE_URL", &sqlite_url()),
    ])
    .await;
    let me = super::browser();
    assert!(history(&me, &server, None).await.conversations.is_empty());
    ask_http(&me, &server, "How do I enable SearXNG's JSON output?").await;
    // "新对话" is a plain form post; the next question starts a second conversation.
    let new = me.post(server.url("/new")).send().await.unwrap();
    assert_eq!(new.status(), 303);
    assert_eq!(new.headers()["location"], "/");
    ask_http(&me, &server, "怎么运行测试？").await;
    // `/reset` also starts a new conversation and keeps the old ones.
    let reset = super::chat::post_ask(&me, &server, "/reset").await.unwrap();
    assert!(matches!(
        reset.first(),
        Some(crate::model::AnswerEvent::Command { reset: true, .. })
    ));
    let listed = history(&me, &server, None).await;
    let titles: Vec<&str> = listed
        .conversations
        .iter()
        .map(|c| c.title.as_str())
        .collect();
    assert_eq!(
        titles,
        vec!["怎么运行测试？", "How do I enable SearXNG's JSON output?"]
    );
    let first = listed.conversations[1].id.clone();
    assert_eq!(
        listed.current, None,
        "after /reset the next question starts afresh"
    );

    // Search over titles and answers, with its own page for browsers without JavaScript.
    let found = history(&me, &server, Some("json")).await;
    assert_eq!(found.conversations.len(), 1);
    assert_eq!(found.conversations[0].id, first);
    let page = server.text(&me, "/?q=json").await;
    assert!(
        page.contains("aria-label=\"历史对话\""),
        "the history region: {page}"
    );
    assert!(page.contains(&format!("href=\"/c/{first}\"")));
    let second = &listed.conversations[0].id;
    assert!(
        !page.contains(&format!("href=\"/c/{second}\"")),
        "only the match is listed"
    );

    // Each conversation has its own server-rendered page, which also reopens it.
    let page = server.text(&me, &format!("/c/{first}")).await;
    assert!(
        page.contains("How do I enable SearXNG&#x27;s JSON output?")
            || page.contains("How do I enable SearXNG's JSON output?")
    );
    assert!(page.contains("aria-current=\"page\""));
    assert_eq!(
        history(&me, &server, None).await.current.as_deref(),
        Some(first.as_str())
    );
    let stranger = super::browser();
    let page = server.text(&stranger, &format!("/c/{first}")).await;
    assert!(
        !page.contains("JSON output?"),
        "another browser cannot open it"
    );

    // Export: Markdown with the question, the answer and its references.
    let export = me
        .get(server.url(&format!("/c/{first}/export.md")))
        .send()
        .await
        .unwrap();
    assert_eq!(export.status(), 200);
    assert!(export.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .starts_with("attachment"));
    let markdown = export.text().await.unwrap();
    assert!(
        markdown.starts_with("# How do I enable SearXNG's JSON output?\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("参考文献") && markdown.contains("/knowledge/"),
        "{markdown}"
    );
    assert_eq!(
        stranger
            .get(server.url(&format!("/c/{first}/export.md")))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );

    // Share: a read-only page for anyone with the link, until revoked.
    let token: Option<String> = server
        .call(
            &me,
            "/api/share_conversation",
            &[("id", first.as_str()), ("on", "true")],
        )
        .await;
    let token = token.expect("a share token");
    assert_eq!(token.len(), 32);
    let response = stranger
        .get(server.url(&format!("/s/{token}")))
        .send()
        .await
        .unwrap();
    // A capability: never indexed.
    assert_eq!(response.headers()["x-robots-tag"], "noindex, nofollow");
    let shared = response.text().await.unwrap();
    assert!(shared.contains("JSON output?"), "{shared}");
    assert!(
        shared.contains("aria-label=\"引用 "),
        "citations render on the shared page (which numbers depends on the docs the offline \
         answerer reads): {shared}"
    );
    assert!(
        !shared.contains("aria-label=\"提问\""),
        "read-only: no question box"
    );
    server
        .send(
            &me,
            "/api/share_conversation",
            &[("id", first.as_str()), ("on", "false")],
        )
        .await;
    let shared = server.text(&stranger, &format!("/s/{token}")).await;
    assert!(!shared.contains("JSON output?"), "revoked");

    // Rename, delete and undo.
    let renamed: bool = server
        .call(
            &me,
            "/api/rename_conversation",
            &[("id", first.as_str()), ("title", "JSON in SearXNG")],
        )
        .await;
    assert!(renamed);
    let empty = server
        .send(
            &me,
            "/api/rename_conversation",
            &[("id", first.as_str()), ("title", "  ")],
        )
        .await;
    assert_eq!(empty.status(), 400);
    let delete = |deleted: &'static str| {
        me.post(server.url("/api/delete_conversation"))
            .form(&[("id", first.as_str()), ("deleted", deleted)])
            .send()
    };
    delete("true").await.unwrap();
    assert_eq!(history(&me, &server, None).await.conversations.len(), 1);
    delete("false").await.unwrap();
    let titles: Vec<String> = history(&me, &server, None)
        .await
        .conversations
        .into_iter()
        .map(|c| c.title)
        .collect();
    assert!(
        titles.contains(&"JSON in SearXNG".to_string()),
        "{titles:?}"
    );
}

/// Answers questions, and writes a decorated title when asked for one.
fn titler() -> Arc<super::model::Model> {
    use crate::ssr::llm::Message;
    super::model::Model::new(|request| {
        let asks_title =
            matches!(request.messages.first(), Some(Message::System(s)) if s.contains("标题"));
        super::model::Reply::text(if asks_title {
            "**“Tokio 入门” [1]。**\nextra line"
        } else {
            "Tokio 是异步运行时。"
        })
    })
}

#[tokio::test]
async fn the_model_names_a_new_conversation_and_the_page_hears_of_it() {
    let config = super::pipeline_config(
        "http://127.0.0.1:9",
        &[
            ("CITED_DATABASE_URL", &sqlite_url()),
            ("CITED_TITLES", "model"),
        ],
    );
    let mut state = AppState::new(config);
    state.llm = titler();
    let session = state.sessions.create(Instant::now());
    let owner = session.id.to_string();
    let (_, events) = answer_events(&state, &session, "Tokio 是什么？", Mode::Chat).await;
    // The history hears of the new conversation under the question as soon as it is kept…
    let (id, title) = events
        .iter()
        .find_map(|e| match e {
            AnswerEvent::Conversation { id, title, .. } => Some((id.clone(), title.clone())),
            _ => None,
        })
        .expect("the answer names its conversation");
    assert_eq!(title, "Tokio 是什么？");
    let position = |wanted: fn(&AnswerEvent) -> bool| events.iter().position(wanted);
    assert!(
        position(|e| matches!(e, AnswerEvent::Conversation { .. }))
            < position(|e| matches!(e, AnswerEvent::Token { .. } | AnswerEvent::Rendered { .. })),
        "before the answer's words: {events:?}"
    );
    // …and of the model's title after the answer, saved by then.
    let titled: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match e {
            AnswerEvent::Titled { id, title } => Some((id.clone(), title.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(titled, vec![(id.clone(), "Tokio 入门".to_string())]);
    assert!(
        position(|e| matches!(e, AnswerEvent::Done { .. }))
            < position(|e| matches!(e, AnswerEvent::Titled { .. }))
    );
    let listed = state.store.list(&owner, 10).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (&listed[0].id, listed[0].title.as_str()),
        (&id, "Tokio 入门")
    );
    // A continued conversation moves up under its own title; only the first answer names
    // it (the second answer's stream ends after any naming would have been told).
    let (_, events) = answer_events(&state, &session, "第二个问题", Mode::Chat).await;
    let told: Vec<&AnswerEvent> = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                AnswerEvent::Conversation { .. } | AnswerEvent::Titled { .. }
            )
        })
        .collect();
    assert!(
        matches!(told.as_slice(), [AnswerEvent::Conversation { id: same, title, .. }] if *same == id && title == "Tokio 入门"),
        "{told:?}"
    );
    let titles: Vec<String> = state
        .store
        .list(&owner, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.title)
        .collect();
    assert_eq!(titles, vec!["Tokio 入门"]);
}

#[tokio::test]
async fn users_their_browsers_and_their_bytes() {
    for store in backends().await {
        let backend = store.backend();
        let name = format!("user-{}", &owner()[..12]);
        let hash = crate::ssr::passwords::hash("a password").unwrap();
        assert!(store.create_user(&name, &hash).await.unwrap());
        assert!(
            !store.create_user(&name, &hash).await.unwrap(),
            "{backend:?}: a name is taken once"
        );
        assert_eq!(store.password_hash(&name).await.unwrap(), Some(hash));
        assert!(store.users().await.unwrap().contains(&name));
        // Two browsers signed in as the user, one anonymous.
        let (phone, laptop, other) = (owner(), owner(), owner());
        for (browser, user) in [
            (&phone, Some(&name)),
            (&laptop, Some(&name)),
            (&other, None),
        ] {
            let settings = crate::model::Settings {
                mode: if browser == &laptop {
                    Mode::Research
                } else {
                    Mode::Chat
                },
                ..crate::model::Settings::default()
            };
            store
                .save_browser(
                    browser,
                    &StoredBrowser {
                        settings,
                        conversation: None,
                        user: user.cloned(),
                    },
                )
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(
            store.browser(&phone).await.unwrap().unwrap().user,
            Some(name.clone())
        );
        assert_eq!(
            store.latest_settings(&name).await.unwrap().map(|s| s.mode),
            Some(Mode::Research),
            "{backend:?}: a new sign-in starts from the latest browser's settings"
        );
        let mine = crate::ssr::store::owner_of_user(&name);
        let id = owner();
        seed(
            &store,
            &mine,
            &id,
            "t",
            &exchange("问题", &"答".repeat(1000), ExchangeState::Done),
        )
        .await;
        let bytes = store.owner_bytes(&mine).await.unwrap();
        assert!(bytes >= 3000, "{backend:?}: bytes, not characters: {bytes}");
        assert_eq!(store.owner_bytes(&other).await.unwrap(), 0);

        // A new password signs every browser of the user out, and only theirs.
        let new_hash = crate::ssr::passwords::hash("another password").unwrap();
        assert!(store.set_password(&name, &new_hash).await.unwrap());
        assert!(store.browser(&phone).await.unwrap().is_none());
        assert!(store.browser(&laptop).await.unwrap().is_none());
        assert!(store.browser(&other).await.unwrap().is_some());
        assert!(!store.set_password("nobody-here", &new_hash).await.unwrap());

        // A signed-out browser is not brought back by a late write.
        store
            .update_browser_conversation(&phone, Some(&id))
            .await
            .unwrap();
        assert!(
            store.browser(&phone).await.unwrap().is_none(),
            "{backend:?}"
        );
        let back = StoredBrowser {
            settings: crate::model::Settings::default(),
            conversation: None,
            user: Some(name.clone()),
        };
        assert!(!store.update_browser(&phone, &back).await.unwrap());
        assert!(
            store.browser(&phone).await.unwrap().is_none(),
            "{backend:?}"
        );

        assert!(store.remove_user(&name).await.unwrap());
        assert!(store.password_hash(&name).await.unwrap().is_none());
        assert!(
            store.conversation(&mine, &id).await.unwrap().is_none(),
            "{backend:?}: their conversations go with them"
        );
        assert!(!store.remove_user(&name).await.unwrap());
    }
}

#[tokio::test]
async fn signed_in_browsers_end_after_their_idle_and_absolute_lifetimes() {
    use crate::ssr::store::{SIGNED_IN_FOR, SIGNED_IN_IDLE};
    const DAY: Duration = Duration::from_secs(86_400);
    for store in backends().await {
        let backend = store.backend();
        let name = format!("user-{}", &owner()[..12]);
        let signed_in = |user: Option<&String>| StoredBrowser {
            settings: Settings::default(),
            conversation: None,
            user: user.cloned(),
        };
        let (fresh, idle, old, anonymous, swept) = (owner(), owner(), owner(), owner(), owner());
        for id in [&fresh, &idle, &old, &swept] {
            store
                .save_browser(id, &signed_in(Some(&name)))
                .await
                .unwrap();
        }
        store
            .save_browser(&anonymous, &signed_in(None))
            .await
            .unwrap();
        // Used yesterday, signed in a month ago: still signed in, and marked as used.
        store.age_browser(&fresh, DAY, 30 * DAY).await.unwrap();
        // Unused past the idle lifetime; used daily but signed in past the absolute one.
        store
            .age_browser(&idle, SIGNED_IN_IDLE + DAY, SIGNED_IN_IDLE + DAY)
            .await
            .unwrap();
        store
            .age_browser(&old, DAY, SIGNED_IN_FOR + DAY)
            .await
            .unwrap();
        // Anonymous browsers have no sign-in to end.
        store
            .age_browser(&anonymous, SIGNED_IN_FOR * 2, SIGNED_IN_FOR * 2)
            .await
            .unwrap();
        assert_eq!(
            store.browser(&fresh).await.unwrap().and_then(|b| b.user),
            Some(name.clone()),
            "{backend:?}"
        );
        assert_eq!(store.browser(&idle).await.unwrap(), None, "{backend:?}");
        assert_eq!(store.browser(&old).await.unwrap(), None, "{backend:?}");
        assert!(
            store.browser(&anonymous).await.unwrap().is_some(),
            "{backend:?}"
        );
        // The sweeper ends the ones nobody comes back with.
        store
            .age_browser(&swept, SIGNED_IN_IDLE + DAY, SIGNED_IN_IDLE + DAY)
            .await
            .unwrap();
        assert!(store.expire_browsers().await.unwrap() >= 1, "{backend:?}");
        assert_eq!(store.browser(&swept).await.unwrap(), None, "{backend:?}");
        assert!(
            store.browser(&fresh).await.unwrap().is_some(),
            "{backend:?}"
        );
        assert!(store
            .browsers_of_user(&name)
            .await
            .unwrap()
            .contains(&fresh));
        assert!(!store.browsers_of_user(&name).await.unwrap().contains(&idle));
    }
}

#[tokio::test]
async fn a_question_touches_its_own_rows_and_the_counter_keeps_the_sum() {
    for store in backends().await {
        let backend = store.backend();
        let (me, id) = fresh_conversation(&store, "Notes on runtimes").await;
        // Terms spread over exchanges: a conversation matches when its rows together hold
        // every term of the query.
        let first = store
            .begin_exchange(
                &id,
                &exchange("what is tokio", "", ExchangeState::Answering),
            )
            .await
            .unwrap();
        let found = |query: &'static str| {
            let (store, me) = (&store, me.clone());
            async move { store.search(&me, query, 20).await.unwrap().len() }
        };
        assert_eq!(
            found("tokio").await,
            1,
            "{backend:?}: the question, as it starts"
        );
        assert_eq!(found("scheduler").await, 0, "{backend:?}");
        store
            .finish_exchange(
                &id,
                first,
                &exchange(
                    "what is tokio",
                    "A work-stealing scheduler [1].",
                    ExchangeState::Done,
                ),
                None,
            )
            .await
            .unwrap();
        assert_eq!(
            found("scheduler").await,
            1,
            "{backend:?}: the answer, as it ends"
        );
        let second = store
            .begin_exchange(
                &id,
                &exchange("和 async-std 比呢", "", ExchangeState::Answering),
            )
            .await
            .unwrap();
        assert_eq!(second, 1);
        assert_eq!(
            found("runtimes tokio 比").await,
            1,
            "{backend:?}: title and two exchanges"
        );
        assert_eq!(found("tokio python").await, 0, "{backend:?}: every term");
        assert_eq!(
            store.owner_bytes(&me).await.unwrap(),
            store.recount_owner_bytes(&me).await.unwrap(),
            "{backend:?}: after writes"
        );
        // A crash leaves the second answer unfinished; marking it changes its size.
        store.interrupt(&id, second).await.unwrap();
        let file = crate::ssr::store::StoredFile {
            id: owner(),
            name: "notes.txt".into(),
            size: 12,
            passages: "[\"文件里的一段话\"]".into(),
        };
        assert!(store.add_file(&me, &id, &file, 10).await.unwrap());
        let with_file = store.owner_bytes(&me).await.unwrap();
        assert_eq!(
            with_file,
            store.recount_owner_bytes(&me).await.unwrap(),
            "{backend:?}"
        );
        assert!(store
            .remove_file(&me, &id, &file.id)
            .await
            .unwrap()
            .is_some());
        let without = store.owner_bytes(&me).await.unwrap();
        assert_eq!(
            with_file - without,
            file.passages.len() as i64,
            "{backend:?}"
        );
        assert_eq!(
            without,
            store.recount_owner_bytes(&me).await.unwrap(),
            "{backend:?}"
        );
        store.forget_owner(&me).await.unwrap();
        assert_eq!(store.owner_bytes(&me).await.unwrap(), 0, "{backend:?}");
        assert_eq!(found("tokio").await, 0, "{backend:?}: forgotten");
    }
}

#[tokio::test]
async fn long_conversations_open_a_page_at_a_time() {
    for store in backends().await {
        let backend = store.backend();
        let (me, id) = fresh_conversation(&store, "Seven questions").await;
        for n in 0..7 {
            let question = format!("question {n}");
            let seq = store
                .begin_exchange(&id, &exchange(&question, "", ExchangeState::Answering))
                .await
                .unwrap();
            store
                .finish_exchange(
                    &id,
                    seq,
                    &exchange(&question, "answer", ExchangeState::Done),
                    None,
                )
                .await
                .unwrap();
        }
        let questions = |exchanges: &[Exchange]| {
            exchanges
                .iter()
                .map(|e| e.question.clone())
                .collect::<Vec<_>>()
        };
        let latest = store
            .conversation_latest(&me, &id, 3)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            questions(&latest.exchanges),
            ["question 4", "question 5", "question 6"]
        );
        assert_eq!(latest.earlier, 4, "{backend:?}");
        let (page, earlier) = store.earlier(&me, &id, 4, 3).await.unwrap().unwrap();
        assert_eq!(questions(&page), ["question 1", "question 2", "question 3"]);
        assert_eq!(earlier, 1, "{backend:?}");
        let (page, earlier) = store.earlier(&me, &id, 1, 3).await.unwrap().unwrap();
        assert_eq!(questions(&page), ["question 0"]);
        assert_eq!(earlier, 0, "{backend:?}");
        assert!(
            store.earlier(&owner(), &id, 4, 3).await.unwrap().is_none(),
            "{backend:?}: mine only"
        );
        let whole = store.conversation(&me, &id).await.unwrap().unwrap();
        assert_eq!(
            (whole.exchanges.len(), whole.earlier),
            (7, 0),
            "{backend:?}"
        );

        let token = owner();
        store.set_share(&me, &id, Some(&token)).await.unwrap();
        let shared = store.shared_latest(&token, 2).await.unwrap().unwrap();
        assert_eq!(questions(&shared.exchanges), ["question 5", "question 6"]);
        let (page, earlier) = store.earlier_shared(&token, 5, 2).await.unwrap().unwrap();
        assert_eq!(
            (questions(&page), earlier),
            (vec!["question 3".to_string(), "question 4".to_string()], 3)
        );
        store.set_share(&me, &id, None).await.unwrap();
        assert!(
            store.earlier_shared(&token, 5, 2).await.unwrap().is_none(),
            "{backend:?}: revoked"
        );
    }
}

/// A database written before search rows per exchange and the usage counter (migration 6)
/// keeps what it found and what it counted.
#[tokio::test]
async fn an_older_database_keeps_its_search_and_its_usage() {
    let store = Store::open(&sqlite_url()).unwrap();
    store.migrate_to(6).await.unwrap();
    let (me, id) = (owner(), owner());
    store
        .execute(
            "INSERT INTO conversations (id, owner, title, mode, registry, created_at, updated_at, search_body) \
             VALUES ($1, $2, 'Old one', 'chat', '{}', 0, 0, '')",
            &[&id, &me],
        )
        .await
        .unwrap();
    let data = serde_json::to_string(&exchange("旧问题", "旧的回答", ExchangeState::Done)).unwrap();
    store
        .execute(
            "INSERT INTO exchanges (conversation_id, seq, question, answer, state, data, created_at, updated_at) \
             VALUES ($1, 0, '旧问题', '旧的回答', 'done', $2, 0, 0)",
            &[&id, &data],
        )
        .await
        .unwrap();
    let body = crate::text::search_terms("Old one\n旧问题\n旧的回答").join(" ");
    store
        .execute(
            "INSERT INTO conversation_search (body, conversation_id) VALUES ($1, $2)",
            &[&body, &id],
        )
        .await
        .unwrap();
    store.ready().await.unwrap();
    let found = store.search(&me, "旧的 old", 20).await.unwrap();
    assert_eq!(found.len(), 1, "the old terms are still found");
    let bytes = store.owner_bytes(&me).await.unwrap();
    assert!(bytes > 0);
    assert_eq!(bytes, store.recount_owner_bytes(&me).await.unwrap());
    // New writes go on from there.
    store.rename(&me, &id, "Renamed").await.unwrap();
    assert_eq!(
        store.search(&me, "renamed 旧问题", 20).await.unwrap().len(),
        1
    );
}

/// A conversation of 120 exchanges opens with its latest 50, and the rest comes a page at
/// a time, for its owner and for anyone with its share link.
#[tokio::test]
async fn a_long_conversation_opens_its_latest_page_over_http() {
    let url = sqlite_url();
    let browser = SessionId::random().to_string();
    let id = owner();
    {
        let store = Store::open(&url).unwrap();
        store
            .save_browser(
                &browser,
                &StoredBrowser {
                    settings: Settings::default(),
                    conversation: None,
                    user: None,
                },
            )
            .await
            .unwrap();
        let now = crate::ssr::store::now_millis();
        let conversation = crate::ssr::store::StoredConversation {
            summary: crate::model::ConversationSummary {
                id: id.clone(),
                title: "A long one".into(),
                mode: Mode::Chat,
                created_at: now,
                updated_at: now,
                share_token: None,
            },
            exchanges: (0..120u64)
                .map(|n| Exchange {
                    id: n,
                    ..exchange(&format!("question {n}"), "answer", ExchangeState::Done)
                })
                .collect(),
            registry: Registry::new(),
            earlier: 0,
        };
        store
            .insert_conversations(&browser, &[conversation])
            .await
            .unwrap();
        store.close().await;
    }
    let server = super::TestServer::start(&[
        ("CITED_SEARXNG_URL", "http://127.0.0.1:9"),
        ("CITED_DATABASE_URL", &url),
    ])
    .await;
    // The owner's browser: its cookie on every request.
    let cookie = format!("{}={browser}", crate::ssr::request::COOKIE_NAME);
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("cookie", cookie.parse().unwrap());
    let client = reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap();
    type View = Option<crate::model::ConversationView>;
    let first_question =
        |view: &crate::model::ConversationView| view.exchanges.first().map(|e| e.question.clone());
    let opened: View = server
        .call(&client, "/api/open_conversation", &[("id", &id)])
        .await;
    let opened = opened.expect("a conversation");
    assert_eq!((opened.exchanges.len(), opened.earlier), (50, 70));
    assert_eq!(first_question(&opened).as_deref(), Some("question 70"));
    let page: View = server
        .call(&client, "/api/earlier", &[("id", &id), ("before", "70")])
        .await;
    let page = page.expect("a page");
    assert_eq!((page.exchanges.len(), page.earlier), (50, 20));
    assert_eq!(first_question(&page).as_deref(), Some("question 20"));
    let last: View = server
        .call(&client, "/api/earlier", &[("id", &id), ("before", "20")])
        .await;
    let last = last.expect("the first page");
    assert_eq!((last.exchanges.len(), last.earlier), (20, 0));
    // The page says what is not shown yet.
    let html = server.text(&client, &format!("/c/{id}")).await;
    assert!(html.contains("显示更早的问题（还有 70 个）"), "{html}");
    assert!(
        !html.contains("question 69"),
        "only the latest page is sent"
    );

    // Shared: the same pages for anyone with the link, nothing without it.
    let token: Option<String> = server
        .call(
            &client,
            "/api/share_conversation",
            &[("id", &id), ("on", "true")],
        )
        .await;
    let token = token.expect("a share token");
    let stranger = reqwest::Client::new();
    let shared: View = server
        .call(&stranger, "/api/shared", &[("token", &token)])
        .await;
    let shared = shared.expect("shared");
    assert_eq!((shared.exchanges.len(), shared.earlier), (50, 70));
    let earlier: View = server
        .call(
            &stranger,
            "/api/earlier",
            &[("token", &token), ("before", "70")],
        )
        .await;
    assert_eq!(earlier.map(|view| view.exchanges.len()), Some(50));
    let theirs: View = server
        .call(&stranger, "/api/earlier", &[("id", &id), ("before", "70")])
        .await;
    assert!(theirs.is_none(), "another browser's conversation by id");
}

/// Answers ending together (and browsers written meanwhile) all save: on SQLite a
/// transaction that read before writing could not take the write lock past another writer
/// ("database is locked").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_ending_together_all_save() {
    for store in backends().await {
        let backend = store.backend();
        let store = Arc::new(store);
        let mut begun = Vec::new();
        for n in 0..12 {
            let (me, id) = fresh_conversation(&store, &format!("race {n}")).await;
            let seq = store
                .begin_exchange(&id, &exchange("q", "", ExchangeState::Answering))
                .await
                .unwrap();
            begun.push((me, id, seq));
        }
        let finishing = begun.iter().map(|(me, id, seq)| {
            let store = Arc::clone(&store);
            let (me, id, seq) = (me.clone(), id.clone(), *seq);
            tokio::spawn(async move {
                let done = exchange("q", &"answer ".repeat(200), ExchangeState::Done);
                let saved = store.finish_exchange(&id, seq, &done, None).await;
                let browser = StoredBrowser {
                    settings: Settings::default(),
                    conversation: Some(id.clone()),
                    user: None,
                };
                let remembered = store.save_browser(&me, &browser).await;
                (
                    saved.is_ok(),
                    remembered.is_ok(),
                    format!("{saved:?} {remembered:?}"),
                )
            })
        });
        for result in futures_util::future::join_all(finishing).await {
            let (saved, remembered, detail) = result.unwrap();
            assert!(saved && remembered, "{backend:?}: {detail}");
        }
        for (me, _, _) in &begun {
            assert_eq!(
                store.owner_bytes(me).await.unwrap(),
                store.recount_owner_bytes(me).await.unwrap(),
                "{backend:?}"
            );
        }
    }
}
