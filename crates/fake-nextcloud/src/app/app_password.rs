//! `/api/app-password`: app-password mode (docs/app-contract.md). Where
//! Nextcloud refuses bearer-created sessions on some routes (its open bug
//! on CalDAV and Deck), the user saves an app password of their own here —
//! created under Settings → Security → Devices & sessions, so it can be
//! revoked there — and the chat proxy sends it to the orchestrator in
//! `X-Tamebi-App-Password` with every request, for the MCP server
//! configured to spend it. It is never shown again: GET says only whether
//! one is saved.
//!
//! Session routes with the request token (CSRF): only the user's browser
//! saves or removes it, never a bearer.

use super::{Csrf, SessionCaller, envelope, session_body, session_caller};
use crate::{AppState, RequestId, Shared};
use axum::extract::{Extension, Request, State};
use axum::response::{IntoResponse, Response};
use http::HeaderMap;
use http::StatusCode;
use serde_json::{Value, json};
use std::collections::HashMap;

pub const HEADER: &str = wire::headers::APP_PASSWORD;

const NOT_YOURS: &str = "That is not an app password of your account. Create one under Settings → Security → Devices & sessions, then paste it here.";
const NOT_JSON: &str =
    "Send a JSON object with your app password in \"appPassword\", then try again.";

/// The saved app passwords, by uid.
#[derive(Debug, Default)]
pub struct AppPasswords(HashMap<String, String>);

impl AppPasswords {
    pub fn get(&self, uid: &str) -> Option<&String> {
        self.0.get(uid)
    }
}

/// `GET /api/app-password`: `{"set": bool}`.
pub(super) async fn status(
    State(shared): State<AppState>,
    Extension(request_id): Extension<RequestId>,
    request: Request,
) -> Result<Response, Response> {
    let uid = session_uid(&shared, request.headers(), &request_id)?;
    let set = shared.world().app.app_passwords.get(&uid).is_some();
    Ok(axum::Json(json!({ "set": set })).into_response())
}

/// `PUT /api/app-password` `{"appPassword": "..."}`: saved when it is one
/// of the user's app passwords (the real app checks it with a loopback
/// Basic request as the user); 204.
pub(super) async fn save(
    State(shared): State<AppState>,
    Extension(request_id): Extension<RequestId>,
    request: Request,
) -> Result<Response, Response> {
    let (_, SessionCaller { uid, .. }, body) = session_body(&shared, request, &request_id).await?;
    let given = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|value| value["appPassword"].as_str().map(str::to_string));
    let Some(given) = given.filter(|given| !given.trim().is_empty()) else {
        return Err(envelope(StatusCode::BAD_REQUEST, NOT_JSON, &request_id));
    };
    let mut world = shared.world();
    let valid = world.user(&uid).is_some_and(|user| user.app_passwords.contains(&given));
    if !valid {
        return Err(envelope(StatusCode::BAD_REQUEST, NOT_YOURS, &request_id));
    }
    world.app.app_passwords.0.insert(uid, given);
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `DELETE /api/app-password`: forgets it; 204 whether or not one was saved.
pub(super) async fn remove(
    State(shared): State<AppState>,
    Extension(request_id): Extension<RequestId>,
    request: Request,
) -> Result<Response, Response> {
    let uid = session_uid(&shared, request.headers(), &request_id)?;
    shared.world().app.app_passwords.0.remove(&uid);
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Every route here: the session's uid, with the request token checked.
fn session_uid(
    shared: &Shared,
    headers: &HeaderMap,
    request_id: &RequestId,
) -> Result<String, Response> {
    session_caller(shared, headers, request_id, Csrf::Required).map(|caller| caller.uid)
}
