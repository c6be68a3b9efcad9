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
    use crate::model::AnswerEvent;
    use crate::ssr::pipeline::TurnInput;

    use crate::ssr::request::reject;

    let state = crate::ssr::request::state()?;
    let refuse = |message: &str| reject(AppError::BadInput(message.to_string()));
    let session = crate::ssr::request::session_or_mint().await?;
    let lang = crate::ssr::request::request_lang();
    let t = lang.texts();
    let question = question.trim().to_string();
    let length = question.chars().count();
    if length == 0 {
        return Err(refuse(t.empty_question));
    }
    if length > state.config.max_question_chars {
        return Err(refuse(
            &t.question_too_long
                .replace("{max}", &state.config.max_question_chars.to_string())
                .replace("{len}", &length.to_string()),
        ));
    }
    let one_event = |event: AnswerEvent| {
        ByteStream::new(futures_util::stream::once(async move {
            Ok::<_, AppError>(event.to_line())
        }))
    };
    if let Some(command) = question.strip_prefix('/') {
        let command = command.split_whitespace().next().unwrap_or("");
        if command == "reset" {
            crate::ssr::request::stop_answer(&state, &session).await;
            session.reset();
            crate::ssr::request::remember(&state, &session).await;
            tracing::info!(session = ?session.id, "session reset");
            return Ok(one_event(AnswerEvent::Command {
                text: t.reset_done.to_string(),
                reset: true,
            }));
        }
        let text = t
            .unknown_command
            .replace("{command}", &format!("/{command}"));
        return Ok(one_event(AnswerEvent::Command { text, reset: false }));
    }
    match crate::ssr::request::may_ask(
        &state,
        &session.owner(),
        crate::ssr::request::request_address(),
    )
    .await
    {
        Ok(()) => {}
        Err(crate::ssr::request::Refused::TooFast(wait)) => {
            let secs = wait.as_secs().max(1);
            if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
                if let Ok(value) = secs.to_string().parse() {
                    response.insert_header(axum::http::header::RETRY_AFTER, value);
                }
            }
            return Err(reject(AppError::TooMany(
                t.asking_too_fast.replace("{secs}", &secs.to_string()),
            )));
        }
        Err(crate::ssr::request::Refused::QuotaFull) => {
            return Err(reject(AppError::QuotaFull(t.quota_full.to_string())));
        }
    }
    let (id, cancel) = session
        .begin_answer()
        .ok_or_else(|| reject(AppError::Busy(t.busy.to_string())))?;
    // Frees the session however this ends: refused below, this request dropped while it
    // waits, or the pipeline panicking; it can never stay "busy".
    struct EndAnswer(std::sync::Arc<crate::ssr::session::Session>, u64);
    impl Drop for EndAnswer {
        fn drop(&mut self) {
            self.0.end_answer(self.1);
        }
    }
    let end = EndAnswer(session.clone(), id);
    // One answer at a time per browser, whichever instance writes it.
    let browser = session.id.to_string();
    let Ok(live) = state.shared.begin(&browser, cancel.clone()).await else {
        return Err(reject(AppError::Busy(t.busy.to_string())));
    };
    let settings = session.settings();
    let search_enabled = settings.search_enabled || !settings.mode.has_search_switch();
    let (sender, receiver) = tokio::sync::mpsc::channel::<AnswerEvent>(256);
    // `site:example.org` in the question keeps every web search of the answer there (the
    // Agent's own queries too) and is shown with its sources.
    let site = crate::text::site_in(&question).or_else(|| settings.site.clone());
    let input = TurnInput {
        id,
        question,
        search_enabled,
        lang,
        mode: settings.mode,
        force_search: force_search.unwrap_or(false),
        site,
        model: settings.model.clone(),
        files: Vec::new(),
    };
    // Counted as running from now, so a shutdown that comes before the task first runs
    // still waits for it.
    let tracked = state.answers.token();
    let recording = state.answers.token();
    let shared = std::sync::Arc::clone(&state.shared);
    let follow = live.follow(0);
    // The answer's events are kept (and shared) as they come: the answer goes on when this
    // browser goes away, and a refresh, another tab or another instance can follow it.
    // Shutdown waits for the record too, so Redis hears the answer ended.
    tokio::spawn(async move {
        let _recording = recording;
        shared.record(&browser, live, receiver).await;
    });
    tokio::spawn(async move {
        let _tracked = tracked;
        let _end = end;
        crate::ssr::answer::run(state, session, input, cancel, sender).await;
    });
    use futures_util::StreamExt;
    let open = crate::ssr::metrics::OpenStream::new();
    // Each event on its line, with the patches that render the answer for the browser,
    // gzipped when the browser takes it.
    let lines = crate::ssr::framing::lines(follow);
    let body = crate::ssr::framing::body(lines, crate::ssr::request::gzip_stream());
    Ok(ByteStream::new(body.map(move |chunk| {
        let _open = &open;
        Ok::<_, AppError>(chunk)
    })))
}
