//! The fake's clock: real time plus an offset that tests can advance.
//!
//! Token expiry, mtimes of new files and webhook timestamps all read this
//! clock, so a scenario can move fifteen minutes ahead without waiting.

use std::sync::atomic::{AtomicI64, Ordering};

#[derive(Debug, Default)]
pub struct Clock {
    offset_seconds: AtomicI64,
}

impl Clock {
    /// Unix seconds, offset applied.
    pub fn now(&self) -> i64 {
        wall_now() + self.offset_seconds.load(Ordering::SeqCst)
    }

    pub fn advance(&self, seconds: i64) {
        self.offset_seconds.fetch_add(seconds, Ordering::SeqCst);
    }

    pub fn offset_seconds(&self) -> i64 {
        self.offset_seconds.load(Ordering::SeqCst)
    }
}

/// Unix seconds of the real clock, never offset: for what another process
/// checks against its own clock (the signed identity's timestamp).
pub fn wall_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs() as i64
}

/// Parses RFC 3339 into Unix seconds.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text).ok().map(|time| time.timestamp())
}

/// The UTC day of a moment as `Y-m-d` (share expiry days).
pub fn day(unix_seconds: i64) -> String {
    chrono::DateTime::from_timestamp(unix_seconds, 0)
        .unwrap_or_default()
        .format("%Y-%m-%d")
        .to_string()
}

/// RFC 1123 date as `getlastmodified` and HTTP headers carry it.
pub fn http_date(unix_seconds: i64) -> String {
    httpdate::fmt_http_date(
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix_seconds.max(0) as u64),
    )
}

/// ISO 8601 in UTC as `creationdate` carries it.
pub fn iso8601(unix_seconds: i64) -> String {
    chrono::DateTime::from_timestamp(unix_seconds, 0)
        .unwrap_or_default()
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}
