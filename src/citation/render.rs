//! Answer text → a tree of safe segments the UI renders without `inner_html`.
//!
//! The Markdown is parsed with pulldown-cmark, and citation markers are looked for only in
//! its text events: never in code spans, code blocks, link text or raw HTML. Raw HTML is
//! kept as visible text. Only `http`/`https` destinations become links; any other link keeps
//! its text and loses its destination. Images are never loaded: they become links to the
//! image (when http/https) with their alt text.
//!
//! A marker whose numbers are all unknown to the registry stays as its original text and is
//! reported in [`Rendered::problems`] (seed 002 "引用丢失"). Rendering a partial answer is
//! fine: an unfinished `[1` at the end is text until its `]` arrives.

use std::sync::Arc;

use pulldown_cmark::{Alignment, CodeBlockKind, Event, LinkType, Options, Parser, Tag};

use serde::{Deserialize, Serialize};

use crate::citation::markers;
use crate::citation::registry::{CitationEntry, Registry};
use crate::citation::urls;
use crate::model::blocks::block_cites;

pub use crate::model::blocks::{Align, Block, Cite, Inline, ListItem};

/// A marker number the registry does not know. The caller logs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    pub number: u32,
    pub marker: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rendered {
    pub blocks: Vec<Block>,
    pub problems: Vec<Problem>,
}

impl Rendered {
    /// The visible text, blocks separated by newlines. With `with_markers`, resolved markers
    /// contribute their original text, so the result equals the text of the same answer
    /// rendered with an empty registry.
    pub fn text(&self, with_markers: bool) -> String {
        let mut out = String::new();
        for block in &self.blocks {
            block_text(block, with_markers, &mut out);
        }
        out
    }

    /// Calls `visit` for every cite, found or missing, in reading order.
    pub fn for_each_cite(&self, mut visit: impl FnMut(&Cite)) {
        for block in &self.blocks {
            block_cites(block, &mut visit);
        }
    }

    /// Numbers cited and found, in order of first appearance, without repeats.
    pub fn cited_numbers(&self) -> Vec<u32> {
        let mut numbers = Vec::new();
        self.for_each_cite(|cite| {
            if let Cite::Found { number, .. } = cite {
                if !numbers.contains(number) {
                    numbers.push(*number);
                }
            }
        });
        numbers
    }
}

fn block_text(block: &Block, with_markers: bool, out: &mut String) {
    match block {
        Block::Paragraph(inlines)
        | Block::Plain(inlines)
        | Block::Heading {
            content: inlines, ..
        } => {
            inlines_text(inlines, with_markers, out);
        }
        Block::Quote(blocks) => blocks.iter().for_each(|b| block_text(b, with_markers, out)),
        Block::List { items, .. } => {
            for item in items {
                item.blocks
                    .iter()
                    .for_each(|b| block_text(b, with_markers, out));
            }
        }
        Block::Code { code, .. } => out.push_str(code),
        Block::Table { head, rows, .. } => {
            for cell in head.iter().chain(rows.iter().flatten()) {
                inlines_text(cell, with_markers, out);
                out.push('\t');
            }
        }
        Block::Rule => {}
    }
    out.push('\n');
}

fn inlines_text(inlines: &[Inline], with_markers: bool, out: &mut String) {
    for inline in inlines {
        match inline {
            Inline::Text(text) | Inline::Code(text) => out.push_str(text),
            Inline::Emphasis(children)
            | Inline::Strong(children)
            | Inline::Strikethrough(children)
            | Inline::Link { children, .. } => inlines_text(children, with_markers, out),
            Inline::SoftBreak | Inline::LineBreak => out.push('\n'),
            Inline::Citation { original, .. } => {
                if with_markers {
                    out.push_str(original);
                }
            }
        }
    }
}

/// Where rendering looks numbers up: a whole [`Registry`], or just the entries one answer
/// may cite ([`SourceMap`]).
pub trait Lookup {
    fn lookup(&self, number: u32) -> Option<&Arc<CitationEntry>>;
}

impl Lookup for Registry {
    fn lookup(&self, number: u32) -> Option<&Arc<CitationEntry>> {
        self.shared(number)
    }
}

/// The entries of one answer, keyed by number (what the browser holds).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceMap(std::collections::BTreeMap<u32, Arc<CitationEntry>>);

impl SourceMap {
    pub fn new(entries: impl IntoIterator<Item = Arc<CitationEntry>>) -> SourceMap {
        SourceMap(
            entries
                .into_iter()
                .map(|entry| (entry.number, entry))
                .collect(),
        )
    }

    pub fn entries(&self) -> impl Iterator<Item = &Arc<CitationEntry>> {
        self.0.values()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Lookup for SourceMap {
    fn lookup(&self, number: u32) -> Option<&Arc<CitationEntry>> {
        self.0.get(&number)
    }
}

/// Renders an answer (complete or still streaming) against its sources.
pub fn render(answer: &str, registry: &impl Lookup) -> Rendered {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut builder = Builder {
        registry,
        stack: vec![Frame::Blocks(Vec::new())],
        problems: Vec::new(),
    };
    // The parser may split one run of text into several events (at `[`, for instance);
    // markers can only be found in the whole run, so adjacent text is joined first.
    let mut pending = String::new();
    for event in Parser::new_ext(answer, options) {
        match event {
            Event::Text(text) => pending.push_str(&text),
            event => {
                if !pending.is_empty() {
                    builder.event(Event::Text(std::mem::take(&mut pending).into()));
                }
                builder.event(event);
            }
        }
    }
    if !pending.is_empty() {
        builder.event(Event::Text(pending.into()));
    }
    // A well-formed event stream closes every frame; fold whatever is left to be safe.
    while builder.stack.len() > 1 {
        builder.end();
    }
    let blocks = match builder.stack.pop() {
        Some(Frame::Blocks(blocks)) => blocks,
        _ => Vec::new(),
    };
    Rendered {
        blocks,
        problems: builder.problems,
    }
}

/// An exchange on its way to a browser: its answer rendered against its sources
/// ([`Exchange::rendered`](crate::model::Exchange::rendered)), with cited's additions
/// placed after their claims.
pub fn for_browser(mut exchange: crate::model::Exchange) -> crate::model::Exchange {
    let sources = SourceMap::new(exchange.sources.iter().cloned());
    let mut blocks = render(&exchange.answer, &sources).blocks;
    crate::citation::coverage::place(&mut blocks, &exchange.claims);
    exchange.rendered = blocks;
    exchange
}

/// Text with citation markers but no Markdown (a Research branch's evidence): one
/// paragraph, markers resolved as [`render`] resolves them. No parser is involved, so the
/// browser can call it.
pub fn marked_text(text: &str, registry: &impl Lookup) -> Vec<Block> {
    let mut builder = Builder {
        registry,
        stack: vec![Frame::Blocks(Vec::new()), inlines(InlineKind::Paragraph)],
        problems: Vec::new(),
    };
    builder.push_text_with_markers(text.trim());
    while builder.stack.len() > 1 {
        builder.end();
    }
    match builder.stack.pop() {
        Some(Frame::Blocks(blocks)) => blocks,
        _ => Vec::new(),
    }
}

/// The numbers an answer cites that the registry knows, sorted and without repeats.
pub fn used_numbers(answer: &str, registry: &impl Lookup) -> Vec<u32> {
    let mut numbers = render(answer, registry).cited_numbers();
    numbers.sort_unstable();
    numbers
}

/// Containers nested deeper than this are flattened into their parent, so hostile input
/// (`>>>>>>…`, thousands of nested lists) cannot overflow the stack of the renderer, the
/// views or `Drop`.
const MAX_DEPTH: usize = 32;

enum Frame {
    /// A container past [`MAX_DEPTH`]: its content goes to the nearest real frame.
    Transparent,
    /// Root, block quote, list item or footnote: holds blocks.
    Blocks(Vec<Block>),
    Item {
        checked: Option<bool>,
        blocks: Vec<Block>,
    },
    Quote(Vec<Block>),
    List {
        start: Option<u64>,
        items: Vec<ListItem>,
    },
    Inlines {
        kind: InlineKind,
        inlines: Vec<Inline>,
    },
    Code {
        lang: String,
        code: String,
    },
    Html(String),
    Table {
        aligns: Vec<Align>,
        head: Vec<Vec<Inline>>,
        rows: Vec<Vec<Vec<Inline>>>,
    },
    Row {
        head: bool,
        cells: Vec<Vec<Inline>>,
    },
}

enum InlineKind {
    Paragraph,
    Heading(u8),
    Cell,
    Emphasis,
    Strong,
    Strikethrough,
    /// Superscript, subscript: rendered as their content.
    Transparent,
    /// `url` is `None` when the destination is not http(s). `shortcut` marks `[text]` and
    /// `[text][]` links, which may really be citation markers.
    Link {
        url: Option<String>,
        shortcut: bool,
    },
}

struct Builder<'r, L> {
    registry: &'r L,
    stack: Vec<Frame>,
    problems: Vec<Problem>,
}

impl<L: Lookup> Builder<'_, L> {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(_) => self.end(),
            Event::Text(text) => {
                if let Some(Frame::Code { code, .. }) = self.top() {
                    code.push_str(&text);
                } else if let Some(Frame::Html(html)) = self.top() {
                    html.push_str(&text);
                } else if self.in_link() {
                    self.push_inline(Inline::Text(text.into_string()));
                } else {
                    self.push_text_with_markers(&text);
                }
            }
            Event::Code(code) => self.push_inline(Inline::Code(code.into_string())),
            Event::InlineMath(math) | Event::DisplayMath(math) => {
                self.push_inline(Inline::Code(math.into_string()))
            }
            Event::Html(html) => {
                if let Some(Frame::Html(buffer)) = self.top() {
                    buffer.push_str(&html);
                } else {
                    self.push_inline(Inline::Text(html.into_string()));
                }
            }
            Event::InlineHtml(html) => self.push_inline(Inline::Text(html.into_string())),
            Event::FootnoteReference(label) => self.push_text_with_markers(&format!("[^{label}]")),
            Event::SoftBreak => self.push_inline(Inline::SoftBreak),
            Event::HardBreak => self.push_inline(Inline::LineBreak),
            Event::Rule => self.push_block(Block::Rule),
            Event::TaskListMarker(checked) => {
                if let Some(Frame::Item { checked: slot, .. }) = self.top() {
                    *slot = Some(checked);
                }
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        if self.stack.len() >= MAX_DEPTH {
            self.stack.push(Frame::Transparent);
            return;
        }
        let frame = match tag {
            Tag::Paragraph => inlines(InlineKind::Paragraph),
            Tag::Heading { level, .. } => inlines(InlineKind::Heading(level as u8)),
            Tag::BlockQuote(_) => Frame::Quote(Vec::new()),
            Tag::CodeBlock(kind) => Frame::Code {
                lang: match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                },
                code: String::new(),
            },
            Tag::HtmlBlock => Frame::Html(String::new()),
            Tag::List(start) => Frame::List {
                start,
                items: Vec::new(),
            },
            Tag::Item => Frame::Item {
                checked: None,
                blocks: Vec::new(),
            },
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => Frame::Quote(Vec::new()),
            Tag::Table(aligns) => Frame::Table {
                aligns: aligns
                    .into_iter()
                    .map(|align| match align {
                        Alignment::None => Align::None,
                        Alignment::Left => Align::Left,
                        Alignment::Center => Align::Center,
                        Alignment::Right => Align::Right,
                    })
                    .collect(),
                head: Vec::new(),
                rows: Vec::new(),
            },
            Tag::TableHead => Frame::Row {
                head: true,
                cells: Vec::new(),
            },
            Tag::TableRow => Frame::Row {
                head: false,
                cells: Vec::new(),
            },
            Tag::TableCell => inlines(InlineKind::Cell),
            Tag::Emphasis => inlines(InlineKind::Emphasis),
            Tag::Strong => inlines(InlineKind::Strong),
            Tag::Strikethrough => inlines(InlineKind::Strikethrough),
            Tag::Superscript | Tag::Subscript => inlines(InlineKind::Transparent),
            Tag::Link {
                link_type,
                dest_url,
                ..
            }
            | Tag::Image {
                link_type,
                dest_url,
                ..
            } => {
                let url = urls::is_web_link(&dest_url).then(|| dest_url.into_string());
                let shortcut = matches!(link_type, LinkType::Shortcut | LinkType::Collapsed);
                inlines(InlineKind::Link { url, shortcut })
            }
        };
        self.stack.push(frame);
    }

    fn end(&mut self) {
        if self.stack.len() <= 1 {
            return;
        }
        let Some(frame) = self.stack.pop() else {
            return;
        };
        match frame {
            Frame::Transparent => {}
            Frame::Blocks(blocks) | Frame::Quote(blocks) => self.push_block(Block::Quote(blocks)),
            Frame::Item { checked, blocks } => {
                let item = ListItem { checked, blocks };
                match self.top() {
                    Some(Frame::List { items, .. }) => items.push(item),
                    _ => self.push_block(Block::Quote(item.blocks)),
                }
            }
            Frame::List { start, items } => self.push_block(Block::List { start, items }),
            Frame::Code { lang, code } => self.push_block(Block::Code { lang, code }),
            Frame::Html(html) => {
                let html = html.trim_end_matches('\n').to_string();
                self.push_block(Block::Paragraph(vec![Inline::Text(html)]))
            }
            Frame::Table { aligns, head, rows } => {
                self.push_block(Block::Table { aligns, head, rows })
            }
            Frame::Row { head, cells } => {
                if let Some(Frame::Table {
                    head: table_head,
                    rows,
                    ..
                }) = self.top()
                {
                    if head {
                        *table_head = cells;
                    } else {
                        rows.push(cells);
                    }
                }
            }
            Frame::Inlines { kind, inlines } => self.end_inlines(kind, inlines),
        }
    }

    fn end_inlines(&mut self, kind: InlineKind, inlines: Vec<Inline>) {
        match kind {
            InlineKind::Paragraph => self.push_block(Block::Paragraph(inlines)),
            InlineKind::Heading(level) => self.push_block(Block::Heading {
                level,
                content: inlines,
            }),
            InlineKind::Cell => {
                if let Some(Frame::Row { cells, .. }) = self.top() {
                    cells.push(inlines);
                }
            }
            InlineKind::Emphasis => self.push_inline(Inline::Emphasis(inlines)),
            InlineKind::Strong => self.push_inline(Inline::Strong(inlines)),
            InlineKind::Strikethrough => self.push_inline(Inline::Strikethrough(inlines)),
            InlineKind::Transparent => inlines
                .into_iter()
                .for_each(|inline| self.push_inline(inline)),
            InlineKind::Link { url, shortcut } => {
                // `[3]` with a `[3]: url` definition elsewhere parses as a link: a model
                // must not be able to point a citation at a URL of its own choosing.
                if shortcut {
                    if let Some(label) = plain_label(&inlines) {
                        let marker_text = format!("[{label}]");
                        let is_marker = markers::scan(&marker_text)
                            .first()
                            .is_some_and(|m| m.range == (0..marker_text.len()));
                        if is_marker && !self.in_link() {
                            self.push_text_with_markers(&marker_text);
                            return;
                        }
                    }
                }
                match url {
                    Some(url) if !self.in_link() => self.push_inline(Inline::Link {
                        url,
                        children: inlines,
                    }),
                    _ => inlines
                        .into_iter()
                        .for_each(|inline| self.push_inline(inline)),
                }
            }
        }
    }

    /// The innermost frame that is not transparent.
    fn top(&mut self) -> Option<&mut Frame> {
        self.stack
            .iter_mut()
            .rev()
            .find(|frame| !matches!(frame, Frame::Transparent))
    }

    fn in_link(&self) -> bool {
        self.stack.iter().any(|frame| {
            matches!(
                frame,
                Frame::Inlines {
                    kind: InlineKind::Link { .. },
                    ..
                }
            )
        })
    }

    fn push_block(&mut self, block: Block) {
        match self.top() {
            Some(Frame::Blocks(blocks) | Frame::Quote(blocks) | Frame::Item { blocks, .. }) => {
                blocks.push(block)
            }
            Some(Frame::List { items, .. }) => items.push(ListItem {
                checked: None,
                blocks: vec![block],
            }),
            // Blocks never arrive inside inline or table frames from a well-formed stream;
            // keep their text rather than lose it.
            _ => {
                let mut text = String::new();
                block_text(&block, true, &mut text);
                self.push_inline(Inline::Text(text));
            }
        }
    }

    fn push_inline(&mut self, inline: Inline) {
        match self.top() {
            Some(Frame::Inlines { inlines, .. }) => inlines.push(inline),
            Some(Frame::Blocks(blocks) | Frame::Quote(blocks) | Frame::Item { blocks, .. }) => {
                match blocks.last_mut() {
                    Some(Block::Plain(inlines)) => inlines.push(inline),
                    _ => blocks.push(Block::Plain(vec![inline])),
                }
            }
            Some(Frame::Code { code, .. }) | Some(Frame::Html(code)) => {
                inlines_text(&[inline], true, code);
            }
            Some(Frame::List { items, .. }) => items.push(ListItem {
                checked: None,
                blocks: vec![Block::Plain(vec![inline])],
            }),
            Some(Frame::Table { .. } | Frame::Row { .. } | Frame::Transparent) | None => {}
        }
    }

    /// Splits text at citation markers, resolving each against the registry.
    fn push_text_with_markers(&mut self, text: &str) {
        let mut pos = 0;
        for marker in markers::scan(text) {
            let original = &text[marker.range.clone()];
            let cites: Vec<Cite> = marker
                .numbers
                .iter()
                .map(|&number| match self.registry.lookup(number) {
                    Some(_) => Cite::Found { number },
                    None => Cite::Missing { number },
                })
                .collect();
            for cite in &cites {
                if let Cite::Missing { number } = cite {
                    self.problems.push(Problem {
                        number: *number,
                        marker: original.to_string(),
                    });
                }
            }
            if !cites.iter().any(|cite| matches!(cite, Cite::Found { .. })) {
                continue;
            }
            if marker.range.start > pos {
                self.push_inline(Inline::Text(text[pos..marker.range.start].to_string()));
            }
            self.push_inline(Inline::Citation {
                original: original.to_string(),
                cites,
            });
            pos = marker.range.end;
        }
        if pos < text.len() {
            self.push_inline(Inline::Text(text[pos..].to_string()));
        }
    }
}

fn inlines(kind: InlineKind) -> Frame {
    Frame::Inlines {
        kind,
        inlines: Vec::new(),
    }
}

/// The text of a link label made only of plain text.
fn plain_label(inlines: &[Inline]) -> Option<String> {
    let mut label = String::new();
    for inline in inlines {
        match inline {
            Inline::Text(text) => label.push_str(text),
            _ => return None,
        }
    }
    Some(label)
}
