//! The MCP server for files, calendar, contacts and Deck.
//!
//! It is the only place a Nextcloud DAV/OCS client lives, and it spends only
//! the user's own token: every request carries a bearer addressed to this
//! server (validated with the shared `mcp-auth` crate: signature via the
//! issuer's JWKS, `typ`, `iss`, `aud` = our canonical URL, `exp`/`iat`),
//! plus — in the default mode — a
//! second token of the same user minted for Nextcloud's audience, which is
//! what goes upstream. The token addressed to us is never sent to Nextcloud
//! (the MCP spec's no-passthrough rule).
//!
//! The key design choice is statelessness: MCP 2026-07-28 has no sessions,
//! so one process serves every user and nothing per user outlives a request
//! except caches keyed by token hash for the token's lifetime. We rejected
//! a process per user (the stdio design this replaces) and any admin
//! credential: a crawl as an admin would make "the agent sees only what the
//! user sees" a claim instead of a consequence.

pub mod apps;
pub mod bearer;
pub mod config;
pub mod convert;
pub mod document;
pub mod http;
pub mod index;
pub mod nextcloud;
pub mod server;
pub mod tools;

pub use config::{Config, UpstreamAuth};
pub use http::{McpNextcloud, StartError};
