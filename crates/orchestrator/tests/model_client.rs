//! The model client against small scripted OpenAI-compatible servers on real
//! sockets: OpenAI's exact chunk shapes, network chunking, each failure the
//! client retries or reports, and llama.cpp's refusal to stream tool calls.
//!
//! Each stub answers the requests it gets from a script, in order, and
//! records them, so a test checks both what the client sent and what it made
//! of the answers.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use futures_util::StreamExt;
use orchestrator::model::{
    ApiKey, ChatRequest, FinishReason, InvalidModelConfig, Message, ModelClient, ModelConfig,
    ModelError, ModelEvent, RetryPolicy, ToolCall, ToolChoice, ToolDefinition,
};
use serde_json::{Value, json};

#[path = "support/openai_chunks.rs"]
mod openai_chunks;
use openai_chunks::{DONE, delta, finish, usage};

const API_KEY: &str = "sk-test-0123456789abcdef";

/// One scripted answer.
enum Reply {
    /// `200 text/event-stream`, the body written piece by piece.
    Sse(Vec<Piece>),
    /// Nothing for this long, then a text answer.
    Silence(Duration),
    /// Any status with a body.
    Answer {
        status: u16,
        headers: Vec<(&'static str, String)>,
        content_type: &'static str,
        body: String,
    },
}

enum Piece {
    Bytes(Vec<u8>),
    Pause(Duration),
    /// The connection is dropped here.
    Reset,
}

struct Recorded {
    headers: HeaderMap,
    body: Value,
}

#[derive(Clone, Default)]
struct Script {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

struct Stub {
    base_url: String,
    script: Script,
    server: tokio::task::JoinHandle<()>,
}

impl Stub {
    async fn start(replies: Vec<Reply>) -> Stub {
        let script = Script::default();
        script.replies.lock().unwrap().extend(replies);
        let router = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(answer))
            .with_state(script.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let server = tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        Stub { base_url, script, server }
    }

    fn client(&self) -> ModelClient {
        ModelClient::new(config(&self.base_url)).unwrap()
    }

    fn request_count(&self) -> usize {
        self.script.requests.lock().unwrap().len()
    }

    fn request(&self, index: usize) -> (HeaderMap, Value) {
        let requests = self.script.requests.lock().unwrap();
        (requests[index].headers.clone(), requests[index].body.clone())
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.server.abort();
    }
}

fn config(base_url: &str) -> ModelConfig {
    let mut config = ModelConfig::new(base_url, "gpt-4.1-mini");
    config.api_key = Some(ApiKey::new(API_KEY));
    config.retry = RetryPolicy { attempts_max: 4, wait_total_max_ms: 5_000, backoff_first_ms: 10 };
    config
}

async fn answer(State(script): State<Script>, headers: HeaderMap, body: Bytes) -> Response {
    let body = serde_json::from_slice(&body).expect("the client sends JSON");
    script.requests.lock().unwrap().push(Recorded { headers, body });
    let reply = script.replies.lock().unwrap().pop_front();
    match reply {
        None => Response::builder().status(599).body(Body::from("the script ran out")).unwrap(),
        Some(Reply::Silence(silence)) => {
            tokio::time::sleep(silence).await;
            Response::new(Body::from(text_answer().concat()))
        }
        Some(Reply::Answer { status, headers, content_type, body }) => {
            let mut response =
                Response::builder().status(status).header("content-type", content_type);
            for (name, value) in headers {
                response = response.header(name, value);
            }
            response.body(Body::from(body)).unwrap()
        }
        Some(Reply::Sse(pieces)) => {
            let body =
                futures_util::stream::unfold(VecDeque::from(pieces), |mut pieces| async move {
                    loop {
                        match pieces.pop_front()? {
                            Piece::Bytes(bytes) => return Some((Ok(Bytes::from(bytes)), pieces)),
                            Piece::Pause(pause) => tokio::time::sleep(pause).await,
                            Piece::Reset => {
                                let error = std::io::Error::other("reset by the script");
                                return Some((Err(error), pieces));
                            }
                        }
                    }
                });
            Response::builder()
                .status(StatusCode::OK)
                .header("content-type", "text/event-stream; charset=utf-8")
                .header("cache-control", "no-cache")
                .body(Body::from_stream(body))
                .unwrap()
        }
    }
}

fn text_answer() -> Vec<String> {
    openai_chunks::text_answer(&["Le rapport", " est dans /Documents."], 42, 7)
}

fn tool_call_answer() -> Vec<String> {
    vec![
        delta(json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
            "id": "call_Ab1", "type": "function",
            "function": {"name": "files_search", "arguments": ""}}], "refusal": null})),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"na"}}]})),
        delta(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "me\":\"rapport\"}"}}]}),
        ),
        finish("tool_calls"),
        usage(80, 12),
        DONE.to_owned(),
    ]
}

fn text_events() -> Vec<ModelEvent> {
    vec![
        ModelEvent::TextDelta("Le rapport".into()),
        ModelEvent::TextDelta(" est dans /Documents.".into()),
        ModelEvent::Finish { reason: FinishReason::Stop },
        ModelEvent::Usage { prompt_tokens: 42, completion_tokens: 7 },
    ]
}

fn tool_call_events() -> Vec<ModelEvent> {
    vec![
        ModelEvent::ToolCall(ToolCall {
            id: "call_Ab1".into(),
            name: "files_search".into(),
            arguments: r#"{"name":"rapport"}"#.into(),
        }),
        ModelEvent::Finish { reason: FinishReason::ToolCalls },
        ModelEvent::Usage { prompt_tokens: 80, completion_tokens: 12 },
    ]
}

/// The same tool call as `tool_call_answer`, not streamed, the way
/// llama.cpp's server writes it.
fn tool_call_completion() -> String {
    json!({
        "choices": [{"finish_reason": "tool_calls", "index": 0, "message": {"role": "assistant",
            "content": null, "tool_calls": [{"type": "function", "id": "call_Ab1",
            "function": {"name": "files_search", "arguments": "{\"name\":\"rapport\"}"}}]}}],
        "created": 1767225600, "model": "qwen2.5-7b-instruct", "system_fingerprint": "b4000",
        "object": "chat.completion",
        "usage": {"completion_tokens": 12, "prompt_tokens": 80, "total_tokens": 92},
        "id": "chatcmpl-xyz", "timings": {"prompt_n": 80, "predicted_n": 12},
    })
    .to_string()
}

fn sse(events: Vec<String>) -> Reply {
    Reply::Sse(pieces(&events))
}

/// Each of `events` as one piece of the body.
fn pieces(events: &[String]) -> Vec<Piece> {
    events.iter().map(|event| Piece::Bytes(event.clone().into_bytes())).collect()
}

/// The first `sent` events of `answer`, then the connection reset, after a
/// pause that lets the head and those events leave first.
fn dropped_after(answer: &[String], sent: usize) -> Reply {
    let mut pieces = pieces(&answer[..sent]);
    pieces.extend([Piece::Pause(Duration::from_millis(50)), Piece::Reset]);
    Reply::Sse(pieces)
}

fn status(status: u16, body: &str) -> Reply {
    Reply::Answer {
        status,
        headers: vec![],
        content_type: "application/json",
        body: body.to_owned(),
    }
}

fn status_with(status: u16, headers: Vec<(&'static str, String)>, body: &str) -> Reply {
    Reply::Answer { status, headers, content_type: "application/json", body: body.to_owned() }
}

fn json_answer(body: String) -> Reply {
    Reply::Answer { status: 200, headers: vec![], content_type: "application/json", body }
}

const LLAMA_CPP_REFUSAL: &str = r#"{"error":{"code":500,"message":"Automatic streaming tool choice is not supported","type":"server_error"}}"#;

fn question() -> ChatRequest {
    ChatRequest {
        messages: vec![
            Message::System("Tu es Tamebi.".into()),
            Message::User("Où est le rapport ?".into()),
        ],
        tools: vec![],
        tool_choice: None,
    }
}

fn question_with_tools() -> ChatRequest {
    ChatRequest {
        tools: vec![ToolDefinition {
            name: "files_search".into(),
            description: "Find the user's files by name.".into(),
            parameters: json!({"type": "object", "properties": {"name": {"type": "string"}},
                "required": ["name"]}),
        }],
        tool_choice: Some(ToolChoice::Auto),
        ..question()
    }
}

async fn ask(client: &ModelClient, request: &ChatRequest) -> Result<Vec<ModelEvent>, ModelError> {
    client.chat(request).await?.collect_events().await
}

/// What a user may see of an error: no URL, no key, no provider text.
fn assert_user_safe(error: &ModelError, stub: &Stub) {
    let shown = error.to_string();
    assert!(!shown.contains(&stub.base_url) && !shown.contains("127.0.0.1"), "{shown}");
    assert!(!shown.contains(API_KEY), "{shown}");
    assert!(!error.detail().contains(API_KEY), "{}", error.detail());
    assert!(!format!("{error:?}").contains(API_KEY));
}

#[tokio::test]
async fn a_streamed_text_answer() {
    let stub = Stub::start(vec![sse(text_answer())]).await;
    assert_eq!(ask(&stub.client(), &question()).await.unwrap(), text_events());

    let (headers, body) = stub.request(0);
    assert_eq!(headers["authorization"], format!("Bearer {API_KEY}").as_str());
    assert_eq!(headers["accept"], "text/event-stream");
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(
        body,
        json!({"model": "gpt-4.1-mini", "stream": true, "stream_options": {"include_usage": true},
            "max_tokens": orchestrator::model::MAX_TOKENS_DEFAULT,
            "messages": [{"role": "system", "content": "Tu es Tamebi."},
                         {"role": "user", "content": "Où est le rapport ?"}]})
    );
}

#[tokio::test]
async fn a_streamed_tool_call_and_the_conversation_that_follows() {
    let stub = Stub::start(vec![sse(tool_call_answer()), sse(text_answer())]).await;
    let client = stub.client();
    let mut request = question_with_tools();
    let events = ask(&client, &request).await.unwrap();
    assert_eq!(events, tool_call_events());
    let (_, body) = stub.request(0);
    assert_eq!(body["tools"][0]["function"]["name"], "files_search");
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tool_choice"], "auto");

    let ModelEvent::ToolCall(call) = &events[0] else { unreachable!() };
    request
        .messages
        .push(Message::Assistant { text: String::new(), tool_calls: vec![call.clone()] });
    request.messages.push(Message::Tool {
        tool_call_id: call.id.clone(),
        content: "/Documents/Rapport.odt".into(),
    });
    assert_eq!(ask(&client, &request).await.unwrap(), text_events());
    let (_, body) = stub.request(1);
    assert_eq!(
        body["messages"][2],
        json!({"role": "assistant", "content": "", "tool_calls": [{"id": "call_Ab1",
            "type": "function", "function": {"name": "files_search", "arguments": "{\"name\":\"rapport\"}"}}]})
    );
    assert_eq!(
        body["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_Ab1", "content": "/Documents/Rapport.odt"})
    );
}

#[tokio::test]
async fn events_split_across_tiny_network_chunks() {
    let bytes = tool_call_answer().concat().replace('\n', "\r\n").into_bytes();
    let mut pieces = Vec::new();
    for piece in bytes.chunks(7) {
        pieces.push(Piece::Bytes(piece.to_vec()));
        pieces.push(Piece::Pause(Duration::from_millis(1)));
    }
    let stub = Stub::start(vec![Reply::Sse(pieces)]).await;
    assert_eq!(ask(&stub.client(), &question_with_tools()).await.unwrap(), tool_call_events());
}

#[tokio::test]
async fn text_arrives_before_the_answer_ends() {
    let mut pieces = pieces(&text_answer());
    pieces.insert(2, Piece::Pause(Duration::from_secs(30)));
    let stub = Stub::start(vec![Reply::Sse(pieces)]).await;
    let mut stream = stub.client().chat(&question()).await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(5), stream.next()).await;
    assert_eq!(first.unwrap().unwrap().unwrap(), ModelEvent::TextDelta("Le rapport".into()));
}

#[tokio::test]
async fn a_json_answer_to_a_streamed_request_is_read_anyway() {
    let stub = Stub::start(vec![json_answer(tool_call_completion())]).await;
    assert_eq!(ask(&stub.client(), &question_with_tools()).await.unwrap(), tool_call_events());
}

#[tokio::test]
async fn a_rate_limit_is_waited_out_as_the_provider_says() {
    let limited = status_with(
        429,
        vec![("retry-after", "1".into())],
        r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#,
    );
    let stub = Stub::start(vec![limited, sse(text_answer())]).await;
    let started = Instant::now();
    assert_eq!(ask(&stub.client(), &question()).await.unwrap(), text_events());
    assert!(started.elapsed() >= Duration::from_secs(1), "{:?}", started.elapsed());
    assert_eq!(stub.request_count(), 2);

    let limited =
        status_with(429, vec![("retry-after-ms", "50".into()), ("retry-after", "30".into())], "{}");
    let stub = Stub::start(vec![limited, sse(text_answer())]).await;
    let started = Instant::now();
    assert_eq!(ask(&stub.client(), &question()).await.unwrap(), text_events());
    assert!(started.elapsed() < Duration::from_secs(5), "retry-after-ms wins over retry-after");
}

#[tokio::test]
async fn a_rate_limit_longer_than_the_budget_fails_at_once() {
    let limited = status_with(429, vec![("retry-after", "3600".into())], "{}");
    let stub = Stub::start(vec![limited]).await;
    let started = Instant::now();
    let error = ask(&stub.client(), &question()).await.unwrap_err();
    assert!(matches!(error, ModelError::RateLimited { .. }), "{error:?}");
    assert!(error.detail().contains("exceeds the retry budget"), "{}", error.detail());
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(stub.request_count(), 1);
    assert_user_safe(&error, &stub);
}

#[tokio::test]
async fn a_lasting_rate_limit_gives_up_after_the_bounded_attempts() {
    let replies = (0..10).map(|_| status(429, r#"{"error":{"message":"slow down"}}"#)).collect();
    let stub = Stub::start(replies).await;
    let error = ask(&stub.client(), &question()).await.unwrap_err();
    assert!(matches!(error, ModelError::RateLimited { .. }), "{error:?}");
    assert!(error.detail().contains("slow down"), "{}", error.detail());
    assert_eq!(stub.request_count(), 4);
}

#[tokio::test]
async fn server_errors_are_retried() {
    let stub = Stub::start(vec![
        status(503, r#"{"error":{"message":"overloaded"}}"#),
        Reply::Answer {
            status: 502,
            headers: vec![],
            content_type: "text/html",
            body: "<html>Bad Gateway</html>".into(),
        },
        sse(text_answer()),
    ])
    .await;
    assert_eq!(ask(&stub.client(), &question()).await.unwrap(), text_events());
    assert_eq!(stub.request_count(), 3);
}

#[tokio::test]
async fn lasting_server_errors_give_up_after_the_bounded_attempts() {
    let replies = (0..10).map(|_| status(500, r#"{"error":{"message":"boom"}}"#)).collect();
    let stub = Stub::start(replies).await;
    let error = ask(&stub.client(), &question()).await.unwrap_err();
    assert!(matches!(error, ModelError::Unavailable { status: 500, .. }), "{error:?}");
    assert!(error.detail().contains("gave up after 4 attempts"), "{}", error.detail());
    assert_eq!(stub.request_count(), 4);
    assert_user_safe(&error, &stub);
}

#[tokio::test]
async fn a_proxy_saying_upstream_is_not_a_streaming_refusal() {
    let upstream = Reply::Answer {
        status: 503,
        headers: vec![],
        content_type: "text/plain",
        body: "upstream connect error or disconnect/reset before headers".into(),
    };
    let stub = Stub::start(vec![upstream, sse(tool_call_answer())]).await;
    let client = stub.client();
    assert_eq!(ask(&client, &question_with_tools()).await.unwrap(), tool_call_events());
    assert!(client.streams_tool_calls());
    assert_eq!(stub.request(1).1["stream"], true);
}

#[tokio::test]
async fn client_errors_are_reported_at_once_without_leaking() {
    let echo = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {API_KEY}.","type":"invalid_request_error","code":"invalid_api_key"}}}}"#
    );
    let stub = Stub::start(vec![status(401, &echo)]).await;
    let error = ask(&stub.client(), &question()).await.unwrap_err();
    assert!(matches!(error, ModelError::Rejected { status: 401, .. }), "{error:?}");
    assert_eq!(error.to_string(), "the language model refused the request");
    assert!(
        error.detail().contains("401") && error.detail().contains("[redacted]"),
        "{}",
        error.detail()
    );
    assert_eq!(stub.request_count(), 1);
    assert_user_safe(&error, &stub);
}

#[tokio::test]
async fn llama_cpp_refusing_to_stream_tool_calls_is_asked_again_without_streaming() {
    let stub = Stub::start(vec![
        status(500, LLAMA_CPP_REFUSAL),
        json_answer(tool_call_completion()),
        json_answer(tool_call_completion()),
        sse(text_answer()),
    ])
    .await;
    let client = stub.client();
    assert!(client.streams_tool_calls());
    assert_eq!(ask(&client, &question_with_tools()).await.unwrap(), tool_call_events());
    let (headers, streamed) = stub.request(0);
    let (_, fallback) = stub.request(1);
    assert_eq!(streamed["stream"], true);
    assert_eq!(fallback["stream"], false);
    assert_eq!(fallback.get("stream_options"), None);
    assert_eq!(headers["accept"], "text/event-stream");
    assert_eq!(stub.request(1).0["accept"], "application/json");
    let mut same = fallback.clone();
    same["stream"] = json!(true);
    same["stream_options"] = json!({"include_usage": true});
    assert_eq!(same, streamed, "the same request, only not streamed");

    // The client remembers: tools go unstreamed at once, text still streams.
    assert!(!client.streams_tool_calls());
    assert_eq!(ask(&client, &question_with_tools()).await.unwrap(), tool_call_events());
    assert_eq!(stub.request(2).1["stream"], false);
    assert_eq!(ask(&client, &question()).await.unwrap(), text_events());
    assert_eq!(stub.request(3).1["stream"], true);
    assert_eq!(stub.request_count(), 4);
}

/// llama-cpp-python with `auto` and streaming: a 200, then nothing (or an
/// error in the stream) — the same fallback as an error status.
#[tokio::test]
async fn a_stream_that_breaks_before_its_first_chunk_is_asked_again_without_streaming() {
    let error_event = format!("data: {LLAMA_CPP_REFUSAL}\n\n");
    for broken in [sse(vec![]), sse(vec![error_event]), dropped_after(&[], 0)] {
        let stub = Stub::start(vec![broken, json_answer(tool_call_completion())]).await;
        let client = stub.client();
        assert_eq!(ask(&client, &question_with_tools()).await.unwrap(), tool_call_events());
        assert_eq!(stub.request(1).1["stream"], false);
        assert!(!client.streams_tool_calls(), "remembered for the next requests");
    }
}

#[tokio::test]
async fn a_5xx_that_blames_the_request_is_not_sent_again() {
    let parse = r#"{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON: [json.exception.parse_error.101]","type":"server_error"}}"#;
    let stub = Stub::start(vec![status(500, parse), sse(text_answer())]).await;
    let error = ask(&stub.client(), &question_with_tools()).await.unwrap_err();
    assert!(matches!(error, ModelError::Rejected { status: 500, .. }), "{error:?}");
    assert_eq!(stub.request_count(), 1, "the same request would fail the same way");
}

#[tokio::test]
async fn a_request_too_long_for_the_context_window_says_so_at_once() {
    let overflow = r#"{"error":{"code":400,"message":"request (10287 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error"}}"#;
    for code in [400, 500] {
        let stub = Stub::start(vec![status(code, overflow), sse(text_answer())]).await;
        let error = ask(&stub.client(), &question()).await.unwrap_err();
        assert!(matches!(error, ModelError::ContextExceeded { .. }), "{error:?}");
        assert_eq!(
            error.to_string(),
            "the conversation is too long for the language model's context window"
        );
        assert_eq!(stub.request_count(), 1);
        assert_user_safe(&error, &stub);
    }
}

#[tokio::test]
async fn any_refusal_mentioning_streaming_falls_back() {
    let stub = Stub::start(vec![
        status(400, r#"{"error":"tools are not supported with stream=true"}"#),
        json_answer(tool_call_completion()),
    ])
    .await;
    assert_eq!(ask(&stub.client(), &question_with_tools()).await.unwrap(), tool_call_events());
}

#[tokio::test]
async fn without_tools_a_streaming_complaint_is_just_an_error() {
    let stub = Stub::start(vec![status(400, r#"{"error":"streaming is disabled"}"#)]).await;
    let error = ask(&stub.client(), &question()).await.unwrap_err();
    assert!(matches!(error, ModelError::Rejected { status: 400, .. }), "{error:?}");
    assert_eq!(stub.request_count(), 1);
}

#[tokio::test]
async fn a_stream_that_stops_in_the_text_is_cut() {
    let mut answer = text_answer();
    answer.truncate(3);
    let stub = Stub::start(vec![sse(answer)]).await;
    let mut stream = stub.client().chat(&question()).await.unwrap();
    let mut received = Vec::new();
    let error = loop {
        match stream.next().await.expect("the stream ends with an error") {
            Ok(event) => received.push(event),
            Err(error) => break error,
        }
    };
    assert_eq!(received, text_events()[..2]);
    assert!(matches!(error, ModelError::StreamCut { .. }), "{error:?}");
    assert!(error.detail().contains("middle of the text"), "{}", error.detail());
    assert_eq!(error.to_string(), "the language model's answer was cut off");
    assert!(stream.next().await.is_none(), "nothing after the error");
}

#[tokio::test]
async fn a_connection_dropped_in_a_tool_call_is_cut() {
    let stub = Stub::start(vec![dropped_after(&tool_call_answer(), 2)]).await;
    let error = ask(&stub.client(), &question_with_tools()).await.unwrap_err();
    assert!(matches!(error, ModelError::StreamCut { .. }), "{error:?}");
    assert!(error.detail().contains("tool call"), "{}", error.detail());
    assert_user_safe(&error, &stub);
}

#[tokio::test]
async fn a_connection_dropped_after_the_finish_loses_only_the_usage() {
    let stub = Stub::start(vec![dropped_after(&tool_call_answer(), 4)]).await;
    let events = ask(&stub.client(), &question_with_tools()).await.unwrap();
    assert_eq!(events, tool_call_events()[..2]);
}

#[tokio::test]
async fn a_request_that_times_out_is_not_sent_again() {
    let stub = Stub::start(vec![Reply::Silence(Duration::from_secs(2)), sse(text_answer())]).await;
    let mut config = config(&stub.base_url);
    config.read_timeout_ms = 200;
    let error = ask(&ModelClient::new(config).unwrap(), &question()).await.unwrap_err();
    assert!(matches!(error, ModelError::TimedOut { .. }), "{error:?}");
    assert_eq!(error.to_string(), "the language model did not answer in time");
    assert_eq!(stub.request_count(), 1, "the provider may be running it: not sent twice");
}

#[tokio::test]
async fn a_silence_in_the_middle_of_an_answer_times_it_out_where_it_stood() {
    let answer = text_answer();
    let mut pieces = pieces(&answer[..2]);
    pieces.push(Piece::Pause(Duration::from_secs(2)));
    pieces.push(Piece::Bytes(answer[2..].concat().into_bytes()));
    let stub = Stub::start(vec![Reply::Sse(pieces)]).await;
    let mut config = config(&stub.base_url);
    config.read_timeout_ms = 200;
    let error = ask(&ModelClient::new(config).unwrap(), &question()).await.unwrap_err();
    assert!(matches!(error, ModelError::TimedOut { .. }), "{error:?}");
    assert!(error.detail().contains("middle of the text"), "{}", error.detail());
}

#[tokio::test]
async fn an_unreachable_server_is_retried_then_reported() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let error = ask(&ModelClient::new(config(&base_url)).unwrap(), &question()).await.unwrap_err();
    assert!(matches!(error, ModelError::Unreachable { .. }), "{error:?}");
    assert_eq!(error.to_string(), "the language model could not be reached");
    assert!(error.detail().contains("gave up after 4 attempts"), "{}", error.detail());
}

#[test]
fn a_configuration_that_cannot_work_is_refused_and_the_key_never_shows() {
    let refused = |base_url: &str, model: &str| -> InvalidModelConfig {
        ModelClient::new(ModelConfig::new(base_url, model)).unwrap_err()
    };
    assert_eq!(
        refused("localhost:8080/v1", "m").to_string(),
        "invalid model configuration: the base URL must start with http:// or https://"
    );
    assert_eq!(
        refused("http://localhost:8080/v1", " ").to_string(),
        "invalid model configuration: no model name"
    );

    let client = ModelClient::new(config("http://localhost:8080/v1/")).unwrap();
    let debug = format!("{client:?}");
    assert!(!debug.contains(API_KEY), "{debug}");
    assert!(debug.contains("ApiKey([redacted])"), "{debug}");
}

/// OpenAI and most hosted providers are https: the client must speak TLS.
/// Without a TLS backend reqwest refuses the scheme in its connector ("scheme
/// is not http"); with one, a closed port is a refused TCP connection.
#[tokio::test]
async fn https_providers_are_reachable_in_principle() {
    let error =
        reqwest::Client::new().get("https://127.0.0.1:9/v1/models").send().await.unwrap_err();
    let mut chain = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(inner) = source {
        chain.push_str(" / ");
        chain.push_str(&inner.to_string());
        source = inner.source();
    }
    assert!(!chain.contains("scheme is not http"), "no TLS backend: {chain}");
    assert!(chain.contains("tcp connect error"), "{chain}");
}

/// A provider that serves `/v1/models` and llama.cpp's `/props`.
async fn serving(models: Value, props: Option<Value>) -> (String, tokio::task::JoinHandle<()>) {
    let mut router = axum::Router::new()
        .route("/v1/models", axum::routing::get(move || async move { axum::Json(models) }));
    if let Some(props) = props {
        router =
            router.route("/props", axum::routing::get(move || async move { axum::Json(props) }));
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    (base_url, tokio::spawn(async move { axum::serve(listener, router).await.unwrap() }))
}

#[tokio::test]
async fn the_context_window_is_asked_of_the_provider() {
    let vllm = json!({"data": [{"id": "gpt-4.1-mini", "max_model_len": 16384}]});
    let (base, server) = serving(vllm, None).await;
    assert_eq!(ModelClient::new(config(&base)).unwrap().context_window().await, Some(16384));
    server.abort();

    let llama_cpp_models = json!({"data": [{"id": "model.gguf", "meta": {"n_ctx_train": 131072}}]});
    let props = json!({"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1});
    let (base, server) = serving(llama_cpp_models.clone(), Some(props)).await;
    let client = ModelClient::new(config(&base)).unwrap();
    assert_eq!(client.context_window().await, Some(8192), "the running n_ctx, not n_ctx_train");
    server.abort();

    let (base, server) = serving(json!({"data": [{"id": "gpt-4.1-mini"}]}), None).await;
    assert_eq!(ModelClient::new(config(&base)).unwrap().context_window().await, None);
    server.abort();
}
