//! A scripted OpenAI-compatible model server that records what it was shown.
//!
//! It speaks `/v1/chat/completions` on a real socket — streamed chunks and
//! tool-call deltas shaped like OpenAI's, non-streamed completions, usage,
//! OpenAI's error shape — so the orchestrator's real model client talks to
//! it unchanged, and the real `openai` Python client accepts it
//! (`ci/peers/fake_model.sh`). What each turn returns comes from a
//! [`script::Script`] (TOML at start, JSON through `/__fake/script`); every
//! request is recorded so a test can assert what the model was shown; faults
//! (429, 500, cut streams, slow tokens, llama.cpp's refusal to stream with
//! tools) are switchable; a demo mode answers from `files_grep` results so
//! the stack runs without any model. `/v1/embeddings` answers with
//! deterministic vectors that are not semantic ([`embeddings`]), so an
//! embeddings client runs without a model too. `docs/fake-model.md` is the
//! manual.
//!
//! The key design choice: the answer is chosen by matchers on the request
//! (the last user text, the last tool result, the turn, the tools offered),
//! not by the order requests arrive in. We rejected a queue of canned
//! responses: retries, streaming fallbacks and summarisation calls shift the
//! order, and a queue then answers the wrong request silently, while a
//! matcher either holds or leads to a fallback text that says no rule
//! matched.

pub mod admin;
pub mod answer;
pub mod chat;
pub mod demo;
pub mod embeddings;
pub mod error;
pub mod faults;
pub mod record;
pub mod request;
pub mod script;

use axum::Router;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub use faults::Faults;
pub use record::{RecordedEmbeddings, RecordedRequest};
pub use script::{Script, ScriptError};

/// The model id `GET /v1/models` lists and answers carry when the request
/// names none.
pub const MODEL_DEFAULT: &str = "fake-model";

/// The largest request body accepted.
pub const REQUEST_BODY_LENGTH_MAX: usize = 16 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    pub script: Script,
    /// Answer unmatched requests like the demo (see [`demo`]) instead of
    /// with the fallback text.
    pub demo: bool,
    /// When set, `/v1` requires `Authorization: Bearer <key>`.
    pub api_key: Option<String>,
    pub model: String,
    /// Who may use `/__fake/` (it shows every recorded request — document
    /// text and memory facts included — and replaces the script).
    pub admin: Admin,
    /// The listener's bounds (crates/http-serve); tests shrink them.
    pub limits: http_serve::Limits,
}

/// Who may steer the fake through `/__fake/`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Admin {
    /// A fresh random token each start, known to whoever started the fake
    /// ([`FakeModel::admin_token`]; the CLI writes it to a 0600 file).
    #[default]
    RandomToken,
    /// No admin routes: `/__fake/` is 404.
    Off,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            script: Script::default(),
            demo: false,
            api_key: None,
            model: MODEL_DEFAULT.to_string(),
            admin: Admin::default(),
            limits: http_serve::Limits::default(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot listen on {address}: {source}")]
    Listen { address: SocketAddr, source: std::io::Error },
}

/// Everything the handlers share.
pub struct Shared {
    state: Mutex<State>,
    pub api_key: Option<String>,
    pub demo: bool,
    pub model: String,
    /// Part of every generated id, different for each start, so ids from
    /// two runs never collide in a stored conversation.
    pub id_prefix: String,
    /// The token `/__fake/` requires ([`admin::TOKEN_HEADER`]); `None`:
    /// the admin routes are off.
    pub admin_token: Option<String>,
}

/// What changes while the server runs.
pub struct State {
    pub script: Script,
    /// The global faults.
    pub faults: Faults,
    pub log: record::RequestLog,
    /// The embeddings requests, in a log of their own.
    pub embeddings_log: record::RequestLog<RecordedEmbeddings>,
    /// Requests accepted so far, chat and embeddings (the records' `seq`).
    pub requests_seen: u64,
    /// Completions written so far (for `chatcmpl-` ids).
    pub completions: u64,
    /// Tool call ids generated so far.
    pub tool_calls: u64,
}

pub type AppState = Arc<Shared>;

impl Shared {
    /// Locks the state. Never hold the guard across an `.await`.
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Replaces the script, its rule counts and the global faults.
    pub fn set_script(&self, script: Script) {
        let mut state = self.state();
        state.faults = script.source().faults.clone();
        state.script = script;
    }
}

/// A running fake model. Dropping it does not stop it; call [`shutdown`].
///
/// [`shutdown`]: FakeModel::shutdown
pub struct FakeModel {
    shared: AppState,
    url: String,
    stop: tokio::sync::watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl FakeModel {
    /// Binds the listener and starts serving.
    pub async fn start(config: Config) -> Result<FakeModel, StartError> {
        let listener = TcpListener::bind(config.listen)
            .await
            .map_err(|source| StartError::Listen { address: config.listen, source })?;
        let address = listener.local_addr().expect("bound address");
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_micros());
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                faults: config.script.source().faults.clone(),
                script: config.script,
                log: record::RequestLog::default(),
                embeddings_log: record::RequestLog::default(),
                requests_seen: 0,
                completions: 0,
                tool_calls: 0,
            }),
            api_key: config.api_key,
            demo: config.demo,
            model: config.model,
            id_prefix: format!("{:08x}", started as u32),
            admin_token: match config.admin {
                Admin::RandomToken => Some(admin::random_token()),
                Admin::Off => None,
            },
        });
        let (stop, mut stopped) = tokio::sync::watch::channel(false);
        let app = router(shared.clone());
        let limits = config.limits;
        let task = tokio::spawn(async move {
            let shutdown = async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            };
            // Streamed deltas go out as they are written (TCP_NODELAY, as
            // a provider's do); slow tokens are a response, never cut.
            http_serve::serve("fake model", listener, app, limits, shutdown).await;
        });
        let url = format!("http://{address}");
        tracing::info!(%url, "fake model listening");
        Ok(FakeModel { shared, url, stop, task })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// What an OpenAI client takes as its base URL: `http://…/v1`.
    pub fn api_base(&self) -> String {
        format!("{}/v1", self.url)
    }

    /// The value of [`admin::TOKEN_HEADER`] that `/__fake/` requires;
    /// `None` when the admin routes are off.
    pub fn admin_token(&self) -> Option<&str> {
        self.shared.admin_token.as_deref()
    }

    /// The chat requests recorded so far.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.state().log.all()
    }

    /// The embeddings requests recorded so far.
    pub fn embeddings_requests(&self) -> Vec<RecordedEmbeddings> {
        self.shared.state().embeddings_log.all()
    }

    pub fn set_script(&self, script: Script) {
        self.shared.set_script(script);
    }

    pub fn set_faults(&self, faults: Faults) {
        self.shared.state().faults = faults;
    }

    /// Stops the listener and waits for open answers to finish.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// All routes.
pub fn router(shared: AppState) -> Router {
    Router::new()
        .merge(chat::routes())
        .merge(embeddings::routes())
        .merge(admin::routes().route_layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            admin::require_token,
        )))
        .fallback(chat::unknown_url)
        .layer(axum::extract::DefaultBodyLimit::max(REQUEST_BODY_LENGTH_MAX))
        .with_state(shared)
}
