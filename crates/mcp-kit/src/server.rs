//! The rmcp handler both servers run: `tools/list` from the registry,
//! `tools/call` dispatched by name with the caller the HTTP layer verified
//! (one log line per call, never the arguments), and resources where a
//! server has some. What differs between servers is a [`Service`].

use crate::registry::Registry;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeResult,
    ListResourcesRequestMethod, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestMethod, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use std::future::Future;

/// The verified caller `mcp-auth` put in the request's extensions.
pub trait Caller: Clone + Send + Sync + 'static {
    /// The user id, for the call log.
    fn uid(&self) -> &str;
}

/// What one MCP server is: its name and instructions, its tools, and the
/// context a call gets from its caller.
pub trait Service: Clone + Send + Sync + 'static {
    type Caller: Caller;
    /// What a tool handler receives: the client built from the caller's
    /// own credential (and whatever else the server shares with its tools).
    type Context: Send + 'static;

    /// `serverInfo.name`, e.g. `tamebi-mcp-mail`.
    fn name(&self) -> &'static str;
    fn version(&self) -> &'static str;
    fn instructions(&self) -> &'static str;
    /// Tools only, unless the server offers more.
    fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities::builder().enable_tools().build()
    }

    fn registry(&self) -> &Registry<Self::Context>;
    fn context(&self, caller: &Self::Caller) -> Self::Context;

    /// Whether the tools are listed to this caller (asked on every listing:
    /// the servers are stateless).
    fn offers_tools(&self, caller: Option<&Self::Caller>) -> impl Future<Output = bool> + Send {
        let _ = caller;
        async { true }
    }

    /// The `invalid_params` message for a tool this server does not have.
    fn unknown_tool(&self, name: &str) -> String {
        format!("Unknown tool: {name}")
    }

    /// `resources/list`; a server without resources answers as rmcp does.
    fn list_resources(&self) -> Result<ListResourcesResult, McpError> {
        Err(McpError::method_not_found::<ListResourcesRequestMethod>())
    }

    /// `resources/read`.
    fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, McpError> {
        let _ = uri;
        Err(McpError::method_not_found::<ReadResourceRequestMethod>())
    }
}

/// A [`Service`] as an rmcp `ServerHandler`.
#[derive(Clone)]
pub struct McpHandler<S>(pub S);

fn caller<C: Caller>(context: &RequestContext<RoleServer>) -> Option<C> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<C>())
        .cloned()
}

impl<S: Service> ServerHandler for McpHandler<S> {
    fn get_info(&self) -> ServerConfig {
        let mut info = InitializeResult::new(self.0.capabilities());
        info.server_info = Implementation::new(self.0.name(), self.0.version());
        info.instructions = Some(self.0.instructions().to_string());
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let caller = caller::<S::Caller>(&context);
        if !self.0.offers_tools(caller.as_ref()).await {
            return Ok(ListToolsResult::with_all_items(Vec::new()));
        }
        Ok(ListToolsResult::with_all_items(
            self.0.registry().tools().map(|tool| tool.tool.clone()).collect(),
        ))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.0.list_resources()
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.0.read_resource(&request.uri).map(Into::into)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(tool) = self.0.registry().get(&request.name) else {
            return Err(McpError::invalid_params(self.0.unknown_tool(&request.name), None));
        };
        let caller = caller::<S::Caller>(&context).ok_or_else(|| {
            McpError::internal_error("the request carries no verified caller", None)
        })?;
        let started = std::time::Instant::now();
        let result =
            tool.call(self.0.context(&caller), request.arguments.unwrap_or_default()).await;
        tracing::info!(
            tool = %request.name,
            uid = %caller.uid(),
            is_error = result.is_error.unwrap_or(false),
            duration_ms = started.elapsed().as_millis() as u64,
            "tool call"
        );
        Ok(result.into())
    }
}
