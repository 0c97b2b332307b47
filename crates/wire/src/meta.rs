//! The `_meta` keys Tamebi's MCP servers write and its orchestrator reads.

/// A failed `CallToolResult`'s machine-readable kind
/// ([`crate::FailureKind`]), beside the text the model reads.
pub const FAILURE_KIND: &str = "tamebi/failureKind";

/// A tool's MCP Apps view: `_meta.ui.resourceUri` names the `ui://`
/// resource the host may render (the MCP Apps extension's key).
pub const UI: &str = "ui";
pub const UI_RESOURCE_URI: &str = "resourceUri";
