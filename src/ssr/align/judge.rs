//! The model as the judge of citations (`CITED_CHECK=model`): after the answer, one call
//! (to the fast model when there is one) labels every cited (sentence, passages) pair
//! supported, partial or unsupported and quotes the span of the passages its verdict rests
//! on. A quote the source does not hold word for word voids that verdict: the offline
//! checker's stands. So does an unreadable reply, a cut one, or none before the deadline.

use std::time::Duration;

use serde_json::{json, Value};

use crate::model::Support;
use crate::ssr::llm::reply::{stream_reply, Collect, Meter};
use crate::ssr::llm::{CallKind, ChatModel, ChatRequest, LlmError, Message, ModelLimits, Schema};

/// The most characters of source text shown for one citation.
const CONTEXT_CHARS: usize = 900;

/// The longest quote the schema allows.
const QUOTE_CHARS: usize = 200;

/// One citation to judge: the sentence, the source's text, and where the offline checker
/// found the best passage in it (byte range).
#[derive(Debug, Clone)]
pub struct Case {
    pub sentence: String,
    pub source: String,
    pub passage: (usize, usize),
}

/// The model's verdict on one case, its quote found in the source.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub support: Support,
    /// Where the quote stands in the source text (byte range).
    pub quote: (usize, usize),
}

/// What the judge's reply gave: one entry per case (`None`: no usable verdict).
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub verdicts: Vec<Option<Verdict>>,
    /// Verdicts dropped because their quote is not in the source.
    pub voided: usize,
}

/// The text shown for a case: its passage with what surrounds it, up to
/// [`CONTEXT_CHARS`], cut at character boundaries.
pub fn context(case: &Case) -> &str {
    let text = &case.source;
    let (from, to) = case.passage;
    let (from, to) = (from.min(text.len()), to.min(text.len()));
    let room = CONTEXT_CHARS.saturating_sub(text[from..to].chars().count()) / 2;
    let start = text[..from]
        .char_indices()
        .rev()
        .nth(room.saturating_sub(1))
        .map_or(0, |(i, _)| i);
    let end = text[to..]
        .char_indices()
        .nth(room)
        .map_or(text.len(), |(i, _)| to + i);
    let (start, end) = if room == 0 { (from, to) } else { (start, end) };
    &text[start..end]
}

const SYSTEM: &str = "You check the citations of an answer. Each item has a CLAIM (a sentence of the answer) and the PASSAGES of the source it cites; they may be in different languages (Chinese and English): judge the meaning, not the words. For each item decide: \"supported\" when the passages state all of the claim; \"partial\" when they state part of it and the rest is absent; \"unsupported\" when they contradict it (another number, name, date, the opposite statement, a reversed comparison) or do not state it at all. Copy into \"quote\" the shortest span of the passages your verdict rests on, character for character (for \"unsupported\", the span that contradicts the claim, or the closest span). Reply with JSON only: {\"verdicts\":[{\"id\":1,\"verdict\":\"supported\",\"quote\":\"...\"}]}, one entry per item.";

/// The request for `cases`.
pub fn request(cases: &[Case], limits: &ModelLimits, deadline: Duration) -> ChatRequest {
    let mut user = String::new();
    for (i, case) in cases.iter().enumerate() {
        user.push_str(&format!(
            "[{}]\nCLAIM: {}\nPASSAGES: {}\n\n",
            i + 1,
            case.sentence.trim(),
            context(case).trim()
        ));
    }
    // One verdict per case and a short quote each: a server that enforces the schema
    // (llama.cpp, vLLM) then cannot let a small model ramble past its token budget.
    let schema = json!({
        "type": "object",
        "properties": {
            "verdicts": {
                "type": "array",
                "minItems": cases.len(),
                "maxItems": cases.len(),
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "integer"},
                        "verdict": {"type": "string", "enum": ["supported", "partial", "unsupported"]},
                        "quote": {"type": "string", "maxLength": QUOTE_CHARS}
                    },
                    "required": ["id", "verdict", "quote"]
                }
            }
        },
        "required": ["verdicts"]
    });
    // A verdict and a short quote each: a model that rambles is cut, not waited for.
    let room = u32::try_from(64 + 96 * cases.len()).unwrap_or(u32::MAX);
    ChatRequest {
        schema: Some(Schema {
            name: "citation_verdicts",
            schema,
        }),
        max_tokens: Some(room.min(limits.max_tokens(CallKind::Check))),
        deadline: Some(deadline.min(limits.call_deadline)),
        ..ChatRequest::bounded(
            vec![Message::System(SYSTEM.to_string()), Message::User(user)],
            CallKind::Check,
            limits,
        )
    }
}

/// Whitespace collapsed to single spaces, with the byte offset in `text` of each kept char.
fn squeezed(text: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(text.len());
    let mut offsets = Vec::with_capacity(text.len());
    let mut space = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            offsets.push(i);
            space = false;
        }
        let start = out.len();
        out.push(c);
        offsets.extend(std::iter::repeat_n(i, out.len() - start));
    }
    (out, offsets)
}

/// Where `quote` stands in `source`, word for word (whitespace aside); `None` when it does
/// not, or is empty.
pub fn find_quote(source: &str, quote: &str) -> Option<(usize, usize)> {
    let (quote, _) = squeezed(quote.trim().trim_matches(['"', '“', '”', '「', '」']));
    if quote.is_empty() {
        return None;
    }
    let (text, offsets) = squeezed(source);
    let at = text.find(&quote)?;
    let start = offsets[at];
    let last = offsets[at + quote.len() - 1];
    let end = last + source[last..].chars().next().map_or(1, char::len_utf8);
    Some((start, end))
}

/// Reads the model's reply: a verdict per case whose quote the case's source holds.
pub fn read(reply: &str, cases: &[Case]) -> Option<Judged> {
    let value: Value = crate::ssr::tolerant::parse_value(reply).ok()?;
    let list = value.get("verdicts")?.as_array()?;
    let mut verdicts = vec![None; cases.len()];
    let mut voided = 0;
    for (position, item) in list.iter().enumerate() {
        let id = item
            .get("id")
            .and_then(Value::as_u64)
            .and_then(|id| usize::try_from(id).ok())
            .unwrap_or(position + 1);
        let Some(case) = id.checked_sub(1).and_then(|i| cases.get(i)) else {
            continue;
        };
        let support = match item.get("verdict").and_then(Value::as_str).map(str::trim) {
            Some("supported") => Support::Supported,
            Some("partial") => Support::Partial,
            Some("unsupported") => Support::NotFound,
            _ => continue,
        };
        let quote = item.get("quote").and_then(Value::as_str).unwrap_or("");
        match find_quote(&case.source, quote) {
            Some(quote) => verdicts[id - 1] = Some(Verdict { support, quote }),
            None => voided += 1,
        }
    }
    Some(Judged { verdicts, voided })
}

/// Asks `llm` to judge `cases` in one call, within `deadline`. A model whose context the
/// call overflows (a small local one: Chinese pages cost many tokens) is asked again with
/// each half, and so on down to one case, all within the same deadline. `None` when no call
/// gave a readable reply (it failed, was cut, or ran out of time): the offline verdicts
/// stand; a part the model could not judge keeps them too.
pub async fn judge(
    llm: &dyn ChatModel,
    limits: &ModelLimits,
    cases: &[Case],
    deadline: Duration,
    meter: Option<&Meter>,
) -> Option<Judged> {
    if cases.is_empty() {
        return Some(Judged {
            verdicts: Vec::new(),
            voided: 0,
        });
    }
    let end = tokio::time::Instant::now() + deadline;
    let mut judged = Judged {
        verdicts: vec![None; cases.len()],
        voided: 0,
    };
    let mut answered = false;
    // Ranges of `cases` still to ask, the next on top.
    let mut pending = vec![(0, cases.len())];
    while let Some((from, to)) = pending.pop() {
        let left = end.saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() {
            break;
        }
        match judge_once(llm, limits, &cases[from..to], left, meter).await {
            Ok(part) => {
                answered = true;
                judged.voided += part.voided;
                for (i, verdict) in part.verdicts.into_iter().enumerate() {
                    judged.verdicts[from + i] = verdict;
                }
            }
            Err(Some(LlmError::ContextTooLong { .. })) if to - from > 1 => {
                let middle = from + (to - from) / 2;
                pending.push((middle, to));
                pending.push((from, middle));
            }
            Err(_) => {}
        }
    }
    answered.then_some(judged)
}

/// One call judging `cases`: the reply read, or why not (`Some` the model's error; `None`
/// past the deadline, cut, or unreadable).
async fn judge_once(
    llm: &dyn ChatModel,
    limits: &ModelLimits,
    cases: &[Case],
    deadline: Duration,
    meter: Option<&Meter>,
) -> Result<Judged, Option<LlmError>> {
    let request = request(cases, limits, deadline);
    let mut sink = Collect { meter };
    let reply = tokio::time::timeout(deadline, stream_reply(llm, request, &mut sink))
        .await
        .map_err(|_| None)?
        // The sink never halts.
        .map_err(|_| None)?;
    if let Some(meter) = meter {
        meter.add(&reply);
    }
    if let Some(error) = reply.error {
        tracing::info!(%error, cases = cases.len(), "the citation judge failed; the offline check stands");
        return Err(Some(error));
    }
    if reply.cut.is_some() {
        tracing::info!(cut = ?reply.cut, "the citation judge's reply was cut; the offline check stands");
        return Err(None);
    }
    read(&reply.text, cases).ok_or_else(|| {
        tracing::info!("the citation judge's reply could not be read; the offline check stands");
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ssr::testing::{first_user, Model, Reply};

    fn case(sentence: &str, source: &str) -> Case {
        Case {
            sentence: sentence.into(),
            source: source.into(),
            passage: (0, source.len()),
        }
    }

    #[test]
    fn a_quote_is_found_whatever_its_spacing_and_nowhere_else() {
        let source = "Robusta beans contain about\n  twice the caffeine of arabica. 咖啡 好喝。";
        let (from, to) = find_quote(source, "about twice the caffeine").unwrap();
        assert_eq!(&source[from..to], "about\n  twice the caffeine");
        let (from, to) = find_quote(source, "“咖啡 好喝”").unwrap();
        assert_eq!(&source[from..to], "咖啡 好喝");
        assert_eq!(find_quote(source, "thrice the caffeine"), None);
        assert_eq!(find_quote(source, "  "), None);
    }

    #[test]
    fn verdicts_need_a_quote_from_their_own_source() {
        let cases = [
            case("A", "Robusta has twice the caffeine of arabica."),
            case("B", "The tower is 330 m tall."),
        ];
        let reply = r#"```json
{"verdicts":[{"id":1,"verdict":"supported","quote":"twice the caffeine"},
 {"id":2,"verdict":"unsupported","quote":"twice the caffeine"}]}
```"#;
        let judged = read(reply, &cases).unwrap();
        assert_eq!(judged.voided, 1);
        assert_eq!(
            judged.verdicts[0].as_ref().map(|v| v.support),
            Some(Support::Supported)
        );
        assert_eq!(judged.verdicts[1], None);
        assert_eq!(read("no json here", &cases), None);
        let odd = read(r#"{"verdicts":[{"id":9,"verdict":"supported","quote":"x"},{"id":1,"verdict":"maybe","quote":"twice"}]}"#, &cases).unwrap();
        assert_eq!(odd.verdicts, vec![None, None]);
    }

    /// A model with room for two cases a call: it refuses more as llama.cpp does.
    fn small_model() -> std::sync::Arc<Model> {
        Model::new(|request| {
            let asked = first_user(request).matches("CLAIM: ").count();
            if asked > 2 {
                return Reply::refuse(LlmError::ContextTooLong {
                    message: "request exceeds the available context size".into(),
                });
            }
            let verdicts: Vec<Value> = (1..=asked)
                .map(|id| json!({"id": id, "verdict": "supported", "quote": "caffeine"}))
                .collect();
            Reply::text(json!({ "verdicts": verdicts }).to_string())
        })
    }

    #[tokio::test(start_paused = true)]
    async fn a_batch_too_long_for_the_model_is_judged_in_halves() {
        let cases: Vec<Case> = (0..5)
            .map(|i| case(&format!("claim {i}"), "Robusta has twice the caffeine."))
            .collect();
        let model = small_model();
        let limits = ModelLimits::default();
        let judged = judge(
            model.as_ref(),
            &limits,
            &cases,
            Duration::from_secs(30),
            None,
        )
        .await
        .expect("judged");
        assert!(
            judged
                .verdicts
                .iter()
                .all(|v| v.as_ref().is_some_and(|v| v.support == Support::Supported)),
            "{judged:?}"
        );
        // 5 refused, 2 answered, 3 refused, then 1 and 2 answered.
        assert_eq!(model.requests().len(), 5);
        // One case the model cannot take is no verdict, the rest are.
        let too_long = Model::new(|_| {
            Reply::refuse(LlmError::ContextTooLong {
                message: "too long".into(),
            })
        });
        assert_eq!(
            judge(
                too_long.as_ref(),
                &limits,
                &cases[..1],
                Duration::from_secs(30),
                None
            )
            .await,
            None
        );
        assert_eq!(too_long.requests().len(), 1, "one case is not split");
    }

    #[test]
    fn the_context_keeps_the_passage_and_some_of_its_surroundings() {
        let source = format!(
            "{}Target sentence here.{}",
            "前".repeat(2000),
            "后".repeat(2000)
        );
        let start = source.find("Target").unwrap();
        let case = Case {
            sentence: "s".into(),
            source: source.clone(),
            passage: (start, start + "Target sentence here.".len()),
        };
        let shown = context(&case);
        assert!(shown.contains("Target sentence here."));
        assert!(
            shown.chars().count() <= CONTEXT_CHARS + 1,
            "{}",
            shown.chars().count()
        );
        assert!(shown.starts_with('前') && shown.ends_with('后'));
    }
}
