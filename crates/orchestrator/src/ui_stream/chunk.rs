//! The chunks of an answer and their framing as server-sent events.
//!
//! Each [`Chunk`] serialises to exactly one member of the `ai` package's
//! `uiMessageChunkSchema`: `type` in kebab-case, fields in camelCase, and an
//! optional field left out rather than sent as `null` (the schema accepts a
//! missing field but refuses `null` where it wants a string or boolean).

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;

/// One chunk of the UI message stream v1.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case", rename_all_fields = "camelCase")]
pub enum Chunk {
    /// Opens the assistant message; `message_id` names it for the client.
    Start {
        #[serde(skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
    },
    /// Opens a step: one model answer and the tool calls it made.
    StartStep,
    TextStart {
        id: String,
    },
    TextDelta {
        id: String,
        delta: String,
    },
    TextEnd {
        id: String,
    },
    /// A tool call's complete arguments; `dynamic: Some(true)` for MCP tools,
    /// which the client keeps as a `dynamic-tool` part carrying `toolName`.
    ToolInputAvailable {
        tool_call_id: String,
        tool_name: String,
        input: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        dynamic: Option<bool>,
    },
    /// The call waits for the user; the client shows it as
    /// `approval-requested` and posts the answer back.
    ToolApprovalRequest {
        approval_id: String,
        tool_call_id: String,
    },
    ToolOutputAvailable {
        tool_call_id: String,
        output: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        dynamic: Option<bool>,
    },
    ToolOutputError {
        tool_call_id: String,
        error_text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        dynamic: Option<bool>,
    },
    /// The user denied the call: it never ran.
    ToolOutputDenied {
        tool_call_id: String,
    },
    FinishStep,
    Finish {
        #[serde(skip_serializing_if = "Option::is_none")]
        finish_reason: Option<FinishReason>,
    },
    /// A failure the page shows; the client stops reading the answer here.
    Error {
        error_text: String,
    },
}

/// Why an answer ended: the schema accepts only these six values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FinishReason {
    Stop,
    Length,
    ContentFilter,
    /// The step ended in tool calls, for instance one waiting for approval.
    ToolCalls,
    Error,
    Other,
}

/// The frame that ends the stream.
pub const DONE_FRAME: &[u8] = b"data: [DONE]\n\n";

/// The headers of a streamed answer, as the `ai` package's own server sends
/// them (less `connection: keep-alive`, which HTTP/2 forbids and the server
/// manages itself). `x-accel-buffering: no` keeps nginx from holding chunks
/// back.
pub const RESPONSE_HEADERS: &[(&str, &str)] = &[
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache"),
    ("x-vercel-ai-ui-message-stream", "v1"),
    ("x-accel-buffering", "no"),
];

/// `data: {json}\n\n`: one chunk as one server-sent event. The JSON is on a
/// single line, since serde_json escapes every newline inside a string.
pub fn frame(chunk: &Chunk) -> Bytes {
    let mut buffer = Vec::with_capacity(64);
    buffer.extend_from_slice(b"data: ");
    // Writing a derived enum of strings and JSON values into a Vec cannot fail.
    serde_json::to_writer(&mut buffer, chunk).expect("a chunk serialises to JSON");
    buffer.extend_from_slice(b"\n\n");
    Bytes::from(buffer)
}
