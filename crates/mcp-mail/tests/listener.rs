//! mcp-mail's listener is the shared bounded one (crates/http-serve): a
//! connection that sends half a request head is closed within the header
//! timeout while `/health` is still served.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use http_serve::probe::{Probed, assert_half_heads_closed};
use scenario::harness::{CLOSED_URL, MCP_MAIL_AUDIENCE, NEXTCLOUD_AUDIENCE, Stack};
use std::time::Duration;

const HEADER: Duration = Duration::from_millis(500);

#[tokio::test(flavor = "multi_thread")]
async fn a_half_sent_request_head_is_closed_and_health_still_answers() {
    let limits = http_serve::Limits { header_read_timeout: HEADER, connections_max: 4 };
    let server = mcp_mail::McpMail::start_with_limits(
        mcp_mail::Config {
            server: Stack::mcp_server_config_at(CLOSED_URL, MCP_MAIL_AUDIENCE),
            nextcloud_audience: NEXTCLOUD_AUDIENCE.into(),
        },
        limits,
    )
    .await
    .unwrap();
    let listener = Probed { name: "/mcp", url: server.url(), answers: Some("/health") };
    assert_half_heads_closed(&[listener], HEADER, HEADER * 6).await;
    server.shutdown().await;
}
