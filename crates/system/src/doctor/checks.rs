//! The doctor's checks, in the order docs/doctor.md lists them. Each one
//! returns findings; a check whose input is missing says what it needs
//! instead of guessing.

use super::oidc;
use super::{DoctorArgs, Finding};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

const BARE_401: &str = "user_oidc and both MCP servers compare a token's iss to the issuer as an exact string: with two different values every token is rejected with a bare 401 and nothing in the logs says why";

/// The configuration, resolved: defaults applied, empty values unset.
struct Resolved<'a> {
    args: &'a DoctorArgs,
    internal: String,
    public: String,
    issuer: String,
    http: reqwest::Client,
}

fn set(value: &Option<String>) -> Option<String> {
    value.as_ref().map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

fn trim(url: &str) -> String {
    url.trim().trim_end_matches('/').to_string()
}

/// The scheme, host and port of a URL, as an issuer is written.
fn origin(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(parsed) => parsed.origin().ascii_serialization(),
        Err(_) => trim(url),
    }
}

/// Runs every check in order.
pub async fn run_all(args: &DoctorArgs) -> Vec<Finding> {
    let internal = trim(&args.nextcloud_url);
    let public = set(&args.public_url).map(|url| trim(&url)).unwrap_or(internal.clone());
    let issuer = set(&args.issuer).map(|url| trim(&url)).unwrap_or(origin(&public));
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(15))
        .connect_timeout(Duration::from_secs(5))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("an HTTP client builds");
    let config = Resolved { args, internal, public, issuer, http };
    let mut findings = Vec::new();
    let reachable = nextcloud_reachable(&config, &mut findings).await;
    let needs = "Nextcloud reachable (check 1)";
    if reachable {
        discovery(&config, &mut findings).await;
        pairs(&config, &mut findings).await;
    } else {
        findings.push(Finding::skipped("2. OIDC issuer", needs));
        findings.push(Finding::skipped("3. Nextcloud URL pair", needs));
    }
    onlyoffice_pair(&config, &mut findings).await;
    if reachable {
        let tokens = tokens(&config, &mut findings).await;
        accepted(&config, tokens.as_ref(), &mut findings).await;
        webhooks(&config, &mut findings).await;
    } else {
        for check in ["4. OIDC clients", "5. tokens accepted", "6. webhooks"] {
            findings.push(Finding::skipped(check, needs));
        }
    }
    converter(&config, &mut findings).await;
    model(&config, &mut findings).await;
    orchestrator(&config, &mut findings).await;
    databases(&config, &mut findings);
    findings.push(file_modes(&config.args.data_dir, &config.args.index_db));
    findings
}

async fn get_json(http: &reqwest::Client, url: &str) -> Result<(u16, Value), String> {
    let response = http.get(url).send().await.map_err(|error| describe(&error))?;
    let status = response.status().as_u16();
    let text = response.text().await.map_err(|error| describe(&error))?;
    Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

fn describe(error: &reqwest::Error) -> String {
    if error.is_connect() {
        "nothing answers there (connection refused or no route)".into()
    } else if error.is_timeout() {
        "no answer in time".into()
    } else {
        let mut text = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            text.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        text
    }
}

// 1. ------------------------------------------------------------------------

async fn nextcloud_reachable(config: &Resolved<'_>, findings: &mut Vec<Finding>) -> bool {
    const CHECK: &str = "1. Nextcloud reachable";
    let url = format!("{}/status.php", config.internal);
    match get_json(&config.http, &url).await {
        Ok((200, status)) if status["installed"] == true && status["maintenance"] != true => {
            findings.push(Finding::ok(
                CHECK,
                format!(
                    "{} answers ({} {})",
                    config.internal,
                    status["productname"].as_str().unwrap_or("Nextcloud"),
                    status["versionstring"].as_str().unwrap_or("?")
                ),
            ));
            true
        }
        Ok((200, status)) if status["maintenance"] == true => {
            findings.push(Finding::error(
                CHECK,
                format!("{} is in maintenance mode", config.internal),
                "every request of the services fails until maintenance ends",
                "occ maintenance:mode --off (after the upgrade or backup is done)",
            ));
            true
        }
        Ok((status, _)) => {
            findings.push(Finding::error(
                CHECK,
                format!("{url} answered HTTP {status}, not Nextcloud's status"),
                "the services reach DAV, OCS and OIDC at this URL; something else is there",
                "set NEXTCLOUD_URL (or --nextcloud-url) to Nextcloud's internal URL, e.g. http://nextcloud in Compose",
            ));
            false
        }
        Err(reason) => {
            findings.push(Finding::error(
                CHECK,
                format!("{url}: {reason}"),
                "nothing works without Nextcloud: no login, no token, no file",
                "start Nextcloud, or set NEXTCLOUD_URL (or --nextcloud-url) to the URL the services reach it at",
            ));
            false
        }
    }
}

// 2. ------------------------------------------------------------------------

async fn discovery(config: &Resolved<'_>, findings: &mut Vec<Finding>) {
    const CHECK: &str = "2. OIDC issuer";
    let url = format!("{}/index.php/.well-known/openid-configuration", config.internal);
    let document = match get_json(&config.http, &url).await {
        Ok((200, document)) if document["issuer"].is_string() => document,
        Ok((status, _)) => {
            findings.push(Finding::error(
                CHECK,
                format!("{url} answered HTTP {status} without an issuer"),
                "without OIDC discovery no token can be obtained or checked",
                "occ app:enable oidc (Nextcloud's OIDC provider app), then occ app:enable user_oidc",
            ));
            return;
        }
        Err(reason) => {
            findings.push(Finding::error(
                CHECK,
                format!("{url}: {reason}"),
                "without OIDC discovery no token can be obtained or checked",
                "occ app:enable oidc",
            ));
            return;
        }
    };
    let found = trim(document["issuer"].as_str().unwrap_or(""));
    let public_origin = origin(&config.public);
    if found == config.issuer && found == public_origin {
        findings.push(Finding::ok(
            CHECK,
            format!(
                "discovery's issuer {found} is the configured issuer and the browser-facing URL"
            ),
        ));
        return;
    }
    let public = url::Url::parse(&config.public).ok();
    let host = public
        .as_ref()
        .and_then(|url| {
            url.host_str()
                .map(|host| url.port().map_or(host.to_string(), |port| format!("{host}:{port}")))
        })
        .unwrap_or_else(|| config.public.clone());
    let scheme = public.as_ref().map(|url| url.scheme().to_string()).unwrap_or("https".into());
    if found != public_origin {
        findings.push(Finding::error(
            CHECK,
            format!(
                "Nextcloud's discovery says issuer {found}, but the browser-facing URL is {public_origin} and the services compare iss to {} (TAMEBI_OIDC_ISSUER): overwritehost is not set, so Nextcloud names itself after whatever Host each request carries",
                config.issuer
            ),
            format!(
                "{BARE_401}; tokens minted through the browser carry {public_origin} while the services' requests see {found}"
            ),
            format!(
                "set overwritehost and overwriteprotocol so the issuer is the browser-facing URL: occ config:system:set overwritehost --value={host} && occ config:system:set overwriteprotocol --value={scheme} (and TAMEBI_OIDC_ISSUER={public_origin} on both MCP servers)"
            ),
        ));
    } else {
        findings.push(Finding::error(
            CHECK,
            format!(
                "Nextcloud's issuer is {found}, but the services are configured with TAMEBI_OIDC_ISSUER={}",
                config.issuer
            ),
            BARE_401,
            format!("set TAMEBI_OIDC_ISSUER={found} for mcp-nextcloud and mcp-mail (or --issuer)"),
        ));
    }
}

// 3. ------------------------------------------------------------------------

/// A host name only a container network resolves: no dot, not localhost.
fn looks_internal(url: &str) -> bool {
    url::Url::parse(url)
        .ok()
        .and_then(|url| url.host_str().map(str::to_string))
        .is_some_and(|host| !host.contains('.') && !host.contains(':') && host != "localhost")
}

async fn pairs(config: &Resolved<'_>, findings: &mut Vec<Finding>) {
    const CHECK: &str = "3. Nextcloud URL pair";
    if config.public == config.internal {
        findings.push(Finding::ok(
            CHECK,
            format!(
                "one URL for browsers and services ({}); set TAMEBI_PUBLIC_URL when browsers use another",
                config.internal
            ),
        ));
        return;
    }
    if looks_internal(&config.public) && !looks_internal(&config.internal) {
        findings.push(Finding::error(
            CHECK,
            format!(
                "the browser-facing URL {} looks like a container name and the internal URL {} like a public one: the pair looks swapped",
                config.public, config.internal
            ),
            "browsers cannot resolve a container name, and the issuer follows the browser-facing URL: logins break or every token is refused with a bare 401",
            format!(
                "swap them: NEXTCLOUD_URL={} and TAMEBI_PUBLIC_URL={}",
                config.public, config.internal
            ),
        ));
        return;
    }
    let status = format!("{}/status.php", config.public);
    let public_status = match get_json(&config.http, &status).await {
        Ok((200, value)) => value,
        Ok((code, _)) => {
            findings.push(Finding::error(
                CHECK,
                format!("{status} answered HTTP {code}, not Nextcloud's status"),
                "the browser-facing URL must reach the same Nextcloud as the internal one",
                "fix TAMEBI_PUBLIC_URL (Nextcloud's overwritehost) or the reverse proxy in front of it",
            ));
            return;
        }
        Err(reason) => {
            findings.push(Finding::warning(
                CHECK,
                format!("the browser-facing URL is not reachable from here: {status}: {reason}"),
                "it may only be reachable from browsers; the doctor cannot tell it is the same Nextcloud",
                "run the doctor where a browser would, or check TAMEBI_PUBLIC_URL",
            ));
            return;
        }
    };
    let internal_status =
        get_json(&config.http, &format!("{}/status.php", config.internal)).await.ok();
    let keys = |base: String| {
        let http = config.http.clone();
        async move {
            get_json(&http, &format!("{base}/index.php/apps/oidc/jwks"))
                .await
                .ok()
                .map(|(_, jwks)| jwks["keys"].clone())
        }
    };
    let (public_keys, internal_keys) =
        (keys(config.public.clone()).await, keys(config.internal.clone()).await);
    let same_version = internal_status
        .as_ref()
        .is_some_and(|(_, value)| value["version"] == public_status["version"]);
    let same_keys = public_keys.is_some() && public_keys == internal_keys;
    if same_version && same_keys {
        findings.push(Finding::ok(
            CHECK,
            format!(
                "{} (browsers) and {} (services) are the same Nextcloud (same version, same signing keys)",
                config.public, config.internal
            ),
        ));
    } else {
        findings.push(Finding::error(
            CHECK,
            format!(
                "{} and {} answer as different Nextclouds (version or OIDC signing keys differ)",
                config.public, config.internal
            ),
            "tokens minted by one are refused by the other",
            "point NEXTCLOUD_URL and TAMEBI_PUBLIC_URL at the same instance",
        ));
    }
}

async fn onlyoffice_pair(config: &Resolved<'_>, findings: &mut Vec<Finding>) {
    const CHECK: &str = "3. OnlyOffice URL pair";
    let (Some(internal), Some(public)) =
        (set(&config.args.converter_url), set(&config.args.converter_public_url))
    else {
        findings.push(Finding::skipped(
            CHECK,
            "ONLYOFFICE_URL (DocumentServerInternalUrl) and ONLYOFFICE_PUBLIC_URL (DocumentServerUrl)",
        ));
        return;
    };
    let answers = |url: String| {
        let http = config.http.clone();
        async move { http.get(format!("{}/healthcheck", trim(&url))).send().await.is_ok() }
    };
    let (internal_ok, public_ok) = (answers(internal.clone()).await, answers(public.clone()).await);
    let swapped = looks_internal(&public) && !looks_internal(&internal);
    if swapped || (!internal_ok && public_ok) {
        findings.push(Finding::error(
            CHECK,
            format!(
                "DocumentServerUrl {public} and DocumentServerInternalUrl {internal} look swapped"
            ),
            "the editor stops loading in browsers, or the services cannot convert: a silent failure",
            format!(
                "occ config:app:set onlyoffice DocumentServerUrl --value={internal}/ && occ config:app:set onlyoffice DocumentServerInternalUrl --value={public}/, and ONLYOFFICE_URL={public} for mcp-nextcloud"
            ),
        ));
    } else if !internal_ok {
        findings.push(Finding::error(
            CHECK,
            format!("the document server does not answer at {internal}"),
            "mcp-nextcloud cannot convert DOC, RTF, XLS(X), PPT(X), EPUB: they stay unread",
            "start the document server or fix ONLYOFFICE_URL",
        ));
    } else if trim(&internal) == trim(&public) {
        findings.push(Finding::ok(
            CHECK,
            format!("{internal} answers, one URL for browsers and services"),
        ));
    } else {
        findings.push(Finding::ok(
            CHECK,
            format!("internal {internal} answers; browser-facing {public} is a distinct URL"),
        ));
    }
}

// 4. ------------------------------------------------------------------------

/// The three audiences, the URL each token must carry as `aud`, and the
/// tokens obtained.
struct Tokens {
    user: String,
    by_audience: Vec<(String, String)>,
}

impl Tokens {
    fn get(&self, audience: &str) -> Option<&str> {
        self.by_audience.iter().find(|(name, _)| name == audience).map(|(_, t)| t.as_str())
    }
}

fn mcp_reach(config: &Resolved<'_>, name: &str) -> Option<String> {
    config.args.mcp.iter().find_map(|entry| {
        let (key, url) = entry.trim().split_once('=')?;
        (key.trim() == name).then(|| url.trim().to_string())
    })
}

fn canonical(config: &Resolved<'_>, name: &str) -> Option<String> {
    let explicit = match name {
        "nextcloud" => set(&config.args.mcp_nextcloud_url),
        _ => set(&config.args.mcp_mail_url),
    };
    explicit.or_else(|| mcp_reach(config, name))
}

fn expected_audience(config: &Resolved<'_>, audience: &str) -> Option<(String, &'static str)> {
    match audience {
        "mcp-nextcloud" => {
            canonical(config, "nextcloud").map(|url| (url, "TAMEBI_MCP_NEXTCLOUD_URL"))
        }
        "mcp-mail" => canonical(config, "mail").map(|url| (url, "TAMEBI_MCP_MAIL_URL")),
        _ => Some((config.args.nextcloud_audience.clone(), "TAMEBI_NEXTCLOUD_AUDIENCE")),
    }
}

async fn tokens(config: &Resolved<'_>, findings: &mut Vec<Finding>) -> Option<Tokens> {
    const AUDIENCES: [&str; 3] = ["mcp-nextcloud", "mcp-mail", "nextcloud"];
    let check = |audience: &str| format!("4. OIDC client {audience}");
    let (Some(user), Some(password)) = (set(&config.args.user), set(&config.args.password)) else {
        for audience in AUDIENCES {
            findings.push(Finding::skipped(
                check(audience),
                "a test user (--user / TAMEBI_DOCTOR_USER and --password / TAMEBI_DOCTOR_PASSWORD)",
            ));
        }
        return None;
    };
    let session = match oidc::login(&config.http, &config.internal, &user, &password).await {
        Ok(session) => session,
        Err(reason) => {
            for audience in AUDIENCES {
                findings.push(Finding::error(
                    check(audience),
                    format!("cannot log in as {user}: {reason}"),
                    "no token can be obtained without a browser session",
                    "check --user / --password (TAMEBI_DOCTOR_USER, TAMEBI_DOCTOR_PASSWORD): the account's login password, not an app password",
                ));
            }
            return None;
        }
    };
    let redirect = set(&config.args.redirect_uri)
        .unwrap_or(format!("{}/index.php/apps/tamebi/oauth/callback", config.public));
    let mut tokens = Tokens { user: user.clone(), by_audience: Vec::new() };
    for audience in AUDIENCES {
        let check = check(audience);
        let expected = expected_audience(config, audience);
        let resource = expected.as_ref().map(|(url, _)| url.clone()).unwrap_or("<URL>".into());
        let create = format!(
            "occ oidc:create --token_type=jwt --resource_url={resource} \"Tamebi {audience}\" {redirect}"
        );
        let client = config.args.oidc_clients.iter().find_map(|entry| {
            let (name, rest) = entry.trim().split_once('=')?;
            let (id, secret) = rest.split_once(':')?;
            (name.trim() == audience).then(|| (id.trim().to_string(), secret.trim().to_string()))
        });
        let Some((client_id, client_secret)) = client else {
            findings.push(Finding::skipped(
                check,
                format!(
                    "the {audience} client's credentials (--oidc-client {audience}=CLIENT_ID:SECRET or TAMEBI_OIDC_CLIENTS)"
                ),
            ));
            continue;
        };
        let Some((expected, variable)) = expected else {
            findings.push(Finding::skipped(check, format!("the {audience} server's URL (--mcp)")));
            continue;
        };
        let client = oidc::Client {
            client_id: &client_id,
            client_secret: &client_secret,
            redirect_uri: &redirect,
        };
        let token = match oidc::code_flow(&config.http, &config.internal, &session, &client).await {
            Ok(token) => token,
            Err(reason) => {
                findings.push(Finding::error(
                    check,
                    format!("no token from client {client_id} for {user}: {reason}"),
                    format!("the Tamebi app obtains this token the same way; without it the {audience} audience is lost"),
                    format!(
                        "check the client id, secret and redirect URI (--redirect-uri / TAMEBI_OIDC_REDIRECT_URI) against occ oidc:list; or create it: {create}"
                    ),
                ));
                continue;
            }
        };
        let Some((header, claims)) = oidc::decode(&token) else {
            findings.push(Finding::error(
                check,
                format!("client {client_id} issues opaque tokens, not JWTs"),
                "the MCP servers and user_oidc verify RFC 9068 JWTs whose aud names them; an opaque token is refused",
                format!("recreate the client with JWT tokens: occ oidc:remove {client_id}, then {create}"),
            ));
            continue;
        };
        let typ = header["typ"].as_str().unwrap_or("").to_ascii_lowercase();
        let aud = oidc::audiences(&claims);
        let iss = trim(claims["iss"].as_str().unwrap_or(""));
        if typ != "at+jwt" {
            findings.push(Finding::error(
                check,
                format!("client {client_id}'s token has typ {typ:?}, not at+jwt"),
                "an access token must be an RFC 9068 JWT; the services refuse an ID token or another JWT",
                format!("recreate the client: occ oidc:remove {client_id}, then {create}"),
            ));
        } else if !aud.contains(&expected) {
            let fix = if audience == "nextcloud" {
                format!(
                    "make the token's aud Nextcloud's audience: recreate the client with --resource_url={expected} ({create}), or set TAMEBI_NEXTCLOUD_AUDIENCE to the user_oidc provider's client id it carries"
                )
            } else {
                format!(
                    "recreate the client so its aud is the server's canonical URL: occ oidc:remove {client_id}, then {create}; or set {variable} to the canonical URL the client names"
                )
            };
            findings.push(Finding::error(
                check,
                format!(
                    "client {client_id}'s token carries aud {aud:?}, not {expected} ({variable})"
                ),
                "a token is only accepted by the service it names: this one is refused with a 401",
                fix,
            ));
        } else if iss != config.issuer {
            findings.push(Finding::error(
                check,
                format!("the token's iss is {iss}, but the services expect {}", config.issuer),
                BARE_401,
                "see check 2: set overwritehost / overwriteprotocol so Nextcloud's issuer is the browser-facing URL, and TAMEBI_OIDC_ISSUER to it",
            ));
        } else {
            findings.push(Finding::ok(
                check,
                format!("client {client_id} minted an at+jwt for {user} with aud {expected}"),
            ));
        }
        tokens.by_audience.push((audience.to_string(), token));
    }
    Some(tokens)
}

// 5. ------------------------------------------------------------------------

async fn accepted(config: &Resolved<'_>, tokens: Option<&Tokens>, findings: &mut Vec<Finding>) {
    let nextcloud_check = "5. Nextcloud accepts the bearer";
    let Some(tokens) = tokens else {
        findings.push(Finding::skipped(nextcloud_check, "tokens (check 4)"));
        for name in ["mcp-nextcloud", "mcp-mail"] {
            findings
                .push(Finding::skipped(format!("5. {name} accepts its token"), "tokens (check 4)"));
        }
        return;
    };
    match tokens.get("nextcloud") {
        None => findings
            .push(Finding::skipped(nextcloud_check, "the nextcloud-audience token (check 4)")),
        Some(token) => {
            let url = format!("{}/ocs/v2.php/cloud/user?format=json", config.internal);
            let answer = config
                .http
                .get(&url)
                .bearer_auth(token)
                .header("OCS-APIRequest", "true")
                .header("Accept", "application/json")
                .send()
                .await;
            match answer {
                Ok(response) if response.status() == 200 => {
                    let body: Value = response.json().await.unwrap_or(Value::Null);
                    let id = body["ocs"]["data"]["id"].as_str().unwrap_or("?").to_string();
                    findings.push(Finding::ok(
                        nextcloud_check,
                        format!("OCS cloud/user answers {id} to the nextcloud-audience token"),
                    ));
                }
                Ok(response) if response.status() == 401 => findings.push(Finding::error(
                    nextcloud_check,
                    format!("Nextcloud answers 401 to {}'s nextcloud-audience token on {url}", tokens.user),
                    "the MCP servers spend this token on DAV, OCS and the mail routes: every tool fails",
                    format!(
                        "with a matching issuer (check 2) this is user_oidc's bearer configuration: turn on validation of the oidc app's tokens ('user_oidc' => ['oidc_provider_bearer_validation' => true] in config.php, or occ config:system:set user_oidc oidc_provider_bearer_validation --value=true --type=boolean), and with selfencoded_bearer_validation_audience_check on, the user_oidc provider's client id must be the token's aud ({})",
                        config.args.nextcloud_audience
                    ),
                )),
                Ok(response) => findings.push(Finding::error(
                    nextcloud_check,
                    format!("{url} answered HTTP {} to the bearer", response.status().as_u16()),
                    "the MCP servers spend this token on DAV and OCS",
                    "check Nextcloud's log for this request (occ log:tail)",
                )),
                Err(error) => findings.push(Finding::error(
                    nextcloud_check,
                    format!("{url}: {}", describe(&error)),
                    "the MCP servers spend this token on DAV and OCS",
                    "check NEXTCLOUD_URL",
                )),
            }
        }
    }
    for (server, audience, variable) in [
        ("nextcloud", "mcp-nextcloud", "TAMEBI_MCP_NEXTCLOUD_URL"),
        ("mail", "mcp-mail", "TAMEBI_MCP_MAIL_URL"),
    ] {
        let check = format!("5. {audience} accepts its token");
        let Some(url) = mcp_reach(config, server) else {
            findings.push(Finding::skipped(
                check,
                format!("{server}=URL in --mcp / TAMEBI_MCP_SERVERS"),
            ));
            continue;
        };
        let (Some(own), Some(nextcloud)) = (tokens.get(audience), tokens.get("nextcloud")) else {
            findings.push(Finding::skipped(
                check,
                format!("the {audience} and nextcloud tokens (check 4)"),
            ));
            continue;
        };
        let answer = config
            .http
            .post(&url)
            .bearer_auth(own)
            .header(wire::headers::NEXTCLOUD_TOKEN, nextcloud)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-11-25")
            .body(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
                    .to_string(),
            )
            .send()
            .await;
        let canonical = canonical(config, server).unwrap_or(url.clone());
        match answer {
            Ok(response) if response.status() == 200 => {
                let text = response.text().await.unwrap_or_default();
                let message = text
                    .lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .map(str::trim)
                    .find(|line| !line.is_empty())
                    .unwrap_or(text.trim());
                let value: Value = serde_json::from_str(message).unwrap_or(Value::Null);
                match value["result"]["tools"].as_array() {
                    Some(tools) => findings.push(Finding::ok(
                        check,
                        format!("tools/list at {url} lists {} tools", tools.len()),
                    )),
                    None => findings.push(Finding::error(
                        check,
                        format!("tools/list at {url} answered without tools: {}", message.chars().take(200).collect::<String>()),
                        "the agent gets no tools from this server",
                        format!("check the {audience} server's log"),
                    )),
                }
            }
            Ok(response) if response.status() == 401 => {
                let challenge = response
                    .headers()
                    .get("www-authenticate")
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or("")
                    .to_string();
                findings.push(Finding::error(
                    check,
                    format!("{url} answers 401 to a fresh {audience} token {challenge}"),
                    "the agent loses every tool of this server",
                    format!(
                        "the server's canonical URL ({variable}={canonical}) must be exactly the client's --resource_url (the token's aud), and its TAMEBI_OIDC_ISSUER the token's iss ({})",
                        config.issuer
                    ),
                ));
            }
            Ok(response) if response.status() == 403 => findings.push(Finding::error(
                check,
                format!("{url} answers 403: the Host header is not in the server's allowed hosts"),
                "DNS-rebinding protection refuses unknown Host names: the orchestrator reaching it by this name is refused too",
                "add the host name to TAMEBI_MCP_ALLOWED_HOSTS (or --allowed-host) of that server",
            )),
            Ok(response) => findings.push(Finding::error(
                check,
                format!("{url} answered HTTP {} to tools/list", response.status().as_u16()),
                "the agent gets no tools from this server",
                format!("check the URL in TAMEBI_MCP_SERVERS and the {audience} server's log"),
            )),
            Err(error) => findings.push(Finding::error(
                check,
                format!("{url}: {}", describe(&error)),
                "the agent gets no tools from this server",
                format!("start {audience}, or fix its URL in TAMEBI_MCP_SERVERS (--mcp)"),
            )),
        }
    }
}

// 6. ------------------------------------------------------------------------

async fn webhooks(config: &Resolved<'_>, findings: &mut Vec<Finding>) {
    const CHECK: &str = "6. webhooks";
    let (Some(admin), Some(password)) =
        (set(&config.args.admin_user), set(&config.args.admin_password))
    else {
        findings.push(Finding::skipped(
            CHECK,
            "admin credentials (NEXTCLOUD_ADMIN_USER, NEXTCLOUD_ADMIN_PASSWORD)",
        ));
        return;
    };
    let endpoint = &config.args.webhook_endpoint;
    let url = format!("{}/ocs/v2.php/apps/webhook_listeners/api/v1/webhooks", config.internal);
    let answer = config
        .http
        .get(&url)
        .basic_auth(&admin, Some(&password))
        .header("ocs-apirequest", "true")
        .header("accept", "application/json")
        .send()
        .await;
    let register = "tamebi webhooks register (with TAMEBI_WEBHOOK_ENDPOINT, TAMEBI_WEBHOOK_SECRET, NEXTCLOUD_ADMIN_USER, NEXTCLOUD_ADMIN_PASSWORD)";
    let body: Value = match answer {
        Ok(response) if response.status() == 200 => response.json().await.unwrap_or(Value::Null),
        Ok(response) => {
            findings.push(Finding::error(
                CHECK,
                format!("listing webhooks as {admin} answered HTTP {}", response.status().as_u16()),
                "registrations are admin-only, and webhook_listeners must be enabled",
                "check NEXTCLOUD_ADMIN_USER / NEXTCLOUD_ADMIN_PASSWORD (an administrator), and occ app:enable webhook_listeners",
            ));
            return;
        }
        Err(error) => {
            findings.push(Finding::error(
                CHECK,
                format!("{url}: {}", describe(&error)),
                "the registrations cannot be read",
                "check NEXTCLOUD_URL",
            ));
            return;
        }
    };
    let registered: Vec<String> = body["ocs"]["data"]
        .as_array()
        .map(|all| {
            all.iter()
                .filter(|registration| registration["uri"] == endpoint.as_str())
                .filter_map(|registration| registration["event"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let short = |event: &str| event.rsplit('\\').next().unwrap_or(event).to_string();
    let missing: Vec<String> = mcp_nextcloud::index::webhook::REGISTERED_EVENTS
        .iter()
        .filter(|event| !registered.iter().any(|known| known == *event))
        .map(|event| short(event))
        .collect();
    if missing.is_empty() {
        findings.push(Finding::ok(
            CHECK,
            format!("NodeWritten, NodeRenamed and NodeDeleted call {endpoint}"),
        ));
    } else {
        findings.push(Finding::warning(
            CHECK,
            format!("not registered toward {endpoint}: {}", missing.join(", ")),
            "files_grep's index then learns of changed, renamed and deleted files only on later passes: answers may quote stale text",
            register,
        ));
    }
}

// 7. ------------------------------------------------------------------------

async fn converter(config: &Resolved<'_>, findings: &mut Vec<Finding>) {
    const CHECK: &str = "7. converter";
    let Some(url) = set(&config.args.converter_url) else {
        findings.push(Finding::skipped(CHECK, "ONLYOFFICE_URL (--converter-url)"));
        return;
    };
    let secret = set(&config.args.converter_secret);
    let probe = |secret: Option<String>| {
        let url = url.clone();
        async move {
            let converter = mcp_nextcloud::convert::Converter::start(
                mcp_nextcloud::convert::ConverterConfig {
                    url,
                    secret,
                    lend_listen: "127.0.0.1:0".parse().expect("an address"),
                    lend_url: None,
                },
                reqwest::Client::builder()
                    .timeout(Duration::from_secs(30))
                    .build()
                    .expect("an HTTP client builds"),
            )
            .await
            .map_err(|_| mcp_nextcloud::convert::ConvertError::Unreachable)?;
            let result = converter
                .convert(bytes::Bytes::from_static(b"{\\rtf1 tamebi doctor}"), "doctor.rtf")
                .await;
            converter.shutdown().await;
            result
        }
    };
    use mcp_nextcloud::convert::ConvertError;
    let enable_jwt = "on the document server set JWT_ENABLED=true and JWT_SECRET=<a long random secret>, and the same value in ONLYOFFICE_JWT_SECRET for mcp-nextcloud";
    let Some(secret) = secret else {
        match probe(None).await {
            Err(ConvertError::Refused) => findings.push(Finding::error(
                CHECK,
                format!("ONLYOFFICE_JWT_SECRET is not set, and the document server at {url} refuses unsigned requests"),
                "every DOC, RTF, XLS(X), PPT(X) and EPUB fails like an unreadable file and stays unread in the index",
                "set ONLYOFFICE_JWT_SECRET (or --converter-secret) for mcp-nextcloud to the document server's JWT_SECRET (docker exec <onlyoffice> /var/www/onlyoffice/documentserver/npm/json -f /etc/onlyoffice/documentserver/local.json 'services.CoAuthoring.secret.session.string')",
            )),
            Ok(_) | Err(ConvertError::Download) => findings.push(Finding::error(
                CHECK,
                format!("no secret anywhere: ONLYOFFICE_JWT_SECRET is unset and the document server at {url} accepts unsigned requests"),
                "anyone on its network can make it fetch URLs and convert documents",
                enable_jwt,
            )),
            Err(error) => findings.push(unreachable_converter(&url, &error)),
        }
        return;
    };
    match probe(Some(format!("tamebi-doctor-wrong-{secret}"))).await {
        Err(ConvertError::Refused) => {}
        Ok(_) | Err(ConvertError::Download) => {
            findings.push(Finding::error(
                CHECK,
                format!("the document server at {url} accepts a request signed with a wrong secret: its JWT check is off"),
                "ONLYOFFICE_JWT_SECRET protects nothing; anyone on its network can make it fetch URLs",
                enable_jwt,
            ));
            return;
        }
        Err(error) => {
            findings.push(unreachable_converter(&url, &error));
            return;
        }
    }
    match probe(Some(secret)).await {
        Ok(_) => findings.push(Finding::ok(
            CHECK,
            format!("{url} converted a signed test document (and refused a wrong secret)"),
        )),
        Err(ConvertError::Refused) => findings.push(Finding::error(
            CHECK,
            format!("the document server at {url} refuses ONLYOFFICE_JWT_SECRET"),
            "every DOC, RTF, XLS(X), PPT(X) and EPUB stays unread in the index",
            "set ONLYOFFICE_JWT_SECRET to the document server's JWT_SECRET (the same value on both sides)",
        )),
        Err(ConvertError::Download) => findings.push(Finding::warning(
            CHECK,
            format!("{url} accepted the secret but could not fetch the doctor's test document"),
            "the doctor lends on a loopback address of this host; mcp-nextcloud lends on TAMEBI_LEND_URL, which the document server must reach",
            "check that TAMEBI_LEND_URL (mcp-nextcloud's --lend-url) is an address the document server reaches, e.g. http://mcp-nextcloud:9110",
        )),
        Err(error) => findings.push(unreachable_converter(&url, &error)),
    }
}

fn unreachable_converter(url: &str, error: &mcp_nextcloud::convert::ConvertError) -> Finding {
    Finding::error(
        "7. converter",
        format!("the document server at {url}: {error}"),
        "DOC, RTF, XLS(X), PPT(X) and EPUB stay unread",
        "start the document server, or set ONLYOFFICE_URL to its internal URL (DocumentServerInternalUrl, e.g. http://onlyoffice)",
    )
}

// 8. ------------------------------------------------------------------------

async fn model(config: &Resolved<'_>, findings: &mut Vec<Finding>) {
    use orchestrator::model::{ModelClient, ModelConfig};
    const CHECK: &str = "8. model";
    let args = config.args;
    let base = trim(&args.model_url);
    let key = set(&args.model_api_key);
    let mut listing = config.http.get(format!("{base}/models"));
    if let Some(key) = &key {
        listing = listing.bearer_auth(key);
    }
    match listing.send().await {
        Err(error) => {
            findings.push(Finding::error(
                CHECK,
                format!("{base}: {}", describe(&error)),
                "without the model there is no answer at all",
                "start the model server, or set TAMEBI_MODEL_URL (--model-url) to its API root including /v1",
            ));
            return;
        }
        Ok(response) if response.status() == 401 || response.status() == 403 => {
            findings.push(Finding::error(
                CHECK,
                format!(
                    "{base}/models answers HTTP {}: the API key is refused",
                    response.status().as_u16()
                ),
                "every turn fails",
                "set TAMEBI_MODEL_API_KEY to a key the provider accepts",
            ));
            return;
        }
        Ok(response) if response.status() == 200 => {
            let body: Value = response.json().await.unwrap_or(Value::Null);
            let ids: Vec<String> = body["data"]
                .as_array()
                .map(|all| {
                    all.iter().filter_map(|m| m["id"].as_str().map(str::to_string)).collect()
                })
                .unwrap_or_default();
            if !ids.is_empty() && !ids.contains(&args.model) {
                findings.push(Finding::error(
                    CHECK,
                    format!(
                        "the provider does not serve {:?}; it lists {}",
                        args.model,
                        ids.join(", ")
                    ),
                    "every turn is refused",
                    format!("set TAMEBI_MODEL to one of: {}", ids.join(", ")),
                ));
                return;
            }
        }
        Ok(_) => {}
    }
    let mut model_config = ModelConfig::new(&base, &args.model);
    model_config.api_key = key.map(orchestrator::model::ApiKey::new);
    model_config.retry.attempts_max = 1;
    model_config.connect_timeout_ms = 5_000;
    model_config.read_timeout_ms = 60_000;
    model_config.max_tokens = Some(64);
    let client = match ModelClient::new(model_config) {
        Ok(client) => client,
        Err(error) => {
            findings.push(Finding::error(
                CHECK,
                error.to_string(),
                "the orchestrator cannot start with it",
                "check TAMEBI_MODEL_URL (http:// or https://) and TAMEBI_MODEL",
            ));
            return;
        }
    };
    let outcome = tool_round_trip(&client).await;
    match outcome {
        Err(error) => findings.push(Finding::error(
            CHECK,
            format!("a request shaped as the orchestrator's (system prompt, tools with tool_choice auto, then a tool result read back) to {} at {base} failed: {error} ({})", args.model, error.detail()),
            "every turn offers tools: each one would fail the same way",
            "check TAMEBI_MODEL_URL, TAMEBI_MODEL and TAMEBI_MODEL_API_KEY; a server such as llama.cpp needs --jinja for tool calls",
        )),
        Ok(()) if !client.streams_tool_calls() => findings.push(Finding::warning(
            CHECK,
            format!("{} answers tool requests only unstreamed (it refused stream + tools, as llama.cpp's server does)", args.model),
            "it works: the orchestrator falls back to unstreamed requests, and answers arrive all at once, later",
            "nothing is required; for streamed answers use a server that streams tool calls (e.g. vLLM, or a newer llama.cpp)",
        )),
        Ok(()) => findings.push(Finding::ok(
            CHECK,
            format!("{} at {base} answers a streamed request with tools and reads a tool result back", args.model),
        )),
    }
}

/// The two requests a turn with one tool call sends, in the orchestrator's
/// own shape: a system prompt and a question with a tool offered (`auto`),
/// then the same with the assistant's call (no content) and its result.
/// The second is sent whether or not the model called the tool, since a
/// server that refuses to read a call back breaks every turn that calls.
async fn tool_round_trip(
    client: &orchestrator::model::ModelClient,
) -> Result<(), orchestrator::model::ModelError> {
    use orchestrator::model::{ChatRequest, Message, ToolCall, ToolChoice, ToolDefinition};
    let tools = vec![ToolDefinition {
        name: "ping".into(),
        description: "Answers pong.".into(),
        parameters: json!({"type": "object", "properties": {
            "note": {"type": "string", "maxLength": 1_048_576, "description": "Anything."}
        }, "additionalProperties": false}),
    }];
    let mut messages = vec![
        Message::System("You are a test. Use the tools you are given.".into()),
        Message::User("Call the tool ping.".into()),
    ];
    let first = ChatRequest {
        messages: messages.clone(),
        tools: tools.clone(),
        tool_choice: Some(ToolChoice::Auto),
    };
    client.chat(&first).await?.collect_events().await?;
    let call = ToolCall { id: "call_doctor".into(), name: "ping".into(), arguments: "{}".into() };
    messages.push(Message::Assistant { text: String::new(), tool_calls: vec![call] });
    messages.push(Message::Tool { tool_call_id: "call_doctor".into(), content: "pong".into() });
    let second = ChatRequest { messages, tools, tool_choice: Some(ToolChoice::Auto) };
    client.chat(&second).await?.collect_events().await?;
    Ok(())
}

async fn orchestrator(config: &Resolved<'_>, findings: &mut Vec<Finding>) {
    const CHECK: &str = "8. orchestrator";
    let url = format!("{}/health", trim(&config.args.orchestrator_url));
    match get_json(&config.http, &url).await {
        Ok((200, _)) => findings.push(Finding::ok(CHECK, format!("{url} answers"))),
        Ok((status, body)) => findings.push(Finding::error(
            CHECK,
            format!("{url} answered HTTP {status}: {body}"),
            "the chat answers 502 while the orchestrator's stores are unhealthy",
            "see the orchestrator's log; check TAMEBI_DATA_DIR is writable (check 9)",
        )),
        Err(reason) => findings.push(Finding::error(
            CHECK,
            format!("{url}: {reason}"),
            "the Tamebi app's chat proxy answers 502 to every message",
            "start `tamebi orchestrator`, or set TAMEBI_ORCHESTRATOR_URL to where it listens (the app's orchestrator_url too)",
        )),
    }
}

// 9. ------------------------------------------------------------------------

fn databases(config: &Resolved<'_>, findings: &mut Vec<Finding>) {
    let data_dir = &config.args.data_dir;
    let check = "9. orchestrator data dir";
    let problems: Vec<String> = if data_dir.exists() {
        let mut problems = Vec::new();
        if let Err(error) = directory_writable(data_dir) {
            problems.push(format!("{}: {error}", data_dir.display()));
        }
        for name in ["chat.db", "audit.db", "memory.db"] {
            let path = data_dir.join(name);
            if path.exists()
                && let Err(error) = std::fs::OpenOptions::new().read(true).write(true).open(&path)
            {
                problems.push(format!("{}: {error}", path.display()));
            }
        }
        problems
    } else {
        match creatable(data_dir) {
            Ok(()) => Vec::new(),
            Err(error) => vec![format!("{} cannot be created: {error}", data_dir.display())],
        }
    };
    if problems.is_empty() {
        findings.push(Finding::ok(
            check,
            format!("{} is writable (chat.db, audit.db, memory.db)", data_dir.display()),
        ));
    } else {
        findings.push(Finding::error(
            check,
            problems.join("; "),
            "the orchestrator cannot keep conversations, the audit trail or memory",
            format!(
                "make {} writable by the orchestrator's user (chown), or set TAMEBI_DATA_DIR to a writable directory",
                data_dir.display()
            ),
        ));
    }
    let index = &config.args.index_db;
    let check = "9. index.db";
    if index.as_os_str() == ":memory:" {
        findings.push(Finding::warning(
            check,
            "the index is in memory",
            "it is rebuilt from nothing at every restart of mcp-nextcloud",
            "set TAMEBI_INDEX_DB to a file on a volume, e.g. /data/index.db",
        ));
        return;
    }
    let result = if index.exists() {
        std::fs::OpenOptions::new().read(true).write(true).open(index).map(|_| ()).and_then(|()| {
            index.parent().filter(|p| !p.as_os_str().is_empty()).map_or(Ok(()), directory_writable)
        })
    } else {
        creatable(index.parent().unwrap_or(Path::new(".")))
    };
    match result {
        Ok(()) => findings.push(Finding::ok(check, format!("{} is writable", index.display()))),
        Err(error) => findings.push(Finding::error(
            check,
            format!("{}: {error}", index.display()),
            "mcp-nextcloud does not start without its index (SQLite also writes a journal beside it)",
            format!(
                "make {} and its directory writable by mcp-nextcloud's user, or set TAMEBI_INDEX_DB",
                index.display()
            ),
        )),
    }
}

/// The databases and the folders holding them, as far as they exist, are
/// no other account's to read: index.db holds documents' text, chat.db and
/// memory.db every user's conversations and facts (the services create
/// them 0700/0600; an older version or a copy may have left them looser).
fn file_modes(data_dir: &Path, index: &Path) -> Finding {
    use std::os::unix::fs::PermissionsExt as _;
    const CHECK: &str = "9. data file modes";
    let mut folders = vec![data_dir.to_path_buf()];
    let mut files: Vec<std::path::PathBuf> =
        ["chat.db", "audit.db", "memory.db"].iter().map(|name| data_dir.join(name)).collect();
    if index.as_os_str() != ":memory:" {
        if let Some(parent) = index.parent().filter(|parent| !parent.as_os_str().is_empty()) {
            folders.push(parent.to_path_buf());
        }
        files.push(index.to_path_buf());
    }
    for file in files.clone() {
        for suffix in ["-wal", "-shm", "-journal"] {
            let mut name = file.as_os_str().to_owned();
            name.push(suffix);
            files.push(name.into());
        }
    }
    let loose = |paths: &[std::path::PathBuf]| -> Vec<(String, String)> {
        paths
            .iter()
            .filter_map(|path| {
                let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o777;
                (mode & 0o077 != 0).then(|| (path.display().to_string(), format!("{mode:o}")))
            })
            .collect()
    };
    let (folders, files) = (loose(&folders), loose(&files));
    if folders.is_empty() && files.is_empty() {
        return Finding::ok(CHECK, "the data directories and databases are private (0700, 0600)");
    }
    let what = folders
        .iter()
        .chain(&files)
        .map(|(path, mode)| format!("{path} is {mode}"))
        .collect::<Vec<_>>()
        .join("; ");
    let mut fixes = Vec::new();
    if !folders.is_empty() {
        let paths: Vec<&str> = folders.iter().map(|(path, _)| path.as_str()).collect();
        fixes.push(format!("chmod 700 {}", paths.join(" ")));
    }
    if !files.is_empty() {
        let paths: Vec<&str> = files.iter().map(|(path, _)| path.as_str()).collect();
        fixes.push(format!("chmod 600 {}", paths.join(" ")));
    }
    Finding::warning(
        CHECK,
        what,
        "other local accounts can read the documents' text, the conversations or the memory in them",
        format!(
            "as the services' user: {} (the services tighten their own files when they next open them)",
            fixes.join(" && ")
        ),
    )
}

/// A file can be created in this directory (and is removed again).
fn directory_writable(dir: &Path) -> std::io::Result<()> {
    let probe = dir.join(format!(".tamebi-doctor-{}", std::process::id()));
    std::fs::write(&probe, b"")?;
    std::fs::remove_file(&probe)
}

/// The directory exists and is writable, or its nearest existing ancestor is.
fn creatable(path: &Path) -> std::io::Result<()> {
    let mut current = if path.as_os_str().is_empty() { Path::new(".") } else { path };
    loop {
        if current.exists() {
            return directory_writable(current);
        }
        current = match current.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn looser_modes_on_the_data_files_are_named_with_the_exact_chmod() {
        let root = std::env::temp_dir().join(format!("tamebi-doctor-modes-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let data_dir = root.join("orchestrator");
        let index_dir = root.join("index");
        std::fs::create_dir_all(&data_dir).unwrap();
        std::fs::create_dir_all(&index_dir).unwrap();
        let index = index_dir.join("index.db");
        for (path, mode) in [
            (data_dir.join("chat.db"), 0o644),
            (data_dir.join("chat.db-wal"), 0o644),
            (data_dir.join("memory.db"), 0o600),
            (index.clone(), 0o640),
        ] {
            std::fs::write(&path, b"").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        std::fs::set_permissions(&data_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&index_dir, std::fs::Permissions::from_mode(0o700)).unwrap();

        let finding = file_modes(&data_dir, &index);
        assert_eq!(finding.status, super::super::Status::Warning, "{finding:?}");
        let (d, i) = (data_dir.display(), index.display());
        assert_eq!(
            finding.what,
            format!("{d} is 755; {d}/chat.db is 644; {i} is 640; {d}/chat.db-wal is 644")
        );
        assert!(
            finding
                .fix
                .contains(&format!("chmod 700 {d} && chmod 600 {d}/chat.db {i} {d}/chat.db-wal")),
            "{}",
            finding.fix
        );

        for path in [data_dir.join("chat.db"), data_dir.join("chat.db-wal"), index.clone()] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        std::fs::set_permissions(&data_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let finding = file_modes(&data_dir, &index);
        assert_eq!(finding.status, super::super::Status::Ok, "{finding:?}");
        let _ = std::fs::remove_dir_all(&root);
    }

    /// A document server stand-in: answers `GET /healthcheck` (and
    /// anything else) with 200 `true`.
    async fn healthy_server() -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
                    let mut buffer = [0u8; 2048];
                    let _ = socket.read(&mut buffer).await;
                    let answer =
                        "HTTP/1.1 200 OK\r\ncontent-length: 4\r\nconnection: close\r\n\r\ntrue";
                    let _ = socket.write_all(answer.as_bytes()).await;
                });
            }
        });
        url
    }

    fn closed_port() -> String {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        format!("http://127.0.0.1:{port}")
    }

    async fn onlyoffice_finding(internal: Option<&str>, public: Option<&str>) -> Finding {
        #[derive(clap::Parser)]
        struct Wrapper {
            #[command(flatten)]
            args: DoctorArgs,
        }
        let mut argv = vec!["doctor".to_string(), "--nextcloud-url=http://127.0.0.1:9".to_string()];
        // Set explicitly, empty when absent, so the test's environment
        // (ONLYOFFICE_URL, …) cannot decide.
        argv.push(format!("--converter-url={}", internal.unwrap_or_default()));
        argv.push(format!("--converter-public-url={}", public.unwrap_or_default()));
        let wrapper = <Wrapper as clap::Parser>::try_parse_from(argv).unwrap();
        let config = Resolved {
            args: &wrapper.args,
            internal: "http://127.0.0.1:9".into(),
            public: "http://127.0.0.1:9".into(),
            issuer: "http://127.0.0.1:9".into(),
            http: reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(3))
                .build()
                .unwrap(),
        };
        let mut findings = Vec::new();
        onlyoffice_pair(&config, &mut findings).await;
        assert_eq!(findings.len(), 1, "{findings:?}");
        findings.pop().unwrap()
    }

    /// The OnlyOffice pair (DocumentServerUrl for browsers,
    /// DocumentServerInternalUrl for services): a swapped pair, by its names
    /// or by which one answers, is an error whose fix is the two occ
    /// commands with the URLs exchanged; a working pair is ok; a missing one
    /// is skipped, saying what it needs.
    #[tokio::test]
    async fn the_onlyoffice_url_pair_is_checked_both_ways() {
        use super::super::Status;
        let up = healthy_server().await;
        let down = closed_port();

        let same = onlyoffice_finding(Some(&up), Some(&up)).await;
        assert_eq!(same.status, Status::Ok, "{same:?}");
        assert!(same.what.contains("one URL for browsers and services"), "{same:?}");
        let other = healthy_server().await;
        let distinct = onlyoffice_finding(Some(&up), Some(&other)).await;
        assert_eq!(distinct.status, Status::Ok, "{distinct:?}");

        // Swapped by name: the browser-facing URL is a container name.
        let by_name = onlyoffice_finding(Some(&up), Some("http://onlyoffice")).await;
        assert_eq!(by_name.status, Status::Error, "{by_name:?}");
        assert!(by_name.what.contains("look swapped"), "{by_name:?}");
        assert!(
            by_name.fix.contains(&format!(
                "DocumentServerUrl --value={up}/ && occ config:app:set onlyoffice DocumentServerInternalUrl --value=http://onlyoffice/"
            )),
            "{}",
            by_name.fix
        );

        // Swapped by reachability: only the browser-facing one answers here.
        let by_reach = onlyoffice_finding(Some(&down), Some(&up)).await;
        assert_eq!(by_reach.status, Status::Error, "{by_reach:?}");
        assert!(by_reach.what.contains("look swapped"), "{by_reach:?}");
        assert!(by_reach.fix.contains(&format!("ONLYOFFICE_URL={up}")), "{}", by_reach.fix);

        // Neither answers: the document server is down, not swapped.
        let gone = onlyoffice_finding(Some(&down), Some(&closed_port())).await;
        assert_eq!(gone.status, Status::Error, "{gone:?}");
        assert!(gone.what.contains("does not answer"), "{gone:?}");

        let unset = onlyoffice_finding(Some(&up), None).await;
        assert_eq!(unset.status, Status::Skipped, "{unset:?}");
    }
}
