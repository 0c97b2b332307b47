//! How a model call fails: one enum whose `Display` is safe to show a user
//! (no URL, no key, no provider body) and whose `detail` is for the logs.
//!
//! Whoever answers for the model fills the detail; the orchestrator's client
//! quotes what the provider answered, truncated, with the API key cut out in
//! case a provider echoes it, and never the key.

/// A model call that did not produce a complete answer.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ModelError {
    #[error("the language model could not be reached")]
    Unreachable { detail: String },
    /// No answer, or no next piece of one, within the configured time.
    #[error("the language model did not answer in time")]
    TimedOut { detail: String },
    /// The request does not fit the model's context window.
    #[error("the conversation is too long for the language model's context window")]
    ContextExceeded { detail: String },
    #[error("the language model is rate limited")]
    RateLimited { detail: String },
    #[error("the language model is unavailable")]
    Unavailable { status: u16, detail: String },
    #[error("the language model refused the request")]
    Rejected { status: u16, detail: String },
    #[error("the language model reported an error while answering")]
    Provider { detail: String },
    #[error("the language model's answer could not be understood")]
    BadResponse { detail: String },
    #[error("the language model's answer was cut off")]
    StreamCut { detail: String },
    #[error("the language model's answer was too long")]
    TooLarge { detail: String },
}

impl ModelError {
    /// What happened, for the logs: statuses, the provider's own words
    /// (truncated), transport errors.
    pub fn detail(&self) -> &str {
        match self {
            ModelError::Unreachable { detail }
            | ModelError::TimedOut { detail }
            | ModelError::ContextExceeded { detail }
            | ModelError::RateLimited { detail }
            | ModelError::Unavailable { detail, .. }
            | ModelError::Rejected { detail, .. }
            | ModelError::Provider { detail }
            | ModelError::BadResponse { detail }
            | ModelError::StreamCut { detail }
            | ModelError::TooLarge { detail } => detail,
        }
    }

    /// The same error with its detail passed through `clean` (the client
    /// cuts the API key out this way).
    pub fn map_detail(self, clean: impl FnOnce(String) -> String) -> ModelError {
        match self {
            ModelError::Unreachable { detail } => ModelError::Unreachable { detail: clean(detail) },
            ModelError::TimedOut { detail } => ModelError::TimedOut { detail: clean(detail) },
            ModelError::ContextExceeded { detail } => {
                ModelError::ContextExceeded { detail: clean(detail) }
            }
            ModelError::RateLimited { detail } => ModelError::RateLimited { detail: clean(detail) },
            ModelError::Unavailable { status, detail } => {
                ModelError::Unavailable { status, detail: clean(detail) }
            }
            ModelError::Rejected { status, detail } => {
                ModelError::Rejected { status, detail: clean(detail) }
            }
            ModelError::Provider { detail } => ModelError::Provider { detail: clean(detail) },
            ModelError::BadResponse { detail } => ModelError::BadResponse { detail: clean(detail) },
            ModelError::StreamCut { detail } => ModelError::StreamCut { detail: clean(detail) },
            ModelError::TooLarge { detail } => ModelError::TooLarge { detail: clean(detail) },
        }
    }
}

impl ModelError {
    /// Whether sending the same request again can help: a refused
    /// connection, a rate limit, an outage, a stream that broke. A request
    /// the provider refused, one too long for its window, an answer that
    /// could not be read or timed out will fail the same way again.
    pub fn may_pass_on_retry(&self) -> bool {
        matches!(
            self,
            ModelError::Unreachable { .. }
                | ModelError::RateLimited { .. }
                | ModelError::Unavailable { .. }
                | ModelError::StreamCut { .. }
                | ModelError::Provider { .. }
        )
    }
}
