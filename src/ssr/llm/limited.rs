//! A model behind a semaphore: at most `CITED_MAX_MODEL_CALLS` streams open at once across
//! every answer. The permit lives as long as the stream, so a slow reader holds its slot
//! and a dropped stream frees it.

use std::sync::Arc;

use async_trait::async_trait;
use futures_util::StreamExt;
use tokio::sync::Semaphore;

use super::{ChatModel, ChatRequest, ChatStream, LlmError, ModelKind, SchemaSupport};

pub struct Limited {
    pub inner: Arc<dyn ChatModel>,
    pub permits: Arc<Semaphore>,
}

#[async_trait]
impl ChatModel for Limited {
    fn kind(&self) -> ModelKind {
        self.inner.kind()
    }

    fn schema_support(&self) -> SchemaSupport {
        self.inner.schema_support()
    }

    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        let Ok(permit) = Arc::clone(&self.permits).acquire_owned().await else {
            return self.inner.stream(request).await;
        };
        let stream = self.inner.stream(request).await?;
        Ok(Box::pin(stream.map(move |event| {
            let _held = &permit;
            event
        })))
    }
}
