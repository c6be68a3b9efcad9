use leptos::prelude::*;

use crate::components::use_texts;

/// The message list. Empty until the Chat issue fills it.
#[component]
pub fn Conversation() -> impl IntoView {
    let t = use_texts();
    view! {
        <section class="conversation" aria-label=t.conversation>
            <div class="empty">
                <p class="empty-mark" aria-hidden="true">"[1]"</p>
                <p>{t.empty_conversation}</p>
            </div>
        </section>
    }
}
