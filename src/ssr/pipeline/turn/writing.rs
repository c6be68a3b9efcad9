//! A model's reply streamed into the answer, and text taken back.

use std::future::Future;
use std::sync::Arc;

use super::Turn;
use crate::model::{AnswerEvent, Level};
use crate::ssr::llm::reply::{cut_text, stream_reply, Cut, Halted, Progress, Reply, ReplySink};
use crate::ssr::llm::{CallKind, ChatRequest};

impl Turn {
    /// Streams a model reply into the answer, token by token. `clear_status` empties the
    /// status line at the first token. A model failure is returned in the reply (the caller
    /// decides whether it fails the answer).
    ///
    /// The call is bounded by the answer limits unless the request sets its own; a reply cut
    /// short is told in a notice, and repeats cut from the text leave the answer too.
    pub async fn stream_model(
        &mut self,
        mut request: ChatRequest,
        clear_status: bool,
    ) -> Result<Reply, Halted> {
        let limits = &self.state.config.limits;
        request
            .max_tokens
            .get_or_insert(limits.max_tokens(CallKind::Answer));
        request.deadline.get_or_insert(limits.call_deadline);
        let max_tokens = request.max_tokens;
        let llm = Arc::clone(&self.llm);
        let before = self.exchange.answer.len();
        let reasoning_before = self.exchange.reasoning.len();
        let mut sink = AnswerSink {
            turn: self,
            clear_status,
            texted: false,
        };
        let reply = stream_reply(llm.as_ref(), request, &mut sink).await?;
        self.meter.add(&reply);
        if reply.cut == Some(Cut::Repetition) || reply.rethought {
            // The answer and the reasoning are exactly what the reply kept.
            self.exchange.answer.truncate(before);
            self.exchange.answer.push_str(&reply.text);
            self.exchange.reasoning.truncate(reasoning_before);
            self.exchange.reasoning.push_str(&reply.reasoning);
            let answer = self.exchange.answer.clone();
            self.send(AnswerEvent::Rewrite { answer }).await?;
            if reply.rethought {
                let text = reply.reasoning.clone();
                self.send(AnswerEvent::Reasoning { text }).await?;
            }
        }
        if let Some(cut) = reply.cut {
            tracing::warn!(?cut, "the model's reply was cut");
            self.cut_notice(cut, max_tokens).await?;
        }
        Ok(reply)
    }

    /// Tells the user about a reply that ended early ([`Cut`]); `what` names the limit
    /// for a length cut.
    pub async fn cut_notice(&mut self, cut: Cut, max_tokens: Option<u32>) -> Result<(), Halted> {
        let text = cut_text(self.texts(), cut, max_tokens, CallKind::Answer);
        self.notice(Level::Warning, text).await
    }

    /// Tells what the thinker noted while it worked (a step that degraded), once each.
    pub async fn flush_notes(&mut self) -> Result<(), Halted> {
        for text in self.meter.take_notes() {
            self.notice(Level::Warning, text).await?;
        }
        Ok(())
    }

    /// Takes back the answer's text from byte `before` on (a reply that turned out to be
    /// the model thinking aloud before a tool call): the browser is sent the answer as it
    /// now stands.
    pub async fn retract_text_since(&mut self, before: usize) -> Result<(), Halted> {
        self.exchange.answer.truncate(before);
        let answer = self.exchange.answer.clone();
        self.send(AnswerEvent::Rewrite { answer }).await
    }
}

/// A reply's text streamed into the answer.
struct AnswerSink<'a> {
    turn: &'a mut Turn,
    clear_status: bool,
    /// Answer text has arrived (progress is shown only before).
    texted: bool,
}

impl ReplySink for AnswerSink<'_> {
    fn halted(&self) -> impl Future<Output = ()> + Send {
        self.turn.halted()
    }

    async fn text(&mut self, piece: &str) -> Result<(), Halted> {
        if std::mem::take(&mut self.clear_status) {
            self.turn.status(None).await?;
        }
        self.texted = true;
        self.turn.meter.piece();
        self.turn.token(piece.to_string()).await
    }

    async fn reasoning(&mut self, piece: &str) -> Result<(), Halted> {
        self.turn.meter.piece();
        self.turn.exchange.reasoning.push_str(piece);
        let text = piece.to_string();
        self.turn.send(AnswerEvent::Reasoning { text }).await
    }

    async fn tick(&mut self, progress: Progress) -> Result<(), Halted> {
        // Only while the status line shows (no answer text yet).
        if !self.texted {
            self.turn
                .progress(progress.elapsed, progress.pieces)
                .await?;
        }
        Ok(())
    }
}
