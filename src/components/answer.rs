//! An answer: the citation core's safe tree (`citation::Block`/`Inline`) turned into views.
//! Every string is a text node; the only `href`s are http(s) URLs the core already checked.
//! Nothing here uses `inner_html`.
//!
//! While an answer streams, a token touches only its text signal; final blocks keep their
//! DOM and only the open last block is rendered again, once per animation frame.

use std::sync::Arc;

use leptos::prelude::*;

use crate::citation::render::{Align, ListItem};
use crate::citation::{Block, CitationEntry, Cite, Delta, Incremental, Inline, SourceMap};
use crate::components::citation_link::CitationLink;
use crate::components::erase::Erase;
use crate::model::Alignment;

/// Numbers the citations of one answer in reading order, so a citation keeps its key (and
/// an open card stays open) when the streaming answer is rendered again.
struct Keys {
    base: u64,
    next: std::cell::Cell<u64>,
    /// The answer's checked citations, by ordinal (the same count as the keys).
    checks: Signal<Vec<Alignment>>,
}

impl Keys {
    /// The keys of an answer's citations from the `start`-th found one on.
    fn new(answer_key: u64, start: u64, checks: Signal<Vec<Alignment>>) -> Keys {
        Keys {
            base: answer_key + 1,
            next: std::cell::Cell::new(start),
            checks,
        }
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

/// The answer text rendered against its sources, kept current as the text streams in.
///
/// The cost of a token does not grow with the answer: final blocks are rendered once
/// (`citation::stream`) and only the last one again, at most once per animation frame
/// however many tokens arrived in it.
#[component]
pub fn AnswerBody(
    /// Unique per answer on the page.
    answer_key: u64,
    #[prop(into)] text: Signal<String>,
    #[prop(into)] sources: Signal<Vec<Arc<CitationEntry>>>,
    /// Changes when the text is replaced rather than extended.
    #[prop(optional, into)]
    rewrites: Option<Signal<u32>>,
    /// Each citation checked against its source, once the answer is done.
    #[prop(optional, into)]
    checks: Option<Signal<Vec<Alignment>>>,
) -> impl IntoView {
    let rewrites = rewrites.unwrap_or_else(|| Signal::stored(0));
    let checks = checks.unwrap_or_else(|| Signal::stored(Vec::new()));
    let map = Memo::new(move |_| SourceMap::new(sources.get()));
    let state = StoredValue::new(Incremental::new());
    let generation = StoredValue::new(0u64);
    let update = move || {
        text.with_untracked(|text| {
            map.with_untracked(|map| {
                state
                    .try_update_value(|state| {
                        state.update(text, rewrites.get_untracked(), map, map.len())
                    })
                    .unwrap_or_else(|| Delta {
                        reset: false,
                        completed: Vec::new(),
                        completed_cites: 0,
                        tail: Vec::new(),
                        tail_cites: 0,
                    })
            })
        })
    };
    // The first render (on the server, and the same again when the browser hydrates).
    let first = update();
    let held = RwSignal::new(pieces(0, 0, first.completed, first.completed_cites));
    let tail = RwSignal::new((first.tail, first.tail_cites));
    let scheduled = StoredValue::new(false);
    let flush = move || {
        scheduled.set_value(false);
        let update = update();
        if update.reset {
            generation.update_value(|generation| *generation += 1);
            let generation = generation.get_value();
            held.set(pieces(
                generation,
                0,
                update.completed,
                update.completed_cites,
            ));
        } else if !update.completed.is_empty() {
            let generation = generation.get_value();
            held.update(|held| {
                let more = pieces(
                    generation,
                    held.len(),
                    update.completed,
                    update.completed_cites,
                );
                held.extend(more);
            });
        }
        tail.set((update.tail, update.tail_cites));
    };
    // Browser only: tokens mark the answer stale; one frame renders all that came.
    Effect::new(move |_| {
        let current = text.with(|text| {
            map.with(|map| {
                state.with_value(|state| state.is_current(text, rewrites.get(), map.len()))
            })
        });
        if !current && !scheduled.get_value() {
            scheduled.set_value(true);
            request_animation_frame(flush);
        }
    });
    view! {
        <For each=move || held.get() key=|piece| piece.key let:piece>
            {block_view(Block::clone(&piece.block), &Keys::new(answer_key, piece.cites, checks))}
        </For>
        {move || {
            tail.with(|(blocks, cites)| {
                let keys = Keys::new(answer_key, *cites, checks);
                blocks.iter().cloned().map(|block| block_view(block, &keys)).collect_view()
            })
        }}
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
        Inline::Link { url, children } => view! {
            <a href=url target="_blank" rel="noopener noreferrer nofollow">
                {inlines_view(children, keys)}
            </a>
        }
        .erased(),
        Inline::SoftBreak => "\n".erased(),
        Inline::LineBreak => view! { <br/> }.erased(),
        Inline::Citation { cites, .. } => cites
            .into_iter()
            .map(|cite| match cite {
                Cite::Found { number, entry } => {
                    let (key, ordinal) = keys.next();
                    let checks = keys.checks;
                    let check = Signal::derive(move || {
                        checks.with(|all| all.iter().find(|a| a.ordinal == ordinal).cloned())
                    });
                    view! { <CitationLink number entry key check/> }.erased()
                }
                Cite::Missing { number } => format!("[{number}]").erased(),
            })
            .collect_view()
            .erased(),
    }
}
