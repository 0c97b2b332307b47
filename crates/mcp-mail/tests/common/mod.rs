//! Test set-up: the fake Nextcloud for its OIDC provider (JWKS and minted
//! tokens), a stand-in for the Tamebi app's mail routes (`stand_in`), an
//! mcp-mail in front of both, and the shared raw JSON-RPC client
//! (`scenario::mcp_client`) so the wire itself is what the tests see.

// Each test file uses a part of this module.
#![allow(dead_code, unused_imports)]

pub mod stand_in;

pub use stand_in::*;

use access_token::Claims;
use base64::Engine as _;
use fake_nextcloud::{FakeNextcloud, Fixture};
use mcp_mail::{Config, McpMail};
pub use scenario::mcp_client::{McpClient, assert_bare_refusal, failure_kind, text_of};
use serde_json::{Value, json};

pub use scenario::harness::{
    MCP_MAIL_AUDIENCE as MCP_AUDIENCE, MCP_NEXTCLOUD_AUDIENCE, NEXTCLOUD_AUDIENCE,
};
pub const NEXTCLOUD_TOKEN_HEADER: &str = wire::headers::NEXTCLOUD_TOKEN;
/// Where a refusal's challenge points: the metadata of [`MCP_AUDIENCE`].
pub const METADATA_URL: &str = "http://127.0.0.1:9102/.well-known/oauth-protected-resource/mcp";

pub struct Stack {
    pub fake: FakeNextcloud,
    pub app: MailStandIn,
    pub mcp: McpMail,
    /// mcp-mail's `/mcp`; the stack is used as this client.
    pub client: McpClient,
}

/// `stack.rpc(…)`, `stack.http`: the stack speaks to its server through
/// the shared client.
impl std::ops::Deref for Stack {
    type Target = McpClient;
    fn deref(&self) -> &McpClient {
        &self.client
    }
}

pub async fn start() -> Stack {
    start_with(|app| app.url.clone()).await
}

/// Like [`start`], with mcp-mail reaching the app at the URL `app_url`
/// makes of the stand-in's (another host name for it, a closed port).
pub async fn start_with(app_url: impl FnOnce(&MailStandIn) -> String) -> Stack {
    let fake =
        FakeNextcloud::start(&demo_fixture(), fake_nextcloud::Config::default()).await.unwrap();
    let app = MailStandIn::start().await;
    let mcp = McpMail::start(config_for(&fake, &app_url(&app))).await.unwrap();
    Stack { fake, app, client: client_of(&mcp), mcp }
}

pub fn demo_fixture() -> Fixture {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/fixtures/demo.toml");
    Fixture::load(&path).unwrap()
}

/// A client for `mcp`'s `/mcp`.
pub fn client_of(mcp: &McpMail) -> McpClient {
    McpClient::new(format!("{}/mcp", mcp.url()))
}

/// mcp-mail's configuration: the harness's (`scenario::harness`), with
/// `app_url` for mail (so the issuer's keys are named: they stay on the
/// fake) and `localhost` accepted as a host too.
pub fn config_for(fake: &FakeNextcloud, app_url: &str) -> Config {
    let mut config = scenario::harness::Stack::mail_config(fake);
    config.server.jwks_url = Some(config.server.jwks_url());
    config.server.nextcloud_url = app_url.to_string();
    config.server.allowed_hosts.push("localhost".into());
    config
}

impl Stack {
    /// The claims the fake puts in `uid`'s token for `audience`, for a test
    /// to alter and sign.
    pub fn claims(&self, uid: &str, audience: &str) -> Claims {
        serde_json::from_value(payload_of(&self.token(uid, audience))).unwrap()
    }

    pub fn token(&self, uid: &str, audience: &str) -> String {
        self.fake.shared.mint_access_token(uid, audience)
    }

    /// A Nextcloud-audience token for `uid`, which the stand-in accepts.
    pub fn nextcloud_token(&self, uid: &str) -> String {
        let token = self.token(uid, NEXTCLOUD_AUDIENCE);
        self.app.accept(&token, uid);
        token
    }

    /// What the orchestrator sends for `uid`: the token addressed to
    /// mcp-mail and the user's Nextcloud token.
    pub fn headers_for(&self, uid: &str) -> Vec<(String, String)> {
        vec![
            ("authorization".into(), format!("Bearer {}", self.token(uid, MCP_AUDIENCE))),
            (NEXTCLOUD_TOKEN_HEADER.into(), self.nextcloud_token(uid)),
        ]
    }

    pub async fn call_tool(&self, uid: &str, name: &str, arguments: Value) -> Value {
        self.call_tool_with(&self.headers_for(uid), name, arguments).await
    }

    pub async fn shutdown(self) {
        self.mcp.shutdown().await;
        self.app.shutdown().await;
        self.fake.shutdown().await;
    }
}

/// A JWT's payload, unverified.
pub fn payload_of(token: &str) -> Value {
    let payload = token.split('.').nth(1).unwrap();
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap();
    serde_json::from_slice(&payload).unwrap()
}
