//! The operator commands around mcp-nextcloud's index, run as the built
//! `tamebi` binary: `index status` (once, `--json`, `--watch`),
//! `index report`, `webhooks register` against the fake Nextcloud, and what
//! `mcp-nextcloud` says about its index, webhooks and converter at start.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use mcp_nextcloud::index::store::{self, Failure, NewPassage, SeenFile, Store};
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The longest any command here may run before the test fails.
const COMMAND_TIME_MAX: Duration = Duration::from_secs(30);

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    common::scratch("index-commands", name)
}

/// `tamebi` with nothing inherited, logging at `info`.
fn tamebi() -> Command {
    let mut command = common::tamebi();
    command.env("RUST_LOG", "info");
    command
}

/// Runs to the end, within [`COMMAND_TIME_MAX`].
fn run(command: &mut Command) -> Output {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > COMMAND_TIME_MAX {
            child.kill().unwrap();
            let output = child.wait_with_output().unwrap();
            panic!(
                "{command:?} ran past {COMMAND_TIME_MAX:?}; stdout:\n{}",
                String::from_utf8_lossy(&output.stdout)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

fn seen(fileid: u64) -> SeenFile {
    SeenFile {
        fileid,
        path: format!("Documents/{fileid}.md"),
        mtime: Some(1_700_000_000 + fileid as i64),
        etag: Some(format!("etag-{fileid}")),
        size: Some(100),
        mime: Some("text/markdown".into()),
    }
}

fn passage(text: &str) -> NewPassage {
    NewPassage { heading: Some("Heading".into()), offset: 0, length: text.len(), text: text.into() }
}

/// An index with one document in each state: 1 and 2 read (3 passages,
/// 60 bytes of text), 3 a scan, 4 given up, 5 pending after one failure,
/// 6 pending from discovery, 7 pending from a webhook an hour ago; and
/// four searches.
fn fill(index_db: &Path) {
    let now = mcp_nextcloud::index::now();
    let store = Store::open(Some(index_db)).unwrap();
    store
        .run_blocking(|connection| {
            for fileid in 1..=6 {
                store::record_seen(connection, &seen(fileid), now - 600)?;
            }
            store::mark_dirty(connection, 7, "Inbox/new.md", now - 3600)?;
            let twenty = "x".repeat(20);
            assert!(store::record_passages(
                connection,
                1,
                1,
                None,
                &[passage(&twenty), passage(&twenty)],
                now
            )?);
            assert!(store::record_passages(connection, 2, 1, None, &[passage(&twenty)], now)?);
            store::record_failure(connection, 3, 1, Failure::NeedsOcr, "no_text_layer")?;
            for _ in 0..store::ATTEMPTS_MAX {
                store::record_failure(connection, 4, 1, Failure::Attempt, "damaged")?;
            }
            store::record_failure(connection, 5, 1, Failure::Attempt, "timeout")?;
            store::record_query(connection, now - 10 * 86_400, "ancienne recherche", 0, 0, 0)?;
            store::record_query(connection, now - 3000, "congés payés", 0, 0, 0)?;
            store::record_query(connection, now - 2000, "salaire direction", 5, 0, 0)?;
            store::record_query(connection, now - 1000, "budget", 3, 2, 4)?;
            Ok(())
        })
        .unwrap();
}

#[test]
fn status_prints_what_the_index_holds() {
    let dir = scratch("status");
    let index_db = dir.join("index.db");
    fill(&index_db);

    let output = run(tamebi().args(["index", "status", "--index-db"]).arg(&index_db));
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let (first, rest) = text.split_once('\n').unwrap();
    assert!(first.starts_with(&format!("index       {}, ", index_db.display())), "{first}");
    assert!(first.contains(" on disk"), "{first}");
    assert_eq!(
        rest,
        "\
documents            7 known
  read               2
  pending            3 (1 retrying), oldest waiting 1 h 0 min
  failed             1
  needs OCR          1
passages             3, 60 B of text
embeddings  off
searches             4
"
    );

    // The variable names the file as well as the flag does.
    let output =
        run(tamebi().args(["index", "status", "--json"]).env("TAMEBI_INDEX_DB", &index_db));
    assert!(output.status.success(), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let now = mcp_nextcloud::index::now();
    let oldest = json["oldest_pending"].as_i64().unwrap();
    assert!((now - 3700..=now - 3600).contains(&oldest), "{json}");
    assert_eq!(
        json,
        serde_json::json!({
            "known": 7, "read": 2, "pending": 3, "failed": 1, "needs_ocr": 1, "retrying": 1,
            "passages": 3, "text_bytes": 60, "oldest_pending": oldest, "queries": 4,
            "embeddings_model": null, "embedded": 0
        })
    );
}

#[test]
fn report_classifies_the_searches_of_the_window() {
    let dir = scratch("report");
    let index_db = dir.join("index.db");
    fill(&index_db);

    let output = run(tamebi()
        .args(["index", "report", "--since", "7d", "--json", "--index-db"])
        .arg(&index_db));
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["queries"], 3, "{report}");
    assert_eq!(report["holes"], 1, "{report}");
    assert_eq!(report["boundaries"], 1, "{report}");
    assert_eq!(report["answered"], 1, "{report}");
    assert_eq!(report["top_holes"], serde_json::json!([["congés payés", 1]]));

    let output = run(tamebi().args(["index", "report", "--index-db"]).arg(&index_db));
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("every recorded search"), "{text}");
    assert!(text.contains("4 searches"), "{text}");
    assert!(text.contains("hole in the index        2"), "{text}");
    assert!(text.contains("permission boundary      1"), "{text}");
    assert!(text.contains("ancienne recherche"), "{text}");

    let output =
        run(tamebi().args(["index", "report", "--since", "7 days", "--index-db"]).arg(&index_db));
    assert!(!output.status.success());
    assert!(stderr(&output).contains("e.g. 30m, 24h, 7d"), "{}", stderr(&output));
}

#[test]
fn a_missing_index_is_refused_not_created() {
    let dir = scratch("missing");
    let index_db = dir.join("nowhere").join("index.db");
    for command in [
        vec!["index", "status"],
        vec!["index", "status", "--json"],
        vec!["index", "status", "--watch", "--until-idle"],
        vec!["index", "report"],
    ] {
        let output = run(tamebi().args(&command).arg("--index-db").arg(&index_db));
        assert!(!output.status.success(), "{command:?}");
        let message = stderr(&output);
        assert!(
            message.contains(&format!("there is no index at {}", index_db.display())),
            "{command:?}: {message}"
        );
        assert!(message.contains("--index-db"), "{message}");
        assert!(stdout(&output).is_empty());
    }
    assert!(!dir.join("nowhere").exists(), "nothing was created");

    let output = run(tamebi().args(["index", "status", "--index-db", ":memory:"]));
    assert!(!output.status.success());
    assert!(stderr(&output).contains("in-memory index"), "{}", stderr(&output));
}

#[test]
fn watching_an_idle_index_ends_at_once() {
    let dir = scratch("idle");
    let index_db = dir.join("index.db");
    Store::open(Some(&index_db)).unwrap();
    let started = Instant::now();
    let output = run(tamebi()
        .args(["index", "status", "--watch", "--until-idle", "--interval", "60", "--index-db"])
        .arg(&index_db));
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(started.elapsed() < Duration::from_secs(20), "it did not wait an interval");
    let text = stdout(&output);
    assert_eq!(text.lines().count(), 1, "not a terminal: one line per tick\n{text}");
    assert!(text.starts_with("+0s read 0 (+0, 0.0/min) pending 0 "), "{text}");
    assert!(text.trim_end().ends_with(" idle"), "{text}");
}

#[test]
fn watching_follows_reading_until_idle() {
    let dir = scratch("watch");
    let index_db = dir.join("index.db");
    let store = Store::open(Some(&index_db)).unwrap();
    let now = mcp_nextcloud::index::now();
    store.run_blocking(|connection| store::record_seen(connection, &seen(1), now)).unwrap();

    let mut child = tamebi()
        .args(["index", "status", "--watch", "--until-idle", "--interval", "0.1", "--index-db"])
        .arg(&index_db)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Lines arrive on a channel so a watch that never ends fails the test
    // instead of hanging it.
    let (sender, receiver) = std::sync::mpsc::channel();
    let reader = BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in reader.lines() {
            if sender.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    let next = || receiver.recv_timeout(COMMAND_TIME_MAX);
    let first = next().expect("a first tick");
    assert!(first.contains("pending 1 "), "{first}");
    assert!(first.ends_with("eta unknown"), "{first}");

    store
        .run_blocking(|connection| {
            store::record_passages(connection, 1, 1, None, &[passage("text")], now)
        })
        .unwrap();
    // Ticks keep coming while it watches, so the bound is on time, not on
    // silence.
    let started = Instant::now();
    let mut last = first;
    loop {
        match next() {
            Ok(line) => last = line,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
        if started.elapsed() > COMMAND_TIME_MAX {
            child.kill().unwrap();
            panic!("the watch did not stop once idle; last tick: {last}");
        }
    }
    assert!(child.wait().unwrap().success());
    assert!(last.contains("read 1 (+1, "), "{last}");
    assert!(last.contains("pending 0 "), "{last}");
    assert!(last.ends_with(" idle"), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_register_once_then_finds_them_registered() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let fixture =
        fake_nextcloud::Fixture::load(&root.join("scenarios/fixtures/demo.toml")).unwrap();
    let fake = fake_nextcloud::FakeNextcloud::start(&fixture, fake_nextcloud::Config::default())
        .await
        .unwrap();
    let base = fake.base_url().to_string();
    let register = move |user: &str, password: &str| {
        let mut command = tamebi();
        command
            .args(["webhooks", "register", "--nextcloud-url", &base, "--admin-user", user])
            .env("NEXTCLOUD_ADMIN_PASSWORD", password)
            .env("TAMEBI_WEBHOOK_SECRET", "hook-secret-4f9a");
        tokio::task::spawn_blocking(move || run(&mut command))
    };

    let first = register("admin", "admin-demo-password").await.unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    let text = stdout(&first);
    let mut ids = Vec::new();
    for event in ["NodeWrittenEvent", "NodeRenamedEvent", "NodeDeletedEvent"] {
        let line = text
            .lines()
            .find(|line| line.starts_with(&format!("registered {event} (id ")))
            .unwrap_or_else(|| panic!("{event} not registered:\n{text}"));
        ids.push(line.rsplit_once("(id ").unwrap().1.to_string());
    }
    assert!(text.contains("http://127.0.0.1:9101/webhooks/nextcloud"), "default endpoint: {text}");
    assert!(!text.contains("hook-secret-4f9a"), "the secret is never printed");

    let again = register("admin", "admin-demo-password").await.unwrap();
    assert!(again.status.success(), "{}", stderr(&again));
    let text = stdout(&again);
    for (event, id) in ["NodeWrittenEvent", "NodeRenamedEvent", "NodeDeletedEvent"].iter().zip(&ids)
    {
        let line = format!("already registered {event} (id {id}");
        assert!(text.contains(&line), "{line} missing:\n{text}");
    }
    assert!(!text.lines().any(|line| line.starts_with("registered ")), "{text}");

    let refused = register("alice", "alice-demo-password").await.unwrap();
    assert!(!refused.status.success());
    let message = stderr(&refused);
    assert!(message.contains("must be an administrator"), "{message}");
    assert!(message.contains("as alice"), "{message}");
    assert!(!message.contains("alice-demo-password"), "{message}");
    fake.shutdown().await;
}

/// Starts a server, reads its banner, stops it: the banner and its log.
fn start_banner_and_log(command: &mut Command) -> (String, String) {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let printed = common::banner(&mut child);
    child.kill().unwrap();
    let output = child.wait_with_output().unwrap();
    (printed, stderr(&output))
}

#[test]
fn mcp_nextcloud_says_where_its_index_is_and_keeps_secrets() {
    let dir = scratch("serve");
    let index_db = dir.join("data").join("index.db");
    let mut serve = tamebi();
    serve
        .args(["mcp-nextcloud", "--listen", "127.0.0.1:0", "--lend-listen", "127.0.0.1:0"])
        .arg("--index-db")
        .arg(&index_db)
        .env("TAMEBI_WEBHOOK_SECRET", "hook-secret-77c1")
        .env("ONLYOFFICE_URL", "http://127.0.0.1:1")
        .env("TAMEBI_LEND_URL", "");
    let (printed, logged) = start_banner_and_log(&mut serve);

    let canonical = std::fs::canonicalize(&index_db).expect("the server created its index");
    assert!(printed.contains(&format!("Index:         {}", canonical.display())), "{printed}");
    assert!(printed.contains("/webhooks/nextcloud"), "{printed}");
    assert!(printed.contains("Converter:     http://127.0.0.1:1 (NO SECRET"), "{printed}");
    assert!(logged.contains("WARN"), "{logged}");
    assert!(logged.contains("THE CONVERTER HAS NO JWT SECRET"), "{logged}");
    assert!(logged.contains("no --lend-url"), "an empty variable is unset: {logged}");
    for text in [&printed, &logged] {
        assert!(!text.contains("hook-secret-77c1"), "the webhook secret leaked: {text}");
    }

    // In memory, without webhooks or converter: each says it is off.
    let mut serve = tamebi();
    serve
        .args(["mcp-nextcloud", "--listen", "127.0.0.1:0", "--index-db", ":memory:"])
        .env("ONLYOFFICE_JWT_SECRET", "converter-secret-0b2e");
    let (printed, logged) = start_banner_and_log(&mut serve);
    assert!(printed.contains("Index:         in memory"), "{printed}");
    assert!(printed.contains("Webhooks:      off"), "{printed}");
    assert!(printed.contains("Converter:     off"), "{printed}");
    assert!(!logged.contains("converter-secret-0b2e"));
    assert!(!Path::new(":memory:").exists(), "no file named :memory: was created");
}
