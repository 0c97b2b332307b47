//! What a heading line looks like in extracted text: the grammars the PDF
//! reader and the chunker share, so "a section title" means one thing, and
//! [`text_headings`], the headings of text served as it is (Markdown, plain
//! text), where setext titles and title lines standing alone count too.
//!
//! A Markdown heading is an ATX line (`## Budget`). A labelled heading is a
//! short line that names its section by a label, as documents without styles
//! do: "3.4 Two-factor authentication", "5 Encryption", "Article 1 – Objet",
//! "§3. Budget prévisionnel", "Chapter 4". It is recognised by its shape
//! alone, anchored at the line start, and nothing clever: no font sizes, no
//! look at the neighbouring lines. To keep prose out, the line must be short,
//! must not end like a sentence or a clause (`.` `,` `;` `:`), and a bare
//! number's title must start with a capital letter and hold no sentence
//! break. "1. Buy milk" is not a heading: a single number with a dot is what a
//! numbered list looks like, and a list split into one section per item is
//! worse than a heading missed.

use std::borrow::Cow;

/// The longest line that can be a labelled heading, in bytes.
pub const LABELLED_HEADING_LENGTH_MAX: usize = 100;
/// The longest line that counts as a Markdown heading, in bytes; a longer
/// `#` line is prose that happens to start with a hash.
pub const MARKDOWN_HEADING_LENGTH_MAX: usize = 200;
/// The deepest heading level (Markdown has six).
pub const HEADING_LEVEL_MAX: usize = 6;
/// The most digits in one component of a section number: "3.10" is a
/// section, "850 GB" and "2026 Report" are not.
const SECTION_NUMBER_DIGIT_COUNT_MAX: usize = 2;
/// The most components in a section number ("1.2.3.4.5").
const SECTION_NUMBER_COMPONENT_COUNT_MAX: usize = 6;

/// Words that label a section when a number follows them. Capitalised as
/// written at a line start; an all-capitals line ("ARTICLE 5") matches too.
const SECTION_KEYWORDS: &[&str] = &[
    "Article",
    "Art.",
    "Chapter",
    "Chapitre",
    "Kapitel",
    "Section",
    "Abschnitt",
    "Part",
    "Partie",
    "Teil",
    "Titre",
    "Annex",
    "Annexe",
    "Anhang",
    "Appendix",
];

/// A Markdown ATX heading: its level and its text (closing hashes removed).
/// Up to three spaces of indentation, as CommonMark allows; an empty heading
/// is not one.
pub fn markdown_heading(line: &str) -> Option<(usize, &str)> {
    if line.len() > MARKDOWN_HEADING_LENGTH_MAX {
        return None;
    }
    let line = line.trim_end();
    let indentation = line.len() - line.trim_start_matches(' ').len();
    if indentation > 3 {
        return None;
    }
    let line = &line[indentation..];
    let level = line.len() - line.trim_start_matches('#').len();
    if !(1..=HEADING_LEVEL_MAX).contains(&level) {
        return None;
    }
    let rest = &line[level..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    let mut title = rest.trim();
    // A closing run of hashes is decoration when a space precedes it.
    let without_closing = title.trim_end_matches('#');
    if without_closing.is_empty() || without_closing.ends_with([' ', '\t']) {
        title = without_closing.trim_end();
    }
    if title.is_empty() {
        return None;
    }
    Some((level, title))
}

/// A labelled heading's level: 1 for a keyword ("Article 5"), the number of
/// components for a section number ("3.4" is 2), at most
/// [`HEADING_LEVEL_MAX`]. `None` when the line is not one.
pub fn labelled_heading(line: &str) -> Option<usize> {
    let line = line.trim();
    if line.is_empty() || line.len() > LABELLED_HEADING_LENGTH_MAX {
        return None;
    }
    if line.ends_with(['.', ',', ';', ':']) {
        return None;
    }
    if let Some(rest) = line.strip_prefix('§') {
        let (components, rest) = section_number(rest.trim_start())?;
        let rest = rest.strip_prefix('.').unwrap_or(rest);
        return title_follows(rest, false).then(|| components.min(HEADING_LEVEL_MAX));
    }
    if line.starts_with(|c: char| c.is_ascii_digit()) {
        let (components, rest) = section_number(line)?;
        let (rest, has_final_dot) = match rest.strip_prefix('.') {
            Some(rest) => (rest, true),
            None => (rest, false),
        };
        // "1. Buy milk" is a list item; "1.2. Scope" and "1 Scope" are not.
        if components == 1 && has_final_dot {
            return None;
        }
        let title = rest.trim_start();
        if rest.len() == title.len() || !title.starts_with(char::is_uppercase) {
            return None;
        }
        if title.contains(". ") {
            return None;
        }
        return Some(components.min(HEADING_LEVEL_MAX));
    }
    // The keyword must be a whole word: "Partie 2" is not "Part" + "ie 2".
    let keyword = SECTION_KEYWORDS.iter().find(|keyword| {
        let is_keyword = line
            .get(..keyword.len())
            .is_some_and(|start| start == **keyword || start == keyword.to_uppercase());
        is_keyword && line[keyword.len()..].starts_with(char::is_whitespace)
    })?;
    let label = line[keyword.len()..].trim_start();
    let rest = match section_number(label) {
        Some((_, rest)) => rest,
        None => {
            let roman_length = label
                .find(|c: char| !matches!(c, 'I' | 'V' | 'X' | 'L' | 'C' | 'D' | 'M'))
                .unwrap_or(label.len());
            let letter_length = usize::from(label.starts_with(|c: char| c.is_ascii_uppercase()));
            let length = roman_length.max(letter_length);
            if length == 0 {
                return None;
            }
            let rest = &label[length..];
            // "Annexe A" and "Titre IV", not "Article Premier".
            if rest.starts_with(char::is_alphanumeric) {
                return None;
            }
            rest
        }
    };
    let rest = rest.strip_prefix('.').unwrap_or(rest);
    title_follows(rest, true).then_some(1)
}

/// A heading's text with CommonMark's backslash escapes taken out
/// (`The "\$HOME" variable` is `The "$HOME" variable`): a backslash before
/// ASCII punctuation stands for that character, outside code spans; any
/// other backslash is itself.
pub fn unescape_markdown(text: &str) -> Cow<'_, str> {
    if !text.contains('\\') {
        return Cow::Borrowed(text);
    }
    let mut unescaped = String::with_capacity(text.len());
    let mut in_code = false;
    let mut characters = text.chars().peekable();
    while let Some(character) = characters.next() {
        if character == '`' {
            in_code = !in_code;
        } else if character == '\\'
            && !in_code
            && let Some(escaped) = characters.next_if(char::is_ascii_punctuation)
        {
            unescaped.push(escaped);
            continue;
        }
        unescaped.push(character);
    }
    Cow::Owned(unescaped)
}

/// A line of body text as it can stand in extracted text without being read
/// as structure: a line that would be a Markdown heading (`# adduser fish`,
/// a root prompt in a manual), a setext underline or a code fence gets a
/// backslash before its first character, CommonMark's escape. The readers
/// that mark headings (DOCX, ODF, PDF) write their other lines through it,
/// so the chunker sees exactly the headings they marked.
pub fn escape_structure(line: &str) -> Cow<'_, str> {
    if markdown_heading(line).is_none() && setext_underline(line).is_none() && !is_code_fence(line)
    {
        return Cow::Borrowed(line);
    }
    let trimmed = line.trim_start_matches(' ');
    let indentation = line.len() - trimmed.len();
    Cow::Owned(format!("{}\\{trimmed}", &line[..indentation]))
}

/// "```" or "~~~" after at most three spaces opens or closes a code block
/// (the chunker's fences, and what [`escape_structure`] escapes).
pub fn is_code_fence(line: &str) -> bool {
    let trimmed = line.trim_start_matches(' ');
    line.len() - trimmed.len() <= 3 && (trimmed.starts_with("```") || trimmed.starts_with("~~~"))
}

/// The longest title line of plain text (setext or standing alone), in
/// bytes.
pub const TEXT_TITLE_LENGTH_MAX: usize = 80;
/// The most words in a title line standing alone.
pub const TEXT_TITLE_WORD_COUNT_MAX: usize = 10;
/// The fewest words in the paragraph after a title standing alone: a title
/// introduces prose, not another short line.
pub const TEXT_TITLE_PARAGRAPH_WORD_COUNT_MIN: usize = 8;
/// How many titles standing alone a text needs before any counts: one short
/// line without a period is as likely a letter's one-line paragraph; a text
/// that does it repeatedly before paragraphs has structure.
pub const TEXT_TITLE_COUNT_MIN: usize = 2;

/// A setext underline's level: `===` is 1, `---` is 2 (at least three
/// characters, up to three spaces of indentation, trailing spaces allowed).
pub fn setext_underline(line: &str) -> Option<usize> {
    let trimmed = line.trim_end();
    let indentation = trimmed.len() - trimmed.trim_start_matches(' ').len();
    let marks = &trimmed[indentation..];
    if indentation > 3 || marks.len() < 3 {
        return None;
    }
    if marks.bytes().all(|byte| byte == b'=') {
        return Some(1);
    }
    marks.bytes().all(|byte| byte == b'-').then_some(2)
}

/// The heading lines of a text served as it is (Markdown, plain text): per
/// `\n`-separated line, its level and title when it is a heading. Lines
/// marked in `excluded` (code blocks) are never headings.
///
/// Markdown headings always count: ATX lines (`## Budget`) and setext
/// titles (a title line, after a blank line, over `===` or `---`). When the
/// text has ATX headings only Markdown headings count: the author wrote the
/// structure down in Markdown. Otherwise (plain text, and Markdown with
/// setext titles only) labelled lines ([`labelled_heading`]) and title
/// lines standing alone count too: a line of at most
/// [`TEXT_TITLE_WORD_COUNT_MAX`] words that opens with a capital (after an
/// opening quotation mark, if any), does not end like a sentence or a
/// clause, has a blank line (or the start) above and a blank line below,
/// and is followed by a paragraph of at least
/// [`TEXT_TITLE_PARAGRAPH_WORD_COUNT_MIN`] words; and only when the text has
/// at least [`TEXT_TITLE_COUNT_MIN`] of them. A title line in capitals
/// ("GUI COMMUNICATION PROTOCOL") is a title whatever follows and however
/// many there are, and counts toward that minimum: capitals on a line of
/// their own are set as a title. A
/// title line over a table (`a | b` rows) is the table's caption and never a
/// heading, nor is one over a code block.
///
/// Titles are given as their line has them; the chunker takes Markdown
/// escapes out ([`unescape_markdown`]).
pub fn text_headings<'a>(lines: &[&'a str], excluded: &[bool]) -> Vec<Option<(usize, &'a str)>> {
    let is_excluded = |index: usize| excluded.get(index).copied().unwrap_or(false);
    let is_blank = |index: usize| lines.get(index).is_none_or(|line| line.trim().is_empty());
    let front_matter_end = front_matter_end(lines);
    let mut headings: Vec<Option<(usize, &'a str)>> = vec![None; lines.len()];
    let mut has_atx = false;
    for (index, line) in lines.iter().enumerate() {
        if is_excluded(index) || index < front_matter_end {
            continue;
        }
        if let Some((level, title)) = markdown_heading(line) {
            headings[index] = Some((level, title));
            has_atx = true;
            continue;
        }
        let underline = lines.get(index + 1).filter(|_| !is_excluded(index + 1));
        let level = underline.and_then(|underline| setext_underline(underline));
        let above_blank = index == 0 || index == front_matter_end || is_blank(index - 1);
        if let (Some(level), true) = (level, above_blank && is_setext_title(line)) {
            headings[index] = Some((level, line.trim()));
        }
    }
    if has_atx {
        return headings;
    }
    let mut titles = Vec::new();
    let mut capitals_count = 0;
    for (index, line) in lines.iter().enumerate() {
        if is_excluded(index) || index < front_matter_end {
            continue;
        }
        if headings[index].is_some() {
            continue;
        }
        if let Some(level) = labelled_heading(line) {
            headings[index] = Some((level, line.trim()));
            continue;
        }
        let above_blank = index == 0 || is_blank(index - 1);
        if !above_blank || !is_blank(index + 1) || !is_standalone_title(line) {
            continue;
        }
        let Some(next) = (index + 1..lines.len()).find(|at| !is_blank(*at)) else { continue };
        // A title over a table is the table's caption, not a section.
        if is_excluded(next) || is_table_row(lines[next]) {
            continue;
        }
        if is_capitals(line) {
            headings[index] = Some((1, line.trim()));
            capitals_count += 1;
            continue;
        }
        let paragraph_words: usize = lines[next..]
            .iter()
            .take_while(|line| !line.trim().is_empty())
            .map(|line| line.split_whitespace().count())
            .sum();
        if paragraph_words >= TEXT_TITLE_PARAGRAPH_WORD_COUNT_MIN {
            titles.push(index);
        }
    }
    if titles.len() + capitals_count >= TEXT_TITLE_COUNT_MIN {
        for index in titles {
            headings[index] = Some((1, lines[index].trim()));
        }
    }
    headings
}

/// The line after a YAML front matter block (`---` on the first line, up
/// to the next `---` or `...`), 0 when there is none.
fn front_matter_end(lines: &[&str]) -> usize {
    if lines.first().map(|line| line.trim_end()) != Some("---") {
        return 0;
    }
    lines
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, line)| matches!(line.trim_end(), "---" | "..."))
        .map_or(0, |(index, _)| index + 1)
}

/// A line that may stand over a setext underline: short, not a list item,
/// a quote or a table row, not ending like a clause.
fn is_setext_title(line: &str) -> bool {
    let title = line.trim();
    let indentation = line.len() - line.trim_start_matches(' ').len();
    !title.is_empty()
        && indentation <= 3
        && title.len() <= TEXT_TITLE_LENGTH_MAX
        && !title.starts_with(['-', '*', '+', '>', '|', '•'])
        && !title.ends_with([',', ';', ':'])
        && title.chars().any(char::is_alphanumeric)
}

/// A line that reads as a title on its own: see [`text_headings`].
fn is_standalone_title(line: &str) -> bool {
    let title = line.trim();
    let word_count = title.split_whitespace().count();
    // "Why GNU su does not support the wheel group", quoted, is a title too.
    let unquoted = title.strip_prefix(['"', '“', '«', '\'', '‘']).unwrap_or(title).trim_start();
    is_setext_title(line)
        && line.len() - line.trim_start().len() == 0
        && word_count <= TEXT_TITLE_WORD_COUNT_MAX
        && unquoted.starts_with(char::is_uppercase)
        && !title.ends_with(['.', '!'])
        && !title.contains(['\t', '=', '{', '}', '<', '>', '|'])
        && !title.contains("://")
}

/// A title line in capitals ("GUI COMMUNICATION PROTOCOL"): at least two
/// letters, none of them lowercase.
fn is_capitals(line: &str) -> bool {
    let mut letters = line.chars().filter(|c| c.is_alphabetic());
    letters.clone().count() >= 2 && letters.all(|c| !c.is_lowercase())
}

/// A row of a plain-text table: cells between `|` (`a | b`, `| a | b |`),
/// or an ASCII grid's rule (`+----+----+`).
fn is_table_row(line: &str) -> bool {
    let row = line.trim();
    row.starts_with('|') || row.contains(" | ") || (row.starts_with("+-") && row.ends_with('+'))
}

/// "3", "3.4", "03.10" → (component count, the rest of the line).
fn section_number(text: &str) -> Option<(usize, &str)> {
    let mut components = 0;
    let mut rest = text;
    loop {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 || digits > SECTION_NUMBER_DIGIT_COUNT_MAX {
            return None;
        }
        components += 1;
        if components > SECTION_NUMBER_COMPONENT_COUNT_MAX {
            return None;
        }
        rest = &rest[digits..];
        match rest.strip_prefix('.') {
            Some(after) if after.starts_with(|c: char| c.is_ascii_digit()) => rest = after,
            _ => return Some((components, rest)),
        }
    }
}

/// After a label: nothing, or a separator and a title, or a space and a
/// capitalised title. With `separator_allowed`, a dash or colon may stand
/// between label and title ("Article 1 – Objet", "Chapitre 2 : Budget").
fn title_follows(rest: &str, separator_allowed: bool) -> bool {
    if rest.is_empty() {
        return true;
    }
    let title = rest.trim_start();
    if title.len() == rest.len() && !rest.starts_with([':', '–', '—']) {
        // "Article 5b", "§3x": the label runs on into something else.
        return false;
    }
    if let (true, Some(after)) = (separator_allowed, title.strip_prefix(['-', '–', '—', ':'])) {
        return !after.trim().is_empty();
    }
    title.starts_with(|c: char| c.is_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labelled_headings_are_recognised_with_their_level() {
        let cases = [
            ("3.4 Two-factor authentication", Some(2)),
            ("5 Encryption", Some(1)),
            ("5.1 Enabling server-side encryption", Some(2)),
            ("1.2.3 Deep", Some(3)),
            ("1.2. Scope", Some(2)),
            ("Article 5", Some(1)),
            ("Article 1 – Objet", Some(1)),
            ("ARTICLE 12 - DURÉE", Some(1)),
            ("Chapter 4", Some(1)),
            ("Chapter IV Results", Some(1)),
            ("Chapitre 2 : Budget", Some(1)),
            ("Annexe A", Some(1)),
            ("Partie 2 – Moyens", Some(1)),
            ("Art. 7 Datenschutz", Some(1)),
            ("§3. Budget prévisionnel", Some(1)),
            ("§ 3.2 Budget", Some(2)),
            ("§3", Some(1)),
            ("3.2 Budget", Some(2)),
            ("  3.4 Two-factor authentication  ", Some(2)),
        ];
        for (line, expected) in cases {
            assert_eq!(labelled_heading(line), expected, "{line:?}");
        }
    }

    #[test]
    fn prose_and_lists_are_not_labelled_headings() {
        let cases = [
            "1. Buy milk",
            "3.4",
            "2 000 € doit être validée",
            "850 GB in rund 120 000 Dateien",
            "2026 Annual report",
            "5 encryption modules are available",
            "3.4 Two-factor authentication is enabled.",
            "3 Security. Strong authentication is the best protection",
            "Article 5 of the GDPR requires a lawful basis",
            "Article premier",
            "Articles of association",
            "Chapter",
            "Page 1 of 4",
            "Sectional view",
            "Le budget prévisionnel du projet est fixé à 40 000 €",
            "Introduction",
            "",
        ];
        for line in cases {
            assert_eq!(labelled_heading(line), None, "{line:?}");
        }
        let long = format!("3.4 {}", "Long ".repeat(LABELLED_HEADING_LENGTH_MAX));
        assert_eq!(labelled_heading(&long), None);
    }

    #[test]
    fn markdown_headings_follow_atx() {
        let cases = [
            ("# Title", Some((1, "Title"))),
            ("## §3. Budget prévisionnel", Some((2, "§3. Budget prévisionnel"))),
            ("   ### Indented", Some((3, "Indented"))),
            ("## Closed ##", Some((2, "Closed"))),
            ("###### Six", Some((6, "Six"))),
            ("####### Seven", None),
            ("#hashtag", None),
            ("    # code", None),
            ("#", None),
            ("##   ", None),
            ("Title", None),
        ];
        for (line, expected) in cases {
            assert_eq!(markdown_heading(line), expected, "{line:?}");
        }
        let long = format!("# {}", "x".repeat(MARKDOWN_HEADING_LENGTH_MAX));
        assert_eq!(markdown_heading(&long), None);
    }

    fn headings_of(text: &str) -> Vec<(usize, &str)> {
        let lines: Vec<&str> = text.split('\n').collect();
        text_headings(&lines, &[]).into_iter().flatten().collect()
    }

    const PARAGRAPH: &str =
        "The migration moves every shared folder to the new cluster over two weekends.";

    #[test]
    fn setext_titles_are_markdown_headings() {
        let text = format!(
            "Migration Plan\n==============\n\n{PARAGRAPH}\n\nScope\n-----\n\n{PARAGRAPH}\n\n1 Counted too\n\n{PARAGRAPH}"
        );
        assert_eq!(headings_of(&text), [(1, "Migration Plan"), (2, "Scope"), (1, "1 Counted too")]);
        // Together with ATX headings, as Markdown mixes them; labelled
        // lines do not count there.
        let mixed = format!(
            "# Plan\n\n{PARAGRAPH}\n\nRisks\n---\n\n{PARAGRAPH}\n\n2 Not counted\n\n{PARAGRAPH}"
        );
        assert_eq!(headings_of(&mixed), [(1, "Plan"), (2, "Risks")]);
    }

    #[test]
    fn rules_front_matter_and_paragraph_ends_are_not_setext_titles() {
        let cases = [
            // A horizontal rule after a blank line.
            format!("{PARAGRAPH}\n\n-----\n\n{PARAGRAPH}"),
            // The last line of a paragraph over a rule.
            format!("{PARAGRAPH}\nand its second line\n-----\n\n{PARAGRAPH}"),
            // YAML front matter.
            format!("---\ntitle: Plan\nauthor: Alice\n---\n\n{PARAGRAPH}"),
            // A signature dash and a list item.
            format!("{PARAGRAPH}\n\n--\nAlice\n\n- item\n---"),
            // A table separator.
            "a | b\n---|---\n1 | 2".to_string(),
        ];
        for text in cases {
            assert_eq!(headings_of(&text), [], "{text:?}");
        }
    }

    #[test]
    fn title_lines_standing_alone_before_paragraphs_are_headings() {
        let text = format!(
            "Storage Migration Plan\n\n{PARAGRAPH}\n\nSchedule and milestones\n\n{PARAGRAPH}\n{PARAGRAPH}\n\nWhat could go wrong?\n\n{PARAGRAPH}"
        );
        assert_eq!(
            headings_of(&text),
            [
                (1, "Storage Migration Plan"),
                (1, "Schedule and milestones"),
                (1, "What could go wrong?")
            ]
        );
        // Labelled lines count alongside.
        let labelled =
            format!("Overview\n\n{PARAGRAPH}\n\n3.2 Budget\n{PARAGRAPH}\n\nRisks\n\n{PARAGRAPH}");
        assert_eq!(headings_of(&labelled), [(1, "Overview"), (2, "3.2 Budget"), (1, "Risks")]);
    }

    #[test]
    fn a_letter_has_no_title_lines() {
        let letters = [
            // One short line without a period: one is not a structure.
            format!(
                "Dear Alice,\n\nThank you for the documents\n\n{PARAGRAPH}\n\nBest regards\nBob"
            ),
            // Short lines before short lines, sentences, a greeting.
            format!(
                "Hello team\n\nSee you at ten\n\nBring the slides\n\nThe meeting is moved.\n\n{PARAGRAPH}"
            ),
            // Lines that end like sentences or clauses, lowercase, lists.
            format!(
                "Thanks again.\n\n{PARAGRAPH}\n\nAs discussed:\n\n{PARAGRAPH}\n\nsee below\n\n{PARAGRAPH}\n\n- first point\n\n{PARAGRAPH}"
            ),
            // A key = value config and a URL.
            format!("Mode = fast\n\n{PARAGRAPH}\n\nSee https://example.org\n\n{PARAGRAPH}"),
        ];
        for text in letters {
            assert_eq!(headings_of(&text), [], "{text:?}");
        }
    }

    #[test]
    fn capitals_quoted_titles_and_captions() {
        // A title in capitals counts alone, and toward the minimum.
        let capitals = format!("GUI COMMUNICATION PROTOCOL\n\n{PARAGRAPH}");
        assert_eq!(headings_of(&capitals), [(1, "GUI COMMUNICATION PROTOCOL")]);
        let document = format!(
            "SYSTEM TIPS (3 OF 3)\n\nIntegrity check\n\n{PARAGRAPH}\n\nList of tools for it\n\n  package | description\n  debsums | checks installed package files against their sums\n\n{PARAGRAPH}"
        );
        // The line over the table is its caption, not a section.
        assert_eq!(headings_of(&document), [(1, "SYSTEM TIPS (3 OF 3)"), (1, "Integrity check")]);
        let quoted = format!(
            "Overview\n\n{PARAGRAPH}\n\n\"Why GNU su does not support the wheel group\"\n\n{PARAGRAPH}"
        );
        assert_eq!(
            headings_of(&quoted),
            [(1, "Overview"), (1, "\"Why GNU su does not support the wheel group\"")]
        );
        // A caption over a grid or a `|` table, a quote of a sentence.
        let not_titles = format!(
            "Overview\n\n{PARAGRAPH}\n\nSizes\n\n+------+------+\n| {PARAGRAPH} | b |\n\nSpeeds\n\n| {PARAGRAPH} | b |\n\n\"he said so.\"\n\n{PARAGRAPH}"
        );
        assert_eq!(headings_of(&not_titles), []);
    }

    #[test]
    fn markdown_escapes_come_out_of_headings() {
        let cases = [
            (r#"The "\$HOME" variable"#, r#"The "$HOME" variable"#),
            (r"\# not a comment \\ one backslash", r"# not a comment \ one backslash"),
            (r"C:\Users and \n stay", r"C:\Users and \n stay"),
            (r"code `\$x` keeps \*its\*", r"code `\$x` keeps *its*"),
            ("no escapes", "no escapes"),
        ];
        for (heading, expected) in cases {
            assert_eq!(unescape_markdown(heading), expected, "{heading:?}");
        }
    }

    #[test]
    fn body_lines_shaped_like_structure_are_escaped() {
        for line in ["# adduser fish", "## nor this", "---", "  ===", "```sh", "~~~"] {
            let escaped = escape_structure(line);
            assert_ne!(escaped, line);
            assert_eq!(markdown_heading(&escaped), None, "{escaped:?}");
            assert_eq!(setext_underline(&escaped), None, "{escaped:?}");
            assert_eq!(unescape_markdown(&escaped).trim(), line.trim(), "{escaped:?}");
        }
        for line in ["#hashtag", "    # indented code", "Plain text", "- item", "#"] {
            assert!(matches!(escape_structure(line), Cow::Borrowed(_)), "{line:?}");
        }
    }

    #[test]
    fn code_blocks_are_excluded() {
        let lines = ["Title", "=====", "", "Other", "-----"];
        let headings = text_headings(&lines, &[true, true, false, false, false]);
        assert_eq!(headings, [None, None, None, Some((2, "Other")), None]);
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any text: one entry per line, titles are trimmed slices of their
        /// own line, levels in 1..=6, and nothing panics.
        #[test]
        fn text_headings_are_lines_of_the_text(
            text in "([A-Za-z0-9 .,:#=\\-§é]{0,30}\n){0,30}",
            excluded in proptest::collection::vec(any::<bool>(), 0..40),
        ) {
            let lines: Vec<&str> = text.split('\n').collect();
            let headings = text_headings(&lines, &excluded);
            prop_assert_eq!(headings.len(), lines.len());
            for (index, heading) in headings.iter().enumerate() {
                if let Some((level, title)) = heading {
                    prop_assert!((1..=HEADING_LEVEL_MAX).contains(level));
                    prop_assert!(!title.is_empty());
                    prop_assert!(lines[index].contains(title));
                    prop_assert!(!excluded.get(index).copied().unwrap_or(false));
                }
            }
        }
    }
}
