//! `audit.db`: every tool call — who, which tool, the hash of its
//! arguments, how long, and how it ended. The outcome separates
//! "Nextcloud refused" (a permission boundary working) from "the model
//! misused the tool" (a tool-design problem) from "unreachable" and from
//! "denied by the user", so the audit answers which of those happened, not
//! merely that something failed. It survives a user's chat erasure.

use super::{Database, StoreError};
use rusqlite::{Connection, params};
use std::path::Path;

const MIGRATIONS: &[&str] = &[r#"
CREATE TABLE tool_calls (
    at              INTEGER NOT NULL,
    uid             TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    tool            TEXT NOT NULL,
    arguments_hash  TEXT NOT NULL,
    duration_ms     INTEGER NOT NULL,
    outcome         TEXT NOT NULL
);
CREATE INDEX tool_calls_uid ON tool_calls (uid, at);
"#];

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    RefusedByNextcloud,
    ModelMisuse,
    Unreachable,
    DeniedByUser,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::RefusedByNextcloud => "refused_by_nextcloud",
            Outcome::ModelMisuse => "model_misuse",
            Outcome::Unreachable => "unreachable",
            Outcome::DeniedByUser => "denied_by_user",
        }
    }

    /// The outcome of an MCP tool result from its failure kind (mcp-nextcloud's
    /// `_meta["tamebi/failureKind"]`): not found and conflicts are the model
    /// aiming wrong; an unreadable document is the workspace answering.
    pub fn from_failure_kind(kind: Option<&str>) -> Outcome {
        match kind {
            None => Outcome::Ok,
            Some("refused_by_nextcloud" | "unreadable") => Outcome::RefusedByNextcloud,
            Some("nextcloud_unreachable") => Outcome::Unreachable,
            Some(_) => Outcome::ModelMisuse,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallRecord {
    pub at: i64,
    pub uid: String,
    pub conversation_id: String,
    pub tool: String,
    pub arguments_hash: String,
    pub duration_ms: i64,
    pub outcome: String,
}

pub fn open(path: Option<&Path>) -> Result<Database, StoreError> {
    Database::open(path, MIGRATIONS)
}

pub fn record(connection: &Connection, call: &ToolCallRecord) -> Result<(), StoreError> {
    connection.execute(
        "INSERT INTO tool_calls (at, uid, conversation_id, tool, arguments_hash, duration_ms, outcome)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            call.at,
            call.uid,
            call.conversation_id,
            call.tool,
            call.arguments_hash,
            call.duration_ms,
            call.outcome
        ],
    )?;
    Ok(())
}

/// A user's calls, oldest first.
pub fn calls_of(connection: &Connection, uid: &str) -> Result<Vec<ToolCallRecord>, StoreError> {
    let mut statement = connection.prepare(
        "SELECT at, uid, conversation_id, tool, arguments_hash, duration_ms, outcome
         FROM tool_calls WHERE uid = ?1 ORDER BY at, rowid",
    )?;
    let rows = statement.query_map([uid], |row| {
        Ok(ToolCallRecord {
            at: row.get(0)?,
            uid: row.get(1)?,
            conversation_id: row.get(2)?,
            tool: row.get(3)?,
            arguments_hash: row.get(4)?,
            duration_ms: row.get(5)?,
            outcome: row.get(6)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_kinds_say_who_failed() {
        assert_eq!(Outcome::from_failure_kind(None), Outcome::Ok);
        assert_eq!(
            Outcome::from_failure_kind(Some("refused_by_nextcloud")),
            Outcome::RefusedByNextcloud
        );
        assert_eq!(Outcome::from_failure_kind(Some("nextcloud_unreachable")), Outcome::Unreachable);
        for misuse in ["invalid_arguments", "not_found", "conflict", "something_new"] {
            assert_eq!(Outcome::from_failure_kind(Some(misuse)), Outcome::ModelMisuse);
        }
    }

    #[test]
    fn calls_are_kept_per_user_in_order() {
        let db = open(None).unwrap();
        db.run_blocking(|c| {
            for (at, uid, outcome) in [
                (2, "alice", Outcome::DeniedByUser),
                (1, "alice", Outcome::Ok),
                (3, "bob", Outcome::Ok),
            ] {
                record(
                    c,
                    &ToolCallRecord {
                        at,
                        uid: uid.into(),
                        conversation_id: "c".into(),
                        tool: "files_write".into(),
                        arguments_hash: crate::store::arguments_hash("{}"),
                        duration_ms: 0,
                        outcome: outcome.as_str().into(),
                    },
                )?;
            }
            let alice = calls_of(c, "alice")?;
            assert_eq!(
                alice.iter().map(|call| call.outcome.as_str()).collect::<Vec<_>>(),
                ["ok", "denied_by_user"]
            );
            Ok(())
        })
        .unwrap();
    }
}
