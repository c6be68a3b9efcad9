//! The page: settings panel, conversation and composer around the session's state.

use leptos::prelude::*;

use crate::components::citation_link::provide_open_citation;
use crate::components::composer::Composer;
use crate::components::conversation::{Chat, Conversation};
use crate::components::settings::SettingsPanel;
use crate::components::use_texts;
use crate::model::{Exchange, Settings};
use crate::server_fns::{get_conversation, get_settings};

#[component]
pub fn HomePage() -> impl IntoView {
    // Blocking, so the first HTML already shows the session's mode, switch and conversation
    // (also with JavaScript disabled) and hydration starts from the same values.
    let saved = Resource::new_blocking(|| (), |()| get_settings());
    let conversation = Resource::new_blocking(|| (), |()| get_conversation());
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                let settings = saved.await.unwrap_or_default();
                let conversation = conversation.await.unwrap_or_default();
                view! { <Workspace settings conversation/> }
            })}
        </Suspense>
    }
}

#[component]
fn Workspace(settings: Settings, conversation: Vec<Exchange>) -> impl IntoView {
    let t = use_texts();
    let settings = RwSignal::new(settings);
    let chat = Chat::new(conversation);
    provide_open_citation();
    // Effects run only in the browser, so this flips once hydration is done; the tests and
    // the stylesheet use it to tell a live page from a server-rendered one.
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    view! {
        <div class="app" data-hydrated=move || hydrated.get().to_string()>
            <header class="topbar">
                <h1 class="brand">
                    <span class="brand-mark" aria-hidden="true">"["<b>"1"</b>"]"</span>
                    {t.app_title}
                </h1>
                <p class="tagline">{t.tagline}</p>
            </header>
            <SettingsPanel settings/>
            <main class="main">
                <Conversation chat/>
                <Composer chat settings/>
            </main>
        </div>
    }
}
