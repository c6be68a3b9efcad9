//! After an answer: each citation checked against its source (`ssr::align`). The cited web
//! pages are read once per conversation through the guarded reader (the search snippet
//! stands in for a page that cannot be read); a knowledge-base or file passage is checked
//! against its text and its neighbours'. The offline checker (`ssr::align`) runs on a
//! blocking thread; then, with `CITED_CHECK=model` and a model, the model judges every
//! citation in one call (`align::judge`), its verdicts kept per conversation. All under
//! `CITED_ALIGN_DEADLINE_SECS`.

use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use futures_util::StreamExt;

use crate::citation::coverage::{cited_sentences, uncited_claims, UncitedClaim};
use crate::citation::{urls, Lookup, SourceMap};
use crate::model::{Alignment, Better, ClaimCheck, Exchange, SourceKind, Support};
use crate::ssr::align::judge::{self, Case, Verdict};
use crate::ssr::align::{align_in, Aligned, Page};
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

/// A source's texts made ready for the checker ([`Page`]), each once and only when first
/// needed: an answer checks every claim it left uncited against every source.
struct Ready<'a> {
    source: &'a SourceText,
    snippet: OnceCell<Page<'a>>,
    page: OnceCell<Option<Page<'a>>>,
}

impl<'a> Ready<'a> {
    fn new(source: &'a SourceText) -> Self {
        Ready {
            source,
            snippet: OnceCell::new(),
            page: OnceCell::new(),
        }
    }

    fn snippet(&self) -> &Page<'a> {
        self.snippet
            .get_or_init(|| Page::new(self.source.snippet.as_str()))
    }

    fn page(&self) -> Option<&Page<'a>> {
        self.page
            .get_or_init(|| self.source.page.as_deref().map(Page::new))
            .as_ref()
    }

    /// The page when it was read, else the snippet.
    fn text(&self) -> &Page<'a> {
        self.page().unwrap_or_else(|| self.snippet())
    }
}

/// The better of the page and the snippet (the page when they tie), and the text it was
/// found in.
fn best_alignment(sentence: &str, ready: &Ready) -> (Aligned, bool, Arc<str>) {
    let snippet = align_in(sentence, ready.snippet());
    match (ready.page(), &ready.source.page) {
        (Some(page), Some(text)) => {
            let on_page = align_in(sentence, page);
            if snippet.support.strength() > on_page.support.strength() {
                (snippet, false, Arc::from(ready.source.snippet.as_str()))
            } else {
                (on_page, true, Arc::clone(text))
            }
        }
        _ => (snippet, false, Arc::from(ready.source.snippet.as_str())),
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
/// only in part, or cannot be seen to): the first, in number order, that the offline
/// checker finds supporting it.
fn better_source(checked: &Checked, all: &[(u32, String, Ready)]) -> Option<Better> {
    if checked.alignment.support == Support::Supported {
        return None;
    }
    all.iter()
        .filter(|(number, _, _)| *number != checked.alignment.number)
        .find(|(_, _, ready)| {
            align_in(&checked.sentence, ready.text()).support == Support::Supported
        })
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

/// What the check found: each citation checked, the uncited claims checked, and whether
/// a model judged them.
#[derive(Default)]
pub(super) struct Checks {
    pub alignments: Vec<Alignment>,
    pub claims: Vec<ClaimCheck>,
    pub judged: bool,
}

/// The most uncited claims one answer has checked (the rest keep no mark).
const MAX_CLAIMS: usize = 24;

/// The most pages read for one answer's check: the cited sources' first, then the others'
/// when claims are left uncited.
const MAX_PAGES: usize = 8;

/// One sentence checked against one source offline.
fn check_one(sentence: &str, ordinal: u32, number: u32, url: &str, ready: &Ready) -> Checked {
    let (found, on_page, text) = best_alignment(sentence, ready);
    Checked {
        alignment: Alignment {
            ordinal,
            number,
            support: found.support,
            passage: found.passage.clone(),
            matched: found.matched,
            offset: on_page.then_some(found.offset as u32),
            better: None,
        },
        sentence: sentence.to_string(),
        url: url.to_string(),
        text,
        on_page,
        passage: (found.offset, found.offset + found.passage.len()),
    }
}

/// The source among `all` that best supports an uncited claim (the strongest level, the
/// lowest number among equals), checked.
fn best_for_claim(claim: &UncitedClaim, all: &[(u32, String, Ready)]) -> Option<Checked> {
    let mut best: Option<Checked> = None;
    for (number, url, ready) in all {
        let checked = check_one(&claim.text, 0, *number, url, ready);
        let stronger = best.as_ref().is_none_or(|best| {
            checked.alignment.support.strength() > best.alignment.support.strength()
        });
        if stronger {
            best = Some(checked);
        }
    }
    best
}

/// The uncited claims as the answer shows them: those a source supports (offline: a
/// strong match with its numbers; or the model's verdict) with cited's citation of it, those
/// whose best source does not support them with a mark; the others (partly supported, not
/// checked) as they are.
fn attributed(
    attributing: Vec<(UncitedClaim, (String, u32))>,
    done: &HashMap<(String, u32), Checked>,
) -> Vec<ClaimCheck> {
    let mut claims = Vec::new();
    for (claim, key) in attributing {
        let Some(checked) = done.get(&key) else {
            continue;
        };
        let added = match checked.alignment.support {
            Support::Supported => {
                let mut alignment = checked.alignment.clone();
                alignment.ordinal = claims.len() as u32;
                alignment.better = None;
                Some(alignment)
            }
            Support::NotFound => None,
            Support::Partial | Support::NotChecked => continue,
        };
        claims.push(ClaimCheck {
            sentence: claim.sentence,
            text: claim.text,
            added,
        });
    }
    claims
}

/// What [`check_all`] found: each (sentence, number) checked once, the citations in their
/// order, and each uncited claim with the key of the source that best supports it.
type Found = (
    HashMap<(String, u32), Checked>,
    Vec<((String, u32), u32)>,
    Vec<(UncitedClaim, (String, u32))>,
);

/// The offline checks of an answer's citations and uncited claims against `all` its
/// sources (number, address, texts), on a blocking thread. Stops where it is once `budget`
/// is spent, so a job past its caller's deadline gives its core back.
fn check_all(
    cited: &[crate::citation::coverage::CitedSentence],
    claims: Vec<UncitedClaim>,
    all: &[(u32, String, SourceText)],
    budget: &crate::ssr::blocking::Budget,
) -> Found {
    let all: Vec<(u32, String, Ready)> = all
        .iter()
        .map(|(number, url, source)| (*number, url.clone(), Ready::new(source)))
        .collect();
    let by_number: HashMap<u32, (&String, &Ready)> = all
        .iter()
        .map(|(number, url, ready)| (*number, (url, ready)))
        .collect();
    // One sentence may cite a source twice: check each pair once.
    let mut done: HashMap<(String, u32), Checked> = HashMap::new();
    let mut order = Vec::new();
    for cite in cited {
        if budget.spent() {
            return (done, order, Vec::new());
        }
        let Some((url, source)) = by_number.get(&cite.number) else {
            continue;
        };
        let key = (cite.sentence.clone(), cite.number);
        done.entry(key.clone())
            .or_insert_with(|| check_one(&cite.sentence, cite.ordinal, cite.number, url, source));
        order.push((key, cite.ordinal));
    }
    for checked in done.values_mut() {
        if budget.spent() {
            break;
        }
        checked.alignment.better = better_source(checked, &all);
    }
    // Each uncited claim with the source that best supports it.
    let mut attributing = Vec::new();
    for claim in claims {
        if budget.spent() {
            break;
        }
        let Some(best) = best_for_claim(&claim, &all) else {
            continue;
        };
        let key = (claim.text.clone(), best.alignment.number);
        done.entry(key.clone()).or_insert(best);
        attributing.push((claim, key));
    }
    (done, order, attributing)
}

impl Turn {
    /// Every found citation of the answer's claims checked, and the claims it left uncited
    /// checked against all its sources; nothing when the check is off, the answer was
    /// stopped, or the deadline passed first.
    pub(super) async fn check_citations(&self, exchange: &Exchange) -> Checks {
        let limit = self.state.config.align_deadline;
        if limit.is_zero() || exchange.stopped || self.cancel.is_cancelled() {
            return Checks::default();
        }
        let sources = SourceMap::new(exchange.sources.iter().cloned());
        let cited = cited_sentences(&exchange.answer, &sources);
        let mut claims = if sources.is_empty() {
            Vec::new()
        } else {
            uncited_claims(&exchange.answer, &sources)
        };
        claims.truncate(MAX_CLAIMS);
        if cited.is_empty() && claims.is_empty() {
            return Checks::default();
        }
        let deadline = tokio::time::Instant::now() + limit;
        // The cited sources' pages first; with claims to attribute, the others' too.
        let numbers: Vec<u32> = {
            let mut numbers: Vec<u32> = cited.iter().map(|c| c.number).collect();
            numbers.sort_unstable();
            numbers.dedup();
            if !claims.is_empty() {
                let room = MAX_PAGES.saturating_sub(numbers.len());
                let more: Vec<u32> = exchange
                    .sources
                    .iter()
                    .map(|entry| entry.number)
                    .filter(|number| !numbers.contains(number))
                    .take(room)
                    .collect();
                numbers.extend(more);
            }
            numbers
        };
        let conversation = self.stored.as_ref().map(|(id, _)| id.clone());
        // Page reads give up at three quarters of the time, leaving the rest to matching.
        let reads_end = tokio::time::Instant::now() + limit.mul_f64(0.75);
        let mut texts: BTreeMap<u32, SourceText> = futures_util::stream::iter(numbers)
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
        // Every source of the answer with the texts it is checked against (its page when
        // it was read, else its snippet): for sentences their own source does not support,
        // and for the claims left uncited.
        let all: Vec<(u32, String, SourceText)> = exchange
            .sources
            .iter()
            .map(|entry| {
                let text = texts.remove(&entry.number).unwrap_or_else(|| SourceText {
                    page: None,
                    snippet: entry.snippet.clone(),
                });
                (entry.number, entry.url.clone(), text)
            })
            .collect();
        let budget = crate::ssr::blocking::Budget::new(deadline.into_std(), self.cancel.clone());
        let work = crate::ssr::blocking::run(move || check_all(&cited, claims, &all, &budget));
        let checked = tokio::select! {
            biased;
            () = self.cancel.cancelled() => None,
            done = tokio::time::timeout_at(deadline, work) => done.ok().flatten(),
        };
        let Some((mut done, order, attributing)) = checked else {
            tracing::warn!(
                deadline_secs = limit.as_secs(),
                "citations not checked before the deadline"
            );
            return Checks::default();
        };
        let judged = self
            .judge(&mut done, conversation.as_deref(), deadline)
            .await;
        // A source the model found supporting its sentence needs no other.
        for checked in done.values_mut() {
            if checked.alignment.support == Support::Supported {
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
        Checks {
            alignments,
            claims: attributed(attributing, &done),
            judged,
        }
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

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::model::CitationEntry;
    use crate::ssr::blocking::Budget;

    /// Forty cited sentences over two sources, and the texts they are checked against.
    fn answer() -> (
        Vec<crate::citation::coverage::CitedSentence>,
        Vec<(u32, String, SourceText)>,
    ) {
        let entries: Vec<Arc<CitationEntry>> = (1..=2)
            .map(|number| {
                Arc::new(CitationEntry {
                    number,
                    url: format!("https://example.org/{number}"),
                    title: "Tokio".into(),
                    domain: "example.org".into(),
                    snippet: "Tokio is an asynchronous runtime for Rust.".into(),
                    query: "tokio".into(),
                    round: 1,
                    kind: crate::model::SourceKind::default(),
                    also_in_rounds: Vec::new(),
                })
            })
            .collect();
        let answer: String = (0..40)
            .map(|n| format!("Tokio is runtime number {n} for Rust [{}]. ", n % 2 + 1))
            .collect();
        let cited = cited_sentences(&answer, &SourceMap::new(entries.iter().cloned()));
        let all = entries
            .iter()
            .map(|entry| {
                (
                    entry.number,
                    entry.url.clone(),
                    SourceText {
                        page: None,
                        snippet: entry.snippet.clone(),
                    },
                )
            })
            .collect();
        (cited, all)
    }

    #[test]
    fn the_offline_check_stops_once_its_budget_is_spent() {
        let (cited, all) = answer();
        assert_eq!(cited.len(), 40);
        let time = Budget::new(
            Instant::now() + Duration::from_secs(60),
            CancellationToken::new(),
        );
        let (done, order, _) = check_all(&cited, Vec::new(), &all, &time);
        assert_eq!((done.len(), order.len()), (40, 40), "with time, everything");
        let past = Budget::new(Instant::now(), CancellationToken::new());
        let (done, order, attributing) = check_all(&cited, Vec::new(), &all, &past);
        assert!(done.is_empty() && order.is_empty() && attributing.is_empty());
        let stopped = CancellationToken::new();
        stopped.cancel();
        let (done, _, _) = check_all(
            &cited,
            Vec::new(),
            &all,
            &Budget::new(Instant::now() + Duration::from_secs(60), stopped),
        );
        assert!(done.is_empty(), "a stopped answer's check stops too");
    }
}
