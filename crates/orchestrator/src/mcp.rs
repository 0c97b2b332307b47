//! The orchestrator's side of MCP: for one turn, connect to each MCP server
//! with the user's own credential, list its tools, call them.
//!
//! The orchestrator holds no Nextcloud client and no credential of its own:
//! the headers it sends are the user's tokens as the Nextcloud app
//! forwarded them, spent by the MCP servers. A server that cannot be
//! reached, or that refuses the user's sign-in, drops its tools for the
//! turn — and the environment block says which of the two happened, so the
//! agent never mistakes "has no tools" for "looked and found nothing".
//!
//! Built on rmcp's streamable HTTP client; a connection lives for one turn.

use rmcp::model::{
    CallToolRequestParams, CallToolResult, JsonObject, ReadResourceRequestParams, ResourceContents,
    Tool,
};
use rmcp::service::{RoleClient, RunningService, ServiceExt as _};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use std::collections::HashMap;

/// One MCP server the orchestrator knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// A short name: "nextcloud", "mail".
    pub name: String,
    /// Its streamable HTTP endpoint, e.g. `http://mcp-nextcloud:9101/mcp`.
    pub url: String,
}

/// What to send one server for one user: the bearer addressed to it, and
/// any further header it needs (the Nextcloud-audience token).
#[derive(Clone, Default)]
pub struct Credential {
    pub bearer: String,
    pub headers: Vec<(String, String)>,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        formatter.debug_struct("Credential").field("headers", &names).finish_non_exhaustive()
    }
}

/// Why a server's tools are missing this turn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    #[error("the {server} service did not answer")]
    Unreachable { server: String },
    #[error("the {server} service refused the user's sign-in")]
    SignInRefused { server: String },
    #[error("the {server} service answered something unexpected")]
    Protocol { server: String, detail: String },
}

/// A connection to one server for one turn.
pub struct Connection {
    name: String,
    service: RunningService<RoleClient, ()>,
}

/// The longest a connection attempt or a tool listing may take.
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Connects to `server` as the user whose `credential` this is.
pub async fn connect(
    server: &ServerConfig,
    http: reqwest::Client,
    credential: &Credential,
) -> Result<Connection, McpError> {
    let mut headers = HashMap::new();
    for (name, value) in &credential.headers {
        let name = http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| protocol(server, "bad header name"))?;
        let value =
            http::HeaderValue::from_str(value).map_err(|_| protocol(server, "bad header value"))?;
        headers.insert(name, value);
    }
    let config = StreamableHttpClientTransportConfig::with_uri(server.url.as_str())
        .auth_header(credential.bearer.clone())
        .custom_headers(headers);
    let transport = StreamableHttpClientTransport::with_client(http, config);
    let service = tokio::time::timeout(CONNECT_TIMEOUT, ().serve(transport))
        .await
        .map_err(|_| McpError::Unreachable { server: server.name.clone() })?
        .map_err(|error| classify(server, &error.to_string()))?;
    Ok(Connection { name: server.name.clone(), service })
}

impl Connection {
    pub fn server(&self) -> &str {
        &self.name
    }

    /// Every tool the server offers this user.
    pub async fn tools(&self) -> Result<Vec<Tool>, McpError> {
        let server = ServerConfig { name: self.name.clone(), url: String::new() };
        tokio::time::timeout(CONNECT_TIMEOUT, self.service.peer().list_all_tools())
            .await
            .map_err(|_| McpError::Unreachable { server: self.name.clone() })?
            .map_err(|error| classify(&server, &error.to_string()))
    }

    /// Calls a tool. A tool's own failure is a successful call whose result
    /// has `is_error` set: the caller must look at it.
    pub async fn call(
        &self,
        name: &str,
        arguments: JsonObject,
    ) -> Result<CallToolResult, McpError> {
        let server = ServerConfig { name: self.name.clone(), url: String::new() };
        let mut params = CallToolRequestParams::new(name.to_string());
        params.arguments = Some(arguments);
        self.service
            .peer()
            .call_tool(params)
            .await
            .map_err(|error| classify(&server, &error.to_string()))
    }

    /// Reads an MCP Apps view (`ui://…`) the server offers, as an embedded
    /// resource block `{type: "resource", resource: {uri, mimeType, text,
    /// _meta}}` — what the page frames, sandboxed, beside the tool's result.
    pub async fn read_view(&self, uri: &str) -> Result<serde_json::Value, McpError> {
        let server = ServerConfig { name: self.name.clone(), url: String::new() };
        let read = self.service.peer().read_resource(ReadResourceRequestParams::new(uri));
        let result = tokio::time::timeout(CONNECT_TIMEOUT, read)
            .await
            .map_err(|_| McpError::Unreachable { server: self.name.clone() })?
            .map_err(|error| classify(&server, &error.to_string()))?;
        result
            .contents
            .into_iter()
            .find_map(|contents| view_json(contents, uri))
            .ok_or_else(|| protocol(&server, "the view has no text contents"))
    }

    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }
}

/// A `resources/read` content as the page receives it (an embedded
/// resource: `{"type": "resource", "resource": {uri, mimeType, text,
/// _meta}}`), if it is the text of `uri`. Public so the view pins can be
/// computed from a server's own contents the way they arrive.
pub fn view_json(contents: ResourceContents, uri: &str) -> Option<serde_json::Value> {
    match contents {
        ResourceContents::TextResourceContents { uri: found, mime_type, text, meta }
            if found == uri =>
        {
            Some(serde_json::json!({
                "type": "resource",
                "resource": {"uri": found, "mimeType": mime_type, "text": text, "_meta": meta},
            }))
        }
        _ => None,
    }
}

fn protocol(server: &ServerConfig, detail: &str) -> McpError {
    McpError::Protocol { server: server.name.clone(), detail: detail.to_string() }
}

/// rmcp reports transport failures as text; 401/403 mean the sign-in was
/// refused, connection failures mean the server is not there.
fn classify(server: &ServerConfig, detail: &str) -> McpError {
    tracing::warn!(server = %server.name, %detail, "MCP server failed");
    let lower = detail.to_lowercase();
    if lower.contains("auth required")
        || lower.contains("401")
        || lower.contains("403")
        || lower.contains("unauthorized")
        || lower.contains("forbidden")
    {
        McpError::SignInRefused { server: server.name.clone() }
    } else if lower.contains("connect")
        || lower.contains("transport")
        || lower.contains("closed")
        || lower.contains("timed out")
    {
        McpError::Unreachable { server: server.name.clone() }
    } else {
        protocol(server, detail)
    }
}
