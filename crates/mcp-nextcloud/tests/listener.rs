//! Both of mcp-nextcloud's listeners, `/mcp` and the converter's lending
//! one, are the shared bounded one (crates/http-serve): a connection that
//! sends half a request head is closed within the header timeout, and
//! `/health` is still served.

use std::time::Duration;

const HEADER: Duration = Duration::from_millis(500);

#[tokio::test(flavor = "multi_thread")]
async fn half_sent_request_heads_are_closed_on_both_listeners() {
    let limits = http_serve::Limits { header_read_timeout: HEADER, connections_max: 4 };
    let server = mcp_nextcloud::McpNextcloud::start_with_limits(
        mcp_nextcloud::Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            canonical_url: "http://127.0.0.1:9101/mcp".into(),
            issuer: "http://127.0.0.1:9".into(),
            jwks_url: None,
            nextcloud_url: "http://127.0.0.1:9".into(),
            upstream: mcp_nextcloud::UpstreamAuth::SecondToken {
                nextcloud_audience: "nextcloud".into(),
            },
            allowed_hosts: vec!["127.0.0.1".into()],
            clock: Default::default(),
            index: Default::default(),
            converter: Some(mcp_nextcloud::convert::ConverterConfig {
                url: "http://127.0.0.1:9".into(),
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
    assert!(health_answers(address).await, "/health beside a slow connection");
    for (listener, slow) in [("/mcp", slow), ("lending", slow_lend)] {
        let closed = slow.await.unwrap().unwrap_or_else(|| panic!("{listener}: still open"));
        assert!(closed >= HEADER * 9 / 10, "{listener}: closed by the header timeout ({closed:?})");
    }
    server.shutdown().await;
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

/// `GET /health` on a fresh connection answers 200.
async fn health_answers(address: std::net::SocketAddr) -> bool {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    answer.starts_with(b"HTTP/1.1 200")
}
