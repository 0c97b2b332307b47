//! Test set-up: the harness's stack (`scenario::harness`) with the fake
//! Nextcloud for its OIDC provider (JWKS and minted tokens) and mcp-mail
//! alone, pointed at a stand-in for the Tamebi app's mail routes
//! (`stand_in`) instead of the fake's app, and the shared raw JSON-RPC
//! client (`scenario::mcp_client`) so the wire itself is what the tests
//! see. This module only adapts the harness to the tests' words.

// Each test file uses a part of this module.
#![allow(dead_code, unused_imports)]

pub mod stand_in;

pub use stand_in::*;

use mcp_mail::McpMail;
use scenario::harness::{OneServer, Service};
pub use scenario::mcp_client::{McpClient, assert_bare_refusal, failure_kind, text_of};
use serde_json::{Value, json};

pub use scenario::harness::{
    MCP_MAIL_AUDIENCE as MCP_AUDIENCE, MCP_MAIL_METADATA as METADATA_URL, MCP_NEXTCLOUD_AUDIENCE,
    NEXTCLOUD_AUDIENCE,
};
pub const NEXTCLOUD_TOKEN_HEADER: &str = wire::headers::NEXTCLOUD_TOKEN;

/// The harness's stack and client (`stack.fake`, `stack.rpc(…)`, through
/// `Deref`), and the stand-in mcp-mail asks for mail.
pub struct Stack {
    pub server: OneServer,
    pub app: MailStandIn,
}

impl std::ops::Deref for Stack {
    type Target = OneServer;
    fn deref(&self) -> &OneServer {
        &self.server
    }
}

pub async fn start() -> Stack {
    start_with(|app| app.url.clone()).await
}

/// Like [`start`], with mcp-mail reaching the app at the URL `app_url`
/// makes of the stand-in's (another host name for it, a closed port).
/// The issuer's keys are named, so they stay on the fake; `localhost` is
/// accepted as a host too.
pub async fn start_with(app_url: impl FnOnce(&MailStandIn) -> String) -> Stack {
    let app = MailStandIn::start().await;
    let url = app_url(&app);
    let server = scenario::harness::Stack::builder()
        .edit_mail(move |config| {
            config.server.jwks_url = Some(config.server.jwks_url());
            config.server.nextcloud_url = url;
            config.server.allowed_hosts.push("localhost".into());
        })
        .start_server(Service::McpMail)
        .await
        .unwrap();
    Stack { server, app }
}

impl Stack {
    /// mcp-mail.
    pub fn mcp(&self) -> &McpMail {
        self.mail()
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
        self.server.shutdown().await;
        self.app.shutdown().await;
    }
}
