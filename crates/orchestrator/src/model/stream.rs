//! Chat completion chunks into [`ModelEvent`]s: text deltas as they come,
//! tool calls once complete, then the finish and the usage.
//!
//! Tool calls arrive as deltas keyed by `index`: the first carries `id`,
//! `type` and `function.name`, the following ones fragments of
//! `function.arguments`. Providers stray from that in ways seen in the wild,
//! all accepted here: a whole call in one delta, no `index` (several calls
//! then follow one another), no `id` (one is generated), the name repeated in
//! every delta, arguments as a JSON object instead of a string, empty
//! arguments for a call without parameters, and `finish_reason: "stop"`
//! although calls were made (reported as `ToolCalls`). A non-streamed answer
//! goes through the same assembly, so both paths give the same events.
//!
//! What is not accepted: a body that ends before both `[DONE]` and a
//! `finish_reason` (that is [`ModelError::StreamCut`], whether it stopped in
//! text or in a tool call), chunks that are not JSON, and an error object in
//! place of a chunk.

use std::collections::VecDeque;

use serde_json::Value;

use super::error::truncate;
use super::sse::{EventTooLarge, SseEvent, SseParser};
use super::{
    FinishReason, ModelError, ModelEvent, RESPONSE_BYTES_MAX, SSE_EVENT_BYTES_MAX,
    TOOL_ARGUMENTS_BYTES_MAX, TOOL_CALLS_MAX, ToolCall,
};

/// A streamed body, bytes in, events out.
pub(super) struct Decoder {
    sse: SseParser,
    assembler: Assembler,
    sse_events: Vec<SseEvent>,
    bytes_read: usize,
}

/// The state of one answer being read.
#[derive(Default)]
pub(super) struct Assembler {
    calls: Vec<PartialCall>,
    text_bytes: usize,
    /// The provider's finish, once seen; tool calls are emitted with it.
    finished: bool,
    /// `[DONE]` seen: nothing after it is read.
    done: bool,
    usage: Option<(u64, u64)>,
    /// Chunks of the answer read so far (error objects not counted).
    chunks: usize,
}

#[derive(Default)]
struct PartialCall {
    index: u64,
    id: Option<String>,
    name: String,
    arguments: String,
}

impl Decoder {
    pub(super) fn new() -> Decoder {
        Decoder {
            sse: SseParser::new(),
            assembler: Assembler::default(),
            sse_events: Vec::new(),
            bytes_read: 0,
        }
    }

    /// Whether any chunk of an answer came: a stream that breaks before
    /// one never started answering.
    pub(super) fn read_a_chunk(&self) -> bool {
        self.assembler.chunks > 0
    }

    /// `[DONE]` came: the rest of the body need not be read.
    pub(super) fn is_done(&self) -> bool {
        self.assembler.done
    }

    pub(super) fn push(
        &mut self,
        chunk: &[u8],
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ModelError> {
        self.bytes_read += chunk.len();
        if self.bytes_read > RESPONSE_BYTES_MAX {
            return Err(ModelError::TooLarge {
                detail: format!("a streamed answer over {RESPONSE_BYTES_MAX} bytes"),
            });
        }
        self.sse.push(chunk, &mut self.sse_events).map_err(|EventTooLarge| {
            ModelError::TooLarge { detail: format!("an event over {SSE_EVENT_BYTES_MAX} bytes") }
        })?;
        for event in self.sse_events.drain(..) {
            self.assembler.on_event(&event, out)?;
        }
        Ok(())
    }

    /// The connection failed: the answer is cut, unless the provider had
    /// already finished it and only the usage or `[DONE]` was lost.
    pub(super) fn broken(
        &mut self,
        transport: &str,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ModelError> {
        self.stopped(out, |cut| ModelError::StreamCut {
            detail: format!("{cut}; the connection failed: {transport}"),
        })
    }

    /// The provider went silent for longer than the read timeout: the
    /// answer timed out where it stood, unless it was already finished.
    pub(super) fn timed_out(
        &mut self,
        transport: &str,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ModelError> {
        self.stopped(out, |cut| ModelError::TimedOut {
            detail: format!("{cut}; nothing more came in time: {transport}"),
        })
    }

    /// The body stopped coming: complete if the provider had finished, else
    /// `error` of where it stood.
    fn stopped(
        &mut self,
        out: &mut VecDeque<ModelEvent>,
        error: impl FnOnce(String) -> ModelError,
    ) -> Result<(), ModelError> {
        if self.assembler.finished {
            return self.assembler.on_end(out);
        }
        Err(error(self.assembler.cut_detail()))
    }

    /// The body ended.
    pub(super) fn end(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError> {
        self.sse.finish(&mut self.sse_events);
        for event in self.sse_events.drain(..) {
            self.assembler.on_event(&event, out)?;
        }
        if self.assembler.done {
            return Ok(());
        }
        self.assembler.on_end(out)
    }
}

impl Assembler {
    /// One server-sent event of a streamed answer.
    fn on_event(
        &mut self,
        event: &SseEvent,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ModelError> {
        if self.done {
            return Ok(());
        }
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return self.on_end(out);
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|error| ModelError::BadResponse {
            detail: format!("a streamed chunk is not JSON ({error}): {}", truncate(data)),
        })?;
        if event.name.as_deref() == Some("error") || is_error_object(&chunk) {
            return Err(provider_error(&chunk));
        }
        self.chunks += 1;
        self.on_chunk(&chunk, "delta", out)
    }

    /// The body ended (or `[DONE]` came): completes the answer or says it was cut.
    fn on_end(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError> {
        if !self.finished {
            if !self.done {
                return Err(ModelError::StreamCut { detail: self.cut_detail() });
            }
            // `[DONE]` without a finish_reason: the provider said it is done.
            let reason =
                if self.calls.is_empty() { FinishReason::Stop } else { FinishReason::ToolCalls };
            self.finish(reason, out)?;
        }
        if let Some((prompt_tokens, completion_tokens)) = self.usage.take() {
            out.push_back(ModelEvent::Usage { prompt_tokens, completion_tokens });
        }
        Ok(())
    }

    /// A whole non-streamed answer (`choices[].message` instead of `delta`).
    pub(super) fn from_completion(answer: &Value) -> Result<VecDeque<ModelEvent>, ModelError> {
        if is_error_object(answer) {
            return Err(provider_error(answer));
        }
        if answer.get("choices").and_then(Value::as_array).is_none_or(Vec::is_empty) {
            return Err(ModelError::BadResponse {
                detail: format!("an answer without choices: {}", truncate(&answer.to_string())),
            });
        }
        let mut assembler = Assembler::default();
        let mut out = VecDeque::new();
        assembler.on_chunk(answer, "message", &mut out)?;
        assembler.done = true;
        assembler.on_end(&mut out)?;
        Ok(out)
    }

    fn on_chunk(
        &mut self,
        chunk: &Value,
        delta_key: &str,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ModelError> {
        // Only the first choice: Tamebi never asks for n > 1.
        let choice = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|choices| {
                choices.iter().find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
            })
            .filter(|_| !self.finished);
        if let Some(choice) = choice {
            let delta = choice.get(delta_key).or_else(|| choice.get("delta"));
            if let Some(delta) = delta {
                if let Some(text) = delta.get("content").and_then(Value::as_str)
                    && !text.is_empty()
                {
                    self.text_bytes += text.len();
                    out.push_back(ModelEvent::TextDelta(text.to_owned()));
                }
                if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                    for (position, call) in calls.iter().enumerate() {
                        // A non-streamed message lists whole calls in order.
                        let position = (delta_key == "message").then_some(position as u64);
                        self.merge_call(call, position)?;
                    }
                }
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish(finish_reason(reason), out)?;
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|usage| usage.is_object()) {
            let count = |key| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
            self.usage = Some((count("prompt_tokens"), count("completion_tokens")));
        }
        Ok(())
    }

    fn merge_call(&mut self, delta: &Value, position: Option<u64>) -> Result<(), ModelError> {
        let index = delta.get("index").and_then(Value::as_u64).or(position);
        let id = delta.get("id").and_then(Value::as_str).filter(|id| !id.is_empty());
        let function = delta.get("function");
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .filter(|name| !name.is_empty());
        let arguments = function.and_then(|f| f.get("arguments"));

        let slot = match (index, id) {
            (Some(index), _) => self.calls.iter().position(|call| call.index == index),
            (None, Some(id)) => self.calls.iter().position(|call| call.id.as_deref() == Some(id)),
            // Neither index nor id: a name after a call with arguments starts the next call.
            (None, None) => match self.calls.last() {
                Some(last)
                    if name.is_some() && !last.name.is_empty() && !last.arguments.is_empty() =>
                {
                    None
                }
                Some(_) => Some(self.calls.len() - 1),
                None => None,
            },
        };
        let slot = match slot {
            Some(slot) => slot,
            None => {
                if self.calls.len() >= TOOL_CALLS_MAX {
                    return Err(ModelError::TooLarge {
                        detail: format!("more than {TOOL_CALLS_MAX} tool calls in one answer"),
                    });
                }
                let next = self.calls.iter().map(|call| call.index + 1).max().unwrap_or(0);
                self.calls
                    .push(PartialCall { index: index.unwrap_or(next), ..PartialCall::default() });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[slot];
        if call.id.is_none() {
            call.id = id.map(str::to_owned);
        }
        if let Some(name) = name
            && call.name != name
        {
            // A repeated name is ignored; a different one is a fragment.
            call.name.push_str(name);
        }
        match arguments {
            Some(Value::String(fragment)) => call.arguments.push_str(fragment),
            Some(Value::Null) | None => {}
            Some(whole) => call.arguments = whole.to_string(),
        }
        if call.arguments.len() > TOOL_ARGUMENTS_BYTES_MAX {
            return Err(ModelError::TooLarge {
                detail: format!("tool call arguments over {TOOL_ARGUMENTS_BYTES_MAX} bytes"),
            });
        }
        Ok(())
    }

    fn finish(
        &mut self,
        reason: FinishReason,
        out: &mut VecDeque<ModelEvent>,
    ) -> Result<(), ModelError> {
        assert!(!self.finished);
        self.finished = true;
        let mut calls = std::mem::take(&mut self.calls);
        calls.sort_by_key(|call| call.index);
        let made_calls = !calls.is_empty();
        for call in calls {
            if call.name.is_empty() {
                return Err(ModelError::BadResponse {
                    detail: format!("tool call {} has no function name", call.index),
                });
            }
            let id = call.id.unwrap_or_else(|| format!("call_{}", uuid::Uuid::new_v4().simple()));
            let arguments =
                if call.arguments.trim().is_empty() { "{}".to_owned() } else { call.arguments };
            out.push_back(ModelEvent::ToolCall(ToolCall { id, name: call.name, arguments }));
        }
        let reason = match reason {
            FinishReason::Stop if made_calls => FinishReason::ToolCalls,
            reason => reason,
        };
        out.push_back(ModelEvent::Finish { reason });
        Ok(())
    }

    fn cut_detail(&self) -> String {
        let place = match (self.calls.len(), self.text_bytes) {
            (0, 0) => "before any content".to_owned(),
            (0, bytes) => format!("in the middle of the text, after {bytes} bytes"),
            (calls, _) => format!("in the middle of a tool call ({calls} started)"),
        };
        format!("the stream ended without [DONE] or a finish_reason, {place}")
    }
}

/// OpenAI sends `{"error": {...}}`; vLLM `{"object": "error", "message": ...}`.
fn is_error_object(value: &Value) -> bool {
    value.get("error").is_some_and(|error| !error.is_null())
        || value.get("object").and_then(Value::as_str) == Some("error")
}

fn provider_error(value: &Value) -> ModelError {
    let error = value.get("error").filter(|error| error.is_object()).unwrap_or(value);
    let message = match error.get("message").and_then(Value::as_str) {
        Some(message) => message.to_owned(),
        None => error.to_string(),
    };
    ModelError::Provider { detail: format!("error in the answer: {}", truncate(&message)) }
}

/// A provider's `finish_reason`, under the names the providers in use spell it.
fn finish_reason(text: &str) -> FinishReason {
    match text {
        "stop" | "eos" | "end_turn" => FinishReason::Stop,
        "length" | "max_tokens" => FinishReason::Length,
        "tool_calls" | "function_call" | "tool_use" => FinishReason::ToolCalls,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

#[cfg(test)]
mod tests;
