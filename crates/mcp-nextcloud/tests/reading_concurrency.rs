//! The index reads at most two documents at once across all users
//! (`index::Limits::concurrency`, the default 2: the document server is one
//! instance and a large PDF takes seconds), measured on the wire: a gauge in
//! front of the fake Nextcloud holds every file download a moment and
//! records how many were in flight, while alice's and bob's passes run at
//! the same time, each with more documents to read than the limit.

mod common;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use common::{demo_fixture, second_token, start_fixture};
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use tokio::net::TcpListener;

/// How long the gauge holds each download, so overlapping ones overlap.
const HOLD: std::time::Duration = std::time::Duration::from_millis(150);

#[derive(Clone, Default)]
struct Gauge {
    target: Arc<OnceLock<String>>,
    in_flight: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    downloads: Arc<AtomicUsize>,
    http: reqwest::Client,
}

async fn start_gauge() -> (String, Gauge) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let gauge = Gauge::default();
    let router = axum::Router::new().fallback(forward).with_state(gauge.clone());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (url, gauge)
}

async fn forward(State(gauge): State<Gauge>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 64 * 1024 * 1024).await.unwrap();
    let download =
        parts.method == http::Method::GET && parts.uri.path().starts_with("/remote.php/dav/files/");
    if download {
        gauge.downloads.fetch_add(1, Ordering::SeqCst);
        let now = gauge.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        gauge.most.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(HOLD).await;
    }
    let target = gauge.target.get().expect("the gauge knows where to forward");
    let path = parts.uri.path_and_query().map(|value| value.as_str()).unwrap_or("/");
    let mut upstream = gauge.http.request(parts.method, format!("{target}{path}"));
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
    if download {
        gauge.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
    response.body(Body::from(bytes)).unwrap().into_response()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_documents_are_read_at_once_across_all_users() {
    assert_eq!(mcp_nextcloud::index::Limits::default().concurrency, 2, "the seeds' limit");
    let mut fixture = demo_fixture();
    for owner in ["alice", "bob"] {
        for n in 0..6 {
            fixture.files.push(
                serde_json::from_value(json!({
                    "owner": owner,
                    "path": format!("Load/{owner}-{n}.md"),
                    "content": format!("# Note {n}\n\nA note of {owner} about concurrency number {n}.\n"),
                }))
                .unwrap(),
            );
        }
    }
    let (gauge_url, gauge) = start_gauge().await;
    let stack = start_fixture(&fixture, second_token(), Some(gauge_url), |_| {}).await;
    gauge.target.set(stack.fake.base_url().to_string()).unwrap();

    // Both users' first searches at once: each starts a pass with more
    // unread documents than the limit.
    let (alice, bob) = tokio::join!(
        stack.call_tool("alice", "files_grep", json!({"query": "concurrency"})),
        stack.call_tool("bob", "files_grep", json!({"query": "concurrency"})),
    );
    assert_ne!(alice["isError"], json!(true), "{alice}");
    assert_ne!(bob["isError"], json!(true), "{bob}");
    stack.mcp.index().idle().await;

    let downloads = gauge.downloads.load(Ordering::SeqCst);
    assert!(downloads >= 12, "both users' documents were read: {downloads} downloads");
    let most = gauge.most.load(Ordering::SeqCst);
    assert_eq!(most, 2, "documents read at once across alice's and bob's passes");
}
