//! Two models behind one: answers go to the one the user picked, every other call
//! (planning, verifying, Research's branches, titles, follow-ups) to the fast model
//! (`CITED_LLM_MODEL_FAST`).

use std::sync::Arc;

use async_trait::async_trait;

use super::{ChatModel, ChatRequest, ChatStream, LlmError, ModelKind, SchemaSupport};
use crate::ssr::config::CallKind;

pub struct Routed {
    pub answer: Arc<dyn ChatModel>,
    pub fast: Arc<dyn ChatModel>,
}

impl Routed {
    fn pick(&self, kind: CallKind) -> &dyn ChatModel {
        match kind {
            CallKind::Answer => self.answer.as_ref(),
            CallKind::Plan
            | CallKind::Verify
            | CallKind::Branch
            | CallKind::Title
            | CallKind::Check => self.fast.as_ref(),
        }
    }
}

#[async_trait]
impl ChatModel for Routed {
    fn kind(&self) -> ModelKind {
        self.answer.kind()
    }

    /// What the planning model does: structured replies are asked of planning calls.
    fn schema_support(&self) -> SchemaSupport {
        self.fast.schema_support()
    }

    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        self.pick(request.kind).stream(request).await
    }
}
