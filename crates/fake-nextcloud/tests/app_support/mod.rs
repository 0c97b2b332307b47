//! Helpers for the Tamebi app tests: the one way they stand the app up
//! ([`Stack`]: the demo world with the app pointed at a stand-in
//! orchestrator, alice logged in; [`start_fake`] and [`start_fake_with_app`]
//! for a test that needs another world or other settings), a browser that
//! logs in through the form and keeps its cookies and request token, and a
//! stand-in orchestrator that records what it receives and can hold its
//! answer's last frame until released. A test root using it also declares
//! `mod common;`, which it builds on.

#![allow(dead_code)]

pub use crate::common::{
    DEMO_ALICE_PASSWORD, DEMO_BOB_PASSWORD, demo_fixture, http_client, start_fake_with_app,
};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use fake_nextcloud::{AppConfig, FakeNextcloud, Fixture};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The secret the fake and the stand-in share (42 bytes).
pub const SECRET: &str = "tamebi-test-secret-0123456789abcdefghijklm";

/// The first and the last frame of the stand-in's chat answer.
pub const FIRST_FRAME: &str = "data: {\"type\":\"start\",\"messageId\":\"m1\"}\n\n";
pub const LAST_FRAMES: &str = "data: {\"type\":\"finish\"}\n\ndata: [DONE]\n\n";

/// The app's settings pointing at `orchestrator_url` under [`SECRET`].
pub fn app_config(orchestrator_url: Option<&str>) -> AppConfig {
    AppConfig {
        orchestrator_url: orchestrator_url.map(str::to_string),
        shared_secret: Some(SECRET.as_bytes().to_vec()),
        ..AppConfig::default()
    }
}

/// The fake with the app pointed at `orchestrator_url` under [`SECRET`].
pub async fn start_fake(fixture: &Fixture, orchestrator_url: Option<&str>) -> FakeNextcloud {
    start_fake_with_app(fixture, app_config(orchestrator_url)).await
}

/// The demo world with the app pointed at a stand-in orchestrator, and alice
/// logged in: where most app tests begin.
pub struct Stack {
    pub fake: FakeNextcloud,
    pub orchestrator: StandIn,
    pub alice: Browser,
}

impl Stack {
    /// `gated`: the stand-in's chat answer waits for [`StandIn::release`].
    pub async fn start(gated: bool) -> Stack {
        let orchestrator = StandIn::start(gated).await;
        let fake = start_fake(&demo_fixture(), Some(&orchestrator.url)).await;
        let alice = Browser::alice(&fake).await;
        Stack { fake, orchestrator, alice }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.fake.base_url())
    }

    /// An admin request (`/__fake/…`) that must succeed; its JSON answer.
    pub async fn admin(&self, method: &str, path: &str, body: Value) -> Value {
        let response = admin_send(&self.fake, method, path, body).await;
        assert!(response.status().is_success(), "{method} {path}: {}", response.status());
        response.json().await.unwrap()
    }

    pub async fn advance_clock(&self, seconds: i64) {
        self.admin("POST", "/__fake/clock/advance", json!({ "seconds": seconds })).await;
    }

    pub async fn state(&self) -> Value {
        self.admin("GET", "/__fake/state", Value::Null).await
    }

    /// A bearer minted for `audience` (what the token endpoint would issue).
    pub fn token_for(&self, uid: &str, audience: &str) -> String {
        self.fake.shared.mint_access_token(uid, audience)
    }

    pub async fn stop(self) {
        self.fake.shutdown().await;
        self.orchestrator.stop().await;
    }
}

/// An admin request to `fake` with the admin token and `body` as JSON, sent.
pub async fn admin_send(
    fake: &FakeNextcloud,
    method: &str,
    path: &str,
    body: Value,
) -> reqwest::Response {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let request = crate::common::admin_request(&http_client(), fake, method, path);
    request.json(&body).send().await.unwrap()
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
        let response = http
            .post(format!("{base}/index.php/login"))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(crate::common::form(&[("user", uid), ("password", password)]))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 303, "login of {uid}");
        let cookies = crate::common::cookies(&response);
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

    /// The demo fixture's alice, logged in to `fake`.
    pub async fn alice(fake: &FakeNextcloud) -> Browser {
        Browser::login(fake.base_url(), "alice", DEMO_ALICE_PASSWORD).await
    }

    /// The demo fixture's bob, logged in to `fake`.
    pub async fn bob(fake: &FakeNextcloud) -> Browser {
        Browser::login(fake.base_url(), "bob", DEMO_BOB_PASSWORD).await
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
