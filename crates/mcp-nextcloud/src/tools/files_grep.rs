//! `files_grep`: find passages inside documents (the passage index), each
//! with its section heading and the byte offset `files_read` continues
//! from. Every call also starts a bounded background pass that keeps the
//! index filling with the caller's own credential; it never delays the
//! answer.

use super::{Definition, Registry, ToolCall, ToolKind, ToolOutcome, ToolOutput};
use crate::index::Readiness;
use crate::index::search::{self, Matched, Outcome};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

pub const NAME: &str = "files_grep";
pub const LIMIT_MAX: usize = 50;
const LIMIT_DEFAULT: usize = 10;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Input {
    #[serde(default)]
    #[schemars(
        description = "Words to find, e.g. \"budget prévisionnel\" or \"two-factor authentication\"."
    )]
    query: Option<String>,
    #[serde(default)]
    #[schemars(
        description = "Only passages under a section whose title has these words, e.g. \"Budget\". Alone, it browses sections by title."
    )]
    heading: Option<String>,
    #[serde(default)]
    #[schemars(description = "Only documents below this folder, e.g. \"Projects/Apollo\".")]
    folder: Option<String>,
    #[serde(default)]
    #[schemars(
        range(min = 1, max = LIMIT_MAX),
        extend("default" = LIMIT_DEFAULT),
        description = "Most passages to return."
    )]
    limit: Option<usize>,
}

pub fn register(registry: &mut Registry) {
    registry.add(
        Definition {
            name: NAME,
            title: "Search inside documents",
            description: "Find passages inside the user's documents (Markdown, text, PDF, DOCX, ODT, ODP, ODS ...) \
by the words they contain. Accents and case do not matter (\"reunion\" finds \"réunion\"). \
Each result names the file, the section heading it sits under and a byte offset: call files_read with \
that path and offset to read the passage in context, and cite the section by its heading. \
Words are all required; \"quoted words\" must appear together; word* matches a prefix. \
If nothing matches, the document probably uses other words: rephrase with synonyms or the vocabulary \
the document would use, or browse by section title with heading. \
When the answer says the index is still being built, say so rather than concluding there is no match.",
            kind: ToolKind::Data,
            output_schema: json!({
                "type": "object",
                "properties": {
                    "passages": {"type": "array", "items": {
                        "type": "object",
                        "properties": {
                            "path": {"type": "string"},
                            "fileid": {"type": "integer"},
                            "heading": {"type": ["string", "null"]},
                            "offset": {"type": "integer", "description": "Byte offset for files_read."},
                            "length": {"type": "integer"},
                            "snippet": {"type": "string", "description": "The matched words in context, marked **like this**."}
                        },
                        "required": ["path", "fileid", "heading", "offset", "length", "snippet"]
                    }},
                    "index": {"type": "string", "enum": ["ready", "building"], "description": "building: not every document the user can open has been read yet."},
                    "matched": {"type": "string", "enum": ["all", "any", "meaning"], "description": "any: no passage the user can read had every word, so passages with some of them are shown. meaning: no passage had every word, so the passages nearest in meaning are shown (they may not answer: read before citing). An answer without passages says all."}
                },
                "required": ["passages", "index", "matched"]
            }),
            meta: None,
        },
        run,
    );
}

async fn run(call: ToolCall, input: Input) -> ToolOutcome {
    let limit = mcp_kit::arguments::count("limit", input.limit, LIMIT_DEFAULT, LIMIT_MAX)?;
    let folder = match input.folder.as_deref() {
        Some(folder) => Some(super::files_search::clean_folder(folder)?).filter(|f| !f.is_empty()),
        None => None,
    };
    // The pass runs beside the search and outlives it; it never blocks.
    call.index.kick(call.nextcloud.clone());
    let request = search::Request { query: input.query, heading: input.heading, folder, limit };
    let outcome = search::search(&call.index, &call.nextcloud, &request).await?;
    Ok(ToolOutput { text: text(&outcome), structured: structured(&outcome) })
}

fn text(outcome: &Outcome) -> String {
    let building = match outcome.readiness {
        Readiness::Ready => None,
        Readiness::Building { waiting: 0 } => Some(
            "The index is still being built: not every document the user can open has been read yet, so this is not a complete answer.".to_string(),
        ),
        Readiness::Building { waiting } => Some(format!(
            "The index is still being built: {waiting} or more documents the user can open are still waiting to be read, so this is not a complete answer."
        )),
    };
    if outcome.passages.is_empty() {
        return match building {
            Some(building) => format!(
                "{building} No passage matches among the documents read so far. Tell the user the search index is still being built and try again in a minute; files_search can find files by name meanwhile."
            ),
            None => "No passage matches. The documents may use other words: rephrase with synonyms or the vocabulary the document would use, browse section titles with heading, or find files by name with files_search.".to_string(),
        };
    }
    let mut lines = Vec::new();
    match outcome.matched {
        Matched::All => {}
        Matched::Any => lines.push("No passage has all the words; these have some of them.".to_string()),
        Matched::Meaning => lines.push(
            "No passage has all the words; these are the nearest in meaning and may not answer: read them before citing."
                .to_string(),
        ),
    }
    for passage in &outcome.passages {
        let section = passage.heading.as_deref().map(|h| format!(" — {h}")).unwrap_or_default();
        lines.push(format!(
            "- {}{section} (fileid {}, offset {}, {} bytes)\n  {}",
            passage.path,
            passage.fileid,
            passage.offset,
            passage.length,
            passage.snippet.replace('\n', " ")
        ));
    }
    lines.push(
        "To read a passage in context, call files_read with its path and offset; cite it by its section."
            .to_string(),
    );
    if let Some(building) = building {
        lines.push(building);
    }
    lines.join("\n")
}

fn structured(outcome: &Outcome) -> serde_json::Value {
    json!({
        "passages": outcome.passages,
        "index": match outcome.readiness { Readiness::Ready => "ready", Readiness::Building { .. } => "building" },
        "matched": outcome.matched.name(),
    })
}
