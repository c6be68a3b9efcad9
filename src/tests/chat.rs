//! The Chat pipeline with a scripted model and the real SearXNG; and `/api/ask` over HTTP.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::searxng;
use crate::model::Lang;
use crate::model::{AnswerEvent, Exchange, Level, LineDecoder, Mode, Status};
use crate::ssr::answer;
use crate::ssr::llm::{ChatRequest, Message};
use crate::ssr::pipeline::TurnInput;
use crate::ssr::search::{SearchError, SearchOptions, SearchProvider, SearchResults};
use crate::ssr::session::{Session, SessionStore};
use crate::ssr::state::AppState;

pub(super) use super::model::Model as Scripted;
use super::model::Reply;

/// Counts searches on their way to the real provider.
struct Counting {
    inner: Arc<dyn SearchProvider>,
    calls: AtomicUsize,
}

#[async_trait]
impl SearchProvider for Counting {
    async fn search(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<SearchResults, SearchError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.search(query, options).await
    }
}

struct Harness {
    state: AppState,
    session: Arc<Session>,
    model: Arc<Scripted>,
    search: Arc<Counting>,
}

fn harness(searxng_url: &str, model: Arc<Scripted>, extra: &[(&str, &str)]) -> Harness {
    let config = super::pipeline_config(searxng_url, extra);
    let mut state = AppState::new(config);
    let search = Arc::new(Counting {
        inner: state.search.clone(),
        calls: AtomicUsize::new(0),
    });
    state.search = search.clone();
    state.llm = model.clone();
    let session = super::session();
    Harness {
        state,
        session,
        model,
        search,
    }
}

async fn ask(
    harness: &Harness,
    question: &str,
    search_enabled: bool,
) -> (Exchange, Vec<AnswerEvent>) {
    let (sender, mut receiver) = mpsc::channel(256);
    let input = TurnInput {
        id: 1,
        question: question.into(),
        search_enabled,
        lang: Lang::ZhCn,
        mode: Mode::Chat,
        force_search: false,
        site: None,
        model: None,
        files: Vec::new(),
    };
    let exchange = answer::run(
        harness.state.clone(),
        Arc::clone(&harness.session),
        input,
        CancellationToken::new(),
        sender,
    )
    .await;
    let mut events = Vec::new();
    while let Some(event) = receiver.recv().await {
        events.push(event);
    }
    (exchange, events)
}

fn system_prompt(request: &ChatRequest) -> String {
    match &request.messages[0] {
        Message::System(text) => text.clone(),
        other => panic!("first message is not the system prompt: {other:?}"),
    }
}

#[tokio::test]
async fn switch_on_searches_numbers_and_resolves_citations() {
    let model = Scripted::chunks(|_| {
        vec![
            "Tokio is the usual runtime [1]. ".into(),
            "See also [2][9].".into(),
        ]
    });
    let h = harness(&searxng::shared().url, model, &[]);
    let (exchange, events) = ask(&h, "rust async runtime", true).await;
    assert_eq!(h.search.calls.load(Ordering::SeqCst), 1);
    assert!(matches!(
        &events[0],
        AnswerEvent::Started { offline: false, .. }
    ));
    assert!(events.contains(&AnswerEvent::Status {
        status: Some(Status::Searching { query: None })
    }));
    let sources = events
        .iter()
        .find_map(|e| match e {
            AnswerEvent::Sources { sources } => Some(sources.clone()),
            _ => None,
        })
        .expect("a Sources event");
    assert_eq!(sources[0].number, 1);
    assert_eq!(sources[0].url, "https://docs.example.org/tokio/tutorial/");
    // The prompt carries the numbered results.
    let system = system_prompt(&h.model.last_request());
    assert!(
        system.contains("[1] Tokio tutorial: learn async Rust step by step"),
        "{system}"
    );
    assert!(system.contains("Search results:"), "{system}");
    // [9] has no source: it stays text and is not cited.
    assert_eq!(exchange.cited, vec![1, 2]);
    assert!(
        matches!(super::done_event(&events), Some(AnswerEvent::Done { cited, stopped: false, .. }) if cited == &vec![1, 2])
    );
    assert_eq!(h.session.conversation(), vec![exchange]);
}

#[tokio::test]
async fn switch_off_sends_no_search_request() {
    let model = Scripted::chunks(|_| vec!["Rust is a language.".into()]);
    let h = harness(&searxng::shared().url, model, &[]);
    let (exchange, events) = ask(&h, "what is rust", false).await;
    assert_eq!(h.search.calls.load(Ordering::SeqCst), 0);
    assert!(!events
        .iter()
        .any(|e| matches!(e, AnswerEvent::Sources { .. } | AnswerEvent::Notice { .. })));
    assert!(exchange.sources.is_empty());
    let system = system_prompt(&h.model.last_request());
    assert!(
        !system.contains("Search results") && !system.contains("search"),
        "{system}"
    );
}

#[tokio::test]
async fn a_failed_search_degrades_to_an_answer_with_a_notice() {
    let closed = format!("http://127.0.0.1:{}", searxng::free_port());
    let model = Scripted::chunks(|_| vec!["我根据自己的知识回答。".into()]);
    let h = harness(&closed, model, &[]);
    let (exchange, events) = ask(&h, "量子计算是什么？", true).await;
    let notice = &exchange.notices[0];
    assert_eq!(notice.level, Level::Warning);
    assert!(
        notice
            .text
            .contains("docker compose -f searxng/docker-compose.yml up -d"),
        "{notice:?}"
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, AnswerEvent::Status { status: Some(Status::SearchFailed { message }) } if message.starts_with("搜索服务不可用"))));
    assert_eq!(exchange.answer, "我根据自己的知识回答。");
    assert!(system_prompt(&h.model.last_request()).contains("网络搜索暂时不可用"));
}

#[tokio::test]
async fn no_results_are_told_to_the_model_and_the_user() {
    let model = Scripted::chunks(|_| vec!["No idea, honestly.".into()]);
    let h = harness(&searxng::shared().url, model, &[]);
    let (exchange, _) = ask(&h, "nothing at all", true).await;
    assert_eq!(exchange.notices[0].level, Level::Info);
    assert!(exchange.notices[0].text.contains("未找到相关搜索结果"));
    assert!(system_prompt(&h.model.last_request()).contains("found no relevant results"));
}

#[tokio::test]
async fn history_goes_to_the_model_within_the_budget() {
    let model = Scripted::chunks(|request| {
        // Long, but not a loop (the repetition guard would cut that).
        let filler: String = (0..120).map(|i| format!("词{i}")).collect();
        vec![format!("answer {} {filler}", request.messages.len())]
    });
    let h = harness(
        &searxng::shared().url,
        model,
        &[("CITED_LLM_CONTEXT_CHARS", "3000")],
    );
    for round in 0..12 {
        ask(&h, &format!("question {round} {}", "问".repeat(200)), false).await;
    }
    let request = h.model.last_request();
    let total: usize = request.messages.iter().map(Message::chars).sum();
    assert!(total <= 3000, "{total} chars sent");
    assert!(request.messages.len() > 2, "some history is kept");
    let Some(Message::User(last)) = request.messages.last() else {
        panic!()
    };
    assert!(
        last.starts_with("question 11"),
        "the newest question is last"
    );
    assert!(
        matches!(&request.messages[1], Message::User(q) if !q.starts_with("question 0")),
        "the oldest turns went first"
    );
}

#[tokio::test]
async fn stop_ends_the_answer_and_keeps_what_was_written() {
    let model = Scripted::new(|_| {
        Reply::chunks((0..1000).map(|i| format!("word{i} "))).paced(Duration::from_millis(10))
    });
    let h = harness(&searxng::shared().url, model, &[]);
    let (sender, mut receiver) = mpsc::channel(256);
    let cancel = CancellationToken::new();
    let input = TurnInput {
        id: 5,
        question: "long".into(),
        search_enabled: false,
        lang: Lang::ZhCn,
        mode: Mode::Chat,
        force_search: false,
        site: None,
        model: None,
        files: Vec::new(),
    };
    let run = {
        let (state, session, cancel) = (h.state.clone(), h.session.clone(), cancel.clone());
        tokio::spawn(answer::run(state, session, input, cancel, sender))
    };
    while let Some(event) = receiver.recv().await {
        if matches!(event, AnswerEvent::Token { .. }) {
            cancel.cancel();
            break;
        }
    }
    let exchange = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .unwrap()
        .unwrap();
    assert!(exchange.stopped);
    assert!(
        exchange.answer.starts_with("word0") && exchange.answer.len() < 500,
        "{}",
        exchange.answer
    );
    assert_eq!(h.session.conversation().len(), 1);
}

#[tokio::test]
async fn a_reset_during_an_answer_is_not_undone_by_it() {
    let model = Scripted::new(|_| {
        Reply::chunks((0..50).map(|i| format!("w{i} "))).paced(Duration::from_millis(10))
    });
    let h = harness(&searxng::shared().url, model, &[]);
    let (sender, mut receiver) = mpsc::channel(256);
    let input = TurnInput {
        id: 9,
        question: "q".into(),
        search_enabled: false,
        lang: Lang::ZhCn,
        mode: Mode::Chat,
        force_search: false,
        site: None,
        model: None,
        files: Vec::new(),
    };
    let run = {
        let (state, session) = (h.state.clone(), h.session.clone());
        tokio::spawn(answer::run(
            state,
            session,
            input,
            CancellationToken::new(),
            sender,
        ))
    };
    while let Some(event) = receiver.recv().await {
        if matches!(event, AnswerEvent::Token { .. }) {
            h.session.reset();
            break;
        }
    }
    drop(receiver);
    run.await.unwrap();
    assert!(
        h.session.conversation().is_empty(),
        "the reset stays a reset"
    );
}

#[test]
fn one_answer_at_a_time_per_session() {
    let session = SessionStore::new(Duration::from_secs(60)).create(Instant::now());
    let (first, token) = session.begin_answer().unwrap();
    assert!(session.begin_answer().is_none());
    assert!(session.stop_answer());
    assert!(token.is_cancelled());
    // Stopped: the next answer may start while the first one winds down...
    let (second, second_token) = session.begin_answer().unwrap();
    // ...and the first one finishing does not cancel the second.
    session.end_answer(first);
    assert!(!second_token.is_cancelled());
    assert!(session.begin_answer().is_none());
    session.end_answer(second);
    assert!(session.begin_answer().is_some());
}

/// `/api/ask` over HTTP: the events, or the refusal's text.
pub(super) async fn post_ask(
    client: &reqwest::Client,
    server: &super::TestServer,
    question: &str,
) -> Result<Vec<AnswerEvent>, String> {
    let response = server
        .send(client, "/api/ask", &[("question", question)])
        .await;
    if !response.status().is_success() {
        assert_eq!(
            response.status(),
            400,
            "a refused question is a client error"
        );
        return Err(response.text().await.unwrap());
    }
    let mut decoder = LineDecoder::default();
    let mut events = Vec::new();
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        events.extend(decoder.push(&chunk.unwrap()));
    }
    Ok(events)
}

/// A server with the real SearXNG and the fake OpenAI-compatible model's `text` script.
async fn text_model_server() -> super::TestServer {
    let (llm, _) = super::llm::fake_openai().await;
    super::TestServer::start(&[
        ("CITED_SEARXNG_URL", &searxng::shared().url),
        ("CITED_LLM_BASE_URL", &llm),
        ("CITED_LLM_MODEL", "text"),
    ])
    .await
}

#[tokio::test]
async fn ask_over_http_streams_ndjson_and_handles_commands() {
    let server = text_model_server().await;
    let client = super::browser();
    let events = post_ask(&client, &server, "量子计算 入门").await.unwrap();
    // No tokens: the text comes in rendering patches, and whole just before `done`.
    assert!(!events
        .iter()
        .any(|e| matches!(e, AnswerEvent::Token { .. })));
    let text = events.iter().find_map(|e| match e {
        AnswerEvent::Rewrite { answer } => Some(answer.as_str()),
        _ => None,
    });
    assert_eq!(text, Some("量子计算很强 [1]。"));
    let mut shown = crate::model::blocks::Shown::default();
    for event in &events {
        if let AnswerEvent::Rendered { patch } = event {
            shown.apply(patch.clone());
        }
    }
    let sources = events
        .iter()
        .find_map(|e| match e {
            AnswerEvent::Sources { sources } => Some(sources.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        shown.blocks(),
        crate::citation::render(
            "量子计算很强 [1]。",
            &crate::citation::SourceMap::new(sources)
        )
        .blocks
    );
    assert!(
        matches!(super::done_event(&events), Some(AnswerEvent::Done { cited, .. }) if cited == &vec![1])
    );
    // After Done, the citation is checked against its source: the page cannot be read
    // here (no internet), so against the search snippet.
    let checked = events
        .iter()
        .find_map(|e| match e {
            AnswerEvent::Aligned { alignments, .. } => Some(alignments),
            _ => None,
        })
        .expect("the citations are checked after the answer");
    assert_eq!(checked.len(), 1, "{checked:?}");
    assert_eq!((checked[0].ordinal, checked[0].number), (0, 1));
    assert_eq!(checked[0].offset, None, "from the snippet: {checked:?}");
    assert!(!checked[0].passage.is_empty(), "{checked:?}");
    assert!(matches!(
        events.last(),
        Some(AnswerEvent::Status { status: None })
    ));

    // The page now renders the exchange on the server.
    let html = server.page(&client).await;
    assert!(
        html.contains("量子计算很强"),
        "the conversation is server-rendered"
    );

    let error = post_ask(&client, &server, "   ").await.unwrap_err();
    assert!(error.contains("请输入问题"), "{error}");
    let error = post_ask(&client, &server, &"长".repeat(8001))
        .await
        .unwrap_err();
    assert!(error.contains("8000"), "{error}");
    let events = post_ask(&client, &server, "/nope").await.unwrap();
    assert!(
        matches!(&events[0], AnswerEvent::Command { text, reset: false, .. } if text.contains("/reset"))
    );
    let events = post_ask(&client, &server, "/reset").await.unwrap();
    assert!(matches!(
        &events[0],
        AnswerEvent::Command { reset: true, .. }
    ));
    let conversation: Vec<Exchange> = server.call(&client, "/api/conversation", &[]).await;
    assert!(conversation.is_empty(), "reset cleared the conversation");
}

#[tokio::test]
async fn search_is_switched_by_command() {
    let server = text_model_server().await;
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap();
    let search_enabled = || async {
        let settings: crate::model::Settings = server.call(&client, "/api/get_settings", &[]).await;
        settings.search_enabled
    };
    let events = post_ask(&client, &server, "/search off").await.unwrap();
    assert!(
        matches!(&events[0], AnswerEvent::Command { search: Some(false), text, .. } if text.contains("已关闭")),
        "{events:?}"
    );
    assert!(!search_enabled().await, "the session's switch is off");
    let events = post_ask(&client, &server, "/search ON").await.unwrap();
    assert!(matches!(
        &events[0],
        AnswerEvent::Command {
            search: Some(true),
            ..
        }
    ));
    assert!(search_enabled().await);
    let events = post_ask(&client, &server, "/search maybe").await.unwrap();
    assert!(
        matches!(&events[0], AnswerEvent::Command { search: None, text, .. } if text.contains("/search on")),
        "{events:?}"
    );
    assert!(search_enabled().await, "an unclear command changes nothing");
    // The help of an unknown command names it.
    let events = post_ask(&client, &server, "/nope").await.unwrap();
    assert!(matches!(&events[0], AnswerEvent::Command { text, .. } if text.contains("/search")));
}

#[tokio::test]
async fn answer_streams_are_gzipped_for_clients_that_take_it() {
    use std::io::Read;

    let server = text_model_server().await;
    // Raw bytes: this client decodes nothing itself.
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .no_gzip()
        .build()
        .unwrap();
    let ask = |accept: Option<&'static str>| {
        let mut request = client
            .post(server.url("/api/ask"))
            .form(&[("question", "量子计算 入门")]);
        if let Some(accept) = accept {
            request = request.header(reqwest::header::ACCEPT_ENCODING, accept);
        }
        request.send()
    };
    let events_of = |ndjson: &[u8]| LineDecoder::default().push(ndjson);

    let gzipped = ask(Some("gzip, deflate, br")).await.unwrap();
    assert_eq!(gzipped.status(), 200);
    assert_eq!(gzipped.headers()["content-encoding"], "gzip");
    assert_eq!(gzipped.headers()["vary"], "accept-encoding");
    let wire = gzipped.bytes().await.unwrap();
    let mut ndjson = Vec::new();
    flate2::read::GzDecoder::new(&wire[..])
        .read_to_end(&mut ndjson)
        .unwrap();
    let events = events_of(&ndjson);
    assert!(
        matches!(super::done_event(&events), Some(AnswerEvent::Done { cited, .. }) if cited == &vec![1]),
        "{events:?}"
    );

    // A client that does not take gzip (or refuses it) gets the lines as they are.
    for accept in [None, Some("gzip;q=0, br")] {
        let plain = ask(accept).await.unwrap();
        assert_eq!(plain.status(), 200);
        assert!(plain.headers().get("content-encoding").is_none());
        let events = events_of(&plain.bytes().await.unwrap());
        assert!(
            super::done_event(&events).is_some(),
            "{accept:?}: {events:?}"
        );
    }
}

#[tokio::test]
async fn a_second_question_while_answering_is_a_409_that_says_why() {
    let (llm, _) = super::llm::fake_openai().await;
    let server = super::TestServer::start(&[
        ("CITED_SEARXNG_URL", &searxng::shared().url),
        ("CITED_LLM_BASE_URL", &llm),
        ("CITED_LLM_MODEL", "endless"),
    ])
    .await;
    let client = super::browser();
    // The first answer keeps streaming while the second question arrives.
    let first = server
        .send(&client, "/api/ask", &[("question", "first")])
        .await;
    assert!(first.status().is_success());
    let mut body = first.bytes_stream();
    let mut decoder = LineDecoder::default();
    // The browser's stream carries the text in rendering patches.
    while !decoder
        .push(&body.next().await.unwrap().unwrap())
        .iter()
        .any(|e| matches!(e, AnswerEvent::Rendered { .. }))
    {}
    let second = server
        .send(&client, "/api/ask", &[("question", "second")])
        .await;
    assert_eq!(
        second.status(),
        409,
        "busy is a conflict, not a server error"
    );
    let text = second.text().await.unwrap();
    assert!(text.contains(Lang::ZhCn.texts().busy), "{text}");
    let stopped: bool = server.call(&client, "/api/stop", &[]).await;
    assert!(stopped);
}

#[tokio::test]
async fn a_finished_answer_gets_three_follow_up_questions() {
    let model = Scripted::chunks(|request| {
        if system_prompt(request).contains("follow-up questions") {
            vec!["1. How is Tokio scheduled? [2]\n- What is rust async runtime?\n".into()]
        } else {
            vec!["Tokio is the usual runtime [1].".into()]
        }
    });
    let h = harness(&searxng::shared().url, model, &[("CITED_RELATED", "model")]);
    let (exchange, events) = ask(&h, "What is rust async runtime?", true).await;
    // The model's one usable line first (its repeat of the question is dropped), then the
    // sources' titles fill up to three, in the question's language.
    assert_eq!(exchange.related.len(), 3, "{:?}", exchange.related);
    assert_eq!(exchange.related[0], "How is Tokio scheduled?");
    assert!(exchange.related[1..]
        .iter()
        .all(|q| q.starts_with("What else should I know about ")));
    let sent = events.iter().find_map(|e| match e {
        AnswerEvent::Related { questions } => Some(questions.clone()),
        _ => None,
    });
    assert_eq!(sent.as_ref(), Some(&exchange.related));
    let position = |wanted: fn(&AnswerEvent) -> bool| events.iter().position(wanted);
    assert!(
        position(|e| matches!(e, AnswerEvent::Done { .. }))
            < position(|e| matches!(e, AnswerEvent::Related { .. })),
        "the answer is on screen before its follow-ups"
    );
    // Off: no second call and no list.
    let model = Scripted::chunks(|_| vec!["Tokio is the usual runtime [1].".into()]);
    let h = harness(&searxng::shared().url, model, &[("CITED_RELATED", "off")]);
    let (exchange, _) = ask(&h, "What is rust async runtime?", true).await;
    assert!(exchange.related.is_empty());
    assert_eq!(h.model.requests().len(), 1);
}

/// Records what each search asked for; answers with one source.
struct Recording {
    seen: Mutex<Vec<(String, SearchOptions)>>,
}

#[async_trait]
impl SearchProvider for Recording {
    async fn search(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<SearchResults, SearchError> {
        self.seen
            .lock()
            .unwrap()
            .push((query.to_string(), options.clone()));
        Ok(SearchResults {
            query: query.to_string(),
            sources: vec![crate::model::Source {
                url: "https://docs.rs/tokio".into(),
                title: "tokio - Rust".into(),
                snippet: "An async runtime.".into(),
                ..crate::model::Source::default()
            }],
            ..SearchResults::default()
        })
    }
}

#[tokio::test]
async fn focus_period_and_site_narrow_the_web_search() {
    let model = Scripted::chunks(|_| vec!["Tokio [1].".into()]);
    let mut h = harness(
        &searxng::shared().url,
        model,
        &[("CITED_FOCUS_CODE", "engines=github,stackoverflow")],
    );
    let recording = Arc::new(Recording {
        seen: Mutex::new(Vec::new()),
    });
    h.state.search = recording.clone();
    let ask_narrowed = |focus, period, site: Option<&str>| {
        h.session.update_settings(|settings| {
            settings.focus = focus;
            settings.period = period;
        });
        let input = TurnInput {
            id: 1,
            question: "tokio runtime".into(),
            search_enabled: true,
            lang: Lang::En,
            mode: Mode::Chat,
            force_search: false,
            site: site.map(str::to_string),
            model: None,
            files: Vec::new(),
        };
        let (sender, mut receiver) = mpsc::channel(256);
        let state = h.state.clone();
        let session = Arc::clone(&h.session);
        async move {
            tokio::spawn(async move { while receiver.recv().await.is_some() {} });
            answer::run(state, session, input, CancellationToken::new(), sender).await
        }
    };
    use crate::model::{Focus, Period};
    use crate::ssr::search::TimeRange;
    ask_narrowed(Focus::Academic, Some(Period::Week), Some("docs.rs")).await;
    ask_narrowed(Focus::Code, None, None).await;
    ask_narrowed(Focus::Web, None, None).await;
    let seen = recording.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(seen[0].0, "tokio runtime site:docs.rs");
    assert_eq!(seen[0].1.categories, vec!["science"]);
    assert_eq!(seen[0].1.time_range, Some(TimeRange::Week));
    assert_eq!(seen[1].0, "tokio runtime");
    assert_eq!(seen[1].1.engines, vec!["github", "stackoverflow"]);
    assert!(seen[1].1.categories.is_empty());
    assert_eq!(seen[1].1.time_range, None);
    assert_eq!(
        seen[2].1,
        SearchOptions::default(),
        "Web: SearXNG's defaults"
    );
}

#[tokio::test]
async fn each_focus_reaches_its_searxng_category() {
    use crate::model::Focus;
    let model = Scripted::chunks(|_| vec!["Rust [1].".into()]);
    let h = harness(&searxng::shared().url, model, &[]);
    let urls = |focus| {
        h.session.update_settings(|settings| settings.focus = focus);
        let input = TurnInput {
            model: None,
            files: Vec::new(),
            site: None,
            ..TurnInput::standalone("rust async runtime".into(), Mode::Chat)
        };
        let (sender, mut receiver) = mpsc::channel(256);
        let state = h.state.clone();
        let session = Arc::clone(&h.session);
        async move {
            tokio::spawn(async move { while receiver.recv().await.is_some() {} });
            let exchange =
                answer::run(state, session, input, CancellationToken::new(), sender).await;
            exchange
                .sources
                .iter()
                .map(|s| s.url.clone())
                .collect::<Vec<_>>()
        }
    };
    let news = urls(Focus::News).await;
    assert_eq!(news, ["https://news.example.org/2026/rust-release"]);
    let academic = urls(Focus::Academic).await;
    assert_eq!(academic, ["https://science.example.org/paper/1"]);
    let web = urls(Focus::Web).await;
    assert!(
        web.iter()
            .all(|url| !url.contains("news.example.org") && !url.contains("science.")),
        "{web:?}"
    );
    assert!(
        web.iter().any(|url| url.contains("docs.example.org")),
        "{web:?}"
    );
}

#[tokio::test]
async fn a_full_conversation_asks_for_a_new_chat_and_loses_nothing() {
    let (llm, _) = super::llm::fake_openai().await;
    let server = super::TestServer::start(&[
        ("CITED_SEARXNG_URL", &searxng::shared().url),
        ("CITED_LLM_BASE_URL", &llm),
        ("CITED_LLM_MODEL", "text"),
        ("CITED_MAX_EXCHANGES", "2"),
    ])
    .await;
    let client = super::browser();
    post_ask(&client, &server, "量子计算 入门").await.unwrap();
    post_ask(&client, &server, "量子计算 应用").await.unwrap();
    // The third is refused with what to do; the two stay.
    let refused = post_ask(&client, &server, "量子计算 历史")
        .await
        .unwrap_err();
    assert!(
        refused.contains("CITED_MAX_EXCHANGES") && refused.contains("新对话"),
        "{refused}"
    );
    let history = super::exposure::history_of(&client, &server).await;
    assert_eq!(history.conversations.len(), 1);
    // A new chat takes questions again.
    let new = client.post(server.url("/new")).send().await.unwrap();
    assert!(new.status().is_success() || new.status().is_redirection());
    post_ask(&client, &server, "量子计算 历史").await.unwrap();
    let history = super::exposure::history_of(&client, &server).await;
    assert_eq!(history.conversations.len(), 2);
}
