//! Tool failures: text the model reads (what happened, what to do next, no
//! hostnames, stack traces or upstream bodies) and a machine-readable kind
//! in `_meta`, with the same names as mcp-nextcloud's, so the orchestrator's
//! audit tells "Nextcloud refused" from "the model misused the tool" from
//! "unreachable" for mail too.

/// The `_meta` key carrying the failure kind.
pub const FAILURE_KIND_META_KEY: &str = "tamebi/failureKind";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The app said no (401/403): a permission boundary working.
    RefusedByNextcloud,
    /// The message does not exist, or is not the user's.
    NotFound,
    /// The model's arguments were wrong (ours or the app's 400).
    InvalidArguments,
    /// The app did not answer, answered 5xx, or answered nonsense.
    NextcloudUnreachable,
}

impl FailureKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::RefusedByNextcloud => "refused_by_nextcloud",
            FailureKind::NotFound => "not_found",
            FailureKind::InvalidArguments => "invalid_arguments",
            FailureKind::NextcloudUnreachable => "nextcloud_unreachable",
        }
    }
}

/// A failed tool call, as the model will read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFailure {
    pub kind: FailureKind,
    /// What happened and what to do next, in a sentence or two.
    pub message: String,
}

impl ToolFailure {
    pub fn new(kind: FailureKind, message: impl Into<String>) -> ToolFailure {
        ToolFailure { kind, message: message.into() }
    }

    pub fn invalid_arguments(message: impl Into<String>) -> ToolFailure {
        ToolFailure::new(FailureKind::InvalidArguments, message)
    }
}
