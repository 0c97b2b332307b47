//! files_search and files_read against the fake Nextcloud's demo world, as
//! the user: what each user sees, continuation hints, and failures that say
//! what to do next with a machine-readable kind.

mod common;

use common::*;
use serde_json::{Value, json};

fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_string()
}

fn failure_kind(result: &Value) -> Option<&str> {
    (result["isError"] == json!(true))
        .then(|| result["_meta"]["tamebi/failureKind"].as_str().unwrap())
}

fn paths(result: &Value) -> Vec<String> {
    result["structuredContent"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file["path"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn search_by_name_sees_own_and_shared_files_only() {
    let stack = start(second_token()).await;
    let alice = stack.call_tool("alice", "files_search", json!({"name": "manual"})).await;
    assert_eq!(
        paths(&alice),
        ["Manuals", "Manuals/admin-manual.pdf"],
        "bob's manual folder is shared with alice"
    );
    let carol = stack.call_tool("carol", "files_search", json!({"name": "manual"})).await;
    assert!(paths(&carol).is_empty());
    assert!(text(&carol).contains("No files match"));
    let bob = stack.call_tool("bob", "files_search", json!({"name": "journal"})).await;
    assert!(paths(&bob).is_empty(), "alice's private journal never reaches bob");
}

#[tokio::test]
async fn search_filters_by_type_folder_and_time_newest_first() {
    let stack = start(second_token()).await;
    let result = stack
        .call_tool("alice", "files_search", json!({"mime": "text/", "folder": "Documents"}))
        .await;
    assert_eq!(paths(&result), ["Documents/todo.txt", "Documents/notes-reunion.md"]);
    let result = stack
        .call_tool(
            "alice",
            "files_search",
            json!({"folder": "Projects/Apollo", "modified_after": "2026-03-01T00:00:00Z"}),
        )
        .await;
    assert_eq!(
        paths(&result),
        ["Projects/Apollo/CR-reunion-mars.docx", "Projects/Apollo/budget.ods"]
    );
    let file = &result["structuredContent"]["files"][0];
    assert!(file["fileid"].as_u64().unwrap() > 0);
    assert_eq!(file["type"], "file");
    assert_eq!(file["mtime"], "2026-03-12T16:00:00Z");
}

#[tokio::test]
async fn search_reports_truncation_and_bad_arguments() {
    let stack = start(second_token()).await;
    let result = stack.call_tool("alice", "files_search", json!({"limit": 2})).await;
    assert_eq!(paths(&result).len(), 2);
    assert_eq!(result["structuredContent"]["truncated"], json!(true));
    let result = stack.call_tool("alice", "files_search", json!({"limit": 0})).await;
    assert_eq!(failure_kind(&result), Some("invalid_arguments"));
    let result =
        stack.call_tool("alice", "files_search", json!({"modified_after": "last week"})).await;
    assert_eq!(failure_kind(&result), Some("invalid_arguments"));
    assert!(text(&result).contains("RFC 3339"));
    let result = stack.call_tool("alice", "files_search", json!({"folder": "../bob"})).await;
    assert_eq!(failure_kind(&result), Some("invalid_arguments"));
    let result = stack.call_tool("alice", "files_search", json!({"nmae": "typo"})).await;
    assert_eq!(failure_kind(&result), Some("invalid_arguments"));
}

#[tokio::test]
async fn read_returns_a_slice_and_how_to_continue() {
    let stack = start(second_token()).await;
    let first = stack
        .call_tool(
            "alice",
            "files_read",
            json!({"path": "Documents/notes-reunion.md", "length": 100}),
        )
        .await;
    let structured = &first["structuredContent"];
    assert_eq!(structured["offset"], 0);
    assert!(structured["text"].as_str().unwrap().starts_with("# Notes de réunion"));
    let next = structured["next_offset"].as_u64().unwrap();
    assert!((100..=103).contains(&next), "a cut character is finished: {next}");
    assert!(text(&first).contains(&format!("offset={next}")));
    // Reading on from the hint, then to the end, gives back the whole file.
    let mut whole = structured["text"].as_str().unwrap().to_string();
    let mut offset = next;
    loop {
        let part = stack
            .call_tool(
                "alice",
                "files_read",
                json!({"path": "Documents/notes-reunion.md", "offset": offset, "length": 500}),
            )
            .await;
        whole.push_str(part["structuredContent"]["text"].as_str().unwrap());
        match part["structuredContent"]["next_offset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    let original = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/fixtures/demo/files/alice/Documents/notes-reunion.md"),
    )
    .unwrap();
    assert_eq!(whole, original);
}

#[tokio::test]
async fn read_by_fileid_circulates_from_search() {
    let stack = start(second_token()).await;
    let found = stack.call_tool("bob", "files_search", json!({"name": "standup"})).await;
    let fileid = found["structuredContent"]["files"][0]["fileid"].as_u64().unwrap();
    let read = stack.call_tool("bob", "files_read", json!({"fileid": fileid})).await;
    assert_eq!(read["structuredContent"]["path"], "Notes/standup.md");
    assert!(read["structuredContent"]["text"].as_str().unwrap().contains("# Daily stand-up"));
    // The same id means nothing to a user who cannot see the file.
    let carol = stack.call_tool("carol", "files_read", json!({"fileid": fileid})).await;
    assert_eq!(failure_kind(&carol), Some("not_found"));
}

#[tokio::test]
async fn read_failures_are_instructions() {
    let stack = start(second_token()).await;
    let cases = [
        ("bob", json!({"path": "Private/journal.md"}), "not_found"),
        ("alice", json!({"path": "Documents/missing.md"}), "not_found"),
        ("alice", json!({"path": "Documents"}), "invalid_arguments"),
        ("alice", json!({"path": "Documents/todo.txt", "fileid": 1}), "invalid_arguments"),
        ("alice", json!({}), "invalid_arguments"),
        ("alice", json!({"path": "Documents/todo.txt", "offset": 100000}), "invalid_arguments"),
        ("alice", json!({"path": "Documents/todo.txt", "length": 1000000}), "invalid_arguments"),
    ];
    for (uid, arguments, kind) in cases {
        let result = stack.call_tool(uid, "files_read", arguments.clone()).await;
        assert_eq!(failure_kind(&result), Some(kind), "{uid} {arguments}: {result}");
        let message = text(&result);
        assert!(
            !message.contains("127.0.0.1") && !message.contains("remote.php"),
            "no infrastructure detail: {message}"
        );
    }
}

#[tokio::test]
async fn nextcloud_down_is_unreachable_not_a_guess() {
    let stack = start(second_token()).await;
    stack.fake.shared.world().faults.routes.push(fake_nextcloud::faults::RouteFault {
        prefix: "/remote.php/dav".into(),
        status: Some(503),
        ..Default::default()
    });
    let result = stack.call_tool("alice", "files_search", json!({"name": "notes"})).await;
    assert_eq!(failure_kind(&result), Some("nextcloud_unreachable"));
    assert!(text(&result).contains("do not guess"));
}

#[tokio::test]
async fn a_revoked_share_is_gone_on_the_next_call() {
    let stack = start(second_token()).await;
    let before = stack
        .call_tool("alice", "files_read", json!({"path": "Manuals/admin-manual.pdf", "length": 10}))
        .await;
    assert_ne!(failure_kind(&before), Some("not_found"));
    {
        let mut world = stack.fake.shared.world();
        let share = world.storage.shares().find(|share| share.owner == "bob").unwrap().id;
        world.storage.delete_share("bob", share).unwrap();
    }
    let after = stack
        .call_tool("alice", "files_read", json!({"path": "Manuals/admin-manual.pdf", "length": 10}))
        .await;
    assert_eq!(failure_kind(&after), Some("not_found"));
    let search = stack.call_tool("alice", "files_search", json!({"name": "manual"})).await;
    assert!(paths(&search).is_empty());
}
