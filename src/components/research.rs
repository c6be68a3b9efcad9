//! The live Research plan (PRODUCT.md "Research"): each loop's sub-questions with their
//! status, evidence and reliability, the verify verdict and the loop counter. Evidence
//! statements are model output: they go through the citation core like answers, so their
//! numbers are citation links and nothing becomes HTML.

use leptos::prelude::*;

use crate::components::answer::MarkedText;
use crate::components::use_texts;
use std::sync::Arc;

use crate::citation::CitationEntry;
use crate::model::{BranchStatus, ResearchLoop, ResearchPlan, SubQuestion};

fn status_class(status: BranchStatus) -> &'static str {
    match status {
        BranchStatus::Pending => "badge status-pending",
        BranchStatus::Running => "badge status-running",
        BranchStatus::Done => "badge status-done",
        BranchStatus::Failed => "badge status-failed",
        BranchStatus::Pruned => "badge status-pruned",
    }
}

/// Keys for the evidence citations: apart from every answer's keys.
fn evidence_key(exchange_key: u64, sub: u32) -> u64 {
    (1 << 20) + exchange_key * 256 + u64::from(sub)
}

/// Re-rendered only when the plan changes (a branch starts, ends or is judged), never by
/// the answer's tokens.
#[component]
pub fn ResearchView(
    exchange_key: u64,
    plan: RwSignal<Option<ResearchPlan>>,
    sources: RwSignal<Vec<Arc<CitationEntry>>>,
    #[prop(into)] done: Signal<bool>,
) -> impl IntoView {
    let t = use_texts();
    let counter = move || {
        plan.with(|plan| {
            let (current, max) = plan
                .as_ref()
                .map_or((1, 0), |p| (p.loops.len().max(1), p.max_loops));
            t.research_loop
                .replace("{n}", &current.to_string())
                .replace("{max}", &max.to_string())
        })
    };
    let max_loops = move || plan.with_untracked(|p| p.as_ref().map_or(0, |p| p.max_loops));
    let stop = move || {
        plan.with(|p| p.as_ref().and_then(|p| p.stop))
            .map(|stop| t.stop_reason(stop))
    };
    view! {
        <details class="research" open=move || !done.get()>
            <summary>
                {t.research_plan}" · "<span class="loop-counter">{counter}</span>
            </summary>
            {move || {
                plan.with(|plan| plan.as_ref().map(|p| p.loops.clone()).unwrap_or_default())
                    .into_iter()
                    .map(|research_loop| {
                        view! { <LoopView exchange_key max_loops=max_loops() sources research_loop/> }
                    })
                    .collect_view()
            }}
            {move || stop().map(|text| view! { <p class="research-stop">{text}</p> })}
        </details>
    }
}

#[component]
fn LoopView(
    exchange_key: u64,
    max_loops: u32,
    sources: RwSignal<Vec<Arc<CitationEntry>>>,
    research_loop: ResearchLoop,
) -> impl IntoView {
    let t = use_texts();
    let heading = t
        .research_loop
        .replace("{n}", &research_loop.number.to_string())
        .replace("{max}", &max_loops.to_string());
    let verdict = research_loop.verdict.clone().map(|verdict| {
        let judged = if verdict.sufficient {
            t.verdict_sufficient
        } else {
            t.verdict_insufficient
        };
        let prune = (!verdict.prune.is_empty()).then(|| {
            view! {
                <p class="prune">{t.pruned_directions}": "{verdict.prune.join("；")}</p>
            }
        });
        view! {
            <div class="verdict" class:sufficient=verdict.sufficient>
                <p><strong>{judged}</strong>{(!verdict.chain.is_empty()).then(|| format!(": {}", verdict.chain))}</p>
                {prune}
            </div>
        }
    });
    let label = heading.clone();
    view! {
        <section class="research-loop" aria-label=label>
            <h4>{heading}</h4>
            <ol class="sub-questions">
                {research_loop
                    .sub_questions
                    .into_iter()
                    .map(|sub| view! { <SubQuestionView exchange_key sources sub/> })
                    .collect_view()}
            </ol>
            {verdict}
        </section>
    }
}

#[component]
fn SubQuestionView(
    exchange_key: u64,
    sources: RwSignal<Vec<Arc<CitationEntry>>>,
    sub: SubQuestion,
) -> impl IntoView {
    let t = use_texts();
    let status = t.branch_status(sub.status);
    let evidence = sub.evidence.clone().map(|evidence| {
        let numbers: String = evidence.numbers.iter().map(|n| format!(" [{n}]")).collect();
        let text = format!("{}{numbers}", evidence.statement);
        let reliability = format!("{}: {}", t.reliability, t.level(evidence.reliability));
        view! {
            <div class="evidence">
                <span class="evidence-label">{t.evidence}": "</span>
                <MarkedText answer_key=evidence_key(exchange_key, sub.id) text sources/>
                <span class=format!("reliability level-{:?}", evidence.reliability).to_ascii_lowercase()>{reliability}</span>
            </div>
        }
    });
    let details = {
        let mut parts = Vec::new();
        if !sub.checked.is_empty() {
            parts.push(format!(
                "{}: {}",
                t.checked_in_encyclopedia,
                sub.checked.join(", ")
            ));
        }
        if !sub.read.is_empty() {
            parts.push(format!("{}: {}", t.read_in_full, sub.read.len()));
        }
        (!parts.is_empty()).then(|| view! { <p class="branch-details">{parts.join(" · ")}</p> })
    };
    view! {
        <li class="sub-question" data-status=format!("{:?}", sub.status).to_ascii_lowercase()>
            <p>
                <span class=status_class(sub.status)>{status}</span>" "
                <span class="sub-question-text">{sub.question.clone()}</span>
            </p>
            {(sub.query != sub.question).then(|| view! { <p class="query">{sub.query.clone()}</p> })}
            {evidence}
            {sub.error.clone().map(|error| view! { <p class="branch-error">{error}</p> })}
            {details}
        </li>
    }
}
