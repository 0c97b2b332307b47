//! A file's text, the one way both `files_read` and the index get it.
//!
//! Byte offsets in search results are offsets into the text `files_read`
//! serves, so the two must never produce different text for the same file:
//! both call [`route`] and [`text`]. Three routes:
//! - documents the `extract` crate reads (Markdown, plain text, DOCX, ODF,
//!   PDF): downloaded whole and extracted in-process (BOM dropped, CRLF
//!   made LF, headings as `#` lines);
//! - other text (`text/csv`, JSON, XML ...): the bytes as they are, which
//!   `files_read` serves by HTTP range;
//! - formats only a document server reads (DOC, RTF, XLSX, PPTX ...), when
//!   one is configured: lent to it on a one-shot URL and converted.

use crate::convert::{ConvertError, Converter};
use crate::nextcloud::{Nextcloud, Subject, status_failure};
use extract::{DocumentKind, ExtractError};
use http::{Method, StatusCode};
use wire::ToolFailure;

/// How a file's text is obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Extract(DocumentKind),
    Raw,
    Convert,
    /// No text can be had (an image, an archive, or a converter format
    /// with no converter configured).
    None,
}

/// The route for a file, from its MIME type and name.
pub fn route(mime: Option<&str>, path: &str, converter: bool) -> Route {
    let kind = DocumentKind::from_mime_or_name(mime, path);
    if kind != DocumentKind::Unsupported {
        return Route::Extract(kind);
    }
    // Before raw text: RTF is `text/rtf`, and its source is not its text.
    if converter && Converter::takes(path) {
        return Route::Convert;
    }
    if is_raw_text(mime.unwrap_or("")) && !Converter::takes(path) {
        return Route::Raw;
    }
    Route::None
}

/// Whether a file could ever have text: what discovery keeps. Converter
/// formats count even without a converter (they wait, uncounted, for one),
/// so configuring one later finds them already known.
pub fn may_have_text(mime: Option<&str>, path: &str) -> bool {
    route(mime, path, true) != Route::None
}

fn is_raw_text(mime: &str) -> bool {
    let essence = mime.split(';').next().unwrap_or("").trim();
    essence.starts_with("text/")
        || matches!(
            essence,
            "application/json"
                | "application/xml"
                | "application/x-yaml"
                | "application/javascript"
        )
}

/// Why a file has no text.
#[derive(Debug)]
pub enum TextError {
    /// The download did not get an answer (Nextcloud unreachable, timed
    /// out), or one that is not about this file (401: the caller's sign-in;
    /// 429: too many requests).
    Download(ToolFailure),
    /// Nextcloud answered this file's download with another error status
    /// (403, 404, 423 locked, 503 storage not available, …): the file's own
    /// trouble, which the index counts like a damaged document.
    DownloadRefused(ToolFailure),
    Extract(ExtractError),
    Convert(ConvertError),
    /// Raw text that is not UTF-8: its bytes cannot be offsets into text.
    NotUtf8,
    /// No route to text.
    Unsupported,
}

impl TextError {
    /// A short kind for operators and the index's `last_error`.
    pub fn kind(&self) -> &'static str {
        match self {
            TextError::Download(_) => "download",
            TextError::DownloadRefused(_) => "download_refused",
            TextError::Extract(ExtractError::Unsupported) => "unsupported",
            TextError::Extract(ExtractError::Malformed(_)) => "malformed",
            TextError::Extract(ExtractError::NeedsOcr) => "needs_ocr",
            TextError::Extract(ExtractError::Timeout) => "timeout",
            TextError::Extract(ExtractError::TooLarge) => "too_large",
            TextError::Extract(ExtractError::Busy) => "busy",
            TextError::Convert(error) => error.as_str(),
            TextError::NotUtf8 => "not_utf8",
            TextError::Unsupported => "unsupported",
        }
    }
}

/// Downloads `path` as the user and returns its whole text by `route`.
pub async fn text(
    nextcloud: &Nextcloud,
    path: &str,
    route: Route,
    converter: Option<&Converter>,
) -> Result<String, TextError> {
    if route == Route::None || (route == Route::Convert && converter.is_none()) {
        return Err(TextError::Unsupported);
    }
    let url = nextcloud.files_url(path);
    let answer = nextcloud.send(Method::GET, &url, &[], None).await.map_err(TextError::Download)?;
    if answer.status != StatusCode::OK {
        let failure = status_failure(answer.status, Subject::Path(path));
        return Err(match answer.status {
            StatusCode::UNAUTHORIZED | StatusCode::TOO_MANY_REQUESTS => {
                TextError::Download(failure)
            }
            _ => TextError::DownloadRefused(failure),
        });
    }
    match route {
        Route::Extract(kind) => {
            let body = answer.body;
            tokio::task::spawn_blocking(move || extract::extract(&body, kind))
                .await
                .map_err(|_| {
                    TextError::Extract(ExtractError::Malformed("extractor stopped".into()))
                })?
                .map(|extracted| extracted.text)
                .map_err(TextError::Extract)
        }
        Route::Raw => String::from_utf8(answer.body.to_vec()).map_err(|_| TextError::NotUtf8),
        Route::Convert => {
            let converter = converter.expect("checked above");
            let name = path.rsplit('/').next().unwrap_or(path);
            converter.convert(answer.body, name).await.map_err(TextError::Convert)
        }
        Route::None => Err(TextError::Unsupported),
    }
}
