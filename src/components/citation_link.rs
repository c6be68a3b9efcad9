//! A citation superscript and its source card (seed 001).
//!
//! - Mouse: the card opens on hover and closes when the pointer leaves; a click follows the
//!   link.
//! - Touch: the first tap opens the card (the link does not navigate); the link inside the
//!   card navigates; tapping anywhere else closes it.
//! - Keyboard: focusing the superscript opens the card, Enter follows the link, Esc or
//!   moving focus away closes it.
//!
//! One card is open at a time ([`OpenCitation`]). The accessible name starts "引用 N".

use std::sync::Arc;

use leptos::ev;
use leptos::html;
use leptos::prelude::*;

use crate::citation::urls::{self, is_safe_link};
use crate::citation::CitationEntry;
use crate::components::erase::{shown, Erase};
use crate::components::use_texts;
use crate::model::{Alignment, SourceKind, Support};

/// Which card is open, if any (keys are per page, never rendered into HTML).
#[derive(Clone, Copy)]
pub struct OpenCitation(pub RwSignal<Option<u64>>);

/// Provides [`OpenCitation`] and closes the open card on Esc or a tap outside any citation.
pub fn provide_open_citation() {
    let open = RwSignal::new(None::<u64>);
    provide_context(OpenCitation(open));
    let _ = window_event_listener(ev::keydown, move |event| {
        if event.key() == "Escape" {
            open.set(None);
        }
    });
    let _ = window_event_listener(ev::pointerdown, move |event| {
        let inside = event
            .target()
            .and_then(wasm_bindgen_element)
            .and_then(|element| element.closest(".cite").ok().flatten())
            .is_some();
        if !inside {
            open.set(None);
        }
    });
}

fn wasm_bindgen_element(target: web_sys::EventTarget) -> Option<web_sys::Element> {
    use wasm_bindgen::JsCast;
    target.dyn_into::<web_sys::Element>().ok()
}

/// `passage` with the byte ranges in `matched` marked; ranges that do not fall on
/// character boundaries are left unmarked.
fn marked_passage(passage: &str, matched: &[(u32, u32)]) -> impl IntoView {
    let mut parts = Vec::new();
    let mut at = 0usize;
    for &(from, to) in matched {
        let (from, to) = (from as usize, to as usize);
        if from < at || passage.get(from..to).is_none() || passage.get(at..from).is_none() {
            continue;
        }
        parts.push(passage[at..from].to_string().erased());
        parts.push(view! { <mark>{passage[from..to].to_string()}</mark> }.erased());
        at = to;
    }
    parts.push(passage.get(at..).unwrap_or_default().to_string().erased());
    parts.collect_view()
}

/// A citation checked against its source: the level, the passage quoted with the shared
/// words marked, and a link that opens the page at the passage. In a citation's card and
/// under a source in the reference list.
#[component]
pub fn Evidence(
    check: Alignment,
    url: String,
    /// A knowledge-base or file passage: its text is the source itself, never a snippet
    /// standing in for a page that could not be read.
    #[prop(optional)]
    local: bool,
) -> impl IntoView {
    let t = use_texts();
    let level = format!("support-level support-{:?}", check.support).to_ascii_lowercase();
    let quoted = (!check.passage.is_empty()).then(|| {
        let fragment = urls::text_fragment(&url, &check.passage);
        view! {
            <span class="cite-passage-label">
                {t.supporting_passage}
                {(check.offset.is_none() && !local).then_some(t.from_snippet)}
            </span>
            <q class="cite-passage">{marked_passage(&check.passage, &check.matched)}</q>
            {fragment.map(|href| view! {
                <a class="cite-at-passage" href=href target="_blank" rel="noopener noreferrer nofollow">
                    {t.open_at_passage}" ↗"
                </a>
            })}
        }
    });
    // Another source of the answer states what this one does not: said, with its link.
    let better = check.better.as_ref().filter(|b| is_safe_link(&b.url)).map(|b| {
        let text = t.better_source.replace("{n}", &b.number.to_string());
        view! {
            <a class="cite-better" href=b.url.clone() target="_blank" rel="noopener noreferrer nofollow">
                {text}
            </a>
        }
    });
    view! {
        <span class=level>{t.support(check.support)}</span>
        {quoted}
        {better}
    }
}

#[component]
pub fn CitationLink(
    number: u32,
    entry: Arc<CitationEntry>,
    /// Stable across re-renders of the same answer.
    key: u64,
    /// This citation checked against its source (once the answer is done).
    #[prop(optional, into)]
    check: Option<Signal<Option<Alignment>>>,
    /// cited added it: the model left the sentence uncited.
    #[prop(optional)]
    added: bool,
) -> impl IntoView {
    let check = check.unwrap_or_else(|| Signal::stored(None));
    let support = move || check.with(|c| c.as_ref().map(|c| c.support));
    let t = use_texts();
    let open_citation = use_context::<OpenCitation>().unwrap_or(OpenCitation(RwSignal::new(None)));
    let is_open = move || open_citation.0.get() == Some(key);
    let open = move || open_citation.0.set(Some(key));
    let close = move || {
        if open_citation.0.get_untracked() == Some(key) {
            open_citation.0.set(None);
        }
    };
    // The kind of pointer that started the current click.
    let last_pointer = StoredValue::new(String::new());
    let wrapper = NodeRef::<html::Span>::new();

    let href = is_safe_link(&entry.url).then(|| entry.url.clone());
    let title = if entry.title.trim().is_empty() {
        entry.domain.clone()
    } else {
        entry.title.clone()
    };
    let knowledge = entry.kind == SourceKind::Knowledge;
    let kind_label = crate::i18n::local_kind(&entry.url, t);
    let base_label = if added {
        format!("{} {number}：{title}（{}）", t.citation, t.added_by_cited)
    } else {
        format!("{} {number}：{title}", t.citation)
    };
    // A citation whose source does not (fully) state its sentence says so in its name.
    let label = move || match support() {
        Some(level @ (Support::Partial | Support::NotFound | Support::NotChecked)) => {
            format!("{base_label}（{}）", t.support(level))
        }
        _ => base_label.clone(),
    };
    let badge = entry
        .domain
        .chars()
        .next()
        .map(|c| c.to_ascii_uppercase().to_string())
        .unwrap_or_else(|| "?".into());
    let hue = entry
        .domain
        .bytes()
        .fold(0u32, |acc, b| acc.wrapping_mul(31).wrapping_add(b as u32))
        % 12;
    // A class per hue, not a `style` attribute: the page's CSP allows no inline style.
    let badge_class = format!("cite-badge hue-{hue}");
    // The site's favicon over the letter, from cited's own origin.
    let icon = crate::citation::urls::icon_path(&entry.url);
    let domain = entry.domain.clone();
    let snippet = entry.snippet.clone();
    let card_href = href.clone();
    let page_url = entry.url.clone();
    let evidence = move || {
        check
            .get()
            .map(|check| view! { <Evidence check url=page_url.clone() local=!urls::is_web_link(&page_url)/> })
    };
    view! {
        <span
            class="cite"
            class:open=is_open
            class:unsupported=move || support() == Some(Support::NotFound)
            class:partly=move || support() == Some(Support::Partial)
            class:unchecked=move || support() == Some(Support::NotChecked)
            class:added=added
            node_ref=wrapper
            on:pointerenter=move |event: ev::PointerEvent| {
                if event.pointer_type() == "mouse" {
                    open();
                }
            }
            on:pointerleave=move |event: ev::PointerEvent| {
                if event.pointer_type() == "mouse" {
                    close();
                }
            }
            on:focusout=move |event: ev::FocusEvent| {
                let staying = match (event.related_target(), wrapper.get_untracked()) {
                    (Some(next), Some(wrapper)) => {
                        use wasm_bindgen::JsCast;
                        next.dyn_ref::<web_sys::Node>().is_some_and(|node| wrapper.contains(Some(node)))
                    }
                    _ => false,
                };
                if !staying {
                    close();
                }
            }
        >
            <a
                class="cite-link"
                href=href
                target="_blank"
                rel="noopener noreferrer nofollow"
                aria-label=label
                aria-expanded=move || is_open().to_string()
                on:pointerdown=move |event: ev::PointerEvent| last_pointer.set_value(event.pointer_type())
                on:focus=move |_| {
                    // Keyboard focus opens the card; a tap's focus waits for its click.
                    if last_pointer.get_value().is_empty() {
                        open();
                    }
                }
                on:click=move |event: ev::MouseEvent| {
                    // Touch: the first tap shows the card; the card's own link navigates.
                    // (`detail` is 0 for a click made with the keyboard.)
                    if last_pointer.get_value() == "touch" && event.detail() > 0 && !is_open() {
                        event.prevent_default();
                        open();
                    }
                    last_pointer.set_value(String::new());
                }
            >
                <sup>{number}</sup>
            </a>
            {shown(is_open, move || view! {
                <span class="cite-card" role="tooltip">
                    <span class="cite-card-head">
                        <span class=badge_class.clone() aria-hidden="true">
                            {badge.clone()}
                            {icon.clone().map(|src| view! { <img class="favicon" src=src alt="" decoding="async"/> })}
                        </span>
                        <span class="cite-domain">{domain.clone()}</span>
                        {knowledge.then(|| view! { <span class="cite-kind">{kind_label}</span> })}
                    </span>
                    {added.then(|| view! { <span class="cite-added">{t.added_by_cited}</span> })}
                    <span class="cite-title">{title.clone()}</span>
                    <span class="cite-snippet">{snippet.clone()}</span>
                    {evidence.clone()}
                    {card_href.clone().map(|href| view! {
                        <a class="cite-open" href=href target="_blank" rel="noopener noreferrer nofollow">
                            {t.open_source}" ↗"
                        </a>
                    })}
                </span>
            })}
        </span>
    }
}

/// The discreet mark after a claim none of the answer's sources supports: a small sign
/// with its meaning as its accessible name and tooltip.
#[component]
pub fn UnsupportedMark() -> impl IntoView {
    let t = use_texts();
    view! {
        <span class="claim-unsupported" role="img" aria-label=t.claim_unsupported title=t.claim_unsupported>
            "?"
        </span>
    }
}
