//! One MCP server beside the fake Nextcloud, driven through a raw client
//! of its `/mcp`: what the MCP servers' own test suites stand up
//! (`crates/mcp-nextcloud/tests/common`, `crates/mcp-mail/tests/common`),
//! so that the wire itself is what they see. The services are the
//! harness's [`Stack`], started by its [`Builder`]; only the client is
//! added here.

use super::{Builder, Service, Stack};
use crate::mcp_client::McpClient;
use serde_json::Value;

/// The stack (through `Deref`) and its server's client (through the
/// client's methods, repeated below so that a test writes `stack.rpc(…)`).
pub struct OneServer {
    pub stack: Stack,
    /// The server's `/mcp`; a restart listens on the same port, so the
    /// client stays good.
    pub client: McpClient,
}

impl Builder {
    /// Starts the fake and `server` alone (the other services are not
    /// started), with a client of the server's `/mcp`.
    pub async fn start_server(self, server: Service) -> Result<OneServer, String> {
        let stack = self.only(&[server]).start().await?;
        let url = match server {
            Service::McpNextcloud => stack.mcp_nextcloud_url(),
            Service::McpMail => stack.mail.as_ref().map(|mail| mail.url().to_string()),
            Service::Model | Service::Orchestrator => None,
        };
        let url = url.ok_or_else(|| format!("{server:?} is not an MCP server"))?;
        Ok(OneServer { client: McpClient::new(format!("{url}/mcp")), stack })
    }
}

impl std::ops::Deref for OneServer {
    type Target = Stack;
    fn deref(&self) -> &Stack {
        &self.stack
    }
}

impl std::ops::DerefMut for OneServer {
    fn deref_mut(&mut self) -> &mut Stack {
        &mut self.stack
    }
}

type Headers = [(String, String)];

impl OneServer {
    /// [`McpClient::request`].
    pub fn request(
        &self,
        headers: &Headers,
        method: &str,
        params: Value,
    ) -> reqwest::RequestBuilder {
        self.client.request(headers, method, params)
    }

    /// [`McpClient::rpc`].
    pub async fn rpc(&self, headers: &Headers, method: &str, params: Value) -> reqwest::Response {
        self.client.rpc(headers, method, params).await
    }

    /// [`McpClient::rpc_message`].
    pub async fn rpc_message(&self, headers: &Headers, method: &str, params: Value) -> Value {
        self.client.rpc_message(headers, method, params).await
    }

    /// [`McpClient::rpc_result`].
    pub async fn rpc_result(&self, headers: &Headers, method: &str, params: Value) -> Value {
        self.client.rpc_result(headers, method, params).await
    }

    /// [`McpClient::call_tool_with`].
    pub async fn call_tool_with(&self, headers: &Headers, name: &str, arguments: Value) -> Value {
        self.client.call_tool_with(headers, name, arguments).await
    }

    /// [`McpClient::resource_metadata`].
    pub async fn resource_metadata(&self) -> Vec<(&'static str, Value)> {
        self.client.resource_metadata().await
    }

    /// Stops every service ([`Stack::shutdown`]).
    pub async fn shutdown(self) {
        self.stack.shutdown().await;
    }
}
