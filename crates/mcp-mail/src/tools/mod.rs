//! The tool registry. Each tool is one module with a `register` function;
//! [`all`] has one line per tool, so adding a tool is one file plus one line.
//!
//! Data tools are annotated `readOnlyHint: true`; `mail_compose` is not, and
//! the orchestrator asks the user before every call to it. There is
//! deliberately no send tool and no draft-saving tool: a sent mail is
//! irreversible and outbound, so sending and saving are reachable only from
//! the user's click in the chat page (the seeds' omissions).

pub mod mail_compose;
pub mod mail_read;
pub mod mail_search;

use crate::app::MailApp;
use crate::failure::{FAILURE_KIND_META_KEY, ToolFailure};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject, Tool, ToolAnnotations};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Everything one call gets: the mail client built from the caller's own
/// token, and the arguments.
pub struct ToolCall {
    pub mail: MailApp,
    pub arguments: JsonObject,
}

impl ToolCall {
    /// Parses the arguments into the tool's input type; a mismatch is the
    /// model's mistake, reported so it can correct itself.
    pub fn arguments<T: DeserializeOwned>(&self) -> Result<T, ToolFailure> {
        serde_json::from_value(Value::Object(self.arguments.clone()))
            .map_err(|error| ToolFailure::schema_mismatch(&error.to_string()))
    }
}

/// A successful result: text for the model, structured content for clients
/// that read `outputSchema` (and for the chat page).
#[derive(Debug, Clone)]
pub struct ToolOutput {
    pub text: String,
    pub structured: Value,
}

pub type ToolOutcome = Result<ToolOutput, ToolFailure>;
type Handler =
    Arc<dyn Fn(ToolCall) -> Pin<Box<dyn Future<Output = ToolOutcome> + Send>> + Send + Sync>;

/// Whether a tool reads or acts: the boundary where approval fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    Data,
    /// `open_world`: what it prepares is meant for people outside the
    /// user's workspace (a mail's recipients).
    Action {
        destructive: bool,
        idempotent: bool,
        open_world: bool,
    },
}

/// One registered tool.
#[derive(Clone)]
pub struct RegisteredTool {
    pub tool: Tool,
    pub kind: ToolKind,
    handler: Handler,
}

/// The set of tools this server offers.
#[derive(Clone, Default)]
pub struct Registry {
    tools: BTreeMap<String, RegisteredTool>,
}

/// What a tool module declares.
pub struct Definition {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub kind: ToolKind,
    pub input_schema: Value,
    pub output_schema: Value,
}

impl Registry {
    pub fn add<F, Fut>(&mut self, definition: Definition, handler: F)
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolOutcome> + Send + 'static,
    {
        let annotations = match definition.kind {
            ToolKind::Data => {
                ToolAnnotations::with_title(definition.title).read_only(true).open_world(false)
            }
            ToolKind::Action { destructive, idempotent, open_world } => {
                ToolAnnotations::with_title(definition.title)
                    .read_only(false)
                    .destructive(destructive)
                    .idempotent(idempotent)
                    .open_world(open_world)
            }
        };
        let tool =
            Tool::new(definition.name, definition.description, object(definition.input_schema))
                .with_title(definition.title)
                .with_raw_output_schema(Arc::new(object(definition.output_schema)))
                .with_annotations(annotations);
        let previous = self.tools.insert(
            definition.name.to_string(),
            RegisteredTool {
                tool,
                kind: definition.kind,
                handler: Arc::new(move |call| Box::pin(handler(call))),
            },
        );
        assert!(previous.is_none(), "tool {} registered twice", definition.name);
    }

    pub fn tools(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.values()
    }

    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name)
    }
}

impl RegisteredTool {
    pub async fn call(&self, call: ToolCall) -> CallToolResult {
        into_result((self.handler)(call).await)
    }
}

/// Every tool of this server, one line each.
pub fn all() -> Registry {
    let mut registry = Registry::default();
    mail_search::register(&mut registry);
    mail_read::register(&mut registry);
    mail_compose::register(&mut registry);
    registry
}

/// The MCP result for an outcome: text plus structured content, or
/// `isError: true` with instructions and the failure kind in `_meta`.
pub fn into_result(outcome: ToolOutcome) -> CallToolResult {
    match outcome {
        Ok(output) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(output.text)]);
            result.structured_content = Some(output.structured);
            result
        }
        Err(failure) => {
            let mut result =
                CallToolResult::error(vec![ContentBlock::text(failure.message.clone())]);
            let mut meta = JsonObject::new();
            meta.insert(
                FAILURE_KIND_META_KEY.to_string(),
                Value::String(failure.kind.as_str().to_string()),
            );
            result.meta = Some(MetaObject(meta));
            result
        }
    }
}

/// `text` on one line (control characters and runs of whitespace become one
/// space), cut to `length_max` characters with an ellipsis. Senders write
/// subjects and names; a newline in one must not forge a header line.
pub fn one_line(text: &str, length_max: usize) -> String {
    let mut line = String::with_capacity(text.len().min(length_max * 4));
    let mut count = 0;
    let mut words = text.split(|c: char| c.is_whitespace() || c.is_control());
    let mut first = true;
    for word in words.by_ref().filter(|word| !word.is_empty()) {
        let separator = usize::from(!first);
        let word_count = word.chars().count();
        if count + separator + word_count > length_max {
            if !first {
                line.push(' ');
                count += 1;
            }
            let room = length_max.saturating_sub(count + 1);
            line.extend(word.chars().take(room));
            line.push('…');
            return line;
        }
        if !first {
            line.push(' ');
        }
        line.push_str(word);
        count += separator + word_count;
        first = false;
    }
    line
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        other => panic!("a schema must be a JSON object, got {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_flattens_and_cuts() {
        let check = |text: &str, length_max: usize, expected: &str| {
            let line = one_line(text, length_max);
            assert_eq!(line, expected, "{text:?}");
            assert!(line.chars().count() <= length_max, "{line:?} fits");
        };
        check("Budget  Apollo\r\nvalidé", 80, "Budget Apollo validé");
        check("Subject\nFrom: ceo@example.com", 80, "Subject From: ceo@example.com");
        check("  \t ", 80, "");
        check("abcdef ghij", 8, "abcdef …");
        check("abcdefghij", 5, "abcd…");
        check("ab cdefghij", 6, "ab cd…");
        check("é\u{0}é", 80, "é é");
    }
}
