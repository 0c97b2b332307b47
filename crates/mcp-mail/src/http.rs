//! The HTTP face: `/mcp` behind the caller check, RFC 9728 metadata and a
//! health probe, wired by `mcp-kit` (stateless streamable HTTP, JSON
//! answers) on `mcp-auth`.

use crate::caller::CallerCheck;
use crate::config::Config;
use crate::server::ToolServer;
use axum::Router;
use mcp_kit::CancellationToken;

/// Why mcp-mail did not start: its one listener could not be bound.
pub type StartError = mcp_kit::ListenError;

/// A running server; [`McpMail::shutdown`] stops it and waits.
pub struct McpMail {
    running: mcp_kit::Running,
}

impl McpMail {
    pub async fn start(config: Config) -> Result<McpMail, StartError> {
        McpMail::start_with_limits(config, http_serve::Limits::default()).await
    }

    /// [`McpMail::start`] with its listener under caller-chosen bounds.
    pub async fn start_with_limits(
        config: Config,
        limits: http_serve::Limits,
    ) -> Result<McpMail, StartError> {
        let listener = mcp_kit::http::bind(config.server.listen).await?;
        let running =
            mcp_kit::Running::serve("mcp-mail", listener, limits, |stop| router(config, stop));
        Ok(McpMail { running })
    }

    /// `http://host:port` of the listener.
    pub fn url(&self) -> &str {
        self.running.url()
    }

    pub async fn shutdown(self) {
        self.running.shutdown().await;
    }
}

/// The whole router, for tests that drive it without a socket too.
pub fn router(config: Config, stop: CancellationToken) -> Router {
    let http = mcp_kit::http::upstream_client(crate::app::REQUEST_TIMEOUT);
    let handler = ToolServer::new(&config.server.nextcloud_url, http.clone()).handler();
    mcp_kit::http::router(
        &config.server.endpoint(crate::config::RESOURCE_NAME),
        handler,
        CallerCheck::new(&config, http),
        stop,
    )
}
