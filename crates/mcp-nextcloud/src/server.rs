//! What this server is to the shared MCP handler (`mcp-kit`): its name and
//! instructions, its tools, the Nextcloud client and index a call gets,
//! and the MCP Apps views served as resources.

use crate::bearer::Caller;
use crate::index::Index;
use crate::nextcloud::Nextcloud;
use crate::tools::ToolCall;
use mcp_kit::{About, McpHandler};
use rmcp::ErrorData as McpError;
use rmcp::model::{ListResourcesResult, ReadResourceResult, ServerCapabilities};
use std::sync::Arc;

/// What the server tells clients about itself.
pub const INSTRUCTIONS: &str = "Tools over the user's Nextcloud: files, calendar, contacts and Deck. \
Every call runs as the user, so it sees exactly what the user can see. Identifiers circulate: \
a fileid, path, event uid or card id returned by one tool is what the next tool takes.";

/// What a call gets its Nextcloud client and the index from.
#[derive(Clone)]
pub struct ToolServer {
    nextcloud_url: Arc<str>,
    http: reqwest::Client,
    index: Index,
}

impl ToolServer {
    pub fn new(nextcloud_url: &str, http: reqwest::Client, index: Index) -> ToolServer {
        ToolServer { nextcloud_url: nextcloud_url.into(), http, index }
    }

    /// The server as the kit's handler, with every tool of
    /// [`crate::tools::all`].
    pub fn handler(self) -> McpHandler<ToolServer> {
        let about = About {
            name: "tamebi-mcp-nextcloud",
            version: env!("CARGO_PKG_VERSION"),
            instructions: INSTRUCTIONS,
            capabilities: ServerCapabilities::builder()
                .enable_tools()
                .enable_completions()
                .enable_resources()
                .build(),
        };
        McpHandler::new(about, crate::tools::all(), self)
    }
}

impl mcp_kit::Service for ToolServer {
    type Caller = Caller;
    type Context = ToolCall;

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
