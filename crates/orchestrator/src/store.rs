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

pub use sqlite_db::{Database, DbError as StoreError};

use rusqlite::{Connection, Params, Row};

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

/// Every row `sql` selects, each read by `row`, in the order selected.
fn rows<T>(
    connection: &Connection,
    sql: &str,
    params: impl Params,
    row: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>, StoreError> {
    let mut statement = connection.prepare(sql)?;
    let rows = statement.query_map(params, row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}
