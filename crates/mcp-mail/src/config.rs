//! What the server needs to know: where it listens, who it is (its canonical
//! URL, the `aud` of the tokens it accepts), which issuer it trusts, the
//! audience of the user's Nextcloud token, and where the Tamebi app's mail
//! contract lives.

use std::net::SocketAddr;

#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    /// This server's canonical URL (`.../mcp`): the audience its tokens carry.
    pub canonical_url: String,
    /// The OIDC issuer, compared to `iss` exactly.
    pub issuer: String,
    /// Where the issuer's keys are fetched; default: Nextcloud's oidc app
    /// JWKS on [`Config::app_url`].
    pub jwks_url: Option<String>,
    /// Nextcloud's internal base URL, where `/index.php/apps/tamebi/…` lives.
    pub app_url: String,
    /// The audience of the second token, the one spent on the app (user_oidc's
    /// provider client id).
    pub nextcloud_audience: String,
    /// Host names (or host:port) accepted in the `Host` header (DNS-rebinding
    /// protection); container names belong here in Compose.
    pub allowed_hosts: Vec<String>,
    /// What token expiry is checked against: the system clock (default);
    /// a harness moving a fake Nextcloud's clock passes that one.
    pub clock: mcp_auth::Clock,
}

/// The audience of the Nextcloud token unless configured otherwise.
pub const NEXTCLOUD_AUDIENCE_DEFAULT: &str = "nextcloud";

impl Config {
    pub fn jwks_url(&self) -> String {
        self.jwks_url.clone().unwrap_or_else(|| mcp_kit::http::oidc_jwks_url(&self.app_url))
    }

    /// The path the MCP endpoint is served at, taken from the canonical URL.
    pub fn mcp_path(&self) -> String {
        mcp_auth::mcp_path(&self.canonical_url)
    }

    /// Who this server is toward its callers (`mcp-kit`).
    pub fn endpoint(&self) -> mcp_kit::Endpoint {
        mcp_kit::Endpoint {
            canonical_url: self.canonical_url.clone(),
            issuer: self.issuer.clone(),
            jwks_url: self.jwks_url(),
            allowed_hosts: self.allowed_hosts.clone(),
            clock: self.clock.clone(),
            resource_name: "Tamebi MCP Mail",
        }
    }
}
