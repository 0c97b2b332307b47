//! Header names of the signed identity: what the Nextcloud app sends the
//! orchestrator (`docs/identity.md`), what the orchestrator forwards to the
//! MCP servers, and the fakes' own test-only header.

/// The signed user id, the signature's time, the signature itself and a
/// fresh nonce per request (`docs/identity.md`).
pub const UID: &str = "x-tamebi-uid";
pub const TIMESTAMP: &str = "x-tamebi-timestamp";
pub const SIGNATURE: &str = "x-tamebi-signature";
pub const NONCE: &str = "x-tamebi-nonce";

/// Each of the user's access tokens comes in its own header named for its
/// audience: `x-tamebi-token-mcp-nextcloud`, `x-tamebi-token-nextcloud`.
pub const TOKEN_PREFIX: &str = "x-tamebi-token-";

/// The token header for one audience.
pub fn token(audience: &str) -> String {
    format!("{TOKEN_PREFIX}{audience}")
}

/// The user's display name (percent-encoded UTF-8), time zone and language.
pub const DISPLAY_NAME: &str = "x-tamebi-display-name";
pub const TIME_ZONE: &str = "x-tamebi-time-zone";
pub const LANGUAGE: &str = "x-tamebi-language";

/// The user's saved Nextcloud app password, in app-password mode only.
pub const APP_PASSWORD: &str = "x-tamebi-app-password";

/// Where each MCP server receives the user's Nextcloud-audience token, the
/// credential it spends upstream.
pub const NEXTCLOUD_TOKEN: &str = "x-tamebi-nextcloud-token";

/// The shared secret on webhook deliveries to mcp-nextcloud.
pub const WEBHOOK_SECRET: &str = "x-tamebi-webhook-secret";

/// The fakes' admin token, on their `/__fake/` routes (tests only).
pub const FAKE_ADMIN: &str = "x-tamebi-fake-admin";

#[cfg(test)]
mod tests {
    #[test]
    fn a_token_header_is_the_prefix_and_the_audience() {
        assert_eq!(super::token("mcp-mail"), "x-tamebi-token-mcp-mail");
    }
}
