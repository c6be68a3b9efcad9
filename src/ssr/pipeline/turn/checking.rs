//! After an answer: each citation checked against its source (`ssr::align`). The cited web
//! pages are read once per conversation through the guarded reader (the search snippet
//! stands in for a page that cannot be read); a knowledge-base or file passage is checked
//! against its text and its neighbours'. All under `CITED_ALIGN_DEADLINE_SECS`, and the
//! matching runs on a blocking thread.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use futures_util::StreamExt;

use crate::citation::coverage::cited_sentences;
use crate::citation::{urls, Lookup, SourceMap};
use crate::model::{Alignment, Exchange, SourceKind};
use crate::ssr::align::{align, Aligned};
use crate::ssr::fetch::deep_read;
use crate::ssr::pipeline::Turn;

/// Pages read at once.
const READERS: usize = 4;

/// The texts a source is checked against.
struct SourceText {
    /// The page's readable text, when it could be read.
    page: Option<Arc<str>>,
    snippet: String,
}

/// The better of the page and the snippet (the page when they tie).
fn best_alignment(sentence: &str, source: &SourceText) -> (Aligned, bool) {
    let snippet = align(sentence, &source.snippet);
    match &source.page {
        Some(page) => {
            let on_page = align(sentence, page);
            if snippet.support.strength() > on_page.support.strength() {
                (snippet, false)
            } else {
                (on_page, true)
            }
        }
        None => (snippet, false),
    }
}

impl Turn {
    /// Every found citation of the answer's claims, checked; empty when the check is off,
    /// the answer was stopped, or the deadline passed first.
    pub(super) async fn check_citations(&self, exchange: &Exchange) -> Vec<Alignment> {
        let limit = self.state.config.align_deadline;
        if limit.is_zero() || exchange.stopped || self.cancel.is_cancelled() {
            return Vec::new();
        }
        let sources = SourceMap::new(exchange.sources.iter().cloned());
        let cited = cited_sentences(&exchange.answer, &sources);
        if cited.is_empty() {
            return Vec::new();
        }
        let deadline = tokio::time::Instant::now() + limit;
        let numbers: Vec<u32> = {
            let mut numbers: Vec<u32> = cited.iter().map(|c| c.number).collect();
            numbers.sort_unstable();
            numbers.dedup();
            numbers
        };
        let conversation = self.stored.as_ref().map(|(id, _)| id.clone());
        // Page reads give up at three quarters of the time, leaving the rest to matching.
        let reads_end = tokio::time::Instant::now() + limit.mul_f64(0.75);
        let texts: BTreeMap<u32, SourceText> = futures_util::stream::iter(numbers)
            .map(|number| {
                let entry = sources.lookup(number).cloned();
                let conversation = conversation.clone();
                async move {
                    let entry = entry?;
                    let text = self
                        .source_text(&entry, conversation.as_deref(), reads_end)
                        .await;
                    Some((number, text))
                }
            })
            .buffer_unordered(READERS)
            .take_until(async {
                tokio::select! {
                    () = tokio::time::sleep_until(deadline) => {},
                    () = self.cancel.cancelled() => {},
                }
            })
            .filter_map(|found| async move { found })
            .collect()
            .await;
        let work = crate::ssr::blocking::run(move || {
            // One sentence may cite a source twice: check each pair once.
            let mut done: HashMap<(String, u32), Alignment> = HashMap::new();
            cited
                .into_iter()
                .filter_map(|cite| {
                    let source = texts.get(&cite.number)?;
                    let key = (cite.sentence.clone(), cite.number);
                    let mut alignment = done
                        .entry(key)
                        .or_insert_with(|| {
                            let (found, on_page) = best_alignment(&cite.sentence, source);
                            Alignment {
                                ordinal: cite.ordinal,
                                number: cite.number,
                                support: found.support,
                                passage: found.passage,
                                matched: found.matched,
                                offset: on_page.then_some(found.offset as u32),
                            }
                        })
                        .clone();
                    alignment.ordinal = cite.ordinal;
                    Some(alignment)
                })
                .collect::<Vec<_>>()
        });
        let checked = tokio::select! {
            biased;
            () = self.cancel.cancelled() => None,
            done = tokio::time::timeout_at(deadline, work) => done.ok().flatten(),
        };
        let Some(alignments) = checked else {
            tracing::warn!(
                deadline_secs = limit.as_secs(),
                "citations not checked before the deadline"
            );
            return Vec::new();
        };
        alignments
    }

    /// The page's readable text (read once per conversation) and the snippet.
    async fn source_text(
        &self,
        entry: &crate::citation::CitationEntry,
        conversation: Option<&str>,
        reads_end: tokio::time::Instant,
    ) -> SourceText {
        let snippet = entry.snippet.clone();
        if entry.kind == SourceKind::Knowledge || !urls::is_web_link(&entry.url) {
            let page = self
                .searcher
                .as_ref()
                .and_then(|searcher| searcher.passage_text(&entry.url))
                .map(Arc::<str>::from);
            return SourceText { page, snippet };
        }
        let page = match self.session.cached_page(conversation, &entry.url) {
            Some(page) => page,
            None => {
                let read =
                    tokio::time::timeout_at(reads_end, deep_read(&entry.url, &self.state.fetch))
                        .await;
                let page = match read {
                    Ok(Ok(page)) => Some(Arc::<str>::from(page.text)),
                    Ok(Err(error)) => {
                        tracing::info!(%error, "a cited page could not be read: its snippet stands in");
                        None
                    }
                    Err(_) => {
                        // Too slow this time; a later answer may read it.
                        tracing::debug!(url = %entry.url, "a cited page took too long: its snippet stands in");
                        return SourceText {
                            page: None,
                            snippet,
                        };
                    }
                };
                self.session
                    .cache_page(conversation, &entry.url, page.clone());
                page
            }
        };
        SourceText { page, snippet }
    }
}
