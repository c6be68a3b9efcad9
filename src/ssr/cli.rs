//! The command line's commands: `serve` (the web app), `doctor` (checks SearXNG and the
//! model endpoint) and `ask` (one question on the terminal). `main.rs` parses the arguments
//! and calls these.

use std::collections::HashSet;
use std::io::Write;
use std::process::ExitCode;

use crate::citation::{lists, Lookup, SourceMap};
use crate::i18n::{self, Texts};
use crate::model::{AnswerEvent, Exchange, Lang, Mode};
use crate::ssr::answer;
use crate::ssr::config::Config;
use crate::ssr::pipeline::TurnInput;
use crate::ssr::state::AppState;
use crate::ssr::store::StoreError;
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
    filters: Filters,
    output: Output,
) -> ExitCode {
    let lang = Lang::of_text(question.trim());
    let t = lang.texts();
    let (question, site) = match question_and_site(&question, &filters, &config, t) {
        Ok(read) => read,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let mut state = AppState::new(config);
    state.isolate_files();
    let (model, files) = match model_and_files(&state, &filters, lang).await {
        Ok(read) => read,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let session = state.sessions.create(std::time::Instant::now());
    session.update_settings(|settings| {
        settings.focus = filters.focus;
        settings.period = filters.period;
    });
    // What narrows the web searches, said first (in the question's language).
    let narrowed = i18n::narrowing_line(
        &crate::model::Narrowing {
            focus: filters.focus,
            period: filters.period,
            site: site.clone(),
        },
        t,
    );
    if !narrowed.is_empty() && !json {
        eprintln!("{narrowed}");
    }
    let input = TurnInput {
        id: 0,
        question,
        search_enabled: search,
        lang,
        mode,
        force_search: false,
        site,
        model,
        files,
    };
    // No limits on the command line; a fresh session is never busy.
    let Ok(running) = answer::start(&state, session, input, None, answer::Delivery::Direct).await
    else {
        eprintln!("error: the answer could not start");
        return ExitCode::FAILURE;
    };
    let (mut events, run) = (running.events, running.done);
    let mut failed = false;
    let mut printer = Printer {
        live: output.live && !json,
        shown: String::new(),
        printed: HashSet::new(),
    };
    while let Some(event) = futures_util::StreamExt::next(&mut events).await {
        if let AnswerEvent::Failed { message } = &event {
            eprintln!("error: {message}");
            failed = true;
        } else if !json {
            printer.show(event, t);
        }
    }
    let exchange = match run.await {
        Ok(exchange) => exchange,
        Err(error) => {
            eprintln!("error: the answer task failed: {error}");
            return ExitCode::FAILURE;
        }
    };
    if json {
        let result = crate::ssr::research::result_json(&exchange);
        println!(
            "{}",
            serde_json::to_string_pretty(&result).unwrap_or_else(|_| "{}".to_string())
        );
    } else {
        print_ending(&exchange, printer.live, output.bare_markers, lang);
    }
    if failed || exchange.answer.trim().is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The question checked, and the site that narrows it: `--site` when given (and valid),
/// else a `site:` the question names.
fn question_and_site(
    question: &str,
    filters: &Filters,
    config: &Config,
    t: &Texts,
) -> Result<(String, Option<String>), String> {
    let question = answer::Question::parse(question, config.max_question_chars)
        .map_err(|error| error.message(t))?
        .into_string();
    let site = match filters.site.as_deref().map(str::trim) {
        None | Some("") => crate::text::site_in(&question),
        Some(site) => {
            Some(crate::text::valid_site(site).ok_or_else(|| t.bad_site.replace("{site}", site))?)
        }
    };
    Ok((question, site))
}

/// The `--model` chosen (a model of the main endpoint, or `endpoint|model`) and the
/// `--file`s read as the conversation's files, or why one of them cannot be used.
async fn model_and_files(
    state: &AppState,
    filters: &Filters,
    lang: Lang,
) -> Result<(Option<String>, Vec<crate::ssr::knowledge::Document>), String> {
    let t = lang.texts();
    let model = match filters.model.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(raw) => {
            let id = if raw.contains('|') {
                raw.to_string()
            } else {
                crate::ssr::llm::models::model_id(crate::ssr::config::MAIN_ENDPOINT, raw)
            };
            if state.models.chosen(&id).is_none() {
                return Err(t.unknown_model.replace("{model}", raw));
            }
            Some(id)
        }
    };
    let mut files = Vec::new();
    for (n, path) in filters.files.iter().enumerate() {
        let passages = read_file(path, state).await.map_err(|error| {
            let message = crate::ssr::files::message(lang, &error);
            format!("{}: {message}", path.display())
        })?;
        let name = crate::ssr::files::clean_name(&path.to_string_lossy());
        files.push(crate::ssr::files::document(
            "cli",
            &n.to_string(),
            &name,
            passages,
        ));
    }
    Ok((model, files))
}

/// What follows the answer on the terminal: the answer itself when it was not shown live
/// (written for a file or another program: once, as it ended, each marker a link to its
/// source as seed 003 has it, unless bare markers were asked for), the references, the
/// related questions, and on stderr the notes and the footer.
#[allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the answer is the command's output"
)]
fn print_ending(exchange: &Exchange, live: bool, bare_markers: bool, lang: Lang) {
    let t = lang.texts();
    if !live {
        let answer = exchange.answer.trim_end();
        if bare_markers {
            print!("{answer}");
        } else {
            let sources = SourceMap::new(exchange.sources.iter().cloned());
            let linked = crate::citation::markers::linked(answer, |n| {
                sources.lookup(n).map(|entry| entry.url.as_str())
            });
            print!("{linked}");
        }
    }
    println!("{}", reference_list(exchange, lang));
    if !exchange.related.is_empty() {
        println!("\n**{}:**\n", t.related_questions);
        for question in &exchange.related {
            println!("- {question}");
        }
    }
    if exchange.unsearched {
        eprintln!("! {}", t.unsearched_note);
    }
    let footer = i18n::answer_footer(
        exchange.coverage.as_ref(),
        Some(&crate::model::SupportShare::of(&exchange.alignments)),
        // No model wrote an offline answer: no tokens to count.
        exchange.usage.as_ref().filter(|_| !exchange.offline),
        t,
    );
    if !footer.is_empty() {
        eprintln!("{footer}");
    }
}

/// The passages of the file at `path`, or why it cannot be used.
async fn read_file(
    path: &std::path::Path,
    state: &AppState,
) -> Result<Vec<crate::ssr::knowledge::Passage>, crate::ssr::files::FileError> {
    use crate::ssr::files::FileError;
    let max_bytes = state.config.capacity.file_bytes;
    let size = tokio::fs::metadata(path)
        .await
        .map_err(|error| FileError::Unreadable(error.to_string()))?
        .len();
    if size > max_bytes as u64 {
        return Err(FileError::TooLarge {
            max_mb: max_bytes / 1024 / 1024,
        });
    }
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|error| FileError::Unreadable(error.to_string()))?;
    let name = path.to_string_lossy();
    state.extractor.extract(&name, bytes.into()).await
}

/// What narrows `cited ask`'s web searches (`--focus`, `--time`, `--site`).
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub focus: crate::model::Focus,
    pub period: Option<crate::model::Period>,
    pub site: Option<String>,
    /// `--model`: a model name on the main endpoint, or `endpoint|model`.
    pub model: Option<String>,
    /// `--file`: files searched alongside the web.
    pub files: Vec<std::path::PathBuf>,
}

/// `cited mcp`: cited's MCP server over stdio, for a desktop client that starts it (the
/// client's messages on stdin, cited's on stdout, logs on stderr). With `user`, answers land
/// in that account's history and its conversations are resources; without, they are not
/// kept. Ends when the client closes stdin; a running answer is stopped and saved first.
#[allow(clippy::print_stderr, reason = "the command's errors")]
pub async fn mcp(config: Config, user: Option<String>) -> ExitCode {
    let mut state = AppState::new(config);
    state.isolate_files();
    if let Some(name) = &user {
        match state.store.password_hash(name).await {
            Ok(Some(_)) => {}
            Ok(None) => {
                eprintln!("error: there is no user {name} (cited user add {name})");
                return ExitCode::from(2);
            }
            Err(error) => {
                eprintln!("error: the accounts cannot be read: {error}");
                return ExitCode::FAILURE;
            }
        }
    }
    let caller = crate::ssr::mcp::Caller {
        user,
        address: None,
        limited: false,
    };
    let server = crate::ssr::mcp::CitedMcp::new(state.clone(), crate::ssr::mcp::Who::Fixed(caller));
    let outcome = match rmcp::ServiceExt::serve(server, rmcp::transport::stdio()).await {
        Ok(running) => running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Err(error) => Err(error.to_string()),
    };
    // Answers still running stop, and are saved as stopped.
    state.shutdown.cancel();
    state.answers.close();
    state.answers.wait().await;
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: the MCP session failed: {error}");
            ExitCode::FAILURE
        }
    }
}

/// How `cited ask` writes the answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Output {
    /// Stdout is a terminal: the answer streams as it is written (its markers bare), and a
    /// text the model took back is printed again as it now stands. Else the answer is
    /// written once, at the end.
    pub live: bool,
    /// `--bare-markers`: keep `[n]` instead of linking each marker to its source.
    pub bare_markers: bool,
}

/// Prints the events of an answer: its text to stdout while it is written (on a
/// terminal), progress, notices, the trace and new plan lines to stderr.
struct Printer {
    live: bool,
    /// The answer text on the terminal so far.
    shown: String,
    /// The plan lines printed so far.
    printed: HashSet<String>,
}

impl Printer {
    #[allow(
        clippy::print_stdout,
        clippy::print_stderr,
        reason = "the answer is the command's output"
    )]
    fn show(&mut self, event: AnswerEvent, t: &Texts) {
        match event {
            AnswerEvent::Started { offline: true, .. } => eprintln!("[{}]", t.offline_label),
            AnswerEvent::Status {
                status: Some(status),
            } => eprintln!("… {}", i18n::status_line(&status, t)),
            AnswerEvent::Notice { notice } => eprintln!("! {}", notice.text),
            AnswerEvent::Token { text } if self.live => {
                print!("{text}");
                let _ = std::io::stdout().flush();
                self.shown.push_str(&text);
            }
            AnswerEvent::Rewrite { answer } if self.live => {
                match answer.strip_prefix(self.shown.as_str()) {
                    // Only more text: it follows on.
                    Some(rest) => print!("{rest}"),
                    // Text on the terminal was taken back (a repetition cut, thinking before
                    // a search): the answer again, as it now stands.
                    None => {
                        println!();
                        eprintln!("↻ {}", t.answer_reprinted);
                        print!("{answer}");
                    }
                }
                let _ = std::io::stdout().flush();
                self.shown = answer;
            }
            AnswerEvent::Step { step, .. } => eprintln!("> {}", i18n::step_line(&step, t)),
            AnswerEvent::Plan { plan } => {
                for line in i18n::plan_lines(&plan, t) {
                    if self.printed.insert(line.clone()) {
                        eprintln!("{line}");
                    }
                }
            }
            _ => {}
        }
    }
}

/// The answer's reference list as Markdown: grouped by sub-question (Research), by search
/// round (Agent), or numbered (Chat).
/// The answer's reference list, in the question's language.
fn reference_list(exchange: &Exchange, lang: Lang) -> String {
    let sources = SourceMap::new(exchange.sources.iter().cloned());
    let words = lists::ListWords::of(lang);
    // The sources cited's additions cite are listed too (the footer counts the additions).
    let mut cited = exchange.cited.clone();
    cited.extend(crate::model::added_numbers(
        &exchange.cited,
        &exchange.claims,
    ));
    match (&exchange.research, exchange.mode) {
        (Some(plan), _) => lists::research_markdown_in(words, &sources, &cited, |round| {
            plan.for_round(round).map(|sub| sub.question.clone())
        }),
        (None, Mode::Agent | Mode::Research) => lists::agent_markdown_in(words, &sources, &cited),
        (None, Mode::Chat) => lists::chat_markdown_in(words, &sources, &cited),
    }
}

/// `cited config`: every setting as read, or with `markdown` the reference of every
/// variable (docs/configuration.md).
#[allow(clippy::print_stdout, reason = "the settings are the command's output")]
pub fn config(config: &Config, markdown: bool) -> ExitCode {
    if markdown {
        print!("{}", crate::ssr::config::vars::markdown());
    } else {
        println!("{config}");
    }
    ExitCode::SUCCESS
}

#[allow(
    clippy::print_stdout,
    reason = "the doctor's report is the command's output"
)]
pub async fn doctor(config: Config) -> ExitCode {
    let mut findings = crate::ssr::doctor::run(&config).await;
    // Run from cited's directory, the SearXNG its compose files start reads this file.
    findings.extend(crate::ssr::doctor::searxng_secret(std::path::Path::new(
        "searxng/settings.yml",
    )));
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

/// Why `serve` refuses to start: an address other machines can reach with nobody
/// signing in.
pub fn exposure_refusal(config: &Config) -> Option<String> {
    let addr = config.addr;
    (!addr.ip().is_loopback() && config.access.auth == crate::ssr::config::Auth::Off).then(|| {
        format!(
            "cited would listen on {addr}, which other machines can reach, and nobody has to sign in: \
             set CITED_AUTH=accounts (and add a user with `cited user add NAME`) or CITED_AUTH=proxy \
             (with CITED_AUTH_PROXY_HEADER and CITED_AUTH_PROXY_FROM), or listen on 127.0.0.1"
        )
    })
}

pub async fn serve(config: Config) -> ExitCode {
    for line in config.summary() {
        tracing::info!("{line}");
    }
    let addr = config.addr;
    if let Some(refusal) = exposure_refusal(&config) {
        tracing::error!("{refusal}");
        return ExitCode::FAILURE;
    }
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(error) => {
            tracing::error!(%error, "cannot listen on {addr}: is another program using it? Set CITED_ADDR to another address");
            return ExitCode::FAILURE;
        }
    };
    tracing::info!("cited is listening on http://{addr}");
    let mut state = AppState::new(config);
    state.isolate_files();
    // The database first: migrated, and what a crash left half-written marked interrupted
    // (with Redis, other instances may be writing answers: the reaper watches instead).
    let interrupted = if state.shared.is_shared() {
        state.store.ready().await.map(|()| 0)
    } else {
        state.store.interrupt_unfinished().await
    };
    match interrupted {
        Ok(0) => tracing::info!("database ready"),
        Ok(interrupted) => {
            tracing::warn!(
                interrupted,
                "database ready; answers cut off by the last stop are marked interrupted"
            )
        }
        Err(error) => {
            tracing::error!(%error, "the database is not usable: fix CITED_DATABASE_URL");
            return ExitCode::FAILURE;
        }
    }
    if state.config.access.auth == crate::ssr::config::Auth::Accounts {
        match state.store.users().await {
            Ok(users) if users.is_empty() => tracing::warn!(
                "CITED_AUTH=accounts but there is no account yet: add one with `cited user add NAME`"
            ),
            Ok(users) => tracing::info!(accounts = users.len(), "sign-in required"),
            Err(error) => tracing::error!(%error, "cannot read the accounts"),
        }
    }
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
            let _ = crate::ssr::blocking::run(move || knowledge.refresh()).await;
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

/// `cited user …`.
pub enum User {
    Add { name: String },
    Remove { name: String },
    Passwd { name: String },
    List,
}

/// A password from stdin: typed without echo at a terminal (twice when `confirm`), else
/// the first line of what is piped in.
#[allow(clippy::print_stderr, reason = "the prompt")]
fn read_password(confirm: bool) -> Result<String, String> {
    use std::io::{BufRead, IsTerminal};
    let stdin = std::io::stdin();
    let terminal = stdin.is_terminal();
    let echo = |on: bool| {
        let _ = std::process::Command::new("stty")
            .arg(if on { "echo" } else { "-echo" })
            .stdin(std::process::Stdio::inherit())
            .status();
    };
    let read = |prompt: &str| -> Result<String, String> {
        if terminal {
            eprint!("{prompt}");
            echo(false);
        }
        let mut line = String::new();
        let result = stdin.lock().read_line(&mut line);
        if terminal {
            echo(true);
            eprintln!();
        }
        result.map_err(|error| error.to_string())?;
        Ok(line.trim_end_matches(['\n', '\r']).to_string())
    };
    let password = read("Password: ")?;
    if terminal && confirm && read("Again: ")? != password {
        return Err("the two passwords differ".to_string());
    }
    if password.chars().count() < crate::ssr::passwords::MIN_LENGTH {
        return Err(format!(
            "a password needs at least {} characters",
            crate::ssr::passwords::MIN_LENGTH
        ));
    }
    Ok(password)
}

/// A password read from stdin ([`read_password`]), hashed.
async fn new_password_hash() -> Result<String, String> {
    let password = read_password(true)?;
    crate::ssr::blocking::run(move || crate::ssr::passwords::hash(&password))
        .await
        .unwrap_or_else(|| Err("hashing failed".to_string()))
}

#[allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the accounts are the command's output"
)]
pub async fn user(config: Config, command: User) -> ExitCode {
    let state = AppState::new(config);
    let store = &state.store;
    let fail = |message: String| {
        eprintln!("error: {message}");
        ExitCode::FAILURE
    };
    match command {
        User::List => match store.users().await {
            Ok(users) => {
                for name in users {
                    println!("{name}");
                }
                ExitCode::SUCCESS
            }
            Err(error) => fail(error.to_string()),
        },
        User::Add { name } => {
            if !crate::ssr::passwords::valid_name(&name) {
                return fail(
                    "a user name is 1–64 letters, digits, '.', '-', '_', '+' or '@'".to_string(),
                );
            }
            let hash = match new_password_hash().await {
                Ok(hash) => hash,
                Err(error) => return fail(error),
            };
            changed(
                store.create_user(&name, &hash).await,
                format!("added {name}"),
                format!("{name} exists already (`cited user passwd {name}` sets a new password)"),
            )
        }
        User::Passwd { name } => {
            let hash = match new_password_hash().await {
                Ok(hash) => hash,
                Err(error) => return fail(error),
            };
            changed(
                store.set_password(&name, &hash).await,
                format!(
                    "new password set for {name}; signed out everywhere, and their API keys revoked \
                     (`cited key add {name}` makes a new one)"
                ),
                format!("no user {name} (`cited user list` shows them)"),
            )
        }
        User::Remove { name } => changed(
            store.remove_user(&name).await,
            format!("removed {name} and their conversations"),
            format!("no user {name} (`cited user list` shows them)"),
        ),
    }
}

/// How a command that changes one account or key ends: what it did, or why not.
#[allow(clippy::print_stderr, reason = "the command's report")]
fn changed(result: Result<bool, StoreError>, done: String, missing: String) -> ExitCode {
    let failed = match result {
        Ok(true) => {
            eprintln!("{done}");
            return ExitCode::SUCCESS;
        }
        Ok(false) => missing,
        Err(error) => error.to_string(),
    };
    eprintln!("error: {failed}");
    ExitCode::FAILURE
}

/// `cited key …`.
pub enum Key {
    Add { user: String, label: String },
    List { user: String },
    Remove { id: String },
}

#[allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the keys are the command's output"
)]
pub async fn key(config: Config, command: Key) -> ExitCode {
    let state = AppState::new(config);
    let store = &state.store;
    let fail = |message: String| {
        eprintln!("error: {message}");
        ExitCode::FAILURE
    };
    match command {
        Key::Add { user, label } => {
            match store.password_hash(&user).await {
                Ok(Some(_)) => {}
                Ok(None) if state.config.access.auth != crate::ssr::config::Auth::Accounts => {}
                Ok(None) => return fail(format!("no user {user} (`cited user add {user}` first)")),
                Err(error) => return fail(error.to_string()),
            }
            let (key, id) = match crate::ssr::passwords::new_api_key() {
                Ok(made) => made,
                Err(error) => return fail(error),
            };
            let hash = crate::ssr::passwords::api_key_hash(&key);
            match store.add_api_key(&id, &hash, &user, &label).await {
                Ok(()) => {
                    println!("{key}");
                    eprintln!("key {id} for {user}: shown once, keep it safe");
                    ExitCode::SUCCESS
                }
                Err(error) => fail(error.to_string()),
            }
        }
        Key::List { user } => match store.api_keys(&user).await {
            Ok(keys) => {
                for (id, label, created) in keys {
                    println!("{id}  {}  {label}", utc(created));
                }
                ExitCode::SUCCESS
            }
            Err(error) => fail(error.to_string()),
        },
        Key::Remove { id } => changed(
            store.remove_api_key(&id).await,
            format!("key {id} revoked"),
            format!("no key {id}"),
        ),
    }
}

/// `cited history …`.
pub enum History {
    List {
        limit: u32,
    },
    Show {
        id: String,
    },
    Export {
        id: String,
        /// `None`: Markdown; else the cited sources in that format.
        format: Option<crate::citation::export::Format>,
    },
}

pub use crate::citation::export::utc;

#[allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the history is the command's output"
)]
pub async fn history(config: Config, command: History) -> ExitCode {
    let state = AppState::new(config);
    let store = &state.store;
    let found = match &command {
        History::List { limit } => match store.list_all(*limit).await {
            Ok(conversations) => {
                for (_, c) in conversations {
                    println!(
                        "{}  {}  {:<8}  {}",
                        c.id,
                        utc(c.updated_at),
                        c.mode.as_str(),
                        c.title
                    );
                }
                return ExitCode::SUCCESS;
            }
            Err(error) => Err(error),
        },
        History::Show { id } | History::Export { id, .. } => store.conversation_by_id(id).await,
    };
    let conversation = match found {
        Ok(Some(conversation)) => conversation,
        Ok(None) => {
            eprintln!("no conversation with that id (`cited history list` shows them)");
            return ExitCode::from(2);
        }
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    match command {
        History::Export { format: None, .. } => {
            print!("{}", web::history_routes::markdown(&conversation))
        }
        History::Export {
            format: Some(format),
            ..
        } => {
            let accessed = utc(conversation.summary.updated_at);
            let references = crate::citation::export::references(
                &conversation.exchanges,
                accessed.get(..10).unwrap_or_default(),
            );
            print!("{}", format.write(&references));
        }
        _ => {
            let s = &conversation.summary;
            println!(
                "{}\n{}  {}  created {}  updated {}",
                s.title,
                s.id,
                s.mode.as_str(),
                utc(s.created_at),
                utc(s.updated_at)
            );
            if let Some(token) = &s.share_token {
                println!("shared at /s/{token}");
            }
            for (n, exchange) in conversation.exchanges.iter().enumerate() {
                println!("\n[{}] ({:?}) {}", n + 1, exchange.state, exchange.question);
                println!("{}", exchange.answer.trim_end());
            }
        }
    }
    ExitCode::SUCCESS
}

/// `cited eval`: runs a question set and prints the report (also written to `out`).
#[allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the report is the command's output"
)]
pub async fn eval(
    config: Config,
    set: std::path::PathBuf,
    mode: Mode,
    concurrency: usize,
    deadline: std::time::Duration,
    out: std::path::PathBuf,
    judge: bool,
) -> ExitCode {
    let text = match std::fs::read_to_string(&set) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("cannot read {}: {error}", set.display());
            return ExitCode::from(2);
        }
    };
    let questions = match crate::ssr::eval::parse_set(&text) {
        Ok(questions) => questions,
        Err(message) => {
            eprintln!("{}: {message}", set.display());
            return ExitCode::from(2);
        }
    };
    let state = AppState::new(config);
    if let Err(error) = state.store.ready().await {
        eprintln!("cannot open the database: {error}");
        return ExitCode::FAILURE;
    }
    match crate::ssr::eval::run(state, questions, mode, concurrency, deadline, &out, judge).await {
        Ok(report) => {
            println!("{}", crate::ssr::eval::markdown(&report));
            eprintln!("results: {}", out.display());
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// `cited check-citations`: the offline citation checker on a labelled set; the report (or
/// with `json`, one line per pair and one of totals) to stdout.
#[allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the report is the command's output"
)]
pub async fn check_citations(
    config: Config,
    set: &std::path::Path,
    model: bool,
    json: bool,
    explain: bool,
) -> ExitCode {
    use crate::ssr::eval::citations;
    let text = match std::fs::read_to_string(set) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("cannot read {}: {error}", set.display());
            return ExitCode::from(2);
        }
    };
    let pairs = match citations::read_set(&text) {
        Ok(pairs) => pairs,
        Err(message) => {
            eprintln!("{}: {message}", set.display());
            return ExitCode::from(2);
        }
    };
    let judged = if model {
        let state = AppState::new(config);
        if state.llm.kind() != crate::ssr::llm::ModelKind::Remote {
            eprintln!(
                "--check model needs a model: set CITED_LLM_BASE_URL (and CITED_LLM_MODEL, or CITED_LLM_MODEL_FAST for the judge)"
            );
            return ExitCode::from(2);
        }
        let (judged, by_model) =
            citations::judge_model(state.llm.as_ref(), &state.config.limits, &pairs).await;
        eprintln!(
            "the model judged {by_model} of {} pairs; the offline checker the rest",
            pairs.len()
        );
        judged
    } else {
        citations::judge_lexical(&pairs)
    };
    let report = citations::report(&judged);
    if explain {
        for line in citations::explain_lines(&judged) {
            println!("{line}");
        }
    } else if json {
        for line in citations::json_lines(&judged, &report) {
            println!("{line}");
        }
    } else {
        print!("{}", citations::render(&report));
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00");
        assert_eq!(utc(1_795_435_200_000 + 90_000), "2026-11-23 12:01");
    }
}
