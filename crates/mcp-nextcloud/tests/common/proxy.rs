//! Loopback proxies between mcp-nextcloud and the fake Nextcloud, so a
//! test sees the upstream traffic on the wire: [`forward`] passes one
//! request on unchanged and its answer back; the [`Recorder`] keeps every
//! request (and can answer one path with a flood); a test with its own
//! measure (the reading test's gauge) wraps [`forward`] in its own handler.

use super::*;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::net::TcpListener;

/// The most of a request body a proxy reads (the limits attacks send
/// large ones).
const BODY_MAX: usize = 256 * 1024 * 1024;

/// Where a proxy forwards to: set once the fake behind it has started,
/// since mcp-nextcloud must be configured with the proxy's URL first.
pub type Target = Arc<OnceLock<String>>;

/// Serves `router` on a free loopback port until the test ends; its URL.
pub async fn serve(router: axum::Router) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    url
}

/// A client that follows no redirect: a redirect is Nextcloud's answer,
/// which mcp-nextcloud must see as it is.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// A request split as a handler reads it: the head and the whole body.
pub async fn read(request: Request) -> (http::request::Parts, bytes::Bytes) {
    let (parts, body) = request.into_parts();
    (parts, axum::body::to_bytes(body, BODY_MAX).await.unwrap())
}

/// Sends the request to `target` unchanged (but its `Host`) and answers
/// with what came back (its body whole, so without the chunked framing).
pub async fn forward(
    http: &reqwest::Client,
    target: &Target,
    parts: http::request::Parts,
    body: bytes::Bytes,
) -> Response {
    let target = target.get().expect("the proxy knows where to forward");
    let path_and_query = parts.uri.path_and_query().map(|value| value.as_str()).unwrap_or("/");
    let mut upstream = http.request(parts.method, format!("{target}{path_and_query}"));
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

/// One request as it reached the recorder.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// As sent, percent-encoding included.
    pub path: String,
    pub body: String,
    pub authorization: Option<String>,
    /// Every header value and the body, to search for a token anywhere.
    pub everything: String,
}

impl Recorded {
    /// The path percent-decoded once, as Nextcloud reads it.
    pub fn decoded_path(&self) -> String {
        percent_encoding::percent_decode_str(&self.path).decode_utf8_lossy().into_owned()
    }
}

#[derive(Clone)]
struct Shared {
    target: Target,
    seen: Arc<Mutex<Vec<Recorded>>>,
    /// (path suffix, bytes): a GET whose path ends so is answered by a
    /// chunked stream of that many bytes.
    flood: Arc<Mutex<Option<(String, usize)>>>,
    http: reqwest::Client,
}

/// A proxy that records every request mcp-nextcloud sends upstream and
/// forwards it unchanged — or, for one path, answers with a chunked body
/// of a chosen length and no `Content-Length` (a server that streams more
/// than it should).
pub struct Recorder {
    pub url: String,
    shared: Shared,
}

impl Recorder {
    /// Listens now; forwards once [`Recorder::forward_to`] names the target.
    pub async fn start() -> Recorder {
        let shared = Shared {
            target: Target::default(),
            seen: Arc::default(),
            flood: Arc::default(),
            http: client(),
        };
        let url = serve(axum::Router::new().fallback(record).with_state(shared.clone())).await;
        Recorder { url, shared }
    }

    pub fn forward_to(&self, target: &str) {
        self.shared.target.set(target.to_string()).unwrap();
    }

    /// Every request but the fetch of the issuer's keys (no user data).
    pub fn seen(&self) -> Vec<Recorded> {
        let seen = self.seen_all().into_iter();
        seen.filter(|request| request.path != "/index.php/apps/oidc/jwks").collect()
    }

    /// Every request, the key fetch included.
    pub fn seen_all(&self) -> Vec<Recorded> {
        self.shared.seen.lock().unwrap().clone()
    }

    pub fn flood(&self, path_suffix: &str, bytes: usize) {
        *self.shared.flood.lock().unwrap() = Some((path_suffix.to_string(), bytes));
    }
}

/// A stack whose mcp-nextcloud reaches the fake through a recorder.
pub async fn recorded_stack(edit: impl FnOnce(&mut Config) + Send + 'static) -> (Stack, Recorder) {
    let recorder = Recorder::start().await;
    let stack = start_configured(second_token(), Some(recorder.url.clone()), edit).await;
    recorder.forward_to(stack.fake.base_url());
    (stack, recorder)
}

async fn record(State(shared): State<Shared>, request: Request) -> Response {
    let (parts, body) = read(request).await;
    let mut everything = String::from_utf8_lossy(&body).into_owned();
    for value in parts.headers.values() {
        everything.push('\n');
        everything.push_str(value.to_str().unwrap_or_default());
    }
    shared.seen.lock().unwrap().push(Recorded {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        body: String::from_utf8_lossy(&body).into_owned(),
        authorization: parts
            .headers
            .get(http::header::AUTHORIZATION)
            .map(|value| value.to_str().unwrap().to_string()),
        everything,
    });
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
    forward(&shared.http, &shared.target, parts, body).await
}
