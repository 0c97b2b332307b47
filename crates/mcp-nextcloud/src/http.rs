//! The HTTP face: `/mcp` (streamable HTTP, stateless) behind bearer
//! validation, RFC 9728 protected-resource metadata and a health probe (all
//! three from the shared `mcp-auth` crate), and — when a secret is
//! configured — the webhook endpoint that marks index rows dirty.
//!
//! A request without a valid bearer gets 401 with
//! `WWW-Authenticate: Bearer resource_metadata="…"` and nothing else: the
//! reason goes to the log (never the token itself).

use crate::bearer::CallerCheck;
use crate::config::Config;
use crate::convert::Converter;
use crate::index::Index;
use crate::index::webhook::{self, WebhookState};
use crate::server::ToolServer;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::post;
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
    #[error("cannot open the passage index: {0}")]
    Index(#[from] crate::index::store::StoreError),
}

/// A running server; [`McpNextcloud::shutdown`] stops it and waits.
pub struct McpNextcloud {
    url: String,
    stop: CancellationToken,
    task: JoinHandle<()>,
    index: Index,
}

impl McpNextcloud {
    pub async fn start(config: Config) -> Result<McpNextcloud, StartError> {
        McpNextcloud::start_with_limits(config, http_serve::Limits::default()).await
    }

    /// [`McpNextcloud::start`] with its listeners (`/mcp` and the
    /// converter's lending one) under caller-chosen bounds.
    pub async fn start_with_limits(
        config: Config,
        limits: http_serve::Limits,
    ) -> Result<McpNextcloud, StartError> {
        let listener = TcpListener::bind(config.listen)
            .await
            .map_err(|source| StartError::Listen { address: config.listen, source })?;
        let address = listener.local_addr().expect("bound address");
        let converter = match &config.converter {
            Some(converter_config) => Some(
                Converter::start_serving(
                    converter_config.clone(),
                    http_client(),
                    crate::convert::ConverterLimits::default(),
                    limits,
                )
                .await
                .map_err(|source| StartError::Listen {
                    address: converter_config.lend_listen,
                    source,
                })?,
            ),
            None => None,
        };
        let index = Index::open(&config.index, converter)?;
        let stop = CancellationToken::new();
        let router = router(config, index.clone(), stop.clone());
        let shutdown = stop.clone();
        let task = tokio::spawn(http_serve::serve(
            "mcp-nextcloud",
            listener,
            router,
            limits,
            async move { shutdown.cancelled().await },
        ));
        Ok(McpNextcloud { url: format!("http://{address}"), stop, task, index })
    }

    /// `http://host:port` of the listener.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The passage index (tests and operators look inside).
    pub fn index(&self) -> &Index {
        &self.index
    }

    pub async fn shutdown(self) {
        self.stop.cancel();
        let _ = self.task.await;
        self.index.idle().await;
    }
}

/// The whole router, for tests that drive it without a socket too.
pub fn router(config: Config, index: Index, stop: CancellationToken) -> Router {
    let http = http_client();
    let mcp_path = config.mcp_path();
    let server =
        ToolServer::new(crate::tools::all(), &config.nextcloud_url, http.clone(), index.clone());
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
        name: "Tamebi MCP Nextcloud".to_string(),
    };
    let mcp = mcp_auth::router(
        resource,
        CallerCheck::new(&config, http),
        Router::new().nest_service(&mcp_path, service),
    );
    let webhooks = match config.index.webhook_secret.clone() {
        Some(secret) => Router::new()
            .route(webhook::PATH, post(webhook::receive))
            .layer(DefaultBodyLimit::max(webhook::BODY_LENGTH_MAX))
            .with_state(WebhookState { index, secret: secret.as_str().into() }),
        None => Router::new(),
    };
    mcp.merge(webhooks)
}

fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(crate::nextcloud::REQUEST_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("HTTP client")
}
