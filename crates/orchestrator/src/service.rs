//! The orchestrator as a running service: configuration in, a listening
//! socket out. `tamebi orchestrator` and the tests start it the same way.

use crate::identity::{SecretTooShort, Verifier};
use crate::mcp::ServerConfig;
use crate::model::{InvalidModelConfig, ModelClient, ModelConfig};
use crate::server::{self, Api};
use crate::store::{self, StoreError};
use crate::turn::Services;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::oneshot;

/// A model window when the configuration names none: small enough for
/// the local models people run, so summaries come early rather than late.
pub const WINDOW_TOKENS_DEFAULT: usize = 32_768;

/// No `Debug`: it holds the shared secret.
#[derive(Clone)]
pub struct Config {
    pub listen: SocketAddr,
    /// The secret shared with the Nextcloud app (at least 32 bytes).
    pub secret: Vec<u8>,
    pub model: ModelConfig,
    /// The model's context window in tokens.
    pub window_tokens: usize,
    pub servers: Vec<ServerConfig>,
    /// The servers (by name) that receive the user's app password when the
    /// app sends one (app-password mode: `nextcloud`); the others never do.
    pub app_password_servers: Vec<String>,
    /// Where chat.db, audit.db and memory.db live; `None` keeps them in
    /// memory (tests).
    pub data_dir: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("the shared secret is shorter than 32 bytes")]
    Secret(#[from] SecretTooShort),
    #[error("the model configuration cannot work: {0}")]
    Model(#[from] InvalidModelConfig),
    #[error("a database could not be opened: {0}")]
    Store(#[from] StoreError),
    #[error("the data directory could not be created: {0}")]
    DataDir(std::io::Error),
    #[error("cannot listen on {address}: {error}")]
    Listen { address: SocketAddr, error: std::io::Error },
}

/// A running orchestrator.
pub struct Orchestrator {
    url: String,
    shutdown: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
    services: Arc<Services>,
}

impl Orchestrator {
    pub async fn start(config: Config) -> Result<Orchestrator, StartError> {
        Orchestrator::start_with_limits(config, http_serve::Limits::default()).await
    }

    /// [`Orchestrator::start`] with its listener under caller-chosen
    /// bounds (tests shrink the header timeout).
    pub async fn start_with_limits(
        config: Config,
        limits: http_serve::Limits,
    ) -> Result<Orchestrator, StartError> {
        let verifier = Verifier::new(config.secret.clone())?;
        let model = ModelClient::new(config.model.clone())?;
        let path = |name: &str| config.data_dir.as_ref().map(|dir| dir.join(name));
        if let Some(dir) = &config.data_dir {
            // 0700 whatever the umask: chat.db, audit.db and memory.db
            // hold every user's conversations and facts.
            sqlite_db::private_dir(dir).map_err(StartError::DataDir)?;
        }
        let services = Arc::new(Services {
            model: Arc::new(model),
            chat: store::chat::open(path("chat.db").as_deref())?,
            audit: store::audit::open(path("audit.db").as_deref())?,
            memory: store::memory::open(path("memory.db").as_deref())?,
            servers: config.servers.clone(),
            app_password_servers: config.app_password_servers.clone(),
            http: reqwest::Client::new(),
            window_tokens: config.window_tokens,
            busy: Default::default(),
        });
        let api = Arc::new(Api { services: services.clone(), verifier });
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|error| StartError::Listen { address: config.listen, error })?;
        let address = listener
            .local_addr()
            .map_err(|error| StartError::Listen { address: config.listen, error })?;
        let (shutdown, stopped) = oneshot::channel::<()>();
        let app = server::router(api);
        let stopping = async {
            let _ = stopped.await;
        };
        // Header and idle time and connections bounded; a chat stream
        // silent while a tool runs is not (crates/http-serve).
        let task = tokio::spawn(http_serve::serve("orchestrator", listener, app, limits, stopping));
        tracing::info!(%address, "orchestrator listening");
        Ok(Orchestrator {
            url: format!("http://{address}"),
            shutdown: Some(shutdown),
            task,
            services,
        })
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The stores, for tests and operators' commands.
    pub fn services(&self) -> &Arc<Services> {
        &self.services
    }

    /// Stops accepting requests and waits for open ones to end.
    pub async fn shutdown(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        let _ = (&mut self.task).await;
    }

    /// Stops at once, as a crash would: open streams are cut.
    pub fn abort(self) {
        self.task.abort();
    }
}
