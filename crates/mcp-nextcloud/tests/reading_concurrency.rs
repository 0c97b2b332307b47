//! The index reads at most two documents at once across all users
//! (`index::Limits::concurrency`, the default 2: the document server is one
//! instance and a large PDF takes seconds), measured on the wire: a gauge in
//! front of the fake Nextcloud holds every file download a moment and
//! records how many were in flight, while alice's and bob's passes run at
//! the same time, each with more documents to read than the limit.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use axum::extract::{Request, State};
use axum::response::Response;
use common::proxy::{self, Target};
use common::{demo_fixture, second_token, start_fixture};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How long the gauge holds each download, so overlapping ones overlap.
const HOLD: std::time::Duration = std::time::Duration::from_millis(150);

/// A proxy that counts the file downloads in flight.
#[derive(Clone)]
struct Gauge {
    target: Target,
    in_flight: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    downloads: Arc<AtomicUsize>,
    http: reqwest::Client,
}

async fn start_gauge() -> (String, Gauge) {
    let gauge = Gauge {
        target: Target::default(),
        in_flight: Arc::default(),
        most: Arc::default(),
        downloads: Arc::default(),
        http: proxy::client(),
    };
    let url = proxy::serve(axum::Router::new().fallback(measure).with_state(gauge.clone())).await;
    (url, gauge)
}

async fn measure(State(gauge): State<Gauge>, request: Request) -> Response {
    let (parts, body) = proxy::read(request).await;
    let download =
        parts.method == http::Method::GET && parts.uri.path().starts_with("/remote.php/dav/files/");
    if download {
        gauge.downloads.fetch_add(1, Ordering::SeqCst);
        let now = gauge.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        gauge.most.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(HOLD).await;
    }
    let response = proxy::forward(&gauge.http, &gauge.target, parts, body).await;
    if download {
        gauge.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
    response
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
    stack.mcp().index().idle().await;

    let downloads = gauge.downloads.load(Ordering::SeqCst);
    assert!(downloads >= 12, "both users' documents were read: {downloads} downloads");
    let most = gauge.most.load(Ordering::SeqCst);
    assert_eq!(most, 2, "documents read at once across alice's and bob's passes");
}
