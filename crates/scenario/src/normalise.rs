//! Normalisation of a transcript so that it can be snapshotted: what
//! changes from run to run (ids, uuids, ports, times) is replaced by stable
//! placeholders, numbered by first appearance so that equal ids stay equal.

use regex::Regex;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::LazyLock;

/// Keys whose numeric values are times of the run (unix seconds).
const TIME_KEYS: &[&str] = &["stime", "created", "updated", "at", "now", "expires_at"];

/// Keys whose string values are run-dependent identifiers.
const ID_KEYS: &[&str] =
    &["messageId", "toolCallId", "approvalId", "requestId", "previewId", "preview_id", "id", "jti"];

static PORT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(127\.0\.0\.1|localhost):\d+").expect("regex"));
static UUID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
        .expect("regex")
});
static CALL_ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bcall_[A-Za-z0-9]+").expect("regex"));
static TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?")
        .expect("regex")
});

/// Replaces run-dependent values consistently across one transcript.
#[derive(Debug, Default)]
pub struct Normaliser {
    ids: HashMap<String, String>,
}

impl Normaliser {
    /// A JSON value with ids, ports, uuids and times replaced; a string that
    /// holds JSON (an `errorText` envelope) is normalised inside.
    pub fn value(&mut self, value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, value)| {
                        let value = match value {
                            Value::String(id) if ID_KEYS.contains(&key.as_str()) => {
                                Value::String(self.id(id))
                            }
                            Value::Number(_) if TIME_KEYS.contains(&key.as_str()) => {
                                Value::String("<unix-time>".to_string())
                            }
                            _ => self.value(value),
                        };
                        (key.clone(), value)
                    })
                    .collect(),
            ),
            Value::Array(items) => {
                Value::Array(items.iter().map(|item| self.value(item)).collect())
            }
            Value::String(text) => {
                // An MCP Apps view's HTML: its own tests read it; a
                // transcript only says one was there.
                if text.starts_with("<!DOCTYPE html") {
                    return Value::String("<html view>".to_string());
                }
                if text.starts_with('{')
                    && let Ok(inner @ Value::Object(_)) = serde_json::from_str::<Value>(text)
                {
                    return Value::String(self.value(&inner).to_string());
                }
                Value::String(self.text(text))
            }
            other => other.clone(),
        }
    }

    /// Free text with ports, uuids, call ids and times replaced.
    pub fn text(&mut self, text: &str) -> String {
        let text = PORT.replace_all(text, "$1:<port>");
        let text = UUID.replace_all(&text, "<uuid>");
        let text = TIME.replace_all(&text, "<time>");
        let calls: Vec<String> =
            CALL_ID.find_iter(&text).map(|found| found.as_str().to_string()).collect();
        let mut text = text.into_owned();
        for call in calls {
            let placeholder = self.id(&call);
            text = text.replace(&call, &placeholder);
        }
        text
    }

    fn id(&mut self, id: &str) -> String {
        let next = self.ids.len() + 1;
        self.ids.entry(id.to_string()).or_insert_with(|| format!("<id-{next}>")).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_ids_stay_equal_and_ports_and_times_go() {
        let mut normaliser = Normaliser::default();
        let chunks = json!([
            {"type": "tool-input-available", "toolCallId": "call_abc"},
            {"type": "tool-output-available", "toolCallId": "call_abc", "output": "at http://127.0.0.1:4242/x on 2026-03-14T09:12:00Z"},
            {"type": "error", "errorText": "{\"message\":\"m\",\"requestId\":\"r-9\"}"},
        ]);
        let normal = normaliser.value(&chunks);
        assert_eq!(normal[0]["toolCallId"], "<id-1>");
        assert_eq!(normal[1]["toolCallId"], "<id-1>");
        assert_eq!(normal[1]["output"], "at http://127.0.0.1:<port>/x on <time>");
        assert_eq!(normal[2]["errorText"], "{\"message\":\"m\",\"requestId\":\"<id-2>\"}");
    }
}
