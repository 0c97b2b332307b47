//! mcp-mail's listener is the shared bounded one (crates/http-serve): a
//! connection that sends half a request head is closed within the header
//! timeout while `/health` is still served.

use std::time::Duration;

const HEADER: Duration = Duration::from_millis(500);

#[tokio::test(flavor = "multi_thread")]
async fn a_half_sent_request_head_is_closed_and_health_still_answers() {
    let limits = http_serve::Limits { header_read_timeout: HEADER, connections_max: 4 };
    let server = mcp_mail::McpMail::start_with_limits(
        mcp_mail::Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            canonical_url: "http://127.0.0.1:9102/mcp".into(),
            issuer: "http://127.0.0.1:9".into(),
            jwks_url: None,
            app_url: "http://127.0.0.1:9".into(),
            nextcloud_audience: "nextcloud".into(),
            allowed_hosts: vec!["127.0.0.1".into()],
            clock: Default::default(),
        },
        limits,
    )
    .await
    .unwrap();
    let address = server.url().trim_start_matches("http://").parse().unwrap();
    let slow = tokio::spawn(half_head_closed_after(address, HEADER * 6));
    assert!(health_answers(address).await, "/health beside a slow connection");
    let closed = slow.await.unwrap().expect("the half-sent head is closed");
    assert!(closed >= HEADER * 9 / 10, "closed by the header timeout ({closed:?})");
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
