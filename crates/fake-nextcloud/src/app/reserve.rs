//! The MCP Apps re-serve: the chat page posts an MCP App's HTML (a `ui://`
//! resource) and frames the same-origin URL it gets back, served under the
//! app's own default-deny policy instead of Nextcloud's.
//!
//! Inlining the HTML would not work: an iframe on a local scheme inherits
//! Nextcloud's CSP, whose `strict-dynamic` nonce rule blocks the app's own
//! script. The policy is built only from origins that passed the check here
//! (an `http(s)` origin, nothing more), so a declared domain can never smuggle
//! a directive into the header. Pages are kept ten minutes on the fake's
//! clock, for the user who stored them.

use super::{Csrf, envelope, session_body, session_caller};
use crate::{AppState, RequestId};
use axum::extract::{Extension, Path, Request, State};
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// How long a stored page is served.
pub const PAGE_LIFETIME_SECONDS: i64 = 600;
pub const HTML_LENGTH_MAX: usize = 1024 * 1024;
/// Pages kept per user; storing past it drops the oldest.
pub const PAGE_COUNT_MAX: usize = 64;
/// Origins per list (`connectDomains`, `resourceDomains`).
pub const DOMAIN_COUNT_MAX: usize = 32;

const NO_SUCH_PAGE: &str = "This app view has expired. Run the tool again to show it.";

/// One stored MCP App page.
#[derive(Debug, Clone)]
pub struct Page {
    pub uid: String,
    pub html: String,
    /// The `Content-Security-Policy` it is served with.
    pub policy: String,
    /// Fake clock, Unix seconds.
    pub created: i64,
}

/// Every user's stored pages, by id.
#[derive(Debug, Default)]
pub struct Pages {
    by_id: BTreeMap<String, Page>,
}

impl Pages {
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    fn insert(&mut self, id: String, page: Page, now: i64) {
        self.by_id.retain(|_, stored| now - stored.created < PAGE_LIFETIME_SECONDS);
        super::drop_oldest_past(&mut self.by_id, PAGE_COUNT_MAX, |stored| {
            (stored.uid == page.uid).then_some(stored.created)
        });
        self.by_id.insert(id, page);
    }

    fn get(&self, uid: &str, id: &str, now: i64) -> Option<&Page> {
        self.by_id
            .get(id)
            .filter(|page| page.uid == uid && now - page.created < PAGE_LIFETIME_SECONDS)
    }
}

/// The policy of the contract, default-deny, from checked origins.
pub fn policy(connect_domains: &[String], resource_domains: &[String]) -> String {
    let directive = |name: &str, keywords: &[&str], origins: &[String]| {
        let mut parts: Vec<&str> = keywords.to_vec();
        parts.extend(origins.iter().map(String::as_str));
        if parts.is_empty() {
            parts.push("'none'");
        }
        format!("{name} {}", parts.join(" "))
    };
    [
        "default-src 'none'".to_string(),
        directive("script-src", &["'unsafe-inline'"], resource_domains),
        directive("style-src", &["'unsafe-inline'"], resource_domains),
        directive("img-src", &["data:"], resource_domains),
        directive("font-src", &[], resource_domains),
        directive("media-src", &[], resource_domains),
        directive("connect-src", &[], connect_domains),
        "frame-ancestors 'self'".to_string(),
        "base-uri 'none'".to_string(),
        "form-action 'none'".to_string(),
        // An opaque origin for the document, whatever frames it: its
        // script never reaches the user's cookies or request token.
        "sandbox allow-scripts".to_string(),
    ]
    .join("; ")
}

/// An `https://` or `http://` origin (scheme, host, optional port, nothing
/// else), returned in its canonical spelling.
fn origin(text: &str) -> Option<String> {
    // A wildcard host is a CSP source expression, not an origin.
    if text.contains('*') {
        return None;
    }
    let url = url::Url::parse(text).ok()?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return None;
    }
    let canonical = url.origin().ascii_serialization();
    canonical.eq_ignore_ascii_case(text).then_some(canonical)
}

fn origins(csp: Option<&Value>, name: &str) -> Result<Vec<String>, String> {
    let list = match csp.and_then(|csp| csp.get(name)) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(format!("csp.{name} must be a list of origins.")),
    };
    if list.len() > DOMAIN_COUNT_MAX {
        return Err(format!("csp.{name} lists more than {DOMAIN_COUNT_MAX} origins."));
    }
    list.iter()
        .enumerate()
        .map(|(index, item)| {
            item.as_str().and_then(origin).ok_or_else(|| {
                format!(
                    "csp.{name}[{index}] is not an origin: write https://host or http://host:port, with no path."
                )
            })
        })
        .collect()
}

/// `POST /api/ui` `{html, csp: {connectDomains, resourceDomains}}` → `{url}`.
pub(super) async fn store(
    State(shared): State<AppState>,
    Extension(request_id): Extension<RequestId>,
    request: Request,
) -> Result<Response, Response> {
    let (_, caller, body) = session_body(&shared, request, &request_id).await?;
    let bad_request = |message: &str| envelope(StatusCode::BAD_REQUEST, message, &request_id);
    let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(&body) else {
        return Err(bad_request("The body must be a JSON object with html and csp."));
    };
    let Some(html) = fields.get("html").and_then(Value::as_str) else {
        return Err(bad_request("html must be the app's HTML, as a string."));
    };
    if html.len() > HTML_LENGTH_MAX {
        return Err(bad_request("html is larger than 1 MiB; the app view cannot be shown."));
    }
    let csp = fields.get("csp").filter(|csp| !csp.is_null());
    if csp.is_some_and(|csp| !csp.is_object()) {
        return Err(bad_request("csp must be an object with connectDomains and resourceDomains."));
    }
    let (connect_domains, resource_domains) =
        match (origins(csp, "connectDomains"), origins(csp, "resourceDomains")) {
            (Ok(connect), Ok(resource)) => (connect, resource),
            (Err(message), _) | (_, Err(message)) => return Err(bad_request(&message)),
        };
    let id = crate::oidc::random_token(32);
    let now = shared.now();
    let page = Page {
        uid: caller.uid,
        html: html.to_string(),
        policy: policy(&connect_domains, &resource_domains),
        created: now,
    };
    shared.world().app.pages.insert(id.clone(), page, now);
    Ok(axum::Json(json!({ "url": format!("/apps/tamebi/ui/{id}") })).into_response())
}

/// `GET /ui/{id}`: the stored HTML under its policy, for its user only.
pub(super) async fn serve(
    State(shared): State<AppState>,
    Extension(request_id): Extension<RequestId>,
    Path(id): Path<String>,
    headers: http::HeaderMap,
) -> Result<Response, Response> {
    let caller = session_caller(&shared, &headers, &request_id, Csrf::NotRequired)?;
    let now = shared.now();
    let world = shared.world();
    let Some(page) = world.app.pages.get(&caller.uid, &id, now) else {
        return Err(envelope(StatusCode::NOT_FOUND, NO_SUCH_PAGE, &request_id));
    };
    Ok((
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8".to_string()),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_string()),
            (header::CONTENT_SECURITY_POLICY, page.policy.clone()),
            (header::CACHE_CONTROL, "no-store".to_string()),
        ],
        page.html.clone(),
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    // The policy itself (with origins, and default-deny without) is checked
    // once, as served, by tests/app.rs
    // `an_mcp_app_is_served_under_its_own_policy_to_its_user_for_ten_minutes`.

    #[test]
    fn only_http_origins_pass() {
        assert_eq!(origin("https://cdn.example.com").as_deref(), Some("https://cdn.example.com"));
        assert_eq!(origin("http://127.0.0.1:9000").as_deref(), Some("http://127.0.0.1:9000"));
        assert_eq!(origin("HTTPS://CDN.example.com").as_deref(), Some("https://cdn.example.com"));
        for bad in [
            "cdn.example.com",
            "https://cdn.example.com/",
            "https://cdn.example.com/x",
            "https://a.com; script-src *",
            "javascript:alert(1)",
            "data:",
            "*",
            "'self'",
            "https://u:p@cdn.example.com",
            "ftp://files.example.com",
            "https://*.example.com",
        ] {
            assert_eq!(origin(bad), None, "{bad}");
        }
    }
}
