//! Bounded model calls with a scripted model that misbehaves on cue: a reply past its
//! deadline, a reply stuck in a loop, a reasoning model, token counts and prices, an
//! answer that cites nothing, an Agent that never searches, and a Research run past its
//! deadline. The real-model suite ([`super::real_model`]) covers the same paths on
//! llama.cpp; these script the exact faults.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::searxng;
use crate::model::{AnswerEvent, Exchange, Lang, Mode, StopReason};
use crate::ssr::llm::{ChatEvent, ChatRequest, FinishReason, Message, Usage};
use crate::ssr::pipeline::TurnInput;
use crate::ssr::state::AppState;

/// One scripted event, after a pause; `None` waits forever.
type Beat = (Duration, Option<ChatEvent>);

/// The scripted model playing `script`'s beats.
fn paced(
    script: impl Fn(&ChatRequest) -> Vec<Beat> + Send + Sync + 'static,
) -> Arc<super::model::Model> {
    super::model::Model::new(move |request| {
        script(request).into_iter().fold(
            super::model::Reply::events([]),
            |reply, (pause, event)| match event {
                Some(event) => reply.then(pause, event),
                None => reply.hang(pause),
            },
        )
    })
}

fn text(piece: &str) -> Beat {
    (Duration::ZERO, Some(ChatEvent::Text(piece.to_string())))
}

fn done(usage: Option<Usage>) -> Beat {
    (
        Duration::ZERO,
        Some(ChatEvent::Done {
            finish_reason: Some(FinishReason::Stop),
            usage,
        }),
    )
}

fn state(model: Arc<super::model::Model>, extra: &[(&str, &str)]) -> AppState {
    super::App::searching(&searxng::shared().url)
        .vars(extra)
        .model(model)
        .state()
}

async fn ask(
    state: &AppState,
    question: &str,
    mode: Mode,
    search: bool,
) -> (Exchange, Vec<AnswerEvent>) {
    ask_with(state, question, mode, search, false).await
}

async fn ask_with(
    state: &AppState,
    question: &str,
    mode: Mode,
    search_enabled: bool,
    force_search: bool,
) -> (Exchange, Vec<AnswerEvent>) {
    let input = TurnInput {
        id: 1,
        question: question.into(),
        search_enabled,
        lang: Lang::En,
        mode,
        force_search,
        site: None,
        model: None,
        files: Vec::new(),
    };
    super::answer_collecting(state, input).await
}

fn has_notice(exchange: &Exchange, needle: &str) -> bool {
    exchange.notices.iter().any(|n| n.text.contains(needle))
}

/// On paused time: the five seconds of the deadline pass at once.
#[tokio::test(start_paused = true)]
async fn a_reply_past_its_deadline_is_cut_and_kept_with_progress_before_it() {
    let model = paced(|_| {
        vec![
            (
                Duration::from_millis(2500),
                Some(ChatEvent::Text("Partial answer.".into())),
            ),
            (Duration::ZERO, None),
        ]
    });
    let state = state(model, &[("CITED_LLM_CALL_DEADLINE_SECS", "5")]);
    let started = tokio::time::Instant::now();
    let (exchange, events) = ask(&state, "slow", Mode::Chat, false).await;
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(30),
        "cut at the deadline: {took:?}"
    );
    assert_eq!(exchange.answer, "Partial answer.");
    assert!(
        has_notice(&exchange, "did not finish within 5 s"),
        "{:?}",
        exchange.notices
    );
    assert_eq!(exchange.state, crate::model::ExchangeState::Done);
    // Before the first token the status line counted the seconds.
    let progress: Vec<u32> = events
        .iter()
        .filter_map(|e| match e {
            AnswerEvent::Progress { secs, .. } => Some(*secs),
            _ => None,
        })
        .collect();
    assert!(
        progress.len() >= 2 && progress.windows(2).all(|w| w[0] < w[1]),
        "{progress:?}"
    );
}

#[tokio::test]
async fn a_looping_reply_is_cut_after_its_first_round() {
    let model = paced(|_| {
        let mut beats = vec![text("Tokio is a runtime. ")];
        beats.extend((0..60).map(|_| text("It schedules tasks on threads. ")));
        beats.push(done(None));
        beats
    });
    let state = state(model, &[]);
    let (exchange, events) = ask(&state, "loop", Mode::Chat, false).await;
    assert!(exchange
        .answer
        .starts_with("Tokio is a runtime. It schedules tasks on threads"));
    assert!(
        exchange.answer.matches("schedules").count() == 1,
        "one round is kept: {}",
        exchange.answer
    );
    assert!(has_notice(&exchange, "repeating itself"));
    assert!(events
        .iter()
        .any(|e| matches!(e, AnswerEvent::Rewrite { answer } if *answer == exchange.answer)));
}

#[tokio::test]
async fn reasoning_is_kept_apart_from_the_answer_and_its_citations() {
    let model = paced(|_| {
        vec![
            (
                Duration::ZERO,
                Some(ChatEvent::Reasoning(
                    "The user asks; source [1] says so.".into(),
                )),
            ),
            text("Tokio is an async runtime."),
            done(Some(Usage {
                prompt_tokens: 1000,
                completion_tokens: 500,
            })),
        ]
    });
    let state = state(
        model,
        &[
            ("CITED_LLM_PRICE_INPUT", "1"),
            ("CITED_LLM_PRICE_OUTPUT", "2"),
        ],
    );
    let (exchange, events) = ask(&state, "think", Mode::Chat, false).await;
    assert_eq!(exchange.answer, "Tokio is an async runtime.");
    assert_eq!(exchange.reasoning, "The user asks; source [1] says so.");
    assert!(exchange.cited.is_empty());
    assert!(events
        .iter()
        .any(|e| matches!(e, AnswerEvent::Reasoning { .. })));
    let usage = exchange.usage.clone().unwrap();
    assert_eq!(
        (usage.prompt_tokens, usage.completion_tokens, usage.calls),
        (1000, 500, 1)
    );
    assert!(!usage.estimated);
    // 1000 × 1 / 1e6 + 500 × 2 / 1e6 = 0.002
    assert_eq!(usage.cost_micros, Some(2000));
    let Some(AnswerEvent::Done {
        usage: sent,
        coverage,
        ..
    }) = super::done_event(&events)
    else {
        panic!("no Done: {events:?}");
    };
    assert_eq!(sent.as_ref(), Some(&usage));
    assert_eq!(*coverage, exchange.coverage);
}

#[tokio::test]
async fn an_answer_citing_nothing_it_retrieved_is_flagged() {
    let model = paced(|_| {
        vec![
            text("Tokio is the most popular async runtime for Rust servers."),
            done(None),
        ]
    });
    let state = state(model, &[]);
    let (exchange, _) = ask(&state, "rust async runtime", Mode::Chat, true).await;
    assert!(!exchange.sources.is_empty());
    assert!(exchange.cited.is_empty());
    assert!(
        has_notice(&exchange, "cites none of the sources"),
        "{:?}",
        exchange.notices
    );
    let coverage = exchange.coverage.unwrap();
    assert_eq!((coverage.cited, coverage.claims), (0, 1));
    // Without a server count, the streamed pieces stand in and say so.
    assert!(exchange.usage.unwrap().estimated);
}

#[tokio::test]
async fn an_agent_that_never_searches_is_marked_and_can_be_made_to() {
    let model = paced(|request: &ChatRequest| {
        // The tool call would come from a better model; this one answers from memory
        // unless cited searched for it (then the sources are in the prompt).
        let searched = request.messages.iter().any(|m| match m {
            Message::System(text) | Message::User(text) => text.contains("[1]"),
            _ => false,
        });
        let answer = if searched {
            "Tokio is an asynchronous runtime [1]."
        } else {
            "Tokio is an asynchronous runtime."
        };
        vec![text(answer), done(None)]
    });
    let state = state(model, &[]);
    let (exchange, events) = ask(&state, "rust async runtime", Mode::Agent, true).await;
    assert!(exchange.unsearched, "{exchange:#?}");
    assert!(matches!(
        super::done_event(&events),
        Some(AnswerEvent::Done {
            unsearched: true,
            ..
        })
    ));
    let (again, _) = ask_with(&state, "rust async runtime", Mode::Agent, true, true).await;
    assert!(!again.unsearched);
    assert!(!again.sources.is_empty(), "搜索后重答 searched");
    assert_eq!(again.cited, vec![1]);
}

/// On real time: its branch searches the real SearXNG, and a paused clock would jump past
/// the search's own timeout while the socket is read.
#[tokio::test]
async fn research_past_its_deadline_answers_from_the_evidence_so_far() {
    let model = paced(|request: &ChatRequest| {
        let Some(Message::System(system)) = request.messages.first() else {
            return vec![text("?"), done(None)];
        };
        if system.contains("\"sub_questions\"") {
            let plan = r#"{"sub_questions": [{"question": "What is Tokio in Rust?", "query": "rust tokio", "language": "en"}]}"#;
            vec![text(plan), done(None)]
        } else if system.contains("\"multi_anchor_hits\"") {
            // The branch's reflection never comes.
            vec![(Duration::ZERO, None)]
        } else if system.contains("\"reasoning\"") {
            vec![
                text(r#"{"answer": "unknown", "confidence": "low", "reasoning": "none"}"#),
                done(None),
            ]
        } else {
            vec![text("Nothing was found in time."), done(None)]
        }
    });
    let state = state(
        model,
        &[
            ("CITED_RESEARCH_DEADLINE_SECS", "10"),
            ("CITED_RESEARCH_ENCYCLOPEDIA_ENGINES", "none"),
        ],
    );
    let started = Instant::now();
    let (exchange, events) = ask(&state, "Which runtime?", Mode::Research, false).await;
    assert!(started.elapsed() < Duration::from_secs(60));
    let plan = exchange.research.clone().unwrap();
    assert_eq!(plan.stop, Some(StopReason::Deadline), "{plan:#?}");
    assert!(
        has_notice(&exchange, "time limit (10 s")
            && has_notice(&exchange, "What is Tokio in Rust?"),
        "{:?}",
        exchange.notices
    );
    assert!(!exchange.answer.trim().is_empty(), "an answer all the same");
    assert!(events
        .iter()
        .any(|e| matches!(e, AnswerEvent::Progress { tokens: _, secs } if *secs >= 2)));
}

#[tokio::test]
async fn thinking_that_came_as_text_is_moved_out_of_the_answer() {
    // The template opened `<think>`: the stream has only its end.
    let model = paced(|_| {
        vec![
            text("The user wants Tokio [7]. "),
            text("</think>\n\n"),
            text("Tokio is an async runtime."),
            done(None),
        ]
    });
    let state = state(model, &[]);
    let (exchange, events) = ask(&state, "think", Mode::Chat, false).await;
    assert_eq!(exchange.answer, "Tokio is an async runtime.");
    assert_eq!(exchange.reasoning, "The user wants Tokio [7].");
    assert!(events.iter().any(
        |e| matches!(e, AnswerEvent::Rewrite { answer } if answer == "Tokio is an async runtime.")
    ));
}

#[tokio::test]
async fn code_may_repeat_itself() {
    let model = paced(|_| {
        let mut beats = vec![text("A zeroed buffer:\n\n```rust\nlet buffer = [\n")];
        beats.extend((0..80).map(|_| text("    0, 0, 0, 0,\n")));
        beats.push(text("];\n```\n"));
        beats.push(done(None));
        beats
    });
    let state = state(model, &[]);
    let (exchange, _) = ask(&state, "code", Mode::Chat, false).await;
    assert_eq!(exchange.answer.matches("0, 0, 0, 0,").count(), 80);
    assert!(!has_notice(&exchange, "repeating itself"));
}
