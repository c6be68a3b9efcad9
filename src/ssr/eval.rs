//! `cited eval`: a question set through one mode, scored.
//!
//! The set is JSON Lines. Each line has a question (`question`, or SimpleQA's `problem`, or
//! BrowseComp-ZH's `Question`/`query`), the expected answer (`answer` or `Answer`) and
//! optionally an `id` (else its line number).
//!
//! For each question, answered in a session of its own under a per-question deadline:
//! - **correct**: the normalised expected answer is contained in the normalised answer
//!   (lowercase, full-width forms folded, punctuation and spaces dropped), so "巴黎" matches
//!   "答案是巴黎。" and "CITED_SEARXNG_URL" matches "`CITED_SEARXNG_URL`";
//! - **citation validity**: the numbers in citation markers that have a source, over all;
//! - **citation precision**: the citations their source supports, by `ssr::align` (the
//!   same check the answer's cards show), over the citations checked;
//! - **coverage**, **latency**, **tokens** and **cost**;
//! - with `--judge`, **model-graded accuracy**: the configured model is asked whether the
//!   answer states the expected one (any wording); its yes or no is counted, anything else
//!   is left ungraded.
//!
//! Each result is appended to `results.jsonl` in the output folder as it comes; a run
//! started again with the same folder skips the questions already there (resumption).
//! `report.md` and `report.json` hold the totals.

use std::collections::HashSet;
use std::path::Path;
pub mod citations;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use crate::citation::{render, SourceMap};
use crate::model::{Exchange, Mode, Support};
use crate::ssr::pipeline::TurnInput;
use crate::ssr::state::AppState;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub id: String,
    pub question: String,
    pub answer: String,
}

/// Reads a question set; a line that is not one is an error naming the line.
pub fn parse_set(text: &str) -> Result<Vec<Question>, String> {
    let field = |value: &serde_json::Value, names: &[&str]| {
        names.iter().find_map(|name| match &value[*name] {
            serde_json::Value::String(text) => Some(text.clone()),
            serde_json::Value::Number(number) => Some(number.to_string()),
            _ => None,
        })
    };
    let mut set = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(line)
            .map_err(|error| format!("line {}: not JSON: {error}", index + 1))?;
        let question =
            field(&value, &["question", "problem", "Question", "query"]).ok_or_else(|| {
                format!(
                    "line {}: no question (question, problem, Question or query)",
                    index + 1
                )
            })?;
        let answer = field(&value, &["answer", "Answer"])
            .ok_or_else(|| format!("line {}: no answer (answer or Answer)", index + 1))?;
        let id = field(&value, &["id", "ID"]).unwrap_or_else(|| (index + 1).to_string());
        set.push(Question {
            id,
            question,
            answer,
        });
    }
    Ok(set)
}

/// Lowercase, full-width ASCII folded to half-width, only letters and digits kept.
pub fn normalise(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            c => c,
        })
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_alphanumeric())
        .collect()
}

/// Whether `answer` states `expected` (see the module's documentation).
pub fn is_correct(expected: &str, answer: &str) -> bool {
    let expected = normalise(expected);
    !expected.is_empty() && normalise(answer).contains(&expected)
}

/// One question's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub id: String,
    pub question: String,
    pub expected: String,
    pub answer: String,
    pub correct: bool,
    /// The answer did not finish before the deadline.
    pub timed_out: bool,
    pub millis: u64,
    /// Numbers in the answer's citation markers, and those of them with no source.
    pub markers: u32,
    pub invalid_markers: u32,
    /// Citations checked against their source, and those it supports.
    pub checked: u32,
    pub supported: u32,
    /// Citations the checker could not judge (apart from `checked`).
    #[serde(default)]
    pub not_checked: u32,
    pub coverage_percent: Option<u32>,
    pub tokens: u64,
    pub cost_micros: Option<u64>,
    /// The model's verdict (`--judge`): `None` when not asked or not clear.
    #[serde(default)]
    pub judged: Option<bool>,
}

/// The judge's instructions.
const JUDGE_SYSTEM: &str =
    "You grade answers to questions. Reply with exactly one word: yes or no.";

/// Asks `llm` whether `answer` states `expected`; `None` when its reply is neither yes nor
/// no (or it fails).
pub async fn judge(
    llm: &dyn crate::ssr::llm::ChatModel,
    limits: &crate::ssr::config::ModelLimits,
    question: &str,
    expected: &str,
    answer: &str,
) -> Option<bool> {
    use crate::ssr::llm::{ChatEvent, ChatRequest, Message};
    let user = format!(
        "Question: {question}\nExpected answer: {expected}\nAnswer to grade: {answer}\n\n\
         Does the answer to grade state the expected answer (the same fact, in any wording or language)? yes or no"
    );
    let request = ChatRequest::bounded(
        vec![
            Message::System(JUDGE_SYSTEM.to_string()),
            Message::User(user),
        ],
        crate::ssr::config::CallKind::Verify,
        limits,
    );
    let read = async {
        let mut stream = llm.stream(request).await.ok()?;
        let mut text = String::new();
        while let Some(event) = stream.next().await {
            match event.ok()? {
                ChatEvent::Text(piece) => text.push_str(&piece),
                ChatEvent::Done { .. } => break,
                _ => {}
            }
        }
        Some(text)
    };
    let text = tokio::time::timeout(limits.call_deadline, read)
        .await
        .ok()??;
    verdict(&text)
}

/// A judge's reply as yes or no: its first word, thinking and punctuation left out.
pub fn verdict(reply: &str) -> Option<bool> {
    let cleaned = crate::ssr::tolerant::clean(reply).to_lowercase();
    let first: String = cleaned
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect();
    match first.as_str() {
        "yes" | "correct" | "true" | "是" | "是的" | "对" | "正确" => Some(true),
        "no" | "incorrect" | "false" | "否" | "不" | "不是" | "错误" => Some(false),
        _ => None,
    }
}

/// Answers one question in a session of its own.
pub async fn answer_one(
    state: &AppState,
    question: &Question,
    mode: Mode,
    deadline: Duration,
) -> Outcome {
    // Not kept: an evaluation fills no history.
    let session = Arc::new(
        crate::ssr::session::Session::new(crate::ssr::session::SessionId::random(), Instant::now())
            .unkept(),
    );
    let input = TurnInput::standalone(question.question.clone(), mode);
    let started = Instant::now();
    // No limits for an evaluation; a fresh session is never busy.
    let running = crate::ssr::answer::start(
        state,
        Arc::clone(&session),
        input,
        None,
        crate::ssr::answer::Delivery::Direct,
    )
    .await;
    let (exchange, timed_out) = match running {
        Ok(running) => {
            let cancel = running.cancel.clone();
            let mut events = running.events;
            let drain = tokio::spawn(async move { while events.next().await.is_some() {} });
            let run = async { running.done.await.unwrap_or_default() };
            let stopped = std::sync::atomic::AtomicBool::new(false);
            let stopper = async {
                tokio::time::sleep(deadline).await;
                stopped.store(true, std::sync::atomic::Ordering::SeqCst);
                cancel.cancel();
                std::future::pending::<()>().await;
            };
            let exchange = tokio::select! {
                exchange = run => exchange,
                () = stopper => unreachable!("the stopper never ends"),
            };
            let _ = drain.await;
            (exchange, stopped.load(std::sync::atomic::Ordering::SeqCst))
        }
        Err(refusal) => {
            tracing::warn!(?refusal, "the question could not be asked");
            (Exchange::default(), false)
        }
    };
    let millis = started.elapsed().as_millis() as u64;
    let sources = SourceMap::new(exchange.sources.iter().cloned());
    let rendered = render(&exchange.answer, &sources);
    // Every number of every marker is found or a problem (a marker of unknown numbers
    // stays text, so only its problems count it).
    let mut found = 0u32;
    rendered.for_each_cite(|cite| {
        if matches!(cite, crate::citation::Cite::Found { .. }) {
            found += 1;
        }
    });
    let invalid = rendered.problems.len() as u32;
    let markers = found + invalid;
    let share = crate::model::SupportShare::of(&exchange.alignments);
    Outcome {
        id: question.id.clone(),
        question: question.question.clone(),
        expected: question.answer.clone(),
        correct: is_correct(&question.answer, &exchange.answer),
        answer: exchange.answer.clone(),
        timed_out,
        millis,
        markers,
        invalid_markers: invalid,
        checked: share.checked,
        not_checked: share.not_checked,
        supported: exchange
            .alignments
            .iter()
            .filter(|a| a.support == Support::Supported)
            .count() as u32,
        coverage_percent: exchange.coverage.map(|c| c.percent()),
        tokens: exchange.usage.as_ref().map_or(0, |u| u.total()),
        cost_micros: exchange.usage.as_ref().and_then(|u| u.cost_micros),
        judged: None,
    }
}

/// The totals of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub mode: Mode,
    pub questions: usize,
    pub correct: usize,
    pub timed_out: usize,
    /// Percent, one decimal (as tenths: 537 is 53.7 %).
    pub accuracy_tenths: u64,
    /// `None` when there was nothing to count (no markers, no checks).
    pub citation_validity_tenths: Option<u64>,
    pub citation_precision_tenths: Option<u64>,
    /// Citations the checker could not judge, of all citations checked or not.
    #[serde(default)]
    pub not_checked_tenths: Option<u64>,
    pub mean_coverage_percent: Option<u64>,
    pub p50_millis: u64,
    pub p90_millis: u64,
    pub max_millis: u64,
    pub tokens: u64,
    pub cost_micros: Option<u64>,
    /// Questions the judge graded, and those it graded correct (`--judge`).
    #[serde(default)]
    pub judged: usize,
    #[serde(default)]
    pub judged_correct: usize,
    #[serde(default)]
    pub judged_accuracy_tenths: Option<u64>,
}

/// `part / whole` in tenths of a percent, rounded; `None` of nothing.
fn tenths(part: u64, whole: u64) -> Option<u64> {
    (part * 1000 + whole / 2).checked_div(whole)
}

fn percentile(sorted: &[u64], p: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (sorted.len() * p).div_ceil(100).max(1);
    sorted[rank.min(sorted.len()) - 1]
}

pub fn report(mode: Mode, outcomes: &[Outcome]) -> Report {
    let sum = |f: &dyn Fn(&Outcome) -> u64| outcomes.iter().map(f).sum::<u64>();
    let markers = sum(&|o| u64::from(o.markers));
    let invalid = sum(&|o| u64::from(o.invalid_markers));
    let mut millis: Vec<u64> = outcomes.iter().map(|o| o.millis).collect();
    millis.sort_unstable();
    let coverages: Vec<u64> = outcomes
        .iter()
        .filter_map(|o| o.coverage_percent.map(u64::from))
        .collect();
    let costs: Vec<u64> = outcomes.iter().filter_map(|o| o.cost_micros).collect();
    Report {
        mode,
        questions: outcomes.len(),
        correct: outcomes.iter().filter(|o| o.correct).count(),
        timed_out: outcomes.iter().filter(|o| o.timed_out).count(),
        accuracy_tenths: tenths(
            outcomes.iter().filter(|o| o.correct).count() as u64,
            outcomes.len() as u64,
        )
        .unwrap_or(0),
        citation_validity_tenths: tenths(markers.saturating_sub(invalid), markers),
        citation_precision_tenths: tenths(
            sum(&|o| u64::from(o.supported)),
            sum(&|o| u64::from(o.checked)),
        ),
        not_checked_tenths: tenths(
            sum(&|o| u64::from(o.not_checked)),
            sum(&|o| u64::from(o.checked + o.not_checked)),
        ),
        mean_coverage_percent: (!coverages.is_empty())
            .then(|| coverages.iter().sum::<u64>() / coverages.len() as u64),
        p50_millis: percentile(&millis, 50),
        p90_millis: percentile(&millis, 90),
        max_millis: millis.last().copied().unwrap_or(0),
        tokens: sum(&|o| o.tokens),
        cost_micros: (!costs.is_empty()).then(|| costs.iter().sum()),
        judged: outcomes.iter().filter(|o| o.judged.is_some()).count(),
        judged_correct: outcomes.iter().filter(|o| o.judged == Some(true)).count(),
        judged_accuracy_tenths: tenths(
            outcomes.iter().filter(|o| o.judged == Some(true)).count() as u64,
            outcomes.iter().filter(|o| o.judged.is_some()).count() as u64,
        ),
    }
}

fn percent(tenths: Option<u64>) -> String {
    match tenths {
        Some(tenths) => format!("{}.{} %", tenths / 10, tenths % 10),
        None => "–".to_string(),
    }
}

/// The report as a Markdown table.
pub fn markdown(report: &Report) -> String {
    let seconds = |millis: u64| {
        if millis < 1000 {
            format!("{millis} ms")
        } else {
            format!("{}.{} s", millis / 1000, (millis % 1000) / 100)
        }
    };
    let rows = [
        ("mode", report.mode.as_str().to_string()),
        ("questions", report.questions.to_string()),
        (
            "accuracy (normalised containment)",
            format!(
                "{} ({}/{})",
                percent(Some(report.accuracy_tenths)),
                report.correct,
                report.questions
            ),
        ),
        (
            "accuracy (model-graded)",
            match report.judged_accuracy_tenths {
                Some(_) => format!(
                    "{} ({}/{} graded)",
                    percent(report.judged_accuracy_tenths),
                    report.judged_correct,
                    report.judged
                ),
                None => "– (not asked: --judge)".to_string(),
            },
        ),
        (
            "citation validity (cited numbers with a source)",
            percent(report.citation_validity_tenths),
        ),
        (
            "citation precision (supported by their source)",
            percent(report.citation_precision_tenths),
        ),
        (
            "citations not checked (no verdict)",
            percent(report.not_checked_tenths),
        ),
        (
            "mean citation coverage",
            report
                .mean_coverage_percent
                .map_or("–".to_string(), |c| format!("{c} %")),
        ),
        (
            "latency p50 / p90 / max",
            format!(
                "{} / {} / {}",
                seconds(report.p50_millis),
                seconds(report.p90_millis),
                seconds(report.max_millis)
            ),
        ),
        ("timed out", report.timed_out.to_string()),
        ("model tokens", report.tokens.to_string()),
        (
            "cost",
            report.cost_micros.map_or("–".to_string(), |micros| {
                format!("${}.{:06}", micros / 1_000_000, micros % 1_000_000)
            }),
        ),
    ];
    let mut out = String::from("| | |\n|---|---|\n");
    for (name, value) in rows {
        out.push_str(&format!("| {name} | {value} |\n"));
    }
    out
}

/// Runs `set` through `mode`, `concurrency` at a time, resuming from `out/results.jsonl`;
/// with `judge`, the configured model grades each answer too.
pub async fn run(
    state: AppState,
    set: Vec<Question>,
    mode: Mode,
    concurrency: usize,
    deadline: Duration,
    out: &Path,
    judge: bool,
) -> Result<Report, String> {
    if judge && state.llm.kind() != crate::ssr::llm::ModelKind::Remote {
        return Err("--judge needs a model (CITED_LLM_BASE_URL)".to_string());
    }
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let results = out.join("results.jsonl");
    let mut outcomes: Vec<Outcome> = match std::fs::read_to_string(&results) {
        Ok(text) => text
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect(),
        Err(_) => Vec::new(),
    };
    let done: HashSet<String> = outcomes.iter().map(|o| o.id.clone()).collect();
    let todo: Vec<Question> = set.into_iter().filter(|q| !done.contains(&q.id)).collect();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&results)
        .map_err(|e| format!("cannot write {}: {e}", results.display()))?;
    let state = &state;
    let mut answers = futures_util::stream::iter(todo)
        .map(|question| async move {
            let mut outcome = answer_one(state, &question, mode, deadline).await;
            if judge {
                outcome.judged = self::judge(
                    state.llm.as_ref(),
                    &state.config.limits,
                    &outcome.question,
                    &outcome.expected,
                    &outcome.answer,
                )
                .await;
            }
            outcome
        })
        .buffer_unordered(concurrency.max(1));
    while let Some(outcome) = answers.next().await {
        use std::io::Write;
        let line = serde_json::to_string(&outcome).map_err(|e| e.to_string())?;
        writeln!(file, "{line}").map_err(|e| format!("cannot write {}: {e}", results.display()))?;
        tracing::info!(id = %outcome.id, correct = outcome.correct, millis = outcome.millis, "question answered");
        outcomes.push(outcome);
    }
    let report = report(mode, &outcomes);
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    std::fs::write(out.join("report.json"), json).map_err(|e| e.to_string())?;
    std::fs::write(out.join("report.md"), markdown(&report)).map_err(|e| e.to_string())?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_judges_reply_is_read_as_yes_or_no() {
        assert_eq!(verdict("Yes."), Some(true));
        assert_eq!(verdict("  **No**, it says Lyon."), Some(false));
        assert_eq!(verdict("<think>hmm, yes or no</think>yes"), Some(true));
        assert_eq!(verdict("是的。"), Some(true));
        assert_eq!(verdict("不是"), Some(false));
        assert_eq!(verdict("maybe"), None);
        assert_eq!(verdict(""), None);
    }

    #[test]
    fn answers_match_after_normalising() {
        assert!(is_correct("巴黎", "答案是巴黎。"));
        assert!(is_correct(
            "CITED_SEARXNG_URL",
            "Set `CITED_SEARXNG_URL` to your instance [1]."
        ));
        assert!(is_correct("Make Test", "run ｍａｋｅ　ｔｅｓｔ"));
        assert!(!is_correct("Lyon", "Paris"));
        assert!(!is_correct("", "anything"));
    }

    #[test]
    fn the_public_layouts_are_read() {
        let set = parse_set(
            "{\"id\":\"a\",\"question\":\"Q1\",\"answer\":\"A1\"}\n\n\
             {\"problem\":\"Q2\",\"answer\":\"A2\"}\n\
             {\"Question\":\"Q3\",\"Answer\":1889}\n",
        )
        .unwrap();
        assert_eq!(set[0].id, "a");
        assert_eq!((set[1].id.as_str(), set[1].question.as_str()), ("3", "Q2"));
        assert_eq!(set[2].answer, "1889");
        assert!(parse_set("{\"question\":\"no answer\"}")
            .unwrap_err()
            .contains("line 1"));
        assert!(parse_set("not json").unwrap_err().contains("line 1"));
    }

    #[test]
    fn percentiles_and_shares_are_counted() {
        assert_eq!(percentile(&[10, 20, 30, 40], 50), 20);
        assert_eq!(percentile(&[10, 20, 30, 40], 90), 40);
        assert_eq!(tenths(1, 3), Some(333));
        assert_eq!(tenths(0, 0), None);
    }
}
