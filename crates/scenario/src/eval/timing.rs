//! A pass-through proxy in front of the model, so a task's time splits
//! into the model's (request sent → last byte of the answer) and Tamebi's
//! own (the rest of the turn), whatever the model is: the fake, a local
//! server or a hosted API. It also reads the `usage` the provider reports
//! (OpenAI's last stream chunk with `include_usage`, or the body of an
//! unstreamed answer). Nothing is changed on the way: the bytes, the
//! status and the content type pass as they are; only a model that does
//! not answer at all reads as a 502 rather than a refused connection.

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt as _;
use regex::Regex;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The largest request body forwarded (a long conversation with tools).
const REQUEST_BYTES_MAX: usize = 16 << 20;
/// How much of an answer's end is kept to find its `usage`.
const TAIL_BYTES: usize = 16 << 10;

/// One model request, as the proxy saw it.
#[derive(Debug, Clone, Default)]
pub struct ModelCall {
    pub seconds: f64,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
}

pub struct TimingProxy {
    url: String,
    calls: Arc<Mutex<Vec<ModelCall>>>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

struct Shared {
    upstream: String,
    http: reqwest::Client,
    calls: Arc<Mutex<Vec<ModelCall>>>,
}

impl TimingProxy {
    /// Forwards everything to `upstream` (scheme, host and port: the
    /// request's path is kept); `timeout` bounds one model answer.
    pub async fn start(upstream: &str, timeout: Duration) -> Result<TimingProxy, String> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|error| format!("the timing proxy cannot listen: {error}"))?;
        let address = listener.local_addr().map_err(|error| error.to_string())?;
        let calls = Arc::new(Mutex::new(Vec::new()));
        // A fresh connection for every request: a provider that breaks a
        // stream (llama-cpp-python does, refusing to stream with tools)
        // leaves its connection unusable, and the orchestrator, which
        // knows that, opens a new one; a pooled proxy would not.
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .read_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| error.to_string())?;
        let shared = Arc::new(Shared {
            upstream: upstream.trim_end_matches('/').to_string(),
            http,
            calls: calls.clone(),
        });
        let router = Router::new().fallback(forward).with_state(shared);
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        let task = tokio::spawn(http_serve::serve(
            "eval-timing",
            listener,
            router,
            http_serve::Limits::default(),
            async move { stopped.cancelled().await },
        ));
        Ok(TimingProxy { url: format!("http://{address}"), calls, stop, task })
    }

    /// `http://host:port`: put the upstream's path after it.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The requests answered since the last call, and forgets them.
    pub fn take(&self) -> Vec<ModelCall> {
        std::mem::take(&mut self.calls.lock().expect("timing lock"))
    }

    pub async fn shutdown(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

async fn forward(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, REQUEST_BYTES_MAX).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "request too large for the timing proxy")
            .into_response();
    };
    let path = parts.uri.path_and_query().map(|path| path.as_str()).unwrap_or("/");
    let mut outgoing = shared.http.request(parts.method, format!("{}{path}", shared.upstream));
    for (name, value) in &parts.headers {
        if !hop_by_hop(name) {
            outgoing = outgoing.header(name, value);
        }
    }
    // Made before the request, so a call the orchestrator gives up on
    // (this handler dropped while the model is still silent) is recorded
    // as the model's time too.
    let mut recorder =
        Recorder { started: Instant::now(), tail: Vec::new(), calls: shared.calls.clone() };
    let upstream = match outgoing.body(body).send().await {
        Ok(upstream) => upstream,
        Err(error) => {
            tracing::warn!(error = ?error, "the model did not answer the timing proxy");
            return (StatusCode::BAD_GATEWAY, "the model did not answer").into_response();
        }
    };
    let mut response = Response::builder().status(upstream.status().as_u16());
    for (name, value) in upstream.headers() {
        if !hop_by_hop(name) {
            response = response.header(name, value);
        }
    }
    let stream = upstream.bytes_stream().map(move |chunk| {
        if let Ok(bytes) = &chunk {
            recorder.keep(bytes);
        }
        chunk
    });
    response
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response())
}

fn hop_by_hop(name: &HeaderName) -> bool {
    ["host", "content-length", "transfer-encoding", "connection"].contains(&name.as_str())
}

/// Records its answer when the body has been read (or dropped).
struct Recorder {
    started: Instant,
    tail: Vec<u8>,
    calls: Arc<Mutex<Vec<ModelCall>>>,
}

impl Recorder {
    fn keep(&mut self, bytes: &[u8]) {
        self.tail.extend_from_slice(bytes);
        if self.tail.len() > TAIL_BYTES {
            self.tail.drain(..self.tail.len() - TAIL_BYTES);
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let (prompt_tokens, completion_tokens) = usage(&String::from_utf8_lossy(&self.tail));
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(ModelCall {
                seconds: self.started.elapsed().as_secs_f64(),
                prompt_tokens,
                completion_tokens,
            });
        }
    }
}

/// The last `usage` object's token counts in an answer's end.
fn usage(tail: &str) -> (Option<u64>, Option<u64>) {
    static PROMPT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""prompt_tokens"\s*:\s*(\d+)"#).expect("regex"));
    static COMPLETION: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""completion_tokens"\s*:\s*(\d+)"#).expect("regex"));
    let Some(at) = tail.rfind("\"usage\"") else { return (None, None) };
    let usage = &tail[at..];
    let number =
        |regex: &Regex| regex.captures(usage).and_then(|captures| captures[1].parse::<u64>().ok());
    (number(&PROMPT), number(&COMPLETION))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_is_read_from_the_last_chunk_or_a_whole_body() {
        let stream = "data: {\"choices\":[]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":812,\"completion_tokens\":34,\"total_tokens\":846}}\n\ndata: [DONE]\n\n";
        assert_eq!(usage(stream), (Some(812), Some(34)));
        let body = r#"{"id":"x","usage": {"completion_tokens": 5, "prompt_tokens": 9}}"#;
        assert_eq!(usage(body), (Some(9), Some(5)));
        assert_eq!(usage("data: {\"choices\":[]}\n\n"), (None, None));
    }
}
