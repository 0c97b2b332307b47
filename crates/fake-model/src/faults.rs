//! The ways a real model server misbehaves that the orchestrator must
//! survive: rate limits, server errors, streams that stop halfway, slow
//! tokens, and llama.cpp's refusal to stream with tools.
//!
//! One type serves both places a fault can be set: globally (the script's
//! `[faults]`, `PUT /__fake/faults`), where `times` counts the requests they
//! still apply to, and on a rule, whose fields override the global ones for
//! the requests that rule answers.
//!
//! `/v1/embeddings` takes only the global faults that mean the same for any
//! request (`error`, `cut`, `delta_delay_ms`, `times`); see
//! [`crate::embeddings`].

use serde::{Deserialize, Serialize};

/// The retry delay announced when a rate limit names none.
pub const RETRY_AFTER_SECONDS_DEFAULT: u32 = 1;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Faults {
    /// Answer with an error status instead of a completion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorFault>,
    /// `retry-after` of a `rate_limit` error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u32>,
    /// Close the connection partway through the answer, without `[DONE]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<Cut>,
    /// Wait this long before each streamed delta (non-streamed answers wait
    /// as long as their stream would have).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta_delay_ms: Option<u64>,
    /// Behave like llama.cpp's server: 500 when `stream` is true and tools
    /// are offered with `tool_choice` absent or `auto`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refuse_streaming_with_tools: Option<bool>,
    /// Behave like llama.cpp's server: 500 "Failed to parse tool call
    /// arguments as JSON" for a request replaying a tool call whose
    /// arguments are not JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refuse_unparsable_arguments: Option<bool>,
    /// Global faults only: apply to this many more requests, then all clear.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorFault {
    /// HTTP 429 with `retry-after`.
    RateLimit,
    /// HTTP 500 with OpenAI's error shape.
    ServerError,
    /// HTTP 400, llama.cpp's `exceed_context_size_error`: the request does
    /// not fit the context window.
    ContextExceeded,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cut {
    /// After about half the text deltas.
    MidText,
    /// Inside the first tool call's arguments (they are not yet valid JSON).
    MidToolCall,
}

impl Faults {
    pub fn is_empty(&self) -> bool {
        *self == Faults::default()
    }

    /// These faults with `rule`'s fields laid over them.
    pub fn overridden_by(&self, rule: Option<&Faults>) -> Faults {
        let Some(rule) = rule else { return self.clone() };
        Faults {
            error: rule.error.or(self.error),
            retry_after_seconds: rule.retry_after_seconds.or(self.retry_after_seconds),
            cut: rule.cut.or(self.cut),
            delta_delay_ms: rule.delta_delay_ms.or(self.delta_delay_ms),
            refuse_streaming_with_tools: rule
                .refuse_streaming_with_tools
                .or(self.refuse_streaming_with_tools),
            refuse_unparsable_arguments: rule
                .refuse_unparsable_arguments
                .or(self.refuse_unparsable_arguments),
            times: None,
        }
    }

    /// The faults for the next request, counting it against `times`: once
    /// the count reaches zero the global faults clear themselves.
    pub fn take_for_request(&mut self) -> Faults {
        let current = Faults { times: None, ..self.clone() };
        match &mut self.times {
            Some(0) => {
                *self = Faults::default();
                return Faults::default();
            }
            Some(times) => {
                *times -= 1;
                if *times == 0 {
                    *self = Faults::default();
                }
            }
            None => {}
        }
        current
    }

    pub fn refuses_streaming_with_tools(&self) -> bool {
        self.refuse_streaming_with_tools == Some(true)
    }

    pub fn refuses_unparsable_arguments(&self) -> bool {
        self.refuse_unparsable_arguments == Some(true)
    }

    pub fn delta_delay(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.delta_delay_ms.unwrap_or(0))
    }

    pub fn retry_after_seconds(&self) -> u32 {
        self.retry_after_seconds.unwrap_or(RETRY_AFTER_SECONDS_DEFAULT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_counts_requests_then_clears() {
        let mut faults =
            Faults { error: Some(ErrorFault::RateLimit), times: Some(2), ..Faults::default() };
        assert_eq!(faults.take_for_request().error, Some(ErrorFault::RateLimit));
        assert_eq!(faults.take_for_request().error, Some(ErrorFault::RateLimit));
        assert_eq!(faults.take_for_request(), Faults::default());
        assert!(faults.is_empty());
    }

    #[test]
    fn without_times_faults_stay() {
        let mut faults = Faults { delta_delay_ms: Some(5), ..Faults::default() };
        for _ in 0..3 {
            assert_eq!(faults.take_for_request().delta_delay_ms, Some(5));
        }
    }

    #[test]
    fn times_zero_applies_to_nothing() {
        let mut faults =
            Faults { error: Some(ErrorFault::ServerError), times: Some(0), ..Faults::default() };
        assert_eq!(faults.take_for_request(), Faults::default());
    }

    #[test]
    fn a_rule_overrides_field_by_field() {
        let global = Faults {
            delta_delay_ms: Some(10),
            cut: Some(Cut::MidText),
            times: Some(4),
            ..Faults::default()
        };
        let rule = Faults { cut: Some(Cut::MidToolCall), ..Faults::default() };
        let merged = global.overridden_by(Some(&rule));
        assert_eq!(merged.cut, Some(Cut::MidToolCall));
        assert_eq!(merged.delta_delay_ms, Some(10));
        assert_eq!(merged.times, None);
    }

    #[test]
    fn the_wire_names_are_snake_case() {
        let faults: Faults = serde_json::from_value(serde_json::json!({
            "error": "rate_limit", "retry_after_seconds": 2, "cut": "mid_tool_call",
            "delta_delay_ms": 5, "refuse_streaming_with_tools": true,
        }))
        .unwrap();
        assert_eq!(faults.error, Some(ErrorFault::RateLimit));
        assert_eq!(faults.cut, Some(Cut::MidToolCall));
        assert!(serde_json::from_value::<Faults>(serde_json::json!({"eror": "x"})).is_err());
    }
}
