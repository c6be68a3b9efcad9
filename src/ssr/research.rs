//! The Research pipeline (seed 004, PRODUCT.md "Research"): plan → branches in parallel →
//! verify → (plan again for the gaps) → summary → format, in plain tokio.
//!
//! Loop control lives here, not in prompts: at most four sub-questions a loop, never one
//! already completed or pruned (compared as normalised text), at most
//! `CITED_RESEARCH_MAX_LOOPS` loops, an early stop when a loop adds no evidence or all its
//! branches fail, and no guessing when nothing was found. Branches run on a `JoinSet`
//! under a semaphore (`CITED_RESEARCH_MAX_BRANCHES`) and a per-branch timeout; a failed or
//! panicked branch is recorded as failed. Their material is registered in the session
//! registry in branch order, so numbering is deterministic however the branches finish.
//! The plan streams to the browser as `Plan` events; only the final explanation streams
//! token by token.

pub mod branch;
pub mod thinker;

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::citation::prompt::tool_output;
use crate::citation::SourceMap;
use crate::model::{
    AnswerEvent, BranchStatus, Conclusion, Evidence, Exchange, Level, Notice, Reliability,
    ResearchLoop, ResearchPlan, StopReason, SubQuestion,
};
use crate::ssr::agent::answer_sources;
use crate::ssr::chat::{
    begin, emit, failed, finish, halted, pick_search, stream_answer, ChatInput,
};
use crate::ssr::llm::{AnswerContext, ChatRequest, LlmError, Message, ModelKind};
use crate::ssr::prompts::research::{self as prompts, PlanContext};
use crate::text::has_han;
use crate::ssr::session::Session;
use crate::ssr::state::AppState;
use branch::{Env, Outcome};
use thinker::{ModelThinker, OfflineThinker, Planned, Thinker};

/// Sub-questions per loop at most (seed 004: Occam's razor, four).
pub const MAX_SUB_QUESTIONS: usize = 4;

/// Text compared when deciding whether a sub-question repeats another: lower case, only
/// letters and digits (Han included), so punctuation and spacing cannot disguise a repeat.
pub fn normalise(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// True when `a` and `b` name the same direction: equal, or one contains the other (for
/// texts long enough that containment means something).
fn same_direction(a: &str, b: &str) -> bool {
    if a.is_empty() || b.is_empty() {
        return false;
    }
    a == b || (a.chars().count().min(b.chars().count()) >= 4 && (a.contains(b) || b.contains(a)))
}

/// Keeps the planned sub-questions that are new: not completed, not pruned, not repeated
/// within the batch; at most [`MAX_SUB_QUESTIONS`].
pub fn admit(planned: Vec<Planned>, completed: &[String], pruned: &[String]) -> Vec<Planned> {
    let completed: Vec<String> = completed.iter().map(|q| normalise(q)).collect();
    let pruned: Vec<String> = pruned.iter().map(|q| normalise(q)).collect();
    let mut admitted: Vec<Planned> = Vec::new();
    for item in planned {
        let question = normalise(&item.question);
        let query = normalise(&item.query);
        let repeats = completed
            .iter()
            .any(|done| *done == question || *done == query);
        let is_pruned = pruned
            .iter()
            .any(|dead| same_direction(dead, &question) || same_direction(dead, &query));
        let duplicate = admitted.iter().any(|other| {
            normalise(&other.question) == question || normalise(&other.query) == query
        });
        if repeats || is_pruned || duplicate {
            tracing::info!(
                question = item.question,
                repeats,
                is_pruned,
                duplicate,
                "research: sub-question not admitted"
            );
            continue;
        }
        if admitted.len() == MAX_SUB_QUESTIONS {
            tracing::info!(
                question = item.question,
                "research: more than four sub-questions; dropped"
            );
            continue;
        }
        admitted.push(item);
    }
    admitted
}

/// The evidence as the verify, summary and format steps read it: `E3: statement [4][7] (high)`.
fn evidence_lines(plan: &ResearchPlan) -> Vec<String> {
    plan.sub_questions()
        .filter_map(|sub| sub.evidence.as_ref().map(|e| (sub, e)))
        .map(|(sub, evidence)| {
            let numbers: String = evidence.numbers.iter().map(|n| format!("[{n}]")).collect();
            let reliability = match evidence.reliability {
                Reliability::High => "high",
                Reliability::Medium => "medium",
                Reliability::Low => "low",
            };
            format!(
                "E{}: {} {numbers} ({reliability})",
                sub.id, evidence.statement
            )
        })
        .collect()
}

/// Evidence that rests on at least one source.
fn grounded(plan: &ResearchPlan) -> bool {
    plan.sub_questions()
        .any(|sub| sub.evidence.as_ref().is_some_and(|e| !e.numbers.is_empty()))
}

/// The answer when no evidence rests on any source: said plainly, no guess from memory.
pub fn no_evidence(zh: bool) -> &'static str {
    if zh {
        "没有找到足够的证据来回答这个问题，因此不作猜测。可以换一种问法、补充已知的线索，或检查 SearXNG 是否能搜到相关网页。"
    } else {
        "No evidence was found to answer this question, so cited does not guess. Try rephrasing it, adding what you already know, or checking that SearXNG finds relevant pages."
    }
}

/// What one Research answer carries between its steps.
struct Run<'a> {
    state: &'a AppState,
    session: Arc<Session>,
    input: &'a ChatInput,
    cancel: &'a CancellationToken,
    events: &'a mpsc::Sender<AnswerEvent>,
    exchange: Exchange,
    listening: bool,
    /// Registry numbers this answer allocated.
    retrieved: Vec<u32>,
    completed: Vec<String>,
    pruned: Vec<String>,
    /// Candidates found but not yet verified (`?`).
    candidates: Vec<String>,
    chain: String,
    next_id: u32,
    /// The session's generation when the answer began (a `/reset` changes it).
    generation: u64,
}

impl Run<'_> {
    fn plan(&mut self) -> &mut ResearchPlan {
        self.exchange
            .research
            .get_or_insert_with(ResearchPlan::default)
    }

    async fn send(&mut self, event: AnswerEvent) {
        if self.listening {
            self.listening = emit(self.events, event).await;
        }
    }

    async fn send_plan(&mut self) {
        let plan = self.plan().clone();
        self.send(AnswerEvent::Plan { plan }).await;
    }

    async fn send_sources(&mut self) {
        let registry = self.session.with_registry(|registry| registry.clone());
        self.exchange.sources = answer_sources(&registry, &self.retrieved, "");
        let sources = self.exchange.sources.clone();
        self.send(AnswerEvent::Sources { sources }).await;
    }

    async fn status(&mut self, text: String) {
        self.send(AnswerEvent::Status { text }).await;
    }

    fn stopped(&self) -> bool {
        !self.listening || self.cancel.is_cancelled()
    }

    /// A model step failed: the answer ends with the model's error.
    async fn model_failed(&mut self, error: LlmError) {
        tracing::warn!(%error, "research: model failed");
        let message = error.user_message(self.input.lang);
        self.listening = failed(message, &mut self.exchange, self.events).await;
    }

    /// Registers a finished branch's rounds in the session registry and records its
    /// outcome in the plan, with its evidence's local numbers made global.
    fn register(&mut self, loop_index: usize, index: usize, outcome: Outcome) -> bool {
        let mut global: Vec<u32> = Vec::new();
        let mut rounds = Vec::new();
        let mut conflicted = false;
        self.session.with_registry(|registry| {
            for round in &outcome.rounds {
                let allocation = registry.add_round(&round.query, &round.sources);
                if !allocation.conflicts.is_empty() {
                    conflicted = true;
                    tracing::error!(conflicts = ?allocation.conflicts, "citation numbers conflicted; repaired");
                }
                tracing::info!(query = round.query, n_results = round.sources.len(), range = ?allocation.new_range, round = allocation.round, "citation numbers allocated");
                rounds.push(allocation.round);
                global.extend(allocation.numbers);
            }
        });
        self.retrieved.extend(global.iter().copied());
        for candidate in &outcome.candidates {
            self.candidates.retain(|c| c != &candidate.name);
            if candidate.status == '?' {
                self.candidates.push(candidate.name.clone());
            }
        }
        let evidence = outcome.evidence.map(|draft| {
            let mut numbers: Vec<u32> = draft
                .numbers
                .iter()
                .filter_map(|local| {
                    (*local as usize)
                        .checked_sub(1)
                        .and_then(|i| global.get(i))
                        .copied()
                })
                .collect();
            numbers.dedup();
            Evidence {
                statement: draft.statement,
                reliability: draft.reliability,
                numbers,
            }
        });
        let sub = &mut self.plan().loops[loop_index].sub_questions[index];
        sub.rounds = rounds;
        sub.checked = outcome.checked;
        sub.read = outcome.read;
        sub.status = match (&outcome.error, &evidence) {
            (Some(_), None) => BranchStatus::Failed,
            _ => BranchStatus::Done,
        };
        sub.error = outcome.error;
        sub.evidence = evidence;
        // Both the wording and the query count as done: a rephrased repeat is still one.
        let done = [sub.question.clone(), sub.query.clone()];
        self.completed.extend(done);
        conflicted
    }

    /// Runs one loop's branches concurrently; returns false when the answer was stopped.
    async fn branches(&mut self, env: &Arc<Env>, loop_index: usize, planned: Vec<Planned>) -> bool {
        let count = planned.len();
        let semaphore = Arc::new(Semaphore::new(self.state.config.research.max_branches));
        let (started_tx, mut started_rx) = mpsc::unbounded_channel::<usize>();
        let timeout = self.state.config.research.branch_timeout;
        let mut set: JoinSet<Outcome> = JoinSet::new();
        let mut indices = HashMap::new();
        for (index, planned) in planned.into_iter().enumerate() {
            let env = Arc::clone(env);
            let semaphore = Arc::clone(&semaphore);
            let started = started_tx.clone();
            let handle = set.spawn(async move {
                let _permit = semaphore.acquire_owned().await;
                let _ = started.send(index);
                match tokio::time::timeout(timeout, branch::run(&env, &planned)).await {
                    Ok(outcome) => outcome,
                    Err(_) => Outcome {
                        error: Some(
                            env.lang
                                .texts()
                                .research_timeout
                                .replace("{secs}", &timeout.as_secs().to_string()),
                        ),
                        ..Outcome::default()
                    },
                }
            });
            indices.insert(handle.id(), index);
        }
        drop(started_tx);
        let mut outcomes: Vec<Option<Outcome>> = vec![None; count];
        let mut next = 0;
        while next < count {
            tokio::select! {
                biased;
                () = halted(self.cancel, self.events) => {
                    set.abort_all();
                    return false;
                }
                Some(index) = started_rx.recv() => {
                    self.plan().loops[loop_index].sub_questions[index].status = BranchStatus::Running;
                    self.send_plan().await;
                    continue;
                }
                joined = set.join_next_with_id() => match joined {
                    None => break,
                    Some(Ok((id, outcome))) => {
                        if let Some(&index) = indices.get(&id) {
                            outcomes[index] = Some(outcome);
                        }
                    }
                    Some(Err(error)) => {
                        tracing::error!(%error, "research: a branch panicked");
                        if let Some(&index) = indices.get(&error.id()) {
                            outcomes[index] = Some(Outcome {
                                error: Some(self.input.lang.texts().research_branch_crashed.to_string()),
                                ..Outcome::default()
                            });
                        }
                    }
                },
            }
            if self.session.generation() != self.generation {
                // A /reset landed: nothing more goes into the fresh registry.
                set.abort_all();
                return false;
            }
            let mut changed = false;
            while next < count {
                let Some(outcome) = outcomes[next].take() else {
                    break;
                };
                if self.register(loop_index, next, outcome) {
                    let notice = Notice {
                        level: Level::Warning,
                        text: self.input.lang.texts().registry_conflict.to_string(),
                    };
                    self.exchange.notices.push(notice.clone());
                    self.send(AnswerEvent::Notice { notice }).await;
                }
                next += 1;
                changed = true;
            }
            if changed {
                self.send_sources().await;
                self.send_plan().await;
            }
        }
        true
    }

    /// Marks every sub-question matching a pruned direction.
    fn prune(&mut self, directions: &[String]) {
        let dead: Vec<String> = directions.iter().map(|d| normalise(d)).collect();
        for sub in self
            .plan()
            .loops
            .iter_mut()
            .flat_map(|l| l.sub_questions.iter_mut())
        {
            let question = normalise(&sub.question);
            let query = normalise(&sub.query);
            if dead
                .iter()
                .any(|d| same_direction(d, &question) || same_direction(d, &query))
            {
                sub.status = BranchStatus::Pruned;
            }
        }
        self.pruned.extend(directions.iter().cloned());
    }

    /// The plan → branches → verify loops. Returns why they stopped, or `None` when a
    /// model step failed (the answer already carries the error).
    async fn research(&mut self, thinker: &Arc<dyn Thinker>, env: &Arc<Env>) -> Option<StopReason> {
        let t = self.input.lang.texts();
        let max_loops = self.state.config.research.max_loops;
        let question = self.input.question.clone();
        for loop_number in 1..=max_loops {
            if self.stopped() {
                return Some(StopReason::Stopped);
            }
            self.status(t.research_planning.replace("{n}", &loop_number.to_string()))
                .await;
            let evidence = evidence_lines(self.plan());
            let context = PlanContext {
                question: &question,
                loop_number,
                max_loops,
                max_sub_questions: MAX_SUB_QUESTIONS,
                evidence: &evidence,
                completed: &self.completed,
                pruned: &self.pruned,
                candidates: &self.candidates,
                chain: &self.chain,
            };
            let planned = tokio::select! {
                planned = thinker.plan(&context) => planned,
                () = halted(self.cancel, self.events) => return Some(StopReason::Stopped),
            };
            let planned = match planned {
                Ok(planned) => admit(planned, &self.completed, &self.pruned),
                Err(error) => {
                    self.model_failed(error).await;
                    return None;
                }
            };
            if planned.is_empty() {
                return Some(StopReason::NothingToPlan);
            }
            let sub_questions = planned
                .iter()
                .map(|p| {
                    self.next_id += 1;
                    SubQuestion {
                        id: self.next_id,
                        question: p.question.clone(),
                        query: p.query.clone(),
                        language: if p.zh { "zh-CN" } else { "en" }.to_string(),
                        ..SubQuestion::default()
                    }
                })
                .collect();
            let loop_index = loop_number - 1;
            self.plan().loops.push(ResearchLoop {
                number: loop_number as u32,
                sub_questions,
                verdict: None,
            });
            self.send_plan().await;
            self.status(
                t.research_branches
                    .replace("{n}", &planned.len().to_string()),
            )
            .await;
            if !self.branches(env, loop_index, planned).await {
                return Some(StopReason::Stopped);
            }
            let this_loop = &self.plan().loops[loop_index];
            if this_loop
                .sub_questions
                .iter()
                .all(|s| s.status == BranchStatus::Failed)
            {
                return Some(StopReason::AllFailed);
            }
            let added = this_loop
                .sub_questions
                .iter()
                .any(|s| s.evidence.as_ref().is_some_and(|e| !e.numbers.is_empty()));
            if !added {
                return Some(StopReason::NoNewEvidence);
            }
            self.status(t.research_verifying.to_string()).await;
            let evidence = evidence_lines(self.plan());
            let judged = tokio::select! {
                judged = thinker.verify(&question, &evidence) => judged,
                () = halted(self.cancel, self.events) => return Some(StopReason::Stopped),
            };
            let judgement = match judged {
                Ok(judgement) => judgement,
                Err(error) => {
                    self.model_failed(error).await;
                    return None;
                }
            };
            tracing::info!(loop_number, sufficient = judgement.sufficient, prune = ?judgement.prune, "research: verdict");
            self.chain = judgement.chain.clone();
            self.prune(&judgement.prune);
            self.plan().loops[loop_index].verdict = Some(crate::model::Verdict {
                sufficient: judgement.sufficient,
                chain: judgement.chain,
                prune: judgement.prune,
            });
            self.send_plan().await;
            if judgement.sufficient {
                return Some(StopReason::Sufficient);
            }
        }
        Some(StopReason::LoopCap)
    }

    /// The 结论 line and the streamed explanation, or an honest "not enough evidence".
    async fn conclude(&mut self, thinker: &Arc<dyn Thinker>) {
        let zh = has_han(&self.input.question);
        let t = self.input.lang.texts();
        if !grounded(self.plan()) {
            let text = no_evidence(zh).to_string();
            self.exchange.answer.push_str(&text);
            self.send(AnswerEvent::Token { text }).await;
            return;
        }
        self.status(t.research_summarising.to_string()).await;
        let evidence = evidence_lines(self.plan());
        let mut numbers: Vec<u32> = self
            .plan()
            .sub_questions()
            .filter_map(|s| s.evidence.as_ref())
            .flat_map(|e| e.numbers.iter().copied())
            .collect();
        numbers.sort_unstable();
        numbers.dedup();
        let registry = self.session.with_registry(|registry| registry.clone());
        let sources: Vec<_> = numbers
            .iter()
            .filter_map(|n| registry.shared(*n).cloned())
            .collect();
        let summarised = tokio::select! {
            summary = thinker.summarise(&self.input.question, &self.chain, &evidence, &sources) => summary,
            () = halted(self.cancel, self.events) => return,
        };
        let summary = match summarised {
            Ok(summary) => summary,
            Err(error) => return self.model_failed(error).await,
        };
        let confidence = match (summary.confidence, zh) {
            (Reliability::High, true) => "高",
            (Reliability::Medium, true) => "中",
            (Reliability::Low, true) => "低",
            (Reliability::High, false) => "high",
            (Reliability::Medium, false) => "medium",
            (Reliability::Low, false) => "low",
        };
        let line = if zh {
            format!("**结论**：{}（置信度：{confidence}）\n\n", summary.answer)
        } else {
            format!(
                "**Conclusion**: {} (confidence: {confidence})\n\n",
                summary.answer
            )
        };
        self.plan().conclusion = Some(Conclusion {
            answer: summary.answer.clone(),
            confidence: summary.confidence,
        });
        self.send_plan().await;
        self.exchange.answer.push_str(&line);
        self.send(AnswerEvent::Token { text: line }).await;
        let request = ChatRequest {
            messages: vec![
                Message::System(prompts::format_system(zh)),
                Message::User(prompts::format_user(
                    zh,
                    &self.input.question,
                    &summary.answer,
                    &summary.reasoning,
                    &evidence,
                    &tool_output(&registry, &numbers, self.state.config.snippet_chars),
                )),
            ],
            tools: Vec::new(),
            context: AnswerContext {
                question: self.input.question.clone(),
                sources,
            },
        };
        self.status(t.generating.to_string()).await;
        let listening = stream_answer(
            self.state,
            request,
            self.input.lang,
            true,
            self.cancel,
            self.events,
            &mut self.exchange,
        )
        .await;
        self.listening = self.listening && listening;
    }
}

/// The final result for benchmark scripts: the answer, 结论 and confidence, the evidence
/// with its sources, every source cited or retrieved, and the plan.
pub fn result_json(exchange: &Exchange) -> serde_json::Value {
    let plan = exchange.research.clone().unwrap_or_default();
    let evidence: Vec<serde_json::Value> = plan
        .sub_questions()
        .filter_map(|sub| {
            sub.evidence.as_ref().map(|e| {
                serde_json::json!({
                    "sub_question": sub.question,
                    "statement": e.statement,
                    "reliability": e.reliability,
                    "sources": e.numbers,
                })
            })
        })
        .collect();
    let sources: Vec<serde_json::Value> = exchange
        .sources
        .iter()
        .map(|entry| {
            serde_json::json!({
                "number": entry.number,
                "title": entry.title,
                "url": entry.url,
                "cited": exchange.cited.contains(&entry.number),
            })
        })
        .collect();
    serde_json::json!({
        "question": exchange.question,
        "mode": exchange.mode,
        "answer": exchange.answer,
        "conclusion": plan.conclusion.as_ref().map(|c| c.answer.clone()),
        "confidence": plan.conclusion.as_ref().map(|c| c.confidence),
        "evidence": evidence,
        "cited": exchange.cited,
        "sources": sources,
        "loops": plan.loops.len(),
        "stop": plan.stop,
        "plan": plan,
        "notices": exchange.notices,
        "offline": exchange.offline,
        "stopped": exchange.stopped,
    })
}

#[tracing::instrument(skip_all, fields(answer = input.id))]
pub async fn run(
    state: &AppState,
    session: Arc<Session>,
    input: ChatInput,
    cancel: CancellationToken,
    events: mpsc::Sender<AnswerEvent>,
) -> Exchange {
    let generation = session.generation();
    let (mut exchange, listening) = begin(state, &input, &events).await;
    let provider = pick_search(state, &session, input.lang, &cancel, &mut exchange, &events).await;
    let thinker: Arc<dyn Thinker> = match state.llm.kind() {
        ModelKind::Extractive => Arc::new(OfflineThinker),
        ModelKind::Remote => Arc::new(ModelThinker {
            llm: Arc::clone(&state.llm),
            snippet_chars: state.config.snippet_chars,
        }),
    };
    let env = Arc::new(Env {
        thinker: Arc::clone(&thinker),
        search: provider,
        session: Arc::clone(&session),
        fetch: Arc::clone(&state.fetch),
        research: state.config.research.clone(),
        snippet_chars: state.config.snippet_chars,
        lang: input.lang,
        question: input.question.clone(),
    });
    let mut run = Run {
        state,
        session: Arc::clone(&session),
        input: &input,
        cancel: &cancel,
        events: &events,
        exchange,
        listening,
        retrieved: Vec::new(),
        completed: Vec::new(),
        pruned: Vec::new(),
        candidates: Vec::new(),
        chain: String::new(),
        next_id: 0,
        generation,
    };
    run.plan().max_loops = state.config.research.max_loops as u32;
    let stop = run.research(&thinker, &env).await;
    if let Some(stop) = stop {
        tracing::info!(
            ?stop,
            loops = run.plan().loops.len(),
            "research: loops done"
        );
        run.plan().stop = Some(stop);
        run.send_plan().await;
        if stop != StopReason::Stopped && !run.stopped() {
            run.conclude(&thinker).await;
        }
    }
    run.status(String::new()).await;
    let mut exchange = run.exchange;
    let listening = run.listening;
    if cancel.is_cancelled() || !listening {
        exchange.stopped = true;
        if let Some(plan) = exchange.research.as_mut() {
            plan.stop = Some(StopReason::Stopped);
        }
    }
    let registry = session.with_registry(|registry| registry.clone());
    exchange.sources = answer_sources(&registry, &run.retrieved, &exchange.answer);
    let _ = emit(
        &events,
        AnswerEvent::Sources {
            sources: exchange.sources.clone(),
        },
    )
    .await;
    let sources = SourceMap::new(exchange.sources.iter().cloned());
    finish(&session, generation, exchange, &sources, &events).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planned(question: &str) -> Planned {
        Planned {
            question: question.to_string(),
            query: question.to_string(),
            zh: has_han(question),
        }
    }

    #[test]
    fn repeats_are_compared_as_normalised_text() {
        assert_eq!(normalise("《猫眼三姐妹》的 配音？"), "猫眼三姐妹的配音");
        assert_eq!(normalise("What is  FIVE alpha?"), "whatisfivealpha");
        let completed = vec!["What is five alpha?".to_string()];
        let pruned = vec!["张欣 配音".to_string()];
        let admitted = admit(
            vec![
                planned("what is FIVE alpha"),
                planned("张欣配音作品有哪些？"),
                planned("姚培华 配音 角色"),
                planned("姚培华，配音，角色"),
            ],
            &completed,
            &pruned,
        );
        let questions: Vec<&str> = admitted.iter().map(|p| p.question.as_str()).collect();
        assert_eq!(questions, vec!["姚培华 配音 角色"]);
    }

    #[test]
    fn short_prune_directions_do_not_swallow_everything() {
        // "ab" is too short to mean a direction by containment; equality still counts.
        let admitted = admit(
            vec![planned("ab cd ef"), planned("ab")],
            &[],
            &["ab".to_string()],
        );
        assert_eq!(admitted.len(), 1);
        assert_eq!(admitted[0].question, "ab cd ef");
    }

    #[test]
    fn at_most_four_are_admitted() {
        let many: Vec<Planned> = (0..7).map(|i| planned(&format!("question {i}"))).collect();
        assert_eq!(admit(many, &[], &[]).len(), MAX_SUB_QUESTIONS);
    }
}
