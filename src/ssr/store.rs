//! Where conversations last: one repository over SQLite (the embedded default, a file
//! under the platform data folder, WAL mode) or PostgreSQL (`CITED_DATABASE_URL=postgres://…`),
//! through sqlx's `Any` driver so both run the same queries. The schema is created and
//! migrated when the store is first used ([`migrations`]).
//!
//! What is kept: browsers (their settings and current conversation), conversations (title,
//! mode, the citation registry, a share token) and their exchanges (question, answer, the
//! whole exchange as JSON, and its state). A question is written when its answer starts
//! (`answering`) and rewritten when it ends; [`Store::interrupt_unfinished`], run at start,
//! marks what a crash left `answering` as `interrupted`.
//!
//! Search: each conversation's titles, questions and answers as terms ([`crate::text::
//! search_terms`]: words, and Han characters and their pairs), matched with SQLite FTS5 or
//! PostgreSQL full-text search.

mod migrations;
mod users;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row};
use tokio::sync::OnceCell;

use crate::citation::Registry;
use crate::model::{ConversationSummary, Exchange, ExchangeState, Mode, Settings};
use crate::text::search_terms;

/// Which database is behind the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("stored data cannot be read: {0}")]
    Corrupt(#[from] serde_json::Error),
    #[error("CITED_DATABASE_URL must start with sqlite: or postgres://, not {0}")]
    Scheme(String),
    #[error("cannot create the folder {path} for the database: {source}")]
    Folder {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// A conversation with everything needed to show it and to continue it.
#[derive(Debug, Clone)]
pub struct StoredConversation {
    pub summary: ConversationSummary,
    pub exchanges: Vec<Exchange>,
    pub registry: Registry,
}

/// A browser's remembered state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredBrowser {
    pub settings: Settings,
    /// The conversation the browser is in, if it has asked anything since its last
    /// "new chat".
    pub conversation: Option<String>,
    /// The user it is signed in as (accounts or proxy sign-in).
    pub user: Option<String>,
}

/// A file attached to a conversation: its extracted passages as JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFile {
    pub id: String,
    pub name: String,
    pub size: i64,
    pub passages: String,
}

pub struct Store {
    pool: AnyPool,
    backend: Backend,
    migrated: OnceCell<()>,
}

/// The owner key of a user's conversations. Browser ids are hex and never hold a `:`, so
/// the two kinds of owner cannot collide.
pub fn owner_of_user(user: &str) -> String {
    format!("user:{user}")
}

/// Milliseconds since the Unix epoch.
/// A signed-in browser unused this long is signed out.
pub const SIGNED_IN_IDLE: Duration = Duration::from_secs(30 * 86_400);
/// A sign-in lasts at most this long, used or not.
pub const SIGNED_IN_FOR: Duration = Duration::from_secs(180 * 86_400);
/// How often a signed-in browser in use is marked as used.
const TOUCH_EVERY: Duration = Duration::from_secs(3600);

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Longest title kept, in characters.
const TITLE_CHARS: usize = 80;

/// A title from a question: its first line, cut at a word or character boundary.
pub fn title_from(question: &str) -> String {
    let line = question.lines().next().unwrap_or("").trim();
    if line.chars().count() <= TITLE_CHARS {
        return line.to_string();
    }
    let cut: String = line.chars().take(TITLE_CHARS).collect();
    format!("{}…", cut.trim_end())
}

fn state_name(state: ExchangeState) -> &'static str {
    match state {
        ExchangeState::Answering => "answering",
        ExchangeState::Done => "done",
        ExchangeState::Stopped => "stopped",
        ExchangeState::Failed => "failed",
        ExchangeState::Interrupted => "interrupted",
    }
}

fn state_of(name: &str) -> ExchangeState {
    match name {
        "answering" => ExchangeState::Answering,
        "stopped" => ExchangeState::Stopped,
        "failed" => ExchangeState::Failed,
        "interrupted" => ExchangeState::Interrupted,
        _ => ExchangeState::Done,
    }
}

fn summary(row: &AnyRow) -> Result<ConversationSummary, StoreError> {
    let mode: String = row.try_get("mode")?;
    Ok(ConversationSummary {
        id: row.try_get("id")?,
        title: row.try_get("title")?,
        mode: Mode::parse(&mode).unwrap_or_default(),
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        share_token: row.try_get("share_token")?,
    })
}

const SUMMARY_COLUMNS: &str = "id, title, mode, created_at, updated_at, share_token";

/// What [`Store::load_one`] reads, before its `WHERE`.
const LOAD: &str =
    "SELECT id, title, mode, created_at, updated_at, share_token, registry FROM conversations";

impl Store {
    /// A store for `url` (`sqlite:PATH`, `sqlite::memory:` or `postgres://…`). Nothing is
    /// connected yet: the first use connects and migrates (see [`Store::ready`]). Call it
    /// inside a Tokio runtime (the pool keeps its own background task).
    pub fn open(url: &str) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let (backend, url) = if let Some(rest) = url.strip_prefix("sqlite:") {
            let path = rest.trim_start_matches("//");
            if path != ":memory:" {
                let path = path.split('?').next().unwrap_or(path);
                if let Some(parent) = Path::new(path).parent() {
                    if !parent.as_os_str().is_empty() {
                        std::fs::create_dir_all(parent).map_err(|source| StoreError::Folder {
                            path: parent.display().to_string(),
                            source,
                        })?;
                    }
                }
            }
            let url = if path == ":memory:" || url.contains('?') {
                url.to_string()
            } else {
                format!("sqlite://{path}?mode=rwc")
            };
            (Backend::Sqlite, url)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            (Backend::Postgres, url.to_string())
        } else {
            return Err(StoreError::Scheme(url.to_string()));
        };
        let options = AnyConnectOptions::from_str(&url)?;
        // An in-memory SQLite database lives in one connection.
        let max = match (backend, url.contains(":memory:")) {
            (Backend::Sqlite, true) => 1,
            (Backend::Sqlite, false) => 4,
            (Backend::Postgres, _) => 8,
        };
        let mut pool = AnyPoolOptions::new()
            .max_connections(max)
            // A database that is down must not stall answers for long.
            .acquire_timeout(std::time::Duration::from_secs(3));
        if url.contains(":memory:") {
            // The one connection is the database: never let the pool close it.
            pool = pool
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None);
        }
        let pool = pool.connect_lazy_with(options);
        Ok(Store {
            pool,
            backend,
            migrated: OnceCell::new(),
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Connects and applies the migrations, once. Every other call does this first.
    pub async fn ready(&self) -> Result<(), StoreError> {
        self.migrated
            .get_or_try_init(|| migrations::apply(&self.pool, self.backend))
            .await
            .map(|_| ())
    }

    /// Closes every connection; what follows fails as with a database that went away.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// The database answers now (`SELECT 1`), not only once at start: for `/readyz`.
    pub async fn ping(&self) -> Result<(), StoreError> {
        self.ready().await?;
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    /// Marks every exchange still `answering` as `interrupted` (a crash or `kill -9` left
    /// it); returns how many. Run once at start, before serving, by an instance that shares
    /// the database with no other (with Redis, `ssr::shared`'s reaper does it instead).
    pub async fn interrupt_unfinished(&self) -> Result<u64, StoreError> {
        let answering = self.answering().await?;
        for (conversation, seq) in &answering {
            self.interrupt(conversation, *seq).await?;
        }
        Ok(answering.len() as u64)
    }

    /// Every exchange stored as being written: its conversation and position.
    pub async fn answering(&self) -> Result<Vec<(String, u32)>, StoreError> {
        self.ready().await?;
        let rows =
            sqlx::query("SELECT conversation_id, seq FROM exchanges WHERE state = 'answering'")
                .fetch_all(&self.pool)
                .await?;
        rows.iter()
            .map(|row| {
                let seq: i64 = row.try_get("seq")?;
                Ok((
                    row.try_get("conversation_id")?,
                    u32::try_from(seq).unwrap_or(u32::MAX),
                ))
            })
            .collect()
    }

    /// Marks one exchange `interrupted`, if it is still being written.
    pub async fn interrupt(&self, conversation: &str, seq: u32) -> Result<(), StoreError> {
        self.ready().await?;
        let row = sqlx::query(
            "SELECT data FROM exchanges WHERE conversation_id = $1 AND seq = $2 AND state = 'answering'",
        )
        .bind(conversation)
        .bind(i64::from(seq))
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(()) };
        let data: String = row.try_get("data")?;
        let mut exchange: Exchange = serde_json::from_str(&data)?;
        exchange.state = ExchangeState::Interrupted;
        exchange.done = true;
        sqlx::query("UPDATE exchanges SET state = 'interrupted', data = $1 WHERE conversation_id = $2 AND seq = $3 AND state = 'answering'")
            .bind(serde_json::to_string(&exchange)?)
            .bind(conversation)
            .bind(i64::from(seq))
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The secret called `name`: `fresh` stored the first time it is asked for, by whichever
    /// instance asks first; the same value for every instance after.
    pub async fn secret(&self, name: &str, fresh: &str) -> Result<String, StoreError> {
        self.ready().await?;
        sqlx::query(
            "INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(fresh)
        .execute(&self.pool)
        .await?;
        let row = sqlx::query("SELECT value FROM secrets WHERE name = $1")
            .bind(name)
            .fetch_one(&self.pool)
            .await?;
        Ok(row.try_get("value")?)
    }

    /// Attaches a file (its passages as JSON) to one of `owner`'s conversations; false when
    /// the conversation is not theirs (or deleted), or already holds `max` files.
    pub async fn add_file(
        &self,
        owner: &str,
        conversation: &str,
        file: &StoredFile,
        max: usize,
    ) -> Result<bool, StoreError> {
        self.ready().await?;
        let max = i64::try_from(max).unwrap_or(i64::MAX);
        let added = sqlx::query(
            "INSERT INTO files (id, conversation_id, name, size, passages, created_at) \
             SELECT $1, $2, $3, $4, $5, $6 WHERE EXISTS (SELECT 1 FROM conversations \
             WHERE id = $2 AND owner = $7 AND deleted_at IS NULL) \
             AND (SELECT COUNT(*) FROM files WHERE conversation_id = $2) < $8",
        )
        .bind(&file.id)
        .bind(conversation)
        .bind(&file.name)
        .bind(file.size)
        .bind(&file.passages)
        .bind(now_millis())
        .bind(owner)
        .bind(max)
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(added == 1)
    }

    /// The files of one of `owner`'s conversations, oldest first; none for a deleted one.
    /// The ids of a conversation's files, oldest first (what its file index is built of).
    /// Takes file `id` out of `owner`'s conversation; its name, or `None` when there is
    /// no such file there.
    pub async fn remove_file(
        &self,
        owner: &str,
        conversation: &str,
        id: &str,
    ) -> Result<Option<String>, StoreError> {
        self.ready().await?;
        let found = sqlx::query(
            "SELECT f.name FROM files f JOIN conversations c ON c.id = f.conversation_id \
             WHERE f.id = $1 AND f.conversation_id = $2 AND c.owner = $3 AND c.deleted_at IS NULL",
        )
        .bind(id)
        .bind(conversation)
        .bind(owner)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = found else {
            return Ok(None);
        };
        let name: String = row.try_get("name")?;
        let removed = sqlx::query("DELETE FROM files WHERE id = $1 AND conversation_id = $2")
            .bind(id)
            .bind(conversation)
            .execute(&self.pool)
            .await?
            .rows_affected();
        Ok((removed > 0).then_some(name))
    }

    pub async fn file_ids(
        &self,
        owner: &str,
        conversation: &str,
    ) -> Result<Vec<String>, StoreError> {
        self.ready().await?;
        let rows = sqlx::query(
            "SELECT f.id FROM files f JOIN conversations c ON c.id = f.conversation_id \
             WHERE f.conversation_id = $1 AND c.owner = $2 AND c.deleted_at IS NULL ORDER BY f.created_at, f.id",
        )
        .bind(conversation)
        .bind(owner)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|row| Ok(row.try_get("id")?)).collect()
    }

    pub async fn files(
        &self,
        owner: &str,
        conversation: &str,
    ) -> Result<Vec<StoredFile>, StoreError> {
        self.ready().await?;
        let rows = sqlx::query(
            "SELECT f.id, f.name, f.size, f.passages FROM files f JOIN conversations c ON c.id = f.conversation_id \
             WHERE f.conversation_id = $1 AND c.owner = $2 AND c.deleted_at IS NULL ORDER BY f.created_at, f.id",
        )
        .bind(conversation)
        .bind(owner)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(StoredFile {
                    id: row.try_get("id")?,
                    name: row.try_get("name")?,
                    size: row.try_get("size")?,
                    passages: row.try_get("passages")?,
                })
            })
            .collect()
    }

    /// A browser's stored state. A signed-in browser past its lifetimes
    /// ([`SIGNED_IN_IDLE`] unused, [`SIGNED_IN_FOR`] since it signed in) is signed out here
    /// (its row goes) and reads as unknown; one in use is marked as used (at most hourly).
    pub async fn browser(&self, id: &str) -> Result<Option<StoredBrowser>, StoreError> {
        self.ready().await?;
        let row = sqlx::query(
            "SELECT settings, conversation_id, user_name, updated_at, created_at FROM browsers WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let user: Option<String> = row.try_get("user_name")?;
        if user.is_some() {
            let now = now_millis();
            let used: i64 = row.try_get("updated_at")?;
            let began: Option<i64> = row.try_get("created_at")?;
            let began = began.unwrap_or(used);
            if now - used > millis(SIGNED_IN_IDLE) || now - began > millis(SIGNED_IN_FOR) {
                tracing::info!("a signed-in browser passed its lifetime; signed out");
                self.forget_browser(id).await?;
                return Ok(None);
            }
            if now - used > millis(TOUCH_EVERY) {
                sqlx::query("UPDATE browsers SET updated_at = $1 WHERE id = $2")
                    .bind(now)
                    .bind(id)
                    .execute(&self.pool)
                    .await?;
            }
        }
        let settings: String = row.try_get("settings")?;
        Ok(Some(StoredBrowser {
            settings: serde_json::from_str(&settings)?,
            conversation: row.try_get("conversation_id")?,
            user,
        }))
    }

    /// Signs out every browser past its lifetimes (the sweeper's part of
    /// [`Store::browser`]); how many.
    pub async fn expire_browsers(&self) -> Result<u64, StoreError> {
        self.ready().await?;
        let now = now_millis();
        let done = sqlx::query(
            "DELETE FROM browsers WHERE user_name IS NOT NULL \
             AND (updated_at < $1 OR COALESCE(created_at, updated_at) < $2)",
        )
        .bind(now - millis(SIGNED_IN_IDLE))
        .bind(now - millis(SIGNED_IN_FOR))
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }

    /// Makes a browser look unused for `idle` and signed in `age` ago (tests of lifetimes).
    #[cfg(test)]
    pub(crate) async fn age_browser(
        &self,
        id: &str,
        idle: Duration,
        age: Duration,
    ) -> Result<(), StoreError> {
        let now = now_millis();
        sqlx::query("UPDATE browsers SET updated_at = $1, created_at = $2 WHERE id = $3")
            .bind(now - millis(idle))
            .bind(now - millis(age))
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn save_browser(&self, id: &str, browser: &StoredBrowser) -> Result<(), StoreError> {
        self.ready().await?;
        sqlx::query(
            "INSERT INTO browsers (id, settings, conversation_id, updated_at, user_name, created_at) VALUES ($1, $2, $3, $4, $5, $4) \
             ON CONFLICT (id) DO UPDATE SET settings = excluded.settings, conversation_id = excluded.conversation_id, updated_at = excluded.updated_at",
        )
        .bind(id)
        .bind(serde_json::to_string(&browser.settings)?)
        .bind(browser.conversation.clone())
        .bind(now_millis())
        .bind(browser.user.clone())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Starts a conversation owned by `owner`.
    pub async fn create_conversation(
        &self,
        owner: &str,
        id: &str,
        title: &str,
        mode: Mode,
    ) -> Result<(), StoreError> {
        self.ready().await?;
        let now = now_millis();
        sqlx::query(
            "INSERT INTO conversations (id, owner, title, mode, registry, created_at, updated_at, search_body) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(id)
        .bind(owner)
        .bind(title)
        .bind(mode.as_str())
        .bind(serde_json::to_string(&Registry::new())?)
        .bind(now)
        .bind(now)
        .bind(search_terms(title).join(" "))
        .execute(&self.pool)
        .await?;
        self.index_logged(id).await;
        Ok(())
    }

    /// Writes a new exchange (its question, as the answer starts) at the end of the
    /// conversation; returns its position, which the store assigns.
    pub async fn begin_exchange(
        &self,
        conversation: &str,
        exchange: &Exchange,
    ) -> Result<u32, StoreError> {
        self.ready().await?;
        let now = now_millis();
        let data = serde_json::to_string(exchange)?;
        let mut tries = 0;
        let seq: i64 = loop {
            // The position and the row in one statement; two at once collide on the key and
            // the loser tries again.
            let inserted = sqlx::query(
                "INSERT INTO exchanges (conversation_id, seq, question, answer, state, data, created_at, updated_at) \
                 SELECT $1, COALESCE(MAX(seq) + 1, 0), $2, $3, $4, $5, $6, $7 FROM exchanges WHERE conversation_id = $8 \
                 RETURNING seq",
            )
            .bind(conversation)
            .bind(exchange.question.as_str())
            .bind(exchange.answer.as_str())
            .bind(state_name(exchange.state))
            .bind(data.as_str())
            .bind(now)
            .bind(now)
            .bind(conversation)
            .fetch_one(&self.pool)
            .await;
            match inserted {
                Ok(row) => break row.try_get("seq")?,
                Err(error) if tries < 3 => {
                    tracing::debug!(%error, "exchange position taken; trying again");
                    tries += 1;
                }
                Err(error) => return Err(error.into()),
            }
        };
        self.touch(conversation, exchange.mode, None).await?;
        self.index_logged(conversation).await;
        Ok(u32::try_from(seq).unwrap_or(u32::MAX))
    }

    /// Rewrites exchange `seq` as it ended and, when given, the conversation's registry.
    pub async fn finish_exchange(
        &self,
        conversation: &str,
        seq: u32,
        exchange: &Exchange,
        registry: Option<&Registry>,
    ) -> Result<(), StoreError> {
        self.ready().await?;
        sqlx::query(
            "UPDATE exchanges SET answer = $1, state = $2, data = $3, updated_at = $4 \
             WHERE conversation_id = $5 AND seq = $6",
        )
        .bind(exchange.answer.as_str())
        .bind(state_name(exchange.state))
        .bind(serde_json::to_string(exchange)?)
        .bind(now_millis())
        .bind(conversation)
        .bind(i64::from(seq))
        .execute(&self.pool)
        .await?;
        self.touch(conversation, exchange.mode, registry).await?;
        self.index_logged(conversation).await;
        Ok(())
    }

    /// Marks a conversation changed (its mode that of its last answer), with its registry
    /// when given.
    async fn touch(
        &self,
        conversation: &str,
        mode: Mode,
        registry: Option<&Registry>,
    ) -> Result<(), StoreError> {
        let now = now_millis();
        match registry {
            Some(registry) => {
                sqlx::query("UPDATE conversations SET updated_at = $1, mode = $2, registry = $3 WHERE id = $4")
                    .bind(now)
                    .bind(mode.as_str())
                    .bind(serde_json::to_string(registry)?)
                    .bind(conversation)
                    .execute(&self.pool)
                    .await?;
            }
            None => {
                sqlx::query("UPDATE conversations SET updated_at = $1, mode = $2 WHERE id = $3")
                    .bind(now)
                    .bind(mode.as_str())
                    .bind(conversation)
                    .execute(&self.pool)
                    .await?;
            }
        }
        Ok(())
    }

    /// Re-indexes a conversation; a failure only makes it harder to find, so it is logged.
    async fn index_logged(&self, conversation: &str) {
        if let Err(error) = self.index(conversation).await {
            tracing::warn!(%error, "cannot update a conversation's search terms");
        }
    }

    /// Rebuilds a conversation's search terms from its title, questions and answers.
    async fn index(&self, conversation: &str) -> Result<(), StoreError> {
        let title: Option<String> = sqlx::query("SELECT title FROM conversations WHERE id = $1")
            .bind(conversation)
            .fetch_optional(&self.pool)
            .await?
            .map(|row| row.try_get("title"))
            .transpose()?;
        let Some(title) = title else { return Ok(()) };
        let rows = sqlx::query(
            "SELECT question, answer FROM exchanges WHERE conversation_id = $1 ORDER BY seq",
        )
        .bind(conversation)
        .fetch_all(&self.pool)
        .await?;
        let mut text = title;
        for row in &rows {
            let question: String = row.try_get("question")?;
            let answer: String = row.try_get("answer")?;
            text.push('\n');
            text.push_str(&question);
            text.push('\n');
            text.push_str(&answer);
        }
        let body = search_terms(&text).join(" ");
        match self.backend {
            Backend::Postgres => {
                sqlx::query("UPDATE conversations SET search_body = $1 WHERE id = $2")
                    .bind(body)
                    .bind(conversation)
                    .execute(&self.pool)
                    .await?;
            }
            Backend::Sqlite => {
                sqlx::query("DELETE FROM conversation_search WHERE conversation_id = $1")
                    .bind(conversation)
                    .execute(&self.pool)
                    .await?;
                sqlx::query(
                    "INSERT INTO conversation_search (body, conversation_id) VALUES ($1, $2)",
                )
                .bind(body)
                .bind(conversation)
                .execute(&self.pool)
                .await?;
            }
        }
        Ok(())
    }

    /// The `limit` most recently updated conversations of `owner`, newest first.
    pub async fn list(
        &self,
        owner: &str,
        limit: u32,
    ) -> Result<Vec<ConversationSummary>, StoreError> {
        self.ready().await?;
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS} FROM conversations WHERE owner = $1 AND deleted_at IS NULL \
             ORDER BY updated_at DESC, id DESC LIMIT $2"
        );
        let rows = sqlx::query(&sql)
            .bind(owner)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(summary).collect()
    }

    /// `owner`'s conversations whose title, questions or answers hold every term of
    /// `query`, newest first.
    pub async fn search(
        &self,
        owner: &str,
        query: &str,
        limit: u32,
    ) -> Result<Vec<ConversationSummary>, StoreError> {
        self.ready().await?;
        let terms = search_terms(query);
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let rows = match self.backend {
            Backend::Sqlite => {
                // Every term quoted: no input is FTS5 syntax.
                let matched: Vec<String> = terms
                    .iter()
                    .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
                    .collect();
                let sql = format!(
                    "SELECT {} FROM conversation_search s JOIN conversations c ON c.id = s.conversation_id \
                     WHERE conversation_search MATCH $1 AND c.owner = $2 AND c.deleted_at IS NULL \
                     ORDER BY c.updated_at DESC, c.id DESC LIMIT $3",
                    SUMMARY_COLUMNS
                        .split(", ")
                        .map(|c| format!("c.{c}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                sqlx::query(&sql)
                    .bind(matched.join(" "))
                    .bind(owner)
                    .bind(i64::from(limit))
                    .fetch_all(&self.pool)
                    .await?
            }
            Backend::Postgres => {
                let sql = format!(
                    "SELECT {SUMMARY_COLUMNS} FROM conversations WHERE owner = $1 AND deleted_at IS NULL \
                     AND to_tsvector('simple', search_body) @@ plainto_tsquery('simple', $2) \
                     ORDER BY updated_at DESC, id DESC LIMIT $3"
                );
                sqlx::query(&sql)
                    .bind(owner)
                    .bind(terms.join(" "))
                    .bind(i64::from(limit))
                    .fetch_all(&self.pool)
                    .await?
            }
        };
        rows.iter().map(summary).collect()
    }

    /// The title of one of `owner`'s conversations, if it has it.
    pub async fn title(&self, owner: &str, id: &str) -> Result<Option<String>, StoreError> {
        self.ready().await?;
        let row = sqlx::query(
            "SELECT title FROM conversations WHERE id = $1 AND owner = $2 AND deleted_at IS NULL",
        )
        .bind(id)
        .bind(owner)
        .fetch_optional(&self.pool)
        .await?;
        Ok(match row {
            Some(row) => Some(row.try_get("title")?),
            None => None,
        })
    }

    /// One of `owner`'s conversations with its exchanges and registry.
    pub async fn conversation(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Option<StoredConversation>, StoreError> {
        let sql = format!("{LOAD} WHERE id = $1 AND owner = $2 AND deleted_at IS NULL");
        self.load_one(sqlx::query(&sql).bind(id).bind(owner)).await
    }

    /// Every browser's conversations, newest first (the command line's view, as the
    /// instance's operator), with their owners.
    pub async fn list_all(
        &self,
        limit: u32,
    ) -> Result<Vec<(String, ConversationSummary)>, StoreError> {
        self.ready().await?;
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS}, owner FROM conversations WHERE deleted_at IS NULL \
             ORDER BY updated_at DESC, id DESC LIMIT $1"
        );
        let rows = sqlx::query(&sql)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|row| Ok((row.try_get("owner")?, summary(row)?)))
            .collect()
    }

    /// Any conversation by its id (the command line's view).
    pub async fn conversation_by_id(
        &self,
        id: &str,
    ) -> Result<Option<StoredConversation>, StoreError> {
        let sql = format!("{LOAD} WHERE id = $1 AND deleted_at IS NULL");
        self.load_one(sqlx::query(&sql).bind(id)).await
    }

    /// Writes whole conversations at once, in one transaction (imports and benchmarks).
    pub async fn insert_conversations(
        &self,
        owner: &str,
        conversations: &[StoredConversation],
    ) -> Result<(), StoreError> {
        self.ready().await?;
        let mut tx = self.pool.begin().await?;
        for conversation in conversations {
            let summary = &conversation.summary;
            let mut text = summary.title.clone();
            sqlx::query(
            "INSERT INTO conversations (id, owner, title, mode, registry, created_at, updated_at, search_body) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, '')",
        )
        .bind(summary.id.as_str())
        .bind(owner)
        .bind(summary.title.as_str())
        .bind(summary.mode.as_str())
        .bind(serde_json::to_string(&conversation.registry)?)
        .bind(summary.created_at)
        .bind(summary.updated_at)
        .execute(&mut *tx)
        .await?;
            for (seq, exchange) in conversation.exchanges.iter().enumerate() {
                sqlx::query(
                "INSERT INTO exchanges (conversation_id, seq, question, answer, state, data, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(summary.id.as_str())
            .bind(i64::try_from(seq).unwrap_or(i64::MAX))
            .bind(exchange.question.as_str())
            .bind(exchange.answer.as_str())
            .bind(state_name(exchange.state))
            .bind(serde_json::to_string(exchange)?)
            .bind(summary.updated_at)
            .bind(summary.updated_at)
            .execute(&mut *tx)
            .await?;
                text.push('\n');
                text.push_str(&exchange.question);
                text.push('\n');
                text.push_str(&exchange.answer);
            }
            let body = search_terms(&text).join(" ");
            match self.backend {
                Backend::Postgres => {
                    sqlx::query("UPDATE conversations SET search_body = $1 WHERE id = $2")
                        .bind(body)
                        .bind(summary.id.as_str())
                        .execute(&mut *tx)
                        .await?;
                }
                Backend::Sqlite => {
                    sqlx::query(
                        "INSERT INTO conversation_search (body, conversation_id) VALUES ($1, $2)",
                    )
                    .bind(body)
                    .bind(summary.id.as_str())
                    .execute(&mut *tx)
                    .await?;
                }
            }
        }
        tx.commit().await?;
        Ok(())
    }

    /// Deletes everything a browser kept: its conversations, their exchanges and search
    /// terms, and its settings.
    pub async fn forget_owner(&self, owner: &str) -> Result<(), StoreError> {
        self.ready().await?;
        let mut tx = self.pool.begin().await?;
        sqlx::query("DELETE FROM exchanges WHERE conversation_id IN (SELECT id FROM conversations WHERE owner = $1)")
            .bind(owner)
            .execute(&mut *tx)
            .await?;
        if self.backend == Backend::Sqlite {
            sqlx::query("DELETE FROM conversation_search WHERE conversation_id IN (SELECT id FROM conversations WHERE owner = $1)")
                .bind(owner)
                .execute(&mut *tx)
                .await?;
        }
        sqlx::query("DELETE FROM files WHERE conversation_id IN (SELECT id FROM conversations WHERE owner = $1)")
            .bind(owner)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM conversations WHERE owner = $1")
            .bind(owner)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM browsers WHERE id = $1")
            .bind(owner)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Bytes the database takes on disk (SQLite: the file and its WAL; PostgreSQL: cited's
    /// tables with their indexes).
    pub async fn size_bytes(&self) -> Result<i64, StoreError> {
        self.ready().await?;
        let sql = match self.backend {
            Backend::Sqlite => "SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()",
            Backend::Postgres => "SELECT (pg_total_relation_size('conversations') + pg_total_relation_size('exchanges') \
                                  + pg_total_relation_size('browsers'))::BIGINT AS bytes",
        };
        Ok(sqlx::query(sql)
            .fetch_one(&self.pool)
            .await?
            .try_get("bytes")?)
    }

    /// A shared conversation, for anyone with its token.
    pub async fn shared(&self, token: &str) -> Result<Option<StoredConversation>, StoreError> {
        let sql = format!("{LOAD} WHERE share_token = $1 AND deleted_at IS NULL");
        self.load_one(sqlx::query(&sql).bind(token)).await
    }

    /// The conversation a query over [`LOAD`] selects, with its exchanges.
    async fn load_one<'q>(
        &self,
        query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    ) -> Result<Option<StoredConversation>, StoreError> {
        self.ready().await?;
        match query.fetch_optional(&self.pool).await? {
            Some(row) => self.load(&row).await.map(Some),
            None => Ok(None),
        }
    }

    async fn load(&self, row: &AnyRow) -> Result<StoredConversation, StoreError> {
        let summary = summary(row)?;
        let registry: String = row.try_get("registry")?;
        let rows = sqlx::query(
            "SELECT data, state FROM exchanges WHERE conversation_id = $1 ORDER BY seq",
        )
        .bind(summary.id.as_str())
        .fetch_all(&self.pool)
        .await?;
        let mut exchanges = Vec::with_capacity(rows.len());
        for row in &rows {
            let data: String = row.try_get("data")?;
            let state: String = row.try_get("state")?;
            let mut exchange: Exchange = serde_json::from_str(&data)?;
            exchange.state = state_of(&state);
            exchanges.push(exchange);
        }
        Ok(StoredConversation {
            summary,
            exchanges,
            registry: serde_json::from_str(&registry)?,
        })
    }

    /// Renames one of `owner`'s conversations; false when there is no such conversation.
    pub async fn rename(&self, owner: &str, id: &str, title: &str) -> Result<bool, StoreError> {
        self.retitle(owner, id, title, None).await
    }

    /// Renames a conversation only while its title is still `from` (a model's title never
    /// overwrites one the user chose meanwhile).
    pub async fn rename_if(
        &self,
        owner: &str,
        id: &str,
        from: &str,
        to: &str,
    ) -> Result<bool, StoreError> {
        self.retitle(owner, id, to, Some(from)).await
    }

    async fn retitle(
        &self,
        owner: &str,
        id: &str,
        to: &str,
        from: Option<&str>,
    ) -> Result<bool, StoreError> {
        self.ready().await?;
        let done = sqlx::query(
            "UPDATE conversations SET title = $1 WHERE id = $2 AND owner = $3 AND deleted_at IS NULL \
             AND title = COALESCE($4, title)",
        )
        .bind(title_from(to))
        .bind(id)
        .bind(owner)
        .bind(from)
        .execute(&self.pool)
        .await?
        .rows_affected()
            > 0;
        if done {
            self.index_logged(id).await;
        }
        Ok(done)
    }

    /// Sets which conversation a browser is in (its settings untouched; defaults for a
    /// browser not stored yet).
    pub async fn set_browser_conversation(
        &self,
        id: &str,
        conversation: Option<&str>,
    ) -> Result<(), StoreError> {
        self.ready().await?;
        sqlx::query(
            "INSERT INTO browsers (id, settings, conversation_id, updated_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (id) DO UPDATE SET conversation_id = excluded.conversation_id, updated_at = excluded.updated_at",
        )
        .bind(id)
        .bind(serde_json::to_string(&Settings::default())?)
        .bind(conversation)
        .bind(now_millis())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// [`Store::set_browser_conversation`] for a signed-in browser: an update only, so a
    /// browser that signed out (its row deleted) is not brought back by an answer that was
    /// still running.
    pub async fn update_browser_conversation(
        &self,
        id: &str,
        conversation: Option<&str>,
    ) -> Result<(), StoreError> {
        self.ready().await?;
        sqlx::query("UPDATE browsers SET conversation_id = $2, updated_at = $3 WHERE id = $1")
            .bind(id)
            .bind(conversation)
            .bind(now_millis())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Saves an existing browser's settings and conversation; false when the browser is
    /// gone (signed out), which this never undoes.
    pub async fn update_browser(
        &self,
        id: &str,
        browser: &StoredBrowser,
    ) -> Result<bool, StoreError> {
        self.ready().await?;
        let done = sqlx::query(
            "UPDATE browsers SET settings = $2, conversation_id = $3, updated_at = $4 WHERE id = $1",
        )
        .bind(id)
        .bind(serde_json::to_string(&browser.settings)?)
        .bind(browser.conversation.clone())
        .bind(now_millis())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Deletes (`deleted = true`) or restores one of `owner`'s conversations. A deleted
    /// conversation is hidden everywhere, its share link included, until restored.
    pub async fn set_deleted(
        &self,
        owner: &str,
        id: &str,
        deleted: bool,
    ) -> Result<bool, StoreError> {
        self.ready().await?;
        let at = deleted.then(now_millis);
        Ok(
            sqlx::query("UPDATE conversations SET deleted_at = $1 WHERE id = $2 AND owner = $3")
                .bind(at)
                .bind(id)
                .bind(owner)
                .execute(&self.pool)
                .await?
                .rows_affected()
                > 0,
        )
    }

    /// Sets (a new unguessable token) or clears the share link of one of `owner`'s
    /// conversations; returns the token now in force.
    pub async fn set_share(
        &self,
        owner: &str,
        id: &str,
        token: Option<&str>,
    ) -> Result<Option<String>, StoreError> {
        self.ready().await?;
        sqlx::query("UPDATE conversations SET share_token = $1 WHERE id = $2 AND owner = $3 AND deleted_at IS NULL")
            .bind(token)
            .bind(id)
            .bind(owner)
            .execute(&self.pool)
            .await?;
        Ok(self
            .conversation(owner, id)
            .await?
            .and_then(|c| c.summary.share_token))
    }
}
