//! The history of a browser's conversations: list and search, open, rename, delete (and
//! undo), share (and revoke), and a shared conversation for anyone with its link.

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::{ConversationView, History};

/// How many conversations the history list shows.
pub const HISTORY_LIMIT: u32 = 50;

/// The caller's conversations, newest first; with `query`, only those whose title,
/// questions or answers hold all its words.
#[server(prefix = "/api", endpoint = "history")]
pub async fn get_history(#[server(default)] query: Option<String>) -> Result<History, AppError> {
    use crate::ssr::request::{current, reject, state};

    let state = state()?;
    let now = crate::ssr::store::now_millis();
    let Some(session) = current() else {
        return Ok(History {
            now,
            ..History::default()
        });
    };
    let owner = session.owner();
    let query = query
        .map(|q| q.trim().to_string())
        .filter(|q| !q.is_empty());
    let found = match &query {
        Some(query) => state.store.search(&owner, query, HISTORY_LIMIT).await,
        None => state.store.list(&owner, HISTORY_LIMIT).await,
    };
    let conversations = found.map_err(|error| {
        tracing::error!(%error, "cannot read the history");
        reject(AppError::Internal)
    })?;
    Ok(History {
        now,
        query,
        current: session.conversation_id(),
        conversations,
        user: session.user.clone(),
    })
}

/// Opens one of the caller's conversations to read and continue it.
#[server(prefix = "/api", endpoint = "open_conversation")]
pub async fn open_conversation(id: String) -> Result<Option<ConversationView>, AppError> {
    use crate::ssr::request::{current, reject, remember, state};

    let state = state()?;
    let Some(session) = current() else {
        return Ok(None);
    };
    let owner = session.owner();
    let stored = state
        .store
        .conversation_latest(&owner, &id, crate::ssr::request::SESSION_EXCHANGES)
        .await
        .map_err(|error| {
            tracing::error!(%error, "cannot read a conversation");
            reject(AppError::Internal)
        })?;
    let Some(stored) = stored else {
        return Ok(None);
    };
    if session.conversation_id().as_deref() != Some(id.as_str()) {
        crate::ssr::request::stop_answer(&state, &session).await;
        session.open_conversation(
            id,
            stored.exchanges.clone(),
            stored.earlier,
            stored.registry,
        );
        remember(&state, &session).await;
    }
    Ok(Some(view_of(
        stored.summary,
        stored.exchanges,
        stored.earlier,
    )))
}

/// Renames one of the caller's conversations; returns whether it exists.
#[server(prefix = "/api", endpoint = "rename_conversation")]
pub async fn rename_conversation(id: String, title: String) -> Result<bool, AppError> {
    use crate::ssr::request::{current, reject, state};

    let title = title.trim().to_string();
    if title.is_empty() {
        let t = crate::ssr::request::request_lang().texts();
        return Err(reject(AppError::BadInput(t.title_empty.to_string())));
    }
    let Some(session) = current() else {
        return Ok(false);
    };
    state()?
        .store
        .rename(&session.owner(), &id, &title)
        .await
        .map_err(|error| {
            tracing::error!(%error, "cannot rename a conversation");
            reject(AppError::Internal)
        })
}

/// Deletes one of the caller's conversations, or restores it (`deleted = false`, the
/// undo); returns whether it exists.
#[server(prefix = "/api", endpoint = "delete_conversation")]
pub async fn delete_conversation(id: String, deleted: bool) -> Result<bool, AppError> {
    use crate::ssr::request::{current, reject, remember, state};

    let Some(session) = current() else {
        return Ok(false);
    };
    let state = state()?;
    if deleted && session.conversation_id().as_deref() == Some(id.as_str()) {
        crate::ssr::request::stop_answer(&state, &session).await;
        session.reset();
        remember(&state, &session).await;
    }
    state
        .store
        .set_deleted(&session.owner(), &id, deleted)
        .await
        .map_err(|error| {
            tracing::error!(%error, "cannot delete a conversation");
            reject(AppError::Internal)
        })
}

/// Shares one of the caller's conversations under a new unguessable link (`on`), or
/// revokes its link; returns the token now in force.
#[server(prefix = "/api", endpoint = "share_conversation")]
pub async fn share_conversation(id: String, on: bool) -> Result<Option<String>, AppError> {
    use crate::ssr::request::{current, reject, state};

    let Some(session) = current() else {
        return Ok(None);
    };
    let token = on.then(|| crate::ssr::session::SessionId::random().to_string());
    state()?
        .store
        .set_share(&session.owner(), &id, token.as_deref())
        .await
        .map_err(|error| {
            tracing::error!(%error, "cannot share a conversation");
            reject(AppError::Internal)
        })
}

/// A shared conversation, read-only, for anyone with the link.
#[server(prefix = "/api", endpoint = "shared")]
pub async fn get_shared(token: String) -> Result<Option<ConversationView>, AppError> {
    use crate::ssr::request::{reject, state};

    let stored = state()?
        .store
        .shared_latest(&token, crate::ssr::request::VIEW_EXCHANGES)
        .await
        .map_err(|error| {
            tracing::error!(%error, "cannot read a shared conversation");
            reject(AppError::Internal)
        })?;
    Ok(stored.map(|stored| view_of(stored.summary, stored.exchanges, stored.earlier)))
}

/// The exchanges of a conversation before position `before` (the `earlier` of the view
/// that shows it), a page at a time: one of the caller's conversations by `id`, or a
/// shared one by `token`. `None` for no such conversation.
#[server(prefix = "/api", endpoint = "earlier")]
pub async fn get_earlier(
    #[server(default)] id: Option<String>,
    #[server(default)] token: Option<String>,
    before: u32,
) -> Result<Option<ConversationView>, AppError> {
    use crate::ssr::request::{current, reject, state, VIEW_EXCHANGES};

    let store = &state()?.store;
    let page = match (id, token) {
        (Some(id), None) => match current() {
            Some(session) => {
                store
                    .earlier(&session.owner(), &id, before, VIEW_EXCHANGES)
                    .await
            }
            None => return Ok(None),
        },
        (None, Some(token)) => store.earlier_shared(&token, before, VIEW_EXCHANGES).await,
        _ => return Err(reject(AppError::BadInput("id or token, not both".into()))),
    };
    let page = page.map_err(|error| {
        tracing::error!(%error, "cannot read a conversation's earlier exchanges");
        reject(AppError::Internal)
    })?;
    Ok(page.map(|(exchanges, earlier)| ConversationView {
        summary: None,
        exchanges: exchanges
            .into_iter()
            .map(crate::citation::render::for_browser)
            .collect(),
        earlier,
    }))
}

/// What a page shows of a conversation: its latest [`VIEW_EXCHANGES`] exchanges, rendered,
/// and how many came before them.
///
/// [`VIEW_EXCHANGES`]: crate::ssr::request::VIEW_EXCHANGES
#[cfg(feature = "ssr")]
fn view_of(
    summary: crate::model::ConversationSummary,
    mut exchanges: Vec<crate::model::Exchange>,
    earlier: u32,
) -> ConversationView {
    let shown = crate::ssr::request::VIEW_EXCHANGES as usize;
    let hidden = exchanges.len().saturating_sub(shown);
    let exchanges = exchanges.split_off(hidden);
    ConversationView {
        summary: Some(summary),
        exchanges: exchanges
            .into_iter()
            .map(crate::citation::render::for_browser)
            .collect(),
        earlier: earlier.saturating_add(u32::try_from(hidden).unwrap_or(u32::MAX)),
    }
}
