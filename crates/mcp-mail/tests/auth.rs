//! mcp-mail accepts only a bearer minted for its own canonical URL, spends
//! only the user's Nextcloud-audience token (same issuer, same `sub`), and
//! says nothing but "401, see the metadata" to anyone else.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::*;
use serde_json::json;

async fn assert_refused(stack: &Stack, headers: Vec<(String, String)>, case: &str) {
    let response = stack.rpc(&headers, "tools/list", json!({})).await;
    assert_bare_refusal(response, METADATA_URL, case).await;
}

fn pair(bearer: &str, nextcloud: Option<&str>) -> Vec<(String, String)> {
    let mut headers = vec![("authorization".to_string(), format!("Bearer {bearer}"))];
    if let Some(nextcloud) = nextcloud {
        headers.push((NEXTCLOUD_TOKEN_HEADER.to_string(), nextcloud.to_string()));
    }
    headers
}

#[tokio::test]
async fn only_a_token_for_this_server_with_the_users_nextcloud_token_is_accepted() {
    let stack = start().await;
    let mail = stack.token("alice", MCP_AUDIENCE);
    let nextcloud = stack.nextcloud_token("alice");
    let cases: Vec<(&str, Vec<(String, String)>)> = vec![
        ("no authorization", vec![]),
        ("basic auth", vec![("authorization".into(), "Basic YWxpY2U6eA==".into())]),
        ("garbage", pair("not-a-token", Some(&nextcloud))),
        (
            "a token for mcp-nextcloud",
            pair(&stack.token("alice", MCP_NEXTCLOUD_AUDIENCE), Some(&nextcloud)),
        ),
        ("the Nextcloud token as the bearer", pair(&nextcloud, Some(&nextcloud))),
        ("no Nextcloud token", pair(&mail, None)),
        ("an empty Nextcloud token", pair(&mail, Some(" "))),
        ("the mail token as the Nextcloud token", pair(&mail, Some(&mail))),
        (
            "an mcp-nextcloud token as the Nextcloud token",
            pair(&mail, Some(&stack.token("alice", MCP_NEXTCLOUD_AUDIENCE))),
        ),
        ("another user's Nextcloud token", pair(&mail, Some(&stack.nextcloud_token("bob")))),
        (
            "a token from another key",
            pair(
                &access_token::Signer::generate("other-kid")
                    .sign_access_token(&stack.claims("alice", MCP_AUDIENCE)),
                Some(&nextcloud),
            ),
        ),
    ];
    for (case, headers) in cases {
        assert_refused(&stack, headers, case).await;
    }
    // An expired pair: the fake's clock minted it twenty minutes ago.
    stack.fake.shared.clock.advance(-1200);
    let old = pair(&stack.token("alice", MCP_AUDIENCE), Some(&stack.nextcloud_token("alice")));
    stack.fake.shared.clock.advance(1200);
    assert_refused(&stack, old, "expired").await;
    assert!(stack.app.requests().is_empty(), "nothing refused reached the mail");

    // The accepted pair, for contrast: the same shapes, the right tokens.
    let accepted = stack.rpc(&pair(&mail, Some(&nextcloud)), "tools/list", json!({})).await;
    assert_eq!(accepted.status(), 200);
    stack.shutdown().await;
}

#[tokio::test]
async fn the_app_receives_exactly_the_nextcloud_token_and_never_ours() {
    let stack = start().await;
    let mail = stack.token("alice", MCP_AUDIENCE);
    let nextcloud = stack.nextcloud_token("alice");
    let headers = pair(&mail, Some(&nextcloud));
    for (tool, arguments) in [
        ("mail_search", json!({})),
        ("mail_read", json!({"id": 12})),
        ("mail_compose", json!({"to": ["bob@example.com"], "subject": "s", "body": "b"})),
    ] {
        let result = stack
            .rpc_result(&headers, "tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        assert_eq!(failure_kind(&result), None, "{tool}: {result}");
    }
    let requests = stack.app.requests();
    assert_eq!(requests.len(), 3);
    for request in requests {
        assert_eq!(request.authorization, Some(format!("Bearer {nextcloud}")), "{}", request.path);
        assert!(!request.everything.contains(&mail), "our token leaked to {}", request.path);
        assert!(
            !request.everything.to_lowercase().contains(NEXTCLOUD_TOKEN_HEADER),
            "the second token travels as the bearer only"
        );
    }
    stack.shutdown().await;
}

#[tokio::test]
async fn protected_resource_metadata_names_this_server_and_the_issuer() {
    let stack = start().await;
    for (path, metadata) in stack.resource_metadata().await {
        assert_eq!(metadata["resource"], MCP_AUDIENCE, "{path}");
        assert_eq!(metadata["authorization_servers"], json!([stack.fake.base_url()]));
        assert_eq!(metadata["resource_name"], "Tamebi MCP Mail");
    }
    let health =
        stack.client.http.get(format!("{}/health", stack.mcp().url())).send().await.unwrap();
    assert_eq!(health.text().await.unwrap(), "ok\n");
    stack.shutdown().await;
}

#[tokio::test]
async fn a_foreign_host_header_is_refused_even_with_valid_tokens() {
    // DNS-rebinding protection: a page on evil.example resolving to our
    // address must not reach the tools, whatever it carries.
    let stack = start().await;
    let request = stack.request(&stack.headers_for("alice"), "tools/list", json!({}));
    let response = request.header("host", "evil.example").send().await.unwrap();
    assert_eq!(response.status(), 403);
    stack.shutdown().await;
}
