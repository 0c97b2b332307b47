//! webhook_listeners' OCS API (`WebhooksController`): list, show, register,
//! update and delete registrations. Admin-only, as in Nextcloud
//! (`AuthorizedAdminSetting`): here an admin is a member of group "admin".

use super::{Guard, OcsCall, begin};
use crate::AppState;
use crate::webhooks::{RegistrationError, RegistrationRequest};
use axum::extract::{Path, Request, State};
use axum::response::Response;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub async fn list(
    State(shared): State<AppState>,
    Path(version): Path<String>,
    request: Request,
) -> Response {
    let call = match begin(&shared, &version, request, Guard::Admin).await {
        Ok(call) => call,
        Err(response) => return response,
    };
    let uri = call.text("uri");
    let world = shared.world();
    let registrations: Vec<Value> = world
        .webhooks
        .registrations()
        .filter(|registration| uri.as_ref().is_none_or(|uri| &registration.uri == uri))
        .map(|registration| registration.to_json())
        .collect();
    call.ocs.ok(Value::Array(registrations))
}

pub async fn show(
    State(shared): State<AppState>,
    Path((version, id)): Path<(String, String)>,
    request: Request,
) -> Response {
    let call = match begin(&shared, &version, request, Guard::Admin).await {
        Ok(call) => call,
        Err(response) => return response,
    };
    let world = shared.world();
    match id.parse().ok().and_then(|id| world.webhooks.registration(id)) {
        Some(registration) => call.ocs.ok(registration.to_json()),
        None => call.ocs.error(404, &RegistrationError::NotFound.to_string()),
    }
}

pub async fn create(
    State(shared): State<AppState>,
    Path(version): Path<String>,
    request: Request,
) -> Response {
    let call = match begin(&shared, &version, request, Guard::Admin).await {
        Ok(call) => call,
        Err(response) => return response,
    };
    let registration_request = match read_request(&call) {
        Ok(registration_request) => registration_request,
        Err(message) => return call.ocs.error(400, &message),
    };
    let mut world = shared.world();
    match world.webhooks.register(Some(call.uid()), registration_request) {
        Ok(registration) => call.ocs.ok(registration.to_json()),
        Err(error) => call.ocs.error(400, &error.to_string()),
    }
}

pub async fn update(
    State(shared): State<AppState>,
    Path((version, id)): Path<(String, String)>,
    request: Request,
) -> Response {
    let call = match begin(&shared, &version, request, Guard::Admin).await {
        Ok(call) => call,
        Err(response) => return response,
    };
    let Ok(id) = id.parse::<u64>() else {
        return call.ocs.error(404, &RegistrationError::NotFound.to_string());
    };
    let registration_request = match read_request(&call) {
        Ok(registration_request) => registration_request,
        Err(message) => return call.ocs.error(400, &message),
    };
    let mut world = shared.world();
    match world.webhooks.update(id, Some(call.uid()), registration_request) {
        Ok(registration) => call.ocs.ok(registration.to_json()),
        Err(RegistrationError::NotFound) => {
            call.ocs.error(404, &RegistrationError::NotFound.to_string())
        }
        Err(error) => call.ocs.error(400, &error.to_string()),
    }
}

pub async fn delete(
    State(shared): State<AppState>,
    Path((version, id)): Path<(String, String)>,
    request: Request,
) -> Response {
    let call = match begin(&shared, &version, request, Guard::Admin).await {
        Ok(call) => call,
        Err(response) => return response,
    };
    let deleted = id.parse().is_ok_and(|id| shared.world().webhooks.unregister(id));
    call.ocs.ok(Value::Bool(deleted))
}

/// The controller's parameters. `httpMethod`, `uri` and `event` are
/// required; where PHP would fail with a TypeError (a 500) the fake answers
/// 400 with the parameter's name.
fn read_request(call: &OcsCall) -> Result<RegistrationRequest, String> {
    let required = |name: &str| call.text(name).ok_or_else(|| format!("Missing parameter {name}"));
    Ok(RegistrationRequest {
        http_method: required("httpMethod")?,
        uri: required("uri")?,
        event: required("event")?,
        event_filter: object(call, "eventFilter")?,
        user_id_filter: call.text("userIdFilter"),
        headers: string_map(call, "headers")?,
        auth_method: call.text("authMethod"),
        auth_data: string_map(call, "authData")?,
    })
}

fn object(call: &OcsCall, name: &str) -> Result<Option<Map<String, Value>>, String> {
    match call.params.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(map)) => Ok(Some(map.clone())),
        // PHP's empty array arrives as [] in JSON.
        Some(Value::Array(items)) if items.is_empty() => Ok(Some(Map::new())),
        Some(_) => Err(format!("{name} must be an object")),
    }
}

fn string_map(call: &OcsCall, name: &str) -> Result<Option<BTreeMap<String, String>>, String> {
    let Some(map) = object(call, name)? else {
        return Ok(None);
    };
    map.into_iter()
        .map(|(key, value)| match value {
            Value::String(text) => Ok((key, text)),
            _ => Err(format!("{name} must map names to strings")),
        })
        .collect::<Result<BTreeMap<_, _>, _>>()
        .map(Some)
}
