//! The signed-identity attack set against a running orchestrator on a real
//! socket (docs/identity.md, "What is refused"): replay, clock skew both
//! ways, a tampered body, method or path, a uid in the body, missing and
//! repeated headers, one audience's token twice, another user's token
//! under a signed uid, and an oversized post.
//! Each refusal is checked for its exact status and envelope, for saying
//! nothing of the secret or the expected signature, and for leaving no
//! trace: the user's conversation list stays empty. The contrast cases
//! (the same request, correctly signed) succeed, so each check can fail.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

#[path = "support/alone.rs"]
mod alone;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use orchestrator::identity::{self, Signed};
use orchestrator::service::Orchestrator;
use reqwest::Method;
use serde_json::{Value, json};

const SECRET: &[u8] = b"attacks-identity-test-secret-0123456789abcdef";

async fn start() -> Orchestrator {
    // No model answers here: refused requests never get that far, and the
    // one accepted chat post only needs its conversation stored.
    let mut config = alone::config(SECRET, None);
    config.model.retry.backoff_first_ms = 1;
    Orchestrator::start(config).await.unwrap()
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

/// One request: what is signed and what is sent may differ.
#[derive(Clone)]
struct Attempt {
    uid: String,
    timestamp: String,
    nonce: String,
    signed_method: &'static str,
    signed_path: String,
    signed_body: Vec<u8>,
    method: Method,
    path: String,
    body: Vec<u8>,
    /// Extra headers, appended (so a repeated name is sent twice).
    extra: Vec<(String, String)>,
    /// Identity headers left out.
    omit: Vec<&'static str>,
}

impl Attempt {
    fn new(method: Method, path: &str, body: &[u8]) -> Attempt {
        Attempt {
            uid: "alice".into(),
            timestamp: now().to_string(),
            nonce: uuid_nonce(),
            signed_method: method_name(&method),
            signed_path: path.into(),
            signed_body: body.to_vec(),
            method,
            path: path.into(),
            body: body.to_vec(),
            extra: vec![],
            omit: vec![],
        }
    }

    fn signature(&self) -> String {
        Signed {
            uid: &self.uid,
            timestamp: &self.timestamp,
            nonce: &self.nonce,
            method: self.signed_method,
            path: &self.signed_path,
            body: &self.signed_body,
        }
        .sign(SECRET)
    }

    async fn send(&self, base: &str) -> (u16, Value) {
        let http = reqwest::Client::new();
        let mut request = http.request(self.method.clone(), format!("{base}{}", self.path));
        let headers = [
            (identity::HEADER_UID, self.uid.clone()),
            (identity::HEADER_TIMESTAMP, self.timestamp.clone()),
            (identity::HEADER_NONCE, self.nonce.clone()),
            (identity::HEADER_SIGNATURE, self.signature()),
            (identity::HEADER_REQUEST_ID, "attack-1".to_string()),
        ];
        for (name, value) in headers {
            if !self.omit.contains(&name) {
                request = request.header(name, value);
            }
        }
        for (name, value) in &self.extra {
            request = request.header(name.as_str(), value.as_str());
        }
        let response = request.body(self.body.clone()).send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, body)
    }
}

fn method_name(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::DELETE => "DELETE",
        _ => unreachable!(),
    }
}

fn uuid_nonce() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!("attack-nonce-{:016x}-{}", now(), COUNTER.fetch_add(1, Ordering::SeqCst))
}

/// The refusal's envelope says what failed in words and never the secret
/// or the signature the server expected.
fn assert_refusal(status: u16, body: &Value, expected: u16, attempt: &Attempt, case: &str) {
    assert_eq!(status, expected, "{case}: {body}");
    let text = body.to_string();
    assert!(body["error"]["message"].is_string(), "{case}: an envelope, got {body}");
    assert!(!text.contains(std::str::from_utf8(SECRET).unwrap()), "{case}: the secret leaked");
    let mut honest = attempt.clone();
    honest.signed_method = method_name(&attempt.method);
    honest.signed_path = attempt.path.clone();
    honest.signed_body = attempt.body.clone();
    assert!(!text.contains(&honest.signature()), "{case}: the expected signature leaked");
}

async fn conversations(base: &str) -> Vec<Value> {
    let (status, body) = Attempt::new(Method::GET, "/api/conversations", b"").send(base).await;
    assert_eq!(status, 200, "{body}");
    body["conversations"].as_array().unwrap().clone()
}

fn question(conversation: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "id": conversation,
        "trigger": "submit-message",
        "message": {"id": "u", "role": "user", "parts": [{"type": "text", "text": "hello"}]},
    }))
    .unwrap()
}

#[tokio::test]
async fn a_replayed_request_is_refused_even_with_everything_else_right() {
    let orchestrator = start().await;
    let base = orchestrator.url();
    let attempt = Attempt::new(Method::GET, "/api/conversations", b"");
    assert_eq!(attempt.send(base).await.0, 200);
    let (status, body) = attempt.send(base).await;
    assert_refusal(status, &body, 401, &attempt, "replay");
    // A new nonce makes the same request fresh: not a replay.
    let mut fresh = attempt.clone();
    fresh.nonce = uuid_nonce();
    assert_eq!(fresh.send(base).await.0, 200);
    orchestrator.shutdown().await;
}

#[tokio::test]
async fn a_timestamp_beyond_the_window_either_way_is_refused() {
    let orchestrator = start().await;
    let base = orchestrator.url();
    let window = identity::TIMESTAMP_WINDOW_S;
    for (case, timestamp, expected) in [
        ("past, beyond the window", now() - window - 5, 401),
        ("future, beyond the window", now() + window + 5, 401),
        ("an hour ago", now() - 3600, 401),
        ("zero", 0, 401),
        ("past, inside the window", now() - window + 10, 200),
        ("future, inside the window", now() + window - 10, 200),
    ] {
        let mut attempt = Attempt::new(Method::GET, "/api/conversations", b"");
        attempt.timestamp = timestamp.to_string();
        let (status, body) = attempt.send(base).await;
        if expected == 200 {
            assert_eq!(status, 200, "{case}: {body}");
        } else {
            assert_refusal(status, &body, expected, &attempt, case);
            if timestamp != 0 {
                let message = body["error"]["message"].as_str().unwrap();
                assert!(message.contains("session"), "{case}: {message}");
            }
        }
    }
    for (case, spelling) in
        [("leading zero", format!("0{}", now())), ("plus sign", format!("+{}", now()))]
    {
        let mut attempt = Attempt::new(Method::GET, "/api/conversations", b"");
        attempt.timestamp = spelling;
        let (status, body) = attempt.send(base).await;
        assert_refusal(status, &body, 400, &attempt, case);
    }
    orchestrator.shutdown().await;
}

#[tokio::test]
async fn a_signature_is_for_one_body_one_method_and_one_path() {
    let orchestrator = start().await;
    let base = orchestrator.url();
    // A genuine post, for contrast: its conversation is stored.
    let genuine = Attempt::new(Method::POST, "/api/chat", &question("c-genuine"));
    let (status, body) = genuine.send(base).await;
    assert_eq!(status, 200, "{body}");
    let stored = conversations(base).await;
    assert_eq!(stored.len(), 1, "{stored:?}");

    let mut tampered_body = Attempt::new(Method::POST, "/api/chat", &question("c-1"));
    tampered_body.body = question("c-2");
    let mut tampered_method = Attempt::new(Method::GET, "/api/conversations/c-genuine", b"");
    tampered_method.method = Method::DELETE;
    let mut tampered_path = Attempt::new(Method::GET, "/api/conversations/c-genuine", b"");
    tampered_path.path = "/api/conversations/c-other".into();
    let mut encoded_path = Attempt::new(Method::GET, "/api/conversations/c-genuine", b"");
    encoded_path.path = "/api/conversations/c%2Dgenuine".into();
    // alice's signature with bob's name in the header.
    let mut swapped_uid = Attempt::new(Method::GET, "/api/conversations", b"");
    swapped_uid.omit.push(identity::HEADER_UID);
    swapped_uid.extra.push((identity::HEADER_UID.into(), "bob".into()));
    let mut wrong_secret = Attempt::new(Method::GET, "/api/conversations", b"");
    wrong_secret.omit.push(identity::HEADER_SIGNATURE);
    wrong_secret.extra.push((
        identity::HEADER_SIGNATURE.into(),
        Signed {
            uid: "alice",
            timestamp: &wrong_secret.timestamp,
            nonce: &wrong_secret.nonce,
            method: "GET",
            path: "/api/conversations",
            body: b"",
        }
        .sign(b"another-secret-of-at-least-32-bytes-000000"),
    ));
    let mut uppercase_signature = Attempt::new(Method::GET, "/api/conversations", b"");
    uppercase_signature.omit.push(identity::HEADER_SIGNATURE);
    uppercase_signature
        .extra
        .push((identity::HEADER_SIGNATURE.into(), uppercase_signature.signature().to_uppercase()));
    for (case, attempt, expected) in [
        ("tampered body", tampered_body, 401),
        ("GET signed, DELETE sent", tampered_method, 401),
        ("another path", tampered_path, 401),
        ("the same path percent-encoded", encoded_path, 401),
        ("signed as alice, another user", swapped_uid, 401),
        ("another secret", wrong_secret, 401),
        ("signature in upper case", uppercase_signature, 400),
    ] {
        let (status, body) = attempt.send(base).await;
        assert_refusal(status, &body, expected, &attempt, case);
    }
    assert_eq!(conversations(base).await, stored, "nothing changed, nothing was deleted");
    orchestrator.shutdown().await;
}

#[tokio::test]
async fn a_uid_in_the_body_is_refused_and_nothing_is_stored() {
    let orchestrator = start().await;
    let base = orchestrator.url();
    let with_uid = |body: Value| serde_json::to_vec(&body).unwrap();
    let bodies = [
        (
            "top-level uid",
            with_uid(json!({"id": "c-1", "uid": "bob", "trigger": "submit-message",
            "message": {"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]}})),
        ),
        (
            "nested uid",
            with_uid(json!({"id": "c-1", "trigger": "submit-message",
            "message": {"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi", "meta": [{"uid": "bob"}]}]}})),
        ),
        ("uid with a null value", with_uid(json!({"id": "c-1", "uid": null}))),
    ];
    for (case, body) in bodies {
        let attempt = Attempt::new(Method::POST, "/api/chat", &body);
        let (status, answer) = attempt.send(base).await;
        assert_refusal(status, &answer, 400, &attempt, case);
        assert!(
            answer["error"]["message"].as_str().unwrap().contains("names a user"),
            "{case}: {answer}"
        );
        // Refused for its body, the signature is spent all the same.
        let (status, answer) = attempt.send(base).await;
        assert_refusal(status, &answer, 401, &attempt, &format!("{case}, replayed"));
    }
    let not_json = Attempt::new(Method::POST, "/api/chat", b"uid=bob");
    let (status, answer) = not_json.send(base).await;
    assert_refusal(status, &answer, 400, &not_json, "not JSON");
    assert!(conversations(base).await.is_empty(), "nothing was stored");
    orchestrator.shutdown().await;
}

#[tokio::test]
async fn missing_repeated_and_malformed_headers_are_refused() {
    let orchestrator = start().await;
    let base = orchestrator.url();
    for name in [
        identity::HEADER_UID,
        identity::HEADER_TIMESTAMP,
        identity::HEADER_NONCE,
        identity::HEADER_SIGNATURE,
        identity::HEADER_REQUEST_ID,
    ] {
        let mut attempt = Attempt::new(Method::GET, "/api/conversations", b"");
        attempt.omit.push(name);
        let (status, body) = attempt.send(base).await;
        assert_refusal(status, &body, 401, &attempt, &format!("without {name}"));
    }
    let repeat = |name: &str, value: &str| {
        let mut attempt = Attempt::new(Method::GET, "/api/conversations", b"");
        attempt.extra.push((name.to_string(), value.to_string()));
        attempt
    };
    let token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2ln";
    let mut twice_for_one_audience = repeat("x-tamebi-token-mcp-nextcloud", token);
    twice_for_one_audience.extra.push(("x-tamebi-token-mcp-nextcloud".into(), token.into()));
    let mut nine_tokens = Attempt::new(Method::GET, "/api/conversations", b"");
    for n in 0..9 {
        nine_tokens.extra.push((format!("x-tamebi-token-aud-{n}"), token.into()));
    }
    let mut short_nonce = Attempt::new(Method::GET, "/api/conversations", b"");
    short_nonce.nonce = "short".into();
    let mut dotted_uid = Attempt::new(Method::GET, "/api/conversations", b"");
    dotted_uid.uid = "..".into();
    let mut long_uid = Attempt::new(Method::GET, "/api/conversations", b"");
    long_uid.uid = "a".repeat(identity::UID_BYTES_MAX + 1);
    let mut slash_uid = Attempt::new(Method::GET, "/api/conversations", b"");
    slash_uid.uid = "../bob".into();
    for (case, attempt, expected) in [
        ("uid twice", repeat(identity::HEADER_UID, "bob"), 400),
        ("timestamp twice", repeat(identity::HEADER_TIMESTAMP, &now().to_string()), 400),
        ("nonce twice", repeat(identity::HEADER_NONCE, "another-nonce-0123456789"), 400),
        ("signature twice", repeat(identity::HEADER_SIGNATURE, &"0".repeat(64)), 400),
        ("request id twice", repeat(identity::HEADER_REQUEST_ID, "attack-2"), 400),
        ("one audience's token twice", twice_for_one_audience, 400),
        ("nine tokens", nine_tokens, 400),
        ("a token with a space", repeat("x-tamebi-token-mcp-mail", "a b"), 400),
        ("an audience with an underscore", repeat("x-tamebi-token-mcp_mail", token), 400),
        ("a nonce of five characters", short_nonce, 400),
        ("uid ..", dotted_uid, 400),
        ("uid of 65 bytes", long_uid, 400),
        ("uid with a slash", slash_uid, 400),
    ] {
        let (status, body) = attempt.send(base).await;
        assert_refusal(status, &body, expected, &attempt, case);
    }
    orchestrator.shutdown().await;
}

#[tokio::test]
async fn an_oversized_chat_post_is_413_before_anything_is_verified_or_stored() {
    let orchestrator = start().await;
    let base = orchestrator.url();
    let huge = vec![b' '; orchestrator::server::BODY_BYTES_MAX + 1];
    let attempt = Attempt::new(Method::POST, "/api/chat", &huge);
    let (status, body) = attempt.send(base).await;
    assert_eq!(status, 413);
    // The usual envelope with the app's request id, not axum's plain text
    // (issue 14).
    assert_eq!(body["error"]["requestId"], "attack-1", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("The request is too large for the assistant (at most 4 MiB)."),
        "{message}"
    );
    // A question past the text bound, under the body bound: 400, nothing stored.
    let long = serde_json::to_vec(&json!({
        "id": "c-long",
        "trigger": "submit-message",
        "message": {"id": "u", "role": "user", "parts": [{"type": "text",
            "text": "a".repeat(orchestrator::ui_stream::TEXT_BYTES_MAX + 1)}]},
    }))
    .unwrap();
    let attempt = Attempt::new(Method::POST, "/api/chat", &long);
    let (status, body) = attempt.send(base).await;
    assert_eq!(status, 400, "{body}");
    assert!(conversations(base).await.is_empty(), "nothing was stored");
    orchestrator.shutdown().await;
}

/// A request signed as bob that carries alice's genuine token once ran a
/// turn on alice's files, stored in bob's conversation: every token must
/// name the signed uid (its `sub`), and one that names nobody is refused
/// too. Nothing is stored either way.
#[tokio::test]
async fn another_users_tokens_under_a_signed_uid_are_refused() {
    let orchestrator = start().await;
    let base = orchestrator.url();
    let token_of = |sub: &str| {
        // The shape of a Nextcloud access token: {"alg":"RS256"}.{claims}.sig
        let claims = json!({"sub": sub, "aud": "mcp-nextcloud", "iss": "https://cloud.example"});
        let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
        format!("eyJhbGciOiJSUzI1NiJ9.{payload}.c2lnbmF0dXJl")
    };
    let as_bob = |tokens: &[(&str, String)]| {
        let mut attempt = Attempt::new(Method::POST, "/api/chat", &question("c-stolen"));
        attempt.uid = "bob".into();
        for (audience, token) in tokens {
            attempt.extra.push((format!("x-tamebi-token-{audience}"), token.clone()));
        }
        attempt
    };
    for (case, attempt, expected, says) in [
        ("alice's token", as_bob(&[("mcp-nextcloud", token_of("alice"))]), 403, "another user"),
        (
            "bob's bearer, alice's Nextcloud token",
            as_bob(&[("mcp-nextcloud", token_of("bob")), ("nextcloud", token_of("alice"))]),
            403,
            "another user",
        ),
        (
            "an opaque token",
            as_bob(&[("mcp-nextcloud", "opaque".into())]),
            401,
            "could not be read",
        ),
    ] {
        let (status, body) = attempt.send(base).await;
        assert_refusal(status, &body, expected, &attempt, case);
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(says) && message.contains("nothing was done"),
            "{case}: {message}"
        );
        assert_eq!(body["error"]["requestId"], "attack-1", "{case}");
    }
    let mut bobs_list = Attempt::new(Method::GET, "/api/conversations", b"");
    bobs_list.uid = "bob".into();
    let (status, listed) = bobs_list.send(base).await;
    assert_eq!((status, &listed["conversations"]), (200, &json!([])), "nothing was stored");
    orchestrator.shutdown().await;
}
