//! The orchestrator's three databases, separate files because their
//! lifecycles differ: `chat.db` (conversations, messages, stored summaries,
//! pending approvals — erasable per user), `audit.db` (every tool call and
//! how it ended — kept when a user's chats are erased) and `memory.db`
//! (facts about the user, each with its source: the user or the agent).
//!
//! SQLite through rusqlite (bundled). A connection lives behind a mutex and
//! is only used inside `spawn_blocking`, never across `.await`; every file
//! is WAL with a busy timeout, and its schema is a numbered list of
//! migrations applied by `PRAGMA user_version`.

pub mod audit;
pub mod chat;
pub mod memory;

use rusqlite::Connection;
use std::path::Path;
use std::sync::{Arc, Mutex};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("database {path}: schema version {found}, this program knows {known}")]
    TooNew { path: String, found: i64, known: i64 },
    #[error("database worker stopped")]
    Stopped,
}

/// One SQLite file (or an in-memory database), migrated on open.
#[derive(Clone)]
pub struct Database {
    connection: Arc<Mutex<Connection>>,
}

impl Database {
    /// Opens `path` (`None`: in memory), creating its folder, and applies
    /// the `migrations` it has not seen; a newer schema is refused.
    pub fn open(path: Option<&Path>, migrations: &[&str]) -> Result<Database, StoreError> {
        let connection = match path {
            Some(path) => {
                if let Some(parent) = path.parent().filter(|parent| !parent.as_os_str().is_empty())
                {
                    let _ = std::fs::create_dir_all(parent);
                }
                Connection::open(path)?
            }
            None => Connection::open_in_memory()?,
        };
        connection.busy_timeout(std::time::Duration::from_secs(5))?;
        connection.pragma_update(None, "journal_mode", "WAL")?;
        connection.pragma_update(None, "synchronous", "NORMAL")?;
        connection.pragma_update(None, "foreign_keys", "ON")?;
        let found: i64 = connection.pragma_query_value(None, "user_version", |row| row.get(0))?;
        let known = migrations.len() as i64;
        if found > known {
            let path = path.map(|path| path.display().to_string()).unwrap_or_default();
            return Err(StoreError::TooNew { path, found, known });
        }
        for (version, migration) in migrations.iter().enumerate().skip(found as usize) {
            connection.execute_batch(&format!(
                "BEGIN; {migration}; PRAGMA user_version = {}; COMMIT;",
                version + 1
            ))?;
        }
        Ok(Database { connection: Arc::new(Mutex::new(connection)) })
    }

    /// Runs `work` with the connection on a blocking thread.
    pub async fn run<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let connection = self.connection.clone();
        tokio::task::spawn_blocking(move || {
            let mut connection = connection.lock().unwrap_or_else(|poison| poison.into_inner());
            work(&mut connection)
        })
        .await
        .map_err(|_| StoreError::Stopped)?
    }

    /// Runs `work` on the calling thread (tests, commands).
    pub fn run_blocking<T>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut connection = self.connection.lock().unwrap_or_else(|poison| poison.into_inner());
        work(&mut connection)
    }
}

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as i64)
        .unwrap_or(0)
}

/// Lowercase hex SHA-256 of a tool call's exact arguments: what approvals
/// and the audit compare, never the arguments themselves.
pub fn arguments_hash(arguments: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(arguments.as_bytes()).iter().map(|byte| format!("{byte:02x}")).collect()
}
