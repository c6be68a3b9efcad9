//! An answer as a tree of safe segments, and the patches that keep a browser's copy of it
//! current while it streams.
//!
//! The server parses the Markdown (`citation::render`, with pulldown-cmark); the browser only
//! receives these trees and turns them into views, so no Markdown parser ships in the wasm.
//! A streaming answer reaches the browser as [`Patch`]es: final blocks once, and the last
//! block again, or only the text appended to it when that is all that changed.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Block {
    Paragraph(Vec<Inline>),
    /// Inline content with no paragraph around it (items of tight lists).
    Plain(Vec<Inline>),
    Heading {
        level: u8,
        content: Vec<Inline>,
    },
    Quote(Vec<Block>),
    List {
        start: Option<u64>,
        items: Vec<ListItem>,
    },
    Code {
        lang: String,
        code: String,
    },
    Table {
        aligns: Vec<Align>,
        head: Vec<Vec<Inline>>,
        rows: Vec<Vec<Vec<Inline>>>,
    },
    Rule,
}

impl Block {
    /// The citations in this block that resolved to a source.
    pub fn found_cites(&self) -> u64 {
        let mut count = 0;
        block_cites(self, &mut |cite: &Cite| {
            if matches!(cite, Cite::Found { .. }) {
                count += 1;
            }
        });
        count
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListItem {
    /// `Some` for task-list items (`- [x] done`).
    pub checked: Option<bool>,
    pub blocks: Vec<Block>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Align {
    None,
    Left,
    Center,
    Right,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Inline {
    Text(String),
    Code(String),
    Emphasis(Vec<Inline>),
    Strong(Vec<Inline>),
    Strikethrough(Vec<Inline>),
    /// `url` is always http(s).
    Link {
        url: String,
        children: Vec<Inline>,
    },
    SoftBreak,
    LineBreak,
    /// A marker such as `[3]`, `[3, 5]` or `【3】` of which at least one number resolved.
    Citation {
        original: String,
        cites: Vec<Cite>,
    },
}

/// One number of a citation marker. A found number's entry is the answer's source of that
/// number: whoever renders the tree holds the sources and looks it up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cite {
    Found {
        number: u32,
    },
    /// A number of the same marker that the registry does not know; shown as `[n]` text.
    Missing {
        number: u32,
    },
    /// A citation cited added after a claim the model left uncited, never the model's own
    /// words: `key` is the claim's index in [`Exchange::claims`](crate::model::Exchange).
    Added {
        number: u32,
        key: u32,
    },
    /// The discreet mark after a claim none of the answer's sources supports.
    Unsupported,
}

/// Calls `visit` for every cite of `block`, found or missing, in reading order.
pub fn block_cites(block: &Block, visit: &mut impl FnMut(&Cite)) {
    match block {
        Block::Paragraph(inlines)
        | Block::Plain(inlines)
        | Block::Heading {
            content: inlines, ..
        } => inline_cites(inlines, visit),
        Block::Quote(blocks) => blocks.iter().for_each(|b| block_cites(b, visit)),
        Block::List { items, .. } => items
            .iter()
            .flat_map(|item| &item.blocks)
            .for_each(|b| block_cites(b, visit)),
        Block::Table { head, rows, .. } => head
            .iter()
            .chain(rows.iter().flatten())
            .for_each(|cell| inline_cites(cell, visit)),
        Block::Code { .. } | Block::Rule => {}
    }
}

fn inline_cites(inlines: &[Inline], visit: &mut impl FnMut(&Cite)) {
    for inline in inlines {
        match inline {
            Inline::Citation { cites, .. } => cites.iter().for_each(&mut *visit),
            Inline::Emphasis(children)
            | Inline::Strong(children)
            | Inline::Strikethrough(children) => inline_cites(children, visit),
            _ => {}
        }
    }
}

/// What changed in a streaming answer's rendering since the previous patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Patch {
    /// Everything held is stale: drop it (the tail's JSON becomes `[]`) before the rest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reset: bool,
    /// Blocks that became final, in order, after those already held.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub completed: Vec<Block>,
    /// The last blocks, still growing, as an edit of their JSON.
    pub tail: Splice,
}

/// The tail's new JSON (a JSON array of [`Block`]s) from the one held: `[`, the held JSON's
/// bytes `from..keep`, then `add`. `from` skips the blocks that just became final; most
/// tokens keep nearly everything and add a few bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Splice {
    pub from: usize,
    pub keep: usize,
    pub add: String,
}

impl Splice {
    /// The edited JSON; `None` when the edit does not fit what is held (a lost patch).
    pub fn apply(&self, held: &str) -> Option<String> {
        let kept = held.get(self.from..self.keep)?;
        let mut json = String::with_capacity(1 + kept.len() + self.add.len());
        json.push('[');
        json.push_str(kept);
        json.push_str(&self.add);
        Some(json)
    }
}

/// Patches taken together: whether one of them reset, the blocks they completed since (in
/// order), and the tail's JSON after them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folded {
    pub reset: bool,
    pub completed: Vec<Block>,
    pub tail_json: String,
}

/// Applies `patches` to a tail held as `tail_json`.
pub fn fold(patches: impl IntoIterator<Item = Patch>, tail_json: String) -> Folded {
    let mut folded = Folded {
        reset: false,
        completed: Vec::new(),
        tail_json,
    };
    for patch in patches {
        if patch.reset {
            folded.reset = true;
            folded.completed.clear();
            folded.tail_json = EMPTY_TAIL.to_string();
        }
        folded.completed.extend(patch.completed);
        if let Some(json) = patch.tail.apply(&folded.tail_json) {
            folded.tail_json = json;
        }
    }
    folded
}

/// A browser's copy of a streaming answer: what [`Patch`]es add up to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub completed: Vec<Block>,
    /// The tail as JSON, the form its patches edit.
    pub tail_json: String,
}

impl Default for Shown {
    fn default() -> Shown {
        Shown {
            completed: Vec::new(),
            tail_json: EMPTY_TAIL.to_string(),
        }
    }
}

/// The JSON of a tail with no blocks.
pub const EMPTY_TAIL: &str = "[]";

impl Shown {
    pub fn apply(&mut self, patch: Patch) {
        let folded = fold([patch], std::mem::take(&mut self.tail_json));
        if folded.reset {
            self.completed.clear();
        }
        self.completed.extend(folded.completed);
        self.tail_json = folded.tail_json;
    }

    /// The tail's blocks (none if its JSON does not parse, which a lost patch could cause).
    pub fn tail(&self) -> Vec<Block> {
        serde_json::from_slice(self.tail_json.as_bytes()).unwrap_or_default()
    }

    /// The whole answer's blocks.
    pub fn blocks(&self) -> Vec<Block> {
        let mut blocks = self.completed.clone();
        blocks.extend(self.tail());
        blocks
    }
}
