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
//! A PDF has no headings, only text drawn in a bigger font. Section titles are
//! recovered by their shape ([`crate::heading::labelled_heading`]): a line
//! "3.4 Two-factor authentication" becomes `## 3.4 Two-factor
//! authentication` in the text, so the chunker splits on it as on any
//! Markdown heading and a passage carries it as its heading. We mark them
//! here rather than leave them to the chunker because a PDF's own text may
//! hold `#` lines (shell comments in a manual), and the chunker only looks
//! for labelled titles in text without Markdown headings.
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

use crate::heading::labelled_heading;
use crate::{ExtractError, Limits, PDF_TEXT_CHARACTER_COUNT_MIN};

/// The most pages read from one PDF.
pub const PDF_PAGE_COUNT_MAX: usize = 10_000;
/// The stack of a PDF thread: the parser recurses on nested objects, and a
/// stack overflow aborts the whole process instead of unwinding.
const PDF_THREAD_STACK_BYTES: usize = 64 * 1024 * 1024;

/// PDF threads alive now, those that timed out included.
static PDF_THREAD_COUNT: AtomicUsize = AtomicUsize::new(0);

pub(crate) fn extract(bytes: &[u8], limits: &Limits) -> Result<String, ExtractError> {
    let raw = extract_isolated(bytes, limits)?;
    let text = tidy(&raw);
    let character_count = text.chars().filter(|c| !c.is_whitespace()).count();
    if character_count < PDF_TEXT_CHARACTER_COUNT_MIN {
        return Err(ExtractError::NeedsOcr);
    }
    Ok(mark_headings(&text))
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

fn extract_isolated(bytes: &[u8], limits: &Limits) -> Result<String, ExtractError> {
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

/// The parser's text, pages separated by blank lines.
fn read_text(bytes: &[u8], text_length_max: usize) -> Result<String, ExtractError> {
    let mut document = pdf_extract::Document::load_mem(bytes)
        .map_err(|error| ExtractError::Malformed(format!("not a readable PDF: {error}")))?;
    if document.is_encrypted() && document.decrypt("").is_err() {
        return Err(ExtractError::Malformed("the PDF is encrypted with a password".into()));
    }
    if document.get_pages().len() > PDF_PAGE_COUNT_MAX {
        return Err(ExtractError::TooLarge);
    }
    let text = RefCell::new(String::new());
    let overflowed = RefCell::new(false);
    let writer = BoundedText { text: &text, overflowed: &overflowed, length_max: text_length_max };
    let mut output = PageBreaks { inner: PlainTextOutput::new(writer), text: &text };
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
    Ok(text.into_inner())
}

/// A `fmt::Write` that refuses to grow past the text limit, so a PDF cannot
/// make the parser build an unbounded string.
struct BoundedText<'a> {
    text: &'a RefCell<String>,
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
/// page footer does not run into the next page's first paragraph.
struct PageBreaks<'a> {
    inner: PlainTextOutput<BoundedText<'a>>,
    text: &'a RefCell<String>,
}

impl OutputDev for PageBreaks<'_> {
    fn begin_page(
        &mut self,
        page_num: u32,
        media_box: &MediaBox,
        art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.inner.begin_page(page_num, media_box, art_box)
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        self.inner.end_page()?;
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
        self.inner.output_character(trm, width, spacing, font_size, character)
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
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

/// Lines trimmed, ligatures spelled out (search for "file" must find
/// "ﬁle"), control characters dropped, runs of blank lines made one.
fn tidy(raw: &str) -> String {
    let mut spelled = String::with_capacity(raw.len());
    for character in raw.chars() {
        match character {
            '\u{FB00}' => spelled.push_str("ff"),
            '\u{FB01}' => spelled.push_str("fi"),
            '\u{FB02}' => spelled.push_str("fl"),
            '\u{FB03}' => spelled.push_str("ffi"),
            '\u{FB04}' => spelled.push_str("ffl"),
            '\u{FB05}' | '\u{FB06}' => spelled.push_str("st"),
            '\r' | '\u{0C}' => spelled.push('\n'),
            '\n' | '\t' => spelled.push(character),
            control if control.is_control() => {}
            other => spelled.push(other),
        }
    }
    let mut text = String::with_capacity(spelled.len());
    let mut blank_pending = false;
    for line in spelled.lines().map(str::trim) {
        if line.is_empty() {
            blank_pending = !text.is_empty();
            continue;
        }
        if blank_pending {
            text.push('\n');
            blank_pending = false;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(line);
    }
    text
}

/// Each labelled section title becomes a Markdown heading of its level,
/// standing alone between blank lines.
fn mark_headings(text: &str) -> String {
    let mut marked = String::with_capacity(text.len() + text.len() / 16);
    let mut previous_was_heading = false;
    for line in text.split('\n') {
        let level = labelled_heading(line);
        if !marked.is_empty() {
            marked.push('\n');
            let previous_blank = marked.ends_with("\n\n");
            if (level.is_some() || previous_was_heading) && !previous_blank && !line.is_empty() {
                marked.push('\n');
            }
        }
        if let Some(level) = level {
            marked.push_str(&"#".repeat(level));
            marked.push(' ');
        }
        marked.push_str(line);
        previous_was_heading = level.is_some();
    }
    marked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidy_trims_lines_and_collapses_blank_runs() {
        assert_eq!(tidy("  a  \n\n\n\n b\x0c\x0cc\u{FB01}n\x07\n\n"), "a\n\nb\n\ncfin");
        assert_eq!(tidy("\n\n  \n"), "");
    }

    #[test]
    fn titles_become_headings_between_blank_lines() {
        let text = "Manual\n1 Introduction\nThis excerpt covers.\n3.4 Two-factor authentication\n\nTwo-factor text.\n5 Encryption";
        assert_eq!(
            mark_headings(text),
            "Manual\n\n# 1 Introduction\n\nThis excerpt covers.\n\n## 3.4 Two-factor authentication\n\nTwo-factor text.\n\n# 5 Encryption"
        );
    }
}
