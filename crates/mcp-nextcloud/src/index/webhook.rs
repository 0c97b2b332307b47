//! `POST /webhooks/nextcloud`: webhook_listeners tells us a file changed.
//!
//! The call comes from a Nextcloud background job where no session exists,
//! so it carries a file id, a path and a uid — and no token. It therefore
//! never reads anything: created and written files become dirty rows
//! (with an unknown mtime, which the queue treats as "just now"), deleted
//! files lose their row and passages, renamed files get their new path.
//! The next search by somebody who can open the file does the reading.
//!
//! It is authenticated by a shared secret in [`SECRET_HEADER`], which
//! webhook_listeners sends with `authMethod: header`
//! (`tamebi webhooks register` sets it up), compared in constant time.
//! Without a configured secret the endpoint does not exist.

use super::Index;
use super::store;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use serde::Deserialize;
use std::sync::Arc;

pub const PATH: &str = "/webhooks/nextcloud";
pub const SECRET_HEADER: &str = wire::headers::WEBHOOK_SECRET;
/// The largest webhook body accepted.
pub const BODY_LENGTH_MAX: usize = 64 * 1024;

pub const NODE_CREATED: &str = "OCP\\Files\\Events\\Node\\NodeCreatedEvent";
pub const NODE_WRITTEN: &str = "OCP\\Files\\Events\\Node\\NodeWrittenEvent";
pub const NODE_DELETED: &str = "OCP\\Files\\Events\\Node\\NodeDeletedEvent";
pub const NODE_RENAMED: &str = "OCP\\Files\\Events\\Node\\NodeRenamedEvent";
/// What `tamebi webhooks register` registers. NodeCreatedEvent is accepted
/// too but not registered: Nextcloud fires NodeWrittenEvent for every new
/// file's content as well.
pub const REGISTERED_EVENTS: [&str; 3] = [NODE_WRITTEN, NODE_RENAMED, NODE_DELETED];

#[derive(Clone)]
pub struct WebhookState {
    pub index: Index,
    pub secret: Arc<str>,
}

#[derive(Debug, Deserialize)]
struct Payload {
    event: Event,
}

#[derive(Debug, Deserialize)]
struct Event {
    class: String,
    #[serde(default)]
    node: Option<Node>,
    #[serde(default)]
    target: Option<Node>,
}

#[derive(Debug, Deserialize)]
struct Node {
    id: u64,
    path: String,
}

/// What one call does to the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Dirty { fileid: u64, path: String },
    Removed { fileid: u64 },
    Renamed { fileid: u64, path: String },
    Ignored,
}

pub async fn receive(
    State(state): State<WebhookState>,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) => {
            tracing::info!(%rejection, "webhook refused: body not read");
            return refusal(
                rejection.status(),
                "The webhook body is too large or could not be read. Nothing was recorded.",
            );
        }
    };
    let given = headers.get(SECRET_HEADER).map(|value| value.as_bytes()).unwrap_or_default();
    if !constant_time_eq(given, state.secret.as_bytes()) {
        tracing::info!("webhook refused: wrong or missing secret");
        return refusal(
            StatusCode::UNAUTHORIZED,
            "The webhook secret is missing or wrong. Register the webhooks again (tamebi webhooks register) with the secret mcp-nextcloud was started with.",
        );
    }
    let change = match parse(&body) {
        Ok(change) => change,
        Err(reason) => {
            // The parser's words (which quote the body) go to the log only.
            tracing::info!(%reason, "webhook refused: unreadable payload");
            return refusal(
                StatusCode::BAD_REQUEST,
                "The body is not a webhook_listeners event payload (JSON with event.class and event.node). Nothing was recorded.",
            );
        }
    };
    tracing::info!(?change, "webhook");
    let now = super::now();
    let applied = state
        .index
        .store()
        .run(move |connection| match change {
            Change::Dirty { fileid, path } => store::mark_dirty(connection, fileid, &path, now),
            Change::Removed { fileid } => store::remove(connection, fileid),
            Change::Renamed { fileid, path } => {
                store::rename(connection, fileid, &path)?;
                // A file renamed into a readable type is news to the index.
                if crate::document::may_have_text(None, &path)
                    && store::version(connection, fileid)?.is_none()
                {
                    store::mark_dirty(connection, fileid, &path, now)?;
                }
                Ok(())
            }
            Change::Ignored => Ok(()),
        })
        .await;
    match applied {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(error) => {
            tracing::error!(error = %error, "webhook not recorded");
            // 5xx: webhook_listeners may deliver it again.
            refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "The index could not record this change just now; deliver it again.",
            )
        }
    }
}

/// An error answer in the envelope every Tamebi service uses:
/// `{"error": {"message": …}}`, a sentence saying what to do.
fn refusal(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(serde_json::json!({ "error": { "message": message } }))).into_response()
}

/// Reads a webhook_listeners payload.
pub fn parse(body: &[u8]) -> Result<Change, String> {
    if body.len() > BODY_LENGTH_MAX {
        return Err("The webhook body is too large.".into());
    }
    let payload: Payload = serde_json::from_slice(body)
        .map_err(|error| format!("The webhook body is not a webhook_listeners payload: {error}"))?;
    let event = payload.event;
    let change = match event.class.as_str() {
        NODE_CREATED | NODE_WRITTEN => {
            let node = event.node.ok_or("The event has no node.")?;
            let path = user_path(&node.path);
            match crate::document::may_have_text(None, &path) {
                true => Change::Dirty { fileid: node.id, path },
                false => Change::Ignored,
            }
        }
        NODE_DELETED => Change::Removed { fileid: event.node.ok_or("The event has no node.")?.id },
        NODE_RENAMED => {
            let target = event.target.ok_or("The rename has no target.")?;
            Change::Renamed { fileid: target.id, path: user_path(&target.path) }
        }
        _ => Change::Ignored,
    };
    Ok(change)
}

/// `/alice/files/Documents/a.md` → `Documents/a.md`.
fn user_path(path: &str) -> String {
    let trimmed = path.trim_start_matches('/');
    match trimmed.split_once("/files/") {
        Some((_, rest)) => rest.to_string(),
        None => trimmed.to_string(),
    }
}

/// What registering did for one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Registered {
    Created {
        event: String,
        id: u64,
    },
    /// It existed; its secret was rewritten with the current one.
    AlreadyThere {
        event: String,
        id: u64,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    #[error("Nextcloud could not be reached at {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error(
        "Nextcloud refused the registration (HTTP {status}): the account must be an administrator, and the webhook_listeners app must be enabled (occ app:enable webhook_listeners)"
    )]
    Refused { status: u16 },
    #[error("Nextcloud answered something unexpected (HTTP {status}): {detail}")]
    Unexpected { status: u16, detail: String },
}

/// Registers [`REGISTERED_EVENTS`] with webhook_listeners' OCS API, calling
/// `endpoint` with the secret in [`SECRET_HEADER`]. Idempotent: an event
/// already registered for `endpoint` keeps its id and gets the current
/// secret (Nextcloud never shows the stored one, so it cannot be compared). Needs an admin
/// account (an app password): this is an operator's command, and the
/// server itself never holds that credential.
pub async fn register(
    http: &reqwest::Client,
    nextcloud_url: &str,
    admin: (&str, &str),
    endpoint: &str,
    secret: &str,
) -> Result<Vec<Registered>, RegisterError> {
    let url = format!(
        "{}/ocs/v2.php/apps/webhook_listeners/api/v1/webhooks",
        nextcloud_url.trim_end_matches('/')
    );
    let ocs = |request: reqwest::RequestBuilder| {
        request
            .basic_auth(admin.0, Some(admin.1))
            .header("ocs-apirequest", "true")
            .header("accept", "application/json")
    };
    let existing = ocs_data(
        ocs(http.get(format!("{url}?uri={}", crate::nextcloud::encode(endpoint)))).send().await,
        &url,
    )
    .await?;
    let existing: Vec<(String, u64)> = existing
        .as_array()
        .map(|registrations| {
            registrations
                .iter()
                .filter(|registration| registration["uri"] == endpoint)
                .filter_map(|registration| {
                    Some((
                        registration["event"].as_str()?.to_string(),
                        registration["id"].as_u64()?,
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut outcome = Vec::new();
    for event in REGISTERED_EVENTS {
        let body = serde_json::json!({
            "httpMethod": "POST",
            "uri": endpoint,
            "event": event,
            "authMethod": "header",
            "authData": { SECRET_HEADER: secret },
        });
        // Nextcloud never shows a registration's secret, so an existing one
        // is rewritten with the current secret: a changed secret takes effect.
        if let Some((_, id)) = existing.iter().find(|(known, _)| known == event) {
            let update = format!("{url}/{id}");
            ocs_data(ocs(http.post(&update).json(&body)).send().await, &update).await?;
            outcome.push(Registered::AlreadyThere { event: event.to_string(), id: *id });
            continue;
        }
        let data = ocs_data(ocs(http.post(&url).json(&body)).send().await, &url).await?;
        let id = data["id"].as_u64().ok_or_else(|| RegisterError::Unexpected {
            status: 200,
            detail: "the registration has no id".into(),
        })?;
        outcome.push(Registered::Created { event: event.to_string(), id });
    }
    Ok(outcome)
}

async fn ocs_data(
    response: Result<reqwest::Response, reqwest::Error>,
    url: &str,
) -> Result<serde_json::Value, RegisterError> {
    let response = response.map_err(|error| RegisterError::Unreachable {
        url: url.to_string(),
        reason: error.without_url().to_string(),
    })?;
    let status = response.status().as_u16();
    if matches!(status, 401 | 403 | 404) {
        return Err(RegisterError::Refused { status });
    }
    let body: serde_json::Value = response.json().await.map_err(|error| {
        RegisterError::Unexpected { status, detail: format!("not OCS JSON ({error})") }
    })?;
    if !(200..300).contains(&status) {
        let message = body["ocs"]["meta"]["message"].as_str().unwrap_or("no message").to_string();
        return Err(RegisterError::Unexpected { status, detail: message });
    }
    Ok(body["ocs"]["data"].clone())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() || b.is_empty() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |difference, (x, y)| difference | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_become_changes() {
        let written = br#"{"event":{"class":"OCP\\Files\\Events\\Node\\NodeWrittenEvent","node":{"id":12,"path":"/alice/files/Documents/CR r\u00e9union.docx"}},"user":{"uid":"alice"},"time":1}"#;
        assert_eq!(
            parse(written).unwrap(),
            Change::Dirty { fileid: 12, path: "Documents/CR réunion.docx".into() }
        );
        let image = br#"{"event":{"class":"OCP\\Files\\Events\\Node\\NodeCreatedEvent","node":{"id":13,"path":"/alice/files/p.png"}}}"#;
        assert_eq!(parse(image).unwrap(), Change::Ignored);
        let renamed = br#"{"event":{"class":"OCP\\Files\\Events\\Node\\NodeRenamedEvent","source":{"id":12,"path":"/alice/files/a.md"},"target":{"id":12,"path":"/alice/files/b.md"}}}"#;
        assert_eq!(parse(renamed).unwrap(), Change::Renamed { fileid: 12, path: "b.md".into() });
        let deleted = br#"{"event":{"class":"OCP\\Files\\Events\\Node\\NodeDeletedEvent","node":{"id":12,"path":"/alice/files/b.md"}}}"#;
        assert_eq!(parse(deleted).unwrap(), Change::Removed { fileid: 12 });
        assert!(parse(b"{}").is_err());
        assert!(
            parse(br#"{"event":{"class":"OCP\\Files\\Events\\Node\\NodeWrittenEvent"}}"#).is_err()
        );
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secreT", b"secret"));
        assert!(!constant_time_eq(b"secret-longer", b"secret"));
        assert!(!constant_time_eq(b"", b""));
    }
}
