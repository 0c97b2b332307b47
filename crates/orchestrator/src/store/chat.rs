//! `chat.db`: conversations, their messages, stored summaries and pending
//! approvals. Everything here belongs to one user and goes when that user
//! is erased; the audit trail is elsewhere and stays.
//!
//! A message is stored once the orchestrator has acknowledged it (the
//! user's message before the model runs, each assistant step and tool
//! result as it completes), so a restart mid-turn loses nothing that was
//! acknowledged. A summary is stored with the message sequence it covers
//! and reloaded, never regenerated. An approval stores the hash of the
//! exact arguments the model proposed: the continuation executes what was
//! stored, never the browser's copy of the call.

use super::{Database, StoreError};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;

const MIGRATIONS: &[&str] = &[r#"
CREATE TABLE conversations (
    id       TEXT PRIMARY KEY,
    uid      TEXT NOT NULL,
    title    TEXT NOT NULL DEFAULT '',
    created  INTEGER NOT NULL,
    updated  INTEGER NOT NULL
);
CREATE INDEX conversations_uid ON conversations (uid, updated);
CREATE TABLE messages (
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL,
    role            TEXT NOT NULL,
    content         TEXT NOT NULL,
    created         INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);
CREATE TABLE summaries (
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    upto_seq        INTEGER NOT NULL,
    text            TEXT NOT NULL,
    created         INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, upto_seq)
);
CREATE TABLE approvals (
    approval_id     TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    tool_call_id    TEXT NOT NULL,
    tool            TEXT NOT NULL,
    arguments       TEXT NOT NULL,
    arguments_hash  TEXT NOT NULL,
    created         INTEGER NOT NULL,
    decision        TEXT
);
"#];

/// A stored message: its role and its content as JSON text (the model
/// message shape the orchestrator replays).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMessage {
    pub seq: i64,
    pub role: String,
    pub content: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    pub id: String,
    pub title: String,
    pub created: i64,
    pub updated: i64,
}

/// A pending or decided approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    pub approval_id: String,
    pub conversation_id: String,
    pub tool_call_id: String,
    pub tool: String,
    /// The exact arguments the model proposed (JSON text).
    pub arguments: String,
    pub arguments_hash: String,
    pub decision: Option<Decision>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Approved,
    Denied,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approved => "approved",
            Decision::Denied => "denied",
        }
    }

    fn parse(text: &str) -> Option<Decision> {
        match text {
            "approved" => Some(Decision::Approved),
            "denied" => Some(Decision::Denied),
            _ => None,
        }
    }
}

/// What deciding an approval did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decided {
    /// Recorded now; execute (or report the denial of) exactly this call.
    Now(Approval),
    /// Already decided before: a replayed decision changes nothing.
    Already(Approval),
    /// No such approval for this user.
    Unknown,
}

pub fn open(path: Option<&Path>) -> Result<Database, StoreError> {
    Database::open(path, MIGRATIONS)
}

/// Creates a conversation for `uid` (idempotent on `id`; another user's id
/// is refused).
pub fn ensure_conversation(
    connection: &Connection,
    uid: &str,
    id: &str,
    title: &str,
    now: i64,
) -> Result<bool, StoreError> {
    let owner: Option<String> = connection
        .query_row("SELECT uid FROM conversations WHERE id = ?1", [id], |row| row.get(0))
        .optional()?;
    match owner {
        Some(owner) => Ok(owner == uid),
        None => {
            connection.execute(
                "INSERT INTO conversations (id, uid, title, created, updated) VALUES (?1, ?2, ?3, ?4, ?4)",
                params![id, uid, title, now],
            )?;
            Ok(true)
        }
    }
}

/// Appends a message; returns its sequence number.
pub fn append_message(
    connection: &mut Connection,
    uid: &str,
    conversation_id: &str,
    role: &str,
    content: &str,
    now: i64,
) -> Result<Option<i64>, StoreError> {
    let transaction = connection.transaction()?;
    if !owns(&transaction, uid, conversation_id)? {
        return Ok(None);
    }
    let seq: i64 = transaction.query_row(
        "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE conversation_id = ?1",
        [conversation_id],
        |row| row.get(0),
    )?;
    transaction.execute(
        "INSERT INTO messages (conversation_id, seq, role, content, created) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![conversation_id, seq, role, content, now],
    )?;
    transaction.execute(
        "UPDATE conversations SET updated = ?2 WHERE id = ?1",
        params![conversation_id, now],
    )?;
    transaction.commit()?;
    Ok(Some(seq))
}

/// A user's conversations, most recently updated first.
pub fn conversations(connection: &Connection, uid: &str) -> Result<Vec<Conversation>, StoreError> {
    let sql = "SELECT id, title, created, updated FROM conversations WHERE uid = ?1 ORDER BY updated DESC, id";
    super::rows(connection, sql, [uid], |row| {
        Ok(Conversation {
            id: row.get(0)?,
            title: row.get(1)?,
            created: row.get(2)?,
            updated: row.get(3)?,
        })
    })
}

/// A conversation's messages, in order; `None` when it is not the user's.
pub fn messages(
    connection: &Connection,
    uid: &str,
    conversation_id: &str,
) -> Result<Option<Vec<StoredMessage>>, StoreError> {
    if !owns(connection, uid, conversation_id)? {
        return Ok(None);
    }
    let sql = "SELECT seq, role, content FROM messages WHERE conversation_id = ?1 ORDER BY seq";
    let messages = super::rows(connection, sql, [conversation_id], |row| {
        Ok(StoredMessage { seq: row.get(0)?, role: row.get(1)?, content: row.get(2)? })
    })?;
    Ok(Some(messages))
}

/// Deletes one conversation of the user (messages, summaries and approvals
/// go with it); false when there was none.
pub fn delete_conversation(
    connection: &Connection,
    uid: &str,
    conversation_id: &str,
) -> Result<bool, StoreError> {
    let deleted = connection.execute(
        "DELETE FROM conversations WHERE id = ?1 AND uid = ?2",
        params![conversation_id, uid],
    )?;
    Ok(deleted > 0)
}

/// Erases everything of one user in chat.db; returns the conversations
/// removed. The audit trail is not touched.
pub fn erase_user(connection: &Connection, uid: &str) -> Result<usize, StoreError> {
    Ok(connection.execute("DELETE FROM conversations WHERE uid = ?1", [uid])?)
}

/// Stores the summary of messages up to `upto_seq` (once: a second store of
/// the same span keeps the first).
pub fn store_summary(
    connection: &Connection,
    conversation_id: &str,
    upto_seq: i64,
    text: &str,
    now: i64,
) -> Result<bool, StoreError> {
    let inserted = connection.execute(
        "INSERT OR IGNORE INTO summaries (conversation_id, upto_seq, text, created) VALUES (?1, ?2, ?3, ?4)",
        params![conversation_id, upto_seq, text, now],
    )?;
    Ok(inserted > 0)
}

/// The latest stored summary: (upto_seq, text).
pub fn latest_summary(
    connection: &Connection,
    conversation_id: &str,
) -> Result<Option<(i64, String)>, StoreError> {
    Ok(connection
        .query_row(
            "SELECT upto_seq, text FROM summaries WHERE conversation_id = ?1 ORDER BY upto_seq DESC LIMIT 1",
            [conversation_id],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?)
}

/// Stores a pending approval for the exact call the model proposed.
pub fn request_approval(
    connection: &Connection,
    approval: &Approval,
    now: i64,
) -> Result<(), StoreError> {
    connection.execute(
        "INSERT INTO approvals (approval_id, conversation_id, tool_call_id, tool, arguments, arguments_hash, created)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            approval.approval_id,
            approval.conversation_id,
            approval.tool_call_id,
            approval.tool,
            approval.arguments,
            approval.arguments_hash,
            now
        ],
    )?;
    Ok(())
}

/// The approvals of one of the user's conversations, oldest first.
pub fn approvals(
    connection: &Connection,
    uid: &str,
    conversation_id: &str,
) -> Result<Vec<Approval>, StoreError> {
    let sql = "SELECT a.approval_id, a.conversation_id, a.tool_call_id, a.tool, a.arguments,
                a.arguments_hash, a.decision
         FROM approvals a JOIN conversations c ON c.id = a.conversation_id
         WHERE a.conversation_id = ?1 AND c.uid = ?2
         ORDER BY a.created, a.rowid";
    super::rows(connection, sql, params![conversation_id, uid], approval_row)
}

fn approval_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Approval> {
    Ok(Approval {
        approval_id: row.get(0)?,
        conversation_id: row.get(1)?,
        tool_call_id: row.get(2)?,
        tool: row.get(3)?,
        arguments: row.get(4)?,
        arguments_hash: row.get(5)?,
        decision: row.get::<_, Option<String>>(6)?.as_deref().and_then(Decision::parse),
    })
}

/// Records the user's decision on an approval of theirs, once.
pub fn decide(
    connection: &mut Connection,
    uid: &str,
    approval_id: &str,
    decision: Decision,
) -> Result<Decided, StoreError> {
    let transaction = connection.transaction()?;
    let found = transaction
        .query_row(
            "SELECT a.approval_id, a.conversation_id, a.tool_call_id, a.tool, a.arguments,
                    a.arguments_hash, a.decision
             FROM approvals a JOIN conversations c ON c.id = a.conversation_id
             WHERE a.approval_id = ?1 AND c.uid = ?2",
            params![approval_id, uid],
            approval_row,
        )
        .optional()?;
    let Some(mut approval) = found else {
        return Ok(Decided::Unknown);
    };
    if approval.decision.is_some() {
        return Ok(Decided::Already(approval));
    }
    transaction.execute(
        "UPDATE approvals SET decision = ?2 WHERE approval_id = ?1",
        params![approval_id, decision.as_str()],
    )?;
    transaction.commit()?;
    approval.decision = Some(decision);
    Ok(Decided::Now(approval))
}

/// Whether conversation `conversation_id` exists and is `uid`'s.
fn owns(connection: &Connection, uid: &str, conversation_id: &str) -> Result<bool, StoreError> {
    let count: i64 = connection.query_row(
        "SELECT COUNT(*) FROM conversations WHERE id = ?1 AND uid = ?2",
        params![conversation_id, uid],
        |row| row.get(0),
    )?;
    Ok(count > 0)
}

#[cfg(test)]
mod tests;
