//! Headings out of documents made by real tools (pandoc, LibreOffice; see
//! `fixtures/README.md`): the styles, outline levels and typography those
//! tools write, not only what our own generators do.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use extract::{DocumentKind, extract, heading::text_headings};

fn read(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn headings(name: &str) -> Vec<String> {
    let kind = DocumentKind::from_mime_or_name(None, name);
    let text = extract(&read(name), kind).unwrap().text;
    text.lines().filter(|line| line.starts_with('#')).map(str::to_string).collect()
}

const PLAN: [&str; 6] = [
    "# Storage Migration Plan",
    "# Scope and goals",
    "## Out of scope",
    "# Schedule",
    "## Test runs",
    "# Risks",
];

#[test]
fn office_documents_from_pandoc_and_libreoffice_have_every_heading() {
    for name in [
        "pandoc-plan.docx",
        "pandoc-plan.odt",
        "libreoffice-plan.odt",
        "libreoffice-p-headings.odt",
        "word-de-plan.docx",
    ] {
        assert_eq!(headings(name), PLAN, "{name}");
    }
}

#[test]
fn a_libreoffice_pdf_has_its_headings_back_from_typography() {
    // The title is the largest text, so the document's chapters are `##`.
    assert_eq!(
        headings("libreoffice-plan.pdf"),
        [
            "# Storage Migration Plan",
            "## Scope and goals",
            "### Out of scope",
            "## Schedule",
            "### Test runs",
            "## Risks",
        ]
    );
}

#[test]
fn plain_text_is_served_as_it_is_and_its_titles_found_in_it() {
    let bytes = read("plan.txt");
    let text = extract(&bytes, DocumentKind::PlainText).unwrap().text;
    assert_eq!(text.as_bytes(), bytes.as_slice());
    let lines: Vec<&str> = text.split('\n').collect();
    let titles: Vec<&str> =
        text_headings(&lines, &[]).into_iter().flatten().map(|(_, title)| title).collect();
    assert_eq!(
        titles,
        ["Storage Migration Plan", "Scope and goals", "Out of scope", "Schedule", "Risks"]
    );
    let letter = String::from_utf8(read("letter.txt")).unwrap();
    let lines: Vec<&str> = letter.split('\n').collect();
    assert!(text_headings(&lines, &[]).iter().all(Option::is_none));
}
