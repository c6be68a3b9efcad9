//! The `cited` binary: `cited` (or `cited serve`) runs the web app; `cited doctor` checks
//! SearXNG and the model endpoint.

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let (config, warnings) = Config::from_env();
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::new(&config.log))
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
    match serve::run(listener, state, serve::shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "the server stopped with an error");
            ExitCode::FAILURE
        }
    }
}
