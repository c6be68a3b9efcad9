//! The question box: Enter sends, Shift+Enter adds a line (and Enter while an input method
//! is composing Chinese is left alone), the send button is disabled while an answer is
//! written, the stop button cancels it on the server. A refused question stays in the box.

use futures_util::StreamExt;
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::components::conversation::{Chat, LiveExchange};
use crate::components::erase::{shown, shown_or};
use crate::components::history::LiveHistory;
use crate::components::icons::PaperclipIcon;
use crate::components::use_texts;
use crate::i18n::{progress_line, status_line, Texts};
use crate::model::ExchangeState;
use crate::model::{AnswerEvent, Exchange, Level, LineDecoder, Notice, Settings, Status};
use crate::server_fns::{ask, follow_answer, get_conversation, stop_answer};

#[component]
pub fn Composer(chat: Chat, settings: RwSignal<Settings>) -> impl IntoView {
    let t = use_texts();
    let history = use_context::<LiveHistory>();
    let draft = RwSignal::new(String::new());

    // Sends a question; `force_search`: "搜索后重答"; `from_box`: the question is what the
    // box holds (else, a re-run or a follow-up clicked, the box keeps what is typed there).
    let send_question = move |question: String, force_search: bool, from_box: bool| {
        if from_box {
            draft.set(String::new());
        }
        chat.answering.set(true);
        chat.progress.set(false);
        chat.status.set(String::new());
        let is_command = question.trim_start().starts_with('/');
        let exchange = (!is_command).then(|| {
            chat.push(Exchange {
                question: question.trim().to_string(),
                mode: settings.get_untracked().mode,
                ..Exchange::default()
            })
        });
        spawn_local(ask_and_show(
            Asked {
                chat,
                settings,
                history,
                t,
            },
            question,
            force_search,
            exchange,
            from_box.then_some(draft),
        ));
    };

    // A page opened while this browser's answer is still being written (a refresh, a
    // second tab, another instance behind the load balancer) catches up with it from its
    // first event and follows it to the end.
    Effect::new(move |_| {
        spawn_local(follow_running(Asked {
            chat,
            settings,
            history,
            t,
        }));
    });

    let send = move || {
        if chat.answering.get_untracked() {
            return;
        }
        let question = draft.get_untracked();
        if question.trim().is_empty() {
            chat.status.set(t.empty_question.to_string());
            return;
        }
        send_question(question, false, true);
    };

    // "搜索后重答" under an answer asks its question again, searching first, as soon as no
    // answer is being written (the click may land before the last one's stream closed).
    Effect::new(move |_| {
        let pending = chat.rerun.get();
        if let (Some(question), false) = (pending, chat.answering.get()) {
            chat.rerun.set(None);
            send_question(question, true, false);
        }
    });

    // A follow-up question clicked under an answer ("相关问题") is asked as soon as no
    // answer is being written.
    Effect::new(move |_| {
        let pending = chat.follow_up.get();
        if let (Some(question), false) = (pending, chat.answering.get()) {
            chat.follow_up.set(None);
            send_question(question, false, false);
        }
    });

    let stop = move |_| {
        spawn_local(async move {
            let _ = stop_answer().await;
        });
    };

    // Files attached to the conversation: the paperclip, or dropped on the composer.
    // (id, name) of each, oldest first.
    let attached = RwSignal::new(Vec::<(String, String)>::new());
    let picker = NodeRef::<leptos::html::Input>::new();
    Effect::new(move |_| {
        spawn_local(async move {
            if let Some(items) = post_json("/api/files/list", None)
                .await
                .ok()
                .and_then(|v| items_of(&v))
            {
                attached.set(items);
            }
        });
    });
    let add_files = move |list: Option<web_sys::FileList>| {
        let Some(list) = list else { return };
        let files: Vec<web_sys::File> = (0..list.length()).filter_map(|i| list.get(i)).collect();
        spawn_local(upload(files, attached, chat, t));
    };

    // Takes a file out of the conversation; the list and the status line say so.
    let remove_file = move |id: String| spawn_local(remove(id, attached, chat, t));

    let on_keydown = move |event: ev::KeyboardEvent| {
        // 229: the key event of an input method that is still composing.
        if event.key() == "Enter"
            && !event.shift_key()
            && !event.is_composing()
            && event.key_code() != 229
        {
            event.prevent_default();
            send();
        }
    };

    view! {
        <form
            class="composer"
            on:submit=move |event: ev::SubmitEvent| {
                event.prevent_default();
                send();
            }
            on:dragover=move |event: ev::DragEvent| event.prevent_default()
            on:drop=move |event: ev::DragEvent| {
                event.prevent_default();
                add_files(event.data_transfer().and_then(|data| data.files()));
            }
        >
            <p class="status" role="status">{move || chat.status.get()}</p>
            {shown(move || attached.with(|names| !names.is_empty()), move || view! {
                <ul class="attached" aria-label=t.files_label>
                    {move || attached.get().into_iter().map(|(id, name)| {
                        let label = t.remove_file.replace("{name}", &name);
                        view! {
                            <li>
                                <span class="attached-name">{name}</span>
                                <button
                                    type="button"
                                    class="remove-file"
                                    aria-label=label.clone()
                                    title=label
                                    on:click=move |_| remove_file(id.clone())
                                >
                                    "×"
                                </button>
                            </li>
                        }
                    }).collect_view()}
                </ul>
            })}
            <div class="composer-row">
                <input
                    type="file"
                    class="visually-hidden"
                    multiple
                    accept=".pdf,.md,.markdown,.txt,.html,.htm,.docx"
                    tabindex="-1"
                    aria-hidden="true"
                    node_ref=picker
                    on:change=move |event| {
                        use wasm_bindgen::JsCast;
                        let input = event
                            .target()
                            .and_then(|target| target.dyn_into::<web_sys::HtmlInputElement>().ok());
                        if let Some(input) = input {
                            add_files(input.files());
                            input.set_value("");
                        }
                    }
                />
                <button
                    type="button"
                    class="attach"
                    aria-label=t.add_files
                    title=t.add_files
                    on:click=move |_| {
                        if let Some(input) = picker.get() {
                            input.click();
                        }
                    }
                >
                    <PaperclipIcon/>
                </button>
                <textarea
                    class="question-box"
                    name="question"
                    rows="1"
                    aria-label=t.ask
                    placeholder=t.ask_placeholder
                    prop:value=move || draft.get()
                    on:input=move |event| draft.set(event_target_value(&event))
                    on:keydown=on_keydown
                ></textarea>
                {shown_or(
                    move || chat.answering.get(),
                    move || view! { <button class="stop" type="button" on:click=stop>{t.stop}</button> },
                    move || view! { <button class="send" type="submit">{t.send}</button> },
                )}
            </div>
            <noscript>
                <p class="noscript">{t.no_script}</p>
            </noscript>
        </form>
    }
}

/// What the page's answer streams write into.
#[derive(Clone, Copy)]
struct Asked {
    chat: Chat,
    settings: RwSignal<Settings>,
    history: Option<LiveHistory>,
    t: &'static Texts,
}

/// Asks `question` and shows its answer as it streams into `exchange` (none for a
/// `/command`). Refused (empty, too long, busy) or unreachable: the page says why and loses
/// nothing, the question going back into the box it came from (`draft`).
async fn ask_and_show(
    asked: Asked,
    question: String,
    force_search: bool,
    exchange: Option<LiveExchange>,
    draft: Option<RwSignal<String>>,
) {
    let Asked {
        chat,
        settings,
        history,
        t,
    } = asked;
    match ask(question.clone(), force_search.then_some(true)).await {
        Err(error) => {
            if let Some(exchange) = exchange {
                chat.remove(exchange);
            }
            if let Some(draft) = draft {
                draft.set(question);
            }
            chat.status.set(error.to_string());
        }
        Ok(stream) => {
            let mut decoder = LineDecoder::default();
            let mut stream = stream.into_inner();
            while let Some(chunk) = stream.next().await {
                match chunk {
                    Ok(bytes) => {
                        for event in decoder.push(&bytes) {
                            apply(chat, settings, history, exchange, event, t);
                        }
                    }
                    Err(error) => {
                        chat.progress.set(false);
                        chat.status.set(error.to_string());
                        break;
                    }
                }
            }
            if let Some(exchange) = exchange {
                exchange.head.update(|e| e.done = true);
            }
        }
    }
    chat.answering.set(false);
}

/// A page opened while this browser's answer is still being written (a refresh, a second
/// tab, another instance behind the load balancer) catches up with it from its first event
/// and follows it to the end; an answer that ended meanwhile is shown as it ended.
async fn follow_running(asked: Asked) {
    let Asked {
        chat,
        settings,
        history,
        t,
    } = asked;
    let Ok(stream) = follow_answer(Some(0), Some(true)).await else {
        return;
    };
    let mut decoder = LineDecoder::default();
    let mut stream = stream.into_inner();
    let mut exchange = None;
    'events: while let Some(Ok(bytes)) = stream.next().await {
        for event in decoder.push(&bytes) {
            // An answer kept in another conversation than the one on this page (a new chat
            // was started, or another one opened, while it was written) is not this page's
            // to show.
            if let (AnswerEvent::Conversation { id, .. }, Some(history)) = (&event, history) {
                if history.current_id().as_deref() != Some(id.as_str()) {
                    if let Some(followed) = exchange.take() {
                        chat.remove(followed);
                        chat.answering.set(false);
                        chat.progress.set(false);
                        chat.status.set(String::new());
                    }
                    break 'events;
                }
            }
            if let AnswerEvent::Started { question, .. } = &event {
                if chat.answering.get_untracked() {
                    // A question sent from this page meanwhile has its own stream.
                    break 'events;
                }
                // The browser's latest answer: it replaces the stored copy of its question
                // shown last (being answered, or just saved).
                let shown = chat.exchanges.with_untracked(|exchanges| {
                    exchanges
                        .last()
                        .map(|(_, live)| *live)
                        .filter(|live| live.head.with_untracked(|e| e.question == *question))
                });
                if let Some(shown) = shown {
                    chat.remove(shown);
                }
                exchange = Some(chat.push(Exchange {
                    question: question.clone(),
                    mode: settings.get_untracked().mode,
                    ..Exchange::default()
                }));
                chat.answering.set(true);
            }
            apply(chat, settings, history, exchange, event, t);
        }
    }
    match exchange {
        Some(exchange) => {
            exchange.head.update(|e| e.done = true);
            chat.answering.set(false);
        }
        None => {
            // Nothing to follow, yet the page shows a question still being answered: it
            // ended meanwhile; show how it ended.
            let unfinished = chat.exchanges.with_untracked(|exchanges| {
                exchanges.iter().any(|(_, live)| {
                    live.head
                        .with_untracked(|e| e.state == ExchangeState::Answering)
                })
            });
            if unfinished && !chat.answering.get_untracked() {
                if let Ok(exchanges) = get_conversation().await {
                    chat.exchanges.set(Vec::new());
                    for exchange in exchanges {
                        chat.push(exchange);
                    }
                }
            }
        }
    }
}

/// Adds each file to the conversation, one after another; the list and the status line
/// say how each went.
async fn upload(
    files: Vec<web_sys::File>,
    attached: RwSignal<Vec<(String, String)>>,
    chat: Chat,
    t: &'static Texts,
) {
    for file in files {
        let url = format!(
            "/api/files?name={}",
            String::from(js_sys::encode_uri_component(&file.name()))
        );
        let message = match post_json(&url, Some(&file)).await {
            Ok(reply) => {
                if let Some(items) = items_of(&reply) {
                    attached.set(items);
                }
                text_at(&reply, "message")
                    .or_else(|| text_at(&reply, "error"))
                    .unwrap_or_default()
            }
            Err(()) => t.file_unreadable.replace("{reason}", &file.name()),
        };
        chat.status.set(message);
    }
}

/// Takes a file out of the conversation; the list and the status line say so.
async fn remove(
    id: String,
    attached: RwSignal<Vec<(String, String)>>,
    chat: Chat,
    t: &'static Texts,
) {
    let url = format!(
        "/api/files/remove?id={}",
        String::from(js_sys::encode_uri_component(&id))
    );
    match post_json(&url, None).await {
        Ok(reply) => {
            if let Some(items) = items_of(&reply) {
                attached.set(items);
            }
            let message = text_at(&reply, "message")
                .or_else(|| text_at(&reply, "error"))
                .unwrap_or_default();
            chat.status.set(message);
        }
        Err(()) => chat.status.set(t.file_not_found.to_string()),
    }
}

/// One event of the stream into the page. Each part of the exchange has its own signal, so
/// a rendering patch re-renders the answer's last block and nothing else.
fn apply(
    chat: Chat,
    settings: RwSignal<Settings>,
    history: Option<LiveHistory>,
    exchange: Option<LiveExchange>,
    event: AnswerEvent,
    t: &'static Texts,
) {
    to_page(chat, settings, history, &event, t);
    if let Some(live) = exchange {
        to_exchange(live, event);
    }
}

/// What an event changes outside the exchange: the status line, the search switch, the
/// history.
fn to_page(
    chat: Chat,
    settings: RwSignal<Settings>,
    history: Option<LiveHistory>,
    event: &AnswerEvent,
    t: &'static Texts,
) {
    match event {
        AnswerEvent::Status { status } => {
            chat.progress
                .set(status.as_ref().is_some_and(Status::is_progress));
            let line = status
                .as_ref()
                .map(|s| status_line(s, t))
                .unwrap_or_default();
            chat.status_base.set_value(line.clone());
            chat.status.set(line);
        }
        AnswerEvent::Progress { secs, tokens } => {
            let base = chat.status_base.get_value();
            if chat.progress.get_untracked() && !base.is_empty() {
                chat.status
                    .set(format!("{base} · {}", progress_line(*secs, *tokens, t)));
            }
        }
        AnswerEvent::Done { .. } if chat.progress.get_untracked() => {
            // Progress messages end with the answer; failures stay until the next question.
            chat.progress.set(false);
            chat.status.set(String::new());
        }
        AnswerEvent::Failed { message } => {
            chat.progress.set(false);
            chat.status.set(message.clone());
        }
        AnswerEvent::Command {
            text,
            reset,
            search,
        } => {
            if *reset {
                chat.exchanges.set(Vec::new());
            }
            if let Some(enabled) = *search {
                settings.update(|settings| settings.search_enabled = enabled);
            }
            chat.progress.set(false);
            chat.status.set(text.clone());
        }
        AnswerEvent::Conversation { id, title, at } => {
            if let Some(history) = history {
                history.asked_in(id, title, *at);
            }
        }
        AnswerEvent::Titled { id, title } => {
            if let Some(history) = history {
                history.titled(id, title);
            }
        }
        _ => {}
    }
}

/// What an event changes in the exchange being written, each part its own signal.
fn to_exchange(live: LiveExchange, event: AnswerEvent) {
    match event {
        AnswerEvent::Started {
            id,
            offline,
            narrowing,
            ..
        } => live.head.update(|e| {
            e.id = id;
            e.offline = offline;
            e.narrowing = narrowing;
        }),
        AnswerEvent::Reasoning { text } => live.reasoning.update(|r| r.push_str(&text)),
        AnswerEvent::Notice { notice } => live.notices.update(|n| n.push(notice)),
        AnswerEvent::Sources { sources } => live.sources.set(sources),
        AnswerEvent::Token { text } => live.answer.update(|a| a.push_str(&text)),
        AnswerEvent::Rewrite { answer } => live.answer.set(answer),
        AnswerEvent::Rendered { patch } => live.patches.push(patch),
        AnswerEvent::Step { id, step } => {
            live.steps.update(|steps| match steps.get_mut(id as usize) {
                Some(known) => *known = step,
                None => steps.push(step),
            })
        }
        AnswerEvent::Plan { plan } => live.plan.set(Some(plan)),
        AnswerEvent::Aligned {
            alignments,
            claims,
            coverage,
            usage,
        } => live.head.update(|e| {
            e.alignments = alignments;
            e.claims = claims;
            if coverage.is_some() {
                e.coverage = coverage;
            }
            if usage.is_some() {
                e.usage = usage;
            }
        }),
        AnswerEvent::Images { images } => live.head.update(|e| e.images = images),
        AnswerEvent::Related { questions } => live.head.update(|e| e.related = questions),
        AnswerEvent::Done {
            cited,
            stopped,
            coverage,
            usage,
            unsearched,
        } => live.head.update(|e| {
            e.cited = cited;
            e.stopped = stopped;
            e.coverage = coverage;
            e.usage = usage;
            e.unsearched = unsearched;
            e.done = true;
        }),
        AnswerEvent::Failed { message } => live.notices.update(|n| {
            n.push(Notice {
                level: Level::Error,
                text: message,
            })
        }),
        AnswerEvent::Status { .. }
        | AnswerEvent::Progress { .. }
        | AnswerEvent::Command { .. }
        | AnswerEvent::Conversation { .. }
        | AnswerEvent::Titled { .. } => {}
    }
}

/// POSTs `body` (or nothing) to `url` on cited's own origin; the JSON reply, whatever its
/// status (refusals carry `error`).
async fn post_json(url: &str, body: Option<&web_sys::File>) -> Result<wasm_bindgen::JsValue, ()> {
    use wasm_bindgen::JsCast;
    let window = web_sys::window().ok_or(())?;
    let init = web_sys::RequestInit::new();
    init.set_method("POST");
    if let Some(body) = body {
        init.set_body(body);
    }
    let response = wasm_bindgen_futures::JsFuture::from(window.fetch_with_str_and_init(url, &init))
        .await
        .map_err(|_| ())?
        .dyn_into::<web_sys::Response>()
        .map_err(|_| ())?;
    let json = response.json().map_err(|_| ())?;
    wasm_bindgen_futures::JsFuture::from(json)
        .await
        .map_err(|_| ())
}

/// A string field of a JSON reply.
fn text_at(value: &wasm_bindgen::JsValue, field: &str) -> Option<String> {
    js_sys::Reflect::get(value, &field.into()).ok()?.as_string()
}

/// The files of a reply, `(id, name)` each.
fn items_of(value: &wasm_bindgen::JsValue) -> Option<Vec<(String, String)>> {
    let items = js_sys::Reflect::get(value, &"items".into()).ok()?;
    let items: &js_sys::Array = wasm_bindgen::JsCast::dyn_ref(&items)?;
    Some(
        items
            .iter()
            .filter_map(|item| Some((text_at(&item, "id")?, text_at(&item, "name")?)))
            .collect(),
    )
}
