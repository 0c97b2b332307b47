//! Extraction of the demo drive's documents, each format's structure rules on
//! small hand-written documents, and the bounds on hostile input.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::*;

fn demo(path: &str) -> Vec<u8> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/fixtures/demo/files/");
    std::fs::read(format!("{root}{path}")).unwrap()
}

const DEMO_DOCX: &str = "alice/Projects/Apollo/CR-reunion-mars.docx";
const DEMO_ODT: &str = "alice/Projects/Apollo/plan.odt";
const DEMO_ODS: &str = "alice/Projects/Apollo/budget.ods";
const DEMO_ODP: &str = "alice/Projects/Apollo/kickoff.odp";
const DEMO_PDF: &str = "bob/Manuals/admin-manual.pdf";
const DEMO_SCAN: &str = "bob/Scans/scan-facture.pdf";
const DEMO_MARKDOWN: &str = "alice/Documents/notes-reunion.md";
const DEMO_TEXT: &str = "alice/Documents/todo.txt";

fn text_of(bytes: &[u8], kind: DocumentKind) -> String {
    match extract(bytes, kind) {
        Ok(extracted) => extracted.text,
        Err(error) => panic!("{kind:?} did not extract: {error}"),
    }
}

fn headings(text: &str) -> Vec<&str> {
    text.lines().filter(|line| line.starts_with('#')).collect()
}

/// A zip of the given parts, deflated.
fn zip(parts: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    for (name, bytes) in parts {
        writer.start_file(*name, options).unwrap();
        writer.write_all(bytes).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// The parts of a zip, by name (to mutate them and zip them back).
fn unzip(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    (0..archive.len())
        .map(|index| {
            let mut entry = archive.by_index(index).unwrap();
            let mut content = Vec::new();
            entry.read_to_end(&mut content).unwrap();
            (entry.name().unwrap().to_string(), content)
        })
        .collect()
}

const W_NS: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

fn docx(body: &str, styles: Option<&str>) -> Vec<u8> {
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{W_NS}" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><w:body>{body}</w:body></w:document>"#
    );
    let styles = styles.map(|styles| format!(r#"<w:styles xmlns:w="{W_NS}">{styles}</w:styles>"#));
    let mut parts: Vec<(&str, &[u8])> = vec![("word/document.xml", document.as_bytes())];
    if let Some(styles) = &styles {
        parts.push(("word/styles.xml", styles.as_bytes()));
    }
    zip(&parts)
}

fn odf(body: &str) -> Vec<u8> {
    let content = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"><office:body>{body}</office:body></office:document-content>"#
    );
    zip(&[("content.xml", content.as_bytes())])
}

fn check(bytes: &[u8], kind: DocumentKind, expected: &str) {
    assert_eq!(text_of(bytes, kind), expected);
}

fn check_error(bytes: &[u8], kind: DocumentKind, limits: &Limits, expected: &ExtractError) {
    match extract_with_limits(bytes, kind, limits) {
        Err(error) => assert_eq!(
            std::mem::discriminant(&error),
            std::mem::discriminant(expected),
            "{kind:?}: {error}"
        ),
        Ok(extracted) => panic!("{kind:?} extracted {:?}, expected {expected}", extracted.text),
    }
}

// The demo drive.

#[test]
fn demo_docx_headings_are_markdown_headings() {
    let text = text_of(&demo(DEMO_DOCX), DocumentKind::Docx);
    assert_eq!(
        headings(&text),
        [
            "# Compte rendu de réunion – Projet Apollo",
            "# Article 1 – Objet",
            "# Article 2 – Calendrier",
            "# §3. Budget prévisionnel",
            "# Article 4 – Prochaines étapes",
        ]
    );
    assert!(text.starts_with(
        "# Compte rendu de réunion – Projet Apollo\n\nRéunion du 12 mars 2026, rédigé par Alice Martin.\n\n# Article 1 – Objet\n\n"
    ));
    assert!(text.contains(
        "# §3. Budget prévisionnel\n\nLe budget prévisionnel du projet est fixé à 40 000 € (quarante mille euros) pour l'exercice 2026.\n\nIl se répartit entre le matériel"
    ));
}

#[test]
fn demo_odt_headings_follow_outline_levels() {
    let text = text_of(&demo(DEMO_ODT), DocumentKind::Odt);
    assert_eq!(
        headings(&text),
        [
            "# Projektplan Apollo",
            "## 1. Übersicht",
            "## 2. Größe und Umfang",
            "## 3. Zeitplan",
            "## 4. Besprechung und Verantwortlichkeiten",
            "## 5. Risiken",
        ]
    );
    assert!(text.contains(
        "## 2. Größe und Umfang\n\nDie Größe der zu migrierenden Daten beträgt etwa 850 GB in rund 120 000 Dateien. Betroffen"
    ));
}

#[test]
fn demo_ods_is_one_section_per_sheet_one_line_per_row() {
    check(
        &demo(DEMO_ODS),
        DocumentKind::Ods,
        "## Sheet 1: Budget 2026\n\n\
         Poste | Montant (€)\n\
         Matériel (serveurs et stockage) | 12500\n\
         Licences logicielles | 8000\n\
         Prestations d'intégration | 9500\n\
         Formation des utilisateurs | 4000\n\
         Hébergement et sauvegardes | 3000\n\
         Réserve pour imprévus | 3000\n\
         Total | 40000",
    );
}

#[test]
fn demo_odp_is_one_section_per_slide() {
    check(
        &demo(DEMO_ODP),
        DocumentKind::Odp,
        "## Slide 1: Lancement du projet Apollo\n\n\
         - Kickoff – 2 mars 2026\n\
         - Équipe : Alice Martin, Bob Durand, Chloé Lefèvre\n\
         - Objectif : migrer l'espace collaboratif vers Nextcloud\n\n\
         ## Slide 2: Objectifs et périmètre\n\n\
         - 850 Go de données, environ 120 000 fichiers\n\
         - Recherche plein texte sur tous les documents\n\
         - Authentification à deux facteurs pour tous les comptes\n\n\
         ## Slide 3: Calendrier et budget\n\n\
         - Recette du 1er au 12 juin 2026\n\
         - Mise en production le 19 juin 2026\n\
         - Budget prévisionnel : 40 000 €",
    );
}

#[test]
fn demo_pdf_section_titles_are_recovered_from_the_text() {
    let text = text_of(&demo(DEMO_PDF), DocumentKind::Pdf);
    assert_eq!(
        headings(&text),
        [
            // The title is set in 16 pt bold over a 10 pt body.
            "# Nextcloud Server Administration Manual (excerpt)",
            "# 1 Introduction",
            "## 1.1 Requirements",
            "## 1.2 User management",
            "# 2 Sharing and quotas",
            "## 2.1 Storage quotas",
            "## 2.2 External storage",
            "# 3 Security and authentication",
            "## 3.4 Two-factor authentication",
            "# 5 Encryption",
            "## 5.1 Enabling server-side encryption",
            "## 5.2 Recovery key",
        ]
    );
    assert!(text.starts_with(
        "# Nextcloud Server Administration Manual (excerpt)\n\n# 1 Introduction\n\nThis excerpt"
    ));
    // The line wrapping of the PDF stays: the text is what the page shows.
    assert!(text.contains(
        "## 3.4 Two-factor authentication\n\n\
         Two-factor authentication (2FA) requires a second proof of identity after the password.\n\
         The TOTP provider works with any authenticator app that generates time-based one-time\n\
         passwords"
    ));
}

#[test]
fn demo_scan_has_no_text_layer() {
    assert_eq!(PDF_TEXT_CHARACTER_COUNT_MIN, 200);
    assert_eq!(extract(&demo(DEMO_SCAN), DocumentKind::Pdf), Err(ExtractError::NeedsOcr));
}

#[test]
fn demo_markdown_and_text_are_served_as_they_are() {
    for (path, kind) in
        [(DEMO_MARKDOWN, DocumentKind::Markdown), (DEMO_TEXT, DocumentKind::PlainText)]
    {
        let bytes = demo(path);
        check(&bytes, kind, std::str::from_utf8(&bytes).unwrap());
    }
}

// Kinds and text decoding.

#[test]
fn kind_comes_from_the_mime_type_then_the_name() {
    use DocumentKind::*;
    let cases = [
        (Some("application/pdf"), "whatever.bin", Pdf),
        (Some("text/markdown; charset=utf-8"), "x", Markdown),
        (Some("TEXT/PLAIN"), "x", PlainText),
        (
            Some("application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
            "x",
            Docx,
        ),
        (Some("application/vnd.oasis.opendocument.text"), "x", Odt),
        (Some("application/vnd.oasis.opendocument.presentation"), "x", Odp),
        (Some("application/vnd.oasis.opendocument.spreadsheet"), "x", Ods),
        (Some("application/octet-stream"), "CR-reunion-mars.DOCX", Docx),
        (None, "notes.md", Markdown),
        (None, "todo.txt", PlainText),
        (None, "plan.odt", Odt),
        (None, "budget.ods", Ods),
        (None, "kickoff.odp", Odp),
        (None, "manual.pdf", Pdf),
        (Some("image/png"), "scan.png", Unsupported),
        (None, "Makefile", Unsupported),
        (None, "archive.tar.gz", Unsupported),
    ];
    for (mime, name, expected) in cases {
        assert_eq!(DocumentKind::from_mime_or_name(mime, name), expected, "{mime:?} {name}");
    }
    assert_eq!(extract(b"x", Unsupported), Err(ExtractError::Unsupported));
}

#[test]
fn text_newlines_are_normalised_and_encodings_guessed() {
    check(b"a\r\nb\rc\n", DocumentKind::PlainText, "a\nb\nc\n");
    check(b"\xEF\xBB\xBF# Titre\n", DocumentKind::Markdown, "# Titre\n");
    // Not UTF-8: read as Windows-1252.
    check(b"caf\xe9 \x80 \x93r\xe9union\x94", DocumentKind::PlainText, "café € “réunion”");
    check_error(
        b"MZ\x00\x01",
        DocumentKind::PlainText,
        &Limits::DEFAULT,
        &ExtractError::Malformed(String::new()),
    );
}

// DOCX structure.

#[test]
fn docx_headings_come_from_style_names_outline_levels_and_inheritance() {
    let styles = r#"
        <w:style w:type="paragraph" w:styleId="Titre1"><w:name w:val="heading 1"/></w:style>
        <w:style w:type="paragraph" w:styleId="berschrift2"><w:name w:val="Heading 2"/></w:style>
        <w:style w:type="paragraph" w:styleId="Custom"><w:name w:val="Custom"/><w:basedOn w:val="berschrift2"/></w:style>
        <w:style w:type="paragraph" w:styleId="Outlined"><w:name w:val="Outlined"/><w:pPr><w:outlineLvl w:val="2"/></w:pPr></w:style>
        <w:style w:type="paragraph" w:styleId="Quote"><w:name w:val="Quote"/><w:basedOn w:val="Normal"/></w:style>
        <w:style w:type="character" w:styleId="Heading1Char"><w:name w:val="heading 1"/></w:style>"#;
    let body = r#"
        <w:p><w:pPr><w:pStyle w:val="Titre1"/></w:pPr><w:r><w:t>Article 1 – Objet</w:t></w:r></w:p>
        <w:p><w:pPr><w:pStyle w:val="berschrift2"/></w:pPr><w:r><w:t>Zwei</w:t></w:r></w:p>
        <w:p><w:pPr><w:pStyle w:val="Custom"/></w:pPr><w:r><w:t>Geerbt</w:t></w:r></w:p>
        <w:p><w:pPr><w:pStyle w:val="Outlined"/></w:pPr><w:r><w:t>Drei</w:t></w:r></w:p>
        <w:p><w:pPr><w:outlineLvl w:val="3"/></w:pPr><w:r><w:t>Vier</w:t></w:r></w:p>
        <w:p><w:pPr><w:pStyle w:val="Quote"/></w:pPr><w:r><w:t>Cited.</w:t></w:r></w:p>
        <w:p><w:pPr><w:pStyle w:val="Heading5"/></w:pPr><w:r><w:t>Unknown to styles.xml</w:t></w:r></w:p>"#;
    check(
        &docx(body, Some(styles)),
        DocumentKind::Docx,
        "# Article 1 – Objet\n\n## Zwei\n\n## Geerbt\n\n### Drei\n\n#### Vier\n\nCited.\n\n##### Unknown to styles.xml",
    );
}

#[test]
fn docx_runs_tabs_breaks_lists_and_tables() {
    let body = r#"
        <w:p><w:r><w:t xml:space="preserve">Split </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>run</w:t><w:tab/><w:t>tab</w:t><w:br/><w:t>next line</w:t></w:r></w:p>
        <w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs><w:numPr><w:ilvl w:val="0"/></w:numPr></w:pPr><w:r><w:t>first item</w:t></w:r></w:p>
        <w:p><w:pPr><w:numPr><w:ilvl w:val="0"/></w:numPr></w:pPr><w:r><w:t>second item</w:t></w:r></w:p>
        <w:tbl>
          <w:tr><w:tc><w:p><w:r><w:t>Poste</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Montant</w:t></w:r></w:p></w:tc></w:tr>
          <w:tr><w:tc><w:p><w:r><w:t>Licences</w:t></w:r></w:p><w:p><w:r><w:t>logicielles</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>8 000 €</w:t></w:r></w:p></w:tc><w:tc><w:p/></w:tc></w:tr>
        </w:tbl>
        <w:p><w:r><w:t>After &amp; &#233;.</w:t></w:r></w:p>"#;
    check(
        &docx(body, None),
        DocumentKind::Docx,
        "Split run\ttab\nnext line\n\n- first item\n- second item\n\nPoste | Montant\nLicences logicielles | 8 000 €\n\nAfter & é.",
    );
}

#[test]
fn docx_leaves_out_what_the_reader_does_not_see() {
    let body = r#"
        <w:p><w:r><w:t>Kept</w:t></w:r><w:del><w:r><w:delText>deleted</w:delText></w:r></w:del><w:r><w:instrText>PAGE</w:instrText></w:r></w:p>
        <w:p><w:pPr><w:pStyle w:val="Heading1"/><w:pPrChange><w:pPr><w:pStyle w:val="Normal"/></w:pPr></w:pPrChange></w:pPr><w:r><w:t>Still a heading</w:t></w:r></w:p>
        <w:p><w:r><mc:AlternateContent><mc:Choice><w:txbxContent><w:p><w:r><w:t>In the box</w:t></w:r></w:p></w:txbxContent></mc:Choice><mc:Fallback><w:txbxContent><w:p><w:r><w:t>In the box</w:t></w:r></w:p></w:txbxContent></mc:Fallback></mc:AlternateContent></w:r><w:r><w:t>Around the box</w:t></w:r></w:p>"#;
    check(
        &docx(body, None),
        DocumentKind::Docx,
        "Kept\n\n# Still a heading\n\nIn the box\n\nAround the box",
    );
}

// ODF structure.

#[test]
fn body_lines_shaped_like_markdown_structure_are_escaped() {
    // A root prompt in a manual is not a heading; a rule or a fence in a
    // paragraph does not underline or open anything.
    let expected = "# Clock\n\n\\# hwclock --systohc\n\n\\---\n\\```";
    let docx_body = r#"
        <w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Clock</w:t></w:r></w:p>
        <w:p><w:r><w:t># hwclock --systohc</w:t></w:r></w:p>
        <w:p><w:r><w:t>---</w:t><w:br/><w:t>```</w:t></w:r></w:p>"#;
    check(&docx(docx_body, None), DocumentKind::Docx, expected);
    let odt_body = r#"<office:text>
        <text:h text:outline-level="1">Clock</text:h>
        <text:p># hwclock --systohc</text:p>
        <text:p>---<text:line-break/>```</text:p>
    </office:text>"#;
    check(&odf(odt_body), DocumentKind::Odt, expected);
}

#[test]
fn odt_spaces_lists_tables_and_left_out_parts() {
    let body = r#"<office:text>
        <text:tracked-changes><text:changed-region><text:deletion><text:p>deleted</text:p></text:deletion></text:changed-region></text:tracked-changes>
        <text:table-of-content><text:index-body><text:p>1. Übersicht 3</text:p></text:index-body></text:table-of-content>
        <text:h text:outline-level="3">Deep   heading</text:h>
        <text:p>A<text:s text:c="3"/>B<text:tab/>C<text:line-break/>D
            wrapped in   the XML<text:note><text:note-citation>1</text:note-citation><text:note-body><text:p>A footnote.</text:p></text:note-body></text:note><office:annotation><text:p>A comment</text:p></office:annotation></text:p>
        <text:list><text:list-item><text:p>one</text:p></text:list-item><text:list-item><text:p>two</text:p><text:p>two, more</text:p></text:list-item></text:list>
        <table:table table:name="Table1"><table:table-row><table:table-cell><text:p>a</text:p></table:table-cell><table:covered-table-cell/><table:table-cell><text:p>c</text:p></table:table-cell></table:table-row></table:table>
        <text:h>No level</text:h>
    </office:text>"#;
    check(
        &odf(body),
        DocumentKind::Odt,
        "### Deep heading\n\nA footnote.\n\nA   B\tC\nD wrapped in the XML\n\n- one\n- two\n\ntwo, more\n\na |  | c\n\n# No level",
    );
}

#[test]
fn ods_repeats_are_bounded_and_empty_ones_skipped() {
    assert_eq!(odf::TABLE_REPEAT_MAX, 1000);
    let body = r#"<office:spreadsheet>
        <table:table table:name="Feuille">
          <table:table-row table:number-rows-repeated="2"><table:table-cell table:number-columns-repeated="2"><text:p>x</text:p></table:table-cell><table:table-cell table:number-columns-repeated="16384"/></table:table-row>
          <table:table-row><table:table-cell office:value-type="float" office:value="42"/><table:table-cell/><table:table-cell><text:p>z</text:p></table:table-cell></table:table-row>
          <table:table-row table:number-rows-repeated="1048576"><table:table-cell table:number-columns-repeated="16384"/></table:table-row>
        </table:table>
        <table:table table:name="Bomb"><table:table-row table:number-rows-repeated="1000000000"><table:table-cell table:number-columns-repeated="1000000000"><text:p>b</text:p></table:table-cell></table:table-row></table:table>
        <table:table><table:table-row><table:table-cell><text:p>unnamed</text:p></table:table-cell></table:table-row></table:table>
    </office:spreadsheet>"#;
    let started = Instant::now();
    let text = text_of(&odf(body), DocumentKind::Ods);
    assert!(started.elapsed() < Duration::from_secs(10));
    let bomb_row = vec!["b"; odf::TABLE_REPEAT_MAX].join(" | ");
    let bomb_rows = vec![bomb_row.as_str(); odf::TABLE_REPEAT_MAX].join("\n");
    assert_eq!(
        text,
        format!(
            "## Sheet 1: Feuille\n\nx | x\nx | x\n42 |  | z\n\n## Sheet 2: Bomb\n\n{bomb_rows}\n\n## Sheet 3\n\nunnamed"
        )
    );
}

#[test]
fn odp_slide_without_title_and_speaker_notes() {
    let body = r#"<office:presentation>
        <draw:page draw:name="p1"><draw:frame presentation:class="subtitle"><draw:text-box><text:p>Only a subtitle</text:p></draw:text-box></draw:frame>
          <presentation:notes><draw:frame presentation:class="notes"><draw:text-box><text:p>Say hello.</text:p></draw:text-box></draw:frame></presentation:notes></draw:page>
        <draw:page draw:name="p2"><draw:frame presentation:class="title"><draw:text-box><text:p>Two</text:p><text:p>lines</text:p></draw:text-box></draw:frame>
          <draw:frame><table:table><table:table-row><table:table-cell><text:p>k</text:p></table:table-cell><table:table-cell><text:p>v</text:p></table:table-cell></table:table-row></table:table></draw:frame></draw:page>
    </office:presentation>"#;
    check(
        &odf(body),
        DocumentKind::Odp,
        "## Slide 1\n\nOnly a subtitle\n\nSay hello.\n\n## Slide 2: Two lines\n\nk | v",
    );
}

// Hostile and broken input.

#[test]
fn malformed_packages_are_errors() {
    let malformed = ExtractError::Malformed(String::new());
    let cases: Vec<(Vec<u8>, DocumentKind)> = vec![
        (Vec::new(), DocumentKind::Docx),
        (b"PK\x03\x04 not really a zip".to_vec(), DocumentKind::Odt),
        (b"%PDF-1.4 truncated".to_vec(), DocumentKind::Pdf),
        (Vec::new(), DocumentKind::Pdf),
        (zip(&[("other.xml", b"<a/>")]), DocumentKind::Docx),
        (zip(&[("content.xml", b"<office:document-content>")]), DocumentKind::Odt),
        (zip(&[("content.xml", b"<a><b></a>")]), DocumentKind::Ods),
        (zip(&[("content.xml", b"\xff\xfe<\x00a\x00/\x00>\x00")]), DocumentKind::Odp),
        (
            zip(&[(
                "content.xml",
                b"<!DOCTYPE a [<!ENTITY e \"boom\">]><a xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\"><text:p>&e;</text:p></a>",
            )]),
            DocumentKind::Odt,
        ),
    ];
    for (bytes, kind) in cases {
        check_error(&bytes, kind, &Limits::DEFAULT, &malformed);
    }
}

#[test]
fn a_zip_bomb_stops_at_the_entry_length_limit() {
    // 65 MiB of spaces inside a valid document deflate to about 64 KiB.
    let mut content = String::from(
        r#"<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0">"#,
    );
    content.push_str(&" ".repeat(ZIP_ENTRY_LENGTH_MAX + 1024 * 1024));
    content.push_str("</office:document-content>");
    let bomb = zip(&[("content.xml", content.as_bytes())]);
    drop(content);
    assert!(bomb.len() < 1024 * 1024, "the bomb is small: {} bytes", bomb.len());
    let started = Instant::now();
    check_error(&bomb, DocumentKind::Odt, &Limits::DEFAULT, &ExtractError::TooLarge);
    assert!(started.elapsed() < Duration::from_secs(20));
    // At a limit the bomb's document is under, it is read.
    let limits = Limits { zip_entry_length_max: ZIP_ENTRY_LENGTH_MAX * 2, ..Limits::DEFAULT };
    assert_eq!(
        extract_with_limits(&bomb, DocumentKind::Odt, &limits).map(|e| e.text),
        Ok(String::new())
    );
}

#[test]
fn too_many_zip_entries_are_refused() {
    let parts: Vec<(String, Vec<u8>)> =
        (0..4).map(|index| (format!("part{index}.xml"), b"<a/>".to_vec())).collect();
    let mut parts: Vec<(&str, &[u8])> =
        parts.iter().map(|(name, bytes)| (name.as_str(), bytes.as_slice())).collect();
    parts.push(("content.xml", b"<a/>"));
    let archive = zip(&parts);
    let limits = Limits { zip_entry_count_max: 4, ..Limits::DEFAULT };
    check_error(&archive, DocumentKind::Odt, &limits, &ExtractError::TooLarge);
    let limits = Limits { zip_entry_count_max: 5, ..Limits::DEFAULT };
    assert_eq!(
        extract_with_limits(&archive, DocumentKind::Odt, &limits).map(|e| e.text),
        Ok(String::new())
    );
}

#[test]
fn oversized_input_and_text_are_refused() {
    let oversized = vec![b' '; INPUT_LENGTH_MAX + 1];
    for kind in DocumentKind::READABLE {
        check_error(&oversized, kind, &Limits::DEFAULT, &ExtractError::TooLarge);
    }
    let small_text = Limits { text_length_max: 100, ..Limits::DEFAULT };
    let markdown = (DEMO_MARKDOWN, DocumentKind::Markdown);
    for (path, kind) in FUZZ_DOCUMENTS[..5].iter().copied().chain([markdown]) {
        check_error(&demo(path), kind, &small_text, &ExtractError::TooLarge);
    }
}

#[test]
fn pdf_time_and_thread_bounds() {
    assert_eq!(PDF_TIME_MAX, Duration::from_secs(20));
    let manual = demo(DEMO_PDF);
    // Nobody waits: the parser has not answered yet, and goes on alone.
    let impatient = Limits { pdf_time_max: Duration::ZERO, ..Limits::DEFAULT };
    check_error(&manual, DocumentKind::Pdf, &impatient, &ExtractError::Timeout);
    let no_threads = Limits { pdf_thread_count_max: 0, ..Limits::DEFAULT };
    check_error(&manual, DocumentKind::Pdf, &no_threads, &ExtractError::Busy);
}

/// A PDF from its objects' bodies (object 1 is the catalog), with a correct
/// cross-reference table.
fn pdf(objects: &[&str]) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (index, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", index + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

#[test]
fn a_panic_in_the_pdf_parser_is_contained() {
    let content = "BT /F1 12 Tf 72 700 Td (Hello) Tj ET";
    let stream = format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len());
    // A Type0 font must have descendant fonts; pdf-extract `expect`s them.
    let broken = pdf(&[
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        "<< /Type /Font /Subtype /Type0 /BaseFont /Broken /Encoding /Identity-H >>",
        &stream,
    ]);
    let started = Instant::now();
    assert_eq!(
        extract(&broken, DocumentKind::Pdf),
        Err(ExtractError::Malformed("the PDF reader failed on this file".into()))
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    // The same page with a simple font reads, but says too little to index.
    let fine = pdf(&[
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        &stream,
    ]);
    assert_eq!(extract(&fine, DocumentKind::Pdf), Err(ExtractError::NeedsOcr));
}

/// A mutation of a document: flip a byte, cut it short, or splice in noise.
#[derive(Debug, Clone)]
enum Mutation {
    Flip { position: usize, mask: u8 },
    Truncate { position: usize },
    Insert { position: usize, noise: Vec<u8> },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), 1..=255u8).prop_map(|(position, mask)| Mutation::Flip { position, mask }),
        1 => any::<usize>().prop_map(|position| Mutation::Truncate { position }),
        1 => (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(position, noise)| Mutation::Insert { position, noise }),
    ]
}

fn mutate(bytes: &mut Vec<u8>, mutations: &[Mutation]) {
    for mutation in mutations {
        if bytes.is_empty() {
            return;
        }
        match mutation {
            Mutation::Flip { position, mask } => {
                let position = position % bytes.len();
                bytes[position] ^= mask;
            }
            Mutation::Truncate { position } => bytes.truncate(position % bytes.len()),
            Mutation::Insert { position, noise } => {
                let position = position % bytes.len();
                bytes.splice(position..position, noise.iter().copied());
            }
        }
    }
}

/// Short enough that a spinning parser does not stall the suite, long
/// enough for a debug build to read the demo manual.
const FUZZ_PDF_TIME_MAX: Duration = Duration::from_secs(3);
/// What "quickly" means for one mutated document.
const FUZZ_CASE_TIME_MAX: Duration = Duration::from_secs(10);

fn extract_quickly(bytes: &[u8], kind: DocumentKind) -> Result<(), TestCaseError> {
    let limits = Limits { pdf_time_max: FUZZ_PDF_TIME_MAX, ..Limits::DEFAULT };
    let started = Instant::now();
    let result = extract_with_limits(bytes, kind, &limits);
    prop_assert!(started.elapsed() < FUZZ_CASE_TIME_MAX, "{kind:?} took {:?}", started.elapsed());
    if let Ok(extracted) = result {
        prop_assert!(extracted.text.len() <= limits.text_length_max);
        prop_assert!(!extracted.text.contains('\r'));
    }
    Ok(())
}

/// The demo documents of each kind with text (the first five), then the scan.
const FUZZ_DOCUMENTS: [(&str, DocumentKind); 6] = [
    (DEMO_DOCX, DocumentKind::Docx),
    (DEMO_ODT, DocumentKind::Odt),
    (DEMO_ODS, DocumentKind::Ods),
    (DEMO_ODP, DocumentKind::Odp),
    (DEMO_PDF, DocumentKind::Pdf),
    (DEMO_SCAN, DocumentKind::Pdf),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Mutated files: the zip, deflate and PDF layers see the damage.
    #[test]
    fn mutated_documents_never_panic(
        document in 0..FUZZ_DOCUMENTS.len(),
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        let (path, kind) = FUZZ_DOCUMENTS[document];
        let mut bytes = demo(path);
        mutate(&mut bytes, &mutations);
        extract_quickly(&bytes, kind)?;
    }

    /// Mutated XML parts zipped back: the XML walk and the format rules see
    /// the damage.
    #[test]
    fn mutated_document_parts_never_panic(
        document in 0..4usize,
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        let (path, kind) = FUZZ_DOCUMENTS[document];
        let mut parts = unzip(&demo(path));
        for (name, content) in parts.iter_mut() {
            if name == "content.xml" || name == "word/document.xml" || name == "word/styles.xml" {
                mutate(content, &mutations);
            }
        }
        let parts: Vec<(&str, &[u8])> =
            parts.iter().map(|(name, content)| (name.as_str(), content.as_slice())).collect();
        extract_quickly(&zip(&parts), kind)?;
    }

    /// Any bytes at all, as any kind.
    #[test]
    fn random_bytes_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..2048),
        kind in 0..FUZZ_DOCUMENTS.len(),
    ) {
        extract_quickly(&bytes, FUZZ_DOCUMENTS[kind].1)?;
    }
}

/// A PDF of pages drawn with Helvetica (`/F1`), Helvetica-Bold (`/F2`) and
/// a bold face known only by its descriptor weight (`/F3`); each page is a
/// list of (font, size, text) lines, top to bottom, under a running header
/// and over a page-number footer.
fn typeset_pdf(pages: &[Vec<(&str, u32, &str)>]) -> Vec<u8> {
    let mut objects = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        String::new(),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".into(),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>"
            .into(),
        format!(
            "<< /Type /Font /Subtype /Type1 /BaseFont /ABCDEF+Corporate /Encoding /WinAnsiEncoding /FirstChar 32 /LastChar 126 /Widths [{}] /FontDescriptor 6 0 R >>",
            vec!["556"; 95].join(" ")
        ),
        "<< /Type /FontDescriptor /FontName /ABCDEF+Corporate /Flags 32 /FontWeight 700 /ItalicAngle 0 /Ascent 700 /Descent -200 /CapHeight 700 /StemV 80 /FontBBox [0 -200 1000 900] >>".into(),
    ];
    let mut kids = Vec::new();
    for (number, lines) in pages.iter().enumerate() {
        let mut ops = vec![
            "BT".to_string(),
            "/F2 9 Tf 1 0 0 1 72 760 Tm (ACME Internal - Storage Migration) Tj".into(),
            "1 0 0 1 72 720 Tm".into(),
        ];
        for (font, size, text) in lines {
            ops.push(format!("/{font} {size} Tf ({text}) Tj 0 -{} Td", size * 14 / 10));
        }
        ops.push(format!(
            "/F1 9 Tf 1 0 0 1 290 40 Tm (Page {} of {}) Tj ET",
            number + 1,
            pages.len()
        ));
        let content = ops.join("\n");
        let page = objects.len() + 1;
        kids.push(format!("{page} 0 R"));
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R /F2 4 0 R /F3 5 0 R >> >> /Contents {} 0 R >>",
            page + 1
        ));
        objects.push(format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()));
    }
    objects[1] = format!("<< /Type /Pages /Kids [{}] /Count {} >>", kids.join(" "), kids.len());
    let objects: Vec<&str> = objects.iter().map(String::as_str).collect();
    pdf(&objects)
}

const PROSE: [&str; 3] = [
    "The shared drive holds about 850 GB in 120 000 files, most of them office documents",
    "and scanned invoices. Each department keeps its own folder tree and sharing rules,",
    "which the migration must preserve exactly as they are configured today on the old server.",
];

#[test]
fn pdf_headings_are_recovered_from_size_and_weight() {
    let body = |lines: &mut Vec<(&'static str, u32, &'static str)>| {
        lines.extend(PROSE.iter().map(|line| ("F1", 10, *line)));
    };
    let mut first = vec![("F2", 18, "Storage Migration Plan")];
    body(&mut first);
    first.push(("F2", 14, "Scope and goals"));
    body(&mut first);
    first.push(("F3", 10, "Out of scope"));
    body(&mut first);
    let mut second = vec![("F2", 14, "Schedule")];
    body(&mut second);
    // A numbered title keeps its number's depth.
    second.push(("F2", 14, "2.1 Test runs"));
    body(&mut second);
    second.push(("F1", 14, "Risks"));
    body(&mut second);
    let text = text_of(&typeset_pdf(&[first, second]), DocumentKind::Pdf);
    assert_eq!(
        headings(&text),
        [
            "# Storage Migration Plan",
            "## Scope and goals",
            "#### Out of scope",
            "## Schedule",
            "## 2.1 Test runs",
            "### Risks",
        ],
        "{text}"
    );
    // The running header and the page footers stay text, not headings.
    assert!(text.starts_with("ACME Internal - Storage Migration\n"), "{text}");
    assert!(text.contains("\nPage 1 of 2\n") && text.ends_with("Page 2 of 2"), "{text}");
    assert!(text.contains(&format!("## Scope and goals\n\n{}\n{}", PROSE[0], PROSE[1])), "{text}");
}

#[test]
fn a_pdf_drawing_itself_is_refused_before_the_parser_recurses() {
    let stream = |content: &str, extra: &str| {
        format!("<< /Length {} {extra} >>\nstream\n{content}\nendstream", content.len())
    };
    let text = "BT /F1 10 Tf 72 700 Td (Some text on the page) Tj ET /X1 Do";
    let looping = pdf(&[
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> /XObject << /X1 5 0 R >> >> /Contents 6 0 R >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        // The form has no resources of its own: it draws the page's X1, itself.
        &stream(text, "/Type /XObject /Subtype /Form /BBox [0 0 612 792]"),
        &stream(text, ""),
    ]);
    assert_eq!(
        extract(&looping, DocumentKind::Pdf),
        Err(ExtractError::Malformed("the PDF nests its drawings in a loop".into()))
    );
}

#[test]
fn docx_outline_level_nine_is_body_text() {
    let styles = r#"
        <w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/></w:style>
        <w:style w:type="paragraph" w:styleId="Plain"><w:name w:val="Plain heading"/><w:basedOn w:val="berschrift1"/><w:pPr><w:outlineLvl w:val="9"/></w:pPr></w:style>"#;
    let body = r#"
        <w:p><w:pPr><w:pStyle w:val="berschrift1"/></w:pPr><w:r><w:t>Heading</w:t></w:r></w:p>
        <w:p><w:pPr><w:pStyle w:val="Plain"/></w:pPr><w:r><w:t>Based on a heading, but body text</w:t></w:r></w:p>
        <w:p><w:pPr><w:pStyle w:val="berschrift1"/><w:outlineLvl w:val="9"/></w:pPr><w:r><w:t>Made body text</w:t></w:r></w:p>"#;
    check(
        &docx(body, Some(styles)),
        DocumentKind::Docx,
        "# Heading\n\nBased on a heading, but body text\n\nMade body text",
    );
}

#[test]
fn odt_paragraphs_are_headings_by_their_style() {
    let styles = r#"<?xml version="1.0" encoding="UTF-8"?><office:document-styles xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"><office:styles>
        <style:style style:name="Heading" style:family="paragraph"/>
        <style:style style:name="Title" style:family="paragraph" style:parent-style-name="Heading"/>
        <style:style style:name="Subtitle" style:family="paragraph" style:parent-style-name="Heading"/>
        <style:style style:name="Heading_20_2" style:display-name="Heading 2" style:family="paragraph" style:parent-style-name="Heading" style:default-outline-level="2"/>
        <style:style style:name="Kapitel" style:family="paragraph" style:default-outline-level="3"/>
        <style:style style:name="Flat" style:family="paragraph" style:parent-style-name="Heading_20_2" style:default-outline-level=""/>
    </office:styles></office:document-styles>"#;
    let content = r#"<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:automatic-styles>
        <style:style style:name="P1" style:family="paragraph" style:parent-style-name="Heading_20_2"/>
        <style:style style:name="P2" style:family="paragraph" style:parent-style-name="Kapitel"/>
        <style:style style:name="T1" style:family="text" style:parent-style-name="Heading_20_2"/>
    </office:automatic-styles><office:body><office:text>
        <text:p text:style-name="Title">Plan</text:p>
        <text:p text:style-name="Subtitle">A subtitle</text:p>
        <text:p text:style-name="P1">By its parent</text:p>
        <text:p text:style-name="P2">By outline level</text:p>
        <text:p text:style-name="Flat">Not a heading</text:p>
        <text:h text:style-name="Kapitel">Level from the style</text:h>
        <text:p text:style-name="Heading_20_4">Undefined, known by name</text:p>
        <text:p text:style-name="T1">Not a paragraph style</text:p>
    </office:text></office:body></office:document-content>"#;
    let bytes = zip(&[("content.xml", content.as_bytes()), ("styles.xml", styles.as_bytes())]);
    check(
        &bytes,
        DocumentKind::Odt,
        "# Plan\n\nA subtitle\n\n## By its parent\n\n### By outline level\n\nNot a heading\n\n### Level from the style\n\n#### Undefined, known by name\n\nNot a paragraph style",
    );
}
