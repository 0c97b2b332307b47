//! Token checks: the bearer addressed to this server, checked before
//! anything is spent, and the user's Nextcloud-audience token.
//!
//! Keys come from the issuer's JWKS, cached and refreshed when a token names
//! a key we have not seen (key rotation), at most once per
//! [`JWKS_REFRESH_INTERVAL_MIN`] so random `kid`s cannot make us hammer the
//! issuer. Tokens never reach a log.

use crate::NEXTCLOUD_TOKEN_HEADER;
use access_token::{Claims, JwkSet, TokenError, Validation};
use http::HeaderMap;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Clock skew tolerated on `exp`, `iat` and `nbf`.
pub const LEEWAY_SECONDS: i64 = 30;
/// The shortest time between two JWKS fetches.
pub const JWKS_REFRESH_INTERVAL_MIN: Duration = Duration::from_secs(10);
/// How long fetched keys are trusted without a refresh.
pub const JWKS_LIFETIME: Duration = Duration::from_secs(3600);
/// The longest JWKS document read from the issuer.
pub const JWKS_BYTES_MAX: usize = 1024 * 1024;
/// The most verified tokens remembered; past it, expired ones are dropped
/// and, if that is not enough, all of them.
pub const VERIFIED_TOKEN_COUNT_MAX: usize = 10_000;

/// Who this server is and whom it trusts.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// This server's canonical URL (`.../mcp`): the `aud` its own bearer carries.
    pub canonical_url: String,
    /// The OIDC issuer, compared to `iss` exactly.
    pub issuer: String,
    /// Where the issuer's keys are fetched.
    pub jwks_url: String,
    /// What `exp`, `nbf` and `iat` are checked against.
    pub clock: Clock,
}

/// The time tokens are checked against: the system clock, or — in a
/// harness that moves a fake Nextcloud's clock fifteen minutes ahead — that
/// clock, so expiry is tested without waiting.
#[derive(Clone, Default)]
pub struct Clock(Option<std::sync::Arc<dyn Fn() -> i64 + Send + Sync>>);

impl Clock {
    /// Unix seconds from `now` instead of the system clock.
    pub fn from_fn(now: impl Fn() -> i64 + Send + Sync + 'static) -> Clock {
        Clock(Some(std::sync::Arc::new(now)))
    }

    /// Unix seconds now.
    pub fn now(&self) -> i64 {
        match &self.0 {
            Some(now) => now(),
            None => unix_now(),
        }
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Clock(given)" } else { "Clock(system)" })
    }
}

/// The verified bearer addressed to this server.
pub struct Bearer<'h> {
    /// The token as it arrived (spent upstream only in mcp-nextcloud's
    /// single-token mode).
    pub token: &'h str,
    pub claims: Claims,
}

impl std::fmt::Debug for Bearer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bearer").field("sub", &self.claims.sub).finish_non_exhaustive()
    }
}

/// Why a request was refused: logged, never told to the client (it gets a
/// bare 401 with the resource metadata pointer).
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("no bearer token")]
    Missing,
    #[error("the authorization header is not a bearer token")]
    NotBearer,
    #[error("{0} was sent more than once")]
    Duplicated(&'static str),
    #[error("the token addressed to this server is invalid: {0}")]
    Token(TokenError),
    #[error("the issuer's keys could not be fetched: {0}")]
    Keys(String),
    #[error("no Nextcloud token in {NEXTCLOUD_TOKEN_HEADER}")]
    MissingNextcloudToken,
    #[error("the Nextcloud token is invalid: {0}")]
    NextcloudToken(TokenError),
    #[error("the Nextcloud token belongs to another user")]
    SubjectMismatch,
}

struct CachedKeys {
    keys: JwkSet,
    fetched: Instant,
}

/// Validates callers against the issuer's keys.
pub struct Authenticator {
    config: AuthConfig,
    http: reqwest::Client,
    keys: Mutex<Option<CachedKeys>>,
    /// Serialises fetches so a burst of unknown kids costs one request.
    fetching: tokio::sync::Mutex<()>,
    /// Tokens already verified, keyed by sha256(audience, token), kept for
    /// the token's own lifetime: an RSA check is most of a call's CPU
    /// (docs/benchmarks.md). Expiry is still checked on every use.
    verified: Mutex<HashMap<[u8; 32], Claims>>,
}

impl Authenticator {
    pub fn new(config: AuthConfig, http: reqwest::Client) -> Authenticator {
        Authenticator {
            config,
            http,
            keys: Mutex::new(None),
            fetching: tokio::sync::Mutex::new(()),
            verified: Mutex::new(HashMap::new()),
        }
    }

    /// The `Authorization: Bearer` token, verified for this server's audience.
    pub async fn bearer<'h>(&self, headers: &'h HeaderMap) -> Result<Bearer<'h>, Refusal> {
        let token = bearer_token(headers)?;
        let claims = self.validate(token, &self.config.canonical_url).await?;
        Ok(Bearer { token, claims })
    }

    /// The token in [`NEXTCLOUD_TOKEN_HEADER`], verified for
    /// `nextcloud_audience` and bound to the same user as `bearer`: what the
    /// server may spend toward Nextcloud.
    pub async fn nextcloud_token<'h>(
        &self,
        headers: &'h HeaderMap,
        bearer: &Bearer<'_>,
        nextcloud_audience: &str,
    ) -> Result<&'h str, Refusal> {
        let nextcloud_token = single(headers, NEXTCLOUD_TOKEN_HEADER)?
            .and_then(|value| value.to_str().ok())
            .filter(|value| is_one_token(value))
            .ok_or(Refusal::MissingNextcloudToken)?;
        let nextcloud_claims = self.validate(nextcloud_token, nextcloud_audience).await.map_err(
            |reason| match reason {
                Refusal::Token(error) => Refusal::NextcloudToken(error),
                other => other,
            },
        )?;
        if nextcloud_claims.sub != bearer.claims.sub {
            return Err(Refusal::SubjectMismatch);
        }
        Ok(nextcloud_token)
    }

    async fn validate(&self, token: &str, audience: &str) -> Result<Claims, Refusal> {
        self.validate_at(token, audience, self.config.clock.now()).await
    }

    async fn validate_at(&self, token: &str, audience: &str, now: i64) -> Result<Claims, Refusal> {
        let key = verified_key(token, audience);
        let remembered = self.verified.lock().expect("verified lock").get(&key).cloned();
        if let Some(claims) = remembered {
            // Everything but time was checked when it was remembered.
            if claims.exp + LEEWAY_SECONDS < now {
                self.verified.lock().expect("verified lock").remove(&key);
                return Err(Refusal::Token(TokenError::Expired));
            }
            return Ok(claims);
        }
        let claims = self.verify(token, audience, now).await?;
        let mut verified = self.verified.lock().expect("verified lock");
        if verified.len() >= VERIFIED_TOKEN_COUNT_MAX {
            verified.retain(|_, claims| claims.exp + LEEWAY_SECONDS >= now);
            if verified.len() >= VERIFIED_TOKEN_COUNT_MAX {
                verified.clear();
            }
        }
        verified.insert(key, claims.clone());
        Ok(claims)
    }

    /// The full check: signature, type, issuer, audience, times.
    async fn verify(&self, token: &str, audience: &str, now: i64) -> Result<Claims, Refusal> {
        let validation = Validation {
            issuer: self.config.issuer.clone(),
            audience: Some(audience.to_string()),
            require_at_jwt: true,
            leeway_seconds: LEEWAY_SECONDS,
        };
        let unverified = access_token::peek(token).map_err(Refusal::Token)?;
        let keys = self.keys_for(unverified.kid.as_deref()).await?;
        access_token::validate(token, &keys, &validation, now).map_err(Refusal::Token)
    }

    /// The cached key set, refreshed when stale or missing `kid`.
    async fn keys_for(&self, kid: Option<&str>) -> Result<JwkSet, Refusal> {
        if let Some(keys) = self.fresh_keys(kid) {
            return Ok(keys);
        }
        let _fetching = self.fetching.lock().await;
        // Another request may have refreshed while we waited.
        if let Some(keys) = self.fresh_keys(kid) {
            return Ok(keys);
        }
        let recently_fetched = self
            .keys
            .lock()
            .expect("keys lock")
            .as_ref()
            .is_some_and(|cached| cached.fetched.elapsed() < JWKS_REFRESH_INTERVAL_MIN);
        if recently_fetched {
            // An unknown kid right after a fetch: refuse rather than refetch.
            return Ok(self.keys.lock().expect("keys lock").as_ref().expect("cached").keys.clone());
        }
        let keys = self.fetch_keys().await?;
        *self.keys.lock().expect("keys lock") =
            Some(CachedKeys { keys: keys.clone(), fetched: Instant::now() });
        Ok(keys)
    }

    fn fresh_keys(&self, kid: Option<&str>) -> Option<JwkSet> {
        let guard = self.keys.lock().expect("keys lock");
        let cached = guard.as_ref()?;
        let has_kid = match kid {
            Some(kid) => cached.keys.find(kid).is_some(),
            None => true,
        };
        (has_kid && cached.fetched.elapsed() < JWKS_LIFETIME).then(|| cached.keys.clone())
    }

    async fn fetch_keys(&self) -> Result<JwkSet, Refusal> {
        let response = self
            .http
            .get(&self.config.jwks_url)
            .send()
            .await
            .map_err(|error| Refusal::Keys(error.without_url().to_string()))?;
        if !response.status().is_success() {
            return Err(Refusal::Keys(format!("status {}", response.status())));
        }
        // A key set is a few kilobytes; read no more than the bound, with
        // or without a Content-Length.
        let too_long =
            || Refusal::Keys(format!("the key set is longer than {JWKS_BYTES_MAX} bytes"));
        if response.content_length().is_some_and(|length| length > JWKS_BYTES_MAX as u64) {
            return Err(too_long());
        }
        let mut response = response;
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| Refusal::Keys(error.without_url().to_string()))?
        {
            if body.len() + chunk.len() > JWKS_BYTES_MAX {
                return Err(too_long());
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice::<JwkSet>(&body).map_err(|error| Refusal::Keys(error.to_string()))
    }
}

fn verified_key(token: &str, audience: &str) -> [u8; 32] {
    use sha2::Digest as _;
    let mut hasher = sha2::Sha256::new();
    hasher.update(audience.as_bytes());
    hasher.update([0]);
    hasher.update(token.as_bytes());
    hasher.finalize().into()
}

/// RFC 6750 §2.1: one `Authorization` header, the scheme `Bearer` (any
/// case), one space, one token and nothing else. A second header, a comma
/// list, more spaces or trailing words are refused rather than guessed at:
/// two components that pick different tokens from one request (the first,
/// the last, the trimmed) would disagree about who is calling.
fn bearer_token(headers: &HeaderMap) -> Result<&str, Refusal> {
    let value = single(headers, "authorization")?
        .ok_or(Refusal::Missing)?
        .to_str()
        .map_err(|_| Refusal::NotBearer)?;
    let (scheme, token) = value.split_once(' ').ok_or(Refusal::NotBearer)?;
    if !scheme.eq_ignore_ascii_case("bearer") || !is_one_token(token) {
        return Err(Refusal::NotBearer);
    }
    Ok(token)
}

/// The header's one value; a header sent twice is refused.
fn single<'h>(
    headers: &'h HeaderMap,
    name: &'static str,
) -> Result<Option<&'h http::HeaderValue>, Refusal> {
    let mut values = headers.get_all(name).iter();
    let first = values.next();
    if values.next().is_some() {
        return Err(Refusal::Duplicated(name));
    }
    Ok(first)
}

/// One token: visible ASCII with no space and no comma (a list). Whether
/// its characters make a JWT is the token parser's to say, with its own
/// reason (`TokenError::Malformed`).
fn is_one_token(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_graphic() && byte != b',')
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs() as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use access_token::{Audience, Signer};

    const NOW: i64 = 1_800_000_000;
    const AUDIENCE: &str = "http://mcp.test/mcp";

    fn authenticator(signer: &Signer) -> Authenticator {
        let config = AuthConfig {
            canonical_url: AUDIENCE.into(),
            issuer: "http://nc.test".into(),
            jwks_url: "http://127.0.0.1:9/unreachable".into(),
            clock: Clock::default(),
        };
        let authenticator = Authenticator::new(config, reqwest::Client::new());
        *authenticator.keys.lock().unwrap() =
            Some(CachedKeys { keys: JwkSet { keys: vec![signer.jwk()] }, fetched: Instant::now() });
        authenticator
    }

    /// Claims issued 900 s before `exp`.
    fn claims(sub: &str, audience: &str, exp: i64) -> Claims {
        Claims {
            iss: "http://nc.test".into(),
            sub: sub.into(),
            aud: Audience::One(audience.into()),
            exp,
            iat: exp - 900,
            nbf: None,
            jti: "j".into(),
            client_id: "c".into(),
            azp: None,
            preferred_username: None,
            scope: None,
        }
    }

    fn token(signer: &Signer, exp: i64) -> String {
        signer.sign_access_token(&claims("alice", AUDIENCE, exp))
    }

    /// Headers as sent: a name given twice is sent twice.
    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, value.parse().unwrap());
        }
        headers
    }

    #[tokio::test]
    async fn a_remembered_token_still_expires() {
        let signer = Signer::generate("k");
        let authenticator = authenticator(&signer);
        let token = token(&signer, NOW + 900);
        assert!(authenticator.validate_at(&token, AUDIENCE, NOW).await.is_ok());
        assert_eq!(authenticator.verified.lock().unwrap().len(), 1, "remembered");
        assert!(authenticator.validate_at(&token, AUDIENCE, NOW + 60).await.is_ok());
        let late =
            authenticator.validate_at(&token, AUDIENCE, NOW + 900 + LEEWAY_SECONDS + 1).await;
        assert!(matches!(late, Err(Refusal::Token(TokenError::Expired))));
        assert!(authenticator.verified.lock().unwrap().is_empty(), "forgotten once expired");
    }

    #[tokio::test]
    async fn remembering_is_per_audience_and_refusals_are_not_remembered() {
        let signer = Signer::generate("k");
        let authenticator = authenticator(&signer);
        let token = token(&signer, NOW + 900);
        assert!(authenticator.validate_at(&token, AUDIENCE, NOW).await.is_ok());
        // The same token checked for another audience is verified afresh, and refused.
        let other = authenticator.validate_at(&token, "nextcloud", NOW).await;
        assert!(matches!(other, Err(Refusal::Token(TokenError::Audience))));
        let tampered = format!("{token}x");
        assert!(authenticator.validate_at(&tampered, AUDIENCE, NOW).await.is_err());
        assert_eq!(authenticator.verified.lock().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn the_second_token_must_name_nextcloud_and_the_same_user() {
        let signer = Signer::generate("k");
        let authenticator = authenticator(&signer);
        let now = unix_now();
        let mcp = signer.sign_access_token(&claims("alice", AUDIENCE, now + 900));
        let alice = signer.sign_access_token(&claims("alice", "nextcloud", now + 900));
        let bob = signer.sign_access_token(&claims("bob", "nextcloud", now + 900));
        let authorization = format!("Bearer {mcp}");
        let check = async |second: Option<&str>| {
            let mut pairs = vec![("authorization", authorization.as_str())];
            if let Some(second) = second {
                pairs.push((NEXTCLOUD_TOKEN_HEADER, second));
            }
            let headers = headers(&pairs);
            let bearer = authenticator.bearer(&headers).await.expect("the bearer is valid");
            assert_eq!(bearer.claims.sub, "alice");
            authenticator.nextcloud_token(&headers, &bearer, "nextcloud").await.map(str::to_string)
        };
        assert_eq!(check(Some(&alice)).await.unwrap(), alice);
        assert!(matches!(check(None).await, Err(Refusal::MissingNextcloudToken)));
        assert!(matches!(check(Some("  ")).await, Err(Refusal::MissingNextcloudToken)));
        assert!(matches!(check(Some(&bob)).await, Err(Refusal::SubjectMismatch)));
        assert!(matches!(
            check(Some(&mcp)).await,
            Err(Refusal::NextcloudToken(TokenError::Audience))
        ));
    }

    #[tokio::test]
    async fn only_a_bearer_authorization_is_read() {
        let signer = Signer::generate("k");
        let authenticator = authenticator(&signer);
        let valid = format!("Bearer {}", token(&signer, unix_now() + 900));
        let headers_of = |value: &str| headers(&[("authorization", value)]);
        assert!(authenticator.bearer(&headers_of(&valid)).await.is_ok());
        assert!(
            authenticator.bearer(&headers_of(&valid.replace("Bearer", "bEARER"))).await.is_ok()
        );
        let with_extra_word = format!("{valid} extra");
        let with_two_spaces = valid.replace("Bearer ", "Bearer  ");
        let as_list = format!("{valid}, {valid}");
        let cases: [(&[(&'static str, &str)], &str); 8] = [
            (&[], "missing"),
            (&[("authorization", "Basic YWxpY2U6eA==")], "basic"),
            (&[("authorization", "Bearer ")], "empty"),
            (&[("authorization", "Bearertoken")], "no space"),
            (&[("authorization", &with_extra_word)], "a word after the token"),
            (&[("authorization", &with_two_spaces)], "two spaces"),
            (&[("authorization", &as_list)], "a comma list"),
            (&[("authorization", "Bearer a\tb")], "a tab inside"),
        ];
        for (pairs, case) in cases {
            let headers = headers(pairs);
            let refused = authenticator.bearer(&headers).await;
            assert!(
                matches!(refused, Err(Refusal::Missing) | Err(Refusal::NotBearer)),
                "{case}: {refused:?}"
            );
        }
    }

    /// Issue 14: a duplicated header was read first-wins, so a proxy that
    /// appends a header and a server that reads the last one would disagree
    /// about whose token this is. Both headers must come once.
    #[tokio::test]
    async fn a_header_sent_twice_is_refused() {
        let signer = Signer::generate("k");
        let authenticator = authenticator(&signer);
        let now = unix_now();
        let mcp = signer.sign_access_token(&claims("alice", AUDIENCE, now + 900));
        let alice = signer.sign_access_token(&claims("alice", "nextcloud", now + 900));
        let authorization = format!("Bearer {mcp}");
        let twice =
            headers(&[("authorization", &authorization), ("authorization", &authorization)]);
        assert!(matches!(
            authenticator.bearer(&twice).await,
            Err(Refusal::Duplicated("authorization"))
        ));
        let once = headers(&[
            ("authorization", &authorization),
            (NEXTCLOUD_TOKEN_HEADER, &alice),
            (NEXTCLOUD_TOKEN_HEADER, &alice),
        ]);
        let bearer = authenticator.bearer(&once).await.expect("one authorization header");
        assert!(matches!(
            authenticator.nextcloud_token(&once, &bearer, "nextcloud").await,
            Err(Refusal::Duplicated(NEXTCLOUD_TOKEN_HEADER))
        ));
    }
}
