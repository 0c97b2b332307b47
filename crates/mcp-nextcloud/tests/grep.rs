//! `files_grep` end to end: the fake Nextcloud with the demo drive, the
//! real server, the index filled by passes with the searching user's own
//! token and by webhooks that carry none.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::{
    Stack, grep, node_written, route_fault, second_token, start_configured, text_of, warm,
};
use mcp_nextcloud::convert::ConverterConfig;
use mcp_nextcloud::index::{store, webhook};
use serde_json::{Value, json};

fn doc(stack: &Stack, fileid: u64) -> Option<store::Doc> {
    stack.mcp().index().store().run_blocking(|connection| store::doc(connection, fileid)).unwrap()
}

fn fileid(stack: &Stack, owner: &str, path: &str) -> u64 {
    stack.fake.shared.world().storage.node_at(owner, path).unwrap().id
}

fn last_query(stack: &Stack) -> store::QueryRow {
    stack
        .mcp()
        .index()
        .store()
        .run_blocking(|connection| store::queries(connection, 0))
        .unwrap()
        .pop()
        .unwrap()
}

/// Seeds `count` files of carol's, (path, content) for each number, the
/// numbers' files modified a second apart from `mtime`.
fn seed(
    world: &mut fake_nextcloud::World,
    count: i64,
    mtime: i64,
    file: impl Fn(i64) -> (String, String),
) {
    for number in 0..count {
        let (path, content) = file(number);
        world.storage.seed_file("carol", &path, content.into_bytes(), None, mtime + number);
    }
}

/// One search as `uid` and the pass it starts, to its end: the index's
/// counts after.
async fn searched(stack: &Stack, uid: &str, arguments: Value) -> store::Status {
    grep(stack, uid, arguments).await;
    stack.mcp().index().idle().await;
    stack.mcp().index().store().run_blocking(|c| store::status(c)).unwrap()
}

/// files_read as `uid` of exactly the range a files_grep `passage` names.
async fn read_passage(stack: &Stack, uid: &str, passage: &Value) -> Value {
    let range =
        json!({"path": passage["path"], "offset": passage["offset"], "length": passage["length"]});
    stack.call_tool(uid, "files_read", range).await
}

/// Stops the stack's mcp-nextcloud and starts it again under its
/// configuration as `edit` changes it, the fake (and what it holds)
/// unchanged.
async fn restart(mut stack: Stack, edit: impl FnOnce(&mut mcp_nextcloud::Config)) -> Stack {
    stack.server.restart_mcp_nextcloud_with(edit).await.unwrap();
    stack
}

/// Waits up to two seconds for a webhook's effect.
async fn eventually(check: impl Fn() -> bool) -> bool {
    for _ in 0..100 {
        if check() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    false
}

async fn start() -> Stack {
    start_configured(second_token(), None, |_| {}).await
}

/// A stack whose index is ready for `uid`.
async fn warmed(uid: &str) -> Stack {
    let stack = start().await;
    warm(&stack, uid).await;
    stack
}

/// A stack whose index runs under the limits `edit` leaves.
async fn start_limited(
    edit: impl FnOnce(&mut mcp_nextcloud::index::Limits) + Send + 'static,
) -> Stack {
    start_configured(second_token(), None, move |config| edit(&mut config.index.limits)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_index_says_so_then_finds_sections_that_files_read_rereads() {
    let stack = start().await;
    let first = grep(&stack, "alice", json!({"query": "two-factor authentication"})).await;
    assert_eq!(first["structuredContent"]["index"], "building", "{first}");
    assert!(text_of(&first).contains("The index is still being built"), "{}", text_of(&first));
    warm(&stack, "alice").await;

    // The heading comes from a PDF with no structure, by pattern.
    let found = grep(&stack, "alice", json!({"query": "two-factor authentication"})).await;
    let passages = found["structuredContent"]["passages"].as_array().unwrap().clone();
    assert!(!passages.is_empty(), "{found}");
    let passage = &passages[0];
    assert_eq!(passage["path"], "Manuals/admin-manual.pdf");
    assert_eq!(passage["heading"], "3.4 Two-factor authentication");
    assert!(text_of(&found).contains("Manuals/admin-manual.pdf — 3.4 Two-factor authentication"));

    // files_read(path, offset, length) re-reads exactly the passage.
    let read = read_passage(&stack, "alice", passage).await;
    let reread = read["structuredContent"]["text"].as_str().unwrap();
    assert_eq!(reread.len() as u64, passage["length"].as_u64().unwrap());
    assert!(reread.to_lowercase().contains("two-factor authentication"), "{reread}");

    // Accents do not matter, and the citation names the section.
    let found = grep(&stack, "alice", json!({"query": "budget previsionnel quarante"})).await;
    let passage = &found["structuredContent"]["passages"][0];
    assert_eq!(passage["path"], "Projects/Apollo/CR-reunion-mars.docx", "{found}");
    assert_eq!(passage["heading"], "§3. Budget prévisionnel");
    assert!(passage["snippet"].as_str().unwrap().contains("**quarante**"), "{passage}");
    let row = last_query(&stack);
    assert!(row.candidates >= 1 && row.survivors >= 1 && row.returned >= 1, "{row:?}");

    // A folder narrows the permission check itself.
    let everywhere = grep(&stack, "alice", json!({"query": "reunion"})).await;
    let paths = |result: &Value| -> Vec<String> {
        result["structuredContent"]["passages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|passage| passage["path"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(paths(&everywhere).iter().any(|path| path.starts_with("Documents/")), "{everywhere}");
    let in_apollo =
        grep(&stack, "alice", json!({"query": "reunion", "folder": "Projects/Apollo"})).await;
    assert!(!paths(&in_apollo).is_empty(), "{in_apollo}");
    assert!(paths(&in_apollo).iter().all(|path| path.starts_with("Projects/Apollo/")));

    // Browsing by heading.
    let found = grep(&stack, "alice", json!({"heading": "budget"})).await;
    assert!(
        found["structuredContent"]["passages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|passage| passage["heading"].as_str().unwrap().to_lowercase().contains("budget")),
        "{found}"
    );
    stack.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_share_revoked_after_indexing_hides_its_passages() {
    let stack = warmed("alice").await;
    let found = grep(&stack, "alice", json!({"query": "two-factor"})).await;
    assert!(!found["structuredContent"]["passages"].as_array().unwrap().is_empty());
    {
        let mut world = stack.fake.shared.world();
        let share = world.storage.shares().find(|share| share.owner == "bob").unwrap().id;
        world.storage.delete_share("bob", share).unwrap();
    }
    let found = grep(&stack, "alice", json!({"query": "two-factor"})).await;
    assert_eq!(found["structuredContent"]["passages"], json!([]), "{found}");
    let row = last_query(&stack);
    assert!(row.candidates > 0, "{row:?}");
    assert_eq!((row.survivors, row.returned), (0, 0), "{row:?}");
    stack.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_one_user_indexed_another_never_sees() {
    let stack = warmed("alice").await;
    let journal = fileid(&stack, "alice", "Private/journal.md");
    assert_eq!(doc(&stack, journal).unwrap().status, "ok");
    warm(&stack, "bob").await;
    // The words meet only in alice's journal: bob gets what he can read
    // with some of them, as if the journal did not exist (before the fix,
    // the journal's unreadable match suppressed his own passages).
    let found = grep(&stack, "bob", json!({"query": "personal notes nobody"})).await;
    assert_eq!(found["structuredContent"]["matched"], "any", "{found}");
    let paths: Vec<&str> = found["structuredContent"]["passages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|passage| passage["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["Notes/standup.md"], "{found}");
    assert!(!text_of(&found).contains("journal"), "{}", text_of(&found));
    // Recorded as the fallback's answer, behind a permission boundary.
    let row = last_query(&stack);
    assert_eq!((row.fallback_after, row.returned), (Some(1), 1), "{row:?}");
    let found = grep(&stack, "bob", json!({"query": "personal nobody"})).await;
    assert_eq!(found["structuredContent"]["passages"], json!([]), "{found}");
    assert_eq!(found["structuredContent"]["matched"], "all", "{found}");
    let row = last_query(&stack);
    assert_eq!((row.candidates, row.survivors), (1, 0));
    stack.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_is_parked_as_needs_ocr_once() {
    let stack = warmed("bob").await;
    let scan = fileid(&stack, "bob", "Scans/scan-facture.pdf");
    let parked = doc(&stack, scan).unwrap();
    assert_eq!((parked.status.as_str(), parked.dirty), ("needs_ocr", false), "{parked:?}");
    for _ in 0..3 {
        searched(&stack, "bob", json!({"query": "facture"})).await;
    }
    assert_eq!(doc(&stack, scan).unwrap(), parked, "never retried");
    stack.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_written_now_is_read_in_the_next_pass_despite_a_backlog() {
    let stack = start_limited(|limits| limits.discovery_pages = 4).await;
    seed(&mut stack.fake.shared.world(), 500, 1_600_000_000, |number| {
        let content = format!("# Note {number}\n\nAncienne note numéro {number}.\n");
        (format!("Archive/note-{number:03}.md"), content)
    });
    let status = searched(&stack, "carol", json!({"query": "note"})).await;
    assert!(status.pending >= 470, "{status:?}");
    let fresh = {
        let now = stack.fake.shared.now();
        let mut world = stack.fake.shared.world();
        world.storage.seed_file(
            "carol",
            "Inbox/urgent.md",
            b"# Urgent\n\nLe contrat signe aujourd'hui.\n".to_vec(),
            None,
            now,
        )
    };
    searched(&stack, "carol", json!({"query": "contrat"})).await;
    assert_eq!(doc(&stack, fresh).unwrap().status, "ok");
    let found = grep(&stack, "carol", json!({"query": "contrat"})).await;
    assert_eq!(found["structuredContent"]["passages"][0]["path"], "Inbox/urgent.md");
    assert_eq!(found["structuredContent"]["index"], "building", "the backlog still waits");
    stack.shutdown().await;
}

/// Files Nextcloud keeps refusing to hand over (locked, on an offline
/// external storage) once stayed uncounted at the head of the queue: every
/// pass downloaded them again and no pass reached the rest. Now each
/// refusal counts, the rows wait behind untried ones, and the third gives up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_nextcloud_refuses_to_hand_over_give_up_and_starve_nothing() {
    let stack = start_limited(|limits| limits.pass_documents = 5).await;
    {
        let mut world = stack.fake.shared.world();
        seed(&mut world, 5, 1_700_000_000, |number| {
            (
                format!("Locked/locked-{number}.md"),
                format!("# Locked {number}\n\nUne note verrouillée.\n"),
            )
        });
        seed(&mut world, 10, 1_600_000_000, |number| {
            let content = format!("# Note {number}\n\nUne note lisible numéro {number}.\n");
            (format!("Notes/note-{number}.md"), content)
        });
        world.faults.routes.push(route_fault(
            "/remote.php/dav/files/carol/Locked/",
            Some("GET"),
            423,
            None,
        ));
    }
    let pass = || searched(&stack, "carol", json!({"query": "note"}));
    let locked = fileid(&stack, "carol", "Locked/locked-4.md");
    let first = pass().await;
    assert_eq!((first.read, first.retrying), (0, 5), "{first:?}");
    let row = doc(&stack, locked).unwrap();
    assert_eq!(
        (row.attempts, row.dirty, row.last_error.as_deref()),
        (1, true, Some("download_refused")),
        "{row:?}"
    );
    assert_eq!(pass().await.read, 5, "the readable notes come before any retry");
    assert_eq!(pass().await.read, 10);
    assert_eq!(doc(&stack, locked).unwrap().attempts, 1, "not retried while untried rows wait");
    pass().await;
    let last = pass().await;
    assert_eq!((last.read, last.failed, last.pending), (10, 5, 0), "{last:?}");
    assert_eq!(doc(&stack, locked).unwrap().status, "failed");
    stack.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_mark_rows_dirty_without_reading_and_need_the_secret() {
    let stack = start_configured(second_token(), None, |config| {
        config.index.webhook_secret = Some("hook-secret".into());
    })
    .await;
    let endpoint = format!("{}/webhooks/nextcloud", stack.mcp().url());
    // Registered as an operator would, with an admin account: idempotent,
    // and running it again with a new secret rotates the secret.
    let admin = ("admin", "admin-demo-password");
    let http = reqwest::Client::new();
    let base = stack.fake.base_url().to_string();
    let register = |secret| webhook::register(&http, &base, admin, &endpoint, secret);
    let first = register("old-secret").await.unwrap();
    assert!(first.iter().all(|r| matches!(r, webhook::Registered::Created { .. })));
    let again = register("hook-secret").await.unwrap();
    assert!(again.iter().all(|r| matches!(r, webhook::Registered::AlreadyThere { .. })));
    let alice = ("alice", "alice-demo-password");
    let refused = webhook::register(&http, &base, alice, &endpoint, "s").await;
    assert!(refused.is_err());

    // Without the secret: refused, nothing recorded.
    let payload = node_written(999_999, "/alice/files/x.md");
    let answer = http.post(&endpoint).json(&payload).send().await.unwrap();
    assert_eq!(answer.status(), 401);
    let answer = stack.webhook("wrong").json(&payload).send().await.unwrap();
    assert_eq!(answer.status(), 401);
    assert!(doc(&stack, 999_999).is_none());

    // A real upload fires the registered webhook; the row is dirty, unread.
    let upload = http
        .put(format!("{base}/remote.php/dav/files/alice/Documents/livraison.md"))
        .basic_auth("alice", Some("alice-demo-password"))
        .body("# Livraison\n\nLa livraison du prototype est prévue le 3 avril.\n")
        .send()
        .await
        .unwrap();
    assert!(upload.status().is_success());
    let uploaded = fileid(&stack, "alice", "Documents/livraison.md");
    assert!(eventually(|| doc(&stack, uploaded).is_some()).await, "the webhook reached the index");
    let row = doc(&stack, uploaded).unwrap();
    assert_eq!((row.dirty, row.mtime, row.status.as_str()), (true, None, "pending"));
    assert_eq!(row.path, "Documents/livraison.md");

    // alice's next search reads it, as alice.
    searched(&stack, "alice", json!({"query": "livraison"})).await;
    let found = grep(&stack, "alice", json!({"query": "livraison prototype"})).await;
    assert_eq!(found["structuredContent"]["passages"][0]["path"], "Documents/livraison.md");

    // Renamed, then deleted.
    let moved = http
        .request(
            reqwest::Method::from_bytes(b"MOVE").unwrap(),
            format!("{base}/remote.php/dav/files/alice/Documents/livraison.md"),
        )
        .basic_auth("alice", Some("alice-demo-password"))
        .header(
            "destination",
            format!("{base}/remote.php/dav/files/alice/Documents/livraison-v2.md"),
        )
        .send()
        .await
        .unwrap();
    assert!(moved.status().is_success());
    let renamed =
        || doc(&stack, uploaded).is_some_and(|row| row.path == "Documents/livraison-v2.md");
    assert!(eventually(renamed).await);
    let deleted = http
        .delete(format!("{base}/remote.php/dav/files/alice/Documents/livraison-v2.md"))
        .basic_auth("alice", Some("alice-demo-password"))
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success());
    assert!(eventually(|| doc(&stack, uploaded).is_none()).await, "a deleted file's row goes");
    let found = grep(&stack, "alice", json!({"query": "livraison prototype"})).await;
    assert_eq!(found["structuredContent"]["passages"], json!([]));
    stack.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_are_instructions() {
    let stack = start().await;
    for arguments in [json!({}), json!({"query": "..."}), json!({"query": "x", "limit": 0})] {
        let result = grep(&stack, "alice", arguments.clone()).await;
        assert_eq!(result["isError"], true, "{arguments}: {result}");
        assert_eq!(result["_meta"]["tamebi/failureKind"], "invalid_arguments", "{result}");
    }
    stack.shutdown().await;
}

/// The seeds' bug: the MCP server started without ONLYOFFICE_JWT_SECRET, the
/// document server refused every conversion exactly as it refuses an
/// unreadable file, and every document got parked for good. Here the rows
/// stay pending and uncounted; restarted with the secret, they are read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_converter_secret_parks_nothing_and_fixing_it_reads_everything() {
    let directory = std::env::temp_dir().join(format!("tamebi-grep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    let index_path = directory.join("index.db");
    let converter = |secret: Option<&str>, converter_url: &str| ConverterConfig {
        url: converter_url.to_string(),
        secret: secret.map(str::to_string),
        lend_listen: "127.0.0.1:0".parse().unwrap(),
        lend_url: None,
    };
    let mut stack = start_configured(second_token(), None, |_| {}).await;
    let converter_url = stack.fake.converter_url().to_string();
    let configure = |secret: Option<&str>| {
        let (path, converter) = (index_path.clone(), converter(secret, &converter_url));
        move |config: &mut mcp_nextcloud::Config| {
            config.index.path = Some(path);
            config.converter = Some(converter);
        }
    };
    let (without_secret, with_secret) = (configure(None), configure(Some("demo-converter-secret")));
    stack = restart(stack, without_secret.clone()).await;
    let rtf = br"{\rtf1\ansi{\fonttbl{\f0 Arial;}}\f0 Proc\'e8s-verbal du comit\'e9\par Le comit\'e9 approuve la cl\'f4ture du lot 4.\par}";
    let uploaded = stack
        .client
        .http
        .put(format!(
            "{}/remote.php/dav/files/alice/Documents/pv-comite.rtf",
            stack.fake.base_url()
        ))
        .basic_auth("alice", Some("alice-demo-password"))
        .body(rtf.to_vec())
        .send()
        .await
        .unwrap();
    assert!(uploaded.status().is_success());
    let rtf_id = fileid(&stack, "alice", "Documents/pv-comite.rtf");
    for _ in 0..4 {
        searched(&stack, "alice", json!({"query": "cloture"})).await;
        // The back-off would skip the converter for a minute; a test has no minute.
        stack = restart(stack, without_secret.clone()).await;
    }
    let waiting = doc(&stack, rtf_id).unwrap();
    assert_eq!(
        (waiting.dirty, waiting.attempts, waiting.status.as_str(), waiting.last_error.as_deref()),
        (true, 0, "pending", Some("refused")),
        "{waiting:?}"
    );
    // Everything else was read meanwhile: the converter row blocked nothing.
    let notes = fileid(&stack, "alice", "Documents/notes-reunion.md");
    assert_eq!(doc(&stack, notes).unwrap().status, "ok");

    // The operator sets the secret and restarts: the row comes back.
    stack = restart(stack, with_secret).await;
    searched(&stack, "alice", json!({"query": "cloture"})).await;
    assert_eq!(doc(&stack, rtf_id).unwrap().status, "ok");
    let found = grep(&stack, "alice", json!({"query": "cloture comite"})).await;
    let passage = &found["structuredContent"]["passages"][0];
    assert_eq!(passage["path"], "Documents/pv-comite.rtf", "{found}");
    // files_read serves the converted text, at the same offsets.
    let read = read_passage(&stack, "alice", passage).await;
    assert!(
        read["structuredContent"]["text"]
            .as_str()
            .unwrap()
            .contains("approuve la clôture du lot 4"),
        "{read}"
    );
    stack.shutdown().await;
    let _ = std::fs::remove_dir_all(&directory);
}

/// index.db locked by another writer past the busy timeout: the webhook is
/// answered 503 (webhook_listeners may deliver it again) and records
/// nothing half-way; delivered again once the lock goes, it is recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_index_answers_webhooks_503_and_the_next_delivery_lands() {
    let directory = std::env::temp_dir().join(format!("tamebi-locked-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    let index_path = directory.join("index.db");
    let path = index_path.clone();
    let stack = start_configured(second_token(), None, move |config| {
        config.index.path = Some(path);
        config.index.webhook_secret = Some("hook-secret".into());
    })
    .await;
    let payload = node_written(777_001, "/alice/files/Documents/late.md");
    let deliver = || stack.webhook("hook-secret").json(&payload).send();

    let locker = rusqlite::Connection::open(&index_path).unwrap();
    locker.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let refused = deliver().await.unwrap();
    assert_eq!(refused.status(), 503);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(
        body,
        json!({"error": {"message": "The index could not record this change just now; deliver it again."}})
    );
    locker.execute_batch("ROLLBACK").unwrap();
    drop(locker);
    assert!(doc(&stack, 777_001).is_none(), "nothing recorded half-way");

    assert_eq!(deliver().await.unwrap().status(), 204);
    let row = doc(&stack, 777_001).unwrap();
    assert_eq!((row.path.as_str(), row.dirty), ("Documents/late.md", true));
    stack.shutdown().await;
    let _ = std::fs::remove_dir_all(&directory);
}

/// A page is in passage order, not file by file: a file's weaker passages
/// once came before another file's best one, so on a page of five, two
/// files with three matching passages each hid every other document.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_best_passage_of_a_second_file_comes_before_the_first_files_weaker_ones() {
    let stack = start().await;
    let filler =
        "Other words fill this section so that it is long and says little else. ".repeat(6);
    {
        let mut world = stack.fake.shared.world();
        let long = format!(
            "# Glaciers\n\nGlacier, glacier, glacier.\n\n# Valleys\n\n{filler} A glacier.\n\n# Rivers\n\n{filler} A glacier.\n"
        );
        world.storage.seed_file("carol", "Notes/long.md", long.into_bytes(), None, 1_700_000_000);
        let short = "# Ice\n\nThe glacier, the glacier.\n".to_string();
        world.storage.seed_file("carol", "Notes/short.md", short.into_bytes(), None, 1_700_000_001);
    }
    warm(&stack, "carol").await;
    let found = grep(&stack, "carol", json!({"query": "glacier"})).await;
    let passages = found["structuredContent"]["passages"].as_array().unwrap();
    let order: Vec<(&str, &str)> = passages
        .iter()
        .map(|passage| (passage["path"].as_str().unwrap(), passage["heading"].as_str().unwrap()))
        .collect();
    assert_eq!(
        order,
        [
            ("Notes/long.md", "Glaciers"),
            ("Notes/short.md", "Ice"),
            ("Notes/long.md", "Valleys"),
            ("Notes/long.md", "Rivers"),
        ],
        "{found}"
    );
    stack.shutdown().await;
}
