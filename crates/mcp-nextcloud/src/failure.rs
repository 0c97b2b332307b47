//! Tool failures: text the model reads (what happened, what to do next, no
//! hostnames, stack traces or upstream bodies) and a machine-readable kind in
//! `_meta` so the orchestrator's audit can tell "Nextcloud refused" (the
//! system working) from "the model could not use the tool" (tool design
//! wrong) from "unreachable".

use serde::Serialize;

/// The `_meta` key carrying the failure kind.
pub const FAILURE_KIND_META_KEY: &str = "tamebi/failureKind";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// Nextcloud said no (401/403): a permission boundary working.
    RefusedByNextcloud,
    /// The thing does not exist, or not for this user.
    NotFound,
    /// The model's arguments were wrong.
    InvalidArguments,
    /// Nextcloud did not answer, or answered 5xx.
    NextcloudUnreachable,
    /// The target changed or already exists.
    Conflict,
    /// The document exists and is readable, but its text cannot be had: a
    /// scan without a text layer, a malformed or unsupported format.
    Unreadable,
}

impl FailureKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::RefusedByNextcloud => "refused_by_nextcloud",
            FailureKind::NotFound => "not_found",
            FailureKind::InvalidArguments => "invalid_arguments",
            FailureKind::NextcloudUnreachable => "nextcloud_unreachable",
            FailureKind::Conflict => "conflict",
            FailureKind::Unreadable => "unreadable",
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
