//! A simulated Nextcloud that real clients accept.
//!
//! It speaks the real protocols on real sockets — OIDC (like the `oidc` app),
//! bearer validation (like `user_oidc`), WebDAV files and SEARCH, CalDAV,
//! CardDAV, OCS, Deck, webhook delivery, the Tamebi app's endpoints
//! (`docs/app-contract.md`) and an OnlyOffice-style converter —
//! with all state in memory, seeded from a [`fixture::Fixture`]. Faults are
//! switchable per fixture and at run time (`/__fake/*`, used only by tests and
//! only with the admin token: [`Admin`]).
//!
//! The key design choice: one in-memory [`world::World`] behind one mutex,
//! and one function ([`storage::Storage::resolve`]) deciding what a path means
//! to a user, so every protocol agrees about who sees what. We rejected
//! mocking per test (wiremock-style canned answers): canned answers cannot
//! tell a client that forgot a permission check from one that did not, and
//! scenarios need a server whose state changes as the agent acts.

pub mod admin;
pub mod app;
pub mod auth;
pub mod caldav;
pub mod carddav;
pub mod clock;
pub mod converter;
pub mod dav;
pub mod deck;
pub mod faults;
pub mod files;
pub mod fixture;
pub mod mail;
pub mod ocs;
pub mod oidc;
pub mod search;
pub mod security_headers;
pub mod share_accept;
pub mod storage;
pub mod webhooks;
pub mod world;
pub mod xml;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub use app::AppConfig;
pub use fixture::Fixture;

/// The largest request body accepted (PUT of a file included).
pub const REQUEST_BODY_LENGTH_MAX: usize = 64 * 1024 * 1024;

/// Everything the handlers share.
pub struct Shared {
    world: Mutex<World>,
    pub clock: clock::Clock,
    /// The OIDC provider's signing key.
    pub signer: access_token::Signer,
    /// `http://127.0.0.1:PORT` of the main listener.
    pub base_url: String,
    /// `http://127.0.0.1:PORT` of the converter listener.
    pub converter_url: String,
    /// Client for outgoing calls (webhook delivery, converter downloads, the
    /// Tamebi app's loopback token renewal); follows no redirect.
    pub http: reqwest::Client,
    /// Client for the chat proxy: no overall timeout, since an answer streams
    /// for as long as the agent works.
    pub orchestrator_http: reqwest::Client,
    /// Wakes the webhook delivery task.
    pub webhook_wakeup: tokio::sync::Notify,
    /// Bearer tokens whose signature and claims were verified, by token,
    /// issuer and audience: a token is RSA-checked once, not on every
    /// request (`auth::bearer`).
    pub verified_bearers: Mutex<std::collections::HashMap<String, access_token::Claims>>,
    /// The token `/__fake/` requires ([`admin::TOKEN_HEADER`]); `None`:
    /// the admin routes are off.
    pub admin_token: Option<String>,
}

pub use world::World;

pub type AppState = Arc<Shared>;

impl Shared {
    /// Locks the world. Never hold the guard across an `.await`.
    pub fn world(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn now(&self) -> i64 {
        self.clock.now()
    }

    /// An RFC 9068 access token for `uid` addressed to `audience`, signed
    /// with the provider's key and valid for 15 minutes from the fake's
    /// clock: what the token endpoint would issue after a login, without
    /// the login (tests, benchmarks).
    pub fn mint_access_token(&self, uid: &str, audience: &str) -> String {
        let now = self.now();
        self.signer.sign_access_token(&access_token::Claims {
            iss: self.base_url.clone(),
            sub: uid.to_string(),
            aud: access_token::Audience::One(audience.to_string()),
            exp: now + 900,
            iat: now,
            nbf: None,
            jti: format!("jti-{uid}-{audience}"),
            client_id: "tamebi-mcp-nextcloud".to_string(),
            azp: None,
            preferred_username: Some(uid.to_string()),
            scope: Some("openid profile".to_string()),
        })
    }
}

/// Where to listen. The Tamebi app's settings are an [`AppConfig`] given to
/// [`FakeNextcloud::start_with_app`] (or set at run time with `POST
/// /__fake/app`), so that code building a `Config` by its fields keeps
/// compiling.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    pub converter_listen: SocketAddr,
    pub admin: Admin,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            converter_listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            admin: Admin::default(),
        }
    }
}

/// Who may steer the fake through `/__fake/`. Those routes change who the
/// chat proxy talks to and what every user is served, so they are never
/// open: any local process could otherwise redirect a user's chat, with
/// their tokens, to a listener of its own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Admin {
    /// A fresh random token each start, known to whoever started the fake
    /// ([`FakeNextcloud::admin_token`]; the CLI writes it to a 0600 file).
    #[default]
    RandomToken,
    /// No admin routes: `/__fake/` is 404.
    Off,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot listen on {address}: {source}")]
    Listen { address: SocketAddr, source: std::io::Error },
    #[error("the fixture is inconsistent:\n  {}", .0.join("\n  "))]
    Fixture(Vec<String>),
    #[error("the Tamebi app's configuration is not usable:\n  {}", .0.join("\n  "))]
    App(Vec<String>),
}

/// A running fake Nextcloud. Dropping it does not stop it; call [`shutdown`].
///
/// [`shutdown`]: FakeNextcloud::shutdown
pub struct FakeNextcloud {
    pub shared: AppState,
    stop: tokio::sync::watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl FakeNextcloud {
    /// Binds both listeners, builds the world and starts serving, with the
    /// Tamebi app's default settings (no orchestrator until one is set).
    pub async fn start(fixture: &Fixture, config: Config) -> Result<FakeNextcloud, StartError> {
        FakeNextcloud::start_with_app(fixture, config, AppConfig::default()).await
    }

    /// [`FakeNextcloud::start`] with the Tamebi app configured.
    pub async fn start_with_app(
        fixture: &Fixture,
        config: Config,
        app: AppConfig,
    ) -> Result<FakeNextcloud, StartError> {
        let problems = app.problems();
        if !problems.is_empty() {
            return Err(StartError::App(problems));
        }
        let listener = TcpListener::bind(config.listen)
            .await
            .map_err(|source| StartError::Listen { address: config.listen, source })?;
        let converter_listener = TcpListener::bind(config.converter_listen)
            .await
            .map_err(|source| StartError::Listen { address: config.converter_listen, source })?;
        let address = listener.local_addr().expect("bound address");
        let converter_address = converter_listener.local_addr().expect("bound address");
        let base_url = format!("http://{address}");

        let clock = clock::Clock::default();
        let mut world = World::from_fixture(fixture, clock.now()).map_err(StartError::Fixture)?;
        if world.server.overwritehost.as_deref() == Some("self") {
            world.server.overwritehost = Some(address.to_string());
        }
        world.app.settings = app;
        let shared = Arc::new(Shared {
            world: Mutex::new(world),
            clock,
            signer: access_token::Signer::generate("fake-nextcloud-1"),
            base_url,
            converter_url: format!("http://{converter_address}"),
            http: reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(30))
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("HTTP client"),
            orchestrator_http: reqwest::Client::builder()
                .connect_timeout(std::time::Duration::from_secs(10))
                .tcp_nodelay(true)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("HTTP client"),
            webhook_wakeup: tokio::sync::Notify::new(),
            verified_bearers: Mutex::new(std::collections::HashMap::new()),
            admin_token: match config.admin {
                Admin::RandomToken => Some(admin::random_token()),
                Admin::Off => None,
            },
        });

        let (stop, stopped) = tokio::sync::watch::channel(false);
        let tasks = vec![
            serve(listener, router(shared.clone()), stopped.clone()),
            serve(converter_listener, converter::router(shared.clone()), stopped.clone()),
            tokio::spawn(webhooks::deliver_forever(shared.clone(), stopped)),
        ];
        tracing::info!(url = %shared.base_url, converter = %shared.converter_url, "fake Nextcloud listening");
        Ok(FakeNextcloud { shared, stop, tasks })
    }

    pub fn base_url(&self) -> &str {
        &self.shared.base_url
    }

    pub fn converter_url(&self) -> &str {
        &self.shared.converter_url
    }

    /// The value of [`admin::TOKEN_HEADER`] that `/__fake/` requires;
    /// `None` when the admin routes are off.
    pub fn admin_token(&self) -> Option<&str> {
        self.shared.admin_token.as_deref()
    }

    /// Stops the listeners and the delivery task and waits for them.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

fn serve(
    listener: TcpListener,
    router: Router,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) -> JoinHandle<()> {
    let shutdown = async move {
        let _ = stopped.wait_for(|stop| *stop).await;
    };
    // Bounded like every listener (crates/http-serve); the streaming chat
    // proxy is a response, which nothing times out.
    tokio::spawn(http_serve::serve(
        "fake Nextcloud",
        listener,
        router,
        http_serve::Limits::default(),
        shutdown,
    ))
}

/// The main listener's routes.
pub fn router(shared: AppState) -> Router {
    Router::new()
        .merge(oidc::routes())
        .merge(dav::routes())
        .merge(ocs::routes())
        .merge(deck::routes())
        .merge(share_accept::routes())
        .merge(files::public::routes())
        .merge(admin::routes().route_layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            admin::require_token,
        )))
        .merge(app::routes())
        .layer(axum::middleware::from_fn_with_state(shared.clone(), apply_route_faults))
        .layer(axum::middleware::from_fn(security_headers::add))
        .layer(axum::middleware::from_fn(request_id))
        .layer(axum::extract::DefaultBodyLimit::max(REQUEST_BODY_LENGTH_MAX))
        .with_state(shared)
}

/// Latency and injected statuses from [`faults::Faults::routes`].
async fn apply_route_faults(
    State(shared): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path().to_string();
    if path.starts_with(admin::PREFIX) {
        return next.run(request).await;
    }
    let verdict = shared.world().faults.route_verdict(request.method().as_str(), &path);
    if verdict.latency_ms > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(verdict.latency_ms)).await;
    }
    if let Some(status) = verdict.status {
        let status =
            http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
        return (status, "Injected fault\n").into_response();
    }
    next.run(request).await
}

/// Nextcloud's id for one request; handlers read it from the extensions.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// Every response carries a request id, as Nextcloud's does.
async fn request_id(mut request: Request, next: Next) -> Response {
    let id: String = {
        use rand::Rng as _;
        let mut rng = rand::thread_rng();
        (0..20).map(|_| rng.sample(rand::distributions::Alphanumeric) as char).collect()
    };
    request.extensions_mut().insert(RequestId(id.clone()));
    let mut response = next.run(request).await;
    if let Ok(value) = http::HeaderValue::from_str(&id) {
        response.headers_mut().insert("x-request-id", value);
    }
    response
}
