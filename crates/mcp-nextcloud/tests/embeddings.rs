//! Embedding passes on real vectors (issue 17 §3): a real small
//! sentence-embedding model (all-MiniLM-L6-v2 from its PyPI package,
//! `ci/embeddings/serve.py`) behind an OpenAI-compatible `/v1/embeddings`
//! embeds the passages of an index, and the stored vectors carry meaning —
//! a question finds the passage that answers it in words it does not share.
//!
//! The model's Python environment is part of the test set-up: `.ci/run`
//! makes it (`/opt/tamebi-embed`, or `EMBEDDINGS_PYTHON`). Without it the
//! test fails and says how to make it.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use mcp_nextcloud::index::embed::{self, Embedder, EmbeddingsConfig};
use mcp_nextcloud::index::store::{self, NewPassage, SeenFile, vectors};
use mcp_nextcloud::index::{Index, IndexConfig};
use scenario::embeddings_server::{EmbeddingsServer, MODEL};

/// Three documents' passages, as reading stores them.
const DOCUMENTS: &[(u64, &[&str])] = &[
    (
        11,
        &[
            "apt-get clean removes the retrieved package files from the local repository under /var/cache/apt/archives.",
            "The sources.list file names the archive mirrors apt downloads from.",
        ],
    ),
    (
        12,
        &[
            "The boot loader hands control to the kernel, which mounts the root file system.",
            "A systemd unit file describes a service and when it is started.",
        ],
    ),
    (13, &["Printers are set up with CUPS through its web interface on port 631."]),
];

fn store_documents(index: &Index) {
    index
        .store()
        .run_blocking(|connection| {
            for (fileid, texts) in DOCUMENTS {
                let file = SeenFile {
                    fileid: *fileid,
                    path: format!("Documents/{fileid}.md"),
                    mtime: Some(1),
                    etag: None,
                    size: Some(100),
                    mime: Some("text/markdown".into()),
                };
                store::record_seen(connection, &file, 1)?;
                let version = store::version(connection, *fileid)?.expect("seen");
                let passages: Vec<NewPassage> = texts
                    .iter()
                    .map(|text| NewPassage {
                        heading: None,
                        offset: 0,
                        length: text.len(),
                        text: text.to_string(),
                    })
                    .collect();
                assert!(store::record_passages(connection, *fileid, version, None, &passages, 2)?);
            }
            Ok(())
        })
        .unwrap();
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b))
}

#[tokio::test]
async fn a_pass_embeds_every_passage_with_real_vectors_that_carry_meaning() {
    let server = EmbeddingsServer::start().unwrap();
    let index = Index::open(
        &IndexConfig { embeddings: Some(server.config()), ..IndexConfig::default() },
        None,
    )
    .unwrap();
    store_documents(&index);
    let status = index.store().run_blocking(|connection| store::status(connection)).unwrap();
    assert_eq!((status.embeddings_model.as_deref(), status.embedded), (Some(MODEL), 0));

    index.kick_embedding();
    index.idle().await;

    let rows: Vec<(i64, String, Vec<u8>)> = index
        .store()
        .run_blocking(|connection| {
            let mut statement = connection.prepare(
                "SELECT v.rowid, p.text, v.vector FROM vectors v JOIN passages p USING (rowid)
                 WHERE v.model = ?1",
            )?;
            let rows = statement
                .query_map([MODEL], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
                .collect::<Result<_, _>>()?;
            Ok(rows)
        })
        .unwrap();
    assert_eq!(rows.len(), 5, "every passage has a vector");
    let status = index.store().run_blocking(|connection| store::status(connection)).unwrap();
    assert_eq!(status.embedded, 5);
    let passages: Vec<(String, Vec<f32>)> = rows
        .into_iter()
        .map(|(_, text, blob)| (text, vectors::from_blob(&blob).expect("whole f32s")))
        .collect();
    for (text, vector) in &passages {
        assert_eq!(vector.len(), 384, "{text}");
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-3, "unit vectors: {norm}");
    }

    // Questions that share no content word with the passage that answers them.
    let embedder = Embedder::new(server.config(), reqwest::Client::new());
    let questions = [
        ("How do I free disk space taken by downloaded updates?", "apt-get clean"),
        ("What starts the operating system when the computer is switched on?", "boot loader"),
        ("How can I configure a printer?", "CUPS"),
    ];
    let texts: Vec<String> = questions.iter().map(|(question, _)| question.to_string()).collect();
    let asked = embedder.embed(&texts).await.unwrap();
    for ((question, expected), query) in questions.iter().zip(&asked) {
        let nearest = passages
            .iter()
            .max_by(|a, b| cosine(query, &a.1).total_cmp(&cosine(query, &b.1)))
            .unwrap();
        assert!(nearest.0.contains(expected), "{question} → {}", nearest.0);
    }

    // Nothing is embedded twice: a second pass finds nothing pending.
    let outcome = embed::pass(&index, &embedder).await;
    assert_eq!(outcome, embed::EmbedOutcome { pending: 0, embedded: 0, failed: false });
}

#[tokio::test]
async fn an_unknown_model_embeds_nothing_and_leaves_every_passage_pending() {
    let server = EmbeddingsServer::start().unwrap();
    let wrong = EmbeddingsConfig { model: "no-such-model".into(), ..server.config() };
    let index = Index::open(
        &IndexConfig { embeddings: Some(wrong.clone()), ..IndexConfig::default() },
        None,
    )
    .unwrap();
    store_documents(&index);
    let outcome = embed::pass(&index, &Embedder::new(wrong, reqwest::Client::new())).await;
    assert_eq!(outcome, embed::EmbedOutcome { pending: 5, embedded: 0, failed: true });
    let pending = index
        .store()
        .run_blocking(|connection| vectors::pending(connection, "no-such-model", 100))
        .unwrap();
    assert_eq!(pending.len(), 5);
}
