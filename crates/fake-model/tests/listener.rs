//! The fake model's listener is the shared bounded one (crates/http-serve):
//! a connection that sends half a request head is closed within the header
//! timeout while other requests are served.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use http_serve::probe::{Probed, assert_half_heads_closed};
use std::time::Duration;

const HEADER: Duration = Duration::from_millis(500);

#[tokio::test(flavor = "multi_thread")]
async fn a_half_sent_request_head_is_closed_and_others_are_served() {
    let limits = http_serve::Limits { header_read_timeout: HEADER, connections_max: 4 };
    let model = fake_model::FakeModel::start(fake_model::Config {
        limits,
        ..fake_model::Config::default()
    })
    .await
    .unwrap();
    let listener = Probed { name: "the model", url: model.url(), answers: Some("/v1/models") };
    assert_half_heads_closed(&[listener], HEADER, HEADER * 6).await;
    model.shutdown().await;
}
