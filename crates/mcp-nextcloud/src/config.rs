//! What the server needs to know: where it listens, who it is (its canonical
//! URL, the `aud` of the tokens it accepts), which issuer it trusts, where
//! Nextcloud is, and how it authenticates toward Nextcloud.

use std::net::SocketAddr;

#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    /// This server's canonical URL (`.../mcp`): the audience its tokens carry.
    pub canonical_url: String,
    /// The OIDC issuer, compared to `iss` exactly.
    pub issuer: String,
    /// Where the issuer's keys are fetched; default: Nextcloud's oidc app JWKS
    /// on the internal URL.
    pub jwks_url: Option<String>,
    /// Nextcloud's internal base URL (DAV/OCS are reached here).
    pub nextcloud_url: String,
    pub upstream: UpstreamAuth,
    /// Host names (or host:port) accepted in the `Host` header (DNS-rebinding
    /// protection); container names belong here in Compose.
    pub allowed_hosts: Vec<String>,
    /// The passage index behind `files_grep`, and its webhook endpoint.
    pub index: crate::index::IndexConfig,
    /// The OnlyOffice document server, for formats read by no in-process
    /// extractor; `None` leaves those files unread.
    pub converter: Option<crate::convert::ConverterConfig>,
    /// What token expiry is checked against: the system clock (default);
    /// a harness moving a fake Nextcloud's clock passes that one.
    pub clock: mcp_auth::Clock,
}

/// How requests toward Nextcloud are authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpstreamAuth {
    /// Default. A second token of the same user, minted for Nextcloud's
    /// audience (user_oidc's provider client id), arrives in
    /// [`NEXTCLOUD_TOKEN_HEADER`]; it is validated (same issuer, same `sub`,
    /// that audience) and spent. Nextcloud keeps its audience check on.
    SecondToken { nextcloud_audience: String },
    /// The seeds' mode: the token addressed to this server is forwarded to
    /// Nextcloud. Needs user_oidc's audience check off, which lets any token
    /// the provider minted for any client act on Nextcloud — documented, not
    /// recommended.
    SingleToken,
    /// A per-user app password, supplied by the Nextcloud app in
    /// [`APP_PASSWORD_HEADER`], for servers where bearer-created sessions
    /// break app routes (CalDAV, Deck).
    AppPassword,
}

/// Header carrying the Nextcloud-audience token in [`UpstreamAuth::SecondToken`] mode.
pub use mcp_auth::NEXTCLOUD_TOKEN_HEADER;
/// Header carrying the user's app password in [`UpstreamAuth::AppPassword`] mode.
pub const APP_PASSWORD_HEADER: &str = wire::headers::APP_PASSWORD;

impl Config {
    pub fn jwks_url(&self) -> String {
        self.jwks_url.clone().unwrap_or_else(|| mcp_kit::http::oidc_jwks_url(&self.nextcloud_url))
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
            resource_name: "Tamebi MCP Nextcloud",
        }
    }
}
