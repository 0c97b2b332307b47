//! Both of the fake's listeners, Nextcloud's and the document converter's,
//! are the shared bounded one (crates/http-serve) with its default header
//! timeout: a connection that sends half a request head is closed within
//! it while other requests are served. (The fake's configuration is not
//! this crate's to shrink, so this test waits the default 10 s.)

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use http_serve::probe::{answers, half_head_closed_after};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn half_sent_request_heads_are_closed_on_both_listeners() {
    let fake = common::start_demo().await.fake;
    let header = http_serve::HEADER_READ_TIMEOUT;
    let wait = header + Duration::from_secs(5);
    let address = fake.base_url().trim_start_matches("http://").parse().unwrap();
    let converter = fake.converter_url().trim_start_matches("http://").parse().unwrap();
    let slow = tokio::spawn(half_head_closed_after(address, wait));
    let slow_converter = tokio::spawn(half_head_closed_after(converter, wait));
    assert!(answers(address, "/status.php").await, "status.php beside a slow connection");
    assert!(answers(converter, "/healthcheck").await, "the converter beside a slow connection");
    for (listener, slow) in [("nextcloud", slow), ("converter", slow_converter)] {
        let closed = slow.await.unwrap().unwrap_or_else(|| panic!("{listener}: still open"));
        assert!(closed >= header * 9 / 10, "{listener}: closed by the header timeout ({closed:?})");
    }
    fake.shutdown().await;
}
