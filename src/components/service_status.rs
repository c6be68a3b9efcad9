//! The SearXNG status indicator of the settings panel: working, or what to fix.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::components::use_texts;
use crate::server_fns::get_search_status;

#[component]
pub fn SearchStatus() -> impl IntoView {
    let t = use_texts();
    let refresh = RwSignal::new(0u32);
    // `None` until the browser has asked: the server renders "checking", so a hanging
    // SearXNG never delays the page, and hydration starts from the same markup.
    let status = RwSignal::new(None);
    Effect::new(move |_| {
        let forced = refresh.get() > 0;
        spawn_local(async move {
            status.set(Some(get_search_status(forced).await));
        });
    });
    let line = move || match status.get() {
        None => (None, t.searxng_checking, String::new()),
        Some(Ok(status)) if status.ok => (Some(true), t.searxng_ok, String::new()),
        Some(Ok(status)) => (Some(false), t.searxng_bad, status.message),
        Some(Err(error)) => (Some(false), t.searxng_bad, error.to_string()),
    };
    view! {
        <div class="service" aria-live="polite">
            <p
                class="service-line"
                class:ok=move || line().0 == Some(true)
                class:bad=move || line().0 == Some(false)
            >
                <span class="dot" aria-hidden="true"></span>
                {move || line().1}
            </p>
            <p class="service-fix">{move || line().2}</p>
            <button type="button" class="link-button" on:click=move |_| refresh.update(|n| *n += 1)>
                {t.recheck}
            </button>
        </div>
    }
}
