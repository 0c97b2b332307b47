//! Tests of the wire layer: each chunk's exact JSON, the AI SDK's own
//! captured frames reproduced byte for byte, posts (the captured approval,
//! both body forms, every refusal), the history's part shapes, and
//! properties that no input makes the post parser panic or break its
//! promises.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::model::ToolCall;
use crate::store::chat::{Approval, Decision};
use crate::transcript::{Entry, ToolEntry, ToolState};

const TURN1_RESPONSE: &str = include_str!("vectors/turn1-response.http");
const TURN2_REQUEST: &str = include_str!("vectors/turn2-request.json");
const TURN2_RESPONSE: &str = include_str!("vectors/turn2-response.http");

// ---- Chunks ----

fn check_chunk(chunk: Chunk, expected_json: &str) {
    let expected_frame = format!("data: {expected_json}\n\n");
    assert_eq!(std::str::from_utf8(&frame(&chunk)).unwrap(), expected_frame);
}

fn text(value: &str) -> String {
    value.to_owned()
}

#[test]
fn every_chunk_serialises_to_the_schema_shape() {
    check_chunk(Chunk::Start { message_id: None }, r#"{"type":"start"}"#);
    check_chunk(
        Chunk::Start { message_id: Some(text("m7")) },
        r#"{"type":"start","messageId":"m7"}"#,
    );
    check_chunk(Chunk::StartStep, r#"{"type":"start-step"}"#);
    check_chunk(Chunk::TextStart { id: text("t0") }, r#"{"type":"text-start","id":"t0"}"#);
    check_chunk(
        Chunk::TextDelta { id: text("t0"), delta: text("Hi") },
        r#"{"type":"text-delta","id":"t0","delta":"Hi"}"#,
    );
    check_chunk(Chunk::TextEnd { id: text("t0") }, r#"{"type":"text-end","id":"t0"}"#);
    check_chunk(
        Chunk::ToolInputAvailable {
            tool_call_id: text("c1"),
            tool_name: text("files_list"),
            input: json!({"path": "/"}),
            dynamic: Some(true),
        },
        concat!(
            r#"{"type":"tool-input-available","toolCallId":"c1","toolName":"files_list","#,
            r#""input":{"path":"/"},"dynamic":true}"#,
        ),
    );
    check_chunk(
        Chunk::ToolInputAvailable {
            tool_call_id: text("c1"),
            tool_name: text("files_list"),
            input: Value::Null,
            dynamic: None,
        },
        r#"{"type":"tool-input-available","toolCallId":"c1","toolName":"files_list","input":null}"#,
    );
    check_chunk(
        Chunk::ToolApprovalRequest { approval_id: text("a1"), tool_call_id: text("c1") },
        r#"{"type":"tool-approval-request","approvalId":"a1","toolCallId":"c1"}"#,
    );
    check_chunk(
        Chunk::ToolOutputAvailable {
            tool_call_id: text("c1"),
            output: json!(["a.txt"]),
            dynamic: Some(true),
        },
        r#"{"type":"tool-output-available","toolCallId":"c1","output":["a.txt"],"dynamic":true}"#,
    );
    check_chunk(
        Chunk::ToolOutputError {
            tool_call_id: text("c1"),
            error_text: text("No such folder."),
            dynamic: None,
        },
        r#"{"type":"tool-output-error","toolCallId":"c1","errorText":"No such folder."}"#,
    );
    check_chunk(
        Chunk::ToolOutputDenied { tool_call_id: text("c1") },
        r#"{"type":"tool-output-denied","toolCallId":"c1"}"#,
    );
    check_chunk(Chunk::FinishStep, r#"{"type":"finish-step"}"#);
    check_chunk(Chunk::Finish { finish_reason: None }, r#"{"type":"finish"}"#);
    check_chunk(
        Chunk::Error { error_text: text("The model is unreachable. Try again later.") },
        r#"{"type":"error","errorText":"The model is unreachable. Try again later."}"#,
    );
}

#[test]
fn every_finish_reason_is_one_the_schema_accepts() {
    let reasons = [
        (FinishReason::Stop, "stop"),
        (FinishReason::Length, "length"),
        (FinishReason::ContentFilter, "content-filter"),
        (FinishReason::ToolCalls, "tool-calls"),
        (FinishReason::Error, "error"),
        (FinishReason::Other, "other"),
    ];
    for (reason, name) in reasons {
        let expected = format!(r#"{{"type":"finish","finishReason":"{name}"}}"#);
        check_chunk(Chunk::Finish { finish_reason: Some(reason) }, &expected);
    }
}

#[test]
fn a_frame_is_one_line_whatever_the_text_holds() {
    let delta = text("line\nbreak\r\n\u{2028}\"quoted\" é");
    let framed = frame(&Chunk::TextDelta { id: text("t0"), delta: delta.clone() });
    let framed = std::str::from_utf8(&framed).unwrap();
    let json = framed.strip_prefix("data: ").unwrap().strip_suffix("\n\n").unwrap();
    assert!(!json.contains(['\n', '\r']), "{json}");
    assert_eq!(serde_json::from_str::<Value>(json).unwrap()["delta"], delta.as_str());
}

#[test]
fn the_constants_are_what_the_client_expects() {
    assert_eq!(DONE_FRAME, b"data: [DONE]\n\n");
    assert_eq!(
        RESPONSE_HEADERS,
        &[
            ("content-type", "text/event-stream"),
            ("cache-control", "no-cache"),
            ("x-vercel-ai-ui-message-stream", "v1"),
            ("x-accel-buffering", "no"),
        ]
    );
    for (name, value) in RESPONSE_HEADERS {
        let line = format!("{name}: {value}\r\n");
        assert!(TURN1_RESPONSE.contains(&line), "the AI SDK sends {line:?} too");
    }
}

/// The frames of a captured response, less the input streaming chunks we
/// do not send (we give a call's input whole).
fn captured_frames(response: &str) -> Vec<String> {
    let (_, body) = response.split_once("\r\n\r\n").expect("headers end in a blank line");
    body.split_inclusive("\n\n")
        .filter(|frame| {
            !frame.contains(r#""type":"tool-input-start""#)
                && !frame.contains(r#""type":"tool-input-delta""#)
        })
        .map(str::to_owned)
        .collect()
}

fn our_frames(chunks: &[Chunk]) -> Vec<String> {
    let done = std::str::from_utf8(DONE_FRAME).unwrap().to_owned();
    let frames = chunks.iter().map(|chunk| String::from_utf8(frame(chunk).to_vec()).unwrap());
    frames.chain([done]).collect()
}

#[test]
fn our_frames_are_byte_for_byte_those_the_ai_sdk_sends() {
    let turn1 = [
        Chunk::Start { message_id: None },
        Chunk::StartStep,
        Chunk::ToolInputAvailable {
            tool_call_id: text("call_1"),
            tool_name: text("list_files"),
            input: json!({"path": "/"}),
            dynamic: None,
        },
        Chunk::ToolApprovalRequest {
            approval_id: text("aitxt-tpMcZYrjAa0on2nv5YOYj8WU"),
            tool_call_id: text("call_1"),
        },
        Chunk::FinishStep,
        Chunk::Finish { finish_reason: Some(FinishReason::ToolCalls) },
    ];
    assert_eq!(our_frames(&turn1), captured_frames(TURN1_RESPONSE));
    let turn2 = [
        Chunk::Start { message_id: None },
        Chunk::ToolOutputAvailable {
            tool_call_id: text("call_1"),
            output: json!({"files": ["a.txt"], "path": "/"}),
            dynamic: None,
        },
        Chunk::StartStep,
        Chunk::TextStart { id: text("txt-0") },
        Chunk::TextDelta { id: text("txt-0"), delta: text("Done: ") },
        Chunk::TextDelta { id: text("txt-0"), delta: text("ok") },
        Chunk::TextEnd { id: text("txt-0") },
        Chunk::FinishStep,
        Chunk::Finish { finish_reason: Some(FinishReason::Stop) },
    ];
    assert_eq!(our_frames(&turn2), captured_frames(TURN2_RESPONSE));
}

// ---- Posts ----

fn post(body: Value) -> Result<ChatPost, PostError> {
    parse_chat_post(body.to_string().as_bytes())
}

fn user(parts: Value) -> Value {
    json!({"id": "u1", "role": "user", "parts": parts})
}

fn responded(kind: &str, call: &str, approval: Value) -> Value {
    json!({
        "type": kind,
        "toolName": "files_delete",
        "toolCallId": call,
        "state": "approval-responded",
        "input": {"path": "/old.txt"},
        "approval": approval,
    })
}

fn answer(approval_id: &str, call: &str, approved: bool, reason: Option<&str>) -> ApprovalResponse {
    ApprovalResponse {
        approval_id: text(approval_id),
        tool_call_id: text(call),
        approved,
        reason: reason.map(text),
    }
}

#[test]
fn the_captured_approval_post_reads_as_one_approval() {
    let parsed = parse_chat_post(TURN2_REQUEST.as_bytes()).unwrap();
    assert_eq!(
        parsed,
        ChatPost {
            conversation_id: text("chat-1"),
            message_id: None,
            input: PostInput::Approvals(vec![answer(
                "aitxt-EO0VtbN2Eg8Z6S87peSqWubX",
                "call_1",
                true,
                None
            )]),
        }
    );
}

#[test]
fn a_user_message_is_its_text_parts_joined() {
    let parts = json!([
        {"type": "text", "text": "first"},
        {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,AAAA"},
        {"type": "text", "text": "second"},
    ]);
    let body = json!({"id": "chat-1", "messages": [user(parts)], "trigger": "submit-message"});
    let parsed = post(body).unwrap();
    assert_eq!(parsed.conversation_id, "chat-1");
    assert_eq!(parsed.message_id, None);
    assert_eq!(parsed.input, PostInput::UserText(text("first\n\nsecond")));
}

#[test]
fn the_trimmed_form_carries_only_the_last_message() {
    let body = json!({
        "id": "chat-1",
        "message": user(json!([{"type": "text", "text": "hello"}])),
        "trigger": "submit-message",
        "messageId": "m4",
    });
    let parsed = post(body).unwrap();
    assert_eq!(parsed.message_id.as_deref(), Some("m4"));
    assert_eq!(parsed.input, PostInput::UserText(text("hello")));
    // No trigger at all is a submission too.
    let body = json!({"id": "chat-1", "message": user(json!([{"type": "text", "text": "hi"}]))});
    assert_eq!(post(body).unwrap().input, PostInput::UserText(text("hi")));
}

#[test]
fn only_the_last_message_is_read() {
    let body = json!({
        "id": "chat-1",
        "messages": [
            42,
            {"role": "system", "parts": "nonsense"},
            user(json!([{"type": "text", "text": "now"}])),
        ],
        "trigger": "submit-message",
        "somethingElse": {"ignored": true},
    });
    assert_eq!(post(body).unwrap().input, PostInput::UserText(text("now")));
}

#[test]
fn every_answered_tool_part_is_an_approval_and_others_are_skipped() {
    let assistant = json!({
        "id": "m2",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {"type": "text", "text": "I need two approvals.", "state": "done"},
            {"type": "dynamic-tool", "toolName": "files_list", "toolCallId": "c0",
             "state": "output-available", "input": {}, "output": []},
            responded("dynamic-tool", "c1", json!({"id": "a1", "approved": true})),
            responded(
                "tool-mail_send",
                "c2",
                json!({"id": "a2", "approved": false, "reason": "Not now"}),
            ),
            {"type": "dynamic-tool", "toolName": "files_delete", "toolCallId": "c3",
             "state": "approval-requested", "input": {}, "approval": {"id": "a3"}},
            responded("dynamic-tool", "c4", json!({"id": "a4"})),
            responded("text", "c5", json!({"id": "a5", "approved": true})),
        ],
    });
    let body = json!({
        "id": "chat-1",
        "messages": [assistant],
        "trigger": "submit-message",
        "messageId": "m2",
    });
    let parsed = post(body).unwrap();
    assert_eq!(parsed.message_id.as_deref(), Some("m2"));
    assert_eq!(
        parsed.input,
        PostInput::Approvals(vec![
            answer("a1", "c1", true, None),
            answer("a2", "c2", false, Some("Not now")),
        ])
    );
}

#[test]
fn limits_hold_at_their_exact_edges() {
    let long = "x".repeat(TEXT_BYTES_MAX);
    let body = |parts: Value| json!({"id": "c", "messages": [user(parts)]});
    assert!(post(body(json!([{"type": "text", "text": long}]))).is_ok());
    let longer = format!("{long}y");
    assert_eq!(post(body(json!([{"type": "text", "text": longer}]))), Err(PostError::TextTooLong));
    // The blank line joining two parts counts.
    let half = "x".repeat(TEXT_BYTES_MAX / 2 - 1);
    let two = json!([{"type": "text", "text": half}, {"type": "text", "text": format!("{half}z")}]);
    assert_eq!(post(body(two)), Err(PostError::TextTooLong));

    let approvals = |count: usize| {
        let parts: Vec<Value> = (0..count)
            .map(|n| {
                responded(
                    "dynamic-tool",
                    &format!("c{n}"),
                    json!({"id": format!("a{n}"), "approved": true}),
                )
            })
            .collect();
        json!({"id": "c", "message": {"role": "assistant", "parts": parts}})
    };
    let Ok(ChatPost { input: PostInput::Approvals(answers), .. }) = post(approvals(APPROVALS_MAX))
    else {
        panic!("{APPROVALS_MAX} approvals are accepted")
    };
    assert_eq!(answers.len(), APPROVALS_MAX);
    assert_eq!(post(approvals(APPROVALS_MAX + 1)), Err(PostError::TooManyApprovals));

    let reason = "r".repeat(TEXT_BYTES_MAX + 1);
    let part =
        responded("dynamic-tool", "c1", json!({"id": "a1", "approved": false, "reason": reason}));
    let body = json!({"id": "c", "message": {"role": "assistant", "parts": [part]}});
    assert_eq!(post(body), Err(PostError::TextTooLong));

    let hi = user(json!([{"type": "text", "text": "hi"}]));
    assert!(post(json!({"id": "i".repeat(ID_BYTES_MAX), "message": hi})).is_ok());
}

#[test]
fn each_refusal_has_its_error() {
    let hello = || user(json!([{"type": "text", "text": "hello"}]));
    let cases: Vec<(Value, PostError)> = vec![
        (json!([]), PostError::Unreadable),
        (json!({"id": "c", "messages": {"0": hello()}}), PostError::Unreadable),
        (json!({"id": "c", "message": "hello"}), PostError::Unreadable),
        (json!({"id": "c", "message": {"role": "user", "parts": "hello"}}), PostError::Unreadable),
        (json!({"id": 7, "messages": [hello()]}), PostError::Unreadable),
        (json!({"id": "c", "trigger": 1, "messages": [hello()]}), PostError::Unreadable),
        (json!({"messages": [hello()]}), PostError::ConversationId),
        (json!({"id": "", "messages": [hello()]}), PostError::ConversationId),
        (json!({"id": "a b", "messages": [hello()]}), PostError::ConversationId),
        (json!({"id": "café", "messages": [hello()]}), PostError::ConversationId),
        (json!({"id": "a\u{7f}", "messages": [hello()]}), PostError::ConversationId),
        (
            json!({"id": "i".repeat(ID_BYTES_MAX + 1), "messages": [hello()]}),
            PostError::ConversationId,
        ),
        (json!({"id": "c", "messageId": "m 1", "messages": [hello()]}), PostError::MessageId),
        (json!({"id": "c", "messages": []}), PostError::NoMessage),
        (json!({"id": "c"}), PostError::NoMessage),
        (
            json!({"id": "c", "messages": [hello()], "trigger": "regenerate-message"}),
            PostError::Regenerate,
        ),
        (
            json!({"id": "c", "messages": [hello()], "trigger": "resume-stream"}),
            PostError::UnknownTrigger,
        ),
        (
            json!({"id": "c", "message": {"role": "system", "parts": [{"type": "text"}]}}),
            PostError::UnknownRole,
        ),
        (
            json!({"id": "c", "message": {"parts": [{"type": "text", "text": "hi"}]}}),
            PostError::UnknownRole,
        ),
        (
            json!({"id": "c", "message": user(json!([{"type": "file", "url": "x"}]))}),
            PostError::EmptyText,
        ),
        (
            json!({"id": "c", "message": user(json!([{"type": "text", "text": " \n\t"}]))}),
            PostError::EmptyText,
        ),
        (
            json!({"id": "c", "message": {"role": "assistant", "parts": [{"type": "step-start"}]}}),
            PostError::NoApprovals,
        ),
    ];
    for (body, expected) in cases {
        assert_eq!(post(body.clone()), Err(expected), "{body}");
    }
    assert_eq!(parse_chat_post(b"not json"), Err(PostError::Unreadable));
    assert_eq!(parse_chat_post(b""), Err(PostError::Unreadable));
}

#[test]
fn every_refusal_tells_the_user_what_to_do() {
    let errors = [
        PostError::Unreadable,
        PostError::ConversationId,
        PostError::MessageId,
        PostError::NoMessage,
        PostError::Regenerate,
        PostError::UnknownTrigger,
        PostError::UnknownRole,
        PostError::EmptyText,
        PostError::TextTooLong,
        PostError::NoApprovals,
        PostError::TooManyApprovals,
    ];
    for error in errors {
        let message = error.to_string();
        let sentences = message.split(". ").count();
        assert!(sentences >= 2, "what happened, then what to do: {message}");
        assert!(message.ends_with('.'), "{message}");
    }
    let regenerate = PostError::Regenerate.to_string();
    assert!(regenerate.contains("not supported yet") && regenerate.contains("again"));
    assert!(PostError::TextTooLong.to_string().contains(&TEXT_BYTES_MAX.to_string()));
    assert!(PostError::TooManyApprovals.to_string().contains(&APPROVALS_MAX.to_string()));
}

/// JSON whose keys and strings are mostly those the parser looks for, so
/// random values reach its deep branches.
fn arb_json() -> impl Strategy<Value = Value> {
    let words = prop::sample::select(vec![
        "id",
        "messages",
        "message",
        "trigger",
        "messageId",
        "role",
        "parts",
        "type",
        "text",
        "state",
        "approval",
        "approved",
        "reason",
        "toolCallId",
        "user",
        "assistant",
        "system",
        "submit-message",
        "regenerate-message",
        "dynamic-tool",
        "tool-x",
        "approval-responded",
        "",
        "chat-1",
        "a b",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        words.clone().prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 64, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map(words.clone().prop_map(str::to_owned), inner, 0..8)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// What an accepted post promises, checked on every one the properties find.
fn check_promises(parsed: &ChatPost) {
    let id = &parsed.conversation_id;
    assert!(!id.is_empty() && id.len() <= ID_BYTES_MAX, "{id:?}");
    assert!(id.bytes().all(|byte| byte.is_ascii_graphic()), "{id:?}");
    match &parsed.input {
        PostInput::UserText(text) => {
            assert!(!text.trim().is_empty());
            assert!(text.len() <= TEXT_BYTES_MAX);
        }
        PostInput::Approvals(answers) => {
            assert!(!answers.is_empty());
            assert!(answers.len() <= APPROVALS_MAX);
        }
    }
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(body in prop::collection::vec(any::<u8>(), 0..512)) {
        if let Ok(parsed) = parse_chat_post(&body) {
            check_promises(&parsed);
        }
    }

    #[test]
    fn arbitrary_json_never_panics(value in arb_json()) {
        if let Ok(parsed) = parse_chat_post(value.to_string().as_bytes()) {
            check_promises(&parsed);
        }
    }

    #[test]
    fn arbitrary_messages_in_a_valid_post_never_panic(
        message in arb_json(),
        trimmed in any::<bool>(),
    ) {
        let body = if trimmed {
            json!({"id": "chat-1", "message": message})
        } else {
            json!({"id": "chat-1", "messages": [message], "trigger": "submit-message"})
        };
        if let Ok(parsed) = parse_chat_post(body.to_string().as_bytes()) {
            check_promises(&parsed);
        }
    }
}

#[test]
fn deep_nesting_is_refused_not_a_stack_overflow() {
    let body = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(parse_chat_post(body.as_bytes()), Err(PostError::Unreadable));
}

// ---- History ----

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall { id: text(id), name: text(name), arguments: text(arguments) }
}

fn said(text: &str, tool_calls: Vec<ToolCall>) -> Entry {
    Entry::Assistant { text: text.to_owned(), tool_calls }
}

fn asked(text: &str) -> Entry {
    Entry::User { text: text.to_owned() }
}

fn result(call: &str, state: ToolState, content: &str, output: Value) -> Entry {
    Entry::Tool(ToolEntry {
        tool_call_id: text(call),
        tool: text("some_tool"),
        content: text(content),
        output,
        state,
    })
}

/// The approval stored for `tool_call`, as the agent would store it.
fn approval(approval_id: &str, tool_call: &ToolCall, decision: Option<Decision>) -> Approval {
    Approval {
        approval_id: text(approval_id),
        conversation_id: text("chat-1"),
        tool_call_id: tool_call.id.clone(),
        tool: tool_call.name.clone(),
        arguments: tool_call.arguments.clone(),
        arguments_hash: crate::store::arguments_hash(&tool_call.arguments),
        decision,
    }
}

fn numbered(entries: Vec<Entry>) -> Vec<(i64, Entry)> {
    (1..).zip(entries).collect()
}

#[test]
fn a_conversation_reads_as_the_messages_use_chat_holds() {
    let events = json!({"events": [{"title": "Standup", "start": "2026-11-30T10:00"}]});
    let delete = call("c2", "files_delete", r#"{"path":"/old.txt"}"#);
    let mail = call("c3", "mail_send", r#"{"to":"bob"}"#);
    let approvals = [approval("a2", &delete, Some(Decision::Denied)), approval("a3", &mail, None)];
    let entries = numbered(vec![
        asked("What is on my calendar today?"),
        said("", vec![call("c1", "calendar_events", r#"{"day":"2026-11-30"}"#)]),
        result("c1", ToolState::Output, "Standup at 10:00.", events.clone()),
        said("One meeting: Standup at 10:00.", vec![]),
        asked("Delete old.txt"),
        said("", vec![delete]),
        result("c2", ToolState::Denied, "The user denied this action.", Value::Null),
        said("I left it alone.", vec![]),
        asked("Then mail Bob"),
        said("I need your approval.", vec![mail]),
    ]);
    let expected = json!([
        {"id": "m1", "role": "user", "parts": [
            {"type": "text", "text": "What is on my calendar today?"},
        ]},
        {"id": "m2", "role": "assistant", "parts": [
            {"type": "step-start"},
            {"type": "dynamic-tool", "toolName": "calendar_events", "toolCallId": "c1",
             "state": "output-available", "input": {"day": "2026-11-30"}, "output": events},
            {"type": "step-start"},
            {"type": "text", "text": "One meeting: Standup at 10:00.", "state": "done"},
        ]},
        {"id": "m5", "role": "user", "parts": [{"type": "text", "text": "Delete old.txt"}]},
        {"id": "m6", "role": "assistant", "parts": [
            {"type": "step-start"},
            {"type": "dynamic-tool", "toolName": "files_delete", "toolCallId": "c2",
             "state": "output-denied", "input": {"path": "/old.txt"},
             "approval": {"id": "a2", "approved": false}},
            {"type": "step-start"},
            {"type": "text", "text": "I left it alone.", "state": "done"},
        ]},
        {"id": "m9", "role": "user", "parts": [{"type": "text", "text": "Then mail Bob"}]},
        {"id": "m10", "role": "assistant", "parts": [
            {"type": "step-start"},
            {"type": "text", "text": "I need your approval.", "state": "done"},
            {"type": "dynamic-tool", "toolName": "mail_send", "toolCallId": "c3",
             "state": "approval-requested", "input": {"to": "bob"}, "approval": {"id": "a3"}},
        ]},
    ]);
    assert_eq!(Value::Array(ui_messages(&entries, &approvals)), expected);
}

/// The one tool part the history gives for `tool_call`, given what followed
/// it and the approvals.
fn tool_part_for(tool_call: ToolCall, after: Vec<Entry>, approvals: &[Approval]) -> Value {
    let mut entries = vec![asked("go"), said("", vec![tool_call])];
    entries.extend(after);
    let messages = ui_messages(&numbered(entries), approvals);
    assert_eq!(messages.len(), 2);
    messages[1]["parts"][1].clone()
}

#[test]
fn each_call_state_has_its_part() {
    let delete = || call("c1", "files_delete", r#"{"path":"/a"}"#);
    let approved = [approval("a1", &delete(), Some(Decision::Approved))];
    let base = json!({
        "type": "dynamic-tool",
        "toolName": "files_delete",
        "toolCallId": "c1",
        "input": {"path": "/a"},
    });
    let with = |fields: Value| {
        let mut part = base.clone();
        part.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        part
    };
    let cases = [
        // An approved call that ran keeps its approval, as the client's part does.
        (
            vec![result("c1", ToolState::Output, "Deleted.", json!({"deleted": "/a"}))],
            approved.to_vec(),
            with(json!({"state": "output-available", "output": {"deleted": "/a"},
                        "approval": {"id": "a1", "approved": true}})),
        ),
        (
            vec![result("c1", ToolState::Error, "No such file. Check the path.", Value::Null)],
            vec![],
            with(json!({"state": "output-error", "errorText": "No such file. Check the path."})),
        ),
        (
            vec![result("c1", ToolState::Error, "Refused.", Value::Null)],
            approved.to_vec(),
            with(json!({"state": "output-error", "errorText": "Refused.",
                        "approval": {"id": "a1", "approved": true}})),
        ),
        // Denied without a stored approval: the schema still wants one.
        (
            vec![result("c1", ToolState::Denied, "Denied.", Value::Null)],
            vec![],
            with(json!({"state": "output-denied", "approval": {"id": "c1", "approved": false}})),
        ),
        (
            vec![],
            vec![approval("a1", &delete(), Some(Decision::Denied))],
            with(json!({"state": "output-denied", "approval": {"id": "a1", "approved": false}})),
        ),
        (
            vec![],
            vec![],
            with(json!({"state": "output-error", "errorText": INTERRUPTED_CALL_TEXT})),
        ),
        (
            vec![],
            approved.to_vec(),
            with(json!({"state": "output-error", "errorText": INTERRUPTED_CALL_TEXT,
                        "approval": {"id": "a1", "approved": true}})),
        ),
    ];
    for (after, approvals, expected) in cases {
        assert_eq!(
            tool_part_for(delete(), after.clone(), &approvals),
            expected,
            "{after:?} {approvals:?}"
        );
    }
}

#[test]
fn arguments_that_do_not_parse_are_shown_as_their_text() {
    let part = tool_part_for(call("c1", "files_list", "{\"path\": "), vec![], &[]);
    assert_eq!(part["input"], json!("{\"path\": "));
}

#[test]
fn a_reused_call_id_reads_each_step_own_result() {
    let list = call("call_0", "files_list", "{}");
    let delete = call("call_0", "files_delete", "{}");
    let entries = numbered(vec![
        asked("go"),
        said("", vec![list.clone()]),
        result("call_0", ToolState::Output, "first", json!("first")),
        said("", vec![list.clone()]),
        result("call_0", ToolState::Error, "second", Value::Null),
        said("", vec![delete.clone()]),
    ]);
    let approvals =
        [approval("old", &list, Some(Decision::Approved)), approval("new", &delete, None)];
    let messages = ui_messages(&entries, &approvals);
    let parts = messages[1]["parts"].as_array().unwrap();
    let states: Vec<&str> = parts.iter().filter_map(|part| part["state"].as_str()).collect();
    assert_eq!(states, ["output-available", "output-error", "approval-requested"]);
    assert_eq!(parts[1]["output"], "first");
    assert_eq!(parts[1]["approval"], json!({"id": "old", "approved": true}));
    assert_eq!(parts[5]["approval"], json!({"id": "new"}));
}

#[test]
fn tool_entries_without_their_call_are_skipped() {
    let entries = numbered(vec![
        result("c9", ToolState::Output, "orphan", Value::Null),
        asked("hi"),
        said("Hello.", vec![]),
    ]);
    let messages = ui_messages(&entries, &[]);
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1]["id"], "m3");
    assert!(ui_messages(&[], &[]).is_empty());
}
