//! Forged bearers through the running server. `tests/auth.rs` already
//! covers alg none, HS256 with the public key, typ, unknown kid, a 20 kB
//! token, wrong iss/aud, expiry, a future iat and another user's Nextcloud
//! token with `tools/list`; this adds what it lacks — nbf, malformed
//! segments, a swapped payload, a header past the HTTP limit — and checks
//! on `tools/call` that a refused call sends nothing upstream.

use crate::common::proxy::*;
use crate::common::*;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::json;

#[tokio::test]
async fn forged_bearers_are_a_bare_401_and_a_refused_call_sends_nothing_upstream() {
    let (stack, recorder) = recorded_stack(|_| {}).await;
    let signer = &stack.fake.shared.signer;
    let good = stack.claims("alice", MCP_AUDIENCE);
    let genuine = signer.sign_access_token(&good);
    let parts: Vec<&str> = genuine.split('.').collect();
    let bob_payload =
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&stack.claims("bob", MCP_AUDIENCE)).unwrap());
    let mut not_yet = good.clone();
    not_yet.nbf = Some(not_yet.iat + 3600);
    let cases: Vec<(&str, String)> = vec![
        ("nbf an hour ahead", signer.sign_access_token(&not_yet)),
        ("two segments", format!("{}.{}", parts[0], parts[1])),
        ("four segments", format!("{genuine}.{}", parts[2])),
        ("empty signature", format!("{}.{}.", parts[0], parts[1])),
        ("padded base64", format!("{}==.{}.{}", parts[0], parts[1], parts[2])),
        ("standard-alphabet base64", format!("{}.{}.{}+/", parts[0], parts[1], parts[2])),
        ("header not JSON", format!("{}.{}.{}", URL_SAFE_NO_PAD.encode("alg"), parts[1], parts[2])),
        (
            "bob's payload under alice's signature",
            format!("{}.{bob_payload}.{}", parts[0], parts[2]),
        ),
        ("just past the token limit", "a".repeat(access_token::TOKEN_LENGTH_MAX + 1)),
        ("300 kB", "a".repeat(300_000)),
    ];
    for (case, bearer) in cases {
        let response = stack
            .rpc(
                &with_bearer(&stack, &bearer),
                "tools/call",
                json!({"name": "files_read", "arguments": {"path": "Documents/todo.txt"}}),
            )
            .await;
        assert_bare_refusal(response, METADATA_URL, case).await;
    }
    assert!(recorder.seen().is_empty(), "a refused call reached Nextcloud: {:?}", recorder.seen());

    // The genuine call for contrast: it does go upstream.
    let ok = stack.call_tool("alice", "files_read", json!({"path": "Documents/todo.txt"})).await;
    assert_eq!(failure_kind(&ok), None, "{ok}");
    assert!(!recorder.seen().is_empty());
}

#[tokio::test]
async fn a_header_past_the_http_limit_is_refused_by_the_server_and_it_stays_up() {
    let stack = start(second_token()).await;
    // Far past hyper's header buffer: the connection is answered 431 (or
    // closed) before any token code runs, and the server keeps serving.
    let huge = "a".repeat(2 * 1024 * 1024);
    let sent = stack
        .client
        .http
        .post(&stack.client.url)
        .header("authorization", format!("Bearer {huge}"))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await;
    if let Ok(response) = sent {
        assert_eq!(response.status(), 431);
    }
    let listed = stack.rpc(&stack.headers_for("alice"), "tools/list", json!({})).await;
    assert_eq!(listed.status(), 200, "still serving");
}
