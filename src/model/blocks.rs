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
    /// Everything held is stale: drop it before adding `completed`.
    pub reset: bool,
    /// Blocks that became final, in order, after those already held.
    pub completed: Vec<Block>,
    pub tail: Tail,
}

/// The last block(s) of the answer, still growing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Tail {
    /// The tail is now exactly these blocks.
    Blocks(Vec<Block>),
    /// The tail is the previous tail with this text added to its last piece of text.
    Append(String),
}

/// A browser's copy of a streaming answer: what [`Patch`]es add up to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shown {
    pub completed: Vec<Block>,
    pub tail: Vec<Block>,
}

impl Shown {
    pub fn apply(&mut self, patch: Patch) {
        if patch.reset {
            self.completed.clear();
        }
        self.completed.extend(patch.completed);
        apply_tail(&mut self.tail, patch.tail);
    }

    /// The whole answer's blocks.
    pub fn blocks(&self) -> Vec<Block> {
        self.completed.iter().chain(&self.tail).cloned().collect()
    }
}

/// Applies a tail patch to the tail held.
pub fn apply_tail(held: &mut Vec<Block>, tail: Tail) {
    match tail {
        Tail::Blocks(blocks) => *held = blocks,
        Tail::Append(text) => {
            if let Some(last) = last_text(held) {
                last.push_str(&text);
            }
        }
    }
}

/// The text that the last leaf of `blocks` ends with, where streamed text lands: the last
/// text run of the last paragraph, heading, item or cell, or the last code block's code.
pub fn last_text(blocks: &mut [Block]) -> Option<&mut String> {
    match blocks.last_mut()? {
        Block::Paragraph(inlines)
        | Block::Plain(inlines)
        | Block::Heading {
            content: inlines, ..
        } => last_inline_text(inlines),
        Block::Quote(blocks) => last_text(blocks),
        Block::List { items, .. } => last_text(&mut items.last_mut()?.blocks),
        Block::Code { code, .. } => Some(code),
        Block::Table { head, rows, .. } => {
            let cell = match rows.last_mut() {
                Some(row) => row.last_mut()?,
                None => head.last_mut()?,
            };
            last_inline_text(cell)
        }
        Block::Rule => None,
    }
}

fn last_inline_text(inlines: &mut [Inline]) -> Option<&mut String> {
    match inlines.last_mut()? {
        Inline::Text(text) => Some(text),
        Inline::Emphasis(children)
        | Inline::Strong(children)
        | Inline::Strikethrough(children)
        | Inline::Link { children, .. } => last_inline_text(children),
        _ => None,
    }
}
