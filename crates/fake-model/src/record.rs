//! The request logs: every chat request the fake accepted, with the body
//! exactly as it arrived, so a test can assert what the model was shown —
//! the system prompt, the tool list, the tool results — and how the fake
//! answered it; and, in a log of their own, every embeddings request.
//!
//! Embeddings have their own log because they are not turns of a
//! conversation: an index embeds passages in the background, whenever it
//! gets to them, and mixed into the chat log they would shift the count and
//! the positions a test asserts on. Both logs share one `seq`, so their
//! order against each other is still known.
//!
//! Requests refused before they reach "the model" (a malformed body, a
//! wrong API key) are not recorded; faults and unmatched requests are.
//! Each log is bounded: past [`REQUESTS_RECORDED_MAX`] the oldest go.

use serde::Serialize;
use serde_json::Value;
use std::collections::VecDeque;

/// The most requests kept in each log.
pub const REQUESTS_RECORDED_MAX: usize = 1000;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordedRequest {
    /// 1 for the first request this server accepted.
    pub seq: u64,
    pub stream: bool,
    /// The rule that answered, if one did.
    pub rule: Option<RuleRef>,
    /// Who decided the answer.
    pub by: AnsweredBy,
    /// What the answer held; `None` when a fault answered with an error.
    pub answer: Option<AnswerKind>,
    /// The fault that changed the answer, if any.
    pub fault: Option<&'static str>,
    /// The request body as received.
    pub body: Value,
}

/// One `POST /v1/embeddings` request. No script rule answers it (rules
/// match conversations), so there is no `rule`, `by` or `answer`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordedEmbeddings {
    /// Counted with the chat requests: 1 for the first request of either.
    pub seq: u64,
    /// How many texts `input` held.
    pub inputs: usize,
    /// The fault that changed the answer, if any (an error status, a cut,
    /// a delay), named as in [`RecordedRequest::fault`].
    pub fault: Option<&'static str>,
    /// The request body as received.
    pub body: Value,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleRef {
    pub index: usize,
    pub name: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnsweredBy {
    /// A script rule.
    Rule,
    /// The demo mode (no rule matched).
    Demo,
    /// Nothing matched: the fallback text.
    NoRuleMatched,
    /// A global fault, before any rule was consulted.
    Fault,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKind {
    Text,
    ToolCalls,
    TextAndToolCalls,
}

/// A bounded log of records: the chat one, or the embeddings one.
#[derive(Debug)]
pub struct RequestLog<Record = RecordedRequest> {
    requests: VecDeque<Record>,
    /// How many were dropped to stay under the bound.
    pub dropped: u64,
}

impl<Record> Default for RequestLog<Record> {
    fn default() -> Self {
        RequestLog { requests: VecDeque::new(), dropped: 0 }
    }
}

impl<Record: Clone> RequestLog<Record> {
    pub fn push(&mut self, request: Record) {
        if self.requests.len() == REQUESTS_RECORDED_MAX {
            self.requests.pop_front();
            self.dropped += 1;
        }
        self.requests.push_back(request);
        assert!(self.requests.len() <= REQUESTS_RECORDED_MAX);
    }

    pub fn all(&self) -> Vec<Record> {
        self.requests.iter().cloned().collect()
    }

    /// Empties the log; answers how many were removed.
    pub fn clear(&mut self) -> usize {
        let count = self.requests.len();
        self.requests.clear();
        self.dropped = 0;
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(seq: u64) -> RecordedRequest {
        RecordedRequest {
            seq,
            stream: false,
            rule: None,
            by: AnsweredBy::NoRuleMatched,
            answer: Some(AnswerKind::Text),
            fault: None,
            body: Value::Null,
        }
    }

    #[test]
    fn the_oldest_go_first() {
        let mut log: RequestLog = RequestLog::default();
        for seq in 1..=(REQUESTS_RECORDED_MAX as u64 + 2) {
            log.push(request(seq));
        }
        let all = log.all();
        assert_eq!(all.len(), REQUESTS_RECORDED_MAX);
        assert_eq!(all[0].seq, 3);
        assert_eq!(log.dropped, 2);
        assert_eq!(log.clear(), REQUESTS_RECORDED_MAX);
        assert!(log.all().is_empty());
    }

    #[test]
    fn the_wire_names_are_snake_case() {
        let value = serde_json::to_value(request(1)).unwrap();
        assert_eq!(value["by"], "no_rule_matched");
        assert_eq!(value["answer"], "text");
    }
}
