//! Icons drawn inline as SVG in the text colour, so they show on every system (an emoji
//! glyph is an empty box where no emoji font is installed). Each is decorative: the
//! control that holds it carries the accessible name.

use leptos::prelude::*;

/// A paperclip: add files to the conversation.
#[component]
pub fn PaperclipIcon() -> impl IntoView {
    view! {
        <svg class="icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false"
            fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">
            <path d="M17 7.5v8.25a5 5 0 0 1-10 0V6a3.25 3.25 0 0 1 6.5 0v9.5a1.5 1.5 0 0 1-3 0V7.5"/>
        </svg>
    }
}

/// A magnifying glass: the search switch.
#[component]
pub fn SearchIcon() -> impl IntoView {
    view! {
        <svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false"
            fill="none" stroke="currentColor" stroke-width="2.2" stroke-linecap="round">
            <circle cx="10.5" cy="10.5" r="6.5"/>
            <path d="M15.5 15.5 20.5 20.5"/>
        </svg>
    }
}

/// Three lines: the history drawer on phones.
#[component]
pub fn MenuIcon() -> impl IntoView {
    view! {
        <svg class="icon" viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false"
            fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round">
            <path d="M4 6.5h16M4 12h16M4 17.5h16"/>
        </svg>
    }
}

/// Books on a shelf: the heading of an Agent answer's cited articles (seed 002's 📚, drawn
/// so it shows without an emoji font).
#[component]
pub fn BooksIcon() -> impl IntoView {
    view! {
        <svg class="icon books" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false"
            fill="none" stroke="currentColor" stroke-width="1.8" stroke-linejoin="round">
            <rect x="3.5" y="4" width="4" height="16" rx="0.8"/>
            <rect x="8.5" y="6" width="4" height="14" rx="0.8"/>
            <path d="M14 7.2 17.6 6l3 13.3-3.6 1.2z"/>
        </svg>
    }
}
