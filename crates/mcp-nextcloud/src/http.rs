//! The HTTP face: `/mcp` (streamable HTTP, stateless) behind bearer
//! validation, RFC 9728 protected-resource metadata and a health probe
//! (wired by `mcp-kit` on `mcp-auth`), and — when a secret is configured —
//! the webhook endpoint that marks index rows dirty.
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
use mcp_kit::{CancellationToken, ListenError, Running};

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Listen(#[from] ListenError),
    #[error("cannot open the passage index: {0}")]
    Index(#[from] crate::index::store::StoreError),
}

/// A running server; [`McpNextcloud::shutdown`] stops it and waits.
pub struct McpNextcloud {
    running: Running,
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
        let listener = mcp_kit::http::bind(config.server.listen).await?;
        let converter = match &config.converter {
            Some(converter_config) => Some(
                Converter::start_serving(
                    converter_config.clone(),
                    mcp_kit::http::upstream_client(crate::nextcloud::REQUEST_TIMEOUT),
                    crate::convert::ConverterLimits::default(),
                    limits,
                )
                .await
                .map_err(|source| ListenError { address: converter_config.lend_listen, source })?,
            ),
            None => None,
        };
        let index = Index::open(&config.index, converter)?;
        let router_index = index.clone();
        let running = Running::serve("mcp-nextcloud", listener, limits, |stop| {
            router(config, router_index, stop)
        });
        Ok(McpNextcloud { running, index })
    }

    /// `http://host:port` of the listener.
    pub fn url(&self) -> &str {
        self.running.url()
    }

    /// The passage index (tests and operators look inside).
    pub fn index(&self) -> &Index {
        &self.index
    }

    pub async fn shutdown(self) {
        self.running.shutdown().await;
        self.index.idle().await;
    }
}

/// The whole router, for tests that drive it without a socket too.
pub fn router(config: Config, index: Index, stop: CancellationToken) -> Router {
    let http = mcp_kit::http::upstream_client(crate::nextcloud::REQUEST_TIMEOUT);
    let handler =
        ToolServer::new(&config.server.nextcloud_url, http.clone(), index.clone()).handler();
    let mcp = mcp_kit::http::router(
        &config.server.endpoint(crate::config::RESOURCE_NAME),
        handler,
        CallerCheck::new(&config, http),
        stop,
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
