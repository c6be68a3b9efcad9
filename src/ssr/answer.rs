//! One answer, whatever the mode: begins a [`Turn`], runs the session's mode on it, and
//! finishes it (saved, `Done` sent) however the mode ended. The web (`/api/ask`) and the
//! command line (`cited ask`) both answer through [`run`].

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::model::{AnswerEvent, Exchange, Mode};
use crate::ssr::pipeline::{Turn, TurnInput};
use crate::ssr::session::Session;
use crate::ssr::state::AppState;
use crate::ssr::{agent, chat, research};

pub async fn run(
    state: AppState,
    session: Arc<Session>,
    input: TurnInput,
    cancel: CancellationToken,
    events: mpsc::Sender<AnswerEvent>,
) -> Exchange {
    let mode = input.mode;
    // A server shutting down stops the answer, which is then saved as stopped.
    let stop_on_shutdown = {
        let shutdown = state.shutdown.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move {
            shutdown.cancelled().await;
            cancel.cancel();
        })
    };
    let tracked = state.answers.token();
    let mut turn = Turn::begin(state, session, input, cancel, events).await;
    let outcome = match turn.admit().await {
        Err(halted) => Err(halted),
        Ok(_slots) => match mode {
            Mode::Chat => chat::run(&mut turn).await,
            Mode::Agent => agent::run(&mut turn).await,
            Mode::Research => research::run(&mut turn).await,
        },
    };
    let exchange = turn.finish(outcome).await;
    stop_on_shutdown.abort();
    drop(tracked);
    exchange
}
