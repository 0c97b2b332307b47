//! Who may call a Tamebi MCP server, checked the same way by every one of
//! them: mcp-nextcloud and mcp-mail.
//!
//! Two pieces. [`Authenticator`] verifies the bearer addressed to this
//! server (RS256 against the issuer's JWKS, `typ: at+jwt`, exact `iss`, `aud`
//! = the server's canonical URL, `exp`/`iat`) and the user's second token,
//! minted for Nextcloud's audience and carried in [`NEXTCLOUD_TOKEN_HEADER`]
//! (same issuer, that audience, same `sub`). [`router`] puts an MCP endpoint
//! behind that check: a refused request gets a bare 401 whose
//! `WWW-Authenticate` points to the RFC 9728 protected-resource metadata,
//! which it serves too, with `/health`.
//!
//! The key design choice is that what a server spends upstream is its own
//! business: [`Admission`] is the one seam, so mcp-nextcloud keeps its three
//! upstream modes (second token, single token, app password) to itself and
//! mcp-mail uses only the second token. We rejected putting those modes here:
//! a shared enum of every server's options would grow with each server.
//!
//! This crate validates tokens; it contains no Nextcloud client. The only
//! request it makes is the JWKS fetch.

mod resource;
mod token;

pub use resource::{Admission, ProtectedResource, allowed_hosts, mcp_path, router};
pub use token::{
    AuthConfig, Authenticator, Bearer, Clock, JWKS_BYTES_MAX, JWKS_LIFETIME,
    JWKS_REFRESH_INTERVAL_MIN, LEEWAY_SECONDS, Refusal, VERIFIED_TOKEN_COUNT_MAX,
};

/// Header carrying the user's Nextcloud-audience token, the credential an
/// MCP server spends toward Nextcloud in the default mode.
pub const NEXTCLOUD_TOKEN_HEADER: &str = wire::headers::NEXTCLOUD_TOKEN;
