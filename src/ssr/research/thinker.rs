//! The thinking steps of Research mode behind one interface, [`Thinker`]:
//!
//! - [`ModelThinker`] asks the language model for JSON and reads it tolerantly (seed 004's
//!   10th change): the reply is cleaned and repaired by [`crate::ssr::tolerant`], then read
//!   field by field with lenient types (`"充分"` for `true`, `"85%"` for high, `"[3]"` for 3).
//!   A reply that still cannot be read is shown its error once; after that the step falls
//!   back to a typed default, so a confused model degrades the research, never stops it.
//! - [`OfflineThinker`] needs no model: the question's clauses are the plan, and evidence
//!   and conclusions are the best-matching sentences of the sources (BM25).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::citation::CitationEntry;
use crate::i18n::Texts;
use crate::model::Lang;
use crate::model::Reliability;
use crate::ssr::llm::extractive;
use crate::ssr::llm::reply::{cut_text, stream_reply, Collect, Cut, Meter};
use crate::ssr::llm::{CallKind, ChatModel, ChatRequest, LlmError, Message, ModelLimits, Schema};
use crate::ssr::prompts::research as prompts;
use crate::ssr::prompts::research::PlanContext;
use crate::ssr::tolerant;
use crate::text::has_han;

/// A sub-question as the planner proposed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub question: String,
    pub query: String,
    /// Chinese sources (`true`) or English ones.
    pub zh: bool,
}

/// Where a candidate answer stands after a branch's reflection (seed 004: ✓ / ✗ / ?).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CandidateStatus {
    /// ✓: checked against the constraints.
    Verified,
    /// ✗: ruled out.
    Excluded,
    /// ?: still to check; the next plan asks about it.
    Unverified,
}

impl CandidateStatus {
    /// The mark the prompts use.
    pub fn mark(self) -> char {
        match self {
            CandidateStatus::Verified => '✓',
            CandidateStatus::Excluded => '✗',
            CandidateStatus::Unverified => '?',
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub name: String,
    pub status: CandidateStatus,
}

/// Why a model's JSON reply could not be read as what a step asked for; shown to the model
/// in its one retry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Json(String),
    #[error("the object has no {0} array")]
    Missing(&'static str),
    #[error("{0} must be an array")]
    NotArray(&'static str),
    #[error("expected a JSON object")]
    NotObject,
    #[error("{0} is missing or empty")]
    Empty(&'static str),
    #[error("sufficient must be true or false")]
    NotYesNo,
    #[error("{field} is \"{value}\", the example from the instructions; write the real {field}")]
    Placeholder { field: &'static str, value: String },
    #[error("the query \"{query}\" contains \"{word}\", a reference the search engine cannot resolve; name the entity instead")]
    Reference { query: String, word: &'static str },
}

/// What a branch's reflect step found in its search results (numbers are branch-local).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reflection {
    pub relevant: Vec<u32>,
    pub entities: Vec<String>,
    pub multi_anchor_hits: Vec<u32>,
    pub candidates: Vec<Candidate>,
    pub deductions: Vec<String>,
    /// Entity names to check in an encyclopedia (at most two are used).
    pub encyclopedia: Vec<String>,
    /// Results to read in full.
    pub deep_read: Vec<u32>,
    pub notes: String,
}

impl Reflection {
    /// The reflection as the evidence step reads it.
    pub fn describe(&self) -> String {
        let numbers = |list: &[u32]| {
            list.iter()
                .map(|n| format!("[{n}]"))
                .collect::<Vec<_>>()
                .join("")
        };
        let mut lines = Vec::new();
        if !self.relevant.is_empty() {
            lines.push(format!("relevant: {}", numbers(&self.relevant)));
        }
        if !self.entities.is_empty() {
            lines.push(format!("entities: {}", self.entities.join(", ")));
        }
        if !self.multi_anchor_hits.is_empty() {
            lines.push(format!(
                "multi-anchor hits: {}",
                numbers(&self.multi_anchor_hits)
            ));
        }
        if !self.candidates.is_empty() {
            let candidates: Vec<String> = self
                .candidates
                .iter()
                .map(|c| format!("{} {}", c.status.mark(), c.name))
                .collect();
            lines.push(format!("candidates: {}", candidates.join(", ")));
        }
        lines.extend(self.deductions.iter().cloned());
        if !self.notes.trim().is_empty() {
            lines.push(self.notes.trim().to_string());
        }
        lines.join("\n")
    }
}

/// An evidence statement before its numbers are checked and made global.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft {
    pub statement: String,
    pub reliability: Reliability,
    /// Branch-local numbers, as the model wrote them (unchecked).
    pub numbers: Vec<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judgement {
    pub sufficient: bool,
    pub chain: String,
    /// What evidence is still missing, when not sufficient.
    pub missing: String,
    pub prune: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub answer: String,
    pub confidence: Reliability,
    pub reasoning: String,
}

/// A branch's material: its numbered sources (search, encyclopedia) and pages read in full.
pub struct Material<'a> {
    pub sources: &'a [Arc<CitationEntry>],
    /// (local number, readable text) of deep-read pages.
    pub pages: &'a [(u32, String)],
}

impl Material<'_> {
    pub fn describe(&self, snippet_chars: usize) -> String {
        let mut text = String::new();
        for entry in self.sources {
            text.push_str(&format!(
                "[{}] {} - {}\n{}\n",
                entry.number,
                entry.title,
                entry.url,
                crate::citation::prompt::truncate_chars(&entry.snippet, snippet_chars)
            ));
        }
        for (number, page) in self.pages {
            text.push_str(&format!("\n[{number}] (full text)\n{page}\n"));
        }
        text
    }
}

/// The steps of one research answer that need judgement.
#[async_trait]
pub trait Thinker: Send + Sync {
    async fn plan(&self, context: &PlanContext<'_>) -> Result<Vec<Planned>, LlmError>;
    async fn reflect(
        &self,
        question: &str,
        sub_question: &str,
        material: &Material<'_>,
    ) -> Result<Reflection, LlmError>;
    async fn evidence(
        &self,
        question: &str,
        sub_question: &str,
        reflection: &Reflection,
        material: &Material<'_>,
    ) -> Result<Draft, LlmError>;
    async fn verify(&self, question: &str, evidence: &[String]) -> Result<Judgement, LlmError>;
    async fn summarise(
        &self,
        question: &str,
        chain: &str,
        evidence: &[String],
        sources: &[Arc<CitationEntry>],
    ) -> Result<Summary, LlmError>;
}

/// The thinker for a configured language model.
pub struct ModelThinker {
    pub llm: Arc<dyn ChatModel>,
    /// Characters of a search snippet shown to the model.
    pub snippet_chars: usize,
    pub limits: ModelLimits,
    /// The answer's meter: every call's pieces and tokens, and what to tell the user.
    pub meter: Arc<Meter>,
    /// The UI language, for what the meter notes.
    pub lang: Lang,
}

/// One kind of thinker call: its name in logs, its `max_tokens`, its schema, and its name
/// in the notices.
struct Call {
    step: &'static str,
    kind: CallKind,
    schema: Schema,
    shown: fn(&Texts) -> &'static str,
}

impl ModelThinker {
    /// The whole text of one completion, bounded like every call of its kind and with a
    /// schema where the server enforces one. A cut reply is noted for the user.
    async fn complete(
        &self,
        messages: Vec<Message>,
        call: &Call,
    ) -> Result<(String, Option<Cut>), LlmError> {
        let request = ChatRequest {
            schema: Some(call.schema.clone()),
            ..ChatRequest::bounded(messages, call.kind, &self.limits)
        };
        let max_tokens = request.max_tokens;
        // `Collect` never halts: a stopped answer aborts its branches as a whole.
        let mut sink = Collect {
            meter: Some(&self.meter),
        };
        let reply = stream_reply(self.llm.as_ref(), request, &mut sink)
            .await
            .unwrap_or_default();
        self.meter.add(&reply);
        if let Some(cut) = reply.cut {
            tracing::warn!(
                step = call.step,
                ?cut,
                "research: the model's reply was cut"
            );
            let t = self.lang.texts();
            let why = cut_text(t, cut, max_tokens, call.kind);
            self.meter.note(
                t.research_step_cut
                    .replace("{step}", (call.shown)(t))
                    .replace("{why}", &why),
            );
        }
        match reply.error {
            Some(error) => Err(error),
            None => Ok((reply.text, reply.cut)),
        }
    }

    /// Asks for JSON and reads it with `read`; on failure shows the model the error once,
    /// then returns `fallback` and notes that the step degraded.
    async fn ask<T>(
        &self,
        call: Call,
        zh: bool,
        system: String,
        user: String,
        read: impl Fn(&Value) -> Result<T, ReadError> + Send + Sync,
        fallback: impl FnOnce() -> T + Send,
    ) -> Result<T, LlmError>
    where
        T: Send,
    {
        let step = call.step;
        let mut messages = vec![Message::System(system), Message::User(user)];
        let (reply, cut) = self.complete(messages.clone(), &call).await?;
        let error = match tolerant::parse_value(&reply)
            .map_err(|error| ReadError::Json(error.to_string()))
            .and_then(|value| read(&value))
        {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        if matches!(cut, Some(Cut::Deadline(_))) {
            // A retry would wait as long again: degrade now.
            tracing::warn!(step, %error, "research: reply cut at its deadline; using the fallback");
            let t = self.lang.texts();
            self.meter
                .note(t.research_degraded.replace("{step}", (call.shown)(t)));
            return Ok(fallback());
        }
        tracing::warn!(step, %error, "research: unreadable model reply; asking once more");
        messages.push(Message::assistant(reply));
        messages.push(Message::User(prompts::retry(zh, &error.to_string())));
        let (reply, _) = self.complete(messages, &call).await?;
        match tolerant::parse_value(&reply)
            .map_err(|error| ReadError::Json(error.to_string()))
            .and_then(|value| read(&value))
        {
            Ok(value) => Ok(value),
            Err(error) => {
                tracing::warn!(step, %error, "research: unreadable model reply again; using the fallback");
                let t = self.lang.texts();
                self.meter
                    .note(t.research_degraded.replace("{step}", (call.shown)(t)));
                Ok(fallback())
            }
        }
    }
}

#[async_trait]
impl Thinker for ModelThinker {
    async fn plan(&self, context: &PlanContext<'_>) -> Result<Vec<Planned>, LlmError> {
        let zh = has_han(context.question);
        let question = context.question.to_string();
        let first_loop = context.loop_number == 1;
        self.ask(
            Call {
                step: "plan",
                kind: CallKind::Plan,
                schema: prompts::schemas::plan(),
                shown: |t| t.research_step_plan,
            },
            zh,
            prompts::plan_system(zh),
            prompts::plan_user(zh, context),
            read_plan,
            // Unreadable twice: research the question itself first; later, stop planning.
            move || {
                if first_loop {
                    vec![Planned {
                        query: question.clone(),
                        zh: has_han(&question),
                        question,
                    }]
                } else {
                    Vec::new()
                }
            },
        )
        .await
    }

    async fn reflect(
        &self,
        question: &str,
        sub_question: &str,
        material: &Material<'_>,
    ) -> Result<Reflection, LlmError> {
        let zh = has_han(question);
        self.ask(
            Call {
                step: "reflect",
                kind: CallKind::Branch,
                schema: prompts::schemas::reflection(),
                shown: |t| t.research_step_reflect,
            },
            zh,
            prompts::reflect_system(zh),
            prompts::reflect_user(
                zh,
                question,
                sub_question,
                &material.describe(self.snippet_chars),
            ),
            read_reflection,
            Reflection::default,
        )
        .await
    }

    async fn evidence(
        &self,
        question: &str,
        sub_question: &str,
        reflection: &Reflection,
        material: &Material<'_>,
    ) -> Result<Draft, LlmError> {
        let zh = has_han(question);
        let fallback = offline_evidence(sub_question, material.sources);
        self.ask(
            Call {
                step: "evidence",
                kind: CallKind::Branch,
                schema: prompts::schemas::evidence(),
                shown: |t| t.research_step_evidence,
            },
            zh,
            prompts::evidence_system(zh),
            prompts::evidence_user(
                zh,
                question,
                sub_question,
                &reflection.describe(),
                &material.describe(self.snippet_chars),
            ),
            read_evidence,
            move || fallback,
        )
        .await
    }

    async fn verify(&self, question: &str, evidence: &[String]) -> Result<Judgement, LlmError> {
        let zh = has_han(question);
        self.ask(
            Call {
                step: "verify",
                kind: CallKind::Verify,
                schema: prompts::schemas::verdict(),
                shown: |t| t.research_step_verify,
            },
            zh,
            prompts::verify_system(zh),
            prompts::chain_user(zh, question, None, evidence),
            read_judgement,
            // Unreadable twice: assume sufficient, so a confused verifier cannot loop.
            || Judgement {
                sufficient: true,
                ..Judgement::default()
            },
        )
        .await
    }

    async fn summarise(
        &self,
        question: &str,
        chain: &str,
        evidence: &[String],
        sources: &[Arc<CitationEntry>],
    ) -> Result<Summary, LlmError> {
        let zh = has_han(question);
        let fallback = offline_summary(question, sources);
        self.ask(
            Call {
                step: "summary",
                kind: CallKind::Verify,
                schema: prompts::schemas::summary(),
                shown: |t| t.research_step_summary,
            },
            zh,
            prompts::summary_system(zh),
            prompts::chain_user(zh, question, Some(chain), evidence),
            read_summary,
            move || fallback,
        )
        .await
    }
}

/// Research without a model: clauses as sub-questions, best sentences as evidence.
pub struct OfflineThinker;

#[async_trait]
impl Thinker for OfflineThinker {
    async fn plan(&self, context: &PlanContext<'_>) -> Result<Vec<Planned>, LlmError> {
        if context.loop_number > 1 {
            return Ok(Vec::new());
        }
        Ok(extractive::clauses(context.question)
            .into_iter()
            .map(|clause| Planned {
                zh: has_han(&clause),
                query: clause.clone(),
                question: clause,
            })
            .collect())
    }

    async fn reflect(
        &self,
        _question: &str,
        _sub_question: &str,
        _material: &Material<'_>,
    ) -> Result<Reflection, LlmError> {
        Ok(Reflection::default())
    }

    async fn evidence(
        &self,
        _question: &str,
        sub_question: &str,
        _reflection: &Reflection,
        material: &Material<'_>,
    ) -> Result<Draft, LlmError> {
        Ok(offline_evidence(sub_question, material.sources))
    }

    async fn verify(&self, _question: &str, evidence: &[String]) -> Result<Judgement, LlmError> {
        Ok(Judgement {
            sufficient: !evidence.is_empty(),
            chain: evidence.join(" → "),
            missing: String::new(),
            prune: Vec::new(),
        })
    }

    async fn summarise(
        &self,
        question: &str,
        _chain: &str,
        _evidence: &[String],
        sources: &[Arc<CitationEntry>],
    ) -> Result<Summary, LlmError> {
        Ok(offline_summary(question, sources))
    }
}

/// The best-matching sentences for `sub_question`, as an evidence statement.
fn offline_evidence(sub_question: &str, sources: &[Arc<CitationEntry>]) -> Draft {
    let extract = extractive::answer(sub_question, sources);
    let statement = strip_markers(&extract.text);
    let reliability = if extract.cited.is_empty() {
        Reliability::Low
    } else {
        Reliability::Medium
    };
    Draft {
        statement,
        reliability,
        numbers: extract.cited,
    }
}

/// The best sentence for the question as the conclusion; offline answers are never sure.
fn offline_summary(question: &str, sources: &[Arc<CitationEntry>]) -> Summary {
    let extract = extractive::answer(question, sources);
    let text = strip_markers(&extract.text);
    let answer = extractive::sentences(&text)
        .first()
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    Summary {
        answer,
        confidence: Reliability::Low,
        reasoning: extract.text,
    }
}

/// `text` without its citation markers, whitespace tidied.
pub fn strip_markers(text: &str) -> String {
    crate::citation::markers::strip(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

// ---- Lenient readers: each takes the parsed object and returns the typed step output, or
// ---- a message the model can act on.

fn field<'a>(value: &'a Value, names: &[&str]) -> Option<&'a Value> {
    names.iter().find_map(|name| value.get(*name))
}

/// A string, or a number or bool written as one.
fn text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}

/// A list of strings; a single string counts as a list of one.
fn texts(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::Object(_) => text(field(item, &["name", "text", "direction"])),
                other => text(Some(other)),
            })
            .filter(|s| !s.is_empty())
            .collect(),
        Some(Value::String(s)) if !s.trim().is_empty() => vec![s.trim().to_string()],
        _ => Vec::new(),
    }
}

/// Numbers however written: `[1, 3]`, `["[1]", "3"]`, `"1, 3"`, `"[1][3]"`.
fn numbers(value: Option<&Value>) -> Vec<u32> {
    fn from_text(raw: &str, out: &mut Vec<u32>) {
        for part in raw.split(|c: char| !c.is_ascii_digit()) {
            if let Ok(n) = part.parse::<u32>() {
                out.push(n);
            }
        }
    }
    let mut out = Vec::new();
    match value {
        Some(Value::Array(items)) => {
            for item in items {
                match item {
                    Value::Number(n) => {
                        if let Some(n) = n.as_u64().and_then(|n| u32::try_from(n).ok()) {
                            out.push(n);
                        }
                    }
                    Value::String(s) => from_text(s, &mut out),
                    _ => {}
                }
            }
        }
        Some(Value::Number(n)) => {
            if let Some(n) = n.as_u64().and_then(|n| u32::try_from(n).ok()) {
                out.push(n);
            }
        }
        Some(Value::String(s)) => from_text(s, &mut out),
        _ => {}
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|n| seen.insert(*n));
    out
}

/// high/medium/low in English or Chinese, or a percentage.
pub fn reliability(value: Option<&Value>) -> Option<Reliability> {
    let raw = match value? {
        Value::Number(n) => {
            let n = n.as_f64()?;
            let percent = if n <= 1.0 { n * 100.0 } else { n };
            return Some(from_percent(percent));
        }
        other => text(Some(other)).to_lowercase(),
    };
    if let Some(percent) = raw
        .trim_end_matches('%')
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|_| raw.contains('%') || raw.chars().all(|c| c.is_ascii_digit() || c == '.'))
    {
        return Some(from_percent(percent));
    }
    if raw.contains("high") || raw.contains('高') {
        Some(Reliability::High)
    } else if raw.contains("medium") || raw.contains("mid") || raw.contains('中') {
        Some(Reliability::Medium)
    } else if raw.contains("low") || raw.contains('低') {
        Some(Reliability::Low)
    } else {
        None
    }
}

fn from_percent(percent: f64) -> Reliability {
    if percent >= 80.0 {
        Reliability::High
    } else if percent >= 50.0 {
        Reliability::Medium
    } else {
        Reliability::Low
    }
}

/// A yes/no however written: `true`, `"是"`, `"充分"`, `"不充分"`, `"insufficient"`,
/// `"yes, enough"`. English is matched by whole words, so "enough" is not a "no".
fn yes_no(value: Option<&Value>) -> Option<bool> {
    match value? {
        Value::Bool(b) => Some(*b),
        other => {
            let raw = text(Some(other)).to_lowercase();
            let words: Vec<&str> = raw
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| !w.is_empty())
                .collect();
            let has = |list: &[&str]| words.iter().any(|w| list.contains(w));
            if raw.contains('不')
                || raw.contains('否')
                || has(&["no", "not", "false", "insufficient"])
            {
                Some(false)
            } else if raw.contains("充分")
                || raw.contains('是')
                || has(&["yes", "true", "sufficient"])
            {
                Some(true)
            } else {
                None
            }
        }
    }
}

/// A word that makes a search query depend on context it does not have (这部, 该, 那个…),
/// if the query holds one. `该` counts only as a determiner, not inside 应该 or 活该.
pub fn reference_in(query: &str) -> Option<&'static str> {
    const WORDS: [&str; 9] = [
        "这部", "那部", "那个", "这个", "此片", "此书", "上述", "前者", "后者",
    ];
    if let Some(word) = WORDS.iter().find(|word| query.contains(**word)) {
        return Some(word);
    }
    let chars: Vec<char> = query.chars().collect();
    chars
        .iter()
        .enumerate()
        .any(|(i, c)| {
            *c == '该' && !matches!(i.checked_sub(1).map(|p| chars[p]), Some('应' | '活' | '本'))
        })
        .then_some("该")
}

pub fn read_plan(value: &Value) -> Result<Vec<Planned>, ReadError> {
    let items = match field(
        value,
        &["sub_questions", "subquestions", "questions", "子问题"],
    ) {
        Some(Value::Array(items)) => items,
        Some(_) => return Err(ReadError::NotArray("sub_questions")),
        None => return Err(ReadError::Missing("sub_questions")),
    };
    let mut planned = Vec::new();
    for item in items {
        let (question, query, language) = match item {
            Value::String(s) => (s.trim().to_string(), String::new(), String::new()),
            Value::Object(_) => (
                text(field(item, &["question", "sub_question", "子问题"])),
                text(field(item, &["query", "search_query", "查询"])),
                text(field(item, &["language", "lang", "语言"])).to_lowercase(),
            ),
            _ => continue,
        };
        let question = if question.is_empty() {
            query.clone()
        } else {
            question
        };
        if question.is_empty() {
            continue;
        }
        let query = if query.is_empty() {
            question.clone()
        } else {
            query
        };
        if let Some(word) = reference_in(&query) {
            return Err(ReadError::Reference { query, word });
        }
        not_placeholder("question", &question)?;
        not_placeholder("query", &query)?;
        let zh = match language.as_str() {
            l if l.starts_with("zh") || l.contains('中') => true,
            l if l.starts_with("en") || l.contains('英') => false,
            _ => has_han(&query),
        };
        planned.push(Planned {
            question,
            query,
            zh,
        });
    }
    Ok(planned)
}

pub fn read_reflection(value: &Value) -> Result<Reflection, ReadError> {
    if !value.is_object() {
        return Err(ReadError::NotObject);
    }
    let candidates = match field(value, &["candidates", "候选"]) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| {
                let (name, status) = match item {
                    Value::Object(_) => (
                        text(field(item, &["name", "candidate"])),
                        text(field(item, &["status", "state"])),
                    ),
                    other => (text(Some(other)), String::new()),
                };
                let status = if status.contains('✓')
                    || status.contains("verified")
                    || status.contains("已验证")
                {
                    CandidateStatus::Verified
                } else if status.contains('✗')
                    || status.contains("excluded")
                    || status.contains("排除")
                {
                    CandidateStatus::Excluded
                } else {
                    CandidateStatus::Unverified
                };
                (!name.is_empty()).then_some(Candidate { name, status })
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok(Reflection {
        relevant: numbers(field(value, &["relevant", "相关"])),
        entities: texts(field(value, &["entities", "实体"])),
        multi_anchor_hits: numbers(field(value, &["multi_anchor_hits", "多锚点命中"])),
        candidates,
        deductions: texts(field(value, &["deductions", "推测", "演绎推理"])),
        encyclopedia: texts(field(value, &["encyclopedia", "baike", "百科"])),
        deep_read: numbers(field(value, &["deep_read", "深读"])),
        notes: text(field(value, &["notes", "summary", "关键发现"])),
    })
}

/// A text field that must not be empty, nor the prompt's example; `what` names it in the
/// error.
fn required(value: &Value, names: &[&str], what: &'static str) -> Result<String, ReadError> {
    let found = text(field(value, names));
    if found.is_empty() {
        return Err(ReadError::Empty(what));
    }
    not_placeholder(what, &found)?;
    Ok(found)
}

/// Refuses a field that echoes the prompt's example value (`"exact answer"`), so the step
/// is asked again like an unreadable one.
fn not_placeholder(field: &'static str, value: &str) -> Result<(), ReadError> {
    if crate::ssr::prompts::research::is_placeholder(value) {
        return Err(ReadError::Placeholder {
            field,
            value: value.trim().to_string(),
        });
    }
    Ok(())
}

/// A reliability field; low when missing or unreadable.
fn reliability_or_low(value: &Value, names: &[&str]) -> Reliability {
    reliability(field(value, names)).unwrap_or(Reliability::Low)
}

pub fn read_evidence(value: &Value) -> Result<Draft, ReadError> {
    Ok(Draft {
        statement: required(
            value,
            &["statement", "evidence", "证据陈述", "证据"],
            "statement",
        )?,
        reliability: reliability_or_low(value, &["reliability", "可靠性"]),
        numbers: numbers(field(
            value,
            &["sources", "numbers", "source_numbers", "来源"],
        )),
    })
}

pub fn read_judgement(value: &Value) -> Result<Judgement, ReadError> {
    let sufficient = yes_no(field(
        value,
        &["sufficient", "is_sufficient", "充分性", "充分"],
    ))
    .ok_or(ReadError::NotYesNo)?;
    let chain = text(field(value, &["chain", "reasoning_chain", "推理链"]));
    not_placeholder("chain", &chain)?;
    let missing = text(field(value, &["missing", "gaps", "gap", "缺口", "尚缺"]));
    not_placeholder("missing", &missing)?;
    Ok(Judgement {
        sufficient,
        chain,
        missing,
        prune: texts(field(value, &["prune", "pruned", "剪枝"])),
    })
}

pub fn read_summary(value: &Value) -> Result<Summary, ReadError> {
    Ok(Summary {
        answer: required(
            value,
            &["answer", "conclusion", "结论", "最终答案"],
            "answer",
        )?,
        confidence: reliability_or_low(value, &["confidence", "置信度"]),
        reasoning: {
            let reasoning = text(field(value, &["reasoning", "explanation", "推导"]));
            not_placeholder("reasoning", &reasoning)?;
            reasoning
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_are_refused_in_queries() {
        assert_eq!(
            reference_in("这部动漫大陆国语版男主角的配音演员是谁？"),
            Some("这部")
        );
        assert_eq!(reference_in("该片的导演是谁"), Some("该"));
        assert_eq!(reference_in("应该如何配置 SearXNG"), None);
        assert_eq!(reference_in("《猫眼三姐妹》内海俊夫 配音"), None);
        let plan =
            json!({ "sub_questions": [{ "question": "这个人是谁", "query": "这个人是谁" }] });
        assert!(read_plan(&plan).unwrap_err().to_string().contains("这个"));
    }

    #[test]
    fn lenient_fields() {
        assert_eq!(
            numbers(Some(&json!([1, "[3]", "4, 5", 1]))),
            vec![1, 3, 4, 5]
        );
        assert_eq!(numbers(Some(&json!("[2][7]"))), vec![2, 7]);
        assert_eq!(numbers(Some(&json!(-1))), Vec::<u32>::new());
        for (raw, expected) in [
            (json!("high"), Some(Reliability::High)),
            (json!("高"), Some(Reliability::High)),
            (json!("中等"), Some(Reliability::Medium)),
            (json!("85%"), Some(Reliability::High)),
            (json!(0.6), Some(Reliability::Medium)),
            (json!("30"), Some(Reliability::Low)),
            (json!("unclear"), None),
        ] {
            assert_eq!(reliability(Some(&raw)), expected, "{raw}");
        }
        for (raw, expected) in [
            (json!(true), Some(true)),
            (json!("充分"), Some(true)),
            (json!("不充分"), Some(false)),
            (json!("insufficient"), Some(false)),
            (json!("是"), Some(true)),
            (json!("否"), Some(false)),
            (json!("maybe"), None),
            (json!("yes, enough"), Some(true)),
            (json!("not enough"), Some(false)),
        ] {
            assert_eq!(yes_no(Some(&raw)), expected, "{raw}");
        }
    }

    #[test]
    fn shapes_are_normalised() {
        let plan = json!({ "子问题": ["Rust async runtime", { "query": "tokio tutorial", "language": "en" }] });
        let planned = read_plan(&plan).unwrap();
        assert_eq!(planned.len(), 2);
        assert_eq!(planned[1].question, "tokio tutorial");
        assert!(!planned[1].zh);
        let verdict =
            read_judgement(&json!({ "充分性": "不充分", "剪枝": "搜索张欣 单独名字" })).unwrap();
        assert!(!verdict.sufficient);
        assert_eq!(verdict.prune, vec!["搜索张欣 单独名字"]);
        assert!(read_judgement(&json!({ "chain": "x" })).is_err());
        assert!(read_evidence(&json!({ "reliability": "high" })).is_err());
        let reflection = read_reflection(
            &json!({ "candidates": [{ "name": "张欣", "status": "✓ 已验证" }, "赵晴"] }),
        )
        .unwrap();
        assert_eq!(reflection.candidates[0].status, CandidateStatus::Verified);
        assert_eq!(reflection.candidates[1].status, CandidateStatus::Unverified);
    }
}
