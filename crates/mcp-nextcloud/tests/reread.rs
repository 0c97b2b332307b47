//! The property behind every citation: for random documents, each passage
//! the index stores is exactly what `files_read(fileid, offset, length)`
//! serves — byte for byte, through the real server, whatever the BOM, line
//! endings, accents or structure of the file.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::{second_token, start};
use mcp_nextcloud::index::store;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use serde_json::json;

const CASES: u32 = 24;

/// A random Markdown or plain-text document: headings (Markdown or
/// labelled), paragraphs of accented words, long lines, blank runs,
/// optionally a BOM and CRLF line endings.
fn document() -> impl Strategy<Value = (String, Vec<u8>)> {
    let word = prop::sample::select(vec![
        "réunion",
        "budget",
        "prévisionnel",
        "Straße",
        "naïve",
        "cost",
        "the",
        "plan",
        "été",
        "€",
        "—",
        "x",
        "2026",
        "«",
        "»",
        "données",
        "über",
        "emoji🙂",
    ]);
    let line = prop::collection::vec(word, 1..40).prop_map(|words| words.join(" "));
    let block = prop_oneof![
        3 => prop::collection::vec(line.clone(), 1..6).prop_map(|lines| lines.join("\n")),
        1 => (1usize..4, line.clone()).prop_map(|(level, title)| format!("{} {title}", "#".repeat(level))),
        1 => (1u32..12, line.clone()).prop_map(|(number, title)| format!("Article {number}\n{title}")),
        1 => (1u32..9, 1u32..9, line).prop_map(|(a, b, title)| format!("{a}.{b} {title}")),
        1 => Just("```\n# not a heading\n```".to_string()),
    ];
    (
        prop::collection::vec(block, 0..24),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop::sample::select(vec![1usize, 2, 3]),
    )
        .prop_map(|(blocks, markdown, bom, crlf, blank_lines)| {
            let mut text = blocks.join(&"\n".repeat(blank_lines + 1));
            if crlf {
                text = text.replace('\n', "\r\n");
            }
            let mut bytes = Vec::new();
            if bom {
                bytes.extend_from_slice("\u{feff}".as_bytes());
            }
            bytes.extend_from_slice(text.as_bytes());
            (if markdown { "md" } else { "txt" }.to_string(), bytes)
        })
}

#[test]
fn every_stored_passage_is_what_files_read_serves_at_its_offset() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let stack = runtime.block_on(start(second_token()));
    let seed = std::env::var("TAMEBI_REREAD_SEED").ok().and_then(|seed| seed.parse().ok());
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        rng_seed: seed.map_or(RngSeed::Random, RngSeed::Fixed),
        failure_persistence: None,
        max_shrink_iters: 64,
        ..Config::default()
    });
    let counter = std::sync::atomic::AtomicU64::new(0);
    let outcome = runner.run(&document(), |(extension, bytes)| {
        runtime.block_on(async {
            let number = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let path = format!("Random/doc-{number}.{extension}");
            let fileid = {
                let now = stack.fake.shared.now() + number as i64 + 1;
                let mut world = stack.fake.shared.world();
                world.storage.seed_file("carol", &path, bytes.clone(), None, now)
            };
            stack.call_tool("carol", "files_grep", json!({"query": "budget"})).await;
            stack.mcp().index().idle().await;
            let (row, passages) = stack
                .mcp()
                .index()
                .store()
                .run_blocking(|connection| {
                    Ok((store::doc(connection, fileid)?, store::passages(connection, fileid)?))
                })
                .unwrap();
            prop_assert_eq!(row.map(|row| row.status), Some("ok".to_string()));
            for store::NewPassage { offset, length, text, .. } in passages {
                let read = stack
                    .call_tool(
                        "carol",
                        "files_read",
                        json!({"fileid": fileid, "offset": offset, "length": length}),
                    )
                    .await;
                let served = read["structuredContent"]["text"].as_str().unwrap_or_default();
                prop_assert_eq!(served, text.as_str(), "at offset {} of {}", offset, path);
            }
            Ok(())
        })
    });
    if let Err(error) = outcome {
        panic!("{error}");
    }
}
