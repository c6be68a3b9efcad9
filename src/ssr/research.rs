//! The Research pipeline (seed 004, PRODUCT.md "Research"): plan → branches in parallel →
//! verify → (plan again for the gaps) → summary → format, in plain tokio.
//!
//! Loop control lives here, not in prompts: at most four sub-questions a loop, never one
//! already completed or pruned (compared as normalised text), at most
//! `CITED_RESEARCH_MAX_LOOPS` loops; a loop that falls short (no new evidence, every branch
//! failed, an insufficient verdict) plans again for its gaps while loops remain. Loops (or
//! the deadline) that end without a sufficient chain give the best-supported guess with low
//! confidence and what is missing; only research that found nothing declines. Branches run on a `JoinSet`
//! under a semaphore (`CITED_RESEARCH_MAX_BRANCHES`) and a per-branch timeout; a failed or
//! panicked branch is recorded as failed. Their material is registered in the session
//! registry in branch order, so numbering is deterministic however the branches finish.
//! The plan streams to the browser as `Plan` events; only the final explanation streams
//! token by token.

pub mod branch;
pub mod thinker;

use std::collections::HashMap;
use std::sync::Arc;
use tokio::time::Instant;

use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinSet;

use crate::citation::prompt::tool_output;
use crate::model::{
    AnswerEvent, BranchStatus, Conclusion, Evidence, Exchange, Lang, Level, Reliability,
    ResearchLoop, ResearchPlan, Source, Status, StopReason, SubQuestion, Verdict,
};
use crate::ssr::llm::{AnswerContext, ChatRequest, Message, ModelKind};
use crate::ssr::messages;
use crate::ssr::pipeline::{Halted, Turn};
use crate::ssr::prompts::research::{self as prompts, PlanContext};
use crate::text::has_han;
use branch::{Env, Outcome};
use thinker::{CandidateStatus, ModelThinker, OfflineThinker, Planned, Thinker};

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

/// A loop's branches as started: their tasks, each task's branch index, and the
/// indices of branches as they get a slot.
struct Spawned {
    set: JoinSet<Outcome>,
    indices: HashMap<tokio::task::Id, usize>,
    started_rx: mpsc::UnboundedReceiver<usize>,
}

/// What one Research answer carries between its steps, around the turn.
struct Run<'a> {
    turn: &'a mut Turn,
    thinker: Arc<dyn Thinker>,
    env: Arc<Env>,
    completed: Vec<String>,
    pruned: Vec<String>,
    /// Candidates found but not yet verified (`?`).
    candidates: Vec<String>,
    chain: String,
    next_id: u32,
    /// When the research loops must end (`CITED_RESEARCH_DEADLINE_SECS`).
    deadline: Instant,
    /// What the deadline cut, for the notice.
    cut: Vec<String>,
}

impl Run<'_> {
    fn plan(&mut self) -> &mut ResearchPlan {
        self.turn.plan_mut()
    }

    async fn send_plan(&mut self) -> Result<(), Halted> {
        let plan = self.plan().clone();
        self.turn.send(AnswerEvent::Plan { plan }).await
    }

    /// Registers a finished branch's rounds in the session registry and records its
    /// outcome in the plan, with its evidence's local numbers made global.
    async fn register(
        &mut self,
        loop_index: usize,
        index: usize,
        outcome: Outcome,
    ) -> Result<(), Halted> {
        let rounds: Vec<(&str, &[Source])> = outcome
            .rounds
            .iter()
            .map(|round| (round.query.as_str(), round.sources.as_slice()))
            .collect();
        let allocations = self.turn.register_rounds(&rounds).await?;
        let global: Vec<u32> = allocations
            .iter()
            .flat_map(|a| a.numbers.iter().copied())
            .collect();
        for candidate in &outcome.candidates {
            self.candidates.retain(|c| c != &candidate.name);
            if candidate.status == CandidateStatus::Unverified {
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
        sub.rounds = allocations.iter().map(|a| a.round).collect();
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
        Ok(())
    }

    /// Runs one loop's branches concurrently, registering each in branch order as soon as
    /// it and every branch before it are done.
    ///
    /// At the research deadline the branches still running are abandoned (recorded as
    /// failed, named in the notice) and `true` is returned.
    async fn branches(&mut self, loop_index: usize, planned: Vec<Planned>) -> Result<bool, Halted> {
        let count = planned.len();
        let started = Instant::now();
        let base = self.turn.meter().pieces();
        let deadline = self.deadline;
        let Spawned {
            mut set,
            indices,
            mut started_rx,
        } = self.spawn(planned);
        // Dropping the set (on `Halted`) aborts every branch still running.
        let mut outcomes: Vec<Option<Outcome>> = vec![None; count];
        let mut next = 0;
        while next < count {
            enum Woke {
                Started(usize),
                Joined(Option<Result<(tokio::task::Id, Outcome), tokio::task::JoinError>>),
                Deadline,
            }
            let woke = self
                .turn
                .guard_since(started, base, async {
                    tokio::select! {
                        biased;
                        () = tokio::time::sleep_until(deadline) => Woke::Deadline,
                        Some(index) = started_rx.recv() => Woke::Started(index),
                        joined = set.join_next_with_id() => Woke::Joined(joined),
                    }
                })
                .await?;
            match woke {
                Woke::Deadline => {
                    self.abandon(loop_index, next, outcomes, set, &indices)
                        .await?;
                    return Ok(true);
                }
                Woke::Started(index) => {
                    self.plan().loops[loop_index].sub_questions[index].status =
                        BranchStatus::Running;
                    self.send_plan().await?;
                    continue;
                }
                Woke::Joined(None) => break,
                Woke::Joined(Some(Ok((id, outcome)))) => {
                    if let Some(&index) = indices.get(&id) {
                        outcomes[index] = Some(outcome);
                    }
                }
                Woke::Joined(Some(Err(error))) => {
                    tracing::error!(%error, "research: a branch panicked");
                    if let Some(&index) = indices.get(&error.id()) {
                        let crashed = self.turn.texts().research_branch_crashed.to_string();
                        outcomes[index] = Some(Outcome {
                            error: Some(crashed),
                            ..Outcome::default()
                        });
                    }
                }
            }
            let mut changed = false;
            while let Some(outcome) = outcomes.get_mut(next).and_then(Option::take) {
                self.register(loop_index, next, outcome).await?;
                next += 1;
                changed = true;
            }
            if changed {
                let sources = self.turn.answer_sources();
                self.turn.sources(sources).await?;
                self.send_plan().await?;
            }
        }
        self.turn.flush_notes().await?;
        Ok(false)
    }

    /// Starts the branches, at most `max_branches` at a time, each within its own timeout.
    fn spawn(&self, planned: Vec<Planned>) -> Spawned {
        let config = &self.turn.state().config.research;
        let semaphore = Arc::new(Semaphore::new(config.max_branches));
        let timeout = config.branch_timeout;
        let (started_tx, started_rx) = mpsc::unbounded_channel::<usize>();
        let mut set: JoinSet<Outcome> = JoinSet::new();
        let mut indices = HashMap::new();
        for (index, planned) in planned.into_iter().enumerate() {
            let env = Arc::clone(&self.env);
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
        Spawned {
            set,
            indices,
            started_rx,
        }
    }

    /// At the research deadline: the finished branches still count, in order (those done
    /// but not yet joined too); the rest are given up, recorded as failed and named in the
    /// notice.
    async fn abandon(
        &mut self,
        loop_index: usize,
        next: usize,
        mut outcomes: Vec<Option<Outcome>>,
        mut set: JoinSet<Outcome>,
        indices: &HashMap<tokio::task::Id, usize>,
    ) -> Result<(), Halted> {
        while let Some(joined) = set.try_join_next_with_id() {
            if let Ok((id, outcome)) = joined {
                if let Some(&index) = indices.get(&id) {
                    outcomes[index] = Some(outcome);
                }
            }
        }
        drop(set);
        let left: Vec<Option<Outcome>> = outcomes.drain(next..).collect();
        for (index, outcome) in (next..).zip(left) {
            match outcome {
                Some(outcome) => self.register(loop_index, index, outcome).await?,
                None => {
                    let error = self.turn.texts().stop_deadline.to_string();
                    let sub = &mut self.plan().loops[loop_index].sub_questions[index];
                    sub.status = BranchStatus::Failed;
                    sub.error = Some(error);
                    let question = sub.question.clone();
                    self.cut.push(question);
                }
            }
        }
        let sources = self.turn.answer_sources();
        self.turn.sources(sources).await?;
        self.send_plan().await
    }

    /// After a thinker step raced the research deadline: what it returned, or `None` when
    /// the deadline came first (`what` goes into the notice). Either way the thinker's
    /// notes are told.
    async fn in_time<T>(
        &mut self,
        what: &str,
        done: Result<T, tokio::time::error::Elapsed>,
    ) -> Result<Option<T>, Halted> {
        if done.is_err() {
            self.cut.push(what.to_string());
        }
        self.turn.flush_notes().await?;
        Ok(done.ok())
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

    /// Plans one loop: the admitted sub-questions, or why the research stops.
    async fn plan_loop(&mut self, loop_number: usize) -> Result<Step<Vec<Planned>>, Halted> {
        let round = u32::try_from(loop_number).unwrap_or(u32::MAX);
        self.turn.status(Some(Status::Planning { round })).await?;
        let evidence = evidence_lines(self.plan());
        let question = self.turn.input().question.clone();
        let context = PlanContext {
            question: &question,
            loop_number,
            max_loops: self.turn.state().config.research.max_loops,
            max_sub_questions: MAX_SUB_QUESTIONS,
            evidence: &evidence,
            completed: &self.completed,
            pruned: &self.pruned,
            candidates: &self.candidates,
            chain: &self.chain,
        };
        let deadline = self.deadline;
        let planned = self
            .turn
            .guard(tokio::time::timeout_at(
                deadline,
                self.thinker.plan(&context),
            ))
            .await?;
        let what = self.turn.texts().research_step_plan;
        let Some(planned) = self.in_time(what, planned).await? else {
            return Ok(Step::Stop(StopReason::Deadline));
        };
        match planned {
            Ok(planned) => {
                let admitted = admit(planned, &self.completed, &self.pruned);
                Ok(if admitted.is_empty() {
                    Step::Stop(StopReason::NothingToPlan)
                } else {
                    Step::Go(admitted)
                })
            }
            Err(error) => {
                self.turn.model_failed(&error).await?;
                Ok(Step::Failed)
            }
        }
    }

    /// Judges the chain after a loop; prunes what the verifier names.
    async fn verify(&mut self, loop_index: usize) -> Result<Step<()>, Halted> {
        self.turn.status(Some(Status::Verifying)).await?;
        let evidence = evidence_lines(self.plan());
        let question = self.turn.input().question.clone();
        let deadline = self.deadline;
        let judged = self
            .turn
            .guard(tokio::time::timeout_at(
                deadline,
                self.thinker.verify(&question, &evidence),
            ))
            .await?;
        let what = self.turn.texts().research_step_verify;
        let Some(judged) = self.in_time(what, judged).await? else {
            return Ok(Step::Stop(StopReason::Deadline));
        };
        let judgement = match judged {
            Ok(judgement) => judgement,
            Err(error) => {
                self.turn.model_failed(&error).await?;
                return Ok(Step::Failed);
            }
        };
        tracing::info!(loop_index, sufficient = judgement.sufficient, prune = ?judgement.prune, "research: verdict");
        self.chain.clone_from(&judgement.chain);
        self.prune(&judgement.prune);
        self.plan().loops[loop_index].verdict = Some(Verdict {
            sufficient: judgement.sufficient,
            chain: judgement.chain,
            prune: judgement.prune,
            missing: judgement.missing,
        });
        self.send_plan().await?;
        Ok(if judgement.sufficient {
            Step::Stop(StopReason::Sufficient)
        } else {
            Step::Go(())
        })
    }

    /// The plan → branches → verify loops. Returns why they stopped, or `None` when a
    /// model step failed (the answer already carries the error). A loop that falls short
    /// (nothing new to ask, every branch failed, no sourced evidence, a chain judged
    /// insufficient) plans again while loops remain (seed 004); the last one's shortfall is
    /// why they stopped.
    async fn research(&mut self) -> Result<Option<StopReason>, Halted> {
        let max_loops = self.turn.state().config.research.max_loops;
        let mut short = StopReason::LoopCap;
        for loop_number in 1..=max_loops {
            if Instant::now() >= self.deadline {
                return Ok(Some(StopReason::Deadline));
            }
            let planned = match self.plan_loop(loop_number).await? {
                Step::Go(planned) => planned,
                Step::Stop(StopReason::NothingToPlan) => {
                    tracing::info!(loop_number, "research: nothing new planned; planning again");
                    short = StopReason::NothingToPlan;
                    continue;
                }
                Step::Stop(reason) => return Ok(Some(reason)),
                Step::Failed => return Ok(None),
            };
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
            // (A round that planned nothing new left no loop behind.)
            let loop_index = self.plan().loops.len();
            self.plan().loops.push(ResearchLoop {
                number: u32::try_from(loop_number).unwrap_or(u32::MAX),
                sub_questions,
                verdict: None,
            });
            self.send_plan().await?;
            let count = u32::try_from(planned.len()).unwrap_or(u32::MAX);
            self.turn.status(Some(Status::Branches { count })).await?;
            if self.branches(loop_index, planned).await? {
                return Ok(Some(StopReason::Deadline));
            }
            let this_loop = &self.plan().loops[loop_index];
            if this_loop
                .sub_questions
                .iter()
                .all(|s| s.status == BranchStatus::Failed)
            {
                tracing::info!(loop_number, "research: every branch failed; planning again");
                short = StopReason::AllFailed;
                continue;
            }
            let added = this_loop
                .sub_questions
                .iter()
                .any(|s| s.evidence.as_ref().is_some_and(|e| !e.numbers.is_empty()));
            if !added {
                tracing::info!(loop_number, "research: no sourced evidence; planning again");
                short = StopReason::NoNewEvidence;
                continue;
            }
            match self.verify(loop_index).await? {
                Step::Go(()) => short = StopReason::LoopCap,
                Step::Stop(reason) => return Ok(Some(reason)),
                Step::Failed => return Ok(None),
            }
        }
        Ok(Some(short))
    }

    /// The 结论 line and the streamed explanation. Loops that ended short of a sufficient
    /// chain give the best-supported guess, with low confidence and what is missing (seed
    /// 004); only research that found nothing at all declines.
    async fn conclude(&mut self) -> Result<(), Halted> {
        let question = self.turn.input().question.clone();
        let zh = has_han(&question);
        let mut numbers: Vec<u32> = self
            .plan()
            .sub_questions()
            .filter_map(|s| s.evidence.as_ref())
            .flat_map(|e| e.numbers.iter().copied())
            .collect();
        if !grounded(self.plan()) {
            // No evidence rests on a source, yet sources were found: the guess rests on them.
            numbers = self
                .turn
                .answer_sources()
                .iter()
                .map(|entry| entry.number)
                .take(GUESS_SOURCES)
                .collect();
        }
        numbers.sort_unstable();
        numbers.dedup();
        if numbers.is_empty() {
            let lang = if zh { Lang::ZhCn } else { Lang::En };
            return self.turn.token(messages::no_evidence(lang)).await;
        }
        let guess = matches!(
            self.plan().stop,
            Some(
                StopReason::LoopCap
                    | StopReason::NoNewEvidence
                    | StopReason::AllFailed
                    | StopReason::NothingToPlan
                    | StopReason::Deadline
            )
        );
        self.turn.status(Some(Status::Summarising)).await?;
        let evidence = evidence_lines(self.plan());
        let registry = self.turn.registry();
        let sources: Vec<_> = numbers
            .iter()
            .filter_map(|n| registry.shared(*n).cloned())
            .collect();
        let summarised = self
            .turn
            .guard(
                self.thinker
                    .summarise(&question, &self.chain, &evidence, &sources),
            )
            .await?;
        self.turn.flush_notes().await?;
        let mut summary = match summarised {
            Ok(summary) => summary,
            Err(error) => return self.turn.model_failed(&error).await,
        };
        if guess {
            // The chain was never judged sufficient: a guess, said as one.
            summary.confidence = Reliability::Low;
            let missing = self
                .plan()
                .loops
                .iter()
                .rev()
                .find_map(|l| l.verdict.as_ref())
                .map(|verdict| verdict.missing.trim().to_string())
                .unwrap_or_default();
            let t = self.turn.texts();
            let mut text = t.research_best_guess.to_string();
            if !missing.is_empty() {
                text.push_str(&t.research_missing.replace("{missing}", &missing));
            }
            self.turn.notice(Level::Info, text).await?;
        }
        self.plan().conclusion = Some(Conclusion {
            answer: summary.answer.clone(),
            confidence: summary.confidence,
        });
        self.send_plan().await?;
        self.turn
            .token(conclusion_line(zh, &summary.answer, summary.confidence))
            .await?;
        let request = ChatRequest {
            messages: vec![
                Message::System(prompts::format_system(zh)),
                Message::User(prompts::format_user(
                    zh,
                    &question,
                    &summary.answer,
                    &summary.reasoning,
                    &evidence,
                    &tool_output(&registry, &numbers, self.env.snippet_chars),
                )),
            ],
            context: AnswerContext { question, sources },
            ..ChatRequest::default()
        };
        self.turn.status(Some(Status::Generating)).await?;
        let reply = self.turn.stream_model(request, true).await?;
        match reply.error {
            Some(error) => self.turn.model_failed(&error).await,
            None => Ok(()),
        }
    }
}

/// How many of the sources found a guess rests on when no evidence names any.
const GUESS_SOURCES: usize = 8;

/// What a step of the loop decided.
enum Step<T> {
    Go(T),
    Stop(StopReason),
    /// A model step failed; the answer carries the error.
    Failed,
}

/// `**结论**：X（置信度：高）` (or English for English questions), then a blank line.
fn conclusion_line(zh: bool, answer: &str, confidence: Reliability) -> String {
    let confidence = match (confidence, zh) {
        (Reliability::High, true) => "高",
        (Reliability::Medium, true) => "中",
        (Reliability::Low, true) => "低",
        (Reliability::High, false) => "high",
        (Reliability::Medium, false) => "medium",
        (Reliability::Low, false) => "low",
    };
    if zh {
        format!("**结论**：{answer}（置信度：{confidence}）\n\n")
    } else {
        format!("**Conclusion**: {answer} (confidence: {confidence})\n\n")
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
    let share = crate::model::SupportShare::of(&exchange.alignments);
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
        "coverage": exchange.coverage.map(|c| serde_json::json!({
            "cited": c.cited,
            "claims": c.claims,
            "added": c.added,
            "percent": c.percent(),
        })),
        "usage": exchange.usage.as_ref().map(|u| serde_json::json!({
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
            "total_tokens": u.total(),
            "calls": u.calls,
            "estimated": u.estimated,
            "cost": u.cost(),
        })),
        "reasoning": exchange.reasoning,
        "unsearched": exchange.unsearched,
        "support": serde_json::json!({
            "checked": share.checked,
            "supported": share.supported,
            "partial": share.partial,
            "not_checked": share.not_checked,
            "percent": share.percent(),
        }),
        "alignments": exchange.alignments,
        "claims": exchange.claims,
    })
}

#[tracing::instrument(skip_all, fields(answer = turn.input().id))]
pub async fn run(turn: &mut Turn) -> Result<(), Halted> {
    let max_loops = u32::try_from(turn.state().config.research.max_loops).unwrap_or(u32::MAX);
    // The plan exists from the start, so even a stop before the first loop is recorded.
    *turn.plan_mut() = ResearchPlan {
        max_loops,
        ..ResearchPlan::default()
    };
    let state_deadline = turn.state().config.research.deadline;
    let searcher = turn.searcher().await?;
    let question = turn.input().question.clone();
    let images = turn.find_images(&searcher, &question).await;
    turn.images(images).await?;
    let state = turn.state();
    let lang = turn.input().lang;
    let thinker: Arc<dyn Thinker> = match turn.llm().kind() {
        ModelKind::Extractive => Arc::new(OfflineThinker),
        ModelKind::Remote => Arc::new(ModelThinker {
            llm: Arc::clone(turn.llm()),
            snippet_chars: state.config.research.snippet_chars,
            limits: state.config.limits.clone(),
            meter: Arc::clone(turn.meter()),
            lang,
        }),
    };
    let env = Arc::new(Env {
        thinker: Arc::clone(&thinker),
        searcher,
        fetch: Arc::clone(&state.fetch),
        research: state.config.research.clone(),
        snippet_chars: state.config.research.snippet_chars,
        lang,
        question,
        redactor: crate::ssr::config::Redactor::of(&state.config),
    });
    let mut run = Run {
        turn,
        thinker,
        env,
        completed: Vec::new(),
        pruned: Vec::new(),
        candidates: Vec::new(),
        chain: String::new(),
        next_id: 0,
        deadline: Instant::now() + state_deadline,
        cut: Vec::new(),
    };
    let outcome = match run.research().await {
        Ok(Some(stop)) => {
            tracing::info!(
                ?stop,
                loops = run.plan().loops.len(),
                "research: loops done"
            );
            run.plan().stop = Some(stop);
            run.send_plan().await?;
            if stop == StopReason::Deadline {
                let t = run.turn.texts();
                let list = if run.cut.is_empty() {
                    t.research_step_plan.to_string()
                } else {
                    run.cut.join(if run.turn.lang() == Lang::ZhCn {
                        "、"
                    } else {
                        ", "
                    })
                };
                let text = t
                    .research_deadline
                    .replace("{secs}", &state_deadline.as_secs().to_string())
                    .replace("{cut}", &list);
                run.turn.notice(Level::Warning, text).await?;
            }
            run.conclude().await
        }
        Ok(None) => Ok(()),
        Err(Halted) => Err(Halted),
    };
    // `Turn::finish` marks a stopped plan and sends it.
    outcome
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
