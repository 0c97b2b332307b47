//! PDF: `pdf-extract`, isolated, then tidied and given back its section
//! titles.
//!
//! `pdf-extract` panics on some PDFs and may spin on others, so it never runs
//! on the caller's thread: each PDF gets a thread of its own, the parser runs
//! under `catch_unwind`, and the caller waits at most `pdf_time_max`
//! ([`crate::PDF_TIME_MAX`]). A parser that overruns is left to finish in the
//! background (a thread cannot be killed) and counts against
//! `pdf_thread_count_max`, so a handful of hostile files cannot occupy every
//! core: past that bound extraction answers [`ExtractError::Busy`] without
//! starting. The text it writes is bounded while it is written. What no
//! thread can contain is memory: a PDF that makes the parser allocate without
//! bound is bounded only by the input length limit.
//!
//! A PDF has no headings, only text drawn in a bigger or bolder font. The
//! output device we hand the parser notes each line's typography (the
//! rendered size of its characters, whether their font is bold or
//! monospace — see [`fonts`] for how the font of a character is known),
//! and [`typography`] decides from it, relative to the document's own body
//! text, which lines are headings, with numbered titles recognised by their
//! shape ([`crate::heading::labelled_heading`]) whatever their font; a line
//! in a monospace font is code and never a heading. A heading becomes a
//! Markdown line (`## 3.4 Two-factor authentication`) in the text, so the
//! chunker splits on it as on any Markdown heading and a passage carries it
//! as its heading. We mark them here rather than leave them to the chunker
//! because only here is the typography known. A PDF's own text may hold
//! lines that read as Markdown structure (`# adduser fish`, a root prompt
//! in a manual): those get a backslash in front
//! ([`crate::heading::escape_structure`]), so only the marked headings are
//! headings.
//!
//! Fewer than [`crate::PDF_TEXT_CHARACTER_COUNT_MIN`] non-whitespace
//! characters means no text layer: [`ExtractError::NeedsOcr`].

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use pdf_extract::{
    ColorSpace, ConvertToFmt, MediaBox, OutputDev, OutputError, Path, PlainTextOutput, Transform,
};

mod fonts;
mod typography;

use crate::{ExtractError, Limits, PDF_TEXT_CHARACTER_COUNT_MIN};

/// The most pages read from one PDF.
pub const PDF_PAGE_COUNT_MAX: usize = 10_000;
/// The stack of a PDF thread: the parser recurses on nested objects, and a
/// stack overflow aborts the whole process instead of unwinding.
const PDF_THREAD_STACK_BYTES: usize = 64 * 1024 * 1024;

/// PDF threads alive now, those that timed out included.
static PDF_THREAD_COUNT: AtomicUsize = AtomicUsize::new(0);

pub(crate) fn extract(bytes: &[u8], limits: &Limits) -> Result<String, ExtractError> {
    let (raw, styles) = extract_isolated(bytes, limits)?;
    let lines = tidy(&raw, &styles);
    let character_count: usize =
        lines.iter().map(|line| line.text.chars().filter(|c| !c.is_whitespace()).count()).sum();
    if character_count < PDF_TEXT_CHARACTER_COUNT_MIN {
        return Err(ExtractError::NeedsOcr);
    }
    Ok(typography::mark_headings(&lines))
}

/// How many PDF threads are alive now (for operators and tests).
pub fn thread_count() -> usize {
    PDF_THREAD_COUNT.load(Ordering::SeqCst)
}

/// Decrements the live-thread count however the thread ends.
struct ThreadSlot;

impl Drop for ThreadSlot {
    fn drop(&mut self) {
        PDF_THREAD_COUNT.fetch_sub(1, Ordering::SeqCst);
    }
}

fn extract_isolated(
    bytes: &[u8],
    limits: &Limits,
) -> Result<(String, Vec<LineStyle>), ExtractError> {
    let previous = PDF_THREAD_COUNT.fetch_add(1, Ordering::SeqCst);
    let slot = ThreadSlot;
    if previous >= limits.pdf_thread_count_max {
        return Err(ExtractError::Busy);
    }
    // The thread may outlive this call, so it owns its copy of the input.
    let owned = bytes.to_vec();
    let text_length_max = limits.text_length_max;
    let (sender, receiver) = mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("pdf-extract".into())
        .stack_size(PDF_THREAD_STACK_BYTES)
        .spawn(move || {
            let _slot = slot;
            let result = catch_unwind(AssertUnwindSafe(|| read_text(&owned, text_length_max)))
                .unwrap_or_else(|_| {
                    Err(ExtractError::Malformed("the PDF reader failed on this file".into()))
                });
            // The caller may have stopped waiting; nobody needs the result then.
            let _ = sender.send(result);
        });
    if spawned.is_err() {
        return Err(ExtractError::Busy);
    }
    let started = Instant::now();
    match receiver.recv_timeout(limits.pdf_time_max) {
        // The bound is the bound, also for a result that raced it.
        Ok(_) if started.elapsed() > limits.pdf_time_max => Err(ExtractError::Timeout),
        Ok(result) => result,
        Err(mpsc::RecvTimeoutError::Timeout) => Err(ExtractError::Timeout),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Err(ExtractError::Malformed("the PDF reader failed on this file".into()))
        }
    }
}

/// The parser's text, pages separated by blank lines, and the style of each
/// of its lines (split at `\n`, `\r` and form feeds); no styles when they
/// could not be followed.
fn read_text(
    bytes: &[u8],
    text_length_max: usize,
) -> Result<(String, Vec<LineStyle>), ExtractError> {
    let mut document = pdf_extract::Document::load_mem(bytes)
        .map_err(|error| ExtractError::Malformed(format!("not a readable PDF: {error}")))?;
    if document.is_encrypted() && document.decrypt("").is_err() {
        return Err(ExtractError::Malformed("the PDF is encrypted with a password".into()));
    }
    if document.get_pages().len() > PDF_PAGE_COUNT_MAX {
        return Err(ExtractError::TooLarge);
    }
    let shows = fonts::show_fonts(&document).map_err(|fonts::FormCycle| {
        ExtractError::Malformed("the PDF nests its drawings in a loop".into())
    })?;
    let text = RefCell::new(String::new());
    let layout = RefCell::new(Layout::default());
    let overflowed = RefCell::new(false);
    let writer = BoundedText {
        text: &text,
        layout: &layout,
        overflowed: &overflowed,
        length_max: text_length_max,
    };
    let mut output = StyledOutput {
        inner: PlainTextOutput::new(writer),
        text: &text,
        layout: &layout,
        shows: &shows,
        page_shows: None,
        show_index: 0,
        page_first_line: 0,
    };
    let outcome = pdf_extract::output_doc(&document, &mut output);
    if *overflowed.borrow() {
        return Err(ExtractError::TooLarge);
    }
    if let Err(error) = outcome {
        // Text read before a broken page is still text; a PDF that gave none
        // is broken.
        if text.borrow().trim().is_empty() {
            return Err(ExtractError::Malformed(format!("not a readable PDF: {error}")));
        }
    }
    let text = text.into_inner();
    let mut styles = layout.into_inner().finish();
    if styles.len() != text.split(is_line_break).count() {
        styles.clear();
    }
    Ok((text, styles))
}

fn is_line_break(character: char) -> bool {
    matches!(character, '\n' | '\r' | '\u{0C}')
}

/// The typography of one line of the parser's text.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct LineStyle {
    /// The page the line's text is on (1-based; 0 between pages).
    pub(crate) page: u32,
    /// Non-whitespace characters with a known style.
    pub(crate) characters: u32,
    /// Of those, the ones drawn in a bold font.
    pub(crate) bold: u32,
    /// Of those, the ones drawn in a monospace font.
    pub(crate) monospace: u32,
    /// Character counts by rendered size, in tenths of a point.
    pub(crate) sizes: Vec<(u32, u32)>,
}

impl LineStyle {
    /// The size most of the line's characters are drawn at, in tenths of a
    /// point.
    pub(crate) fn size(&self) -> Option<u32> {
        self.sizes.iter().max_by_key(|(size, count)| (*count, *size)).map(|(size, _)| *size)
    }

    /// Nearly every character is bold (a bold label with a regular number
    /// or punctuation still counts).
    pub(crate) fn is_bold(&self) -> bool {
        self.characters > 0 && self.bold * 10 >= self.characters * 9
    }

    /// Most of the line is drawn in a monospace font: code, not prose.
    pub(crate) fn is_monospace(&self) -> bool {
        self.characters > 0 && self.monospace * 2 > self.characters
    }
}

/// The styles of the lines written so far, and the style of the character
/// being written.
#[derive(Debug, Default)]
struct Layout {
    lines: Vec<LineStyle>,
    current: LineStyle,
    /// (size in tenths of a point, face) of the character being written.
    style: Option<(u32, fonts::Face)>,
    page: u32,
}

impl Layout {
    fn record(&mut self, piece: &str) {
        for character in piece.chars() {
            if is_line_break(character) {
                let next = LineStyle { page: self.page, ..LineStyle::default() };
                self.lines.push(std::mem::replace(&mut self.current, next));
            } else if !character.is_whitespace() && !character.is_control() {
                let Some((size, face)) = self.style else { continue };
                self.current.characters += 1;
                self.current.bold += u32::from(face.bold);
                self.current.monospace += u32::from(face.monospace);
                match self.current.sizes.iter_mut().find(|(known, _)| *known == size) {
                    Some((_, count)) => *count += 1,
                    None => self.current.sizes.push((size, 1)),
                }
            }
        }
    }

    fn finish(mut self) -> Vec<LineStyle> {
        self.lines.push(self.current);
        self.lines
    }
}

/// A `fmt::Write` that refuses to grow past the text limit, so a PDF cannot
/// make the parser build an unbounded string, and notes each line's style.
struct BoundedText<'a> {
    text: &'a RefCell<String>,
    layout: &'a RefCell<Layout>,
    overflowed: &'a RefCell<bool>,
    length_max: usize,
}

impl std::fmt::Write for BoundedText<'_> {
    fn write_str(&mut self, piece: &str) -> std::fmt::Result {
        let mut text = self.text.borrow_mut();
        if text.len() + piece.len() > self.length_max {
            *self.overflowed.borrow_mut() = true;
            return Err(std::fmt::Error);
        }
        text.push_str(piece);
        self.layout.borrow_mut().record(piece);
        Ok(())
    }
}

impl<'a> ConvertToFmt for BoundedText<'a> {
    type Writer = BoundedText<'a>;
    fn convert(self) -> Self::Writer {
        self
    }
}

/// The parser's plain-text output, with a blank line after each page so a
/// page footer does not run into the next page's first paragraph, and each
/// character's size and weight handed to the layout.
struct StyledOutput<'a> {
    inner: PlainTextOutput<BoundedText<'a>>,
    text: &'a RefCell<String>,
    layout: &'a RefCell<Layout>,
    shows: &'a fonts::ShowFonts,
    /// The face of each text-showing operation of this page.
    page_shows: Option<&'a Vec<fonts::Face>>,
    /// How many of this page's text-showing operations have begun.
    show_index: usize,
    /// The index of the page's first line in the layout.
    page_first_line: usize,
}

impl OutputDev for StyledOutput<'_> {
    fn begin_page(
        &mut self,
        page_num: u32,
        media_box: &MediaBox,
        art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.page_shows = self.shows.get(&page_num);
        self.show_index = 0;
        let mut layout = self.layout.borrow_mut();
        layout.page = page_num;
        layout.current.page = page_num;
        self.page_first_line = layout.lines.len();
        drop(layout);
        self.inner.begin_page(page_num, media_box, art_box)
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        self.inner.end_page()?;
        let mut layout = self.layout.borrow_mut();
        // The parser announced another number of strings than the walk
        // found: which of them were bold or monospace is not known.
        if self.page_shows.map(Vec::len) != Some(self.show_index) {
            let first = self.page_first_line.min(layout.lines.len());
            for line in &mut layout.lines[first..] {
                line.bold = 0;
                line.monospace = 0;
            }
            layout.current.bold = 0;
            layout.current.monospace = 0;
        }
        layout.style = None;
        layout.page = 0;
        layout.record("\n\n");
        drop(layout);
        self.text.borrow_mut().push_str("\n\n");
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        spacing: f64,
        font_size: f64,
        character: &str,
    ) -> Result<(), OutputError> {
        // The rendered size, as the plain-text output measures it: the
        // side of the square with the area of the transformed (size, size).
        let x = font_size * (trm.m11 + trm.m21);
        let y = font_size * (trm.m12 + trm.m22);
        let size = (x * y).abs().sqrt();
        let face = self
            .show_index
            .checked_sub(1)
            .and_then(|index| self.page_shows?.get(index).copied())
            .unwrap_or_default();
        self.layout.borrow_mut().style = size
            .is_finite()
            .then(|| ((size * 10.0).round().clamp(0.0, f64::from(u32::MAX)) as u32, face));
        self.inner.output_character(trm, width, spacing, font_size, character)?;
        self.layout.borrow_mut().style = None;
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        self.show_index += 1;
        self.inner.begin_word()
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        self.inner.end_word()
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        self.inner.end_line()
    }

    fn stroke(
        &mut self,
        ctm: &Transform,
        colorspace: &ColorSpace,
        color: &[f64],
        path: &Path,
    ) -> Result<(), OutputError> {
        self.inner.stroke(ctm, colorspace, color, path)
    }

    fn fill(
        &mut self,
        ctm: &Transform,
        colorspace: &ColorSpace,
        color: &[f64],
        path: &Path,
    ) -> Result<(), OutputError> {
        self.inner.fill(ctm, colorspace, color, path)
    }
}

/// A line of the tidied text with the typography it was drawn in; a blank
/// line (one at most in a row) has empty text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Line<'a> {
    pub(crate) text: String,
    pub(crate) style: Option<&'a LineStyle>,
}

/// Lines trimmed, ligatures spelled out (search for "file" must find
/// "ﬁle"), control characters dropped, runs of blank lines made one, none
/// at the start or the end.
fn tidy<'a>(raw: &str, styles: &'a [LineStyle]) -> Vec<Line<'a>> {
    let mut lines = Vec::new();
    let mut blank_pending = false;
    for (index, raw_line) in raw.split(is_line_break).enumerate() {
        let mut spelled = String::with_capacity(raw_line.len());
        for character in raw_line.chars() {
            match character {
                '\u{FB00}' => spelled.push_str("ff"),
                '\u{FB01}' => spelled.push_str("fi"),
                '\u{FB02}' => spelled.push_str("fl"),
                '\u{FB03}' => spelled.push_str("ffi"),
                '\u{FB04}' => spelled.push_str("ffl"),
                '\u{FB05}' | '\u{FB06}' => spelled.push_str("st"),
                '\t' => spelled.push(character),
                control if control.is_control() => {}
                other => spelled.push(other),
            }
        }
        let trimmed = spelled.trim();
        if trimmed.is_empty() {
            blank_pending = !lines.is_empty();
            continue;
        }
        if blank_pending {
            lines.push(Line { text: String::new(), style: None });
            blank_pending = false;
        }
        let text = if trimmed.len() == spelled.len() { spelled } else { trimmed.to_string() };
        lines.push(Line { text, style: styles.get(index) });
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tidied(raw: &str) -> String {
        tidy(raw, &[]).into_iter().map(|line| line.text).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn tidy_trims_lines_and_collapses_blank_runs() {
        assert_eq!(tidied("  a  \n\n\n\n b\x0c\x0cc\u{FB01}n\x07\n\n"), "a\n\nb\n\ncfin");
        assert_eq!(tidied("\n\n  \n"), "");
    }

    #[test]
    fn tidy_keeps_each_line_with_its_style() {
        let styles: Vec<LineStyle> =
            (0..6).map(|page| LineStyle { page, ..LineStyle::default() }).collect();
        let lines = tidy("a\r\n\x0cb\n\nc", &styles);
        let pages: Vec<(&str, Option<u32>)> =
            lines.iter().map(|line| (line.text.as_str(), line.style.map(|s| s.page))).collect();
        assert_eq!(pages, [("a", Some(0)), ("", None), ("b", Some(3)), ("", None), ("c", Some(5))]);
    }

    #[test]
    fn layout_counts_styled_characters_per_line() {
        let regular = fonts::Face::default();
        let bold = fonts::Face { bold: true, monospace: false };
        let mut layout = Layout { style: Some((100, regular)), ..Layout::default() };
        layout.record("ab \n");
        layout.style = Some((140, bold));
        layout.record("Cd\re");
        layout.style = None;
        layout.record(" f");
        let lines = layout.finish();
        assert_eq!(lines.len(), 3);
        assert_eq!((lines[0].characters, lines[0].bold, lines[0].size()), (2, 0, Some(100)));
        assert_eq!((lines[1].characters, lines[1].bold, lines[1].size()), (2, 2, Some(140)));
        assert!(lines[1].is_bold());
        assert_eq!((lines[2].characters, lines[2].size()), (1, Some(140)));
    }
}
