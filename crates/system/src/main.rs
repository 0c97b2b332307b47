//! The `tamebi` binary: one subcommand per service, plus the tools around
//! them. It is glue: parsing flags, starting a library's server, printing
//! where it listens. No behaviour lives here.

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
    },
    /// Run the MCP server for files, calendar, contacts and Deck.
    McpNextcloud(McpNextcloudArgs),
}

#[derive(Debug, clap::Args)]
struct McpNextcloudArgs {
    /// Address to listen on.
    #[arg(long, env = "TAMEBI_MCP_NEXTCLOUD_LISTEN", default_value = "127.0.0.1:9101")]
    listen: SocketAddr,
    /// This server's canonical URL: the audience its tokens must carry.
    #[arg(long, env = "TAMEBI_MCP_NEXTCLOUD_URL", default_value = "http://127.0.0.1:9101/mcp")]
    canonical_url: String,
    /// The OIDC issuer, compared to `iss` exactly (Nextcloud's browser-facing URL).
    #[arg(long, env = "TAMEBI_OIDC_ISSUER", default_value = "http://127.0.0.1:8080")]
    issuer: String,
    /// Nextcloud's internal URL, where DAV and OCS are reached.
    #[arg(long, env = "NEXTCLOUD_URL", default_value = "http://127.0.0.1:8080")]
    nextcloud_url: String,
    /// Where the issuer's keys are; default: the oidc app's JWKS on the internal URL.
    #[arg(long, env = "TAMEBI_OIDC_JWKS_URL")]
    jwks_url: Option<String>,
    /// How to authenticate toward Nextcloud: second-token (default; a
    /// Nextcloud-audience token of the same user), single-token (forward this
    /// server's token; needs user_oidc's audience check off) or app-password.
    #[arg(long, env = "TAMEBI_UPSTREAM_AUTH", default_value = "second-token")]
    upstream: UpstreamMode,
    /// The audience of the Nextcloud token (user_oidc's provider client id).
    #[arg(long, env = "TAMEBI_NEXTCLOUD_AUDIENCE", default_value = "nextcloud")]
    nextcloud_audience: String,
    /// Extra host names accepted in the Host header (container names in Compose).
    #[arg(long = "allowed-host", env = "TAMEBI_MCP_ALLOWED_HOSTS", value_delimiter = ',')]
    allowed_hosts: Vec<String>,
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
    runtime.block_on(run(cli))
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::FakeNextcloud { fixture, listen, converter_listen } => {
            fake_nextcloud_command(fixture, listen, converter_listen).await
        }
        Command::McpNextcloud(args) => mcp_nextcloud_command(args).await,
    }
}

async fn fake_nextcloud_command(
    fixture_path: PathBuf,
    listen: SocketAddr,
    converter_listen: SocketAddr,
) -> anyhow::Result<()> {
    let fixture = fake_nextcloud::Fixture::load(&fixture_path)?;
    let config = fake_nextcloud::Config { listen, converter_listen };
    let fake = match fake_nextcloud::FakeNextcloud::start(&fixture, config).await {
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
    let base = fake.base_url().to_string();
    println!("Fake Nextcloud is running.");
    println!("  Nextcloud:   {base}");
    println!("  WebDAV:      {base}/remote.php/dav/files/<uid>/");
    println!("  CalDAV:      {base}/remote.php/dav/calendars/<uid>/");
    println!("  OIDC:        {base}/index.php/.well-known/openid-configuration");
    println!("  Converter:   {}/converter", fake.converter_url());
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

async fn mcp_nextcloud_command(args: McpNextcloudArgs) -> anyhow::Result<()> {
    let upstream = match args.upstream {
        UpstreamMode::SecondToken => {
            mcp_nextcloud::UpstreamAuth::SecondToken { nextcloud_audience: args.nextcloud_audience }
        }
        UpstreamMode::SingleToken => {
            tracing::warn!(
                "single-token mode: the token addressed to this server is forwarded to Nextcloud, which must accept any audience"
            );
            mcp_nextcloud::UpstreamAuth::SingleToken
        }
        UpstreamMode::AppPassword => mcp_nextcloud::UpstreamAuth::AppPassword,
    };
    let mut allowed_hosts =
        vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string()];
    allowed_hosts.extend(args.allowed_hosts.into_iter().filter(|host| !host.is_empty()));
    let config = mcp_nextcloud::Config {
        listen: args.listen,
        canonical_url: args.canonical_url,
        issuer: args.issuer,
        jwks_url: args.jwks_url,
        nextcloud_url: args.nextcloud_url,
        upstream,
        allowed_hosts,
    };
    let server = match mcp_nextcloud::McpNextcloud::start(config.clone()).await {
        Ok(server) => server,
        Err(mcp_nextcloud::StartError::Listen { address, source })
            if source.kind() == std::io::ErrorKind::AddrInUse =>
        {
            anyhow::bail!("{address} is already in use: choose another address with --listen");
        }
        Err(error) => return Err(error.into()),
    };
    println!("mcp-nextcloud is running.");
    println!("  MCP endpoint:  {}{}", server.url(), config.mcp_path());
    println!("  Audience:      {}", config.canonical_url);
    println!("  Issuer:        {}", config.issuer);
    println!("  Nextcloud:     {}", config.nextcloud_url);
    println!("Press Ctrl-C to stop.");
    tokio::signal::ctrl_c().await.context("cannot listen for Ctrl-C")?;
    server.shutdown().await;
    Ok(())
}
