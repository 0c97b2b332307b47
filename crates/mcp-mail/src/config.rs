//! What the server needs to know: what every MCP server is told
//! ([`mcp_kit::ServerConfig`]: where it listens, who it is, which issuer it
//! trusts, where Nextcloud and so the Tamebi app's mail contract are), and
//! the audience of the user's Nextcloud token.

#[derive(Debug, Clone)]
pub struct Config {
    pub server: mcp_kit::ServerConfig,
    /// The audience of the second token, the one spent on the app (user_oidc's
    /// provider client id).
    pub nextcloud_audience: String,
}

/// The audience of the Nextcloud token unless configured otherwise.
pub const NEXTCLOUD_AUDIENCE_DEFAULT: &str = "nextcloud";

/// `resource_name` in this server's protected-resource metadata.
pub const RESOURCE_NAME: &str = "Tamebi MCP Mail";
