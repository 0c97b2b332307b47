//! The chunker's rules on examples and the demo documents, and its
//! invariants (order, bounds, coverage, headings) on random documents.

use extract::heading::labelled_heading;
use proptest::prelude::*;

use super::*;

/// Passages rendered one per line: heading, then the passage's text.
fn render(text: &str, passages: &[Passage]) -> String {
    passages
        .iter()
        .map(|passage| format!("{:?} {:?}", passage.heading, &text[passage.range()]))
        .collect::<Vec<_>>()
        .join("\n")
}

fn check(text: &str, expected: &str) {
    let passages = chunk(text);
    check_invariants(text, &passages);
    assert_eq!(render(text, &passages), expected);
}

/// What holds for every text: passages in order, apart, inside the text, on
/// character boundaries, trimmed, bounded, and together covering every
/// non-whitespace character.
fn check_invariants(text: &str, passages: &[Passage]) {
    let mut covered_to = 0;
    for passage in passages {
        assert!(passage.offset >= covered_to, "in order and apart: {passage:?}");
        let end = passage.offset + passage.length;
        assert!(end <= text.len(), "inside the text: {passage:?}");
        assert!(text.is_char_boundary(passage.offset), "starts on a boundary: {passage:?}");
        assert!(text.is_char_boundary(end), "ends on a boundary: {passage:?}");
        assert!(passage.length > 0, "not empty: {passage:?}");
        assert!(passage.length <= PASSAGE_LENGTH_MAX, "bounded: {passage:?}");
        let slice = &text[passage.range()];
        assert_eq!(slice.trim(), slice, "trimmed: {passage:?}");
        // Nothing but whitespace between the previous passage and this one.
        assert!(text[covered_to..passage.offset].trim().is_empty(), "covered before {passage:?}");
        covered_to = end;
    }
    assert!(text[covered_to..].trim().is_empty(), "covered to the end");
}

#[test]
fn the_bound_is_what_the_tests_assume() {
    assert_eq!(PASSAGE_LENGTH_MAX, 1500);
}

#[test]
fn markdown_headings_open_sections_and_numbered_lists_do_not() {
    check(
        "# Notes\n\nintro\n\n## 1. Ordre du jour\n\n1. Point\n2. Budget\n\n## 3. Budget ##\nLe budget.\n",
        r###"Some("Notes") "# Notes\n\nintro"
Some("1. Ordre du jour") "## 1. Ordre du jour\n\n1. Point\n2. Budget"
Some("3. Budget") "## 3. Budget ##\nLe budget.""###,
    );
}

#[test]
fn a_heading_with_nothing_under_it_opens_the_next_sections_passage() {
    // A title over the first section, a chapter over a subsection; the
    // last heading of a text stands alone, as there is no next section.
    check(
        "# Console basics\n\n## The shell prompt\n\nThe prompt.\n\n## Login\n\n### As root\n\nSu.\n\n## Empty at the end\n",
        r###"Some("The shell prompt") "# Console basics\n\n## The shell prompt\n\nThe prompt."
Some("As root") "## Login\n\n### As root\n\nSu."
Some("Empty at the end") "## Empty at the end""###,
    );
}

#[test]
fn headings_lose_their_markdown_escapes() {
    check(
        "## The \"\\$HOME\" variable\n\nThe home.\n\n\\# not a heading\n",
        r###"Some("The \"$HOME\" variable") "## The \"\\$HOME\" variable\n\nThe home.\n\n\\# not a heading""###,
    );
}

#[test]
fn labelled_lines_open_sections_in_text_without_markdown_headings() {
    check(
        "Contrat de prestation\n\nArticle 1 – Objet\nLe présent contrat.\n\n§3. Budget prévisionnel\nLe budget est fixé à 40 000 €.\n1. Buy milk\n3.4 Two-factor authentication\n\nThe TOTP provider.\n",
        r###"None "Contrat de prestation"
Some("Article 1 – Objet") "Article 1 – Objet\nLe présent contrat."
Some("§3. Budget prévisionnel") "§3. Budget prévisionnel\nLe budget est fixé à 40 000 €.\n1. Buy milk"
Some("3.4 Two-factor authentication") "3.4 Two-factor authentication\n\nThe TOTP provider.""###,
    );
}

#[test]
fn markdown_headings_silence_labelled_lines() {
    check(
        "# Title\n\n3.4 Looks labelled\n\ntext",
        r###"Some("Title") "# Title\n\n3.4 Looks labelled\n\ntext""###,
    );
}

#[test]
fn code_blocks_hold_no_headings() {
    check(
        "# Install\n\n```sh\n# not a heading\n3.4 Nor This\n```\n\n~~~\n## nor this\n~~~\n# Use\nrun it",
        r###"Some("Install") "# Install\n\n```sh\n# not a heading\n3.4 Nor This\n```\n\n~~~\n## nor this\n~~~"
Some("Use") "# Use\nrun it""###,
    );
}

#[test]
fn empty_and_blank_text_has_no_passages() {
    for text in ["", " ", "\n\n", " \t\r\n\u{a0}\n", "\u{3000}"] {
        assert_eq!(chunk(text), Vec::new(), "{text:?}");
    }
}

#[test]
fn paragraphs_are_packed_and_never_split_when_they_fit() {
    let paragraph = |letter: &str| format!("{letter}{}.", " word".repeat(99)); // 497 bytes
    let text = [paragraph("a"), paragraph("b"), paragraph("c"), paragraph("d")].join("\n\n");
    let passages = chunk(&text);
    check_invariants(&text, &passages);
    let lengths: Vec<usize> = passages.iter().map(|passage| passage.length).collect();
    // Three paragraphs and their blank lines fit (3 × 497 + 2 × 2); the
    // fourth opens the next passage.
    assert_eq!(lengths, [1495, 497]);
}

#[test]
fn a_long_paragraph_is_cut_at_lines_then_sentences_then_words() {
    let sentence = format!("s{}.", " word".repeat(119)); // 597 bytes
    // Three sentences on one line: cut between sentences.
    let text = format!("# H\n\n{sentence} {sentence} {sentence}");
    let passages = chunk(&text);
    check_invariants(&text, &passages);
    let lengths: Vec<usize> = passages.iter().map(|passage| passage.length).collect();
    // The heading line packs with the sentences that fit after it.
    assert_eq!(lengths, [3 + 2 + 597 + 1 + 597, 597]);
    assert!(passages.iter().all(|passage| passage.heading.as_deref() == Some("H")));
    // One sentence with no end: cut between words.
    let text = "word ".repeat(400);
    let passages = chunk(&text);
    check_invariants(&text, &passages);
    assert!(passages.iter().all(|passage| text[passage.range()].ends_with("word")));
    assert_eq!(passages.len(), 2);
}

#[test]
fn a_giant_word_is_cut_between_characters() {
    // "a" then 1000 two-byte characters: byte 1500 falls inside one.
    let text = format!("a{}", "é".repeat(1000));
    let passages = chunk(&text);
    check_invariants(&text, &passages);
    let lengths: Vec<usize> = passages.iter().map(|passage| passage.length).collect();
    assert_eq!(lengths, [1499, 502]);
}

fn demo(path: &str) -> Vec<u8> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/fixtures/demo/files/");
    std::fs::read(format!("{root}{path}")).unwrap()
}

fn demo_text(path: &str) -> String {
    let kind = extract::DocumentKind::from_mime_or_name(None, path);
    extract::extract(&demo(path), kind).unwrap().text
}

/// A demo document's extracted text and its passages, which keep the
/// invariants.
fn demo_chunked(path: &str) -> (String, Vec<Passage>) {
    let text = demo_text(path);
    let passages = chunk(&text);
    check_invariants(&text, &passages);
    (text, passages)
}

/// The heading of the passage holding `needle`, which must be in exactly one.
fn heading_of(text: &str, passages: &[Passage], needle: &str) -> Option<String> {
    let holding: Vec<&Passage> =
        passages.iter().filter(|passage| text[passage.range()].contains(needle)).collect();
    assert_eq!(holding.len(), 1, "{needle:?} in {holding:?}");
    holding[0].heading.clone()
}

#[test]
fn demo_docx_budget_sentence_is_under_its_article() {
    let (text, passages) = demo_chunked("alice/Projects/Apollo/CR-reunion-mars.docx");
    assert_eq!(
        heading_of(
            &text,
            &passages,
            "Le budget prévisionnel du projet est fixé à 40 000 € (quarante mille euros) pour l'exercice 2026."
        )
        .as_deref(),
        Some("§3. Budget prévisionnel")
    );
    let headings: Vec<Option<&str>> =
        passages.iter().map(|passage| passage.heading.as_deref()).collect();
    assert_eq!(
        headings,
        [
            Some("Compte rendu de réunion – Projet Apollo"),
            Some("Article 1 – Objet"),
            Some("Article 2 – Calendrier"),
            Some("§3. Budget prévisionnel"),
            Some("Article 4 – Prochaines étapes"),
        ]
    );
}

#[test]
fn demo_pdf_totp_passage_is_under_its_recovered_section_title() {
    let (text, passages) = demo_chunked("bob/Manuals/admin-manual.pdf");
    assert_eq!(
        heading_of(&text, &passages, "The TOTP provider works with any authenticator app")
            .as_deref(),
        Some("3.4 Two-factor authentication")
    );
    assert_eq!(
        heading_of(&text, &passages, "occ encryption:encrypt-all").as_deref(),
        Some("5.1 Enabling server-side encryption")
    );
    // The title, a larger bold line, is recovered from typography (the
    // numbered sections from their numbers); with nothing under it, it
    // opens the first section's first passage.
    assert!(text.starts_with("# Nextcloud Server Administration Manual (excerpt)\n"));
    assert_eq!(passages[0].offset, 0, "the title is in the first passage");
    assert_eq!(passages[0].heading.as_deref(), Some("1 Introduction"));
}

#[test]
fn demo_documents_keep_the_invariants() {
    for path in [
        "alice/Documents/notes-reunion.md",
        "alice/Documents/todo.txt",
        "alice/Projects/Apollo/plan.odt",
        "alice/Projects/Apollo/budget.ods",
        "alice/Projects/Apollo/kickoff.odp",
        "bob/Notes/standup.md",
    ] {
        let (_, passages) = demo_chunked(path);
        assert!(!passages.is_empty(), "{path}");
    }
    let text = demo_text("alice/Projects/Apollo/kickoff.odp");
    let passages = chunk(&text);
    assert_eq!(
        heading_of(&text, &passages, "Budget prévisionnel : 40 000 €").as_deref(),
        Some("Slide 3: Calendrier et budget")
    );
}

/// Every string of up to five characters from a small alphabet that holds
/// headings, blanks and a two-byte character keeps the invariants.
#[test]
fn all_small_texts_keep_the_invariants() {
    const ALPHABET: [&str; 6] = ["a", " ", "\n", "# ", "é", "1 A"];
    const LENGTH_MAX: u32 = 5;
    let mut count = 0;
    for length in 0..=LENGTH_MAX {
        for mut code in 0..ALPHABET.len().pow(length) {
            let mut text = String::new();
            for _ in 0..length {
                text.push_str(ALPHABET[code % ALPHABET.len()]);
                code /= ALPHABET.len();
            }
            check_invariants(&text, &chunk(&text));
            count += 1;
        }
    }
    assert_eq!(count, (0..=LENGTH_MAX).map(|length| 6usize.pow(length)).sum::<usize>());
}

// Random documents, built with a record of where their headings and
// paragraphs are.

const WORDS: &[&str] = &[
    "budget",
    "réunion",
    "größe",
    "naïve",
    "the",
    "totp",
    "provider",
    "works",
    "with",
    "any",
    "app",
    "日本語",
    "🙂",
    "e\u{301}te\u{301}",
    "x",
    "données",
    "straße",
    "40\u{a0}000",
    "€",
];
const TITLES: &[&str] = &[
    "Budget prévisionnel",
    "Two-factor authentication",
    "Übersicht",
    "Écluse",
    "Objet",
    "Zeitplan",
];

#[derive(Debug, Clone)]
enum Block {
    Markdown {
        level: usize,
        title: String,
    },
    Labelled(String),
    /// Lines of words; a paragraph ends with a period.
    Paragraph(Vec<String>),
    /// A fenced code block whose lines look like headings.
    Code,
    /// A numbered list, which is not a run of headings.
    List(usize),
}

fn words(count: std::ops::Range<usize>) -> impl Strategy<Value = String> {
    proptest::collection::vec(
        (proptest::sample::select(WORDS), prop_oneof![9 => Just(" "), 1 => Just("\u{a0}")]),
        count,
    )
    .prop_map(|words| {
        let mut line = String::new();
        for (index, (word, space)) in words.iter().enumerate() {
            if index > 0 {
                line.push_str(space);
            }
            line.push_str(word);
        }
        line
    })
}

fn block() -> impl Strategy<Value = Block> {
    let title = proptest::sample::select(TITLES).prop_map(str::to_string);
    let labelled = prop_oneof![
        (1..20u32, 1..20u32, title.clone()).prop_map(|(a, b, t)| format!("{a}.{b} {t}")),
        (1..20u32, title.clone()).prop_map(|(a, t)| format!("{a} {t}")),
        (1..20u32).prop_map(|a| format!("Article {a}")),
        (1..20u32, title.clone()).prop_map(|(a, t)| format!("Article {a} – {t}")),
        (1..20u32, title.clone()).prop_map(|(a, t)| format!("§{a}. {t}")),
        (1..20u32).prop_map(|a| format!("Chapter {a}")),
    ];
    // Sentences end with a period; a long line holds many.
    let line = prop_oneof![
        4 => words(1..12).prop_map(|line| format!("{line}.")),
        1 => proptest::collection::vec(words(5..20), 20..40)
            .prop_map(|sentences| sentences.join(". ") + "."),
        1 => (proptest::sample::select(&["é", "a", "🙂", "日"][..]), 400..1700usize)
            .prop_map(|(character, count)| character.repeat(count)),
    ];
    prop_oneof![
        2 => (1..=6usize, title).prop_map(|(level, title)| Block::Markdown { level, title }),
        3 => labelled.prop_map(Block::Labelled),
        6 => proptest::collection::vec(line, 1..12).prop_map(Block::Paragraph),
        1 => Just(Block::Code),
        1 => (1..6usize).prop_map(Block::List),
    ]
}

#[derive(Debug, Clone, Copy)]
enum Separator {
    Newline,
    Blank,
    Blanks,
    WhitespaceLine,
    CarriageReturn,
}

impl Separator {
    fn text(self) -> &'static str {
        match self {
            Separator::Newline => "\n",
            Separator::Blank => "\n\n",
            Separator::Blanks => "\n\n\n\n",
            Separator::WhitespaceLine => "\n \t\u{a0}\n",
            Separator::CarriageReturn => "\r\n\r\n",
        }
    }

    fn is_blank(self) -> bool {
        !matches!(self, Separator::Newline)
    }
}

fn separator() -> impl Strategy<Value = Separator> {
    prop_oneof![
        2 => Just(Separator::Newline),
        5 => Just(Separator::Blank),
        1 => Just(Separator::Blanks),
        1 => Just(Separator::WhitespaceLine),
        1 => Just(Separator::CarriageReturn),
    ]
}

/// A generated document and what its generator knows about it.
#[derive(Debug)]
struct Document {
    text: String,
    /// (byte offset of the line, heading text), for the lines that are
    /// headings under the document's mode.
    headings: Vec<(usize, String)>,
    /// Paragraphs with blank lines on both sides that fit in one passage.
    whole_paragraphs: Vec<Range<usize>>,
}

fn document() -> impl Strategy<Value = Document> {
    (any::<bool>(), proptest::collection::vec((block(), separator()), 0..24)).prop_map(
        |(markdown_mode, blocks)| {
            let mut document = Document {
                text: String::new(),
                headings: Vec::new(),
                whole_paragraphs: Vec::new(),
            };
            let mut markdown_headings = Vec::new();
            let mut labelled_headings = Vec::new();
            let mut blank_before = true;
            let mut open_paragraph: Option<Range<usize>> = None;
            for (block, separator) in blocks {
                let start = document.text.len();
                match block {
                    Block::Markdown { level, title } if markdown_mode => {
                        document.text.push_str(&format!("{} {title}", "#".repeat(level)));
                        markdown_headings.push((start, title));
                    }
                    // Without Markdown headings, a Markdown block is prose.
                    Block::Markdown { title, .. } => {
                        document.text.push_str(&format!("{}.", title.to_lowercase()))
                    }
                    Block::Labelled(line) => {
                        assert!(labelled_heading(&line).is_some(), "{line:?} is labelled");
                        document.text.push_str(&line);
                        labelled_headings.push((start, line));
                    }
                    Block::Paragraph(lines) => {
                        document.text.push_str(&lines.join("\n"));
                        let range = start..document.text.len();
                        if blank_before && range.len() <= PASSAGE_LENGTH_MAX {
                            open_paragraph = Some(range);
                        }
                    }
                    Block::Code => document
                        .text
                        .push_str("```\n# a comment\n3.4 Not A Heading\n\n## nor this\n```"),
                    Block::List(count) => {
                        let items: Vec<String> =
                            (1..=count).map(|item| format!("{item}. Buy milk")).collect();
                        document.text.push_str(&items.join("\n"));
                    }
                }
                // The paragraph just written is whole if a blank line follows.
                if let Some(range) = open_paragraph.take()
                    && separator.is_blank()
                {
                    document.whole_paragraphs.push(range);
                }
                document.text.push_str(separator.text());
                blank_before = separator.is_blank();
            }
            // Labelled lines count only where no Markdown heading was drawn.
            document.headings = match markdown_headings.is_empty() {
                true => labelled_headings,
                false => markdown_headings,
            };
            document
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_documents_keep_the_invariants_and_their_headings(document in document()) {
        let text = &document.text;
        let passages = chunk(text);
        check_invariants(text, &passages);
        for passage in &passages {
            let end = passage.offset + passage.length;
            // The heading is the last heading line in or before the passage.
            let expected = document
                .headings
                .iter()
                .rev()
                .find(|(start, _)| *start < end)
                .map(|(_, title)| title.clone());
            prop_assert_eq!(&passage.heading, &expected, "{:?}", passage);
            // No passage runs over the start of a section, unless all it
            // holds before it are headings with nothing under them.
            for (start, _) in &document.headings {
                if !(passage.offset < *start && *start < end) {
                    continue;
                }
                let before: String = text[passage.offset..*start]
                    .split('\n')
                    .filter(|line| {
                        let line_start = line.as_ptr() as usize - text.as_ptr() as usize;
                        !document.headings.iter().any(|(heading, _)| *heading == line_start)
                    })
                    .collect();
                prop_assert!(
                    before.trim().is_empty(),
                    "{:?} crosses the heading at {} after {:?}", passage, start, before
                );
            }
        }
        // A paragraph that fits in a passage is in one passage.
        for paragraph in &document.whole_paragraphs {
            let trimmed = trim(text, paragraph.clone());
            prop_assert!(
                passages.iter().any(|passage| passage.offset <= trimmed.start
                    && trimmed.end <= passage.offset + passage.length),
                "paragraph {:?} was split", trimmed
            );
        }
    }
}
