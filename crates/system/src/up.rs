//! `tamebi up`: the whole stack on loopback, each service a child process of
//! this same binary (its own subcommand), so the model key and the workspace
//! access live in different processes even in a demo. It checks the ports,
//! keeps the shared secret in the data directory, waits for each health
//! endpoint, prefixes every child's lines with its name, and stops them all
//! together. It rejected running the services as tasks of one process: that
//! would put the model key and the Nextcloud tokens in one address space.

use anyhow::Context as _;
use std::collections::VecDeque;
use std::io::{IsTerminal as _, Write as _};
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncBufReadExt as _;

/// The file in the data directory holding the secret the app shares with
/// the orchestrator; its presence also marks the directory as ours.
pub const SECRET_FILE: &str = "shared-secret";
/// The fakes' admin tokens (`/__fake/`), new each run, mode 0600: only the
/// account that ran `up` (its tests, its scripts) can steer the demo.
pub const NEXTCLOUD_ADMIN_TOKEN_FILE: &str = "fake-nextcloud-admin-token";
pub const MODEL_ADMIN_TOKEN_FILE: &str = "fake-model-admin-token";
/// The MCP servers' audiences: the demo fixture's OIDC clients name these
/// resource URLs, so they stay the same whatever port the servers listen on.
pub const MCP_NEXTCLOUD_AUDIENCE: &str = "http://127.0.0.1:9101/mcp";
pub const MCP_MAIL_AUDIENCE: &str = "http://127.0.0.1:9102/mcp";

const FIXTURE_DEFAULT: &str = "scenarios/fixtures/demo.toml";
const HEALTH_TIMEOUT: Duration = Duration::from_secs(60);
const STOP_TIMEOUT: Duration = Duration::from_secs(5);
const LOG_LINES_KEPT_MAX: usize = 20;
const NAME_WIDTH: usize = 13;
/// The exit code for a port already in use (other failures exit 1).
const EXIT_PORT_IN_USE: i32 = 2;

#[derive(Debug, clap::Args)]
pub struct UpArgs {
    /// Move every port: Nextcloud N, converter N+3, fake model N+10,
    /// orchestrator N+20, mcp-nextcloud N+21, mcp-mail N+22, document lending
    /// N+30 (default: 8080, 8083, 8090, 9100, 9101, 9102, 9110).
    #[arg(long)]
    pub base_port: Option<u16>,
    /// Where the index, the conversations and the shared secret are kept
    /// between runs.
    #[arg(long, default_value = "data")]
    pub data_dir: PathBuf,
    /// Delete the data directory first (only if it holds Tamebi's secret
    /// file or nothing at all).
    #[arg(long)]
    pub fresh: bool,
    /// The world the fake Nextcloud is seeded with.
    #[arg(long, default_value = FIXTURE_DEFAULT)]
    pub fixture: PathBuf,
    /// A real OpenAI-compatible model API root (including /v1) instead of
    /// the fake model's demo answers; its key goes in TAMEBI_MODEL_API_KEY.
    #[arg(long, requires = "model")]
    pub model_url: Option<String>,
    /// The model name sent to --model-url.
    #[arg(long, requires = "model_url")]
    pub model: Option<String>,
    /// A fake-model script (docs/fake-model.md) whose rules answer before
    /// the demo answers: scripted conversations, slow streams, faults.
    #[arg(long, conflicts_with = "model_url")]
    pub model_script: Option<PathBuf>,
    /// The model's context window in tokens (the orchestrator's
    /// --model-window); its default otherwise.
    #[arg(long)]
    pub model_window: Option<usize>,
    /// The most tokens one answer may take (the orchestrator's
    /// --model-max-tokens); 0 sends no bound.
    #[arg(long)]
    pub model_max_tokens: Option<u32>,
    /// Seconds the model may stay silent before an answer times out (the
    /// orchestrator's --model-timeout-s).
    #[arg(long)]
    pub model_timeout_s: Option<u64>,
    /// Where the built chat page is read from (docs/web.md). The default,
    /// when missing, is built with npm if npm is installed.
    #[arg(long, default_value = fake_nextcloud::app::WEB_DIR_DEFAULT)]
    pub web_dir: PathBuf,
    /// Do not build the chat page when it is missing (the page then says
    /// which command builds it).
    #[arg(long)]
    pub no_web_build: bool,
}

/// Where each service listens.
#[derive(Debug, Clone, Copy)]
struct Ports {
    nextcloud: u16,
    converter: u16,
    model: u16,
    orchestrator: u16,
    mcp_nextcloud: u16,
    mcp_mail: u16,
    lend: u16,
}

impl Ports {
    fn new(base_port: Option<u16>) -> anyhow::Result<Ports> {
        let Some(base) = base_port else {
            return Ok(Ports {
                nextcloud: 8080,
                converter: 8083,
                model: 8090,
                orchestrator: 9100,
                mcp_nextcloud: 9101,
                mcp_mail: 9102,
                lend: 9110,
            });
        };
        anyhow::ensure!(
            (1024..=u16::MAX - 30).contains(&base),
            "--base-port {base}: choose a port between 1024 and {} (the layout uses N to N+30)",
            u16::MAX - 30
        );
        Ok(Ports {
            nextcloud: base,
            converter: base + 3,
            model: base + 10,
            orchestrator: base + 20,
            mcp_nextcloud: base + 21,
            mcp_mail: base + 22,
            lend: base + 30,
        })
    }
}

/// A started child: its name, pid and last lines.
struct Child {
    name: &'static str,
    pid: u32,
    log: Arc<Mutex<VecDeque<String>>>,
}

struct Stack {
    children: Vec<Child>,
    exits: tokio::sync::mpsc::UnboundedSender<(usize, ExitStatus)>,
    exited: tokio::sync::mpsc::UnboundedReceiver<(usize, ExitStatus)>,
    readers: Vec<tokio::task::JoinHandle<()>>,
    color: bool,
    /// No --model-url: the fake model answers.
    demo: bool,
}

pub async fn up(args: UpArgs) -> anyhow::Result<()> {
    let ports = Ports::new(args.base_port)?;
    let mut interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .context("cannot listen for SIGINT")?;
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("cannot listen for SIGTERM")?;
    let demo = args.model_url.is_none();
    let fixture_path = fixture_path(&args.fixture);
    let fixture = fake_nextcloud::Fixture::load(&fixture_path)
        .with_context(|| format!("cannot load the fixture {}", fixture_path.display()))?;
    if let Some(script) = &args.model_script {
        fake_model::Script::load(script)
            .with_context(|| format!("cannot load the model script {}", script.display()))?;
    }

    let mut wanted = vec![
        (ports.nextcloud, "nextcloud"),
        (ports.converter, "converter"),
        (ports.orchestrator, "orchestrator"),
        (ports.mcp_nextcloud, "mcp-nextcloud"),
        (ports.mcp_mail, "mcp-mail"),
        (ports.lend, "document lending"),
    ];
    if demo {
        wanted.push((ports.model, "fake-model"));
    }
    for (port, service) in wanted {
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_err() {
            eprintln!(
                "error: port {port} ({service}) is already in use: stop whatever listens there, or move every port with --base-port N (the layout: docs/up.md)"
            );
            std::process::exit(EXIT_PORT_IN_USE);
        }
    }

    if args.fresh {
        remove_data_dir(&args.data_dir)?;
    }
    private_dir(&args.data_dir)
        .with_context(|| format!("cannot create the data directory {}", args.data_dir.display()))?;
    let data_dir = std::fs::canonicalize(&args.data_dir)
        .with_context(|| format!("cannot resolve {}", args.data_dir.display()))?;
    let secret = shared_secret(&data_dir)?;
    let web_dir = web_dir(&args.web_dir);
    let web_built = ensure_web_built(&web_dir, &args);

    let exe = std::env::current_exe().context("cannot find the tamebi binary to start")?;
    let (exits, exited) = tokio::sync::mpsc::unbounded_channel();
    let mut stack = Stack {
        children: Vec::new(),
        exits,
        exited,
        readers: Vec::new(),
        color: std::io::stdout().is_terminal(),
        demo,
    };
    // A signal while starting stops what started, like one afterwards.
    let starting = start_all(
        &mut stack,
        &exe,
        &args,
        &fixture_path,
        &fixture,
        &data_dir,
        ports,
        &secret,
        &web_dir,
    );
    let started = tokio::select! {
        result = starting => Some(result),
        _ = interrupt.recv() => None,
        _ = terminate.recv() => None,
    };
    match started {
        Some(Ok(())) => {}
        Some(Err(error)) => {
            stack.stop().await;
            return Err(error);
        }
        None => {
            say(stack.color, "up", "stopping every service");
            stack.stop().await;
            return Ok(());
        }
    }

    let base = format!("http://127.0.0.1:{}", ports.nextcloud);
    print_banner(&base, &fixture, &data_dir, &args, ports, web_built);

    tokio::select! {
        _ = interrupt.recv() => {}
        _ = terminate.recv() => {}
        Some((index, status)) = stack.exited.recv() => {
            let name = stack.children[index].name;
            let lines = stack.children[index].last_lines();
            stack.children[index].pid = 0;
            stack.stop().await;
            anyhow::bail!(
                "{name} stopped on its own ({status}), so everything was stopped; its last lines:\n{lines}"
            );
        }
    }
    say(stack.color, "up", "stopping every service");
    stack.stop().await;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn start_all(
    stack: &mut Stack,
    exe: &Path,
    args: &UpArgs,
    fixture_path: &Path,
    fixture: &fake_nextcloud::Fixture,
    data_dir: &Path,
    ports: Ports,
    secret: &str,
    web_dir: &Path,
) -> anyhow::Result<()> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .context("cannot build an HTTP client")?;
    let local = |port: u16| format!("127.0.0.1:{port}");
    let base = format!("http://127.0.0.1:{}", ports.nextcloud);

    let nextcloud = stack.spawn(
        exe,
        "nextcloud",
        &[
            "fake-nextcloud".into(),
            "--fixture".into(),
            fixture_path.display().to_string(),
            "--listen".into(),
            local(ports.nextcloud),
            "--converter-listen".into(),
            local(ports.converter),
            "--orchestrator-url".into(),
            format!("http://127.0.0.1:{}", ports.orchestrator),
            "--web-dir".into(),
            web_dir.display().to_string(),
            "--admin-token-file".into(),
            data_dir.join(NEXTCLOUD_ADMIN_TOKEN_FILE).display().to_string(),
        ],
        &[("TAMEBI_SHARED_SECRET", secret)],
    )?;
    stack.wait_healthy(&http, nextcloud, &format!("{base}/status.php")).await?;
    let discovery = format!("{base}/index.php/.well-known/openid-configuration");
    let issuer = http
        .get(&discovery)
        .send()
        .await
        .and_then(|response| response.error_for_status())
        .with_context(|| format!("cannot read {discovery}"))?
        .json::<serde_json::Value>()
        .await
        .with_context(|| format!("{discovery} is not JSON"))?["issuer"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    anyhow::ensure!(
        issuer == base,
        "the fake Nextcloud names its issuer {issuer:?}, not {base:?}: the MCP servers would refuse every token; check the fixture's [server] overwritehost (\"self\")"
    );

    // A new webhook secret each run: the fake forgets its registrations
    // when it stops, and registering again rotates the secret anyway.
    let webhook_secret = random_hex(32)?;
    let converter_url = format!("http://127.0.0.1:{}", ports.converter);
    let mut mcp_nextcloud_env = vec![
        ("ONLYOFFICE_URL", converter_url.as_str()),
        ("TAMEBI_WEBHOOK_SECRET", webhook_secret.as_str()),
    ];
    let converter_secret = fixture.server.converter_secret.clone().unwrap_or_default();
    if !converter_secret.is_empty() {
        mcp_nextcloud_env.push(("ONLYOFFICE_JWT_SECRET", converter_secret.as_str()));
    }
    let mcp_nextcloud = stack.spawn(
        exe,
        "mcp-nextcloud",
        &[
            "mcp-nextcloud".into(),
            "--listen".into(),
            local(ports.mcp_nextcloud),
            "--canonical-url".into(),
            MCP_NEXTCLOUD_AUDIENCE.into(),
            "--issuer".into(),
            base.clone(),
            "--nextcloud-url".into(),
            base.clone(),
            "--index-db".into(),
            data_dir.join("index.db").display().to_string(),
            "--lend-listen".into(),
            local(ports.lend),
        ],
        &mcp_nextcloud_env,
    )?;
    let mcp_mail = stack.spawn(
        exe,
        "mcp-mail",
        &[
            "mcp-mail".into(),
            "--listen".into(),
            local(ports.mcp_mail),
            "--canonical-url".into(),
            MCP_MAIL_AUDIENCE.into(),
            "--issuer".into(),
            base.clone(),
            "--nextcloud-url".into(),
            base.clone(),
        ],
        &[],
    )?;
    let model_url = match &args.model_url {
        Some(url) => url.clone(),
        None => {
            let mut model_args = vec![
                "fake-model".into(),
                "--listen".into(),
                local(ports.model),
                "--demo".into(),
                "--admin-token-file".into(),
                data_dir.join(MODEL_ADMIN_TOKEN_FILE).display().to_string(),
            ];
            if let Some(script) = &args.model_script {
                model_args.push("--script".into());
                model_args.push(script.display().to_string());
            }
            let model = stack.spawn(exe, "fake-model", &model_args, &[])?;
            let url = format!("http://127.0.0.1:{}/v1", ports.model);
            stack.wait_healthy(&http, model, &format!("{url}/models")).await?;
            url
        }
    };
    let health = |port: u16| format!("http://127.0.0.1:{port}/health");
    stack.wait_healthy(&http, mcp_nextcloud, &health(ports.mcp_nextcloud)).await?;
    register_webhooks(&http, fixture, &base, ports, &webhook_secret, stack.color).await;
    stack.wait_healthy(&http, mcp_mail, &health(ports.mcp_mail)).await?;

    let model = args.model.clone().unwrap_or_else(|| fake_model::MODEL_DEFAULT.to_string());
    let mut model_flags = Vec::new();
    let passed = [
        ("--model-window", args.model_window.map(|n| n.to_string())),
        ("--model-max-tokens", args.model_max_tokens.map(|n| n.to_string())),
        ("--model-timeout-s", args.model_timeout_s.map(|n| n.to_string())),
    ];
    for (flag, value) in passed {
        if let Some(value) = value {
            model_flags.extend([flag.to_string(), value]);
        }
    }
    let orchestrator = stack.spawn(
        exe,
        "orchestrator",
        &[
            "orchestrator".into(),
            "--listen".into(),
            local(ports.orchestrator),
            "--model-url".into(),
            model_url,
            "--model".into(),
            model,
            "--mcp".into(),
            format!(
                "nextcloud=http://127.0.0.1:{}/mcp,mail=http://127.0.0.1:{}/mcp",
                ports.mcp_nextcloud, ports.mcp_mail
            ),
            "--data-dir".into(),
            data_dir.join("orchestrator").display().to_string(),
        ]
        .into_iter()
        .chain(model_flags)
        .collect::<Vec<String>>(),
        &[("TAMEBI_SHARED_SECRET", secret)],
    )?;
    stack.wait_healthy(&http, orchestrator, &health(ports.orchestrator)).await?;
    Ok(())
}

/// Registers the fake's file webhooks toward mcp-nextcloud's index as the
/// fixture's administrator, so edits reach the index at once; without an
/// administrator, or when it fails, the index still reads on its own.
async fn register_webhooks(
    http: &reqwest::Client,
    fixture: &fake_nextcloud::Fixture,
    base: &str,
    ports: Ports,
    secret: &str,
    color: bool,
) {
    let admin = fixture.users.iter().find(|user| user.groups.iter().any(|group| group == "admin"));
    let Some(admin) = admin else {
        say(color, "up", "no administrator in the fixture: webhooks not registered");
        return;
    };
    let password = admin.app_passwords.first().unwrap_or(&admin.password);
    let endpoint =
        format!("http://127.0.0.1:{}{}", ports.mcp_nextcloud, mcp_nextcloud::index::webhook::PATH);
    let registered = mcp_nextcloud::index::webhook::register(
        http,
        base,
        (&admin.uid, password),
        &endpoint,
        secret,
    )
    .await;
    match registered {
        Ok(registered) => say(
            color,
            "up",
            &format!("{} file webhooks registered toward {endpoint}", registered.len()),
        ),
        Err(error) => say(color, "up", &format!("webhooks not registered: {error}")),
    }
}

impl Stack {
    /// Starts `tamebi <args>` with `env` added; secrets travel only to the
    /// children named for them (the model key only to the orchestrator).
    fn spawn(
        &mut self,
        exe: &Path,
        name: &'static str,
        args: &[String],
        env: &[(&str, &str)],
    ) -> anyhow::Result<usize> {
        let mut command = tokio::process::Command::new(exe);
        command.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        for secret in ["TAMEBI_SHARED_SECRET", "TAMEBI_FAKE_MODEL_API_KEY", "TAMEBI_WEBHOOK_SECRET"]
        {
            command.env_remove(secret);
        }
        // In the demo the key would go to the fake model: nobody gets it.
        if name != "orchestrator" || self.demo {
            command.env_remove("TAMEBI_MODEL_API_KEY");
        }
        for (key, value) in env {
            command.env(key, value);
        }
        if !self.color {
            command.env("NO_COLOR", "1");
        }
        // Its own process group, so a terminal's Ctrl-C reaches only `up`,
        // which then stops the children in order.
        command.process_group(0);
        // SAFETY: prctl is async-signal-safe; it makes the child receive
        // SIGTERM if `up` dies without stopping it (killed with SIGKILL).
        // The one stated exception to the workspace's `unsafe_code = "deny"`
        // (with `signal` below): `pre_exec` is unsafe by signature.
        #[cfg(target_os = "linux")]
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let mut child = command.spawn().with_context(|| format!("cannot start {name}"))?;
        let pid = child.id().expect("a child just spawned has a pid");
        let log = Arc::new(Mutex::new(VecDeque::new()));
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        self.readers.push(tokio::spawn(relay(name, stdout, log.clone(), self.color)));
        self.readers.push(tokio::spawn(relay(name, stderr, log.clone(), self.color)));
        let index = self.children.len();
        let exits = self.exits.clone();
        tokio::spawn(async move {
            if let Ok(status) = child.wait().await {
                let _ = exits.send((index, status));
            }
        });
        self.children.push(Child { name, pid, log });
        Ok(index)
    }

    /// Polls `url` until it answers 2xx; fails with the child's last lines
    /// when it exits first or the time runs out.
    async fn wait_healthy(
        &mut self,
        http: &reqwest::Client,
        index: usize,
        url: &str,
    ) -> anyhow::Result<()> {
        let deadline = tokio::time::Instant::now() + HEALTH_TIMEOUT;
        loop {
            if let Ok((exited, status)) = self.exited.try_recv() {
                let child = &mut self.children[exited];
                child.pid = 0;
                settle().await;
                anyhow::bail!(
                    "{} stopped while starting ({status}); its last lines:\n{}",
                    child.name,
                    child.last_lines()
                );
            }
            let answer = http.get(url).send().await;
            if answer.is_ok_and(|response| response.status().is_success()) {
                return Ok(());
            }
            if tokio::time::Instant::now() > deadline {
                let child = &self.children[index];
                anyhow::bail!(
                    "{} did not answer {url} within {} s; its last lines:\n{}",
                    child.name,
                    HEALTH_TIMEOUT.as_secs(),
                    child.last_lines()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// SIGTERM to every running child, up to 5 s for them to exit, then
    /// SIGKILL to the rest; the children's last lines are printed.
    async fn stop(&mut self) {
        for child in self.children.iter().rev().filter(|child| child.pid != 0) {
            signal(child.pid, libc::SIGTERM);
        }
        let deadline = tokio::time::Instant::now() + STOP_TIMEOUT;
        while self.children.iter().any(|child| child.pid != 0) {
            match tokio::time::timeout_at(deadline, self.exited.recv()).await {
                Ok(Some((index, _status))) => self.children[index].pid = 0,
                Ok(None) => break,
                Err(_) => {
                    for child in self.children.iter_mut().filter(|child| child.pid != 0) {
                        say(
                            self.color,
                            "up",
                            &format!("{} did not stop in 5 s: killed", child.name),
                        );
                        signal(child.pid, libc::SIGKILL);
                    }
                    // Reap them, so no zombie outlives `up`.
                    let reap_deadline = tokio::time::Instant::now() + STOP_TIMEOUT;
                    while self.children.iter().any(|child| child.pid != 0) {
                        match tokio::time::timeout_at(reap_deadline, self.exited.recv()).await {
                            Ok(Some((index, _))) => self.children[index].pid = 0,
                            _ => break,
                        }
                    }
                    break;
                }
            }
        }
        for reader in self.readers.drain(..) {
            let _ = tokio::time::timeout(Duration::from_secs(1), reader).await;
        }
    }
}

impl Child {
    fn last_lines(&self) -> String {
        let log = self.log.lock().expect("log lock");
        if log.is_empty() {
            return "  (nothing)".to_string();
        }
        log.iter().map(|line| format!("  {line}")).collect::<Vec<_>>().join("\n")
    }
}

/// Lets the relays print a dead child's last lines before they are read.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(200)).await;
}

fn signal(pid: u32, signal: libc::c_int) {
    let pid = libc::pid_t::try_from(pid).expect("a pid fits pid_t");
    // SAFETY: kill has no memory effects; the pid is a child not yet reaped.
    // The workspace's other stated exception to `unsafe_code = "deny"`.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(pid, signal);
    }
}

async fn relay(
    name: &'static str,
    stream: impl tokio::io::AsyncRead + Unpin,
    log: Arc<Mutex<VecDeque<String>>>,
    color: bool,
) {
    let mut lines = tokio::io::BufReader::new(stream).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        say(color, name, &line);
        let mut log = log.lock().expect("log lock");
        if log.len() == LOG_LINES_KEPT_MAX {
            log.pop_front();
        }
        log.push_back(line);
    }
}

fn say(color: bool, name: &str, line: &str) {
    let mut stdout = std::io::stdout().lock();
    let prefix = format!("[{name}]");
    let _ = if color {
        writeln!(stdout, "\x1b[2m{prefix:<width$}\x1b[0m {line}", width = NAME_WIDTH + 2)
    } else {
        writeln!(stdout, "{prefix:<width$} {line}", width = NAME_WIDTH + 2)
    };
    let _ = stdout.flush();
}

/// The chat page's directory as the fake Nextcloud will read it: absolute,
/// and, for the default run from elsewhere than the repository root, the
/// repository's own `web/dist`.
fn web_dir(web_dir: &Path) -> PathBuf {
    let default = Path::new(fake_nextcloud::app::WEB_DIR_DEFAULT);
    let chosen = if web_dir == default && !Path::new("web/package.json").exists() {
        repository_root().join(default)
    } else {
        web_dir.to_path_buf()
    };
    std::path::absolute(&chosen).unwrap_or(chosen)
}

fn repository_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// Whether the chat page is there; when the default one is missing and npm
/// is installed, builds it first (`npm ci`, `npm run build` in `web/`,
/// their output shown). A failure is said plainly and `up` goes on: the page
/// is then a placeholder naming the command, `tamebi ask` still works.
fn ensure_web_built(web_dir: &Path, args: &UpArgs) -> bool {
    let color = std::io::stdout().is_terminal();
    if web_dir.join(fake_nextcloud::app::SCRIPT).is_file() {
        return true;
    }
    let command = fake_nextcloud::app::BUILD_COMMAND;
    let Some(web) = web_dir.parent().filter(|web| web.join("package.json").is_file()) else {
        say(
            color,
            "up",
            &format!("no chat page in {}: the page will say how to build it", web_dir.display()),
        );
        return false;
    };
    if args.no_web_build {
        say(
            color,
            "up",
            &format!("the chat page is not built (--no-web-build); build it with: {command}"),
        );
        return false;
    }
    let npm_found = std::process::Command::new("npm")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !npm_found {
        say(
            color,
            "up",
            &format!(
                "the chat page is not built and npm is not installed: install Node.js 20+ and run {command}"
            ),
        );
        return false;
    }
    for step in [&["ci", "--no-audit", "--no-fund"][..], &["run", "build"][..]] {
        say(
            color,
            "up",
            &format!("building the chat page: npm --prefix {} {}", web.display(), step.join(" ")),
        );
        let status = std::process::Command::new("npm")
            .arg("--prefix")
            .arg(web)
            .args(step)
            .stdin(Stdio::null())
            .status();
        if !status.is_ok_and(|status| status.success()) {
            say(
                color,
                "up",
                &format!(
                    "building the chat page failed (see above); the page stays a placeholder. Fix it and run {command}"
                ),
            );
            return false;
        }
    }
    web_dir.join(fake_nextcloud::app::SCRIPT).is_file()
}

/// The fixture as given, or, for the default from elsewhere than the
/// repository root, the repository's own demo fixture.
fn fixture_path(fixture: &Path) -> PathBuf {
    if fixture == Path::new(FIXTURE_DEFAULT) && !fixture.exists() {
        let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(FIXTURE_DEFAULT);
        if repository.exists() {
            return repository;
        }
    }
    fixture.to_path_buf()
}

/// Deletes the data directory, refusing one that does not look like ours.
fn remove_data_dir(data_dir: &Path) -> anyhow::Result<()> {
    if !data_dir.exists() {
        return Ok(());
    }
    let empty = std::fs::read_dir(data_dir)
        .with_context(|| format!("cannot read {}", data_dir.display()))?
        .next()
        .is_none();
    anyhow::ensure!(
        empty || data_dir.join(SECRET_FILE).is_file(),
        "--fresh: {} does not look like Tamebi's data directory (no {SECRET_FILE} file in it), so it was left alone; delete it yourself or choose another --data-dir",
        data_dir.display()
    );
    std::fs::remove_dir_all(data_dir)
        .with_context(|| format!("--fresh: cannot delete {}", data_dir.display()))
}

/// Creates the data directory 0700 whatever the umask, or tightens one
/// other accounts can enter: it holds the shared secret and the databases
/// (whose files the services create 0600).
fn private_dir(data_dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    if !data_dir.exists() {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(data_dir)?;
    }
    let mode = std::fs::metadata(data_dir)?.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        std::fs::set_permissions(data_dir, std::fs::Permissions::from_mode(0o700))?;
        tracing::warn!(
            path = %data_dir.display(),
            found = format!("{mode:o}"),
            "made the data directory private (0700)"
        );
    }
    Ok(())
}

/// The secret from the data directory, made (mode 0600) on the first run.
fn shared_secret(data_dir: &Path) -> anyhow::Result<String> {
    let path = data_dir.join(SECRET_FILE);
    if path.exists() {
        let secret = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?
            .trim()
            .to_string();
        anyhow::ensure!(
            secret.len() >= 32,
            "{} holds fewer than 32 characters: delete it (or run with --fresh) and a new one is made",
            path.display()
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("cannot make {} private", path.display()))?;
        return Ok(secret);
    }
    let secret = random_hex(32)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    writeln!(file, "{secret}").with_context(|| format!("cannot write {}", path.display()))?;
    Ok(secret)
}

/// `byte_count` random bytes from the kernel, as hex.
pub fn random_hex(byte_count: usize) -> anyhow::Result<String> {
    use std::io::Read as _;
    let mut bytes = vec![0u8; byte_count];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut bytes))
        .context("cannot read /dev/urandom")?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

fn print_banner(
    base: &str,
    fixture: &fake_nextcloud::Fixture,
    data_dir: &Path,
    args: &UpArgs,
    ports: Ports,
    web_built: bool,
) {
    let model = match &args.model_url {
        Some(url) => format!("{} at {url}", args.model.as_deref().unwrap_or_default()),
        None => format!(
            "the fake model's demo answers (no language model) on 127.0.0.1:{}",
            ports.model
        ),
    };
    let url_flag = if ports.nextcloud == 8080 { String::new() } else { format!(" --url {base}") };
    let page = if web_built {
        "the chat page".to_string()
    } else {
        format!("the chat page is not built: run {}", fake_nextcloud::app::BUILD_COMMAND)
    };
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(
        stdout,
        "\nTamebi is up.\n\
         Open {base}/apps/tamebi/ ({page}).\n\
         Ask from a terminal:\n  \
         tamebi ask{url_flag} --user alice --password alice-demo-password \"Quel est le budget prévisionnel d'Apollo ?\"\n\
         Model: {model}\n\
         Users (uid / password):"
    );
    for user in &fixture.users {
        let _ = writeln!(stdout, "  {:<10} {}", user.uid, user.password);
    }
    let _ = writeln!(
        stdout,
        "Data: {} (kept between runs; --fresh starts over)\nPress Ctrl-C to stop.",
        data_dir.display()
    );
    let _ = stdout.flush();
}
