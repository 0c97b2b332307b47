//! Which lines of a PDF are headings: by their typography, relative to the
//! body text of the same document, and by the numbered-title grammar.
//!
//! The body size is the size most characters are drawn at. A line is a
//! typographic heading when it is title-shaped (short, a capital or digit
//! first — any letter when it is both bold and larger —, not ending like a
//! sentence or a clause, letters in it) and either drawn clearly larger than
//! the body ([`LARGER_RATIO_MIN`]) or, at body size or more, drawn bold
//! while the body is not. A regular-weight style that carries more than
//! [`REGULAR_HEADING_SHARE_MAX`] of the text is a second text size (prose
//! over a document of small table cells), not a heading style, however
//! large. Consecutive lines in one such
//! style are one heading wrapped over lines (up to [`HEADING_LINE_COUNT_MAX`];
//! more is a paragraph set large, not a heading). Levels follow the distinct
//! heading styles, largest first (bold before regular at one size); a
//! numbered title ("3.4 Two-factor authentication") keeps the depth of its
//! number, which says more than its size does.
//!
//! Code — a line drawn mostly in a monospace font — is never a heading, and
//! its size is not the body's: a manual with many listings set small would
//! otherwise make every short prose line "larger than the body".
//!
//! Running headers and footers — a line among the first or last few of a
//! page whose text, digits aside, recurs on at least half the pages — are
//! never headings, whatever their font.

use std::collections::{HashMap, HashSet};

use super::Line;
use crate::heading::{
    HEADING_LEVEL_MAX, LABELLED_HEADING_LENGTH_MAX, escape_structure, labelled_heading,
};

/// How much larger than the body a heading is drawn, at least.
pub(crate) const LARGER_RATIO_MIN: f64 = 1.15;
/// The most words in a typographic heading.
pub(crate) const HEADING_WORD_COUNT_MAX: usize = 14;
/// The most lines one typographic heading wraps over.
pub(crate) const HEADING_LINE_COUNT_MAX: usize = 3;
/// A document more bold than this has bold body text: bold alone marks no
/// heading there.
const BOLD_SHARE_MAX: f64 = 0.4;
/// A regular-weight style carrying more of the text than this is a text
/// style, however much larger than the body size it is: headings are a
/// small part of any document.
const REGULAR_HEADING_SHARE_MAX: f64 = 0.2;
/// How many lines at the top and the bottom of a page may be a running
/// header or footer.
const RUNNING_LINE_COUNT: usize = 3;

/// The style that makes a line a heading: size in tenths of a point, bold.
type HeadingStyle = (u32, bool);

/// The text with each heading as a Markdown ATX line of its level, standing
/// alone between blank lines, and every other line escaped where it would
/// read as Markdown structure.
pub(crate) fn mark_headings(lines: &[Line]) -> String {
    let levels = heading_levels(lines);
    let mut marked = String::with_capacity(lines.iter().map(|line| line.text.len() + 2).sum());
    let mut index = 0;
    let mut previous_was_heading = false;
    while index < lines.len() {
        let line = &lines[index];
        let heading = levels.get(&index);
        if !marked.is_empty() {
            marked.push('\n');
            let previous_blank = marked.ends_with("\n\n");
            if (heading.is_some() || previous_was_heading)
                && !previous_blank
                && !line.text.is_empty()
            {
                marked.push('\n');
            }
        }
        match heading {
            Some(&(level, line_count)) => {
                marked.push_str(&"#".repeat(level));
                marked.push(' ');
                let title: Vec<&str> = lines[index..index + line_count]
                    .iter()
                    .map(|line| line.text.as_str())
                    .collect();
                marked.push_str(&title.join(" "));
                index += line_count;
            }
            None => {
                marked.push_str(&escape_structure(&line.text));
                index += 1;
            }
        }
        previous_was_heading = heading.is_some();
    }
    marked
}

/// Heading start line → (level, how many lines the heading spans).
fn heading_levels(lines: &[Line]) -> HashMap<usize, (usize, usize)> {
    let running = running_lines(lines);
    let typographic = typographic_headings(lines, &running);
    let mut styles: Vec<HeadingStyle> = typographic.iter().map(|(_, _, style)| *style).collect();
    styles.sort_unstable_by(|a, b| b.cmp(a));
    styles.dedup();
    let mut levels = HashMap::new();
    let mut covered = HashSet::new();
    for (start, count, style) in typographic {
        let title: Vec<&str> =
            lines[start..start + count].iter().map(|l| l.text.as_str()).collect();
        let rank = styles.iter().position(|known| *known == style).unwrap_or(0) + 1;
        let level = labelled_heading(&title.join(" ")).unwrap_or(rank);
        levels.insert(start, (level.min(HEADING_LEVEL_MAX), count));
        covered.extend(start..start + count);
    }
    for (index, line) in lines.iter().enumerate() {
        let is_code = line.style.is_some_and(|style| style.is_monospace());
        if covered.contains(&index) || running.contains(&index) || is_code {
            continue;
        }
        if let Some(level) = labelled_heading(&line.text) {
            levels.insert(index, (level, 1));
        }
    }
    levels
}

/// (first line, line count, style) of each typographic heading.
fn typographic_headings(
    lines: &[Line],
    running: &HashSet<usize>,
) -> Vec<(usize, usize, HeadingStyle)> {
    let Some(body) = body_size(lines) else { return Vec::new() };
    let (characters, bold) = lines
        .iter()
        .filter_map(|line| line.style)
        .fold((0u64, 0u64), |(c, b), s| (c + u64::from(s.characters), b + u64::from(s.bold)));
    let bold_marks = characters > 0 && (bold as f64) < BOLD_SHARE_MAX * characters as f64;
    let shares = style_shares(lines);
    let is_larger = |size: u32| f64::from(size) >= f64::from(body) * LARGER_RATIO_MIN;
    let style_of = |index: usize| -> Option<HeadingStyle> {
        if running.contains(&index) {
            return None;
        }
        let line = &lines[index];
        let style = line.style.filter(|style| !style.is_monospace())?;
        let size = style.size()?;
        let bold = style.is_bold();
        // A regular style that much of the text is set in is a text style
        // (the prose over a document of small table cells), not headings.
        let is_text_style = !bold
            && shares.get(&(size, false)).is_some_and(|share| *share > REGULAR_HEADING_SHARE_MAX);
        let larger = is_larger(size) && !is_text_style;
        let heavier = bold && bold_marks && size >= body;
        (has_letters(&line.text) && (larger || heavier)).then_some((size, bold))
    };
    let mut headings = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let Some(style) = style_of(index) else {
            index += 1;
            continue;
        };
        let mut end = index + 1;
        while end < lines.len() && style_of(end) == Some(style) {
            end += 1;
        }
        let count = end - index;
        let title: Vec<&str> = lines[index..end].iter().map(|line| line.text.as_str()).collect();
        // Bold and larger is heading enough to open with a lowercase
        // command name ("sudo configuration").
        let lowercase_allowed = style.1 && is_larger(style.0);
        if count <= HEADING_LINE_COUNT_MAX && is_title_shaped(&title, lowercase_allowed) {
            headings.push((index, count, style));
        }
        index = end;
    }
    headings
}

/// Per line style (size, bold), the share of the characters outside code
/// drawn in lines of that style.
fn style_shares(lines: &[Line]) -> HashMap<HeadingStyle, f64> {
    let mut counts: HashMap<HeadingStyle, u64> = HashMap::new();
    let mut total = 0u64;
    let styles = lines.iter().filter_map(|line| line.style);
    for style in styles.filter(|style| !style.is_monospace()) {
        let Some(size) = style.size() else { continue };
        *counts.entry((size, style.is_bold())).or_default() += u64::from(style.characters);
        total += u64::from(style.characters);
    }
    counts.into_iter().map(|(style, count)| (style, count as f64 / total.max(1) as f64)).collect()
}

/// The size most characters outside code (monospace lines) are drawn at,
/// in tenths of a point.
fn body_size(lines: &[Line]) -> Option<u32> {
    let mut counts: HashMap<u32, u64> = HashMap::new();
    let styles = lines.iter().filter_map(|line| line.style);
    for style in styles.filter(|style| !style.is_monospace()) {
        for (size, count) in &style.sizes {
            *counts.entry(*size).or_default() += u64::from(*count);
        }
    }
    counts.into_iter().max_by_key(|(size, count)| (*count, *size)).map(|(size, _)| size)
}

fn has_letters(text: &str) -> bool {
    text.chars().filter(|c| c.is_alphabetic()).count() >= 2
}

/// A title, not a sentence: short, opening with a capital, a digit or a
/// label sign (or, with `lowercase_allowed`, any letter), not ending like a
/// sentence or a clause.
fn is_title_shaped(lines: &[&str], lowercase_allowed: bool) -> bool {
    if lines.iter().any(|line| line.len() > LABELLED_HEADING_LENGTH_MAX) {
        return false;
    }
    let title = lines.join(" ");
    let word_count = title.split_whitespace().count();
    let Some(first) = title.chars().next() else { return false };
    let opens = first.is_uppercase()
        || first.is_ascii_digit()
        || matches!(first, '§' | '"' | '«')
        || (lowercase_allowed && first.is_alphabetic());
    opens
        && word_count <= HEADING_WORD_COUNT_MAX
        && !title.ends_with(['.', ',', ';', ':'])
        && !title.contains(". ")
}

/// Lines that are running headers or footers.
fn running_lines(lines: &[Line]) -> HashSet<usize> {
    let mut by_page: Vec<(u32, Vec<usize>)> = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let Some(page) = line.style.map(|style| style.page).filter(|page| *page > 0) else {
            continue;
        };
        if line.text.is_empty() {
            continue;
        }
        match by_page.last_mut() {
            Some((known, indexes)) if *known == page => indexes.push(index),
            _ => by_page.push((page, vec![index])),
        }
    }
    let page_count = by_page.len();
    if page_count < 2 {
        return HashSet::new();
    }
    let edges = |indexes: &Vec<usize>| -> Vec<usize> {
        let mut edge: Vec<usize> = indexes.iter().take(RUNNING_LINE_COUNT).copied().collect();
        edge.extend(indexes.iter().rev().take(RUNNING_LINE_COUNT).copied());
        edge.sort_unstable();
        edge.dedup();
        edge
    };
    // Each key's occurrences: (page, the line's text, its first number).
    let mut by_key: HashMap<String, Vec<Occurrence>> = HashMap::new();
    for (page, indexes) in &by_page {
        for index in edges(indexes) {
            let text = lines[index].text.as_str();
            by_key.entry(running_key(text)).or_default().push((*page, text, first_number(text)));
        }
    }
    let recurring = |key: &str| {
        let Some(occurrences) = by_key.get(key) else { return false };
        let pages: HashSet<u32> = occurrences.iter().map(|(page, _, _)| *page).collect();
        if pages.len() < 2 || pages.len() * 2 < page_count {
            return false;
        }
        // The same words on every page, or a number that counts the pages
        // ("Page 3 of 12", "- 14 -"): "Chapter 2" on page 5 and "Chapter 3"
        // on page 9 are headings.
        let same_text = occurrences.iter().all(|(_, text, _)| *text == occurrences[0].1);
        let offsets: HashSet<Option<i64>> = occurrences
            .iter()
            .map(|(page, _, number)| number.map(|number| number - i64::from(*page)))
            .collect();
        same_text || (offsets.len() == 1 && !offsets.contains(&None))
    };
    by_page
        .iter()
        .flat_map(|(_, indexes)| edges(indexes))
        .filter(|index| recurring(&running_key(&lines[*index].text)))
        .collect()
}

/// The first run of digits in a line, as a number.
fn first_number(text: &str) -> Option<i64> {
    let start = text.find(|c: char| c.is_ascii_digit())?;
    let digits: String = text[start..].chars().take_while(char::is_ascii_digit).take(9).collect();
    digits.parse().ok()
}

/// A running line's occurrence: its page, its text, its first number.
type Occurrence<'a> = (u32, &'a str, Option<i64>);

/// A line with its numbers blanked: "Page 3 of 12" and "Page 4 of 12" are
/// one running footer.
fn running_key(text: &str) -> String {
    let mut key = String::with_capacity(text.len());
    for character in text.chars() {
        if character.is_ascii_digit() {
            if !key.ends_with('#') {
                key.push('#');
            }
        } else {
            key.extend(character.to_lowercase());
        }
    }
    key
}

#[cfg(test)]
mod tests {
    use super::super::LineStyle;
    use super::*;

    fn style(page: u32, size: u32, bold: bool, characters: u32) -> LineStyle {
        LineStyle {
            page,
            characters,
            bold: if bold { characters } else { 0 },
            monospace: 0,
            sizes: vec![(size, characters)],
        }
    }

    fn lines<'a>(spec: &[(&str, Option<&'a LineStyle>)]) -> Vec<Line<'a>> {
        spec.iter().map(|(text, style)| Line { text: text.to_string(), style: *style }).collect()
    }

    const BODY: &str = "Body text that runs on for a while, as paragraphs in a report do";

    #[test]
    fn larger_and_bold_lines_become_headings_by_size_rank() {
        let title = style(1, 200, true, 20);
        let chapter = style(1, 140, false, 12);
        let bold = style(1, 100, true, 10);
        let body = style(1, 100, false, 60);
        let text = mark_headings(&lines(&[
            ("Annual Report", Some(&title)),
            ("Overview", Some(&chapter)),
            (BODY, Some(&body)),
            (BODY, Some(&body)),
            ("Key figures", Some(&bold)),
            (BODY, Some(&body)),
            ("", None),
            ("3.2 Budget lines", Some(&chapter)),
            (BODY, Some(&body)),
        ]));
        assert_eq!(
            text,
            format!(
                "# Annual Report\n\n## Overview\n\n{BODY}\n{BODY}\n\n### Key figures\n\n{BODY}\n\n## 3.2 Budget lines\n\n{BODY}"
            )
        );
    }

    #[test]
    fn sentences_small_text_and_bold_bodies_are_not_headings() {
        let large = style(1, 140, false, 40);
        let bold_small = style(1, 80, true, 10);
        let body = style(1, 100, false, 60);
        let bold_body = style(1, 100, true, 60);
        let plain = lines(&[
            ("This sentence is set large.", Some(&large)),
            ("a lowercase continuation", Some(&large)),
            ("Figure 3", Some(&bold_small)),
            ("40 000", Some(&large)),
            (BODY, Some(&body)),
            (BODY, Some(&body)),
        ]);
        assert!(!mark_headings(&plain).contains('#'), "{}", mark_headings(&plain));
        // A document in bold throughout: bold marks nothing.
        let bold = lines(&[("Short bold line", Some(&bold_body)), (BODY, Some(&bold_body))]);
        assert!(!mark_headings(&bold).contains('#'));
    }

    #[test]
    fn code_is_never_a_heading_nor_the_body_size() {
        let title = style(1, 170, true, 20);
        let command = style(1, 130, true, 18);
        let prose = style(1, 105, false, 60);
        let label = style(1, 95, true, 12);
        // Listings set small in a monospace font, more of them than prose.
        let code = LineStyle { monospace: 100, ..style(1, 85, false, 100) };
        let mut spec = vec![
            ("Setup Guide", Some(&title)),
            (BODY, Some(&prose)),
            (BODY, Some(&prose)),
            // Bold and larger: a heading even in lowercase.
            ("sudo configuration", Some(&command)),
            (BODY, Some(&prose)),
            // A root prompt: code, and Markdown-shaped.
            ("# adduser fish", Some(&code)),
        ];
        spec.extend(std::iter::repeat_n(("Name Of A Command", Some(&code)), 10));
        // Bold but smaller than the prose: a label, not a heading (it would
        // be one if the listings' size were taken for the body's).
        spec.extend([("Legend of the table", Some(&label)), (BODY, Some(&prose))]);
        let text = mark_headings(&lines(&spec));
        let listing = ["Name Of A Command"; 10].join("\n");
        assert_eq!(
            text,
            format!(
                "# Setup Guide\n\n{BODY}\n{BODY}\n\n## sudo configuration\n\n{BODY}\n\\# adduser fish\n{listing}\nLegend of the table\n{BODY}"
            )
        );
    }

    #[test]
    fn a_second_text_size_is_not_a_heading_style() {
        let title = style(1, 170, true, 20);
        let prose = style(1, 105, false, 60);
        let caption = style(1, 105, false, 13);
        // Table cells set small, more of them than prose: the body size.
        let cells = style(1, 85, false, 200);
        let mut spec = vec![("Tools Overview", Some(&title))];
        spec.extend(std::iter::repeat_n((BODY, Some(&prose)), 3));
        spec.extend([("", None), ("List of tools", Some(&caption)), ("", None)]);
        spec.extend(std::iter::repeat_n(("coreutils nice renice", Some(&cells)), 5));
        spec.push(("", None));
        spec.extend(std::iter::repeat_n((BODY, Some(&prose)), 3));
        let text = mark_headings(&lines(&spec));
        assert!(text.starts_with("# Tools Overview\n\n"), "{text}");
        assert_eq!(text.matches('#').count(), 1, "{text}");
    }

    #[test]
    fn a_heading_wrapped_over_two_lines_is_one_heading() {
        let heading = style(1, 160, true, 20);
        let body = style(1, 100, false, 60);
        let text = mark_headings(&lines(&[
            ("Migration of the shared drive", Some(&heading)),
            ("to the new storage cluster", Some(&heading)),
            (BODY, Some(&body)),
        ]));
        assert_eq!(
            text,
            format!("# Migration of the shared drive to the new storage cluster\n\n{BODY}")
        );
        // Four lines in a heading's style are a paragraph set large.
        let long = lines(&[
            ("Intro set large", Some(&heading)),
            ("Intro set large", Some(&heading)),
            ("Intro set large", Some(&heading)),
            ("Intro set large", Some(&heading)),
            (BODY, Some(&body)),
        ]);
        assert!(!mark_headings(&long).contains('#'));
    }

    #[test]
    fn running_headers_and_footers_are_not_headings() {
        let header = style(0, 120, true, 20);
        let footer = style(0, 100, true, 10);
        let chapter = style(0, 160, true, 10);
        let heading = style(0, 140, true, 10);
        let body = style(0, 100, false, 60);
        let mut pages: Vec<(String, LineStyle)> = Vec::new();
        for page in 1..=3u32 {
            let on = |s: &LineStyle| LineStyle { page, ..s.clone() };
            pages.push(("ACME Corp Quarterly".into(), on(&header)));
            // A chapter number is not a page number.
            pages.push((format!("Chapter {}", page * 2), on(&chapter)));
            pages.push((["Overview", "Budget", "Risks"][page as usize - 1].into(), on(&heading)));
            pages.push((BODY.into(), on(&body)));
            pages.push((BODY.into(), on(&body)));
            pages.push((format!("Page {page} of 3"), on(&footer)));
        }
        let spec: Vec<Line> = pages
            .iter()
            .map(|(text, style)| Line { text: text.clone(), style: Some(style) })
            .collect();
        let text = mark_headings(&spec);
        let headings: Vec<&str> = text.lines().filter(|line| line.starts_with('#')).collect();
        assert_eq!(
            headings,
            ["# Chapter 2", "## Overview", "# Chapter 4", "## Budget", "# Chapter 6", "## Risks"]
        );
    }

    #[test]
    fn without_styles_only_labelled_titles_are_headings() {
        let text = mark_headings(&lines(&[
            ("Manual", None),
            ("1 Introduction", None),
            ("This excerpt covers.", None),
            ("3.4 Two-factor authentication", None),
            ("", None),
            ("Two-factor text.", None),
            ("5 Encryption", None),
        ]));
        assert_eq!(
            text,
            "Manual\n\n# 1 Introduction\n\nThis excerpt covers.\n\n## 3.4 Two-factor authentication\n\nTwo-factor text.\n\n# 5 Encryption"
        );
    }
}
