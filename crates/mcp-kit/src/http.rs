//! The HTTP face of an MCP server: `/mcp` (streamable HTTP, stateless, JSON
//! answers, the `Host` header checked against the allowed hosts) behind the
//! server's caller check, with RFC 9728 protected-resource metadata and a
//! health probe, all from `mcp-auth`; and the listener it is served on.
//!
//! A request without valid credentials gets 401 with
//! `WWW-Authenticate: Bearer resource_metadata="…"` and nothing else: the
//! reason goes to the log (never a token).

use crate::server::{McpHandler, Service};
use axum::Router;
use mcp_auth::{Admission, AuthConfig, ProtectedResource};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Who a server is toward its callers, taken from its configuration.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The canonical URL (`.../mcp`): the audience its tokens carry, and
    /// where the endpoint is served (its path).
    pub canonical_url: String,
    /// The OIDC issuer, compared to `iss` exactly.
    pub issuer: String,
    /// Where the issuer's keys are fetched.
    pub jwks_url: String,
    /// Host names (or host:port) accepted in the `Host` header.
    pub allowed_hosts: Vec<String>,
    /// What token expiry is checked against.
    pub clock: mcp_auth::Clock,
    /// `resource_name` in the metadata, e.g. "Tamebi MCP Mail".
    pub resource_name: &'static str,
}

impl Endpoint {
    /// What `mcp-auth` checks tokens with.
    pub fn auth_config(&self) -> AuthConfig {
        AuthConfig {
            canonical_url: self.canonical_url.clone(),
            issuer: self.issuer.clone(),
            jwks_url: self.jwks_url.clone(),
            clock: self.clock.clone(),
        }
    }
}

/// Where Nextcloud's oidc app serves the issuer's keys, the default JWKS
/// URL of a server whose tokens Nextcloud mints.
pub fn oidc_jwks_url(nextcloud_url: &str) -> String {
    format!("{}/index.php/apps/oidc/jwks", nextcloud_url.trim_end_matches('/'))
}

/// The MCP endpoint for `handler` behind `admission`, with the metadata
/// and `/health` routes; `stop` ends the streams in flight.
pub fn router<S, A>(
    endpoint: &Endpoint,
    handler: McpHandler<S>,
    admission: A,
    stop: CancellationToken,
) -> Router
where
    S: Service,
    A: Admission<Caller = S::Caller>,
{
    let mcp_config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_hosts(mcp_auth::allowed_hosts(
            &endpoint.allowed_hosts,
            &endpoint.canonical_url,
        ))
        .with_cancellation_token(stop);
    let mcp = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(NeverSessionManager::default()),
        mcp_config,
    );
    let resource = ProtectedResource {
        canonical_url: endpoint.canonical_url.clone(),
        issuer: endpoint.issuer.clone(),
        name: endpoint.resource_name.to_string(),
    };
    mcp_auth::router(
        resource,
        admission,
        Router::new().nest_service(&mcp_auth::mcp_path(&endpoint.canonical_url), mcp),
    )
}

#[derive(Debug, thiserror::Error)]
#[error("cannot listen on {address}: {source}")]
pub struct ListenError {
    pub address: SocketAddr,
    pub source: std::io::Error,
}

/// The client a server's tools call upstream with (Nextcloud, the app):
/// every request bounded by `timeout`, and no redirect followed, so the
/// user's credential goes to the configured host and nowhere else.
pub fn upstream_client(timeout: std::time::Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("HTTP client")
}

/// Binds `address`, saying which one failed.
pub async fn bind(address: SocketAddr) -> Result<TcpListener, ListenError> {
    TcpListener::bind(address).await.map_err(|source| ListenError { address, source })
}

/// A server being served; [`Running::shutdown`] stops it and waits.
pub struct Running {
    url: String,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Running {
    /// Serves the router `build` makes (given the token that stops it) on
    /// `listener`, under `limits`; `name` is the service in the logs.
    pub fn serve(
        name: &'static str,
        listener: TcpListener,
        limits: http_serve::Limits,
        build: impl FnOnce(CancellationToken) -> Router,
    ) -> Running {
        let address = listener.local_addr().expect("bound address");
        let stop = CancellationToken::new();
        let router = build(stop.clone());
        let shutdown = stop.clone();
        let task = tokio::spawn(http_serve::serve(name, listener, router, limits, async move {
            shutdown.cancelled().await
        }));
        Running { url: format!("http://{address}"), stop, task }
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
