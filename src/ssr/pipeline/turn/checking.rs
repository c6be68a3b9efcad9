//! After an answer: each citation checked against its source (`ssr::align`). The cited web
//! pages are read once per conversation through the guarded reader (the search snippet
//! stands in for a page that cannot be read); a knowledge-base or file passage is checked
//! against its text and its neighbours'. The offline checker (`ssr::align`) runs on a
//! blocking thread; then, with `CITED_CHECK=model` and a model, the model judges every
//! citation in one call (`align::judge`), its verdicts kept per conversation. All under
//! `CITED_ALIGN_DEADLINE_SECS`.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use futures_util::StreamExt;

use crate::citation::coverage::cited_sentences;
use crate::citation::{urls, Lookup, SourceMap};
use crate::model::{Alignment, Better, Exchange, SourceKind, Support};
use crate::ssr::align::judge::{self, Case, Verdict};
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

/// The better of the page and the snippet (the page when they tie), and the text it was
/// found in.
fn best_alignment(sentence: &str, source: &SourceText) -> (Aligned, bool, Arc<str>) {
    let snippet = align(sentence, &source.snippet);
    match &source.page {
        Some(page) => {
            let on_page = align(sentence, page);
            if snippet.support.strength() > on_page.support.strength() {
                (snippet, false, Arc::from(source.snippet.as_str()))
            } else {
                (on_page, true, Arc::clone(page))
            }
        }
        None => (snippet, false, Arc::from(source.snippet.as_str())),
    }
}

/// One citation checked offline, with what the judge needs.
struct Checked {
    alignment: Alignment,
    sentence: String,
    url: String,
    text: Arc<str>,
    on_page: bool,
    passage: (usize, usize),
}

/// Another of the answer's sources that supports a sentence its own source does not (or
/// cannot be seen to): the first, in number order, that the offline checker finds
/// supporting it.
fn better_source(checked: &Checked, others: &[(u32, String, Arc<str>)]) -> Option<Better> {
    if !matches!(
        checked.alignment.support,
        Support::NotFound | Support::NotChecked
    ) {
        return None;
    }
    others
        .iter()
        .filter(|(number, _, _)| *number != checked.alignment.number)
        .find(|(_, _, text)| align(&checked.sentence, text).support == Support::Supported)
        .map(|(number, url, _)| Better {
            number: *number,
            url: url.clone(),
        })
}

/// The judge's verdict in place of the offline one: the passage becomes the sentence(s)
/// holding the quote, marked where the quote is.
fn apply(checked: &mut Checked, verdict: &Verdict) {
    let (from, to) = verdict.quote;
    let text = &checked.text;
    let start = text[..from]
        .rfind(['。', '！', '？', '\n', '.', '!', '?'])
        .map_or(0, |at| {
            at + text[at..].chars().next().map_or(1, char::len_utf8)
        });
    let start = start + (text[start..from].len() - text[start..from].trim_start().len());
    let end = text[to..]
        .find(['。', '！', '？', '\n', '.', '!', '?'])
        .map_or(text.len(), |at| {
            to + at + text[to + at..].chars().next().map_or(1, char::len_utf8)
        });
    let alignment = &mut checked.alignment;
    alignment.support = verdict.support;
    alignment.passage = text[start..end].to_string();
    alignment.matched = vec![((from - start) as u32, (to - start) as u32)];
    alignment.offset = checked.on_page.then_some(start as u32);
}

impl Turn {
    /// Every found citation of the answer's claims, checked; empty when the check is off,
    /// the answer was stopped, or the deadline passed first.
    /// Also says whether a model judged them.
    pub(super) async fn check_citations(&self, exchange: &Exchange) -> (Vec<Alignment>, bool) {
        let limit = self.state.config.align_deadline;
        if limit.is_zero() || exchange.stopped || self.cancel.is_cancelled() {
            return (Vec::new(), false);
        }
        let sources = SourceMap::new(exchange.sources.iter().cloned());
        let cited = cited_sentences(&exchange.answer, &sources);
        if cited.is_empty() {
            return (Vec::new(), false);
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
        let urls: HashMap<u32, String> = texts
            .keys()
            .filter_map(|n| Some((*n, sources.lookup(*n)?.url.clone())))
            .collect();
        // Every source of the answer, with the text it is checked against (its page when it
        // was read, else its snippet), for sentences their own source does not support.
        let others: Vec<(u32, String, Arc<str>)> = exchange
            .sources
            .iter()
            .map(|entry| {
                let text = texts
                    .get(&entry.number)
                    .and_then(|t| t.page.clone())
                    .unwrap_or_else(|| Arc::from(entry.snippet.as_str()));
                (entry.number, entry.url.clone(), text)
            })
            .collect();
        let work = crate::ssr::blocking::run(move || {
            // One sentence may cite a source twice: check each pair once.
            let mut done: HashMap<(String, u32), Checked> = HashMap::new();
            let mut order = Vec::new();
            for cite in cited {
                let Some(source) = texts.get(&cite.number) else {
                    continue;
                };
                let key = (cite.sentence.clone(), cite.number);
                done.entry(key.clone()).or_insert_with(|| {
                    let (found, on_page, text) = best_alignment(&cite.sentence, source);
                    Checked {
                        alignment: Alignment {
                            ordinal: cite.ordinal,
                            number: cite.number,
                            support: found.support,
                            passage: found.passage.clone(),
                            matched: found.matched,
                            offset: on_page.then_some(found.offset as u32),
                            better: None,
                        },
                        sentence: cite.sentence.clone(),
                        url: urls.get(&cite.number).cloned().unwrap_or_default(),
                        text,
                        on_page,
                        passage: (found.offset, found.offset + found.passage.len()),
                    }
                });
                order.push((key, cite.ordinal));
            }
            for checked in done.values_mut() {
                checked.alignment.better = better_source(checked, &others);
            }
            (done, order)
        });
        let checked = tokio::select! {
            biased;
            () = self.cancel.cancelled() => None,
            done = tokio::time::timeout_at(deadline, work) => done.ok().flatten(),
        };
        let Some((mut done, order)) = checked else {
            tracing::warn!(
                deadline_secs = limit.as_secs(),
                "citations not checked before the deadline"
            );
            return (Vec::new(), false);
        };
        let judged = self
            .judge(&mut done, conversation.as_deref(), deadline)
            .await;
        // A source the model found supporting its sentence needs no other.
        for checked in done.values_mut() {
            if matches!(
                checked.alignment.support,
                Support::Supported | Support::Partial
            ) {
                checked.alignment.better = None;
            }
        }
        let alignments = order
            .into_iter()
            .filter_map(|(key, ordinal)| {
                let mut alignment = done.get(&key)?.alignment.clone();
                alignment.ordinal = ordinal;
                Some(alignment)
            })
            .collect();
        (alignments, judged)
    }

    /// With `CITED_CHECK=model` and a model: the model's verdicts in place of the offline
    /// ones where it gave a usable one (each citation judged once per conversation).
    /// Whether the model was asked.
    async fn judge(
        &self,
        done: &mut HashMap<(String, u32), Checked>,
        conversation: Option<&str>,
        deadline: tokio::time::Instant,
    ) -> bool {
        if self.state.config.check != crate::ssr::config::Check::Model
            || self.llm.kind() != crate::ssr::llm::ModelKind::Remote
            || self.cancel.is_cancelled()
        {
            return false;
        }
        let cache_key = |c: &Checked| (c.url.clone(), c.sentence.clone(), c.text.len());
        let mut asked: Vec<(String, u32)> = Vec::new();
        for (key, checked) in done.iter_mut() {
            match self
                .session
                .cached_verdict(conversation, &cache_key(checked))
            {
                Some(Some(verdict)) => apply(checked, &verdict),
                Some(None) => {}
                None => asked.push(key.clone()),
            }
        }
        if asked.is_empty() {
            return false;
        }
        asked.sort();
        let cases: Vec<Case> = asked
            .iter()
            .filter_map(|key| done.get(key))
            .map(|c| Case {
                sentence: c.sentence.clone(),
                source: c.text.to_string(),
                passage: c.passage,
            })
            .collect();
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let limits = &self.state.config.limits;
        let call = judge::judge(
            self.llm.as_ref(),
            limits,
            &cases,
            left,
            Some(self.meter.as_ref()),
        );
        let judged = tokio::select! {
            biased;
            () = self.cancel.cancelled() => return true,
            judged = call => judged,
        };
        let Some(judged) = judged else {
            return true;
        };
        if judged.voided > 0 {
            tracing::info!(
                voided = judged.voided,
                "the citation judge quoted what its source does not say: the offline verdicts stand"
            );
        }
        for (key, verdict) in asked.iter().zip(judged.verdicts) {
            if let Some(checked) = done.get_mut(key) {
                if let Some(verdict) = &verdict {
                    apply(checked, verdict);
                }
                self.session
                    .cache_verdict(conversation, cache_key(checked), verdict);
            }
        }
        true
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
