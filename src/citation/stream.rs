//! Rendering an answer while it streams, at a cost that does not grow with the answer.
//!
//! CommonMark parses blocks line by line, and a top-level block that a later block has
//! followed is final: nothing written after it can change how it parses, as long as the
//! line that began the later block is complete. So the text is cut at the start of its last
//! top-level block that begins on a complete line. Everything before the cut is rendered once,
//! handed to the caller as [`Delta::completed`] and never looked at again; the last block,
//! the only one still growing, is rendered again on every update ([`Delta::tail`]).
//!
//! Two things do reach back, and both make the next update start over ([`Delta::reset`]):
//! - a link reference definition (`[label]: url`) changes every `[label]` in the answer,
//!   earlier blocks included; once the text holds `]:` every update renders it whole;
//! - new sources (a later search round) can resolve markers that were unknown.
//!
//! An answer replaced rather than extended (a `Rewrite`) is announced by its caller with a
//! new revision number, so that telling the two apart needs no comparison of the texts.
//!
//! Rendering `completed` then `tail` gives exactly the blocks of [`render`] over the whole
//! text; a property test checks it over every cut of generated answers.

use pulldown_cmark::{Event, Options, Parser};

use crate::citation::render::{render, Block, Lookup, Rendered, SourceMap};
use crate::model::blocks::{Patch, Splice, EMPTY_TAIL};
use crate::model::AnswerEvent;

/// What changed since the previous [`Incremental::update`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delta {
    /// Everything the caller holds is stale: drop it before adding `completed`.
    pub reset: bool,
    /// Blocks that became final, in order, after those already handed out.
    pub completed: Vec<Block>,
    /// How many found citations come before `completed[0]` in the answer (citation keys
    /// count in reading order).
    pub completed_cites: u64,
    /// The last block, still growing (empty or one block; several in whole mode).
    pub tail: Vec<Block>,
    /// How many found citations come before `tail[0]`.
    pub tail_cites: u64,
}

/// The state of one streaming answer's rendering.
#[derive(Debug, Default, Clone)]
pub struct Incremental {
    started: bool,
    revision: u32,
    sources: usize,
    /// Bytes of the text seen so far.
    seen: usize,
    /// `text[..stable]` has been rendered and handed out as completed blocks.
    stable: usize,
    /// Found citations in those blocks.
    stable_cites: u64,
    /// The text holds a link reference definition: render it whole every time.
    whole: bool,
}

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// Found citations in rendered blocks.
fn found_cites(rendered: &Rendered) -> u64 {
    rendered.blocks.iter().map(Block::found_cites).sum()
}

/// Where the final blocks of `text` end: the line start of its last top-level block that
/// begins on a complete line. A line still being written is undecided: `---` closes a list
/// as a rule until a letter after it makes it the list's text, so no block that begins on
/// the last line can close the blocks before it yet.
fn final_blocks_end(text: &str) -> usize {
    let last_line = text.rfind('\n').map_or(0, |newline| newline + 1);
    let mut depth = 0usize;
    let mut last = 0;
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        if range.start >= last_line {
            break;
        }
        match event {
            Event::Start(_) => {
                if depth == 0 {
                    last = range.start;
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            // Rules, and HTML or text that the parser emits outside any container.
            _ if depth == 0 => last = range.start,
            _ => {}
        }
    }
    text[..last].rfind('\n').map_or(0, |newline| newline + 1)
}

impl Incremental {
    pub fn new() -> Incremental {
        Incremental::default()
    }

    /// Whether the last update already saw this text, revision and source count.
    pub fn is_current(&self, text: &str, revision: u32, sources: usize) -> bool {
        self.started
            && self.seen == text.len()
            && self.revision == revision
            && self.sources == sources
    }

    /// Renders what is new in `text`. `revision` changes when the text was replaced rather
    /// than extended; `sources` is how many entries `lookup` holds (it only grows within an
    /// answer, so a new count means new entries).
    pub fn update(
        &mut self,
        text: &str,
        revision: u32,
        lookup: &impl Lookup,
        sources: usize,
    ) -> Delta {
        let reset = !self.started
            || revision != self.revision
            || sources != self.sources
            || text.len() < self.seen
            || !text.is_char_boundary(self.seen)
            || !text.is_char_boundary(self.stable)
            || self.whole;
        if reset {
            self.started = true;
            self.revision = revision;
            self.sources = sources;
            self.stable = 0;
            self.stable_cites = 0;
            self.whole = text.contains("]:");
        } else {
            // A `]:` may straddle the previous end.
            let from = text[..self.seen]
                .char_indices()
                .next_back()
                .map_or(0, |(idx, _)| idx);
            if text[from..].contains("]:") {
                self.whole = true;
                self.seen = text.len();
                return self.update_whole(text, lookup);
            }
        }
        self.seen = text.len();
        if self.whole {
            return self.update_whole(text, lookup);
        }
        let open = &text[self.stable..];
        let cut = self.stable + final_blocks_end(open);
        let completed = if cut > self.stable {
            render(&text[self.stable..cut], lookup)
        } else {
            Rendered::default()
        };
        let completed_cites = self.stable_cites;
        self.stable_cites += found_cites(&completed);
        self.stable = cut;
        Delta {
            reset,
            completed: completed.blocks,
            completed_cites,
            tail: render(&text[cut..], lookup).blocks,
            tail_cites: self.stable_cites,
        }
    }

    fn update_whole(&mut self, text: &str, lookup: &impl Lookup) -> Delta {
        self.stable = 0;
        self.stable_cites = 0;
        Delta {
            reset: true,
            completed: Vec::new(),
            completed_cites: 0,
            tail: render(text, lookup).blocks,
            tail_cites: 0,
        }
    }
}

/// What a browser's stream of an answer carries besides its events: after each event that
/// changes the answer's text or sources, an [`AnswerEvent::Rendered`] patch that brings the
/// browser's rendering up to date, so the browser never parses Markdown. Final blocks are
/// sent once; the tail as an edit of its JSON ([`Splice`]), so a token costs about what it
/// adds, whatever the shape of the block it lands in.
#[derive(Debug, Clone)]
pub struct Framer {
    text: String,
    revision: u32,
    sources: SourceMap,
    incremental: Incremental,
    /// The tail as the browser holds it, and its JSON.
    tail: Vec<Block>,
    tail_json: String,
    /// The checked uncited claims, once known (after `Done`); shown by the next patch.
    claims: Vec<crate::model::ClaimCheck>,
}

impl Default for Framer {
    fn default() -> Framer {
        Framer {
            text: String::new(),
            revision: 0,
            sources: SourceMap::default(),
            incremental: Incremental::new(),
            tail: Vec::new(),
            tail_json: EMPTY_TAIL.to_string(),
            claims: Vec::new(),
        }
    }
}

impl Framer {
    pub fn new() -> Framer {
        Framer::default()
    }

    /// The patch that follows `event`, when it changed what the answer shows.
    pub fn after(&mut self, event: &AnswerEvent) -> Option<AnswerEvent> {
        if self.note(event) {
            self.patch()
        } else {
            None
        }
    }

    /// The answer's text so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Takes in `event`; whether it changed the answer's text or sources.
    pub fn note(&mut self, event: &AnswerEvent) -> bool {
        match event {
            AnswerEvent::Started { .. } => {
                *self = Framer::default();
                false
            }
            AnswerEvent::Token { text } => {
                self.text.push_str(text);
                true
            }
            AnswerEvent::Rewrite { answer } => {
                self.text.clone_from(answer);
                self.revision += 1;
                true
            }
            AnswerEvent::Sources { sources } => {
                self.sources = SourceMap::new(sources.iter().cloned());
                !self.text.is_empty()
            }
            AnswerEvent::Aligned { claims, .. } if !claims.is_empty() => {
                self.claims.clone_from(claims);
                true
            }
            _ => false,
        }
    }

    /// The patch from what the browser holds to the answer as it stands, if they differ.
    /// Several noted changes make one patch.
    pub fn patch(&mut self) -> Option<AnswerEvent> {
        if !self.claims.is_empty() {
            return Some(self.placed());
        }
        let delta =
            self.incremental
                .update(&self.text, self.revision, &self.sources, self.sources.len());
        if delta.reset {
            self.tail.clear();
            self.tail_json = EMPTY_TAIL.to_string();
        }
        // What the browser's tail JSON is once the blocks that became final leave it: `[`
        // and the held JSON from `from` on.
        let held = &self.tail_json;
        let from = if delta.completed.is_empty() {
            1
        } else if self.tail.starts_with(&delta.completed) && self.tail.len() > delta.completed.len()
        {
            1 + delta
                .completed
                .iter()
                .map(|block| json(block).len() + 1)
                .sum::<usize>()
        } else {
            // All of it became final, or something else did: start from `[]`.
            held.len() - 1
        };
        let new_json = json(&delta.tail);
        let common = common_prefix(&held[from..], &new_json[1..]);
        let patch = Patch {
            reset: delta.reset,
            completed: delta.completed,
            tail: Splice {
                from,
                keep: from + common,
                add: new_json[1 + common..].to_string(),
            },
        };
        let unchanged = !patch.reset && patch.completed.is_empty() && new_json == *held;
        self.tail = delta.tail;
        self.tail_json = new_json;
        (!unchanged).then_some(AnswerEvent::Rendered { patch })
    }
}

impl Framer {
    /// The whole answer again, with cited's additions placed after their claims (once,
    /// after `Done`: the text no longer changes).
    fn placed(&mut self) -> AnswerEvent {
        let mut blocks = crate::citation::render(&self.text, &self.sources).blocks;
        crate::citation::coverage::place(&mut blocks, &std::mem::take(&mut self.claims));
        self.incremental = Incremental::new();
        self.tail = Vec::new();
        self.tail_json = EMPTY_TAIL.to_string();
        AnswerEvent::Rendered {
            patch: Patch {
                reset: true,
                completed: blocks,
                tail: Splice {
                    from: 1,
                    keep: 1,
                    add: "]".to_string(),
                },
            },
        }
    }
}

fn json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| EMPTY_TAIL.to_string())
}

/// The length of the longest common prefix of `a` and `b`, on a char boundary.
fn common_prefix(a: &str, b: &str) -> usize {
    let mut len = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while !a.is_char_boundary(len) || !b.is_char_boundary(len) {
        len -= 1;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::citation::Registry;
    use crate::model::Source;
    use proptest::prelude::*;

    fn registry(n: usize) -> Registry {
        let mut registry = Registry::new();
        let sources: Vec<Source> = (0..n)
            .map(|i| Source {
                url: format!("https://example.org/{i}"),
                title: format!("Source {i}"),
                ..Source::default()
            })
            .collect();
        registry.add_round("q", &sources);
        registry
    }

    /// Feeds `text` cut at `cuts` (byte offsets, sorted, on char boundaries) and returns
    /// the blocks the caller would hold at the end, with the citation counts it was told.
    fn stream(text: &str, cuts: &[usize], registry: &Registry) -> (Vec<Block>, Vec<u64>) {
        let mut incremental = Incremental::new();
        let mut held: Vec<Block> = Vec::new();
        let mut tail = Vec::new();
        let mut starts = Vec::new();
        for &end in cuts.iter().chain(std::iter::once(&text.len())) {
            let update = incremental.update(&text[..end], 0, registry, registry.len());
            if update.reset {
                held.clear();
            }
            let before = Rendered {
                blocks: held.clone(),
                problems: Vec::new(),
            };
            assert_eq!(update.completed_cites, found_cites(&before), "at {end}");
            held.extend(update.completed);
            let with_completed = Rendered {
                blocks: held.clone(),
                problems: Vec::new(),
            };
            assert_eq!(update.tail_cites, found_cites(&with_completed), "at {end}");
            tail = update.tail;
            starts.push(update.tail_cites);
        }
        held.extend(tail);
        (held, starts)
    }

    fn char_cuts(text: &str, every: usize) -> Vec<usize> {
        text.char_indices()
            .map(|(idx, _)| idx)
            .filter(|idx| *idx > 0)
            .step_by(every.max(1))
            .collect()
    }

    #[test]
    fn streamed_paragraphs_lists_code_and_tables_equal_the_one_shot_render() {
        let registry = registry(5);
        let text = "## 概述\n\nTokio 是 Rust 的异步运行时[1]。它很快【2】。\n\n\
                    - one [3]\n- two\n\n  still two\n- three [1, 2]\n\n\
                    Setext heading\n---\n\n```rust\nlet x = [1];\n\nlet y = 2;\n```\n\n\
                    | a | b |\n|---|:-:|\n| [4] | x |\n| y | z |\n\n> quote [5]\n> more\n\n\
                    <!-- an html block\n\nthat spans a blank line -->\n\n***\n\n1. first\n2. second [2]\n";
        let (streamed, _) = stream(text, &char_cuts(text, 1), &registry);
        assert_eq!(streamed, render(text, &registry).blocks);
    }

    #[test]
    fn only_the_blocks_after_the_last_complete_line_are_rendered_again() {
        let registry = registry(3);
        let mut incremental = Incremental::new();
        // "Two" is on a line still being written: it might yet turn into anything.
        let first = incremental.update("One [1].\n\nTwo", 0, &registry, 3);
        assert!(first.reset);
        assert!(first.completed.is_empty());
        assert_eq!(first.tail.len(), 2);
        assert_eq!(first.tail_cites, 0);
        // Its line is complete: "One" is final, "Two" is the open block.
        let second = incremental.update("One [1].\n\nTwo [2] grows\n", 0, &registry, 3);
        assert!(!second.reset);
        assert_eq!(second.completed.len(), 1);
        assert_eq!(second.completed_cites, 0);
        assert_eq!(second.tail.len(), 1);
        assert_eq!(second.tail_cites, 1);
        let third = incremental.update("One [1].\n\nTwo [2] grows\n\nThree", 0, &registry, 3);
        assert!(third.completed.is_empty());
        assert_eq!(third.tail.len(), 2);
        let fourth = incremental.update("One [1].\n\nTwo [2] grows\n\nThree\n", 0, &registry, 3);
        assert_eq!(fourth.completed.len(), 1);
        assert_eq!(fourth.completed_cites, 1);
        assert_eq!(fourth.tail_cites, 2);
        assert!(incremental.is_current("One [1].\n\nTwo [2] grows\n\nThree\n", 0, 3));
        assert!(!incremental.is_current("One [1].\n\nTwo [2] grows\n\nThree\n", 1, 3));
    }

    #[test]
    fn a_rule_that_turns_into_text_does_not_close_the_list_before_it() {
        let registry = registry(1);
        let text = "- item\n---word\n";
        let (streamed, _) = stream(text, &char_cuts(text, 1), &registry);
        assert_eq!(streamed, render(text, &registry).blocks);
        assert_eq!(streamed.len(), 1, "one list: {streamed:?}");
    }

    #[test]
    fn a_reference_definition_makes_every_update_whole() {
        let registry = registry(3);
        let text = "See [docs] here.\n\nMore text.\n\n[docs]: https://example.org/docs\n";
        let cuts = char_cuts(text, 3);
        let (streamed, _) = stream(text, &cuts, &registry);
        assert_eq!(streamed, render(text, &registry).blocks);
        // The definition arrives after "See [docs]" was final: the link must still appear.
        assert!(format!("{streamed:?}").contains("https://example.org/docs"));
    }

    #[test]
    fn new_sources_and_a_new_revision_start_over() {
        let few = registry(1);
        let more = registry(3);
        let mut incremental = Incremental::new();
        incremental.update("A [3].\n\nB", 0, &few, few.len());
        let after_sources = incremental.update("A [3].\n\nB more", 0, &more, more.len());
        assert!(after_sources.reset);
        assert_eq!(
            [after_sources.completed, after_sources.tail].concat(),
            render("A [3].\n\nB more", &more).blocks
        );
        let rewritten = incremental.update("Only the answer", 1, &more, more.len());
        assert!(rewritten.reset);
        assert_eq!(rewritten.tail, render("Only the answer", &more).blocks);
    }

    fn markdown_soup() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("word ".to_string()),
            Just("中文句子。".to_string()),
            Just("[1]".to_string()),
            Just("[2, 3]".to_string()),
            Just("【2】".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just("]:".to_string()),
            Just(" https://x.org".to_string()),
            Just("\n".to_string()),
            Just("\n\n".to_string()),
            Just("```\n".to_string()),
            Just("    ".to_string()),
            Just("  ".to_string()),
            Just("- ".to_string()),
            Just("* ".to_string()),
            Just("1. ".to_string()),
            Just("2) ".to_string()),
            Just("> ".to_string()),
            Just("# ".to_string()),
            Just("---".to_string()),
            Just("===".to_string()),
            Just("| a | b |\n|---|---|\n".to_string()),
            Just("<div>".to_string()),
            Just("<!--".to_string()),
            Just("-->".to_string()),
            Just("**".to_string()),
            Just("`".to_string()),
            Just("- [x] ".to_string()),
            "\\PC{0,4}",
        ];
        proptest::collection::vec(piece, 0..60).prop_map(|pieces| pieces.concat())
    }

    /// The events of an answer streamed in pieces cut at `cuts`, its sources arriving after
    /// the first piece; what a browser holds after each patch, and the patches.
    fn framed(text: &str, cuts: &[usize], registry: &Registry) -> (Vec<Vec<Block>>, Vec<Patch>) {
        use crate::model::blocks::Shown;
        let sources: Vec<_> = (1..=registry.len() as u32)
            .filter_map(|n| registry.lookup(n).cloned())
            .collect();
        let mut events = vec![AnswerEvent::Started {
            id: 1,
            offline: false,
            question: String::new(),
            narrowing: Default::default(),
        }];
        let mut from = 0;
        for (idx, &end) in cuts.iter().chain(std::iter::once(&text.len())).enumerate() {
            events.push(AnswerEvent::Token {
                text: text[from..end].to_string(),
            });
            from = end;
            if idx == 0 {
                events.push(AnswerEvent::Sources {
                    sources: sources.clone(),
                });
            }
        }
        let mut framer = Framer::new();
        let mut shown = Shown::default();
        let (mut states, mut patches) = (Vec::new(), Vec::new());
        for event in &events {
            if let Some(AnswerEvent::Rendered { patch }) = framer.after(event) {
                shown.apply(patch.clone());
                states.push(shown.blocks());
                patches.push(patch);
            }
        }
        (states, patches)
    }

    #[test]
    fn the_browser_adds_up_patches_to_the_one_shot_render() {
        let registry = registry(3);
        let text = "Tokio is fast [1]. It **schedules** tasks [2].\n\n- one\n- two [3]\n\n```rust\nlet x = 1;\n```\n";
        let (states, patches) = framed(text, &char_cuts(text, 1), &registry);
        assert_eq!(states.last(), Some(&render(text, &registry).blocks));
        // A token costs about what it adds: edits of the tail's JSON, not the tail again.
        let added: usize = patches.iter().map(|patch| patch.tail.add.len()).sum();
        assert!(
            added < 20 * patches.len(),
            "{added} bytes of edits in {} patches",
            patches.len()
        );
        // A rewrite replaces everything shown.
        let mut framer = Framer::new();
        framer.after(&AnswerEvent::Token {
            text: "thinking".into(),
        });
        let Some(AnswerEvent::Rendered { patch }) = framer.after(&AnswerEvent::Rewrite {
            answer: "Answer".into(),
        }) else {
            panic!("a rewrite is a patch");
        };
        assert!(patch.reset);
        let mut shown = crate::model::blocks::Shown::default();
        shown.apply(patch);
        assert_eq!(shown.tail(), render("Answer", &registry).blocks);
        // Events that change no text send no patch.
        assert_eq!(
            framer.after(&AnswerEvent::Progress { secs: 1, tokens: 2 }),
            None
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn any_stream_ends_as_the_one_shot_render(text in markdown_soup(), every in 1usize..9) {
            let registry = registry(3);
            let (streamed, _) = stream(&text, &char_cuts(&text, every), &registry);
            prop_assert_eq!(streamed, render(&text, &registry).blocks);
        }

        #[test]
        fn patches_add_up_to_the_render_of_every_prefix(text in markdown_soup(), every in 1usize..9) {
            let registry = registry(3);
            let cuts = char_cuts(&text, every);
            let (states, _) = framed(&text, &cuts, &registry);
            prop_assert_eq!(states.last(), Some(&render(&text, &registry).blocks));
            // Before the sources came, markers resolved against none.
            let empty = SourceMap::default();
            let ends: Vec<usize> = cuts.iter().copied().chain(std::iter::once(text.len())).collect();
            let expected: Vec<Vec<Block>> = ends
                .iter()
                .enumerate()
                .flat_map(|(idx, &end)| {
                    let mut prefixes = Vec::new();
                    if idx == 0 {
                        prefixes.push(render(&text[..end], &empty).blocks);
                    }
                    prefixes.push(render(&text[..end], &registry).blocks);
                    prefixes
                })
                .collect();
            // Each patch brings the browser to exactly the render of the text so far (a piece
            // that changes nothing sends none).
            let mut expected = expected;
            expected.dedup();
            let mut states = states;
            states.dedup();
            prop_assert_eq!(states, expected);
        }

        #[test]
        fn every_intermediate_state_is_the_one_shot_render_of_its_prefix(text in markdown_soup()) {
            let registry = registry(3);
            let mut incremental = Incremental::new();
            let mut held: Vec<Block> = Vec::new();
            for end in char_cuts(&text, 2).into_iter().chain(std::iter::once(text.len())) {
                let update = incremental.update(&text[..end], 0, &registry, registry.len());
                if update.reset {
                    held.clear();
                }
                held.extend(update.completed);
                let shown = [held.clone(), update.tail].concat();
                prop_assert_eq!(shown, render(&text[..end], &registry).blocks, "prefix {}", end);
            }
        }
    }
}
