//! The attack set against mcp-nextcloud on real sockets, one module per
//! kind: forged bearers (`jwt`), path traversal in every path argument
//! (`paths`), oversized requests and answers (`limits`) and server-side
//! request forgery through the converter and webhooks (`ssrf`). Each case
//! asserts the exact refusal and that nothing reached data it must not:
//! a recorder in front of the fake Nextcloud (`common::proxy`) sees every
//! upstream request.
//! The list with its reasons is in docs/reliability.md ("Attack set").

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

#[path = "attacks/jwt.rs"]
mod jwt;
#[path = "attacks/limits.rs"]
mod limits;
#[path = "attacks/paths.rs"]
mod paths;
#[path = "attacks/ssrf.rs"]
mod ssrf;
