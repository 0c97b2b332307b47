//! `files_move`: move or rename a file or folder (one WebDAV MOVE, as the
//! user). It never replaces anything: the MOVE carries `Overwrite: F`, so an
//! existing destination is Nextcloud's refusal, not a check we might race.
//! The file keeps its fileid, so what the model holds stays valid.

use super::{Definition, Registry, ToolCall, ToolKind, ToolOutcome, ToolOutput};
use crate::nextcloud::{Subject, status_failure};
use http::{Method, StatusCode};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use wire::{FailureKind, ToolFailure};

pub const NAME: &str = "files_move";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    #[serde(default)]
    #[schemars(
        length(min = 1),
        description = "Current path of the file or folder, e.g. \"Documents/draft.md\"."
    )]
    path: Option<String>,
    #[serde(default)]
    #[schemars(range(min = 1), description = "The fileid from files_search (instead of path).")]
    fileid: Option<u64>,
    #[schemars(
        length(min = 1),
        description = "The full new path, name included, e.g. \"Archive/2026/draft.md\". The folder must exist."
    )]
    destination: String,
}

pub fn register(registry: &mut Registry) {
    registry.add(
        Definition {
            name: NAME,
            title: "Move or rename a file",
            description: "Move or rename a file or folder in the user's files. Give the source as path or fileid \
(from files_search) and the full new path as destination; a rename is a move within the same folder. \
It never replaces an existing file. The fileid stays the same.",
            kind: ToolKind::Action { destructive: false, idempotent: false, open_world: false },
            output_schema: json!({
                "type": "object",
                "properties": {
                    "fileid": {"type": "integer", "description": "Unchanged by the move."},
                    "old_path": {"type": "string"},
                    "new_path": {"type": "string"}
                },
                "required": ["fileid", "old_path", "new_path"]
            }),
            meta: None,
        },
        run,
    );
}

async fn run(call: ToolCall, input: Input) -> ToolOutcome {
    let destination = super::files_search::clean_folder(&input.destination)?;
    if destination.is_empty() || input.destination.trim_end().ends_with('/') {
        return Err(ToolFailure::invalid_arguments(
            "destination is the full new path, name included, e.g. \"Archive/report.md\" (not just a folder).",
        ));
    }
    let (source, known_fileid) = match (input.path.as_deref(), input.fileid) {
        (Some(path), None) => (super::files_search::clean_folder(path)?, None),
        (None, Some(fileid)) => {
            let file = super::files_read::find_by_fileid(&call, fileid).await?;
            (file.path, Some(fileid))
        }
        _ => return Err(ToolFailure::invalid_arguments("Give exactly one of path or fileid.")),
    };
    if source.is_empty() {
        return Err(ToolFailure::invalid_arguments(
            "The root of the user's files cannot be moved. Give the path of a file or folder.",
        ));
    }
    if destination == source {
        return Err(ToolFailure::invalid_arguments(format!(
            "\"{source}\" is already at that path. Give a different destination."
        )));
    }
    if destination.starts_with(&format!("{source}/")) {
        return Err(ToolFailure::invalid_arguments(format!(
            "A folder cannot be moved into itself: \"{destination}\" is inside \"{source}\"."
        )));
    }
    let destination_url = call.nextcloud.files_url(&destination);
    let answer = call
        .nextcloud
        .send(
            Method::from_bytes(b"MOVE").expect("valid method"),
            &call.nextcloud.files_url(&source),
            &[("destination", &destination_url), ("overwrite", "F")],
            None,
        )
        .await?;
    let destination_folder = destination.rsplit_once('/').map(|(folder, _)| folder).unwrap_or("");
    match answer.status {
        StatusCode::CREATED | StatusCode::NO_CONTENT => {}
        StatusCode::PRECONDITION_FAILED => {
            return Err(ToolFailure::new(
                FailureKind::Conflict,
                format!(
                    "\"{destination}\" already exists, and files_move never replaces anything. Choose another name, or ask the user what to do."
                ),
            ));
        }
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            return Err(ToolFailure::new(
                FailureKind::Conflict,
                format!(
                    "\"{destination_folder}\" is a file, not a folder. Choose a destination inside an existing folder."
                ),
            ));
        }
        StatusCode::CONFLICT => {
            return Err(ToolFailure::new(
                FailureKind::Conflict,
                format!(
                    "The folder \"{destination_folder}\" does not exist. Choose an existing folder (files_search lists folders) or ask the user where to put it."
                ),
            ));
        }
        StatusCode::FORBIDDEN => {
            return Err(ToolFailure::new(
                FailureKind::RefusedByNextcloud,
                format!(
                    "The user does not have permission to move \"{source}\" to \"{destination}\" (changing the source, or adding to that folder, is not allowed). Do not retry; tell the user."
                ),
            ));
        }
        StatusCode::BAD_REQUEST => {
            return Err(ToolFailure::invalid_arguments(format!(
                "Nextcloud does not accept \"{destination}\" as a path. Choose a simpler name (letters, digits, spaces, dashes)."
            )));
        }
        status => return Err(status_failure(status, Subject::Path(&source))),
    }
    let fileid = match known_fileid.or_else(|| {
        answer
            .headers
            .get("oc-fileid")
            .and_then(|value| value.to_str().ok())
            .and_then(super::files_write::parse_oc_fileid)
    }) {
        Some(fileid) => fileid,
        // Nextcloud sends OC-FileId after a MOVE; without it, ask for the
        // moved file's properties.
        None => super::files_read::stat(&call, &destination).await?.fileid,
    };
    Ok(ToolOutput {
        text: format!("Moved \"{source}\" to \"{destination}\" (fileid {fileid}, unchanged)."),
        structured: json!({
            "fileid": fileid,
            "old_path": source,
            "new_path": destination,
        }),
    })
}
