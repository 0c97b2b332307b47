//! The rmcp handler both servers run: `tools/list` from the registry,
//! `tools/call` dispatched by name with the caller the HTTP layer verified
//! (one log line per call, never the arguments), and resources where a
//! server has some. What differs between servers is data ([`About`], the
//! registry) and behaviour (a [`Service`]: the context a call gets).

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
use std::sync::Arc;

/// The verified caller `mcp-auth` put in the request's extensions.
pub trait Caller: Clone + Send + Sync + 'static {
    /// The user id, for the call log.
    fn uid(&self) -> &str;
}

/// What a server tells clients about itself at `initialize`.
#[derive(Debug, Clone)]
pub struct About {
    /// `serverInfo.name`, e.g. `tamebi-mcp-mail`.
    pub name: &'static str,
    pub version: &'static str,
    pub instructions: &'static str,
    pub capabilities: ServerCapabilities,
}

impl About {
    /// A server that offers tools only.
    pub fn tools(name: &'static str, version: &'static str, instructions: &'static str) -> About {
        About {
            name,
            version,
            instructions,
            capabilities: ServerCapabilities::builder().enable_tools().build(),
        }
    }
}

/// How one MCP server serves a call: the context a tool gets from its
/// caller, and what it adds to listing.
pub trait Service: Clone + Send + Sync + 'static {
    type Caller: Caller;
    /// What a tool handler receives: the client built from the caller's
    /// own credential (and whatever else the server shares with its tools).
    type Context: Send + 'static;

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

/// A server as an rmcp `ServerHandler`: what it is, its tools, and its
/// [`Service`].
pub struct McpHandler<S: Service> {
    about: Arc<About>,
    registry: Arc<Registry<S::Context>>,
    service: S,
}

impl<S: Service> Clone for McpHandler<S> {
    fn clone(&self) -> Self {
        McpHandler {
            about: self.about.clone(),
            registry: self.registry.clone(),
            service: self.service.clone(),
        }
    }
}

impl<S: Service> McpHandler<S> {
    pub fn new(about: About, registry: Registry<S::Context>, service: S) -> McpHandler<S> {
        McpHandler { about: Arc::new(about), registry: Arc::new(registry), service }
    }
}

fn caller<C: Caller>(context: &RequestContext<RoleServer>) -> Option<C> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<C>())
        .cloned()
}

impl<S: Service> ServerHandler for McpHandler<S> {
    fn get_info(&self) -> ServerConfig {
        let mut info = InitializeResult::new(self.about.capabilities.clone());
        info.server_info = Implementation::new(self.about.name, self.about.version);
        info.instructions = Some(self.about.instructions.to_string());
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let caller = caller::<S::Caller>(&context);
        if !self.service.offers_tools(caller.as_ref()).await {
            return Ok(ListToolsResult::with_all_items(Vec::new()));
        }
        Ok(ListToolsResult::with_all_items(
            self.registry.tools().map(|tool| tool.tool.clone()).collect(),
        ))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.service.list_resources()
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.service.read_resource(&request.uri).map(Into::into)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(tool) = self.registry.get(&request.name) else {
            return Err(McpError::invalid_params(self.service.unknown_tool(&request.name), None));
        };
        let caller = caller::<S::Caller>(&context).ok_or_else(|| {
            McpError::internal_error("the request carries no verified caller", None)
        })?;
        let started = std::time::Instant::now();
        let result =
            tool.call(self.service.context(&caller), request.arguments.unwrap_or_default()).await;
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
