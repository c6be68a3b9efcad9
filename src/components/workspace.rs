//! The pages: the workspace (history, settings, conversation and composer around the
//! session's state) at `/` and `/c/<id>`, and a shared conversation, read-only, at
//! `/s/<token>`.

use leptos::prelude::*;
use leptos::server::codee;

use crate::components::citation_link::provide_open_citation;
use crate::components::composer::Composer;
use crate::components::conversation::{Chat, Conversation, Earlier};
use crate::components::erase::{Erase, SyncHydrated};
use crate::components::history::{ConversationActions, HistoryPanel};
use crate::components::icons::MenuIcon;
use crate::components::settings::{QuestionOptions, Saver, SettingsPanel};
use crate::components::{use_texts, Overlay};
use crate::model::{ConversationSummary, Exchange, History, Settings, Setup};
use crate::server_fns::{
    get_conversation, get_history, get_settings, get_setup, get_shared, open_conversation,
};

/// How a page's data travels in its HTML to hydration: JSON, read from bytes like server
/// functions' answers and the answer stream, so the browser holds one reader per type
/// (leptos's default codec reads from `&str`, which compiles a second one).
pub struct Json;

impl<T: serde::Serialize> codee::Encoder<T> for Json {
    type Error = serde_json::Error;
    type Encoded = String;

    fn encode(value: &T) -> Result<String, serde_json::Error> {
        serde_json::to_string(value)
    }
}

impl<T: serde::de::DeserializeOwned> codee::Decoder<T> for Json {
    type Error = serde_json::Error;
    type Encoded = str;

    fn decode(json: &str) -> Result<T, serde_json::Error> {
        serde_json::from_slice(json.as_bytes())
    }
}

/// A blocking resource (the first HTML waits for it) carried as [`Json`].
fn blocking<T, S, Fut>(
    source: impl Fn() -> S + Send + Sync + 'static,
    fetcher: impl Fn(S) -> Fut + Send + Sync + 'static,
) -> Resource<T, Json>
where
    T: serde::Serialize + serde::de::DeserializeOwned + Send + Sync + 'static,
    S: PartialEq + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = T> + Send + 'static,
{
    Resource::new_with_options(source, fetcher, true)
}

/// `/` (the conversation in progress) and `/?q=…` (history search).
#[component]
pub fn HomePage(
    /// The history search, if any.
    query: Option<String>,
) -> impl IntoView {
    // Blocking, so the first HTML already shows the session's mode, switch and conversation
    // (also with JavaScript disabled) and hydration starts from the same values.
    let saved = blocking(|| (), |()| get_settings());
    let setup = blocking(|| (), |()| get_setup());
    let loaded = blocking(
        move || query.clone(),
        |q| async move {
            let conversation = get_conversation().await.unwrap_or_default();
            let history = get_history(q).await.unwrap_or_default();
            (conversation, history)
        },
    );
    SyncHydrated(view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                let settings = saved.await.unwrap_or_default();
                let setup = setup.await.ok();
                let (conversation, history) = loaded.await;
                let summary = history
                    .current
                    .as_ref()
                    .and_then(|id| history.conversations.iter().find(|c| &c.id == id).cloned());
                view! { <Workspace settings conversation history summary setup earlier=0/> }
            })}
        </Suspense>
    })
}

/// `/c/<id>`: one of the browser's conversations, opened to read and continue.
#[component]
pub fn ConversationPage(id: String) -> impl IntoView {
    let t = use_texts();
    let saved = blocking(|| (), |()| get_settings());
    let loaded = blocking(
        move || id.clone(),
        |id| async move {
            // Opened first, so the history marks it as the current one.
            let view = open_conversation(id).await.ok().flatten();
            let history = get_history(None).await.unwrap_or_default();
            (view, history)
        },
    );
    SyncHydrated(view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                let mut settings = saved.await.unwrap_or_default();
                let (view, history) = loaded.await;
                match view {
                    Some(view) => {
                        // The conversation goes on with the model that last answered in it.
                        if let Some(model) = view.exchanges.iter().rev().find_map(|e| e.model.clone()) {
                            settings.model = Some(model);
                        }
                        let conversation = view.exchanges;
                        let summary = view.summary;
                        let earlier = view.earlier;
                        view! { <Workspace settings conversation history summary setup=None earlier/> }.erased()
                    }
                    None => view! {
                        <div class="app">
                            <p class="not-found">{t.not_found}</p>
                            <HistoryPanel history/>
                        </div>
                    }
                    .erased(),
                }
            })}
        </Suspense>
    })
}

/// `/s/<token>`: a shared conversation for anyone with the link, read-only, with its
/// citations, cards and reference lists.
#[component]
pub fn SharedPage(token: String) -> impl IntoView {
    let t = use_texts();
    let shared = token.clone();
    let loaded = blocking(
        move || token.clone(),
        |token| async move { get_shared(token).await.ok().flatten() },
    );
    SyncHydrated(view! {
        <Suspense fallback=|| ()>
            {move || {
                let shared = shared.clone();
                Suspend::new(async move {
                match loaded.await {
                    Some(view) => {
                        provide_open_citation();
                        let chat = Chat::new(view.exchanges)
                            .with_earlier(view.earlier, Some(Earlier::Shared(shared.clone())));
                        let title = view.summary.map(|s| s.title).unwrap_or_default();
                        // As on the app's page: flips once hydration is done.
                        let hydrated = RwSignal::new(false);
                        Effect::new(move |_| hydrated.set(true));
                        view! {
                            <div class="app shared" data-hydrated=move || hydrated.get().to_string()>
                                <header class="topbar">
                                    <h1 class="brand">
                                        <a href="/" class="brand-link">
                                            <span class="brand-mark" aria-hidden="true">"["<b>"1"</b>"]"</span>
                                            {t.app_title}
                                        </a>
                                    </h1>
                                    <p class="tagline">{t.shared_label}</p>
                                </header>
                                <main class="main">
                                    <h2 class="conversation-title">{title}</h2>
                                    <Conversation chat/>
                                </main>
                            </div>
                        }
                        .erased()
                    }
                    None => view! { <p class="not-found">{t.not_found}</p> }.erased(),
                }
                })
            }}
        </Suspense>
    })
}

#[component]
fn Workspace(
    settings: Settings,
    conversation: Vec<Exchange>,
    history: History,
    summary: Option<ConversationSummary>,
    /// What answers come from, for the empty page (`None`: not shown).
    setup: Option<Setup>,
    /// Exchanges of the conversation before `conversation`, not loaded yet.
    earlier: u32,
) -> impl IntoView {
    let t = use_texts();
    let settings = RwSignal::new(settings);
    let chat = Chat::new(conversation).with_earlier(
        earlier,
        summary
            .as_ref()
            .map(|summary| Earlier::Conversation(summary.id.clone())),
    );
    provide_open_citation();
    provide_context(crate::components::conversation::FirstRun(setup));
    // The history list follows the answers asked here.
    provide_context(crate::components::history::LiveHistory::new(&history));
    // An opened conversation's answers offer their own citation exports.
    provide_context(crate::components::conversation::OpenConversation(
        summary.as_ref().map(|summary| summary.id.clone()),
    ));
    // Effects run only in the browser, so this flips once hydration is done; the tests and
    // the stylesheet use it to tell a live page from a server-rendered one.
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    // The filters' popover, the settings dialog (a sheet on phones) and the history drawer
    // (phones; the stylesheet decides).
    let overlay: RwSignal<Option<Overlay>> = RwSignal::new(None);
    let saver = Saver::new(settings);
    let toggle = move |which: Overlay| crate::components::toggle_overlay(overlay, which);
    let close = Callback::new(move |()| overlay.set(None));
    let expanded = move |which: Overlay| move || (overlay.get() == Some(which)).to_string();
    view! {
        <div
            class="app"
            class:settings-open=move || overlay.get() == Some(Overlay::Settings)
            class:filters-open=move || overlay.get() == Some(Overlay::Filters)
            class:history-open=move || overlay.get() == Some(Overlay::History)
            data-hydrated=move || hydrated.get().to_string()
            on:keydown=move |event: leptos::ev::KeyboardEvent| {
                if event.key() == "Escape" && overlay.get_untracked().is_some() {
                    overlay.set(None);
                }
            }
        >
            <header class="topbar">
                <button
                    type="button"
                    class="topbar-button history-button"
                    aria-controls="history-panel"
                    aria-expanded=expanded(Overlay::History)
                    on:click=move |_| toggle(Overlay::History)
                >
                    <span class="menu-icon"><MenuIcon/></span>
                    <span class="visually-hidden">{t.history}</span>
                </button>
                <h1 class="brand">
                    <span class="brand-mark" aria-hidden="true">"["<b>"1"</b>"]"</span>
                    {t.app_title}
                </h1>
                <p class="tagline">{t.tagline}</p>
            </header>
            <div class="side">
                <HistoryPanel history close/>
                // A dialog while the page runs; without JavaScript it stays in view here.
                <SettingsPanel saver close/>
            </div>
            <div class="scrim" aria-hidden="true" on:click=move |_| overlay.set(None)></div>
            <main class="main">
                {summary.map(|summary| view! { <ConversationActions summary/> })}
                <Conversation chat/>
                <div class="ask-area">
                    <QuestionOptions saver overlay/>
                    <Composer chat settings/>
                </div>
            </main>
        </div>
    }
    .erased()
}
