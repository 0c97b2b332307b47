//! `files_read`: a slice of a document as text, with a hint telling the model
//! how to continue. Offsets are bytes into the text the tool serves, so a
//! passage found by `files_grep` is re-read with `files_read(path, offset)`.

use super::{Definition, Registry, ToolCall, ToolKind, ToolOutcome, ToolOutput};
use crate::convert::ConvertError;
use crate::document::{self, Route, TextError};
use crate::nextcloud::dav;
use crate::nextcloud::{Subject, status_failure};
use http::{Method, StatusCode};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use wire::{FailureKind, ToolFailure};

pub const NAME: &str = "files_read";
/// The most bytes one call returns.
pub const LENGTH_MAX: u64 = 64 * 1024;
const LENGTH_DEFAULT: u64 = 16 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    #[serde(default)]
    #[schemars(description = "Path in the user's files, e.g. \"Documents/notes.md\".")]
    path: Option<String>,
    #[serde(default)]
    #[schemars(
        range(min = 1),
        description = "The fileid from files_search or files_grep (instead of path)."
    )]
    fileid: Option<u64>,
    #[serde(default)]
    #[schemars(range(min = 0), extend("default" = 0), description = "Byte offset to start at.")]
    offset: Option<u64>,
    #[serde(default)]
    #[schemars(
        range(min = 1, max = LENGTH_MAX),
        extend("default" = LENGTH_DEFAULT),
        description = "How many bytes to read."
    )]
    length: Option<u64>,
}

pub fn register(registry: &mut Registry) {
    registry.add(
        Definition {
            name: NAME,
            title: "Read a file",
            description: "Read part of a file as text, by path or fileid. Returns the text from `offset` (bytes) \
for up to `length` bytes and tells you the offset to continue from. Documents (DOCX, ODT, ODP, ODS, PDF) \
are turned into text first and offsets count in that text. Start at the offset files_grep gave \
to re-read a passage in context.",
            kind: ToolKind::Data,
            output_schema: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "fileid": {"type": "integer"},
                    "offset": {"type": "integer"},
                    "length": {"type": "integer"},
                    "total": {"type": "integer", "description": "Size of the whole text in bytes."},
                    "next_offset": {"type": ["integer", "null"], "description": "Where to continue; null at the end."},
                    "bytes_left": {"type": "integer"},
                    "text": {"type": "string"}
                },
                "required": ["path", "fileid", "offset", "length", "total", "next_offset", "bytes_left", "text"]
            }),
            meta: None,
        },
        run,
    );
}

async fn run(call: ToolCall, input: Input) -> ToolOutcome {
    let offset = input.offset.unwrap_or(0);
    let length = mcp_kit::arguments::count("length", input.length, LENGTH_DEFAULT, LENGTH_MAX)?;
    let file = match (input.path.as_deref(), input.fileid) {
        (Some(path), None) => stat(&call, &super::files_search::clean_folder(path)?).await?,
        (None, Some(fileid)) => find_by_fileid(&call, fileid).await?,
        _ => {
            return Err(ToolFailure::invalid_arguments("Give exactly one of path or fileid."));
        }
    };
    if file.kind == dav::FileKind::Folder {
        return Err(ToolFailure::invalid_arguments(format!(
            "\"{}\" is a folder. List it with files_search (folder=\"{}\") and read a file inside it.",
            file.path, file.path
        )));
    }
    let route = document::route(file.mime.as_deref(), &file.path, call.index.converter().is_some());
    if route != Route::Raw {
        return read_document(&call, &file, route, offset, length).await;
    }
    let total = file.size;
    if offset >= total && total > 0 {
        return Err(ToolFailure::invalid_arguments(format!(
            "offset {offset} is past the end of \"{}\" ({total} bytes).",
            file.path
        )));
    }
    // Three extra bytes let us finish a UTF-8 character cut by the range.
    let last = (offset + length + 3).min(total.max(1)) - 1;
    let range = format!("bytes={offset}-{last}");
    let url = call.nextcloud.files_url(&file.path);
    let answer = call.nextcloud.send(Method::GET, &url, &[("range", &range)], None).await?;
    let bytes = match answer.status {
        StatusCode::PARTIAL_CONTENT => answer.body.to_vec(),
        // A server that ignores Range sends everything.
        StatusCode::OK => answer.body.get(offset as usize..).unwrap_or_default().to_vec(),
        StatusCode::RANGE_NOT_SATISFIABLE => Vec::new(),
        status => return Err(status_failure(status, Subject::Path(&file.path))),
    };
    let (text, consumed) = utf8_slice(&bytes, length as usize);
    Ok(output(&file, offset, consumed as u64, total, text))
}

/// Reads a document (Markdown, DOCX, ODF, PDF, or a converter format)
/// whole, gets its text the way the index does, and serves the slice:
/// offsets are into that text, so a passage is re-read at its offset.
async fn read_document(
    call: &ToolCall,
    file: &dav::FileInfo,
    route: Route,
    offset: u64,
    length: u64,
) -> ToolOutcome {
    if route == Route::None {
        return Err(ToolFailure::new(
            FailureKind::Unreadable,
            format!(
                "\"{}\" is a {} file, which cannot be read as text. Tell the user what kind of file it is.",
                file.path,
                file.mime.as_deref().unwrap_or("binary")
            ),
        ));
    }
    if file.size > extract::INPUT_LENGTH_MAX as u64 {
        return Err(ToolFailure::new(
            FailureKind::Unreadable,
            format!("\"{}\" is too large to be turned into text here. Tell the user.", file.path),
        ));
    }
    let text = document::text(&call.nextcloud, &file.path, route, call.index.converter())
        .await
        .map_err(|error| text_failure(&file.path, error))?;
    let total = text.len() as u64;
    if offset >= total && total > 0 {
        return Err(ToolFailure::invalid_arguments(format!(
            "offset {offset} is past the end of the text of \"{}\" ({total} bytes).",
            file.path
        )));
    }
    let bytes = &text.as_bytes()[offset as usize..];
    let (slice, consumed) = utf8_slice(bytes, length as usize);
    Ok(output(file, offset, consumed as u64, total, slice))
}

fn text_failure(path: &str, error: TextError) -> ToolFailure {
    use extract::ExtractError;
    let message = match error {
        TextError::Download(failure) | TextError::DownloadRefused(failure) => return failure,
        TextError::Extract(ExtractError::NeedsOcr) => format!(
            "\"{path}\" is a scan without a text layer, so its text cannot be read. Tell the user; do not guess its content."
        ),
        TextError::Extract(ExtractError::Timeout | ExtractError::Busy)
        | TextError::Convert(ConvertError::Timeout | ConvertError::Busy) => format!(
            "Reading the text of \"{path}\" is taking too long right now. Try again in a moment, or tell the user."
        ),
        TextError::Extract(ExtractError::TooLarge) | TextError::Convert(ConvertError::TooLarge) => {
            format!("\"{path}\" is too large to be turned into text here. Tell the user.")
        }
        TextError::Convert(error) if error.is_configuration_fault() => format!(
            "The document server that turns \"{path}\" into text is not available or not configured correctly. Tell the user this file cannot be read right now and that an administrator should check the document server settings."
        ),
        TextError::NotUtf8 => {
            format!("\"{path}\" is not UTF-8 text, so it cannot be read here. Tell the user.")
        }
        _ => format!(
            "The text of \"{path}\" cannot be read: the file is damaged or in a format that is not supported. Tell the user."
        ),
    };
    ToolFailure::new(FailureKind::Unreadable, message)
}

/// The result of a read: the slice, where it sits, how to continue.
fn output(
    file: &dav::FileInfo,
    offset: u64,
    consumed: u64,
    total: u64,
    text: String,
) -> ToolOutput {
    let end = offset + consumed;
    let next_offset = (end < total).then_some(end);
    let bytes_left = total.saturating_sub(end);
    let hint = match next_offset {
        Some(next) => format!(
            "\n\n[bytes {offset}–{end} of {total}; {bytes_left} bytes left. To continue, call files_read with path=\"{}\" and offset={next}.]",
            file.path
        ),
        None => format!("\n\n[bytes {offset}–{end} of {total}; end of file.]"),
    };
    ToolOutput {
        text: format!("{text}{hint}"),
        structured: json!({
            "path": file.path,
            "fileid": file.fileid,
            "offset": offset,
            "length": consumed,
            "total": total,
            "next_offset": next_offset,
            "bytes_left": bytes_left,
            "text": text,
        }),
    }
}

/// Decodes at most `length` bytes (plus the rest of a cut character) as
/// UTF-8, skipping continuation bytes at the start; returns the text and
/// how many bytes it covers from the slice's start.
pub fn utf8_slice(bytes: &[u8], length: usize) -> (String, usize) {
    let start =
        bytes.iter().take(3).take_while(|byte| (**byte & 0b1100_0000) == 0b1000_0000).count();
    let mut end = length.min(bytes.len()).max(start);
    while end < bytes.len() && (bytes[end] & 0b1100_0000) == 0b1000_0000 {
        end += 1;
    }
    (String::from_utf8_lossy(&bytes[start..end]).into_owned(), end)
}

/// The properties of what the user sees at `path` (PROPFIND, depth 0).
pub async fn stat(call: &ToolCall, path: &str) -> Result<dav::FileInfo, ToolFailure> {
    if path.is_empty() {
        return Err(ToolFailure::invalid_arguments(
            "Give the path of a file, not the root folder.",
        ));
    }
    let answer = call
        .nextcloud
        .send(
            Method::from_bytes(b"PROPFIND").expect("valid method"),
            &call.nextcloud.files_url(path),
            &[("depth", "0"), ("content-type", "application/xml; charset=utf-8")],
            Some(dav::propfind_body()),
        )
        .await?;
    if answer.status.as_u16() != 207 {
        return Err(status_failure(answer.status, Subject::Path(path)));
    }
    dav::parse_multistatus(&answer.body)
        .ok()
        .and_then(|responses| {
            responses.first().and_then(|response| dav::file_info(response, &call.nextcloud.uid))
        })
        .ok_or_else(crate::nextcloud::unreachable_failure)
}

/// Finds a file's path by id with a SEARCH on `oc:fileid`.
pub async fn find_by_fileid(call: &ToolCall, fileid: u64) -> Result<dav::FileInfo, ToolFailure> {
    let uid = &call.nextcloud.uid;
    let body = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">
<d:basicsearch>
<d:select><d:prop>{props}</d:prop></d:select>
<d:from><d:scope><d:href>/files/{uid}</d:href><d:depth>infinity</d:depth></d:scope></d:from>
<d:where><d:eq><d:prop><oc:fileid/></d:prop><d:literal>{fileid}</d:literal></d:eq></d:where>
<d:orderby/>
</d:basicsearch>
</d:searchrequest>"#,
        props = dav::FILE_PROPERTIES,
        uid = xml_tree::escape(uid),
    );
    call.nextcloud
        .search(body, Subject::Account)
        .await?
        .iter()
        .filter_map(|response| dav::file_info(response, uid))
        .find(|file| file.fileid == fileid)
        .ok_or_else(|| {
            ToolFailure::new(
                FailureKind::NotFound,
                format!("No file with fileid {fileid} is visible to the user. It may have been deleted or unshared; search again with files_search."),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::utf8_slice;

    #[test]
    fn a_cut_character_is_finished_and_a_leading_fragment_skipped() {
        let text = "aé€b".as_bytes(); // a(1) é(2) €(3) b(1)
        assert_eq!(utf8_slice(text, 2), ("aé".to_string(), 3));
        assert_eq!(utf8_slice(&text[2..], 2), ("€".to_string(), 4));
        assert_eq!(utf8_slice(text, 100), ("aé€b".to_string(), 7));
    }
}
