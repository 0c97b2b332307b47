//! Tool failures: text the model reads (what happened, what to do next, no
//! hostnames, stack traces or upstream bodies) and a machine-readable kind in
//! `_meta` so the orchestrator's audit can tell "Nextcloud refused" (the
//! system working) from "not there for this user", "the model could not use
//! the tool" (tool design wrong), "no text to read" and "unreachable". The
//! vocabulary is the `wire` crate's, the same enum the orchestrator
//! reads back; this module only names it where the tools look for it.

pub use wire::{FAILURE_KIND_META_KEY, FailureKind, ToolFailure};
