//! A loopback proxy in front of the fake Nextcloud that records every
//! request mcp-nextcloud sends upstream (but the JWKS fetch) and forwards it unchanged — or,
//! for one path, answers with a chunked body of a chosen length and no
//! `Content-Length` (a server that streams more than it should).

use crate::common::*;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::sync::{Arc, Mutex, OnceLock};
use tokio::net::TcpListener;

#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// As sent, percent-encoding included.
    pub path: String,
    pub body: String,
}

impl Recorded {
    /// The path percent-decoded once, as Nextcloud reads it.
    pub fn decoded_path(&self) -> String {
        percent_encoding::percent_decode_str(&self.path).decode_utf8_lossy().into_owned()
    }
}

#[derive(Clone, Default)]
struct Shared {
    target: Arc<OnceLock<String>>,
    seen: Arc<Mutex<Vec<Recorded>>>,
    /// (path suffix, bytes): a GET whose path ends so is answered by a
    /// chunked stream of that many bytes.
    flood: Arc<Mutex<Option<(String, usize)>>>,
}

pub struct Recorder {
    pub url: String,
    shared: Shared,
}

impl Recorder {
    pub async fn start() -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let shared = Shared::default();
        let router = axum::Router::new().fallback(forward).with_state(shared.clone());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        Recorder { url, shared }
    }

    pub fn seen(&self) -> Vec<Recorded> {
        self.shared.seen.lock().unwrap().clone()
    }

    pub fn flood(&self, path_suffix: &str, bytes: usize) {
        *self.shared.flood.lock().unwrap() = Some((path_suffix.to_string(), bytes));
    }
}

/// A stack whose mcp-nextcloud reaches the fake through a recorder.
pub async fn recorded_stack(edit: impl FnOnce(&mut mcp_nextcloud::Config)) -> (Stack, Recorder) {
    let recorder = Recorder::start().await;
    let stack = start_configured(second_token(), Some(recorder.url.clone()), edit).await;
    recorder.shared.target.set(stack.fake.base_url().to_string()).unwrap();
    (stack, recorder)
}

async fn forward(State(shared): State<Shared>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 256 * 1024 * 1024).await.unwrap();
    // The issuer's keys are fetched from Nextcloud too; they are no user data.
    if parts.uri.path() != "/index.php/apps/oidc/jwks" {
        shared.seen.lock().unwrap().push(Recorded {
            method: parts.method.to_string(),
            path: parts.uri.path().to_string(),
            body: String::from_utf8_lossy(&body).into_owned(),
        });
    }
    let flood = shared.flood.lock().unwrap().clone();
    if let Some((suffix, length)) = flood
        && parts.method == http::Method::GET
        && parts.uri.path().ends_with(&suffix)
    {
        let chunk = bytes::Bytes::from(vec![b'a'; 1024 * 1024]);
        let chunks = length.div_ceil(chunk.len());
        let stream = futures_util::stream::iter(
            (0..chunks).map(move |_| Ok::<_, std::convert::Infallible>(chunk.clone())),
        );
        return Response::builder()
            .status(200)
            .header("content-type", "text/markdown")
            .body(Body::from_stream(stream))
            .unwrap();
    }
    let target = shared.target.get().expect("the recorder knows where to forward");
    let path_and_query = parts.uri.path_and_query().map(|value| value.as_str()).unwrap_or("/");
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build();
    let mut upstream = client.unwrap().request(parts.method, format!("{target}{path_and_query}"));
    for (name, value) in &parts.headers {
        if name != http::header::HOST {
            upstream = upstream.header(name, value);
        }
    }
    let answer = upstream.body(body).send().await.unwrap();
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if name != http::header::TRANSFER_ENCODING {
            response = response.header(name, value);
        }
    }
    let bytes = answer.bytes().await.unwrap();
    response.body(Body::from(bytes)).unwrap().into_response()
}

/// `Some(kind)` for a tool error, `None` for a success.
pub fn failure_kind(result: &Value) -> Option<String> {
    (result["isError"] == serde_json::json!(true))
        .then(|| result["_meta"]["tamebi/failureKind"].as_str().unwrap_or("?").to_string())
}

pub fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_string()
}
