//! The browser stream as the real client reads it: a whole answer (text, a
//! data tool's result, a call waiting for approval), the history a reloaded
//! page gets, the approval the browser posts back from it, and the
//! continuation read on top of that history.
//!
//! The framing is always checked here in Rust. With `TAMEBI_NODE_PEERS=1`
//! (after `npm ci` in `ci/peers/ai_stream/`) the same files also go through
//! `ai@6.0.326`'s own parser and message builder, as `useChat` runs them.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use std::path::{Path, PathBuf};
use std::process::Command;

use orchestrator::model::ToolCall;
use orchestrator::store::chat::Approval;
use orchestrator::transcript::{Entry, ToolEntry, ToolState};
use orchestrator::ui_stream::{
    Chunk, DONE_FRAME, FinishReason, PostInput, frame, parse_chat_post, ui_messages,
};
use serde_json::{Value, json};

const CONVERSATION_ID: &str = "chat-1";
/// The assistant message's id: the sequence number of its first entry.
const ASSISTANT_ID: &str = "m2";

fn text(value: &str) -> String {
    value.to_owned()
}

fn calendar_call() -> ToolCall {
    ToolCall {
        id: text("c1"),
        name: text("calendar_events"),
        arguments: text(r#"{"day":"today"}"#),
    }
}

fn delete_call() -> ToolCall {
    ToolCall {
        id: text("c2"),
        name: text("files_delete"),
        arguments: text(r#"{"path":"/old.txt"}"#),
    }
}

fn calendar_output() -> Value {
    json!({"events": [{"title": "Standup", "start": "10:00"}]})
}

fn input_of(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap()
}

/// The first answer: a text, a data tool's call and result, then a step
/// whose call waits for approval.
fn first_answer() -> Vec<Chunk> {
    let (calendar, delete) = (calendar_call(), delete_call());
    vec![
        Chunk::Start { message_id: Some(text(ASSISTANT_ID)) },
        Chunk::StartStep,
        Chunk::TextStart { id: text("t0") },
        Chunk::TextDelta { id: text("t0"), delta: text("Looking ") },
        Chunk::TextDelta { id: text("t0"), delta: text("that up.") },
        Chunk::TextEnd { id: text("t0") },
        Chunk::ToolInputAvailable {
            tool_call_id: calendar.id.clone(),
            tool_name: calendar.name.clone(),
            input: input_of(&calendar),
            dynamic: Some(true),
        },
        Chunk::ToolOutputAvailable {
            tool_call_id: calendar.id.clone(),
            output: calendar_output(),
            dynamic: Some(true),
        },
        Chunk::FinishStep,
        Chunk::StartStep,
        Chunk::ToolInputAvailable {
            tool_call_id: delete.id.clone(),
            tool_name: delete.name.clone(),
            input: input_of(&delete),
            dynamic: Some(true),
        },
        Chunk::ToolApprovalRequest { approval_id: text("a2"), tool_call_id: delete.id.clone() },
        Chunk::FinishStep,
        Chunk::Finish { finish_reason: Some(FinishReason::ToolCalls) },
    ]
}

/// The continuation once the user approved: the call's result, then a step
/// with the closing text.
fn continuation() -> Vec<Chunk> {
    vec![
        Chunk::Start { message_id: Some(text(ASSISTANT_ID)) },
        Chunk::ToolOutputAvailable {
            tool_call_id: delete_call().id,
            output: json!({"deleted": "/old.txt"}),
            dynamic: Some(true),
        },
        Chunk::StartStep,
        Chunk::TextStart { id: text("t1") },
        Chunk::TextDelta { id: text("t1"), delta: text("Deleted.") },
        Chunk::TextEnd { id: text("t1") },
        Chunk::FinishStep,
        Chunk::Finish { finish_reason: Some(FinishReason::Stop) },
    ]
}

/// What chat.db holds after the first answer, and the pending approval.
fn stored_conversation() -> (Vec<(i64, Entry)>, Vec<Approval>) {
    let (calendar, delete) = (calendar_call(), delete_call());
    let entries = vec![
        (1, Entry::User { text: text("What is on today? Then delete old.txt.") }),
        (2, Entry::Assistant { text: text("Looking that up."), tool_calls: vec![calendar] }),
        (
            3,
            Entry::Tool(ToolEntry {
                tool_call_id: text("c1"),
                tool: text("calendar_events"),
                content: text("Standup at 10:00."),
                output: calendar_output(),
                state: ToolState::Output,
            }),
        ),
        (4, Entry::Assistant { text: String::new(), tool_calls: vec![delete.clone()] }),
    ];
    let approval = Approval {
        approval_id: text("a2"),
        conversation_id: text(CONVERSATION_ID),
        tool_call_id: delete.id,
        tool: delete.name,
        arguments: delete.arguments.clone(),
        arguments_hash: orchestrator::store::arguments_hash(&delete.arguments),
        decision: None,
    };
    (entries, vec![approval])
}

fn stream_bytes(chunks: &[Chunk]) -> Vec<u8> {
    let mut bytes: Vec<u8> = chunks.iter().flat_map(|chunk| frame(chunk).to_vec()).collect();
    bytes.extend_from_slice(DONE_FRAME);
    bytes
}

/// The stream cut into its events, each checked to be one `data:` line.
fn check_framing(bytes: &[u8]) -> Vec<Value> {
    let body = std::str::from_utf8(bytes).expect("the stream is UTF-8");
    let events: Vec<&str> = body.split_terminator("\n\n").collect();
    assert!(body.ends_with("\n\n"), "the last event is terminated");
    assert_eq!(events.last(), Some(&"data: [DONE]"));
    events[..events.len() - 1]
        .iter()
        .map(|event| {
            let json = event.strip_prefix("data: ").expect("every event is one data field");
            assert!(!json.contains(['\n', '\r']), "one line per event: {json:?}");
            let chunk: Value = serde_json::from_str(json).expect("every data field is JSON");
            assert!(chunk["type"].is_string(), "{chunk}");
            chunk
        })
        .collect()
}

/// A file of its own under the system's temporary folder, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, bytes: &[u8]) -> TempFile {
        let path = std::env::temp_dir().join(format!("tamebi-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn node_peers_enabled() -> bool {
    std::env::var("TAMEBI_NODE_PEERS").is_ok_and(|value| value == "1")
}

fn peer_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ci/peers/ai_stream")
}

/// Runs one of the Node checks and returns the JSON it printed.
fn run_node(script: &str, files: &[&TempFile]) -> Value {
    let dir = peer_dir();
    assert!(
        dir.join("node_modules/ai/package.json").exists(),
        "TAMEBI_NODE_PEERS=1 needs `npm ci` run in {} first",
        dir.display()
    );
    let output = Command::new("node")
        .arg(dir.join(script))
        .args(files.iter().map(|file| &file.0))
        .output()
        .expect("node runs (TAMEBI_NODE_PEERS=1 needs Node 20 or later on PATH)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{script} refused it:\n{stderr}\n{stdout}");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|_| panic!("{script} printed {stdout}"))
}

fn expected_first_message() -> Value {
    json!({
        "id": ASSISTANT_ID,
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {"type": "text", "text": "Looking that up.", "state": "done"},
            {"type": "dynamic-tool", "toolName": "calendar_events", "toolCallId": "c1",
             "state": "output-available", "input": {"day": "today"}, "output": calendar_output()},
            {"type": "step-start"},
            {"type": "dynamic-tool", "toolName": "files_delete", "toolCallId": "c2",
             "state": "approval-requested", "input": {"path": "/old.txt"},
             "approval": {"id": "a2"}},
        ],
    })
}

#[test]
fn the_first_answer_is_read_as_one_assistant_message() {
    let bytes = stream_bytes(&first_answer());
    let chunks = check_framing(&bytes);
    assert_eq!(chunks.len(), first_answer().len());
    assert_eq!(chunks[0], json!({"type": "start", "messageId": ASSISTANT_ID}));
    if !node_peers_enabled() {
        return;
    }
    let frames = TempFile::new("first-answer.sse", &bytes);
    let message = run_node("check-frames.mjs", &[&frames]);
    assert_eq!(message, expected_first_message());
}

#[test]
fn the_stored_history_is_the_message_the_stream_built() {
    let (entries, approvals) = stored_conversation();
    let history = ui_messages(&entries, &approvals);
    assert_eq!(history.len(), 2);
    assert_eq!(history[1], expected_first_message());
    if !node_peers_enabled() {
        return;
    }
    let file = TempFile::new("history.json", Value::Array(history.clone()).to_string().as_bytes());
    assert_eq!(run_node("check-messages.mjs", &[&file]), Value::Array(history));
}

/// What `addToolApprovalResponse({id: "a2", approved: true})` does to the
/// reloaded history before `useChat` posts it.
fn approve_in_browser(history: &mut [Value]) {
    let assistant = history.last_mut().unwrap();
    for part in assistant["parts"].as_array_mut().unwrap() {
        if part["state"] == "approval-requested" {
            part["state"] = json!("approval-responded");
            part["approval"]["approved"] = json!(true);
        }
    }
}

#[test]
fn an_approval_from_the_reloaded_history_continues_the_same_message() {
    let (entries, approvals) = stored_conversation();
    let mut history = ui_messages(&entries, &approvals);
    approve_in_browser(&mut history);
    let body = json!({
        "id": CONVERSATION_ID,
        "messages": history,
        "trigger": "submit-message",
        "messageId": ASSISTANT_ID,
    });
    let post = parse_chat_post(body.to_string().as_bytes()).unwrap();
    assert_eq!(post.message_id.as_deref(), Some(ASSISTANT_ID));
    let PostInput::Approvals(answers) = post.input else { panic!("an approval post") };
    assert_eq!(answers.len(), 1);
    assert_eq!((answers[0].approval_id.as_str(), answers[0].tool_call_id.as_str()), ("a2", "c2"));
    assert!(answers[0].approved);

    let bytes = stream_bytes(&continuation());
    check_framing(&bytes);
    if !node_peers_enabled() {
        return;
    }
    let frames = TempFile::new("continuation.sse", &bytes);
    let previous = TempFile::new("previous.json", history[1].to_string().as_bytes());
    let message = run_node("check-frames.mjs", &[&frames, &previous]);
    let parts = message["parts"].as_array().unwrap();
    let delete = &parts[4];
    assert_eq!(delete["state"], "output-available");
    assert_eq!(delete["output"], json!({"deleted": "/old.txt"}));
    assert_eq!(delete["approval"], json!({"id": "a2", "approved": true}));
    assert_eq!(parts[5], json!({"type": "step-start"}));
    assert_eq!(parts[6], json!({"type": "text", "text": "Deleted.", "state": "done"}));
    assert_eq!(parts.len(), 7);
}
