//! Sans-IO assembly of a streamed chat completion: SSE `data` payloads in, [`ChatEvent`]s
//! out. Text deltas pass straight through; tool-call deltas are joined by their `index`
//! (arguments arrive as string fragments, split anywhere, even inside a UTF-8 character's
//! escape) and emitted once complete. Parsed leniently: `null`s, missing `index` (some
//! servers omit it for a single call), unknown fields and usage-only chunks are all fine.
//!
//! Reasoning models think out loud in two ways, and both become [`ChatEvent::Reasoning`],
//! never answer text: a `reasoning_content` (or `reasoning`) field beside `content`
//! (DeepSeek-R1, vLLM, llama.cpp), or a `<think>…</think>` block at the start of the
//! content (Qwen3, QwQ, R1 distills), split out by [`ThinkSplitter`] even when a tag is
//! cut across chunks.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::ssr::llm::{ChatEvent, FinishReason, LlmError, ToolCall, Usage};

#[derive(Debug, Default)]
pub struct DeltaAssembler {
    calls: BTreeMap<u32, PartialCall>,
    think: ThinkSplitter,
    finish_reason: Option<FinishReason>,
    usage: Option<Usage>,
    done: bool,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

impl DeltaAssembler {
    pub fn new() -> DeltaAssembler {
        DeltaAssembler::default()
    }

    /// True once `[DONE]` has been seen.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Handles one SSE `data` payload.
    pub fn push(&mut self, data: &str) -> Result<Vec<ChatEvent>, LlmError> {
        let data = data.trim();
        if data.is_empty() || self.done {
            return Ok(Vec::new());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(self.complete());
        }
        let chunk: Value =
            serde_json::from_str(data).map_err(|source| LlmError::Malformed { source })?;
        if let Some(error) = chunk.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| error.to_string());
            let status = error.get("code").and_then(Value::as_u64).unwrap_or(500) as u16;
            return Err(LlmError::Server { status, message });
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(Usage {
                prompt_tokens: usage
                    .get("prompt_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                completion_tokens: usage
                    .get("completion_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
            });
        }
        let mut events = Vec::new();
        let choices = chunk
            .get("choices")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        // Only the first choice: cited never asks for more than one.
        if let Some(choice) = choices
            .iter()
            .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        {
            let delta = choice.get("delta").or_else(|| choice.get("message"));
            if let Some(delta) = delta {
                // Some servers send both names with the same text: one is enough.
                let reasoning = ["reasoning_content", "reasoning"]
                    .iter()
                    .find_map(|field| delta.get(*field).and_then(Value::as_str));
                if let Some(text) = reasoning.filter(|text| !text.is_empty()) {
                    events.push(ChatEvent::Reasoning(text.to_string()));
                }
                if let Some(text) = delta.get("content").and_then(Value::as_str) {
                    self.think.push(text, &mut events);
                }
                if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                    for (position, call) in calls.iter().enumerate() {
                        self.push_call(position, call);
                    }
                }
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(FinishReason::parse(reason));
            }
        }
        Ok(events)
    }

    fn push_call(&mut self, position: usize, call: &Value) {
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        let index = match call.get("index").and_then(Value::as_u64) {
            Some(index) => u32::try_from(index).ok(),
            // No index: a new id starts a new call, otherwise it continues the last one.
            None => match (id, self.calls.last_key_value()) {
                (Some(id), Some((&last, partial))) if partial.id != id => last.checked_add(1),
                (_, Some((&last, _))) => Some(last),
                (_, None) => u32::try_from(position).ok(),
            },
        };
        // An index past u32 is nonsense from the server: drop that fragment.
        let Some(index) = index else {
            return;
        };
        let partial = self.calls.entry(index).or_default();
        if let Some(id) = id {
            partial.id = id.to_string();
        }
        if let Some(function) = call.get("function") {
            if let Some(name) = function.get("name").and_then(Value::as_str) {
                partial.name.push_str(name);
            }
            match function.get("arguments") {
                Some(Value::String(fragment)) => partial.arguments.push_str(fragment),
                // Some servers send the arguments as an object rather than a string.
                Some(object @ Value::Object(_)) => partial.arguments.push_str(&object.to_string()),
                _ => {}
            }
        }
    }

    /// The end of the stream. Without `[DONE]` the stream counts as complete only if the
    /// server already said why it finished; otherwise it was cut.
    pub fn finish(&mut self) -> Result<Vec<ChatEvent>, LlmError> {
        if self.done {
            return Ok(Vec::new());
        }
        if self.finish_reason.is_none() {
            return Err(LlmError::Truncated);
        }
        self.done = true;
        Ok(self.complete())
    }

    fn complete(&mut self) -> Vec<ChatEvent> {
        let mut events = Vec::new();
        self.think.finish(&mut events);
        let calls: Vec<ToolCall> = std::mem::take(&mut self.calls)
            .into_iter()
            .filter(|(_, partial)| !partial.name.is_empty())
            .map(|(index, partial)| ToolCall {
                index,
                id: if partial.id.is_empty() {
                    format!("call_{index}")
                } else {
                    partial.id
                },
                name: partial.name,
                arguments: partial.arguments,
            })
            .collect();
        if !calls.is_empty() {
            events.push(ChatEvent::ToolCalls(calls));
        }
        events.push(ChatEvent::Done {
            finish_reason: self.finish_reason.clone(),
            usage: self.usage,
        });
        events
    }
}

/// Splits `<think>…</think>` out of streamed content. The opening tag counts only before
/// any answer text (a model discussing the tag in its answer keeps it); a tag cut across
/// chunks is held back until the next chunk says what it is (never more than 7 bytes).
#[derive(Debug, Default)]
pub struct ThinkSplitter {
    inside: bool,
    /// Answer text other than whitespace has been emitted.
    answered: bool,
    pending: String,
}

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

impl ThinkSplitter {
    pub fn push(&mut self, piece: &str, out: &mut Vec<ChatEvent>) {
        self.pending.push_str(piece);
        loop {
            let tag = if self.inside { CLOSE } else { OPEN };
            if !self.inside && self.answered {
                let text = std::mem::take(&mut self.pending);
                self.emit(text, out);
                return;
            }
            if let Some(at) = self.pending.find(tag) {
                let before: String = self.pending.drain(..at).collect();
                if !self.inside && !before.trim().is_empty() {
                    // Text came first: this is an answer that mentions the tag.
                    self.emit(before, out);
                    continue;
                }
                self.emit(before, out);
                self.pending.drain(..tag.len());
                self.inside = !self.inside;
                continue;
            }
            let keep = (1..tag.len())
                .rev()
                .find(|&k| self.pending.ends_with(&tag[..k]))
                .unwrap_or(0);
            let cut = self.pending.len() - keep;
            let text: String = self.pending.drain(..cut).collect();
            self.emit(text, out);
            return;
        }
    }

    /// The end of the stream: whatever was held back is what it looked like.
    pub fn finish(&mut self, out: &mut Vec<ChatEvent>) {
        let text = std::mem::take(&mut self.pending);
        self.emit(text, out);
    }

    fn emit(&mut self, text: String, out: &mut Vec<ChatEvent>) {
        if text.is_empty() {
            return;
        }
        if self.inside {
            out.push(ChatEvent::Reasoning(text));
        } else {
            if !text.trim().is_empty() {
                self.answered = true;
            }
            out.push(ChatEvent::Text(text));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(pieces: &[&str]) -> (String, String) {
        let mut splitter = ThinkSplitter::default();
        let mut events = Vec::new();
        for piece in pieces {
            splitter.push(piece, &mut events);
        }
        splitter.finish(&mut events);
        let (mut text, mut reasoning) = (String::new(), String::new());
        for event in events {
            match event {
                ChatEvent::Text(t) => text.push_str(&t),
                ChatEvent::Reasoning(r) => reasoning.push_str(&r),
                other => panic!("unexpected {other:?}"),
            }
        }
        (text, reasoning)
    }

    #[test]
    fn think_blocks_are_split_out_wherever_the_chunks_break() {
        let whole = "<think>用户问的是 Tokio。</think>\n\nTokio 是运行时 [1]。";
        let expected = (
            "\n\nTokio 是运行时 [1]。".to_string(),
            "用户问的是 Tokio。".to_string(),
        );
        assert_eq!(split(&[whole]), expected);
        // Every way of cutting the text in two, on character boundaries.
        for (at, _) in whole.char_indices().skip(1) {
            assert_eq!(
                split(&[&whole[..at], &whole[at..]]),
                expected,
                "cut at {at}"
            );
        }
        let chars: Vec<String> = whole.chars().map(String::from).collect();
        let pieces: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(split(&pieces), expected);
    }

    #[test]
    fn a_tag_inside_the_answer_stays_text() {
        let (text, reasoning) = split(&["HTML has no <think> element.", " Nor </think>."]);
        assert_eq!(text, "HTML has no <think> element. Nor </think>.");
        assert_eq!(reasoning, "");
        // A lone `<` at the end is text once the stream ends.
        assert_eq!(split(&["a <"]), ("a <".to_string(), String::new()));
        // An unclosed block is reasoning: the model never answered.
        assert_eq!(split(&["<think>hmm"]), (String::new(), "hmm".to_string()));
    }

    #[test]
    fn reasoning_content_is_not_answer_text() {
        let mut assembler = DeltaAssembler::new();
        let mut events = assembler
            .push(r#"{"choices":[{"index":0,"delta":{"reasoning_content":"Let me think [3]."}}]}"#)
            .unwrap();
        events.extend(
            assembler
                .push(r#"{"choices":[{"index":0,"delta":{"content":"Answer [1]."},"finish_reason":"stop"}]}"#)
                .unwrap(),
        );
        events.extend(assembler.push("[DONE]").unwrap());
        assert_eq!(
            events[0],
            ChatEvent::Reasoning("Let me think [3].".to_string())
        );
        assert_eq!(events[1], ChatEvent::Text("Answer [1].".to_string()));
        assert!(matches!(events[2], ChatEvent::Done { .. }));
    }
}
