//! Both of the fake's listeners, Nextcloud's and the document converter's,
//! are the shared bounded one (crates/http-serve) with its default header
//! timeout: a connection that sends half a request head is closed within
//! it while other requests are served. (The fake's configuration is not
//! this crate's to shrink, so this test waits the default 10 s.)

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use http_serve::probe::{Probed, assert_half_heads_closed};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn half_sent_request_heads_are_closed_on_both_listeners() {
    let fake = common::start_demo().await.fake;
    let header = http_serve::HEADER_READ_TIMEOUT;
    let listeners = [
        Probed { name: "nextcloud", url: fake.base_url(), answers: Some("/status.php") },
        Probed { name: "converter", url: fake.converter_url(), answers: Some("/healthcheck") },
    ];
    assert_half_heads_closed(&listeners, header, header + Duration::from_secs(5)).await;
    fake.shutdown().await;
}
