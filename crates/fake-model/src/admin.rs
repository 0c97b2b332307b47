//! The admin endpoint tests and scenarios steer the fake with, under
//! `/__fake/`. Every route requires the admin token in [`TOKEN_HEADER`]
//! (401 without it; 404 when the fake was started with
//! [`crate::Admin::Off`]); the API key guards only `/v1`. The recorded
//! requests hold what the model was shown — document text, memory facts —
//! and loopback is shared by every local account.
//!
//! | route | does |
//! |---|---|
//! | `GET /__fake/script` | the current script as JSON |
//! | `PUT /__fake/script` | replaces it (the script format, as JSON); rule counts restart; the script's `faults` become the global faults |
//! | `GET /__fake/faults` | the global faults |
//! | `PUT /__fake/faults` | replaces them (the whole object; `{}` clears) |
//! | `GET /__fake/requests` | `{"requests": [record…], "dropped": n, "embeddings": [record…], "embeddings_dropped": n}` |
//! | `DELETE /__fake/requests` | empties both logs; `{"cleared": n}` |
//!
//! A record is [`crate::record::RecordedRequest`] (chat) or
//! [`crate::record::RecordedEmbeddings`].

use crate::error::ApiError;
use crate::faults::Faults;
use crate::script::Script;
use crate::{AppState, Shared};
use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use bytes::Bytes;
use serde_json::{Value, json};

pub const PREFIX: &str = "/__fake/";
/// The header carrying the admin token.
pub const TOKEN_HEADER: &str = wire::headers::FAKE_ADMIN;

/// A fresh admin token.
pub fn random_token() -> String {
    http_serve::admin_token::random()
}

/// Lets a request through only with the admin token.
pub async fn require_token(
    State(shared): State<AppState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let expected = shared.admin_token.as_deref();
    http_serve::admin_token::guard(expected, TOKEN_HEADER, request, next, refused).await
}

/// The 401 of a request without the admin token.
fn refused() -> Response {
    (
        http::StatusCode::UNAUTHORIZED,
        Json(json!({"error": {
            "message": format!("The fake model's admin routes need the admin token in the {TOKEN_HEADER} header: the one FakeModel::admin_token gives, or the file given to --admin-token-file."),
            "type": "invalid_request_error",
        }})),
    )
        .into_response()
}

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/__fake/script", get(get_script).put(put_script))
        .route("/__fake/faults", get(get_faults).put(put_faults))
        .route("/__fake/requests", get(get_requests).delete(delete_requests))
}

async fn get_script(State(shared): State<AppState>) -> Response {
    Json(script_json(&shared)).into_response()
}

fn script_json(shared: &Shared) -> Value {
    let state = shared.state();
    let mut source = state.script.source().clone();
    // The global faults may have changed since the script was set.
    source.faults = state.faults.clone();
    serde_json::to_value(source).expect("a script serializes")
}

async fn put_script(State(shared): State<AppState>, body: Bytes) -> Result<Response, ApiError> {
    let value: Value = serde_json::from_slice(&body)
        .map_err(|error| ApiError::invalid(format!("the body is not JSON: {error}"), None, None))?;
    let script = Script::from_json(value)
        .map_err(|error| ApiError::invalid(error.to_string(), None, None))?;
    shared.set_script(script);
    Ok(Json(script_json(&shared)).into_response())
}

async fn get_faults(State(shared): State<AppState>) -> Response {
    Json(shared.state().faults.clone()).into_response()
}

async fn put_faults(State(shared): State<AppState>, body: Bytes) -> Result<Response, ApiError> {
    let faults: Faults = serde_json::from_slice(&body)
        .map_err(|error| ApiError::invalid(format!("these are not faults: {error}"), None, None))?;
    shared.state().faults = faults.clone();
    Ok(Json(faults).into_response())
}

async fn get_requests(State(shared): State<AppState>) -> Response {
    let state = shared.state();
    Json(json!({
        "requests": state.log.all(),
        "dropped": state.log.dropped,
        "embeddings": state.embeddings_log.all(),
        "embeddings_dropped": state.embeddings_log.dropped,
    }))
    .into_response()
}

async fn delete_requests(State(shared): State<AppState>) -> Response {
    let mut state = shared.state();
    let cleared = state.log.clear() + state.embeddings_log.clear();
    Json(json!({ "cleared": cleared })).into_response()
}
