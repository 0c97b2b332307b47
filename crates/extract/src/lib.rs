//! Documents in, plain text out: what the MCP server serves with `files_read`
//! and cuts into passages for `files_grep`.
//!
//! Every format comes out as one UTF-8 string with `\n` newlines, paragraphs
//! separated by blank lines, and structure written the way Markdown writes it:
//! DOCX and ODT headings become `#`/`##` lines by their paragraph styles and
//! outline levels, each ODP slide and each ODS sheet opens with a `## ` line,
//! table rows become ` | `-separated lines, and PDF headings — recovered from
//! typography (text clearly larger than the body, or bold on its own line)
//! and from the numbered-title grammar ("3.4 Two-factor authentication",
//! "Article 5", "§3. Budget prévisionnel") — become headings too. Any other
//! line that would read as Markdown structure (a root prompt `# adduser
//! fish` in a manual, a `---` or a code fence) is written with a backslash
//! in front, CommonMark's escape ([`heading::escape_structure`]). So the
//! chunker needs to know one kind of structure, Markdown headings, it finds
//! exactly the headings the readers marked, and a passage's byte offset is
//! an offset into exactly the text `files_read` serves.
//!
//! Markdown and plain text are the exception by design: they are served as
//! they are (BOM dropped, newlines normalised), because the file is the
//! user's own text — a `files_read` that showed `# ` lines the file does not
//! have would put them back into the file on the next `files_write`, and
//! quotes would not match what the user sees. Their headings are found in
//! that same text by [`heading::text_headings`] (setext titles, numbered
//! titles, title lines standing alone before paragraphs, titles in
//! capitals), which the chunker calls; the offsets stay offsets into the
//! served text.
//!
//! The key design choice is extracting in-process with small parsers of our
//! own (zip + quick-xml for the office formats, including spreadsheets) and
//! isolating the one parser we do not trust: `pdf-extract` panics and can spin
//! on hostile PDFs, so it runs on its own thread under `catch_unwind` and a
//! time bound ([`pdf`]). We rejected calamine for ODS (it brings a second
//! spreadsheet stack for what `content.xml` already says) and shelling out to
//! converters (a process per file, and a binary to ship); the OnlyOffice path
//! for what in-process extraction cannot read lives in the MCP server.
//!
//! Every input is bounded before it is parsed ([`Limits`]): input length, zip
//! entry count and the uncompressed length of each entry read (zip bombs), the
//! extracted text length. Malformed input is an [`ExtractError`], never a
//! panic.

pub mod heading;
pub mod pdf;

mod docx;
mod odf;
mod package;
mod text;
mod xml;

use std::time::Duration;

/// The largest document accepted, in bytes, whatever its format.
pub const INPUT_LENGTH_MAX: usize = 64 * 1024 * 1024;
/// The most entries a DOCX/ODF zip may list.
pub const ZIP_ENTRY_COUNT_MAX: usize = 10_000;
/// The most bytes read out of one zip entry once decompressed: a zip bomb
/// stops here, whatever the entry's header claims.
pub const ZIP_ENTRY_LENGTH_MAX: usize = 64 * 1024 * 1024;
/// The longest extracted text, in bytes.
pub const TEXT_LENGTH_MAX: usize = 32 * 1024 * 1024;
/// How long `pdf-extract` may run on one PDF before we stop waiting.
pub const PDF_TIME_MAX: Duration = Duration::from_secs(20);
/// How many PDF threads may be alive at once, counting those that timed out
/// and still run in the background: a PDF that makes the parser spin must not
/// take every core.
pub const PDF_THREAD_COUNT_MAX: usize = 4;
/// Fewer non-whitespace characters than this from a PDF means it has no text
/// layer (a scan).
pub const PDF_TEXT_CHARACTER_COUNT_MIN: usize = 200;

/// What a document is, which decides how it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DocumentKind {
    Markdown,
    PlainText,
    Docx,
    Odt,
    Odp,
    Ods,
    Pdf,
    Unsupported,
}

impl DocumentKind {
    /// Every kind that has a reader (all but `Unsupported`).
    pub const READABLE: [DocumentKind; 7] = [
        DocumentKind::Markdown,
        DocumentKind::PlainText,
        DocumentKind::Docx,
        DocumentKind::Odt,
        DocumentKind::Odp,
        DocumentKind::Ods,
        DocumentKind::Pdf,
    ];
}

/// A document's text, ready to be served and cut into passages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    /// UTF-8, `\n` newlines, paragraphs separated by blank lines, headings as
    /// Markdown `#` lines (other lines escaped where they would read as
    /// one).
    pub text: String,
}

/// Why a document has no text. The index treats each differently: a
/// `NeedsOcr` row is parked for good, `Busy` is not an attempt at all, the
/// others count toward giving up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtractError {
    #[error("this kind of document is not read in-process")]
    Unsupported,
    #[error("the document is malformed: {0}")]
    Malformed(String),
    #[error("the PDF has no text layer (it needs OCR)")]
    NeedsOcr,
    #[error("extraction did not finish in time")]
    Timeout,
    #[error("the document or its text is larger than the limits")]
    TooLarge,
    #[error("too many PDF extractions are still running; try again later")]
    Busy,
}

/// The bounds extraction runs under. [`Limits::DEFAULT`] is what production
/// uses; tests shrink them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub input_length_max: usize,
    pub zip_entry_count_max: usize,
    pub zip_entry_length_max: usize,
    pub text_length_max: usize,
    pub pdf_time_max: Duration,
    pub pdf_thread_count_max: usize,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        input_length_max: INPUT_LENGTH_MAX,
        zip_entry_count_max: ZIP_ENTRY_COUNT_MAX,
        zip_entry_length_max: ZIP_ENTRY_LENGTH_MAX,
        text_length_max: TEXT_LENGTH_MAX,
        pdf_time_max: PDF_TIME_MAX,
        pdf_thread_count_max: PDF_THREAD_COUNT_MAX,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

impl DocumentKind {
    /// The kind from a MIME type when it names one we read, otherwise from
    /// the file name's extension. Nextcloud reports `application/octet-stream`
    /// for what it does not recognise, and a webhook row may have no MIME type
    /// at all, so the name is the fallback rather than an afterthought.
    pub fn from_mime_or_name(mime: Option<&str>, file_name: &str) -> DocumentKind {
        let from_mime = mime.map(DocumentKind::from_mime).unwrap_or(DocumentKind::Unsupported);
        if from_mime != DocumentKind::Unsupported {
            return from_mime;
        }
        DocumentKind::from_name(file_name)
    }

    fn from_mime(mime: &str) -> DocumentKind {
        // Parameters (`; charset=utf-8`) do not change the kind.
        let essence = mime.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        match essence.as_str() {
            "text/markdown" | "text/x-markdown" => DocumentKind::Markdown,
            "text/plain" => DocumentKind::PlainText,
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => {
                DocumentKind::Docx
            }
            "application/vnd.oasis.opendocument.text" => DocumentKind::Odt,
            "application/vnd.oasis.opendocument.presentation" => DocumentKind::Odp,
            "application/vnd.oasis.opendocument.spreadsheet" => DocumentKind::Ods,
            "application/pdf" => DocumentKind::Pdf,
            _ => DocumentKind::Unsupported,
        }
    }

    fn from_name(file_name: &str) -> DocumentKind {
        let Some((_, extension)) = file_name.rsplit_once('.') else {
            return DocumentKind::Unsupported;
        };
        match extension.to_ascii_lowercase().as_str() {
            "md" | "markdown" => DocumentKind::Markdown,
            "txt" | "text" => DocumentKind::PlainText,
            "docx" => DocumentKind::Docx,
            "odt" => DocumentKind::Odt,
            "odp" => DocumentKind::Odp,
            "ods" => DocumentKind::Ods,
            "pdf" => DocumentKind::Pdf,
            _ => DocumentKind::Unsupported,
        }
    }
}

/// Extracts a document's text under [`Limits::DEFAULT`].
///
/// This blocks (a PDF for up to [`PDF_TIME_MAX`]); async callers run it on a
/// blocking thread.
pub fn extract(bytes: &[u8], kind: DocumentKind) -> Result<Extracted, ExtractError> {
    extract_with_limits(bytes, kind, &Limits::DEFAULT)
}

/// [`extract`] under caller-chosen bounds.
pub fn extract_with_limits(
    bytes: &[u8],
    kind: DocumentKind,
    limits: &Limits,
) -> Result<Extracted, ExtractError> {
    if kind == DocumentKind::Unsupported {
        return Err(ExtractError::Unsupported);
    }
    if bytes.len() > limits.input_length_max {
        return Err(ExtractError::TooLarge);
    }
    let text = match kind {
        DocumentKind::Markdown | DocumentKind::PlainText => text::decode(bytes)?,
        DocumentKind::Docx => docx::extract(bytes, limits)?,
        DocumentKind::Odt | DocumentKind::Odp | DocumentKind::Ods => {
            odf::extract(bytes, kind, limits)?
        }
        DocumentKind::Pdf => pdf::extract(bytes, limits)?,
        DocumentKind::Unsupported => return Err(ExtractError::Unsupported),
    };
    let text = text::normalise_newlines(text);
    if text.len() > limits.text_length_max {
        return Err(ExtractError::TooLarge);
    }
    Ok(Extracted { text })
}

#[cfg(test)]
mod tests;
