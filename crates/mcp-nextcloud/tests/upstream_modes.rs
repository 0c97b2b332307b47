//! The three ways mcp-nextcloud authenticates toward Nextcloud, against the
//! fake: the second token (default — and the token addressed to us never
//! leaves, proven by a recorder in front of the fake), the seeds' single
//! token (works only with user_oidc's audience check off), and app
//! passwords. In every mode a tool acts as the token's `sub` and nobody else.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::proxy::{Recorded, recorded_stack};
use common::*;
use mcp_nextcloud::UpstreamAuth;
use serde_json::{Value, json};

/// `uid`'s MCP bearer, with the one `extra` header beside it where given
/// (a second credential of the test's choosing).
fn mcp_bearer(stack: &Stack, uid: &str, extra: Option<(&str, String)>) -> Vec<(String, String)> {
    let bearer =
        ("authorization".to_string(), format!("Bearer {}", stack.token(uid, MCP_AUDIENCE)));
    std::iter::once(bearer).chain(extra.map(|(name, value)| (name.to_string(), value))).collect()
}

/// A `tools/call` of `tool` under `headers`: the result.
async fn call_with(
    stack: &Stack,
    headers: &[(String, String)],
    tool: &str,
    arguments: Value,
) -> Value {
    stack.rpc_result(headers, "tools/call", json!({"name": tool, "arguments": arguments})).await
}

#[tokio::test]
async fn second_token_mode_never_sends_the_mcp_token_to_nextcloud() {
    let (stack, recorder) = recorded_stack(|_| {}).await;
    let headers = stack.headers_for("alice");
    let mcp_token = headers[0].1.strip_prefix("Bearer ").unwrap().to_string();
    let nextcloud_token = headers[1].1.clone();
    assert_ne!(mcp_token, nextcloud_token);
    assert_eq!(payload_of(&nextcloud_token)["aud"], json!(NEXTCLOUD_AUDIENCE));
    assert_eq!(payload_of(&mcp_token)["aud"], json!(MCP_AUDIENCE));

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
    let result = call_with(&stack, &headers, "files_read", json!({"fileid": fileid})).await;
    results.push(("files_read", result));

    let seen = recorder.seen_all();
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
    let message = text_of(&refused);
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

    let wrong =
        mcp_bearer(&stack, "alice", Some(("x-tamebi-app-password", "alice-app-wrong".into())));
    let result = call_with(&stack, &wrong, "files_search", json!({"name": "journal"})).await;
    assert_failure(&result, "refused_by_nextcloud", "signing in again");

    // No app password at all: refused before anything is spent.
    let missing = mcp_bearer(&stack, "alice", None);
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
            assert!(text_of(&result).contains("Tell the user"));
        }
    }
}

#[tokio::test]
async fn a_valid_token_for_bob_cannot_act_as_alice() {
    // Second-token mode: bob's MCP token with alice's Nextcloud token is
    // refused outright.
    let stack = start(second_token()).await;
    let alice_token = stack.token("alice", NEXTCLOUD_AUDIENCE);
    let mixed = mcp_bearer(&stack, "bob", Some(("x-tamebi-nextcloud-token", alice_token)));
    let read_journal = json!({"name": "files_read", "arguments": {"path": "Private/journal.md"}});
    let response = stack.rpc(&mixed, "tools/call", read_journal).await;
    assert_eq!(response.status(), 401);
    // With his own tokens bob acts as bob: alice's journal does not exist.
    let own = stack.call_tool("bob", "files_read", json!({"path": "Private/journal.md"})).await;
    assert_eq!(failure_kind(&own), Some("not_found"));

    // App-password mode: the password is spent as the token's `sub`, so
    // bob's token with alice's app password is refused by Nextcloud.
    let stack = start(UpstreamAuth::AppPassword).await;
    let alice_password = stack.fake.shared.world().users["alice"].app_passwords[0].clone();
    let mixed = mcp_bearer(&stack, "bob", Some(("x-tamebi-app-password", alice_password)));
    let result =
        call_with(&stack, &mixed, "files_read", json!({"path": "Private/journal.md"})).await;
    assert_eq!(failure_kind(&result), Some("refused_by_nextcloud"), "{result}");
    assert!(!text_of(&result).contains("Personal notes"));

    // Single-token mode: bob's token is bob.
    let stack = start(UpstreamAuth::SingleToken).await;
    stack.fake.shared.world().user_oidc.audience_check = false;
    let result = stack.call_tool("bob", "files_read", json!({"path": "Private/journal.md"})).await;
    assert_eq!(failure_kind(&result), Some("not_found"));
}
