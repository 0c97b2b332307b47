//! Extraction of the demo drive's documents, and the bounds on hostile input.

use super::*;

fn demo(path: &str) -> Vec<u8> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/fixtures/demo/files/");
    std::fs::read(format!("{root}{path}")).unwrap()
}

#[test]
fn dump() {
    for (path, kind) in [
        ("alice/Projects/Apollo/CR-reunion-mars.docx", DocumentKind::Docx),
        ("alice/Projects/Apollo/plan.odt", DocumentKind::Odt),
        ("alice/Projects/Apollo/budget.ods", DocumentKind::Ods),
        ("alice/Projects/Apollo/kickoff.odp", DocumentKind::Odp),
        ("bob/Manuals/admin-manual.pdf", DocumentKind::Pdf),
        ("bob/Scans/scan-facture.pdf", DocumentKind::Pdf),
    ] {
        println!("===== {path}\n{:?}", extract(&demo(path), kind).map(|e| e.text));
    }
}
