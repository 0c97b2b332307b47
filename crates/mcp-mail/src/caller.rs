//! Who is calling: the bearer addressed to this server and the user's
//! Nextcloud-audience token, both checked by the shared `mcp-auth` crate
//! (same issuer, same `sub`). The second token is the only credential this
//! server spends; the token addressed to it never leaves.

use crate::config::Config;
use http::HeaderMap;
use mcp_auth::{Authenticator, Refusal};

/// The verified caller of one request. Its `Debug` never prints the token.
#[derive(Clone)]
pub struct Caller {
    /// The user id (`sub`), decided by Nextcloud when it minted the tokens.
    pub uid: String,
    /// The user's Nextcloud-audience token: the bearer for the mail contract.
    pub nextcloud_token: String,
}

/// What the kit logs a call under.
impl mcp_kit::Caller for Caller {
    fn uid(&self) -> &str {
        &self.uid
    }
}

impl std::fmt::Debug for Caller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caller").field("uid", &self.uid).finish_non_exhaustive()
    }
}

/// The caller check of this server.
pub struct CallerCheck {
    authenticator: Authenticator,
    nextcloud_audience: String,
}

impl CallerCheck {
    pub fn new(config: &Config, http: reqwest::Client) -> CallerCheck {
        CallerCheck {
            authenticator: Authenticator::new(config.server.auth_config(), http),
            nextcloud_audience: config.nextcloud_audience.clone(),
        }
    }
}

impl mcp_auth::Admission for CallerCheck {
    type Caller = Caller;
    type Refusal = Refusal;

    async fn admit(&self, headers: &HeaderMap) -> Result<Caller, Refusal> {
        let bearer = self.authenticator.bearer(headers).await?;
        let nextcloud_token =
            self.authenticator.nextcloud_token(headers, &bearer, &self.nextcloud_audience).await?;
        Ok(Caller { uid: bearer.claims.sub, nextcloud_token: nextcloud_token.to_string() })
    }
}
