//! Server-side request forgery: mcp-nextcloud fetches only from where it
//! is configured. A converter answer naming a result URL on another host,
//! port or scheme is not fetched (fixed: it used to be), a redirect from
//! the converter's own origin is not followed, and a webhook — which
//! carries a path, never a URL — makes no request at all; what it names is
//! later read only from the configured Nextcloud, as the searching user.

use crate::common::proxy::*;
use crate::common::*;
use axum::Router;
use axum::routing::{get, post};
use bytes::Bytes;
use mcp_nextcloud::convert::{ConvertError, Converter, ConverterConfig};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A server that must never be asked anything: it counts its requests.
async fn victim() -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let router = Router::new().fallback(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        async { "secret from the internal network" }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (url, hits)
}

/// A converter that answers every conversion with `file_url(own base)`,
/// serves `/cache/ok.txt` itself and redirects `/cache/redirect.txt` to
/// `redirect_to`.
async fn converter_answering(
    file_url: impl Fn(&str) -> String + Send + Sync + 'static,
    redirect_to: String,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let answer = file_url(&base);
    let router = Router::new()
        .route(
            "/converter",
            post(move || {
                let answer = answer.clone();
                async move {
                    axum::Json(json!({"endConvert": true, "fileType": "txt", "fileUrl": answer, "percent": 100}))
                }
            }),
        )
        .route("/cache/ok.txt", get(|| async { "converted text" }))
        .route(
            "/cache/redirect.txt",
            get(move || {
                let location = redirect_to.clone();
                async move { (http::StatusCode::FOUND, [(http::header::LOCATION, location)]) }
            }),
        );
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    base
}

async fn convert_with(converter_url: &str) -> Result<String, ConvertError> {
    let config = ConverterConfig {
        url: converter_url.to_string(),
        secret: None,
        lend_listen: "127.0.0.1:0".parse().unwrap(),
        lend_url: None,
    };
    // As mcp-nextcloud builds its client: redirects are not followed.
    let http =
        reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let converter = Converter::start(config, http).await.unwrap();
    let converted = converter.convert(Bytes::from_static(b"{\\rtf1 hello}"), "letter.rtf").await;
    converter.shutdown().await;
    converted
}

/// How a stub converter names its result, from its own base URL.
type FileUrl = Box<dyn Fn(&str) -> String + Send + Sync>;

#[tokio::test]
async fn a_converter_result_outside_the_converters_origin_is_never_fetched() {
    let (victim_url, hits) = victim().await;
    let victim_host = victim_url.trim_start_matches("http://").to_string();
    let cases: Vec<(&str, FileUrl)> = vec![
        (
            "another port on the same host",
            Box::new({
                let victim_url = victim_url.clone();
                move |_| format!("{victim_url}/latest/meta-data")
            }),
        ),
        (
            "userinfo that looks like the converter",
            Box::new({
                let victim_host = victim_host.clone();
                move |base| format!("http://{}@{victim_host}/x", base.trim_start_matches("http://"))
            }),
        ),
        (
            "https instead of http",
            Box::new(|base| format!("{}/cache/ok.txt", base.replace("http://", "https://"))),
        ),
        ("a file URL", Box::new(|_| "file:///etc/passwd".to_string())),
        ("not a URL", Box::new(|_| "/cache/ok.txt".to_string())),
    ];
    for (case, file_url) in cases {
        let converter = converter_answering(file_url, victim_url.clone()).await;
        assert_eq!(convert_with(&converter).await, Err(ConvertError::Unreachable), "{case}");
    }
    // A redirect from the converter's own origin is not followed either.
    let converter =
        converter_answering(|base| format!("{base}/cache/redirect.txt"), format!("{victim_url}/x"))
            .await;
    assert_eq!(convert_with(&converter).await, Err(ConvertError::Unreachable), "redirect");
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the internal server was never asked");

    // For contrast: a result on the converter's own origin is fetched.
    let converter = converter_answering(|base| format!("{base}/cache/ok.txt"), victim_url).await;
    assert_eq!(convert_with(&converter).await, Ok("converted text".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_fetches_nothing_and_what_it_names_is_read_only_from_nextcloud() {
    let (stack, recorder) = recorded_stack(|config| {
        config.index.webhook_secret = Some("hook-secret".into());
    })
    .await;
    let (victim_url, hits) = victim().await;
    let payload = node_written(515_151, format!("/alice/files/{victim_url}/latest.md"));
    let answer = stack.webhook("hook-secret").json(&payload).send().await.unwrap();
    assert_eq!(answer.status(), 204);
    assert!(recorder.seen().is_empty(), "a webhook makes no request");
    // alice's next search reads the dirty row the only way it can: from
    // the configured Nextcloud (the recorder), in alice's files.
    let found = stack.call_tool("alice", "files_grep", json!({"query": "meta data"})).await;
    assert!(failure_kind(&found).is_none(), "{found}");
    stack.mcp().index().idle().await;
    for request in recorder.seen() {
        assert!(
            request.path.starts_with("/remote.php/dav"),
            "unexpected upstream request {} {}",
            request.method,
            request.path
        );
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the URL in the path was never fetched");
}
