//! `AppError`: the one place that decides what a user sees when something goes wrong.
//!
//! Subsystems keep their own detailed error enums and log where the error is born; the
//! conversion into `AppError` is pure mapping. Every message here is written for the person
//! using the app, never raw upstream text.

use serde::{Deserialize, Serialize};
use server_fn::codec::JsonEncoding;
use server_fn::error::{FromServerFnError, ServerFnErrorErr};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum AppError {
    /// The browser's session cookie is missing or has expired; a reload starts a new one.
    #[error("your session has expired: reload the page to start a new one")]
    NoSession,
    #[error("{0}")]
    BadInput(String),
    #[error("something went wrong on the server; the details are in its log")]
    Internal,
    /// The request never reached the server function, or its answer could not be read.
    #[error("could not reach the cited server: {0}")]
    Transport(String),
}

impl FromServerFnError for AppError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> AppError {
        AppError::Transport(value.to_string())
    }
}
