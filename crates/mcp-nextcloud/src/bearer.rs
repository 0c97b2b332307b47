//! Who is calling: the bearer addressed to this server, checked before
//! anything is spent, and the credential to spend toward Nextcloud.
//!
//! Keys come from the issuer's JWKS, cached and refreshed when a token names
//! a key we have not seen (key rotation), at most once per
//! [`JWKS_REFRESH_INTERVAL_MIN`] so random `kid`s cannot make us hammer the
//! issuer. Tokens never reach a log.

use crate::config::{APP_PASSWORD_HEADER, Config, NEXTCLOUD_TOKEN_HEADER, UpstreamAuth};
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

/// The verified caller of one request.
#[derive(Clone)]
pub struct Caller {
    /// The user id (`sub`), decided by Nextcloud when it minted the token.
    pub uid: String,
    /// What to present to Nextcloud.
    pub upstream: UpstreamCredential,
    /// Unix seconds when the caller's token expires.
    pub expires: i64,
}

impl std::fmt::Debug for Caller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caller").field("uid", &self.uid).field("expires", &self.expires).finish()
    }
}

/// A credential toward Nextcloud. Its `Debug` never prints the secret.
#[derive(Clone)]
pub enum UpstreamCredential {
    Bearer(String),
    Basic { uid: String, password: String },
}

impl std::fmt::Debug for UpstreamCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpstreamCredential::Bearer(_) => f.write_str("Bearer(…)"),
            UpstreamCredential::Basic { uid, .. } => write!(f, "Basic({uid}, …)"),
        }
    }
}

/// Why a request was refused: logged, never told to the client (it gets a
/// bare 401 with the resource metadata pointer).
#[derive(Debug, thiserror::Error)]
pub enum RefusalReason {
    #[error("no bearer token")]
    Missing,
    #[error("the authorization header is not a bearer token")]
    NotBearer,
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
    #[error("no app password in {APP_PASSWORD_HEADER}")]
    MissingAppPassword,
}

struct CachedKeys {
    keys: JwkSet,
    fetched: Instant,
}

/// Validates callers against the issuer's keys.
pub struct Authenticator {
    config: Config,
    http: reqwest::Client,
    keys: Mutex<Option<CachedKeys>>,
    /// Serialises fetches so a burst of unknown kids costs one request.
    fetching: tokio::sync::Mutex<()>,
    /// Tokens already verified, keyed by sha256(audience, token), kept for
    /// the token's own lifetime: an RSA check is most of a call's CPU
    /// (docs/benchmarks.md). Expiry is still checked on every use.
    verified: Mutex<HashMap<[u8; 32], Claims>>,
}

/// The most verified tokens remembered; past it, expired ones are dropped
/// and, if that is not enough, all of them.
pub const VERIFIED_TOKEN_COUNT_MAX: usize = 10_000;

impl Authenticator {
    pub fn new(config: Config, http: reqwest::Client) -> Authenticator {
        Authenticator {
            config,
            http,
            keys: Mutex::new(None),
            fetching: tokio::sync::Mutex::new(()),
            verified: Mutex::new(HashMap::new()),
        }
    }

    /// Checks the request's credentials and returns who is calling.
    pub async fn authenticate(&self, headers: &HeaderMap) -> Result<Caller, RefusalReason> {
        let token = bearer_token(headers)?;
        let claims = self.validate(token, &self.config.canonical_url).await?;
        let upstream = match &self.config.upstream {
            UpstreamAuth::SecondToken { nextcloud_audience } => {
                let nextcloud_token = headers
                    .get(NEXTCLOUD_TOKEN_HEADER)
                    .and_then(|value| value.to_str().ok())
                    .map(str::trim)
                    .filter(|value| !value.is_empty())
                    .ok_or(RefusalReason::MissingNextcloudToken)?;
                let nextcloud_claims = self
                    .validate(nextcloud_token, nextcloud_audience)
                    .await
                    .map_err(|reason| match reason {
                        RefusalReason::Token(error) => RefusalReason::NextcloudToken(error),
                        other => other,
                    })?;
                if nextcloud_claims.sub != claims.sub {
                    return Err(RefusalReason::SubjectMismatch);
                }
                UpstreamCredential::Bearer(nextcloud_token.to_string())
            }
            UpstreamAuth::SingleToken => UpstreamCredential::Bearer(token.to_string()),
            UpstreamAuth::AppPassword => {
                let password = headers
                    .get(APP_PASSWORD_HEADER)
                    .and_then(|value| value.to_str().ok())
                    .map(str::trim)
                    .filter(|value| !value.is_empty())
                    .ok_or(RefusalReason::MissingAppPassword)?;
                UpstreamCredential::Basic {
                    uid: claims.sub.clone(),
                    password: password.to_string(),
                }
            }
        };
        Ok(Caller { uid: claims.sub, upstream, expires: claims.exp })
    }

    async fn validate(&self, token: &str, audience: &str) -> Result<Claims, RefusalReason> {
        self.validate_at(token, audience, unix_now()).await
    }

    async fn validate_at(
        &self,
        token: &str,
        audience: &str,
        now: i64,
    ) -> Result<Claims, RefusalReason> {
        let key = verified_key(token, audience);
        let remembered = self.verified.lock().expect("verified lock").get(&key).cloned();
        if let Some(claims) = remembered {
            // Everything but time was checked when it was remembered.
            if claims.exp + LEEWAY_SECONDS < now {
                self.verified.lock().expect("verified lock").remove(&key);
                return Err(RefusalReason::Token(TokenError::Expired));
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
    async fn verify(&self, token: &str, audience: &str, now: i64) -> Result<Claims, RefusalReason> {
        let validation = Validation {
            issuer: self.config.issuer.clone(),
            audience: Some(audience.to_string()),
            require_at_jwt: true,
            leeway_seconds: LEEWAY_SECONDS,
        };
        let unverified = access_token::peek(token).map_err(RefusalReason::Token)?;
        let keys = self.keys_for(unverified.kid.as_deref()).await?;
        access_token::validate(token, &keys, &validation, now).map_err(RefusalReason::Token)
    }

    /// The cached key set, refreshed when stale or missing `kid`.
    async fn keys_for(&self, kid: Option<&str>) -> Result<JwkSet, RefusalReason> {
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

    async fn fetch_keys(&self) -> Result<JwkSet, RefusalReason> {
        let response = self
            .http
            .get(self.config.jwks_url())
            .send()
            .await
            .map_err(|error| RefusalReason::Keys(error.without_url().to_string()))?;
        if !response.status().is_success() {
            return Err(RefusalReason::Keys(format!("status {}", response.status())));
        }
        response
            .json::<JwkSet>()
            .await
            .map_err(|error| RefusalReason::Keys(error.without_url().to_string()))
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

fn bearer_token(headers: &HeaderMap) -> Result<&str, RefusalReason> {
    let value = headers
        .get(http::header::AUTHORIZATION)
        .ok_or(RefusalReason::Missing)?
        .to_str()
        .map_err(|_| RefusalReason::NotBearer)?;
    let (scheme, token) = value.split_once(' ').ok_or(RefusalReason::NotBearer)?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(RefusalReason::NotBearer);
    }
    Ok(token.trim())
}

pub fn unix_now() -> i64 {
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

    fn authenticator(signer: &Signer) -> Authenticator {
        let config = Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            canonical_url: "http://mcp.test/mcp".into(),
            issuer: "http://nc.test".into(),
            jwks_url: Some("http://127.0.0.1:9/unreachable".into()),
            nextcloud_url: "http://127.0.0.1:9".into(),
            upstream: UpstreamAuth::SingleToken,
            allowed_hosts: Vec::new(),
            index: Default::default(),
            converter: None,
        };
        let authenticator = Authenticator::new(config, reqwest::Client::new());
        *authenticator.keys.lock().unwrap() =
            Some(CachedKeys { keys: JwkSet { keys: vec![signer.jwk()] }, fetched: Instant::now() });
        authenticator
    }

    fn token(signer: &Signer, exp: i64) -> String {
        signer.sign_access_token(&Claims {
            iss: "http://nc.test".into(),
            sub: "alice".into(),
            aud: Audience::One("http://mcp.test/mcp".into()),
            exp,
            iat: NOW,
            nbf: None,
            jti: "j".into(),
            client_id: "c".into(),
            azp: None,
            preferred_username: None,
            scope: None,
        })
    }

    #[tokio::test]
    async fn a_remembered_token_still_expires() {
        let signer = Signer::generate("k");
        let authenticator = authenticator(&signer);
        let token = token(&signer, NOW + 900);
        assert!(authenticator.validate_at(&token, "http://mcp.test/mcp", NOW).await.is_ok());
        assert_eq!(authenticator.verified.lock().unwrap().len(), 1, "remembered");
        assert!(authenticator.validate_at(&token, "http://mcp.test/mcp", NOW + 60).await.is_ok());
        let late = authenticator
            .validate_at(&token, "http://mcp.test/mcp", NOW + 900 + LEEWAY_SECONDS + 1)
            .await;
        assert!(matches!(late, Err(RefusalReason::Token(TokenError::Expired))));
        assert!(authenticator.verified.lock().unwrap().is_empty(), "forgotten once expired");
    }

    #[tokio::test]
    async fn remembering_is_per_audience_and_refusals_are_not_remembered() {
        let signer = Signer::generate("k");
        let authenticator = authenticator(&signer);
        let token = token(&signer, NOW + 900);
        assert!(authenticator.validate_at(&token, "http://mcp.test/mcp", NOW).await.is_ok());
        // The same token checked for another audience is verified afresh, and refused.
        let other = authenticator.validate_at(&token, "nextcloud", NOW).await;
        assert!(matches!(other, Err(RefusalReason::Token(TokenError::Audience))));
        let tampered = format!("{token}x");
        assert!(authenticator.validate_at(&tampered, "http://mcp.test/mcp", NOW).await.is_err());
        assert_eq!(authenticator.verified.lock().unwrap().len(), 1);
    }
}
