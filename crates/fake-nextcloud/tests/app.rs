//! The Tamebi app's endpoints (`docs/app-contract.md`) over real sockets: the
//! signed streaming proxy against a stand-in orchestrator, token renewal
//! through the loopback authorization-code flow, the mail routes and their
//! bearer/click split, the MCP Apps re-serve and the chat page.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod app_support;
mod common;

use app_support::{
    Browser, FIRST_FRAME, LAST_FRAMES, SECRET, Stack, StandIn, admin_send, app_config,
    demo_fixture, http_client, start_fake, start_fake_with_app,
};
use fake_nextcloud::{AppConfig, FakeNextcloud};
use hmac::Mac as _;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

const SESSION_ENDED: &str = "Your Nextcloud session has ended. Reload the page to sign in again.";
const BODY_NAMES_UID: &str = "The request names a user; the assistant acts only for the signed-in user. Reload the page and try again.";
const UNREACHABLE: &str = "The assistant is not reachable right now. Try again in a moment.";
const NEEDS_CLICK: &str = "Sending or saving mail needs your click in the chat page.";

/// The audiences of the demo's three clients.
const AUDIENCES: [(&str, &str); 3] = [
    ("x-tamebi-token-mcp-nextcloud", "http://127.0.0.1:9101/mcp"),
    ("x-tamebi-token-mcp-mail", "http://127.0.0.1:9102/mcp"),
    ("x-tamebi-token-nextcloud", "nextcloud"),
];

const CHAT_BODY: &str = r#"{"id":"chat-1","trigger":"submit-message","message":{"role":"user","parts":[{"type":"text","text":"Où est le rapport ?"}]}}"#;

/// Asserts an answer is the app's envelope with this status and message,
/// carrying the request id of its own `X-Request-Id`.
async fn assert_envelope(response: reqwest::Response, status: u16, message: &str) {
    assert_eq!(response.status(), status, "status of an envelope saying {message:?}");
    let request_id = response.headers()["x-request-id"].to_str().unwrap().to_string();
    assert!(!request_id.is_empty());
    let body: Value = response.json().await.unwrap();
    assert_eq!(body, json!({ "error": { "message": message, "requestId": request_id } }));
}

/// The orchestrator's check, written again here from docs/identity.md.
fn assert_signed(received: &app_support::Received, uid: &str) {
    assert_eq!(received.header("x-tamebi-uid"), Some(uid));
    let timestamp = received.header("x-tamebi-timestamp").expect("a timestamp");
    let wall = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let skew = timestamp.parse::<i64>().unwrap() - wall.as_secs() as i64;
    assert!(skew.abs() <= 60, "the timestamp is {skew} s from the real clock");
    let body_hash: String =
        Sha256::digest(&received.body).iter().map(|byte| format!("{byte:02x}")).collect();
    let nonce = received.header("x-tamebi-nonce").expect("a nonce");
    assert!((16..=64).contains(&nonce.len()), "{nonce}");
    let method = &received.method;
    let path = received.target.split('?').next().unwrap();
    let mut mac = hmac::Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(format!("{uid}\n{timestamp}\n{nonce}\n{method}\n{path}\n{body_hash}").as_bytes());
    let expected: String =
        mac.finalize().into_bytes().iter().map(|byte| format!("{byte:02x}")).collect();
    assert_eq!(received.header("x-tamebi-signature"), Some(expected.as_str()));
}

/// Validates a token against the fake's JWKS and issuer at the fake's time.
async fn assert_token_valid(stack: &Stack, token: &str, audience: &str, uid: &str) -> i64 {
    let jwks = common::jwks(&stack.fake).await;
    let clock: Value = stack.admin("GET", "/__fake/clock", Value::Null).await;
    let validation = access_token::Validation {
        issuer: stack.fake.base_url().to_string(),
        audience: Some(audience.to_string()),
        require_at_jwt: true,
        leeway_seconds: 0,
    };
    let claims = access_token::validate(token, &jwks, &validation, clock["now"].as_i64().unwrap())
        .unwrap_or_else(|error| panic!("the {audience} token is refused: {error}"));
    assert_eq!(claims.sub, uid);
    claims.exp
}

// ---- the chat proxy ------------------------------------------------------

#[tokio::test]
async fn a_chat_is_signed_and_carries_the_users_tokens_and_settings() {
    let stack = Stack::start(false).await;
    let response = stack.alice.chat(CHAT_BODY).await;
    assert_eq!(response.status(), 200);
    let request_id = response.headers()["x-request-id"].to_str().unwrap().to_string();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["cache-control"], "no-cache");
    assert_eq!(response.headers()["x-vercel-ai-ui-message-stream"], "v1");
    assert_eq!(response.headers()["x-accel-buffering"], "no");
    assert!(response.headers().get("x-orchestrator-internal").is_none());
    assert_eq!(response.text().await.unwrap(), format!("{FIRST_FRAME}{LAST_FRAMES}"));

    let received = stack.orchestrator.received();
    assert_eq!(received.len(), 1);
    let chat = &received[0];
    assert_eq!((chat.method.as_str(), chat.target.as_str()), ("POST", "/api/chat"));
    assert_eq!(chat.body, CHAT_BODY.as_bytes(), "the body is forwarded byte for byte");
    assert_signed(chat, "alice");
    assert_eq!(chat.header("x-request-id"), Some(request_id.as_str()));
    assert_eq!(chat.header("x-tamebi-display-name"), Some("Alice%20Martin"));
    assert_eq!(chat.header("x-tamebi-time-zone"), Some("Europe/Paris"));
    assert_eq!(chat.header("x-tamebi-language"), Some("fr"), "alice's fixture language");
    assert_eq!(chat.header("content-type"), Some("application/json"));
    for (header, audience) in AUDIENCES {
        let token = chat.header(header).unwrap_or_else(|| panic!("{header} is sent"));
        assert_token_valid(&stack, token, audience, "alice").await;
    }
    for (name, _) in chat.headers.iter() {
        assert_ne!(name, "cookie", "the browser's cookies stay with Nextcloud");
        assert_ne!(name, "requesttoken");
    }
    stack.stop().await;
}

#[tokio::test]
async fn a_body_naming_a_uid_is_refused_and_nothing_is_forwarded() {
    let stack = Stack::start(false).await;
    let body = r#"{"id":"c1","message":{"metadata":{"uid":"bob"}}}"#;
    assert_envelope(stack.alice.chat(body).await, 400, BODY_NAMES_UID).await;
    assert!(stack.orchestrator.received().is_empty(), "nothing reached the orchestrator");
    // A uid inside text is only text.
    let text = r#"{"id":"c1","message":{"parts":[{"type":"text","text":"uid: bob"}]}}"#;
    assert_eq!(stack.alice.chat(text).await.status(), 200);
    stack.stop().await;
}

#[tokio::test]
async fn a_body_over_4_mib_is_413() {
    let stack = Stack::start(false).await;
    let body = format!(r#"{{"text":"{}"}}"#, "a".repeat(4 * 1024 * 1024));
    assert_envelope(
        stack.alice.chat(&body).await,
        413,
        "The request is larger than 4 MiB. Shorten it and try again.",
    )
    .await;
    assert!(stack.orchestrator.received().is_empty());
    stack.stop().await;
}

#[tokio::test]
async fn without_a_session_the_routes_answer_the_401_envelope() {
    let stack = Stack::start(false).await;
    let http = http_client();
    for (method, path) in [
        ("POST", "/apps/tamebi/api/chat"),
        ("GET", "/index.php/apps/tamebi/api/conversations"),
        ("DELETE", "/apps/tamebi/api/memory/3"),
        ("GET", "/apps/tamebi/api/mail/previews/x"),
        ("POST", "/apps/tamebi/api/ui"),
        ("GET", "/apps/tamebi/ui/x"),
    ] {
        let response = http
            .request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), stack.url(path))
            .header("requesttoken", &stack.alice.request_token)
            .header("Cookie", "ocfake0001=not-a-session; evil=1")
            .send()
            .await
            .unwrap();
        assert_envelope(response, 401, SESSION_ENDED).await;
    }
    assert!(stack.orchestrator.received().is_empty());
    stack.stop().await;
}

#[tokio::test]
async fn a_missing_or_wrong_request_token_is_nextclouds_412() {
    let stack = Stack::start(false).await;
    let missing = stack
        .alice
        .request_without_token("POST", "/apps/tamebi/api/chat")
        .header("OCS-APIRequest", "true")
        .body(CHAT_BODY)
        .send()
        .await
        .unwrap();
    let wrong = stack
        .alice
        .request_without_token("GET", "/apps/tamebi/api/conversations")
        .header("requesttoken", "not-the-token")
        .send()
        .await
        .unwrap();
    for response in [missing, wrong] {
        assert_eq!(response.status(), 412);
        assert_eq!(response.text().await.unwrap(), r#"{"message":"CSRF check failed"}"#);
    }
    assert!(stack.orchestrator.received().is_empty());
    stack.stop().await;
}

#[tokio::test]
async fn the_answer_reaches_the_browser_chunk_by_chunk() {
    let stack = Stack::start(true).await;
    // A buffering proxy would hold the headers and the first frame until the
    // stand-in is released, which happens only after both arrived.
    let first_frame = async {
        let mut response = stack.alice.chat(CHAT_BODY).await;
        assert_eq!(response.status(), 200);
        let first = response.chunk().await.unwrap().expect("a first chunk");
        (response, first)
    };
    let (mut response, first) =
        tokio::time::timeout(std::time::Duration::from_secs(10), first_frame)
            .await
            .expect("the first frame arrives while the orchestrator still works");
    assert_eq!(first, FIRST_FRAME.as_bytes());
    assert!(!stack.orchestrator.finished(), "the last frames are not produced yet");
    stack.orchestrator.release();
    let mut rest = Vec::new();
    while let Some(chunk) = response.chunk().await.unwrap() {
        rest.extend_from_slice(&chunk);
    }
    assert_eq!(rest, LAST_FRAMES.as_bytes());
    assert!(stack.orchestrator.finished());
    stack.stop().await;
}

#[tokio::test]
async fn an_unreachable_or_unset_orchestrator_is_a_502_envelope() {
    // A port nobody listens on.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let fake = start_fake(&demo_fixture(), Some(&closed)).await;
    let alice = Browser::alice(&fake).await;
    assert_envelope(alice.chat(CHAT_BODY).await, 502, UNREACHABLE).await;

    // Unset at run time, then set to a live orchestrator.
    let admin = |body: Value| admin_send(&fake, "POST", "/__fake/app", body);
    let unset = admin(json!({ "orchestrator_url": null })).await;
    assert_eq!(unset.status(), 200);
    let settings: Value = unset.json().await.unwrap();
    assert_eq!(settings["orchestrator_url"], Value::Null);
    assert_eq!(settings["shared_secret_set"], true);
    assert!(settings.get("shared_secret").is_none(), "the secret is never shown");
    assert_envelope(alice.chat(CHAT_BODY).await, 502, UNREACHABLE).await;

    let orchestrator = StandIn::start(false).await;
    let short = admin(json!({ "shared_secret": "short" })).await;
    assert_eq!(short.status(), 400, "a secret under 32 bytes is refused");
    let set = admin(json!({ "orchestrator_url": orchestrator.url, "shared_secret": SECRET }));
    assert_eq!(set.await.status(), 200);
    assert_eq!(alice.chat(CHAT_BODY).await.status(), 200);
    assert_signed(&orchestrator.received()[0], "alice");
    let unset_secret = admin(json!({ "shared_secret": null })).await;
    assert_eq!(unset_secret.status(), 200);
    assert_envelope(alice.chat(CHAT_BODY).await, 502, UNREACHABLE).await;
    assert_eq!(orchestrator.received().len(), 1, "nothing unsigned is forwarded");

    fake.shutdown().await;
    orchestrator.stop().await;
}

#[tokio::test]
async fn conversation_and_memory_routes_keep_method_path_and_query() {
    let stack = Stack::start(false).await;
    let calls = [
        ("GET", "/apps/tamebi/api/conversations?limit=5", "/api/conversations?limit=5"),
        ("GET", "/index.php/apps/tamebi/api/conversations/c-1", "/api/conversations/c-1"),
        ("DELETE", "/apps/tamebi/api/conversations/c-1", "/api/conversations/c-1"),
        ("GET", "/index.php/apps/tamebi/api/memory", "/api/memory"),
        ("DELETE", "/apps/tamebi/api/memory/42", "/api/memory/42"),
    ];
    for (method, path, _) in calls {
        let response = stack.alice.request(method, path).send().await.unwrap();
        assert_eq!(response.status(), 200, "{method} {path}");
        assert_eq!(response.headers()["content-type"], "application/json");
    }
    let received = stack.orchestrator.received();
    assert_eq!(received.len(), calls.len());
    for (received, (method, _, target)) in received.iter().zip(calls) {
        assert_eq!((received.method.as_str(), received.target.as_str()), (method, target));
        assert!(received.body.is_empty());
        assert_signed(received, "alice");
        assert!(received.header("x-tamebi-token-nextcloud").is_some());
    }
    // The orchestrator's errors are passed on as they are.
    let missing = stack.alice.request("GET", "/apps/tamebi/api/conversations/missing").send();
    assert_envelope(missing.await.unwrap(), 404, "This conversation does not exist.").await;
    let wrong_method = stack.alice.request("PUT", "/apps/tamebi/api/memory").send().await;
    assert_eq!(wrong_method.unwrap().status(), 405);
    // A fact the user adds in the memory panel: forwarded signed, byte for byte.
    let fact = r#"{"text":"I am on leave in August"}"#;
    let added = stack.alice.request("POST", "/apps/tamebi/api/memory").body(fact).send();
    assert_eq!(added.await.unwrap().status(), 200);
    let received = stack.orchestrator.received();
    let received = received.last().unwrap();
    assert_eq!((received.method.as_str(), received.target.as_str()), ("POST", "/api/memory"));
    assert_eq!(received.body, fact.as_bytes());
    assert_signed(received, "alice");
    let naming_a_uid = stack.alice.request("POST", "/apps/tamebi/api/memory");
    let named = naming_a_uid.body(r#"{"text":"x","uid":"bob"}"#).send().await.unwrap();
    assert_eq!(named.status(), 400, "a body naming a uid never reaches the orchestrator");
    stack.stop().await;
}

// ---- token renewal ---------------------------------------------------------

fn tokens_of(received: &app_support::Received) -> Vec<String> {
    AUDIENCES
        .iter()
        .map(|(header, _)| received.header(header).expect("a token").to_string())
        .collect()
}

#[tokio::test]
async fn tokens_are_reused_then_renewed_when_they_near_expiry() {
    let stack = Stack::start(false).await;
    stack.alice.chat(CHAT_BODY).await.text().await.unwrap();
    stack.alice.chat(CHAT_BODY).await.text().await.unwrap();
    // 100 s before expiry: inside the 120 s margin.
    stack.advance_clock(800).await;
    stack.alice.chat(CHAT_BODY).await.text().await.unwrap();
    // Past the 15 minutes of the renewed tokens.
    stack.advance_clock(16 * 60).await;
    stack.alice.chat(CHAT_BODY).await.text().await.unwrap();

    let received = stack.orchestrator.received();
    assert_eq!(received.len(), 4);
    let [first, again, near_expiry, later] = [0, 1, 2, 3].map(|index| tokens_of(&received[index]));
    assert_eq!(first, again, "a fresh token is reused");
    for (old, new) in [(&again, &near_expiry), (&near_expiry, &later)] {
        for (old, new) in old.iter().zip(new) {
            assert_ne!(old, new, "a token near its expiry is renewed");
        }
    }
    for ((_, audience), token) in AUDIENCES.iter().zip(&later) {
        let exp = assert_token_valid(&stack, token, audience, "alice").await;
        let now = stack.admin("GET", "/__fake/clock", Value::Null).await["now"].as_i64().unwrap();
        assert!(exp - now > 800, "the renewed token has its whole lifetime ahead");
    }
    // Signatures stay on the real clock while the fake's runs 30 minutes ahead.
    assert_signed(&received[3], "alice");
    assert_eq!(stack.state().await["app_tokens"], 3);
    stack.stop().await;
}

#[tokio::test]
async fn an_ended_session_is_the_401_envelope() {
    let stack = Stack::start(false).await;
    assert_eq!(stack.alice.chat(CHAT_BODY).await.status(), 200);
    let ended = stack.admin("POST", "/__fake/sessions/alice/end", json!({})).await;
    assert_eq!(ended["ended"], 1);
    assert_envelope(stack.alice.chat(CHAT_BODY).await, 401, SESSION_ENDED).await;
    assert_eq!(stack.orchestrator.received().len(), 1);
    stack.stop().await;
}

#[tokio::test]
async fn only_session_cookies_reach_the_authorize_endpoint() {
    let stack = Stack::start(false).await;
    let response = stack
        .alice
        .request("POST", "/apps/tamebi/api/chat")
        .header("Cookie", format!("{}; evil=1; _ga=tracker", stack.alice.cookies))
        .header("Content-Type", "application/json")
        .header("X-Browser-Secret", "1")
        .header("User-Agent", "a browser")
        .body(CHAT_BODY)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let records = stack.admin("GET", "/__fake/oidc/authorize-requests", Value::Null).await;
    let records = records["requests"].as_array().unwrap();
    assert_eq!(records.len(), 3, "one authorize call per audience");
    let mut clients: Vec<&str> =
        records.iter().map(|record| record["client_id"].as_str().unwrap()).collect();
    clients.sort();
    assert_eq!(clients, ["nextcloud", "tamebi-mcp-mail", "tamebi-mcp-nextcloud"]);
    for record in records {
        let cookies: Vec<&str> = record["cookie_names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert!(cookies.contains(&"ocfake0001"), "the session cookie travels: {cookies:?}");
        for name in &cookies {
            assert!(name.starts_with("nc_") || name.starts_with("oc"), "{name} travelled");
        }
        let headers: Vec<&str> = record["header_names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        for browser_header in
            ["x-browser-secret", "user-agent", "requesttoken", "content-type", "authorization"]
        {
            assert!(!headers.contains(&browser_header), "{browser_header} travelled");
        }
    }
    stack.stop().await;
}

#[tokio::test]
async fn a_token_the_app_cannot_obtain_is_left_out() {
    // An instance id outside `oc*` puts the session cookie outside the
    // forwarded set: the loopback authorize call then has no session and is
    // sent to the login page, as when the session is gone.
    let demo = common::demo_fixture_path();
    let text = std::fs::read_to_string(&demo)
        .unwrap()
        .replace("[server]\n", "[server]\ninstance_id = \"zzfake\"\n");
    let mut fixture = fake_nextcloud::Fixture::parse(&text).unwrap();
    fixture.base_dir = demo.parent().unwrap().to_path_buf();
    let orchestrator = StandIn::start(false).await;
    let fake = start_fake(&fixture, Some(&orchestrator.url)).await;
    let alice = Browser::alice(&fake).await;
    assert_eq!(alice.chat(CHAT_BODY).await.status(), 200);
    let received = &orchestrator.received()[0];
    assert_signed(received, "alice");
    for (header, _) in AUDIENCES {
        assert!(received.header(header).is_none(), "{header} is left out");
    }
    fake.shutdown().await;

    // An audience whose client does not exist is left out; the others travel.
    let app = AppConfig {
        audiences: vec![
            fake_nextcloud::app::Audience {
                name: "nextcloud".into(),
                client_id: "nextcloud".into(),
            },
            fake_nextcloud::app::Audience {
                name: "mcp-other".into(),
                client_id: "no-such-client".into(),
            },
        ],
        ..app_config(Some(&orchestrator.url))
    };
    let fake = start_fake_with_app(&demo_fixture(), app).await;
    let alice = Browser::alice(&fake).await;
    assert_eq!(alice.chat(CHAT_BODY).await.status(), 200);
    let received = &orchestrator.received()[1];
    assert!(received.header("x-tamebi-token-nextcloud").is_some());
    assert!(received.header("x-tamebi-token-mcp-other").is_none());
    fake.shutdown().await;
    orchestrator.stop().await;
}

#[tokio::test]
async fn a_user_without_a_time_zone_setting_sends_none_and_the_default_language() {
    let stack = Stack::start(false).await;
    // The demo's admin has timezone = "UTC" set; a fixture user without one:
    let fixture = fake_nextcloud::Fixture::parse(
        r#"
[[users]]
uid = "dana"
display_name = "Dana Ø"
password = "dana-pw"
"#,
    )
    .unwrap();
    let fake = start_fake(&fixture, Some(&stack.orchestrator.url)).await;
    let dana = Browser::login(fake.base_url(), "dana", "dana-pw").await;
    assert_eq!(dana.chat("{}").await.status(), 200);
    let received = &stack.orchestrator.received()[0];
    assert_signed(received, "dana");
    assert!(received.header("x-tamebi-time-zone").is_none());
    assert_eq!(received.header("x-tamebi-display-name"), Some("Dana%20%C3%98"));
    assert_eq!(received.header("x-tamebi-language"), Some("en"), "Nextcloud's default");
    fake.shutdown().await;
    stack.stop().await;
}

// ---- mail ------------------------------------------------------------------

async fn mail_get(stack: &Stack, token: &str, path: &str) -> reqwest::Response {
    http_client().get(stack.url(path)).bearer_auth(token).send().await.unwrap()
}

#[tokio::test]
async fn mail_search_is_newest_first_and_pages_with_a_cursor() {
    let stack = Stack::start(false).await;
    let token = stack.token_for("alice", "nextcloud");
    let page: Value = mail_get(&stack, &token, "/apps/tamebi/api/mail/search?limit=1")
        .await
        .json()
        .await
        .unwrap();
    let first = &page["messages"][0];
    assert_eq!(page["messages"].as_array().unwrap().len(), 1);
    assert_eq!(first["subject"], "Budget Apollo validé");
    assert_eq!(first["from"], "Chloé Dubois <chloe.dubois@example.com>");
    assert_eq!(first["to"], json!(["alice@example.com"]));
    assert_eq!(first["cc"], json!([]));
    assert_eq!(first["mailbox"], "INBOX");
    assert_eq!(first["date"], "2026-03-14T09:12:00Z");
    assert_eq!(first["seen"], false);
    assert_eq!(
        first["preview"],
        "Bonjour Alice, Le budget de 40 000 € est validé par la direction. Chloé"
    );
    let cursor = page["nextCursor"].as_str().expect("a next page");
    let next: Value = mail_get(
        &stack,
        &token,
        &format!("/index.php/apps/tamebi/api/mail/search?limit=1&cursor={cursor}"),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(next["messages"][0]["subject"], "2FA on staging");
    assert_eq!(next["messages"][0]["seen"], true);
    assert_eq!(next["nextCursor"], Value::Null);

    let search = |query: &'static str| {
        let token = token.clone();
        let stack = &stack;
        async move {
            let page: Value =
                mail_get(stack, &token, &format!("/apps/tamebi/api/mail/search?{query}"))
                    .await
                    .json()
                    .await
                    .unwrap();
            page["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|message| message["subject"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(search("query=BUDGET+direction").await, ["Budget Apollo validé"]);
    assert_eq!(search("query=bob%40example.com").await, ["2FA on staging"]);
    assert_eq!(search("query=budget+staging").await, Vec::<String>::new());
    assert_eq!(search("mailbox=INBOX").await.len(), 2);
    assert_eq!(search("mailbox=Sent").await, Vec::<String>::new());
    assert_eq!(search("query=Stand-up").await, Vec::<String>::new(), "bob's mail is bob's");

    for query in ["limit=0", "limit=51", "limit=ten", "cursor=garbage"] {
        let path = format!("/apps/tamebi/api/mail/search?{query}");
        let response = mail_get(&stack, &token, &path).await;
        assert_eq!(response.status(), 400, "{query}");
    }
    stack.stop().await;
}

#[tokio::test]
async fn a_message_is_read_as_plain_text_and_only_by_its_owner() {
    let stack = Stack::start(false).await;
    let token = stack.token_for("alice", "nextcloud");
    let message: Value =
        mail_get(&stack, &token, "/apps/tamebi/api/mail/messages/2").await.json().await.unwrap();
    assert_eq!(
        message,
        json!({
            "id": 2, "mailbox": "INBOX", "from": "Bob Stone <bob@example.com>",
            "to": ["alice@example.com"], "cc": [], "subject": "2FA on staging",
            "date": "2026-03-13T10:02:00Z",
            "body": "Hi Alice,\n\nI still need admin access to enable two-factor authentication on staging.\n\nBob",
        })
    );
    // Message 3 is bob's: as absent for alice as one that does not exist.
    for path in ["/apps/tamebi/api/mail/messages/3", "/apps/tamebi/api/mail/messages/99"] {
        assert_envelope(
            mail_get(&stack, &token, path).await,
            404,
            "This message does not exist in your mailboxes.",
        )
        .await;
    }
    stack.stop().await;
}

#[tokio::test]
async fn mail_routes_take_only_a_token_minted_for_nextcloud() {
    let stack = Stack::start(false).await;
    let refused = "The request carries no valid Nextcloud access token. Obtain a new token for Nextcloud's audience and try again.";
    let path = "/apps/tamebi/api/mail/search";
    for token in [
        stack.token_for("alice", "http://127.0.0.1:9102/mcp"),
        stack.token_for("alice", "http://127.0.0.1:9101/mcp"),
        "not-a-jwt".to_string(),
    ] {
        let response = mail_get(&stack, &token, path).await;
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
        assert_envelope(response, 401, refused).await;
    }
    let with_session = stack.alice.request("GET", path).send().await.unwrap();
    assert_envelope(with_session, 401, refused).await;
    let with_password = http_client()
        .get(stack.url(path))
        .basic_auth("alice", Some(app_support::DEMO_ALICE_PASSWORD))
        .send()
        .await
        .unwrap();
    assert_envelope(with_password, 401, refused).await;
    let compose = http_client()
        .post(stack.url("/apps/tamebi/api/mail/compose"))
        .bearer_auth(stack.token_for("alice", "http://127.0.0.1:9102/mcp"))
        .json(&json!({ "to": ["bob@example.com"], "subject": "s", "body": "b" }))
        .send()
        .await
        .unwrap();
    assert_envelope(compose, 401, refused).await;
    assert_eq!(mail_get(&stack, &stack.token_for("alice", "nextcloud"), path).await.status(), 200);
    assert_eq!(stack.state().await["mail_previews"], 0);
    stack.stop().await;
}

async fn compose(stack: &Stack, uid: &str, body: Value) -> reqwest::Response {
    http_client()
        .post(stack.url("/apps/tamebi/api/mail/compose"))
        .bearer_auth(stack.token_for(uid, "nextcloud"))
        .json(&body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn compose_stores_a_preview_and_sends_nothing() {
    let stack = Stack::start(false).await;
    let before = stack.state().await["mail_messages"].clone();
    let response = compose(
        &stack,
        "alice",
        json!({ "to": ["bob@example.com"], "cc": [], "subject": "Stand-up",
                "body": "Bob, the stand-up moves to 10:00." }),
    )
    .await;
    assert_eq!(response.status(), 200);
    let preview: Value = response.json().await.unwrap();
    let id = preview["previewId"].as_str().unwrap().to_string();
    assert_eq!(
        preview,
        json!({
            "previewId": id, "from": "alice@example.com", "to": ["bob@example.com"], "cc": [],
            "subject": "Stand-up", "body": "Bob, the stand-up moves to 10:00.",
            "preview": "From: alice@example.com\nTo: bob@example.com\nCc:\nSubject: Stand-up\n\nBob, the stand-up moves to 10:00.",
        })
    );
    let state = stack.state().await;
    assert_eq!(state["mail_messages"], before, "nothing sent, nothing saved");
    assert_eq!(state["mail_previews"], 1);

    // The page reads it with the session.
    let path = format!("/apps/tamebi/api/mail/previews/{id}");
    let shown: Value =
        stack.alice.request("GET", &path).send().await.unwrap().json().await.unwrap();
    assert_eq!(shown["preview"], preview["preview"]);
    assert_eq!(shown["status"], "pending");
    let bob = Browser::bob(&stack.fake).await;
    let not_bobs = bob.request("GET", &path).send().await.unwrap();
    assert_envelope(
        not_bobs,
        404,
        "This mail preview does not exist. Ask the assistant to compose the mail again.",
    )
    .await;

    // Each refusal names the field and why.
    for (body, message) in [
        (json!({ "to": [], "subject": "s" }), "to must list at least one recipient."),
        (
            json!({ "to": ["bob"] }),
            "to[0] is not an address: write local@domain or Name <local@domain>.",
        ),
        (
            json!({ "to": ["b@x"], "subject": "x".repeat(256) }),
            "subject has 256 bytes; it may have at most 255.",
        ),
        (json!({ "to": ["b@x"], "body": 5 }), "body must be a string."),
    ] {
        assert_envelope(compose(&stack, "alice", body).await, 400, message).await;
    }
    // A user without a mail account has nothing to send from.
    let carol = compose(&stack, "carol", json!({ "to": ["a@x"] })).await;
    assert_eq!(carol.status(), 400);
    stack.stop().await;
}

#[tokio::test]
async fn send_and_save_need_the_users_click_and_happen_once() {
    let stack = Stack::start(false).await;
    let new_preview = |subject: &'static str| {
        let stack = &stack;
        async move {
            let preview: Value = compose(
                stack,
                "alice",
                json!({ "to": ["Bob Stone <bob@example.com>"], "cc": ["carol@example.com"],
                        "subject": subject, "body": "Hello." }),
            )
            .await
            .json()
            .await
            .unwrap();
            preview["previewId"].as_str().unwrap().to_string()
        }
    };
    let sent = new_preview("To send").await;
    let send_path = format!("/apps/tamebi/api/mail/previews/{sent}/send");

    // A bearer is refused whatever else the request carries.
    for token in [stack.token_for("alice", "nextcloud"), "anything".to_string()] {
        let response = stack.alice.request("POST", &send_path).bearer_auth(token).send().await;
        assert_envelope(response.unwrap(), 403, NEEDS_CLICK).await;
    }
    let save_path = format!("/apps/tamebi/api/mail/previews/{sent}/save");
    let response = http_client()
        .post(stack.url(&save_path))
        .bearer_auth(stack.token_for("alice", "nextcloud"))
        .send()
        .await
        .unwrap();
    assert_envelope(response, 403, NEEDS_CLICK).await;
    let no_token = stack.alice.request_without_token("POST", &send_path).send().await.unwrap();
    assert_eq!(no_token.status(), 412);
    let bob = Browser::bob(&stack.fake).await;
    assert_eq!(bob.request("POST", &send_path).send().await.unwrap().status(), 404);

    // The click.
    let response = stack.alice.request("POST", &send_path).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["mailbox"], "Sent");
    for path in [&send_path, &save_path] {
        let again = stack.alice.request("POST", path).send().await.unwrap();
        assert_envelope(again, 409, "This mail has already been sent; nothing more was done.")
            .await;
    }
    let shown: Value = stack
        .alice
        .request("GET", &format!("/apps/tamebi/api/mail/previews/{sent}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(shown["status"], "sent");

    let drafted = new_preview("To keep").await;
    let path = format!("/index.php/apps/tamebi/api/mail/previews/{drafted}/save");
    let answer: Value =
        stack.alice.request("POST", &path).send().await.unwrap().json().await.unwrap();
    assert_eq!(answer["mailbox"], "Drafts");
    let again = stack.alice.request("POST", &path).send().await.unwrap();
    assert_envelope(
        again,
        409,
        "This mail has already been saved as a draft; nothing more was done.",
    )
    .await;

    // Both are where a later search finds them.
    let token = stack.token_for("alice", "nextcloud");
    for (mailbox, subject) in [("Sent", "To send"), ("Drafts", "To keep")] {
        let page: Value =
            mail_get(&stack, &token, &format!("/apps/tamebi/api/mail/search?mailbox={mailbox}"))
                .await
                .json()
                .await
                .unwrap();
        let messages = page["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 1, "{mailbox}");
        assert_eq!(messages[0]["subject"], subject);
        assert_eq!(messages[0]["from"], "alice@example.com");
        assert_eq!(messages[0]["to"], json!(["Bob Stone <bob@example.com>"]));
        assert_eq!(messages[0]["cc"], json!(["carol@example.com"]));
    }
    let newest: Value = mail_get(&stack, &token, "/apps/tamebi/api/mail/search?limit=1")
        .await
        .json()
        .await
        .unwrap();
    assert!(
        ["To send", "To keep"].contains(&newest["messages"][0]["subject"].as_str().unwrap()),
        "mail filed now is the newest"
    );
    assert_eq!(stack.state().await["mail_messages"], 5);
    stack.stop().await;
}

// ---- MCP Apps re-serve -----------------------------------------------------

const APP_HTML: &str =
    "<!DOCTYPE html><html><body><script>document.body.append('hi')</script></body></html>";

async fn store_page(browser: &Browser, body: Value) -> reqwest::Response {
    browser.request("POST", "/apps/tamebi/api/ui").json(&body).send().await.unwrap()
}

#[tokio::test]
async fn an_mcp_app_is_served_under_its_own_policy_to_its_user_for_ten_minutes() {
    let stack = Stack::start(false).await;
    let response = store_page(
        &stack.alice,
        json!({ "html": APP_HTML, "csp": {
            "connectDomains": ["https://api.example.com"],
            "resourceDomains": ["https://cdn.example.com", "http://127.0.0.1:9000"] } }),
    )
    .await;
    assert_eq!(response.status(), 200);
    let url = response.json::<Value>().await.unwrap()["url"].as_str().unwrap().to_string();
    assert!(url.starts_with("/apps/tamebi/ui/"), "{url}");

    let page = stack.alice.request_without_token("GET", &url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
    assert_eq!(page.headers()["x-content-type-options"], "nosniff");
    assert_eq!(
        page.headers()["content-security-policy"],
        "default-src 'none'; \
         script-src 'unsafe-inline' https://cdn.example.com http://127.0.0.1:9000; \
         style-src 'unsafe-inline' https://cdn.example.com http://127.0.0.1:9000; \
         img-src data: https://cdn.example.com http://127.0.0.1:9000; \
         font-src https://cdn.example.com http://127.0.0.1:9000; \
         media-src https://cdn.example.com http://127.0.0.1:9000; \
         connect-src https://api.example.com; \
         frame-ancestors 'self'; base-uri 'none'; form-action 'none'; sandbox allow-scripts"
    );
    assert_eq!(page.text().await.unwrap(), APP_HTML);

    // Under index.php too; another user and no session do not get it.
    let indexed = stack.alice.request_without_token("GET", &format!("/index.php{url}")).send();
    assert_eq!(indexed.await.unwrap().status(), 200);
    let bob = Browser::bob(&stack.fake).await;
    assert_eq!(bob.request_without_token("GET", &url).send().await.unwrap().status(), 404);
    let anonymous = http_client().get(stack.url(&url)).send().await.unwrap();
    assert_envelope(anonymous, 401, SESSION_ENDED).await;

    // No CSP at all: default-deny with the keywords only.
    let bare: Value =
        store_page(&stack.alice, json!({ "html": "<p>x</p>" })).await.json().await.unwrap();
    let bare = stack.alice.request_without_token("GET", bare["url"].as_str().unwrap()).send();
    assert_eq!(
        bare.await.unwrap().headers()["content-security-policy"],
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
         img-src data:; font-src 'none'; media-src 'none'; connect-src 'none'; \
         frame-ancestors 'self'; base-uri 'none'; form-action 'none'; sandbox allow-scripts"
    );

    stack.advance_clock(601).await;
    let expired = stack.alice.request_without_token("GET", &url).send().await.unwrap();
    assert_envelope(expired, 404, "This app view has expired. Run the tool again to show it.")
        .await;
    stack.stop().await;
}

#[tokio::test]
async fn a_page_with_a_bad_origin_or_without_a_request_token_is_refused() {
    let stack = Stack::start(false).await;
    for domain in
        ["cdn.example.com", "https://a.com; script-src *", "https://a.com/x", "javascript:x"]
    {
        let response = store_page(
            &stack.alice,
            json!({ "html": APP_HTML, "csp": { "resourceDomains": [domain] } }),
        )
        .await;
        assert_envelope(
            response,
            400,
            "csp.resourceDomains[0] is not an origin: write https://host or http://host:port, with no path.",
        )
        .await;
    }
    let too_large = "x".repeat(1024 * 1024 + 1);
    let response = store_page(&stack.alice, json!({ "html": too_large })).await;
    assert_eq!(response.status(), 400);
    let response = stack
        .alice
        .request_without_token("POST", "/apps/tamebi/api/ui")
        .json(&json!({ "html": APP_HTML }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 412);
    assert_eq!(stack.state().await["app_pages"], 0);
    stack.stop().await;
}

// ---- the chat page ---------------------------------------------------------

#[tokio::test]
async fn the_chat_page_needs_a_session_and_carries_the_request_token() {
    let stack = Stack::start(false).await;
    let http = http_client();
    let anonymous = http.get(stack.url("/apps/tamebi/")).send().await.unwrap();
    assert_eq!(anonymous.status(), 303);
    assert_eq!(
        anonymous.headers()["location"],
        "/index.php/login?redirect_url=%2Fapps%2Ftamebi%2F"
    );
    let bare = http.get(stack.url("/index.php/apps/tamebi")).send().await.unwrap();
    assert_eq!(bare.headers()["location"], "/index.php/apps/tamebi/");
    let page = stack.alice.request_without_token("GET", "/index.php/apps/tamebi/").send();
    let html = page.await.unwrap().text().await.unwrap();
    assert!(html.contains(&format!("data-requesttoken=\"{}\"", stack.alice.request_token)));
    // No bundle where the test runs: the placeholder.
    assert!(html.contains("The chat page is not built"), "{html}");
    stack.stop().await;
}

/// The page with `web_dir` as the app's web directory, and alice's page.
async fn page_with_web_dir(
    web_dir: &std::path::Path,
) -> (FakeNextcloud, Browser, reqwest::Response) {
    let app = AppConfig { web_dir: web_dir.to_path_buf(), ..AppConfig::default() };
    let fake = start_fake_with_app(&demo_fixture(), app).await;
    let alice = Browser::alice(&fake).await;
    let page = alice.request_without_token("GET", "/apps/tamebi/").send().await.unwrap();
    (fake, alice, page)
}

#[tokio::test]
async fn without_the_built_island_the_page_names_the_command_that_builds_it() {
    let dir = std::env::temp_dir().join(format!("tamebi-web-absent-{}", std::process::id()));
    let (fake, alice, page) = page_with_web_dir(&dir).await;
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("The chat page is not built"), "{html}");
    assert!(html.contains("npm --prefix web ci &amp;&amp; npm --prefix web run build"), "{html}");
    assert!(html.contains(&escape_path(&dir)), "names the directory: {html}");
    assert!(!html.contains("<script"), "{html}");
    assert!(html.contains(&format!("data-requesttoken=\"{}\"", alice.request_token)));
    let script =
        http_client().get(alice.url("/apps/tamebi/js/tamebi-main.mjs")).send().await.unwrap();
    assert_eq!(script.status(), 404);
    fake.shutdown().await;
}

fn escape_path(path: &std::path::Path) -> String {
    path.display().to_string().replace('&', "&amp;").replace('<', "&lt;")
}

#[tokio::test]
async fn the_page_loads_the_built_island_from_the_web_dir() {
    let dir = std::env::temp_dir().join(format!("tamebi-web-built-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tamebi-main.mjs"), "console.log('island');\n").unwrap();
    std::fs::write(dir.join("tamebi-main.css"), ".tamebi { color: red }\n").unwrap();
    std::fs::write(dir.join("notes.txt"), "not an asset").unwrap();
    let (fake, alice, page) = page_with_web_dir(&dir).await;
    assert_eq!(page.status(), 200);
    let policy = page.headers()["content-security-policy"].to_str().unwrap().to_string();
    assert!(policy.contains("script-src 'self';"), "{policy}");
    assert!(policy.contains("frame-src 'self'"), "{policy}");
    let html = page.text().await.unwrap();
    assert!(html.contains("<script type=\"module\" src=\"js/tamebi-main.mjs?v="), "{html}");
    assert!(html.contains("<link rel=\"stylesheet\" href=\"css/tamebi-main.css?v="), "{html}");
    assert!(html.contains("<main id=\"tamebi\""), "{html}");
    assert!(!html.contains("not built"), "{html}");
    assert!(html.contains(&format!("data-requesttoken=\"{}\"", alice.request_token)));

    // Static files, like Nextcloud's app folders: no session needed, both prefixes.
    let http = http_client();
    let script = http.get(alice.url("/apps/tamebi/js/tamebi-main.mjs")).send().await.unwrap();
    assert_eq!(script.status(), 200);
    assert_eq!(script.headers()["content-type"], "text/javascript; charset=utf-8");
    assert_eq!(script.headers()["x-content-type-options"], "nosniff");
    assert_eq!(script.text().await.unwrap(), "console.log('island');\n");
    let style =
        http.get(alice.url("/index.php/apps/tamebi/css/tamebi-main.css")).send().await.unwrap();
    assert_eq!(style.status(), 200);
    assert_eq!(style.headers()["content-type"], "text/css; charset=utf-8");
    for path in [
        "/apps/tamebi/js/notes.txt",
        "/apps/tamebi/js/..%2Fweb-built.mjs",
        "/apps/tamebi/js/.hidden.js",
        "/apps/tamebi/js/missing.mjs",
    ] {
        let response = http.get(alice.url(path)).send().await.unwrap();
        assert_eq!(response.status(), 404, "{path}");
    }
    fake.shutdown().await;
    let _ = std::fs::remove_dir_all(dir);
}
