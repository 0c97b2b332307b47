//! The whole chain the way a browser uses it: a logged-in session posts to
//! the fake Nextcloud's Tamebi app, which signs, obtains the user's tokens
//! (one per audience, renewed by the loopback code flow) and streams the
//! orchestrator's answer through; the orchestrator calls mcp-nextcloud and
//! mcp-mail with those tokens; they call the fake Nextcloud. Each test is
//! one rule of docs/app-contract.md seen from the outside.

use fake_model::{FakeModel, Script};
use fake_nextcloud::{AppConfig, FakeNextcloud, Fixture};
use orchestrator::identity;
use orchestrator::mcp::ServerConfig;
use orchestrator::service::{self, Orchestrator};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const SECRET: &str = "app-end-to-end-shared-secret-0123456789";
const MCP_NEXTCLOUD_AUDIENCE: &str = "http://127.0.0.1:9101/mcp";
const MCP_MAIL_AUDIENCE: &str = "http://127.0.0.1:9102/mcp";

struct Stack {
    fake: FakeNextcloud,
    _mcp: mcp_nextcloud::McpNextcloud,
    _mail: mcp_mail::McpMail,
    model: FakeModel,
    orchestrator: Orchestrator,
    http: reqwest::Client,
}

/// A logged-in browser: the session cookies and the page's request token.
struct Browser {
    base: String,
    cookies: String,
    request_token: String,
    http: reqwest::Client,
}

impl Stack {
    async fn start(script: &str) -> Stack {
        Stack::start_with(script, AppConfig::default().renew_margin_s).await
    }

    async fn start_with(script: &str, renew_margin_s: i64) -> Stack {
        let fixture = Fixture::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../scenarios/fixtures/demo.toml"),
        )
        .unwrap();
        let app = AppConfig {
            shared_secret: Some(SECRET.as_bytes().to_vec()),
            renew_margin_s,
            ..AppConfig::default()
        };
        let fake = FakeNextcloud::start_with_app(&fixture, fake_nextcloud::Config::default(), app)
            .await
            .unwrap();
        let base = fake.base_url().to_string();
        let mcp = mcp_nextcloud::McpNextcloud::start(mcp_nextcloud::Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            canonical_url: MCP_NEXTCLOUD_AUDIENCE.into(),
            issuer: base.clone(),
            jwks_url: None,
            nextcloud_url: base.clone(),
            upstream: mcp_nextcloud::UpstreamAuth::SecondToken {
                nextcloud_audience: "nextcloud".into(),
            },
            allowed_hosts: vec!["127.0.0.1".into()],
            clock: Default::default(),
            index: Default::default(),
            converter: None,
        })
        .await
        .unwrap();
        let mail = mcp_mail::McpMail::start(mcp_mail::Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            canonical_url: MCP_MAIL_AUDIENCE.into(),
            issuer: base.clone(),
            jwks_url: None,
            app_url: base.clone(),
            nextcloud_audience: "nextcloud".into(),
            allowed_hosts: vec!["127.0.0.1".into()],
            clock: Default::default(),
        })
        .await
        .unwrap();
        let model = FakeModel::start(fake_model::Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            script: Script::from_toml(script).unwrap(),
            ..fake_model::Config::default()
        })
        .await
        .unwrap();
        let orchestrator = Orchestrator::start(service::Config {
            listen: "127.0.0.1:0".parse().unwrap(),
            secret: SECRET.as_bytes().to_vec(),
            model: orchestrator::model::ModelConfig::new(model.api_base(), "fake-model"),
            window_tokens: 100_000,
            servers: vec![
                ServerConfig { name: "nextcloud".into(), url: format!("{}/mcp", mcp.url()) },
                ServerConfig { name: "mail".into(), url: format!("{}/mcp", mail.url()) },
            ],
            app_password_servers: Vec::new(),
            data_dir: None,
        })
        .await
        .unwrap();
        // A browser sees redirects (the login answers 303) rather than
        // following them blindly.
        let http =
            reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        let set = http
            .post(format!("{base}/__fake/app"))
            .header(fake_nextcloud::admin::TOKEN_HEADER, fake.admin_token().unwrap())
            .json(&json!({ "orchestrator_url": orchestrator.url() }))
            .send()
            .await
            .unwrap();
        assert!(set.status().is_success());
        Stack { fake, _mcp: mcp, _mail: mail, model, orchestrator, http }
    }

    async fn browser(&self, uid: &str, password: &str) -> Browser {
        let base = self.fake.base_url().to_string();
        let scenario::browser::Session { cookies, request_token } =
            scenario::browser::login(&self.http, &base, uid, password).await.unwrap();
        Browser { base, cookies, request_token, http: self.http.clone() }
    }

    /// Tokens minted from now on live `seconds`.
    async fn token_lifetime(&self, seconds: i64) {
        let url = format!("{}/__fake/faults", self.fake.base_url());
        let set = self
            .http
            .put(url)
            .header(fake_nextcloud::admin::TOKEN_HEADER, self.fake.admin_token().unwrap())
            .json(&json!({ "token_lifetime_seconds": seconds }))
            .send()
            .await
            .unwrap();
        assert!(set.status().is_success());
    }
}

impl Browser {
    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .header("Cookie", &self.cookies)
            .header("requesttoken", &self.request_token)
    }

    /// Posts to the chat proxy; the status and the answer's chunks (or the
    /// error envelope).
    async fn chat(&self, body: &Value) -> (u16, Vec<Value>) {
        let response = self
            .request(reqwest::Method::POST, "/apps/tamebi/api/chat")
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        if status != 200 {
            return (status, vec![serde_json::from_str(&text).unwrap_or(Value::String(text))]);
        }
        (status, frames(&text))
    }

    async fn ask(&self, conversation: &str, text: &str) -> Vec<Value> {
        let (status, chunks) = self.chat(&question(conversation, text)).await;
        assert_eq!(status, 200, "{chunks:?}");
        chunks
    }
}

fn question(conversation: &str, text: &str) -> Value {
    json!({
        "id": conversation,
        "trigger": "submit-message",
        "message": {"id": "u", "role": "user", "parts": [{"type": "text", "text": text}]},
    })
}

fn frames(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|frame| frame.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

fn of_type<'a>(chunks: &'a [Value], kind: &str) -> Vec<&'a Value> {
    chunks.iter().filter(|chunk| chunk["type"] == kind).collect()
}

fn text_of(chunks: &[Value]) -> String {
    of_type(chunks, "text-delta").iter().map(|c| c["delta"].as_str().unwrap()).collect()
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
name = "compose"
when = { last_role = "user", last_user_contains = "write to bob" }
tool_calls = [{ name = "mail_compose", arguments = { to = ["bob@example.com"], subject = "Stand-up", body = "Bob, the stand-up moves to 10:00." } }]

[[rules]]
name = "long"
when = { last_role = "user", last_user_contains = "long story" }
text = "Once upon a time there was a budget that had to be validated before the end of the quarter and everyone waited."
fault = { delta_delay_ms = 60 }

[[rules]]
name = "after a tool"
when = { last_role = "tool" }
text = "Done."
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_through_the_app_reaches_both_servers_as_the_user() {
    let stack = Stack::start(SCRIPT).await;
    let alice = stack.browser("alice", "alice-demo-password").await;
    let chunks = alice.ask("c-mail", "Find the mail about the budget").await;
    let outputs = of_type(&chunks, "tool-output-available");
    assert_eq!(outputs.len(), 2, "a search, then a read: {chunks:#?}");
    assert!(outputs[0].to_string().contains("Budget Apollo validé"), "{}", outputs[0]);
    let read = outputs[1].to_string();
    assert!(read.contains("Le budget de 40 000 € est validé par la direction"), "{read}");
    let files = alice.ask("c-mail", "And my notes?").await;
    assert_eq!(of_type(&files, "tool-output-available").len(), 1, "{files:#?}");
    let system =
        stack.model.requests()[0].body["messages"][0]["content"].as_str().unwrap().to_string();
    assert!(system.contains("files, calendar, contacts and Deck: reachable"), "{system}");
    assert!(system.contains("- mail: reachable, 3 tools"), "{system}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_chunk_reaches_the_browser_before_the_last_is_produced() {
    let stack = Stack::start(SCRIPT).await;
    let alice = stack.browser("alice", "alice-demo-password").await;
    let started = Instant::now();
    let mut response = alice
        .request(reqwest::Method::POST, "/apps/tamebi/api/chat")
        .header("Content-Type", "application/json")
        .body(question("c-stream", "Tell me a long story").to_string())
        .send()
        .await
        .unwrap();
    let mut first_text = None;
    let mut seen = String::new();
    while let Some(chunk) = response.chunk().await.unwrap() {
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if first_text.is_none() && seen.contains("text-delta") {
            first_text = Some(started.elapsed());
        }
    }
    let total = started.elapsed();
    let first = first_text.expect("text arrived");
    // 22 words at 60 ms each: the first must arrive long before the last.
    assert!(total - first > Duration::from_millis(600), "first {first:?}, end {total:?}");
    assert!(text_of(&frames(&seen)).ends_with("and everyone waited."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identity_is_the_apps_and_only_the_apps() {
    let stack = Stack::start(SCRIPT).await;
    let alice = stack.browser("alice", "alice-demo-password").await;
    let mut body = question("c-uid", "hello");
    body["message"]["metadata"] = json!({"uid": "bob"});
    let (status, envelope) = alice.chat(&body).await;
    assert_eq!(status, 400, "{envelope:?}");
    assert!(envelope[0]["error"]["requestId"].as_str().is_some_and(|id| !id.is_empty()));
    assert!(stack.model.requests().is_empty(), "nothing reached the model");

    // Straight to the orchestrator: what the app would sign, altered.
    let url = format!("{}/api/chat", stack.orchestrator.url());
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
/// (`crates/fake-nextcloud/tests/app.rs`); here every service checks
/// tokens against the real clock, so the tokens are made short-lived
/// instead of the clock moved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_keep_working_when_the_first_tokens_have_expired() {
    let stack = Stack::start_with(SCRIPT, 1).await;
    stack.token_lifetime(3).await;
    let alice = stack.browser("alice", "alice-demo-password").await;
    let before = alice.ask("c-long", "Where are my notes?").await;
    assert_eq!(of_type(&before, "tool-output-available").len(), 1, "{before:#?}");
    let authorized = |requests: Value| requests["requests"].as_array().unwrap().len();
    let url = format!("{}/__fake/oidc/authorize-requests", stack.fake.base_url());
    let token = stack.fake.admin_token().unwrap();
    let first: Value = stack
        .http
        .get(&url)
        .header(fake_nextcloud::admin::TOKEN_HEADER, token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();

    tokio::time::sleep(Duration::from_millis(3_500)).await;
    let after = alice.ask("c-long", "Where are my notes now?").await;
    assert_eq!(of_type(&after, "tool-output-available").len(), 1, "{after:#?}");
    assert!(of_type(&after, "tool-output-error").is_empty(), "{after:#?}");
    let second: Value = stack
        .http
        .get(&url)
        .header(fake_nextcloud::admin::TOKEN_HEADER, token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(authorized(second) > authorized(first), "the tokens were renewed by the code flow");

    // The session gone: one clear sentence, not a stack of tool failures.
    let end = format!("{}/__fake/sessions/alice/end", stack.fake.base_url());
    assert!(
        stack
            .http
            .post(end)
            .header(fake_nextcloud::admin::TOKEN_HEADER, token)
            .send()
            .await
            .unwrap()
            .status()
            .is_success()
    );
    let (status, envelope) = alice.chat(&question("c-long", "And now?")).await;
    assert_eq!(status, 401);
    let message = envelope[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("Reload the page to sign in again"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_composed_mail_waits_for_approval_and_only_a_click_sends_it() {
    let stack = Stack::start(SCRIPT).await;
    let alice = stack.browser("alice", "alice-demo-password").await;
    let first = alice.ask("c-compose", "Please write to bob about the stand-up").await;
    let requests = of_type(&first, "tool-approval-request");
    assert_eq!(requests.len(), 1, "mail_compose is an action: {first:#?}");
    let decision = json!({
        "id": "c-compose", "trigger": "submit-message",
        "message": {"id": "a", "role": "assistant", "parts": [{
            "type": "dynamic-tool", "toolCallId": requests[0]["toolCallId"],
            "state": "approval-responded",
            "approval": {"id": requests[0]["approvalId"], "approved": true}}]},
    });
    let (status, approved) = alice.chat(&decision).await;
    assert_eq!(status, 200);
    let outputs = of_type(&approved, "tool-output-available");
    assert_eq!(outputs.len(), 1, "{approved:#?}");
    let preview_id = outputs[0]["output"]["previewId"]
        .as_str()
        .or_else(|| outputs[0]["output"]["preview_id"].as_str())
        .unwrap_or_else(|| panic!("a preview id in {}", outputs[0]))
        .to_string();

    let sent_count = |state: Value| state["mail_messages"].as_u64().unwrap();
    let state_url = format!("{}/__fake/state", stack.fake.base_url());
    let token = stack.fake.admin_token().unwrap();
    let state = || stack.http.get(&state_url).header(fake_nextcloud::admin::TOKEN_HEADER, token);
    let before: Value = state().send().await.unwrap().json().await.unwrap();

    // A bearer never reaches the send route, even with a valid token.
    let send = format!("/apps/tamebi/api/mail/previews/{preview_id}/send");
    let token = stack.fake.shared.mint_access_token("alice", "nextcloud");
    let by_bearer = stack
        .http
        .post(format!("{}{send}", stack.fake.base_url()))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(by_bearer.status(), 403);
    let unchanged: Value = state().send().await.unwrap().json().await.unwrap();
    assert_eq!(sent_count(unchanged), sent_count(before.clone()), "composing sent nothing");

    // The human click.
    let clicked = alice.request(reqwest::Method::POST, &send).send().await.unwrap();
    assert!(clicked.status().is_success(), "{}", clicked.status());
    let after: Value = state().send().await.unwrap().json().await.unwrap();
    assert_eq!(sent_count(after), sent_count(before) + 1);
    let again = alice.request(reqwest::Method::POST, &send).send().await.unwrap();
    assert_eq!(again.status(), 409, "sent once");
}
