//! The fake Nextcloud's contract: what the fake and a real Nextcloud must
//! both do, written once as tests that take a [`Target`].
//!
//! By default the target is the fake started in-process with
//! `scenarios/fixtures/demo.toml`; with `TAMEBI_CONTRACT_URL` set it is any
//! running Nextcloud (see `docs/fake-vs-real.md` for the variables). The
//! checks are written from the real server's documented behaviour, never
//! from what the fake happens to do, and nothing is skipped: a real server
//! without an app the suite needs fails with a message naming the app.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use fake_nextcloud::{Config, FakeNextcloud, Fixture};
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;
use std::time::Duration;
use xml_tree::{DAV, Element};

#[cfg(feature = "real-nextcloud")]
pub mod real;

/// An account the suite acts as.
#[derive(Debug, Clone)]
pub struct Account {
    pub uid: String,
    /// The login password: the login form needs it for the OIDC flow.
    pub password: String,
    /// Used for Basic authentication when set (what clients are given).
    pub app_password: Option<String>,
}

impl Account {
    /// `uid:password[:app-password]`.
    pub fn parse(text: &str) -> Result<Account, String> {
        let mut parts = text.trim().splitn(3, ':');
        let (Some(uid), Some(password)) = (parts.next(), parts.next()) else {
            return Err(format!("{text:?} is not uid:password[:app-password]"));
        };
        if uid.is_empty() || password.is_empty() {
            return Err(format!("{text:?} is not uid:password[:app-password]"));
        }
        Ok(Account {
            uid: uid.to_string(),
            password: password.to_string(),
            app_password: parts.next().filter(|app| !app.is_empty()).map(str::to_string),
        })
    }

    pub fn basic_secret(&self) -> &str {
        self.app_password.as_deref().unwrap_or(&self.password)
    }
}

/// An OIDC client registered in the `oidc` app.
#[derive(Debug, Clone)]
pub struct OidcClient {
    pub client_id: String,
    pub client_secret: String,
    pub redirect_uri: String,
    /// What the access token's `aud` must be: the client's resource URL
    /// (`occ oidc:create --resource_url=…`), else its client id.
    pub audience: String,
}

enum Kind {
    Fake(FakeNextcloud),
    Real,
}

/// Everything that describes the server under test to the suite.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Without a trailing slash, e.g. `http://127.0.0.1:8080`.
    pub base_url: String,
    pub admin: Account,
    pub users: [Account; 2],
    /// The client whose tokens user_oidc accepts on DAV/OCS (its
    /// `provider_client_id`).
    pub nextcloud_client: OidcClient,
    /// A client minting tokens for another audience (an MCP server's URL).
    pub resource_client: OidcClient,
    /// Whether user_oidc checks `aud` (`selfencoded_bearer_validation_audience_check`).
    pub audience_check: bool,
    /// The host the server reaches the suite's webhook receiver at.
    pub receiver_host: String,
    /// How long to wait for a webhook delivery.
    pub webhook_wait: Duration,
}

/// The server under test and how to act on it; its [`Settings`] are read
/// through it (`target.base_url`).
pub struct Target {
    pub settings: Settings,
    pub http: reqwest::Client,
    kind: Kind,
}

impl std::ops::Deref for Target {
    type Target = Settings;
    fn deref(&self) -> &Settings {
        &self.settings
    }
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target").field("base_url", &self.base_url).finish_non_exhaustive()
    }
}

/// The demo fixture's accounts and clients (scenarios/fixtures/demo.toml).
const DEMO_REDIRECT: &str = "http://127.0.0.1:8080/index.php/apps/tamebi/oauth/callback";

fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(60))
        .build()
        .expect("HTTP client")
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.trim().is_empty())
}

fn required_env(name: &str) -> String {
    env(name).unwrap_or_else(|| {
        panic!("{name} is required when TAMEBI_CONTRACT_URL is set; see docs/fake-vs-real.md")
    })
}

fn client_from_env(name: &str, redirect_uri: &str) -> OidcClient {
    let value = required_env(name);
    let mut parts = value.splitn(3, ':');
    let (Some(client_id), Some(client_secret)) = (parts.next(), parts.next()) else {
        panic!("{name} is not client_id:client_secret[:resource_url]");
    };
    let resource_url = parts.next().filter(|url| !url.is_empty());
    OidcClient {
        client_id: client_id.to_string(),
        client_secret: client_secret.to_string(),
        redirect_uri: redirect_uri.to_string(),
        audience: resource_url.unwrap_or(client_id).to_string(),
    }
}

impl Target {
    /// The target of this run: a real Nextcloud when `TAMEBI_CONTRACT_URL`
    /// is set, else a fresh fake started with the demo fixture.
    pub async fn get() -> Target {
        if let Some(url) = env("TAMEBI_CONTRACT_URL") {
            return Target::real(Settings::from_env(&url));
        }
        Target::default_target().await
    }

    /// With `real-nextcloud`: the Nextcloud container (started once).
    #[cfg(feature = "real-nextcloud")]
    async fn default_target() -> Target {
        let settings = tokio::task::spawn_blocking(real::shared_settings)
            .await
            .expect("the Nextcloud container starts");
        Target::real(settings)
    }

    /// Without `real-nextcloud`: a fresh fake.
    #[cfg(not(feature = "real-nextcloud"))]
    async fn default_target() -> Target {
        Target::fake().await
    }

    /// A running Nextcloud.
    pub fn real(settings: Settings) -> Target {
        Target { settings, http: http_client(), kind: Kind::Real }
    }

    /// A fake Nextcloud seeded with `scenarios/fixtures/demo.toml`.
    pub async fn fake() -> Target {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/fixtures/demo.toml");
        let fixture = Fixture::load(&path).expect("the demo fixture loads");
        let fake = FakeNextcloud::start(&fixture, Config::default()).await.expect("fake starts");
        let account = |uid: &str, password: &str, app: Option<&str>| Account {
            uid: uid.to_string(),
            password: password.to_string(),
            app_password: app.map(str::to_string),
        };
        let settings = Settings {
            base_url: fake.base_url().trim_end_matches('/').to_string(),
            admin: account(
                "admin",
                "admin-demo-password",
                Some("admin-app-Tq4nR-8vL2k-Hx6pW-3mZcJ"),
            ),
            users: [
                account("alice", "alice-demo-password", Some("alice-app-Zq7mK-2xP9d-Lw4cH-8tRvN")),
                account("bob", "bob-demo-password", Some("bob-app-Hn3sW-7kQ2m-Vb8xJ-4pFdT")),
            ],
            nextcloud_client: OidcClient {
                client_id: "nextcloud".to_string(),
                client_secret: "demo-secret-nextcloud".to_string(),
                redirect_uri: DEMO_REDIRECT.to_string(),
                audience: "nextcloud".to_string(),
            },
            resource_client: OidcClient {
                client_id: "tamebi-mcp-nextcloud".to_string(),
                client_secret: "demo-secret-mcp-nextcloud".to_string(),
                redirect_uri: DEMO_REDIRECT.to_string(),
                audience: "http://127.0.0.1:9101/mcp".to_string(),
            },
            audience_check: true,
            receiver_host: "127.0.0.1".to_string(),
            webhook_wait: Duration::from_secs(15),
        };
        Target { settings, http: http_client(), kind: Kind::Fake(fake) }
    }
}

impl Settings {
    /// A running Nextcloud described by the `TAMEBI_CONTRACT_*` variables.
    pub fn from_env(url: &str) -> Settings {
        let base_url = url.trim().trim_end_matches('/').to_string();
        let admin = Account::parse(&required_env("TAMEBI_CONTRACT_ADMIN"))
            .unwrap_or_else(|error| panic!("TAMEBI_CONTRACT_ADMIN: {error}"));
        let users: Vec<Account> = required_env("TAMEBI_CONTRACT_USERS")
            .split(',')
            .map(|user| {
                Account::parse(user)
                    .unwrap_or_else(|error| panic!("TAMEBI_CONTRACT_USERS: {error}"))
            })
            .collect();
        let [first, second] = <[Account; 2]>::try_from(users)
            .unwrap_or_else(|_| panic!("TAMEBI_CONTRACT_USERS must name exactly two users"));
        let redirect_uri = env("TAMEBI_CONTRACT_OIDC_REDIRECT_URI")
            .unwrap_or_else(|| format!("{base_url}/index.php/apps/tamebi/oauth/callback"));
        Settings {
            nextcloud_client: client_from_env("TAMEBI_CONTRACT_OIDC_CLIENT", &redirect_uri),
            resource_client: client_from_env("TAMEBI_CONTRACT_OIDC_RESOURCE_CLIENT", &redirect_uri),
            audience_check: env("TAMEBI_CONTRACT_AUDIENCE_CHECK").is_none_or(|value| value != "0"),
            receiver_host: env("TAMEBI_CONTRACT_RECEIVER_HOST")
                .unwrap_or_else(|| "127.0.0.1".to_string()),
            webhook_wait: Duration::from_secs(
                env("TAMEBI_CONTRACT_WEBHOOK_WAIT_S").and_then(|s| s.parse().ok()).unwrap_or(180),
            ),
            base_url,
            admin,
            users: [first, second],
        }
    }
}

impl Target {
    pub fn is_fake(&self) -> bool {
        matches!(self.kind, Kind::Fake(_))
    }

    /// The fake, for the few steps only a fake can take (none of the checks
    /// use it: they must hold for the real server too).
    pub fn fake_handle(&self) -> Option<&FakeNextcloud> {
        match &self.kind {
            Kind::Fake(fake) => Some(fake),
            Kind::Real => None,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    pub fn alice(&self) -> &Account {
        &self.users[0]
    }

    pub fn bob(&self) -> &Account {
        &self.users[1]
    }

    /// The administrator: a third account for tests that need one (a user
    /// who neither owns nor receives a share).
    pub fn admin(&self) -> &Account {
        &self.admin
    }

    /// A request with no credentials.
    pub fn anonymous(&self, method: &str, path: &str) -> reqwest::RequestBuilder {
        self.http.request(method_of(method), self.url(path))
    }

    /// A request with Basic authentication (app password when known).
    pub fn as_account(
        &self,
        account: &Account,
        method: &str,
        path: &str,
    ) -> reqwest::RequestBuilder {
        self.anonymous(method, path).basic_auth(&account.uid, Some(account.basic_secret()))
    }

    /// An OCS request as `account`, JSON format.
    pub fn ocs(&self, account: &Account, method: &str, path: &str) -> reqwest::RequestBuilder {
        self.as_account(account, method, path)
            .header("OCS-APIRequest", "true")
            .header("Accept", "application/json")
    }

    /// A unique name for what a test creates, so that runs against a real
    /// server neither collide nor depend on its existing data.
    pub fn unique(&self, stem: &str) -> String {
        let nonce: u64 = rand::random();
        format!("tamebi-contract-{stem}-{nonce:016x}")
    }

    // ---- OIDC -----------------------------------------------------------

    pub async fn discovery(&self) -> Value {
        let response = self
            .anonymous("GET", "/index.php/.well-known/openid-configuration")
            .send()
            .await
            .expect("discovery request");
        assert_eq!(
            response.status(),
            200,
            "{}",
            missing_app("oidc", "/index.php/.well-known/openid-configuration")
        );
        response.json().await.expect("discovery is JSON")
    }

    /// Logs `account` in through the login form as a browser does; returns
    /// the session cookies.
    pub async fn login(&self, account: &Account) -> Cookies {
        let mut cookies = Cookies::default();
        let page = self.anonymous("GET", "/index.php/login").send().await.expect("login page");
        cookies.absorb(page.headers());
        let html = page.text().await.unwrap_or_default();
        let requesttoken = attribute_after(&html, "data-requesttoken=\"");
        let mut form = vec![
            ("user", account.uid.clone()),
            ("password", account.password.clone()),
            ("timezone", "UTC".to_string()),
            ("timezone_offset", "0".to_string()),
        ];
        if let Some(token) = requesttoken {
            form.push(("requesttoken", token));
        }
        let response = self
            .anonymous("POST", "/index.php/login")
            .header("Cookie", cookies.header())
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form_encode(&form))
            .send()
            .await
            .expect("login request");
        let location = header(&response, "location");
        assert!(
            response.status().is_redirection() && !location.contains("login"),
            "logging {} in through the login form failed: {} to {location:?}",
            account.uid,
            response.status()
        );
        cookies.absorb(response.headers());
        cookies
    }

    /// The authorization-code flow with PKCE S256 for `account` and
    /// `client`; returns the token endpoint's status and JSON answer.
    pub async fn token_answer(&self, account: &Account, client: &OidcClient) -> (u16, Value) {
        let grant = self.authorize(account, client).await;
        self.exchange(client, &grant, ClientAuth::Post).await
    }

    /// Logs `account` in and runs the authorization request with PKCE S256;
    /// returns the code and its verifier.
    pub async fn authorize(&self, account: &Account, client: &OidcClient) -> Grant {
        let discovery = self.discovery().await;
        let cookies = self.login(account).await;
        let verifier = format!(
            "contract-verifier-{:032x}{:032x}",
            rand::random::<u128>(),
            rand::random::<u128>()
        );
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let state = format!("{:x}", rand::random::<u64>());
        let authorize =
            discovery["authorization_endpoint"].as_str().expect("authorization_endpoint");
        let query = form_encode(&[
            ("response_type", "code".to_string()),
            ("client_id", client.client_id.clone()),
            ("redirect_uri", client.redirect_uri.clone()),
            ("scope", "openid profile email".to_string()),
            ("state", state.clone()),
            ("code_challenge", challenge),
            ("code_challenge_method", "S256".to_string()),
        ]);
        let response = self
            .http
            .get(format!("{authorize}?{query}"))
            .header("Cookie", cookies.header())
            .send()
            .await
            .expect("authorize request");
        let location = header(&response, "location");
        assert!(
            response.status().is_redirection() && location.starts_with(&client.redirect_uri),
            "authorize for {} did not redirect to the client's redirect URI with a code: {} to \
             {location:?} (a consent page must be answered once beforehand on a real server)",
            client.client_id,
            response.status()
        );
        let location = url::Url::parse(&location).expect("redirect is a URL");
        let pairs: BTreeMap<String, String> = location.query_pairs().into_owned().collect();
        assert_eq!(pairs.get("state"), Some(&state), "authorize must return the state");
        let code = pairs.get("code").expect("authorize redirect carries a code").clone();
        Grant { code, verifier }
    }

    /// Exchanges a code at the token endpoint; returns the status and answer.
    pub async fn exchange(
        &self,
        client: &OidcClient,
        grant: &Grant,
        auth: ClientAuth,
    ) -> (u16, Value) {
        let discovery = self.discovery().await;
        let token_endpoint = discovery["token_endpoint"].as_str().expect("token_endpoint");
        let mut form = vec![
            ("grant_type", "authorization_code".to_string()),
            ("code", grant.code.clone()),
            ("redirect_uri", client.redirect_uri.clone()),
            ("code_verifier", grant.verifier.clone()),
        ];
        let mut request = self
            .http
            .post(token_endpoint)
            .header("Content-Type", "application/x-www-form-urlencoded");
        match auth {
            ClientAuth::Post => {
                form.push(("client_id", client.client_id.clone()));
                form.push(("client_secret", client.client_secret.clone()));
            }
            ClientAuth::Basic => {
                request = request.basic_auth(&client.client_id, Some(&client.client_secret));
            }
        }
        let response = request.body(form_encode(&form)).send().await.expect("token request");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// An access token for `account` minted by `client`.
    pub async fn access_token(&self, account: &Account, client: &OidcClient) -> String {
        let (status, answer) = self.token_answer(account, client).await;
        assert_eq!(status, 200, "the token endpoint refused the code: {answer}");
        answer["access_token"].as_str().expect("access_token").to_string()
    }

    pub async fn jwks(&self) -> access_token::JwkSet {
        let discovery = self.discovery().await;
        let jwks_uri = discovery["jwks_uri"].as_str().expect("jwks_uri");
        self.http
            .get(jwks_uri)
            .send()
            .await
            .expect("JWKS request")
            .json()
            .await
            .expect("JWKS is a JWK set")
    }

    // ---- WebDAV ---------------------------------------------------------

    /// `/remote.php/dav/files/{uid}/{path}` with each segment encoded.
    pub fn files_path(&self, account: &Account, path: &str) -> String {
        let encoded: Vec<String> = path
            .split('/')
            .map(|segment| url::form_urlencoded::byte_serialize(segment.as_bytes()).collect())
            .map(|segment: String| segment.replace('+', "%20"))
            .collect();
        format!("/remote.php/dav/files/{}/{}", account.uid, encoded.join("/"))
    }

    pub async fn put_file(&self, account: &Account, path: &str, body: &str) -> reqwest::Response {
        self.as_account(account, "PUT", &self.files_path(account, path))
            .body(body.to_string())
            .send()
            .await
            .expect("PUT")
    }

    pub async fn mkcol(&self, account: &Account, path: &str) -> u16 {
        self.as_account(account, "MKCOL", &self.files_path(account, path))
            .send()
            .await
            .expect("MKCOL")
            .status()
            .as_u16()
    }

    /// A PUT as `account` that only creates (`If-None-Match: *`, as
    /// mcp-nextcloud creates events and cards).
    pub async fn put_new(
        &self,
        account: &Account,
        path: &str,
        content_type: &str,
        body: impl Into<String>,
    ) -> reqwest::Response {
        let request = self.as_account(account, "PUT", path).header("Content-Type", content_type);
        let sent = request.header("If-None-Match", "*").body(body.into()).send().await;
        sent.unwrap_or_else(|error| panic!("PUT {path}: {error}"))
    }

    /// An OCS request as `account` with `fields` as a form body, sent.
    pub async fn ocs_form(
        &self,
        account: &Account,
        method: &str,
        path: &str,
        fields: &[(&str, String)],
    ) -> reqwest::Response {
        let request = self
            .ocs(account, method, path)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form_encode(fields));
        request.send().await.unwrap_or_else(|error| panic!("{method} {path}: {error}"))
    }

    /// An OCS request as `account` without a body, its status and JSON.
    pub async fn ocs_call(&self, account: &Account, method: &str, path: &str) -> (u16, Value) {
        let sent = self.ocs(account, method, path).send().await;
        ocs_json(sent.unwrap_or_else(|error| panic!("{method} {path}: {error}"))).await
    }

    /// An OCS POST as `account` with a JSON body.
    pub async fn ocs_post_json(
        &self,
        account: &Account,
        path: &str,
        body: &Value,
    ) -> reqwest::Response {
        let request = self.ocs(account, "POST", path).header("Content-Type", "application/json");
        let sent = request.body(body.to_string()).send().await;
        sent.unwrap_or_else(|error| panic!("POST {path}: {error}"))
    }

    /// A request as `account` without a body (DELETE, GET, HEAD, an
    /// empty-bodied MOVE is [`Target::as_account`] with its header).
    pub async fn send(&self, account: &Account, method: &str, path: &str) -> reqwest::Response {
        let sent = self.as_account(account, method, path).send().await;
        sent.unwrap_or_else(|error| panic!("{method} {path}: {error}"))
    }

    /// A GET of a DAV path as `account`: its status and its body as text.
    pub async fn get_text(&self, account: &Account, path: &str) -> (u16, String) {
        let response = self.send(account, "GET", path).await;
        let status = response.status().as_u16();
        (status, response.text().await.unwrap_or_default())
    }

    /// A DELETE of `path` in `account`'s files: its status.
    pub async fn delete_file(&self, account: &Account, path: &str) -> u16 {
        self.send(account, "DELETE", &self.files_path(account, path)).await.status().as_u16()
    }

    /// A new folder of `account`'s named from `stem` (unique to the run),
    /// which the test removes with [`Target::cleanup`].
    pub async fn scratch_folder(&self, account: &Account, stem: &str) -> String {
        let folder = self.unique(stem);
        assert_eq!(self.mkcol(account, &folder).await, 201, "MKCOL {folder}");
        folder
    }

    /// Deletes what a test created; failures are ignored (cleanup only).
    pub async fn cleanup(&self, account: &Account, path: &str) {
        let _ = self.as_account(account, "DELETE", &self.files_path(account, path)).send().await;
    }

    /// A WebDAV request as `account` with an XML body (PROPFIND, REPORT,
    /// PROPPATCH, an extended MKCOL), with a `Depth` where given.
    pub async fn send_xml(
        &self,
        account: &Account,
        method: &str,
        path: &str,
        depth: Option<&str>,
        body: impl Into<String>,
    ) -> reqwest::Response {
        let mut request = self.as_account(account, method, path);
        if let Some(depth) = depth {
            request = request.header("Depth", depth);
        }
        let request = request.header("Content-Type", "application/xml; charset=utf-8");
        request.body(body.into()).send().await.unwrap_or_else(|error| panic!("{method}: {error}"))
    }

    /// A PROPFIND; returns the status and the parsed multistatus (if any).
    pub async fn propfind(
        &self,
        account: &Account,
        path: &str,
        depth: &str,
        body: &str,
    ) -> (u16, Option<Multistatus>) {
        let response = self.send_xml(account, "PROPFIND", path, Some(depth), body).await;
        let status = response.status().as_u16();
        let body = response.bytes().await.expect("body");
        (status, if status == 207 { Some(Multistatus::parse(&body)) } else { None })
    }
}

/// An authorization code with its PKCE verifier.
#[derive(Debug, Clone)]
pub struct Grant {
    pub code: String,
    pub verifier: String,
}

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    /// `client_secret_post`: id and secret in the form.
    Post,
    /// `client_secret_basic`: HTTP Basic with id and secret.
    Basic,
}

/// A message for a route that is missing on a real server.
pub fn missing_app(app: &str, route: &str) -> String {
    format!(
        "{route} is not served: the `{app}` app must be installed and enabled \
         (`occ app:enable {app}`)"
    )
}

fn method_of(method: &str) -> reqwest::Method {
    reqwest::Method::from_bytes(method.as_bytes()).expect("valid method")
}

/// A refusal's status and sabre's error body: `(status, s:exception,
/// s:message)`; empty strings where the body has no such element.
pub async fn sabre_error(response: reqwest::Response) -> (u16, String, String) {
    let status = response.status().as_u16();
    let body = response.bytes().await.unwrap_or_default();
    let Ok(error) = xml_tree::parse(&body) else {
        return (status, String::new(), String::new());
    };
    let text = |local| error.child(xml_tree::SABRE, local).map(Element::text).unwrap_or_default();
    (status, text("exception"), text("message"))
}

pub fn header(response: &reqwest::Response, name: &str) -> String {
    response.headers().get(name).and_then(|value| value.to_str().ok()).unwrap_or("").to_string()
}

pub fn form_encode(pairs: &[(&str, String)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs.iter().map(|(name, value)| (*name, value.as_str())))
        .finish()
}

pub fn attribute_after(html: &str, marker: &str) -> Option<String> {
    let start = html.find(marker)? + marker.len();
    let end = html[start..].find('"')?;
    Some(
        html[start..start + end]
            .replace("&#x2B;", "+")
            .replace("&#x3D;", "=")
            .replace("&#x2F;", "/"),
    )
}

/// A browser's cookie jar, reduced to name → value.
#[derive(Debug, Default, Clone)]
pub struct Cookies(BTreeMap<String, String>);

impl Cookies {
    pub fn absorb(&mut self, headers: &reqwest::header::HeaderMap) {
        for value in headers.get_all("set-cookie") {
            let Ok(value) = value.to_str() else { continue };
            let pair = value.split(';').next().unwrap_or("");
            let Some((name, value)) = pair.split_once('=') else { continue };
            if value == "deleted" || value.is_empty() {
                self.0.remove(name.trim());
            } else {
                self.0.insert(name.trim().to_string(), value.trim().to_string());
            }
        }
    }

    pub fn header(&self) -> String {
        self.0.iter().map(|(name, value)| format!("{name}={value}")).collect::<Vec<_>>().join("; ")
    }
}

/// A parsed 207 body.
#[derive(Debug, Clone)]
pub struct Multistatus {
    pub root: Element,
    pub responses: Vec<DavResponse>,
}

/// One `d:response`: its href (as sent, not decoded) and the properties of
/// each propstat by status code.
#[derive(Debug, Clone)]
pub struct DavResponse {
    pub href: String,
    pub found: Vec<Element>,
    pub not_found: Vec<Element>,
}

impl DavResponse {
    pub fn prop(&self, ns: &str, local: &str) -> Option<&Element> {
        self.found.iter().find(|property| property.is(ns, local))
    }

    pub fn text(&self, ns: &str, local: &str) -> Option<String> {
        self.prop(ns, local).map(|property| property.text().trim().to_string())
    }

    pub fn decoded_href(&self) -> String {
        percent_decode(&self.href)
    }
}

pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%'
            && index + 2 < bytes.len()
            && bytes[index + 1].is_ascii_hexdigit()
            && bytes[index + 2].is_ascii_hexdigit()
        {
            let hex = std::str::from_utf8(&bytes[index + 1..index + 3]).unwrap_or("00");
            out.push(u8::from_str_radix(hex, 16).unwrap_or(0));
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Multistatus {
    pub fn parse(body: &[u8]) -> Multistatus {
        let root = xml_tree::parse(body).unwrap_or_else(|error| {
            panic!("a 207 body must be XML ({error}): {}", String::from_utf8_lossy(body))
        });
        assert!(root.is(DAV, "multistatus"), "a 207 body's root is d:multistatus");
        let mut responses = Vec::new();
        for response in root.children_named(DAV, "response") {
            let href = response.child(DAV, "href").map(|href| href.text()).unwrap_or_default();
            let mut found = Vec::new();
            let mut not_found = Vec::new();
            for propstat in response.children_named(DAV, "propstat") {
                let code = propstat
                    .child(DAV, "status")
                    .and_then(|status| status.text().split_whitespace().nth(1).map(str::to_string))
                    .unwrap_or_default();
                let props: Vec<Element> = propstat
                    .child(DAV, "prop")
                    .map(|prop| prop.children().cloned().collect())
                    .unwrap_or_default();
                match code.as_str() {
                    "200" => found.extend(props),
                    "404" => not_found.extend(props),
                    _ => {}
                }
            }
            responses.push(DavResponse { href: href.trim().to_string(), found, not_found });
        }
        Multistatus { root, responses }
    }

    /// The response whose decoded href ends with `suffix`.
    pub fn find(&self, suffix: &str) -> Option<&DavResponse> {
        self.responses.iter().find(|response| response.decoded_href().ends_with(suffix))
    }
}

/// The status of an OCS JSON answer and its envelope.
pub async fn ocs_json(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    let value = serde_json::from_str(&text)
        .unwrap_or_else(|_| panic!("an OCS answer ({status}) must be JSON when asked for: {text}"));
    (status, value)
}

/// Fails with a message naming the app when `status` says the route is not
/// served (404) — Nextcloud's answer for an app that is not enabled.
pub fn require_app(status: u16, app: &str, route: &str) {
    assert_ne!(status, 404, "{}", missing_app(app, route));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounts_are_uid_password_and_an_optional_app_password() {
        let account = Account::parse("alice:pw").unwrap();
        assert_eq!((account.uid.as_str(), account.basic_secret()), ("alice", "pw"));
        let account = Account::parse(" bob:pw:app-pw ").unwrap();
        assert_eq!(account.app_password.as_deref(), Some("app-pw"));
        assert_eq!(account.basic_secret(), "app-pw");
        assert!(Account::parse("alice").is_err());
        assert!(Account::parse(":pw").is_err());
    }

    #[test]
    fn cookies_keep_the_latest_value_and_forget_deleted_ones() {
        let mut headers = reqwest::header::HeaderMap::new();
        for cookie in ["oc123=first; path=/", "nc_username=alice; path=/", "oc123=second; path=/"] {
            headers.append("set-cookie", cookie.parse().unwrap());
        }
        let mut cookies = Cookies::default();
        cookies.absorb(&headers);
        assert_eq!(cookies.header(), "nc_username=alice; oc123=second");
        let mut deleted = reqwest::header::HeaderMap::new();
        deleted
            .append("set-cookie", "nc_username=deleted; expires=Thu, 01 Jan 1970".parse().unwrap());
        cookies.absorb(&deleted);
        assert_eq!(cookies.header(), "oc123=second");
    }

    #[test]
    fn hrefs_are_percent_decoded() {
        assert_eq!(percent_decode("/a%20b/%C3%A9t%C3%A9%2"), "/a b/été%2");
    }

    #[test]
    fn the_request_token_is_read_from_the_page() {
        let html = r#"<head data-user="alice" data-requesttoken="abc&#x2B;def&#x3D;">"#;
        assert_eq!(attribute_after(html, "data-requesttoken=\"").as_deref(), Some("abc+def="));
        assert_eq!(attribute_after("<head>", "data-requesttoken=\""), None);
    }
}
