use leptos::prelude::*;
use server_fn::codec::{ByteStream, Streaming};

use crate::error::AppError;

/// Asks a question in the session's current mode. The answer streams back as
/// newline-delimited JSON `AnswerEvent`s (`model::LineDecoder` reads them). `/reset` and
/// unknown `/commands` are answered here without a model. `force_search`: search before
/// answering whatever the mode would do ("搜索后重答" under an Agent answer).
#[server(prefix = "/api", endpoint = "ask", output = Streaming)]
pub async fn ask(
    question: String,
    force_search: Option<bool>,
) -> Result<ByteStream<AppError>, AppError> {
    use crate::ssr::answer::{self, Asker, Delivery, Question};
    use crate::ssr::pipeline::TurnInput;
    use crate::ssr::request::reject;

    let state = crate::ssr::request::state()?;
    let session = crate::ssr::request::session_or_mint().await?;
    let lang = crate::ssr::request::request_lang();
    let t = lang.texts();
    let question = Question::parse(&question, state.config.max_question_chars)
        .map_err(|error| reject(AppError::BadInput(error.message(t))))?
        .into_string();
    if let Some(command) = question.strip_prefix('/') {
        let event = command_reply(&state, &session, command, t).await;
        return Ok(ByteStream::new(futures_util::stream::once(async move {
            Ok::<_, AppError>(event.to_line())
        })));
    }
    let settings = session.settings();
    let input = TurnInput {
        id: 0,
        search_enabled: settings.search_enabled || !settings.mode.has_search_switch(),
        lang,
        mode: settings.mode,
        force_search: force_search.unwrap_or(false),
        // `site:example.org` in the question keeps every web search of the answer there
        // (the Agent's own queries too) and is shown with its sources.
        site: crate::text::site_in(&question).or_else(|| settings.site.clone()),
        model: settings.model.clone(),
        files: Vec::new(),
        question,
    };
    let asker = Asker {
        owner: session.owner(),
        address: crate::ssr::request::request_address(),
    };
    // One answer at a time per browser, whichever instance writes it; its events are kept
    // (and shared) as they come: the answer goes on when this browser goes away, and a
    // refresh, another tab or another instance can follow it.
    let browser = session.id.to_string();
    let running = answer::start(
        &state,
        session,
        input,
        Some(asker),
        Delivery::Logged { browser },
    )
    .await
    .map_err(|refusal| refused(refusal, t))?;
    use futures_util::StreamExt;
    let open = crate::ssr::metrics::OpenStream::new();
    // Each event on its line, with the patches that render the answer for the browser,
    // gzipped when the browser takes it.
    let lines = crate::ssr::framing::lines(running.events);
    let body = crate::ssr::framing::body(lines, crate::ssr::request::gzip_stream());
    Ok(ByteStream::new(body.map(move |chunk| {
        let _open = &open;
        Ok::<_, AppError>(chunk)
    })))
}

/// The answer to a `/command` (seed 002's `/reset`, seed 003's `/search on|off`, and what
/// any other is told), given without a model.
#[cfg(feature = "ssr")]
async fn command_reply(
    state: &crate::ssr::state::AppState,
    session: &crate::ssr::session::Session,
    command: &str,
    t: &crate::i18n::Texts,
) -> crate::model::AnswerEvent {
    use crate::model::AnswerEvent;
    let mut words = command.split_whitespace();
    let command = words.next().unwrap_or("");
    let reply = |text: String, reset: bool, search: Option<bool>| AnswerEvent::Command {
        text,
        reset,
        search,
    };
    match command {
        // Seed 003: the search switch by command as well as in the UI.
        "search" => {
            let enabled = match words.next().map(str::to_ascii_lowercase).as_deref() {
                Some("on") => true,
                Some("off") => false,
                _ => return reply(t.search_command_usage.to_string(), false, None),
            };
            session.update_settings(|settings| settings.search_enabled = enabled);
            crate::ssr::request::remember(state, session).await;
            tracing::info!(session = ?session.id, search = enabled, "search switched by command");
            let text = if enabled {
                t.search_command_on
            } else {
                t.search_command_off
            };
            reply(text.to_string(), false, Some(enabled))
        }
        "reset" => {
            crate::ssr::request::stop_answer(state, session).await;
            session.reset();
            crate::ssr::request::remember(state, session).await;
            tracing::info!(session = ?session.id, "session reset");
            reply(t.reset_done.to_string(), true, None)
        }
        _ => reply(
            t.unknown_command
                .replace("{command}", &format!("/{command}")),
            false,
            None,
        ),
    }
}

/// Why an answer was not started, as the browser is told (a `Retry-After` with a rate).
#[cfg(feature = "ssr")]
fn refused(refusal: crate::ssr::answer::Refusal, t: &crate::i18n::Texts) -> AppError {
    use crate::ssr::answer::Refusal;
    use crate::ssr::request::reject;
    match refusal {
        Refusal::TooFast(wait) => {
            let secs = wait.as_secs().max(1);
            if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
                if let Ok(value) = secs.to_string().parse() {
                    response.insert_header(axum::http::header::RETRY_AFTER, value);
                }
            }
            reject(AppError::TooMany(
                t.asking_too_fast.replace("{secs}", &secs.to_string()),
            ))
        }
        Refusal::QuotaFull => reject(AppError::QuotaFull(t.quota_full.to_string())),
        Refusal::Busy => reject(AppError::Busy(t.busy.to_string())),
        Refusal::ConversationFull { max } => reject(AppError::BadInput(
            t.conversation_full.replace("{max}", &max.to_string()),
        )),
    }
}
