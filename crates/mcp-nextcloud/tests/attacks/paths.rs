//! Path traversal in every path argument of the file tools. bob attacks
//! alice's private journal (shared with nobody) through `files_read`,
//! `files_search`, `files_grep`, `files_write` and `files_move`. Every
//! attempt is refused with the exact failure kind, its text never carries
//! the journal, no upstream request names alice's files (the recorder),
//! and her files are unchanged afterwards (the fake's state).

use crate::common::proxy::*;
use crate::common::*;
use serde_json::{Value, json};

const SECRET_TEXT: &str = "Personal notes nobody else may read.";
const INVALID: Option<&str> = Some("invalid_arguments");
const NOT_FOUND: Option<&str> = Some("not_found");

/// Every way of spelling "alice's journal" from bob's side, with the
/// refusal files_read answers: `..` is refused before any request; every
/// other spelling is a literal name in bob's own tree, which does not
/// exist there. A backslash or a control character (NUL, newline) is
/// refused before any request, as Nextcloud refuses them in names.
fn spellings() -> Vec<(&'static str, &'static str, Option<&'static str>)> {
    vec![
        ("dot-dot", "../alice/files/Private/journal.md", INVALID),
        ("dot-dot inside", "Notes/../../alice/files/Private/journal.md", INVALID),
        ("dot-dot alone", "..", INVALID),
        ("percent-encoded dot-dot", "%2e%2e/alice/files/Private/journal.md", NOT_FOUND),
        ("percent-encoded slash", "..%2falice%2ffiles%2fPrivate%2fjournal.md", NOT_FOUND),
        ("double-encoded", "%252e%252e/alice/files/Private/journal.md", NOT_FOUND),
        ("absolute DAV path", "/remote.php/dav/files/alice/Private/journal.md", NOT_FOUND),
        ("absolute files path", "/alice/files/Private/journal.md", NOT_FOUND),
        ("the owner's relative path", "Private/journal.md", NOT_FOUND),
        ("backslashes", "..\\alice\\files\\Private\\journal.md", INVALID),
        ("NUL byte", "Notes/standup.md\u{0}/../../alice/files/Private/journal.md", INVALID),
        ("NUL byte at the end", "Private/journal.md\u{0}", INVALID),
        ("a newline", "Private/journal.md\n", INVALID),
        ("a URL", "http://127.0.0.1/remote.php/dav/files/alice/Private/journal.md", NOT_FOUND),
    ]
}

/// Every upstream request stays in bob's own tree: its path is under
/// `/remote.php/dav/files/bob/` with no `..` segment once decoded (how
/// Nextcloud reads it), and a SEARCH scope is under `/files/bob`.
fn assert_nothing_of_alice_requested(recorder: &Recorder, case: &str) {
    for request in recorder.seen() {
        let decoded = request.decoded_path();
        let in_bobs_tree = decoded == "/remote.php/dav/files/bob"
            || decoded.starts_with("/remote.php/dav/files/bob/")
            || decoded == "/remote.php/dav/"
            || decoded == "/remote.php/dav";
        assert!(in_bobs_tree, "{case}: {} {} left bob's tree", request.method, request.path);
        assert!(
            !decoded.split('/').any(|segment| segment == ".."),
            "{case}: {} {} climbs out",
            request.method,
            request.path
        );
        for scope in request.body.split("<d:href>").skip(1) {
            assert!(scope.starts_with("/files/bob"), "{case}: SEARCH scope {scope:.60}");
        }
    }
}

fn assert_refused(result: &Value, expected: Option<&str>, case: &str) {
    assert_eq!(failure_kind(result), expected, "{case}: {result}");
    assert!(!result.to_string().contains(SECRET_TEXT), "{case}: the journal leaked: {result}");
}

fn journal_untouched(stack: &Stack) {
    let world = stack.fake.shared.world();
    let node = world.storage.node_at("alice", "Private/journal.md").expect("the journal is there");
    let content = node.content().expect("a file");
    assert!(std::str::from_utf8(content).unwrap().contains(SECRET_TEXT));
    for path in ["Private/stolen.md", "Private/standup.md", "Private/pwned.md"] {
        assert!(world.storage.node_at("alice", path).is_none(), "{path} appeared in alice's files");
    }
    assert!(world.storage.node_at("bob", "Notes/standup.md").is_some(), "bob's file stayed");
}

#[tokio::test]
async fn files_read_never_reads_another_users_file_by_any_spelling() {
    let (stack, recorder) = recorded_stack(|_| {}).await;
    for (case, path, expected) in spellings() {
        let result = stack.call_tool("bob", "files_read", json!({"path": path})).await;
        assert_refused(&result, expected, case);
        assert_nothing_of_alice_requested(&recorder, case);
    }
    // By fileid: alice's journal's id is not bob's to read.
    let journal_id =
        stack.fake.shared.world().storage.node_at("alice", "Private/journal.md").unwrap().id;
    let result = stack.call_tool("bob", "files_read", json!({"fileid": journal_id})).await;
    assert_refused(&result, NOT_FOUND, "alice's fileid");
    // For contrast, alice reads it.
    let own = stack.call_tool("alice", "files_read", json!({"path": "Private/journal.md"})).await;
    assert!(own.to_string().contains(SECRET_TEXT), "{own}");
}

#[tokio::test]
async fn files_search_and_grep_folders_stay_inside_the_callers_files() {
    let (stack, recorder) = recorded_stack(|_| {}).await;
    for (case, folder, expected) in spellings() {
        let search = stack.call_tool("bob", "files_search", json!({"folder": folder})).await;
        let grep =
            stack.call_tool("bob", "files_grep", json!({"query": "notes", "folder": folder})).await;
        for (tool, result) in [("files_search", &search), ("files_grep", &grep)] {
            let case = format!("{tool} {case}");
            if expected == INVALID {
                assert_refused(result, INVALID, &case);
            } else {
                // A folder bob does not have: not found, or an empty answer.
                assert!(
                    matches!(failure_kind(result), None | Some("not_found")),
                    "{case}: {result}"
                );
                assert!(!result.to_string().contains(SECRET_TEXT), "{case}: {result}");
                assert!(
                    !result["structuredContent"].to_string().contains("journal.md"),
                    "{case}: {result}"
                );
            }
        }
        assert_nothing_of_alice_requested(&recorder, case);
    }
}

#[tokio::test]
async fn files_write_and_files_move_cannot_place_or_take_anything_in_another_users_files() {
    let (stack, recorder) = recorded_stack(|_| {}).await;
    let bob_moves = |arguments| stack.call_tool("bob", "files_move", arguments);
    let targets = [
        ("dot-dot", "../alice/files/Private/pwned.md"),
        ("percent-encoded dot-dot", "%2e%2e/alice/files/Private/pwned.md"),
        ("absolute files path", "/alice/files/Private/pwned.md"),
        ("absolute DAV path", "/remote.php/dav/files/alice/Private/pwned.md"),
        ("backslashes", "..\\alice\\files\\Private\\pwned.md"),
        ("NUL byte", "Notes/pwned.md\u{0}"),
    ];
    for (case, path) in targets {
        let write = stack
            .call_tool(
                "bob",
                "files_write",
                json!({"path": path, "content": "owned", "overwrite": true}),
            )
            .await;
        assert!(failure_kind(&write).is_some(), "files_write {case}: {write}");
        let moved = bob_moves(json!({"path": "Notes/standup.md", "destination": path})).await;
        assert!(failure_kind(&moved).is_some(), "files_move {case}: {moved}");
        assert_nothing_of_alice_requested(&recorder, case);
        journal_untouched(&stack);
    }
    // Taking: alice's journal as the source of a move into bob's files.
    for (case, source, expected) in spellings() {
        let moved = bob_moves(json!({"path": source, "destination": "Notes/stolen.md"})).await;
        assert_refused(&moved, expected, &format!("files_move from {case}"));
        assert_nothing_of_alice_requested(&recorder, case);
    }
    let journal_id =
        stack.fake.shared.world().storage.node_at("alice", "Private/journal.md").unwrap().id;
    let moved = bob_moves(json!({"fileid": journal_id, "destination": "Notes/stolen.md"})).await;
    assert_refused(&moved, NOT_FOUND, "files_move by alice's fileid");
    journal_untouched(&stack);
    assert!(stack.fake.shared.world().storage.node_at("bob", "Notes/stolen.md").is_none());
}

/// The `calendar` argument names one of the caller's calendars; spelled as
/// a path to alice's, it reaches nothing of hers, and nothing is created.
#[tokio::test]
async fn a_calendar_argument_cannot_reach_another_users_calendar() {
    let (stack, recorder) = recorded_stack(|_| {}).await;
    let alices_objects =
        || stack.fake.shared.world().calendars.get("alice", "personal").unwrap().members.len();
    let before = alices_objects();
    // A path is refused as such; anything else is looked up among bob's
    // own calendars and not found there.
    for (calendar, expected) in [
        ("../alice/personal", INVALID),
        ("..", INVALID),
        ("%2e%2e/alice/personal", INVALID),
        ("/remote.php/dav/calendars/alice/personal", INVALID),
        ("alice/personal", INVALID),
        ("..\\alice\\personal", NOT_FOUND),
        ("personal\u{0}", NOT_FOUND),
        ("personal_shared_by_alice", NOT_FOUND),
    ] {
        let listed = stack
            .call_tool(
                "bob",
                "calendar_events",
                json!({"start": "2026-03-01", "end": "2026-04-30", "calendar": calendar}),
            )
            .await;
        let created = stack
            .call_tool(
                "bob",
                "calendar_create_event",
                json!({"summary": "pwned", "start": "2026-03-20T10:00:00Z",
                    "end": "2026-03-20T11:00:00Z", "calendar": calendar}),
            )
            .await;
        for (tool, result) in [("calendar_events", &listed), ("calendar_create_event", &created)] {
            assert_eq!(failure_kind(result), expected, "{tool} {calendar:?}: {result}");
            assert!(!result.to_string().contains("Apollo"), "{tool} {calendar:?}: {result}");
        }
        for request in recorder.seen() {
            let decoded = request.decoded_path();
            assert!(
                !decoded.contains("/calendars/alice") && !request.body.contains("/calendars/alice"),
                "{calendar:?}: {} {} reached alice's calendars",
                request.method,
                request.path
            );
            assert!(!decoded.split('/').any(|segment| segment == ".."), "{}", request.path);
        }
    }
    assert_eq!(alices_objects(), before, "nothing was created in alice's calendar");
}
