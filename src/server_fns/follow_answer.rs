use leptos::prelude::*;
use server_fn::codec::{ByteStream, Streaming};

use crate::error::AppError;

/// Follows the browser's latest answer from its event `from` on (0: from the start): what
/// a refreshed page, a second tab or a browser on another instance calls to catch up with
/// an answer being written, then to receive the rest as it comes, framed like `ask`'s. The
/// stream is empty when the browser has no answer to follow (`running`: no answer still
/// being written).
#[server(prefix = "/api", endpoint = "follow", output = Streaming)]
pub async fn follow_answer(
    from: Option<u32>,
    running: Option<bool>,
) -> Result<ByteStream<AppError>, AppError> {
    use futures_util::StreamExt;

    let state = crate::ssr::request::state()?;
    let Some(session) = crate::ssr::request::current() else {
        return Ok(ByteStream::new(futures_util::stream::empty::<
            Result<bytes::Bytes, AppError>,
        >()));
    };
    let from = usize::try_from(from.unwrap_or(0)).unwrap_or(usize::MAX);
    let events = state
        .log
        .follow(&session.id.to_string(), from, running.unwrap_or(false))
        .await
        .unwrap_or_else(|| Box::pin(futures_util::stream::empty()));
    let open = crate::ssr::metrics::OpenStream::new();
    // Each event on its line, with the patches that render the answer for the browser,
    // gzipped when the browser takes it.
    let lines = crate::ssr::framing::lines(events);
    let body = crate::ssr::framing::body(lines, crate::ssr::request::gzip_stream());
    Ok(ByteStream::new(body.map(move |chunk| {
        let _open = &open;
        Ok::<_, AppError>(chunk)
    })))
}
