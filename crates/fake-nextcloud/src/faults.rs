//! Faults a scenario can switch on: per fixture, or at run time through the
//! admin endpoint.
//!
//! Route faults are applied by a middleware before any handler runs; the other
//! switches are read by the handlers they concern (OIDC, bearer validation,
//! the converter, the app's mail routes).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Faults {
    /// Latency and error statuses on chosen routes.
    pub routes: Vec<RouteFault>,
    /// Ignore `overwritehost`: absolute URLs and the issuer follow the Host
    /// header, so tokens minted via one host fail validation via another.
    pub overwritehost_unset: bool,
    /// The converter runs as if its JWT secret were not configured.
    pub converter_secret_missing: bool,
    /// Access tokens minted from now on live this long instead of 900 s.
    pub token_lifetime_seconds: Option<i64>,
    /// Path prefixes where a bearer-authenticated request is refused with 401
    /// (the real server's bug where bearer-created sessions break app routes,
    /// seen on CalDAV and Deck). Basic auth with an app password still works.
    pub bearer_rejected_on: Vec<String>,
    /// Nextcloud Mail is disabled, or its contracts moved: every mail route
    /// of the Tamebi app (the status route included) answers 503 with the
    /// code `mail_unavailable`, as the PHP app does when the
    /// `OCA\Mail\Contracts` interfaces do not exist.
    pub mail_unavailable: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RouteFault {
    /// Matches request paths starting with this.
    pub prefix: String,
    /// Matches only this method when set (e.g. "PROPFIND").
    pub method: Option<String>,
    /// Added before the request is handled.
    pub latency_ms: u64,
    /// Answer with this status instead of handling the request.
    pub status: Option<u16>,
    /// Apply to this many matching requests, then stop; `None` = always.
    pub remaining: Option<u32>,
}

/// What the middleware should do with one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    pub latency_ms: u64,
    pub status: Option<u16>,
}

impl Faults {
    /// Matches a request against the route faults, consuming `remaining`.
    pub fn route_verdict(&mut self, method: &str, path: &str) -> Verdict {
        let mut verdict = Verdict::default();
        for fault in &mut self.routes {
            if !path.starts_with(&fault.prefix) {
                continue;
            }
            if fault.method.as_deref().is_some_and(|wanted| !wanted.eq_ignore_ascii_case(method)) {
                continue;
            }
            if fault.remaining == Some(0) {
                continue;
            }
            if let Some(remaining) = &mut fault.remaining {
                *remaining -= 1;
            }
            verdict.latency_ms += fault.latency_ms;
            if verdict.status.is_none() {
                verdict.status = fault.status;
            }
        }
        verdict
    }

    pub fn bearer_rejected(&self, path: &str) -> bool {
        self.bearer_rejected_on.iter().any(|prefix| path.starts_with(prefix.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_faults_match_prefix_and_method_and_run_out() {
        let mut faults = Faults {
            routes: vec![RouteFault {
                prefix: "/remote.php/dav/files".into(),
                method: Some("GET".into()),
                status: Some(503),
                remaining: Some(1),
                ..RouteFault::default()
            }],
            ..Faults::default()
        };
        assert_eq!(faults.route_verdict("PUT", "/remote.php/dav/files/alice/a").status, None);
        assert_eq!(faults.route_verdict("GET", "/ocs/v2.php").status, None);
        assert_eq!(faults.route_verdict("GET", "/remote.php/dav/files/alice/a").status, Some(503));
        assert_eq!(faults.route_verdict("GET", "/remote.php/dav/files/alice/a").status, None);
    }
}
