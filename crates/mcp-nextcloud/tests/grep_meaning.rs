//! `files_grep` by meaning, end to end (issue 17 §3): the fake Nextcloud,
//! the real server with embeddings on a real small model
//! (`ci/embeddings/serve.py`), the index filled and embedded by the passes
//! searches start. A question that shares no content word with the passage
//! that answers it finds that passage; passages the caller cannot read are
//! never proposed to them, however near in meaning; what comes back is the
//! byte range `files_read` serves.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::{Stack, grep, second_token, start_configured, text_of, warm};
use mcp_nextcloud::index::search::Fusion;
use mcp_nextcloud::index::store;
use scenario::embeddings_server::{EmbeddingsServer, Engine};
use serde_json::{Value, json};

const CAROL: &[(&str, &str)] = &[
    (
        "Manuals/apt.md",
        "# Package cache\n\napt-get clean removes the retrieved package files from the local repository under /var/cache/apt/archives.\n\n# Mirrors\n\nThe sources.list file names the archive mirrors apt downloads from.\n",
    ),
    (
        "Manuals/boot.md",
        "# Start-up\n\nThe boot loader hands control to the kernel, which mounts the root file system.\n",
    ),
    (
        "Manuals/printing.md",
        "# Printing\n\nPrinters are set up with CUPS through its web interface on port 631.\n",
    ),
];

/// admin's own notes, nearer in meaning to the question than anything of
/// carol's, and readable by admin alone.
const ADMIN: (&str, &str) = (
    "Private/disk.md",
    "# Disk space\n\nTo free disk space taken by downloaded updates, delete the cached update packages.\n",
);

const QUESTION: &str = "How do I free disk space taken by downloaded updates?";

async fn start(server: &EmbeddingsServer, fusion: Fusion) -> Stack {
    let embeddings = server.config();
    let stack = start_configured(second_token(), None, move |config| {
        config.index.embeddings = Some(embeddings);
        config.index.fusion = fusion;
    })
    .await;
    {
        let mut world = stack.fake.shared.world();
        for (number, (path, content)) in CAROL.iter().enumerate() {
            world.storage.seed_file(
                "carol",
                path,
                content.as_bytes().to_vec(),
                None,
                1_700_000_000 + number as i64,
            );
        }
        world.storage.seed_file("admin", ADMIN.0, ADMIN.1.as_bytes().to_vec(), None, 1_700_000_100);
    }
    stack
}

/// Searches as `uid` until the index is ready for them and every passage
/// has its vector.
async fn ready(stack: &Stack, uid: &str) {
    warm(stack, uid).await;
    for _ in 0..20 {
        let status = stack.mcp().index().store().run_blocking(|c| store::status(c)).unwrap();
        if status.embedded > 0 && status.embedded == status.passages {
            return;
        }
        grep(stack, uid, json!({"query": "warming"})).await;
        stack.mcp().index().idle().await;
    }
    panic!("the passages were never all embedded");
}

fn paths(found: &Value) -> Vec<String> {
    found["structuredContent"]["passages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|passage| passage["path"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_in_other_words_finds_the_passage_that_answers_it() {
    let server = EmbeddingsServer::start().unwrap();
    let stack = start(&server, Fusion::MeaningFallback).await;
    ready(&stack, "admin").await;
    ready(&stack, "carol").await;

    let found = grep(&stack, "carol", json!({"query": QUESTION, "limit": 2})).await;
    assert_eq!(found["structuredContent"]["matched"], "meaning", "{found}");
    let shown = paths(&found);
    assert_eq!(shown.first().map(String::as_str), Some("Manuals/apt.md"), "{found}");
    assert!(
        shown.iter().all(|path| !path.contains("disk")),
        "admin's notes are not carol's: {found}"
    );
    assert!(text_of(&found).contains("nearest in meaning"), "{}", text_of(&found));
    let passage = &found["structuredContent"]["passages"][0];
    assert_eq!(passage["heading"], "Package cache", "{found}");
    let read = stack
        .call_tool(
            "carol",
            "files_read",
            json!({"path": passage["path"], "offset": passage["offset"], "length": passage["length"]}),
        )
        .await;
    assert!(text_of(&read).contains("apt-get clean removes"), "{}", text_of(&read));

    // Words that meet in one passage still answer by words.
    let found = grep(&stack, "carol", json!({"query": "boot loader kernel"})).await;
    assert_eq!(found["structuredContent"]["matched"], "all", "{found}");
    assert_eq!(paths(&found), ["Manuals/boot.md"], "{found}");

    // `queries` tells the two apart, and the report counts the answer by
    // meaning as such, not as one by some of the words.
    let rows = stack
        .mcp()
        .index()
        .store()
        .run_blocking(|connection| store::queries(connection, 0))
        .unwrap();
    let by_meaning: Vec<(bool, bool)> = rows
        .iter()
        .rev()
        .take(2)
        .map(|row| (row.by_meaning, row.fallback_after.is_some()))
        .collect();
    assert_eq!(by_meaning, [(false, false), (true, true)], "{rows:?}");
    let report = mcp_nextcloud::index::report::classify(&rows[rows.len() - 2..]);
    assert_eq!((report.answered_by_meaning, report.answered_by_some_words), (1, 0), "{report:?}");

    // admin asks the same question and gets their own notes first.
    let found = grep(&stack, "admin", json!({"query": QUESTION})).await;
    assert_eq!(paths(&found).first().map(String::as_str), Some("Private/disk.md"), "{found}");
    assert!(paths(&found).iter().all(|path| path == "Private/disk.md"), "{found}");
    stack.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn someone_who_reads_none_of_it_learns_nothing_by_meaning() {
    let server = EmbeddingsServer::start().unwrap();
    let stack = start(&server, Fusion::Meaning).await;
    ready(&stack, "carol").await;
    ready(&stack, "admin").await;
    // bob reads neither carol's manuals nor admin's notes, which are the
    // nearest passages of the whole index: he gets the nearest of what he
    // can read, never theirs.
    let bob_before = grep(&stack, "bob", json!({"query": QUESTION})).await;
    let shown = paths(&bob_before);
    assert!(
        shown.iter().all(|path| !path.starts_with("Manuals/") && !path.starts_with("Private/disk")),
        "{bob_before}"
    );
    stack.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn words_mode_never_answers_by_meaning() {
    let server = EmbeddingsServer::start().unwrap();
    let stack = start(&server, Fusion::Words).await;
    ready(&stack, "carol").await;
    let found = grep(&stack, "carol", json!({"query": QUESTION})).await;
    assert_ne!(found["structuredContent"]["matched"], "meaning", "{found}");
    stack.shutdown().await;
}

/// carol's French notes, for the multilingual model.
const CAROL_FRENCH: &[(&str, &str)] = &[
    (
        "Notes/imprimantes.md",
        "# Impression\n\nLes imprimantes se configurent avec CUPS, par son interface web sur le port 631.\n",
    ),
    (
        "Notes/demarrage.md",
        "# Démarrage\n\nLe chargeur d'amorçage passe la main au noyau, qui monte le système de fichiers racine.\n",
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multilingual_model_answers_in_french_and_across_languages() {
    let server = EmbeddingsServer::start_engine(Engine::E5).unwrap();
    let stack = start(&server, Fusion::Meaning).await;
    {
        let mut world = stack.fake.shared.world();
        for (number, (path, content)) in CAROL_FRENCH.iter().enumerate() {
            world.storage.seed_file(
                "carol",
                path,
                content.as_bytes().to_vec(),
                None,
                1_700_000_050 + number as i64,
            );
        }
    }
    ready(&stack, "carol").await;
    // E5 reads "passage: …" and "query: …": the prefixes are part of the
    // stored model's name.
    let status = stack.mcp().index().store().run_blocking(|c| store::status(c)).unwrap();
    assert_eq!(
        status.embeddings_model.as_deref(),
        Some("multilingual-e5-small with \"passage: \""),
        "{status:?}"
    );
    let found =
        grep(&stack, "carol", json!({"query": "Comment régler une imprimante ?", "limit": 1}))
            .await;
    assert_eq!(paths(&found), ["Notes/imprimantes.md"], "{found}");
    // An English question, a French answer.
    let found = grep(
        &stack,
        "carol",
        json!({"query": "What starts the operating system kernel?", "limit": 2}),
    )
    .await;
    assert!(paths(&found).iter().any(|path| path == "Notes/demarrage.md"), "{found}");
    stack.shutdown().await;
}
