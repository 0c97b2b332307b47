//! One SQLite file, the way every Tamebi service keeps one: behind a mutex,
//! used only inside `spawn_blocking` (never across `.await`), its callers
//! queueing for it as tasks rather than as blocked threads, in WAL mode
//! with a busy timeout, its schema a numbered list of migrations applied by
//! `PRAGMA user_version`. A database written by a newer program is refused
//! rather than damaged.
//!
//! The files hold users' document text, conversations and memory, so they
//! are private to the service's account whatever the umask: a folder this
//! crate creates is 0700, a database file 0600 — created so before SQLite
//! opens it, because SQLite's unix VFS gives the `-wal`, `-shm` and
//! `-journal` files the main file's mode — and a looser file left by an
//! older version is tightened on open, with a warning.
//!
//! We rejected rusqlite's async, pool and migration helpers: they lag
//! behind rusqlite's releases, and one connection per file is all a
//! service of this size needs.

pub mod umask_child;

use rusqlite::Connection;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;
use std::sync::{Arc, Mutex};

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error(
        "database {path}: schema version {found}, this program knows {known} (a newer program wrote it, or it was never opened by its server)"
    )]
    TooNew { path: String, found: i64, known: i64 },
    #[error("database worker stopped")]
    Stopped,
    #[error("database {path}: cannot make it private to this account: {source}")]
    Private { path: String, source: std::io::Error },
}

/// The mode of every database file and of SQLite's files beside it.
pub const FILE_MODE: u32 = 0o600;
/// The mode of a data folder.
pub const DIR_MODE: u32 = 0o700;
/// What SQLite may keep beside a database file (same mode as the file).
pub const COMPANION_SUFFIXES: [&str; 3] = ["-wal", "-shm", "-journal"];

/// Creates `dir` and its missing parents 0700, whatever the umask, and
/// tightens an existing `dir` that others can enter or read (with a
/// warning). For a folder a service owns (its data directory); a folder
/// that merely holds a database may be shared and is left alone.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    if !dir.exists() {
        std::fs::DirBuilder::new().recursive(true).mode(DIR_MODE).create(dir)?;
    }
    tighten(dir, DIR_MODE);
    Ok(())
}

/// Removes the group and other bits of `path` (setting exactly `mode`)
/// when any is set, and logs that it did. A file it cannot change (owned
/// by another account) is logged and left: `tamebi doctor` names it.
fn tighten(path: &Path, mode: u32) {
    let found = match std::fs::metadata(path) {
        Ok(metadata) => metadata.permissions().mode() & 0o777,
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "cannot read a data file's mode");
            return;
        }
    };
    if found & 0o077 == 0 {
        return;
    }
    match std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)) {
        Ok(()) => tracing::warn!(
            path = %path.display(),
            found = format!("{found:o}"),
            now = format!("{mode:o}"),
            "tightened a data file other accounts could read"
        ),
        Err(error) => tracing::warn!(
            path = %path.display(),
            found = format!("{found:o}"),
            %error,
            "other accounts can read this data file and its mode cannot be changed: chmod {mode:o} it as its owner"
        ),
    }
}

/// Creates `path` 0600 if it is missing (SQLite then opens an empty file
/// as a new database) and tightens it and its companions if they exist.
fn private_file(path: &Path) -> std::io::Result<()> {
    std::fs::OpenOptions::new().read(true).write(true).create(true).mode(FILE_MODE).open(path)?;
    // The umask can only remove bits, but a file that existed keeps its own.
    tighten(path, FILE_MODE);
    for suffix in COMPANION_SUFFIXES {
        let mut companion = path.as_os_str().to_owned();
        companion.push(suffix);
        let companion = Path::new(&companion);
        if companion.exists() {
            tighten(companion, FILE_MODE);
        }
    }
    Ok(())
}

/// One SQLite file (or an in-memory database).
#[derive(Clone)]
pub struct Database {
    connection: Arc<Mutex<Connection>>,
    /// Taken before a blocking thread is asked for, and held until the work
    /// is done: callers of [`Database::run`] queue here as tasks. Without
    /// it each waiting caller held a blocking thread parked on the mutex,
    /// and 100 conversations at once grew the orchestrator to 140 threads
    /// and their stacks (docs/performance.md).
    turn: Arc<tokio::sync::Mutex<()>>,
}

impl Database {
    /// Opens `path` (`None`: in memory), creating its folder (0700) and
    /// the file (0600) if missing and tightening looser ones, and applies
    /// the `migrations` it has not seen: entry `n` moves `user_version`
    /// from `n` to `n + 1`, in one transaction.
    pub fn open(path: Option<&Path>, migrations: &[&str]) -> Result<Database, DbError> {
        let connection = match path {
            Some(path) => {
                if let Some(parent) = path.parent().filter(|parent| !parent.as_os_str().is_empty())
                    && !parent.exists()
                {
                    let _ =
                        std::fs::DirBuilder::new().recursive(true).mode(DIR_MODE).create(parent);
                }
                private_file(path)
                    .map_err(|source| DbError::Private { path: display(Some(path)), source })?;
                Connection::open(path)?
            }
            None => Connection::open_in_memory()?,
        };
        connection.busy_timeout(std::time::Duration::from_secs(5))?;
        connection.pragma_update(None, "journal_mode", "WAL")?;
        connection.pragma_update(None, "synchronous", "NORMAL")?;
        connection.pragma_update(None, "foreign_keys", "ON")?;
        let found = user_version(&connection)?;
        let known = migrations.len() as i64;
        if found > known {
            return Err(DbError::TooNew { path: display(path), found, known });
        }
        for (version, migration) in migrations.iter().enumerate().skip(found as usize) {
            connection.execute_batch(&format!(
                "BEGIN; {migration}; PRAGMA user_version = {}; COMMIT;",
                version + 1
            ))?;
        }
        Ok(Database::from(connection))
    }

    /// Opens an existing file read-only, for operators looking at a live
    /// service's database: nothing is created, migrated or written, and a
    /// schema other than the one `migrations` ends at is refused.
    pub fn open_read_only(path: &Path, migrations: &[&str]) -> Result<Database, DbError> {
        let connection = Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        connection.busy_timeout(std::time::Duration::from_secs(5))?;
        let found = user_version(&connection)?;
        let known = migrations.len() as i64;
        if found != known {
            return Err(DbError::TooNew { path: display(Some(path)), found, known });
        }
        Ok(Database::from(connection))
    }

    /// Runs `work` with the connection on a blocking thread, once the
    /// callers before it are done (first come, first served).
    pub async fn run<T, F>(&self, work: F) -> Result<T, DbError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, DbError> + Send + 'static,
    {
        let turn = self.turn.clone().lock_owned().await;
        let connection = self.connection.clone();
        tokio::task::spawn_blocking(move || {
            // Held until the work ends, even if the caller stopped waiting.
            let _turn = turn;
            let mut connection = connection.lock().unwrap_or_else(|poison| poison.into_inner());
            work(&mut connection)
        })
        .await
        .map_err(|_| DbError::Stopped)?
    }

    /// Runs `work` on the calling thread (commands and tests).
    pub fn run_blocking<T>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        let mut connection = self.connection.lock().unwrap_or_else(|poison| poison.into_inner());
        work(&mut connection)
    }
}

impl From<Connection> for Database {
    fn from(connection: Connection) -> Database {
        Database {
            connection: Arc::new(Mutex::new(connection)),
            turn: Arc::new(tokio::sync::Mutex::new(())),
        }
    }
}

fn user_version(connection: &Connection) -> Result<i64, DbError> {
    Ok(connection.pragma_query_value(None, "user_version", |row| row.get(0))?)
}

fn display(path: Option<&Path>) -> String {
    path.map(|path| path.display().to_string()).unwrap_or_else(|| ":memory:".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIGRATIONS: &[&str] = &["CREATE TABLE a (x INTEGER)", "ALTER TABLE a ADD COLUMN y TEXT"];

    #[tokio::test]
    async fn migrations_apply_once_and_newer_or_older_schemas_are_refused_where_they_must_be() {
        let directory =
            std::env::temp_dir().join(format!("tamebi-sqlite-db-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&directory);
        let path = directory.join("nested/test.db");
        let first = Database::open(Some(&path), &MIGRATIONS[..1]).unwrap();
        first
            .run(|c| c.execute("INSERT INTO a (x) VALUES (1)", []).map_err(DbError::from))
            .await
            .unwrap();
        assert!(matches!(
            Database::open_read_only(&path, MIGRATIONS),
            Err(DbError::TooNew { found: 1, known: 2, .. })
        ));
        let second = Database::open(Some(&path), MIGRATIONS).unwrap();
        let y: Option<String> = second
            .run_blocking(|c| {
                c.query_row("SELECT y FROM a", [], |row| row.get(0)).map_err(DbError::from)
            })
            .unwrap();
        assert_eq!(y, None, "the old row survived the second migration");
        let read_only = Database::open_read_only(&path, MIGRATIONS).unwrap();
        let written = read_only
            .run_blocking(|c| c.execute("INSERT INTO a (x) VALUES (2)", []).map_err(DbError::from));
        assert!(written.is_err(), "read-only means read-only");
        assert!(matches!(
            Database::open(Some(&path), &MIGRATIONS[..1]),
            Err(DbError::TooNew { found: 2, known: 1, .. })
        ));
        let _ = std::fs::remove_dir_all(&directory);
    }
}
