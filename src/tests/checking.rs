//! Citations checked after the answer (`ssr::pipeline::checking`): the cited page is read
//! through the guarded reader once per conversation, the passage that supports the
//! sentence is found in it, a page too slow for the deadline gives way to the snippet, and
//! the answer itself never waits for any of it.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use axum::routing::get;
use axum::Router;

use super::chat::Scripted;
use crate::model::{AnswerEvent, Lang, Mode, Source, Support};
use crate::ssr::pipeline::TurnInput;
use crate::ssr::search::{SearchError, SearchOptions, SearchProvider, SearchResults};
use crate::ssr::state::AppState;

const PAGE: &str = "<html><head><title>Tokio</title></head><body><article>\
    <h1>Tokio</h1>\
    <p>Rust programs need a runtime to drive their futures. Many crates exist for it.</p>\
    <p>Tokio is an asynchronous runtime for the Rust programming language, first released in 2016. \
    It provides the building blocks needed for writing network applications.</p>\
    <p>Its scheduler steals work between threads, which keeps every core busy under load.</p>\
    </article></body></html>";

/// Serves `/tokio` (counting its reads) and `/slow` (answering after 5 s).
pub(super) async fn page_server(hits: Arc<AtomicUsize>) -> SocketAddr {
    let app = Router::new()
        .route(
            "/tokio",
            get(move || {
                hits.fetch_add(1, Ordering::SeqCst);
                async { axum::response::Html(PAGE) }
            }),
        )
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                axum::response::Html(PAGE)
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// Every search finds the one page at `url`, with a snippet that says little.
fn tokio_page(url: String) -> super::OnePage {
    super::OnePage(Source {
        url,
        title: "Tokio".into(),
        domain: "127.0.0.1".into(),
        snippet: "Tokio: a runtime for writing reliable network applications.".into(),
        ..Source::default()
    })
}

pub(super) fn state(page: String, addr: SocketAddr, deadline: &str) -> AppState {
    super::App::searching("http://127.0.0.1:9")
        .var("CITED_ALIGN_DEADLINE_SECS", deadline)
        .search(Arc::new(tokio_page(page)))
        .model(Scripted::fixed(
            "Tokio is an asynchronous Rust runtime that was first released in 2016 [1].",
        ))
        .allow(addr)
        .state()
}

fn input(question: &str) -> TurnInput {
    TurnInput {
        id: 1,
        question: question.into(),
        search_enabled: true,
        lang: Lang::En,
        mode: Mode::Chat,
        force_search: false,
        site: None,
        model: None,
        files: Vec::new(),
    }
}

pub(super) async fn ask(
    state: &AppState,
    session: &Arc<crate::ssr::session::Session>,
    question: &str,
) -> Vec<AnswerEvent> {
    super::answer_in(state, Arc::clone(session), input(question))
        .await
        .1
}

pub(super) fn checked(events: &[AnswerEvent]) -> Vec<crate::model::Alignment> {
    events
        .iter()
        .find_map(|event| match event {
            AnswerEvent::Aligned { alignments, .. } => Some(alignments.clone()),
            _ => None,
        })
        .expect("the citations are checked after Done")
}

#[tokio::test]
async fn the_cited_page_is_read_once_per_conversation_and_its_passage_found() {
    let hits = Arc::new(AtomicUsize::new(0));
    let addr = page_server(Arc::clone(&hits)).await;
    let state = state(format!("http://{addr}/tokio"), addr, "20");
    let session = super::session();

    let events = ask(&state, &session, "What is Tokio?").await;
    let done = events
        .iter()
        .position(|e| matches!(e, AnswerEvent::Done { .. }))
        .expect("the answer is done");
    let aligned = events
        .iter()
        .position(|e| matches!(e, AnswerEvent::Aligned { .. }))
        .expect("then checked");
    assert!(
        done < aligned,
        "Done comes first: the answer never waits for the check"
    );
    let check = checked(&events);
    assert_eq!(check.len(), 1, "{check:?}");
    let check = &check[0];
    assert_eq!(check.support, Support::Supported, "{check:?}");
    assert!(
        check
            .passage
            .starts_with("Tokio is an asynchronous runtime"),
        "{check:?}"
    );
    assert!(
        check.offset.is_some(),
        "from the page, not the snippet: {check:?}"
    );
    let marked: Vec<&str> = check
        .matched
        .iter()
        .map(|&(a, b)| &check.passage[a as usize..b as usize])
        .collect();
    assert!(marked.contains(&"2016"), "{marked:?}");
    assert_eq!(hits.load(Ordering::SeqCst), 1);

    // The same conversation cites the same page again: it is not read again.
    let again = ask(&state, &session, "When was Tokio released?").await;
    assert_eq!(checked(&again)[0].support, Support::Supported);
    assert_eq!(hits.load(Ordering::SeqCst), 1, "read once per conversation");

    // The saved exchange keeps the check.
    let saved = session.conversation();
    assert_eq!(saved.len(), 2);
    assert_eq!(saved[1].alignments.len(), 1);
}

#[tokio::test]
async fn a_page_slower_than_the_deadline_gives_way_to_the_snippet() {
    let addr = page_server(Arc::new(AtomicUsize::new(0))).await;
    let state = state(format!("http://{addr}/slow"), addr, "2");
    let session = super::session();
    let events = ask(&state, &session, "What is Tokio?").await;
    let check = checked(&events);
    assert_eq!(check.len(), 1, "{check:?}");
    // Had the reader waited the page's 5 s, the passage would come from the page.
    assert_eq!(check[0].offset, None, "from the snippet: {check:?}");
    assert!(check[0].passage.contains("runtime"), "{check:?}");
}

#[tokio::test]
async fn the_check_can_be_turned_off() {
    let addr = page_server(Arc::new(AtomicUsize::new(0))).await;
    let state = state(format!("http://{addr}/tokio"), addr, "0");
    let session = super::session();
    let events = ask(&state, &session, "What is Tokio?").await;
    assert!(events
        .iter()
        .all(|e| !matches!(e, AnswerEvent::Aligned { .. })));
    assert!(
        matches!(super::done_event(&events), Some(AnswerEvent::Done { cited, .. }) if cited == &vec![1])
    );
}

/// A model that answers the question with `answer` and the citation check (calls of kind
/// `Check`) with `verdicts` after `delay`; `asked(CallKind::Check)` counts those calls.
pub(super) fn judging(
    answer: &'static str,
    verdicts: &'static str,
    delay: Duration,
) -> Arc<super::model::Model> {
    super::model::Model::new(move |request| {
        let usage = crate::ssr::llm::Usage {
            prompt_tokens: 100,
            completion_tokens: 10,
        };
        let reply = if request.kind == crate::ssr::config::CallKind::Check {
            super::model::Reply::text(verdicts).after(delay)
        } else {
            super::model::Reply::text(answer)
        };
        reply.finish(None, Some(usage))
    })
}

const ANSWER: &str = "Tokio is an asynchronous Rust runtime that was first released in 2016 [1].";

pub(super) fn judged_state(
    addr: SocketAddr,
    verdicts: &'static str,
    delay: Duration,
    deadline: &str,
) -> (AppState, Arc<super::model::Model>) {
    let model = judging(ANSWER, verdicts, delay);
    let state = super::App::searching("http://127.0.0.1:9")
        .var("CITED_ALIGN_DEADLINE_SECS", deadline)
        .var("CITED_CHECK", "model")
        .search(Arc::new(tokio_page(format!("http://{addr}/tokio"))))
        .model(model.clone())
        .allow(addr)
        .state();
    (state, model)
}

fn aligned_usage(events: &[AnswerEvent]) -> Option<crate::model::TokenUsage> {
    events.iter().find_map(|event| match event {
        AnswerEvent::Aligned { usage, .. } => usage.clone(),
        _ => None,
    })
}

#[tokio::test]
async fn the_models_verdict_with_a_quote_from_the_page_replaces_the_offline_one_once_per_conversation(
) {
    let addr = page_server(Arc::new(AtomicUsize::new(0))).await;
    // Offline the sentence is supported; the judge says partial, quoting the page.
    let verdicts =
        r#"{"verdicts":[{"id":1,"verdict":"partial","quote":"first released in 2016"}]}"#;
    let (state, model) = judged_state(addr, verdicts, Duration::ZERO, "20");
    let session = super::session();
    let events = ask(&state, &session, "What is Tokio?").await;
    let check = checked(&events);
    assert_eq!(check[0].support, Support::Partial, "{check:?}");
    let marked: Vec<&str> = check[0]
        .matched
        .iter()
        .map(|&(a, b)| &check[0].passage[a as usize..b as usize])
        .collect();
    assert_eq!(marked, ["first released in 2016"], "{check:?}");
    assert!(check[0]
        .passage
        .starts_with("Tokio is an asynchronous runtime"));
    assert!(check[0].offset.is_some());
    // The judge's tokens join the answer's: two calls, shown again with the check.
    let usage = aligned_usage(&events).expect("the usage comes with the check");
    assert_eq!((usage.calls, usage.prompt_tokens), (2, 200));
    assert_eq!(
        session.conversation()[0].usage.as_ref().map(|u| u.calls),
        Some(2)
    );
    assert_eq!(model.asked(crate::ssr::config::CallKind::Check), 1);
    // The same sentence citing the same page later in the conversation: judged once.
    let again = ask(&state, &session, "When was Tokio released?").await;
    assert_eq!(checked(&again)[0].support, Support::Partial);
    assert_eq!(
        model.asked(crate::ssr::config::CallKind::Check),
        1,
        "judged once per conversation"
    );
}

#[tokio::test]
async fn a_quote_the_page_does_not_hold_or_an_unreadable_reply_leaves_the_offline_verdict() {
    let addr = page_server(Arc::new(AtomicUsize::new(0))).await;
    for verdicts in [
        r#"{"verdicts":[{"id":1,"verdict":"unsupported","quote":"first released in 2019"}]}"#,
        "I think the citation is fine.",
        r#"{"verdicts":[{"id":1,"verdict":"maybe","quote":"first released in 2016"}]}"#,
    ] {
        let (state, model) = judged_state(addr, verdicts, Duration::ZERO, "20");
        let session = super::session();
        let events = ask(&state, &session, "What is Tokio?").await;
        let check = checked(&events);
        assert_eq!(
            check[0].support,
            Support::Supported,
            "{verdicts}: {check:?}"
        );
        assert!(check[0]
            .passage
            .starts_with("Tokio is an asynchronous runtime"));
        assert_eq!(model.asked(crate::ssr::config::CallKind::Check), 1);
    }
}

#[tokio::test]
async fn a_judge_slower_than_the_deadline_or_a_stop_leaves_the_offline_verdict() {
    let addr = page_server(Arc::new(AtomicUsize::new(0))).await;
    let verdicts =
        r#"{"verdicts":[{"id":1,"verdict":"partial","quote":"first released in 2016"}]}"#;
    // The deadline: 2 s for reading the page and judging; the judge takes 30.
    let (state, model) = judged_state(addr, verdicts, Duration::from_secs(30), "2");
    let session = super::session();
    let started = Instant::now();
    let events = ask(&state, &session, "What is Tokio?").await;
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(checked(&events)[0].support, Support::Supported);
    assert_eq!(
        model.asked(crate::ssr::config::CallKind::Check),
        1,
        "it was asked"
    );

    // The stop button while the judge thinks: the answer ends without its verdict.
    let (state, model) = judged_state(addr, verdicts, Duration::from_secs(30), "60");
    let session = super::session();
    let (sender, mut receiver) = tokio::sync::mpsc::channel(4096);
    let cancel = tokio_util::sync::CancellationToken::new();
    let run = tokio::spawn(crate::ssr::answer::run(
        state.clone(),
        Arc::clone(&session),
        input("What is Tokio?"),
        cancel.clone(),
        sender,
    ));
    let mut events = Vec::new();
    let asked_by = Instant::now() + Duration::from_secs(20);
    while model.asked(crate::ssr::config::CallKind::Check) == 0 {
        assert!(Instant::now() < asked_by, "the judge is asked: {events:?}");
        if let Ok(event) = tokio::time::timeout(Duration::from_millis(50), receiver.recv()).await {
            let event = event.unwrap_or_else(|| {
                panic!("the answer is over before the judge is asked: {events:?}")
            });
            events.push(event);
        }
    }
    // While the judge thinks, the answer as written is saved: a reload shows it.
    let id = session
        .conversation_id()
        .expect("the answer began a conversation");
    let saved = state
        .store
        .conversation(&session.owner(), &id)
        .await
        .unwrap()
        .expect("the conversation is saved");
    assert_eq!(saved.exchanges[0].state, crate::model::ExchangeState::Done);
    assert_eq!(saved.exchanges[0].answer, ANSWER);
    assert!(saved.exchanges[0].alignments.is_empty(), "not checked yet");
    cancel.cancel();
    let exchange = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("a stop does not wait for the judge")
        .unwrap();
    while let Some(event) = receiver.recv().await {
        events.push(event);
    }
    assert!(
        exchange
            .alignments
            .iter()
            .all(|a| a.support != Support::Partial),
        "{:?}",
        exchange.alignments
    );
}

/// The Tokio page, and a second source whose snippet states what the first does not.
pub(super) struct TwoSources {
    pub(super) url: String,
}

#[async_trait]
impl SearchProvider for TwoSources {
    async fn search(
        &self,
        query: &str,
        _options: &SearchOptions,
    ) -> Result<SearchResults, SearchError> {
        let source = |url: &str, title: &str, snippet: &str| Source {
            url: url.into(),
            title: title.into(),
            domain: "example.org".into(),
            snippet: snippet.into(),
            ..Source::default()
        };
        Ok(SearchResults {
            query: query.to_string(),
            sources: vec![
                source(
                    &self.url,
                    "Tokio",
                    "Tokio: a runtime for writing reliable network applications.",
                ),
                source(
                    "https://memory.example.org/ownership",
                    "Ownership",
                    "Rust frees memory through its ownership rules, without a garbage collector.",
                ),
            ],
            ..SearchResults::default()
        })
    }
}

#[tokio::test]
async fn a_sentence_its_source_does_not_support_names_the_source_that_does() {
    let addr = page_server(Arc::new(AtomicUsize::new(0))).await;
    let mut state = state(format!("http://{addr}/tokio"), addr, "20");
    state.search = Arc::new(TwoSources {
        url: format!("http://{addr}/tokio"),
    });
    state.llm = Scripted::fixed(
        "Rust frees memory through its ownership rules, without a garbage collector [1]. \
         Tokio is an asynchronous Rust runtime that was first released in 2016 [1].",
    );
    let session = super::session();
    let check = checked(&ask(&state, &session, "How does Rust free memory?").await);
    assert_eq!(check.len(), 2, "{check:?}");
    let memory = &check[0];
    assert_ne!(memory.support, Support::Supported, "{memory:?}");
    let better = memory
        .better
        .as_ref()
        .expect("the second source supports it");
    assert_eq!(better.number, 2);
    assert_eq!(better.url, "https://memory.example.org/ownership");
    // A sentence its own source supports names no other.
    assert_eq!(check[1].support, Support::Supported, "{:?}", check[1]);
    assert_eq!(check[1].better, None);
}
