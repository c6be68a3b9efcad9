//! Citation coverage: how much of an answer is backed by a source it cites.
//!
//! The rule, kept simple so a reader can check it by hand:
//! - The answer is read as Markdown. Headings, code blocks, rules and table headers make no
//!   claims; paragraphs, list items, quotes and table cells do.
//! - Their text is cut into sentences after `。！？；` and after `.!?;` followed by a space
//!   or the end. Citation markers right after a sentence's end still belong to it.
//! - A sentence makes a claim when it has at least 12 letters or digits (Han characters
//!   count as letters) and does not end in a question mark.
//! - It is cited when it carries at least one marker whose number has a source
//!   ([`Cite::Found`]); a marker whose number is unknown does not count.
//!
//! Coverage is cited claims over claims; an answer that claims nothing has full coverage.

use crate::citation::render::{Block, Cite, Inline, Lookup};
use crate::model::{ClaimCheck, Coverage};

/// Letters or digits a sentence needs to count as a claim.
pub const MIN_CLAIM_CHARS: usize = 12;

/// The coverage of `answer` against the sources in `lookup`.
pub fn coverage(answer: &str, lookup: &impl Lookup) -> Coverage {
    read(answer, lookup).coverage
}

/// One citation in an answer, with the sentence it stands in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CitedSentence {
    /// The citation's place among the answer's found citations, in reading order (the same
    /// count as [`crate::citation::Rendered::for_each_cite`]; the browser keys its
    /// citation links by it).
    pub ordinal: u32,
    pub number: u32,
    /// The sentence's text without its markers, trimmed.
    pub sentence: String,
}

/// A claim the answer makes without a found citation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UncitedClaim {
    /// Its place among the answer's sentences (what [`place`] is given back).
    pub sentence: u32,
    /// Its text, trimmed.
    pub text: String,
}

/// Every found citation of the answer's text with its sentence, in reading order (short
/// sentences too: a reader may check any citation). Citations in headings and table heads
/// are counted (for the ordinals) but have no sentence.
pub fn cited_sentences(answer: &str, lookup: &impl Lookup) -> Vec<CitedSentence> {
    read(answer, lookup).cited
}

/// The answer's claims that carry no found citation, in reading order.
pub fn uncited_claims(answer: &str, lookup: &impl Lookup) -> Vec<UncitedClaim> {
    read(answer, lookup).uncited
}

/// The checked uncited claims shown in a rendered answer: after each claim's sentence end
/// (or at the end of its paragraph, item or cell), the citation cited added or the mark of
/// a claim nothing supports. The text itself is untouched.
pub fn place(blocks: &mut [Block], claims: &[ClaimCheck]) {
    if claims.is_empty() {
        return;
    }
    let mut counter = Counter {
        placing: claims
            .iter()
            .enumerate()
            .map(|(key, claim)| (claim.sentence, claim.cite(key as u32)))
            .collect(),
        ..Counter::default()
    };
    for block in blocks {
        counter.block(block);
    }
}

fn read(answer: &str, lookup: &impl Lookup) -> Counter {
    let mut rendered = crate::citation::render(answer, lookup);
    let mut counter = Counter::default();
    for block in &mut rendered.blocks {
        counter.block(block);
    }
    counter
}

#[derive(Default)]
struct Counter {
    coverage: Coverage,
    /// The sentence being read: its letters and digits, and whether it cites.
    chars: usize,
    cites_any: bool,
    question: bool,
    /// The sentence has ended; markers may still follow before new text.
    ended: bool,
    /// Its text, and its found citations (ordinal, number).
    text: String,
    cites: Vec<(u32, u32)>,
    /// Found citations so far.
    ordinal: u32,
    /// Sentences (with letters or digits) read before this one.
    sentence: u32,
    /// What `cited_sentences` returns.
    cited: Vec<CitedSentence>,
    /// What `uncited_claims` returns.
    uncited: Vec<UncitedClaim>,
    /// For [`place`]: what to show after which sentence; taken once shown.
    placing: std::collections::BTreeMap<u32, Cite>,
}

impl Counter {
    fn block(&mut self, block: &mut Block) {
        match block {
            Block::Paragraph(inlines) | Block::Plain(inlines) => self.unit(inlines),
            Block::Quote(blocks) => blocks.iter_mut().for_each(|b| self.block(b)),
            Block::List { items, .. } => items
                .iter_mut()
                .flat_map(|item| item.blocks.iter_mut())
                .for_each(|b| self.block(b)),
            Block::Table { head, rows, .. } => {
                head.iter().for_each(|cell| self.count_only(cell));
                rows.iter_mut().flatten().for_each(|cell| self.unit(cell));
            }
            Block::Heading { content, .. } => self.count_only(content),
            Block::Code { .. } | Block::Rule => {}
        }
    }

    /// Text that makes no claim: only its found citations are counted.
    fn count_only(&mut self, inlines: &[Inline]) {
        for inline in inlines {
            match inline {
                Inline::Emphasis(children)
                | Inline::Strong(children)
                | Inline::Strikethrough(children)
                | Inline::Link { children, .. } => self.count_only(children),
                Inline::Citation { cites, .. } => {
                    self.ordinal += cites
                        .iter()
                        .filter(|cite| matches!(cite, Cite::Found { .. }))
                        .count() as u32;
                }
                _ => {}
            }
        }
    }

    /// A paragraph, item or cell: its sentences; the last one ends with it.
    fn unit(&mut self, inlines: &mut Vec<Inline>) {
        self.inlines(inlines);
        // A sentence that ended with no full stop to place after: at the unit's end.
        if self.chars > 0 {
            if let Some(cite) = self.placing.remove(&self.sentence) {
                inlines.push(added(cite));
            }
        }
        self.close();
    }

    fn inlines(&mut self, inlines: &mut Vec<Inline>) {
        let mut at = 0;
        while at < inlines.len() {
            match &mut inlines[at] {
                Inline::Text(text) => {
                    let cuts = self.text(text, true);
                    if !cuts.is_empty() {
                        // The text split where its sentences end, each followed by its cite.
                        let whole = std::mem::take(text);
                        let mut parts = Vec::with_capacity(cuts.len() * 2 + 1);
                        let mut from = 0;
                        for (cut, cite) in cuts {
                            if cut > from {
                                parts.push(Inline::Text(whole[from..cut].to_string()));
                            }
                            parts.push(added(cite));
                            from = cut;
                        }
                        if from < whole.len() {
                            parts.push(Inline::Text(whole[from..].to_string()));
                        }
                        let count = parts.len();
                        inlines.splice(at..=at, parts);
                        at += count;
                        continue;
                    }
                }
                Inline::Code(code) => {
                    self.text(code, false);
                }
                Inline::Emphasis(children)
                | Inline::Strong(children)
                | Inline::Strikethrough(children)
                | Inline::Link { children, .. } => self.inlines(children),
                Inline::SoftBreak | Inline::LineBreak => {
                    self.text(" ", false);
                }
                Inline::Citation { cites, .. } => {
                    for cite in cites {
                        if let Cite::Found { number, .. } = cite {
                            self.cites_any = true;
                            self.cites.push((self.ordinal, *number));
                            self.ordinal += 1;
                        }
                    }
                }
            }
            at += 1;
        }
    }

    /// Reads `text`; when placing, where in it (byte offsets just after a sentence's end)
    /// something is to be shown, if it may be cut (`cuttable`).
    fn text(&mut self, text: &str, cuttable: bool) -> Vec<(usize, Cite)> {
        let mut cuts = Vec::new();
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            if c.is_alphanumeric() {
                if self.ended {
                    // Not yet shown (its end was in code): before the next sentence.
                    if cuttable && self.chars > 0 {
                        if let Some(cite) = self.placing.remove(&self.sentence) {
                            cuts.push((at, cite));
                        }
                    }
                    self.close();
                }
                self.chars += 1;
                self.question = false;
            }
            self.text.push(c);
            let ends = match c {
                '。' | '！' | '？' | '；' => true,
                '.' | '!' | '?' | ';' => chars.peek().is_none_or(|(_, next)| next.is_whitespace()),
                _ => false,
            };
            if ends {
                if cuttable && !self.ended && self.chars > 0 {
                    if let Some(cite) = self.placing.remove(&self.sentence) {
                        cuts.push((at + c.len_utf8(), cite));
                    }
                }
                self.ended = true;
                self.question = matches!(c, '?' | '？');
            }
        }
        cuts
    }

    /// Counts the sentence read so far and starts the next.
    fn close(&mut self) {
        let claim = self.chars >= MIN_CLAIM_CHARS && !self.question;
        let sentence = self.text.trim();
        if claim {
            self.coverage.claims += 1;
            if self.cites_any {
                self.coverage.cited += 1;
            } else {
                self.uncited.push(UncitedClaim {
                    sentence: self.sentence,
                    text: sentence.to_string(),
                });
            }
        }
        for (ordinal, number) in self.cites.drain(..) {
            self.cited.push(CitedSentence {
                ordinal,
                number,
                sentence: sentence.to_string(),
            });
        }
        if self.chars > 0 {
            self.sentence += 1;
        }
        self.text.clear();
        self.chars = 0;
        self.cites_any = false;
        self.question = false;
        self.ended = false;
    }
}

/// What cited shows after a claim: a marker of its own, with no text of the model's.
fn added(cite: Cite) -> Inline {
    Inline::Citation {
        original: String::new(),
        cites: vec![cite],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::citation::{CitationEntry, SourceMap};
    use std::sync::Arc;

    fn sources(numbers: &[u32]) -> SourceMap {
        SourceMap::new(numbers.iter().map(|&number| {
            Arc::new(CitationEntry {
                number,
                title: format!("Source {number}"),
                url: format!("https://example.org/{number}"),
                domain: "example.org".to_string(),
                snippet: String::new(),
                query: "q".to_string(),
                round: 1,
                kind: crate::model::SourceKind::Web,
                also_in_rounds: Vec::new(),
            })
        }))
    }

    fn measure(answer: &str) -> (u32, u32) {
        let c = coverage(answer, &sources(&[1, 2]));
        (c.cited, c.claims)
    }

    #[test]
    fn sentences_are_counted_by_the_documented_rule() {
        // Markers after the full stop belong to the sentence before it.
        assert_eq!(
            measure("Tokio is an asynchronous runtime. [1] It has a work-stealing scheduler [2]. It is popular with servers."),
            (2, 3)
        );
        assert_eq!(
            measure("Tokio 是 Rust 的异步运行时库[1]。它使用工作窃取调度器来分配任务。"),
            (1, 2)
        );
        // Headings, code, short fragments and questions claim nothing.
        assert_eq!(
            measure(
                "# Tokio overview\n\n```\nlet x = 1;\n```\n\nIn short:\n\nWhat about async-std?"
            ),
            (0, 0)
        );
        // A number without a source does not count as a citation.
        assert_eq!(measure("Tokio was first released in 2016 [9]."), (0, 1));
        // List items and table cells are claims too; decimals do not end a sentence.
        assert_eq!(
            measure(
                "- Version 1.0 shipped in December 2020 [1]\n- Its scheduler is work stealing\n"
            ),
            (1, 2)
        );
        assert_eq!(measure(""), (0, 0));
        assert_eq!(coverage("", &sources(&[])).percent(), 100);
        assert_eq!(
            coverage("No sources back this long sentence here.", &sources(&[])).percent(),
            0
        );
    }

    #[test]
    fn each_found_citation_comes_with_its_sentence_and_reading_order() {
        let answer = "## Tokio [1]\n\nTokio is an asynchronous runtime. [1] It steals work [2][9], \
                      and **it is fast** [2].\n\n| a [1] |\n|---|\n| Cells claim things too here [2] |\n\n\
                      Short [1].";
        let found = cited_sentences(answer, &sources(&[1, 2]));
        let seen: Vec<(u32, u32, &str)> = found
            .iter()
            .map(|c| (c.ordinal, c.number, c.sentence.as_str()))
            .collect();
        assert_eq!(
            seen,
            vec![
                (1, 1, "Tokio is an asynchronous runtime."),
                (2, 2, "It steals work [9], and it is fast ."),
                (3, 2, "It steals work [9], and it is fast ."),
                (5, 2, "Cells claim things too here"),
                (6, 1, "Short ."),
            ]
        );
        // The ordinals are those of the render tree's citations (the browser's keys).
        let rendered = crate::citation::render(answer, &sources(&[1, 2]));
        let mut found_in_tree = 0;
        rendered.for_each_cite(|cite| {
            if matches!(cite, Cite::Found { .. }) {
                found_in_tree += 1;
            }
        });
        assert_eq!(found_in_tree, 7);
    }

    fn checked(sentence: u32, number: Option<u32>) -> ClaimCheck {
        ClaimCheck {
            sentence,
            text: String::new(),
            added: number.map(|number| crate::model::Alignment {
                ordinal: 0,
                number,
                support: crate::model::Support::Supported,
                passage: String::new(),
                matched: Vec::new(),
                offset: None,
                better: None,
            }),
        }
    }

    #[test]
    fn uncited_claims_are_read_and_placed_after_their_sentence_without_touching_the_text() {
        let answer =
            "Tokio is an asynchronous runtime [1]. It uses a work-stealing scheduler. Short.\n\n\
                      - Its first release came in `2016`\n- Another item that claims something\n";
        let lookup = sources(&[1, 2]);
        let found: Vec<(u32, String)> = uncited_claims(answer, &lookup)
            .into_iter()
            .map(|claim| (claim.sentence, claim.text))
            .collect();
        assert_eq!(
            found,
            vec![
                (1, "It uses a work-stealing scheduler.".to_string()),
                (3, "Its first release came in 2016".to_string()),
                (4, "Another item that claims something".to_string()),
            ]
        );
        let original = crate::citation::render(answer, &lookup);
        let mut blocks = original.blocks.clone();
        place(
            &mut blocks,
            &[checked(1, Some(2)), checked(3, None), checked(4, Some(1))],
        );
        // The model's words are all there, unchanged and in order.
        let placed = crate::citation::Rendered {
            blocks: blocks.clone(),
            problems: Vec::new(),
        };
        assert_eq!(placed.text(true), original.text(true));
        // The addition follows its sentence's full stop, before the next sentence.
        let Block::Paragraph(inlines) = &blocks[0] else {
            panic!("a paragraph first: {blocks:?}");
        };
        assert_eq!(
            inlines[2],
            Inline::Text(". It uses a work-stealing scheduler.".into())
        );
        assert_eq!(
            inlines[3],
            Inline::Citation {
                original: String::new(),
                cites: vec![Cite::Added { number: 2, key: 0 }],
            }
        );
        assert_eq!(inlines[4], Inline::Text(" Short.".into()));
        // A sentence with no full stop (a list item, one ending in code) gets its mark at
        // its end.
        let mut seen = Vec::new();
        placed.for_each_cite(|cite| seen.push(cite.clone()));
        assert_eq!(
            seen,
            vec![
                Cite::Found { number: 1 },
                Cite::Added { number: 2, key: 0 },
                Cite::Unsupported,
                Cite::Added { number: 1, key: 2 },
            ]
        );
        // Additions do not shift the model's citations' ordinals, nor count as its own.
        assert_eq!(cited_sentences(answer, &lookup).len(), 1);
        assert_eq!(placed.cited_numbers(), vec![1]);
    }
}
