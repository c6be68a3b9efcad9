//! A model behind a semaphore: at most `CITED_MAX_MODEL_CALLS` streams open at once across
//! every answer (and, with `CITED_REDIS_URL`, across every instance: `ssr::shared` gives
//! the permits then). The permit lives as long as the stream, so a slow reader holds its
//! slot and a dropped stream frees it.

use std::sync::Arc;

use async_trait::async_trait;
use futures_util::StreamExt;
use tokio::sync::Semaphore;

use super::{ChatModel, ChatRequest, ChatStream, LlmError, ModelKind, SchemaSupport};

pub struct Limited {
    pub inner: Arc<dyn ChatModel>,
    pub permits: Arc<dyn CallPermits>,
}

/// Where a model call's permit comes from. The permit is held until dropped.
#[async_trait]
pub trait CallPermits: Send + Sync {
    /// Waits for a permit; `None` when none can be had (the semaphore closed): the call
    /// goes ahead unlimited rather than never.
    async fn acquire(&self) -> Option<Box<dyn Send + Sync>>;
}

/// This process's own semaphore.
#[async_trait]
impl CallPermits for Arc<Semaphore> {
    async fn acquire(&self) -> Option<Box<dyn Send + Sync>> {
        let permit = Arc::clone(self).acquire_owned().await.ok()?;
        Some(Box::new(permit))
    }
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
        let Some(permit) = self.permits.acquire().await else {
            return self.inner.stream(request).await;
        };
        let stream = self.inner.stream(request).await?;
        Ok(Box::pin(stream.map(move |event| {
            let _held = &permit;
            event
        })))
    }
}
