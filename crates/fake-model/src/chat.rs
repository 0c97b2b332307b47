//! The model API: `POST /v1/chat/completions` and `GET /v1/models`, behind
//! the optional API key.
//!
//! A request is decided under the state lock in one step (global faults,
//! then the script, then the demo or the fallback text; recorded either
//! way) and written after the lock is released, so a slow or cut stream
//! never holds the lock.

use crate::answer::{self, Completion, Reply, ToolCall, Usage};
use crate::error::ApiError;
use crate::faults::{Cut, ErrorFault, Faults};
use crate::record::{AnswerKind, AnsweredBy, RecordedRequest, RuleRef};
use crate::request::ChatRequest;
use crate::{AppState, State as ServerState, demo};
use axum::Router;
use axum::body::Body;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use futures_util::StreamExt as _;
use http::{HeaderMap, StatusCode, header};
use serde_json::json;
use std::time::Duration;

/// How long a cut stream waits after its last frame before closing, so
/// that frame reaches the client before the connection drops.
const CUT_FLUSH: Duration = Duration::from_millis(20);

pub fn routes() -> Router<AppState> {
    // Without `/v1` too, as llama.cpp's server and vLLM accept it.
    Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/chat/completions", post(chat_completions))
        .route("/v1/models", get(models))
        .route("/models", get(models))
        .route("/v1/models/{model}", get(model))
}

async fn chat_completions(
    State(shared): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    check_key(&shared, &headers)?;
    let body = body.map_err(body_refused)?;
    let request = ChatRequest::parse(&body)?;
    let decision = decide(&mut shared.state(), &shared, &request);
    match decision {
        Decision::Error(error) => Err(error),
        Decision::Answer { completion, faults } if request.stream => {
            Ok(stream_response(&completion, request.include_usage, &faults))
        }
        Decision::Answer { completion, faults } => {
            Ok(complete_response(&completion, &faults).await)
        }
    }
}

async fn models(State(shared): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    check_key(&shared, &headers)?;
    Ok(axum::Json(json!({ "object": "list", "data": [model_json(&shared.model)] })).into_response())
}

async fn model(
    State(shared): State<AppState>,
    headers: HeaderMap,
    Path(model): Path<String>,
) -> Result<Response, ApiError> {
    check_key(&shared, &headers)?;
    if model != shared.model {
        return Err(ApiError::ModelNotFound { model });
    }
    Ok(axum::Json(model_json(&shared.model)).into_response())
}

fn model_json(model: &str) -> serde_json::Value {
    json!({ "id": model, "object": "model", "created": 0, "owned_by": "tamebi-fake-model" })
}

/// OpenAI-shaped 404 for every other route.
pub async fn unknown_url(request: axum::extract::Request) -> ApiError {
    ApiError::UnknownUrl {
        method: request.method().to_string(),
        path: request.uri().path().to_string(),
    }
}

/// The error for a body axum could not read (too large, cut short).
pub(crate) fn body_refused(rejection: BytesRejection) -> ApiError {
    match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::BodyTooLarge,
        _ => ApiError::invalid(rejection.body_text(), None, None),
    }
}

/// Refuses a `/v1` request without the configured API key.
pub(crate) fn check_key(shared: &crate::Shared, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(expected) = &shared.api_key else { return Ok(()) };
    let sent = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, key)| key.trim());
    match sent {
        None | Some("") => Err(ApiError::MissingKey),
        Some(key) if key == expected => Ok(()),
        Some(key) => Err(ApiError::WrongKey { sent: key.to_string() }),
    }
}

enum Decision {
    Error(ApiError),
    Answer { completion: Completion, faults: Faults },
}

/// Global faults, then the first matching rule, then the demo or the
/// fallback text. Records the request.
fn decide(state: &mut ServerState, shared: &crate::Shared, request: &ChatRequest) -> Decision {
    state.requests_seen += 1;
    let mut record = RecordedRequest {
        seq: state.requests_seen,
        stream: request.stream,
        rule: None,
        by: AnsweredBy::Fault,
        answer: None,
        fault: None,
        body: request.body.clone(),
    };
    let global = state.faults.take_for_request();
    // Global errors act before any rule is consulted, so a retry after a
    // 429 (or the non-streamed retry after a refusal) meets the same rule.
    if let Some(decision) = error_fault(&global, None, request, &mut record) {
        state.log.push(record);
        return decision;
    }
    let matched = state.script.answer(request);
    let (reply, rule_fault) = match matched {
        Some(matched) => {
            record.by = AnsweredBy::Rule;
            record.rule = Some(RuleRef { index: matched.index, name: matched.name });
            (matched.reply, matched.fault)
        }
        None if shared.demo => {
            record.by = AnsweredBy::Demo;
            (Some(demo::answer(request)), None)
        }
        None => {
            record.by = AnsweredBy::NoRuleMatched;
            (Some(Reply::text(fallback_text(request))), None)
        }
    };
    if let Some(decision) =
        error_fault(&Faults::default(), rule_fault.as_ref(), request, &mut record)
    {
        state.log.push(record);
        return decision;
    }
    let reply = reply.expect("validated: a rule without a reply has an error fault");
    let faults = global.overridden_by(rule_fault.as_ref());
    record.answer = Some(match (&reply.text, reply.tool_calls.is_empty()) {
        (Some(_), false) => AnswerKind::TextAndToolCalls,
        (None, false) => AnswerKind::ToolCalls,
        (_, true) => AnswerKind::Text,
    });
    record.fault = answer_fault(&faults);
    let completion = completion(state, shared, request, reply);
    state.log.push(record);
    Decision::Answer { completion, faults }
}

/// The name in the request log of the fault that changes a 200 answer.
pub(crate) fn answer_fault(faults: &Faults) -> Option<&'static str> {
    match faults.cut {
        Some(Cut::MidText) => Some("cut_mid_text"),
        Some(Cut::MidToolCall) => Some("cut_mid_tool_call"),
        None if faults.delta_delay_ms.unwrap_or(0) > 0 => Some("slow_deltas"),
        None => None,
    }
}

/// The error a fault answers with, if any: from `faults`, or from the
/// rule's own faults when given.
fn error_fault(
    faults: &Faults,
    rule: Option<&Faults>,
    request: &ChatRequest,
    record: &mut RecordedRequest,
) -> Option<Decision> {
    let faults = faults.overridden_by(rule);
    if let Some((name, error)) = status_fault(&faults) {
        record.fault = Some(name);
        return Some(Decision::Error(error));
    }
    let (name, error) =
        if faults.refuses_streaming_with_tools() && request.streams_with_automatic_tools() {
            ("streaming_with_tools_refused", ApiError::StreamingToolsRefused)
        } else if faults.refuses_unparsable_arguments() && request.replays_unparsable_arguments() {
            ("unparsable_arguments_refused", ApiError::ArgumentsNotJson)
        } else {
            return None;
        };
    record.fault = Some(name);
    Some(Decision::Error(error))
}

/// The error status `faults.error` answers with, and its name in the
/// request log: the faults that mean the same for every route.
pub(crate) fn status_fault(faults: &Faults) -> Option<(&'static str, ApiError)> {
    match faults.error? {
        ErrorFault::RateLimit => Some((
            "rate_limit",
            ApiError::RateLimited { retry_after_seconds: faults.retry_after_seconds() },
        )),
        ErrorFault::ServerError => Some(("server_error", ApiError::ServerError)),
        ErrorFault::ContextExceeded => Some(("context_exceeded", ApiError::ContextExceeded)),
    }
}

/// Says plainly that the script had nothing for this request.
fn fallback_text(request: &ChatRequest) -> String {
    let last = request.last_message();
    let excerpt: String = last.question().chars().take(80).collect();
    format!(
        "[fake-model] No script rule matched this request (turn {}, last message from {}: «{excerpt}»). Add a rule to the script, or read GET /__fake/requests to see what was sent.",
        request.turn(),
        last.role
    )
}

fn completion(
    state: &mut ServerState,
    shared: &crate::Shared,
    request: &ChatRequest,
    reply: Reply,
) -> Completion {
    state.completions += 1;
    let id = format!("chatcmpl-{}{:06}", shared.id_prefix, state.completions);
    let tool_calls = reply
        .tool_calls
        .into_iter()
        .map(|call| {
            let id = call.id.unwrap_or_else(|| {
                state.tool_calls += 1;
                format!("call_{}{:06}", shared.id_prefix, state.tool_calls)
            });
            ToolCall { id, name: call.name, arguments: call.arguments }
        })
        .collect();
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let mut completion = Completion {
        id,
        created,
        model: request.model.clone().unwrap_or_else(|| shared.model.clone()),
        text: reply.text,
        tool_calls,
        usage: Usage { prompt_tokens: 0, completion_tokens: 0 },
    };
    let prompt_chars = request.body["messages"].to_string().len()
        + request.body.get("tools").map_or(0, |tools| tools.to_string().len());
    completion.usage = Usage::estimate(prompt_chars, &completion);
    completion
}

fn stream_response(completion: &Completion, include_usage: bool, faults: &Faults) -> Response {
    let frames = completion.frames(include_usage);
    let sent = faults.cut.map_or(frames.len(), |cut| answer::frames_before_cut(&frames, cut));
    let delay = faults.delta_delay();
    let items: Vec<(Bytes, Duration)> = frames[..sent]
        .iter()
        .map(|frame| (frame.to_bytes(), if frame.is_delta() { delay } else { Duration::ZERO }))
        .collect();
    let stream = futures_util::stream::iter(items).then(|(bytes, delay)| async move {
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        Ok::<Bytes, std::io::Error>(bytes)
    });
    let body = match faults.cut {
        Some(_) => Body::from_stream(stream.chain(cut_connection())),
        None => Body::from_stream(stream),
    };
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream; charset=utf-8")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .expect("valid response")
}

async fn complete_response(completion: &Completion, faults: &Faults) -> Response {
    // A non-streamed answer is as late as its stream would have ended.
    let deltas = completion.frames(false).iter().filter(|frame| frame.is_delta()).count();
    let delay = faults.delta_delay() * u32::try_from(deltas).unwrap_or(u32::MAX);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    json_response(completion.body().to_string(), faults.cut.is_some())
}

/// A 200 JSON answer; `cut`: only its first half, then the connection
/// breaks (the client never reads whole JSON).
pub(crate) fn json_response(text: String, cut: bool) -> Response {
    let body = match cut {
        false => Body::from(text),
        true => {
            let mut half = text.len() / 2;
            while !text.is_char_boundary(half) {
                half -= 1;
            }
            let head = Bytes::from(text[..half].to_string());
            let first =
                futures_util::stream::once(async move { Ok::<Bytes, std::io::Error>(head) });
            Body::from_stream(first.chain(cut_connection()))
        }
    };
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(body)
        .expect("valid response")
}

/// A body stream error: hyper then closes the connection without ending
/// the chunked body, which the client sees as a broken response.
fn cut_connection() -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> {
    futures_util::stream::once(async {
        tokio::time::sleep(CUT_FLUSH).await;
        Err(std::io::Error::new(std::io::ErrorKind::ConnectionAborted, "cut by a fault"))
    })
}
