//! Claim–passage alignment: for a sentence of an answer and the text of a source it cites,
//! the passage of the source that best supports the sentence, and how well.
//!
//! The method is lexical, so it works offline and for Chinese:
//! 1. Words: jieba segments the text (Han and Latin alike, in search mode, so compounds
//!    also give their parts) and lowercases it; punctuation and a short list of function
//!    words are dropped. Numbers (`2016`, `1.50`, `10,000`) are compared apart.
//! 2. Passages: the source is cut into sentences after `。！？；`, line ends, and `.!?;`
//!    followed by a space (or, after a lowercase letter, by a capital or a Han character:
//!    extracted pages join paragraphs so); each sentence, and each pair of neighbouring
//!    sentences, is a candidate.
//! 3. The best candidate by BM25 (k1 = 1.2, b = 0.75, the idf over the source's sentences)
//!    of the sentence's words.
//! 4. The level, from the share of the sentence's words (each weighted by its idf; a word
//!    the source never uses weighs as much as one it uses once; Latin words match their
//!    inflections) that the passage holds, from the numbers and from negation:
//!    - not found: a share under [`PARTIAL`], a number of the sentence missing from a
//!      passage that states other numbers (it says something else), or a negation on one
//!      side only;
//!    - supported: a share of at least [`SUPPORTED`] with every number of the sentence in
//!      the passage;
//!    - partial: everything between (part of the claim, a number the passage does not give).
//!
//! The two thresholds were chosen on the labelled set below, so its figures are in-sample:
//! a lexical method cannot tell "Empire State Building, 1931" from "Chrysler Building,
//! 1930" when the rest of the words agree, and the set is written to contain such traps.
//!
//! The labelled set `src/tests/data/alignment.jsonl` measures it (`tests::alignment`).

use std::collections::HashSet;
use std::sync::OnceLock;

use tantivy::tokenizer::{LowerCaser, TextAnalyzer};

use crate::model::Support;

/// The share of the sentence's weight a passage needs for "supported".
pub const SUPPORTED: f64 = 0.55;
/// The share below which the support is "not found".
pub const PARTIAL: f64 = 0.3;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Words that carry no claim.
const STOPWORDS: &[&str] = &[
    "a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "with", "from", "as", "and", "or",
    "is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "these", "those",
    "which", "who", "has", "have", "had", "can", "will", "also", "than", "then", "there", "their",
    "they", "so", "such", "into", "about", "s", "的", "了", "是", "在", "和", "与", "也", "都",
    "而", "及", "或", "这", "那", "它", "其", "为", "对", "把", "被", "就", "并", "等", "中", "上",
    "个", "一个", "以及", "可以", "会",
];

/// Words that turn a claim around.
const NEGATIONS: &[&str] = &[
    "not", "no", "never", "none", "cannot", "without", "n't", "不", "没", "没有", "未", "无", "非",
    "并非", "不是", "不会", "不能",
];

/// What the best passage of a source says about a sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Aligned {
    pub support: Support,
    /// The passage ("" when the source has no text).
    pub passage: String,
    /// Its byte offset in the source text.
    pub offset: usize,
    /// Byte ranges of `passage` holding words the sentence shares with it.
    pub matched: Vec<(u32, u32)>,
    /// What the level was decided from.
    pub features: Features,
}

/// One word of a text, with where it stands.
struct Word {
    text: String,
    start: usize,
    end: usize,
}

fn analyzer() -> TextAnalyzer {
    static ANALYZER: OnceLock<TextAnalyzer> = OnceLock::new();
    ANALYZER
        .get_or_init(|| {
            TextAnalyzer::builder(tantivy_jieba::JiebaTokenizer::with_search_mode(true))
                .filter(LowerCaser)
                .build()
        })
        .clone()
}

/// The content words of `text`, offsets relative to `base`.
fn words(text: &str, base: usize) -> Vec<Word> {
    let mut analyzer = analyzer();
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while stream.advance() {
        let token = stream.token();
        let word = token.text.trim();
        if word.chars().any(char::is_alphanumeric) && !STOPWORDS.contains(&word) {
            out.push(Word {
                text: word.to_string(),
                start: base + token.offset_from,
                end: base + token.offset_to,
            });
        }
    }
    out
}

/// The numbers in `text`: digit runs with inner `.` or `,` (`,` dropped: `10,000` is
/// `10000`); a trailing `.` is a full stop.
fn numbers(text: &str) -> HashSet<String> {
    let mut found = HashSet::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            current.push(c);
        } else if (c == '.' || c == ',')
            && !current.is_empty()
            && chars.peek().is_some_and(char::is_ascii_digit)
        {
            if c == '.' {
                current.push(c);
            }
        } else if !current.is_empty() {
            found.insert(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        found.insert(current);
    }
    found
}

/// The same word, allowing for inflection in Latin script: equal, or one a prefix of the
/// other of at least 4 letters (`async`/`asynchronous`, `release`/`released`), or the two
/// sharing their first 6 letters.
fn same_word(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let latin = |w: &str| w.chars().all(|c| c.is_ascii_alphabetic());
    if !latin(a) || !latin(b) {
        return false;
    }
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    (short.len() >= 4 && long.starts_with(short))
        || (short.len() >= 6 && short.as_bytes()[..6] == long.as_bytes()[..6])
}

fn negated(words: &[Word]) -> bool {
    words.iter().any(|w| NEGATIONS.contains(&w.text.as_str()))
}

/// The sentences of `text` as byte ranges, trimmed, empty ones left out.
fn sentences(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    let mut previous = ' ';
    while let Some((idx, c)) = chars.next() {
        let ends = match c {
            '。' | '！' | '？' | '；' | '\n' => true,
            // Extracted page text often joins paragraphs without a space: "it.Tokio".
            '.' | '!' | '?' | ';' => chars.peek().is_none_or(|&(_, next)| {
                next.is_whitespace()
                    || (previous.is_ascii_lowercase()
                        && (next.is_uppercase() || crate::text::has_han(&next.to_string())))
            }),
            _ => false,
        };
        previous = c;
        if ends {
            let end = idx + c.len_utf8();
            out.push((start, end));
            start = end;
        }
    }
    out.push((start, text.len()));
    out.into_iter()
        .filter_map(|(start, end)| {
            let piece = &text[start..end];
            let lead = piece.len() - piece.trim_start().len();
            let trail = piece.len() - piece.trim_end().len();
            (end - trail > start + lead).then_some((start + lead, end - trail))
        })
        .collect()
}

/// Finds the passage of `source` that best supports `sentence`.
pub fn align(sentence: &str, source: &str) -> Aligned {
    let claim: Vec<Word> = {
        let mut seen = HashSet::new();
        words(sentence, 0)
            .into_iter()
            .filter(|w| seen.insert(w.text.clone()))
            .collect()
    };
    let spans = sentences(source);
    if spans.is_empty() || claim.is_empty() {
        return Aligned {
            support: Support::NotFound,
            passage: String::new(),
            offset: 0,
            matched: Vec::new(),
            features: Features::default(),
        };
    }
    let per_sentence: Vec<Vec<Word>> = spans
        .iter()
        .map(|&(start, end)| words(&source[start..end], start))
        .collect();
    let holds = |words: &[&Word], term: &str| words.iter().any(|w| same_word(term, &w.text));
    // Document frequencies of the sentence's words over the source's sentences; a word the
    // source never uses weighs as much as one it uses once.
    let n = per_sentence.len() as f64;
    let weights: Vec<f64> = claim
        .iter()
        .map(|term| {
            let seen = per_sentence
                .iter()
                .filter(|words| holds(&words.iter().collect::<Vec<_>>(), &term.text))
                .count()
                .max(1) as f64;
            (1.0 + (n - seen + 0.5) / (seen + 0.5)).ln()
        })
        .collect();
    let average = per_sentence.iter().map(Vec::len).sum::<usize>() as f64 / n;
    // Candidates: each sentence, and each pair of neighbours, by BM25.
    let mut best: Option<(f64, usize, usize)> = None;
    for first in 0..per_sentence.len() {
        for last in first..(first + 2).min(per_sentence.len()) {
            let window: Vec<&Word> = per_sentence[first..=last].iter().flatten().collect();
            let length = window.len() as f64;
            let score: f64 = claim
                .iter()
                .zip(&weights)
                .map(|(term, weight)| {
                    let tf = window
                        .iter()
                        .filter(|w| same_word(&term.text, &w.text))
                        .count() as f64;
                    weight * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length / average.max(1.0)))
                })
                .sum();
            if best.is_none_or(|(top, _, _)| score > top) {
                best = Some((score, first, last));
            }
        }
    }
    let (first, last) = best.map_or((0, 0), |(_, first, last)| (first, last));
    let window: Vec<&Word> = per_sentence[first..=last].iter().flatten().collect();
    let everything: Vec<&Word> = per_sentence.iter().flatten().collect();
    let (start, end) = (spans[first].0, spans[last].1);
    let passage = &source[start..end];
    let total: f64 = weights.iter().sum();
    let share_in = |words: &[&Word]| {
        let held: f64 = claim
            .iter()
            .zip(&weights)
            .filter(|(term, _)| holds(words, &term.text))
            .map(|(_, weight)| weight)
            .sum();
        if total > 0.0 {
            held / total
        } else {
            0.0
        }
    };
    let claimed = numbers(sentence);
    let stated = numbers(passage);
    let window_words: Vec<Word> = window
        .iter()
        .map(|w| Word {
            text: w.text.clone(),
            start: w.start,
            end: w.end,
        })
        .collect();
    let features = Features {
        words: claim.len(),
        missing_words: claim
            .iter()
            .filter(|term| !holds(&window, &term.text))
            .count(),
        share: share_in(&window),
        source_share: share_in(&everything),
        sentence_numbers: claimed.len(),
        missing_numbers: claimed.iter().filter(|n| !stated.contains(*n)).count(),
        other_numbers: stated.iter().filter(|n| !claimed.contains(*n)).count(),
        source_other_numbers: numbers(source)
            .iter()
            .filter(|n| !claimed.contains(*n))
            .count(),
        negation_differs: negated(&claim) != negated(&window_words),
    };
    let mut matched: Vec<(u32, u32)> = window
        .iter()
        .filter(|w| claim.iter().any(|term| same_word(&term.text, &w.text)))
        .map(|w| ((w.start - start) as u32, (w.end - start) as u32))
        .collect();
    matched.sort_unstable();
    // Search mode gives overlapping pieces of compounds: keep the outermost ranges.
    let mut merged: Vec<(u32, u32)> = Vec::new();
    for (from, to) in matched {
        match merged.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => merged.push((from, to)),
        }
    }
    Aligned {
        support: level(&features),
        passage: passage.to_string(),
        offset: start,
        matched: merged,
        features,
    }
}

/// What the level is decided from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Features {
    /// The sentence's content words, and those of them the passage lacks.
    pub words: usize,
    pub missing_words: usize,
    /// The idf-weighted share of the sentence's words that the passage holds.
    pub share: f64,
    /// The same over the whole source.
    pub source_share: f64,
    /// Numbers in the sentence, and those of them the passage lacks.
    pub sentence_numbers: usize,
    pub missing_numbers: usize,
    /// Numbers the passage states that the sentence does not, and the whole source.
    pub other_numbers: usize,
    pub source_other_numbers: usize,
    /// A negation on one side only.
    pub negation_differs: bool,
}

/// The level the features give (the rule in the module's documentation).
pub fn level(f: &Features) -> Support {
    let other_number = f.missing_numbers > 0 && f.other_numbers > 0;
    if f.share < PARTIAL || other_number || f.negation_differs {
        Support::NotFound
    } else if f.share >= SUPPORTED && f.missing_numbers == 0 {
        Support::Supported
    } else {
        Support::Partial
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_sentence_that_states_the_claim_and_marks_its_words() {
        let source = "Rust was started at Mozilla. Tokio is an asynchronous runtime for Rust, \
                      released in 2016. It schedules tasks on a work-stealing pool. Many servers use it.";
        let found = align(
            "Tokio, an async runtime for Rust, was first released in 2016.",
            source,
        );
        assert!(
            found
                .passage
                .starts_with("Tokio is an asynchronous runtime"),
            "{found:?}"
        );
        assert_eq!(found.support, Support::Supported, "{found:?}");
        assert_eq!(&source[found.offset..found.offset + 5], "Tokio");
        let marked: Vec<&str> = found
            .matched
            .iter()
            .map(|&(a, b)| &found.passage[a as usize..b as usize])
            .collect();
        assert!(
            marked.contains(&"Tokio") && marked.contains(&"2016"),
            "{marked:?}"
        );
    }

    #[test]
    fn a_different_number_is_not_support() {
        let source = "Tokio 1.40 was released in August. Tokio 1.50 improved the scheduler.";
        let found = align("Tokio 1.45 improved the scheduler.", source);
        assert_eq!(found.support, Support::NotFound, "{found:?}");
    }

    #[test]
    fn chinese_is_segmented_and_numbers_compared() {
        let source =
            "埃菲尔铁塔位于法国巴黎。铁塔建于1887年至1889年，高度约330米。每年有数百万游客参观。";
        let found = align("埃菲尔铁塔的高度约为330米。", source);
        assert!(found.passage.contains("330"), "{found:?}");
        assert_eq!(found.support, Support::Supported, "{found:?}");
        let wrong = align("埃菲尔铁塔的高度约为500米。", source);
        assert_eq!(wrong.support, Support::NotFound, "{wrong:?}");
    }

    #[test]
    fn half_a_claim_is_partial() {
        let source = "The Eiffel Tower is in Paris. It was built for the 1889 World's Fair.";
        let found = align(
            "The Eiffel Tower was built for the 1889 World's Fair and is repainted in gold leaf by climbers every seven years.",
            source,
        );
        assert_eq!(found.support, Support::Partial, "{found:?}");
    }

    #[test]
    fn an_empty_source_supports_nothing() {
        assert_eq!(
            align("Anything at all here.", "").support,
            Support::NotFound
        );
        assert_eq!(
            numbers("版本 1.50，共 10,000 次，2016年。"),
            ["1.50", "10000", "2016"].map(String::from).into()
        );
    }
}
