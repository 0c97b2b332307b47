//! The whole chain the way a browser uses it: a logged-in session posts to
//! the fake Nextcloud's Tamebi app, which signs, obtains the user's tokens
//! (one per audience, renewed by the loopback code flow) and streams the
//! orchestrator's answer through; the orchestrator calls mcp-nextcloud and
//! mcp-mail with those tokens; they call the fake Nextcloud. Each test is
//! one rule of docs/app-contract.md seen from the outside, where a scenario
//! cannot say it (the streaming proxy and the composed mail's click are
//! `scenarios/stream_is_not_buffered.toml` and
//! `scenarios/composed_mail_waits_for_a_click.toml`).

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use orchestrator::identity;
use scenario::browser::question;
use scenario::harness::{SECRET, Stack};
use scenario::sse::of_type;
use serde_json::{Value, json};
use std::time::Duration;

/// The whole system on the demo fixture, the model on this script.
async fn start(script: &str) -> Stack {
    Stack::builder().model_script(script).start().await.unwrap()
}

/// Like [`start`], the app renewing a token expiring within `renew_margin_s`.
async fn start_with(script: &str, renew_margin_s: i64) -> Stack {
    let app = fake_nextcloud::AppConfig { renew_margin_s, ..fake_nextcloud::AppConfig::default() };
    Stack::builder().model_script(script).app(app).start().await.unwrap()
}

const SCRIPT: &str = r#"
[[rules]]
name = "mail search"
when = { last_role = "user", last_user_contains = "mail about the budget" }
tool_calls = [{ name = "mail_search", arguments = { query = "budget" } }]

[[rules]]
name = "mail read"
when = { last_role = "tool", last_tool_result_contains = "Budget Apollo validé", turn = 1 }
tool_calls = [{ name = "mail_read", arguments = { id = 1 } }]

[[rules]]
name = "files"
when = { last_role = "user", last_user_contains = "notes" }
tool_calls = [{ name = "files_search", arguments = { name = "notes" } }]

[[rules]]
name = "after a tool"
when = { last_role = "tool" }
text = "Done."
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_through_the_app_reaches_both_servers_as_the_user() {
    let stack = start(SCRIPT).await;
    let alice = stack.login("alice", "alice-demo-password").await.unwrap();
    let chunks = alice.ask("c-mail", "Find the mail about the budget").await.unwrap();
    let outputs = of_type(&chunks, "tool-output-available");
    assert_eq!(outputs.len(), 2, "a search, then a read: {chunks:#?}");
    assert!(outputs[0].to_string().contains("Budget Apollo validé"), "{}", outputs[0]);
    let read = outputs[1].to_string();
    assert!(read.contains("Le budget de 40 000 € est validé par la direction"), "{read}");
    let files = alice.ask("c-mail", "And my notes?").await.unwrap();
    assert_eq!(of_type(&files, "tool-output-available").len(), 1, "{files:#?}");
    // The environment opens the latest question (the system prompt is the
    // same for every turn).
    let question =
        stack.model().requests()[0].body["messages"][1]["content"].as_str().unwrap().to_string();
    assert!(question.contains("files, calendar, contacts and Deck: reachable"), "{question}");
    assert!(question.contains("- mail: reachable, 3 tools"), "{question}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identity_is_the_apps_and_only_the_apps() {
    let stack = start(SCRIPT).await;
    let alice = stack.login("alice", "alice-demo-password").await.unwrap();
    let mut body = question("c-uid", "hello");
    body["message"]["metadata"] = json!({"uid": "bob"});
    let (status, envelope) = alice.chat(&body).await.unwrap();
    assert_eq!(status, 400, "{envelope:?}");
    assert!(envelope[0]["error"]["requestId"].as_str().is_some_and(|id| !id.is_empty()));
    assert!(stack.model().requests().is_empty(), "nothing reached the model");

    // Straight to the orchestrator: what the app would sign, altered.
    let url = format!("{}/api/chat", stack.orchestrator().url());
    let bytes = question("c-direct", "hello").to_string().into_bytes();
    let nonce = "e2e-direct-nonce-0123456789";
    let signed = |timestamp: u64, body: &[u8], signed_body: &[u8]| {
        let timestamp = timestamp.to_string();
        let signature = identity::Signed {
            uid: "alice",
            timestamp: &timestamp,
            nonce,
            method: "POST",
            path: "/api/chat",
            body: signed_body,
        }
        .sign(SECRET.as_bytes());
        stack
            .http
            .post(&url)
            .header(identity::HEADER_UID, "alice")
            .header(identity::HEADER_TIMESTAMP, timestamp)
            .header(identity::HEADER_NONCE, nonce)
            .header(identity::HEADER_SIGNATURE, signature)
            .header(identity::HEADER_REQUEST_ID, "req-direct")
            .body(body.to_vec())
    };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let tampered = question("c-direct", "hello, as bob").to_string().into_bytes();
    assert_eq!(signed(now, &tampered, &bytes).send().await.unwrap().status(), 401);
    assert_eq!(signed(now - 120, &bytes, &bytes).send().await.unwrap().status(), 401);
    assert_eq!(signed(now, &bytes, &bytes).send().await.unwrap().status(), 200);
    assert_eq!(signed(now, &bytes, &bytes).send().await.unwrap().status(), 401, "a replay");
}

/// The tokens the app obtained expire mid-conversation and the tools keep
/// working, because the app renews them by the loopback code flow. The
/// fake's own tests move its clock past 15 minutes
/// (`crates/fake-nextcloud/tests/app.rs`); here the tokens are made
/// short-lived instead, so that real time passing is what expires them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_keep_working_when_the_first_tokens_have_expired() {
    let stack = start_with(SCRIPT, 1).await;
    // Tokens minted from now on live 3 s.
    stack.nextcloud_faults(&json!({ "token_lifetime_seconds": 3 })).await.unwrap();
    let alice = stack.login("alice", "alice-demo-password").await.unwrap();
    let before = alice.ask("c-long", "Where are my notes?").await.unwrap();
    assert_eq!(of_type(&before, "tool-output-available").len(), 1, "{before:#?}");
    let authorized = |requests: Value| requests["requests"].as_array().unwrap().len();
    let authorize_requests = || async {
        let list = stack.nextcloud_admin(reqwest::Method::GET, "/__fake/oidc/authorize-requests");
        list.send().await.unwrap().json::<Value>().await.unwrap()
    };
    let first = authorize_requests().await;

    tokio::time::sleep(Duration::from_millis(3_500)).await;
    let after = alice.ask("c-long", "Where are my notes now?").await.unwrap();
    assert_eq!(of_type(&after, "tool-output-available").len(), 1, "{after:#?}");
    assert!(of_type(&after, "tool-output-error").is_empty(), "{after:#?}");
    let second = authorize_requests().await;
    assert!(authorized(second) > authorized(first), "the tokens were renewed by the code flow");

    // The session gone: one clear sentence, not a stack of tool failures.
    stack.end_session("alice").await.unwrap();
    let (status, envelope) = alice.chat(&question("c-long", "And now?")).await.unwrap();
    assert_eq!(status, 401);
    let message = envelope[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("Reload the page to sign in again"), "{message}");
}
