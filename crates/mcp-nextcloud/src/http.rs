//! The HTTP face: `/mcp` (streamable HTTP, stateless) behind bearer
//! validation, RFC 9728 protected-resource metadata, a health probe, and
//! — when a secret is configured — the webhook endpoint that marks index
//! rows dirty.
//!
//! A request without a valid bearer gets 401 with
//! `WWW-Authenticate: Bearer resource_metadata="…"` and nothing else: the
//! reason goes to the log (never the token itself).

use crate::bearer::Authenticator;
use crate::config::Config;
use crate::convert::Converter;
use crate::index::Index;
use crate::index::webhook::{self, WebhookState};
use crate::server::ToolServer;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
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

struct AppState {
    authenticator: Authenticator,
    metadata_url: String,
    config: Config,
}

impl McpNextcloud {
    pub async fn start(config: Config) -> Result<McpNextcloud, StartError> {
        let listener = TcpListener::bind(config.listen)
            .await
            .map_err(|source| StartError::Listen { address: config.listen, source })?;
        let address = listener.local_addr().expect("bound address");
        let converter = match &config.converter {
            Some(converter_config) => {
                Some(Converter::start(converter_config.clone(), http_client()).await.map_err(
                    |source| StartError::Listen { address: converter_config.lend_listen, source },
                )?)
            }
            None => None,
        };
        let index = Index::open(&config.index, converter)?;
        let stop = CancellationToken::new();
        let router = router(config, index.clone(), stop.clone());
        let shutdown = stop.clone();
        let task = tokio::spawn(async move {
            let serving = axum::serve(listener, router)
                .with_graceful_shutdown(async move { shutdown.cancelled().await });
            if let Err(error) = serving.await {
                tracing::error!(%error, "mcp-nextcloud listener failed");
            }
        });
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
    let metadata_url = metadata_url(&config.canonical_url, &mcp_path);
    let server =
        ToolServer::new(crate::tools::all(), &config.nextcloud_url, http.clone(), index.clone());
    let mut hosts = config.allowed_hosts.clone();
    if let Ok(canonical) = url::Url::parse(&config.canonical_url)
        && let Some(host) = canonical.host_str()
    {
        hosts.push(host.to_string());
    }
    let mcp_config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_hosts(hosts)
        .with_cancellation_token(stop);
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        mcp_config,
    );
    let state = Arc::new(AppState {
        authenticator: Authenticator::new(config.clone(), http),
        metadata_url,
        config,
    });
    let mcp = Router::new()
        .nest_service(&mcp_path, service)
        .layer(axum::middleware::from_fn_with_state(state.clone(), require_bearer));
    let webhooks = match state.config.index.webhook_secret.clone() {
        Some(secret) => Router::new()
            .route(webhook::PATH, post(webhook::receive))
            .layer(DefaultBodyLimit::max(webhook::BODY_LENGTH_MAX))
            .with_state(WebhookState { index, secret: secret.as_str().into() }),
        None => Router::new(),
    };
    Router::new()
        .route("/.well-known/oauth-protected-resource", get(protected_resource_metadata))
        .route(
            "/.well-known/oauth-protected-resource/{*resource}",
            get(protected_resource_metadata),
        )
        .route("/health", get(|| async { "ok\n" }))
        .with_state(state)
        .merge(mcp)
        .merge(webhooks)
}

fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(crate::nextcloud::REQUEST_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("HTTP client")
}

/// RFC 9728 §3.1: the metadata URL inserts the well-known path before the
/// resource's path.
fn metadata_url(canonical_url: &str, mcp_path: &str) -> String {
    match url::Url::parse(canonical_url) {
        Ok(url) => format!(
            "{}/.well-known/oauth-protected-resource{}",
            url.origin().ascii_serialization(),
            mcp_path
        ),
        Err(_) => format!("/.well-known/oauth-protected-resource{mcp_path}"),
    }
}

async fn protected_resource_metadata(State(state): State<Arc<AppState>>) -> Response {
    axum::Json(serde_json::json!({
        "resource": state.config.canonical_url,
        "authorization_servers": [state.config.issuer],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["openid", "profile"],
        "resource_name": "Tamebi MCP Nextcloud",
    }))
    .into_response()
}

async fn require_bearer(
    State(state): State<Arc<AppState>>,
    mut request: Request,
    next: Next,
) -> Response {
    match state.authenticator.authenticate(request.headers()).await {
        Ok(caller) => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        Err(reason) => {
            tracing::info!(%reason, "request refused");
            (
                http::StatusCode::UNAUTHORIZED,
                [(
                    http::header::WWW_AUTHENTICATE,
                    format!("Bearer resource_metadata=\"{}\"", state.metadata_url),
                )],
            )
                .into_response()
        }
    }
}
