//! The JWT attack set through a running mcp-mail on a real socket: each
//! forged, stale or misaddressed token is the same bare 401 with the
//! metadata pointer, and none of them reaches the mail routes (the stand-in
//! for the Tamebi app records every request). `tests/auth.rs` covers the
//! misaddressed and other-user pairs; this file adds the forged ones.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::*;
use serde_json::json;

fn forge(header: serde_json::Value, payload: &access_token::Claims, signature: &[u8]) -> String {
    format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&header).unwrap()),
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(payload).unwrap()),
        URL_SAFE_NO_PAD.encode(signature)
    )
}

#[tokio::test]
async fn forged_and_stale_tokens_are_a_bare_401_and_never_reach_the_mail() {
    let stack = start().await;
    let signer = &stack.fake.shared.signer;
    let kid = signer.kid().to_string();
    let good = stack.claims("alice", MCP_AUDIENCE);
    let nextcloud = stack.nextcloud_token("alice");
    let variant = |change: &dyn Fn(&mut access_token::Claims)| {
        let mut claims = good.clone();
        change(&mut claims);
        signer.sign_access_token(&claims)
    };
    let genuine = signer.sign_access_token(&good);
    let parts: Vec<String> = genuine.split('.').map(str::to_string).collect();
    let leeway = mcp_auth::LEEWAY_SECONDS;
    let bearers: Vec<(&str, String)> = vec![
        ("alg none", forge(json!({"alg": "none", "typ": "at+jwt", "kid": kid}), &good, b"")),
        (
            "HS256 keyed with the public key",
            forge(
                json!({"alg": "HS256", "typ": "at+jwt", "kid": kid}),
                &good,
                signer.jwk().n.as_bytes(),
            ),
        ),
        ("an ID token", signer.sign("JWT", &good)),
        ("wrong iss", variant(&|claims| claims.iss = "http://127.0.0.1:1".into())),
        (
            "expired",
            variant(&|claims| {
                claims.exp -= 900 + leeway + 10;
                claims.iat -= 900 + leeway + 10;
            }),
        ),
        ("nbf in the future", variant(&|claims| claims.nbf = Some(claims.iat + 3600))),
        ("oversized", "a".repeat(20_000)),
        ("two segments", format!("{}.{}", parts[0], parts[1])),
        ("bad base64", format!("{}.{}.%%%", parts[0], parts[1])),
        ("payload of bob under alice's signature", {
            let bob = stack.claims("bob", MCP_AUDIENCE);
            format!(
                "{}.{}.{}",
                parts[0],
                URL_SAFE_NO_PAD.encode(serde_json::to_vec(&bob).unwrap()),
                parts[2]
            )
        }),
    ];
    for (case, bearer) in bearers {
        let headers = vec![
            ("authorization".to_string(), format!("Bearer {bearer}")),
            (NEXTCLOUD_TOKEN_HEADER.to_string(), nextcloud.clone()),
        ];
        let response = stack
            .rpc(&headers, "tools/call", json!({"name": "mail_search", "arguments": {}}))
            .await;
        assert_bare_refusal(response, METADATA_URL, case).await;
    }
    // A forged Nextcloud token next to a genuine bearer is refused the same way.
    let forged_second = forge(
        json!({"alg": "none", "typ": "at+jwt", "kid": kid}),
        &stack.claims("alice", NEXTCLOUD_AUDIENCE),
        b"",
    );
    let headers = vec![
        ("authorization".to_string(), format!("Bearer {genuine}")),
        (NEXTCLOUD_TOKEN_HEADER.to_string(), forged_second),
    ];
    let response =
        stack.rpc(&headers, "tools/call", json!({"name": "mail_search", "arguments": {}})).await;
    assert_eq!(response.status(), 401, "forged Nextcloud token");
    assert!(stack.app.requests().is_empty(), "nothing refused reached the mail routes");

    // The genuine pair for contrast: it does reach them.
    let headers = vec![
        ("authorization".to_string(), format!("Bearer {genuine}")),
        (NEXTCLOUD_TOKEN_HEADER.to_string(), nextcloud),
    ];
    let response =
        stack.rpc(&headers, "tools/call", json!({"name": "mail_search", "arguments": {}})).await;
    assert_eq!(response.status(), 200);
    assert_eq!(stack.app.requests().len(), 1);
    stack.shutdown().await;
}

#[tokio::test]
async fn an_oversized_request_body_is_refused_with_413_and_the_server_stays_up() {
    let stack = start().await;
    let headers = stack.headers_for("alice");
    // 5 MiB of JSON: over the MCP transport's 4 MiB limit.
    let huge = "x".repeat(5 * 1024 * 1024);
    let response = stack
        .rpc(
            &headers,
            "tools/call",
            json!({"name": "mail_compose", "arguments": {"to": ["bob@example.com"], "subject": "s", "body": huge}}),
        )
        .await;
    assert_eq!(response.status(), 413);
    assert!(stack.app.requests().is_empty(), "nothing reached the mail routes");
    // Unauthenticated, the body is never read: 401 first.
    let response = stack
        .rpc(&[], "tools/call", json!({"name": "mail_search", "arguments": {"query": huge}}))
        .await;
    assert_eq!(response.status(), 401);
    let response = stack.rpc(&headers, "tools/list", json!({})).await;
    assert_eq!(response.status(), 200, "still serving");
    stack.shutdown().await;
}
