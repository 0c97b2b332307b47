//! Fixtures: the demo loads, and a bad fixture reports every problem at once
//! with enough detail to fix it.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use fake_nextcloud::{Config, FakeNextcloud, Fixture, StartError};

#[tokio::test]
async fn demo_fixture_starts_and_lists_its_users() {
    let fixture = common::demo_fixture();
    let uids: Vec<&str> = fixture.users.iter().map(|user| user.uid.as_str()).collect();
    assert_eq!(uids, ["alice", "bob", "carol", "admin"]);
    let fake = common::start_with(&fixture).await.fake;
    {
        let world = fake.shared.world();
        let alice = world.user("alice").unwrap();
        // The group share of Projects/Apollo and bob's manual are mounted for alice.
        let root: Vec<String> = world
            .storage
            .children(alice.viewer(), "")
            .unwrap()
            .into_iter()
            .map(|e| e.path)
            .collect();
        assert_eq!(root, ["Documents", "Manuals", "Private", "Projects"]);
        let bob = world.user("bob").unwrap();
        let root: Vec<String> =
            world.storage.children(bob.viewer(), "").unwrap().into_iter().map(|e| e.path).collect();
        assert_eq!(root, ["Apollo", "Manuals", "Notes", "Scans"]);
        // Binary documents arrive byte for byte.
        let pdf = world.storage.resolve(bob.viewer(), "Manuals/admin-manual.pdf").unwrap();
        assert!(pdf.node.content().unwrap().starts_with(b"%PDF-1.4"));
        assert_eq!(pdf.node.mime(), "application/pdf");
    }
    fake.shutdown().await;
}

#[tokio::test]
async fn an_inconsistent_fixture_reports_every_problem() {
    let fixture = Fixture::parse(
        r#"
[[users]]
uid = "alice"
password = "x"

[[files]]
owner = "nobody"
path = "a.txt"
content = "a"

[[files]]
owner = "alice"
path = "../escape.txt"
content = "a"

[[files]]
owner = "alice"
path = "b.txt"

[[shares]]
owner = "alice"
path = "b.txt"
share_with = "ghost"
"#,
    )
    .unwrap();
    let Err(StartError::Fixture(problems)) =
        FakeNextcloud::start(&fixture, Config::default()).await
    else {
        panic!("an inconsistent fixture must not start");
    };
    let text = problems.join("\n");
    assert!(text.contains("unknown user \"nobody\""), "{text}");
    assert!(text.contains("\"../escape.txt\" is not valid"), "{text}");
    assert!(text.contains("needs exactly one of content or source"), "{text}");
    assert!(text.contains("unknown user \"ghost\""), "{text}");
}

#[test]
fn an_unknown_key_is_named_with_its_line() {
    let error =
        Fixture::parse("[[users]]\nuid = \"a\"\npassword = \"b\"\npasword = \"c\"\n").unwrap_err();
    assert!(error.contains("pasword"), "{error}");
    assert!(error.contains("line 4"), "{error}");
}

#[test]
fn a_missing_source_file_is_reported_with_its_path() {
    let mut fixture = Fixture::parse("").unwrap();
    fixture.base_dir = "/nonexistent-dir".into();
    let error = fixture.read_source("x.pdf").unwrap_err();
    assert!(error.contains("/nonexistent-dir/x.pdf"), "{error}");
}
