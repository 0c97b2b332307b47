//! `files_search`: find files by name, type, modification time and folder
//! (one DAV SEARCH, answered by Nextcloud as the user).

use super::{Definition, Registry, ToolCall, ToolKind, ToolOutcome, ToolOutput};
use crate::nextcloud::Subject;
use crate::nextcloud::dav::{self, FileInfo};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use wire::ToolFailure;

pub const NAME: &str = "files_search";
/// The most results one call returns.
pub const LIMIT_MAX: u32 = 100;
const LIMIT_DEFAULT: u32 = 20;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    #[serde(default)]
    #[schemars(description = "Part of the file name, case-insensitive (e.g. \"budget\").")]
    name: Option<String>,
    #[serde(default)]
    #[schemars(
        description = "Only search below this folder, e.g. \"Projects/Apollo\". Default: all files."
    )]
    folder: Option<String>,
    #[serde(default)]
    #[schemars(
        description = "A whole MIME type, e.g. \"application/pdf\", or its first part for every type under it, e.g. \"text/\"."
    )]
    mime: Option<String>,
    #[serde(default)]
    #[schemars(
        extend("format" = "date-time"),
        description = "Only files modified after this time (RFC 3339)."
    )]
    modified_after: Option<String>,
    #[serde(default)]
    #[schemars(
        extend("format" = "date-time"),
        description = "Only files modified before this time (RFC 3339)."
    )]
    modified_before: Option<String>,
    #[serde(default)]
    #[schemars(range(min = 1, max = LIMIT_MAX), extend("default" = LIMIT_DEFAULT))]
    limit: Option<u32>,
}

pub fn register(registry: &mut Registry) {
    registry.add(
        Definition {
            name: NAME,
            title: "Search files",
            description: "Find the user's files and folders by name, type, modification time and folder. \
Returns each match's fileid, path, size and modification time, newest first. \
Use it to locate a document before reading it with files_read; to search inside documents use files_grep.",
            kind: ToolKind::Data,
            output_schema: json!({
                "type": "object",
                "properties": {
                    "files": {"type": "array", "items": file_schema()},
                    "truncated": {"type": "boolean", "description": "More matches exist than were returned."}
                },
                "required": ["files", "truncated"]
            }),
            meta: Some(crate::apps::tool_meta(crate::apps::FILES_SEARCH_URI)),
        },
        run,
    );
}

/// The JSON Schema of a [`FileInfo`], shared by the file tools.
pub fn file_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "fileid": {"type": "integer"},
            "path": {"type": "string"},
            "type": {"type": "string", "enum": ["file", "folder"]},
            "size": {"type": "integer"},
            "mtime": {"type": "string", "format": "date-time"},
            "mime": {"type": "string"},
            "permissions": {"type": "string"},
            "owner": {"type": "string"}
        },
        "required": ["fileid", "path", "type", "size", "mtime", "permissions"]
    })
}

async fn run(call: ToolCall, input: Input) -> ToolOutcome {
    let limit = mcp_kit::arguments::count("limit", input.limit, LIMIT_DEFAULT, LIMIT_MAX)?;
    let folder = clean_folder(input.folder.as_deref().unwrap_or(""))?;
    let mut conditions = Vec::new();
    if let Some(name) = input.name.as_deref().filter(|name| !name.trim().is_empty()) {
        conditions.push(like("d:displayname", &format!("%{}%", name.trim())));
    }
    if let Some(mime) = input.mime.as_deref().filter(|mime| !mime.trim().is_empty()) {
        conditions.push(mime_condition(mime)?);
    }
    for (field, comparison) in [(&input.modified_after, "gt"), (&input.modified_before, "lt")] {
        if let Some(time) = field {
            let parsed = chrono::DateTime::parse_from_rfc3339(time).map_err(|_| {
                ToolFailure::invalid_arguments(format!(
                    "\"{time}\" is not an RFC 3339 date-time such as 2026-03-01T00:00:00Z."
                ))
            })?;
            conditions.push(format!(
                "<d:{comparison}><d:prop><d:getlastmodified/></d:prop><d:literal>{}</d:literal></d:{comparison}>",
                parsed.to_utc().format("%Y-%m-%dT%H:%M:%SZ")
            ));
        }
    }
    let condition = match conditions.len() {
        0 => like("d:displayname", "%"),
        1 => conditions.remove(0),
        _ => format!("<d:and>{}</d:and>", conditions.concat()),
    };
    let uid = &call.nextcloud.uid;
    let scope = if folder.is_empty() {
        format!("/files/{}", xml_tree::escape(uid))
    } else {
        format!("/files/{}/{}", xml_tree::escape(uid), xml_tree::escape(&folder))
    };
    let body = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
<d:basicsearch>
<d:select><d:prop>{props}</d:prop></d:select>
<d:from><d:scope><d:href>{scope}</d:href><d:depth>infinity</d:depth></d:scope></d:from>
<d:where>{condition}</d:where>
<d:orderby><d:order><d:prop><d:getlastmodified/></d:prop><d:descending/></d:order></d:orderby>
<d:limit><d:nresults>{fetch}</d:nresults></d:limit>
</d:basicsearch>
</d:searchrequest>"#,
        props = dav::FILE_PROPERTIES,
        fetch = limit + 1,
    );
    let responses = call.nextcloud.search(body, Subject::Path(&folder)).await?;
    let mut files: Vec<FileInfo> = responses
        .iter()
        .filter_map(|response| dav::file_info(response, uid))
        .filter(|file| !file.path.is_empty() && file.path != folder)
        .collect();
    let truncated = files.len() > limit as usize;
    files.truncate(limit as usize);
    let text = if files.is_empty() {
        "No files match. Try a shorter or different name, a wider folder, or files_grep to search inside documents.".to_string()
    } else {
        let mut lines: Vec<String> = files
            .iter()
            .map(|file| {
                format!(
                    "- {} (fileid {}, {}, {} bytes, modified {})",
                    file.path,
                    file.fileid,
                    kind_word(file),
                    file.size,
                    file.mtime
                )
            })
            .collect();
        if truncated {
            lines.push(format!("More than {limit} matches; narrow the search or raise limit."));
        }
        lines.join("\n")
    };
    Ok(ToolOutput { text, structured: json!({ "files": files, "truncated": truncated }) })
}

fn kind_word(file: &FileInfo) -> &'static str {
    match file.kind {
        dav::FileKind::File => "file",
        dav::FileKind::Folder => "folder",
    }
}

/// The condition on the content type. Nextcloud's search backend takes
/// exactly two forms (`SearchBuilder`): a whole `type/subtype`, compared
/// for equality, or `type/%`, the type's every subtype; any other `%`
/// makes it throw, which reached the model as "Nextcloud gave an
/// unexpected answer". So a whole type is sent as `eq`, a bare type
/// (`text`, `text/`, `text/*`, `text/%`) as `like type/%`, and anything
/// else is refused here as the misuse it is. Nextcloud stores types in
/// lower case; parameters (`; charset=…`) are not part of them.
fn mime_condition(mime: &str) -> Result<String, ToolFailure> {
    let mime = mime.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let (kind, subtype) = match mime.split_once('/') {
        Some((kind, subtype)) => (kind, subtype),
        None => (mime.as_str(), ""),
    };
    let token = |part: &str| {
        !part.is_empty()
            && part.len() <= 127
            && part.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&byte))
    };
    if !token(kind) {
        return Err(mime_refused(&mime));
    }
    let condition = match subtype {
        "" | "*" | "%" => format!(
            "<d:like><d:prop><d:getcontenttype/></d:prop><d:literal>{}/%</d:literal></d:like>",
            xml_tree::escape(kind)
        ),
        subtype if token(subtype) => format!(
            "<d:eq><d:prop><d:getcontenttype/></d:prop><d:literal>{}/{}</d:literal></d:eq>",
            xml_tree::escape(kind),
            xml_tree::escape(subtype)
        ),
        _ => return Err(mime_refused(&mime)),
    };
    Ok(condition)
}

fn mime_refused(mime: &str) -> ToolFailure {
    let shown: String = mime.chars().take(80).collect();
    ToolFailure::invalid_arguments(format!(
        "\"{shown}\" is not a MIME type. Give a whole type such as \"application/pdf\" or \"text/markdown\", or only its first part such as \"text/\" or \"image/\" for every type under it."
    ))
}

fn like(property: &str, literal: &str) -> String {
    format!(
        "<d:like><d:prop><{property}/></d:prop><d:literal>{}</d:literal></d:like>",
        xml_tree::escape(literal)
    )
}

/// A folder argument as a clean relative path; `..` is refused.
pub fn clean_folder(folder: &str) -> Result<String, ToolFailure> {
    // Nextcloud refuses these in any name; a path holding one is a misuse
    // to correct, not an unexpected answer from Nextcloud.
    if folder.contains('\\') || folder.chars().any(char::is_control) {
        return Err(ToolFailure::invalid_arguments(
            "Paths separate folders with \"/\" and cannot contain backslashes or control characters. Use a path like \"Documents/report.md\".",
        ));
    }
    let mut segments = Vec::new();
    for segment in folder.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                return Err(ToolFailure::invalid_arguments(
                    "Paths are relative to the user's files and cannot contain \"..\". Use a path like \"Documents/report.md\".",
                ));
            }
            other => segments.push(other),
        }
    }
    Ok(segments.join("/"))
}
