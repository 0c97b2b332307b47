//! What every MCP server of Tamebi is told about itself: where it listens,
//! who it is toward its callers (its canonical URL, the `aud` of the tokens
//! it accepts), which issuer it trusts and where that issuer's keys are,
//! the Host names it answers to, and where Nextcloud is. A server's own
//! configuration holds one of these beside what only it needs.

use crate::http::Endpoint;
use std::net::SocketAddr;

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub listen: SocketAddr,
    /// This server's canonical URL (`.../mcp`): the audience its tokens carry.
    pub canonical_url: String,
    /// The OIDC issuer, compared to `iss` exactly.
    pub issuer: String,
    /// Where the issuer's keys are fetched; default: Nextcloud's oidc app
    /// JWKS on [`ServerConfig::nextcloud_url`].
    pub jwks_url: Option<String>,
    /// Nextcloud's internal base URL: DAV, OCS and the Tamebi app's routes
    /// (`/index.php/apps/tamebi/…`) are reached here.
    pub nextcloud_url: String,
    /// Host names (or host:port) accepted in the `Host` header (DNS-rebinding
    /// protection); container names belong here in Compose.
    pub allowed_hosts: Vec<String>,
    /// What token expiry is checked against: the system clock (default);
    /// a harness moving a fake Nextcloud's clock passes that one.
    pub clock: mcp_auth::Clock,
}

impl ServerConfig {
    /// The configured JWKS URL, or Nextcloud's oidc app's.
    pub fn jwks_url(&self) -> String {
        self.jwks_url.clone().unwrap_or_else(|| crate::http::oidc_jwks_url(&self.nextcloud_url))
    }

    /// The path the MCP endpoint is served at, taken from the canonical URL.
    pub fn mcp_path(&self) -> String {
        mcp_auth::mcp_path(&self.canonical_url)
    }

    /// What `mcp-auth` checks this server's tokens with.
    pub fn auth_config(&self) -> mcp_auth::AuthConfig {
        self.endpoint("").auth_config()
    }

    /// Who this server is toward its callers; `resource_name` goes in its
    /// protected-resource metadata (e.g. "Tamebi MCP Mail").
    pub fn endpoint(&self, resource_name: &'static str) -> Endpoint {
        Endpoint {
            canonical_url: self.canonical_url.clone(),
            issuer: self.issuer.clone(),
            jwks_url: self.jwks_url(),
            allowed_hosts: self.allowed_hosts.clone(),
            clock: self.clock.clone(),
            resource_name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(jwks_url: Option<&str>) -> ServerConfig {
        ServerConfig {
            listen: "127.0.0.1:0".parse().expect("address"),
            canonical_url: "https://tamebi.example/mail/mcp".into(),
            issuer: "https://cloud.example".into(),
            jwks_url: jwks_url.map(str::to_owned),
            nextcloud_url: "http://nextcloud/".into(),
            allowed_hosts: vec!["mcp-mail".into()],
            clock: mcp_auth::Clock::default(),
        }
    }

    #[test]
    fn jwks_defaults_to_nextclouds_oidc_app_and_a_configured_one_wins() {
        assert_eq!(config(None).jwks_url(), "http://nextcloud/index.php/apps/oidc/jwks");
        assert_eq!(
            config(Some("https://keys.example/jwks")).jwks_url(),
            "https://keys.example/jwks"
        );
    }

    #[test]
    fn the_endpoint_carries_who_the_server_is() {
        let endpoint = config(None).endpoint("Tamebi MCP Mail");
        assert_eq!(endpoint.canonical_url, "https://tamebi.example/mail/mcp");
        assert_eq!(endpoint.issuer, "https://cloud.example");
        assert_eq!(endpoint.jwks_url, "http://nextcloud/index.php/apps/oidc/jwks");
        assert_eq!(endpoint.allowed_hosts, vec!["mcp-mail".to_owned()]);
        assert_eq!(endpoint.resource_name, "Tamebi MCP Mail");
        assert_eq!(config(None).mcp_path(), "/mail/mcp");
    }
}
