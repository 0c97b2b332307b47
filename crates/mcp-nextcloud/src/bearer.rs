//! Who is calling, and the credential to spend toward Nextcloud.
//!
//! The bearer addressed to this server and the user's Nextcloud-audience
//! token are checked by the shared `mcp-auth` crate (JWKS, `typ`, `iss`,
//! `aud`, times, same `sub`); what this module adds is the choice among the
//! three upstream modes. Tokens never reach a log.

use crate::config::{APP_PASSWORD_HEADER, Config, UpstreamAuth};
use http::HeaderMap;
use mcp_auth::{Authenticator, Refusal};

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
    #[error(transparent)]
    Token(#[from] Refusal),
    #[error("no app password in {APP_PASSWORD_HEADER}")]
    MissingAppPassword,
}

/// The caller check of this server: the shared token checks, then the
/// configured upstream mode.
pub struct CallerCheck {
    authenticator: Authenticator,
    upstream: UpstreamAuth,
}

impl CallerCheck {
    pub fn new(config: &Config, http: reqwest::Client) -> CallerCheck {
        CallerCheck {
            authenticator: Authenticator::new(config.server.auth_config(), http),
            upstream: config.upstream.clone(),
        }
    }

    /// Checks the request's credentials and returns who is calling.
    pub async fn authenticate(&self, headers: &HeaderMap) -> Result<Caller, RefusalReason> {
        let bearer = self.authenticator.bearer(headers).await?;
        let upstream = match &self.upstream {
            UpstreamAuth::SecondToken { nextcloud_audience } => {
                let nextcloud_token = self
                    .authenticator
                    .nextcloud_token(headers, &bearer, nextcloud_audience)
                    .await?;
                UpstreamCredential::Bearer(nextcloud_token.to_string())
            }
            UpstreamAuth::SingleToken => UpstreamCredential::Bearer(bearer.token.to_string()),
            UpstreamAuth::AppPassword => {
                let password = headers
                    .get(APP_PASSWORD_HEADER)
                    .and_then(|value| value.to_str().ok())
                    .map(str::trim)
                    .filter(|value| !value.is_empty())
                    .ok_or(RefusalReason::MissingAppPassword)?;
                UpstreamCredential::Basic {
                    uid: bearer.claims.sub.clone(),
                    password: password.to_string(),
                }
            }
        };
        Ok(Caller { uid: bearer.claims.sub, upstream, expires: bearer.claims.exp })
    }
}

impl mcp_kit::Caller for Caller {
    fn uid(&self) -> &str {
        &self.uid
    }
}

impl mcp_auth::Admission for CallerCheck {
    type Caller = Caller;
    type Refusal = RefusalReason;

    async fn admit(&self, headers: &HeaderMap) -> Result<Caller, RefusalReason> {
        self.authenticate(headers).await
    }
}
