//! The conversation: each question with its answer, notices, citations and reference list.
//! The same views render on the server (the page reads fine without JavaScript) and update
//! live in the browser while an answer streams.

use std::sync::Arc;

use leptos::prelude::*;

use crate::citation::{lists, CitationEntry, Lookup, SourceMap};
use crate::components::answer::{AnswerBody, Checks, Patches};
use crate::components::citation_link::Evidence;
use crate::components::erase::{shown, Erase};
use crate::components::research::ResearchView;
use crate::components::use_texts;
use crate::model::blocks::Block;
use crate::model::{Alignment, Exchange, ExchangeState, Level, Notice, ResearchPlan, Step};

/// One exchange on the page, a signal per part: a rendering patch touches only the answer's
/// rendering, a search round only the sources, a branch only the plan.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct LiveExchange {
    /// Everything else: question, mode, id, state, flags, cited numbers, coverage, usage.
    /// The fields held by the signals below stay empty here.
    pub head: RwSignal<Exchange>,
    pub answer: RwSignal<String>,
    /// The answer as the server rendered it for this page (stored exchanges).
    pub rendered: StoredValue<Vec<Block>>,
    /// How the rendering changes while the answer streams.
    pub patches: Patches,
    pub reasoning: RwSignal<String>,
    pub sources: RwSignal<Vec<Arc<CitationEntry>>>,
    pub notices: RwSignal<Vec<Notice>>,
    pub steps: RwSignal<Vec<Step>>,
    pub plan: RwSignal<Option<ResearchPlan>>,
}

impl LiveExchange {
    pub fn new(mut exchange: Exchange) -> LiveExchange {
        LiveExchange {
            answer: RwSignal::new(std::mem::take(&mut exchange.answer)),
            rendered: StoredValue::new(std::mem::take(&mut exchange.rendered)),
            patches: Patches::new(),
            reasoning: RwSignal::new(std::mem::take(&mut exchange.reasoning)),
            sources: RwSignal::new(std::mem::take(&mut exchange.sources)),
            notices: RwSignal::new(std::mem::take(&mut exchange.notices)),
            steps: RwSignal::new(std::mem::take(&mut exchange.steps)),
            plan: RwSignal::new(exchange.research.take()),
            head: RwSignal::new(exchange),
        }
    }

    /// The whole exchange as it stands (for the copy button).
    pub fn snapshot(&self) -> Exchange {
        let mut exchange = self.head.get_untracked();
        exchange.answer = self.answer.get_untracked();
        exchange.reasoning = self.reasoning.get_untracked();
        exchange.sources = self.sources.get_untracked();
        exchange.notices = self.notices.get_untracked();
        exchange.steps = self.steps.get_untracked();
        exchange.research = self.plan.get_untracked();
        exchange
    }

    /// A tracked read of one field of the head.
    pub fn with<T>(&self, f: impl FnOnce(&Exchange) -> T) -> T {
        self.head.with(f)
    }
}

/// The conversation's live state, shared by the list, the composer and the status line.
#[derive(Clone, Copy)]
pub struct Chat {
    /// Each exchange under a key that never changes (ids arrive only once streaming starts).
    pub exchanges: RwSignal<Vec<(u64, LiveExchange)>>,
    pub answering: RwSignal<bool>,
    /// The status line (role `status`).
    pub status: RwSignal<String>,
    /// The status line shows progress (cleared when the answer ends), not a failure.
    pub progress: RwSignal<bool>,
    /// The status line without its seconds and tokens.
    pub status_base: StoredValue<String>,
    /// A question to ask again with search first ("搜索后重答"); the composer sends it.
    pub rerun: RwSignal<Option<String>>,
    /// A follow-up question clicked under an answer ("相关问题"); the composer sends it.
    pub follow_up: RwSignal<Option<String>>,
    next_key: StoredValue<u64>,
    /// The owner the exchanges' signals belong to: the conversation's, never that of the
    /// effect or handler that happened to push them (disposed with it).
    owner: StoredValue<Option<Owner>>,
    /// Exchanges of the conversation before the first shown, not loaded yet.
    pub earlier: RwSignal<u32>,
    /// Where the earlier exchanges come from (`None`: nowhere, a conversation not stored).
    earlier_of: StoredValue<Option<Earlier>>,
}

/// A stored conversation whose earlier exchanges a page can ask for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Earlier {
    /// One of the browser's own conversations, by id.
    Conversation(String),
    /// A shared conversation, by its token.
    Shared(String),
}

impl Chat {
    pub fn new(conversation: Vec<Exchange>) -> Chat {
        let exchanges: Vec<(u64, LiveExchange)> = conversation
            .into_iter()
            .enumerate()
            .map(|(idx, exchange)| (idx as u64, LiveExchange::new(exchange)))
            .collect();
        let next_key = StoredValue::new(exchanges.len() as u64);
        Chat {
            exchanges: RwSignal::new(exchanges),
            answering: RwSignal::new(false),
            status: RwSignal::new(String::new()),
            progress: RwSignal::new(false),
            status_base: StoredValue::new(String::new()),
            rerun: RwSignal::new(None),
            follow_up: RwSignal::new(None),
            next_key,
            owner: StoredValue::new(Owner::current()),
            earlier: RwSignal::new(0),
            earlier_of: StoredValue::new(None),
        }
    }

    /// The conversation had `earlier` exchanges before these, to be read from `of`.
    pub fn with_earlier(self, earlier: u32, of: Option<Earlier>) -> Chat {
        if of.is_some() {
            self.earlier.set(earlier);
        }
        self.earlier_of.set_value(of);
        self
    }

    /// Reads the page of exchanges before those shown and puts it first.
    pub async fn load_earlier(self) {
        let Some(of) = self.earlier_of.get_value() else {
            return;
        };
        let before = self.earlier.get_untracked();
        let (id, token) = match of {
            Earlier::Conversation(id) => (Some(id), None),
            Earlier::Shared(token) => (None, Some(token)),
        };
        let Ok(Some(page)) = crate::server_fns::get_earlier(id, token, before).await else {
            return;
        };
        // A second click while this page was read read the same page: it is put in once.
        if self.earlier.get_untracked() != before {
            return;
        }
        // Keys apart from every key `push` gives (which count up from 0), each used once.
        let first = u64::MAX / 2 + u64::from(page.earlier);
        let owner = self.owner.get_value();
        let read: Vec<(u64, LiveExchange)> = page
            .exchanges
            .into_iter()
            .enumerate()
            .map(|(n, exchange)| {
                let live = match &owner {
                    Some(owner) => owner.with(|| LiveExchange::new(exchange)),
                    None => LiveExchange::new(exchange),
                };
                (first + n as u64, live)
            })
            .collect();
        self.exchanges.update(|exchanges| {
            exchanges.splice(0..0, read);
        });
        self.earlier.set(page.earlier);
    }

    /// Adds an exchange and returns its signals.
    pub fn push(&self, exchange: Exchange) -> LiveExchange {
        let key = self.next_key.get_value();
        self.next_key.set_value(key + 1);
        let live = match self.owner.get_value() {
            Some(owner) => owner.with(|| LiveExchange::new(exchange)),
            None => LiveExchange::new(exchange),
        };
        self.exchanges
            .update(|exchanges| exchanges.push((key, live)));
        live
    }

    pub fn remove(&self, live: LiveExchange) {
        self.exchanges
            .update(|exchanges| exchanges.retain(|(_, l)| *l != live));
    }
}

/// A conversation as one Markdown document: its title, then each question, answer and
/// reference list (the export, `cited history export` and MCP's conversation resources).
pub fn conversation_markdown(title: &str, exchanges: &[Exchange]) -> String {
    let mut out = format!("# {title}\n");
    for exchange in exchanges {
        out.push_str("\n## ");
        out.push_str(exchange.question.trim());
        out.push_str("\n\n");
        out.push_str(answer_markdown(exchange).trim_end());
        out.push('\n');
    }
    out
}

/// The Markdown of an answer with its reference list and its markers linked to their
/// sources, for the copy button and the export.
pub fn answer_markdown(exchange: &Exchange) -> String {
    let sources = SourceMap::new(exchange.sources.iter().cloned());
    let list = match &exchange.research {
        Some(plan) => lists::research_markdown(&sources, &exchange.cited, |round| {
            plan.for_round(round).map(|sub| sub.question.clone())
        }),
        None if exchange.mode.has_search_switch() => {
            lists::chat_markdown(&sources, &exchange.cited)
        }
        None => lists::agent_markdown(&sources, &exchange.cited),
    };
    // Each marker a link to its source (seed 003), so a pasted answer keeps its citations.
    let answer = crate::citation::markers::linked(exchange.answer.trim_end(), |n| {
        sources.lookup(n).map(|entry| entry.url.as_str())
    });
    format!("{answer}{list}")
}

/// What the empty page knows of where answers come from (none on pages that do not say).
#[derive(Clone, Copy)]
pub struct FirstRun(pub Option<crate::model::Setup>);

#[component]
pub fn Conversation(chat: Chat) -> impl IntoView {
    let t = use_texts();
    let setup = use_context::<FirstRun>().and_then(|first| first.0);
    // Neither the web nor a model: one short card says what answers come from and how to
    // turn both on. Example questions the knowledge base answers, unless both are there.
    let offline = setup.is_some_and(|s| !s.model && !s.web);
    let examples = setup.is_some_and(|s| !(s.model && s.web) && s.knowledge);
    view! {
        <section class="conversation" aria-label=t.conversation>
            {shown(move || chat.exchanges.with(Vec::is_empty), move || view! {
                <div class="empty">
                    <p class="empty-mark" aria-hidden="true">"[1]"</p>
                    <p>{t.empty_conversation}</p>
                    {offline.then(|| view! {
                        <section class="first-run" aria-labelledby="first-run-title">
                            <h2 id="first-run-title" class="first-run-title">{t.first_run_title}</h2>
                            <p>{t.first_run_body}</p>
                            <p class="first-run-fix">{t.first_run_fix}</p>
                        </section>
                    })}
                    {examples.then(|| view! {
                        <ul class="examples" aria-label=t.examples_label>
                            {t.examples.iter().map(|question| view! {
                                <li>
                                    <button
                                        type="button"
                                        class="example"
                                        on:click=move |_| chat.follow_up.set(Some(question.to_string()))
                                    >
                                        {*question}
                                    </button>
                                </li>
                            }).collect_view()}
                        </ul>
                    })}
                </div>
            })}
            {move || (chat.earlier.get() > 0).then(|| view! {
                <button
                    type="button"
                    class="earlier"
                    on:click=move |_| { leptos::task::spawn_local(chat.load_earlier()); }
                >
                    {t.earlier_questions.replace("{n}", &chat.earlier.get().to_string())}
                </button>
            })}
            <For each=move || chat.exchanges.get() key=|(key, _)| *key let:item>
                <ExchangeView key=item.0 exchange=item.1 chat/>
            </For>
        </section>
    }
}

/// "图片": up to six pictures from the images search above the answer, each linked to its
/// page. Thumbnails come from cited's own origin (`/media/image?…`), never from a third
/// party; anything else is not shown.
#[component]
fn ImageStrip(images: Signal<Vec<crate::model::Image>>) -> impl IntoView {
    let t = use_texts();
    let picture = move |(index, image): (usize, crate::model::Image)| {
        let href = crate::citation::urls::is_web_link(&image.page).then(|| image.page.clone());
        let src = image
            .thumbnail
            .starts_with("/media/image?")
            .then(|| image.thumbnail.clone());
        let title = if image.title.trim().is_empty() {
            image.domain.clone()
        } else {
            image.title.clone()
        };
        let label = format!("{} {}：{title}", t.image, index + 1);
        view! {
            <li>
                <a href=href target="_blank" rel="noopener noreferrer nofollow" aria-label=label title=title>
                    <img src=src alt="" loading="lazy" decoding="async"/>
                    <span class="image-domain" aria-hidden="true">{image.domain.clone()}</span>
                </a>
            </li>
        }
    };
    view! {
        <ul class="image-strip" aria-label=t.images>
            {move || images.get().into_iter().enumerate().map(picture).collect_view()}
        </ul>
    }
}

/// "相关问题": the answer's follow-ups, each a button that asks it in this conversation.
#[component]
fn RelatedQuestions(questions: Signal<Vec<String>>, chat: Chat) -> impl IntoView {
    let t = use_texts();
    view! {
        <nav class="related" aria-label=t.related_questions>
            <h3 class="related-heading">{t.related_questions}</h3>
            <ul aria-label=t.related_questions>
                <For each=move || questions.get() key=|question| question.clone() let:question>
                    <li>
                        <button
                            type="button"
                            class="related-question"
                            on:click={
                                let question = question.clone();
                                move |_| chat.follow_up.set(Some(question.clone()))
                            }
                        >
                            {question.clone()}
                        </button>
                    </li>
                </For>
            </ul>
        </nav>
    }
}

#[component]
fn ExchangeView(key: u64, exchange: LiveExchange, chat: Chat) -> impl IntoView {
    let t = use_texts();
    let live = exchange;
    let done = Memo::new(move |_| live.with(|e| e.done));
    let footer = move || {
        live.with(|e| {
            let support = crate::model::SupportShare::of(&e.alignments);
            // No model wrote an offline answer: no tokens to count.
            let usage = e.usage.as_ref().filter(|_| !e.offline);
            crate::i18n::answer_footer(e.coverage.as_ref(), Some(&support), usage, t)
        })
    };
    let has_sources = Memo::new(move |_| live.sources.with(|s| !s.is_empty()));
    let uncited = move || done.get() && live.with(|e| e.cited.is_empty()) && has_sources.get();
    let rerun = move |_| {
        chat.rerun
            .set(Some(live.head.with_untracked(|e| e.question.clone())));
    };
    // What the answer cites, then what only cited's additions cite.
    let cited = move || {
        live.with(|e| {
            live.sources.with(|sources| {
                let map = SourceMap::new(sources.iter().cloned());
                let mut numbers = e.cited.clone();
                numbers.extend(crate::model::added_numbers(&e.cited, &e.claims));
                lists::cited_entries(&map, &numbers)
            })
        })
    };
    let copied = RwSignal::new(false);
    let copy = move |_| {
        let markdown = answer_markdown(&live.snapshot());
        let clipboard = window().navigator().clipboard();
        let _ = clipboard.write_text(&markdown);
        copied.set(true);
        set_timeout(
            move || copied.set(false),
            std::time::Duration::from_millis(2000),
        );
    };
    view! {
        <article class="exchange">
            <div class="question">
                <span class="visually-hidden">{t.you}": "</span>
                <p>{move || live.with(|e| e.question.clone())}</p>
            </div>
            <div class="answer" aria-busy=move || (!done.get()).to_string()>
                {shown(move || live.with(|e| e.offline), move || view! {
                    <p class="offline-label">{t.offline_label}</p>
                })}
                {shown(move || live.with(|e| e.state == ExchangeState::Interrupted), move || view! {
                    <p class="notice warning interrupted">{t.interrupted}</p>
                })}
                <For
                    each=move || live.notices.get().into_iter().enumerate()
                    key=|(idx, _)| *idx
                    let:item
                >
                    <p class="notice" class:warning=item.1.level == Level::Warning class:error=item.1.level == Level::Error>
                        {item.1.text.clone()}
                    </p>
                </For>
                {shown(move || live.steps.with(|steps| !steps.is_empty()), move || view! {
                    <Trace steps=live.steps done/>
                })}
                {shown(move || live.reasoning.with(|r| !r.is_empty()), move || view! {
                    <details class="reasoning">
                        <summary>{t.reasoning}</summary>
                        <p class="reasoning-text">{move || live.reasoning.get()}</p>
                    </details>
                })}
                {shown(move || live.with(|e| !e.images.is_empty()), move || view! {
                    <ImageStrip images=Signal::derive(move || live.with(|e| e.images.clone()))/>
                })}
                <div class="answer-body">
                    <AnswerBody
                        answer_key=key
                        blocks=live.rendered.get_value()
                        sources=live.sources
                        patches=live.patches
                        checks=Checks {
                            citations: Signal::derive(move || live.with(|e| e.alignments.clone())),
                            claims: Signal::derive(move || live.with(|e| e.claims.clone())),
                        }
                    />
                </div>
                // Under the 结论 and its explanation: the plan, branches and evidence chain
                // (open while the research runs, folded once it is done).
                {shown(move || live.plan.with(Option::is_some), move || view! {
                    <ResearchView exchange_key=key plan=live.plan sources=live.sources done/>
                })}
                {shown(move || live.with(|e| e.stopped), move || view! {
                    <p class="stopped">{t.stopped}</p>
                })}
                {shown(move || done.get() && live.with(|e| !e.cited.is_empty() || e.claims.iter().any(|c| c.added.is_some())), move || view! {
                    <References
                        entries=Signal::derive(cited)
                        agent=live.head.with_untracked(|e| !e.mode.has_search_switch())
                        plan=live.plan
                        checks=Signal::derive(move || live.with(|e| crate::model::all_checks(&e.alignments, &e.claims)))
                        added=Signal::derive(move || live.with(|e| crate::model::added_numbers(&e.cited, &e.claims)))
                        answer=live.head.with_untracked(|e| e.id)
                    />
                })}
                {shown(move || done.get() && has_sources.get(), move || view! {
                    <AllResults entries=live.sources open=uncited()/>
                })}
                {shown(move || has_sources.get() && !live.with(|e| e.narrowing.is_none()), move || view! {
                    <p class="narrowing">
                        {move || live.with(|e| crate::i18n::narrowing_line(&e.narrowing, t))}
                    </p>
                })}
                {shown(move || done.get() && live.with(|e| e.unsearched), move || view! {
                    <div class="unsearched">
                        <p class="notice warning">{t.unsearched_note}</p>
                        <button type="button" class="rerun" on:click=rerun>{t.search_and_answer_again}</button>
                    </div>
                })}
                {shown(move || done.get() && !footer().is_empty(), move || view! {
                    <p class="answer-meta">{footer}</p>
                })}
                {shown(move || done.get() && live.with(|e| !e.related.is_empty()), move || view! {
                    <RelatedQuestions
                        questions=Signal::derive(move || live.with(|e| e.related.clone()))
                        chat
                    />
                })}
                {shown(move || done.get() && live.answer.with(|a| !a.is_empty()), move || view! {
                    <div class="answer-tools">
                        <button type="button" class="link-button" on:click=copy>
                            {move || if copied.get() { t.copied } else { t.copy }}
                        </button>
                    </div>
                })}
            </div>
        </article>
    }
}

/// The Agent's live trace: each search with its numbers, cache hits, the model's
/// intermediate text. Open while the answer is written.
#[component]
fn Trace(steps: RwSignal<Vec<Step>>, #[prop(into)] done: Signal<bool>) -> impl IntoView {
    let t = use_texts();
    let line = move |step: &Step| {
        let class = match step {
            Step::Search { .. } => "step search",
            Step::Capped { .. } => "step capped",
            Step::Thought { .. } => "step thought",
        };
        view! { <li class=class>{crate::i18n::step_line(step, t)}</li> }
    };
    view! {
        <details class="trace" open=move || !done.get()>
            <summary>{t.steps}" ("{move || steps.with(Vec::len)}")"</summary>
            <ol>{move || steps.with(|steps| steps.iter().map(line).collect_view())}</ol>
        </details>
    }
}

/// The id of the conversation the page opened (`/c/<id>`), when there is one: its answers
/// link their own citation exports.
#[derive(Debug, Clone)]
pub struct OpenConversation(pub Option<String>);

/// Only what the answer cites, in number order (seed 000: collapsible). Agent and Research
/// answers group them by search round under the round's query.
#[component]
fn References(
    #[prop(into)] entries: Signal<Vec<Arc<CitationEntry>>>,
    agent: bool,
    /// Research groups are labelled with their sub-question.
    #[prop(into)]
    plan: Signal<Option<ResearchPlan>>,
    /// The answer's citations checked against their sources: each source shows its best.
    #[prop(into)]
    checks: Signal<Vec<Alignment>>,
    /// Sources only cited's additions cite: marked as such.
    #[prop(into)]
    added: Signal<Vec<u32>>,
    /// The answer's id, for its citation exports.
    answer: u64,
) -> impl IntoView {
    let best =
        move |number: u32| checks.with(|checks| crate::model::best_check(checks, number).cloned());
    let t = use_texts();
    let heading = if agent {
        t.references_agent
    } else {
        t.references
    };
    // A numbered list of sources, each with its best check.
    let list = move |entries: Vec<Arc<CitationEntry>>| {
        let items = entries
            .into_iter()
            .map(|entry| {
                let check = best(entry.number);
                let added = added.with(|added| added.contains(&entry.number));
                view! { <SourceItem entry check added/> }
            })
            .collect_view();
        view! { <ol>{items}</ol> }
    };
    let body = move || {
        let entries = entries.get();
        if !agent {
            return list(entries).erased();
        }
        let map = SourceMap::new(entries.iter().cloned());
        let numbers: Vec<u32> = entries.iter().map(|e| e.number).collect();
        lists::grouped_by_round(&map, &numbers)
            .into_iter()
            .map(|group| {
                let heading = t.round_heading.replace("{n}", &group.round.to_string());
                let sub_question = plan.with(|plan| {
                    plan.as_ref()
                        .and_then(|plan| plan.for_round(group.round))
                        .map(|sub| sub.question.clone())
                });
                let title = match sub_question {
                    Some(question) => format!("{heading} ({}: {question})", t.sub_question_label),
                    None => format!("{heading} ({}: {})", t.query_label, group.query),
                };
                view! {
                    <p class="round-heading">{title}</p>
                    {list(group.entries)}
                }
            })
            .collect_view()
            .erased()
    };
    // This answer's sources for a reference manager, where the conversation is known.
    let exports = use_context::<OpenConversation>()
        .and_then(|open| open.0)
        .map(|id| {
            let href =
                move |extension: &str| format!("/c/{id}/citations.{extension}?answer={answer}");
            view! {
                <details class="export-citations">
                    <summary>{t.export_citations}</summary>
                    <a href=href("bib") download="">"BibTeX"</a>
                    <a href=href("ris") download="">"RIS"</a>
                    <a href=href("json") download="">"CSL-JSON"</a>
                </details>
            }
        });
    view! {
        <section class="references" aria-label=heading>
            <details open>
                <summary>
                    {agent.then(|| view! { <crate::components::icons::BooksIcon/> })}
                    {heading}" ("{move || entries.with(Vec::len)}")"
                </summary>
                {body}
                {exports}
            </details>
        </section>
    }
}

/// Everything retrieved, cited or not, collapsed.
#[component]
fn AllResults(
    #[prop(into)] entries: Signal<Vec<Arc<CitationEntry>>>,
    /// Open from the start (the answer cites none of them).
    open: bool,
) -> impl IntoView {
    let t = use_texts();
    view! {
        <details class="all-results" open=open>
            <summary>{t.all_results}" ("{move || entries.with(Vec::len)}")"</summary>
            <ol>
                {move || entries.get().into_iter().map(|entry| view! { <SourceItem entry check=None/> }).collect_view()}
            </ol>
        </details>
    }
}

/// A snippet as a source list shows it: at most [`SNIPPET_CHARS`] characters.
fn short_snippet(snippet: &str) -> String {
    let snippet = snippet.trim();
    match snippet.char_indices().nth(SNIPPET_CHARS) {
        Some((at, _)) => format!("{}…", &snippet[..at]),
        None => snippet.to_string(),
    }
}

/// The longest snippet a source list shows (seed 003's 200).
const SNIPPET_CHARS: usize = 200;

#[component]
fn SourceItem(
    entry: Arc<CitationEntry>,
    /// In the reference list: the best check of the answer's citations of this source.
    check: Option<Alignment>,
    /// Only cited's additions cite it.
    #[prop(optional)]
    added: bool,
) -> impl IntoView {
    let t = use_texts();
    let knowledge = entry.kind == crate::model::SourceKind::Knowledge;
    let href = crate::citation::urls::is_safe_link(&entry.url).then(|| entry.url.clone());
    let title = if entry.title.trim().is_empty() {
        entry.url.clone()
    } else {
        entry.title.clone()
    };
    view! {
        <li value=entry.number.to_string()>
            <a href=href target="_blank" rel="noopener noreferrer nofollow">{title}</a>
            " "
            <span class="source-domain">
                {crate::citation::urls::icon_path(&entry.url).map(|src| view! {
                    <img class="favicon" src=src alt="" width="16" height="16" loading="lazy" decoding="async"/>
                })}
                {entry.domain.clone()}
            </span>
            {knowledge.then(|| view! { " " <span class="cite-kind">{crate::i18n::local_kind(&entry.url, t)}</span> })}
            {added.then(|| view! { " " <span class="cite-added">{t.added_by_cited}</span> })}
            // Seed 003: title, URL and a short snippet; a checked source shows its passage.
            {(check.is_none() && !entry.snippet.trim().is_empty()).then(|| view! {
                <span class="source-snippet">{short_snippet(&entry.snippet)}</span>
            })}
            {check.map(|check| view! {
                <span class="source-check">
                    <Evidence check url=entry.url.clone() local=!crate::citation::urls::is_web_link(&entry.url)/>
                </span>
            })}
        </li>
    }
}
