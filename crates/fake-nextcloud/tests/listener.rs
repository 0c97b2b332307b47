//! Both of the fake's listeners, Nextcloud's and the document converter's,
//! are the shared bounded one (crates/http-serve) with its default header
//! timeout: a connection that sends half a request head is closed within
//! it while other requests are served. (The fake's configuration is not
//! this crate's to shrink, so this test waits the default 10 s.)

use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn half_sent_request_heads_are_closed_on_both_listeners() {
    let fixture = fake_nextcloud::Fixture::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/fixtures/demo.toml"),
    )
    .unwrap();
    let fake = fake_nextcloud::FakeNextcloud::start(&fixture, Default::default()).await.unwrap();
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

/// Opens a connection that sends half a request head and never more, and
/// returns how long the server took to close it (None: still open at
/// `wait`).
async fn half_head_closed_after(
    address: std::net::SocketAddr,
    wait: std::time::Duration,
) -> Option<std::time::Duration> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ").await.unwrap();
    let started = std::time::Instant::now();
    let mut buffer = [0u8; 1024];
    let closed = tokio::time::timeout(wait, async {
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    });
    closed.await.ok().map(|()| started.elapsed())
}

/// `GET path` on a fresh connection answers 200.
async fn answers(address: std::net::SocketAddr, path: &str) -> bool {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream
        .write_all(
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    answer.starts_with(b"HTTP/1.1 200")
}
