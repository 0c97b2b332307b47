//! The `tamebi` binary: one subcommand per service, plus the tools around
//! them. It is glue: parsing flags, starting a library's server, printing
//! where it listens. No behaviour lives here.

mod ask;
mod doctor;
mod erase;
mod eval_command;
mod index_commands;
mod scenario_command;
mod up;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "tamebi",
    version,
    about = "Tamebi: an AI assistant inside Nextcloud that can only see what the user can see."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the simulated Nextcloud (OIDC, WebDAV, CalDAV, CardDAV, OCS, Deck,
    /// webhooks, converter) seeded from a fixture file.
    FakeNextcloud {
        /// The fixture to seed from (TOML).
        #[arg(long, default_value = "scenarios/fixtures/demo.toml")]
        fixture: PathBuf,
        /// Address of the Nextcloud listener.
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: SocketAddr,
        /// Address of the OnlyOffice-style converter listener.
        #[arg(long, default_value = "127.0.0.1:8083")]
        converter_listen: SocketAddr,
        /// Where the Tamebi app's chat proxy forwards to (the orchestrator).
        #[arg(long, env = "TAMEBI_ORCHESTRATOR_URL", default_value = "http://127.0.0.1:9100")]
        orchestrator_url: String,
        /// The secret the app shares with the orchestrator; without it the
        /// chat proxy answers 502 (the rest of the fake works).
        #[arg(long, env = "TAMEBI_SHARED_SECRET", hide_env_values = true)]
        shared_secret: Option<String>,
        /// Where the built chat page is read from (docs/web.md); without it
        /// the page is a placeholder naming the build command.
        #[arg(long, env = "TAMEBI_WEB_DIR", default_value = fake_nextcloud::app::WEB_DIR_DEFAULT)]
        web_dir: PathBuf,
        /// Turn on the test-only admin routes (/__fake/: faults, clock, the
        /// app's settings) behind a fresh random token written to this file
        /// (mode 0600), sent as the x-tamebi-fake-admin header. Without it
        /// they do not exist.
        #[arg(long)]
        admin_token_file: Option<PathBuf>,
    },
    /// Run the scripted OpenAI-compatible model server (tests, scenarios,
    /// and the demo without a real model).
    FakeModel(FakeModelArgs),
    /// Run the orchestrator: the agent loop, the model client and the chat,
    /// audit and memory stores, behind the API the Nextcloud app signs for.
    Orchestrator(Box<OrchestratorArgs>),
    /// Run the MCP server for files, calendar, contacts and Deck.
    McpNextcloud(Box<McpNextcloudArgs>),
    /// Run the MCP server for mail (search, read, compose a preview) through
    /// the Tamebi app's mail contract.
    McpMail(McpMailArgs),
    /// Set up Nextcloud's webhooks toward mcp-nextcloud's index.
    Webhooks {
        #[command(subcommand)]
        command: WebhooksCommand,
    },
    /// Erase a user's conversations and memory (the audit is kept), or
    /// purge the facts the agent wrote.
    Erase(erase::EraseArgs),
    /// Look at mcp-nextcloud's passage index (index.db) from outside.
    Index {
        #[command(subcommand)]
        command: IndexCommand,
    },
    /// Start the whole stack on loopback, each service its own process:
    /// fake Nextcloud, MCP servers, fake model (demo) and orchestrator.
    Up(up::UpArgs),
    /// Ask the chat a question from the terminal, the way the browser does.
    Ask(ask::AskArgs),
    /// Run scenario files (scenarios/*.toml) against the whole stack.
    Scenario {
        #[command(subcommand)]
        command: scenario_command::ScenarioCommand,
    },
    /// Measure how well a model does the job: the task suite (eval/tasks.toml)
    /// on fresh in-process stacks, checked on what each turn left behind.
    Eval(Box<eval_command::EvalArgs>),
    /// Check a configuration against Nextcloud and the services: one finding
    /// per check, with the exact fix; exit 1 on any ERROR.
    Doctor(Box<doctor::DoctorArgs>),
}

#[derive(Debug, Subcommand)]
enum WebhooksCommand {
    /// Register NodeWritten/Renamed/Deleted webhooks with Nextcloud's
    /// webhook_listeners app (admin account needed); running it again
    /// changes nothing.
    Register(WebhooksRegisterArgs),
}

#[derive(Debug, clap::Args)]
struct WebhooksRegisterArgs {
    /// Nextcloud's URL as seen from here.
    #[arg(long, env = "NEXTCLOUD_URL", default_value = "http://127.0.0.1:8080")]
    nextcloud_url: String,
    /// Where Nextcloud calls mcp-nextcloud's webhook endpoint (reachable
    /// from Nextcloud's background jobs).
    #[arg(
        long,
        env = "TAMEBI_WEBHOOK_ENDPOINT",
        default_value = "http://127.0.0.1:9101/webhooks/nextcloud"
    )]
    endpoint: String,
    /// The shared secret, the same as mcp-nextcloud's --webhook-secret
    /// (prefer the environment variable: flags show in `ps`).
    #[arg(long, env = "TAMEBI_WEBHOOK_SECRET", hide_env_values = true)]
    secret: String,
    /// A Nextcloud administrator (webhook registration is admin-only).
    #[arg(long, env = "NEXTCLOUD_ADMIN_USER")]
    admin_user: String,
    /// That administrator's password or app password.
    #[arg(long, env = "NEXTCLOUD_ADMIN_PASSWORD", hide_env_values = true)]
    admin_password: String,
}

#[derive(Debug, Subcommand)]
enum IndexCommand {
    /// Documents known, read, pending and failed; passages; size on disk.
    Status(IndexStatusArgs),
    /// Searches classified: answered, holes in the index, permission
    /// boundaries, runs of rephrasings.
    Report(IndexReportArgs),
}

#[derive(Debug, clap::Args)]
struct IndexDbArg {
    /// The index file mcp-nextcloud writes.
    #[arg(long, env = "TAMEBI_INDEX_DB", default_value = "data/index.db")]
    index_db: PathBuf,
}

#[derive(Debug, clap::Args)]
struct IndexStatusArgs {
    #[command(flatten)]
    index_db: IndexDbArg,
    /// Reprint every interval with the reading rate and an estimate of the
    /// time left, until Ctrl-C.
    #[arg(long, conflicts_with = "json")]
    watch: bool,
    /// Seconds between two looks while watching.
    #[arg(long, requires = "watch", default_value = "2", value_parser = index_commands::parse_interval)]
    interval: std::time::Duration,
    /// Stop watching once nothing is pending.
    #[arg(long, requires = "watch")]
    until_idle: bool,
    /// Print the numbers as JSON, once.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct IndexReportArgs {
    #[command(flatten)]
    index_db: IndexDbArg,
    /// Only searches this recent: 30m, 24h, 7d (default: all recorded).
    #[arg(long, value_parser = index_commands::parse_since)]
    since: Option<index_commands::Since>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct McpNextcloudArgs {
    /// Address to listen on.
    #[arg(long, env = "TAMEBI_MCP_NEXTCLOUD_LISTEN", default_value = "127.0.0.1:9101")]
    listen: SocketAddr,
    /// This server's canonical URL: the audience its tokens must carry.
    #[arg(long, env = "TAMEBI_MCP_NEXTCLOUD_URL", default_value = "http://127.0.0.1:9101/mcp")]
    canonical_url: String,
    #[command(flatten)]
    server: McpServerArgs,
    /// How to authenticate toward Nextcloud: second-token (default; a
    /// Nextcloud-audience token of the same user), single-token (forward this
    /// server's token; needs user_oidc's audience check off) or app-password.
    #[arg(long, env = "TAMEBI_UPSTREAM_AUTH", default_value = "second-token")]
    upstream: UpstreamMode,
    /// The passage index behind files_grep; `:memory:` keeps it in memory
    /// (lost on exit).
    #[arg(long, env = "TAMEBI_INDEX_DB", default_value = "data/index.db")]
    index_db: PathBuf,
    /// Shared secret Nextcloud's webhooks carry; unset: no webhook endpoint.
    #[arg(long, env = "TAMEBI_WEBHOOK_SECRET", hide_env_values = true)]
    webhook_secret: Option<String>,
    /// The OnlyOffice document server (for DOC, RTF, XLS(X), PPT(X), EPUB);
    /// unset: those documents stay unread.
    #[arg(long, env = "ONLYOFFICE_URL")]
    converter_url: Option<String>,
    /// The document server's JWT secret (its JWT_SECRET).
    #[arg(long, env = "ONLYOFFICE_JWT_SECRET", hide_env_values = true)]
    converter_secret: Option<String>,
    /// Where documents are lent to the document server (one-shot URLs): an
    /// internal address, never a public one.
    #[arg(long, env = "TAMEBI_LEND_LISTEN", default_value = "127.0.0.1:9110")]
    lend_listen: SocketAddr,
    /// The base URL the document server reaches the lend listener at
    /// (default: http://<lend-listen>).
    #[arg(long, env = "TAMEBI_LEND_URL")]
    lend_url: Option<String>,
    /// An OpenAI-compatible embeddings API base (Ollama, llama.cpp, vLLM,
    /// TEI; e.g. http://embeddings:8080/v1) that files_grep's passages are
    /// embedded by. It receives passage text: keep it inside the deployment.
    /// Unset (default): no embeddings.
    #[arg(long, env = "TAMEBI_EMBEDDINGS_URL", requires = "embeddings_model")]
    embeddings_url: Option<String>,
    /// The model named in every embeddings request and stored with every
    /// vector; changing it re-embeds the passages in background passes.
    #[arg(long, env = "TAMEBI_EMBEDDINGS_MODEL")]
    embeddings_model: Option<String>,
    /// Put before each search query sent to the embeddings model, for
    /// models trained with one (E5: "query: ", nomic-embed:
    /// "search_query: "). Default: none.
    #[arg(long, env = "TAMEBI_EMBEDDINGS_QUERY_PREFIX", default_value = "")]
    embeddings_query_prefix: String,
    /// Put before each passage sent to the embeddings model (E5:
    /// "passage: ", nomic-embed: "search_document: "); stored with the
    /// vectors, so changing it embeds again. Default: none.
    #[arg(long, env = "TAMEBI_EMBEDDINGS_PASSAGE_PREFIX", default_value = "")]
    embeddings_passage_prefix: String,
    /// How files_grep combines words and meaning when embeddings are on:
    /// words, meaning-fallback, fused-fallback, fused or meaning
    /// (docs/decisions.md has the measurements behind the default).
    #[arg(long, env = "TAMEBI_EMBEDDINGS_FUSION", default_value = "fused", value_parser = parse_fusion)]
    embeddings_fusion: mcp_nextcloud::index::search::Fusion,
}

fn parse_fusion(name: &str) -> Result<mcp_nextcloud::index::search::Fusion, String> {
    use mcp_nextcloud::index::search::Fusion;
    Fusion::parse(name).ok_or_else(|| {
        format!("{name:?} is not a fusion mode; use one of {}", Fusion::names().join(", "))
    })
}

#[derive(Debug, clap::Args)]
struct McpMailArgs {
    /// Address to listen on.
    #[arg(long, env = "TAMEBI_MCP_MAIL_LISTEN", default_value = "127.0.0.1:9102")]
    listen: SocketAddr,
    /// This server's canonical URL: the audience its tokens must carry.
    #[arg(long, env = "TAMEBI_MCP_MAIL_URL", default_value = "http://127.0.0.1:9102/mcp")]
    canonical_url: String,
    #[command(flatten)]
    server: McpServerArgs,
}

/// What both MCP servers are told alike: whom they trust, where Nextcloud
/// is, which audience the user's Nextcloud token carries, which Host names
/// they answer to.
#[derive(Debug, clap::Args)]
struct McpServerArgs {
    /// The OIDC issuer, compared to `iss` exactly (Nextcloud's browser-facing URL).
    #[arg(long, env = "TAMEBI_OIDC_ISSUER", default_value = "http://127.0.0.1:8080")]
    issuer: String,
    /// Nextcloud's internal URL, where DAV, OCS and the Tamebi app's routes
    /// are reached.
    #[arg(long, env = "NEXTCLOUD_URL", default_value = "http://127.0.0.1:8080")]
    nextcloud_url: String,
    /// Where the issuer's keys are; default: the oidc app's JWKS on the internal URL.
    #[arg(long, env = "TAMEBI_OIDC_JWKS_URL")]
    jwks_url: Option<String>,
    /// The audience of the Nextcloud token, the one spent toward Nextcloud
    /// (user_oidc's provider client id).
    #[arg(long, env = "TAMEBI_NEXTCLOUD_AUDIENCE", default_value = "nextcloud")]
    nextcloud_audience: String,
    /// Extra host names accepted in the Host header (container names in Compose).
    #[arg(
        long = "allowed-host",
        visible_alias = "allowed-hosts",
        env = "TAMEBI_MCP_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    allowed_hosts: Vec<String>,
}

impl McpServerArgs {
    /// The server's `mcp_kit::ServerConfig`: loopback names always
    /// accepted as hosts, and an empty variable (`TAMEBI_OIDC_JWKS_URL=` in
    /// a Compose file) read as unset.
    fn config(self, listen: SocketAddr, canonical_url: String) -> mcp_kit::ServerConfig {
        let mut allowed_hosts =
            vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string()];
        allowed_hosts.extend(self.allowed_hosts.into_iter().filter(|host| !host.is_empty()));
        mcp_kit::ServerConfig {
            listen,
            canonical_url,
            issuer: self.issuer,
            jwks_url: self.jwks_url.filter(|url| !url.trim().is_empty()),
            nextcloud_url: self.nextcloud_url,
            allowed_hosts,
            clock: Default::default(),
        }
    }
}

#[derive(Debug, clap::Args)]
struct FakeModelArgs {
    /// Address to listen on; the API is under /v1.
    #[arg(long, env = "TAMEBI_FAKE_MODEL_LISTEN", default_value = "127.0.0.1:8090")]
    listen: SocketAddr,
    /// What each turn returns (TOML; see docs/fake-model.md). Without it,
    /// every request gets a text saying no rule matched (or, with --demo,
    /// the demo's answer).
    #[arg(long)]
    script: Option<PathBuf>,
    /// Answer requests no script rule matches like a minimal assistant:
    /// search with files_grep, then quote the passages found.
    #[arg(long)]
    demo: bool,
    /// Require this bearer key on /v1 (prefer the environment variable:
    /// flags show in `ps`).
    #[arg(long, env = "TAMEBI_FAKE_MODEL_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// Turn on the test-only admin routes (/__fake/: script, faults, the
    /// recorded requests) behind a fresh random token written to this file
    /// (mode 0600), sent as the x-tamebi-fake-admin header. Without it they
    /// do not exist.
    #[arg(long)]
    admin_token_file: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct OrchestratorArgs {
    /// Address to listen on (only the Nextcloud app should reach it).
    #[arg(long, env = "TAMEBI_ORCHESTRATOR_LISTEN", default_value = "127.0.0.1:9100")]
    listen: SocketAddr,
    /// The secret shared with the Nextcloud app, at least 32 bytes (prefer
    /// the environment variable or --secret-file: flags show in `ps`).
    #[arg(long, env = "TAMEBI_SHARED_SECRET", hide_env_values = true)]
    secret: Option<String>,
    /// A file holding the shared secret (trailing newline ignored).
    #[arg(long, env = "TAMEBI_SHARED_SECRET_FILE")]
    secret_file: Option<PathBuf>,
    /// The model API root including its version (OpenAI-compatible).
    #[arg(long, env = "TAMEBI_MODEL_URL", default_value = "http://127.0.0.1:8090/v1")]
    model_url: String,
    /// The model name sent to the provider.
    #[arg(long, env = "TAMEBI_MODEL", default_value = "fake-model")]
    model: String,
    /// The provider's API key, if it needs one (environment variable only
    /// in production: flags show in `ps`).
    #[arg(long, env = "TAMEBI_MODEL_API_KEY", hide_env_values = true)]
    model_api_key: Option<String>,
    /// The model's context window in tokens; conversations are summarised
    /// at about half of it. Unset: what the provider says it runs with
    /// (vLLM, llama.cpp, LM Studio), else 32768.
    #[arg(long, env = "TAMEBI_MODEL_WINDOW")]
    model_window: Option<usize>,
    /// The most tokens one answer may take (sent as `max_tokens`); 0 sends
    /// no bound. An answer that reaches it ends with a note saying so.
    #[arg(long, env = "TAMEBI_MODEL_MAX_TOKENS", default_value_t = orchestrator::model::MAX_TOKENS_DEFAULT)]
    model_max_tokens: u32,
    /// Seconds the model may stay silent (before its first token included)
    /// before the answer is given up as timed out. A local model on a few
    /// CPU cores can need minutes to read a long prompt.
    #[arg(long, env = "TAMEBI_MODEL_TIMEOUT", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=3600))]
    model_timeout_s: u64,
    /// MCP servers as name=URL, repeatable or comma-separated. Each gets the
    /// user's token for audience `mcp-<name>`.
    #[arg(
        long = "mcp",
        env = "TAMEBI_MCP_SERVERS",
        value_delimiter = ',',
        default_value = "nextcloud=http://127.0.0.1:9101/mcp,mail=http://127.0.0.1:9102/mcp"
    )]
    mcp: Vec<String>,
    /// In app-password mode, the MCP servers (by name, repeatable or
    /// comma-separated) that receive the app password the user saved in the
    /// Tamebi app: `nextcloud`, whose --upstream is app-password. No other
    /// server ever sees it.
    #[arg(
        long = "app-password-server",
        env = "TAMEBI_APP_PASSWORD_SERVERS",
        value_delimiter = ','
    )]
    app_password_servers: Vec<String>,
    /// Where chat.db, audit.db and memory.db are kept.
    #[arg(long, env = "TAMEBI_DATA_DIR", default_value = "data/orchestrator")]
    data_dir: PathBuf,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum UpstreamMode {
    SecondToken,
    SingleToken,
    AppPassword,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    if let Err(error) = runtime.block_on(run(cli)) {
        // The whole chain on one line, without a backtrace: these messages
        // are written for operators.
        eprintln!("error: {error:#}");
        std::process::exit(1);
    }
    Ok(())
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::FakeNextcloud {
            fixture,
            listen,
            converter_listen,
            orchestrator_url,
            shared_secret,
            web_dir,
            admin_token_file,
        } => {
            let app = fake_nextcloud::AppConfig {
                orchestrator_url: Some(orchestrator_url),
                shared_secret: shared_secret
                    .filter(|secret| !secret.is_empty())
                    .map(String::into_bytes),
                web_dir,
                ..fake_nextcloud::AppConfig::default()
            };
            fake_nextcloud_command(fixture, listen, converter_listen, app, admin_token_file).await
        }
        Command::FakeModel(args) => fake_model_command(args).await,
        Command::Orchestrator(args) => orchestrator_command(*args).await,
        Command::McpNextcloud(args) => mcp_nextcloud_command(*args).await,
        Command::McpMail(args) => mcp_mail_command(args).await,
        Command::Webhooks { command: WebhooksCommand::Register(args) } => {
            webhooks_register_command(args).await
        }
        Command::Index { command: IndexCommand::Status(args) } => {
            let watch = args.watch.then_some(index_commands::Watch {
                interval: args.interval,
                until_idle: args.until_idle,
            });
            let options = index_commands::StatusOptions { json: args.json, watch };
            index_commands::status(&args.index_db.index_db, options).await
        }
        Command::Doctor(args) => doctor::run(*args).await,
        Command::Erase(args) => erase::run(args).await,
        Command::Index { command: IndexCommand::Report(args) } => {
            index_commands::report(&args.index_db.index_db, args.since, args.json).await
        }
        Command::Up(args) => up::up(args).await,
        Command::Ask(args) => ask::ask(args).await,
        Command::Scenario { command } => scenario_command::run(command).await,
        Command::Eval(args) => eval_command::run(*args).await,
    }
}

async fn fake_nextcloud_command(
    fixture_path: PathBuf,
    listen: SocketAddr,
    converter_listen: SocketAddr,
    app: fake_nextcloud::AppConfig,
    admin_token_file: Option<PathBuf>,
) -> anyhow::Result<()> {
    let fixture = fake_nextcloud::Fixture::load(&fixture_path)?;
    let app_line = match (&app.orchestrator_url, &app.shared_secret) {
        (Some(url), Some(_)) => format!("/apps/tamebi/ → the orchestrator at {url}"),
        (_, None) => "/apps/tamebi/ (chat proxy off: set TAMEBI_SHARED_SECRET)".to_string(),
        (None, Some(_)) => "/apps/tamebi/ (chat proxy off: no orchestrator URL)".to_string(),
    };
    let admin = match admin_token_file {
        Some(_) => fake_nextcloud::Admin::RandomToken,
        None => fake_nextcloud::Admin::Off,
    };
    let config = fake_nextcloud::Config { listen, converter_listen, admin };
    let fake = match fake_nextcloud::FakeNextcloud::start_with_app(&fixture, config, app).await {
        Ok(fake) => fake,
        Err(fake_nextcloud::StartError::Listen { address, source })
            if source.kind() == std::io::ErrorKind::AddrInUse =>
        {
            anyhow::bail!(
                "{address} is already in use: stop whatever listens there, or choose another address with --listen / --converter-listen"
            );
        }
        Err(error) => return Err(error.into()),
    };
    let admin_line = write_admin_token(admin_token_file.as_deref(), fake.admin_token())?;
    let base = fake.base_url().to_string();
    println!("Fake Nextcloud is running.");
    println!("  Nextcloud:   {base}");
    println!("  WebDAV:      {base}/remote.php/dav/files/<uid>/");
    println!("  CalDAV:      {base}/remote.php/dav/calendars/<uid>/");
    println!("  OIDC:        {base}/index.php/.well-known/openid-configuration");
    println!("  Converter:   {}/converter", fake.converter_url());
    println!("  Tamebi app:  {app_line}");
    println!("  Admin:       {base}/__fake/ {admin_line}");
    println!("  Fixture:     {}", fixture_path.display());
    println!("Users (uid / password / app password):");
    for user in &fixture.users {
        println!(
            "  {:<10} {:<20} {}",
            user.uid,
            user.password,
            user.app_passwords.first().map(String::as_str).unwrap_or("-")
        );
    }
    println!("Press Ctrl-C to stop.");
    tokio::signal::ctrl_c().await.context("cannot listen for Ctrl-C")?;
    fake.shutdown().await;
    Ok(())
}

/// Writes a fake's admin token to the file named on its command line (mode
/// 0600, whatever the umask: only this account may steer the fake), and
/// says how the admin routes can be reached.
fn write_admin_token(
    path: Option<&std::path::Path>,
    token: Option<&str>,
) -> anyhow::Result<String> {
    use std::io::Write as _;
    use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
    let (Some(path), Some(token)) = (path, token) else {
        return Ok("off (--admin-token-file turns them on)".to_string());
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot write the admin token to {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("cannot make {} private", path.display()))?;
    writeln!(file, "{token}")
        .with_context(|| format!("cannot write the admin token to {}", path.display()))?;
    Ok(format!("(token in {}, header x-tamebi-fake-admin)", path.display()))
}

async fn fake_model_command(args: FakeModelArgs) -> anyhow::Result<()> {
    let script = match &args.script {
        Some(path) => fake_model::Script::load(path)?,
        None => fake_model::Script::default(),
    };
    let rule_count = script.rule_count();
    // An empty variable (`TAMEBI_FAKE_MODEL_API_KEY=` in a Compose file)
    // means no key.
    let api_key = args.api_key.filter(|key| !key.trim().is_empty());
    let config = fake_model::Config {
        listen: args.listen,
        script,
        demo: args.demo,
        api_key: api_key.clone(),
        admin: match args.admin_token_file {
            Some(_) => fake_model::Admin::RandomToken,
            None => fake_model::Admin::Off,
        },
        ..fake_model::Config::default()
    };
    let fake = match fake_model::FakeModel::start(config).await {
        Ok(fake) => fake,
        Err(fake_model::StartError::Listen { address, source })
            if source.kind() == std::io::ErrorKind::AddrInUse =>
        {
            anyhow::bail!("{address} is already in use: choose another address with --listen");
        }
        Err(error) => return Err(error.into()),
    };
    let script_state = match &args.script {
        Some(path) => format!(
            "{} ({rule_count} rule{})",
            path.display(),
            if rule_count == 1 { "" } else { "s" }
        ),
        None => "none".to_string(),
    };
    let unmatched = if args.demo {
        "the demo answers (files_grep, then quotes with citations)"
    } else {
        "a text saying no script rule matched"
    };
    println!("Fake model is running.");
    println!("  API base:    {}", fake.api_base());
    println!("  Model:       {}", fake_model::MODEL_DEFAULT);
    println!("  Script:      {script_state}");
    println!("  Unmatched:   {unmatched}");
    println!(
        "  API key:     {}",
        if api_key.is_some() { "required (Authorization: Bearer)" } else { "none" }
    );
    let admin_line = write_admin_token(args.admin_token_file.as_deref(), fake.admin_token())?;
    println!("  Admin:       {}/__fake/ (script, faults, requests) {admin_line}", fake.url());
    println!("Press Ctrl-C to stop.");
    tokio::signal::ctrl_c().await.context("cannot listen for Ctrl-C")?;
    fake.shutdown().await;
    Ok(())
}

async fn orchestrator_command(args: OrchestratorArgs) -> anyhow::Result<()> {
    let secret = match (&args.secret, &args.secret_file) {
        (Some(secret), None) => secret.clone(),
        (None, Some(path)) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the shared secret from {}", path.display()))?
            .trim_end_matches(['\r', '\n'])
            .to_string(),
        (Some(_), Some(_)) => {
            anyhow::bail!("give the shared secret once: --secret or --secret-file")
        }
        (None, None) => anyhow::bail!(
            "the orchestrator needs the secret it shares with the Nextcloud app: set TAMEBI_SHARED_SECRET (at least 32 bytes, e.g. `openssl rand -hex 32`) or --secret-file"
        ),
    };
    let mut servers = Vec::new();
    for entry in args.mcp.iter().map(|entry| entry.trim()).filter(|entry| !entry.is_empty()) {
        let Some((name, url)) = entry.split_once('=') else {
            anyhow::bail!(
                "--mcp {entry:?}: expected name=URL, e.g. nextcloud=http://127.0.0.1:9101/mcp"
            );
        };
        servers.push(orchestrator::mcp::ServerConfig {
            name: name.trim().into(),
            url: url.trim().into(),
        });
    }
    for name in &args.app_password_servers {
        anyhow::ensure!(
            servers.iter().any(|server| &server.name == name),
            "--app-password-server {name:?} names no server of --mcp"
        );
    }
    let mut model = orchestrator::model::ModelConfig::new(&args.model_url, &args.model);
    model.api_key = args
        .model_api_key
        .filter(|key| !key.trim().is_empty())
        .map(orchestrator::model::ApiKey::new);
    model.max_tokens = (args.model_max_tokens > 0).then_some(args.model_max_tokens);
    model.read_timeout_ms = args.model_timeout_s * 1000;
    let (window_tokens, window_source) = match args.model_window {
        Some(window) => (window, "--model-window"),
        None => {
            let asked = orchestrator::model::ModelClient::new(model.clone())?;
            match asked.context_window().await {
                Some(window) => (window, "the provider"),
                None => (orchestrator::service::WINDOW_TOKENS_DEFAULT, "the default"),
            }
        }
    };
    let config = orchestrator::service::Config {
        listen: args.listen,
        secret: secret.into_bytes(),
        model,
        window_tokens,
        servers: servers.clone(),
        app_password_servers: args.app_password_servers.clone(),
        data_dir: Some(args.data_dir.clone()),
    };
    let service = orchestrator::service::Orchestrator::start(config).await?;
    println!("Orchestrator is running.");
    println!("  API:         {}/api/chat (signed by the Nextcloud app)", service.url());
    println!("  Health:      {}/health", service.url());
    println!("  Model:       {} at {}", args.model, args.model_url);
    println!("  Window:      {window_tokens} tokens ({window_source})");
    for server in &servers {
        println!(
            "  MCP:         {} at {} (token audience mcp-{})",
            server.name, server.url, server.name
        );
    }
    println!("  Data:        {}", args.data_dir.display());
    println!("Press Ctrl-C to stop.");
    tokio::signal::ctrl_c().await.context("cannot listen for Ctrl-C")?;
    service.shutdown().await;
    Ok(())
}

/// The environment variable holding the embeddings endpoint's bearer key.
const EMBEDDINGS_KEY_VARIABLE: &str = "TAMEBI_EMBEDDINGS_KEY";

async fn mcp_nextcloud_command(args: McpNextcloudArgs) -> anyhow::Result<()> {
    let upstream = match args.upstream {
        UpstreamMode::SecondToken => mcp_nextcloud::UpstreamAuth::SecondToken {
            nextcloud_audience: args.server.nextcloud_audience.clone(),
        },
        UpstreamMode::SingleToken => {
            tracing::warn!(
                "single-token mode: the token addressed to this server is forwarded to Nextcloud, which must accept any audience"
            );
            mcp_nextcloud::UpstreamAuth::SingleToken
        }
        UpstreamMode::AppPassword => mcp_nextcloud::UpstreamAuth::AppPassword,
    };
    // An empty variable (`ONLYOFFICE_URL=` in a Compose file) means unset.
    let set = |value: Option<String>| value.filter(|value| !value.trim().is_empty());
    let index_path =
        (args.index_db.as_os_str() != index_commands::IN_MEMORY).then_some(args.index_db);
    let embeddings = match (set(args.embeddings_url), set(args.embeddings_model)) {
        (Some(url), Some(model)) => Some(mcp_nextcloud::index::embed::EmbeddingsConfig {
            url,
            model,
            // A key only from the environment: flags show in `ps`.
            key: set(std::env::var(EMBEDDINGS_KEY_VARIABLE).ok()),
            query_prefix: args.embeddings_query_prefix,
            passage_prefix: args.embeddings_passage_prefix,
        }),
        (Some(_), None) => anyhow::bail!(
            "--embeddings-url needs --embeddings-model (TAMEBI_EMBEDDINGS_MODEL): the model's name is stored with every vector"
        ),
        _ => None,
    };
    let index = mcp_nextcloud::index::IndexConfig {
        path: index_path.clone(),
        webhook_secret: set(args.webhook_secret),
        limits: Default::default(),
        embeddings,
        fusion: args.embeddings_fusion,
    };
    let converter = set(args.converter_url).map(|url| mcp_nextcloud::convert::ConverterConfig {
        url,
        secret: set(args.converter_secret),
        lend_listen: args.lend_listen,
        lend_url: set(args.lend_url),
    });
    if let Some(converter) = &converter {
        if converter.secret.is_none() {
            tracing::warn!(
                converter = %converter.url,
                "THE CONVERTER HAS NO JWT SECRET (--converter-secret / ONLYOFFICE_JWT_SECRET): a document server with JWT enabled (OnlyOffice's default) refuses every conversion; DOC, RTF, XLS(X), PPT(X) and EPUB files then stay pending in the index until this is fixed"
            );
        }
        if converter.lend_url.is_none() && converter.lend_listen.ip().is_loopback() {
            tracing::warn!(
                lend_listen = %converter.lend_listen,
                "no --lend-url: the document server is told to fetch documents from a loopback address, which it reaches only if it runs on this host"
            );
        }
    }
    let config = mcp_nextcloud::Config {
        server: args.server.config(args.listen, args.canonical_url),
        upstream,
        index,
        converter,
    };
    let server = match mcp_nextcloud::McpNextcloud::start(config.clone()).await {
        Ok(server) => server,
        Err(mcp_nextcloud::StartError::Listen(mcp_kit::ListenError { address, source }))
            if source.kind() == std::io::ErrorKind::AddrInUse =>
        {
            let flag = match &config.converter {
                Some(converter) if converter.lend_listen == address => "--lend-listen",
                _ => "--listen",
            };
            anyhow::bail!("{address} is already in use: choose another address with {flag}");
        }
        Err(mcp_nextcloud::StartError::Index(error)) => {
            let place = match &index_path {
                Some(path) => path.display().to_string(),
                None => index_commands::IN_MEMORY.to_string(),
            };
            anyhow::bail!(
                "cannot open the index at {place}: {error}; choose another file with --index-db (or TAMEBI_INDEX_DB)"
            );
        }
        Err(error) => return Err(error.into()),
    };
    let index_place = match &index_path {
        Some(path) => {
            std::fs::canonicalize(path).unwrap_or_else(|_| path.clone()).display().to_string()
        }
        None => "in memory (lost on exit; --index-db names a file)".to_string(),
    };
    let webhooks = match &config.index.webhook_secret {
        Some(_) => format!("{}{}", server.url(), mcp_nextcloud::index::webhook::PATH),
        None => "off (no --webhook-secret)".to_string(),
    };
    let converter_state = match (&config.converter, server.index().converter()) {
        (Some(converter_config), Some(converter)) => format!(
            "{} ({}), lending on {} as {}",
            converter_config.url,
            match converter_config.secret {
                Some(_) => "requests signed",
                None => "NO SECRET: requests unsigned",
            },
            converter.lend_address(),
            converter_config
                .lend_url
                .clone()
                .unwrap_or_else(|| format!("http://{}", converter.lend_address()))
        ),
        _ => "off (no --converter-url): DOC, RTF, XLS(X), PPT(X), EPUB stay unread".to_string(),
    };
    tracing::info!(index = %index_place, %webhooks, converter = %converter_state, "files_grep index");
    println!("mcp-nextcloud is running.");
    println!("  MCP endpoint:  {}{}", server.url(), config.server.mcp_path());
    println!("  Audience:      {}", config.server.canonical_url);
    println!("  Issuer:        {}", config.server.issuer);
    println!("  Nextcloud:     {}", config.server.nextcloud_url);
    println!("  Index:         {index_place}");
    println!("  Webhooks:      {webhooks}");
    println!("  Converter:     {converter_state}");
    println!("Press Ctrl-C to stop.");
    tokio::signal::ctrl_c().await.context("cannot listen for Ctrl-C")?;
    server.shutdown().await;
    Ok(())
}

async fn mcp_mail_command(args: McpMailArgs) -> anyhow::Result<()> {
    let nextcloud_audience = args.server.nextcloud_audience.clone();
    let config = mcp_mail::Config {
        server: args.server.config(args.listen, args.canonical_url),
        nextcloud_audience,
    };
    let server = match mcp_mail::McpMail::start(config.clone()).await {
        Ok(server) => server,
        Err(mcp_kit::ListenError { address, source })
            if source.kind() == std::io::ErrorKind::AddrInUse =>
        {
            anyhow::bail!("{address} is already in use: choose another address with --listen");
        }
        Err(error) => return Err(error.into()),
    };
    println!("mcp-mail is running.");
    println!("  MCP endpoint:  {}{}", server.url(), config.server.mcp_path());
    println!("  Audience:      {}", config.server.canonical_url);
    println!("  Issuer:        {}", config.server.issuer);
    println!(
        "  Mail contract: {}{}",
        config.server.nextcloud_url.trim_end_matches('/'),
        mcp_mail::app::MAIL_PATH
    );
    println!(
        "  Spends:        the user's token for audience {}, never its own",
        config.nextcloud_audience
    );
    println!("Press Ctrl-C to stop.");
    tokio::signal::ctrl_c().await.context("cannot listen for Ctrl-C")?;
    server.shutdown().await;
    Ok(())
}

async fn webhooks_register_command(args: WebhooksRegisterArgs) -> anyhow::Result<()> {
    if args.nextcloud_url.starts_with("https://") {
        // The workspace builds reqwest without TLS: say so rather than fail
        // with a builder error.
        anyhow::bail!(
            "{} is HTTPS, and this build of tamebi speaks plain HTTP only: use Nextcloud's internal http:// URL (--nextcloud-url / NEXTCLOUD_URL)",
            args.nextcloud_url
        );
    }
    let http = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(30))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .context("cannot build an HTTP client")?;
    let registered = mcp_nextcloud::index::webhook::register(
        &http,
        &args.nextcloud_url,
        (&args.admin_user, &args.admin_password),
        &args.endpoint,
        &args.secret,
    )
    .await
    .map_err(|error| {
        anyhow::anyhow!("{error} (as {} at {})", args.admin_user, args.nextcloud_url)
    })?;
    let short = |event: &str| event.rsplit('\\').next().unwrap_or(event).to_string();
    for registration in &registered {
        match registration {
            mcp_nextcloud::index::webhook::Registered::Created { event, id } => {
                println!("registered {} (id {id})", short(event));
            }
            mcp_nextcloud::index::webhook::Registered::AlreadyThere { event, id } => {
                println!("already registered {} (id {id}), secret refreshed", short(event));
            }
        }
    }
    println!(
        "Nextcloud calls {} with the secret in {}; mcp-nextcloud needs the same --webhook-secret.",
        args.endpoint,
        mcp_nextcloud::index::webhook::SECRET_HEADER
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mail_server(args: &[&str]) -> mcp_kit::ServerConfig {
        let cli = Cli::try_parse_from([&["tamebi", "mcp-mail"], args].concat()).expect("parses");
        let Command::McpMail(args) = cli.command else { panic!("mcp-mail") };
        args.server.config(args.listen, args.canonical_url)
    }

    fn nextcloud_server(args: &[&str]) -> mcp_kit::ServerConfig {
        let cli =
            Cli::try_parse_from([&["tamebi", "mcp-nextcloud"], args].concat()).expect("parses");
        let Command::McpNextcloud(args) = cli.command else { panic!("mcp-nextcloud") };
        args.server.config(args.listen, args.canonical_url)
    }

    #[test]
    fn both_servers_read_an_empty_jwks_url_as_unset_and_always_accept_loopback_hosts() {
        for server in [
            mail_server(&["--jwks-url", "", "--allowed-hosts", "mcp,,tamebi"]),
            nextcloud_server(&["--jwks-url", " ", "--allowed-host", "mcp,,tamebi"]),
        ] {
            assert_eq!(server.jwks_url, None, "{server:?}");
            assert_eq!(server.jwks_url(), "http://127.0.0.1:8080/index.php/apps/oidc/jwks");
            assert_eq!(server.allowed_hosts, ["localhost", "127.0.0.1", "::1", "mcp", "tamebi"]);
        }
    }
}
