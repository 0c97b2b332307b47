//! The MCP handler: lists the registry's tools and runs a call with the
//! caller the HTTP layer verified, and serves the MCP Apps views as
//! resources.

use crate::bearer::Caller;
use crate::index::Index;
use crate::nextcloud::Nextcloud;
use crate::tools::{Registry, ToolCall};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use std::sync::Arc;

/// What the server tells clients about itself.
pub const INSTRUCTIONS: &str = "Tools over the user's Nextcloud: files, calendar, contacts and Deck. \
Every call runs as the user, so it sees exactly what the user can see. Identifiers circulate: \
a fileid, path, event uid or card id returned by one tool is what the next tool takes.";

#[derive(Clone)]
pub struct ToolServer {
    registry: Arc<Registry>,
    nextcloud_url: Arc<str>,
    http: reqwest::Client,
    index: Index,
}

impl ToolServer {
    pub fn new(
        registry: Registry,
        nextcloud_url: &str,
        http: reqwest::Client,
        index: Index,
    ) -> ToolServer {
        ToolServer {
            registry: Arc::new(registry),
            nextcloud_url: nextcloud_url.into(),
            http,
            index,
        }
    }
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_completions()
                .enable_resources()
                .build(),
        );
        info.server_info = Implementation::new("tamebi-mcp-nextcloud", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(INSTRUCTIONS.to_string());
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(
            self.registry.tools().map(|tool| tool.tool.clone()).collect(),
        ))
    }

    /// The MCP Apps views (`ui://`), the only resources this server has.
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(
            crate::apps::all().iter().map(crate::apps::App::resource).collect(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        match crate::apps::get(&request.uri) {
            Some(app) => Ok(ReadResourceResult::new(vec![app.contents()]).into()),
            None => Err(McpError::resource_not_found(
                format!(
                    "No resource {}; resources/list names the ones this server has.",
                    request.uri
                ),
                None,
            )),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(tool) = self.registry.get(&request.name) else {
            return Err(McpError::invalid_params(format!("Unknown tool: {}", request.name), None));
        };
        let caller = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Caller>())
            .cloned()
            .ok_or_else(|| {
                McpError::internal_error("the request carries no verified caller", None)
            })?;
        let call = ToolCall {
            nextcloud: Nextcloud::new(&self.nextcloud_url, self.http.clone(), &caller),
            arguments: request.arguments.unwrap_or_default(),
            index: self.index.clone(),
        };
        let started = std::time::Instant::now();
        let result = tool.call(call).await;
        tracing::info!(
            tool = %request.name,
            uid = %caller.uid,
            is_error = result.is_error.unwrap_or(false),
            duration_ms = started.elapsed().as_millis() as u64,
            "tool call"
        );
        Ok(result.into())
    }
}
