//! Sans-IO assembly of a streamed chat completion: SSE `data` payloads in, [`ChatEvent`]s
//! out. Text deltas pass straight through; tool-call deltas are joined by their `index`
//! (arguments arrive as string fragments, split anywhere, even inside a UTF-8 character's
//! escape) and emitted once complete. Parsed leniently: `null`s, missing `index` (some
//! servers omit it for a single call), unknown fields and usage-only chunks are all fine.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::ssr::llm::{ChatEvent, FinishReason, LlmError, ToolCall, Usage};

#[derive(Debug, Default)]
pub struct DeltaAssembler {
    calls: BTreeMap<u32, PartialCall>,
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
                if let Some(text) = delta.get("content").and_then(Value::as_str) {
                    if !text.is_empty() {
                        events.push(ChatEvent::Text(text.to_string()));
                    }
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
