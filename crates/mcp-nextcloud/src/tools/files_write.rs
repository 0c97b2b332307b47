//! `files_write`: create a text file, or overwrite one when the model says so
//! explicitly (one WebDAV PUT, as the user).
//!
//! Without `overwrite` the PUT carries `If-None-Match: *`, so Nextcloud itself
//! refuses to replace anything that exists — no check-then-write race. The
//! tool writes text only: a model that wants to "edit" a .docx must not be
//! able to replace it with plain text, so document and image extensions are
//! refused before anything is sent.

use super::{Definition, Registry, ToolCall, ToolKind, ToolOutcome, ToolOutput};
use crate::nextcloud::dav::FileKind;
use crate::nextcloud::{Subject, status_failure};
use http::{Method, StatusCode};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use wire::{FailureKind, ToolFailure};

pub const NAME: &str = "files_write";
/// The largest content one call writes, in bytes of UTF-8.
pub const CONTENT_LENGTH_MAX: usize = 1024 * 1024;

/// Extensions of documents that are not plain text: writing text into one
/// would destroy it.
const BINARY_EXTENSIONS: &[&str] = &[
    "docx", "doc", "xlsx", "xls", "pptx", "ppt", "odt", "ods", "odp", "odg", "pdf", "png", "jpg",
    "jpeg", "gif", "webp", "heic", "zip", "gz", "tar", "7z", "mp3", "mp4", "mov", "exe",
];

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    #[schemars(
        length(min = 1),
        description = "Path of the file in the user's files, folder included, e.g. \"Documents/summary.md\"."
    )]
    path: String,
    #[schemars(
        length(max = CONTENT_LENGTH_MAX),
        description = "The whole text of the file (UTF-8). Not base64: binary files cannot be written."
    )]
    content: String,
    #[serde(default)]
    #[schemars(
        description = "Replace the file if it exists. Leave false unless the user wants the existing file replaced."
    )]
    overwrite: bool,
}

pub fn register(registry: &mut Registry) {
    registry.add(
        Definition {
            name: NAME,
            title: "Write a text file",
            description: "Create a text file (Markdown, plain text, CSV, JSON ...) in the user's files, or replace one. \
By default it refuses to replace an existing file; set overwrite=true only after reading the file with \
files_read or when the user asked to replace it. The folder must already exist. Returns the fileid and path.",
            kind: ToolKind::Action { destructive: true, idempotent: true, open_world: false },
            output_schema: json!({
                "type": "object",
                "properties": {
                    "fileid": {"type": "integer"},
                    "path": {"type": "string"},
                    "size": {"type": "integer", "description": "Bytes written."},
                    "created": {"type": "boolean", "description": "True for a new file, false when an existing one was replaced."},
                    "etag": {"type": "string"}
                },
                "required": ["fileid", "path", "size", "created", "etag"]
            }),
            meta: None,
        },
        run,
    );
}

async fn run(call: ToolCall, input: Input) -> ToolOutcome {
    let path = file_path(&input.path)?;
    if input.content.len() > CONTENT_LENGTH_MAX {
        return Err(ToolFailure::invalid_arguments(format!(
            "The content is {} bytes; files_write takes at most {CONTENT_LENGTH_MAX}. Write a shorter file or split it into several.",
            input.content.len()
        )));
    }
    let size = input.content.len() as u64;
    let url = call.nextcloud.files_url(&path);
    let mut headers = vec![("content-type", "text/plain; charset=utf-8")];
    if !input.overwrite {
        // Nextcloud refuses the PUT if anything exists there: no race between
        // a check and the write.
        headers.push(("if-none-match", "*"));
    }
    let answer =
        call.nextcloud.send(Method::PUT, &url, &headers, Some(input.content.into_bytes())).await?;
    let created = match answer.status {
        StatusCode::CREATED => true,
        StatusCode::NO_CONTENT | StatusCode::OK => false,
        // "Something is in the way" or "no folder there" (409; Nextcloud
        // before sabre/dav 4.1.3 answered 404): find out which, so the model
        // is told the right thing to do.
        StatusCode::PRECONDITION_FAILED | StatusCode::CONFLICT | StatusCode::NOT_FOUND => {
            return Err(explain_blocked_write(&call, &path, answer.status).await);
        }
        StatusCode::BAD_REQUEST => {
            return Err(ToolFailure::invalid_arguments(format!(
                "Nextcloud does not accept \"{path}\" as a file name. Choose a simpler name (letters, digits, spaces, dashes, one extension)."
            )));
        }
        StatusCode::PAYLOAD_TOO_LARGE => {
            return Err(ToolFailure::invalid_arguments(
                "Nextcloud refused the content as too large. Write a shorter file or split it into several.",
            ));
        }
        StatusCode::INSUFFICIENT_STORAGE => {
            return Err(ToolFailure::new(
                FailureKind::RefusedByNextcloud,
                "The user's storage is full, so the file was not written. Tell the user; they can free space or ask an administrator for more.",
            ));
        }
        status => return Err(status_failure(status, Subject::Path(&path))),
    };
    let etag = header_text(&answer.headers, "oc-etag")
        .or_else(|| header_text(&answer.headers, "etag"))
        .map(|etag| etag.trim_matches('"').to_string());
    let fileid = header_text(&answer.headers, "oc-fileid").and_then(|text| parse_oc_fileid(&text));
    // Nextcloud sends both headers after a PUT; a proxy might strip them, and
    // then the file's properties say the same.
    let (fileid, etag) = match (fileid, etag) {
        (Some(fileid), Some(etag)) => (fileid, etag),
        _ => {
            let file = super::files_read::stat(&call, &path).await?;
            (file.fileid, file.etag.unwrap_or_default().trim_matches('"').to_string())
        }
    };
    let verb = if created { "Created" } else { "Replaced" };
    Ok(ToolOutput {
        text: format!("{verb} \"{path}\" ({size} bytes, fileid {fileid})."),
        structured: json!({
            "fileid": fileid,
            "path": path,
            "size": size,
            "created": created,
            "etag": etag,
        }),
    })
}

/// A path argument naming a file: clean, not the root, not a folder
/// (no trailing slash), not a binary document.
fn file_path(raw: &str) -> Result<String, ToolFailure> {
    let path = super::files_search::clean_folder(raw)?;
    if path.is_empty() || raw.trim_end().ends_with('/') {
        return Err(ToolFailure::invalid_arguments(
            "Give the path of a file, with its name, e.g. \"Documents/summary.md\".",
        ));
    }
    let name = path.rsplit('/').next().unwrap_or(&path);
    let extension = name.rsplit_once('.').map(|(_, extension)| extension.to_ascii_lowercase());
    if let Some(extension) =
        extension.filter(|extension| BINARY_EXTENSIONS.contains(&extension.as_str()))
    {
        return Err(ToolFailure::invalid_arguments(format!(
            "files_write writes plain text and cannot create or edit a .{extension} document. Write a .md or .txt file instead, or tell the user."
        )));
    }
    Ok(path)
}

/// Why a PUT was refused with 404, 409 or 412: a folder at the path, a file
/// that exists, or a missing parent folder.
async fn explain_blocked_write(call: &ToolCall, path: &str, status: StatusCode) -> ToolFailure {
    match super::files_read::stat(call, path).await {
        Ok(existing) if existing.kind == FileKind::Folder => {
            ToolFailure::invalid_arguments(format!(
                "\"{path}\" is a folder. Give a file path inside it, e.g. \"{path}/notes.md\"."
            ))
        }
        Ok(_) => ToolFailure::new(
            FailureKind::Conflict,
            format!(
                "\"{path}\" already exists. Read it first with files_read, or ask the user whether to overwrite it (then call again with overwrite=true), or choose another name."
            ),
        ),
        Err(failure)
            if failure.kind == FailureKind::NotFound
                && status != StatusCode::PRECONDITION_FAILED =>
        {
            let parent = path.rsplit_once('/').map(|(parent, _)| parent).unwrap_or("");
            ToolFailure::new(
                FailureKind::Conflict,
                format!(
                    "The folder \"{parent}\" does not exist, so \"{path}\" cannot be created there. Choose an existing folder (files_search lists folders) or ask the user where to put it."
                ),
            )
        }
        Err(failure) if failure.kind == FailureKind::NextcloudUnreachable => failure,
        Err(_) => status_failure(status, Subject::Path(path)),
    }
}

fn header_text(headers: &http::HeaderMap, name: &str) -> Option<String> {
    headers.get(name).and_then(|value| value.to_str().ok()).map(str::to_string)
}

/// Nextcloud's `OC-FileId` is the file id zero-padded to eight digits and
/// followed by the instance id (`00000123ocabc123`); the id is the leading
/// digits.
pub fn parse_oc_fileid(header: &str) -> Option<u64> {
    let header = header.trim();
    let digits_end =
        header.find(|character: char| !character.is_ascii_digit()).unwrap_or(header.len());
    header[..digits_end].parse().ok().filter(|fileid| *fileid > 0)
}

#[cfg(test)]
mod tests {
    use super::{file_path, parse_oc_fileid};

    #[test]
    fn oc_fileid_is_the_leading_digits() {
        assert_eq!(parse_oc_fileid("00000123ocfake0001"), Some(123));
        assert_eq!(parse_oc_fileid("00000123oc4b2x9z0q1"), Some(123));
        assert_eq!(parse_oc_fileid("123456789ocabc"), Some(123456789));
        assert_eq!(parse_oc_fileid("42"), Some(42));
        assert_eq!(parse_oc_fileid("ocabc"), None);
        assert_eq!(parse_oc_fileid("00000000ocabc"), None);
        assert_eq!(parse_oc_fileid(""), None);
    }

    #[test]
    fn file_paths_are_clean_and_textual() {
        assert_eq!(file_path("/Documents//a.md").unwrap(), "Documents/a.md");
        assert!(file_path("").is_err());
        assert!(file_path("Documents/").is_err());
        assert!(file_path("../bob/a.md").is_err());
        assert!(file_path("Projects/plan.DOCX").is_err());
        assert_eq!(file_path("Makefile").unwrap(), "Makefile");
    }
}
