//! A stored conversation as the list of `UIMessage`s `useChat` would hold,
//! so that a page reloaded mid-conversation shows it and can continue it
//! (answer a pending approval, ask the next question).
//!
//! Each user entry is one user message. The assistant and tool entries
//! between two user entries are one assistant message, as the client builds
//! it from a streamed answer: a `step-start` part per model answer, its
//! text, then a `dynamic-tool` part per call (every tool is an MCP tool,
//! hence dynamic) in the state its tool entry and approval record say.
//! The part shapes follow the `ai` package's `uiMessagesSchema`; notably an
//! `output-denied` part must carry `approval: {id, approved: false}`.
//!
//! A message's id is `m` and the sequence number of its first entry. The
//! stream that continues an assistant message (after an approval) must
//! name the same id in its `start` chunk: the client starts a new message
//! on any other id and then cannot find the call the answer is for.

use crate::model::ToolCall;
use crate::store::chat::{Approval, Decision};
use crate::transcript::{Entry, ToolEntry, ToolState};
use serde_json::{Value, json};

/// What a call that never finished shows: no result and nothing waiting.
pub const INTERRUPTED_CALL_TEXT: &str = "This call was interrupted before it finished.";

/// The `UIMessage`s for `entries` (each with its sequence number), given
/// the conversation's approvals in the order they were stored. See the
/// module documentation.
pub fn ui_messages(entries: &[(i64, Entry)], approvals: &[Approval]) -> Vec<Value> {
    let mut messages = Vec::new();
    let mut assistant: Option<(i64, Vec<Value>)> = None;
    for (index, (seq, entry)) in entries.iter().enumerate() {
        match entry {
            Entry::User { text } => {
                messages.extend(assistant.take().map(assistant_message));
                messages.push(user_message(*seq, text));
            }
            Entry::Assistant { text, tool_calls } => {
                let (_, parts) = assistant.get_or_insert_with(|| (*seq, Vec::new()));
                let results = step_results(&entries[index + 1..]);
                parts.extend(step_parts(text, tool_calls, &results, approvals));
            }
            // Read through the assistant entry that made the call.
            Entry::Tool(_) => {}
        }
    }
    messages.extend(assistant.map(assistant_message));
    messages
}

/// One model answer: `step-start`, its text when it has any, its calls.
fn step_parts(
    text: &str,
    tool_calls: &[ToolCall],
    results: &[&ToolEntry],
    approvals: &[Approval],
) -> Vec<Value> {
    let mut parts = vec![json!({ "type": "step-start" })];
    if !text.is_empty() {
        parts.push(json!({ "type": "text", "text": text, "state": "done" }));
    }
    for call in tool_calls {
        let result = results.iter().copied().find(|tool| tool.tool_call_id == call.id);
        parts.push(tool_part(call, result, approval_for(approvals, call)));
    }
    parts
}

fn user_message(seq: i64, text: &str) -> Value {
    json!({ "id": message_id(seq), "role": "user", "parts": [{ "type": "text", "text": text }] })
}

fn assistant_message((seq, parts): (i64, Vec<Value>)) -> Value {
    json!({ "id": message_id(seq), "role": "assistant", "parts": parts })
}

fn message_id(seq: i64) -> String {
    format!("m{seq}")
}

/// The tool entries answering one step: those up to the next assistant or
/// user entry. Bounding the search matters because some providers reuse
/// call ids (`call_0`) from one answer to the next.
fn step_results(after_step: &[(i64, Entry)]) -> Vec<&ToolEntry> {
    after_step
        .iter()
        .map_while(|(_, entry)| match entry {
            Entry::Tool(tool) => Some(tool),
            _ => None,
        })
        .collect()
}

/// The newest approval for the call's id and tool: with reused call ids,
/// the newest is the one still pending, and the tool tells most others
/// apart.
fn approval_for<'a>(approvals: &'a [Approval], call: &ToolCall) -> Option<&'a Approval> {
    approvals
        .iter()
        .rev()
        .find(|approval| approval.tool_call_id == call.id && approval.tool == call.name)
}

/// How a call stands, from its tool entry first and its approval second.
enum CallState<'a> {
    Output(&'a Value),
    Error(&'a str),
    Denied,
    /// Waiting for the user's answer to this approval id.
    Requested(&'a str),
    /// No result and nothing waiting: a restart cut it short.
    Interrupted,
}

fn call_state<'a>(result: Option<&'a ToolEntry>, approval: Option<&'a Approval>) -> CallState<'a> {
    if let Some(tool) = result {
        return match tool.state {
            ToolState::Output => CallState::Output(&tool.output),
            ToolState::Error => CallState::Error(&tool.content),
            ToolState::Denied => CallState::Denied,
        };
    }
    match approval {
        Some(Approval { decision: None, approval_id, .. }) => CallState::Requested(approval_id),
        Some(Approval { decision: Some(Decision::Denied), .. }) => CallState::Denied,
        Some(Approval { decision: Some(Decision::Approved), .. }) | None => CallState::Interrupted,
    }
}

/// One `dynamic-tool` part. Its `approval` is what the schema allows for
/// its state: `{id}` while requested, `{id, approved: true}` on the result
/// of an approved call, and `{id, approved: false}` on a denied call, where
/// it is required (should the record be missing, the call id stands in).
fn tool_part(call: &ToolCall, result: Option<&ToolEntry>, approval: Option<&Approval>) -> Value {
    let mut part = json!({
        "type": "dynamic-tool",
        "toolName": call.name,
        "toolCallId": call.id,
        "input": call_input(&call.arguments),
    });
    let fields = part.as_object_mut().expect("a tool part is an object");
    let approved = approval
        .filter(|approval| approval.decision == Some(Decision::Approved))
        .map(|approval| json!({ "id": approval.approval_id, "approved": true }));
    let approval_field = match call_state(result, approval) {
        CallState::Output(output) => {
            fields.insert("state".into(), "output-available".into());
            fields.insert("output".into(), output.clone());
            approved
        }
        CallState::Error(text) => {
            fields.insert("state".into(), "output-error".into());
            fields.insert("errorText".into(), text.into());
            approved
        }
        CallState::Interrupted => {
            fields.insert("state".into(), "output-error".into());
            fields.insert("errorText".into(), INTERRUPTED_CALL_TEXT.into());
            approved
        }
        CallState::Denied => {
            fields.insert("state".into(), "output-denied".into());
            let id = approval.map_or(call.id.as_str(), |approval| approval.approval_id.as_str());
            Some(json!({ "id": id, "approved": false }))
        }
        CallState::Requested(approval_id) => {
            fields.insert("state".into(), "approval-requested".into());
            Some(json!({ "id": approval_id }))
        }
    };
    // Left out when absent: the schema refuses `null` there.
    if let Some(approval_field) = approval_field {
        fields.insert("approval".into(), approval_field);
    }
    part
}

/// The call's arguments as JSON, or their raw text as a JSON string when
/// the model wrote something that does not parse.
fn call_input(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_owned()))
}
