use leptos::prelude::*;

use crate::components::use_texts;

/// The question box and its buttons, pinned under the conversation.
#[component]
pub fn Composer() -> impl IntoView {
    let t = use_texts();
    view! {
        <form class="composer" on:submit=|ev| ev.prevent_default()>
            <p class="status" role="status"></p>
            <div class="composer-row">
                <textarea
                    class="question"
                    name="question"
                    rows="1"
                    aria-label=t.ask
                    placeholder=t.ask_placeholder
                ></textarea>
                <button class="send" type="submit">{t.send}</button>
            </div>
            <noscript>
                <p class="noscript">{t.no_script}</p>
            </noscript>
        </form>
    }
}
