//! `audit.db`: every tool call — who, which tool, the hash of its
//! arguments, how long, and how it ended. The outcome separates
//! "Nextcloud refused" (a permission boundary working) from "the model
//! misused the tool" (a tool-design problem) from "unreachable" and from
//! "denied by the user" (and a 404 or a scan from both), so the audit
//! answers which of those happened, not merely that something failed; a
//! failure kind this build does not know is kept as what it said. It survives a user's chat erasure.

use super::{Database, StoreError};
use rusqlite::{Connection, params};
use std::path::Path;
use wire::{FailureKind, Received};

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// Nextcloud said no: a permission boundary working.
    RefusedByNextcloud,
    /// Not there, or not for this user: Nextcloud answers 404 for a path
    /// that exists only for someone else, so this is neither the model's
    /// fault nor a refusal the audit could prove.
    NotFound,
    /// The target changed or already exists.
    Conflict,
    /// The document is there and readable but has no text to give (a scan).
    Unreadable,
    ModelMisuse,
    Unreachable,
    DeniedByUser,
    /// A kind this build does not know, kept as `unknown:<kind>` (cleaned
    /// and bounded by `wire::Received::parse`), or `unknown` for a
    /// failure that gave no kind: recorded as what it said, not guessed.
    Unknown(String),
}

impl Outcome {
    pub fn as_str(&self) -> &str {
        match self {
            Outcome::Ok => "ok",
            Outcome::RefusedByNextcloud => "refused_by_nextcloud",
            Outcome::NotFound => "not_found",
            Outcome::Conflict => "conflict",
            Outcome::Unreadable => "unreadable",
            Outcome::ModelMisuse => "model_misuse",
            Outcome::Unreachable => "unreachable",
            Outcome::DeniedByUser => "denied_by_user",
            Outcome::Unknown(label) => label,
        }
    }

    /// The outcome of a failed MCP tool result from what its
    /// `_meta["tamebi/failureKind"]` said. Only wrong arguments are the
    /// model's misuse; every other known kind is its own outcome.
    pub fn of_failure(received: Received) -> Outcome {
        match received {
            Received::Known(kind) => match kind {
                FailureKind::RefusedByNextcloud => Outcome::RefusedByNextcloud,
                FailureKind::NotFound => Outcome::NotFound,
                FailureKind::InvalidArguments => Outcome::ModelMisuse,
                FailureKind::NextcloudUnreachable => Outcome::Unreachable,
                FailureKind::Conflict => Outcome::Conflict,
                FailureKind::Unreadable => Outcome::Unreadable,
            },
            Received::Unknown(kind) if !kind.is_empty() => {
                Outcome::Unknown(format!("unknown:{kind}"))
            }
            Received::Unknown(_) | Received::Unspecified => Outcome::Unknown("unknown".into()),
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

impl ToolCallRecord {
    /// `uid`'s call of `tool` in `conversation_id`, ending in `outcome`; the
    /// arguments are kept only as their hash (the audit holds no content).
    pub fn new(
        at: i64,
        uid: &str,
        conversation_id: &str,
        tool: &str,
        arguments: &str,
        duration_ms: i64,
        outcome: &Outcome,
    ) -> ToolCallRecord {
        ToolCallRecord {
            at,
            uid: uid.into(),
            conversation_id: conversation_id.into(),
            tool: tool.into(),
            arguments_hash: super::arguments_hash(arguments),
            duration_ms,
            outcome: outcome.as_str().into(),
        }
    }
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
    let sql = "SELECT at, uid, conversation_id, tool, arguments_hash, duration_ms, outcome
         FROM tool_calls WHERE uid = ?1 ORDER BY at, rowid";
    super::rows(connection, sql, [uid], |row| {
        Ok(ToolCallRecord {
            at: row.get(0)?,
            uid: row.get(1)?,
            conversation_id: row.get(2)?,
            tool: row.get(3)?,
            arguments_hash: row.get(4)?,
            duration_ms: row.get(5)?,
            outcome: row.get(6)?,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_kinds_say_who_failed() {
        let of = |kind: FailureKind| Outcome::of_failure(Received::Known(kind)).as_str().to_owned();
        // Every kind has an outcome of its own name, except wrong arguments,
        // which is the model's misuse, and unreachable, which the audit has
        // always called that.
        for kind in FailureKind::ALL {
            let expected = match kind {
                FailureKind::InvalidArguments => "model_misuse",
                FailureKind::NextcloudUnreachable => "unreachable",
                other => other.as_str(),
            };
            assert_eq!(of(kind), expected, "{kind}");
        }
        // The two the audit used to misfile: a 404 is not misuse, a scan is
        // not a refusal.
        assert_eq!(of(FailureKind::NotFound), "not_found");
        assert_eq!(of(FailureKind::Unreadable), "unreadable");
    }

    #[test]
    fn an_unknown_kind_is_kept_not_filed_as_misuse() {
        let outcome = Outcome::of_failure(Received::parse(Some("quota_exceeded")));
        assert_eq!(outcome.as_str(), "unknown:quota_exceeded");
        let outcome = Outcome::of_failure(Received::parse(Some("bad\nkind")));
        assert_eq!(outcome.as_str(), "unknown:bad_kind");
        assert_eq!(Outcome::of_failure(Received::parse(None)).as_str(), "unknown");
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
                record(c, &ToolCallRecord::new(at, uid, "c", "files_write", "{}", 0, &outcome))?;
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
