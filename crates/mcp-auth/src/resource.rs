//! The HTTP face of a protected MCP resource: the endpoint behind the
//! caller check, RFC 9728 protected-resource metadata, and a health probe.
//!
//! A request the check refuses gets 401 with
//! `WWW-Authenticate: Bearer resource_metadata="…"` and nothing else: the
//! reason goes to the log (never the token itself).

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::HeaderMap;
use std::future::Future;
use std::sync::Arc;

/// Decides who is calling, from the request's headers. Each server
/// implements it with what it spends upstream; the caller it returns is put
/// in the request's extensions for the MCP handler to read.
pub trait Admission: Send + Sync + 'static {
    type Caller: Clone + Send + Sync + 'static;
    /// Why a request was refused; logged, never sent.
    type Refusal: std::fmt::Display + Send;

    fn admit(
        &self,
        headers: &HeaderMap,
    ) -> impl Future<Output = Result<Self::Caller, Self::Refusal>> + Send;
}

/// What RFC 9728 metadata says about this server.
#[derive(Debug, Clone)]
pub struct ProtectedResource {
    /// The canonical URL: the `resource`, and the `aud` its tokens carry.
    pub canonical_url: String,
    /// The one authorization server.
    pub issuer: String,
    /// `resource_name`, for people reading the metadata.
    pub name: String,
}

impl ProtectedResource {
    /// RFC 9728 §3.1: the metadata URL inserts the well-known path before
    /// the resource's path.
    pub fn metadata_url(&self) -> String {
        let path = mcp_path(&self.canonical_url);
        match url::Url::parse(&self.canonical_url) {
            Ok(url) => format!(
                "{}/.well-known/oauth-protected-resource{path}",
                url.origin().ascii_serialization()
            ),
            Err(_) => format!("/.well-known/oauth-protected-resource{path}"),
        }
    }
}

/// The path the MCP endpoint is served at, taken from the canonical URL
/// (`/mcp` when it has none).
pub fn mcp_path(canonical_url: &str) -> String {
    url::Url::parse(canonical_url)
        .map(|url| url.path().to_string())
        .ok()
        .filter(|path| path != "/")
        .unwrap_or_else(|| "/mcp".to_string())
}

/// The `Host` values accepted (DNS-rebinding protection): the configured
/// ones plus the canonical URL's host.
pub fn allowed_hosts(configured: &[String], canonical_url: &str) -> Vec<String> {
    let mut hosts = configured.to_vec();
    if let Ok(canonical) = url::Url::parse(canonical_url)
        && let Some(host) = canonical.host_str()
    {
        hosts.push(host.to_string());
    }
    hosts
}

struct Gate<A> {
    admission: A,
    metadata_url: String,
}

/// `mcp` (the MCP service, nested at [`mcp_path`]) behind `admission`,
/// with the metadata routes (plain and path-inserted) and `/health`.
pub fn router<A: Admission>(resource: ProtectedResource, admission: A, mcp: Router) -> Router {
    let gate = Arc::new(Gate { admission, metadata_url: resource.metadata_url() });
    let metadata = Arc::new(serde_json::json!({
        "resource": resource.canonical_url,
        "authorization_servers": [resource.issuer],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["openid", "profile"],
        "resource_name": resource.name,
    }));
    let serve_metadata = move || {
        let metadata = metadata.clone();
        async move { axum::Json(metadata.as_ref().clone()) }
    };
    Router::new()
        .route("/.well-known/oauth-protected-resource", get(serve_metadata.clone()))
        .route("/.well-known/oauth-protected-resource/{*resource}", get(serve_metadata))
        .route("/health", get(|| async { "ok\n" }))
        .merge(mcp.layer(axum::middleware::from_fn_with_state(gate, require_caller::<A>)))
}

async fn require_caller<A: Admission>(
    State(gate): State<Arc<Gate<A>>>,
    mut request: Request,
    next: Next,
) -> Response {
    match gate.admission.admit(request.headers()).await {
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
                    format!("Bearer resource_metadata=\"{}\"", gate.metadata_url),
                )],
            )
                .into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_url_inserts_the_well_known_path_before_the_resource_path() {
        let check = |canonical_url: &str, expected: &str| {
            let resource = ProtectedResource {
                canonical_url: canonical_url.into(),
                issuer: "http://nc.test".into(),
                name: "Test".into(),
            };
            assert_eq!(resource.metadata_url(), expected, "{canonical_url}");
        };
        check(
            "http://127.0.0.1:9102/mcp",
            "http://127.0.0.1:9102/.well-known/oauth-protected-resource/mcp",
        );
        check(
            "https://mail.example.org/tamebi/mcp",
            "https://mail.example.org/.well-known/oauth-protected-resource/tamebi/mcp",
        );
        check("http://mcp.test", "http://mcp.test/.well-known/oauth-protected-resource/mcp");
    }

    #[test]
    fn the_canonical_host_is_always_allowed() {
        assert_eq!(
            allowed_hosts(&["localhost".into()], "http://mcp-mail:9102/mcp"),
            ["localhost", "mcp-mail"]
        );
        assert_eq!(allowed_hosts(&[], "not a url"), Vec::<String>::new());
    }

    struct Everyone;

    impl Admission for Everyone {
        type Caller = String;
        type Refusal = &'static str;

        async fn admit(&self, headers: &HeaderMap) -> Result<String, &'static str> {
            headers
                .get("x-user")
                .and_then(|value| value.to_str().ok())
                .map(str::to_string)
                .ok_or("no x-user")
        }
    }

    #[tokio::test]
    async fn a_refusal_is_a_bare_401_and_an_admitted_caller_reaches_the_endpoint() {
        let resource = ProtectedResource {
            canonical_url: "http://127.0.0.1:9102/mcp".into(),
            issuer: "http://nc.test".into(),
            name: "Test".into(),
        };
        let mcp = Router::new().route(
            "/mcp",
            axum::routing::post(|request: Request| async move {
                request.extensions().get::<String>().cloned().unwrap_or_default()
            }),
        );
        let app = router(resource, Everyone, mcp);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await
                .unwrap()
        });
        let http = reqwest::Client::new();

        let refused = http.post(format!("{base}/mcp")).send().await.unwrap();
        assert_eq!(refused.status(), 401);
        assert_eq!(
            refused.headers()["www-authenticate"],
            "Bearer resource_metadata=\"http://127.0.0.1:9102/.well-known/oauth-protected-resource/mcp\""
        );
        assert_eq!(refused.text().await.unwrap(), "");

        let admitted =
            http.post(format!("{base}/mcp")).header("x-user", "alice").send().await.unwrap();
        assert_eq!(admitted.status(), 200);
        assert_eq!(admitted.text().await.unwrap(), "alice", "the caller reached the handler");

        for path in
            ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]
        {
            let metadata: serde_json::Value =
                http.get(format!("{base}{path}")).send().await.unwrap().json().await.unwrap();
            assert_eq!(metadata["resource"], "http://127.0.0.1:9102/mcp", "{path}");
            assert_eq!(metadata["authorization_servers"], serde_json::json!(["http://nc.test"]));
            assert_eq!(metadata["resource_name"], "Test");
        }
        let health = http.get(format!("{base}/health")).send().await.unwrap();
        assert_eq!(health.text().await.unwrap(), "ok\n");
        stop.send(()).unwrap();
        server.await.unwrap();
    }
}
