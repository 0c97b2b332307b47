//! The MCP server for mail: search, read and compose through the Tamebi
//! app's mail contract (docs/app-contract.md, "Mail").
//!
//! It holds no mail credential and speaks no IMAP. Every request carries a
//! bearer addressed to this server (validated by the shared `mcp-auth`
//! crate: signature via the issuer's JWKS, `typ`, `iss`, `aud` = our
//! canonical URL, `exp`/`iat`) and a second token of the same user minted
//! for Nextcloud's audience, which is what it spends, as the bearer of the
//! app's mail routes; the app answers through Nextcloud Mail's own
//! contracts. The token addressed to us never leaves.
//!
//! The key design choice is to talk only to Nextcloud. We rejected reading
//! Mail's stored credential and speaking IMAP ourselves (an IMAP client, a
//! SASL choice and network egress in our stack for no gain) and one IMAP
//! account in the environment (access no longer decided by the caller). Like
//! mcp-nextcloud it is stateless: one process serves every user, and nothing
//! per user outlives a request.
//!
//! There is no send tool and no draft-saving tool: `mail_compose` stores a
//! preview, and only the user's click in the chat page sends it.

pub mod app;
pub mod caller;
pub mod config;
pub mod http;
pub mod server;
pub mod tools;

pub use config::Config;
pub use http::{McpMail, StartError};
