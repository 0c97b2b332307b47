//! The chat proxy: `POST /api/chat` and the conversation and memory routes,
//! forwarded to the orchestrator under the signed identity, streaming.
//!
//! The order is the contract's: session, CSRF, body (size, then a `uid`
//! key), signature, tokens (and the user's display name, time zone and
//! language), forward. The body travels byte for byte, and the
//! answer is passed on chunk by chunk as it arrives (`Body::from_stream` over
//! the upstream byte stream), never collected first: a buffered proxy turns a
//! token stream into one late blob, the bug the PHP app must not have either.
//!
//! The signature's timestamp is the real wall clock, not the fake's clock:
//! the orchestrator compares it with its own clock (±60 s), and a test that
//! advances the fake's clock fifteen minutes to expire tokens must not make
//! every signature stale. Token expiry, which is Nextcloud's business, does
//! follow the fake's clock.

use super::{envelope, renew, session_body, sign};
use crate::{AppState, RequestId};
use axum::body::Body;
use axum::extract::{Extension, Request, State};
use axum::response::Response;
use http::{HeaderName, HeaderValue, StatusCode, header};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC};

const UNREACHABLE: &str = "The assistant is not reachable right now. Try again in a moment.";
const BODY_NAMES_UID: &str = "The request names a user; the assistant acts only for the signed-in user. Reload the page and try again.";

/// Headers of the orchestrator's answer that reach the browser.
const ANSWER_HEADERS: [&str; 4] =
    ["content-type", "cache-control", "x-vercel-ai-ui-message-stream", "x-accel-buffering"];

/// RFC 3986 unreserved characters stay; every other byte is percent-encoded
/// (PHP's `rawurlencode`).
const DISPLAY_NAME_ENCODING: &AsciiSet =
    &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// Every proxied route: the orchestrator's route is the app's path without
/// its prefix, with the same method and query.
pub(super) async fn forward(
    State(shared): State<AppState>,
    Extension(request_id): Extension<RequestId>,
    request: Request,
) -> Result<Response, Response> {
    let (parts, caller, body) = session_body(&shared, request, &request_id).await?;
    if sign::body_names_uid(&body) {
        return Err(envelope(StatusCode::BAD_REQUEST, BODY_NAMES_UID, &request_id));
    }
    let (orchestrator_url, secret, display_name, time_zone, language, app_password) = {
        let world = shared.world();
        let user = world.user(&caller.uid).expect("a session's user exists");
        (
            world.app.settings.orchestrator_url.clone(),
            world.app.settings.shared_secret.clone(),
            user.display_name.clone(),
            user.timezone.clone(),
            user.language.clone(),
            world.app.app_passwords.get(&caller.uid).cloned(),
        )
    };
    let (Some(orchestrator_url), Some(secret)) = (orchestrator_url, secret) else {
        tracing::error!(
            request_id = %request_id.0,
            "the Tamebi app has no orchestrator URL or no shared secret configured"
        );
        return Err(envelope(StatusCode::BAD_GATEWAY, UNREACHABLE, &request_id));
    };

    let tokens = renew::tokens(&shared, &caller, &parts.headers).await;
    let timestamp = crate::clock::wall_now().to_string();
    let route = upstream_route(parts.uri.path());
    let nonce = sign::nonce();
    let signed = sign::Signed {
        uid: &caller.uid,
        timestamp: &timestamp,
        nonce: &nonce,
        method: parts.method.as_str(),
        path: route,
        body: &body,
    };
    let signature = signed.signature(&secret);
    let url = match parts.uri.query() {
        Some(query) => format!("{}{route}?{query}", orchestrator_url.trim_end_matches('/')),
        None => format!("{}{route}", orchestrator_url.trim_end_matches('/')),
    };

    let mut upstream = shared
        .orchestrator_http
        .request(parts.method.clone(), url)
        .header(wire::headers::UID, &caller.uid)
        .header(wire::headers::TIMESTAMP, &timestamp)
        .header(wire::headers::SIGNATURE, &signature)
        .header(wire::headers::NONCE, &nonce)
        .header("x-request-id", &request_id.0)
        .header(
            wire::headers::DISPLAY_NAME,
            percent_encoding::utf8_percent_encode(&display_name, DISPLAY_NAME_ENCODING).to_string(),
        );
    if let Some(time_zone) = &time_zone {
        upstream = upstream.header(wire::headers::TIME_ZONE, time_zone);
    }
    // The user's language setting (`core`/`lang`; "en" unless the fixture
    // says otherwise), as the PHP app sends it.
    if HeaderValue::from_str(&language).is_ok() {
        upstream = upstream.header(wire::headers::LANGUAGE, &language);
    }
    for (audience, token) in &tokens {
        upstream = upstream.header(wire::headers::token(audience), token);
    }
    if let Some(app_password) = &app_password {
        upstream = upstream.header(super::app_password::HEADER, app_password);
    }
    if let Some(content_type) = parts.headers.get(header::CONTENT_TYPE) {
        upstream = upstream.header(header::CONTENT_TYPE, content_type);
    }
    let answer = match upstream.body(body).send().await {
        Ok(answer) => answer,
        Err(error) => {
            tracing::warn!(request_id = %request_id.0, %error, "the orchestrator is unreachable");
            return Err(envelope(StatusCode::BAD_GATEWAY, UNREACHABLE, &request_id));
        }
    };

    let mut response = Response::builder().status(answer.status());
    for name in ANSWER_HEADERS {
        for value in answer.headers().get_all(name) {
            response = response.header(HeaderName::from_static(name), HeaderValue::from(value));
        }
    }
    Ok(response.body(Body::from_stream(answer.bytes_stream())).expect("copied headers are valid"))
}

/// `/index.php/apps/tamebi/api/chat` → `/api/chat`.
fn upstream_route(path: &str) -> &str {
    let path = path.strip_prefix("/index.php").unwrap_or(path);
    path.strip_prefix("/apps/tamebi").expect("routed under the app's prefix")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_orchestrator_route_is_the_path_without_the_prefix() {
        assert_eq!(upstream_route("/apps/tamebi/api/chat"), "/api/chat");
        assert_eq!(upstream_route("/index.php/apps/tamebi/api/memory/7"), "/api/memory/7");
    }

    #[test]
    fn display_names_are_percent_encoded_utf8() {
        let encode = |name: &str| {
            percent_encoding::utf8_percent_encode(name, DISPLAY_NAME_ENCODING).to_string()
        };
        assert_eq!(encode("Chloé Dubois"), "Chlo%C3%A9%20Dubois");
        assert_eq!(encode("a-b_c.d~e"), "a-b_c.d~e");
    }
}
