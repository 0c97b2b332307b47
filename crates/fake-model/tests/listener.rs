//! The fake model's listener is the shared bounded one (crates/http-serve):
//! a connection that sends half a request head is closed within the header
//! timeout while other requests are served.

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
    let address = model.url().trim_start_matches("http://").parse().unwrap();
    let slow = tokio::spawn(half_head_closed_after(address, HEADER * 6));
    assert!(answers(address, "/v1/models").await, "/v1/models beside a slow connection");
    let closed = slow.await.unwrap().expect("the half-sent head is closed");
    assert!(closed >= HEADER * 9 / 10, "closed by the header timeout ({closed:?})");
    model.shutdown().await;
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
