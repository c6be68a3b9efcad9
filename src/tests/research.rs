//! The Research pipeline with a scripted model and the real SearXNG: the two-loop run with
//! a pruned direction, a failing branch, unreadable replies, the caps, zero evidence, stop,
//! and the offline (no model) path.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::model::Model;
use super::searxng;
use crate::model::Lang;
use crate::model::{AnswerEvent, BranchStatus, Exchange, Mode, Reliability, StopReason};
use crate::ssr::config::Config;
use crate::ssr::llm::extractive::Extractive;
use crate::ssr::llm::{ChatModel, ChatRequest, Message};
use crate::ssr::pipeline::TurnInput;
use crate::ssr::research;
use crate::ssr::search::searxng::Searxng;
use crate::ssr::search::{SearchError, SearchOptions, SearchProvider, SearchResults};
use crate::ssr::session::Session;
use crate::ssr::state::AppState;

use super::model::ResearchStep as Step;

/// Which step a request is (every Research request has a system prompt).
fn step_of(request: &ChatRequest) -> Step {
    super::model::research_step(request).unwrap_or_else(|| panic!("no system prompt: {request:?}"))
}

/// The first user message: the step's input.
fn input_of(request: &ChatRequest) -> String {
    super::model::first_user(request)
}

type Reply = Arc<dyn Fn(Step, &ChatRequest, usize) -> String + Send + Sync>;

/// Answers each research step from a script; `n` counts earlier requests of the same step.
pub(crate) struct Script {
    reply: Reply,
    /// Requests whose input contains this text wait before answering.
    slow: Option<(&'static str, Duration)>,
}

impl Script {
    fn new(reply: impl Fn(Step, &ChatRequest, usize) -> String + Send + Sync + 'static) -> Script {
        Script {
            reply: Arc::new(reply),
            slow: None,
        }
    }

    /// The scripted model playing it.
    pub(crate) fn model(self) -> Arc<Model> {
        let Script { reply, slow } = self;
        let seen: Mutex<Vec<Step>> = Mutex::new(Vec::new());
        Model::new(move |request| {
            let step = step_of(request);
            let n = {
                let mut seen = seen.lock().unwrap();
                let n = seen.iter().filter(|s| **s == step).count();
                seen.push(step);
                n
            };
            let delay = match slow {
                Some((text, delay)) if input_of(request).contains(text) => delay,
                _ => Duration::ZERO,
            };
            super::model::Reply::text(reply(step, request, n)).after(delay)
        })
    }
}

/// The requests of one step a scripted model had.
trait Steps {
    fn of(&self, step: Step) -> Vec<ChatRequest>;
}

impl Steps for Model {
    fn of(&self, step: Step) -> Vec<ChatRequest> {
        self.requests()
            .into_iter()
            .filter(|request| step_of(request) == step)
            .collect()
    }
}

/// Searches through SearXNG, except queries containing `word`, which go to a SearXNG
/// address where nothing listens (a real connection failure).
struct DownFor {
    word: &'static str,
    up: Arc<dyn SearchProvider>,
    down: Searxng,
}

#[async_trait]
impl SearchProvider for DownFor {
    async fn search(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<SearchResults, SearchError> {
        if query.contains(self.word) {
            self.down.search(query, options).await
        } else {
            self.up.search(query, options).await
        }
    }
}

/// The shared SearXNG, its "local wiki" engine as the encyclopedia, then `extra`.
/// Research against the real SearXNG and its local encyclopedia, then `extra`.
fn app(extra: &[(&str, &str)]) -> super::App {
    super::App::searching(&searxng::shared().url)
        .var("CITED_RESEARCH_ENCYCLOPEDIA_ENGINES", "local wiki")
        .vars(extra)
        // The encyclopedia fixture serves its articles from 127.0.0.1; deep reads reach it.
        .allow(searxng::fixture_server())
}

fn config(extra: &[(&str, &str)]) -> Config {
    app(extra).config()
}

fn harness(model: Arc<dyn ChatModel>, extra: &[(&str, &str)]) -> (AppState, Arc<Session>) {
    app(extra).model(model).with_session()
}

async fn run_research(
    state: &AppState,
    session: &Arc<Session>,
    question: &str,
    cancel: CancellationToken,
) -> (Exchange, Vec<AnswerEvent>) {
    let input = TurnInput {
        id: 1,
        question: question.into(),
        search_enabled: true,
        lang: Lang::En,
        mode: Mode::Research,
        force_search: false,
        site: None,
        model: None,
        files: Vec::new(),
    };
    run_input(state, session, input, cancel).await
}

async fn run_input(
    state: &AppState,
    session: &Arc<Session>,
    input: TurnInput,
    cancel: CancellationToken,
) -> (Exchange, Vec<AnswerEvent>) {
    let (sender, mut receiver) = mpsc::channel(1024);
    let collector = tokio::spawn(async move {
        let mut events = Vec::new();
        while let Some(event) = receiver.recv().await {
            events.push(event);
        }
        events
    });
    let exchange =
        crate::ssr::answer::run(state.clone(), Arc::clone(session), input, cancel, sender).await;
    (exchange, collector.await.unwrap())
}

/// Runs `question` in Research mode with `script` as the model and `vars` set.
async fn research_with(
    script: &Arc<Model>,
    vars: &[(&str, &str)],
    question: &str,
) -> (Exchange, Vec<AnswerEvent>) {
    let (state, session) = harness(script.clone(), vars);
    run_research(&state, &session, question, CancellationToken::new()).await
}

pub(crate) fn sub_question(question: &str, query: &str) -> serde_json::Value {
    json!({ "question": question, "query": query, "language": "en", "purpose": "a gap" })
}

#[tokio::test]
async fn two_loops_with_a_pruned_direction_number_deterministically() {
    let script = scripted_two_loops().model();
    let (state, session) = harness(script.clone(), &[]);
    let (exchange, events) = run_research(
        &state,
        &session,
        "Which entity follows from alpha?",
        CancellationToken::new(),
    )
    .await;

    let plan = exchange.research.clone().expect("a research plan");
    assert_eq!(plan.stop, Some(StopReason::Sufficient), "{plan:#?}");
    assert_eq!(plan.loops.len(), 2);
    let first = &plan.loops[0];
    assert_eq!(first.sub_questions.len(), 2);
    let (alpha, beta) = (&first.sub_questions[0], &first.sub_questions[1]);
    assert_eq!(alpha.status, BranchStatus::Done);
    assert_eq!(beta.status, BranchStatus::Pruned);
    let verdict = first.verdict.as_ref().expect("loop 1 verdict");
    assert!(!verdict.sufficient);
    assert_eq!(verdict.prune, vec!["three beta"]);
    // Only the new sub-question was admitted in loop 2.
    let second = &plan.loops[1];
    assert_eq!(second.sub_questions.len(), 1, "{second:#?}");
    let gamma = &second.sub_questions[0];
    assert_eq!(gamma.query, "three gamma");
    assert!(second.verdict.as_ref().is_some_and(|v| v.sufficient));

    // Branch order numbering, although alpha (slow) finished last: alpha's 5 results and
    // its encyclopedia article are 1–6, beta's 3 results 7–9, gamma's 10–12.
    let alpha_evidence = alpha.evidence.as_ref().unwrap();
    assert_eq!(alpha_evidence.numbers, vec![1, 6]);
    assert_eq!(alpha_evidence.reliability, Reliability::High);
    assert_eq!(
        beta.evidence.as_ref().unwrap().numbers,
        vec![8],
        "99 is dropped"
    );
    assert_eq!(gamma.evidence.as_ref().unwrap().numbers, vec![10]);
    assert_eq!(alpha.rounds, vec![1, 2]);
    assert_eq!(beta.rounds, vec![3]);
    assert_eq!(gamma.rounds, vec![4]);
    let registry = session.with_registry(|r| r.clone());
    assert_eq!(registry.len(), 12);
    assert!(registry.get(6).unwrap().url.contains("/page/Alpha-Corp"));
    assert!(registry.get(7).unwrap().url.contains("three-beta/1"));
    assert!(registry.get(10).unwrap().url.contains("three-gamma/1"));

    // The encyclopedia check and the deep-read reached the evidence step.
    assert_eq!(alpha.checked, vec!["Alpha Corp"]);
    assert_eq!(alpha.read.len(), 1);
    let alpha_evidence_input = script
        .of(Step::Evidence)
        .iter()
        .map(input_of)
        .find(|i| i.contains("five alpha"))
        .unwrap();
    assert!(alpha_evidence_input.contains("(full text)"));
    assert!(alpha_evidence_input.contains("founded in 1901 by the Deep Read Society"));
    assert!(
        !alpha_evidence_input.contains("Donate"),
        "navigation is not readable text"
    );

    // The second plan was told what was done and what was pruned.
    let second_plan = input_of(&script.of(Step::Plan)[1]);
    assert!(
        second_plan.contains("- What is five alpha?"),
        "{second_plan}"
    );
    assert!(second_plan.contains("- three beta"), "{second_plan}");
    assert!(
        second_plan.contains("alpha [1] → gap: gamma"),
        "{second_plan}"
    );

    // 结论 line, then the explanation; citations resolve to the session numbers.
    assert!(
        exchange
            .answer
            .starts_with("**Conclusion**: Gamma (confidence: high)\n\n"),
        "{}",
        exchange.answer
    );
    assert_eq!(exchange.cited, vec![6, 10]);
    // What `cited ask --mode research --json` prints for benchmark scripts.
    let result = research::result_json(&exchange);
    assert_eq!(result["conclusion"], "Gamma");
    assert_eq!(result["confidence"], "high");
    assert_eq!(result["loops"], 2);
    assert_eq!(result["stop"], "sufficient");
    assert_eq!(result["cited"], json!([6, 10]));
    assert_eq!(
        result["evidence"][0]["statement"],
        "Alpha Corp was founded in 1901."
    );
    assert_eq!(result["evidence"][0]["sources"], json!([1, 6]));
    assert_eq!(result["evidence"][0]["reliability"], "high");
    // Each citation was checked against its source; the JSON carries the checks and share.
    let checked = exchange.alignments.len();
    assert!(checked >= 2, "{:?}", exchange.alignments);
    assert_eq!(result["support"]["checked"], checked);
    assert_eq!(result["alignments"].as_array().map(Vec::len), Some(checked));
    let sources = result["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 12);
    assert!(sources
        .iter()
        .any(|s| s["number"] == 6 && s["cited"] == true));
    let conclusion = plan.conclusion.unwrap();
    assert_eq!(conclusion.answer, "Gamma");
    assert_eq!(conclusion.confidence, Reliability::High);
    // The plan was live: alpha was seen running before it was done.
    let running = events.iter().any(|e| {
        matches!(e, AnswerEvent::Plan { plan }
        if plan.loops[0].sub_questions[0].status == BranchStatus::Running)
    });
    assert!(running);
    assert!(matches!(
        super::done_event(&events),
        Some(AnswerEvent::Done { stopped: false, .. })
    ));
}

/// The script of the two-loop scenario.
fn scripted_two_loops() -> Script {
    let mut script = Script::new(|step, request, n| {
        let input = input_of(request);
        let value = match step {
            Step::Plan if n == 0 => json!({ "anchors": ["alpha"], "sub_questions": [
                sub_question("What is five alpha?", "five alpha"),
                sub_question("What is three beta?", "three beta"),
            ]}),
            Step::Plan => json!({ "sub_questions": [
                sub_question("What is three beta?", "three beta"),
                sub_question("what is FIVE alpha", "five alpha"),
                sub_question("What is three gamma?", "three gamma"),
            ]}),
            Step::Reflect if input.contains("five alpha") => {
                json!({ "relevant": [1, 2], "entities": ["Alpha Corp"], "encyclopedia": ["Alpha Corp"], "deep_read": [] })
            }
            Step::Reflect => json!({ "relevant": [1], "encyclopedia": [] }),
            Step::Evidence if input.contains("five alpha") => {
                json!({ "statement": "Alpha Corp was founded in 1901.", "reliability": "high", "sources": [1, 6] })
            }
            Step::Evidence if input.contains("three beta") => {
                json!({ "statement": "Beta is a dead end.", "reliability": "medium", "sources": [2, 99] })
            }
            Step::Evidence => {
                json!({ "statement": "Gamma follows from alpha.", "reliability": "medium", "sources": ["[1]"] })
            }
            Step::Verify if n == 0 => {
                json!({ "sufficient": false, "chain": "alpha [1] → gap: gamma", "prune": ["three beta"] })
            }
            Step::Verify => json!({ "sufficient": "**充分**", "chain": "alpha [1] → gamma [10]" }),
            Step::Summary => {
                json!({ "answer": "Gamma", "confidence": "90%", "reasoning": "From [1] and [10]." })
            }
            Step::Format => {
                return "Alpha was founded in 1901 [6], and gamma follows [10].".to_string()
            }
        };
        value.to_string()
    });
    script.slow = Some(("five alpha", Duration::from_millis(400)));
    script
}

/// Plans the given sub-questions once, then nothing; every other step answers plainly.
pub(crate) fn one_loop(sub_questions: Vec<serde_json::Value>) -> Script {
    Script::new(move |step, request, n| {
        let input = input_of(request);
        let value = match step {
            Step::Plan if n == 0 => json!({ "sub_questions": sub_questions }),
            Step::Plan => json!({ "sub_questions": [] }),
            Step::Reflect => json!({ "relevant": [1] }),
            Step::Evidence => {
                let subject = input
                    .lines()
                    .find_map(|l| l.strip_prefix("Sub-question: "))
                    .unwrap_or("?")
                    .to_string();
                json!({ "statement": format!("Found: {subject}"), "reliability": "medium", "sources": [1] })
            }
            Step::Verify => json!({ "sufficient": true, "chain": "done" }),
            Step::Summary => {
                json!({ "answer": "Done", "confidence": "medium", "reasoning": "[1]" })
            }
            Step::Format => return "See [1].".to_string(),
        };
        value.to_string()
    })
}

#[tokio::test]
async fn a_branch_whose_search_is_down_fails_alone() {
    let script = one_loop(vec![
        sub_question("What is five alpha?", "five alpha"),
        sub_question("What is down delta?", "down delta"),
        sub_question("What is three beta?", "three beta"),
    ])
    .model();
    let (mut state, session) = harness(script.clone(), &[]);
    let closed = format!("http://127.0.0.1:{}", searxng::free_port());
    let down = Searxng::new(&config(&[("CITED_SEARXNG_URL", closed.as_str())]));
    state.search = Arc::new(DownFor {
        word: "down",
        up: Arc::clone(&state.search),
        down,
    });
    let (exchange, _) = run_research(
        &state,
        &session,
        "What are alpha, delta and beta?",
        CancellationToken::new(),
    )
    .await;
    let plan = exchange.research.unwrap();
    let subs = &plan.loops[0].sub_questions;
    assert_eq!(subs[0].status, BranchStatus::Done);
    assert_eq!(subs[1].status, BranchStatus::Failed);
    assert!(
        subs[1].error.as_deref().unwrap_or("").contains("SearXNG"),
        "the failure says what failed: {:?}",
        subs[1].error
    );
    assert_eq!(subs[2].status, BranchStatus::Done);
    // The failed branch took no numbers: alpha 1–5, beta 6–8.
    assert_eq!(subs[0].evidence.as_ref().unwrap().numbers, vec![1]);
    assert_eq!(subs[2].evidence.as_ref().unwrap().numbers, vec![6]);
    assert_eq!(plan.stop, Some(StopReason::Sufficient));
    assert!(exchange.answer.starts_with("**Conclusion**: Done"));
    assert_eq!(exchange.cited, vec![1]);
    // The failed branch never reached the model.
    assert!(script
        .of(Step::Reflect)
        .iter()
        .all(|r| !input_of(r).contains("down delta")));
}

#[tokio::test]
async fn unreadable_replies_are_repaired_retried_or_replaced() {
    let script = Script::new(|step, request, n| {
        match step {
        // Fenced, emphasised, trailing commas: the repair pass reads it.
        Step::Plan if n == 0 => "Here is the plan:\n```json\n{\"sub_questions\": [{\"question\": \"**Rust** async runtime?\", \"query\": \"rust async runtime\", \"language\": \"en\",},],}\n```".to_string(),
        Step::Plan => "{\"sub_questions\": []}".to_string(),
        // Prose first; JSON after being shown the error.
        Step::Reflect if request.messages.len() == 2 => "The results look relevant to me.".to_string(),
        Step::Reflect => "<think>fine</think>{\"relevant\": [1, 2]}".to_string(),
        // Never readable: the evidence falls back to the best sentences of the sources.
        Step::Evidence => "I cannot produce JSON today.".to_string(),
        Step::Verify => "{\"充分性\": \"充分\", \"推理链\": \"ok\"}".to_string(),
        Step::Summary => "{\"answer\": \"Tokio\", \"confidence\": \"高\", \"reasoning\": \"[1]\"}".to_string(),
        Step::Format => "Tokio [1].".to_string(),
    }
    }).model();
    let (state, session) = harness(script.clone(), &[]);
    let (exchange, _) = run_research(
        &state,
        &session,
        "Which Rust async runtime do servers use?",
        CancellationToken::new(),
    )
    .await;
    let plan = exchange.research.unwrap();
    let sub = &plan.loops[0].sub_questions[0];
    assert_eq!(sub.question, "Rust async runtime?", "emphasis stripped");
    assert_eq!(sub.status, BranchStatus::Done);

    let reflects = script.of(Step::Reflect);
    assert_eq!(reflects.len(), 2, "one retry");
    let retry = &reflects[1].messages;
    assert!(
        matches!(&retry[2], Message::Assistant { content, .. } if content.contains("look relevant"))
    );
    assert!(
        matches!(&retry[3], Message::User(text) if text.contains("could not be parsed") && text.contains("no JSON object")),
        "{retry:?}"
    );
    assert_eq!(
        script.of(Step::Evidence).len(),
        2,
        "one retry, then the fallback"
    );
    let evidence = sub.evidence.as_ref().expect("fallback evidence");
    assert!(!evidence.statement.is_empty());
    assert!(
        !evidence.numbers.is_empty(),
        "the fallback cites what it quotes"
    );
    assert!(
        evidence.statement.to_lowercase().contains("tokio"),
        "{}",
        evidence.statement
    );
    assert_eq!(plan.stop, Some(StopReason::Sufficient));
    assert_eq!(plan.conclusion.unwrap().confidence, Reliability::High);
}

#[tokio::test]
async fn at_most_four_sub_questions_per_loop() {
    let names = ["one", "two", "four", "six", "seven", "eight"];
    let script = one_loop(
        names
            .iter()
            .map(|name| sub_question(&format!("What is three {name}?"), &format!("three {name}")))
            .collect(),
    )
    .model();
    let (state, session) = harness(script.clone(), &[]);
    let (exchange, _) =
        run_research(&state, &session, "Name them all.", CancellationToken::new()).await;
    let plan = exchange.research.unwrap();
    let queries: Vec<&str> = plan.loops[0]
        .sub_questions
        .iter()
        .map(|s| s.query.as_str())
        .collect();
    assert_eq!(
        queries,
        vec!["three one", "three two", "three four", "three six"]
    );
    assert_eq!(
        script.of(Step::Reflect).len(),
        4,
        "the dropped ones never ran"
    );
    assert_eq!(session.with_registry(|r| r.len()), 12);
}

#[tokio::test]
async fn the_loop_cap_ends_an_insufficient_research() {
    let script = Script::new(|step, _request, n| {
        let value = match step {
            Step::Plan => {
                json!({ "sub_questions": [sub_question(&format!("Round {n}: what is three r{n}?"), &format!("three r{n}"))] })
            }
            Step::Reflect => json!({}),
            Step::Evidence => {
                json!({ "statement": format!("Partial finding {n}."), "reliability": "low", "sources": [1] })
            }
            Step::Verify => json!({ "sufficient": false, "chain": "still a gap" }),
            Step::Summary => json!({ "answer": "Unsure", "confidence": "low", "reasoning": "[1]" }),
            Step::Format => return "Best guess [1].".to_string(),
        };
        value.to_string()
    }).model();
    let (state, session) = harness(script.clone(), &[("CITED_RESEARCH_MAX_LOOPS", "3")]);
    let (exchange, _) = run_research(
        &state,
        &session,
        "A question never settled?",
        CancellationToken::new(),
    )
    .await;
    let plan = exchange.research.unwrap();
    assert_eq!(plan.max_loops, 3);
    assert_eq!(plan.loops.len(), 3);
    assert_eq!(plan.stop, Some(StopReason::LoopCap));
    assert_eq!(script.of(Step::Plan).len(), 3);
    assert_eq!(script.of(Step::Verify).len(), 3);
    assert!(exchange.answer.contains("(confidence: low)"));
    // A guess, said as one (the verifier named nothing missing).
    let t = Lang::En.texts();
    let said: Vec<&str> = exchange.notices.iter().map(|n| n.text.as_str()).collect();
    assert!(said.contains(&t.research_best_guess), "{said:?}");
}

#[tokio::test]
async fn exhausted_loops_give_a_low_confidence_guess_and_say_what_is_missing() {
    let script = Script::new(|step, _request, n| {
        let value = match step {
            Step::Plan => {
                json!({ "sub_questions": [sub_question(&format!("Round {n}: what is five r{n}?"), &format!("five r{n}"))] })
            }
            Step::Reflect => json!({ "relevant": [1] }),
            Step::Evidence => {
                json!({ "statement": format!("Alpha hint {n}."), "reliability": "medium", "sources": [1] })
            }
            Step::Verify => json!({
                "sufficient": false,
                "chain": "alpha [1] → gap",
                "missing": "the year Alpha Corp was founded"
            }),
            // The summary is sure of itself; the loops were not.
            Step::Summary => json!({ "answer": "1901", "confidence": "high", "reasoning": "[1]" }),
            Step::Format => return "Probably 1901 [1].".to_string(),
        };
        value.to_string()
    }).model();
    let (exchange, _) = research_with(
        &script,
        &[("CITED_RESEARCH_MAX_LOOPS", "2")],
        "When was Alpha Corp founded?",
    )
    .await;
    let plan = exchange.research.unwrap();
    assert_eq!(plan.loops.len(), 2);
    assert_eq!(plan.stop, Some(StopReason::LoopCap));
    let conclusion = plan.conclusion.unwrap();
    assert_eq!(
        (conclusion.answer.as_str(), conclusion.confidence),
        ("1901", Reliability::Low),
        "a guess is never high"
    );
    assert!(
        exchange
            .answer
            .starts_with("**Conclusion**: 1901 (confidence: low)"),
        "{}",
        exchange.answer
    );
    let t = Lang::En.texts();
    let expected = format!(
        "{}{}",
        t.research_best_guess,
        t.research_missing
            .replace("{missing}", "the year Alpha Corp was founded")
    );
    assert!(
        exchange.notices.iter().any(|n| n.text == expected),
        "{:?}",
        exchange.notices
    );
    assert_eq!(exchange.cited, vec![1]);
}

/// On paused time (the eleven seconds pass at once): every search finds one page, in the
/// process, and no page is read in full, so nothing waits on a socket.
#[tokio::test(start_paused = true)]
async fn a_deadline_before_the_chain_is_judged_gives_a_low_confidence_guess() {
    let mut script = Script::new(|step, _request, _n| {
        let value = match step {
            Step::Plan => {
                json!({ "sub_questions": [sub_question("What is five alpha?", "five alpha")] })
            }
            Step::Reflect => json!({ "relevant": [1] }),
            Step::Evidence => {
                json!({ "statement": "Alpha hint.", "reliability": "medium", "sources": [1] })
            }
            Step::Verify => json!({ "sufficient": true, "chain": "alpha [1]" }),
            Step::Summary => json!({ "answer": "1901", "confidence": "high", "reasoning": "[1]" }),
            Step::Format => return "Probably 1901 [1].".to_string(),
        };
        value.to_string()
    });
    // The verdict (and the summary after it) comes after the deadline.
    script.slow = Some(("Alpha hint", Duration::from_secs(11)));
    let script = script.model();
    let (state, session) = super::App::new()
        .vars(&[
            ("CITED_SOURCES", "web"),
            ("CITED_RESEARCH_DEADLINE_SECS", "10"),
            ("CITED_RESEARCH_DEEP_READS", "0"),
            ("CITED_RESEARCH_ENCYCLOPEDIA_ENGINES", "none"),
        ])
        .search(Arc::new(super::OnePage(crate::model::Source {
            url: "https://alpha.example/history".into(),
            title: "Alpha Corp history".into(),
            domain: "alpha.example".into(),
            snippet: "Alpha Corp was founded in 1901 in Alphaville.".into(),
            ..crate::model::Source::default()
        })))
        .model(script)
        .with_session();
    let started = tokio::time::Instant::now();
    let (exchange, _) = run_research(
        &state,
        &session,
        "When was Alpha Corp founded?",
        CancellationToken::new(),
    )
    .await;
    // The verdict, the summary and the format each wait their 11 s: 33 s at least.
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(33) && took < Duration::from_secs(40),
        "{took:?}"
    );
    let plan = exchange.research.unwrap();
    assert_eq!(plan.stop, Some(StopReason::Deadline), "{plan:#?}");
    // Never judged sufficient: the conclusion is a guess, said as one (seed 004).
    assert_eq!(
        plan.conclusion.map(|c| c.confidence),
        Some(Reliability::Low)
    );
    let guess = Lang::En.texts().research_best_guess;
    assert!(
        exchange.notices.iter().any(|n| n.text.starts_with(guess)),
        "{:?}",
        exchange.notices
    );
    assert_eq!(exchange.cited, vec![1]);
}

#[tokio::test]
async fn a_round_that_falls_short_plans_again_for_its_gaps() {
    let script = Script::new(|step, request, n| {
        let input = input_of(request);
        let value = match step {
            // Round 1 finds nothing; round 2 finds pages but no sourced evidence; round 3
            // settles it.
            Step::Plan if n == 0 => {
                json!({ "sub_questions": [sub_question("What is zzz one?", "zzz one")] })
            }
            Step::Plan if n == 1 => {
                json!({ "sub_questions": [sub_question("What is three beta?", "three beta")] })
            }
            Step::Plan => {
                json!({ "sub_questions": [sub_question("What is five alpha?", "five alpha")] })
            }
            Step::Reflect => json!({ "relevant": [1] }),
            Step::Evidence if input.contains("three beta") => {
                json!({ "statement": "Nothing definite.", "reliability": "low", "sources": [] })
            }
            Step::Evidence => {
                json!({ "statement": "Alpha Corp was founded in 1901.", "reliability": "high", "sources": [1] })
            }
            Step::Verify => json!({ "sufficient": true, "chain": "alpha [1]" }),
            Step::Summary => json!({ "answer": "1901", "confidence": "high", "reasoning": "[1]" }),
            Step::Format => return "Founded in 1901 [1].".to_string(),
        };
        value.to_string()
    }).model();
    let (exchange, _) = research_with(
        &script,
        &[("CITED_RESEARCH_MAX_LOOPS", "4")],
        "When was Alpha Corp founded?",
    )
    .await;
    let plan = exchange.research.unwrap();
    let rounds: Vec<(BranchStatus, usize)> = plan
        .loops
        .iter()
        .map(|l| {
            let sub = &l.sub_questions[0];
            (
                sub.status,
                sub.evidence.as_ref().map_or(0, |e| e.numbers.len()),
            )
        })
        .collect();
    assert_eq!(
        rounds,
        vec![
            (BranchStatus::Failed, 0),
            (BranchStatus::Done, 0),
            (BranchStatus::Done, 1)
        ]
    );
    assert_eq!(script.of(Step::Plan).len(), 3, "planned again twice");
    assert_eq!(
        script.of(Step::Verify).len(),
        1,
        "only a sourced round is judged"
    );
    assert_eq!(plan.stop, Some(StopReason::Sufficient));
    let conclusion = plan.conclusion.unwrap();
    assert_eq!(conclusion.confidence, Reliability::High);
    assert!(exchange
        .notices
        .iter()
        .all(|n| n.text != Lang::En.texts().research_best_guess));
}

#[tokio::test]
async fn a_reply_that_echoes_the_prompt_examples_is_asked_again() {
    let script = Script::new(|step, request, n| {
        let retried = request.messages.len() > 2;
        let value = match step {
            Step::Plan if n == 0 => {
                json!({ "sub_questions": [sub_question("self-contained sub-question", "search query")] })
            }
            Step::Plan if retried => {
                json!({ "sub_questions": [sub_question("What is five alpha?", "five alpha")] })
            }
            Step::Plan => json!({ "sub_questions": [] }),
            Step::Reflect => json!({ "relevant": [1] }),
            Step::Evidence => {
                json!({ "statement": "Alpha Corp was founded in 1901.", "reliability": "high", "sources": [1] })
            }
            Step::Verify => json!({ "sufficient": true, "chain": "alpha [1]" }),
            Step::Summary if !retried => {
                json!({ "answer": "exact answer", "confidence": "medium", "reasoning": "derivation [3]" })
            }
            Step::Summary => json!({ "answer": "1901", "confidence": "high", "reasoning": "[1]" }),
            Step::Format => return "Founded in 1901 [1].".to_string(),
        };
        value.to_string()
    }).model();
    let (exchange, _) = research_with(&script, &[], "When was Alpha Corp founded?").await;
    let plan = exchange.research.unwrap();
    assert_eq!(plan.loops[0].sub_questions[0].query, "five alpha");
    let summaries = script.of(Step::Summary);
    assert_eq!(summaries.len(), 2, "asked once more");
    assert!(
        matches!(summaries[1].messages.last(), Some(Message::User(text))
            if text.contains("answer is \"exact answer\", the example from the instructions")),
        "{:?}",
        summaries[1].messages.last()
    );
    assert_eq!(plan.conclusion.unwrap().answer, "1901");
    assert!(
        exchange.answer.starts_with("**Conclusion**: 1901"),
        "{}",
        exchange.answer
    );
}

#[tokio::test]
async fn no_evidence_is_said_plainly_without_asking_the_model_to_guess() {
    // The fixture engines find nothing for these queries.
    let script = one_loop(vec![
        sub_question("What is zzz one?", "zzz one"),
        sub_question("What is zzz two?", "zzz two"),
    ])
    .model();
    let (state, session) = harness(script.clone(), &[]);
    let (exchange, _) =
        run_research(&state, &session, "What is zzz?", CancellationToken::new()).await;
    let plan = exchange.research.unwrap();
    assert!(plan.loops[0]
        .sub_questions
        .iter()
        .all(|s| s.status == BranchStatus::Failed));
    // Planned again while loops remained, with nothing new to ask.
    let loops = state.config.research.max_loops;
    assert_eq!(script.of(Step::Plan).len(), loops);
    assert_eq!(plan.loops.len(), 1);
    assert_eq!(plan.stop, Some(StopReason::NothingToPlan));
    assert_eq!(exchange.answer, crate::ssr::messages::no_evidence(Lang::En));
    assert!(script.of(Step::Summary).is_empty());
    assert!(script.of(Step::Format).is_empty());
    assert!(exchange.cited.is_empty());
}

#[tokio::test]
async fn stop_ends_the_branches_and_keeps_the_exchange() {
    let mut script = one_loop(vec![sub_question("What is five alpha?", "five alpha")]);
    script.slow = Some(("five alpha", Duration::from_secs(30)));
    let script = script.model();
    let (state, session) = harness(script.clone(), &[]);
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        stopper.cancel();
    });
    let started = Instant::now();
    let (exchange, events) = run_research(&state, &session, "What is alpha?", cancel).await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the slow branch was abandoned"
    );
    assert!(exchange.stopped);
    let plan = exchange.research.unwrap();
    assert_eq!(plan.stop, Some(StopReason::Stopped));
    // The browser is told too: the last plan it gets says stopped, then the answer ends.
    let last_plan = events.iter().rev().find_map(|e| match e {
        AnswerEvent::Plan { plan } => Some(plan),
        _ => None,
    });
    assert_eq!(last_plan.and_then(|p| p.stop), Some(StopReason::Stopped));
    assert!(matches!(
        super::done_event(&events),
        Some(AnswerEvent::Done { stopped: true, .. })
    ));
    assert!(script.of(Step::Summary).is_empty());
    assert_eq!(
        session.conversation().len(),
        1,
        "the stopped exchange is kept"
    );
}

#[tokio::test]
async fn offline_research_answers_from_the_sources() {
    let (state, session) = harness(Arc::new(Extractive), &[]);
    let (exchange, _) = run_research(
        &state,
        &session,
        "What is Tokio for Rust, and which Rust async runtime do most servers use?",
        CancellationToken::new(),
    )
    .await;
    assert!(exchange.offline);
    let plan = exchange.research.unwrap();
    assert_eq!(plan.loops[0].sub_questions.len(), 2, "{plan:#?}");
    assert!(plan.sub_questions().all(|s| s.status == BranchStatus::Done));
    assert_eq!(plan.stop, Some(StopReason::Sufficient));
    let conclusion = plan.conclusion.expect("a conclusion");
    assert!(!conclusion.answer.is_empty());
    assert_eq!(
        conclusion.confidence,
        Reliability::Low,
        "offline answers are never sure"
    );
    assert!(!exchange.cited.is_empty(), "{}", exchange.answer);
    let registry = session.with_registry(|r| r.clone());
    assert!(exchange.cited.iter().all(|n| registry.get(*n).is_some()));
}

#[tokio::test]
async fn numbers_inside_an_evidence_statement_are_checked_like_its_list() {
    // A first answer takes numbers 1–3.
    let (mut state, session) = harness(
        one_loop(vec![sub_question("What is three alpha?", "three alpha")]).model(),
        &[],
    );
    let _ = run_research(&state, &session, "What is alpha?", CancellationToken::new()).await;
    state.llm = Script::new(|step, _request, n| {
        let value = match step {
            Step::Plan if n == 0 => {
                json!({ "sub_questions": [sub_question("What is three beta?", "three beta")] })
            }
            Step::Plan => json!({ "sub_questions": [] }),
            Step::Reflect => json!({}),
            // The branch's own [2], written in the text; [40] was never shown.
            Step::Evidence => {
                json!({ "statement": "Beta holds [2] and maybe [40].", "reliability": "high", "sources": [] })
            }
            Step::Verify => json!({ "sufficient": "yes, enough" }),
            Step::Summary => json!({ "answer": "Beta", "confidence": "high", "reasoning": "[5]" }),
            Step::Format => return "Beta [5].".to_string(),
        };
        value.to_string()
    }).model();
    let (exchange, _) =
        run_research(&state, &session, "What is beta?", CancellationToken::new()).await;
    let plan = exchange.research.unwrap();
    let evidence = plan.loops[0].sub_questions[0].evidence.clone().unwrap();
    assert_eq!(
        evidence.numbers,
        vec![5],
        "local [2] of this branch is global 5; [40] is dropped"
    );
    assert_eq!(evidence.statement, "Beta holds and maybe .");
    assert_eq!(evidence.reliability, Reliability::High);
    assert_eq!(
        plan.stop,
        Some(StopReason::Sufficient),
        "\"yes, enough\" is a yes"
    );
    assert_eq!(exchange.cited, vec![5]);
}

/// Every search an answer made, passed on to SearXNG.
struct Seen {
    inner: Arc<dyn SearchProvider>,
    searches: Mutex<Vec<(String, SearchOptions)>>,
}

#[async_trait]
impl SearchProvider for Seen {
    async fn search(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<SearchResults, SearchError> {
        self.searches
            .lock()
            .unwrap()
            .push((query.to_string(), options.clone()));
        self.inner.search(query, options).await
    }
}

#[tokio::test]
async fn branch_searches_keep_the_focus_period_and_site() {
    use crate::model::{Focus, Period};
    use crate::ssr::search::TimeRange;
    let script = one_loop(vec![
        sub_question("What is five alpha?", "five alpha"),
        sub_question("What is three beta?", "three beta"),
    ])
    .model();
    let (mut state, session) = harness(script, &[]);
    let seen = Arc::new(Seen {
        inner: Arc::clone(&state.search),
        searches: Mutex::new(Vec::new()),
    });
    state.search = seen.clone();
    session.update_settings(|settings| {
        settings.focus = Focus::Academic;
        settings.period = Some(Period::Month);
    });
    let input = TurnInput {
        site: Some("example.org".into()),
        ..TurnInput::standalone("What are alpha and beta?".into(), Mode::Research)
    };
    let (exchange, _) = run_input(&state, &session, input, CancellationToken::new()).await;
    assert_eq!(exchange.narrowing.focus, Focus::Academic);
    let searches = seen.searches.lock().unwrap().clone();
    let branches: Vec<&(String, SearchOptions)> = searches
        .iter()
        .filter(|(_, options)| options.engines != ["local wiki"])
        .collect();
    assert_eq!(branches.len(), 2, "{searches:#?}");
    for (query, options) in branches {
        assert!(query.ends_with(" site:example.org"), "{query}");
        // The focus replaces the research profile's engines.
        assert_eq!(options.categories, ["science"], "{options:?}");
        assert!(options.engines.is_empty(), "{options:?}");
        assert_eq!(options.time_range, Some(TimeRange::Month));
    }
}

#[tokio::test]
async fn a_branch_reads_as_many_results_and_as_much_of_each_as_configured() {
    let script = one_loop(vec![sub_question("What is five alpha?", "five alpha")]).model();
    let (mut state, session) = harness(
        script.clone(),
        &[
            ("CITED_RESEARCH_RESULTS", "2"),
            ("CITED_RESEARCH_SNIPPET_CHARS", "100"),
        ],
    );
    let seen = Arc::new(Seen {
        inner: Arc::clone(&state.search),
        searches: Mutex::new(Vec::new()),
    });
    state.search = seen.clone();
    let (exchange, _) =
        run_research(&state, &session, "What is alpha?", CancellationToken::new()).await;
    let searches = seen.searches.lock().unwrap().clone();
    let (_, options) = searches
        .iter()
        .find(|(query, _)| query == "five alpha")
        .unwrap_or_else(|| panic!("{searches:#?}"));
    assert_eq!(
        (options.max_results, options.snippet_chars),
        (Some(2), Some(100))
    );
    // The branch's model reads two numbered results, each snippet within 100 characters.
    let reflect = input_of(&script.of(Step::Reflect)[0]);
    let numbered: Vec<&str> = reflect
        .lines()
        .filter(|line| line.starts_with('[') && line.contains("] ") && line.contains(" - "))
        .collect();
    assert_eq!(numbered.len(), 2, "{reflect}");
    let plan = exchange.research.unwrap();
    assert_eq!(plan.loops[0].sub_questions[0].status, BranchStatus::Done);
    assert!(exchange
        .sources
        .iter()
        .all(|source| source.snippet.chars().count() <= 101));
}
