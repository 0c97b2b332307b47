//! The Tamebi app's endpoints (`docs/app-contract.md`): the chat page, the
//! signed streaming proxy to the orchestrator, token renewal, the mail routes
//! and the MCP Apps re-serve, under `/apps/tamebi/…` and
//! `/index.php/apps/tamebi/…`.
//!
//! This is the harness twin of `nc-app/` (the PHP app); where the two differ
//! the contract decides. The key design choice: the fake implements the
//! contract from the document, not by calling into the orchestrator crate —
//! fakes never depend on the services they stand in front of — so the
//! signing code is written twice and both copies are held to the shared
//! vectors. Every error this app makes is the envelope
//! `{"error":{"message","requestId"}}` with the id the response carries in
//! `X-Request-Id`; messages say what happened and what to do, never an
//! upstream detail.
//!
//! The app's state (run-time settings, cached tokens, mail previews,
//! re-served pages) lives in the [`World`](crate::World) like every other
//! state of the fake, so the admin endpoint and tests see one truth.

// Handlers return the refusal itself (a ready HTTP response) as their error:
// it is built once per request, so its size does not matter.
#![allow(clippy::result_large_err)]

mod app_password;
mod mail_api;
mod page;
mod proxy;
mod renew;
mod reserve;
pub mod sign;

pub use app_password::AppPasswords;
pub use mail_api::{Preview, PreviewOutcome, Previews};
pub use page::{BUILD_COMMAND, SCRIPT, STYLESHEET};
pub use renew::TokenCache;
pub use reserve::{Page, Pages};

use crate::{AppState, RequestId, Shared};
use axum::Router;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use http::{HeaderMap, StatusCode, header};
use serde_json::json;

/// The largest body the proxy and the app's own routes read (else 413).
pub const BODY_LENGTH_MAX: usize = 4 * 1024 * 1024;
/// The shortest shared secret accepted, as the orchestrator requires.
pub const SHARED_SECRET_LENGTH_MIN: usize = 32;

/// The prefixes the app answers under: pretty URLs and `index.php`.
pub const PREFIXES: [&str; 2] = ["/apps/tamebi", "/index.php/apps/tamebi"];

/// Where the built chat island is, relative to the working directory.
pub const WEB_DIR_DEFAULT: &str = "web/dist";

/// What a session route answers without a live session.
pub const SESSION_ENDED: &str =
    "Your Nextcloud session has ended. Reload the page to sign in again.";

/// How the Tamebi app is configured: `config.php`'s `tamebi` keys and the
/// OIDC clients `occ oidc:create` made for it.
#[derive(Clone)]
pub struct AppConfig {
    /// The orchestrator's base URL, e.g. `http://127.0.0.1:9100`; `None`:
    /// the chat proxy answers 502.
    pub orchestrator_url: Option<String>,
    /// The secret shared with the orchestrator (at least 32 bytes); `None`:
    /// the chat proxy answers 502 and logs why.
    pub shared_secret: Option<Vec<u8>>,
    /// One token per audience, each obtained with its own OIDC client.
    pub audiences: Vec<Audience>,
    /// A cached token expiring within this many seconds is renewed.
    pub renew_margin_s: i64,
    /// Where the built chat island is read from (`tamebi-main.mjs`,
    /// `tamebi-main.css`); relative paths are from the working directory.
    /// Without the bundle the page is a placeholder naming the build command.
    pub web_dir: std::path::PathBuf,
}

/// An audience the app obtains a token for, and the OIDC client that mints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Audience {
    /// Lowercase letters, digits and `-`: the `X-Tamebi-Token-<name>` suffix.
    pub name: String,
    /// The client in the `oidc` app (its secret and redirect URI come from there).
    pub client_id: String,
}

impl Default for AppConfig {
    fn default() -> Self {
        let audience = |name: &str, client_id: &str| Audience {
            name: name.to_string(),
            client_id: client_id.to_string(),
        };
        AppConfig {
            orchestrator_url: None,
            shared_secret: None,
            audiences: vec![
                audience("mcp-nextcloud", "tamebi-mcp-nextcloud"),
                audience("mcp-mail", "tamebi-mcp-mail"),
                audience("nextcloud", "nextcloud"),
            ],
            renew_margin_s: 120,
            web_dir: std::path::PathBuf::from(WEB_DIR_DEFAULT),
        }
    }
}

impl std::fmt::Debug for AppConfig {
    // The secret never reaches a log line.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("AppConfig")
            .field("orchestrator_url", &self.orchestrator_url)
            .field("shared_secret", &self.shared_secret.as_ref().map(|_| "<redacted>"))
            .field("audiences", &self.audiences)
            .field("renew_margin_s", &self.renew_margin_s)
            .field("web_dir", &self.web_dir)
            .finish()
    }
}

impl AppConfig {
    /// Every reason the configuration cannot work, all at once.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if let Some(secret) = &self.shared_secret
            && secret.len() < SHARED_SECRET_LENGTH_MIN
        {
            problems.push(format!(
                "the Tamebi app's shared secret has {} bytes; it needs at least {SHARED_SECRET_LENGTH_MIN}",
                secret.len()
            ));
        }
        if let Some(url) = &self.orchestrator_url
            && !matches!(url::Url::parse(url), Ok(parsed) if matches!(parsed.scheme(), "http" | "https"))
        {
            problems.push(format!("the orchestrator URL {url:?} is not an http(s) URL"));
        }
        for audience in &self.audiences {
            let valid_name = !audience.name.is_empty()
                && audience.name.len() <= 40
                && audience
                    .name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !valid_name {
                problems.push(format!(
                    "audience name {:?} must be 1–40 lowercase letters, digits or '-'",
                    audience.name
                ));
            }
        }
        if self.audiences.len() > 8 {
            problems.push("the Tamebi app sends at most 8 tokens; name fewer audiences".into());
        }
        problems
    }
}

/// The app's share of the world.
#[derive(Debug, Default)]
pub struct AppStore {
    pub settings: AppConfig,
    pub tokens: TokenCache,
    pub previews: Previews,
    pub pages: Pages,
    pub app_passwords: AppPasswords,
}

pub fn routes() -> Router<AppState> {
    let mut router = Router::new();
    for prefix in PREFIXES {
        let at = |path: &str| format!("{prefix}{path}");
        router = router
            .route(prefix, get(page::to_chat_page))
            .route(&at("/"), get(page::chat_page))
            .route(&at("/js/{file}"), get(page::asset))
            .route(&at("/css/{file}"), get(page::asset))
            .route(&at("/api/chat"), post(proxy::forward))
            .route(&at("/api/conversations"), get(proxy::forward))
            .route(&at("/api/conversations/{id}"), get(proxy::forward).delete(proxy::forward))
            .route(&at("/api/memory"), get(proxy::forward).post(proxy::forward))
            .route(&at("/api/memory/{id}"), delete(proxy::forward))
            .route(&at("/api/mail/status"), get(mail_api::status))
            .route(&at("/api/mail/search"), get(mail_api::search))
            .route(&at("/api/mail/messages/{id}"), get(mail_api::read))
            .route(&at("/api/mail/compose"), post(mail_api::compose))
            .route(&at("/api/mail/previews/{id}"), get(mail_api::preview))
            .route(&at("/api/mail/previews/{id}/send"), mail_api::clicked(mail_api::Click::Send))
            .route(&at("/api/mail/previews/{id}/save"), mail_api::clicked(mail_api::Click::Save))
            .route(
                &at("/api/app-password"),
                get(app_password::status).put(app_password::save).delete(app_password::remove),
            )
            .route(&at("/api/ui"), post(reserve::store))
            .route(&at("/ui/{id}"), get(reserve::serve));
    }
    router
}

/// The error envelope with this request's id.
pub(crate) fn envelope(status: StatusCode, message: &str, request_id: &RequestId) -> Response {
    (
        status,
        [(header::CACHE_CONTROL, "no-store")],
        axum::Json(json!({ "error": { "message": message, "requestId": request_id.0 } })),
    )
        .into_response()
}

/// The signed-in user a session route acts for.
#[derive(Debug, Clone)]
pub(crate) struct SessionCaller {
    pub uid: String,
    /// The session cookie's value: token caches are per session.
    pub session_id: String,
}

/// Whether a session route checks the request token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Csrf {
    Required,
    /// Navigations (the page, a framed MCP App) cannot send a header.
    NotRequired,
}

/// The live session of the request's cookies, then (when required) its
/// request token in the `requesttoken` header: 401 envelope, then
/// Nextcloud's own 412.
///
/// Unlike OCS routes, an app route does not waive the check for an
/// `OCS-APIRequest` header (Nextcloud's `SecurityMiddleware` waives it only
/// for OCS controllers), so this does not use `ocs::passes_csrf`.
pub(crate) fn session_caller(
    shared: &Shared,
    headers: &HeaderMap,
    request_id: &RequestId,
    csrf: Csrf,
) -> Result<SessionCaller, Response> {
    let world = shared.world();
    let session = crate::oidc::session_id_from_headers(&world, headers).and_then(|session_id| {
        let session = world.oidc.session(&session_id)?;
        world.users.contains_key(&session.uid).then(|| (session_id, session.clone()))
    });
    let Some((session_id, session)) = session else {
        return Err(envelope(StatusCode::UNAUTHORIZED, SESSION_ENDED, request_id));
    };
    if csrf == Csrf::Required {
        let token = headers.get("requesttoken").and_then(|value| value.to_str().ok());
        if token != Some(session.request_token.as_str()) {
            return Err(crate::ocs::csrf_failed());
        }
    }
    Ok(SessionCaller { uid: session.uid, session_id })
}

/// A session route's caller (CSRF required) and then its body, with the
/// request's method, URI and headers: how every chat-page request that
/// carries a body begins.
pub(crate) async fn session_body(
    shared: &Shared,
    request: axum::extract::Request,
    request_id: &RequestId,
) -> Result<(http::request::Parts, SessionCaller, bytes::Bytes), Response> {
    let (parts, body) = request.into_parts();
    let caller = session_caller(shared, &parts.headers, request_id, Csrf::Required)?;
    let body = read_body(body, request_id).await?;
    Ok((parts, caller, body))
}

/// Reads a request body up to [`BODY_LENGTH_MAX`]; past it, the 413 envelope.
pub(crate) async fn read_body(
    body: axum::body::Body,
    request_id: &RequestId,
) -> Result<bytes::Bytes, Response> {
    axum::body::to_bytes(body, BODY_LENGTH_MAX).await.map_err(|_| {
        envelope(
            StatusCode::PAYLOAD_TOO_LARGE,
            "The request is larger than 4 MiB. Shorten it and try again.",
            request_id,
        )
    })
}

/// Makes room for one more of a user's stored items (re-served pages, mail
/// previews): once they hold `max`, their oldest goes. `created_if_mine` is
/// an item's creation time when it is that user's.
pub(crate) fn drop_oldest_past<T>(
    stored: &mut std::collections::BTreeMap<String, T>,
    max: usize,
    created_if_mine: impl Fn(&T) -> Option<i64>,
) {
    let mine: Vec<(i64, String)> = stored
        .iter()
        .filter_map(|(id, item)| created_if_mine(item).map(|created| (created, id.clone())))
        .collect();
    if mine.len() >= max {
        let oldest = mine.into_iter().min().expect("at least one").1;
        stored.remove(&oldest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn only_the_oldest_of_that_users_items_makes_room() {
        // (owner, created) by id.
        let mut stored: BTreeMap<String, (&str, i64)> = BTreeMap::new();
        for (id, owner, created) in [("a", "alice", 30), ("b", "alice", 10), ("c", "bob", 5)] {
            stored.insert(id.to_string(), (owner, created));
        }
        let alices = |item: &(&str, i64)| (item.0 == "alice").then_some(item.1);
        drop_oldest_past(&mut stored, 3, alices);
        assert_eq!(stored.len(), 3, "alice holds 2 of 3: nothing goes");
        drop_oldest_past(&mut stored, 2, alices);
        let left: Vec<&str> = stored.keys().map(String::as_str).collect();
        assert_eq!(left, ["a", "c"], "alice's oldest goes, not bob's older one");
    }
}
