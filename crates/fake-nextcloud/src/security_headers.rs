//! The security headers every Nextcloud answer carries.
//!
//! Nextcloud sets them in three layers, and the fake follows the same
//! three, so that a client (or the integration suite's "the following
//! headers should be set" and "there are no duplicate headers") sees the
//! same set:
//!
//! 1. `OC_Response::addSecurityHeaders`, run by `base.php` for every
//!    request: `Referrer-Policy`, `X-Content-Type-Options`,
//!    `X-Frame-Options`, `X-Permitted-Cross-Domain-Policies`,
//!    `X-Robots-Tag` and `X-XSS-Protection` (the fallbacks for web servers
//!    that do not send them; the fake is its own web server).
//! 2. `remote.php` (all DAV) replaces the content security policy with the
//!    strictest one, `default-src 'none';`.
//! 3. AppFramework responses (`/ocs/…`, `/index.php/…`) carry the policy of
//!    `EmptyContentSecurityPolicy`, the `Feature-Policy` of
//!    `EmptyFeaturePolicy` and `Cache-Control: no-cache, no-store,
//!    must-revalidate` (`Response::getHeaders`).
//!
//! A handler that sets one of these itself (the Tamebi app's page sets its
//! own policy) keeps its value: a header is only added when absent, which
//! is also what keeps every header single.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http::{HeaderMap, HeaderName, HeaderValue};

/// `base.php`'s fallback headers, on every answer.
const EVERY_ANSWER: [(&str, &str); 6] = [
    ("referrer-policy", "no-referrer"),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "SAMEORIGIN"),
    ("x-permitted-cross-domain-policies", "none"),
    ("x-robots-tag", "noindex, nofollow"),
    ("x-xss-protection", "1; mode=block"),
];

/// `remote.php`: everything served over DAV.
pub const DAV_POLICY: &str = "default-src 'none';";

/// `EmptyContentSecurityPolicy::buildPolicy()` with nothing allowed.
pub const APP_FRAMEWORK_POLICY: &str =
    "default-src 'none';base-uri 'none';manifest-src 'self';frame-ancestors 'none'";

/// `EmptyFeaturePolicy::buildPolicy()` with nothing allowed.
pub const APP_FRAMEWORK_FEATURE_POLICY: &str = "autoplay 'none';camera 'none';fullscreen 'none';geolocation 'none';microphone 'none';payment 'none'";

/// `Response::getHeaders`' default caching rule.
pub const APP_FRAMEWORK_CACHE_CONTROL: &str = "no-cache, no-store, must-revalidate";

/// Which of Nextcloud's entry points a path belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryPoint {
    /// `remote.php`: sabre/dav.
    Remote,
    /// `ocs/v1.php`, `ocs/v2.php` and `index.php`: the AppFramework.
    AppFramework,
    /// Anything else (`status.php`, `/.well-known/…`): base.php only.
    Other,
}

fn entry_point(path: &str) -> EntryPoint {
    if path.starts_with("/remote.php/") || path == "/remote.php" {
        EntryPoint::Remote
    } else if path.starts_with("/ocs/") || path.starts_with("/index.php/") {
        EntryPoint::AppFramework
    } else {
        EntryPoint::Other
    }
}

/// The middleware: what a handler left unset, set as Nextcloud sets it.
pub async fn add(request: Request, next: Next) -> Response {
    let entry = entry_point(request.uri().path());
    let mut response = next.run(request).await;
    apply(entry, response.headers_mut());
    response
}

fn apply(entry: EntryPoint, headers: &mut HeaderMap) {
    let layered: &[(&str, &str)] = match entry {
        EntryPoint::Remote => &[("content-security-policy", DAV_POLICY)],
        EntryPoint::AppFramework => &[
            ("content-security-policy", APP_FRAMEWORK_POLICY),
            ("feature-policy", APP_FRAMEWORK_FEATURE_POLICY),
            ("cache-control", APP_FRAMEWORK_CACHE_CONTROL),
        ],
        EntryPoint::Other => &[],
    };
    for (name, value) in EVERY_ANSWER.iter().chain(layered) {
        let name = HeaderName::from_static(name);
        if !headers.contains_key(&name) {
            headers.insert(name, HeaderValue::from_static(value));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dav_answers_get_the_strictest_policy_and_the_fallbacks() {
        let mut headers = HeaderMap::new();
        apply(entry_point("/remote.php/dav/files/alice/a.txt"), &mut headers);
        assert_eq!(headers["content-security-policy"], "default-src 'none';");
        assert_eq!(headers["x-robots-tag"], "noindex, nofollow");
        assert!(!headers.contains_key("feature-policy"));
    }

    #[test]
    fn a_handlers_own_header_is_kept_and_never_doubled() {
        let mut headers = HeaderMap::new();
        headers.insert("content-security-policy", HeaderValue::from_static("default-src 'self'"));
        apply(entry_point("/index.php/apps/tamebi/"), &mut headers);
        apply(entry_point("/index.php/apps/tamebi/"), &mut headers);
        assert_eq!(headers.get_all("content-security-policy").iter().count(), 1);
        assert_eq!(headers["content-security-policy"], "default-src 'self'");
        assert_eq!(headers.get_all("x-frame-options").iter().count(), 1);
        assert_eq!(headers["cache-control"], APP_FRAMEWORK_CACHE_CONTROL);
    }

    #[test]
    fn other_entry_points_get_only_the_fallbacks() {
        let mut headers = HeaderMap::new();
        apply(entry_point("/status.php"), &mut headers);
        assert_eq!(headers.len(), EVERY_ANSWER.len());
    }
}
