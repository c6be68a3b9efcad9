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
    /// The request itself is wrong (empty or too long a question, an unknown value).
    #[error("{0}")]
    BadInput(String),
    /// The session is still writing an answer; the message says to wait or stop it.
    #[error("{0}")]
    Busy(String),
    /// Over a rate limit; the message says when to try again.
    #[error("{0}")]
    TooMany(String),
    /// The user's stored conversations reached their quota; the message says what to do.
    #[error("{0}")]
    QuotaFull(String),
    #[error("something went wrong on the server; the details are in its log")]
    Internal,
    /// The request never reached the server function, or its answer could not be read.
    #[error("could not reach the cited server: {0}")]
    Transport(String),
}

impl AppError {
    /// The HTTP status this error answers with: the one place that decides it.
    pub fn status(&self) -> u16 {
        match self {
            AppError::NoSession => 401,
            AppError::BadInput(_) => 400,
            AppError::Busy(_) => 409,
            AppError::TooMany(_) => 429,
            AppError::QuotaFull(_) => 507,
            AppError::Internal => 500,
            AppError::Transport(_) => 502,
        }
    }
}

impl FromServerFnError for AppError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> AppError {
        AppError::Transport(value.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_has_its_status() {
        assert_eq!(AppError::NoSession.status(), 401);
        assert_eq!(AppError::BadInput("x".into()).status(), 400);
        assert_eq!(AppError::Busy("x".into()).status(), 409);
        assert_eq!(AppError::TooMany("x".into()).status(), 429);
        assert_eq!(AppError::QuotaFull("x".into()).status(), 507);
        assert_eq!(AppError::Internal.status(), 500);
        assert_eq!(AppError::Transport("x".into()).status(), 502);
    }
}
