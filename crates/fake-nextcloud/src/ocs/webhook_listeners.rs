//! webhook_listeners' OCS API (`WebhooksController`): list, show, register,
//! update and delete registrations. Admin-only, as in Nextcloud
//! (`AuthorizedAdminSetting`): here an admin is a member of group "admin".

use super::guard;
use super::{Guarded, OcsCall, OcsError, OcsResult};
use crate::AppState;
use crate::webhooks::{RegistrationError, RegistrationRequest};
use axum::extract::State;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub async fn list(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::Admin>,
) -> OcsResult {
    let uri = call.text("uri");
    let world = shared.world();
    let registrations: Vec<Value> = world
        .webhooks
        .registrations()
        .filter(|registration| uri.as_ref().is_none_or(|uri| &registration.uri == uri))
        .map(|registration| registration.to_json())
        .collect();
    Ok(call.ocs.ok(Value::Array(registrations)))
}

pub async fn show(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::Admin>,
) -> OcsResult {
    let id = call.path_param("id").to_string();
    let world = shared.world();
    let registration = id
        .parse()
        .ok()
        .and_then(|id| world.webhooks.registration(id))
        .ok_or_else(|| refused(&call, RegistrationError::NotFound))?;
    Ok(call.ocs.ok(registration.to_json()))
}

pub async fn create(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::Admin>,
) -> OcsResult {
    let registration_request = read_request(&call)?;
    let mut world = shared.world();
    let registration = world
        .webhooks
        .register(Some(call.uid()), registration_request)
        .map_err(|error| refused(&call, error))?;
    Ok(call.ocs.ok(registration.to_json()))
}

pub async fn update(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::Admin>,
) -> OcsResult {
    let id = call.path_param("id").to_string();
    let id = id.parse::<u64>().map_err(|_| refused(&call, RegistrationError::NotFound))?;
    let registration_request = read_request(&call)?;
    let mut world = shared.world();
    let registration = world
        .webhooks
        .update(id, Some(call.uid()), registration_request)
        .map_err(|error| refused(&call, error))?;
    Ok(call.ocs.ok(registration.to_json()))
}

pub async fn delete(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::Admin>,
) -> OcsResult {
    let id = call.path_param("id").to_string();
    let deleted = id.parse().is_ok_and(|id| shared.world().webhooks.unregister(id));
    Ok(call.ocs.ok(Value::Bool(deleted)))
}

/// The mapper's refusals: an unknown id is 404, an invalid registration 400
/// (`register` never answers `NotFound`, so create sees only the latter).
fn refused(call: &OcsCall, error: RegistrationError) -> OcsError {
    let status = if error == RegistrationError::NotFound { 404 } else { 400 };
    call.ocs.fail(status, error.to_string())
}

/// The controller's parameters. `httpMethod`, `uri` and `event` are
/// required; where PHP would fail with a TypeError (a 500) the fake answers
/// 400 with the parameter's name.
fn read_request(call: &OcsCall) -> Result<RegistrationRequest, OcsError> {
    read_parameters(call).map_err(|message| call.ocs.fail(400, message))
}

fn read_parameters(call: &OcsCall) -> Result<RegistrationRequest, String> {
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
