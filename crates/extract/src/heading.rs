//! What a heading line looks like in extracted text: the two grammars the
//! PDF reader and the chunker share, so "a section title" means one thing.
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
}
