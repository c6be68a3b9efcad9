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
//! Search: each conversation's title and each exchange's question and answer as terms
//! ([`crate::text::search_terms`]: words, and Han characters and their pairs), one row per
//! exchange written as that exchange is, matched with SQLite FTS5 or PostgreSQL full-text
//! search; a conversation matches when its rows together hold every term.
//!
//! Nothing a question does grows with the history: the exchange's own search row, the
//! owner's usage as a counter ([`Store::owner_bytes`]), and views that read the latest
//! exchanges ([`Store::conversation_latest`], [`Store::earlier`]).

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
    /// Exchanges before the first of `exchanges` that were not read (0 when whole).
    pub earlier: u32,
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

/// The search row of a conversation's title (exchanges have theirs at their position).
const TITLE_ROW: i64 = -1;

/// Most terms of a query matched; more would only narrow what the first ones find.
const QUERY_TERMS: usize = 16;

/// Bytes an exchange counts for in the storage quota.
fn exchange_bytes(exchange: &Exchange, data: &str) -> i64 {
    i64::try_from(exchange.question.len() + exchange.answer.len() + data.len()).unwrap_or(i64::MAX)
}

/// Adds `delta` bytes to the usage of the owner of `conversation`.
async fn add_usage(
    connection: &mut sqlx::AnyConnection,
    conversation: &str,
    delta: i64,
) -> Result<(), StoreError> {
    if delta == 0 {
        return Ok(());
    }
    sqlx::query(
        "INSERT INTO owner_usage (owner, bytes) SELECT owner, $1 FROM conversations WHERE id = $2 \
         ON CONFLICT (owner) DO UPDATE SET bytes = owner_usage.bytes + excluded.bytes",
    )
    .bind(delta)
    .bind(conversation)
    .execute(&mut *connection)
    .await?;
    Ok(())
}

/// Moves the usage of the owner of `conversation` from exchange `seq`'s stored size to
/// `bytes`, when that exchange exists (and matches `also`, more SQL conditions on it). A
/// write, so it can open a transaction.
async fn resize_usage(
    connection: &mut sqlx::AnyConnection,
    conversation: &str,
    seq: u32,
    bytes: i64,
    also: &str,
) -> Result<(), StoreError> {
    let sql = format!(
        "INSERT INTO owner_usage (owner, bytes) \
         SELECT c.owner, $1 - e.bytes FROM conversations c JOIN exchanges e ON e.conversation_id = c.id \
         WHERE c.id = $2 AND e.seq = $3{also} \
         ON CONFLICT (owner) DO UPDATE SET bytes = owner_usage.bytes + excluded.bytes"
    );
    sqlx::query(&sql)
        .bind(bytes)
        .bind(conversation)
        .bind(i64::from(seq))
        .execute(&mut *connection)
        .await?;
    Ok(())
}

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
        if backend == Backend::Sqlite {
            // A COMMIT that failed (a full disk, an I/O error) can leave its transaction
            // open, holding SQLite's write lock for as long as the connection lives: every
            // later write would be "database is locked". Nothing goes back to the pool
            // inside a transaction (without one, this ROLLBACK fails harmlessly).
            pool = pool.after_release(|connection, _| {
                Box::pin(async move {
                    let _ = sqlx::query("ROLLBACK").execute(&mut *connection).await;
                    Ok(true)
                })
            });
        }
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
        let data = serde_json::to_string(&exchange)?;
        let bytes = exchange_bytes(&exchange, &data);
        let mut tx = self.pool.begin().await?;
        resize_usage(
            &mut tx,
            conversation,
            seq,
            bytes,
            " AND e.state = 'answering'",
        )
        .await?;
        sqlx::query("UPDATE exchanges SET state = 'interrupted', data = $1, bytes = $2 WHERE conversation_id = $3 AND seq = $4 AND state = 'answering'")
            .bind(data)
            .bind(bytes)
            .bind(conversation)
            .bind(i64::from(seq))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
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
        let bytes = i64::try_from(file.passages.len()).unwrap_or(i64::MAX);
        let mut tx = self.pool.begin().await?;
        let added = sqlx::query(
            "INSERT INTO files (id, conversation_id, name, size, passages, created_at, bytes) \
             SELECT $1, $2, $3, $4, $5, $6, $9 WHERE EXISTS (SELECT 1 FROM conversations \
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
        .bind(bytes)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if added == 1 {
            add_usage(&mut tx, conversation, bytes).await?;
        }
        tx.commit().await?;
        Ok(added == 1)
    }

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
            "SELECT f.name, f.bytes FROM files f JOIN conversations c ON c.id = f.conversation_id \
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
        let bytes: i64 = row.try_get("bytes")?;
        let mut tx = self.pool.begin().await?;
        let removed = sqlx::query("DELETE FROM files WHERE id = $1 AND conversation_id = $2")
            .bind(id)
            .bind(conversation)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if removed > 0 {
            add_usage(&mut tx, conversation, -bytes).await?;
        }
        tx.commit().await?;
        Ok((removed > 0).then_some(name))
    }

    /// The ids of a conversation's files, oldest first (what its file index is built of).
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

    /// The files of one of `owner`'s conversations, oldest first; none for a deleted one.
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
            "INSERT INTO conversations (id, owner, title, mode, registry, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(id)
        .bind(owner)
        .bind(title)
        .bind(mode.as_str())
        .bind(serde_json::to_string(&Registry::new())?)
        .bind(now)
        .bind(now)
        .execute(&self.pool)
        .await?;
        self.index_logged(id, TITLE_ROW, title.to_string()).await;
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
        let bytes = exchange_bytes(exchange, &data);
        let mut tries = 0;
        let seq: i64 = loop {
            // The position and the row in one statement; two at once collide on the key and
            // the loser tries again.
            let mut tx = self.pool.begin().await?;
            let inserted = sqlx::query(
                "INSERT INTO exchanges (conversation_id, seq, question, answer, state, data, created_at, updated_at, bytes) \
                 SELECT $1, COALESCE(MAX(seq) + 1, 0), $2, $3, $4, $5, $6, $7, $9 FROM exchanges WHERE conversation_id = $8 \
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
            .bind(bytes)
            .fetch_one(&mut *tx)
            .await;
            match inserted {
                Ok(row) => {
                    let seq = row.try_get("seq")?;
                    add_usage(&mut tx, conversation, bytes).await?;
                    tx.commit().await?;
                    break seq;
                }
                Err(error) if tries < 3 => {
                    tracing::debug!(%error, "exchange position taken; trying again");
                    tries += 1;
                }
                Err(error) => return Err(error.into()),
            }
        };
        self.touch(conversation, exchange.mode, None).await?;
        self.index_logged(conversation, seq, exchange_text(exchange))
            .await;
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
        let data = serde_json::to_string(exchange)?;
        let bytes = exchange_bytes(exchange, &data);
        let mut tx = self.pool.begin().await?;
        // The usage first: a transaction that begins by writing takes SQLite's write lock
        // at once (one that read first could not upgrade past another writer).
        resize_usage(&mut tx, conversation, seq, bytes, "").await?;
        sqlx::query(
            "UPDATE exchanges SET answer = $1, state = $2, data = $3, updated_at = $4, bytes = $5 \
             WHERE conversation_id = $6 AND seq = $7",
        )
        .bind(exchange.answer.as_str())
        .bind(state_name(exchange.state))
        .bind(data)
        .bind(now_millis())
        .bind(bytes)
        .bind(conversation)
        .bind(i64::from(seq))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        self.touch(conversation, exchange.mode, registry).await?;
        self.index_logged(conversation, i64::from(seq), exchange_text(exchange))
            .await;
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

    /// Writes one search row (the title's, or an exchange's); a failure only makes the
    /// conversation harder to find, so it is logged. The terms are found off the async
    /// workers.
    async fn index_logged(&self, conversation: &str, seq: i64, text: String) {
        let body = match tokio::task::spawn_blocking(move || search_terms(&text).join(" ")).await {
            Ok(body) => body,
            Err(error) => {
                tracing::warn!(%error, "cannot find a conversation's search terms");
                return;
            }
        };
        if let Err(error) = self.index(conversation, seq, &body).await {
            tracing::warn!(%error, "cannot update a conversation's search terms");
        }
    }

    /// Replaces search row `seq` of a conversation with `body`.
    async fn index(&self, conversation: &str, seq: i64, body: &str) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        write_search_row(&mut tx, self.backend, conversation, seq, body).await?;
        tx.commit().await?;
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
        let mut terms = search_terms(query);
        let mut seen = std::collections::HashSet::new();
        terms.retain(|term| seen.insert(term.clone()));
        terms.truncate(QUERY_TERMS);
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        // The conversations with each term in some row, intersected: every term somewhere.
        let each = |n: usize| match self.backend {
            Backend::Sqlite => format!(
                "SELECT r.conversation_id FROM search_rows r WHERE r.id IN \
                 (SELECT rowid FROM exchange_search WHERE exchange_search MATCH ${n})"
            ),
            Backend::Postgres => format!(
                "SELECT conversation_id FROM exchange_search \
                 WHERE terms @@ plainto_tsquery('simple', ${n})"
            ),
        };
        let matching = (0..terms.len())
            .map(|i| each(i + 3))
            .collect::<Vec<_>>()
            .join(" INTERSECT ");
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS} FROM conversations WHERE owner = $1 AND deleted_at IS NULL \
             AND id IN ({matching}) ORDER BY updated_at DESC, id DESC LIMIT $2"
        );
        let mut select = sqlx::query(&sql).bind(owner).bind(i64::from(limit));
        for term in &terms {
            select = match self.backend {
                // Quoted: no input is FTS5 syntax.
                Backend::Sqlite => select.bind(format!("\"{}\"", term.replace('"', "\"\""))),
                Backend::Postgres => select.bind(term.clone()),
            };
        }
        let rows = select.fetch_all(&self.pool).await?;
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
            sqlx::query(
                "INSERT INTO conversations (id, owner, title, mode, registry, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
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
            let title = search_terms(&summary.title).join(" ");
            write_search_row(&mut tx, self.backend, &summary.id, TITLE_ROW, &title).await?;
            let mut total = 0;
            for (seq, exchange) in conversation.exchanges.iter().enumerate() {
                let seq = i64::try_from(seq).unwrap_or(i64::MAX);
                let data = serde_json::to_string(exchange)?;
                let bytes = exchange_bytes(exchange, &data);
                total += bytes;
                sqlx::query(
                    "INSERT INTO exchanges (conversation_id, seq, question, answer, state, data, created_at, updated_at, bytes) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                )
                .bind(summary.id.as_str())
                .bind(seq)
                .bind(exchange.question.as_str())
                .bind(exchange.answer.as_str())
                .bind(state_name(exchange.state))
                .bind(data)
                .bind(summary.updated_at)
                .bind(summary.updated_at)
                .bind(bytes)
                .execute(&mut *tx)
                .await?;
                let body = search_terms(&exchange_text(exchange)).join(" ");
                write_search_row(&mut tx, self.backend, &summary.id, seq, &body).await?;
            }
            add_usage(&mut tx, &summary.id, total).await?;
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
        match self.backend {
            Backend::Sqlite => {
                sqlx::query(
                    "DELETE FROM exchange_search WHERE rowid IN (SELECT r.id FROM search_rows r \
                     JOIN conversations c ON c.id = r.conversation_id WHERE c.owner = $1)",
                )
                .bind(owner)
                .execute(&mut *tx)
                .await?;
                sqlx::query("DELETE FROM search_rows WHERE conversation_id IN (SELECT id FROM conversations WHERE owner = $1)")
                    .bind(owner)
                    .execute(&mut *tx)
                    .await?;
            }
            Backend::Postgres => {
                sqlx::query("DELETE FROM exchange_search WHERE conversation_id IN (SELECT id FROM conversations WHERE owner = $1)")
                    .bind(owner)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        sqlx::query("DELETE FROM owner_usage WHERE owner = $1")
            .bind(owner)
            .execute(&mut *tx)
            .await?;
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

    /// A shared conversation with only its latest `n` exchanges, for anyone with its token.
    pub async fn shared_latest(
        &self,
        token: &str,
        n: u32,
    ) -> Result<Option<StoredConversation>, StoreError> {
        let sql = format!("{LOAD} WHERE share_token = $1 AND deleted_at IS NULL");
        self.load_page(sqlx::query(&sql).bind(token), Some(n)).await
    }

    /// One of `owner`'s conversations with only its latest `n` exchanges (and how many came
    /// before): what opening it shows and continues.
    pub async fn conversation_latest(
        &self,
        owner: &str,
        id: &str,
        n: u32,
    ) -> Result<Option<StoredConversation>, StoreError> {
        let sql = format!("{LOAD} WHERE id = $1 AND owner = $2 AND deleted_at IS NULL");
        self.load_page(sqlx::query(&sql).bind(id).bind(owner), Some(n))
            .await
    }

    /// Up to `n` exchanges of one of `owner`'s conversations before position `before`,
    /// oldest first, with how many come before them; `None` for no such conversation.
    pub async fn earlier(
        &self,
        owner: &str,
        id: &str,
        before: u32,
        n: u32,
    ) -> Result<Option<(Vec<Exchange>, u32)>, StoreError> {
        self.ready().await?;
        let found = sqlx::query(
            "SELECT id FROM conversations WHERE id = $1 AND owner = $2 AND deleted_at IS NULL",
        )
        .bind(id)
        .bind(owner)
        .fetch_optional(&self.pool)
        .await?;
        match found {
            Some(_) => self.exchanges(id, Some(before), Some(n)).await.map(Some),
            None => Ok(None),
        }
    }

    /// Like [`Store::earlier`], of a shared conversation, for anyone with its token.
    pub async fn earlier_shared(
        &self,
        token: &str,
        before: u32,
        n: u32,
    ) -> Result<Option<(Vec<Exchange>, u32)>, StoreError> {
        self.ready().await?;
        let found = sqlx::query(
            "SELECT id FROM conversations WHERE share_token = $1 AND deleted_at IS NULL",
        )
        .bind(token)
        .fetch_optional(&self.pool)
        .await?;
        match found {
            Some(row) => {
                let id: String = row.try_get("id")?;
                self.exchanges(&id, Some(before), Some(n)).await.map(Some)
            }
            None => Ok(None),
        }
    }

    /// The conversation a query over [`LOAD`] selects, with its exchanges.
    async fn load_one<'q>(
        &self,
        query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    ) -> Result<Option<StoredConversation>, StoreError> {
        self.load_page(query, None).await
    }

    /// The conversation a query over [`LOAD`] selects, with its latest `latest` exchanges
    /// (all when `None`).
    async fn load_page<'q>(
        &self,
        query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
        latest: Option<u32>,
    ) -> Result<Option<StoredConversation>, StoreError> {
        self.ready().await?;
        let Some(row) = query.fetch_optional(&self.pool).await? else {
            return Ok(None);
        };
        let summary = summary(&row)?;
        let registry: String = row.try_get("registry")?;
        let (exchanges, earlier) = self.exchanges(&summary.id, None, latest).await?;
        Ok(Some(StoredConversation {
            summary,
            exchanges,
            registry: serde_json::from_str(&registry)?,
            earlier,
        }))
    }

    /// A conversation's exchanges before position `before` (all when `None`), the latest
    /// `n` of them (all when `None`), oldest first; and the position of the first read
    /// (how many come before it: positions run from 0 without gaps).
    async fn exchanges(
        &self,
        conversation: &str,
        before: Option<u32>,
        n: Option<u32>,
    ) -> Result<(Vec<Exchange>, u32), StoreError> {
        let rows = sqlx::query(
            "SELECT data, state, seq FROM exchanges WHERE conversation_id = $1 AND seq < $2 \
             ORDER BY seq DESC LIMIT $3",
        )
        .bind(conversation)
        .bind(before.map_or(i64::MAX, i64::from))
        .bind(n.map_or(i64::MAX, i64::from))
        .fetch_all(&self.pool)
        .await?;
        let mut exchanges = Vec::with_capacity(rows.len());
        let mut first = 0;
        for row in rows.iter().rev() {
            let data: String = row.try_get("data")?;
            let state: String = row.try_get("state")?;
            let seq: i64 = row.try_get("seq")?;
            if exchanges.is_empty() {
                first = u32::try_from(seq).unwrap_or(0);
            }
            let mut exchange: Exchange = serde_json::from_str(&data)?;
            exchange.state = state_of(&state);
            exchanges.push(exchange);
        }
        Ok((exchanges, first))
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
            self.index_logged(id, TITLE_ROW, title_from(to)).await;
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
        let row = sqlx::query(
            "SELECT share_token FROM conversations WHERE id = $1 AND owner = $2 AND deleted_at IS NULL",
        )
        .bind(id)
        .bind(owner)
        .fetch_optional(&self.pool)
        .await?;
        Ok(match row {
            Some(row) => row.try_get("share_token")?,
            None => None,
        })
    }
}

#[cfg(test)]
impl Store {
    /// The schema as migration `version` left it, for a test of the migrations after it.
    pub(crate) async fn migrate_to(&self, version: usize) -> Result<(), StoreError> {
        migrations::apply_to(&self.pool, self.backend, version).await
    }

    /// Runs `sql` with text arguments (a test writing rows as an older version did).
    pub(crate) async fn execute(&self, sql: &str, args: &[&str]) -> Result<(), StoreError> {
        let mut query = sqlx::query(sql);
        for arg in args {
            query = query.bind(*arg);
        }
        query.execute(&self.pool).await?;
        Ok(())
    }

    /// An owner's bytes counted from the rows themselves, to check the counter against.
    pub(crate) async fn recount_owner_bytes(&self, owner: &str) -> Result<i64, StoreError> {
        let bytes = |column: &str| match self.backend {
            Backend::Sqlite => format!("LENGTH(CAST({column} AS BLOB))"),
            Backend::Postgres => format!("OCTET_LENGTH({column})"),
        };
        let sql = format!(
            "SELECT CAST(COALESCE((SELECT SUM({} + {} + {}) \
             FROM exchanges e JOIN conversations c ON c.id = e.conversation_id WHERE c.owner = $1), 0) \
             + COALESCE((SELECT SUM({}) \
             FROM files f JOIN conversations c ON c.id = f.conversation_id WHERE c.owner = $1), 0) \
             AS BIGINT) AS bytes",
            bytes("e.data"),
            bytes("e.question"),
            bytes("e.answer"),
            bytes("f.passages"),
        );
        Ok(sqlx::query(&sql)
            .bind(owner)
            .fetch_one(&self.pool)
            .await?
            .try_get("bytes")?)
    }
}

/// The text an exchange is found by: its question and answer.
fn exchange_text(exchange: &Exchange) -> String {
    format!("{}\n{}", exchange.question, exchange.answer)
}

/// Replaces search row `seq` of `conversation` with the terms `body`.
async fn write_search_row(
    connection: &mut sqlx::AnyConnection,
    backend: Backend,
    conversation: &str,
    seq: i64,
    body: &str,
) -> Result<(), StoreError> {
    match backend {
        Backend::Sqlite => {
            // FTS5 finds rows by rowid only: `search_rows` gives each (conversation, seq) one.
            let row = sqlx::query(
                "INSERT INTO search_rows (conversation_id, seq) VALUES ($1, $2) \
                 ON CONFLICT (conversation_id, seq) DO UPDATE SET seq = excluded.seq RETURNING id",
            )
            .bind(conversation)
            .bind(seq)
            .fetch_one(&mut *connection)
            .await?;
            let id: i64 = row.try_get("id")?;
            sqlx::query("DELETE FROM exchange_search WHERE rowid = $1")
                .bind(id)
                .execute(&mut *connection)
                .await?;
            sqlx::query("INSERT INTO exchange_search (rowid, body) VALUES ($1, $2)")
                .bind(id)
                .bind(body)
                .execute(&mut *connection)
                .await?;
        }
        Backend::Postgres => {
            sqlx::query(
                "INSERT INTO exchange_search (conversation_id, seq, terms) \
                 VALUES ($1, $2, to_tsvector('simple', $3)) \
                 ON CONFLICT (conversation_id, seq) DO UPDATE SET terms = excluded.terms",
            )
            .bind(conversation)
            .bind(seq)
            .bind(body)
            .execute(&mut *connection)
            .await?;
        }
    }
    Ok(())
}
