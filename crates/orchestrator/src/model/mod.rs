//! The model client: one OpenAI-compatible chat completions client, written by
//! hand, that any provider speaking that dialect can sit behind (vLLM, Ollama,
//! llama.cpp's server, OpenAI, Mistral).
//!
//! Providers disagree in the details, so the client is lenient in what it
//! reads and strict in what it reports. It streams (`stream: true` with
//! usage), parses server-sent events itself ([`sse`]), assembles tool calls
//! from incremental deltas however a provider slices them ([`stream`]), and
//! turns every answer, streamed or not, into the same [`ModelEvent`]s. A
//! stream that stops before the provider said it was finished is an error,
//! never a short answer. Retries (429, 5xx) and the fallback to a
//! non-streamed request for providers that cannot stream tool calls live in
//! [`client`].
//!
//! Rejected: an SDK crate (each pins one provider's dialect and its own
//! types, and none tolerates every shape seen here) and a generic SSE crate
//! (the parser is a hundred lines, and owning it lets a property test pin
//! exactly the behaviour the stream assembly relies on).
//!
//! The values it speaks in ([`ChatRequest`], [`Message`], [`ModelEvent`],
//! [`ModelError`], …) are the agent crate's, since they are what the loop is
//! driven by; they are re-exported here. They are not `Serialize`: [`wire`]
//! writes the request.

mod client;
mod error;
mod sse;
mod stream;
mod wire;

use std::fmt;

pub use agent::model::{
    ChatRequest, FinishReason, Message, ModelError, ModelEvent, ToolCall, ToolChoice,
    ToolDefinition,
};
pub use client::{InvalidModelConfig, ModelClient, ModelStream};

/// Bytes of one server-sent event (or one line of it) before the answer is refused.
pub const SSE_EVENT_BYTES_MAX: usize = 4 * 1024 * 1024;
/// Bytes of one whole answer, streamed or not, before it is refused.
pub const RESPONSE_BYTES_MAX: usize = 32 * 1024 * 1024;
/// Tool calls in one answer.
pub const TOOL_CALLS_MAX: usize = 64;
/// Bytes of one tool call's arguments.
pub const TOOL_ARGUMENTS_BYTES_MAX: usize = 1024 * 1024;

/// Where the model is and how to talk to it.
#[derive(Clone, Debug)]
pub struct ModelConfig {
    /// The API root including its version, as OpenAI's SDKs take it:
    /// `https://api.openai.com/v1`, `http://localhost:11434/v1` (Ollama),
    /// `http://localhost:8080/v1` (llama.cpp). `/chat/completions` is appended.
    pub base_url: String,
    /// Sent as `Authorization: Bearer`; local servers usually need none.
    pub api_key: Option<ApiKey>,
    pub model: String,
    pub retry: RetryPolicy,
    pub connect_timeout_ms: u64,
    /// The longest silence between two pieces of an answer, the wait for
    /// the first one included: a local model reading a long prompt, or
    /// writing a whole answer unstreamed, can be silent for minutes.
    pub read_timeout_ms: u64,
    /// Sent as `max_tokens`, so one answer cannot run for minutes; an
    /// answer that reaches it ends with a note saying it was cut. `None`
    /// sends none (the provider's own limit applies).
    pub max_tokens: Option<u32>,
}

/// The default bound on one answer's tokens: ample for an answer with its
/// citations, short of a runaway.
pub const MAX_TOKENS_DEFAULT: u32 = 4096;

/// How hard to try when the provider is rate limiting or failing.
#[derive(Clone, Debug)]
pub struct RetryPolicy {
    /// Requests in all, the first included.
    pub attempts_max: u32,
    /// The most time spent waiting between attempts, all waits together. A
    /// `retry-after` that would exceed it fails at once instead of sleeping.
    pub wait_total_max_ms: u64,
    /// The first wait when the provider gives no `retry-after`; doubled each time.
    pub backoff_first_ms: u64,
}

/// The provider's API key. Its `Debug` is redacted and it has no `Display`,
/// so it cannot reach a log by accident.
#[derive(Clone)]
pub struct ApiKey(String);

impl ModelConfig {
    /// A configuration with the default retry policy and timeouts.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> ModelConfig {
        ModelConfig {
            base_url: base_url.into(),
            api_key: None,
            model: model.into(),
            retry: RetryPolicy::default(),
            connect_timeout_ms: 10_000,
            read_timeout_ms: 300_000,
            max_tokens: Some(MAX_TOKENS_DEFAULT),
        }
    }
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy { attempts_max: 4, wait_total_max_ms: 30_000, backoff_first_ms: 500 }
    }
}

impl ApiKey {
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }

    fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}
