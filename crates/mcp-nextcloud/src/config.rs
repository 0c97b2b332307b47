//! What the server needs to know: what every MCP server is told
//! ([`mcp_kit::ServerConfig`]: where it listens, who it is, which issuer it
//! trusts, where Nextcloud is), how it authenticates toward Nextcloud, its
//! passage index and its document converter.

#[derive(Debug, Clone)]
pub struct Config {
    pub server: mcp_kit::ServerConfig,
    pub upstream: UpstreamAuth,
    /// The passage index behind `files_grep`, and its webhook endpoint.
    pub index: crate::index::IndexConfig,
    /// The OnlyOffice document server, for formats read by no in-process
    /// extractor; `None` leaves those files unread.
    pub converter: Option<crate::convert::ConverterConfig>,
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

/// `resource_name` in this server's protected-resource metadata.
pub const RESOURCE_NAME: &str = "Tamebi MCP Nextcloud";
