//! Both of mcp-nextcloud's listeners, `/mcp` and the converter's lending
//! one, are the shared bounded one (crates/http-serve): a connection that
//! sends half a request head is closed within the header timeout, and
//! `/health` is still served.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use http_serve::probe::{Probed, assert_half_heads_closed};
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
    let lend =
        format!("http://{}", server.index().converter().expect("a converter").lend_address());
    let listeners = [
        Probed { name: "/mcp", url: server.url(), answers: Some("/health") },
        Probed { name: "lending", url: &lend, answers: None },
    ];
    assert_half_heads_closed(&listeners, HEADER, HEADER * 6).await;
    server.shutdown().await;
}
