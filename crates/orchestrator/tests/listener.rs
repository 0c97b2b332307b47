//! The orchestrator's listener is the shared bounded one (crates/http-serve):
//! a connection that sends half a request head is closed within the header
//! timeout while `/health` is still served.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

#[path = "support/alone.rs"]
mod alone;

use http_serve::probe::{Probed, assert_half_heads_closed};
use orchestrator::service::Orchestrator;
use std::time::Duration;

const HEADER: Duration = Duration::from_millis(500);

#[tokio::test(flavor = "multi_thread")]
async fn a_half_sent_request_head_is_closed_and_health_still_answers() {
    let limits = http_serve::Limits { header_read_timeout: HEADER, connections_max: 4 };
    let config = alone::config(b"listener-test-secret-0123456789abcdef0123", None);
    let orchestrator = Orchestrator::start_with_limits(config, limits).await.unwrap();
    let listener =
        Probed { name: "the orchestrator", url: orchestrator.url(), answers: Some("/health") };
    assert_half_heads_closed(&[listener], HEADER, HEADER * 6).await;
    orchestrator.shutdown().await;
}
