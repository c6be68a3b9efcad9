//! Accounts: users with an argon2id password hash (the hash is made by the caller; the
//! store never sees a password), and the browsers signed in as each.

use sqlx::Row;

use super::{now_millis, Store, StoreError};
use crate::model::Settings;

impl Store {
    /// Adds a user; false when the name is taken.
    pub async fn create_user(&self, name: &str, password_hash: &str) -> Result<bool, StoreError> {
        self.ready().await?;
        let done = sqlx::query(
            "INSERT INTO users (name, password, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(password_hash)
        .bind(now_millis())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// A user's password hash, if the user exists.
    pub async fn password_hash(&self, name: &str) -> Result<Option<String>, StoreError> {
        self.ready().await?;
        let row = sqlx::query("SELECT password FROM users WHERE name = $1")
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        Ok(match row {
            Some(row) => Some(row.try_get("password")?),
            None => None,
        })
    }

    /// Replaces a user's password hash, signs out every browser of theirs and revokes
    /// their API keys (a new password is what one sets after a leak); false when there is
    /// no such user.
    pub async fn set_password(&self, name: &str, password_hash: &str) -> Result<bool, StoreError> {
        self.ready().await?;
        let done = sqlx::query("UPDATE users SET password = $1 WHERE name = $2")
            .bind(password_hash)
            .bind(name)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Ok(false);
        }
        self.sign_out_user(name).await?;
        sqlx::query("DELETE FROM api_keys WHERE user_name = $1")
            .bind(name)
            .execute(&self.pool)
            .await?;
        Ok(true)
    }

    /// Removes a user with everything they kept; false when there is no such user.
    pub async fn remove_user(&self, name: &str) -> Result<bool, StoreError> {
        self.ready().await?;
        let done = sqlx::query("DELETE FROM users WHERE name = $1")
            .bind(name)
            .execute(&self.pool)
            .await?;
        self.sign_out_user(name).await?;
        sqlx::query("DELETE FROM api_keys WHERE user_name = $1")
            .bind(name)
            .execute(&self.pool)
            .await?;
        self.forget_owner(&super::owner_of_user(name)).await?;
        Ok(done.rows_affected() == 1)
    }

    /// Keeps an API key (its id and hash) for `user`.
    pub async fn add_api_key(
        &self,
        id: &str,
        hash: &str,
        user: &str,
        label: &str,
    ) -> Result<(), StoreError> {
        self.ready().await?;
        sqlx::query(
            "INSERT INTO api_keys (id, hash, user_name, label, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(id)
        .bind(hash)
        .bind(user)
        .bind(label)
        .bind(now_millis())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The user an API key (by its hash) belongs to.
    pub async fn api_key_user(&self, hash: &str) -> Result<Option<String>, StoreError> {
        self.ready().await?;
        let row = sqlx::query("SELECT user_name FROM api_keys WHERE hash = $1")
            .bind(hash)
            .fetch_optional(&self.pool)
            .await?;
        Ok(match row {
            Some(row) => Some(row.try_get("user_name")?),
            None => None,
        })
    }

    /// A user's API keys: id, label, created (ms since the epoch).
    pub async fn api_keys(&self, user: &str) -> Result<Vec<(String, String, i64)>, StoreError> {
        self.ready().await?;
        let rows = sqlx::query(
            "SELECT id, label, created_at FROM api_keys WHERE user_name = $1 ORDER BY created_at",
        )
        .bind(user)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok((
                    row.try_get("id")?,
                    row.try_get("label")?,
                    row.try_get("created_at")?,
                ))
            })
            .collect()
    }

    /// Revokes an API key by its id; false when there is none.
    pub async fn remove_api_key(&self, id: &str) -> Result<bool, StoreError> {
        self.ready().await?;
        let done = sqlx::query("DELETE FROM api_keys WHERE id = $1")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Every user's name, in order.
    pub async fn users(&self) -> Result<Vec<String>, StoreError> {
        self.ready().await?;
        let rows = sqlx::query("SELECT name FROM users ORDER BY name")
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|row| row.try_get("name").map_err(StoreError::from))
            .collect()
    }

    /// Forgets one browser (signed out).
    pub async fn forget_browser(&self, id: &str) -> Result<(), StoreError> {
        self.ready().await?;
        sqlx::query("DELETE FROM browsers WHERE id = $1")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Forgets every browser signed in as `name` (signed out everywhere).
    pub async fn sign_out_user(&self, name: &str) -> Result<u64, StoreError> {
        self.ready().await?;
        let done = sqlx::query("DELETE FROM browsers WHERE user_name = $1")
            .bind(name)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected())
    }

    /// The ids of the user's signed-in browsers.
    pub async fn browsers_of_user(&self, name: &str) -> Result<Vec<String>, StoreError> {
        self.ready().await?;
        let rows = sqlx::query("SELECT id FROM browsers WHERE user_name = $1")
            .bind(name)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|row| Ok(row.try_get("id")?)).collect()
    }

    /// The settings of the user's most recently used browser, for a new sign-in.
    pub async fn latest_settings(&self, name: &str) -> Result<Option<Settings>, StoreError> {
        self.ready().await?;
        let row = sqlx::query(
            "SELECT settings FROM browsers WHERE user_name = $1 ORDER BY updated_at DESC LIMIT 1",
        )
        .bind(name)
        .fetch_optional(&self.pool)
        .await?;
        match row {
            Some(row) => {
                let settings: String = row.try_get("settings")?;
                Ok(Some(serde_json::from_str(&settings)?))
            }
            None => Ok(None),
        }
    }

    /// Bytes of conversation data an owner keeps (questions, answers, exchanges as JSON,
    /// the passages of added files), for the storage quota: a counter every write keeps.
    pub async fn owner_bytes(&self, owner: &str) -> Result<i64, StoreError> {
        self.ready().await?;
        let row = sqlx::query("SELECT bytes FROM owner_usage WHERE owner = $1")
            .bind(owner)
            .fetch_optional(&self.pool)
            .await?;
        Ok(match row {
            Some(row) => row.try_get("bytes")?,
            None => 0,
        })
    }
}
