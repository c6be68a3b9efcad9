//! A turn's sources: how it searches (through its [`Searcher`]), the image strip, the
//! citation numbers its rounds get, and the conversation so far.

use std::sync::Arc;

use super::Turn;
use crate::citation::{used_numbers, Allocation, Registry};
use crate::model::{AnswerEvent, CitationEntry, Image, Level, Source};
use crate::ssr::llm::reply::Halted;
use crate::ssr::llm::Message;
use crate::ssr::pipeline::search::{Searched, Searcher};
use crate::ssr::search::SearchOptions;

impl Turn {
    /// How this answer searches: picked at the first call (the session's source choice), a
    /// fallback to the knowledge base told in a notice.
    pub async fn searcher(&mut self) -> Result<Searcher, Halted> {
        if let Some(searcher) = &self.searcher {
            return Ok(searcher.clone());
        }
        // The health check may take a SearXNG timeout; stop must not wait for it.
        let (searcher, notice) = self
            .guard(Searcher::pick(
                &self.state,
                Arc::clone(&self.session),
                self.input.lang,
                self.exchange.narrowing.clone(),
                self.input.files.clone(),
            ))
            .await?;
        if let Some(notice) = notice {
            self.notice(notice.level, notice.text).await?;
        }
        self.searcher = Some(searcher.clone());
        Ok(searcher)
    }

    /// One search ([`Searcher::search`]), unless the answer stops first.
    pub async fn search(
        &self,
        searcher: &Searcher,
        query: &str,
        options: &SearchOptions,
    ) -> Result<Searched, Halted> {
        self.guard(searcher.search(query, options)).await
    }

    /// Whether the image strip is still to be searched for: true once per answer.
    pub fn first_pictures(&mut self) -> bool {
        !std::mem::replace(&mut self.pictures_sought, true)
    }

    /// Pictures for the strip ([`Searcher::images`]); none once the answer stops.
    pub async fn find_images(&self, searcher: &Searcher, query: &str) -> Vec<Image> {
        self.guard(searcher.images(query)).await.unwrap_or_default()
    }

    /// Shows the strip's pictures (none: nothing is sent).
    pub async fn images(&mut self, images: Vec<Image>) -> Result<(), Halted> {
        if images.is_empty() {
            return Ok(());
        }
        self.exchange.images.clone_from(&images);
        self.send(AnswerEvent::Images { images }).await
    }

    /// Numbers search rounds in the session registry, in order; logs each allocation and
    /// tells the user when a conflict had to be repaired. A `/reset` since the answer began
    /// halts it instead: nothing goes into the fresh registry.
    pub async fn register_rounds(
        &mut self,
        rounds: &[(&str, &[Source])],
    ) -> Result<Vec<Allocation>, Halted> {
        let allocations = self
            .session
            .with_registry_of(self.generation, |registry| {
                let allocations = rounds
                    .iter()
                    .map(|(query, sources)| {
                        let allocation = registry.add_round(query, sources);
                        tracing::debug!(query, n_results = sources.len(), range = ?allocation.new_range, round = allocation.round, "citation numbers allocated");
                        if !allocation.conflicts.is_empty() {
                            tracing::error!(conflicts = ?allocation.conflicts, "citation numbers conflicted; repaired");
                        }
                        allocation
                    })
                    .collect::<Vec<_>>();
                (allocations, registry.clone())
            })
            .ok_or(Halted)?;
        let (allocations, snapshot) = allocations;
        self.snapshot = snapshot;
        for allocation in &allocations {
            self.retrieved.extend(allocation.numbers.iter().copied());
        }
        if allocations.iter().any(|a| !a.conflicts.is_empty()) {
            // Seed 002: should never happen; detected, repaired, and the user is told. The
            // numbers are taken either way: a stop now is noticed by the next step.
            let text = self.texts().registry_conflict;
            let _ = self.notice(Level::Warning, text).await;
        }
        Ok(allocations)
    }

    /// The conversation so far as model messages: each answered exchange is a user
    /// question and the assistant's answer.
    pub fn history(&self) -> Vec<Message> {
        self.session
            .conversation()
            .iter()
            .filter(|exchange| !exchange.answer.trim().is_empty())
            .flat_map(|exchange| {
                [
                    Message::User(exchange.question.clone()),
                    Message::assistant(exchange.answer.clone()),
                ]
            })
            .collect()
    }

    /// A copy of the session registry (never hold its lock across an `.await`).
    pub fn registry(&self) -> Registry {
        self.session.with_registry(|registry| registry.clone())
    }

    /// The conversation's registry: the session's while no `/reset` or switch replaced it,
    /// else this answer's last view of it.
    pub(super) fn own_registry(&self) -> Registry {
        self.session
            .with_registry_of(self.generation, |registry| registry.clone())
            .unwrap_or_else(|| self.snapshot.clone())
    }

    /// The session-registry entries this answer retrieved, plus older ones its text cites.
    pub fn answer_sources(&self) -> Vec<Arc<CitationEntry>> {
        let registry = self.own_registry();
        let mut numbers = self.retrieved.clone();
        numbers.extend(used_numbers(&self.exchange.answer, &registry));
        numbers.sort_unstable();
        numbers.dedup();
        numbers
            .into_iter()
            .filter_map(|n| registry.shared(n).cloned())
            .collect()
    }
}
