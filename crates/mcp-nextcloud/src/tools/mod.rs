//! The tool registry. Each tool is one module with a `register` function;
//! [`all`] has one line per tool, so adding a tool is one file plus one line.
//!
//! Data tools are annotated `readOnlyHint: true`; action tools are not, and
//! the orchestrator asks the user before every call to one of them. There is
//! deliberately no public-link, share or delete tool (see the decisions on
//! omissions): for those, "don't offer it" costs nothing.

pub mod calendar_create_event;
pub mod calendar_events;
pub mod contacts_search;
pub mod deck_cards;
pub mod deck_create_card;
pub mod deck_move_card;
pub mod files_grep;
pub mod files_move;
pub mod files_read;
pub mod files_search;
pub mod files_write;

use crate::failure::{FAILURE_KIND_META_KEY, ToolFailure};
use crate::nextcloud::Nextcloud;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject, Tool, ToolAnnotations};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Everything one call gets: the Nextcloud client built from the caller's
/// own credential, the arguments, and the passage index (which holds no
/// credential of its own).
pub struct ToolCall {
    pub nextcloud: Nextcloud,
    pub arguments: JsonObject,
    pub index: crate::index::Index,
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
/// that read `outputSchema`.
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
    Action { destructive: bool, idempotent: bool },
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
    /// `_meta` of the tool (MCP Apps' `ui.resourceUri`).
    pub meta: Option<Value>,
}

impl Registry {
    pub fn add<F, Fut>(&mut self, definition: Definition, handler: F)
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolOutcome> + Send + 'static,
    {
        let annotations = match definition.kind {
            ToolKind::Data => ToolAnnotations::with_title(definition.title).read_only(true),
            ToolKind::Action { destructive, idempotent } => {
                ToolAnnotations::with_title(definition.title)
                    .read_only(false)
                    .destructive(destructive)
                    .idempotent(idempotent)
            }
        }
        .open_world(false);
        let mut tool =
            Tool::new(definition.name, definition.description, object(definition.input_schema))
                .with_title(definition.title)
                .with_raw_output_schema(Arc::new(object(definition.output_schema)))
                .with_annotations(annotations);
        if let Some(Value::Object(meta)) = definition.meta {
            tool = tool.with_meta(MetaObject(meta));
        }
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
    files_search::register(&mut registry);
    files_read::register(&mut registry);
    files_grep::register(&mut registry);
    calendar_events::register(&mut registry);
    calendar_create_event::register(&mut registry);
    contacts_search::register(&mut registry);
    deck_cards::register(&mut registry);
    deck_create_card::register(&mut registry);
    deck_move_card::register(&mut registry);
    files_write::register(&mut registry);
    files_move::register(&mut registry);
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

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        other => panic!("a schema must be a JSON object, got {other}"),
    }
}
