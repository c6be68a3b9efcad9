//! The `cited` binary: `cited` (or `cited serve`) runs the web app; `cited doctor` checks
//! SearXNG and the model endpoint; `cited ask` answers one question on the terminal.

use std::process::ExitCode;

use cited::model::Mode;
use cited::ssr::cli;
use cited::ssr::config::Config;
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
    /// Print every setting as it is read here (the environment, then `.env`), one
    /// NAME=value per line, secrets redacted; with --markdown, the reference of every
    /// variable (docs/configuration.md).
    Config {
        #[arg(long)]
        markdown: bool,
    },
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
        /// What web searches look at: web, academic, discussions, news or code
        /// (SearXNG categories or engines, CITED_FOCUS_<NAME>).
        #[arg(long, default_value = "web", value_parser = parse_focus)]
        focus: cited::model::Focus,
        /// Only results from the past day, week, month or year.
        #[arg(long = "time", value_parser = parse_period)]
        period: Option<cited::model::Period>,
        /// Only results from this site, e.g. docs.rs.
        #[arg(long)]
        site: Option<String>,
        /// The model that answers: a name on CITED_LLM_BASE_URL's endpoint, or
        /// endpoint|model for one of CITED_LLM_ENDPOINTS.
        #[arg(long)]
        model: Option<String>,
        /// A file (PDF, Markdown, text, HTML or DOCX) searched alongside the web and cited
        /// with its name and page; repeat for more.
        #[arg(long = "file")]
        files: Vec<std::path::PathBuf>,
        /// Keep citation markers as bare [n]. By default, an answer written to a file or a
        /// pipe links each marker to its source ([[n]](url)), so it keeps its citations
        /// wherever it is pasted; on a terminal the answer streams with bare markers.
        #[arg(long)]
        bare_markers: bool,
    },
    /// Serve MCP (the Model Context Protocol) over stdio, for a desktop client or agent that
    /// starts cited: the tools ask, search and read, and the user's conversations as
    /// resources. `cited serve` also serves it over HTTP at /mcp.
    Mcp {
        /// Answers land in this account's history, and its conversations are resources;
        /// without it, answers are not kept.
        #[arg(long)]
        user: Option<String>,
    },
    /// Run a question set (JSON Lines: question and answer) through a mode and report
    /// accuracy, citation validity and precision, coverage, latency, tokens and cost.
    /// Results go to --out as they come; run it again with the same --out to resume.
    Eval {
        /// The question set, e.g. eval/cited-30.jsonl.
        set: std::path::PathBuf,
        #[arg(long, value_enum, default_value_t = AskMode::Chat)]
        mode: AskMode,
        /// Questions answered at once.
        #[arg(long, default_value_t = 2)]
        concurrency: usize,
        /// Seconds one question may take; past them it is stopped and scored as it stands.
        #[arg(long, default_value_t = 300)]
        deadline: u64,
        /// Where results.jsonl, report.md and report.json go.
        #[arg(long, default_value = "eval-out")]
        out: std::path::PathBuf,
        /// Also ask the configured model whether each answer states the expected one
        /// (model-graded accuracy, beside the normalised containment).
        #[arg(long)]
        judge: bool,
    },
    /// Measure the citation checker on a labelled set (JSON Lines: id, sentence,
    /// source{title,url,text}, label supported/partial/unsupported, optional kind): each
    /// level's precision and recall, the accuracy, the share not checked, the same by kind
    /// (docs/eval.md).
    CheckCitations {
        /// The labelled set, e.g. eval/citations/heldout.jsonl.
        set: std::path::PathBuf,
        /// The checker: lexical (offline: words, numbers, names, comparisons and a
        /// Chinese–English dictionary), or model (the configured model judges, eight pairs
        /// a call, as after an answer; offline where it gives no usable verdict).
        #[arg(long, value_enum, default_value_t = CheckKind::Lexical)]
        check: CheckKind,
        /// One JSON object per pair ({"id","label","verdict","kind"}), then one of totals.
        #[arg(long)]
        json: bool,
        /// One JSON object per pair with the features its verdict came from.
        #[arg(long)]
        explain: bool,
    },
    /// Accounts for CITED_AUTH=accounts: add, remove, set a password, list. Passwords are
    /// read from the terminal without echo, or as the first line piped to stdin.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// API keys for the OpenAI-compatible API (`Authorization: Bearer cited_…`): each
    /// answers for its user, with their rate limits, quota and conversations.
    Key {
        #[command(subcommand)]
        command: KeyCommand,
    },
    /// The conversations kept in the database (CITED_DATABASE_URL).
    History {
        #[command(subcommand)]
        command: HistoryCommand,
    },
    /// Read one file from stdin and print its passages as JSON, within the memory and time
    /// given: how the server parses added files, in a child process of its own.
    #[command(hide = true)]
    Extract {
        /// The file's name (its extension says how to read it).
        #[arg(long)]
        name: String,
        #[arg(long, default_value_t = 512)]
        memory_mb: u64,
        #[arg(long, default_value_t = 30)]
        secs: u64,
        #[arg(long, default_value_t = 10 << 20)]
        max_bytes: usize,
    },
}

#[derive(Subcommand)]
enum HistoryCommand {
    /// The newest conversations of every browser: id, last change, mode, title.
    List {
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// One conversation: its questions, answers and their states.
    Show { id: String },
    /// One conversation as Markdown with its reference lists (as the web page exports it),
    /// or the sources it cites for a reference manager (--format bib, ris or csl).
    Export {
        id: String,
        /// md (the default), bib, ris or csl.
        #[arg(long, default_value = "md", value_parser = ["md", "bib", "bibtex", "ris", "csl", "json"])]
        format: String,
    },
}

#[derive(Subcommand)]
enum UserCommand {
    /// Adds an account (asks for its password).
    Add { name: String },
    /// Removes an account with all its conversations.
    Remove { name: String },
    /// Sets a new password, signs the user out everywhere and revokes their API keys.
    Passwd { name: String },
    /// Lists the accounts.
    List,
}

#[derive(Subcommand)]
enum KeyCommand {
    /// Makes a key for a user and prints it (once: only its hash is kept).
    Add {
        user: String,
        #[arg(long, default_value = "")]
        label: String,
    },
    /// Lists a user's keys: id, created, label.
    List { user: String },
    /// Revokes a key by its id.
    Remove { id: String },
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum AskMode {
    Chat,
    Agent,
    Research,
}

impl From<AskMode> for Mode {
    fn from(mode: AskMode) -> Mode {
        match mode {
            AskMode::Chat => Mode::Chat,
            AskMode::Agent => Mode::Agent,
            AskMode::Research => Mode::Research,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CheckKind {
    Lexical,
    Model,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Switch {
    On,
    Off,
}

fn parse_focus(raw: &str) -> Result<cited::model::Focus, String> {
    cited::model::Focus::parse(raw)
        .ok_or_else(|| "one of web, academic, discussions, news, code".to_string())
}

fn parse_period(raw: &str) -> Result<cited::model::Period, String> {
    cited::model::Period::parse(raw).ok_or_else(|| "one of day, week, month, year".to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A file reader: limited before anything else runs (no runtime, no configuration).
    if let Some(Command::Extract {
        name,
        memory_mb,
        secs,
        max_bytes,
    }) = &cli.command
    {
        return cited::ssr::files::child::child_main(name, *memory_mb, *secs, *max_bytes);
    }
    let (config, warnings) = Config::from_env();
    start_logging(&config, &warnings);
    cited::ssr::net::install_crypto_provider();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            tracing::error!(%error, "cannot start the async runtime");
            return ExitCode::FAILURE;
        }
    };
    run(cli.command.unwrap_or(Command::Serve), config, &runtime)
}

/// Logs to stderr at `CITED_LOG`'s level, as text or one JSON object per line (with the
/// request span's fields, its id among them); the configuration's warnings first.
fn start_logging(config: &Config, warnings: &[cited::ssr::config::ConfigWarning]) {
    let logs = tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::new(&config.log))
        .with_writer(std::io::stderr);
    if config.log_json {
        logs.json()
            .with_current_span(true)
            .with_span_list(false)
            .init();
    } else {
        logs.init();
    }
    for warning in warnings {
        tracing::warn!("{warning}");
    }
}

/// Runs the command: the command table.
fn run(command: Command, config: Config, runtime: &tokio::runtime::Runtime) -> ExitCode {
    match command {
        Command::Serve => runtime.block_on(cli::serve(config)),
        Command::Doctor => runtime.block_on(cli::doctor(config)),
        Command::Config { markdown } => cli::config(&config, markdown),
        Command::Mcp { user } => runtime.block_on(cli::mcp(config, user)),
        Command::Ask {
            question,
            mode,
            search,
            json,
            focus,
            period,
            site,
            model,
            files,
            bare_markers,
        } => runtime.block_on(cli::ask(
            config,
            question,
            mode.into(),
            search == Switch::On,
            json,
            cli::Filters {
                focus,
                period,
                site,
                model,
                files,
            },
            cli::Output {
                live: std::io::IsTerminal::is_terminal(&std::io::stdout()),
                bare_markers,
            },
        )),
        Command::Eval {
            set,
            mode,
            concurrency,
            deadline,
            out,
            judge,
        } => {
            let mode = mode.into();
            let deadline = std::time::Duration::from_secs(deadline);
            runtime.block_on(cli::eval(
                config,
                set,
                mode,
                concurrency,
                deadline,
                out,
                judge,
            ))
        }
        Command::CheckCitations {
            set,
            check,
            json,
            explain,
        } => runtime.block_on(cli::check_citations(
            config,
            &set,
            check == CheckKind::Model,
            json,
            explain,
        )),
        Command::User { command } => runtime.block_on(cli::user(
            config,
            match command {
                UserCommand::Add { name } => cli::User::Add { name },
                UserCommand::Remove { name } => cli::User::Remove { name },
                UserCommand::Passwd { name } => cli::User::Passwd { name },
                UserCommand::List => cli::User::List,
            },
        )),
        Command::Key { command } => runtime.block_on(cli::key(
            config,
            match command {
                KeyCommand::Add { user, label } => cli::Key::Add { user, label },
                KeyCommand::List { user } => cli::Key::List { user },
                KeyCommand::Remove { id } => cli::Key::Remove { id },
            },
        )),
        Command::History { command } => runtime.block_on(match command {
            HistoryCommand::List { limit } => cli::history(config, cli::History::List { limit }),
            HistoryCommand::Show { id } => cli::history(config, cli::History::Show { id }),
            HistoryCommand::Export { id, format } => cli::history(
                config,
                cli::History::Export {
                    id,
                    // `md` is the Markdown export; anything else a citation format.
                    format: cited::citation::export::Format::parse(&format),
                },
            ),
        }),
        Command::Extract {
            name,
            memory_mb,
            secs,
            max_bytes,
        } => cited::ssr::files::child::child_main(&name, memory_mb, secs, max_bytes),
    }
}
