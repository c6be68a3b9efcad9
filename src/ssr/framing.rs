//! An answer's events as a browser's NDJSON stream: each event on its line, and the
//! rendering patches (`citation::stream::Framer`) that let the browser show the answer
//! without parsing Markdown. Patches are coalesced: at most one per [`EVERY`], the last one
//! sent when the window closes or before the next event that is not text, so nothing waits
//! more than one window. Tokens themselves are not sent: the patches carry what they add,
//! and the whole text follows once, as a `rewrite` just before `done` (for the copy
//! button), so the answer's text crosses the wire about once.
//!
//! [`body`] gzips the lines for a client that takes it: one gzip stream, sync-flushed after
//! every batch of ready lines, so each line can be decoded the moment it arrives (a
//! compression layer would hold lines back until its buffer filled). The rendered tree's
//! JSON repeats itself, so a long answer's stream shrinks several times.

use std::collections::VecDeque;
use std::io::Write;
use std::pin::Pin;

use bytes::Bytes;
use flate2::write::GzEncoder;
use flate2::Compression;

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

/// The lines as a response body: gzipped when `gzip` (see the module), as they are
/// otherwise.
pub fn body<S>(lines: S, gzip: bool) -> Pin<Box<dyn Stream<Item = Bytes> + Send>>
where
    S: Stream<Item = String> + Send + 'static,
{
    if !gzip {
        return Box::pin(lines.map(Bytes::from));
    }
    // Every line ready at once is compressed with one flush.
    let batches = Box::pin(lines.ready_chunks(64));
    let encoder = GzEncoder::new(Vec::new(), Compression::default());
    Box::pin(futures_util::stream::unfold(
        (batches, Some(encoder)),
        |(mut batches, encoder)| async move {
            let mut encoder = encoder?;
            match batches.next().await {
                Some(batch) => {
                    // Writing to a Vec cannot fail.
                    for line in batch {
                        let _ = encoder.write_all(line.as_bytes());
                    }
                    let _ = encoder.flush();
                    let bytes = std::mem::take(encoder.get_mut());
                    Some((Bytes::from(bytes), (batches, Some(encoder))))
                }
                // The end: the gzip trailer (length and checksum).
                None => {
                    let trailer = encoder.finish().unwrap_or_default();
                    Some((Bytes::from(trailer), (batches, None)))
                }
            }
        },
    ))
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

    #[tokio::test]
    async fn a_gzipped_body_decodes_line_by_line_as_it_arrives_and_shrinks() {
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<String>();
        let lines = futures_util::stream::poll_fn(move |cx| receiver.poll_recv(cx));
        let mut body = body(lines, true);
        let mut decoder = flate2::write::GzDecoder::new(Vec::new());
        let mut sent = String::new();
        let mut wire = 0;
        for i in 0..50 {
            let line = format!(
                "{{\"rendered\":{{\"patch\":{{\"tail\":{{\"from\":0,\"keep\":{i},\"add\":\"第 {i} 段\"}}}}}}}}\n"
            );
            sender.send(line.clone()).unwrap();
            sent.push_str(&line);
            // The line's bytes arrive before the next line is even written, and decode
            // whole: nothing waits in the encoder.
            let chunk = body.next().await.unwrap();
            wire += chunk.len();
            decoder.write_all(&chunk).unwrap();
            decoder.flush().unwrap();
            assert_eq!(String::from_utf8_lossy(decoder.get_ref()), sent, "line {i}");
        }
        drop(sender);
        // The end carries the trailer, which checks length and CRC.
        let trailer = body.next().await.unwrap();
        wire += trailer.len();
        decoder.write_all(&trailer).unwrap();
        assert_eq!(decoder.finish().unwrap(), sent.as_bytes());
        assert!(body.next().await.is_none());
        assert!(wire * 2 < sent.len(), "{wire} bytes for {}", sent.len());

        // Uncompressed, the lines go as they are.
        let plain: Vec<Bytes> = super::body(futures_util::stream::iter(["a\n".to_string()]), false)
            .collect()
            .await;
        assert_eq!(plain, [Bytes::from("a\n")]);
    }

    fn tokio_stream_of(
        mut receiver: tokio::sync::mpsc::UnboundedReceiver<AnswerEvent>,
    ) -> impl Stream<Item = AnswerEvent> + Send + 'static {
        futures_util::stream::poll_fn(move |cx| receiver.poll_recv(cx))
    }
}
