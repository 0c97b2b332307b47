//! Cutting extracted text into passages: structure, and nothing clever.
//!
//! A passage is a byte range of the extracted text — the text `files_read`
//! serves — so `files_read(path, offset)` re-reads exactly the passage a
//! search found, and a citation can be checked. Each passage carries the
//! heading above it: that is the whole parent–child mechanism (the parent is
//! `files_read` from the offset), and it is what lets a citation name
//! "§3. Budget prévisionnel" instead of an anonymous fragment.
//!
//! The rules, in order:
//! 1. Sections start at heading lines, as `extract::heading::text_headings`
//!    finds them. When the text has Markdown headings — ATX lines (what
//!    `extract` writes for DOCX, ODF and PDF headings, and what Markdown
//!    files have) or setext titles (`Title` over `=====`) — only those
//!    count; otherwise labelled lines do ("Article 5", "3.2 Budget", "§3.
//!    Budget prévisionnel", "Chapter 4"), and so do title lines standing
//!    alone before a paragraph, in a text that has at least two of them
//!    (plain text, which is served as it is and so cannot be given `#`
//!    lines). Lines inside fenced code blocks are never headings. A section
//!    never shares a passage with another, except that a heading with
//!    nothing under it (a document's title over its first section) opens
//!    the next section's first passage instead of standing alone: a passage
//!    of a title only matches the words every question about the document
//!    shares and answers none of them. Headings are read as Markdown: their
//!    backslash escapes are taken out (`The "\$HOME" variable` is
//!    `The "$HOME" variable`).
//! 2. Inside a section, paragraphs (runs of non-blank lines) are packed into
//!    passages of at most [`PASSAGE_LENGTH_MAX`] bytes; a paragraph that fits
//!    in one passage is never split.
//! 3. A paragraph too long for one passage is cut at line ends, a line at
//!    sentence ends, a sentence between words, a word between characters —
//!    the coarsest boundary that fits, never inside a UTF-8 character.
//!
//! No overlap: every non-whitespace character belongs to exactly one
//! passage. Passages start and end on non-whitespace, so none is empty.
//! We rejected overlapping windows (measured worse at equal recall) and
//! fixed-size windows (they cut sections and cannot name one).

use std::ops::Range;

use extract::heading::{is_code_fence, text_headings, unescape_markdown};

/// The longest passage, in bytes: a few paragraphs, small enough that a
/// search result page of them fits a model's context comfortably.
pub const PASSAGE_LENGTH_MAX: usize = 1500;

/// A passage of the extracted text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    /// The text of the heading line that opens the passage's section, without
    /// its `#` marks; `None` before the first heading.
    pub heading: Option<String>,
    /// Byte offset into the extracted text, on a character boundary.
    pub offset: usize,
    /// Byte length; `offset + length` is a character boundary too.
    pub length: usize,
}

impl Passage {
    pub fn range(&self) -> Range<usize> {
        self.offset..self.offset + self.length
    }
}

/// Cuts `text` into passages, in order.
pub fn chunk(text: &str) -> Vec<Passage> {
    let lines = classify_lines(text);
    let mut passages = Vec::new();
    let mut section_start = 0;
    // The heading lines of sections with nothing in them, for the next.
    let mut carried = Vec::new();
    while section_start < lines.len() {
        let section_end = lines[section_start + 1..]
            .iter()
            .position(|line| line.heading.is_some())
            .map_or(lines.len(), |index| section_start + 1 + index);
        let section = &lines[section_start..section_end];
        let heading = section[0].heading.clone();
        let is_empty = heading.is_some() && section[1..].iter().all(|line| line.is_blank);
        if is_empty && section_end < lines.len() {
            carried.extend(paragraphs(text, section));
            section_start = section_end;
            continue;
        }
        let mut units = std::mem::take(&mut carried);
        units.extend(paragraphs(text, section));
        let mut ranges = Vec::new();
        pack(text, units, &mut ranges);
        for range in ranges {
            passages.push(Passage {
                heading: heading.clone(),
                offset: range.start,
                length: range.len(),
            });
        }
        section_start = section_end;
    }
    passages
}

#[derive(Debug)]
struct Line {
    /// Without its `\n`.
    range: Range<usize>,
    is_blank: bool,
    heading: Option<String>,
}

fn classify_lines(text: &str) -> Vec<Line> {
    let contents: Vec<&str> = text.split('\n').collect();
    let mut in_code = Vec::with_capacity(contents.len());
    let mut in_fence = false;
    for content in &contents {
        let is_fence = is_code_fence(content);
        // The fence lines themselves belong to the code block.
        in_code.push(in_fence || is_fence);
        if is_fence {
            in_fence = !in_fence;
        }
    }
    let headings = text_headings(&contents, &in_code);
    let mut start = 0;
    contents
        .iter()
        .zip(headings)
        .map(|(content, heading)| {
            let range = start..start + content.len();
            start = range.end + 1;
            Line {
                range,
                is_blank: content.trim().is_empty(),
                heading: heading.map(|(_, title)| unescape_markdown(title).into_owned()),
            }
        })
        .collect()
}

/// How a unit too long for one passage is cut next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Cut {
    Lines,
    Sentences,
    Words,
    Characters,
}

impl Cut {
    fn finer(self) -> Cut {
        match self {
            Cut::Lines => Cut::Sentences,
            Cut::Sentences => Cut::Words,
            Cut::Words | Cut::Characters => Cut::Characters,
        }
    }
}

/// A section's paragraphs: maximal runs of non-blank lines, trimmed.
fn paragraphs(text: &str, section: &[Line]) -> Vec<(Range<usize>, Cut)> {
    let mut paragraphs = Vec::new();
    let mut run: Option<Range<usize>> = None;
    for line in section {
        if line.is_blank {
            if let Some(range) = run.take() {
                paragraphs.push((trim(text, range), Cut::Lines));
            }
            continue;
        }
        run = Some(match run {
            Some(range) => range.start..line.range.end,
            None => line.range.clone(),
        });
    }
    if let Some(range) = run {
        paragraphs.push((trim(text, range), Cut::Lines));
    }
    paragraphs
}

/// Packs units, in order, into passages of at most [`PASSAGE_LENGTH_MAX`]
/// bytes; a unit longer than that is replaced by its pieces at the next
/// finer cut, and packing goes on with them.
fn pack(text: &str, units: Vec<(Range<usize>, Cut)>, passages: &mut Vec<Range<usize>>) {
    // A stack holding the units still to place, the next one last.
    let mut pending: Vec<(Range<usize>, Cut)> = units.into_iter().rev().collect();
    let mut current: Option<Range<usize>> = None;
    while let Some((unit, cut)) = pending.pop() {
        debug_assert!(!unit.is_empty());
        if unit.len() > PASSAGE_LENGTH_MAX {
            let pieces = split(text, unit, cut);
            pending.extend(pieces.into_iter().rev().map(|piece| (piece, cut.finer())));
            continue;
        }
        current = match current {
            Some(open) if unit.end - open.start <= PASSAGE_LENGTH_MAX => Some(open.start..unit.end),
            Some(open) => {
                passages.push(open);
                Some(unit)
            }
            None => Some(unit),
        };
    }
    passages.extend(current);
}

/// A unit's pieces at `cut`, trimmed, in order, covering all of its
/// non-whitespace.
fn split(text: &str, unit: Range<usize>, cut: Cut) -> Vec<Range<usize>> {
    let piece_text = &text[unit.clone()];
    let base = unit.start;
    let mut pieces = Vec::new();
    match cut {
        Cut::Lines => {
            let mut start = 0;
            for line in piece_text.split_inclusive('\n') {
                pieces.push(start..start + line.len());
                start += line.len();
            }
        }
        Cut::Sentences => {
            let mut start = 0;
            let mut characters = piece_text.char_indices().peekable();
            while let Some((index, character)) = characters.next() {
                let ends_sentence = matches!(character, '.' | '!' | '?' | '…' | '。')
                    && characters.peek().is_some_and(|(_, next)| next.is_whitespace());
                if ends_sentence {
                    let end = index + character.len_utf8();
                    pieces.push(start..end);
                    start = end;
                }
            }
            pieces.push(start..piece_text.len());
        }
        Cut::Words => {
            let mut start = None;
            for (index, character) in piece_text.char_indices() {
                match (character.is_whitespace(), start) {
                    (true, Some(word_start)) => {
                        pieces.push(word_start..index);
                        start = None;
                    }
                    (false, None) => start = Some(index),
                    _ => {}
                }
            }
            if let Some(word_start) = start {
                pieces.push(word_start..piece_text.len());
            }
        }
        Cut::Characters => {
            let mut start = 0;
            while start < piece_text.len() {
                let mut end = (start + PASSAGE_LENGTH_MAX).min(piece_text.len());
                while !piece_text.is_char_boundary(end) {
                    end -= 1;
                }
                pieces.push(start..end);
                start = end;
            }
        }
    }
    pieces
        .into_iter()
        .map(|piece| trim(text, base + piece.start..base + piece.end))
        .filter(|piece| !piece.is_empty())
        .collect()
}

/// The range without leading and trailing whitespace.
fn trim(text: &str, range: Range<usize>) -> Range<usize> {
    let slice = &text[range.clone()];
    let start = range.start + (slice.len() - slice.trim_start().len());
    let end = range.end - (slice.len() - slice.trim_end().len());
    start..end.max(start)
}

#[cfg(test)]
mod tests;
