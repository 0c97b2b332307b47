//! The tool set of one turn: the MCP servers' tools listed with the user's
//! own tokens, the local memory tools and the registered flows, behind the
//! agent's [`ToolSet`]. Every call is routed by name and lands in the audit
//! with how it ended.
//!
//! A server that does not answer, refuses the user's sign-in, or lists no
//! tools (mcp-mail while Nextcloud Mail is missing) offers nothing for the
//! turn; what happened is kept as a [`Capability`] so the
//! environment block can tell "has tools" from "can reach the workspace".
//! Policy comes from the tools' own annotations: only `readOnlyHint: true`
//! is data; anything else — unannotated tools included — is an action and
//! waits for the user.

pub mod memory;
pub mod views;

use crate::flows::Flow;
use crate::mcp::{self, Connection, Credential, McpError, ServerConfig};
use crate::model::{ToolCall, ToolDefinition};
use crate::prompt::{Capability, Reach};
use crate::store::{Database, audit, now_ms};
use agent::{ToolKind, ToolResult, ToolSet, ToolSpec};
use futures_util::future::BoxFuture;
use rmcp::model::{CallToolResult, Tool};
use serde_json::Value;
use std::collections::HashMap;
use std::time::Instant;
use wire::Received;

/// The `_meta` key under which MCP servers say how a failed call failed
/// (the `wire` crate's, the one the servers write).
pub use wire::FAILURE_KIND_META_KEY;

/// Who is calling, for the audit.
#[derive(Debug, Clone)]
pub struct Caller {
    pub uid: String,
    pub conversation_id: String,
}

enum Route {
    Mcp(usize),
    Memory,
    Flow(usize),
}

/// How one server's calls went this turn.
#[derive(Debug, Default, Clone, Copy)]
struct Health {
    calls: u32,
    unreachable: u32,
    refused: u32,
}

/// The tools of one turn.
pub struct TurnTools {
    specs: Vec<ToolSpec>,
    routes: HashMap<String, Route>,
    /// MCP Apps: the `ui://` view a tool names (`_meta.ui.resourceUri`).
    views: HashMap<String, String>,
    /// Views read this turn, by URI; `None` for one the pins refused.
    read_views: tokio::sync::Mutex<HashMap<String, Option<Value>>>,
    /// The reviewed views that may reach the page.
    view_pins: std::sync::Arc<views::ViewPins>,
    connections: Vec<Connection>,
    /// Per capability: what listing found, and the connection behind it.
    capabilities: Vec<(Capability, Option<usize>)>,
    health: std::sync::Mutex<Vec<Health>>,
    memory: memory::MemoryTools,
    flows: Vec<Box<dyn Flow>>,
    audit: Database,
    caller: Caller,
}

/// Connects to every server at once as the user and lists their tools. A
/// server without a credential (the app sent no token for it) is not
/// called: its sign-in is missing.
pub async fn assemble(
    servers: &[(ServerConfig, Option<Credential>)],
    http: &reqwest::Client,
    memory: memory::MemoryTools,
    flows: Vec<Box<dyn Flow>>,
    audit: Database,
    caller: Caller,
) -> TurnTools {
    let listed = futures_util::future::join_all(servers.iter().map(|(server, credential)| {
        let http = http.clone();
        async move {
            let Some(credential) = credential else {
                return Err(McpError::SignInRefused { server: server.name.clone() });
            };
            let connection = mcp::connect(server, http, credential).await?;
            match connection.tools().await {
                Ok(tools) => Ok((connection, tools)),
                Err(error) => {
                    connection.close().await;
                    Err(error)
                }
            }
        }
    }))
    .await;
    let mut set = TurnTools {
        specs: Vec::new(),
        routes: HashMap::new(),
        views: HashMap::new(),
        read_views: Default::default(),
        view_pins: views::ViewPins::shipped(),
        connections: Vec::new(),
        memory,
        capabilities: Vec::new(),
        health: std::sync::Mutex::new(Vec::new()),
        flows: Vec::new(),
        audit,
        caller,
    };
    for ((server, _), outcome) in servers.iter().zip(listed) {
        let covers = covers(&server.name);
        match outcome {
            Ok((connection, tools)) => {
                let index = set.connections.len();
                set.connections.push(connection);
                let mut offered = 0;
                for tool in tools {
                    if set.add(spec_of(&tool), Route::Mcp(index)) {
                        offered += 1;
                        if let Some(uri) = view_of(&tool) {
                            set.views.insert(tool.name.to_string(), uri);
                        }
                    }
                }
                // A server that lists nothing (mail without Nextcloud Mail)
                // reaches nothing: say so rather than "reachable, 0 tools".
                let reach = if offered == 0 { Reach::NothingListed } else { Reach::Reachable };
                let capability = Capability { covers, tools: offered, reach };
                set.capabilities.push((capability, Some(index)));
            }
            Err(error) => {
                let reach = match error {
                    McpError::SignInRefused { .. } => Reach::SignInRefused,
                    McpError::Unreachable { .. } | McpError::Protocol { .. } => {
                        Reach::ServerUnreachable
                    }
                };
                set.capabilities.push((Capability { covers, tools: 0, reach }, None));
            }
        }
    }
    *set.health.get_mut().unwrap_or_else(|p| p.into_inner()) =
        vec![Health::default(); set.connections.len()];
    for spec in memory::specs() {
        set.add(spec, Route::Memory);
    }
    for flow in flows {
        let index = set.flows.len();
        if set.add(flow.spec(), Route::Flow(index)) {
            set.flows.push(flow);
        }
    }
    set
}

/// What a server covers, in the user's words.
fn covers(server: &str) -> String {
    match server {
        "nextcloud" => "files, calendar, contacts and Deck".into(),
        "mail" => "mail".into(),
        other => other.into(),
    }
}

/// The MCP Apps view a tool names: `_meta.ui.resourceUri`, a `ui://` URI.
fn view_of(tool: &Tool) -> Option<String> {
    let uri = tool.meta.as_ref()?.get("ui")?.get("resourceUri")?.as_str()?;
    uri.starts_with("ui://").then(|| uri.to_string())
}

fn spec_of(tool: &Tool) -> ToolSpec {
    let read_only = tool.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true);
    ToolSpec {
        definition: ToolDefinition {
            name: tool.name.to_string(),
            description: tool.description.as_deref().unwrap_or_default().to_string(),
            parameters: Value::Object((*tool.input_schema).clone()),
        },
        kind: if read_only { ToolKind::Data } else { ToolKind::Action },
        dynamic: true,
    }
}

impl TurnTools {
    /// Adds a tool unless its name is taken (the first one keeps it).
    fn add(&mut self, spec: ToolSpec, route: Route) -> bool {
        let name = spec.definition.name.clone();
        if self.routes.contains_key(&name) {
            tracing::warn!(tool = %name, "two tools share a name; the second is not offered");
            return false;
        }
        self.routes.insert(name, route);
        self.specs.push(spec);
        true
    }

    /// What each server offers now: as listed at the start of the turn,
    /// unless its calls since have shown the workspace behind it is not
    /// there — any call that found it unreachable, or two or more calls
    /// all refused (one refusal is a permission boundary working; every
    /// call refused is a sign-in the workspace does not accept).
    pub fn capabilities(&self) -> Vec<Capability> {
        let health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        self.capabilities
            .iter()
            .map(|(capability, connection)| {
                let mut capability = capability.clone();
                if let Some(health) = connection.and_then(|index| health.get(index)) {
                    let failing = health.unreachable > 0
                        || (health.calls >= 2 && health.refused == health.calls);
                    if failing && capability.reach == Reach::Reachable {
                        capability.reach = Reach::FailingThisTurn;
                    }
                }
                capability
            })
            .collect()
    }

    fn note_health(&self, index: usize, outcome: &audit::Outcome) {
        let mut health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(health) = health.get_mut(index) {
            health.calls += 1;
            match outcome {
                audit::Outcome::Unreachable => health.unreachable += 1,
                audit::Outcome::RefusedByNextcloud => health.refused += 1,
                _ => {}
            }
        }
    }

    /// Closes the turn's MCP connections.
    pub async fn close(self) {
        for connection in self.connections {
            connection.close().await;
        }
    }

    async fn route(&self, call: &ToolCall) -> (ToolResult, audit::Outcome) {
        let Some(route) = self.routes.get(&call.name) else {
            let text = format!(
                "There is no tool named {:?} this turn. Use one of the tools you were given.",
                call.name
            );
            return (failure(text), audit::Outcome::ModelMisuse);
        };
        let arguments = match serde_json::from_str::<Value>(&call.arguments) {
            Ok(Value::Object(arguments)) => arguments,
            Ok(_) => {
                let text = format!(
                    "The arguments for {} were not a JSON object. Call it again with a JSON object matching its parameters.",
                    call.name
                );
                return (failure(text), audit::Outcome::ModelMisuse);
            }
            Err(error) => {
                // serde_json's message names the line and column, never
                // the text: the model reads where its JSON broke.
                let text = format!(
                    "The arguments you wrote for {name} are not valid JSON ({error}), so nothing was run. Call {name} again with one complete JSON object matching its parameters.",
                    name = call.name
                );
                return (failure(text), audit::Outcome::ModelMisuse);
            }
        };
        match route {
            Route::Mcp(index) => {
                let connection = &self.connections[*index];
                let (mut result, outcome) = match connection.call(&call.name, arguments).await {
                    Ok(result) => mcp_result(result),
                    Err(error) => mcp_failure(&error),
                };
                self.note_health(*index, &outcome);
                if !result.is_error
                    && let Some(uri) = self.views.get(&call.name)
                {
                    self.attach_view(connection, uri, &mut result.output).await;
                }
                (result, outcome)
            }
            Route::Memory => self.memory.call(&call.name, &arguments).await,
            Route::Flow(index) => {
                let result = self.flows[*index].run(self, call).await;
                let outcome =
                    if result.is_error { audit::Outcome::ModelMisuse } else { audit::Outcome::Ok };
                (result, outcome)
            }
        }
    }

    /// The same tools with another reviewed view list than the shipped one.
    pub fn with_view_pins(mut self, pins: std::sync::Arc<views::ViewPins>) -> TurnTools {
        self.view_pins = pins;
        self
    }

    /// Puts the tool's view beside its result for the page, in
    /// `_meta.ui.resource` (never in what the model reads), if the view is
    /// one of the reviewed pins ([`views`]). A view that cannot be read, or
    /// is not pinned, leaves the result as it is: the page shows the text.
    async fn attach_view(&self, connection: &Connection, uri: &str, output: &mut Value) {
        let Value::Object(output) = output else {
            return;
        };
        let mut read = self.read_views.lock().await;
        let view = match read.get(uri) {
            Some(view) => view.clone(),
            None => match connection.read_view(uri).await {
                Ok(view) => {
                    let admitted = match self.view_pins.admit(uri, &view["resource"]) {
                        Ok(()) => Some(view),
                        Err(fingerprint) => {
                            tracing::warn!(
                                %uri,
                                %fingerprint,
                                "an MCP Apps view is not in the reviewed pin list (unknown or changed); it is not attached"
                            );
                            None
                        }
                    };
                    read.insert(uri.to_string(), admitted.clone());
                    admitted
                }
                Err(error) => {
                    tracing::warn!(%uri, %error, "an MCP Apps view could not be read");
                    return;
                }
            },
        };
        drop(read);
        let Some(view) = view else {
            return;
        };
        let meta = output.entry("_meta").or_insert_with(|| serde_json::json!({}));
        if let Value::Object(meta) = meta {
            meta.insert("ui".into(), serde_json::json!({ "resource": view }));
        }
    }

    async fn record(&self, call: &ToolCall, outcome: &audit::Outcome, duration_ms: i64) {
        record(&self.audit, &self.caller, call, outcome, duration_ms, "a tool call").await;
    }
}

impl ToolSet for TurnTools {
    fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    fn call<'a>(&'a self, call: &'a ToolCall) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let started = Instant::now();
            let (result, outcome) = self.route(call).await;
            self.record(call, &outcome, started.elapsed().as_millis() as i64).await;
            result
        })
    }
}

/// Records a call the user denied: it never ran.
pub async fn record_denied(audit: &Database, caller: &Caller, call: &ToolCall) {
    record(audit, caller, call, &audit::Outcome::DeniedByUser, 0, "a denied call").await;
}

/// Writes one call to the audit; a write that fails is logged (`what`
/// names the call), the turn goes on.
async fn record(
    audit: &Database,
    caller: &Caller,
    call: &ToolCall,
    outcome: &audit::Outcome,
    duration_ms: i64,
    what: &str,
) {
    let record = audit::ToolCallRecord::new(
        now_ms(),
        &caller.uid,
        &caller.conversation_id,
        &call.name,
        &call.arguments,
        duration_ms,
        outcome,
    );
    if let Err(error) = audit.run(move |c| audit::record(c, &record)).await {
        tracing::error!(%error, "{what} could not be written to the audit");
    }
}

pub(crate) fn failure(text: String) -> ToolResult {
    ToolResult { output: Value::String(text.clone()), text, is_error: true }
}

fn mcp_result(result: CallToolResult) -> (ToolResult, audit::Outcome) {
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|block| block.as_text())
        .map(|t| t.text.as_str())
        .collect();
    let text = text.join("\n");
    let is_error = result.is_error == Some(true);
    let outcome = if is_error {
        let kind = result.meta.as_ref().and_then(|meta| meta.get(FAILURE_KIND_META_KEY));
        // A kind that is there but not a string is as unknown as a new name;
        // a failure without one said it failed and nothing more.
        let received = match kind {
            None => Received::Unspecified,
            Some(Value::String(name)) => Received::parse(Some(name)),
            Some(_) => Received::Unknown(String::new()),
        };
        if let Received::Unknown(kind) = &received {
            tracing::warn!(%kind, "a tool failed with a kind this build does not know");
        }
        audit::Outcome::of_failure(received)
    } else {
        audit::Outcome::Ok
    };
    let output = match result.structured_content {
        Some(structured) if !is_error => structured,
        _ => Value::String(text.clone()),
    };
    (ToolResult { text, output, is_error }, outcome)
}

fn mcp_failure(error: &McpError) -> (ToolResult, audit::Outcome) {
    match error {
        McpError::SignInRefused { .. } => (
            failure(
                "The workspace refused the user's sign-in for this call. Tell the user their session needs renewing (reloading the page signs in again); do not answer from memory."
                    .into(),
            ),
            audit::Outcome::RefusedByNextcloud,
        ),
        McpError::Unreachable { .. } | McpError::Protocol { .. } => (
            failure(
                "The workspace could not be reached for this call. Tell the user it cannot be reached right now and to try again shortly; do not guess what it would have returned."
                    .into(),
            ),
            audit::Outcome::Unreachable,
        ),
    }
}

#[cfg(test)]
mod tests;
