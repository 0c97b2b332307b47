//! `tamebi orchestrator` as a process of its own, for what an in-process
//! orchestrator cannot show: a crash (SIGKILL), a file size limit, its own
//! RSS. The end-to-end tests (`orchestrator_turns.rs`) and the orchestrator
//! benchmark (`examples/orchestrator_bench.rs`) start it here, with the
//! same flags and the same wait for `/health`.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The running process; killed and reaped when dropped.
pub struct OrchestratorProcess {
    pub child: Child,
    pub url: String,
}

/// What the process is started with.
pub struct Flags<'a> {
    pub model_url: &'a str,
    /// `--mcp`: `name=url,…`, or "" for no server.
    pub mcp: &'a str,
    pub data_dir: &'a Path,
    pub secret: &'a str,
}

impl OrchestratorProcess {
    /// Runs `command` (the binary, or a shell that execs it with its
    /// arguments) as `orchestrator` on a free loopback port with `flags`,
    /// then waits until `/health` answers (5 s at most).
    pub async fn start(mut command: Command, flags: Flags<'_>) -> Result<Self, String> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map_err(|error| format!("no free port: {error}"))?
            .port();
        let child = command
            .args(["orchestrator", "--listen", &format!("127.0.0.1:{port}")])
            .args(["--model-url", flags.model_url, "--mcp", flags.mcp, "--data-dir"])
            .arg(flags.data_dir)
            .env("TAMEBI_SHARED_SECRET", flags.secret)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()
            .map_err(|error| format!("tamebi orchestrator did not start: {error}"))?;
        // Owned at once, so a failed start still kills and reaps it.
        let process = OrchestratorProcess { child, url: format!("http://127.0.0.1:{port}") };
        let http = reqwest::Client::new();
        for _ in 0..200 {
            let health = http.get(format!("{}/health", process.url)).send().await;
            if health.is_ok_and(|response| response.status().is_success()) {
                return Ok(process);
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        Err("tamebi orchestrator did not answer /health within 5 s".into())
    }
}

impl Drop for OrchestratorProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
