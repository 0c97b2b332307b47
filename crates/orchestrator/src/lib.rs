//! The orchestrator: the agent loop, the context engine, the model client and
//! the chat, audit and memory stores.
//!
//! Empty until its issue fills it. Its defining property is what it does not
//! depend on: no crate that can talk to Nextcloud (checked by the workspace's
//! crate-graph test in `crates/system/tests/crate_graph.rs`).
