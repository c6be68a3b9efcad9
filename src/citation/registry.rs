//! The citation registry (seed 000's GlobalCitationManager): the one owner of citation
//! numbers.
//!
//! Each search round's results get consecutive numbers from the next free one, when the
//! results arrive; nothing renumbers them later. Agent and Research modes keep one registry
//! per session (numbers run across questions); Chat mode makes a fresh one per answer
//! (numbers 1..n). Entries live in a `Vec` indexed by `number - 1`, so lookup is O(1).
//!
//! Deduplication is off by default, as the seeds choose. When on, a URL already registered
//! (compared in [`urls::normalise`] form) keeps its number and records the extra round.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::citation::urls;
pub use crate::model::CitationEntry;
use crate::model::{Source, SourceKind};

/// One search round: its query and the numbers its results got, in result order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Round {
    pub round: u32,
    pub query: String,
    pub numbers: Vec<u32>,
}

/// What a call to [`Registry::add_round`] did, for the caller to log and show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    pub round: u32,
    /// The numbers of this round's results, in result order (some reused in dedup mode).
    pub numbers: Vec<u32>,
    /// The range of newly allocated numbers, if any.
    pub new_range: Option<(u32, u32)>,
    /// Problems found in the registry before allocating, already repaired.
    pub conflicts: Vec<Conflict>,
}

/// A broken registry invariant. Should never happen; detected, repaired and reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conflict {
    /// The entry at this position carries another number.
    WrongNumber { position: usize, found: u32 },
    /// A round lists a number that no entry has.
    DanglingNumber { round: u32, number: u32 },
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "RegistryData", into = "RegistryData")]
pub struct Registry {
    /// Shared so that render trees and lists point at entries instead of copying them.
    entries: Vec<Arc<CitationEntry>>,
    rounds: Vec<Round>,
    dedup: bool,
    /// Normalised URL → number; only maintained in dedup mode.
    by_url: HashMap<String, u32>,
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }

    /// A registry that gives a URL found again the number it already has.
    pub fn with_dedup() -> Registry {
        Registry {
            dedup: true,
            ..Registry::default()
        }
    }

    /// A per-answer registry holding one round (Chat mode): numbers 1..n.
    pub fn single_round(query: &str, sources: &[Source]) -> Registry {
        let mut registry = Registry::new();
        registry.add_round(query, sources);
        registry
    }

    pub fn dedup(&self) -> bool {
        self.dedup
    }

    /// Registers one search round and numbers its results.
    pub fn add_round(&mut self, query: &str, sources: &[Source]) -> Allocation {
        let conflicts = self.check();
        if !conflicts.is_empty() {
            self.repair();
        }
        let round = self.rounds.len() as u32 + 1;
        let first_new = self.next_number();
        let mut numbers = Vec::with_capacity(sources.len());
        for source in sources {
            if self.dedup {
                let key = urls::normalise(&source.url);
                if let Some(&number) = self.by_url.get(&key) {
                    let entry = Arc::make_mut(&mut self.entries[number as usize - 1]);
                    if entry.round != round && !entry.also_in_rounds.contains(&round) {
                        entry.also_in_rounds.push(round);
                    }
                    numbers.push(number);
                    continue;
                }
                self.by_url.insert(key, self.next_number());
            }
            let number = self.next_number();
            self.entries.push(Arc::new(CitationEntry {
                number,
                url: source.url.clone(),
                title: source.title.clone(),
                // A knowledge document names its file; web pages show their host.
                domain: if source.kind == SourceKind::Knowledge && !source.domain.is_empty() {
                    source.domain.clone()
                } else {
                    urls::domain(&source.url)
                },
                snippet: source.snippet.clone(),
                query: query.to_string(),
                round,
                kind: source.kind,
                also_in_rounds: Vec::new(),
            }));
            numbers.push(number);
        }
        let last_new = self.next_number() - 1;
        self.rounds.push(Round {
            round,
            query: query.to_string(),
            numbers: numbers.clone(),
        });
        Allocation {
            round,
            numbers,
            new_range: (last_new >= first_new).then_some((first_new, last_new)),
            conflicts,
        }
    }

    /// The entry with this number.
    pub fn get(&self, number: u32) -> Option<&CitationEntry> {
        self.shared(number).map(|entry| &**entry)
    }

    /// The entry with this number, shared rather than copied.
    pub fn shared(&self, number: u32) -> Option<&Arc<CitationEntry>> {
        let entry = self.entries.get((number as usize).checked_sub(1)?)?;
        // Guards lookups even in a registry that has not been repaired yet.
        (entry.number == number).then_some(entry)
    }

    pub fn entries(&self) -> &[Arc<CitationEntry>] {
        &self.entries
    }

    pub fn rounds(&self) -> &[Round] {
        &self.rounds
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The number the next new source will get.
    pub fn next_number(&self) -> u32 {
        self.entries.len() as u32 + 1
    }

    /// Forgets everything: the next source is number 1 again (`/reset`).
    pub fn reset(&mut self) {
        self.entries.clear();
        self.rounds.clear();
        self.by_url.clear();
    }

    /// Checks the invariants: entry `i` has number `i + 1`, and every number a round lists
    /// exists. Cheap (one pass); called before each allocation.
    pub fn check(&self) -> Vec<Conflict> {
        let mut conflicts: Vec<Conflict> = self
            .entries
            .iter()
            .enumerate()
            .filter(|(position, entry)| entry.number as usize != position + 1)
            .map(|(position, entry)| Conflict::WrongNumber {
                position,
                found: entry.number,
            })
            .collect();
        for round in &self.rounds {
            for &number in &round.numbers {
                if number == 0 || number as usize > self.entries.len() {
                    conflicts.push(Conflict::DanglingNumber {
                        round: round.round,
                        number,
                    });
                }
            }
        }
        conflicts
    }

    /// Restores the invariants: entries are renumbered by position, rounds keep only
    /// numbers that exist, and the URL index is rebuilt.
    pub fn repair(&mut self) {
        for (position, entry) in self.entries.iter_mut().enumerate() {
            if entry.number != position as u32 + 1 {
                Arc::make_mut(entry).number = position as u32 + 1;
            }
        }
        let len = self.entries.len() as u32;
        for round in &mut self.rounds {
            round.numbers.retain(|&number| (1..=len).contains(&number));
        }
        self.rebuild_index();
    }

    fn rebuild_index(&mut self) {
        self.by_url.clear();
        if self.dedup {
            for entry in &self.entries {
                self.by_url
                    .entry(urls::normalise(&entry.url))
                    .or_insert(entry.number);
            }
        }
    }
}

/// The serialised form: the URL index is derived, so it is rebuilt on load.
#[derive(Serialize, Deserialize)]
struct RegistryData {
    entries: Vec<Arc<CitationEntry>>,
    rounds: Vec<Round>,
    #[serde(default)]
    dedup: bool,
}

impl From<RegistryData> for Registry {
    fn from(data: RegistryData) -> Registry {
        let mut registry = Registry {
            entries: data.entries,
            rounds: data.rounds,
            dedup: data.dedup,
            by_url: HashMap::new(),
        };
        registry.rebuild_index();
        registry
    }
}

impl From<Registry> for RegistryData {
    fn from(registry: Registry) -> RegistryData {
        RegistryData {
            entries: registry.entries,
            rounds: registry.rounds,
            dedup: registry.dedup,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn sources(prefix: &str, n: usize) -> Vec<Source> {
        (1..=n)
            .map(|i| Source {
                url: format!("https://{prefix}.example.org/{i}"),
                title: format!("{prefix} title {i}"),
                snippet: format!("{prefix} snippet {i}"),
                ..Source::default()
            })
            .collect()
    }

    #[test]
    fn five_then_three() {
        let mut registry = Registry::new();
        let first = registry.add_round("q1", &sources("a", 5));
        assert_eq!(first.new_range, Some((1, 5)));
        assert_eq!(first.numbers, vec![1, 2, 3, 4, 5]);
        assert_eq!(registry.next_number(), 6);
        let second = registry.add_round("q2", &sources("b", 3));
        assert_eq!(second.round, 2);
        assert_eq!(second.new_range, Some((6, 8)));
        let entry = registry.get(7).unwrap();
        assert_eq!((entry.round, entry.query.as_str()), (2, "q2"));
        assert_eq!(entry.url, "https://b.example.org/2");
        assert_eq!(entry.domain, "b.example.org");
    }

    #[test]
    fn nth_round_starts_after_all_previous_results() {
        let mut registry = Registry::new();
        let sizes = [5, 3, 5, 1, 0, 4, 20];
        let mut total = 0u32;
        for (idx, &size) in sizes.iter().enumerate() {
            let allocation =
                registry.add_round(&format!("q{idx}"), &sources(&format!("r{idx}"), size));
            assert_eq!(allocation.round, idx as u32 + 1);
            if size == 0 {
                assert_eq!(allocation.new_range, None);
            } else {
                assert_eq!(allocation.new_range, Some((total + 1, total + size as u32)));
            }
            total += size as u32;
        }
        let numbers: Vec<u32> = registry.entries().iter().map(|e| e.number).collect();
        assert_eq!(
            numbers,
            (1..=total).collect::<Vec<_>>(),
            "unique and consecutive"
        );
        assert!(registry.check().is_empty());
    }

    #[test]
    fn reset_restarts_at_one() {
        let mut registry = Registry::new();
        registry.add_round("q", &sources("a", 5));
        registry.reset();
        assert!(registry.is_empty());
        assert_eq!(
            registry.add_round("q", &sources("a", 2)).new_range,
            Some((1, 2))
        );
        assert_eq!(registry.get(1).unwrap().round, 1);
    }

    #[test]
    fn without_dedup_a_url_found_twice_gets_two_numbers() {
        let mut registry = Registry::new();
        registry.add_round("q1", &sources("a", 2));
        let again = registry.add_round("q2", &sources("a", 2));
        assert_eq!(again.numbers, vec![3, 4]);
        assert_eq!(registry.len(), 4);
    }

    #[test]
    fn with_dedup_a_url_found_again_keeps_its_number() {
        let mut registry = Registry::with_dedup();
        registry.add_round("q1", &sources("a", 3));
        let mut round_two = sources("b", 1);
        round_two.push(Source {
            // The same page as a/2, written differently.
            url: "http://WWW.a.example.org/2/?utm_source=feed#top".to_string(),
            ..Source::default()
        });
        let allocation = registry.add_round("q2", &round_two);
        assert_eq!(allocation.numbers, vec![4, 2]);
        assert_eq!(allocation.new_range, Some((4, 4)));
        registry.add_round("q3", &sources("a", 1));
        assert_eq!(registry.get(2).unwrap().also_in_rounds, vec![2]);
        assert_eq!(registry.get(1).unwrap().also_in_rounds, vec![3]);
        assert_eq!(registry.len(), 4);
    }

    #[test]
    fn lookup_out_of_range() {
        let registry = Registry::single_round("q", &sources("a", 3));
        assert!(registry.get(0).is_none());
        assert!(registry.get(4).is_none());
        assert!(registry.get(u32::MAX).is_none());
        assert_eq!(registry.get(3).unwrap().number, 3);
    }

    #[test]
    fn conflicts_are_detected_repaired_and_reported() {
        let mut registry = Registry::new();
        registry.add_round("q1", &sources("a", 3));
        // Corrupt it the way a bad persisted session might.
        let mut data: serde_json::Value = serde_json::to_value(&registry).unwrap();
        data["entries"][1]["number"] = 7.into();
        data["rounds"][0]["numbers"][2] = 9.into();
        let mut registry: Registry = serde_json::from_value(data).unwrap();
        assert!(registry.get(2).is_none(), "a wrong number is never served");
        let allocation = registry.add_round("q2", &sources("b", 1));
        assert_eq!(
            allocation.conflicts,
            vec![
                Conflict::WrongNumber {
                    position: 1,
                    found: 7
                },
                Conflict::DanglingNumber {
                    round: 1,
                    number: 9
                },
            ]
        );
        assert_eq!(allocation.new_range, Some((4, 4)));
        assert!(registry.check().is_empty());
        assert_eq!(registry.get(2).unwrap().url, "https://a.example.org/2");
    }

    #[test]
    fn serde_round_trip_keeps_dedup_working() {
        let mut registry = Registry::with_dedup();
        registry.add_round("q1", &sources("a", 2));
        let json = serde_json::to_string(&registry).unwrap();
        let mut restored: Registry = serde_json::from_str(&json).unwrap();
        assert_eq!(restored, registry);
        let allocation = restored.add_round("q2", &sources("a", 1));
        assert_eq!(allocation.numbers, vec![1]);
    }
}
