//! The command line's commands: `serve` (the web app), `doctor` (checks SearXNG and the
//! model endpoint) and `ask` (one question on the terminal). `main.rs` parses the arguments
//! and calls these.

use std::process::ExitCode;

use crate::model::Mode;
use crate::ssr::config::Config;
use crate::ssr::state::AppState;
use crate::ssr::web;

#[allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the answer is the command's output"
)]
pub async fn ask(
    config: Config,
    question: String,
    mode: Mode,
    search: bool,
    json: bool,
) -> ExitCode {
    use std::io::Write;

    use crate::citation::{lists, SourceMap};
    use crate::model::AnswerEvent;
    use crate::model::Lang;
    use crate::ssr::pipeline::TurnInput;
    use crate::text::has_han;

    let question = question.trim().to_string();
    let lang = if has_han(&question) {
        Lang::ZhCn
    } else {
        Lang::En
    };
    let length = question.chars().count();
    if length == 0 || length > config.max_question_chars {
        let message = if length == 0 {
            lang.texts().empty_question.to_string()
        } else {
            lang.texts()
                .question_too_long
                .replace("{max}", &config.max_question_chars.to_string())
                .replace("{len}", &length.to_string())
        };
        eprintln!("{message}");
        return ExitCode::from(2);
    }
    let state = AppState::new(config);
    let session = state.sessions.create(std::time::Instant::now());
    let (sender, mut receiver) = tokio::sync::mpsc::channel(256);
    let input = TurnInput {
        id: 1,
        question,
        search_enabled: search,
        lang,
        mode,
    };
    let cancel = tokio_util::sync::CancellationToken::new();
    let run = tokio::spawn(crate::ssr::answer::run(
        state, session, input, cancel, sender,
    ));
    let mut failed = false;
    let mut stdout = std::io::stdout();
    let mut printed: std::collections::HashSet<String> = std::collections::HashSet::new();
    while let Some(event) = receiver.recv().await {
        if json {
            if let AnswerEvent::Failed { message } = &event {
                eprintln!("error: {message}");
                failed = true;
            }
            continue;
        }
        match event {
            AnswerEvent::Started { offline: true, .. } => {
                eprintln!("[{}]", lang.texts().offline_label)
            }
            AnswerEvent::Status {
                status: Some(status),
            } => eprintln!("… {}", crate::i18n::status_line(&status, lang.texts())),
            AnswerEvent::Notice { notice } => eprintln!("! {}", notice.text),
            AnswerEvent::Token { text } => {
                print!("{text}");
                let _ = stdout.flush();
            }
            AnswerEvent::Failed { message } => {
                eprintln!("error: {message}");
                failed = true;
            }
            AnswerEvent::Step { step, .. } => {
                eprintln!("> {}", crate::i18n::step_line(&step, lang.texts()))
            }
            AnswerEvent::Plan { plan } => {
                for line in crate::i18n::plan_lines(&plan, lang.texts()) {
                    if printed.insert(line.clone()) {
                        eprintln!("{line}");
                    }
                }
            }
            _ => {}
        }
    }
    let exchange = match run.await {
        Ok(exchange) => exchange,
        Err(error) => {
            eprintln!("error: the answer task failed: {error}");
            return ExitCode::FAILURE;
        }
    };
    let sources = SourceMap::new(exchange.sources.iter().cloned());
    if json {
        let result = crate::ssr::research::result_json(&exchange);
        println!(
            "{}",
            serde_json::to_string_pretty(&result).unwrap_or_else(|_| "{}".to_string())
        );
    } else {
        match (&exchange.research, mode) {
            (Some(plan), _) => println!(
                "{}",
                lists::research_markdown(&sources, &exchange.cited, |round| {
                    plan.for_round(round).map(|sub| sub.question.clone())
                })
            ),
            (None, Mode::Agent | Mode::Research) => {
                println!("{}", lists::agent_markdown(&sources, &exchange.cited))
            }
            (None, Mode::Chat) => {
                println!("{}", lists::chat_markdown(&sources, &exchange.cited))
            }
        }
    }
    if failed || exchange.answer.trim().is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

#[allow(
    clippy::print_stdout,
    reason = "the doctor's report is the command's output"
)]
pub async fn doctor(config: Config) -> ExitCode {
    let findings = crate::ssr::doctor::run(&config).await;
    for finding in &findings {
        println!("{finding}");
    }
    if findings
        .iter()
        .any(|f| f.verdict == crate::ssr::doctor::Verdict::Problem)
    {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

pub async fn serve(config: Config) -> ExitCode {
    for line in config.to_string().lines() {
        tracing::info!("config {line}");
    }
    let addr = config.addr;
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(error) => {
            tracing::error!(%error, "cannot listen on {addr}: is another program using it? Set CITED_ADDR to another address");
            return ExitCode::FAILURE;
        }
    };
    tracing::info!("cited is listening on http://{addr}");
    let state = AppState::new(config);
    // One clear line about SearXNG at startup, with the fix when it is not usable.
    let health = state.search_health.clone();
    tokio::spawn(async move {
        if let Err(error) = health.status(std::time::Duration::ZERO).await {
            let fix = crate::ssr::messages::search_error(crate::model::Lang::En, &error);
            tracing::warn!("{fix}");
        }
    });
    // The knowledge base follows its files: re-indexed when one is added, changed or removed.
    let knowledge = state.knowledge.clone();
    tracing::info!(documents = knowledge.len(), "knowledge base ready");
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(5));
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            let knowledge = knowledge.clone();
            let _ = tokio::task::spawn_blocking(move || knowledge.refresh()).await;
        }
    });
    match web::run(listener, state, web::shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "the server stopped with an error");
            ExitCode::FAILURE
        }
    }
}
