//! The orchestrator: the turn that drives the agent loop (the `agent`
//! crate), the context engine, the model client, the tools, and the chat,
//! audit and memory stores.
//!
//! Its defining property is what it does not depend on: no crate that can
//! talk to Nextcloud (checked by the workspace's crate-graph test in
//! `crates/system/tests/crate_graph.rs`). Who the user is arrives signed by
//! the Nextcloud app ([`identity`]); what the model says arrives through an
//! OpenAI-compatible client of our own ([`model`]); what must outlive a
//! request lives in three SQLite files ([`store`]).

/// The loop this crate drives, under the name its callers already use.
pub use agent;
pub mod context;
pub mod flows;
pub mod identity;
pub mod mcp;
pub mod model;
pub mod prompt;
pub mod server;
pub mod service;
pub mod store;
pub mod tools;
pub mod transcript;
pub mod turn;
pub mod ui_stream;
