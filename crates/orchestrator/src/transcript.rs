//! What a conversation is made of, as chat.db stores it: one [`Entry`] per
//! acknowledged message, written as JSON text.
//!
//! An entry is a model message plus what the browser needs to show it
//! again: a tool result keeps the tool's name, the structured output shown
//! to the user and how the call ended (output, error, denied), next to the
//! text the model reads. The model's view ([`Entry::to_message`]) and the
//! browser's view (`ui_stream::ui_messages`) are both derived from it.
//!
//! The format is written by hand (not derived) so that it stays what
//! existing databases hold when the Rust types move.

use crate::model::{Message, ToolCall};
use serde_json::{Value, json};

/// One stored message.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    User { text: String },
    Assistant { text: String, tool_calls: Vec<ToolCall> },
    Tool(ToolEntry),
}

/// A tool call's result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolEntry {
    pub tool_call_id: String,
    pub tool: String,
    /// What the model reads.
    pub content: String,
    /// What the browser shows: the structured result, or the text as a
    /// JSON string when the tool gave no structure.
    pub output: Value,
    pub state: ToolState,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolState {
    Output,
    Error,
    /// The user denied it: it never ran.
    Denied,
}

/// A stored entry that cannot be read back.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("stored message unreadable: {0}")]
pub struct Unreadable(pub String);

impl ToolState {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolState::Output => "output",
            ToolState::Error => "error",
            ToolState::Denied => "denied",
        }
    }

    fn parse(text: &str) -> Option<ToolState> {
        match text {
            "output" => Some(ToolState::Output),
            "error" => Some(ToolState::Error),
            "denied" => Some(ToolState::Denied),
            _ => None,
        }
    }
}

impl Entry {
    /// The role column of chat.db.
    pub fn role(&self) -> &'static str {
        match self {
            Entry::User { .. } => "user",
            Entry::Assistant { .. } => "assistant",
            Entry::Tool(_) => "tool",
        }
    }

    pub fn to_json(&self) -> String {
        let value = match self {
            Entry::User { text } => json!({ "role": "user", "text": text }),
            Entry::Assistant { text, tool_calls } => json!({
                "role": "assistant",
                "text": text,
                "toolCalls": tool_calls
                    .iter()
                    .map(|call| json!({
                        "id": call.id,
                        "name": call.name,
                        "arguments": call.arguments,
                    }))
                    .collect::<Vec<_>>(),
            }),
            Entry::Tool(tool) => json!({
                "role": "tool",
                "toolCallId": tool.tool_call_id,
                "tool": tool.tool,
                "content": tool.content,
                "output": tool.output,
                "state": tool.state.as_str(),
            }),
        };
        value.to_string()
    }

    pub fn from_json(text: &str) -> Result<Entry, Unreadable> {
        let value: Value =
            serde_json::from_str(text).map_err(|error| Unreadable(error.to_string()))?;
        let field = |name: &str| -> Result<String, Unreadable> {
            value
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| Unreadable(format!("no string {name:?}")))
        };
        match value.get("role").and_then(Value::as_str) {
            Some("user") => Ok(Entry::User { text: field("text")? }),
            Some("assistant") => {
                let mut tool_calls = Vec::new();
                for call in value.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
                    let part = |name: &str| {
                        call.get(name)
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                            .ok_or_else(|| Unreadable(format!("tool call without {name:?}")))
                    };
                    tool_calls.push(ToolCall {
                        id: part("id")?,
                        name: part("name")?,
                        arguments: part("arguments")?,
                    });
                }
                Ok(Entry::Assistant { text: field("text")?, tool_calls })
            }
            Some("tool") => Ok(Entry::Tool(ToolEntry {
                tool_call_id: field("toolCallId")?,
                tool: field("tool")?,
                content: field("content")?,
                output: value.get("output").cloned().unwrap_or(Value::Null),
                state: ToolState::parse(&field("state")?)
                    .ok_or_else(|| Unreadable("unknown tool state".into()))?,
            })),
            _ => Err(Unreadable("unknown role".into())),
        }
    }

    /// What the model is shown of this entry.
    pub fn to_message(&self) -> Message {
        match self {
            Entry::User { text } => Message::User(text.clone()),
            Entry::Assistant { text, tool_calls } => {
                Message::Assistant { text: text.clone(), tool_calls: tool_calls.clone() }
            }
            Entry::Tool(tool) => Message::Tool {
                tool_call_id: tool.tool_call_id.clone(),
                content: tool.content.clone(),
            },
        }
    }
}

/// The calls of the last assistant entry that have no result yet: pending
/// approvals, or calls a restart interrupted.
pub fn unanswered_calls(entries: &[Entry]) -> Vec<ToolCall> {
    let Some(last_assistant) = entries.iter().rposition(|e| matches!(e, Entry::Assistant { .. }))
    else {
        return Vec::new();
    };
    let Entry::Assistant { tool_calls, .. } = &entries[last_assistant] else { unreachable!() };
    tool_calls
        .iter()
        .filter(|call| {
            !entries[last_assistant..]
                .iter()
                .any(|entry| matches!(entry, Entry::Tool(tool) if tool.tool_call_id == call.id))
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "files_write".into(), arguments: r#"{"path":"a"}"#.into() }
    }

    #[test]
    fn every_entry_reads_back_as_written() {
        let entries = [
            Entry::User { text: "héllo \"there\"".into() },
            Entry::Assistant { text: String::new(), tool_calls: vec![call("c1"), call("c2")] },
            Entry::Tool(ToolEntry {
                tool_call_id: "c1".into(),
                tool: "files_write".into(),
                content: "Saved.".into(),
                output: json!({"path": "a", "size": 3}),
                state: ToolState::Output,
            }),
            Entry::Tool(ToolEntry {
                tool_call_id: "c2".into(),
                tool: "files_write".into(),
                content: "The user denied this action.".into(),
                output: Value::Null,
                state: ToolState::Denied,
            }),
        ];
        for entry in &entries {
            assert_eq!(&Entry::from_json(&entry.to_json()).unwrap(), entry);
        }
        assert!(Entry::from_json(r#"{"role":"system","text":"x"}"#).is_err());
        assert!(Entry::from_json(r#"{"role":"tool","toolCallId":"1"}"#).is_err());
    }

    #[test]
    fn unanswered_calls_are_those_of_the_last_step_without_a_result() {
        let answered = Entry::Tool(ToolEntry {
            tool_call_id: "c1".into(),
            tool: "files_write".into(),
            content: "ok".into(),
            output: Value::Null,
            state: ToolState::Output,
        });
        let entries = vec![
            Entry::User { text: "go".into() },
            Entry::Assistant { text: String::new(), tool_calls: vec![call("c1"), call("c2")] },
            answered,
        ];
        assert_eq!(unanswered_calls(&entries), vec![call("c2")]);
        let mut done = entries.clone();
        done.push(Entry::Assistant { text: "Done.".into(), tool_calls: vec![] });
        assert!(unanswered_calls(&done).is_empty());
        assert!(unanswered_calls(&[]).is_empty());
    }
}
