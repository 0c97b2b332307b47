//! The listener's bounds on real sockets: slow partial heads are closed
//! within the header timeout and do not stop `/health` past the connection
//! limit; an idle keep-alive connection is closed; a stream silent for
//! longer than the header timeout is not cut; shutdown lets a response
//! finish; a request body that stops arriving is given up on.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use axum::Router;
use axum::body::Body;
use axum::routing::get;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

const HEADER: Duration = Duration::from_millis(1000);

fn router() -> Router {
    Router::new()
        .route("/health", get(|| async { "ok" }))
        .route("/echo", axum::routing::post(|body: bytes::Bytes| async move { body }))
        .route(
            "/stream",
            get(|| async {
                // Silent for three header timeouts between two chunks, as a
                // chat stream is while a tool runs.
                let chunks = futures_util::stream::unfold(0, |step| async move {
                    match step {
                        0 => Some((Ok::<_, std::io::Error>(bytes::Bytes::from("first")), 1)),
                        1 => {
                            tokio::time::sleep(HEADER * 3).await;
                            Some((Ok(bytes::Bytes::from("last")), 2))
                        }
                        _ => None,
                    }
                });
                Body::from_stream(chunks)
            }),
        )
}

struct Server {
    address: std::net::SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

async fn start(connections_max: usize) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let limits = http_serve::Limits { header_read_timeout: HEADER, connections_max };
    let task = tokio::spawn(http_serve::serve("test", listener, router(), limits, async move {
        let _ = stopped.await;
    }));
    Server { address, stop, task }
}

impl Server {
    /// Asks for a graceful shutdown and waits until serving has ended.
    async fn stop(self) {
        let _ = self.stop.send(());
        self.task.await.unwrap();
    }
}

/// A connection to the server that has sent `request`.
async fn send(server: &Server, request: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(server.address).await.unwrap();
    stream.write_all(request).await.unwrap();
    stream
}

/// Reads until the server closes the connection (EOF or reset).
async fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return seen,
            Ok(n) => seen.extend_from_slice(&buffer[..n]),
        }
    }
}

async fn get_health(address: std::net::SocketAddr) -> String {
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    String::from_utf8_lossy(&read_until_closed(&mut stream).await).to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_partial_heads_are_closed_in_time_and_health_is_still_served() {
    let server = start(64).await;
    let started = Instant::now();
    let mut slow = Vec::new();
    for _ in 0..80 {
        let mut stream = TcpStream::connect(server.address).await.unwrap();
        // A request head that never ends.
        stream.write_all(b"GET /health HTTP/1.1\r\nHost: test\r\nX-Slow: ").await.unwrap();
        slow.push(stream);
    }
    // Past the limit, /health waits in the backlog for the slow ones to
    // time out, then is served at once.
    let answer = tokio::time::timeout(HEADER * 5, get_health(server.address))
        .await
        .expect("/health is served once the slow connections time out");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("ok"), "{answer}");
    let waited = started.elapsed();
    assert!(waited >= HEADER * 9 / 10, "64 slow connections held the limit first ({waited:?})");

    // Each slow connection is closed: the first 64 after one header
    // timeout, the 16 from the backlog one timeout after they were
    // accepted.
    let deadline = started + HEADER * 2 + Duration::from_millis(1500);
    for (index, stream) in slow.iter_mut().enumerate() {
        let left = deadline.saturating_duration_since(Instant::now());
        let said =
            tokio::time::timeout(left, read_until_closed(stream)).await.unwrap_or_else(|_| {
                panic!("slow connection {index} still open after {:?}", started.elapsed())
            });
        assert!(!String::from_utf8_lossy(&said).contains(" 200 "), "no answer to half a head");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_keep_alive_connection_is_closed() {
    let server = start(8).await;
    let mut stream = send(&server, b"GET /health HTTP/1.1\r\nHost: test\r\n\r\n").await;
    let mut buffer = [0u8; 4096];
    let n = stream.read(&mut buffer).await.unwrap();
    let answer = String::from_utf8_lossy(&buffer[..n]).to_string();
    assert!(answer.starts_with("HTTP/1.1 200") && answer.ends_with("ok"), "{answer}");
    // Kept alive, then nothing: hyper's header timer covers the wait for
    // the next request too.
    let answered = Instant::now();
    let rest = tokio::time::timeout(HEADER * 3, read_until_closed(&mut stream))
        .await
        .expect("the idle keep-alive connection is closed");
    assert!(rest.is_empty(), "nothing more was sent");
    let idle = answered.elapsed();
    assert!(idle >= HEADER * 9 / 10, "not closed before the bound ({idle:?})");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_silent_stream_is_not_cut_even_by_shutdown() {
    let server = start(8).await;
    let mut stream =
        send(&server, b"GET /stream HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").await;
    let mut first = [0u8; 4096];
    let n = stream.read(&mut first).await.unwrap();
    assert!(String::from_utf8_lossy(&first[..n]).contains("first"));
    // Shutdown while the stream is silent: it still ends whole.
    let _ = server.stop.send(());
    let started = Instant::now();
    let rest = tokio::time::timeout(HEADER * 6, read_until_closed(&mut stream)).await.unwrap();
    let rest = String::from_utf8_lossy(&rest).to_string();
    assert!(
        rest.contains("last") && rest.ends_with("0\r\n\r\n"),
        "the stream ended whole: {rest:?}"
    );
    assert!(started.elapsed() >= HEADER * 2, "it was silent past the header timeout");
    tokio::time::timeout(HEADER, server.task)
        .await
        .expect("serve returns once it is done")
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_body_that_stops_arriving_is_refused_and_a_steady_one_goes_through() {
    let server = start(8).await;
    // A complete head announcing 10 bytes, then 3 of them, then nothing.
    let mut stalled =
        send(&server, b"POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 10\r\n\r\nabc").await;
    let started = Instant::now();
    let answer = tokio::time::timeout(HEADER * 4, read_until_closed(&mut stalled))
        .await
        .expect("a stalled body is given up on");
    let answer = String::from_utf8_lossy(&answer).to_string();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(started.elapsed() >= HEADER * 9 / 10, "not before the bound ({:?})", started.elapsed());

    // The same body a byte every half timeout (slower in total than the
    // bound): each frame resets the clock.
    let mut steady = send(
        &server,
        b"POST /echo HTTP/1.1\r\nHost: test\r\nContent-Length: 4\r\nConnection: close\r\n\r\n",
    )
    .await;
    for byte in [b"w", b"x", b"y", b"z"] {
        tokio::time::sleep(HEADER / 2).await;
        steady.write_all(byte).await.unwrap();
    }
    let answer = tokio::time::timeout(HEADER * 4, read_until_closed(&mut steady)).await.unwrap();
    let answer = String::from_utf8_lossy(&answer).to_string();
    assert!(answer.starts_with("HTTP/1.1 200") && answer.ends_with("wxyz"), "{answer}");
    server.stop().await;
}
