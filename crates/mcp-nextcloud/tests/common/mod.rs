//! Test set-up: a fake Nextcloud with the demo fixture, an mcp-nextcloud in
//! front of it, tokens minted by the fake's OIDC key, and a raw JSON-RPC
//! client so the wire itself is what the tests see.

#![allow(dead_code)]

use access_token::{Audience, Claims};
use fake_nextcloud::{FakeNextcloud, Fixture};
use mcp_nextcloud::{Config, McpNextcloud, UpstreamAuth};
use serde_json::{Value, json};

pub const MCP_AUDIENCE: &str = "http://127.0.0.1:9101/mcp";
pub const NEXTCLOUD_AUDIENCE: &str = "nextcloud";

pub struct Stack {
    pub fake: FakeNextcloud,
    pub mcp: McpNextcloud,
    pub http: reqwest::Client,
    pub upstream: UpstreamAuth,
}

pub async fn start(upstream: UpstreamAuth) -> Stack {
    start_with(upstream, None).await
}

/// Like [`start`], with mcp-nextcloud reaching Nextcloud at `nextcloud_url`
/// (a recorder in front of the fake) instead of the fake itself.
pub async fn start_with(upstream: UpstreamAuth, nextcloud_url: Option<String>) -> Stack {
    start_configured(upstream, nextcloud_url, |_| {}).await
}

pub fn demo_fixture() -> Fixture {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/fixtures/demo.toml");
    Fixture::load(&path).unwrap()
}

/// Like [`start_with`], letting the test change mcp-nextcloud's
/// configuration (index, webhooks, converter) before it starts.
pub async fn start_configured(
    upstream: UpstreamAuth,
    nextcloud_url: Option<String>,
    edit: impl FnOnce(&mut Config),
) -> Stack {
    start_fixture(&demo_fixture(), upstream, nextcloud_url, edit).await
}

/// Like [`start_configured`], on a fixture of the test's own.
pub async fn start_fixture(
    fixture: &Fixture,
    upstream: UpstreamAuth,
    nextcloud_url: Option<String>,
    edit: impl FnOnce(&mut Config),
) -> Stack {
    let fake = FakeNextcloud::start(fixture, fake_nextcloud::Config::default()).await.unwrap();
    let mut config = config_for(&fake, &upstream);
    if let Some(url) = nextcloud_url {
        config.nextcloud_url = url;
    }
    edit(&mut config);
    let mcp = McpNextcloud::start(config).await.unwrap();
    Stack { fake, mcp, http: reqwest::Client::new(), upstream }
}

/// mcp-nextcloud's configuration in front of `fake`, on a free port.
pub fn config_for(fake: &FakeNextcloud, upstream: &UpstreamAuth) -> Config {
    Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        canonical_url: MCP_AUDIENCE.to_string(),
        issuer: fake.base_url().to_string(),
        jwks_url: None,
        nextcloud_url: fake.base_url().to_string(),
        upstream: upstream.clone(),
        allowed_hosts: vec!["127.0.0.1".into(), "localhost".into()],
        clock: Default::default(),
        index: Default::default(),
        converter: None,
    }
}

pub fn second_token() -> UpstreamAuth {
    UpstreamAuth::SecondToken { nextcloud_audience: NEXTCLOUD_AUDIENCE.to_string() }
}

impl Stack {
    pub fn claims(&self, uid: &str, audience: &str) -> Claims {
        let now =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
                as i64;
        Claims {
            iss: self.fake.base_url().to_string(),
            sub: uid.to_string(),
            aud: Audience::One(audience.to_string()),
            exp: now + 900,
            iat: now,
            nbf: None,
            jti: format!("jti-{uid}-{audience}"),
            client_id: "tamebi-mcp-nextcloud".to_string(),
            azp: None,
            preferred_username: Some(uid.to_string()),
            scope: Some("openid profile".to_string()),
        }
    }

    pub fn token(&self, uid: &str, audience: &str) -> String {
        self.fake.shared.signer.sign_access_token(&self.claims(uid, audience))
    }

    /// Headers for `uid` in the stack's upstream mode: the MCP token, plus
    /// the Nextcloud token or the user's first app password from the fixture.
    pub fn headers_for(&self, uid: &str) -> Vec<(String, String)> {
        let mut headers =
            vec![("authorization".into(), format!("Bearer {}", self.token(uid, MCP_AUDIENCE)))];
        match &self.upstream {
            UpstreamAuth::SecondToken { .. } => headers
                .push(("x-tamebi-nextcloud-token".into(), self.token(uid, NEXTCLOUD_AUDIENCE))),
            UpstreamAuth::SingleToken => {}
            UpstreamAuth::AppPassword => {
                let app_password = self.fake.shared.world().users[uid].app_passwords[0].clone();
                headers.push(("x-tamebi-app-password".into(), app_password));
            }
        }
        headers
    }

    /// Headers for `uid` in app-password mode: the token addressed to us
    /// and the user's first app password from the fixture, as the Nextcloud
    /// app sends them.
    pub fn app_password_headers_for(&self, uid: &str) -> Vec<(String, String)> {
        let password = self.fake.shared.world().users[uid].app_passwords[0].clone();
        vec![
            ("authorization".into(), format!("Bearer {}", self.token(uid, MCP_AUDIENCE))),
            ("x-tamebi-app-password".into(), password),
        ]
    }

    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.mcp.url())
    }

    /// One JSON-RPC request as a 2025-11-25 client sends it, statelessly.
    pub async fn rpc(
        &self,
        headers: &[(String, String)],
        method: &str,
        params: Value,
    ) -> reqwest::Response {
        let mut request = self
            .http
            .post(self.mcp_url())
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-11-25")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
        for (name, value) in headers {
            request = request.header(name, value);
        }
        request.send().await.unwrap()
    }

    /// The JSON-RPC result of a successful call (SSE or JSON answer).
    pub async fn rpc_result(
        &self,
        headers: &[(String, String)],
        method: &str,
        params: Value,
    ) -> Value {
        let response = self.rpc(headers, method, params).await;
        assert_eq!(response.status(), 200, "{method} answered {}", response.status());
        let text = response.text().await.unwrap();
        let json_text = text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .find(|line| !line.is_empty())
            .unwrap_or(text.trim());
        let message: Value =
            serde_json::from_str(json_text).unwrap_or_else(|_| panic!("JSON-RPC answer: {text}"));
        assert!(message.get("error").is_none(), "{method} failed: {message}");
        message["result"].clone()
    }

    pub async fn call_tool(&self, uid: &str, name: &str, arguments: Value) -> Value {
        self.call_tool_with(&self.headers_for(uid), name, arguments).await
    }

    /// `call_tool` with the caller's headers given (another upstream mode).
    pub async fn call_tool_with(
        &self,
        headers: &[(String, String)],
        name: &str,
        arguments: Value,
    ) -> Value {
        self.rpc_result(headers, "tools/call", json!({"name": name, "arguments": arguments})).await
    }
}
