//! Both of mcp-nextcloud's listeners, `/mcp` and the converter's lending
//! one, are the shared bounded one (crates/http-serve): a connection that
//! sends half a request head is closed within the header timeout, and
//! `/health` is still served.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use http_serve::probe::{answers, half_head_closed_after};
use scenario::harness::{CLOSED_URL, MCP_NEXTCLOUD_AUDIENCE, NEXTCLOUD_AUDIENCE, Stack};
use std::time::Duration;

const HEADER: Duration = Duration::from_millis(500);

#[tokio::test(flavor = "multi_thread")]
async fn half_sent_request_heads_are_closed_on_both_listeners() {
    let limits = http_serve::Limits { header_read_timeout: HEADER, connections_max: 4 };
    let server = mcp_nextcloud::McpNextcloud::start_with_limits(
        mcp_nextcloud::Config {
            server: Stack::mcp_server_config_at(CLOSED_URL, MCP_NEXTCLOUD_AUDIENCE),
            upstream: mcp_nextcloud::UpstreamAuth::SecondToken {
                nextcloud_audience: NEXTCLOUD_AUDIENCE.into(),
            },
            index: Default::default(),
            converter: Some(mcp_nextcloud::convert::ConverterConfig {
                url: CLOSED_URL.into(),
                secret: None,
                lend_listen: "127.0.0.1:0".parse().unwrap(),
                lend_url: None,
            }),
        },
        limits,
    )
    .await
    .unwrap();
    let address = server.url().trim_start_matches("http://").parse().unwrap();
    let lend = server.index().converter().expect("a converter").lend_address();
    let slow = tokio::spawn(half_head_closed_after(address, HEADER * 6));
    let slow_lend = tokio::spawn(half_head_closed_after(lend, HEADER * 6));
    assert!(answers(address, "/health").await, "/health beside a slow connection");
    for (listener, slow) in [("/mcp", slow), ("lending", slow_lend)] {
        let closed = slow.await.unwrap().unwrap_or_else(|| panic!("{listener}: still open"));
        assert!(closed >= HEADER * 9 / 10, "{listener}: closed by the header timeout ({closed:?})");
    }
    server.shutdown().await;
}
