//! An answer's events as a browser's NDJSON stream: each event on its line, and the
//! rendering patches (`citation::stream::Framer`) that let the browser show the answer
//! without parsing Markdown. Patches are coalesced: at most one per [`EVERY`], the last one
//! sent when the window closes or before the next event that is not text, so nothing waits
//! more than one window. Tokens themselves are not sent: the patches carry what they add,
//! and the whole text follows once, as a `rewrite` just before `done` (for the copy
//! button), so the answer's text crosses the wire about once.

use std::collections::VecDeque;
use std::pin::Pin;

use futures_util::{Stream, StreamExt};
use tokio::time::{Duration, Instant};

use crate::citation::stream::Framer;
use crate::model::AnswerEvent;

/// The shortest time between two patches (25 a second; a screen shows 60 frames).
pub const EVERY: Duration = Duration::from_millis(40);

struct Lines<S> {
    events: Pin<Box<S>>,
    framer: Framer,
    /// A patch is owed and is sent at this time unless an event comes first.
    due: Option<Instant>,
    last_patch: Option<Instant>,
    ended: bool,
    out: VecDeque<String>,
}

impl<S> Lines<S> {
    fn send_patch(&mut self) {
        self.due = None;
        if let Some(patch) = self.framer.patch() {
            self.last_patch = Some(Instant::now());
            self.out.push_back(patch.to_line());
        }
    }

    fn take(&mut self, event: AnswerEvent) {
        let changed = self.framer.note(&event);
        if !changed && self.due.is_some() {
            // What follows (a notice, `done`) comes after the text it follows.
            self.send_patch();
        }
        match &event {
            AnswerEvent::Token { .. } => {}
            AnswerEvent::Done { .. } => {
                self.out.push_back(
                    AnswerEvent::Rewrite {
                        answer: self.framer.text().to_string(),
                    }
                    .to_line(),
                );
                self.out.push_back(event.to_line());
            }
            _ => self.out.push_back(event.to_line()),
        }
        if changed {
            let now = Instant::now();
            match self.last_patch {
                Some(last) if now < last + EVERY => {
                    self.due.get_or_insert(last + EVERY);
                }
                _ => self.send_patch(),
            }
        }
    }
}

/// `events` framed as NDJSON lines, with their patches.
pub fn lines<S>(events: S) -> impl Stream<Item = String> + Send
where
    S: Stream<Item = AnswerEvent> + Send + 'static,
{
    let state = Lines {
        events: Box::pin(events),
        framer: Framer::new(),
        due: None,
        last_patch: None,
        ended: false,
        out: VecDeque::new(),
    };
    futures_util::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(line) = state.out.pop_front() {
                return Some((line, state));
            }
            if state.ended {
                return None;
            }
            let next = match state.due {
                Some(due) => tokio::select! {
                    event = state.events.next() => Some(event),
                    () = tokio::time::sleep_until(due) => None,
                },
                None => Some(state.events.next().await),
            };
            match next {
                // The window closed with a patch owed.
                None => state.send_patch(),
                Some(Some(event)) => state.take(event),
                Some(None) => {
                    state.ended = true;
                    if state.due.is_some() {
                        state.send_patch();
                    }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::blocks::Shown;

    fn token(text: &str) -> AnswerEvent {
        AnswerEvent::Token { text: text.into() }
    }

    fn decode(lines: &[String]) -> Vec<AnswerEvent> {
        let mut decoder = crate::model::LineDecoder::default();
        decoder.push(lines.concat().as_bytes())
    }

    fn kind(event: &AnswerEvent) -> &'static str {
        match event {
            AnswerEvent::Token { .. } => "token",
            AnswerEvent::Rendered { .. } => "rendered",
            AnswerEvent::Rewrite { .. } => "rewrite",
            AnswerEvent::Notice { .. } => "notice",
            AnswerEvent::Done { .. } => "done",
            _ => "other",
        }
    }

    #[tokio::test(start_paused = true)]
    async fn patches_are_coalesced_none_is_left_owed_and_the_text_comes_once() {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        let mut lines = Box::pin(lines(tokio_stream_of(receiver)));
        let mut got = Vec::new();
        // Ten tokens at once: the first is patched at once, the rest owed; no token line.
        let words = [
            "One ", "two ", "three ", "four ", "five ", "six ", "seven ", "eight ", "nine ", "ten",
        ];
        for word in words {
            sender.send(token(word)).unwrap();
        }
        got.push(lines.next().await.unwrap());
        assert_eq!(
            decode(&got).iter().map(kind).collect::<Vec<_>>(),
            ["rendered"]
        );
        // Nothing else comes: the owed patch is sent when the window closes.
        let start = Instant::now();
        got.push(lines.next().await.unwrap());
        assert!(Instant::now() - start <= EVERY);
        let mut shown = Shown::default();
        for event in decode(&got) {
            if let AnswerEvent::Rendered { patch } = event {
                shown.apply(patch);
            }
        }
        let text = words.concat();
        let none = crate::citation::SourceMap::default();
        assert_eq!(shown.blocks(), crate::citation::render(&text, &none).blocks);
        // An owed patch goes before the next event that is not text, and the whole text
        // comes once, just before `done`.
        tokio::time::advance(EVERY * 2).await;
        sender.send(token(" eleven")).unwrap();
        sender.send(token(" twelve")).unwrap();
        sender
            .send(AnswerEvent::Notice {
                notice: crate::model::Notice {
                    level: crate::model::Level::Info,
                    text: "x".into(),
                },
            })
            .unwrap();
        sender.send(token(".")).unwrap();
        sender
            .send(AnswerEvent::Done {
                cited: Vec::new(),
                stopped: false,
                coverage: None,
                usage: None,
                unsearched: false,
            })
            .unwrap();
        drop(sender);
        let rest = decode(&lines.collect::<Vec<String>>().await);
        let kinds: Vec<&str> = rest.iter().map(kind).collect();
        assert_eq!(
            kinds,
            ["rendered", "rendered", "notice", "rendered", "rewrite", "done"]
        );
        assert_eq!(
            rest[4],
            AnswerEvent::Rewrite {
                answer: format!("{text} eleven twelve.")
            }
        );
    }

    fn tokio_stream_of(
        mut receiver: tokio::sync::mpsc::UnboundedReceiver<AnswerEvent>,
    ) -> impl Stream<Item = AnswerEvent> + Send + 'static {
        futures_util::stream::poll_fn(move |cx| receiver.poll_recv(cx))
    }
}
