//! Behind the `real-nextcloud` feature: the official `nextcloud` image with
//! the apps the suite needs, set up with `occ`, started once per test run.
//!
//! UNVERIFIED: this path needs Docker and network access to the Nextcloud app
//! store, neither of which the machine this was written on has; it compiles
//! (`cargo check -p nextcloud-contract --features real-nextcloud --tests`)
//! but has never run. docs/fake-vs-real.md says how to run it and what to do
//! when a step fails.
//!
//! The container is left running when the tests end (testcontainers removes
//! a container when its handle drops, and the handle lives in a static that
//! is never dropped): remove it with
//! `docker rm -f $(docker ps -q --filter ancestor=nextcloud:31-apache)`.

use crate::{Account, OidcClient, Settings};
use std::sync::OnceLock;
use std::time::Duration;
use testcontainers::core::{CmdWaitFor, ExecCommand, Host, IntoContainerPort, WaitFor};
use testcontainers::runners::AsyncRunner;
use testcontainers::{ContainerAsync, GenericImage, ImageExt};

pub const IMAGE: &str = "nextcloud";
pub const TAG: &str = "31-apache";
/// The apps installed from the app store, and the bundled ones enabled.
pub const STORE_APPS: &[&str] = &["oidc", "user_oidc", "deck", "calendar", "contacts", "mail"];
pub const BUNDLED_APPS: &[&str] = &["webhook_listeners"];

const ADMIN_PASSWORD: &str = "contract-admin-password";
/// The host name the container reaches the suite's webhook receiver at.
const HOST_GATEWAY: &str = "host.docker.internal";

struct Running {
    // Held so the container lives as long as the test process.
    _container: ContainerAsync<GenericImage>,
    _runtime: tokio::runtime::Runtime,
    settings: Settings,
}

static RUNNING: OnceLock<Running> = OnceLock::new();

/// The settings of the shared container, starting it on first use. Blocks:
/// call from `spawn_blocking`.
pub fn shared_settings() -> Settings {
    RUNNING
        .get_or_init(|| {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .expect("a runtime for the container");
            let (container, settings) = runtime
                .block_on(start())
                .unwrap_or_else(|error| panic!("the Nextcloud container: {error}"));
            Running { _container: container, _runtime: runtime, settings }
        })
        .settings
        .clone()
}

/// Runs `occ` as www-data; returns its standard output.
async fn occ(container: &ContainerAsync<GenericImage>, arguments: &str) -> Result<String, String> {
    let command = format!("php /var/www/html/occ --no-interaction {arguments}");
    let mut result = container
        .exec(
            ExecCommand::new(["su", "-s", "/bin/sh", "www-data", "-c", command.as_str()])
                .with_cmd_ready_condition(CmdWaitFor::exit()),
        )
        .await
        .map_err(|error| format!("occ {arguments}: {error}"))?;
    let stdout =
        String::from_utf8_lossy(&result.stdout_to_vec().await.unwrap_or_default()).into_owned();
    let stderr =
        String::from_utf8_lossy(&result.stderr_to_vec().await.unwrap_or_default()).into_owned();
    match result.exit_code().await {
        Ok(Some(0)) => Ok(stdout),
        other => Err(format!("occ {arguments} failed ({other:?}): {stdout}{stderr}")),
    }
}

/// `occ oidc:create` prints the new client as JSON.
async fn create_client(
    container: &ContainerAsync<GenericImage>,
    name: &str,
    redirect_uri: &str,
    resource_url: Option<&str>,
) -> Result<OidcClient, String> {
    let resource = resource_url.map(|url| format!(" --resource_url={url}")).unwrap_or_default();
    let output = occ(
        container,
        &format!(
            "oidc:create '{name}' '{redirect_uri}' --type=confidential --token_type=jwt{resource}"
        ),
    )
    .await?;
    let start = output.find('{').ok_or_else(|| format!("oidc:create printed no JSON: {output}"))?;
    let value: serde_json::Value = serde_json::from_str(&output[start..])
        .map_err(|error| format!("oidc:create output ({error}): {output}"))?;
    let field = |name: &str| {
        value[name].as_str().map(str::to_string).ok_or_else(|| format!("no {name} in {value}"))
    };
    let client_id = field("client_id")?;
    Ok(OidcClient {
        audience: resource_url.map(str::to_string).unwrap_or_else(|| client_id.clone()),
        client_id,
        client_secret: field("client_secret")?,
        redirect_uri: redirect_uri.to_string(),
    })
}

async fn start() -> Result<(ContainerAsync<GenericImage>, Settings), String> {
    let container = GenericImage::new(IMAGE, TAG)
        .with_exposed_port(80.tcp())
        .with_wait_for(WaitFor::message_on_stderr("apache2 -D FOREGROUND"))
        .with_env_var("SQLITE_DATABASE", "nextcloud")
        .with_env_var("NEXTCLOUD_ADMIN_USER", "admin")
        .with_env_var("NEXTCLOUD_ADMIN_PASSWORD", ADMIN_PASSWORD)
        .with_env_var("NEXTCLOUD_TRUSTED_DOMAINS", "localhost 127.0.0.1")
        .with_host(HOST_GATEWAY, Host::HostGateway)
        .with_startup_timeout(Duration::from_secs(900))
        .start()
        .await
        .map_err(|error| format!("starting {IMAGE}:{TAG}: {error}"))?;
    let port = container.get_host_port_ipv4(80).await.map_err(|error| error.to_string())?;
    let base_url = format!("http://127.0.0.1:{port}");
    let redirect_uri = format!("{base_url}/index.php/apps/tamebi/oauth/callback");

    for app in STORE_APPS {
        occ(&container, &format!("app:install {app}")).await?;
    }
    for app in BUNDLED_APPS {
        occ(&container, &format!("app:enable {app}")).await?;
    }
    // The issuer is the URL the suite uses, whatever Host the container sees.
    occ(&container, &format!("config:system:set overwritehost --value=127.0.0.1:{port}")).await?;
    occ(&container, "config:system:set overwriteprotocol --value=http").await?;
    occ(&container, &format!("config:system:set overwrite.cli.url --value={base_url}")).await?;
    // The receiver runs on the Docker host.
    occ(&container, "config:system:set allow_local_remote_servers --value=true --type=boolean")
        .await?;
    // Background jobs (webhook dispatch) run when the suite calls /cron.php.
    occ(&container, "background:webcron").await?;

    let mut users = Vec::new();
    for uid in ["alice", "bob"] {
        let password = format!("contract-{uid}-password-1");
        let command = format!(
            "OC_PASS='{password}' php /var/www/html/occ --no-interaction user:add \
             --password-from-env --display-name='{uid}' {uid}"
        );
        container
            .exec(
                ExecCommand::new(["su", "-s", "/bin/sh", "www-data", "-c", command.as_str()])
                    .with_cmd_ready_condition(CmdWaitFor::exit()),
            )
            .await
            .map_err(|error| format!("user:add {uid}: {error}"))?;
        users.push(Account { uid: uid.to_string(), password, app_password: None });
    }
    let [alice, bob] = <[Account; 2]>::try_from(users).expect("two users");

    let nextcloud_client =
        create_client(&container, "Tamebi to Nextcloud", &redirect_uri, None).await?;
    let resource_client = create_client(
        &container,
        "Tamebi MCP Nextcloud",
        &redirect_uri,
        Some("http://127.0.0.1:9101/mcp"),
    )
    .await?;
    // user_oidc validates the oidc app's tokens in-process (the JWKS URL
    // carries the host port, which the container cannot reach), checking
    // the audience against its provider's client id.
    occ(
        &container,
        &format!(
            "user_oidc:provider nextcloud --clientid='{}' --clientsecret='{}' \
             --discoveryuri='http://localhost/index.php/.well-known/openid-configuration' \
             --check-bearer=1",
            nextcloud_client.client_id, nextcloud_client.client_secret
        ),
    )
    .await?;
    occ(
        &container,
        "config:system:set user_oidc oidc_provider_bearer_validation --value=true --type=boolean",
    )
    .await?;
    occ(
        &container,
        "config:system:set user_oidc selfencoded_bearer_validation_audience_check --value=true \
         --type=boolean",
    )
    .await?;

    let settings = Settings {
        base_url,
        admin: Account {
            uid: "admin".to_string(),
            password: ADMIN_PASSWORD.to_string(),
            app_password: None,
        },
        users: [alice, bob],
        nextcloud_client,
        resource_client,
        audience_check: true,
        receiver_host: HOST_GATEWAY.to_string(),
        webhook_wait: Duration::from_secs(180),
    };
    Ok((container, settings))
}
