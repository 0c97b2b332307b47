//! files_search and files_read against the fake Nextcloud's demo world, as
//! the user: what each user sees, continuation hints, and failures that say
//! what to do next with a machine-readable kind.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::*;
use serde_json::{Value, json};

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
    assert!(text_of(&carol).contains("No files match"));
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

/// Nextcloud's search takes a content type whole (`eq`) or as `type/%`
/// only; the tool once sent `application/pdf%`, which Nextcloud refuses,
/// so its own documented example always failed as "Nextcloud gave an
/// unexpected answer".
#[tokio::test]
async fn search_by_a_whole_mime_type_or_its_first_part() {
    let stack = start(second_token()).await;
    let pdfs = stack.call_tool("alice", "files_search", json!({"mime": "application/pdf"})).await;
    assert_eq!(pdfs["isError"], json!(false), "{pdfs}");
    assert_eq!(paths(&pdfs), ["Manuals/admin-manual.pdf"], "{pdfs}");
    for mime in ["text/markdown", "Text/Markdown", "text/markdown; charset=utf-8"] {
        let markdown = stack.call_tool("alice", "files_search", json!({"mime": mime})).await;
        let found = paths(&markdown);
        assert!(found.contains(&"Documents/notes-reunion.md".to_string()), "{mime}: {markdown}");
        assert!(found.iter().all(|path| path.ends_with(".md")), "{mime}: {markdown}");
    }
    for mime in ["text/", "text", "text/*", "text/%"] {
        let text_files = stack
            .call_tool("alice", "files_search", json!({"mime": mime, "folder": "Documents"}))
            .await;
        assert_eq!(
            paths(&text_files),
            ["Documents/todo.txt", "Documents/notes-reunion.md"],
            "{mime}: {text_files}"
        );
    }
    for mime in ["application/pdf%", "%", "text/mark%", "a/b/c", "text /plain", "/pdf", "<x/>"] {
        let refused = stack.call_tool("alice", "files_search", json!({"mime": mime})).await;
        assert_eq!(failure_kind(&refused), Some("invalid_arguments"), "{mime}: {refused}");
        assert!(text_of(&refused).contains("application/pdf"), "{mime}: {refused}");
    }
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
    assert!(text_of(&result).contains("RFC 3339"));
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
    assert!(text_of(&first).contains(&format!("offset={next}")));
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
        let message = text_of(&result);
        assert!(
            !message.contains("127.0.0.1") && !message.contains("remote.php"),
            "no infrastructure detail: {message}"
        );
    }
}

#[tokio::test]
async fn nextcloud_down_is_unreachable_not_a_guess() {
    let stack = start(second_token()).await;
    stack.fail_route("/remote.php/dav", None, 503, None);
    let result = stack.call_tool("alice", "files_search", json!({"name": "notes"})).await;
    assert_eq!(failure_kind(&result), Some("nextcloud_unreachable"));
    assert!(text_of(&result).contains("do not guess"));
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

// ---- files_write -------------------------------------------------------

/// What the fake holds at `path` in `owner`'s own tree, as text.
fn stored(stack: &Stack, owner: &str, path: &str) -> Option<String> {
    let world = stack.fake.shared.world();
    let node = world.storage.node_at(owner, path)?;
    node.content().map(|content| String::from_utf8_lossy(content).into_owned())
}

fn annotations(tools: &Value, name: &str) -> Value {
    tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == name)
        .unwrap_or_else(|| panic!("{name} is listed"))["annotations"]
        .clone()
}

#[tokio::test]
async fn the_action_tools_are_annotated_truthfully() {
    let stack = start(second_token()).await;
    let tools = stack.rpc_result(&stack.headers_for("alice"), "tools/list", json!({})).await;
    let write = annotations(&tools, "files_write");
    assert_eq!(write["readOnlyHint"], json!(false));
    assert_eq!(write["destructiveHint"], json!(true), "it can overwrite");
    assert_eq!(write["idempotentHint"], json!(true));
    let moving = annotations(&tools, "files_move");
    assert_eq!(moving["readOnlyHint"], json!(false));
    assert_eq!(moving["destructiveHint"], json!(false), "it never overwrites");
    assert_eq!(moving["idempotentHint"], json!(false));
}

#[tokio::test]
async fn write_creates_a_file_whose_fileid_circulates() {
    let stack = start(second_token()).await;
    let content = "# Résumé\n\nLe budget est validé.\n";
    let result = stack
        .call_tool(
            "alice",
            "files_write",
            json!({"path": "Documents/resume.md", "content": content}),
        )
        .await;
    let structured = &result["structuredContent"];
    assert_eq!(structured["path"], "Documents/resume.md");
    assert_eq!(structured["created"], json!(true));
    assert_eq!(structured["size"], json!(content.len()));
    assert!(!structured["etag"].as_str().unwrap().is_empty());
    assert!(!structured["etag"].as_str().unwrap().contains('"'), "the etag is unquoted");
    // The padded OC-FileId ("00000NNNocfake0001") is parsed to the real id.
    let fileid = structured["fileid"].as_u64().unwrap();
    let stored_id =
        stack.fake.shared.world().storage.node_at("alice", "Documents/resume.md").unwrap().id;
    assert_eq!(fileid, stored_id);
    assert!(text_of(&result).contains("Created \"Documents/resume.md\""));
    assert_eq!(stored(&stack, "alice", "Documents/resume.md").as_deref(), Some(content));
    let read = stack.call_tool("alice", "files_read", json!({"fileid": fileid})).await;
    assert_eq!(read["structuredContent"]["text"], content);
}

#[tokio::test]
async fn write_replaces_only_when_told_to() {
    let stack = start(second_token()).await;
    let original = stored(&stack, "alice", "Documents/todo.txt").unwrap();
    let refused = stack
        .call_tool("alice", "files_write", json!({"path": "Documents/todo.txt", "content": "gone"}))
        .await;
    assert_failure(&refused, "conflict", "already exists");
    assert!(text_of(&refused).contains("overwrite=true"), "{}", text_of(&refused));
    assert_eq!(stored(&stack, "alice", "Documents/todo.txt").unwrap(), original);

    let fileid =
        stack.fake.shared.world().storage.node_at("alice", "Documents/todo.txt").unwrap().id;
    let replaced = stack
        .call_tool(
            "alice",
            "files_write",
            json!({"path": "Documents/todo.txt", "content": "- done\n", "overwrite": true}),
        )
        .await;
    assert_eq!(replaced["structuredContent"]["created"], json!(false));
    assert_eq!(replaced["structuredContent"]["fileid"], json!(fileid), "same file, same id");
    assert!(text_of(&replaced).starts_with("Replaced"));
    assert_eq!(stored(&stack, "alice", "Documents/todo.txt").as_deref(), Some("- done\n"));
    // Idempotent: the same call again leaves the same state.
    let again = stack
        .call_tool(
            "alice",
            "files_write",
            json!({"path": "Documents/todo.txt", "content": "- done\n", "overwrite": true}),
        )
        .await;
    assert_eq!(again["structuredContent"]["fileid"], json!(fileid));
    assert_eq!(stored(&stack, "alice", "Documents/todo.txt").as_deref(), Some("- done\n"));
}

#[tokio::test]
async fn write_into_a_shared_folder_lands_in_the_owners_tree() {
    let stack = start(second_token()).await;
    // The Apollo folder is alice's, shared with the apollo group (create allowed).
    let result = stack
        .call_tool("bob", "files_write", json!({"path": "Apollo/notes-bob.md", "content": "hi"}))
        .await;
    assert_eq!(result["structuredContent"]["created"], json!(true), "{result}");
    assert_eq!(stored(&stack, "alice", "Projects/Apollo/notes-bob.md").as_deref(), Some("hi"));
    assert_eq!(stored(&stack, "bob", "Apollo/notes-bob.md"), None);
}

/// Calls `tool` as alice with each case's arguments: each fails with the
/// case's kind, its message says what the case expects, and it names no
/// infrastructure.
async fn assert_instructions(stack: &Stack, tool: &str, cases: &[(Value, &str, &str)]) {
    for (arguments, kind, says) in cases {
        let result = stack.call_tool("alice", tool, arguments.clone()).await;
        assert_eq!(failure_kind(&result), Some(*kind), "{arguments}: {result}");
        let message = text_of(&result);
        assert!(message.contains(says), "{arguments}: {message}");
        assert!(
            !message.contains("127.0.0.1")
                && !message.contains("remote.php")
                && !message.contains("Sabre"),
            "no infrastructure detail: {message}"
        );
    }
}

#[tokio::test]
async fn write_failures_are_instructions() {
    let stack = start(second_token()).await;
    stack.fake.shared.world().storage.seed_file(
        "bob",
        "Manuals/readme.txt",
        b"read me".to_vec(),
        None,
        0,
    );
    let too_long = "x".repeat(files_write_content_max() + 1);
    let cases = [
        // A folder is not a file.
        (json!({"path": "Documents", "content": "x"}), "invalid_arguments", "is a folder"),
        (
            json!({"path": "Documents", "content": "x", "overwrite": true}),
            "invalid_arguments",
            "is a folder",
        ),
        (json!({"path": "Documents/", "content": "x"}), "invalid_arguments", "path of a file"),
        (json!({"path": "Nowhere/a.md", "content": "x"}), "conflict", "\"Nowhere\" does not exist"),
        // bob's Manuals is shared read-only with alice.
        (json!({"path": "Manuals/new.md", "content": "x"}), "refused_by_nextcloud", "permission"),
        (
            json!({"path": "Manuals/readme.txt", "content": "x", "overwrite": true}),
            "refused_by_nextcloud",
            "permission",
        ),
        (
            json!({"path": "Projects/Apollo/plan.odt", "content": "x", "overwrite": true}),
            "invalid_arguments",
            ".odt",
        ),
        (json!({"path": "../bob/a.md", "content": "x"}), "invalid_arguments", ".."),
        (json!({"path": "a.md", "content": too_long}), "invalid_arguments", "at most"),
        (json!({"path": "a.md"}), "invalid_arguments", "input schema"),
        (
            json!({"path": "a.md", "content": "x", "mode": "append"}),
            "invalid_arguments",
            "input schema",
        ),
    ];
    assert_instructions(&stack, "files_write", &cases).await;
    assert_eq!(stored(&stack, "bob", "Manuals/readme.txt").as_deref(), Some("read me"));
    assert_eq!(stored(&stack, "bob", "Manuals/new.md"), None);
    assert_eq!(stored(&stack, "alice", "a.md"), None);
}

fn files_write_content_max() -> usize {
    mcp_nextcloud::tools::files_write::CONTENT_LENGTH_MAX
}

#[tokio::test]
async fn write_into_a_folder_the_user_cannot_see_changes_nothing() {
    let stack = start(second_token()).await;
    // carol is not in the apollo group: alice's Projects/Apollo does not
    // exist for her, and saying so is all she learns.
    let result = stack
        .call_tool("carol", "files_write", json!({"path": "Projects/Apollo/x.md", "content": "x"}))
        .await;
    assert_eq!(failure_kind(&result), Some("conflict"));
    assert!(text_of(&result).contains("does not exist"));
    assert_eq!(stored(&stack, "alice", "Projects/Apollo/x.md"), None);
    assert_eq!(stored(&stack, "carol", "Projects/Apollo/x.md"), None);
}

#[tokio::test]
async fn write_when_storage_is_full_nextcloud_is_down_or_old() {
    let stack = start(second_token()).await;
    stack.fail_route("/remote.php/dav/files", Some("PUT"), 507, Some(1));
    let full =
        stack.call_tool("alice", "files_write", json!({"path": "a.md", "content": "x"})).await;
    assert_eq!(failure_kind(&full), Some("refused_by_nextcloud"));
    assert!(text_of(&full).contains("storage is full"));
    stack.fail_route("/remote.php/dav/files", Some("PUT"), 503, Some(1));
    let down =
        stack.call_tool("alice", "files_write", json!({"path": "a.md", "content": "x"})).await;
    assert_eq!(failure_kind(&down), Some("nextcloud_unreachable"));
    assert_eq!(stored(&stack, "alice", "a.md"), None);
    // Nextcloud before sabre/dav 4.1.3 answers a PUT into a missing folder
    // with 404 instead of 409: the same instruction either way.
    stack.fail_route("/remote.php/dav/files/alice/Nowhere", Some("PUT"), 404, Some(1));
    let old_server = stack
        .call_tool("alice", "files_write", json!({"path": "Nowhere/a.md", "content": "x"}))
        .await;
    assert_failure(&old_server, "conflict", "\"Nowhere\" does not exist");
}

// ---- files_move --------------------------------------------------------

#[tokio::test]
async fn move_renames_and_moves_keeping_the_fileid() {
    let stack = start(second_token()).await;
    let original = stored(&stack, "alice", "Documents/todo.txt").unwrap();
    let found = stack.call_tool("alice", "files_search", json!({"name": "todo"})).await;
    let fileid = found["structuredContent"]["files"][0]["fileid"].as_u64().unwrap();

    let renamed = stack
        .call_tool(
            "alice",
            "files_move",
            json!({"path": "Documents/todo.txt", "destination": "Documents/todo-2026.txt"}),
        )
        .await;
    assert_eq!(
        renamed["structuredContent"],
        json!({"fileid": fileid, "old_path": "Documents/todo.txt", "new_path": "Documents/todo-2026.txt"})
    );
    assert!(
        text_of(&renamed).contains("Moved \"Documents/todo.txt\" to \"Documents/todo-2026.txt\"")
    );

    // The fileid from files_search is a source too.
    let moved = stack
        .call_tool(
            "alice",
            "files_move",
            json!({"fileid": fileid, "destination": "Private/todo.txt"}),
        )
        .await;
    assert_eq!(moved["structuredContent"]["old_path"], "Documents/todo-2026.txt");
    assert_eq!(moved["structuredContent"]["new_path"], "Private/todo.txt");
    assert_eq!(moved["structuredContent"]["fileid"], json!(fileid));
    assert_eq!(stored(&stack, "alice", "Private/todo.txt").unwrap(), original);
    let old = stack.call_tool("alice", "files_read", json!({"path": "Documents/todo.txt"})).await;
    assert_eq!(failure_kind(&old), Some("not_found"));
    let read = stack.call_tool("alice", "files_read", json!({"fileid": fileid})).await;
    assert_eq!(read["structuredContent"]["path"], "Private/todo.txt");

    // A folder moves with its contents.
    let folder = stack
        .call_tool(
            "alice",
            "files_move",
            json!({"path": "Private", "destination": "Documents/Private"}),
        )
        .await;
    assert!(folder["structuredContent"]["fileid"].as_u64().unwrap() > 0, "{folder}");
    assert_eq!(stored(&stack, "alice", "Documents/Private/todo.txt").unwrap(), original);
}

#[tokio::test]
async fn move_never_overwrites() {
    let stack = start(second_token()).await;
    let notes = stored(&stack, "alice", "Documents/notes-reunion.md").unwrap();
    let todo = stored(&stack, "alice", "Documents/todo.txt").unwrap();
    let result = stack
        .call_tool(
            "alice",
            "files_move",
            json!({"path": "Documents/todo.txt", "destination": "Documents/notes-reunion.md"}),
        )
        .await;
    assert_failure(&result, "conflict", "Choose another name");
    assert_eq!(stored(&stack, "alice", "Documents/notes-reunion.md").unwrap(), notes);
    assert_eq!(stored(&stack, "alice", "Documents/todo.txt").unwrap(), todo);
}

#[tokio::test]
async fn move_failures_are_instructions() {
    let stack = start(second_token()).await;
    let cases = [
        (
            json!({"path": "Documents/missing.md", "destination": "Documents/b.md"}),
            "not_found",
            "does not exist",
        ),
        (json!({"fileid": 999_999, "destination": "Documents/b.md"}), "not_found", "files_search"),
        (
            json!({"path": "Documents/todo.txt", "destination": "Nowhere/todo.txt"}),
            "conflict",
            "\"Nowhere\" does not exist",
        ),
        (
            json!({"path": "Documents/notes-reunion.md", "destination": "Documents/todo.txt/x.md"}),
            "conflict",
            "is a file",
        ),
        // bob's Manuals is shared read-only with alice: nothing leaves it,
        // nothing enters it.
        (
            json!({"path": "Manuals/admin-manual.pdf", "destination": "Documents/admin-manual.pdf"}),
            "refused_by_nextcloud",
            "permission",
        ),
        (
            json!({"path": "Documents/todo.txt", "destination": "Manuals/todo.txt"}),
            "refused_by_nextcloud",
            "permission",
        ),
        (
            json!({"path": "Documents/todo.txt", "destination": "Documents/todo.txt"}),
            "invalid_arguments",
            "already at",
        ),
        (
            json!({"path": "Documents", "destination": "Documents/Sub/Documents"}),
            "invalid_arguments",
            "into itself",
        ),
        (
            json!({"path": "Documents/todo.txt", "destination": "Private/"}),
            "invalid_arguments",
            "name included",
        ),
        (
            json!({"path": "Documents/todo.txt", "fileid": 1, "destination": "a.txt"}),
            "invalid_arguments",
            "exactly one",
        ),
        (json!({"destination": "a.txt"}), "invalid_arguments", "exactly one"),
        (json!({"path": "", "destination": "a.txt"}), "invalid_arguments", "root"),
        (
            json!({"path": "Documents/todo.txt", "destination": "../bob/todo.txt"}),
            "invalid_arguments",
            "..",
        ),
        (
            json!({"path": "Documents/todo.txt", "destination": "x.txt", "overwrite": true}),
            "invalid_arguments",
            "input schema",
        ),
    ];
    assert_instructions(&stack, "files_move", &cases).await;
    assert!(stored(&stack, "alice", "Documents/todo.txt").is_some(), "nothing moved");
    assert!(stored(&stack, "bob", "Manuals/admin-manual.pdf").is_some(), "nothing moved");
}

#[tokio::test]
async fn move_of_a_file_another_user_owns_is_not_found() {
    let stack = start(second_token()).await;
    let fileid =
        stack.fake.shared.world().storage.node_at("alice", "Private/journal.md").unwrap().id;
    for arguments in [
        json!({"fileid": fileid, "destination": "stolen.md"}),
        json!({"path": "Private/journal.md", "destination": "stolen.md"}),
    ] {
        let result = stack.call_tool("bob", "files_move", arguments.clone()).await;
        assert_eq!(failure_kind(&result), Some("not_found"), "{arguments}: {result}");
    }
    assert!(stored(&stack, "alice", "Private/journal.md").is_some());
    assert_eq!(stored(&stack, "bob", "stolen.md"), None);
}

#[tokio::test]
async fn documents_are_read_as_their_extracted_text() {
    let stack = start(second_token()).await;
    let docx = stack
        .call_tool(
            "alice",
            "files_read",
            json!({"path": "Projects/Apollo/CR-reunion-mars.docx", "length": 64000}),
        )
        .await;
    let text = docx["structuredContent"]["text"].as_str().unwrap();
    assert!(text.contains("# §3. Budget prévisionnel"), "{text}");
    assert!(text.contains("40 000 € (quarante mille euros)"), "{text}");
    // Offsets count in the extracted text: re-reading from a passage's
    // offset gives that passage first.
    let offset = text.find("# §3. Budget prévisionnel").unwrap();
    let again = stack
        .call_tool(
            "alice",
            "files_read",
            json!({"path": "Projects/Apollo/CR-reunion-mars.docx", "offset": offset, "length": 200}),
        )
        .await;
    assert!(
        again["structuredContent"]["text"]
            .as_str()
            .unwrap()
            .starts_with("# §3. Budget prévisionnel")
    );
    let manual = stack
        .call_tool(
            "alice",
            "files_read",
            json!({"path": "Manuals/admin-manual.pdf", "length": 64000}),
        )
        .await;
    assert!(
        manual["structuredContent"]["text"]
            .as_str()
            .unwrap()
            .contains("3.4 Two-factor authentication")
    );
}

#[tokio::test]
async fn a_scan_without_text_is_unreadable_not_guessed() {
    let stack = start(second_token()).await;
    let result =
        stack.call_tool("bob", "files_read", json!({"path": "Scans/scan-facture.pdf"})).await;
    assert_failure(&result, "unreadable", "without a text layer");
}
