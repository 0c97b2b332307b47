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
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
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
