//! Every listener of every Tamebi service is served by [`serve`]: an axum
//! router on a TCP listener, each connection bounded in time and the
//! connections bounded in number, with graceful shutdown.
//!
//! `axum::serve` sets no hyper timer, so hyper's `header_read_timeout`
//! never fired and a connection that sent half a request head, or nothing,
//! was held forever: with a low file-descriptor limit, 80 of them stopped
//! `/health` (issue 14). Here:
//!
//! - **The request head** must arrive within [`Limits::header_read_timeout`]
//!   (hyper's timer, on [`TokioTimer`]), or the connection is closed.
//! - **Idle keep-alive** is bounded by the same timer: hyper starts it as
//!   soon as a connection waits for its next request, not at the first
//!   byte (measured: `tests/limits.rs::an_idle_keep_alive_connection_is_closed`),
//!   so no second timer is needed.
//! - **A request body** must keep arriving: once a handler reads it,
//!   each next piece must come within the same timeout (the clock starts
//!   at the handler's read and restarts with every piece, so a slow but
//!   steady upload goes through), or the read fails and axum answers 400.
//!   Before, a complete head followed by half a body held its connection
//!   and its handler for as long as the client liked.
//! - **Responses are not bounded**: once the head is read nothing times
//!   out, so a chat stream silent for minutes while a tool runs, or the
//!   fake's streaming proxy, goes on (`a_long_silent_stream_is_not_cut`).
//! - **At most [`Limits::connections_max`] connections** are open at once.
//!   Beyond it the listener stops accepting: new connections wait in the
//!   kernel's backlog, costing no file descriptor, and are served as
//!   others close — within one header timeout, since every connection
//!   either sends a request head in time or is closed. We rejected
//!   accepting and closing them at once: a burst of honest clients would
//!   then see resets instead of a short wait.
//! - **Shutdown** stops accepting, lets each connection finish the
//!   response it is writing (hyper_util's graceful shutdown) and returns
//!   once all are done, as `axum::serve`'s graceful shutdown did.
//!
//! Every accepted socket gets `TCP_NODELAY`: each frame of a stream goes
//! out as it is written instead of waiting for the peer's delayed ACK.

pub mod admin_token;
pub mod probe;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// How long a client may take to send a request head, by default.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How many connections one listener keeps open at once, by default: well
/// under the usual soft limit of 1024 file descriptors, which the
/// process also needs for its databases and outgoing connections.
pub const CONNECTIONS_MAX: usize = 512;

/// The bounds of one listener; services keep the defaults, tests shrink
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// From the moment a connection waits for a request (a new one, or
    /// the next on a kept-alive one) until its head is complete.
    pub header_read_timeout: Duration,
    /// Connections open at once; more wait in the backlog.
    pub connections_max: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { header_read_timeout: HEADER_READ_TIMEOUT, connections_max: CONNECTIONS_MAX }
    }
}

/// Serves `router` on `listener` under `limits` until `shutdown`
/// completes, then waits for the open connections to finish what they
/// are sending. `name` says which listener in the log.
pub async fn serve(
    name: &'static str,
    listener: TcpListener,
    router: axum::Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send,
) {
    assert!(limits.connections_max > 0, "a listener serves at least one connection");
    let permits = Arc::new(Semaphore::new(limits.connections_max));
    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    let timeout = limits.header_read_timeout;
    let router = router.layer(axum::middleware::map_request(
        move |request: axum::extract::Request| async move {
            request.map(|body| {
                axum::body::Body::new(StalledBody { inner: body, timeout, deadline: None })
            })
        },
    ));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        // Taken before accepting: past the bound, connections stay in the
        // kernel's backlog rather than holding a file descriptor here.
        let permit = tokio::select! {
            biased;
            () = &mut shutdown => break,
            permit = permits.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
        };
        let accepted = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let tcp = match accepted {
            Ok((tcp, _peer)) => tcp,
            Err(error) if is_connection_error(&error) => continue,
            Err(error) => {
                // Out of file descriptors, typically: wait for some to
                // close rather than spin (as axum::serve does).
                tracing::error!(listener = name, %error, "cannot accept a connection");
                tokio::select! {
                    () = &mut shutdown => break,
                    () = tokio::time::sleep(Duration::from_secs(1)) => continue,
                }
            }
        };
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::warn!(listener = name, %error, "cannot set TCP_NODELAY");
        }
        let connection =
            builder.serve_connection(TokioIo::new(tcp), TowerToHyperService::new(router.clone()));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                // A header timeout, a client gone mid-request: theirs.
                tracing::debug!(listener = name, %error, "connection closed with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// An error about one connection (the listener itself is fine).
fn is_connection_error(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

/// A request body whose next frame must arrive within `timeout` of being
/// asked for: a client that sends a complete head and then stops partway
/// through its body no longer holds its connection and its handler forever.
/// The clock starts when the handler first reads (a handler that reads
/// late, or a client waiting for `100 Continue`, is not penalised) and is
/// reset by every frame, so a slow but steady upload goes through.
struct StalledBody<B> {
    inner: B,
    timeout: Duration,
    deadline: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
}

impl<B> hyper::body::Body for StalledBody<B>
where
    B: hyper::body::Body + Unpin,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = B::Data;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<B::Data>, Self::Error>>> {
        use std::task::Poll;
        let this = self.get_mut();
        match std::pin::Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                this.deadline = None;
                Poll::Ready(frame.map(|frame| frame.map_err(Into::into)))
            }
            Poll::Pending => {
                let timeout = this.timeout;
                let deadline =
                    this.deadline.get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                match deadline.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(BodyStalled(timeout).into()))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// What a handler reading a stalled body sees (axum answers 400).
#[derive(Debug)]
struct BodyStalled(Duration);

impl std::fmt::Display for BodyStalled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the request body stopped arriving for {:?}", self.0)
    }
}

impl std::error::Error for BodyStalled {}
