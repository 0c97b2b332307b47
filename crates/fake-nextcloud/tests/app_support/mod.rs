//! Helpers for the Tamebi app tests: the demo world started with the app
//! configured, a browser that logs in through the form and keeps its
//! cookies and request token, and a stand-in orchestrator that records what
//! it receives and can hold its answer's last frame until released.

#![allow(dead_code)]

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use fake_nextcloud::{AppConfig, Config, FakeNextcloud, Fixture};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The secret the fake and the stand-in share (42 bytes).
pub const SECRET: &str = "tamebi-test-secret-0123456789abcdefghijklm";

/// The first and the last frame of the stand-in's chat answer.
pub const FIRST_FRAME: &str = "data: {\"type\":\"start\",\"messageId\":\"m1\"}\n\n";
pub const LAST_FRAMES: &str = "data: {\"type\":\"finish\"}\n\ndata: [DONE]\n\n";

pub fn demo_fixture() -> Fixture {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/fixtures/demo.toml");
    Fixture::load(&path).expect("the demo fixture loads")
}

pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// The fake with the app pointed at `orchestrator_url` under [`SECRET`].
pub async fn start_fake(fixture: &Fixture, orchestrator_url: Option<&str>) -> FakeNextcloud {
    let app = AppConfig {
        orchestrator_url: orchestrator_url.map(str::to_string),
        shared_secret: Some(SECRET.as_bytes().to_vec()),
        ..AppConfig::default()
    };
    FakeNextcloud::start_with_app(fixture, Config::default(), app).await.expect("fake starts")
}

/// A logged-in browser: its cookies and its session's request token.
pub struct Browser {
    pub base: String,
    pub cookies: String,
    pub request_token: String,
    pub http: reqwest::Client,
}

impl Browser {
    /// Logs in through the form, then reads the request token from the page.
    pub async fn login(base: &str, uid: &str, password: &str) -> Browser {
        let http = http_client();
        let form = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("user", uid)
            .append_pair("password", password)
            .finish();
        let response = http
            .post(format!("{base}/index.php/login"))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 303, "login of {uid}");
        let cookies = response
            .headers()
            .get_all("set-cookie")
            .iter()
            .map(|value| value.to_str().unwrap().split(';').next().unwrap().to_string())
            .collect::<Vec<_>>()
            .join("; ");
        let page = http
            .get(format!("{base}/apps/tamebi/"))
            .header("Cookie", &cookies)
            .send()
            .await
            .unwrap();
        assert_eq!(page.status(), 200, "the chat page for {uid}");
        let html = page.text().await.unwrap();
        let request_token = html
            .split("data-requesttoken=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("the page carries the request token")
            .to_string();
        Browser { base: base.to_string(), cookies, request_token, http }
    }

    /// A request with the session cookies and the request token.
    pub fn request(&self, method: &str, path: &str) -> reqwest::RequestBuilder {
        self.request_without_token(method, path).header("requesttoken", &self.request_token)
    }

    /// A request with the session cookies only.
    pub fn request_without_token(&self, method: &str, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), self.url(path))
            .header("Cookie", &self.cookies)
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn chat(&self, body: &str) -> reqwest::Response {
        self.request("POST", "/apps/tamebi/api/chat")
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap()
    }
}

/// One request as the stand-in orchestrator received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    /// Path and query.
    pub target: String,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|value| value.to_str().unwrap())
    }
}

#[derive(Default)]
struct StandInState {
    received: Mutex<Vec<Received>>,
    /// When set, the chat answer's last frames wait for [`StandIn::release`].
    gate: Option<Arc<tokio::sync::Notify>>,
    finished: Arc<AtomicBool>,
}

/// An orchestrator stand-in on a real socket.
pub struct StandIn {
    pub url: String,
    state: Arc<StandInState>,
    task: tokio::task::JoinHandle<()>,
}

impl StandIn {
    /// `gated`: the chat answer's last frames wait for [`StandIn::release`].
    pub async fn start(gated: bool) -> StandIn {
        let state = Arc::new(StandInState {
            gate: gated.then(|| Arc::new(tokio::sync::Notify::new())),
            ..StandInState::default()
        });
        let router = axum::Router::new().fallback(answer).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        StandIn { url, state, task }
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.received.lock().unwrap().clone()
    }

    /// Lets a gated chat answer write its last frames.
    pub fn release(&self) {
        self.state.gate.as_ref().expect("a gated stand-in").notify_one();
    }

    /// Whether the chat answer's last frames have been produced.
    pub fn finished(&self) -> bool {
        self.state.finished.load(Ordering::SeqCst)
    }

    pub async fn stop(self) {
        self.task.abort();
        let _ = self.task.await;
    }
}

async fn answer(State(state): State<Arc<StandInState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    state.received.lock().unwrap().push(Received {
        method: parts.method.to_string(),
        target: parts.uri.to_string(),
        headers: parts.headers.clone(),
        body,
    });
    if parts.uri.path().ends_with("/missing") {
        // The orchestrator's own envelope, with the request id it was given.
        let request_id = parts.headers["x-request-id"].to_str().unwrap().to_string();
        let envelope = serde_json::json!({
            "error": { "message": "This conversation does not exist.", "requestId": request_id },
        });
        return (http::StatusCode::NOT_FOUND, axum::Json(envelope)).into_response();
    }
    if parts.uri.path() != "/api/chat" {
        return axum::Json(serde_json::json!({
            "route": parts.uri.path(),
            "method": parts.method.as_str(),
        }))
        .into_response();
    }
    let gate = state.gate.clone();
    let finished = state.finished.clone();
    let frames = futures_util::stream::unfold(0, move |step| {
        let gate = gate.clone();
        let finished = finished.clone();
        async move {
            match step {
                0 => Some((Ok::<_, std::convert::Infallible>(Bytes::from(FIRST_FRAME)), 1)),
                1 => {
                    if let Some(gate) = gate {
                        gate.notified().await;
                    }
                    finished.store(true, Ordering::SeqCst);
                    Some((Ok(Bytes::from(LAST_FRAMES)), 2))
                }
                _ => None,
            }
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .header("x-vercel-ai-ui-message-stream", "v1")
        .header("x-accel-buffering", "no")
        .header("x-orchestrator-internal", "not for the browser")
        .body(Body::from_stream(frames))
        .unwrap()
}
