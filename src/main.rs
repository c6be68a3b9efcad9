//! The `cited` binary: `cited` (or `cited serve`) runs the web app.

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
    match serve::run(listener, AppState::new(config), serve::shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "the server stopped with an error");
            ExitCode::FAILURE
        }
    }
}
