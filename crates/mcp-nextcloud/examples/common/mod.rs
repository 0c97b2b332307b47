//! What the examples share: mcp-nextcloud started in front of a fake
//! Nextcloud, as the harness configures it, and the headers a client of it
//! sends.

// Each example uses a part of this module.
#![allow(dead_code)]

use fake_nextcloud::FakeNextcloud;
use mcp_nextcloud::index::IndexConfig;
use mcp_nextcloud::{Config, McpNextcloud};
use scenario::harness::{MCP_NEXTCLOUD_AUDIENCE, NEXTCLOUD_AUDIENCE, Stack};

/// mcp-nextcloud in front of `fake`: a second token for Nextcloud, the
/// index in memory, no converter.
pub async fn start_mcp_nextcloud(fake: &FakeNextcloud) -> McpNextcloud {
    start_mcp_nextcloud_with(fake, Default::default()).await
}

/// Like [`start_mcp_nextcloud`], with the index as `index` configures it.
pub async fn start_mcp_nextcloud_with(fake: &FakeNextcloud, index: IndexConfig) -> McpNextcloud {
    McpNextcloud::start(Config {
        server: Stack::mcp_server_config(fake, MCP_NEXTCLOUD_AUDIENCE),
        upstream: mcp_nextcloud::UpstreamAuth::SecondToken {
            nextcloud_audience: NEXTCLOUD_AUDIENCE.to_string(),
        },
        index,
        converter: None,
    })
    .await
    .expect("mcp-nextcloud starts")
}

/// The headers of `uid`'s MCP requests: a bearer token for mcp-nextcloud
/// and the second token it passes on to Nextcloud.
pub fn mcp_headers(fake: &FakeNextcloud, uid: &str) -> Vec<(String, String)> {
    vec![
        (
            "authorization".to_string(),
            format!("Bearer {}", fake.shared.mint_access_token(uid, MCP_NEXTCLOUD_AUDIENCE)),
        ),
        (
            wire::headers::NEXTCLOUD_TOKEN.to_string(),
            fake.shared.mint_access_token(uid, NEXTCLOUD_AUDIENCE),
        ),
    ]
}
