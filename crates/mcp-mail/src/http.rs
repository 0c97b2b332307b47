//! The HTTP face: `/mcp` (streamable HTTP, stateless, JSON answers) behind
//! the caller check, RFC 9728 protected-resource metadata and a health
//! probe, all three from the shared `mcp-auth` crate.
//!
//! A request without a valid pair of tokens gets 401 with
//! `WWW-Authenticate: Bearer resource_metadata="…"` and nothing else: the
//! reason goes to the log (never a token).

use crate::caller::CallerCheck;
use crate::config::Config;
use crate::server::ToolServer;
use axum::Router;
use mcp_auth::ProtectedResource;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot listen on {address}: {source}")]
    Listen { address: std::net::SocketAddr, source: std::io::Error },
}

/// A running server; [`McpMail::shutdown`] stops it and waits.
pub struct McpMail {
    url: String,
    stop: CancellationToken,
    task: JoinHandle<()>,
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
        let listener = TcpListener::bind(config.listen)
            .await
            .map_err(|source| StartError::Listen { address: config.listen, source })?;
        let address = listener.local_addr().expect("bound address");
        let stop = CancellationToken::new();
        let router = router(config, stop.clone());
        let shutdown = stop.clone();
        let task =
            tokio::spawn(http_serve::serve("mcp-mail", listener, router, limits, async move {
                shutdown.cancelled().await
            }));
        Ok(McpMail { url: format!("http://{address}"), stop, task })
    }

    /// `http://host:port` of the listener.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub async fn shutdown(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// The whole router, for tests that drive it without a socket too.
pub fn router(config: Config, stop: CancellationToken) -> Router {
    let http = http_client();
    let server = ToolServer::new(crate::tools::all(), &config.app_url, http.clone());
    let mcp_config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_hosts(mcp_auth::allowed_hosts(&config.allowed_hosts, &config.canonical_url))
        .with_cancellation_token(stop);
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        mcp_config,
    );
    let resource = ProtectedResource {
        canonical_url: config.canonical_url.clone(),
        issuer: config.issuer.clone(),
        name: "Tamebi MCP Mail".to_string(),
    };
    mcp_auth::router(
        resource,
        CallerCheck::new(&config, http),
        Router::new().nest_service(&config.mcp_path(), service),
    )
}

fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(crate::app::REQUEST_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("HTTP client")
}
