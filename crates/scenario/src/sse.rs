//! Reading server-sent events the way the tests, the scenario runner and
//! the benchmarks see them: the `data:` payloads of a UI message stream
//! (the orchestrator's answer, streamed through the app), whole or timed
//! as it arrives. One reader, so a change of framing is fixed once (an MCP
//! answer's one `data:` line is [`crate::mcp_client`]'s).

use serde_json::Value;
use std::time::{Duration, Instant};

/// The `data: ` payloads of a UI message stream, in order, the closing
/// `[DONE]` left out.
pub fn data(text: &str) -> impl Iterator<Item = &str> {
    text.split("\n\n")
        .filter_map(|frame| frame.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
}

/// The chunks of a UI message stream; a payload that is not JSON is kept
/// as a string, so a transcript shows it as it came.
pub fn chunks(text: &str) -> Vec<Value> {
    data(text)
        .map(|data| serde_json::from_str(data).unwrap_or(Value::String(data.to_string())))
        .collect()
}

/// The chunks of a UI message stream, every payload JSON; else the first
/// payload that is not.
pub fn json_chunks(text: &str) -> Result<Vec<Value>, String> {
    data(text)
        .map(|data| serde_json::from_str(data).map_err(|_| format!("a frame is not JSON: {data}")))
        .collect()
}

/// A stream read to its end as it came.
#[derive(Debug)]
pub struct Timed {
    pub text: String,
    /// When the marker first arrived, counted from the request's start.
    pub first: Option<Duration>,
    /// When the stream ended, counted from the request's start.
    pub whole: Duration,
}

/// Reads a streamed answer to its end, noting when `marker` first arrived:
/// the time to first token of the runner's checks and the benchmarks.
pub async fn read_timed(
    mut response: reqwest::Response,
    started: Instant,
    marker: &str,
) -> Result<Timed, reqwest::Error> {
    let mut text = String::new();
    let mut first = None;
    while let Some(bytes) = response.chunk().await? {
        text.push_str(&String::from_utf8_lossy(&bytes));
        if first.is_none() && text.contains(marker) {
            first = Some(started.elapsed());
        }
    }
    Ok(Timed { text, first, whole: started.elapsed() })
}

/// The chunks of one type.
pub fn of_type<'a>(chunks: &'a [Value], kind: &str) -> Vec<&'a Value> {
    chunks.iter().filter(|chunk| chunk["type"] == kind).collect()
}

/// The text deltas joined.
pub fn text_of(chunks: &[Value]) -> String {
    of_type(chunks, "text-delta").iter().filter_map(|chunk| chunk["delta"].as_str()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const STREAM: &str = "data: {\"type\":\"start\"}\n\ndata: {\"type\":\"text-delta\",\"delta\":\"Hi\"}\n\n\
         data: {\"type\":\"text-delta\",\"delta\":\" there\"}\n\ndata: [DONE]\n\n";

    #[test]
    fn a_stream_is_read_into_its_chunks_without_done() {
        let chunks = json_chunks(STREAM).unwrap();
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks[0], json!({"type": "start"}));
        assert_eq!(text_of(&chunks), "Hi there");
        assert_eq!(of_type(&chunks, "text-delta").len(), 2);
    }

    #[test]
    fn a_payload_that_is_not_json_is_kept_or_refused() {
        let stream = "data: {\"type\":\"start\"}\n\ndata: oops\n\n";
        assert_eq!(chunks(stream)[1], Value::String("oops".into()));
        assert_eq!(json_chunks(stream).unwrap_err(), "a frame is not JSON: oops");
    }
}
