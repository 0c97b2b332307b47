//! The orchestrator on its own, as the socket tests start it: on an
//! ephemeral loopback port, no MCP server, and a model URL where nothing
//! listens (port 9), for tests whose requests never reach a model. Its
//! configuration written once for them.

use orchestrator::service;
use std::path::PathBuf;

/// With this shared secret, keeping its stores in `data_dir` (in memory
/// when `None`).
pub fn config(secret: &[u8], data_dir: Option<PathBuf>) -> service::Config {
    service::Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        secret: secret.to_vec(),
        model: orchestrator::model::ModelConfig::new("http://127.0.0.1:9/v1", "none"),
        window_tokens: 32_768,
        servers: vec![],
        app_password_servers: vec![],
        data_dir,
    }
}
