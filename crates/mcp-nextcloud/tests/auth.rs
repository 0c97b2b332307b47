//! Every way a bearer can be wrong is a 401 with the resource metadata
//! pointer, and a valid token of one user cannot act as another.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::*;
use serde_json::json;

fn forge(header: serde_json::Value, payload: &serde_json::Value, signature: &[u8]) -> String {
    format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&header).unwrap()),
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(payload).unwrap()),
        URL_SAFE_NO_PAD.encode(signature)
    )
}

async fn assert_refused(stack: &Stack, headers: Vec<(String, String)>, case: &str) {
    let response = stack.rpc(&headers, "tools/list", json!({})).await;
    assert_bare_refusal(response, METADATA_URL, case).await;
}

#[tokio::test]
async fn every_bad_token_is_a_bare_401_with_the_metadata_pointer() {
    let stack = start(second_token()).await;
    let claims = serde_json::to_value(stack.claims("alice", MCP_AUDIENCE)).unwrap();
    let signer = &stack.fake.shared.signer;
    let kid = signer.kid().to_string();
    let mut cases: Vec<(&str, Vec<(String, String)>)> = vec![
        ("no authorization", vec![]),
        ("basic auth", vec![("authorization".into(), "Basic YWxpY2U6eA==".into())]),
        ("garbage", with_bearer(&stack, "not-a-token")),
        (
            "alg none",
            with_bearer(
                &stack,
                forge(json!({"alg": "none", "typ": "at+jwt", "kid": kid}), &claims, b""),
            ),
        ),
        (
            "HS256 with the public key",
            with_bearer(
                &stack,
                forge(
                    json!({"alg": "HS256", "typ": "at+jwt", "kid": kid}),
                    &claims,
                    signer.jwk().n.as_bytes(),
                ),
            ),
        ),
        ("id token type", with_bearer(&stack, signer.sign("JWT", &claims))),
        (
            "unknown kid",
            with_bearer(
                &stack,
                access_token::Signer::generate("other-kid")
                    .sign_access_token(&stack.claims("alice", MCP_AUDIENCE)),
            ),
        ),
        ("oversized", with_bearer(&stack, "a".repeat(20_000))),
        (
            "no Nextcloud token",
            vec![(
                "authorization".into(),
                format!("Bearer {}", stack.token("alice", MCP_AUDIENCE)),
            )],
        ),
        (
            "the MCP token offered as the Nextcloud token",
            vec![
                ("authorization".into(), format!("Bearer {}", stack.token("alice", MCP_AUDIENCE))),
                ("x-tamebi-nextcloud-token".into(), stack.token("alice", MCP_AUDIENCE)),
            ],
        ),
        (
            "another user's Nextcloud token",
            vec![
                ("authorization".into(), format!("Bearer {}", stack.token("alice", MCP_AUDIENCE))),
                ("x-tamebi-nextcloud-token".into(), stack.token("bob", NEXTCLOUD_AUDIENCE)),
            ],
        ),
    ];
    let claims_variant = |change: &dyn Fn(&mut access_token::Claims)| {
        let mut claims = stack.claims("alice", MCP_AUDIENCE);
        change(&mut claims);
        with_bearer(&stack, signer.sign_access_token(&claims))
    };
    let wrong_issuer = claims_variant(&|claims| claims.iss = "http://elsewhere.test".into());
    let wrong_audience = claims_variant(&|claims| {
        claims.aud = access_token::Audience::One(NEXTCLOUD_AUDIENCE.into())
    });
    let expired = claims_variant(&|claims| {
        claims.exp = claims.iat - 3600;
        claims.iat -= 4000;
    });
    let future = claims_variant(&|claims| claims.iat += 3600);
    cases.push(("wrong iss", wrong_issuer));
    cases.push(("wrong aud", wrong_audience));
    cases.push(("expired", expired));
    cases.push(("issued in the future", future));
    for (case, headers) in cases {
        assert_refused(&stack, headers, case).await;
    }
}

#[tokio::test]
async fn a_valid_caller_lists_the_tools_with_their_annotations() {
    let stack = start(second_token()).await;
    let result = stack.rpc_result(&stack.headers_for("alice"), "tools/list", json!({})).await;
    let tools = result["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"files_search") && names.contains(&"files_read"), "{names:?}");
    // The action tools of issue 3; every other tool only reads.
    let actions = [
        "files_write",
        "files_move",
        "calendar_create_event",
        "deck_create_card",
        "deck_move_card",
    ];
    for tool in tools {
        let read_only = !actions.contains(&tool["name"].as_str().unwrap());
        assert_eq!(tool["annotations"]["readOnlyHint"], json!(read_only), "{}", tool["name"]);
        if !read_only {
            // One that acts also says whether it destroys and whether
            // repeating it is harmless.
            assert!(tool["annotations"]["destructiveHint"].is_boolean(), "{}", tool["name"]);
            assert!(tool["annotations"]["idempotentHint"].is_boolean(), "{}", tool["name"]);
        }
        assert!(tool["outputSchema"].is_object());
        assert_eq!(tool["inputSchema"]["additionalProperties"], json!(false));
    }
}

#[tokio::test]
async fn protected_resource_metadata_names_the_issuer() {
    let stack = start(second_token()).await;
    for (_, metadata) in stack.resource_metadata().await {
        assert_eq!(metadata["resource"], MCP_AUDIENCE);
        assert_eq!(metadata["authorization_servers"], json!([stack.fake.base_url()]));
    }
}

#[tokio::test]
async fn a_foreign_host_header_is_refused_even_with_a_valid_bearer() {
    // DNS-rebinding protection: a page on evil.example resolving to our
    // address must not reach the tools, whatever it carries.
    let stack = start(second_token()).await;
    let request = stack.request(&stack.headers_for("alice"), "tools/list", json!({}));
    let response = request.header("host", "evil.example").send().await.unwrap();
    assert_eq!(response.status(), 403);
}
