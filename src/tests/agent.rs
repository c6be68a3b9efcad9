//! The Agent pipeline with a scripted tool-calling model and the real SearXNG: every
//! numbering scenario of seed 002.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::searxng;
use crate::model::Lang;
use crate::model::{AnswerEvent, Exchange, Mode, Step};
use crate::ssr::answer;
use crate::ssr::llm::{ChatModel, FinishReason, LlmError, Message};
use crate::ssr::pipeline::TurnInput;
use crate::ssr::search::{SearchError, SearchOptions, SearchProvider, SearchResults};
use crate::ssr::session::Session;
use crate::ssr::state::AppState;

/// Calls `web_search` with the planned queries turn by turn, then answers from the tool
/// outputs it was given.
pub(crate) fn script(
    turns: &[&[&str]],
    answer: impl Fn(&[String]) -> String + Send + Sync + 'static,
) -> Arc<super::model::Model> {
    let turns: Mutex<Vec<Vec<String>>> = Mutex::new(
        turns
            .iter()
            .rev()
            .map(|t| t.iter().map(|q| q.to_string()).collect())
            .collect(),
    );
    super::model::Model::new(move |request| {
        assert_eq!(request.tools[0].name, "web_search");
        let tool_outputs: Vec<String> = request
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::Tool { content, .. } => Some(content.clone()),
                _ => None,
            })
            .collect();
        let next = turns.lock().unwrap().pop();
        match next {
            Some(queries) => super::model::Reply::searches("Let me search. ", &queries),
            None => super::model::Reply::text(answer(&tool_outputs))
                .finish(Some(FinishReason::Stop), None),
        }
    })
}

fn harness(model: Arc<dyn ChatModel>, extra: &[(&str, &str)]) -> (AppState, Arc<Session>) {
    super::App::searching(&searxng::shared().url)
        .vars(extra)
        .model(model)
        .with_session()
}

async fn agent(
    state: &AppState,
    session: &Arc<Session>,
    question: &str,
) -> (Exchange, Vec<AnswerEvent>) {
    let (sender, mut receiver) = mpsc::channel(1024);
    let input = TurnInput {
        id: 1,
        question: question.into(),
        search_enabled: false,
        lang: Lang::ZhCn,
        mode: Mode::Agent,
        force_search: false,
        site: None,
        model: None,
        files: Vec::new(),
    };
    let exchange = answer::run(
        state.clone(),
        Arc::clone(session),
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

fn ranges(exchange: &Exchange) -> Vec<(Option<u32>, Option<u32>, bool)> {
    exchange
        .steps
        .iter()
        .filter_map(|step| match step {
            Step::Search {
                first,
                last,
                cached,
                ..
            } => Some((*first, *last, *cached)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn five_then_three_results_are_1_to_5_and_6_to_8() {
    let model = script(&[&["five apples"], &["three pears"]], |_| {
        "Apples [1], pears [6][8], and [99].".into()
    });
    let (state, session) = harness(model.clone(), &[]);
    let (exchange, events) = agent(&state, &session, "apples and pears?").await;
    assert_eq!(
        ranges(&exchange),
        vec![(Some(1), Some(5), false), (Some(6), Some(8), false)]
    );
    // The model saw the global numbers in the tool output.
    let last = model.last_request();
    let Some(Message::Tool { content, .. }) = last.messages.last() else {
        panic!()
    };
    assert!(
        content.starts_with("[6] three pears result 1 - https://three.example.org/three-pears/1"),
        "{content}"
    );
    // [99] has no source: text, not cited.
    assert_eq!(exchange.cited, vec![1, 6, 8]);
    assert_eq!(
        exchange.answer, "Apples [1], pears [6][8], and [99].",
        "thinking before tool calls is not the answer"
    );
    assert!(exchange
        .steps
        .iter()
        .any(|s| matches!(s, Step::Thought { text } if text == "Let me search. ")));
    assert!(events.iter().any(|e| matches!(
        e,
        AnswerEvent::Step {
            step: Step::Thought { .. },
            ..
        }
    )));
    // The browser rebuilds the answer from tokens and rewrites alone, measuring nothing.
    let mut replayed = String::new();
    for event in &events {
        match event {
            AnswerEvent::Token { text } => replayed.push_str(text),
            AnswerEvent::Rewrite { answer } => replayed.clone_from(answer),
            _ => {}
        }
    }
    assert_eq!(replayed, exchange.answer);
    // Steps are addressed by their index in the exchange.
    let ids: Vec<u32> = events
        .iter()
        .filter_map(|e| match e {
            AnswerEvent::Step { id, .. } => Some(*id),
            _ => None,
        })
        .collect();
    assert_eq!(ids, (0..exchange.steps.len() as u32).collect::<Vec<_>>());
    let list = crate::citation::lists::agent_markdown(
        &crate::citation::SourceMap::new(exchange.sources.clone()),
        &exchange.cited,
    );
    assert!(
        list.contains("**第 1 次搜索** (查询: five apples)\n1. [five apples result 1]"),
        "{list}"
    );
    assert!(
        list.contains("**第 2 次搜索** (查询: three pears)\n6. [three pears result 1]"),
        "{list}"
    );
    assert!(
        !list.contains("2. ["),
        "only cited numbers are listed: {list}"
    );
}

#[tokio::test]
async fn numbering_continues_across_questions_and_restarts_after_reset() {
    let (mut state, session) = harness(
        script(&[&["five a"], &["three b"]], |_| "done [1]".into()),
        &[],
    );
    let (first, _) = agent(&state, &session, "q1").await;
    assert_eq!(ranges(&first).last().unwrap().1, Some(8));
    // The N-th search starts at the previous total + 1.
    state.llm = script(&[&["three d"]], |_| "again [9]".into());
    let (second, _) = agent(&state, &session, "q2").await;
    assert_eq!(ranges(&second), vec![(Some(9), Some(11), false)]);
    // Chat keeps its own per-answer numbers and leaves the registry alone.
    let mut chat_state = state.clone();
    chat_state.llm = super::chat::Scripted::fixed("chat [1]");
    let (sender, _receiver) = mpsc::channel(1024);
    let chat_input = TurnInput {
        id: 2,
        question: "five chat".into(),
        search_enabled: true,
        lang: Lang::ZhCn,
        mode: Mode::Chat,
        force_search: false,
        site: None,
        model: None,
        files: Vec::new(),
    };
    let chat_exchange = answer::run(
        chat_state,
        Arc::clone(&session),
        chat_input,
        CancellationToken::new(),
        sender,
    )
    .await;
    assert_eq!(chat_exchange.sources.first().map(|e| e.number), Some(1));
    state.llm = script(&[&["three e"]], |_| "back [12]".into());
    let (third, _) = agent(&state, &session, "q3").await;
    assert_eq!(
        ranges(&third),
        vec![(Some(12), Some(14), false)],
        "switching to Chat and back continues"
    );
    session.reset();
    state.llm = script(&[&["five f"]], |_| "fresh [1]".into());
    let (fresh, _) = agent(&state, &session, "q4").await;
    assert_eq!(
        ranges(&fresh),
        vec![(Some(1), Some(5), false)],
        "/reset restarts at 1"
    );
}

#[tokio::test]
async fn a_repeated_query_hits_the_cache_and_two_calls_register_in_call_order() {
    let (state, session) = harness(
        script(&[&["five same", "three other"], &["five same"]], |_| {
            "ok".into()
        }),
        &[],
    );
    let (exchange, _) = agent(&state, &session, "q").await;
    assert_eq!(
        ranges(&exchange),
        vec![
            (Some(1), Some(5), false),
            (Some(6), Some(8), false),
            (Some(9), Some(13), true)
        ]
    );
}

#[tokio::test]
async fn five_searches_by_default_then_the_tool_says_answer_now() {
    let turns: Vec<&[&str]> = vec![
        &["three a"],
        &["three b"],
        &["three c"],
        &["three d"],
        &["three e"],
        &["three f"],
    ];
    let model = script(&turns, |outputs| format!("{} outputs", outputs.len()));
    let (state, session) = harness(model, &[]);
    let (exchange, _) = agent(&state, &session, "q").await;
    let searches = exchange
        .steps
        .iter()
        .filter(|s| matches!(s, Step::Search { .. }))
        .count();
    assert_eq!(searches, 5);
    assert!(matches!(exchange.steps.last(), Some(Step::Capped { query }) if query == "three f"));
    assert_eq!(exchange.answer, "6 outputs", "the model still answered");
}

/// Refuses any request with tools, like a server whose model has no function calling.
fn no_tools() -> Arc<dyn ChatModel> {
    super::model::Model::new(|request| {
        if request.tools.is_empty() {
            super::model::Reply::text("From the results [1].")
        } else {
            super::model::Reply::refuse(LlmError::BadRequest {
                status: 400,
                message: "this model does not support tools".into(),
            })
        }
    })
}

#[tokio::test]
async fn a_model_that_rejects_tools_gets_search_then_answer() {
    let (state, session) = harness(no_tools(), &[]);
    let (exchange, _) = agent(&state, &session, "five widgets").await;
    assert!(
        exchange.notices[0].text.contains("不支持工具调用"),
        "{:?}",
        exchange.notices
    );
    assert_eq!(exchange.answer, "From the results [1].");
    assert_eq!(exchange.cited, vec![1]);
    assert_eq!(exchange.sources.len(), 5, "it searched first");
    // Agent numbering stays session-global: the next Agent answer continues after [5].
    assert_eq!(session.with_registry(|r| r.len()), 5);
}

#[tokio::test]
async fn the_no_tools_fallback_keeps_every_notice_and_starts_once() {
    // SearXNG is down, so `auto` answers from the knowledge base with its own notice; the
    // model cannot call tools, so the answer falls back to search-then-answer.
    let (state, session) = harness(
        no_tools(),
        &[
            ("CITED_SOURCES", "auto"),
            ("CITED_SEARXNG_URL", "http://127.0.0.1:9"),
        ],
    );
    assert!(
        !state.knowledge.is_empty(),
        "the project's docs are indexed"
    );
    let (exchange, events) = agent(&state, &session, "SearXNG JSON output").await;
    let t = Lang::ZhCn.texts();
    let texts: Vec<&str> = exchange.notices.iter().map(|n| n.text.as_str()).collect();
    // The switch says why (nothing listens at the configured address) and the fix.
    let (said, why) = t.knowledge_fallback.split_once("{reason}").unwrap();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(
        texts[0].starts_with(said) && texts[0].len() > said.len() + why.len(),
        "{texts:?}"
    );
    assert!(texts[0].contains("CITED_SEARXNG_URL"), "{texts:?}");
    assert_eq!(texts[1], t.no_tools, "{texts:?}");
    let started = events
        .iter()
        .filter(|e| matches!(e, AnswerEvent::Started { .. }))
        .count();
    assert_eq!(started, 1, "one answer, one start");
    let saved = session.conversation();
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0], exchange, "what was saved is what was answered");
    assert_eq!(exchange.cited, vec![1]);
}

/// Web search that lets a `/reset` land while it runs (without stopping the answer, as a
/// reset that races the stop signal would).
struct ResetDuringSearch {
    inner: Arc<dyn SearchProvider>,
    session: Arc<Session>,
}

#[async_trait]
impl SearchProvider for ResetDuringSearch {
    async fn search(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<SearchResults, SearchError> {
        let results = self.inner.search(query, options).await;
        self.session.reset();
        results
    }
}

#[tokio::test]
async fn a_reset_during_a_search_leaves_the_fresh_registry_empty() {
    let (mut state, session) = harness(script(&[&["five a"]], |_| "done [1]".into()), &[]);
    state.search = Arc::new(ResetDuringSearch {
        inner: Arc::clone(&state.search),
        session: Arc::clone(&session),
    });
    let (exchange, _) = agent(&state, &session, "q").await;
    assert!(exchange.stopped, "the reset ended the answer");
    assert_eq!(
        session.with_registry(|r| r.len()),
        0,
        "no stale sources in the new conversation"
    );
    assert!(session.conversation().is_empty(), "nor a stale exchange");
}

#[tokio::test]
async fn a_conflicting_registry_is_repaired_and_the_user_warned() {
    let (state, session) = harness(
        script(&[&["five a"], &["three b"]], |_| "ok [1]".into()),
        &[],
    );
    // Corrupt the session registry the way a bad persisted session might.
    session.with_registry(|registry| {
        registry.add_round(
            "old",
            &[crate::model::Source {
                url: "https://x.example/1".into(),
                ..Default::default()
            }],
        );
        let mut data = serde_json::to_value(&*registry).unwrap();
        data["entries"][0]["number"] = 7.into();
        *registry = serde_json::from_value(data).unwrap();
    });
    let (exchange, _) = agent(&state, &session, "q").await;
    assert!(
        exchange
            .notices
            .iter()
            .any(|n| n.text.contains("引用编号冲突")),
        "{:?}",
        exchange.notices
    );
    assert_eq!(
        ranges(&exchange)[0],
        (Some(2), Some(6), false),
        "repaired, then numbered on"
    );
}

#[tokio::test]
async fn the_search_cap_answers_the_model_instead_of_failing() {
    let model = script(&[&["five a"], &["three b"], &["three c"]], |outputs| {
        format!("{} outputs", outputs.len())
    });
    let (state, session) = harness(model.clone(), &[("CITED_AGENT_MAX_SEARCHES", "2")]);
    let (exchange, _) = agent(&state, &session, "q").await;
    assert!(
        matches!(exchange.steps.iter().rfind(|s| !matches!(s, Step::Thought { .. })), Some(Step::Capped { query }) if query == "three c")
    );
    let last = model.last_request();
    let Some(Message::Tool { content, .. }) = last.messages.last() else {
        panic!()
    };
    assert!(
        content.contains("search limit for this answer (2 searches)"),
        "{content}"
    );
    assert_eq!(exchange.answer, "3 outputs");
}

/// SearXNG refusing JSON output on every search.
struct JsonOff;

#[async_trait]
impl SearchProvider for JsonOff {
    async fn search(&self, _: &str, _: &SearchOptions) -> Result<SearchResults, SearchError> {
        Err(SearchError::JsonDisabled {
            url: "http://127.0.0.1:8888/".into(),
        })
    }
}

#[tokio::test]
async fn a_failed_agent_search_is_told_under_the_answer_once() {
    let (mut state, session) = harness(
        script(&[&["first"], &["second", "third"]], |_| {
            "Tokio is a runtime.".into()
        }),
        &[("CITED_SOURCES", "web")],
    );
    state.search = Arc::new(JsonOff);
    let (exchange, events) = agent(&state, &session, "q").await;
    let expected = crate::ssr::messages::search_error(
        Lang::ZhCn,
        &SearchError::JsonDisabled {
            url: "http://127.0.0.1:8888/".into(),
        },
    );
    // Three searches failed alike: one warning beside the answer, each in the steps.
    let warnings: Vec<&str> = exchange
        .notices
        .iter()
        .filter(|n| n.level == crate::model::Level::Warning)
        .map(|n| n.text.as_str())
        .collect();
    assert_eq!(warnings, vec![expected.as_str()], "{:?}", exchange.notices);
    let failed_steps = exchange
        .steps
        .iter()
        .filter(|s| matches!(s, Step::Search { error: Some(_), .. }))
        .count();
    assert_eq!(failed_steps, 3);
    assert!(events
        .iter()
        .any(|e| matches!(e, AnswerEvent::Notice { notice } if notice.text == expected)));
    assert_eq!(exchange.answer, "Tokio is a runtime.");
}
