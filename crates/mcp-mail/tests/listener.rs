//! mcp-mail's listener is the shared bounded one (crates/http-serve): a
//! connection that sends half a request head is closed within the header
//! timeout while `/health` is still served.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use http_serve::probe::{answers, half_head_closed_after};
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
    let address = server.url().trim_start_matches("http://").parse().unwrap();
    let slow = tokio::spawn(half_head_closed_after(address, HEADER * 6));
    assert!(answers(address, "/health").await, "/health beside a slow connection");
    let closed = slow.await.unwrap().expect("the half-sent head is closed");
    assert!(closed >= HEADER * 9 / 10, "closed by the header timeout ({closed:?})");
    server.shutdown().await;
}
