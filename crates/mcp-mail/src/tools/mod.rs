//! The tool registry. Each tool is one module with a `register` function;
//! [`all`] has one line per tool, so adding a tool is one file plus one line.
//! The registry itself, the definitions and the result conversion are
//! `mcp-kit`'s, shared with mcp-nextcloud.
//!
//! Data tools are annotated `readOnlyHint: true`; `mail_compose` is not, and
//! the orchestrator asks the user before every call to it. There is
//! deliberately no send tool and no draft-saving tool: a sent mail is
//! irreversible and outbound, so sending and saving are reachable only from
//! the user's click in the chat page (the seeds' omissions).

pub mod mail_compose;
pub mod mail_read;
pub mod mail_search;

use crate::app::{Envelope, MailApp};
use serde_json::{Value, json};

pub use mcp_kit::{Definition, ToolKind, ToolOutcome, ToolOutput};

/// Everything one call gets besides its parsed input: the mail client built
/// from the caller's own token.
pub struct ToolCall {
    pub mail: MailApp,
}

/// The set of tools this server offers.
pub type Registry = mcp_kit::Registry<ToolCall>;

/// Every tool of this server, one line each.
pub fn all() -> Registry {
    Registry::with(&[mail_search::register, mail_read::register, mail_compose::register])
}

/// The output schema of one message: its envelope (`id` as `id_schema`),
/// then `extra` in order, every property required.
pub fn message_schema<const N: usize>(id_schema: Value, extra: [(&str, Value); N]) -> Value {
    let string = || json!({"type": "string"});
    let strings = || json!({"type": "array", "items": {"type": "string"}});
    let envelope = [
        ("id", id_schema),
        ("mailbox", string()),
        ("from", string()),
        ("to", strings()),
        ("cc", strings()),
        ("subject", string()),
        ("date", json!({"type": "string", "description": "RFC 3339."})),
    ];
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    for (name, schema) in envelope.into_iter().chain(extra) {
        properties.insert(name.to_string(), schema);
        required.push(Value::String(name.to_string()));
    }
    json!({"type": "object", "properties": properties, "required": required})
}

/// A message's structured content: its envelope plus `extra`.
pub fn message_json<const N: usize>(envelope: &Envelope, extra: [(&str, Value); N]) -> Value {
    let mut message = json!(envelope);
    for (name, value) in extra {
        message[name] = value;
    }
    message
}

/// `text` on one line (control characters and runs of whitespace become one
/// space), cut to `length_max` characters with an ellipsis. Senders write
/// subjects and names; a newline in one must not forge a header line.
pub fn one_line(text: &str, length_max: usize) -> String {
    let mut line = String::with_capacity(text.len().min(length_max * 4));
    let mut count = 0;
    let mut words = text.split(|c: char| c.is_whitespace() || c.is_control());
    let mut first = true;
    for word in words.by_ref().filter(|word| !word.is_empty()) {
        let separator = usize::from(!first);
        let word_count = word.chars().count();
        if count + separator + word_count > length_max {
            if !first {
                line.push(' ');
                count += 1;
            }
            let room = length_max.saturating_sub(count + 1);
            line.extend(word.chars().take(room));
            line.push('…');
            return line;
        }
        if !first {
            line.push(' ');
        }
        line.push_str(word);
        count += separator + word_count;
        first = false;
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_flattens_and_cuts() {
        let check = |text: &str, length_max: usize, expected: &str| {
            let line = one_line(text, length_max);
            assert_eq!(line, expected, "{text:?}");
            assert!(line.chars().count() <= length_max, "{line:?} fits");
        };
        check("Budget  Apollo\r\nvalidé", 80, "Budget Apollo validé");
        check("Subject\nFrom: ceo@example.com", 80, "Subject From: ceo@example.com");
        check("  \t ", 80, "");
        check("abcdef ghij", 8, "abcdef …");
        check("abcdefghij", 5, "abcd…");
        check("ab cdefghij", 6, "ab cd…");
        check("é\u{0}é", 80, "é é");
    }
}
