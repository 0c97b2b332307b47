//! Probes the services' own listener tests use against a running service:
//! a connection that sends half a request head and waits to be closed, and
//! a plain `GET` on a fresh connection. Real sockets, no HTTP client: a
//! client library would finish or time out the request itself.

use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// Opens a connection that sends half a request head and never more, and
/// returns how long the server took to close it (`None`: still open after
/// `wait`).
pub async fn half_head_closed_after(address: SocketAddr, wait: Duration) -> Option<Duration> {
    let mut stream = TcpStream::connect(address).await.expect("the listener accepts");
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .await
        .expect("half a head is written");
    let started = Instant::now();
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

/// Whether `GET path` on a fresh connection answers 200.
pub async fn answers(address: SocketAddr, path: &str) -> bool {
    let Ok(mut stream) = TcpStream::connect(address).await else { return false };
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).await.is_err() {
        return false;
    }
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    answer.starts_with(b"HTTP/1.1 200")
}

/// One listener a test probes: its name in messages, its base URL
/// (`http://host:port`), and a path it answers 200 on (`None`: it has none
/// to ask).
pub struct Probed<'a> {
    pub name: &'a str,
    pub url: &'a str,
    pub answers: Option<&'a str>,
}

/// Asserts the bound every listener keeps: while a connection that sent
/// half a request head waits on each of `listeners`, each still answers
/// its path, and each half-sent head is closed by the header timeout
/// `header` (within `wait`, and not before nine tenths of `header`).
pub async fn assert_half_heads_closed(listeners: &[Probed<'_>], header: Duration, wait: Duration) {
    let address = |probed: &Probed<'_>| -> SocketAddr {
        probed.url.trim_start_matches("http://").parse().expect("an http://host:port URL")
    };
    let slow: Vec<_> = listeners
        .iter()
        .map(|probed| tokio::spawn(half_head_closed_after(address(probed), wait)))
        .collect();
    for probed in listeners {
        if let Some(path) = probed.answers {
            assert!(
                answers(address(probed), path).await,
                "{}: {path} beside a slow connection",
                probed.name
            );
        }
    }
    for (probed, slow) in listeners.iter().zip(slow) {
        let name = probed.name;
        let closed =
            slow.await.expect("the probe ran").unwrap_or_else(|| panic!("{name}: still open"));
        assert!(closed >= header * 9 / 10, "{name}: closed by the header timeout ({closed:?})");
    }
}
