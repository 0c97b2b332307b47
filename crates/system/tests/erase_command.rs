//! `tamebi erase` on real database files: a user's chats and memory go, the
//! audit stays, other users are untouched; `--agent-facts` takes back only
//! what the agent wrote.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use orchestrator::store::{audit, chat, memory};
use std::process::Command;

fn seed(dir: &std::path::Path) {
    let chat_db = chat::open(Some(&dir.join("chat.db"))).unwrap();
    let memory_db = memory::open(Some(&dir.join("memory.db"))).unwrap();
    let audit_db = audit::open(Some(&dir.join("audit.db"))).unwrap();
    chat_db
        .run_blocking(|c| {
            for (uid, id) in [("alice", "a1"), ("alice", "a2"), ("bob", "b1")] {
                chat::ensure_conversation(c, uid, id, "t", 1)?;
                chat::append_message(c, uid, id, "user", r#"{"role":"user","text":"hi"}"#, 2)?;
            }
            Ok(())
        })
        .unwrap();
    memory_db
        .run_blocking(|c| {
            memory::write(c, "alice", "Prefers tea", memory::Source::User, 1)?;
            memory::write(c, "alice", "Works on Apollo", memory::Source::Agent, 2)?;
            memory::write(c, "bob", "Likes coffee", memory::Source::User, 3)?;
            memory::write(c, "bob", "Is on call", memory::Source::Agent, 4)?;
            Ok(())
        })
        .unwrap();
    audit_db
        .run_blocking(|c| {
            let ok = audit::Outcome::Ok;
            audit::record(
                c,
                &audit::ToolCallRecord::new(5, "alice", "a1", "files_read", "{}", 3, &ok),
            )
        })
        .unwrap();
}

fn tamebi(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tamebi")).args(args).output().unwrap()
}

fn facts(dir: &std::path::Path, uid: &str) -> Vec<(String, String)> {
    memory::open(Some(&dir.join("memory.db")))
        .unwrap()
        .run_blocking(|c| memory::list(c, uid, 10))
        .unwrap()
        .into_iter()
        .map(|fact| (fact.text, fact.source))
        .collect()
}

#[test]
fn erasing_a_user_keeps_the_audit_and_everyone_else() {
    let dir = std::env::temp_dir().join(format!("tamebi-erase-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    seed(&dir);
    let data = dir.to_str().unwrap();

    let agent = tamebi(&["erase", "--agent-facts", "--uid", "bob", "--data-dir", data]);
    assert!(agent.status.success(), "{}", String::from_utf8_lossy(&agent.stderr));
    assert_eq!(facts(&dir, "bob"), [("Likes coffee".to_string(), "user".to_string())]);
    assert_eq!(facts(&dir, "alice").len(), 2, "only bob's agent facts went");

    let erased = tamebi(&["erase", "--uid", "alice", "--data-dir", data]);
    assert!(erased.status.success(), "{}", String::from_utf8_lossy(&erased.stderr));
    let said = String::from_utf8_lossy(&erased.stdout);
    assert!(said.contains("2 conversation(s)") && said.contains("2 memory fact(s)"), "{said}");
    let chat_db = chat::open(Some(&dir.join("chat.db"))).unwrap();
    let (alice, bob) = chat_db
        .run_blocking(|c| Ok((chat::conversations(c, "alice")?, chat::conversations(c, "bob")?)))
        .unwrap();
    assert!(alice.is_empty());
    assert_eq!(bob.len(), 1);
    assert!(facts(&dir, "alice").is_empty());
    let kept = audit::open(Some(&dir.join("audit.db")))
        .unwrap()
        .run_blocking(|c| audit::calls_of(c, "alice"))
        .unwrap();
    assert_eq!(kept.len(), 1, "the audit trail is kept");

    let nobody = tamebi(&["erase", "--data-dir", data]);
    assert!(!nobody.status.success());
    assert!(String::from_utf8_lossy(&nobody.stderr).contains("--uid"));
    let nowhere = tamebi(&["erase", "--uid", "alice", "--data-dir", "/nonexistent/tamebi"]);
    assert!(String::from_utf8_lossy(&nowhere.stderr).contains("--data-dir"));
    std::fs::remove_dir_all(dir).ok();
}
