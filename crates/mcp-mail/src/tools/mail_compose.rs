//! `mail_compose`: stores a plain-text mail as a preview for the user to
//! review (the app's `POST …/mail/compose`). An action: the orchestrator
//! asks the user before it runs.
//!
//! It sends nothing and saves no draft. Sending and saving are the user's
//! click in the chat page, on routes a bearer cannot reach (the app answers
//! 403 to one), so even a model steered by a poisoned mail cannot dispatch
//! one. The result says so in words the model cannot misread, because a
//! model that believes it sent a mail will tell the user it did.

use super::{Definition, Registry, ToolCall, ToolKind, ToolOutcome, ToolOutput};
use crate::app::Draft;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use wire::ToolFailure;

pub const NAME: &str = "mail_compose";
/// The contract's limits: subject in bytes, body in bytes.
pub const SUBJECT_LENGTH_MAX: usize = 255;
pub const BODY_LENGTH_MAX: usize = 100_000;
/// The most recipients (to and cc together) one mail may have.
pub const RECIPIENT_COUNT_MAX: usize = 50;
/// The longest single address accepted.
pub const ADDRESS_LENGTH_MAX: usize = 320;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = subject_and_body_required)]
struct Input {
    #[schemars(
        length(max = RECIPIENT_COUNT_MAX),
        inner(length(max = ADDRESS_LENGTH_MAX)),
        description = "Recipients, at least one: \"bob@example.com\" or \"Bob Martin <bob@example.com>\"."
    )]
    to: Vec<String>,
    #[serde(default)]
    #[schemars(
        length(max = RECIPIENT_COUNT_MAX),
        inner(length(max = ADDRESS_LENGTH_MAX)),
        transform = mcp_kit::schema::no_default,
        description = "Copy recipients, same forms; omitted: none."
    )]
    cc: Vec<String>,
    #[serde(default)]
    #[schemars(
        transform = mcp_kit::schema::no_default,
        description = "One line, at most 255 bytes."
    )]
    subject: String,
    #[serde(default)]
    #[schemars(
        transform = mcp_kit::schema::no_default,
        description = "Plain text (no HTML, no Markdown), at most 100000 bytes."
    )]
    body: String,
}

/// The schema asks for a subject and a body so the model always writes
/// them; a call that omits one still parses, as empty (a mail may have no
/// subject).
fn subject_and_body_required(schema: &mut schemars::Schema) {
    mcp_kit::schema::require(schema, &["subject", "body"]);
}

pub fn register(registry: &mut Registry) {
    registry.add(
        Definition {
            name: NAME,
            title: "Compose a mail for the user to review",
            description: "Prepare a plain-text mail from the user's account and store it as a preview for the user to review. \
It does NOT send the mail and does NOT save a draft: the user sends it (or saves it as a draft) from the chat with a click, and no tool can. \
Find addresses with contacts_search or in a mail read with mail_read. Returns the preview id and the exact text that would go out.",
            kind: ToolKind::Action { destructive: false, idempotent: false, open_world: true },
            output_schema: json!({
                "type": "object",
                "properties": {
                    "preview_id": {"type": "string"},
                    "from": {"type": "string"},
                    "to": {"type": "array", "items": {"type": "string"}},
                    "cc": {"type": "array", "items": {"type": "string"}},
                    "subject": {"type": "string"},
                    "body": {"type": "string"},
                    "preview": {"type": "string", "description": "The exact text that would go out."},
                    "sent": {"type": "boolean", "const": false},
                    "saved_as_draft": {"type": "boolean", "const": false}
                },
                "required": ["preview_id", "from", "to", "cc", "subject", "body", "preview", "sent", "saved_as_draft"]
            }),
            meta: None,
        },
        run,
    );
}

async fn run(call: ToolCall, input: Input) -> ToolOutcome {
    let draft = validate(input)?;
    let preview = call.mail.compose(&draft).await?;
    let text = format!(
        "Preview {id} is stored for the user to review. NOTHING was sent and nothing was saved as a draft. \
The user sends it, or saves it as a draft, from the chat with a click; you cannot send it, so never say it was sent. \
Tell the user the mail is ready for their review, and change it only if they ask (call mail_compose again for a new preview).\n\
The exact text that would go out:\n\
----- BEGIN PREVIEW {id} -----\n{}\n----- END PREVIEW {id} -----",
        preview.preview.trim_end(),
        id = preview.preview_id,
    );
    Ok(ToolOutput {
        text,
        structured: json!({
            "preview_id": preview.preview_id,
            "from": preview.from,
            "to": preview.to,
            "cc": preview.cc,
            "subject": preview.subject,
            "body": preview.body,
            "preview": preview.preview,
            "sent": false,
            "saved_as_draft": false,
        }),
    })
}

/// The contract's limits, checked before the app is asked so the model
/// learns which field to fix; the address syntax is the app's to judge.
fn validate(input: Input) -> Result<Draft, ToolFailure> {
    let clean = |field: &str, addresses: Vec<String>| -> Result<Vec<String>, ToolFailure> {
        addresses
            .into_iter()
            .map(|address| {
                let address = address.trim().to_string();
                if address.is_empty() || !address.contains('@') {
                    return Err(ToolFailure::invalid_arguments(format!(
                        "{field} holds {address:?}, which is not an address: write local@domain or Name <local@domain>."
                    )));
                }
                if address.chars().any(char::is_control) || address.len() > ADDRESS_LENGTH_MAX {
                    return Err(ToolFailure::invalid_arguments(format!(
                        "{field} holds an address on several lines or longer than {ADDRESS_LENGTH_MAX} bytes: write each address as local@domain or Name <local@domain>."
                    )));
                }
                Ok(address)
            })
            .collect()
    };
    let to = clean("to", input.to)?;
    let cc = clean("cc", input.cc)?;
    if to.is_empty() {
        return Err(ToolFailure::invalid_arguments(
            "to needs at least one recipient, e.g. [\"bob@example.com\"]. Ask the user whom the mail is for if you do not know.",
        ));
    }
    if to.len() + cc.len() > RECIPIENT_COUNT_MAX {
        return Err(ToolFailure::invalid_arguments(format!(
            "A mail may have at most {RECIPIENT_COUNT_MAX} recipients (to and cc together)."
        )));
    }
    let subject = input.subject.trim().to_string();
    if subject.chars().any(char::is_control) {
        return Err(ToolFailure::invalid_arguments(
            "subject must be one line. Put the rest in body and call mail_compose again.",
        ));
    }
    if subject.len() > SUBJECT_LENGTH_MAX {
        return Err(ToolFailure::invalid_arguments(format!(
            "subject is {} bytes; at most {SUBJECT_LENGTH_MAX} are allowed. Shorten it and call mail_compose again.",
            subject.len()
        )));
    }
    if input.body.len() > BODY_LENGTH_MAX {
        return Err(ToolFailure::invalid_arguments(format!(
            "body is {} bytes; at most {BODY_LENGTH_MAX} are allowed. Shorten it and call mail_compose again.",
            input.body.len()
        )));
    }
    Ok(Draft { to, cc, subject, body: input.body })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(to: &[&str], subject: &str, body: &str) -> Input {
        Input {
            to: to.iter().map(|address| address.to_string()).collect(),
            cc: vec![],
            subject: subject.into(),
            body: body.into(),
        }
    }

    #[test]
    fn the_contract_limits_are_checked_before_the_app_is_asked() {
        let refused = |input: Input| validate(input).expect_err("refused").message;
        assert!(refused(input(&[], "s", "b")).starts_with("to needs at least one recipient"));
        assert!(refused(input(&["bob"], "s", "b")).contains("not an address"));
        assert!(refused(input(&["bob@example.com\r\nBcc: x@y.z"], "s", "b")).contains("lines"));
        assert!(
            refused(input(&["b@x.y"], "one\ntwo", "b")).starts_with("subject must be one line")
        );
        assert!(refused(input(&["b@x.y"], &"é".repeat(128), "b")).contains("256 bytes"));
        assert!(
            refused(input(&["b@x.y"], "s", &"a".repeat(BODY_LENGTH_MAX + 1))).contains("body is")
        );
        let many: Vec<String> = (0..=RECIPIENT_COUNT_MAX).map(|n| format!("u{n}@x.y")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(refused(input(&many, "s", "b")).contains("at most"));
        let draft = validate(input(&[" Bob <bob@example.com> "], " Stand-up ", "Hi\n")).unwrap();
        assert_eq!(draft.to, ["Bob <bob@example.com>"]);
        assert_eq!(draft.subject, "Stand-up");
        assert_eq!(draft.body, "Hi\n", "the body is the model's, byte for byte");
        let exactly = validate(input(&["b@x.y"], &"a".repeat(SUBJECT_LENGTH_MAX), "")).unwrap();
        assert_eq!(exactly.subject.len(), SUBJECT_LENGTH_MAX);
    }
}
