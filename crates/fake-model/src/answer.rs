//! A decided answer (text, tool calls or both) written the way OpenAI
//! writes it: one `chat.completion` object, or a stream of
//! `chat.completion.chunk` events ending in `data: [DONE]`.
//!
//! The stream is cut into many small deltas on purpose — one per word of
//! text, a few characters of tool-call arguments at a time — because a
//! client that only works when a whole value arrives in one delta is the
//! bug this fake exists to catch. Frames are data (a list with a kind each),
//! so a fault can cut the list at a chosen place and tests can look at it.

use crate::faults::Cut;
use serde_json::{Value, json};

/// OpenAI sends one; some clients log it.
pub const SYSTEM_FINGERPRINT: &str = "fp_tamebi_fake";

/// How many characters of tool-call arguments go in one delta.
pub const ARGUMENTS_FRAGMENT_CHARS: usize = 8;

/// A text piece longer than this is split, so no single delta carries a
/// long word whole.
pub const TEXT_PIECE_CHARS_MAX: usize = 24;

/// What the model says on one turn.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reply {
    pub text: Option<String>,
    pub tool_calls: Vec<ReplyToolCall>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyToolCall {
    /// Given by the script, or generated when the answer is written.
    pub id: Option<String>,
    pub name: String,
    /// The arguments as the JSON text the model emits (not checked: a
    /// script may send malformed JSON on purpose).
    pub arguments: String,
}

impl Reply {
    pub fn text(text: impl Into<String>) -> Reply {
        Reply { text: Some(text.into()), tool_calls: Vec::new() }
    }

    pub fn tool_call(name: impl Into<String>, arguments: &Value) -> Reply {
        Reply {
            text: None,
            tool_calls: vec![ReplyToolCall {
                id: None,
                name: name.into(),
                arguments: arguments.to_string(),
            }],
        }
    }
}

/// One answer, ready to be written.
#[derive(Debug, Clone)]
pub struct Completion {
    /// `chatcmpl-…`.
    pub id: String,
    /// Unix seconds.
    pub created: u64,
    pub model: String,
    pub text: Option<String>,
    /// With their ids decided.
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// One `data:` event of a stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub kind: FrameKind,
    /// What follows `data: `: a chunk's JSON, or `[DONE]`.
    pub data: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// The first delta: `role: assistant` (and the first call's head when
    /// the answer has no text).
    Role,
    Text,
    /// The first delta of a call: index, id, type, name, empty arguments.
    ToolHead {
        call: usize,
    },
    ToolArguments {
        call: usize,
    },
    /// Empty delta with `finish_reason`.
    Finish,
    /// `choices: []` and `usage`, only with `include_usage`.
    Usage,
    Done,
}

impl Frame {
    pub fn is_delta(&self) -> bool {
        !matches!(self.kind, FrameKind::Usage | FrameKind::Done)
    }

    /// The bytes on the wire.
    pub fn to_bytes(&self) -> bytes::Bytes {
        bytes::Bytes::from(format!("data: {}\n\n", self.data))
    }
}

impl Usage {
    /// A stand-in count, deterministic: about four characters a token, as
    /// tokenizers average on English.
    pub fn estimate(prompt_chars: usize, completion: &Completion) -> Usage {
        let tokens = |chars: usize| chars.div_ceil(4).max(1) as u64;
        let completion_chars = completion.text.as_deref().map_or(0, str::len)
            + completion
                .tool_calls
                .iter()
                .map(|call| call.name.len() + call.arguments.len())
                .sum::<usize>();
        Usage { prompt_tokens: tokens(prompt_chars), completion_tokens: tokens(completion_chars) }
    }

    pub fn to_json(self) -> Value {
        json!({
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        })
    }
}

impl Completion {
    pub fn finish_reason(&self) -> &'static str {
        if self.tool_calls.is_empty() { "stop" } else { "tool_calls" }
    }

    /// The non-streamed answer.
    pub fn body(&self) -> Value {
        let mut message = json!({
            "role": "assistant",
            "content": self.text,
            "refusal": null,
        });
        if !self.tool_calls.is_empty() {
            message["tool_calls"] = self
                .tool_calls
                .iter()
                .map(|call| {
                    json!({
                        "id": call.id,
                        "type": "function",
                        "function": { "name": call.name, "arguments": call.arguments },
                    })
                })
                .collect();
        }
        json!({
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": SYSTEM_FINGERPRINT,
            "choices": [{
                "index": 0,
                "message": message,
                "logprobs": null,
                "finish_reason": self.finish_reason(),
            }],
            "usage": self.usage.to_json(),
        })
    }

    /// The streamed answer, every event from the first delta to `[DONE]`.
    pub fn frames(&self, include_usage: bool) -> Vec<Frame> {
        let mut frames = Vec::new();
        let mut push = |kind: FrameKind, delta: Value, finish_reason: Option<&str>| {
            frames.push(Frame {
                kind,
                data: self.chunk(delta, finish_reason, include_usage).to_string(),
            });
        };
        let pieces = self.text.as_deref().map(split_text);
        match (&pieces, self.tool_calls.first()) {
            // Tool calls only: the first delta carries the first call's
            // head, as OpenAI sends it.
            (None, Some(first)) => push(
                FrameKind::ToolHead { call: 0 },
                json!({
                    "role": "assistant",
                    "content": null,
                    "tool_calls": [tool_head(0, first)],
                    "refusal": null,
                }),
                None,
            ),
            _ => push(
                FrameKind::Role,
                json!({"role": "assistant", "content": "", "refusal": null}),
                None,
            ),
        }
        for piece in pieces.iter().flatten() {
            push(FrameKind::Text, json!({ "content": piece }), None);
        }
        for (index, call) in self.tool_calls.iter().enumerate() {
            let head_sent = pieces.is_none() && index == 0;
            if !head_sent {
                push(
                    FrameKind::ToolHead { call: index },
                    json!({ "tool_calls": [tool_head(index, call)] }),
                    None,
                );
            }
            for fragment in split_arguments(&call.arguments) {
                push(
                    FrameKind::ToolArguments { call: index },
                    json!({ "tool_calls": [{ "index": index, "function": { "arguments": fragment } }] }),
                    None,
                );
            }
        }
        push(FrameKind::Finish, json!({}), Some(self.finish_reason()));
        if include_usage {
            let mut chunk = self.chunk(Value::Null, None, true);
            chunk["choices"] = json!([]);
            chunk["usage"] = self.usage.to_json();
            frames.push(Frame { kind: FrameKind::Usage, data: chunk.to_string() });
        }
        frames.push(Frame { kind: FrameKind::Done, data: "[DONE]".to_string() });
        frames
    }

    fn chunk(&self, delta: Value, finish_reason: Option<&str>, include_usage: bool) -> Value {
        let mut chunk = json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": SYSTEM_FINGERPRINT,
            "choices": [{
                "index": 0,
                "delta": delta,
                "logprobs": null,
                "finish_reason": finish_reason,
            }],
        });
        // With include_usage OpenAI adds `usage: null` to every chunk but
        // the last.
        if include_usage {
            chunk["usage"] = Value::Null;
        }
        chunk
    }
}

fn tool_head(index: usize, call: &ToolCall) -> Value {
    json!({
        "index": index,
        "id": call.id,
        "type": "function",
        "function": { "name": call.name, "arguments": "" },
    })
}

/// How many of `frames` are sent before a cut closes the connection: about
/// half the text, or the first call's head and about half its arguments.
/// A cut that names a part the answer lacks falls on the other part.
pub fn frames_before_cut(frames: &[Frame], cut: Cut) -> usize {
    let positions = |wanted: &dyn Fn(FrameKind) -> bool| -> Vec<usize> {
        frames.iter().enumerate().filter(|(_, f)| wanted(f.kind)).map(|(i, _)| i).collect()
    };
    let text = positions(&|kind| kind == FrameKind::Text);
    let first_call = positions(&|kind| {
        matches!(kind, FrameKind::ToolHead { call: 0 } | FrameKind::ToolArguments { call: 0 })
    });
    let (chosen, other) = match cut {
        Cut::MidText => (text, first_call),
        Cut::MidToolCall => (first_call, text),
    };
    let part = if chosen.is_empty() { other } else { chosen };
    match part.as_slice() {
        // Nothing to cut inside: stop right after the first delta.
        [] => 1,
        // Keep at least the first frame of the part, and leave at least
        // one of it unsent when there are two or more.
        [only] => only + 1,
        many => many[many.len().div_ceil(2) - 1] + 1,
    }
}

/// Text as the deltas a tokenizer would produce: a word with the spaces
/// after it, long words in pieces. Concatenated, the pieces are the text.
pub fn split_text(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut in_space = false;
    for character in text.chars() {
        let space = character.is_whitespace();
        if !space && in_space && !current.trim().is_empty() {
            pieces.push(std::mem::take(&mut current));
        }
        if !space && current.chars().count() >= TEXT_PIECE_CHARS_MAX {
            pieces.push(std::mem::take(&mut current));
        }
        in_space = space;
        current.push(character);
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

/// Arguments in fragments of [`ARGUMENTS_FRAGMENT_CHARS`] characters.
pub fn split_arguments(arguments: &str) -> Vec<String> {
    let characters: Vec<char> = arguments.chars().collect();
    characters.chunks(ARGUMENTS_FRAGMENT_CHARS).map(|chunk| chunk.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completion(text: Option<&str>, calls: &[(&str, &str)]) -> Completion {
        let mut completion = Completion {
            id: "chatcmpl-1".into(),
            created: 1_700_000_000,
            model: "fake-model".into(),
            text: text.map(str::to_string),
            tool_calls: calls
                .iter()
                .enumerate()
                .map(|(index, (name, arguments))| ToolCall {
                    id: format!("call_{index}"),
                    name: name.to_string(),
                    arguments: arguments.to_string(),
                })
                .collect(),
            usage: Usage { prompt_tokens: 0, completion_tokens: 0 },
        };
        completion.usage = Usage::estimate(40, &completion);
        completion
    }

    fn deltas(frames: &[Frame]) -> Vec<Value> {
        frames
            .iter()
            .filter(|frame| frame.is_delta())
            .map(|frame| {
                let chunk: Value = serde_json::from_str(&frame.data).unwrap();
                chunk["choices"][0]["delta"].clone()
            })
            .collect()
    }

    #[test]
    fn text_pieces_concatenate_to_the_text() {
        for text in [
            "",
            "one",
            "Le budget prévisionnel est de 120 k€.",
            "  leading and trailing  ",
            "line\nbreaks\n\nand\ttabs",
            "anticonstitutionnellementanticonstitutionnellement word",
        ] {
            let pieces = split_text(text);
            assert_eq!(pieces.concat(), text);
            assert!(pieces.iter().all(|piece| !piece.is_empty()));
            assert!(
                pieces.iter().all(|piece| piece.trim().chars().count() <= TEXT_PIECE_CHARS_MAX)
            );
        }
        assert_eq!(split_text("a b  c"), ["a ", "b  ", "c"]);
    }

    #[test]
    fn arguments_come_in_fragments() {
        let arguments = r#"{"query":"budget prévisionnel"}"#;
        let fragments = split_arguments(arguments);
        assert!(fragments.len() > 2);
        assert_eq!(fragments.concat(), arguments);
        assert!(split_arguments("").is_empty());
    }

    #[test]
    fn a_text_stream_has_openai_chunk_shapes() {
        let completion = completion(Some("Hello there world"), &[]);
        let frames = completion.frames(false);
        let first: Value = serde_json::from_str(&frames[0].data).unwrap();
        assert_eq!(first["object"], "chat.completion.chunk");
        assert_eq!(first["id"], "chatcmpl-1");
        assert_eq!(first["model"], "fake-model");
        assert_eq!(first["choices"][0]["index"], 0);
        assert_eq!(first["choices"][0]["finish_reason"], Value::Null);
        assert!(first.get("usage").is_none());
        let deltas = deltas(&frames);
        assert_eq!(deltas[0], json!({"role": "assistant", "content": "", "refusal": null}));
        assert_eq!(deltas[1], json!({"content": "Hello "}));
        assert_eq!(deltas[3], json!({"content": "world"}));
        assert_eq!(deltas.last().unwrap(), &json!({}));
        let finish: Value = serde_json::from_str(&frames[frames.len() - 2].data).unwrap();
        assert_eq!(finish["choices"][0]["finish_reason"], "stop");
        assert_eq!(frames.last().unwrap().data, "[DONE]");
        assert_eq!(frames.last().unwrap().to_bytes(), "data: [DONE]\n\n");
    }

    #[test]
    fn tool_call_deltas_are_incremental() {
        let completion = completion(
            None,
            &[("files_grep", r#"{"query":"budget apollo"}"#), ("files_read", "{}")],
        );
        let deltas = deltas(&completion.frames(false));
        assert_eq!(
            deltas[0],
            json!({"role": "assistant", "content": null, "refusal": null, "tool_calls": [
                {"index": 0, "id": "call_0", "type": "function", "function": {"name": "files_grep", "arguments": ""}}
            ]})
        );
        assert_eq!(
            deltas[1],
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"query\""}}]})
        );
        let second_head = deltas
            .iter()
            .position(|delta| delta.pointer("/tool_calls/0/id") == Some(&json!("call_1")))
            .unwrap();
        assert_eq!(
            deltas[second_head],
            json!({"tool_calls": [{"index": 1, "id": "call_1", "type": "function", "function": {"name": "files_read", "arguments": ""}}]})
        );
        // Reassembled, each call's arguments are what the script said.
        let mut assembled = [String::new(), String::new()];
        for delta in &deltas {
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = call["index"].as_u64().unwrap() as usize;
                assembled[index] += call["function"]["arguments"].as_str().unwrap();
            }
        }
        assert_eq!(assembled, [r#"{"query":"budget apollo"}"#, "{}"]);
        let frames = completion.frames(false);
        let finish: Value = serde_json::from_str(&frames[frames.len() - 2].data).unwrap();
        assert_eq!(finish["choices"][0]["finish_reason"], "tool_calls");
    }

    #[test]
    fn text_before_tool_calls_comes_first() {
        let completion = completion(Some("Let me look."), &[("files_grep", "{}")]);
        let kinds: Vec<FrameKind> = completion.frames(false).iter().map(|f| f.kind).collect();
        assert_eq!(
            kinds,
            [
                FrameKind::Role,
                FrameKind::Text,
                FrameKind::Text,
                FrameKind::Text,
                FrameKind::ToolHead { call: 0 },
                FrameKind::ToolArguments { call: 0 },
                FrameKind::Finish,
                FrameKind::Done
            ]
        );
    }

    #[test]
    fn usage_comes_last_and_only_when_asked() {
        let completion = completion(Some("Hi"), &[]);
        let frames = completion.frames(true);
        let usage: Value = serde_json::from_str(&frames[frames.len() - 2].data).unwrap();
        assert_eq!(usage["choices"], json!([]));
        assert_eq!(usage["usage"]["prompt_tokens"], 10);
        assert_eq!(usage["usage"]["total_tokens"], 11);
        let first: Value = serde_json::from_str(&frames[0].data).unwrap();
        assert_eq!(first["usage"], Value::Null, "every other chunk has usage: null");
        assert!(first.as_object().unwrap().contains_key("usage"));
        assert!(completion.frames(false).iter().all(|frame| frame.kind != FrameKind::Usage));
    }

    #[test]
    fn the_non_streamed_body_has_openai_shape() {
        let body = completion(Some("Hi"), &[]).body();
        assert_eq!(body["object"], "chat.completion");
        assert_eq!(
            body["choices"][0]["message"],
            json!({"role": "assistant", "content": "Hi", "refusal": null})
        );
        assert_eq!(body["choices"][0]["finish_reason"], "stop");
        assert_eq!(body["usage"]["total_tokens"], 11);
        let body = completion(None, &[("files_grep", r#"{"query":"x"}"#)]).body();
        let message = &body["choices"][0]["message"];
        assert_eq!(message["content"], Value::Null);
        assert_eq!(
            message["tool_calls"],
            json!([{"id": "call_0", "type": "function", "function": {"name": "files_grep", "arguments": "{\"query\":\"x\"}"}}])
        );
        assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
    }

    #[test]
    fn cuts_fall_inside_the_part_they_name() {
        let text = completion(Some("one two three four"), &[]);
        let frames = text.frames(false);
        let sent = frames_before_cut(&frames, Cut::MidText);
        assert_eq!(sent, 3, "role + two of four words");
        let call = completion(None, &[("files_grep", r#"{"query":"budget apollo"}"#)]);
        let frames = call.frames(false);
        let sent = frames_before_cut(&frames, Cut::MidToolCall);
        let arguments: String = deltas(&frames[..sent])
            .iter()
            .filter_map(|delta| delta.pointer("/tool_calls/0/function/arguments"))
            .map(|fragment| fragment.as_str().unwrap().to_string())
            .collect();
        assert!(!arguments.is_empty());
        assert!(serde_json::from_str::<Value>(&arguments).is_err(), "{arguments} is cut");
        // A cut named for a part the answer lacks falls on the other part.
        assert_eq!(frames_before_cut(&frames, Cut::MidText), sent);
        // Never past the finish.
        for frames in
            [text.frames(true), call.frames(true), completion(Some("x"), &[]).frames(false)]
        {
            for cut in [Cut::MidText, Cut::MidToolCall] {
                let sent = frames_before_cut(&frames, cut);
                assert!(sent >= 1);
                assert!(frames[..sent].iter().all(|frame| frame.kind != FrameKind::Finish));
            }
        }
    }
}
