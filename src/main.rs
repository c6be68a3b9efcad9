//! The `cited` binary: `cited` (or `cited serve`) runs the web app; `cited doctor` checks
//! SearXNG and the model endpoint; `cited ask` answers one question on the terminal.

use std::process::ExitCode;

use cited::ssr::config::Config;
use cited::ssr::serve;
use cited::ssr::state::AppState;
use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

#[derive(Parser)]
#[command(
    name = "cited",
    version,
    about = "A self-hosted answer engine: every claim links to its source"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the web app on CITED_ADDR (the default command).
    Serve,
    /// Check SearXNG and the model endpoint; print each problem with its fix. Exits 1 when
    /// something is wrong.
    Doctor,
    /// Answer one question: the answer streams to stdout, then its reference list as
    /// Markdown; progress, Agent steps, the Research plan and notices go to stderr. Exits 1
    /// on failure.
    Ask {
        question: String,
        /// Chat: search once (per --search), then answer. Agent: the model searches itself.
        /// Research: plan, research sub-questions in parallel, verify, answer.
        #[arg(long, value_enum, default_value_t = AskMode::Chat)]
        mode: AskMode,
        /// Chat mode: search the web first (on) or answer from the model alone (off).
        #[arg(long, value_enum, default_value_t = Switch::On)]
        search: Switch,
        /// Print only the final result as JSON (answer, 结论, confidence, evidence, sources).
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum AskMode {
    Chat,
    Agent,
    Research,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Switch {
    On,
    Off,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let (config, warnings) = Config::from_env();
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::new(&config.log))
        .with_writer(std::io::stderr)
        .init();
    for warning in &warnings {
        tracing::warn!("{warning}");
    }
    cited::ssr::install_crypto_provider();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            tracing::error!(%error, "cannot start the async runtime");
            return ExitCode::FAILURE;
        }
    };
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => runtime.block_on(serve_app(config)),
        Command::Doctor => runtime.block_on(doctor(config)),
        Command::Ask {
            question,
            mode,
            search,
            json,
        } => runtime.block_on(ask(config, question, mode, search == Switch::On, json)),
    }
}

#[allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the answer is the command's output"
)]
async fn ask(
    config: Config,
    question: String,
    mode: AskMode,
    search: bool,
    json: bool,
) -> ExitCode {
    use std::io::Write;

    use cited::citation::{lists, SourceMap};
    use cited::i18n::Lang;
    use cited::model::{AnswerEvent, Mode};
    use cited::ssr::chat::{self, ChatInput};
    use cited::ssr::search::has_han;

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
    let mode = match mode {
        AskMode::Chat => Mode::Chat,
        AskMode::Agent => Mode::Agent,
        AskMode::Research => Mode::Research,
    };
    let input = ChatInput {
        id: 1,
        question,
        search_enabled: search,
        lang,
        mode,
    };
    let cancel = tokio_util::sync::CancellationToken::new();
    let run = tokio::spawn(async move {
        match mode {
            Mode::Chat => chat::run(&state, &session, input, cancel, sender).await,
            Mode::Agent => cited::ssr::agent::run(&state, &session, input, cancel, sender).await,
            Mode::Research => {
                cited::ssr::research::run(&state, session, input, cancel, sender).await
            }
        }
    });
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
            AnswerEvent::Status { text } if !text.is_empty() => eprintln!("… {text}"),
            AnswerEvent::Notice { notice } => eprintln!("! {}", notice.text),
            AnswerEvent::Token { text } => {
                print!("{text}");
                let _ = stdout.flush();
            }
            AnswerEvent::Failed { message } => {
                eprintln!("error: {message}");
                failed = true;
            }
            AnswerEvent::Step { step } => {
                eprintln!("> {}", cited::i18n::step_line(&step, lang.texts()))
            }
            AnswerEvent::Plan { plan } => {
                for line in cited::i18n::plan_lines(&plan, lang.texts()) {
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
        let result = cited::ssr::research::result_json(&exchange);
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
async fn doctor(config: Config) -> ExitCode {
    let findings = cited::ssr::doctor::run(&config).await;
    for finding in &findings {
        println!("{finding}");
    }
    if findings
        .iter()
        .any(|f| f.verdict == cited::ssr::doctor::Verdict::Problem)
    {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

async fn serve_app(config: Config) -> ExitCode {
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
        let _ = health.status(std::time::Duration::ZERO).await;
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
    match serve::run(listener, state, serve::shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "the server stopped with an error");
            ExitCode::FAILURE
        }
    }
}
