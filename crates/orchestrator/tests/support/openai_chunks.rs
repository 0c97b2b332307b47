//! OpenAI's streamed chunk shapes, as `client.chat.completions.create(stream=True)`
//! receives them: the answers both the stream assembly's unit tests
//! (`src/model/stream/tests.rs`) and the client's socket tests
//! (`tests/model_client.rs`) are built from, written once so the two agree
//! on what OpenAI sends.

use serde_json::{Value, json};

/// A chunk the way OpenAI writes it, around `choices`.
pub fn chunk(choices: Value) -> String {
    let chunk = json!({
        "id": "chatcmpl-BxZ9", "object": "chat.completion.chunk", "created": 1767225600,
        "model": "gpt-4.1-mini-2025-04-14", "service_tier": "default",
        "system_fingerprint": "fp_6f2eabb9a5", "choices": choices, "usage": null,
        "obfuscation": "kV3",
    });
    format!("data: {chunk}\n\n")
}

/// One delta of the first choice.
pub fn delta(delta: Value) -> String {
    chunk(json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": null}]))
}

/// The first choice's finish.
pub fn finish(reason: &str) -> String {
    chunk(json!([{"index": 0, "delta": {}, "logprobs": null, "finish_reason": reason}]))
}

/// The usage chunk `stream_options.include_usage` adds after the finish.
pub fn usage(prompt_tokens: u64, completion_tokens: u64) -> String {
    let chunk = json!({
        "id": "chatcmpl-BxZ9", "object": "chat.completion.chunk", "created": 1767225600,
        "model": "gpt-4.1-mini-2025-04-14", "choices": [],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}},
    });
    format!("data: {chunk}\n\n")
}

/// A whole text answer, event by event: the role, one delta per piece of
/// `text`, the finish, the usage and the end.
pub fn text_answer(text: &[&str], prompt_tokens: u64, completion_tokens: u64) -> Vec<String> {
    let mut events = vec![delta(json!({"role": "assistant", "content": "", "refusal": null}))];
    events.extend(text.iter().map(|piece| delta(json!({"content": piece}))));
    events.extend([finish("stop"), usage(prompt_tokens, completion_tokens), DONE.to_owned()]);
    events
}

/// The stream's last event.
pub const DONE: &str = "data: [DONE]\n\n";
