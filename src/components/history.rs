//! The history of conversations ("历史对话"): new chat, search, the list grouped by day,
//! rename and delete (with undo); and the current conversation's share and export.
//! Links, "new chat" and search are plain links and forms, so they work without
//! JavaScript; renaming, deleting and sharing need it.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::components::erase::{shown, shown_or, Erase};
use crate::components::{use_texts, PanelHead};
use crate::model::{ConversationSummary, Day, History};
use crate::server_fns::{delete_conversation, rename_conversation, share_conversation};

/// The history list as it changes while the page is open: a question puts its
/// conversation at the top (added when it is new), a model's title renames it in place.
/// The workspace provides it; the composer feeds it the answer's events.
#[derive(Clone, Copy)]
pub struct LiveHistory {
    items: RwSignal<Vec<ConversationSummary>>,
    current: RwSignal<Option<String>>,
    /// A search's results: a new conversation does not join them.
    searching: bool,
}

impl LiveHistory {
    pub fn new(history: &History) -> LiveHistory {
        LiveHistory {
            items: RwSignal::new(history.conversations.clone()),
            current: RwSignal::new(history.current.clone()),
            searching: history.query.is_some(),
        }
    }

    /// An answer is being kept in conversation `id` at `at`: it becomes the current one
    /// and moves to the top, added under `title` when the list does not hold it.
    pub fn asked_in(&self, id: &str, title: &str, at: i64) {
        self.current.set(Some(id.to_string()));
        self.items.update(|items| {
            let summary = match items.iter().position(|c| c.id == id) {
                Some(index) => {
                    let mut summary = items.remove(index);
                    summary.updated_at = summary.updated_at.max(at);
                    summary
                }
                None if !self.searching => ConversationSummary {
                    id: id.to_string(),
                    title: title.to_string(),
                    mode: crate::model::Mode::default(),
                    created_at: at,
                    updated_at: at,
                    share_token: None,
                },
                None => return,
            };
            items.insert(0, summary);
        });
    }

    /// The conversation the page shows (the browser's, as the page last knew it).
    pub fn current_id(&self) -> Option<String> {
        self.current.get_untracked()
    }

    /// Conversation `id` is called `title` now.
    pub fn titled(&self, id: &str, title: &str) {
        self.items.update(|items| {
            if let Some(summary) = items.iter_mut().find(|c| c.id == id) {
                summary.title = title.to_string();
            }
        });
    }
}

#[component]
pub fn HistoryPanel(
    history: History,
    /// On phones the panel is a drawer; this closes it.
    #[prop(optional)]
    close: Option<Callback<()>>,
) -> impl IntoView {
    let t = use_texts();
    let user = history.user.clone();
    let live = use_context::<LiveHistory>().unwrap_or_else(|| LiveHistory::new(&history));
    let items = live.items;
    let current = live.current;
    let deleted: RwSignal<Option<ConversationSummary>> = RwSignal::new(None);
    let problem = RwSignal::new(String::new());
    let query = history.query.clone().unwrap_or_default();
    let searching = history.query.is_some();
    let history = StoredValue::new(history);
    let group = move |day: Day| {
        let label = match day {
            Day::Today => t.today,
            Day::Yesterday => t.yesterday,
            Day::Earlier => t.earlier,
        };
        let in_day = move || {
            items.with(|items| {
                items
                    .iter()
                    .filter(|c| history.with_value(|h| h.day_of(c.updated_at)) == day)
                    .cloned()
                    .collect::<Vec<_>>()
            })
        };
        let any = move || !in_day().is_empty();
        view! {
            {shown(any, move || view! {
                <h2 class="history-day">{label}</h2>
                <ul class="history-list">
                    <For each=in_day key=|c| (c.id.clone(), c.title.clone()) let:conversation>
                        <HistoryItem
                            conversation=conversation.clone()
                            current
                            items
                            deleted
                            problem
                        />
                    </For>
                </ul>
            })}
        }
    };
    let undo = move |_| {
        let Some(conversation) = deleted.get_untracked() else {
            return;
        };
        spawn_local(async move {
            if let Ok(true) = delete_conversation(conversation.id.clone(), false).await {
                items.update(|items| {
                    items.push(conversation);
                    items.sort_by_key(|c| std::cmp::Reverse(c.updated_at));
                });
                deleted.set(None);
            }
        });
    };
    let empty = if searching {
        t.no_matches
    } else {
        t.no_conversations
    };
    view! {
        <nav class="history" id="history-panel" aria-label=t.history>
            <PanelHead title=t.history close/>
            <form class="new-chat-form" method="post" action="/new">
                <button class="new-chat" type="submit">{t.new_chat}</button>
            </form>
            <form class="history-search" method="get" action="/" role="search">
                <input
                    type="search"
                    name="q"
                    aria-label=t.search_history
                    placeholder=t.search_history
                    value=query
                />
            </form>
            {group(Day::Today)}
            {group(Day::Yesterday)}
            {group(Day::Earlier)}
            {shown(move || items.with(Vec::is_empty), move || view! {
                <p class="history-empty">{empty}</p>
            })}
            <p class="history-status" aria-live="polite">
                {move || problem.get()}
                {move || {
                    deleted
                        .get()
                        .map(|c| {
                            view! {
                                <span>{t.deleted_conversation.replace("{title}", &c.title)}</span>
                                " "
                                <button type="button" class="undo" on:click=undo>{t.undo}</button>
                            }
                        })
                }}
            </p>
            {user.map(|user| view! {
                // Plain forms: signing out works without JavaScript.
                <form class="account" method="post" action="/logout">
                    <p class="account-name">{t.signed_in_as.replace("{name}", &user)}</p>
                    <button type="submit" class="account-button">{t.sign_out}</button>
                    <button type="submit" class="account-button" name="everywhere" value="1">
                        {t.sign_out_everywhere}
                    </button>
                </form>
            })}
        </nav>
    }
    .erased()
}

#[component]
fn HistoryItem(
    conversation: ConversationSummary,
    /// The conversation the browser is in.
    current: RwSignal<Option<String>>,
    items: RwSignal<Vec<ConversationSummary>>,
    deleted: RwSignal<Option<ConversationSummary>>,
    problem: RwSignal<String>,
) -> impl IntoView {
    let t = use_texts();
    let editing = RwSignal::new(false);
    let draft = RwSignal::new(conversation.title.clone());
    let id = StoredValue::new(conversation.id.clone());
    let current = move || current.with(|c| c.as_deref() == Some(id.get_value().as_str()));
    let href = format!("/c/{}", conversation.id);
    let title = conversation.title.clone();
    let save = move || {
        let title = draft.get_untracked();
        let id = id.get_value();
        spawn_local(async move {
            match rename_conversation(id.clone(), title.clone()).await {
                Ok(true) => {
                    items.update(|items| {
                        if let Some(item) = items.iter_mut().find(|c| c.id == id) {
                            item.title = title;
                        }
                    });
                    editing.set(false);
                    problem.set(String::new());
                }
                Ok(false) => editing.set(false),
                Err(error) => problem.set(error.to_string()),
            }
        });
    };
    let remove = {
        let conversation = conversation.clone();
        move |_| {
            let conversation = conversation.clone();
            spawn_local(async move {
                if let Ok(true) = delete_conversation(conversation.id.clone(), true).await {
                    items.update(|items| items.retain(|c| c.id != conversation.id));
                    if current() {
                        // The open conversation is gone: start afresh.
                        let _ = window().location().set_href("/");
                    }
                    deleted.set(Some(conversation));
                }
            });
        }
    };
    view! {
        <li class="history-item" class:current=current>
            {shown_or(
                move || editing.get(),
                move || view! {
                <form
                    class="rename"
                    on:submit=move |event| {
                        event.prevent_default();
                        save();
                    }
                >
                    <input
                        type="text"
                        aria-label=t.title_label
                        prop:value=move || draft.get()
                        on:input=move |event| draft.set(event_target_value(&event))
                    />
                    <button type="submit">{t.save}</button>
                    <button type="button" on:click=move |_| editing.set(false)>{t.cancel}</button>
                </form>
                },
                move || {
                    let title = title.clone();
                    let href = href.clone();
                    view! {
                        <a
                            href=href
                            aria-current=move || current().then_some("page")
                        >
                            {title}
                        </a>
                        <button type="button" class="item-action" on:click=move |_| editing.set(true)>
                            {t.rename}
                        </button>
                        <button type="button" class="item-action" on:click=remove.clone()>
                            {t.delete}
                        </button>
                    }
                },
            )}
        </li>
    }
    .erased()
}

/// The current conversation's share and export controls.
#[component]
pub fn ConversationActions(summary: ConversationSummary) -> impl IntoView {
    let t = use_texts();
    let token = RwSignal::new(summary.share_token.clone());
    let id = StoredValue::new(summary.id.clone());
    let problem = RwSignal::new(String::new());
    let share = move |on: bool| {
        spawn_local(async move {
            match share_conversation(id.get_value(), on).await {
                Ok(now) => {
                    token.set(now);
                    problem.set(String::new());
                }
                Err(error) => problem.set(error.to_string()),
            }
        });
    };
    let link = move || {
        token.get().map(|token| {
            let origin = if cfg!(target_arch = "wasm32") {
                window().location().origin().unwrap_or_default()
            } else {
                String::new()
            };
            format!("{origin}/s/{token}")
        })
    };
    let export = format!("/c/{}/export.md", summary.id);
    let citations = |extension: &str| format!("/c/{}/citations.{extension}", summary.id);
    let (bib, ris, csl) = (citations("bib"), citations("ris"), citations("json"));
    view! {
        <div class="conversation-actions">
            <h2 class="conversation-title">{summary.title.clone()}</h2>
            <a class="export" href=export download="">{t.export}</a>
            // The sources the conversation cites, for a reference manager.
            <details class="export-citations">
                <summary>{t.export_citations}</summary>
                <a href=bib download="">"BibTeX"</a>
                <a href=ris download="">"RIS"</a>
                <a href=csl download="">"CSL-JSON"</a>
            </details>
            {shown_or(
                move || token.get().is_some(),
                move || view! {
                <input class="share-link" type="text" readonly aria-label=t.share_link prop:value=link/>
                <button type="button" class="share" on:click=move |_| share(false)>{t.unshare}</button>
                },
                move || {
                    view! {
                        <button type="button" class="share" on:click=move |_| share(true)>
                            {t.share}
                        </button>
                    }
                },
            )}
            <p class="actions-status" aria-live="polite">{move || problem.get()}</p>
        </div>
    }
    .erased()
}
