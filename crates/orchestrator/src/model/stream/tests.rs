//! Tests of answer assembly: OpenAI's exact chunk shapes, each provider
//! quirk the module accepts, each way a stream can be cut, and a property
//! that network chunking never changes the events.

use proptest::prelude::*;
use serde_json::json;

use super::*;

#[path = "../../../tests/support/openai_chunks.rs"]
mod openai_chunks;
use openai_chunks::{DONE, chunk, delta, finish, text_answer, usage};

fn openai_tool_call_stream() -> String {
    [
        delta(json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
            "id": "call_Ab1", "type": "function",
            "function": {"name": "files_search", "arguments": ""}}], "refusal": null})),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"na"}}]})),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "me\": \"rapport\"}"}}]})),
        delta(json!({"tool_calls": [{"index": 1, "id": "call_Cd2", "type": "function",
            "function": {"name": "calendar_events", "arguments": ""}}]})),
        delta(json!({"tool_calls": [{"index": 1, "function": {"arguments": "{\"from\": \"2026-01-01\"}"}}]})),
        finish("tool_calls"),
        usage(120, 35),
        DONE.to_owned(),
    ]
    .concat()
}

fn openai_text_stream() -> String {
    text_answer(&["Bonjour", ", où ?"], 12, 4).concat()
}

fn decode(chunks: &[&[u8]]) -> Result<Vec<ModelEvent>, ModelError> {
    let mut decoder = Decoder::new();
    let mut out = VecDeque::new();
    for chunk in chunks {
        decoder.push(chunk, &mut out)?;
    }
    decoder.end(&mut out)?;
    Ok(out.into())
}

fn check(stream: &str, expected: &[ModelEvent]) {
    assert_eq!(decode(&[stream.as_bytes()]).unwrap(), expected);
}

fn check_error(stream: &str, expected: fn(&ModelError) -> bool, detail_has: &str) {
    let error = decode(&[stream.as_bytes()]).unwrap_err();
    assert!(expected(&error), "{error:?}");
    assert!(error.detail().contains(detail_has), "{:?} lacks {detail_has:?}", error.detail());
}

fn call(id: &str, name: &str, arguments: &str) -> ModelEvent {
    ModelEvent::ToolCall(ToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        arguments: arguments.to_owned(),
    })
}

fn finished(reason: FinishReason) -> ModelEvent {
    ModelEvent::Finish { reason }
}

fn text(text: &str) -> ModelEvent {
    ModelEvent::TextDelta(text.to_owned())
}

fn used(prompt_tokens: u64, completion_tokens: u64) -> ModelEvent {
    ModelEvent::Usage { prompt_tokens, completion_tokens }
}

#[test]
fn openai_text() {
    check(
        &openai_text_stream(),
        &[text("Bonjour"), text(", où ?"), finished(FinishReason::Stop), used(12, 4)],
    );
}

#[test]
fn openai_parallel_tool_calls() {
    check(
        &openai_tool_call_stream(),
        &[
            call("call_Ab1", "files_search", r#"{"name": "rapport"}"#),
            call("call_Cd2", "calendar_events", r#"{"from": "2026-01-01"}"#),
            finished(FinishReason::ToolCalls),
            used(120, 35),
        ],
    );
}

#[test]
fn text_before_a_tool_call() {
    let stream = [
        delta(json!({"role": "assistant", "content": "Je cherche."})),
        delta(json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "files_search", "arguments": "{}"}}]})),
        finish("tool_calls"),
        DONE.to_owned(),
    ]
    .concat();
    check(
        &stream,
        &[
            text("Je cherche."),
            call("call_1", "files_search", "{}"),
            finished(FinishReason::ToolCalls),
        ],
    );
}

#[test]
fn whole_calls_without_index_follow_one_another() {
    // Ollama's shape: each delta is one complete call, no index.
    let stream = [
        delta(json!({"role": "assistant", "content": "", "tool_calls": [{"id": "call_a",
            "function": {"name": "f", "arguments": "{\"x\":1}"}}]})),
        delta(
            json!({"tool_calls": [{"id": "call_b", "function": {"name": "g", "arguments": "{}"}}]}),
        ),
        finish("tool_calls"),
        DONE.to_owned(),
    ]
    .concat();
    check(
        &stream,
        &[
            call("call_a", "f", r#"{"x":1}"#),
            call("call_b", "g", "{}"),
            finished(FinishReason::ToolCalls),
        ],
    );
    // Neither index nor id: a new name after complete arguments is a new call.
    let stream = [
        delta(json!({"tool_calls": [{"function": {"name": "f", "arguments": "{\"x\""}}]})),
        delta(json!({"tool_calls": [{"function": {"arguments": ":1}"}}]})),
        delta(json!({"tool_calls": [{"function": {"name": "g", "arguments": "{}"}}]})),
        finish("tool_calls"),
    ]
    .concat();
    let events = decode(&[stream.as_bytes()]).unwrap();
    let calls: Vec<(&str, &str)> = events
        .iter()
        .filter_map(|event| match event {
            ModelEvent::ToolCall(call) => Some((call.name.as_str(), call.arguments.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(calls, [("f", r#"{"x":1}"#), ("g", "{}")]);
}

#[test]
fn a_missing_id_is_generated_and_unique() {
    let stream = [
        delta(json!({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": "{}"}}]})),
        delta(json!({"tool_calls": [{"index": 1, "function": {"name": "f", "arguments": "{}"}}]})),
        finish("tool_calls"),
        DONE.to_owned(),
    ]
    .concat();
    let events = decode(&[stream.as_bytes()]).unwrap();
    let ids: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            ModelEvent::ToolCall(call) => Some(call.id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.iter().all(|id| id.starts_with("call_") && id.len() > 10), "{ids:?}");
    assert_ne!(ids[0], ids[1]);
}

#[test]
fn a_repeated_name_is_not_doubled() {
    let stream = [
        delta(json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "files_read", "arguments": "{\"p"}}]})),
        delta(json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "files_read", "arguments": "\":1}"}}]})),
        finish("tool_calls"),
    ]
    .concat();
    check(&stream, &[call("c", "files_read", r#"{"p":1}"#), finished(FinishReason::ToolCalls)]);
}

#[test]
fn a_name_in_fragments_is_joined() {
    let stream = [
        delta(json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "files_"}}]})),
        delta(
            json!({"tool_calls": [{"index": 0, "function": {"name": "read", "arguments": "{}"}}]}),
        ),
        finish("tool_calls"),
    ]
    .concat();
    check(&stream, &[call("c", "files_read", "{}"), finished(FinishReason::ToolCalls)]);
}

#[test]
fn arguments_as_an_object_become_json_text() {
    let stream = [
        delta(json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": {"path": "/a"}}}]})),
        finish("tool_calls"),
    ]
    .concat();
    check(&stream, &[call("c", "f", r#"{"path":"/a"}"#), finished(FinishReason::ToolCalls)]);
}

#[test]
fn empty_arguments_are_an_empty_object() {
    let stream = [
        delta(json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": ""}}]})),
        finish("tool_calls"),
    ]
    .concat();
    check(&stream, &[call("c", "f", "{}"), finished(FinishReason::ToolCalls)]);
}

#[test]
fn stop_with_tool_calls_is_reported_as_tool_calls() {
    let stream = [
        delta(json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}]})),
        finish("stop"),
        DONE.to_owned(),
    ]
    .concat();
    check(&stream, &[call("c", "f", "{}"), finished(FinishReason::ToolCalls)]);
}

#[test]
fn other_finish_reasons_are_kept() {
    let stream = [delta(json!({"content": "a"})), finish("length"), DONE.to_owned()].concat();
    check(&stream, &[text("a"), finished(FinishReason::Length)]);
    let stream = [delta(json!({"content": "a"})), finish("weird"), DONE.to_owned()].concat();
    check(&stream, &[text("a"), finished(FinishReason::Other("weird".to_owned()))]);
}

#[test]
fn done_without_a_finish_reason_finishes() {
    let stream = [delta(json!({"content": "a"})), DONE.to_owned()].concat();
    check(&stream, &[text("a"), finished(FinishReason::Stop)]);
    let stream = [
        delta(json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}]})),
        DONE.to_owned(),
    ]
    .concat();
    check(&stream, &[call("c", "f", "{}"), finished(FinishReason::ToolCalls)]);
}

#[test]
fn a_finish_reason_without_done_finishes() {
    let stream = [delta(json!({"content": "a"})), finish("stop"), usage(1, 2)].concat();
    check(&stream, &[text("a"), finished(FinishReason::Stop), used(1, 2)]);
}

#[test]
fn usage_is_reported_once_with_its_last_values() {
    // vLLM's continuous usage stats put usage in every chunk.
    let stream = [
        chunk(json!([{"index": 0, "delta": {"content": "a"}, "finish_reason": null}]))
            .replace("\"usage\":null", "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}"),
        chunk(json!([{"index": 0, "delta": {"content": "b"}, "finish_reason": "stop"}]))
            .replace("\"usage\":null", "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}"),
        DONE.to_owned(),
    ]
    .concat();
    check(&stream, &[text("a"), text("b"), finished(FinishReason::Stop), used(5, 2)]);
}

#[test]
fn content_in_the_finishing_chunk_comes_before_the_finish() {
    let stream = [
        chunk(json!([{"index": 0, "delta": {"content": "fin"}, "finish_reason": "stop"}])),
        DONE.to_owned(),
    ]
    .concat();
    check(&stream, &[text("fin"), finished(FinishReason::Stop)]);
}

#[test]
fn nothing_after_done_is_read() {
    let stream =
        [openai_text_stream(), delta(json!({"content": "late"})), "garbage\n\n".into()].concat();
    check(&stream, &[text("Bonjour"), text(", où ?"), finished(FinishReason::Stop), used(12, 4)]);
}

#[test]
fn a_stream_cut_in_the_text_is_an_error() {
    let stream =
        [delta(json!({"role": "assistant", "content": ""})), delta(json!({"content": "Bonj"}))]
            .concat();
    check_error(&stream, |e| matches!(e, ModelError::StreamCut { .. }), "middle of the text");
}

#[test]
fn a_stream_cut_in_a_tool_call_is_an_error() {
    let stream = openai_tool_call_stream();
    let cut = stream.find("\"index\":1").unwrap();
    let cut = stream[..cut].rfind("\n\n").unwrap() + 2;
    check_error(&stream[..cut], |e| matches!(e, ModelError::StreamCut { .. }), "tool call");
}

#[test]
fn an_empty_stream_is_an_error() {
    check_error("", |e| matches!(e, ModelError::StreamCut { .. }), "before any content");
    check_error(": ping\n\n", |e| matches!(e, ModelError::StreamCut { .. }), "before any content");
}

#[test]
fn a_chunk_that_is_not_json_is_an_error() {
    check_error(
        "data: {\"choices\": [\n\n",
        |e| matches!(e, ModelError::BadResponse { .. }),
        "not JSON",
    );
}

#[test]
fn an_error_in_the_stream_is_the_providers() {
    let stream = [
        delta(json!({"content": "a"})),
        "data: {\"error\": {\"message\": \"The server had an error\", \"type\": \"server_error\"}}\n\n".to_owned(),
    ]
    .concat();
    check_error(&stream, |e| matches!(e, ModelError::Provider { .. }), "The server had an error");
    let vllm = r#"data: {"object": "error", "message": "context too long", "code": 400}"#;
    check_error(
        &format!("{vllm}\n\n"),
        |e| matches!(e, ModelError::Provider { .. }),
        "context too long",
    );
    let named = "event: error\ndata: {\"message\": \"overloaded\"}\n\n";
    check_error(named, |e| matches!(e, ModelError::Provider { .. }), "overloaded");
}

#[test]
fn a_tool_call_without_a_name_is_an_error() {
    let stream = [
        delta(json!({"tool_calls": [{"index": 0, "id": "c", "function": {"arguments": "{}"}}]})),
        finish("tool_calls"),
    ]
    .concat();
    check_error(&stream, |e| matches!(e, ModelError::BadResponse { .. }), "no function name");
}

#[test]
fn too_many_tool_calls_are_refused() {
    let calls: Vec<Value> = (0..=TOOL_CALLS_MAX as u64)
        .map(|index| json!({"index": index, "id": format!("c{index}"), "function": {"name": "f", "arguments": "{}"}}))
        .collect();
    let stream = [delta(json!({"tool_calls": calls})), finish("tool_calls")].concat();
    check_error(&stream, |e| matches!(e, ModelError::TooLarge { .. }), "tool calls");
}

#[test]
fn a_non_streamed_answer_gives_the_same_events() {
    let answer = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1767225600, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
            "tool_calls": [
                {"id": "call_Ab1", "type": "function", "function": {"name": "files_search", "arguments": "{\"name\": \"rapport\"}"}},
                {"id": "call_Cd2", "type": "function", "function": {"name": "calendar_events", "arguments": "{\"from\": \"2026-01-01\"}"}}
            ]}, "logprobs": null, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 35, "total_tokens": 155},
    });
    let streamed = decode(&[openai_tool_call_stream().as_bytes()]).unwrap();
    assert_eq!(Vec::from(Assembler::from_completion(&answer).unwrap()), streamed);

    // llama.cpp: calls without id, arguments already a string.
    let answer = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": "",
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}},
                       {"type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]});
    let events = Vec::from(Assembler::from_completion(&answer).unwrap());
    assert_eq!(events.len(), 3, "two calls with the same name stay two calls: {events:?}");

    let answer = json!({"choices": [{"message": {"role": "assistant", "content": "Bonjour"}, "finish_reason": "stop"}]});
    assert_eq!(
        Vec::from(Assembler::from_completion(&answer).unwrap()),
        [text("Bonjour"), finished(FinishReason::Stop)]
    );
}

#[test]
fn a_non_streamed_error_or_empty_answer_is_refused() {
    let error =
        Assembler::from_completion(&json!({"error": {"message": "bad model"}})).unwrap_err();
    assert!(matches!(error, ModelError::Provider { .. }), "{error:?}");
    let error = Assembler::from_completion(&json!({"choices": []})).unwrap_err();
    assert!(matches!(error, ModelError::BadResponse { .. }), "{error:?}");
}

proptest! {
    #[test]
    fn any_split_gives_the_same_events(
        which in 0..3usize,
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
        crlf in any::<bool>(),
    ) {
        let streams = [
            openai_text_stream(),
            openai_tool_call_stream(),
            // Two answers back to back: the second is after [DONE] and never read.
            openai_text_stream() + &openai_tool_call_stream(),
        ];
        let mut stream = streams[which].clone();
        if crlf {
            stream = stream.replace("\n", "\r\n");
        }
        let bytes = stream.as_bytes();
        let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
        cuts.extend([0, bytes.len()]);
        cuts.sort();
        let chunks: Vec<&[u8]> = cuts.windows(2).map(|pair| &bytes[pair[0]..pair[1]]).collect();
        let whole = decode(&[bytes]).unwrap();
        prop_assert!(whole.len() >= 4);
        prop_assert_eq!(decode(&chunks).unwrap(), whole);
    }
}
