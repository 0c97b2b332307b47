//! Shared set-up for the integration tests: start a fake on loopback from a
//! fixture string and talk to it with a real HTTP client.

#![allow(dead_code)]

use fake_nextcloud::{AppConfig, Config, FakeNextcloud, Fixture};

/// `[server]` and the people of [`SMALL`]: alice and bob in group "staff",
/// carol alone. A macro so that a test's own world can be written as
/// `concat!(small_people!(), "…its files…")` and keep the same people.
macro_rules! small_people {
    () => {
        r##"
[server]
overwritehost = "self"

[[users]]
uid = "alice"
display_name = "Alice Martin"
password = "alice-pw"
app_passwords = ["alice-app-password"]
email = "alice@example.com"
groups = ["staff"]

[[users]]
uid = "bob"
display_name = "Bob Stone"
password = "bob-pw"
app_passwords = ["bob-app-password"]
groups = ["staff"]

[[users]]
uid = "carol"
password = "carol-pw"
"##
    };
}
#[allow(unused_imports)]
pub(crate) use small_people;

/// A small world most tests start from: [`small_people`]; alice shares
/// "Shared" with bob (read + update + create).
pub const SMALL: &str = concat!(
    small_people!(),
    r##"
[[files]]
owner = "alice"
path = "Documents/notes.md"
content = "# Notes\n\nBudget: 40 000 EUR\n"
mtime = "2026-03-01T10:00:00Z"

[[files]]
owner = "alice"
path = "Shared/plan.txt"
content = "The plan.\n"
mtime = "2026-03-02T10:00:00Z"

[[files]]
owner = "alice"
path = "Private/secret.txt"
content = "alice only\n"

[[files]]
owner = "bob"
path = "Work/todo.md"
content = "- ship it\n"

[[shares]]
owner = "alice"
path = "Shared"
share_with = "bob"
permissions = 7
"##
);

pub struct Running {
    pub fake: FakeNextcloud,
    pub http: reqwest::Client,
}

impl Running {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.fake.base_url(), path)
    }

    /// A request to the admin endpoint (`/__fake/…`), with the admin token.
    pub fn admin(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        admin_request(&self.http, &self.fake, method, path)
    }

    /// An admin request with an optional JSON body, sent.
    pub async fn admin_send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> reqwest::Response {
        let mut request = self.admin(method, path);
        if let Some(body) = body {
            request = request.json(&body);
        }
        request.send().await.expect("the admin endpoint answers")
    }

    /// An admin request's answer as JSON; a body that is not JSON fails the test.
    pub async fn admin_json(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> serde_json::Value {
        self.admin_send(method, path, body).await.json().await.expect("the admin answer is JSON")
    }

    /// A request with Basic auth for `uid` (password = "{uid}-pw").
    pub fn as_user(&self, method: &str, uid: &str, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), self.url(path))
            .basic_auth(uid, Some(format!("{uid}-pw")))
    }

    /// A GET with `token` as the bearer.
    pub fn get_with_bearer(&self, path: &str, token: &str) -> reqwest::RequestBuilder {
        self.http.get(self.url(path)).bearer_auth(token)
    }

    /// The status of a Depth-0 PROPFIND on `path` with `token` as the bearer.
    pub async fn propfind_status_with_bearer(
        &self,
        path: &str,
        token: &str,
    ) -> reqwest::StatusCode {
        let propfind = reqwest::Method::from_bytes(b"PROPFIND").unwrap();
        let request = self.http.request(propfind, self.url(path)).bearer_auth(token);
        request.header("Depth", "0").send().await.unwrap().status()
    }

    /// `as_user` with the `OCS-APIRequest` header OCS routes need.
    pub fn ocs(&self, method: &str, uid: &str, path: &str) -> reqwest::RequestBuilder {
        self.as_user(method, uid, path).header("OCS-APIRequest", "true")
    }

    /// The issuer discovery names when asked through `host`.
    pub async fn issuer(&self, host: &str) -> serde_json::Value {
        let request =
            self.http.get(self.url("/.well-known/openid-configuration")).header("Host", host);
        let discovery: serde_json::Value = request.send().await.unwrap().json().await.unwrap();
        discovery["issuer"].clone()
    }

    /// Posts the login form (with `host` as the Host header when given).
    pub async fn login(&self, user: &str, password: &str, host: Option<&str>) -> reqwest::Response {
        let mut request = self
            .http
            .post(self.url("/index.php/login"))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form(&[("user", user), ("password", password)]));
        if let Some(host) = host {
            request = request.header("Host", host);
        }
        request.send().await.expect("the login form answers")
    }
}

/// A request to `fake`'s admin endpoint (`/__fake/…`), with the admin token.
pub fn admin_request(
    http: &reqwest::Client,
    fake: &FakeNextcloud,
    method: reqwest::Method,
    path: &str,
) -> reqwest::RequestBuilder {
    http.request(method, format!("{}{path}", fake.base_url())).header(
        fake_nextcloud::admin::TOKEN_HEADER,
        fake.admin_token().expect("the admin routes are on"),
    )
}

/// An `application/x-www-form-urlencoded` body.
pub fn form(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish()
}

/// The Cookie header value that sends back what `response` set.
pub fn cookies(response: &reqwest::Response) -> String {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|value| value.to_str().unwrap().split(';').next().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Status and body; a body that is not JSON comes back as a JSON string.
pub async fn json_of(response: reqwest::Response) -> (u16, serde_json::Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)))
}

pub async fn start(fixture: &str) -> Running {
    start_with(&Fixture::parse(fixture).expect("fixture parses")).await
}

/// Starts a fake on loopback from a parsed fixture.
pub async fn start_with(fixture: &Fixture) -> Running {
    Running { fake: start_fake_with_app(fixture, AppConfig::default()).await, http: http_client() }
}

/// How every test starts a fake: on loopback, `app` as the Tamebi app's
/// settings (the default: no orchestrator, no secret).
pub async fn start_fake_with_app(fixture: &Fixture, app: AppConfig) -> FakeNextcloud {
    FakeNextcloud::start_with_app(fixture, Config::default(), app).await.expect("fake starts")
}

/// The fake's signing keys, as a validator fetches them.
pub async fn jwks(fake: &FakeNextcloud) -> access_token::JwkSet {
    let url = format!("{}/index.php/apps/oidc/jwks", fake.base_url());
    http_client().get(url).send().await.unwrap().json().await.unwrap()
}

/// A client that does not follow redirects, so tests see each 30x.
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// The scenarios' demo fixture (`scenarios/fixtures/demo.toml`).
pub fn demo_fixture_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/fixtures/demo.toml")
}

pub fn demo_fixture() -> Fixture {
    Fixture::load(&demo_fixture_path()).expect("the demo fixture loads")
}

pub async fn start_demo() -> Running {
    start_with(&demo_fixture()).await
}

/// alice's password in the demo fixture.
pub const DEMO_ALICE_PASSWORD: &str = "alice-demo-password";
/// bob's password in the demo fixture.
pub const DEMO_BOB_PASSWORD: &str = "bob-demo-password";

/// A whole answer, read: status, headers and body text.
pub struct Answer {
    pub status: reqwest::StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

/// One request with Basic auth; `depth` is sent as `Depth` when given.
pub async fn request(
    running: &Running,
    method: &str,
    credentials: (&str, &str),
    path: &str,
    depth: Option<&str>,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut builder = running
        .http
        .request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), running.url(path))
        .basic_auth(credentials.0, Some(credentials.1))
        .body(body.to_string());
    if let Some(depth) = depth {
        builder = builder.header("Depth", depth);
    }
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let response = builder.send().await.expect("request is answered");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.text().await.unwrap_or_default();
    Answer { status, headers, body }
}

/// A request as the demo fixture's alice.
pub async fn as_alice(
    running: &Running,
    method: &str,
    path: &str,
    depth: Option<&str>,
    body: &str,
) -> Answer {
    request(running, method, ("alice", DEMO_ALICE_PASSWORD), path, depth, &[], body).await
}
