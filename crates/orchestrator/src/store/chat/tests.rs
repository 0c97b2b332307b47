//! chat.db's rules: ownership, ordering, erasure, summaries once,
//! approvals decided once for the exact stored call.

use super::*;
use crate::store::{arguments_hash, audit};

fn db() -> Database {
    open(None).unwrap()
}

#[test]
fn messages_belong_to_their_user_and_keep_their_order() {
    db().run_blocking(|c| {
        assert!(ensure_conversation(c, "alice", "c1", "Budget", 10)?);
        assert!(!ensure_conversation(c, "bob", "c1", "Mine now", 11)?, "an id is not taken over");
        assert_eq!(append_message(c, "alice", "c1", "user", r#"{"text":"hi"}"#, 12)?, Some(1));
        assert_eq!(
            append_message(c, "alice", "c1", "assistant", r#"{"text":"hello"}"#, 13)?,
            Some(2)
        );
        assert_eq!(append_message(c, "bob", "c1", "user", "{}", 14)?, None);
        assert_eq!(messages(c, "bob", "c1")?, None);
        let stored = messages(c, "alice", "c1")?.unwrap();
        assert_eq!(
            stored.iter().map(|m| m.role.as_str()).collect::<Vec<_>>(),
            ["user", "assistant"]
        );
        ensure_conversation(c, "alice", "c2", "Later", 20)?;
        let listed = conversations(c, "alice")?;
        assert_eq!(listed.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["c2", "c1"]);
        assert!(conversations(c, "bob")?.is_empty());
        Ok(())
    })
    .unwrap();
}

#[test]
fn erasing_a_user_removes_their_chats_and_leaves_the_audit() {
    let chat = db();
    let audit_db = audit::open(None).unwrap();
    chat.run_blocking(|c| {
        ensure_conversation(c, "alice", "c1", "", 1)?;
        append_message(c, "alice", "c1", "user", "{}", 2)?;
        store_summary(c, "c1", 1, "summary", 3)?;
        ensure_conversation(c, "bob", "c9", "", 1)?;
        Ok(())
    })
    .unwrap();
    audit_db
        .run_blocking(|c| {
            let ok = audit::Outcome::Ok;
            let call = audit::ToolCallRecord::new(2, "alice", "c1", "files_read", "{}", 12, &ok);
            audit::record(c, &call)
        })
        .unwrap();
    chat.run_blocking(|c| {
        assert_eq!(erase_user(c, "alice")?, 1);
        let left: i64 = c.query_row("SELECT COUNT(*) FROM messages", [], |row| row.get(0))?;
        let summaries: i64 = c.query_row("SELECT COUNT(*) FROM summaries", [], |row| row.get(0))?;
        assert_eq!((left, summaries), (0, 0));
        assert_eq!(conversations(c, "bob")?.len(), 1);
        Ok(())
    })
    .unwrap();
    let kept = audit_db.run_blocking(|c| audit::calls_of(c, "alice")).unwrap();
    assert_eq!(kept.len(), 1, "the audit trail outlives the chats");
}

#[test]
fn a_summary_is_stored_once_and_reloaded() {
    db().run_blocking(|c| {
        ensure_conversation(c, "alice", "c1", "", 1)?;
        assert!(store_summary(c, "c1", 8, "first", 2)?);
        assert!(!store_summary(c, "c1", 8, "regenerated", 3)?);
        assert_eq!(latest_summary(c, "c1")?, Some((8, "first".to_string())));
        store_summary(c, "c1", 20, "later", 4)?;
        assert_eq!(latest_summary(c, "c1")?.unwrap().0, 20);
        Ok(())
    })
    .unwrap();
}

#[test]
fn an_approval_is_decided_once_by_its_owner_for_the_stored_call() {
    db().run_blocking(|c| {
        ensure_conversation(c, "alice", "c1", "", 1)?;
        let arguments = r#"{"path":"Documents/a.md","content":"x"}"#;
        let approval = Approval {
            approval_id: "ap-1".into(),
            conversation_id: "c1".into(),
            tool_call_id: "call-1".into(),
            tool: "files_write".into(),
            arguments: arguments.into(),
            arguments_hash: arguments_hash(arguments),
            decision: None,
        };
        request_approval(c, &approval, 2)?;
        assert_eq!(decide(c, "bob", "ap-1", Decision::Approved)?, Decided::Unknown);
        let Decided::Now(decided) = decide(c, "alice", "ap-1", Decision::Approved)? else {
            panic!("first decision records")
        };
        assert_eq!(decided.arguments, arguments, "what runs is what was stored");
        assert_eq!(decided.arguments_hash, arguments_hash(arguments));
        assert!(matches!(
            decide(c, "alice", "ap-1", Decision::Denied)?,
            Decided::Already(Approval { decision: Some(Decision::Approved), .. })
        ));
        assert_eq!(decide(c, "alice", "nope", Decision::Denied)?, Decided::Unknown);
        Ok(())
    })
    .unwrap();
}

#[test]
fn a_database_survives_reopening_and_a_newer_schema_is_refused() {
    let directory = std::env::temp_dir().join(format!("tamebi-chat-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    let path = directory.join("chat.db");
    open(Some(&path))
        .unwrap()
        .run_blocking(|c| {
            ensure_conversation(c, "alice", "c1", "kept", 1)?;
            append_message(c, "alice", "c1", "user", "{}", 2).map(|_| ())
        })
        .unwrap();
    let reopened = open(Some(&path)).unwrap();
    let stored = reopened.run_blocking(|c| messages(c, "alice", "c1")).unwrap().unwrap();
    assert_eq!(stored.len(), 1);
    reopened
        .run_blocking(|c| {
            c.pragma_update(None, "user_version", 7)?;
            Ok(())
        })
        .unwrap();
    assert!(matches!(open(Some(&path)), Err(StoreError::TooNew { found: 7, .. })));
    let _ = std::fs::remove_dir_all(&directory);
}
