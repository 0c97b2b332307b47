//! What this server is to the shared MCP handler (`mcp-kit`): its name and
//! instructions, its registry, the Nextcloud client and index a call gets,
//! and the MCP Apps views served as resources.

use crate::bearer::Caller;
use crate::index::Index;
use crate::nextcloud::Nextcloud;
use crate::tools::{Registry, ToolCall};
use rmcp::ErrorData as McpError;
use rmcp::model::{ListResourcesResult, ReadResourceResult, ServerCapabilities};
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

impl mcp_kit::Service for ToolServer {
    type Caller = Caller;
    type Context = ToolCall;

    fn name(&self) -> &'static str {
        "tamebi-mcp-nextcloud"
    }

    fn version(&self) -> &'static str {
        env!("CARGO_PKG_VERSION")
    }

    fn instructions(&self) -> &'static str {
        INSTRUCTIONS
    }

    fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities::builder().enable_tools().enable_completions().enable_resources().build()
    }

    fn registry(&self) -> &Registry {
        &self.registry
    }

    fn context(&self, caller: &Caller) -> ToolCall {
        ToolCall {
            nextcloud: Nextcloud::new(&self.nextcloud_url, self.http.clone(), caller),
            index: self.index.clone(),
        }
    }

    /// The MCP Apps views (`ui://`), the only resources this server has.
    fn list_resources(&self) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(
            crate::apps::all().iter().map(crate::apps::App::resource).collect(),
        ))
    }

    fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, McpError> {
        match crate::apps::get(uri) {
            Some(app) => Ok(ReadResourceResult::new(vec![app.contents()])),
            None => Err(McpError::resource_not_found(
                format!("No resource {uri}; resources/list names the ones this server has."),
                None,
            )),
        }
    }
}
