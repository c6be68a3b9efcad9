//! The schema, as numbered migrations per backend, applied in order at first use. The
//! applied version is kept in `cited_schema`; PostgreSQL takes an advisory lock so that
//! instances starting together migrate once.

use sqlx::{AnyPool, Row};

use super::{Backend, StoreError};

/// Migration `n` is `MIGRATIONS[n - 1]`: statements for both backends, with `{int}` the
/// 64-bit integer type, then those only SQLite or only PostgreSQL runs.
struct Migration {
    common: &'static [&'static str],
    sqlite: &'static [&'static str],
    postgres: &'static [&'static str],
}

const MIGRATIONS: &[Migration] = &[Migration {
    common: &[
        "CREATE TABLE browsers (id TEXT PRIMARY KEY, settings TEXT NOT NULL, conversation_id TEXT, updated_at {int} NOT NULL)",
        "CREATE TABLE conversations (id TEXT PRIMARY KEY, owner TEXT NOT NULL, title TEXT NOT NULL, mode TEXT NOT NULL, \
         registry TEXT NOT NULL, share_token TEXT UNIQUE, created_at {int} NOT NULL, updated_at {int} NOT NULL, \
         deleted_at {int}, search_body TEXT NOT NULL DEFAULT '')",
        "CREATE INDEX conversations_by_owner ON conversations (owner, updated_at DESC)",
        "CREATE TABLE exchanges (conversation_id TEXT NOT NULL, seq {int} NOT NULL, question TEXT NOT NULL, \
         answer TEXT NOT NULL, state TEXT NOT NULL, data TEXT NOT NULL, created_at {int} NOT NULL, \
         updated_at {int} NOT NULL, PRIMARY KEY (conversation_id, seq))",
        "CREATE INDEX exchanges_by_state ON exchanges (state)",
    ],
    sqlite: &[
        "PRAGMA journal_mode = WAL",
        "CREATE VIRTUAL TABLE conversation_search USING fts5(body, conversation_id UNINDEXED)",
    ],
    postgres: &["CREATE INDEX conversations_search ON conversations USING GIN (to_tsvector('simple', search_body))"],
},
// 2: accounts. A browser may be signed in as a user; users' conversations are owned by
// `user:<name>`.
Migration {
    common: &[
        "CREATE TABLE users (name TEXT PRIMARY KEY, password TEXT NOT NULL, created_at {int} NOT NULL)",
        "ALTER TABLE browsers ADD COLUMN user_name TEXT",
        "CREATE INDEX browsers_by_user ON browsers (user_name)",
    ],
    sqlite: &[],
    postgres: &[],
},
// 3: API keys, stored as their SHA-256.
Migration {
    common: &[
        "CREATE TABLE api_keys (id TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, user_name TEXT NOT NULL, \
         label TEXT NOT NULL, created_at {int} NOT NULL)",
    ],
    sqlite: &[],
    postgres: &[],
},
// 4: secrets every instance shares (the key that signs image addresses).
Migration {
    common: &["CREATE TABLE secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL)"],
    sqlite: &[],
    postgres: &[],
},
// 5: files attached to conversations, as their extracted passages (JSON).
Migration {
    common: &[
        "CREATE TABLE files (id TEXT PRIMARY KEY, conversation_id TEXT NOT NULL, name TEXT NOT NULL, \
         size {int} NOT NULL, passages TEXT NOT NULL, created_at {int} NOT NULL)",
        "CREATE INDEX files_by_conversation ON files (conversation_id, created_at)",
    ],
    sqlite: &[],
    postgres: &[],
},
// 6: when a browser row began (for a signed-in one, its sign-in), for session lifetimes.
Migration {
    common: &[
        "ALTER TABLE browsers ADD COLUMN created_at {int}",
        "UPDATE browsers SET created_at = updated_at",
    ],
    sqlite: &[],
    postgres: &[],
},
// 7: work that does not grow with the history. Search terms per exchange (and one row for
// the title), written as that exchange is; what the whole conversation was indexed as so
// far stays as one row (`seq` -2). Each exchange and file keeps its size, and each owner
// the sum, updated on every write, for the storage quota.
Migration {
    common: &[
        "ALTER TABLE exchanges ADD COLUMN bytes {int} NOT NULL DEFAULT 0",
        "ALTER TABLE files ADD COLUMN bytes {int} NOT NULL DEFAULT 0",
        "CREATE TABLE owner_usage (owner TEXT PRIMARY KEY, bytes {int} NOT NULL)",
    ],
    sqlite: &[
        "UPDATE exchanges SET bytes = LENGTH(CAST(data AS BLOB)) + LENGTH(CAST(question AS BLOB)) \
         + LENGTH(CAST(answer AS BLOB))",
        "UPDATE files SET bytes = LENGTH(CAST(passages AS BLOB))",
        USAGE_FROM_ROWS,
        "CREATE TABLE search_rows (id INTEGER PRIMARY KEY, conversation_id TEXT NOT NULL, \
         seq INTEGER NOT NULL, UNIQUE (conversation_id, seq))",
        "CREATE VIRTUAL TABLE exchange_search USING fts5(body)",
        "INSERT INTO search_rows (conversation_id, seq) SELECT DISTINCT conversation_id, -2 FROM conversation_search",
        "INSERT INTO exchange_search (rowid, body) SELECT r.id, s.body FROM conversation_search s \
         JOIN search_rows r ON r.conversation_id = s.conversation_id AND r.seq = -2",
        "DROP TABLE conversation_search",
    ],
    postgres: &[
        "UPDATE exchanges SET bytes = OCTET_LENGTH(data) + OCTET_LENGTH(question) + OCTET_LENGTH(answer)",
        "UPDATE files SET bytes = OCTET_LENGTH(passages)",
        USAGE_FROM_ROWS,
        "CREATE TABLE exchange_search (conversation_id TEXT NOT NULL, seq BIGINT NOT NULL, \
         terms TSVECTOR NOT NULL, PRIMARY KEY (conversation_id, seq))",
        // Without fastupdate: a search right after many writes would otherwise read the
        // index's whole pending list, which grows until a vacuum.
        "CREATE INDEX exchange_search_terms ON exchange_search USING GIN (terms) WITH (fastupdate = off)",
        "INSERT INTO exchange_search (conversation_id, seq, terms) SELECT id, -2, to_tsvector('simple', search_body) \
         FROM conversations WHERE search_body <> ''",
        "DROP INDEX conversations_search",
        "UPDATE conversations SET search_body = ''",
    ],
}];

/// Every owner's usage, summed from the sizes of their exchanges and files.
const USAGE_FROM_ROWS: &str = "INSERT INTO owner_usage (owner, bytes) SELECT owner, CAST(SUM(b) AS BIGINT) FROM \
     (SELECT c.owner AS owner, e.bytes AS b FROM exchanges e JOIN conversations c ON c.id = e.conversation_id \
      UNION ALL SELECT c.owner AS owner, f.bytes AS b FROM files f JOIN conversations c ON c.id = f.conversation_id) t \
     GROUP BY owner";

/// A number no other program on the database is likely to lock.
const LOCK_KEY: i64 = 0x0063_6974_6564;

pub async fn apply(pool: &AnyPool, backend: Backend) -> Result<(), StoreError> {
    apply_to(pool, backend, MIGRATIONS.len()).await
}

/// Applies the migrations up to number `last`.
pub(super) async fn apply_to(
    pool: &AnyPool,
    backend: Backend,
    last: usize,
) -> Result<(), StoreError> {
    let mut connection = pool.acquire().await?;
    if backend == Backend::Postgres {
        sqlx::query("SELECT pg_advisory_lock($1)")
            .bind(LOCK_KEY)
            .execute(&mut *connection)
            .await?;
    }
    let result = async {
        sqlx::query("CREATE TABLE IF NOT EXISTS cited_schema (version BIGINT NOT NULL)")
            .execute(&mut *connection)
            .await?;
        let version: i64 =
            sqlx::query("SELECT COALESCE(MAX(version), 0) AS version FROM cited_schema")
                .fetch_one(&mut *connection)
                .await?
                .try_get("version")?;
        for (index, migration) in MIGRATIONS.iter().enumerate().take(last) {
            let number = i64::try_from(index).unwrap_or(i64::MAX) + 1;
            if number <= version {
                continue;
            }
            let (int, own) = match backend {
                Backend::Sqlite => ("INTEGER", migration.sqlite),
                Backend::Postgres => ("BIGINT", migration.postgres),
            };
            let statements = migration
                .common
                .iter()
                .map(|statement| statement.replace("{int}", int))
                .chain(own.iter().map(|statement| statement.to_string()));
            for statement in statements {
                sqlx::query(&statement).execute(&mut *connection).await?;
            }
            sqlx::query("INSERT INTO cited_schema (version) VALUES ($1)")
                .bind(number)
                .execute(&mut *connection)
                .await?;
            tracing::info!(version = number, "database migrated");
        }
        Ok::<(), StoreError>(())
    }
    .await;
    if backend == Backend::Postgres {
        let _ = sqlx::query("SELECT pg_advisory_unlock($1)")
            .bind(LOCK_KEY)
            .execute(&mut *connection)
            .await;
    }
    result
}
