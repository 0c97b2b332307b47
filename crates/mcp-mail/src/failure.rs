//! Tool failures: text the model reads (what happened, what to do next, no
//! hostnames, stack traces or upstream bodies) and a machine-readable kind
//! in `_meta`. The vocabulary is the `wire` crate's, the one enum
//! mcp-nextcloud writes and the orchestrator's audit reads, so "Nextcloud
//! refused", "not found", "the model misused the tool" and "unreachable"
//! mean the same for mail as for files.

pub use wire::{FAILURE_KIND_META_KEY, FailureKind, ToolFailure};
