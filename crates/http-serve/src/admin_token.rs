//! The guard of a fake's test-only admin routes (`/__fake/`): a random
//! token made at start, compared in constant time with the one a request
//! carries. Loopback is shared by every local account, so these routes
//! are never open to whoever can connect; a fake started without a token
//! has no admin routes at all. Each fake words its own refusal (the fake
//! model in OpenAI's error shape, the fake Nextcloud in its own).

use axum::http::HeaderMap;

/// What a request's admin token comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// It carries the token.
    Admitted,
    /// It carries none, or another one: 401.
    Refused,
    /// The fake has no admin routes (started without a token): 404.
    Off,
}

/// 32 random bytes, hex: a fresh admin token.
pub fn random() -> String {
    use rand::RngCore as _;
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Whether `headers` carry `expected` in `header`; `None` expected: the
/// routes are off.
pub fn check(expected: Option<&str>, headers: &HeaderMap, header: &str) -> Admission {
    let Some(expected) = expected else {
        return Admission::Off;
    };
    let given = headers.get(header).map(|value| value.as_bytes());
    match given.is_some_and(|given| constant_time_eq(given, expected.as_bytes())) {
        true => Admission::Admitted,
        false => Admission::Refused,
    }
}

/// A middleware's answer: the request goes on with the token, 404 when the
/// routes are off, and `refused` (the fake's own 401) otherwise.
pub async fn guard(
    expected: Option<&str>,
    header: &str,
    request: axum::extract::Request,
    next: axum::middleware::Next,
    refused: fn() -> axum::response::Response,
) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    match check(expected, request.headers(), header) {
        Admission::Admitted => next.run(request).await,
        Admission::Off => axum::http::StatusCode::NOT_FOUND.into_response(),
        Admission::Refused => refused(),
    }
}

fn constant_time_eq(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given.iter().zip(expected).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("x-admin", value.parse().expect("header value"));
        headers
    }

    #[test]
    fn only_the_exact_token_is_admitted() {
        let token = random();
        assert_eq!(token.len(), 64);
        assert_ne!(token, random(), "each token is fresh");
        assert_eq!(check(Some(&token), &with(&token), "x-admin"), Admission::Admitted);
        assert_eq!(check(Some(&token), &with(&token[..63]), "x-admin"), Admission::Refused);
        assert_eq!(check(Some(&token), &with(&format!("{token}0")), "x-admin"), Admission::Refused);
        assert_eq!(check(Some(&token), &with(&token), "x-other"), Admission::Refused);
        assert_eq!(check(Some(&token), &HeaderMap::new(), "x-admin"), Admission::Refused);
        assert_eq!(check(None, &with(&token), "x-admin"), Admission::Off);
    }
}
