//! Sending a chat request and reading the answer as a stream of events, with
//! the bounded retries and the streaming fallback that real providers need.
//!
//! - 429: wait as `retry-after-ms` or `retry-after` (seconds or an HTTP date)
//!   says, or back off; a wait longer than what is left of the retry budget
//!   fails at once rather than sleeping for nothing.
//! - 5xx and refused connections: back off and retry, within the same
//!   budget. A timeout or a connection lost after the request was sent is
//!   not retried, since the provider may have run (and billed) it; a
//!   timeout is reported as one, not as an unreachable model.
//! - A 4xx, and a 5xx whose message says the request itself is wrong (a
//!   validation or parse error: llama.cpp's 500 "Failed to parse tool call
//!   arguments as JSON", llama-cpp-python's pydantic 500s), is not retried:
//!   it would fail the same way. A request too long for the context window
//!   is its own error, whatever the status, so the user reads what it is.
//! - A streamed request with tools that gets any 4xx/5xx whose message speaks
//!   of streaming (llama.cpp: 500 "Automatic streaming tool choice is not
//!   supported"), or a 200 whose stream breaks or ends before its first
//!   event (llama-cpp-python fails inside the stream), is sent again with
//!   `stream: false`, its answer turned into the same events, and the client
//!   asks that provider without streaming whenever there are tools for
//!   [`STREAMING_RETRY_AFTER`], then tries streaming again.
//!
//! Errors shown to users say what kind of failure it was and nothing more;
//! the provider's words go to the detail, with the API key cut out. The key
//! is sent with `bearer_auth`, which marks the header sensitive, and is never
//! logged.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use http::{HeaderMap, StatusCode, header};
use serde_json::Value;

use super::error::truncate;
use super::stream::{Assembler, Decoder};
use super::{ApiKey, ChatRequest, ModelConfig, ModelError, ModelEvent, RESPONSE_BYTES_MAX, wire};

/// Bytes of an error answer read to understand it.
const ERROR_BODY_BYTES_MAX: usize = 64 * 1024;
/// The longest single backoff when the provider does not say how long to wait.
const BACKOFF_MAX: Duration = Duration::from_secs(8);
/// How long a provider that could not stream tool calls is asked without
/// streaming before streaming is tried again (it may have been upgraded,
/// or restarted with another chat format).
pub const STREAMING_RETRY_AFTER: Duration = Duration::from_secs(600);

/// A client for one provider and model. Cheap to share: it holds one
/// connection pool and what it learned about the provider.
pub struct ModelClient {
    config: ModelConfig,
    endpoint: String,
    http: reqwest::Client,
    /// The same client without a connection pool, for the request that
    /// follows a broken stream: the server may close the connection the
    /// stream came on just after (llama-cpp-python does), and a pooled
    /// connection reused at that moment fails the request unsent.
    unpooled: reqwest::Client,
    /// When the provider last failed to stream a request with tools: ask it
    /// without streaming until [`STREAMING_RETRY_AFTER`] has passed.
    stream_with_tools_refused: Mutex<Option<Instant>>,
}

/// The answer, as [`ModelEvent`]s; an error ends it.
pub struct ModelStream {
    body: Option<Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>>,
    decoder: Decoder,
    pending: VecDeque<ModelEvent>,
    error: Option<ModelError>,
    api_key: Option<ApiKey>,
}

/// The configuration cannot work.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid model configuration: {0}")]
pub struct InvalidModelConfig(&'static str);

impl ModelClient {
    pub fn new(config: ModelConfig) -> Result<ModelClient, InvalidModelConfig> {
        let base_url = config.base_url.trim_end_matches('/');
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(InvalidModelConfig("the base URL must start with http:// or https://"));
        }
        if config.model.trim().is_empty() {
            return Err(InvalidModelConfig("no model name"));
        }
        if config.retry.attempts_max == 0 {
            return Err(InvalidModelConfig("at least one attempt is needed"));
        }
        let endpoint = format!("{base_url}/chat/completions");
        let builder = || {
            reqwest::Client::builder()
                .connect_timeout(Duration::from_millis(config.connect_timeout_ms))
                .read_timeout(Duration::from_millis(config.read_timeout_ms))
        };
        let unbuilt = |_| InvalidModelConfig("the HTTP client could not be built");
        let http = builder().build().map_err(unbuilt)?;
        let unpooled = builder().pool_max_idle_per_host(0).build().map_err(unbuilt)?;
        let stream_with_tools_refused = Mutex::new(None);
        Ok(ModelClient { config, endpoint, http, unpooled, stream_with_tools_refused })
    }

    /// Whether requests with tools are streamed now: false for
    /// [`STREAMING_RETRY_AFTER`] after the provider failed to stream one.
    pub fn streams_tool_calls(&self) -> bool {
        let refused =
            self.stream_with_tools_refused.lock().expect("never poisoned: no panics held");
        refused.is_none_or(|at| at.elapsed() >= STREAMING_RETRY_AFTER)
    }

    /// The context window the provider runs the model with, where it says:
    /// in `/models`, vLLM's `max_model_len`, LM Studio's
    /// `loaded_context_length`, OpenRouter's `context_length`; else
    /// llama.cpp's `n_ctx` in `/props` beside `/v1`. `None` when it says
    /// nothing (OpenAI, Ollama, llama-cpp-python) or cannot be asked.
    pub async fn context_window(&self) -> Option<usize> {
        let base = self.config.base_url.trim_end_matches('/');
        if let Some(models) = self.get_json(&format!("{base}/models")).await
            && let Some(window) = window_in_models(&models, &self.config.model)
        {
            return Some(window);
        }
        let root = base.strip_suffix("/v1").unwrap_or(base);
        let props = self.get_json(&format!("{root}/props")).await?;
        let n_ctx = props["default_generation_settings"]["n_ctx"].as_u64();
        plausible_window(n_ctx.or(props["n_ctx"].as_u64())?)
    }

    async fn get_json(&self, url: &str) -> Option<Value> {
        let mut request = self.http.get(url).timeout(Duration::from_secs(5));
        if let Some(api_key) = &self.config.api_key {
            request = request.bearer_auth(api_key.expose());
        }
        let response = request.send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let (body, complete) = read_bounded(response, ERROR_BODY_BYTES_MAX).await.ok()?;
        complete.then(|| serde_json::from_slice(&body).ok()).flatten()
    }

    /// Remembers that the provider could not stream a request with tools.
    fn stop_streaming_tool_calls(&self, detail: String) {
        tracing::info!(
            detail = %self.redact(detail),
            "the model provider cannot stream tool calls; asking without streaming"
        );
        let mut refused =
            self.stream_with_tools_refused.lock().expect("never poisoned: no panics held");
        *refused = Some(Instant::now());
    }

    /// Asks the model. Failures before the answer starts (after the retries)
    /// are the `Err`; failures while it streams end the stream with an `Err` item.
    pub async fn chat(&self, request: &ChatRequest) -> Result<ModelStream, ModelError> {
        self.chat_unredacted(request).await.map_err(|error| error.map_detail(|d| self.redact(d)))
    }

    async fn chat_unredacted(&self, request: &ChatRequest) -> Result<ModelStream, ModelError> {
        let has_tools = !request.tools.is_empty();
        let mut stream = !has_tools || self.streams_tool_calls();
        let retry = &self.config.retry;
        let wait_total_max = Duration::from_millis(retry.wait_total_max_ms);
        let mut waited = Duration::ZERO;
        let mut attempt: u32 = 0;
        let mut after_broken_stream = false;
        loop {
            attempt += 1;
            assert!(attempt <= retry.attempts_max);
            let body =
                wire::request_body(&self.config.model, self.config.max_tokens, request, stream);
            let accept = if stream { "text/event-stream" } else { "application/json" };
            let http = if after_broken_stream { &self.unpooled } else { &self.http };
            let mut builder = http.post(&self.endpoint).header(header::ACCEPT, accept).json(&body);
            if let Some(api_key) = &self.config.api_key {
                builder = builder.bearer_auth(api_key.expose());
            }

            let (failure, retry_after) = match builder.send().await {
                // Only a refused connection is surely safe to repeat: any
                // later failure may have reached a provider that bills it.
                Err(error) if error.is_connect() => {
                    let detail = format!("connecting failed: {error}");
                    (ModelError::Unreachable { detail }, None)
                }
                Err(error) if error.is_timeout() => {
                    let detail = format!("no answer in time: {error}");
                    return Err(ModelError::TimedOut { detail });
                }
                Err(error) => {
                    let detail = format!("the request failed: {error}");
                    return Err(ModelError::Unreachable { detail });
                }
                Ok(response) if response.status().is_success() => {
                    let mut answer = self.answer(response, stream).await?;
                    if !(stream && has_tools) {
                        return Ok(answer);
                    }
                    match answer.first_event().await {
                        Ok(()) => return Ok(answer),
                        // Cut after it started (or silent): not a refusal
                        // to stream, and the provider may have billed it.
                        Err(error)
                            if answer.decoder.read_a_chunk()
                                || matches!(error, ModelError::TimedOut { .. }) =>
                        {
                            return Err(error);
                        }
                        Err(error) => {
                            let detail = format!("a broken stream after a 200: {}", error.detail());
                            self.stop_streaming_tool_calls(detail);
                            stream = false;
                            after_broken_stream = true;
                            attempt -= 1;
                            continue;
                        }
                    }
                }
                Ok(response) => {
                    let status = response.status();
                    let retry_after = retry_after(response.headers());
                    let message = provider_message(&read_error_body(response).await);
                    let detail = format!("HTTP {}: {}", status.as_u16(), truncate(&message));
                    if stream
                        && has_tools
                        && status != StatusCode::TOO_MANY_REQUESTS
                        && mentions_streaming(&message)
                    {
                        self.stop_streaming_tool_calls(detail);
                        stream = false;
                        // The provider answered: this attempt does not count.
                        attempt -= 1;
                        continue;
                    }
                    if exceeds_context(&message) {
                        return Err(ModelError::ContextExceeded { detail });
                    }
                    let failure = match status.as_u16() {
                        429 => ModelError::RateLimited { detail },
                        code @ 500..=599 if !blames_the_request(&message) => {
                            ModelError::Unavailable { status: code, detail }
                        }
                        code => return Err(ModelError::Rejected { status: code, detail }),
                    };
                    (failure, retry_after)
                }
            };

            let left = wait_total_max.saturating_sub(waited);
            let wait = match retry_after {
                Some(wait) if wait > left => {
                    return Err(failure.map_detail(|detail| {
                        format!("{detail} (retry-after {wait:?} exceeds the retry budget left, {left:?})")
                    }));
                }
                Some(wait) => wait,
                None => backoff(retry.backoff_first_ms, attempt).min(left),
            };
            if attempt >= retry.attempts_max || (wait.is_zero() && left.is_zero()) {
                return Err(failure.map_detail(|detail| {
                    format!("{detail} (gave up after {attempt} attempts and {waited:?} of waiting)")
                }));
            }
            tracing::warn!(
                attempt,
                wait_ms = wait.as_millis() as u64,
                detail = %self.redact(failure.detail().to_owned()),
                "the model call failed; retrying"
            );
            tokio::time::sleep(wait).await;
            waited += wait;
        }
    }

    async fn answer(
        &self,
        response: reqwest::Response,
        stream: bool,
    ) -> Result<ModelStream, ModelError> {
        let is_json = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.trim_start().starts_with("application/json"));
        let api_key = self.config.api_key.clone();
        if stream && !is_json {
            return Ok(ModelStream {
                body: Some(Box::pin(response.bytes_stream())),
                decoder: Decoder::new(),
                pending: VecDeque::new(),
                error: None,
                api_key,
            });
        }
        // Not streamed, whether asked so or because the provider ignored `stream`.
        let (body, complete) =
            read_bounded(response, RESPONSE_BYTES_MAX).await.map_err(|error| {
                ModelError::StreamCut { detail: format!("reading the answer failed: {error}") }
            })?;
        if !complete {
            return Err(ModelError::TooLarge {
                detail: format!("an answer over {RESPONSE_BYTES_MAX} bytes"),
            });
        }
        let answer: Value = serde_json::from_slice(&body).map_err(|error| {
            let text = String::from_utf8_lossy(&body);
            ModelError::BadResponse {
                detail: format!("the answer is not JSON ({error}): {}", truncate(&text)),
            }
        })?;
        let pending = Assembler::from_completion(&answer)?;
        Ok(ModelStream { body: None, decoder: Decoder::new(), pending, error: None, api_key })
    }

    fn redact(&self, text: String) -> String {
        redact(text, self.config.api_key.as_ref())
    }
}

impl std::fmt::Debug for ModelClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelClient")
            .field("config", &self.config)
            .field("streams_tool_calls", &self.streams_tool_calls())
            .finish_non_exhaustive()
    }
}

impl ModelStream {
    /// Reads up to the answer's first event and keeps it for the reader:
    /// the error instead when the stream breaks or ends before one.
    async fn first_event(&mut self) -> Result<(), ModelError> {
        match self.next().await {
            Some(Ok(event)) => {
                self.pending.push_front(event);
                Ok(())
            }
            Some(Err(error)) => Err(error),
            None => Err(ModelError::StreamCut { detail: "an empty stream".into() }),
        }
    }

    /// All the events, or the first error. For callers that need the whole answer.
    pub async fn collect_events(mut self) -> Result<Vec<ModelEvent>, ModelError> {
        let mut events = Vec::new();
        while let Some(event) = self.next().await {
            events.push(event?);
        }
        Ok(events)
    }
}

impl Stream for ModelStream {
    type Item = Result<ModelEvent, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(event) = this.pending.pop_front() {
                return Poll::Ready(Some(Ok(event)));
            }
            if let Some(error) = this.error.take() {
                return Poll::Ready(Some(Err(error)));
            }
            let Some(body) = this.body.as_mut() else {
                return Poll::Ready(None);
            };
            let step = match ready!(body.as_mut().poll_next(cx)) {
                Some(Ok(chunk)) => {
                    this.decoder.push(&chunk, &mut this.pending).map(|()| this.decoder.is_done())
                }
                Some(Err(error)) if error.is_timeout() => {
                    let transport = error.to_string();
                    this.decoder.timed_out(&transport, &mut this.pending).map(|()| true)
                }
                Some(Err(error)) => {
                    let transport = error.to_string();
                    this.decoder.broken(&transport, &mut this.pending).map(|()| true)
                }
                None => this.decoder.end(&mut this.pending).map(|()| true),
            };
            match step {
                Ok(false) => {}
                // Done: whatever follows `[DONE]` is not read.
                Ok(true) => this.body = None,
                Err(error) => {
                    this.body = None;
                    let api_key = this.api_key.as_ref();
                    this.error = Some(error.map_detail(|detail| redact(detail, api_key)));
                }
            }
        }
    }
}

impl std::fmt::Debug for ModelStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelStream")
            .field("pending", &self.pending.len())
            .field("reading", &self.body.is_some())
            .finish_non_exhaustive()
    }
}

fn redact(text: String, api_key: Option<&ApiKey>) -> String {
    match api_key {
        Some(key) if key.expose().len() >= 4 => text.replace(key.expose(), "[redacted]"),
        _ => text,
    }
}

fn backoff(backoff_first_ms: u64, attempt: u32) -> Duration {
    let factor = 1u64 << attempt.saturating_sub(1).min(16);
    Duration::from_millis(backoff_first_ms.saturating_mul(factor)).min(BACKOFF_MAX)
}

/// `retry-after-ms` (OpenAI), else `retry-after` in seconds or as an HTTP
/// date. A value too large to represent is `Duration::MAX`: it exceeds any budget.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    let seconds = |value: f64| {
        (value.is_finite() && value >= 0.0)
            .then(|| Duration::try_from_secs_f64(value).unwrap_or(Duration::MAX))
    };
    if let Some(ms) = text("retry-after-ms").and_then(|t| t.parse::<f64>().ok()) {
        return seconds(ms / 1000.0);
    }
    let value = text(header::RETRY_AFTER.as_str())?;
    if let Ok(value) = value.parse::<f64>() {
        return seconds(value);
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO))
}

/// What the provider said in an error answer. Providers put it in different
/// places: `error.message` (OpenAI, llama.cpp), `error` as a string
/// (Ollama), `message` (vLLM); otherwise the body itself.
fn provider_message(body: &str) -> String {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return body.trim().to_owned();
    };
    let error = value.get("error");
    let message = error
        .and_then(|error| error.get("message"))
        .or(error)
        .or_else(|| value.get("message"))
        .and_then(Value::as_str);
    match message {
        Some(message) => message.to_owned(),
        None => body.trim().to_owned(),
    }
}

/// Whether an error message is about streaming, as a word: "upstream" in a
/// proxy's 502 is not.
fn mentions_streaming(message: &str) -> bool {
    message
        .split(|c: char| !c.is_alphanumeric())
        .any(|word| ["stream", "streaming", "streamed"].contains(&word.to_lowercase().as_str()))
}

/// The window `/models` gives for `model` (or for its only entry).
fn window_in_models(models: &Value, model: &str) -> Option<usize> {
    let entries = models["data"].as_array()?;
    let entry = match entries.iter().find(|entry| entry["id"].as_str() == Some(model)) {
        Some(entry) => entry,
        None if entries.len() == 1 => &entries[0],
        None => return None,
    };
    ["max_model_len", "loaded_context_length", "context_length"]
        .iter()
        .find_map(|key| entry[*key].as_u64())
        .and_then(plausible_window)
}

/// A window in tokens, if it is one a model could have.
fn plausible_window(tokens: u64) -> Option<usize> {
    (512..=100_000_000).contains(&tokens).then_some(tokens as usize)
}

/// Whether an error message says the request does not fit the model's
/// context window: OpenAI and vLLM ("maximum context length"), llama.cpp
/// ("exceeds the available context size", `exceed_context_size_error`),
/// llama-cpp-python ("exceed context window").
fn exceeds_context(message: &str) -> bool {
    let message = message.to_lowercase();
    let about_context = message.contains("context");
    about_context
        && ["maximum context length", "exceed", "too long", "context_length"]
            .iter()
            .any(|phrase| message.contains(phrase))
}

/// Whether a 5xx's message blames the request rather than the server: a
/// validation or parse error, which the same request meets again.
fn blames_the_request(message: &str) -> bool {
    let message = message.to_lowercase();
    ["validation error", "failed to parse", "parse error", "invalid json", "json schema"]
        .iter()
        .any(|phrase| message.contains(phrase))
}

async fn read_error_body(response: reqwest::Response) -> String {
    match read_bounded(response, ERROR_BODY_BYTES_MAX).await {
        Ok((body, _)) => String::from_utf8_lossy(&body).into_owned(),
        Err(error) => format!("(the error body could not be read: {error})"),
    }
}

/// At most `bytes_max` bytes of the body, and whether that was all of it.
async fn read_bounded(
    response: reqwest::Response,
    bytes_max: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk?;
        if body.len() + chunk.len() > bytes_max {
            body.extend_from_slice(&chunk[..bytes_max - body.len()]);
            return Ok((body, false));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, true))
}

/// The agent's view of a model: the client answers its requests.
impl agent::Model for ModelClient {
    fn answer(
        &self,
        request: ChatRequest,
    ) -> futures_util::future::BoxFuture<
        '_,
        Result<
            futures_util::stream::BoxStream<'static, Result<ModelEvent, ModelError>>,
            ModelError,
        >,
    > {
        Box::pin(async move {
            let stream = self.chat(&request).await?;
            Ok(Box::pin(stream) as futures_util::stream::BoxStream<'static, _>)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_is_recognised_as_a_word() {
        assert!(mentions_streaming("Automatic streaming tool choice is not supported"));
        assert!(mentions_streaming("Cannot use tools with stream=true"));
        assert!(mentions_streaming("STREAM not supported"));
        assert!(!mentions_streaming("upstream connect error or disconnect/reset before headers"));
        assert!(!mentions_streaming("Internal Server Error"));
    }

    #[test]
    fn the_window_is_read_where_each_provider_puts_it_in_its_model_list() {
        let vllm = serde_json::json!({"object": "list", "data": [
            {"id": "other", "max_model_len": 4096},
            {"id": "m", "object": "model", "max_model_len": 32768}]});
        assert_eq!(window_in_models(&vllm, "m"), Some(32768));
        let lm_studio =
            serde_json::json!({"data": [{"id": "local", "loaded_context_length": 8192}]});
        assert_eq!(window_in_models(&lm_studio, "m"), Some(8192), "the only entry");
        let openai = serde_json::json!({"data": [{"id": "m", "object": "model", "owned_by": "x"}]});
        assert_eq!(window_in_models(&openai, "m"), None);
        let absurd = serde_json::json!({"data": [{"id": "m", "context_length": 7}]});
        assert_eq!(window_in_models(&absurd, "m"), None);
        let two = serde_json::json!({"data": [{"id": "a", "max_model_len": 1024}, {"id": "b"}]});
        assert_eq!(window_in_models(&two, "m"), None, "another model's window is not ours");
    }

    /// Each classifier against what providers were seen to say, and
    /// against messages that only share a word.
    #[test]
    fn overflows_and_requests_blamed_are_recognised_in_each_providers_words() {
        type Case = (fn(&str) -> bool, &'static [&'static str], &'static [&'static str]);
        let cases: [Case; 2] = [
            (
                exceeds_context,
                &[
                    "This model's maximum context length is 8192 tokens. However, your messages resulted in 10287 tokens.",
                    "the request exceeds the available context size, try increasing it",
                    "request (10287 tokens) exceeds the available context size (8192 tokens), try increasing it",
                    "Requested tokens (10287) exceed context window of 8192",
                ],
                &["Internal Server Error", "context canceled", "model not found"],
            ),
            (
                blames_the_request,
                &[
                    "Failed to parse tool call arguments as JSON",
                    "7 validation errors for CreateChatCompletionRequest",
                ],
                &["Internal Server Error", "upstream connect error", "model is loading"],
            ),
        ];
        for (recognises, said, not_said) in cases {
            for message in said {
                assert!(recognises(message), "{message}");
            }
            for message in not_said {
                assert!(!recognises(message), "{message}");
            }
        }
    }

    #[test]
    fn the_provider_message_is_found_where_each_provider_puts_it() {
        let cases = [
            (
                r#"{"error":{"code":500,"message":"Automatic streaming tool choice is not supported","type":"server_error"}}"#,
                "Automatic streaming tool choice is not supported",
            ),
            (r#"{"error":"model 'x' not found"}"#, "model 'x' not found"),
            (
                r#"{"object":"error","message":"too long","type":"BadRequestError","code":400}"#,
                "too long",
            ),
            ("<html>502 Bad Gateway</html>\n", "<html>502 Bad Gateway</html>"),
        ];
        for (body, expected) in cases {
            assert_eq!(provider_message(body), expected);
        }
    }

    #[test]
    fn retry_after_in_each_form() {
        let headers = |pairs: &[(&'static str, &str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.insert(*name, value.parse().unwrap());
            }
            headers
        };
        assert_eq!(retry_after(&headers(&[("retry-after", "2")])), Some(Duration::from_secs(2)));
        assert_eq!(
            retry_after(&headers(&[("retry-after", "0.5")])),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            retry_after(&headers(&[("retry-after", "2"), ("retry-after-ms", "150")])),
            Some(Duration::from_millis(150))
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "1e300")])), Some(Duration::MAX));
        assert_eq!(retry_after(&headers(&[("retry-after", "-1")])), None);
        assert_eq!(
            retry_after(&headers(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")])),
            Some(Duration::ZERO),
            "a date in the past means now"
        );
        let future = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(100));
        let wait = retry_after(&headers(&[("retry-after", &future)])).unwrap();
        assert!(wait > Duration::from_secs(95) && wait <= Duration::from_secs(100), "{wait:?}");
        assert_eq!(retry_after(&headers(&[])), None);
    }

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        assert_eq!(backoff(500, 1), Duration::from_millis(500));
        assert_eq!(backoff(500, 2), Duration::from_millis(1000));
        assert_eq!(backoff(500, 3), Duration::from_millis(2000));
        assert_eq!(backoff(500, 30), BACKOFF_MAX);
    }

    #[test]
    fn the_key_is_cut_out_of_details() {
        let key = ApiKey::new("sk-secret-123");
        let text = "Incorrect API key provided: sk-secret-123.".to_owned();
        assert_eq!(redact(text, Some(&key)), "Incorrect API key provided: [redacted].");
    }
}
