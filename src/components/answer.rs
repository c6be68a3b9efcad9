//! An answer: the citation core's safe tree (`model::blocks`) turned into views. Every
//! string is a text node; the only `href`s are http(s) URLs the core already checked.
//! Nothing here uses `inner_html`, and nothing here parses Markdown: the server sends the
//! tree, and while an answer streams, patches to it (`citation::stream::Framer`).
//!
//! Final blocks keep their DOM; only the open last block is rendered again, once per
//! animation frame however many patches arrived in it.

use std::sync::Arc;

use leptos::prelude::*;

use crate::citation::render::marked_text;
use crate::citation::urls::is_web_link;
use crate::citation::{CitationEntry, Lookup, SourceMap};
use crate::components::citation_link::{CitationLink, UnsupportedMark};
use crate::components::erase::Erase;
use crate::model::blocks::{fold, Align, Block, Cite, Folded, Inline, ListItem, Patch, EMPTY_TAIL};
use crate::model::{Alignment, ClaimCheck};

/// An answer's checks, once it is done: its citations, and its uncited claims.
#[derive(Clone, Copy)]
pub struct Checks {
    pub citations: Signal<Vec<Alignment>>,
    pub claims: Signal<Vec<ClaimCheck>>,
}

impl Checks {
    /// No checks (an answer being written, a Research branch's evidence).
    pub fn none() -> Checks {
        Checks {
            citations: Signal::stored(Vec::new()),
            claims: Signal::stored(Vec::new()),
        }
    }
}

/// Numbers the citations of one answer in reading order, so a citation keeps its key (and
/// an open card stays open) when the streaming answer is rendered again.
struct Keys {
    base: u64,
    next: std::cell::Cell<u64>,
    /// The answer's checked citations, by ordinal (the same count as the keys).
    checks: Signal<Vec<Alignment>>,
    /// Its uncited claims checked: what cited's own citations point to.
    claims: Signal<Vec<ClaimCheck>>,
    /// The answer's sources, where found citations find their entries.
    sources: Memo<SourceMap>,
}

impl Keys {
    /// The keys of an answer's citations from the `start`-th found one on.
    fn new(answer_key: u64, start: u64, checks: &Checks, sources: Memo<SourceMap>) -> Keys {
        Keys {
            base: answer_key + 1,
            next: std::cell::Cell::new(start),
            checks: checks.citations,
            claims: checks.claims,
            sources,
        }
    }

    /// The key of the citation cited added to claim `claim` (apart from the model's).
    fn added(&self, claim: u32) -> u64 {
        (self.base << 24) | (1 << 23) | u64::from(claim)
    }

    fn entry(&self, number: u32) -> Option<Arc<CitationEntry>> {
        self.sources
            .with_untracked(|sources| sources.lookup(number).cloned())
    }

    /// The next citation's key and ordinal.
    fn next(&self) -> (u64, u32) {
        let ordinal = self.next.get();
        self.next.set(ordinal + 1);
        ((self.base << 24) | ordinal, ordinal as u32)
    }
}

/// A final block of a streaming answer: rendered once, kept under its key.
#[derive(Clone)]
struct Piece {
    /// (generation, index): a reset starts a new generation, so no stale block survives.
    key: (u64, usize),
    block: Arc<Block>,
    /// Found citations before this block.
    cites: u64,
}

fn pieces(generation: u64, first: usize, blocks: Vec<Block>, mut cites: u64) -> Vec<Piece> {
    blocks
        .into_iter()
        .enumerate()
        .map(|(idx, block)| {
            let piece = Piece {
                key: (generation, first + idx),
                cites,
                block: Arc::new(block),
            };
            cites += piece.block.found_cites();
            piece
        })
        .collect()
}

/// A streaming answer's patches as they arrive, for its [`AnswerBody`] to render once per
/// animation frame.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Patches {
    queue: StoredValue<Vec<Patch>>,
    arrived: RwSignal<u64>,
}

impl Patches {
    pub fn new() -> Patches {
        Patches {
            queue: StoredValue::new(Vec::new()),
            arrived: RwSignal::new(0),
        }
    }

    pub fn push(&self, patch: Patch) {
        self.queue.update_value(|queue| queue.push(patch));
        self.arrived.update(|count| *count += 1);
    }

    fn take(&self) -> Vec<Patch> {
        self.queue
            .try_update_value(std::mem::take)
            .unwrap_or_default()
    }
}

impl Default for Patches {
    fn default() -> Patches {
        Patches::new()
    }
}

/// An answer rendered against its sources, kept current as patches stream in.
///
/// The cost of a patch does not grow with the answer: final blocks are rendered once and
/// only the last one again, at most once per animation frame.
#[component]
pub fn AnswerBody(
    /// Unique per answer on the page.
    answer_key: u64,
    /// The answer as the server rendered it for this page.
    blocks: Vec<Block>,
    #[prop(into)] sources: Signal<Vec<Arc<CitationEntry>>>,
    /// How it changes while it streams.
    #[prop(optional)]
    patches: Option<Patches>,
    /// Each citation and uncited claim checked, once the answer is done.
    #[prop(optional)]
    checks: Option<Checks>,
) -> impl IntoView {
    let checks = checks.unwrap_or_else(Checks::none);
    let map = Memo::new(move |_| SourceMap::new(sources.get()));
    let generation = StoredValue::new(0u64);
    // Found citations in the held blocks (the tail's keys count on from there).
    let held_cites = StoredValue::new(blocks.iter().map(Block::found_cites).sum::<u64>());
    let held = RwSignal::new(pieces(0, 0, blocks, 0));
    let tail = RwSignal::new((Vec::<Block>::new(), held_cites.get_value()));
    // The tail as JSON, the form patches edit; parsed once per frame.
    let tail_json = StoredValue::new(EMPTY_TAIL.to_string());
    let scheduled = StoredValue::new(false);
    let flush = move || {
        scheduled.set_value(false);
        let Some(patches) = patches else {
            return;
        };
        let arrived = patches.take();
        if arrived.is_empty() {
            return;
        }
        let Folded {
            reset,
            completed,
            tail_json: json,
        } = fold(arrived, tail_json.get_value());
        // From bytes, as every reader in the browser is (see `workspace::Json`).
        let tail_blocks: Vec<Block> = serde_json::from_slice(json.as_bytes()).unwrap_or_default();
        tail_json.set_value(json);
        let added: u64 = completed.iter().map(Block::found_cites).sum();
        if reset {
            generation.update_value(|generation| *generation += 1);
            held.set(pieces(generation.get_value(), 0, completed, 0));
            held_cites.set_value(added);
        } else if !completed.is_empty() {
            let generation = generation.get_value();
            let before = held_cites.get_value();
            held.update(|held| {
                let more = pieces(generation, held.len(), completed, before);
                held.extend(more);
            });
            held_cites.set_value(before + added);
        }
        tail.set((tail_blocks, held_cites.get_value()));
    };
    // Browser only: patches are queued as they arrive; one frame renders all that came.
    Effect::new(move |_| {
        if let Some(patches) = patches {
            patches.arrived.track();
            if !scheduled.get_value() {
                scheduled.set_value(true);
                request_animation_frame(flush);
            }
        }
    });
    view! {
        <For each=move || held.get() key=|piece| piece.key let:piece>
            {block_view(Block::clone(&piece.block), &Keys::new(answer_key, piece.cites, &checks, map))}
        </For>
        {move || {
            tail.with(|(blocks, cites)| {
                let keys = Keys::new(answer_key, *cites, &checks, map);
                blocks.iter().cloned().map(|block| block_view(block, &keys)).collect_view()
            })
        }}
    }
}

/// Text with citation markers and no Markdown (a Research branch's evidence), kept current
/// as the answer's sources arrive.
#[component]
pub fn MarkedText(
    answer_key: u64,
    text: String,
    #[prop(into)] sources: Signal<Vec<Arc<CitationEntry>>>,
) -> impl IntoView {
    let map = Memo::new(move |_| SourceMap::new(sources.get()));
    let checks = Checks::none();
    move || {
        let blocks = map.with(|map| marked_text(&text, map));
        let keys = Keys::new(answer_key, 0, &checks, map);
        blocks
            .into_iter()
            .map(|block| block_view(block, &keys))
            .collect_view()
    }
}

fn block_view(block: Block, keys: &Keys) -> AnyView {
    match block {
        Block::Paragraph(inlines) => view! { <p>{inlines_view(inlines, keys)}</p> }.erased(),
        Block::Plain(inlines) => view! { <span class="plain">{inlines_view(inlines, keys)}</span> }.erased(),
        Block::Heading { level, content } => {
            let content = inlines_view(content, keys);
            match level {
                1 | 2 => view! { <h3>{content}</h3> }.erased(),
                3 => view! { <h4>{content}</h4> }.erased(),
                _ => view! { <h5>{content}</h5> }.erased(),
            }
        }
        Block::Quote(blocks) => view! { <blockquote>{blocks.into_iter().map(|block| block_view(block, keys)).collect_view()}</blockquote> }.erased(),
        Block::List { start: Some(start), items } => {
            view! { <ol start=start.to_string()>{items.into_iter().map(|item| item_view(item, keys)).collect_view()}</ol> }.erased()
        }
        Block::List { start: None, items } => view! { <ul>{items.into_iter().map(|item| item_view(item, keys)).collect_view()}</ul> }.erased(),
        Block::Code { lang, code } => view! {
            <pre class="code" data-lang=lang>
                <code>{code}</code>
            </pre>
        }
        .erased(),
        Block::Table { aligns, head, rows } => {
            let align = move |idx: usize| match aligns.get(idx) {
                Some(Align::Left) => "left",
                Some(Align::Center) => "center",
                Some(Align::Right) => "right",
                _ => "",
            };
            view! {
                <div class="table-wrap">
                    <table>
                        <thead>
                            <tr>
                                {head
                                    .into_iter()
                                    .enumerate()
                                    .map(|(idx, cell)| view! { <th class=align(idx)>{inlines_view(cell, keys)}</th> })
                                    .collect_view()}
                            </tr>
                        </thead>
                        <tbody>
                            {rows
                                .into_iter()
                                .map(|row| {
                                    view! {
                                        <tr>
                                            {row
                                                .into_iter()
                                                .enumerate()
                                                .map(|(idx, cell)| view! { <td class=align(idx)>{inlines_view(cell, keys)}</td> })
                                                .collect_view()}
                                        </tr>
                                    }
                                })
                                .collect_view()}
                        </tbody>
                    </table>
                </div>
            }
            .erased()
        }
        Block::Rule => view! { <hr/> }.erased(),
    }
}

fn item_view(item: ListItem, keys: &Keys) -> impl IntoView {
    let marker = item
        .checked
        .map(|checked| if checked { "☑ " } else { "☐ " });
    view! { <li>{marker}{item.blocks.into_iter().map(|block| block_view(block, keys)).collect_view()}</li> }
}

fn inlines_view(inlines: Vec<Inline>, keys: &Keys) -> AnyView {
    inlines
        .into_iter()
        .map(|inline| inline_view(inline, keys))
        .collect_view()
        .erased()
}

fn inline_view(inline: Inline, keys: &Keys) -> AnyView {
    match inline {
        Inline::Text(text) => text.erased(),
        Inline::Code(code) => view! { <code>{code}</code> }.erased(),
        Inline::Emphasis(children) => view! { <em>{inlines_view(children, keys)}</em> }.erased(),
        Inline::Strong(children) => {
            view! { <strong>{inlines_view(children, keys)}</strong> }.erased()
        }
        Inline::Strikethrough(children) => {
            view! { <del>{inlines_view(children, keys)}</del> }.erased()
        }
        // The server only writes http(s) links; checked again where the tree becomes HTML.
        Inline::Link { url, children } if is_web_link(&url) => view! {
            <a href=url target="_blank" rel="noopener noreferrer nofollow">
                {inlines_view(children, keys)}
            </a>
        }
        .erased(),
        Inline::Link { children, .. } => inlines_view(children, keys),
        Inline::SoftBreak => "\n".erased(),
        Inline::LineBreak => view! { <br/> }.erased(),
        Inline::Citation { cites, .. } => cites
            .into_iter()
            .map(|cite| match cite {
                Cite::Found { number } => {
                    let (key, ordinal) = keys.next();
                    let Some(entry) = keys.entry(number) else {
                        return format!("[{number}]").erased();
                    };
                    let checks = keys.checks;
                    let check = Signal::derive(move || {
                        checks.with(|all| all.iter().find(|a| a.ordinal == ordinal).cloned())
                    });
                    view! { <CitationLink number entry key check/> }.erased()
                }
                Cite::Missing { number } => format!("[{number}]").erased(),
                Cite::Added { number, key: claim } => {
                    let key = keys.added(claim);
                    let Some(entry) = keys.entry(number) else {
                        return ().erased();
                    };
                    let claims = keys.claims;
                    let check = Signal::derive(move || {
                        claims.with(|all| all.get(claim as usize).and_then(|c| c.added.clone()))
                    });
                    view! { <CitationLink number entry key check added=true/> }.erased()
                }
                Cite::Unsupported => view! { <UnsupportedMark/> }.erased(),
            })
            .collect_view()
            .erased(),
    }
}
