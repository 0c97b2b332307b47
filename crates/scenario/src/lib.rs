//! Scenario files: one TOML file per behaviour (`scenarios/*.toml`), and the
//! runner that replays it against the real services on loopback.
//!
//! The key choice: a scenario drives the stack only from the outside — the
//! browser's routes on the fake Nextcloud, the fakes' admin routes, and
//! read-only looks at the orchestrator's stores — so a scenario checks what
//! a user and an operator would see, never an internal function. Rejected:
//! a Rust test per behaviour (a new bug replay would need Rust), and a
//! generic expression language for expectations (a small fixed set of
//! checks reads better and fails with a precise message).
//!
//! [`harness`] is the one way to stand the system up in this process; the
//! runner, the end-to-end tests and the benchmarks all start from it.
//!
//! [`load`] reads and checks a file (every problem with its line), [`run`]
//! runs it on fresh services and returns its failures and its normalised
//! transcript, [`discover`] lists a folder's files.

pub mod browser;
pub mod embeddings_server;
pub mod eval;
pub mod format;
pub mod harness;
pub mod mcp_client;
pub mod normalise;
pub mod runner;
pub mod sse;

pub use format::{Diagnostic, LoadError, Scenario, discover, load, parse};
pub use runner::{Outcome, run};
