//! The one way to stand the system up in this process: the fake Nextcloud
//! with its Tamebi app, mcp-nextcloud, mcp-mail, the scripted fake model
//! and the orchestrator, each on an ephemeral loopback port, wired to each
//! other as a deployment wires them. The scenario runner, the end-to-end
//! tests in `crates/system/tests` and the MCP servers' tests all start
//! their services here, so a new configuration field is written in one
//! place ([`Stack::mcp_nextcloud_config`] and its siblings below).
//!
//! [`Stack::builder`] starts from the whole system on the demo fixture;
//! each override says what a test needs different (another fixture, a
//! model script, the upstream sign-in, the converter, index limits,
//! webhooks, embeddings through the fake model, which servers the
//! orchestrator is given, only some services).
//! The stack then offers what a test drives it with: browser sessions
//! ([`crate::browser`]), an MCP client ([`Stack::call_tool`]), the fakes'
//! admin routes (faults, clock, sessions, state) and restarts. An MCP
//! server's own tests start it alone with [`Builder::start_server`], which
//! adds a raw client of its `/mcp` ([`OneServer`]).
//!
//! Errors are strings: a scenario shows them as a failure of its step, a
//! Rust test unwraps them.

mod one_server;

pub use one_server::OneServer;

use crate::browser::Browser;
use crate::format::{ConverterSetting, Corpus, IndexLimits, UpstreamSetting};
use fake_model::{FakeModel, Script};
use fake_nextcloud::{AppConfig, FakeNextcloud, Fixture};
use mcp_nextcloud::index::search::Fusion;
use orchestrator::mcp::ServerConfig;
use orchestrator::service::{self, Orchestrator};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The secret the app and the orchestrator share.
pub const SECRET: &str = "scenario-runner-shared-secret-0123456789";
/// The secret mcp-nextcloud's webhook endpoint checks.
pub const WEBHOOK_SECRET: &str = "scenario-runner-webhook-secret";
/// mcp-nextcloud's canonical URL: the audience of its tokens (the demo
/// fixture's client).
pub const MCP_NEXTCLOUD_AUDIENCE: &str = "http://127.0.0.1:9101/mcp";
/// mcp-mail's canonical URL: the audience of its tokens.
pub const MCP_MAIL_AUDIENCE: &str = "http://127.0.0.1:9102/mcp";
/// Where mcp-nextcloud's refusals point a client: the protected resource
/// metadata (RFC 9728) of [`MCP_NEXTCLOUD_AUDIENCE`].
pub const MCP_NEXTCLOUD_METADATA: &str =
    "http://127.0.0.1:9101/.well-known/oauth-protected-resource/mcp";
/// Where mcp-mail's refusals point: the metadata of [`MCP_MAIL_AUDIENCE`].
pub const MCP_MAIL_METADATA: &str =
    "http://127.0.0.1:9102/.well-known/oauth-protected-resource/mcp";
/// The audience of the users' second token, for Nextcloud itself.
pub const NEXTCLOUD_AUDIENCE: &str = "nextcloud";
/// The embeddings model mcp-nextcloud names to the fake model (which
/// answers any name alike) and stores with every vector.
pub const EMBEDDINGS_MODEL: &str = "fake-embeddings";
/// Where nothing listens (port 9, discard, on loopback): a service that is down.
pub const CLOSED_URL: &str = "http://127.0.0.1:9";
/// No single HTTP request of the stack's client may take longer.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// A service beside the fake Nextcloud, which always runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    McpNextcloud,
    McpMail,
    Model,
    Orchestrator,
}

/// The demo fixture (`scenarios/fixtures/demo.toml`).
pub fn demo_fixture() -> Fixture {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/fixtures/demo.toml");
    Fixture::load(&path).unwrap_or_else(|error| panic!("the demo fixture: {error}"))
}

type Edit<C> = Box<dyn FnOnce(&mut C) + Send>;

/// What to start, and how; [`Stack::builder`].
pub struct Builder {
    fixture: Fixture,
    corpus: Vec<Corpus>,
    fake: fake_nextcloud::Config,
    app: AppConfig,
    services: Vec<Service>,
    script: String,
    upstream: UpstreamSetting,
    converter: ConverterSetting,
    index_limits: IndexLimits,
    index_db: Option<PathBuf>,
    webhooks: bool,
    embeddings: Option<Fusion>,
    servers: Option<Vec<String>>,
    unreachable: Vec<String>,
    window_tokens: usize,
    orchestrator_data_dir: Option<PathBuf>,
    temp_dir: Option<String>,
    edit_mcp_nextcloud: Option<Edit<mcp_nextcloud::Config>>,
    edit_mail: Option<Edit<mcp_mail::Config>>,
    model_endpoint: Option<orchestrator::model::ModelConfig>,
}

impl Builder {
    /// The users, files, calendars and mail the fake Nextcloud starts with.
    pub fn fixture(mut self, fixture: Fixture) -> Self {
        self.fixture = fixture;
        self
    }

    /// Generated files seeded into the fake after it started.
    pub fn corpus(mut self, corpus: Vec<Corpus>) -> Self {
        self.corpus = corpus;
        self
    }

    /// The fake Nextcloud's own configuration.
    pub fn fake_config(mut self, config: fake_nextcloud::Config) -> Self {
        self.fake = config;
        self
    }

    /// The Tamebi app's configuration; its shared secret is the stack's
    /// unless this one sets another, and its orchestrator URL is set once
    /// the orchestrator runs.
    pub fn app(mut self, app: AppConfig) -> Self {
        self.app = app;
        self
    }

    /// Only these services beside the fake (all four by default).
    pub fn only(mut self, services: &[Service]) -> Self {
        self.services = services.to_vec();
        self
    }

    /// The fake model's script (TOML, fake-model's format).
    pub fn model_script(mut self, toml: &str) -> Self {
        self.script = toml.to_string();
        self
    }

    /// How mcp-nextcloud signs in to Nextcloud.
    pub fn upstream(mut self, upstream: UpstreamSetting) -> Self {
        self.upstream = upstream;
        self
    }

    /// The document converter mcp-nextcloud is given.
    pub fn converter(mut self, converter: ConverterSetting) -> Self {
        self.converter = converter;
        self
    }

    /// mcp-nextcloud's index bounds (its defaults for those unset).
    pub fn index_limits(mut self, limits: IndexLimits) -> Self {
        self.index_limits = limits;
        self
    }

    /// Registers mcp-nextcloud's webhook endpoint as `tamebi webhooks
    /// register` does (the fixture's first administrator), with the
    /// endpoint's secret configured.
    pub fn webhooks(mut self) -> Self {
        self.webhooks = true;
        self
    }

    /// mcp-nextcloud embeds passages through the stack's fake model
    /// ([`EMBEDDINGS_MODEL`] at its `/v1`) and files_grep combines words and
    /// meaning by `fusion`; off by default.
    pub fn embeddings(mut self, fusion: Fusion) -> Self {
        self.embeddings = Some(fusion);
        self
    }

    /// The MCP servers the orchestrator is configured with, by name
    /// (`nextcloud`, `mail`); by default every one that runs.
    pub fn orchestrator_servers(mut self, names: &[&str]) -> Self {
        self.servers = Some(names.iter().map(|name| name.to_string()).collect());
        self
    }

    /// The orchestrator is given this server at an address where nothing
    /// listens (the server itself still runs).
    pub fn unreachable(mut self, name: &str) -> Self {
        self.unreachable.push(name.to_string());
        self
    }

    /// The model's context window the orchestrator plans with.
    pub fn window_tokens(mut self, tokens: usize) -> Self {
        self.window_tokens = tokens;
        self
    }

    /// mcp-nextcloud keeps its index in this file (in memory by default).
    pub fn index_db(mut self, path: PathBuf) -> Self {
        self.index_db = Some(path);
        self
    }

    /// The orchestrator keeps its stores here (in memory by default).
    pub fn orchestrator_data_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.orchestrator_data_dir = dir;
        self
    }

    /// A fresh directory for this stack, named after `name`, removed at
    /// [`Stack::shutdown`]: the orchestrator's stores and index.db live in it.
    pub fn temp_data_dir(mut self, name: &str) -> Self {
        self.temp_dir = Some(name.to_string());
        self
    }

    /// Changes mcp-nextcloud's configuration before it starts (allowed
    /// hosts, a recorder in front of Nextcloud, …).
    pub fn edit_mcp_nextcloud(
        mut self,
        edit: impl FnOnce(&mut mcp_nextcloud::Config) + Send + 'static,
    ) -> Self {
        self.edit_mcp_nextcloud = Some(Box::new(edit));
        self
    }

    /// Changes mcp-mail's configuration before it starts (a stand-in app, …).
    pub fn edit_mail(mut self, edit: impl FnOnce(&mut mcp_mail::Config) + Send + 'static) -> Self {
        self.edit_mail = Some(Box::new(edit));
        self
    }

    /// Starts the services, in the order they depend on each other.
    /// The orchestrator talks to this model (a real one, or a fake behind
    /// a proxy) instead of the stack's own fake model, which does not run.
    pub fn model_endpoint(mut self, model: orchestrator::model::ModelConfig) -> Self {
        self.services.retain(|service| *service != Service::Model);
        self.model_endpoint = Some(model);
        self
    }

    pub async fn start(self) -> Result<Stack, String> {
        let wants = |service| self.services.contains(&service);
        if wants(Service::Orchestrator) && !wants(Service::Model) && self.model_endpoint.is_none() {
            return Err("the orchestrator needs the fake model or a model endpoint".into());
        }
        let mut app = self.app.clone();
        if app.shared_secret.is_none() {
            app.shared_secret = Some(SECRET.as_bytes().to_vec());
        }
        let secret = app.shared_secret.clone().unwrap_or_default();
        let fake = FakeNextcloud::start_with_app(&self.fixture, self.fake.clone(), app)
            .await
            .map_err(|error| format!("fake Nextcloud: {error}"))?;
        seed_corpus(&fake, &self.corpus);
        let temp_dir = match &self.temp_dir {
            Some(name) => {
                let dir = std::env::temp_dir().join(format!(
                    "tamebi-scenario-{name}-{}-{}",
                    std::process::id(),
                    unique()
                ));
                std::fs::create_dir_all(&dir)
                    .map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
                Some(dir)
            }
            None => None,
        };
        let index_db = self.index_db.clone().or(temp_dir.as_ref().map(|dir| dir.join("index.db")));
        // Before mcp-nextcloud, which may embed through it.
        let model = match wants(Service::Model) {
            false => None,
            true => {
                let script = Script::from_toml(&self.script)
                    .map_err(|error| format!("the model script: {error}"))?;
                Some(start_fake_model(script).await?)
            }
        };
        let embeddings = match (self.embeddings, &model) {
            (None, _) => None,
            (Some(fusion), Some(model)) => Some((model, fusion)),
            (Some(_), None) => {
                return Err(
                    "embeddings go through the stack's fake model, which does not run".into()
                );
            }
        };
        let mut mcp_config = None;
        let mut mcp = None;
        if wants(Service::McpNextcloud) {
            let mut config = Stack::mcp_nextcloud_config(
                &fake,
                self.upstream,
                self.converter,
                index_db,
                self.index_limits,
                self.webhooks,
                embeddings,
            );
            if let Some(edit) = self.edit_mcp_nextcloud {
                edit(&mut config);
            }
            let started = mcp_nextcloud::McpNextcloud::start(config.clone())
                .await
                .map_err(|error| format!("mcp-nextcloud: {error}"))?;
            // Restarts listen on the same port: the orchestrator and the
            // registered webhooks keep their URLs.
            config.server.listen = listening_at(&started);
            if self.webhooks {
                register_webhooks(
                    &fake,
                    &self.fixture,
                    &format!("{}/webhooks/nextcloud", started.url()),
                )
                .await?;
            }
            mcp_config = Some(config);
            mcp = Some(started);
        }
        let mail = match wants(Service::McpMail) {
            false => None,
            true => {
                let mut config = Stack::mail_config(&fake);
                if let Some(edit) = self.edit_mail {
                    edit(&mut config);
                }
                let mail = mcp_mail::McpMail::start(config)
                    .await
                    .map_err(|error| format!("mcp-mail: {error}"))?;
                Some(mail)
            }
        };
        let servers = [
            mcp.as_ref().map(|mcp| ("nextcloud", mcp.url().to_string())),
            mail.as_ref().map(|mail| ("mail", mail.url().to_string())),
        ]
        .into_iter()
        .flatten()
        .filter(|(name, _)| {
            self.servers.as_ref().is_none_or(|names| names.iter().any(|n| n == name))
        })
        .map(|(name, url)| {
            let url = match self.unreachable.iter().any(|n| n == name) {
                true => CLOSED_URL.to_string(),
                false => url,
            };
            ServerConfig { name: name.into(), url: format!("{url}/mcp") }
        })
        .collect();
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(REQUEST_TIMEOUT)
            .build()
            .expect("HTTP client");
        let passwords = self
            .fixture
            .users
            .iter()
            .map(|user| (user.uid.clone(), user.password.clone()))
            .collect();
        let model_config =
            self.model_endpoint.clone().or_else(|| model.as_ref().map(fake_model_config));
        let orchestrator_config =
            model_config.filter(|_| wants(Service::Orchestrator)).map(|model| {
                Stack::orchestrator_config(
                    model,
                    secret,
                    self.window_tokens,
                    servers,
                    self.orchestrator_data_dir.clone().or(temp_dir.clone()),
                )
            });
        let mut stack = Stack {
            fake,
            mcp,
            mcp_config,
            mail,
            model,
            orchestrator: None,
            orchestrator_config,
            http,
            browsers: HashMap::new(),
            passwords,
            temp_dir,
        };
        if stack.orchestrator_config.is_some() {
            stack.start_orchestrator().await?;
        }
        Ok(stack)
    }
}

/// The services that run, and what drives them.
pub struct Stack {
    pub fake: FakeNextcloud,
    mcp: Option<mcp_nextcloud::McpNextcloud>,
    /// mcp-nextcloud's configuration, for restarts (same port, same index).
    mcp_config: Option<mcp_nextcloud::Config>,
    mail: Option<mcp_mail::McpMail>,
    model: Option<FakeModel>,
    orchestrator: Option<Orchestrator>,
    orchestrator_config: Option<service::Config>,
    /// Does not follow redirects: a browser sees the login's 303.
    pub http: reqwest::Client,
    browsers: HashMap<String, Browser>,
    passwords: HashMap<String, String>,
    temp_dir: Option<PathBuf>,
}

impl Stack {
    /// The whole system on the demo fixture, to be adjusted.
    pub fn builder() -> Builder {
        Builder {
            fixture: demo_fixture(),
            corpus: Vec::new(),
            fake: fake_nextcloud::Config::default(),
            app: AppConfig::default(),
            services: vec![
                Service::McpNextcloud,
                Service::McpMail,
                Service::Model,
                Service::Orchestrator,
            ],
            script: String::new(),
            upstream: UpstreamSetting::default(),
            converter: ConverterSetting::default(),
            index_limits: IndexLimits::default(),
            index_db: None,
            webhooks: false,
            embeddings: None,
            servers: None,
            unreachable: Vec::new(),
            window_tokens: 100_000,
            orchestrator_data_dir: None,
            temp_dir: None,
            edit_mcp_nextcloud: None,
            edit_mail: None,
            model_endpoint: None,
        }
    }

    // ---- each service's configuration, written once -----------------------

    /// mcp-nextcloud in front of the fake, checking tokens against the
    /// fake's clock (so an `advance_clock` expires them as the same time
    /// passing would); with `embeddings`, embedding through that fake
    /// model and combining by that fusion.
    pub fn mcp_nextcloud_config(
        fake: &FakeNextcloud,
        upstream: UpstreamSetting,
        converter: ConverterSetting,
        index_db: Option<PathBuf>,
        limits: IndexLimits,
        webhooks: bool,
        embeddings: Option<(&FakeModel, Fusion)>,
    ) -> mcp_nextcloud::Config {
        let mut index = mcp_nextcloud::index::IndexConfig {
            path: index_db,
            webhook_secret: webhooks.then(|| WEBHOOK_SECRET.into()),
            limits: Default::default(),
            embeddings: embeddings.map(|(model, _)| {
                mcp_nextcloud::index::embed::EmbeddingsConfig {
                    url: model.api_base(),
                    model: EMBEDDINGS_MODEL.into(),
                    ..Default::default()
                }
            }),
            fusion: embeddings.map(|(_, fusion)| fusion).unwrap_or_default(),
        };
        let defaults = index.limits;
        index.limits.pass_documents = limits.pass_documents.unwrap_or(defaults.pass_documents);
        index.limits.discovery_page = limits.discovery_page.unwrap_or(defaults.discovery_page);
        index.limits.discovery_pages = limits.discovery_pages.unwrap_or(defaults.discovery_pages);
        mcp_nextcloud::Config {
            server: Stack::mcp_server_config(fake, MCP_NEXTCLOUD_AUDIENCE),
            upstream: upstream_auth(upstream),
            index,
            converter: converter_config(fake, converter),
        }
    }

    /// mcp-mail in front of the fake's app, on the fake's clock.
    pub fn mail_config(fake: &FakeNextcloud) -> mcp_mail::Config {
        mcp_mail::Config {
            server: Stack::mcp_server_config(fake, MCP_MAIL_AUDIENCE),
            nextcloud_audience: NEXTCLOUD_AUDIENCE.into(),
        }
    }

    /// What an MCP server in front of the fake is told about itself: a
    /// free port on loopback, `canonical_url` as its audience, the fake as
    /// issuer and Nextcloud, and the fake's clock.
    pub fn mcp_server_config(fake: &FakeNextcloud, canonical_url: &str) -> mcp_kit::ServerConfig {
        mcp_kit::ServerConfig {
            clock: fake_clock(fake),
            ..Stack::mcp_server_config_at(fake.base_url(), canonical_url)
        }
    }

    /// What an MCP server is told about itself with `nextcloud_url` as
    /// issuer and Nextcloud (a closed port, for a test of the listener
    /// alone): a free port on loopback, the system clock.
    pub fn mcp_server_config_at(nextcloud_url: &str, canonical_url: &str) -> mcp_kit::ServerConfig {
        mcp_kit::ServerConfig {
            listen: "127.0.0.1:0".parse().expect("address"),
            canonical_url: canonical_url.into(),
            issuer: nextcloud_url.into(),
            jwks_url: None,
            nextcloud_url: nextcloud_url.into(),
            allowed_hosts: vec!["127.0.0.1".into()],
            clock: mcp_auth::Clock::default(),
        }
    }

    /// The orchestrator on the fake model, with these servers; retries
    /// after 10 ms rather than a real model's back-off, so a test waits no
    /// longer than it must.
    pub fn orchestrator_config(
        model: orchestrator::model::ModelConfig,
        secret: Vec<u8>,
        window_tokens: usize,
        servers: Vec<ServerConfig>,
        data_dir: Option<PathBuf>,
    ) -> service::Config {
        service::Config {
            listen: "127.0.0.1:0".parse().expect("address"),
            secret,
            model,
            window_tokens,
            servers,
            // As an app-password deployment sets it; nothing is sent until
            // a user saves an app password in the app.
            app_password_servers: vec!["nextcloud".into()],
            data_dir,
        }
    }

    // ---- the services ------------------------------------------------------

    /// mcp-nextcloud; panics when the stack was built without it.
    pub fn mcp(&self) -> &mcp_nextcloud::McpNextcloud {
        self.mcp.as_ref().expect("this stack runs mcp-nextcloud")
    }

    /// mcp-nextcloud, unless it was stopped or not started.
    pub fn mcp_running(&self) -> Option<&mcp_nextcloud::McpNextcloud> {
        self.mcp.as_ref()
    }

    /// mcp-nextcloud's base URL, also while it is stopped (a restart
    /// listens there again).
    pub fn mcp_nextcloud_url(&self) -> Option<String> {
        self.mcp_config.as_ref().map(|config| format!("http://{}", config.server.listen))
    }

    /// mcp-mail; panics when the stack was built without it.
    pub fn mail(&self) -> &mcp_mail::McpMail {
        self.mail.as_ref().expect("this stack runs mcp-mail")
    }

    /// The fake model; panics when the stack was built without it.
    pub fn model(&self) -> &FakeModel {
        self.model.as_ref().expect("this stack runs the fake model")
    }

    /// The orchestrator; panics when the stack was built without it.
    pub fn orchestrator(&self) -> &Orchestrator {
        self.orchestrator.as_ref().expect("this stack runs the orchestrator")
    }

    /// Where the orchestrator keeps its stores, if on disk.
    pub fn data_dir(&self) -> Option<&Path> {
        self.orchestrator_config.as_ref().and_then(|config| config.data_dir.as_deref())
    }

    /// A token of `uid` for `audience`, signed with the fake's OIDC key.
    pub fn token(&self, uid: &str, audience: &str) -> String {
        self.fake.shared.mint_access_token(uid, audience)
    }

    /// The claims the fake puts in `uid`'s token for `audience`, for a test
    /// to alter and sign (a forged or misaddressed token).
    pub fn claims(&self, uid: &str, audience: &str) -> access_token::Claims {
        let payload = payload_of(&self.token(uid, audience));
        serde_json::from_value(payload).expect("the fake's tokens carry its claims")
    }

    async fn start_orchestrator(&mut self) -> Result<(), String> {
        let config = self.orchestrator_config.clone().ok_or("this stack runs no orchestrator")?;
        let orchestrator =
            Orchestrator::start(config).await.map_err(|error| format!("orchestrator: {error}"))?;
        let set = self
            .nextcloud_admin(reqwest::Method::POST, "/__fake/app")
            .json(&json!({ "orchestrator_url": orchestrator.url() }))
            .send()
            .await
            .map_err(|error| format!("POST /__fake/app: {error}"))?;
        if !set.status().is_success() {
            return Err(format!("POST /__fake/app answered {}", set.status()));
        }
        self.orchestrator = Some(orchestrator);
        Ok(())
    }

    /// Stops the orchestrator and starts it again on the same stores.
    pub async fn restart_orchestrator(&mut self) -> Result<(), String> {
        if let Some(orchestrator) = self.orchestrator.take() {
            orchestrator.shutdown().await;
        }
        self.start_orchestrator().await
    }

    /// Stops mcp-nextcloud once its index is idle.
    pub async fn stop_mcp_nextcloud(&mut self) {
        if let Some(mcp) = self.mcp.take() {
            mcp.index().idle().await;
            mcp.shutdown().await;
        }
    }

    /// Stops mcp-nextcloud and starts it again on the same port and index,
    /// with another converter or upstream sign-in if given.
    pub async fn restart_mcp_nextcloud(
        &mut self,
        converter: Option<ConverterSetting>,
        upstream: Option<UpstreamSetting>,
    ) -> Result<(), String> {
        let converter = converter.map(|setting| converter_config(&self.fake, setting));
        self.restart_mcp_nextcloud_with(move |config| {
            if let Some(converter) = converter {
                config.converter = converter;
            }
            if let Some(upstream) = upstream {
                config.upstream = upstream_auth(upstream);
            }
        })
        .await
    }

    /// Stops mcp-nextcloud and starts it again under its configuration as
    /// `edit` changes it (another index file, converter, …): on the same
    /// port unless `edit` names another, and the next restart keeps it.
    pub async fn restart_mcp_nextcloud_with(
        &mut self,
        edit: impl FnOnce(&mut mcp_nextcloud::Config),
    ) -> Result<(), String> {
        self.stop_mcp_nextcloud().await;
        let config = self.mcp_config.as_mut().ok_or("this stack runs no mcp-nextcloud")?;
        edit(config);
        let mcp = mcp_nextcloud::McpNextcloud::start(config.clone())
            .await
            .map_err(|error| format!("mcp-nextcloud did not start again: {error}"))?;
        config.server.listen = listening_at(&mcp);
        self.mcp = Some(mcp);
        Ok(())
    }

    /// Stops every service and removes the stack's temporary directory.
    pub async fn shutdown(mut self) {
        if let Some(orchestrator) = self.orchestrator.take() {
            orchestrator.shutdown().await;
        }
        if let Some(mcp) = self.mcp.take() {
            mcp.shutdown().await;
        }
        if let Some(mail) = self.mail.take() {
            mail.shutdown().await;
        }
        if let Some(model) = self.model.take() {
            model.shutdown().await;
        }
        self.fake.shutdown().await;
        if let Some(dir) = &self.temp_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    // ---- browsers ----------------------------------------------------------

    /// `uid`'s browser, signed in with the fixture's password on first use.
    pub async fn browser(&mut self, uid: &str) -> Result<Browser, String> {
        if !self.browsers.contains_key(uid) {
            let password = self.password(uid);
            let browser = self.login(uid, &password).await?;
            self.browsers.insert(uid.to_string(), browser);
        }
        Ok(self.browsers[uid].clone())
    }

    /// A fresh sign-in with this password (not kept).
    pub async fn login(&self, uid: &str, password: &str) -> Result<Browser, String> {
        Browser::login(&self.http, self.fake.base_url(), uid, password)
            .await
            .map_err(|error| format!("login of {uid}: {error} (is {uid} a user of the fixture?)"))
    }

    /// The fixture's password of `uid` (empty for a stranger).
    pub fn password(&self, uid: &str) -> String {
        self.passwords.get(uid).cloned().unwrap_or_default()
    }

    // ---- the fakes' admin routes ---------------------------------------------

    /// A request to the fake Nextcloud's admin routes, with its token.
    pub fn nextcloud_admin(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let token = self.fake.admin_token().expect("the stack's fake has its admin routes on");
        self.http
            .request(method, format!("{}{path}", self.fake.base_url()))
            .header(fake_nextcloud::admin::TOKEN_HEADER, token)
    }

    /// A request to the fake model's admin routes, with its token.
    pub fn model_admin(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let model = self.model();
        let token = model.admin_token().expect("the stack's fake model has its admin routes on");
        self.http
            .request(method, format!("{}{path}", model.url()))
            .header(fake_model::admin::TOKEN_HEADER, token)
    }

    /// `PUT /__fake/faults` on the fake Nextcloud.
    pub async fn nextcloud_faults(&self, faults: &Value) -> Result<(), String> {
        let set = self.nextcloud_admin(reqwest::Method::PUT, "/__fake/faults").json(faults);
        succeeds(set, |_, text| format!("PUT /__fake/faults refused them: {text}")).await
    }

    /// `PUT /__fake/faults` on the fake model.
    pub async fn model_faults(&self, faults: &Value) -> Result<(), String> {
        let set = self.model_admin(reqwest::Method::PUT, "/__fake/faults").json(faults);
        succeeds(set, |_, text| format!("the fake model refused the faults: {text}")).await
    }

    /// Moves the fake Nextcloud's clock (and so the MCP servers') forward.
    pub async fn advance_clock(&self, seconds: i64) -> Result<(), String> {
        let advance = self
            .nextcloud_admin(reqwest::Method::POST, "/__fake/clock/advance")
            .json(&json!({"seconds": seconds}));
        succeeds(advance, |status, _| format!("the clock did not move: {status}")).await
    }

    /// Ends `uid`'s Nextcloud session, as a logout elsewhere does.
    pub async fn end_session(&self, uid: &str) -> Result<(), String> {
        let end =
            self.nextcloud_admin(reqwest::Method::POST, &format!("/__fake/sessions/{uid}/end"));
        succeeds(end, |status, _| format!("ending the session answered {status}")).await
    }

    /// Delivers the webhook calls the fake queued (`Delivery::OnDemand`).
    pub async fn flush_webhooks(&self) -> Result<(), String> {
        let flush = self.nextcloud_admin(reqwest::Method::POST, "/__fake/webhooks/flush");
        succeeds(flush, |status, _| format!("flushing the webhooks answered {status}")).await
    }

    /// `GET /__fake/state`; null if it could not be read.
    pub async fn fake_state(&self) -> Value {
        match self.nextcloud_admin(reqwest::Method::GET, "/__fake/state").send().await {
            Ok(response) => response.json().await.unwrap_or(Value::Null),
            Err(_) => Value::Null,
        }
    }

    // ---- the MCP client ----------------------------------------------------

    /// One `tools/call` as the user, with the tokens the app would hand
    /// the orchestrator for that server (`nextcloud` or `mail`); the status
    /// and the JSON-RPC result (the whole message if it has none).
    pub async fn call_tool(
        &self,
        server: &str,
        user: &str,
        name: &str,
        arguments: &Value,
    ) -> Result<(u16, Value), String> {
        let (url, audience) = match server {
            "mail" => (self.mail.as_ref().map(|mail| mail.url().to_string()), MCP_MAIL_AUDIENCE),
            _ => (self.mcp_nextcloud_url(), MCP_NEXTCLOUD_AUDIENCE),
        };
        let url = url.ok_or_else(|| format!("the {server} server does not run"))?;
        let shared = &self.fake.shared;
        // What the orchestrator adds for mcp-nextcloud once the user has
        // saved an app password in the app.
        let app_password = match server {
            "nextcloud" => shared.world().app.app_passwords.get(user).cloned(),
            _ => None,
        };
        let mut request = self.http.post(format!("{url}/mcp"));
        if let Some(app_password) = app_password {
            request = request.header(mcp_nextcloud::config::APP_PASSWORD_HEADER, app_password);
        }
        let response = request
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", crate::mcp_client::PROTOCOL_VERSION)
            .bearer_auth(shared.mint_access_token(user, audience))
            .header(
                mcp_nextcloud::config::NEXTCLOUD_TOKEN_HEADER,
                shared.mint_access_token(user, NEXTCLOUD_AUDIENCE),
            )
            .json(&json!({
                "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }))
            .send()
            .await
            .map_err(|error| format!("tools/call {name}: {error}"))?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(|error| error.to_string())?;
        let message: Value =
            crate::mcp_client::parse_message(&text).unwrap_or(Value::String(text.clone()));
        let body = match message.get("result") {
            Some(result) => result.clone(),
            None => message,
        };
        Ok((status, body))
    }
}

/// The fake model on a free port, answering by `script`.
pub async fn start_fake_model(script: Script) -> Result<FakeModel, String> {
    FakeModel::start(fake_model::Config {
        listen: "127.0.0.1:0".parse().expect("address"),
        script,
        ..fake_model::Config::default()
    })
    .await
    .map_err(|error| format!("fake model: {error}"))
}

/// The orchestrator's model configuration for a fake model: its retries
/// wait milliseconds, not seconds.
pub fn fake_model_config(model: &FakeModel) -> orchestrator::model::ModelConfig {
    let mut config = orchestrator::model::ModelConfig::new(model.api_base(), "fake-model");
    config.retry.backoff_first_ms = 10;
    config
}

/// Sends an admin request; unless it succeeds, what `refused` makes of
/// its status and body.
async fn succeeds(
    request: reqwest::RequestBuilder,
    refused: impl FnOnce(reqwest::StatusCode, String) -> String,
) -> Result<(), String> {
    let response = request.send().await.map_err(|error| error.to_string())?;
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    Err(refused(status, response.text().await.unwrap_or_default()))
}

/// A JWT's payload, unverified; panics on what is no JWT (test support).
pub fn payload_of(token: &str) -> Value {
    use base64::Engine as _;
    let payload = token.split('.').nth(1).expect("a JWT has a payload");
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .expect("a JWT's payload is base64url");
    serde_json::from_slice(&payload).expect("a JWT's payload is JSON")
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Seeds the generated files into the fake Nextcloud.
fn seed_corpus(fake: &FakeNextcloud, corpus: &[Corpus]) {
    let mut world = fake.shared.world();
    for series in corpus {
        for number in 0..series.count {
            let fill = |template: &str| template.replace("{n}", &format!("{number:03}"));
            world.storage.seed_file(
                &series.owner,
                &fill(&series.path),
                fill(&series.text).into_bytes(),
                None,
                series.first_mtime + number as i64,
            );
        }
    }
}

/// Where a started mcp-nextcloud listens (its configuration may have
/// named port 0).
fn listening_at(mcp: &mcp_nextcloud::McpNextcloud) -> std::net::SocketAddr {
    mcp.url().trim_start_matches("http://").parse().expect("mcp-nextcloud's URL is an address")
}

/// The MCP servers check tokens against the fake Nextcloud's clock.
fn fake_clock(fake: &FakeNextcloud) -> mcp_auth::Clock {
    let shared = fake.shared.clone();
    mcp_auth::Clock::from_fn(move || shared.clock.now())
}

fn upstream_auth(setting: UpstreamSetting) -> mcp_nextcloud::UpstreamAuth {
    match setting {
        UpstreamSetting::SecondToken => mcp_nextcloud::UpstreamAuth::SecondToken {
            nextcloud_audience: NEXTCLOUD_AUDIENCE.into(),
        },
        UpstreamSetting::AppPassword => mcp_nextcloud::UpstreamAuth::AppPassword,
    }
}

/// mcp-nextcloud's converter for a setting: the fake's converter, with or
/// without the fixture's secret.
fn converter_config(
    fake: &FakeNextcloud,
    setting: ConverterSetting,
) -> Option<mcp_nextcloud::convert::ConverterConfig> {
    let secret = match setting {
        ConverterSetting::None => return None,
        ConverterSetting::WithSecret => fake.shared.world().server.converter_secret.clone(),
        ConverterSetting::WithoutSecret | ConverterSetting::Unreachable => None,
    };
    let url = match setting {
        ConverterSetting::Unreachable => CLOSED_URL.to_string(),
        _ => fake.converter_url().to_string(),
    };
    Some(mcp_nextcloud::convert::ConverterConfig {
        url,
        secret,
        lend_listen: "127.0.0.1:0".parse().expect("address"),
        lend_url: None,
    })
}

/// Registers mcp-nextcloud's webhook endpoint as `tamebi webhooks register`
/// does, with the fixture's first administrator.
async fn register_webhooks(
    fake: &FakeNextcloud,
    fixture: &Fixture,
    endpoint: &str,
) -> Result<(), String> {
    let admin =
        fixture.users.iter().find(|user| user.groups.iter().any(|group| group == "admin")).ok_or(
            "[options] webhooks needs an administrator (a user in group \"admin\") in the fixture",
        )?;
    mcp_nextcloud::index::webhook::register(
        &reqwest::Client::new(),
        fake.base_url(),
        (&admin.uid, &admin.password),
        endpoint,
        WEBHOOK_SECRET,
    )
    .await
    .map(drop)
    .map_err(|error| format!("registering the webhooks: {error}"))
}
