//! The three ways mcp-nextcloud authenticates toward Nextcloud, against the
//! fake: the second token (default — and the token addressed to us never
//! leaves, proven by a recorder in front of the fake), the seeds' single
//! token (works only with user_oidc's audience check off), and app
//! passwords. In every mode a tool acts as the token's `sub` and nobody else.

mod common;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use common::*;
use mcp_nextcloud::UpstreamAuth;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;

fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_string()
}

fn failure_kind(result: &Value) -> Option<&str> {
    (result["isError"] == json!(true))
        .then(|| result["_meta"]["tamebi/failureKind"].as_str().unwrap())
}

/// One request as it reached the recorder.
#[derive(Debug, Clone)]
struct Recorded {
    method: String,
    path: String,
    authorization: Option<String>,
    /// Every header value and the body, to search for a token anywhere.
    everything: String,
}

/// A loopback HTTP proxy in front of the fake Nextcloud that records every
/// request mcp-nextcloud sends upstream, then forwards it unchanged.
struct Recorder {
    url: String,
    target: Arc<std::sync::OnceLock<String>>,
    seen: Arc<Mutex<Vec<Recorded>>>,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

#[derive(Clone)]
struct RecorderState {
    target: Arc<std::sync::OnceLock<String>>,
    seen: Arc<Mutex<Vec<Recorded>>>,
    http: reqwest::Client,
}

impl Recorder {
    /// Listens now; forwards once [`Recorder::forward_to`] names the target.
    async fn start() -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = RecorderState {
            target: Arc::default(),
            seen: Arc::default(),
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
        };
        let (target, seen) = (state.target.clone(), state.seen.clone());
        let router = axum::Router::new().fallback(forward).with_state(state);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Recorder { url, target, seen, stop, task }
    }

    fn forward_to(&self, target: &str) {
        self.target.set(target.to_string()).unwrap();
    }

    fn seen(&self) -> Vec<Recorded> {
        self.seen.lock().unwrap().clone()
    }

    async fn shutdown(self) {
        let _ = self.stop.send(());
        self.task.await.unwrap();
    }
}

async fn forward(State(state): State<RecorderState>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 64 * 1024 * 1024).await.unwrap();
    let mut everything = String::from_utf8_lossy(&body).into_owned();
    for value in parts.headers.values() {
        everything.push('\n');
        everything.push_str(value.to_str().unwrap_or_default());
    }
    state.seen.lock().unwrap().push(Recorded {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        authorization: parts
            .headers
            .get(http::header::AUTHORIZATION)
            .map(|value| value.to_str().unwrap().to_string()),
        everything,
    });
    let target = state.target.get().expect("the recorder knows where to forward");
    let path_and_query = parts.uri.path_and_query().map(|value| value.as_str()).unwrap_or("/");
    let mut upstream = state.http.request(parts.method, format!("{target}{path_and_query}"));
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

fn audience_of(bearer: &str) -> Value {
    use base64::Engine as _;
    let payload = bearer.split('.').nth(1).unwrap();
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap();
    serde_json::from_slice::<Value>(&payload).unwrap()["aud"].clone()
}

#[tokio::test]
async fn second_token_mode_never_sends_the_mcp_token_to_nextcloud() {
    let recorder = Recorder::start().await;
    let stack = start_with(second_token(), Some(recorder.url.clone())).await;
    recorder.forward_to(stack.fake.base_url());
    let headers = stack.headers_for("alice");
    let mcp_token = headers[0].1.strip_prefix("Bearer ").unwrap().to_string();
    let nextcloud_token = headers[1].1.clone();
    assert_ne!(mcp_token, nextcloud_token);
    assert_eq!(audience_of(&nextcloud_token), json!(NEXTCLOUD_AUDIENCE));
    assert_eq!(audience_of(&mcp_token), json!(MCP_AUDIENCE));

    // Every files tool, so every upstream request shape is seen; results are
    // checked after the recorder, whose verdict is the point of this test.
    let calls = [
        ("files_search", json!({"name": "notes"})),
        ("files_read", json!({"path": "Documents/todo.txt"})),
        ("files_write", json!({"path": "Documents/recorded.md", "content": "x"})),
        ("files_write", json!({"path": "Documents/recorded.md", "content": "x"})),
        (
            "files_move",
            json!({"path": "Documents/recorded.md", "destination": "Private/recorded.md"}),
        ),
    ];
    let mut results = Vec::new();
    for (name, arguments) in calls {
        let result = stack
            .rpc_result(&headers, "tools/call", json!({"name": name, "arguments": arguments}))
            .await;
        results.push((name, result));
    }
    let fileid = results[2].1["structuredContent"]["fileid"].as_u64().unwrap_or(1);
    let result = stack
        .rpc_result(
            &headers,
            "tools/call",
            json!({"name": "files_read", "arguments": {"fileid": fileid}}),
        )
        .await;
    results.push(("files_read", result));

    let seen = recorder.seen();
    let to_nextcloud: Vec<&Recorded> =
        seen.iter().filter(|request| request.path.starts_with("/remote.php/")).collect();
    assert!(!to_nextcloud.is_empty());
    for request in &to_nextcloud {
        assert_eq!(
            request.authorization.as_deref(),
            Some(format!("Bearer {nextcloud_token}").as_str()),
            "{} {} carries the Nextcloud-audience token",
            request.method,
            request.path
        );
    }
    for request in &seen {
        assert!(
            !request.everything.contains(&mcp_token),
            "the token addressed to mcp-nextcloud reached Nextcloud in {} {}",
            request.method,
            request.path
        );
    }
    let methods: std::collections::BTreeSet<&str> =
        to_nextcloud.iter().map(|request| request.method.as_str()).collect();
    assert_eq!(
        methods,
        ["GET", "MOVE", "PROPFIND", "PUT", "SEARCH"].into_iter().collect(),
        "every files request shape went through the recorder"
    );
    let expected_failures = [(3, "conflict")];
    for (index, (name, result)) in results.iter().enumerate() {
        let expected = expected_failures.iter().find(|(at, _)| *at == index).map(|(_, kind)| *kind);
        assert_eq!(failure_kind(result), expected, "{name}: {result}");
    }
    assert_eq!(results[5].1["structuredContent"]["path"], "Private/recorded.md");
    recorder.shutdown().await;
}

#[tokio::test]
async fn single_token_mode_works_only_with_the_audience_check_off() {
    let stack = start(UpstreamAuth::SingleToken).await;
    stack.fake.shared.world().user_oidc.audience_check = false;
    let found = stack.call_tool("alice", "files_search", json!({"name": "journal"})).await;
    assert_eq!(found["structuredContent"]["files"][0]["path"], "Private/journal.md", "{found}");

    // Nextcloud's production setting: the token minted for mcp-nextcloud is
    // not for Nextcloud, and Nextcloud says so.
    stack.fake.shared.world().user_oidc.audience_check = true;
    let refused = stack.call_tool("alice", "files_search", json!({"name": "journal"})).await;
    assert_eq!(failure_kind(&refused), Some("refused_by_nextcloud"));
    let message = text(&refused);
    assert!(message.contains("did not accept the user's sign-in"), "{message}");
    assert!(message.contains("Tell the user"), "an instruction: {message}");
    assert!(!message.contains("401") && !message.contains("audience"), "{message}");
}

#[tokio::test]
async fn app_password_mode_works_and_a_wrong_one_is_refused() {
    let stack = start(UpstreamAuth::AppPassword).await;
    let read = stack.call_tool("alice", "files_read", json!({"path": "Private/journal.md"})).await;
    assert!(read["structuredContent"]["text"].as_str().unwrap().starts_with("# Journal"));
    let written = stack
        .call_tool("alice", "files_write", json!({"path": "Documents/app.md", "content": "x"}))
        .await;
    assert_eq!(written["structuredContent"]["created"], json!(true), "{written}");

    let wrong = vec![
        ("authorization".to_string(), format!("Bearer {}", stack.token("alice", MCP_AUDIENCE))),
        ("x-tamebi-app-password".to_string(), "alice-app-wrong".to_string()),
    ];
    let result = stack
        .rpc_result(
            &wrong,
            "tools/call",
            json!({"name": "files_search", "arguments": {"name": "journal"}}),
        )
        .await;
    assert_eq!(failure_kind(&result), Some("refused_by_nextcloud"));
    assert!(text(&result).contains("signing in again"), "{}", text(&result));

    // No app password at all: refused before anything is spent.
    let missing = vec![(
        "authorization".to_string(),
        format!("Bearer {}", stack.token("alice", MCP_AUDIENCE)),
    )];
    assert_eq!(stack.rpc(&missing, "tools/list", json!({})).await.status(), 401);
}

#[tokio::test]
async fn app_password_mode_works_where_bearer_sessions_are_rejected() {
    // The real server's bug: bearer-created sessions break some app routes.
    for upstream in [second_token(), UpstreamAuth::AppPassword] {
        let stack = start(upstream.clone()).await;
        stack.fake.shared.world().faults.bearer_rejected_on.push("/remote.php/dav".into());
        let result = stack.call_tool("alice", "files_search", json!({"name": "journal"})).await;
        if upstream == UpstreamAuth::AppPassword {
            assert_eq!(result["structuredContent"]["files"][0]["path"], "Private/journal.md");
        } else {
            assert_eq!(failure_kind(&result), Some("refused_by_nextcloud"), "{result}");
            assert!(text(&result).contains("Tell the user"));
        }
    }
}

#[tokio::test]
async fn a_valid_token_for_bob_cannot_act_as_alice() {
    // Second-token mode: bob's MCP token with alice's Nextcloud token is
    // refused outright.
    let stack = start(second_token()).await;
    let mixed = vec![
        ("authorization".to_string(), format!("Bearer {}", stack.token("bob", MCP_AUDIENCE))),
        ("x-tamebi-nextcloud-token".to_string(), stack.token("alice", NEXTCLOUD_AUDIENCE)),
    ];
    let response = stack
        .rpc(
            &mixed,
            "tools/call",
            json!({"name": "files_read", "arguments": {"path": "Private/journal.md"}}),
        )
        .await;
    assert_eq!(response.status(), 401);
    // With his own tokens bob acts as bob: alice's journal does not exist.
    let own = stack.call_tool("bob", "files_read", json!({"path": "Private/journal.md"})).await;
    assert_eq!(failure_kind(&own), Some("not_found"));

    // App-password mode: the password is spent as the token's `sub`, so
    // bob's token with alice's app password is refused by Nextcloud.
    let stack = start(UpstreamAuth::AppPassword).await;
    let alice_password = stack.fake.shared.world().users["alice"].app_passwords[0].clone();
    let mixed = vec![
        ("authorization".to_string(), format!("Bearer {}", stack.token("bob", MCP_AUDIENCE))),
        ("x-tamebi-app-password".to_string(), alice_password),
    ];
    let result = stack
        .rpc_result(
            &mixed,
            "tools/call",
            json!({"name": "files_read", "arguments": {"path": "Private/journal.md"}}),
        )
        .await;
    assert_eq!(failure_kind(&result), Some("refused_by_nextcloud"), "{result}");
    assert!(!text(&result).contains("Personal notes"));

    // Single-token mode: bob's token is bob.
    let stack = start(UpstreamAuth::SingleToken).await;
    stack.fake.shared.world().user_oidc.audience_check = false;
    let result = stack.call_tool("bob", "files_read", json!({"path": "Private/journal.md"})).await;
    assert_eq!(failure_kind(&result), Some("not_found"));
}
