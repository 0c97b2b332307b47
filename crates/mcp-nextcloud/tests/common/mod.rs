//! Test set-up: the harness's stack (`scenario::harness`) with the fake
//! Nextcloud on the demo fixture and mcp-nextcloud alone in front of it,
//! tokens minted by the fake's OIDC key, and the shared raw JSON-RPC
//! client (`scenario::mcp_client`) so the wire itself is what the tests
//! see. This module only adapts the harness to the tests' words (an
//! upstream mode, the caller's headers); `helpers` holds what several
//! tests do with a stack (index passes, faults, webhooks); `proxy` puts a
//! recorder or a gauge between mcp-nextcloud and the fake.

// Each test file uses a part of this module.
#![allow(dead_code, unused_imports)]

pub mod helpers;
pub mod proxy;

pub use helpers::*;

use fake_nextcloud::Fixture;
use mcp_nextcloud::{Config, UpstreamAuth};
use scenario::harness::{OneServer, Service};
pub use scenario::harness::{demo_fixture, payload_of};
pub use scenario::mcp_client::{McpClient, assert_bare_refusal, failure_kind, text_of};
use serde_json::{Value, json};

pub use scenario::harness::{
    MCP_NEXTCLOUD_AUDIENCE as MCP_AUDIENCE, MCP_NEXTCLOUD_METADATA as METADATA_URL,
    NEXTCLOUD_AUDIENCE,
};
pub const NEXTCLOUD_TOKEN_HEADER: &str = wire::headers::NEXTCLOUD_TOKEN;

/// Asserts that `result` is a failure of `kind` whose text says `words`
/// (the text shown when it does not).
#[track_caller]
pub fn assert_failure(result: &Value, kind: &str, words: &str) {
    assert_eq!(failure_kind(result), Some(kind));
    assert!(text_of(result).contains(words), "{}", text_of(result));
}

/// The harness's stack and client (`stack.fake`, `stack.mcp()`,
/// `stack.rpc(…)`, through `Deref`), in the test's upstream mode.
pub struct Stack {
    pub server: OneServer,
    pub upstream: UpstreamAuth,
}

impl std::ops::Deref for Stack {
    type Target = OneServer;
    fn deref(&self) -> &OneServer {
        &self.server
    }
}

pub async fn start(upstream: UpstreamAuth) -> Stack {
    start_with(upstream, None).await
}

/// Like [`start`], with mcp-nextcloud reaching Nextcloud at `nextcloud_url`
/// (a recorder in front of the fake) instead of the fake itself.
pub async fn start_with(upstream: UpstreamAuth, nextcloud_url: Option<String>) -> Stack {
    start_configured(upstream, nextcloud_url, |_| {}).await
}

/// Like [`start_with`], letting the test change mcp-nextcloud's
/// configuration (index, webhooks, converter) before it starts.
pub async fn start_configured(
    upstream: UpstreamAuth,
    nextcloud_url: Option<String>,
    edit: impl FnOnce(&mut Config) + Send + 'static,
) -> Stack {
    start_fixture(&demo_fixture(), upstream, nextcloud_url, edit).await
}

/// Like [`start_configured`], on a fixture of the test's own.
pub async fn start_fixture(
    fixture: &Fixture,
    upstream: UpstreamAuth,
    nextcloud_url: Option<String>,
    edit: impl FnOnce(&mut Config) + Send + 'static,
) -> Stack {
    let mode = upstream.clone();
    let server = scenario::harness::Stack::builder()
        .fixture(fixture.clone())
        .edit_mcp_nextcloud(move |config| {
            config.upstream = mode;
            config.server.allowed_hosts.push("localhost".into());
            if let Some(url) = nextcloud_url {
                config.server.nextcloud_url = url;
            }
            edit(config);
        })
        .start_server(Service::McpNextcloud)
        .await
        .unwrap();
    Stack { server, upstream }
}

pub fn second_token() -> UpstreamAuth {
    UpstreamAuth::SecondToken { nextcloud_audience: NEXTCLOUD_AUDIENCE.to_string() }
}

impl Stack {
    /// Headers for `uid` in the stack's upstream mode: the MCP token, plus
    /// the Nextcloud token or the user's first app password from the fixture.
    pub fn headers_for(&self, uid: &str) -> Vec<(String, String)> {
        let mut headers =
            vec![("authorization".into(), format!("Bearer {}", self.token(uid, MCP_AUDIENCE)))];
        match &self.upstream {
            UpstreamAuth::SecondToken { .. } => {
                headers.push((NEXTCLOUD_TOKEN_HEADER.into(), self.token(uid, NEXTCLOUD_AUDIENCE)))
            }
            UpstreamAuth::SingleToken => {}
            UpstreamAuth::AppPassword => {
                let app_password = self.fake.shared.world().users[uid].app_passwords[0].clone();
                headers.push((wire::headers::APP_PASSWORD.into(), app_password));
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
            (wire::headers::APP_PASSWORD.into(), password),
        ]
    }

    pub async fn call_tool(&self, uid: &str, name: &str, arguments: Value) -> Value {
        self.call_tool_with(&self.headers_for(uid), name, arguments).await
    }

    /// Stops mcp-nextcloud and the fake.
    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}

/// A bearer of the test's making with alice's genuine Nextcloud token: the
/// headers of a forged or misaddressed MCP token.
pub fn with_bearer(stack: &Stack, bearer: impl std::fmt::Display) -> Vec<(String, String)> {
    vec![
        ("authorization".into(), format!("Bearer {bearer}")),
        (NEXTCLOUD_TOKEN_HEADER.into(), stack.token("alice", NEXTCLOUD_AUDIENCE)),
    ]
}
