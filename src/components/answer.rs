//! An answer: the citation core's safe tree (`citation::Block`/`Inline`) turned into views.
//! Every string is a text node; the only `href`s are http(s) URLs the core already checked.
//! Nothing here uses `inner_html`.

use std::sync::Arc;

use leptos::prelude::*;

use crate::citation::render::{Align, ListItem};
use crate::citation::{render, Block, CitationEntry, Cite, Inline, SourceMap};
use crate::components::citation_link::CitationLink;

/// The answer text rendered against its sources; re-rendered as the text streams in.
#[component]
pub fn AnswerBody(
    #[prop(into)] text: Signal<String>,
    #[prop(into)] sources: Signal<Vec<Arc<CitationEntry>>>,
) -> impl IntoView {
    move || {
        let sources = SourceMap::new(sources.get());
        let rendered = render(&text.get(), &sources);
        rendered.blocks.into_iter().map(block_view).collect_view()
    }
}

fn block_view(block: Block) -> AnyView {
    match block {
        Block::Paragraph(inlines) => view! { <p>{inlines_view(inlines)}</p> }.into_any(),
        Block::Plain(inlines) => view! { <span class="plain">{inlines_view(inlines)}</span> }.into_any(),
        Block::Heading { level, content } => {
            let content = inlines_view(content);
            match level {
                1 | 2 => view! { <h3>{content}</h3> }.into_any(),
                3 => view! { <h4>{content}</h4> }.into_any(),
                _ => view! { <h5>{content}</h5> }.into_any(),
            }
        }
        Block::Quote(blocks) => view! { <blockquote>{blocks.into_iter().map(block_view).collect_view()}</blockquote> }.into_any(),
        Block::List { start: Some(start), items } => {
            view! { <ol start=start.to_string()>{items.into_iter().map(item_view).collect_view()}</ol> }.into_any()
        }
        Block::List { start: None, items } => view! { <ul>{items.into_iter().map(item_view).collect_view()}</ul> }.into_any(),
        Block::Code { lang, code } => view! {
            <pre class="code" data-lang=lang>
                <code>{code}</code>
            </pre>
        }
        .into_any(),
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
                                    .map(|(idx, cell)| view! { <th class=align(idx)>{inlines_view(cell)}</th> })
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
                                                .map(|(idx, cell)| view! { <td class=align(idx)>{inlines_view(cell)}</td> })
                                                .collect_view()}
                                        </tr>
                                    }
                                })
                                .collect_view()}
                        </tbody>
                    </table>
                </div>
            }
            .into_any()
        }
        Block::Rule => view! { <hr/> }.into_any(),
    }
}

fn item_view(item: ListItem) -> impl IntoView {
    let marker = item
        .checked
        .map(|checked| if checked { "☑ " } else { "☐ " });
    view! { <li>{marker}{item.blocks.into_iter().map(block_view).collect_view()}</li> }
}

fn inlines_view(inlines: Vec<Inline>) -> AnyView {
    inlines
        .into_iter()
        .map(inline_view)
        .collect_view()
        .into_any()
}

fn inline_view(inline: Inline) -> AnyView {
    match inline {
        Inline::Text(text) => text.into_any(),
        Inline::Code(code) => view! { <code>{code}</code> }.into_any(),
        Inline::Emphasis(children) => view! { <em>{inlines_view(children)}</em> }.into_any(),
        Inline::Strong(children) => view! { <strong>{inlines_view(children)}</strong> }.into_any(),
        Inline::Strikethrough(children) => view! { <del>{inlines_view(children)}</del> }.into_any(),
        Inline::Link { url, children } => view! {
            <a href=url target="_blank" rel="noopener noreferrer nofollow">
                {inlines_view(children)}
            </a>
        }
        .into_any(),
        Inline::SoftBreak => "\n".into_any(),
        Inline::LineBreak => view! { <br/> }.into_any(),
        Inline::Citation { cites, .. } => cites
            .into_iter()
            .map(|cite| match cite {
                Cite::Found { number, entry } => view! { <CitationLink number entry/> }.into_any(),
                Cite::Missing { number } => format!("[{number}]").into_any(),
            })
            .collect_view()
            .into_any(),
    }
}
