//! Bounded fuzzing of every extractor through the public entry point, to
//! complement the unit fuzzers in `src/tests.rs` (which mutate the zip
//! formats and PDF at a fixed 96 cases): Markdown and plain text, random
//! and mutated; every demo document read as every other kind (a DOCX
//! named `.odt`, a PDF named `.docx`); and documents grown by repeating a
//! slice, so the bounds and the per-case time are what is tested. Cases:
//! `PROPTEST_CASES` (default 64: PDFs are slow in debug builds); run long
//! locally with `PROPTEST_CASES=5000 cargo test --release -p extract --test
//! fuzz` (docs/reliability.md, "Fuzzing").

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use extract::{DocumentKind, ExtractError, Limits, extract_with_limits};
use proptest::prelude::*;
use std::time::{Duration, Instant};

const KINDS: [DocumentKind; 7] = DocumentKind::READABLE;

const DEMOS: [&str; 8] = [
    "alice/Documents/notes-reunion.md",
    "alice/Documents/todo.txt",
    "alice/Projects/Apollo/CR-reunion-mars.docx",
    "alice/Projects/Apollo/plan.odt",
    "alice/Projects/Apollo/budget.ods",
    "alice/Projects/Apollo/kickoff.odp",
    "bob/Manuals/admin-manual.pdf",
    "bob/Scans/scan-facture.pdf",
];

fn demo(path: &str) -> Vec<u8> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/fixtures/demo/files/");
    std::fs::read(format!("{root}{path}")).unwrap()
}

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(64);
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

/// Small bounds, so a case that hits one is quick: what matters is that
/// the bound answers and nothing else happens.
const LIMITS: Limits = Limits {
    input_length_max: 4 * 1024 * 1024,
    zip_entry_count_max: 2_000,
    zip_entry_length_max: 8 * 1024 * 1024,
    text_length_max: 1024 * 1024,
    pdf_time_max: Duration::from_secs(3),
    pdf_thread_count_max: 4,
};
const CASE_TIME_MAX: Duration = Duration::from_secs(15);

fn extract_bounded(bytes: &[u8], kind: DocumentKind) -> Result<(), TestCaseError> {
    let started = Instant::now();
    let result = extract_with_limits(bytes, kind, &LIMITS);
    prop_assert!(started.elapsed() < CASE_TIME_MAX, "{kind:?} took {:?}", started.elapsed());
    match result {
        Ok(extracted) => {
            prop_assert!(extracted.text.len() <= LIMITS.text_length_max, "{kind:?} text unbounded");
            prop_assert!(!extracted.text.contains('\r'), "{kind:?}: \\r left in the text");
        }
        Err(ExtractError::TooLarge) => {}
        Err(_) => {}
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_bytes_as_text_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..4096),
        markdown in any::<bool>(),
    ) {
        let kind = if markdown { DocumentKind::Markdown } else { DocumentKind::PlainText };
        extract_bounded(&bytes, kind)?;
    }

    #[test]
    fn any_text_with_line_ends_and_boms_is_normalised(
        text in "(\\PC|\r\n|\r|\n|\u{feff}|#{1,7} ){0,2000}",
        markdown in any::<bool>(),
    ) {
        let kind = if markdown { DocumentKind::Markdown } else { DocumentKind::PlainText };
        extract_bounded(text.as_bytes(), kind)?;
        // One leading BOM is a byte-order mark and goes; a second one is
        // text (U+FEFF) and stays, so only prefix texts that have none.
        if !text.starts_with('\u{feff}') {
            let marked = format!("\u{feff}{text}");
            prop_assert_eq!(
                extract_with_limits(marked.as_bytes(), kind, &LIMITS).map(|e| e.text),
                extract_with_limits(text.as_bytes(), kind, &LIMITS).map(|e| e.text),
                "a leading BOM changes nothing but itself"
            );
        }
    }

    /// Each demo read as each kind: the format checks refuse, nothing panics.
    #[test]
    fn every_document_read_as_every_kind_never_panics(document in 0..DEMOS.len(), kind in 0..KINDS.len()) {
        extract_bounded(&demo(DEMOS[document]), KINDS[kind])?;
    }

    /// A slice of a document repeated many times (a long run of table
    /// cells, of PDF objects, of zip entries' bytes): the bounds hold.
    #[test]
    fn documents_grown_by_repetition_stay_bounded(
        document in 0..DEMOS.len(),
        at in any::<prop::sample::Index>(),
        length in 1..512usize,
        times in 1..2000usize,
    ) {
        let mut bytes = demo(DEMOS[document]);
        let start = at.index(bytes.len());
        let end = (start + length).min(bytes.len());
        let slice = bytes[start..end].to_vec();
        let mut grown = bytes[..end].to_vec();
        for _ in 0..times {
            grown.extend_from_slice(&slice);
        }
        grown.extend_from_slice(&bytes.split_off(end));
        let kind = [
            DocumentKind::Markdown,
            DocumentKind::PlainText,
            DocumentKind::Docx,
            DocumentKind::Odt,
            DocumentKind::Ods,
            DocumentKind::Odp,
            DocumentKind::Pdf,
            DocumentKind::Pdf,
        ][document];
        extract_bounded(&grown, kind)?;
    }
}

#[test]
fn input_past_the_bound_is_too_large_before_parsing() {
    let bytes = vec![b'a'; LIMITS.input_length_max + 1];
    for kind in KINDS {
        assert_eq!(
            extract_with_limits(&bytes, kind, &LIMITS),
            Err(ExtractError::TooLarge),
            "{kind:?}"
        );
    }
}
