//! The tool registry. A tool module declares a [`Definition`] and a handler
//! taking its typed input; [`Registry::add`] derives the input schema from
//! that type and parses each call's arguments into it, so a handler never
//! sees arguments its schema does not describe.
//!
//! Data tools are annotated `readOnlyHint: true`; action tools are not, and
//! the orchestrator asks the user before every call to one of them.

use crate::result::into_result;
use rmcp::model::{CallToolResult, JsonObject, MetaObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use wire::ToolFailure;

/// A successful result: text for the model, structured content for clients
/// that read `outputSchema` (and for the chat page).
#[derive(Debug, Clone)]
pub struct ToolOutput {
    pub text: String,
    pub structured: Value,
}

pub type ToolOutcome = Result<ToolOutput, ToolFailure>;
type Handler<C> =
    Arc<dyn Fn(C, JsonObject) -> Pin<Box<dyn Future<Output = ToolOutcome> + Send>> + Send + Sync>;

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

/// What a tool module declares; the input schema is its input type's.
pub struct Definition {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub kind: ToolKind,
    pub output_schema: Value,
    /// `_meta` of the tool (MCP Apps' `ui.resourceUri`).
    pub meta: Option<Value>,
}

/// One registered tool; `C` is what a call gets (the client built from the
/// caller's own credential).
pub struct RegisteredTool<C> {
    pub tool: Tool,
    pub kind: ToolKind,
    handler: Handler<C>,
}

impl<C> Clone for RegisteredTool<C> {
    fn clone(&self) -> Self {
        RegisteredTool { tool: self.tool.clone(), kind: self.kind, handler: self.handler.clone() }
    }
}

/// The set of tools a server offers, listed by name.
pub struct Registry<C> {
    tools: BTreeMap<String, RegisteredTool<C>>,
}

impl<C> Default for Registry<C> {
    fn default() -> Self {
        Registry { tools: BTreeMap::new() }
    }
}

impl<C> Clone for Registry<C> {
    fn clone(&self) -> Self {
        Registry { tools: self.tools.clone() }
    }
}

impl<C: Send + 'static> Registry<C> {
    /// The tools each of `registers` adds (a tool module's `register`),
    /// so a server's tool list is one line per tool.
    pub fn with(registers: &[fn(&mut Registry<C>)]) -> Registry<C> {
        let mut registry = Registry::default();
        for register in registers {
            register(&mut registry);
        }
        registry
    }

    /// Registers a tool whose handler takes `I`, the input type: its schema
    /// is the tool's `inputSchema` ([`crate::schema::input_schema`]), and a
    /// call whose arguments do not parse into it fails as the model's
    /// mistake (`schema_mismatch`) before the handler runs.
    pub fn add<I, F, Fut>(&mut self, definition: Definition, handler: F)
    where
        I: JsonSchema + DeserializeOwned,
        F: Fn(C, I) -> Fut + Send + Sync + 'static,
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
        let mut tool =
            Tool::new(definition.name, definition.description, crate::schema::input_schema::<I>())
                .with_title(definition.title)
                .with_raw_output_schema(Arc::new(object(definition.output_schema)))
                .with_annotations(annotations);
        if let Some(meta) = definition.meta {
            tool = tool.with_meta(MetaObject(object(meta)));
        }
        let handler: Handler<C> = Arc::new(move |context, arguments| match parse::<I>(arguments) {
            Ok(input) => Box::pin(handler(context, input)),
            Err(failure) => Box::pin(std::future::ready(Err(failure))),
        });
        let previous = self.tools.insert(
            definition.name.to_string(),
            RegisteredTool { tool, kind: definition.kind, handler },
        );
        assert!(previous.is_none(), "tool {} registered twice", definition.name);
    }

    pub fn tools(&self) -> impl Iterator<Item = &RegisteredTool<C>> {
        self.tools.values()
    }

    pub fn get(&self, name: &str) -> Option<&RegisteredTool<C>> {
        self.tools.get(name)
    }
}

impl<C> RegisteredTool<C> {
    /// Runs the tool with `context` on the call's arguments.
    pub async fn call(&self, context: C, arguments: JsonObject) -> CallToolResult {
        into_result((self.handler)(context, arguments).await)
    }
}

/// The arguments as the tool's input type; a mismatch is the model's
/// mistake, reported so it can correct itself.
fn parse<I: DeserializeOwned>(arguments: JsonObject) -> Result<I, ToolFailure> {
    serde_json::from_value(Value::Object(arguments))
        .map_err(|error| ToolFailure::schema_mismatch(&error.to_string()))
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        other => panic!("a schema or _meta must be a JSON object, got {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Input {
        count: u32,
    }

    fn registry() -> Registry<Arc<AtomicUsize>> {
        let mut registry = Registry::default();
        registry.add(
            Definition {
                name: "count",
                title: "Count",
                description: "Counts.",
                kind: ToolKind::Action { destructive: false, idempotent: true, open_world: true },
                output_schema: json!({"type": "object"}),
                meta: Some(json!({"ui": {"resourceUri": "ui://count.html"}})),
            },
            |calls: Arc<AtomicUsize>, input: Input| async move {
                calls.fetch_add(1, Ordering::SeqCst);
                if input.count == 0 {
                    return Err(ToolFailure::invalid_arguments("count must be positive."));
                }
                Ok(ToolOutput { text: format!("{}", input.count), structured: json!({"n": 1}) })
            },
        );
        registry
    }

    fn arguments(value: Value) -> JsonObject {
        let Value::Object(object) = value else { unreachable!() };
        object
    }

    #[tokio::test]
    async fn arguments_that_do_not_parse_fail_before_the_handler_runs() {
        let calls = Arc::new(AtomicUsize::new(0));
        let tool = registry().get("count").unwrap().clone();
        for wrong in [json!({"count": "three"}), json!({"count": 1, "extra": true}), json!({})] {
            let result = tool.call(calls.clone(), arguments(wrong.clone())).await;
            assert_eq!(result.is_error, Some(true), "{wrong}");
            let meta = result.meta.unwrap();
            assert_eq!(meta.0[wire::meta::FAILURE_KIND], "invalid_arguments", "{wrong}");
        }
        assert_eq!(calls.load(Ordering::SeqCst), 0);

        let result = tool.call(calls.clone(), arguments(json!({"count": 0}))).await;
        assert_eq!(result.is_error, Some(true));
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        let result = tool.call(calls.clone(), arguments(json!({"count": 3}))).await;
        assert_eq!(result.is_error, Some(false));
        assert_eq!(result.structured_content, Some(json!({"n": 1})));
        assert!(result.meta.is_none());
    }

    #[test]
    fn a_definition_becomes_the_tool_a_client_lists() {
        let registry = registry();
        let tool = serde_json::to_value(&registry.get("count").unwrap().tool).unwrap();
        assert_eq!(tool["inputSchema"]["required"], json!(["count"]));
        assert_eq!(tool["inputSchema"]["additionalProperties"], json!(false));
        assert_eq!(
            tool["annotations"],
            json!({
                "title": "Count",
                "readOnlyHint": false,
                "destructiveHint": false,
                "idempotentHint": true,
                "openWorldHint": true
            })
        );
        assert_eq!(tool["_meta"], json!({"ui": {"resourceUri": "ui://count.html"}}));
    }

    #[test]
    #[should_panic(expected = "registered twice")]
    fn a_name_is_registered_once() {
        let mut registry = registry();
        registry.add(
            Definition {
                name: "count",
                title: "Again",
                description: "Again.",
                kind: ToolKind::Data,
                output_schema: json!({"type": "object"}),
                meta: None,
            },
            |_: Arc<AtomicUsize>, _: Input| async { unreachable!() },
        );
    }
}
