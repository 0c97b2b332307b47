//! Oversized requests and answers: each is refused at a stated bound with
//! a clear answer, the server stays up, and nothing grows without bound.

use crate::common::proxy::*;
use crate::common::*;
use serde_json::json;

#[tokio::test]
async fn an_oversized_mcp_request_is_413_and_reaches_nothing() {
    let (stack, recorder) = recorded_stack(|_| {}).await;
    // 5 MiB of content: past the MCP transport's 4 MiB request bound.
    let content = "x".repeat(5 * 1024 * 1024);
    let response = stack
        .rpc(
            &stack.headers_for("alice"),
            "tools/call",
            json!({"name": "files_write", "arguments": {"path": "Documents/huge.md", "content": content}}),
        )
        .await;
    assert_eq!(response.status(), 413);
    let body = response.text().await.unwrap();
    assert!(body.contains("Payload Too Large"), "{body}");
    assert!(recorder.seen().is_empty(), "nothing went upstream");
    assert!(stack.fake.shared.world().storage.node_at("alice", "Documents/huge.md").is_none());
    // Without a bearer the body is never read: 401 first.
    let response =
        stack.rpc(&[], "tools/list", json!({"padding": "y".repeat(5 * 1024 * 1024)})).await;
    assert_eq!(response.status(), 401);
    let listed = stack.rpc(&stack.headers_for("alice"), "tools/list", json!({})).await;
    assert_eq!(listed.status(), 200, "still serving");
}

/// A file of alice's of `length` bytes, all `a`.
fn seed_alice(stack: &Stack, path: &str, length: usize, mime: &str) {
    let content = vec![b'a'; length];
    stack.fake.shared.world().storage.seed_file("alice", path, content, Some(mime), 1_767_225_600);
}

#[tokio::test]
async fn a_huge_document_is_refused_before_it_is_downloaded() {
    let (stack, recorder) = recorded_stack(|_| {}).await;
    let length = extract::INPUT_LENGTH_MAX + 1;
    seed_alice(&stack, "Documents/huge.md", length, "text/markdown");
    let result = stack.call_tool("alice", "files_read", json!({"path": "Documents/huge.md"})).await;
    assert_eq!(failure_kind(&result), Some("unreadable"), "{result}");
    assert!(text_of(&result).contains("too large"), "{result}");
    assert!(
        !recorder.seen().iter().any(|request| request.method == "GET"),
        "the body was never fetched: {:?}",
        recorder.seen().iter().map(|r| format!("{} {}", r.method, r.path)).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn a_huge_plain_file_is_served_a_bounded_slice_at_a_time() {
    let (stack, recorder) = recorded_stack(|_| {}).await;
    let length = 80 * 1024 * 1024;
    seed_alice(&stack, "Documents/huge.csv", length, "text/csv");
    let result = stack
        .call_tool(
            "alice",
            "files_read",
            json!({"path": "Documents/huge.csv", "offset": 40_000_000, "length": 65_536}),
        )
        .await;
    assert_eq!(failure_kind(&result), None, "{result}");
    let structured = &result["structuredContent"];
    assert_eq!(structured["length"], 65_536);
    assert_eq!(structured["total"], length);
    assert_eq!(structured["text"].as_str().unwrap().len(), 65_536);
    let over = stack
        .call_tool("alice", "files_read", json!({"path": "Documents/huge.csv", "length": 65_537}))
        .await;
    assert_eq!(failure_kind(&over), Some("invalid_arguments"), "{over}");
    assert!(recorder.seen().iter().any(|request| request.method == "GET"), "read by range");
}

#[tokio::test]
async fn an_answer_streamed_past_the_bound_without_a_length_is_cut_off() {
    // A Nextcloud (or anything in between) that streams a document chunked,
    // with no Content-Length, for longer than the response bound: before
    // the fix the whole stream was buffered.
    let (stack, recorder) = recorded_stack(|_| {}).await;
    recorder
        .flood("/Documents/notes-reunion.md", mcp_nextcloud::nextcloud::RESPONSE_LENGTH_MAX + 1);
    let result =
        stack.call_tool("alice", "files_read", json!({"path": "Documents/notes-reunion.md"})).await;
    assert_eq!(failure_kind(&result), Some("invalid_arguments"), "{result}");
    assert!(text_of(&result).contains("too large"), "{result}");
    let listed = stack.rpc(&stack.headers_for("alice"), "tools/list", json!({})).await;
    assert_eq!(listed.status(), 200, "still serving");
}

#[tokio::test]
async fn an_oversized_webhook_body_is_413_and_records_nothing() {
    let stack = start_configured(second_token(), None, |config| {
        config.index.webhook_secret = Some("hook-secret".into());
    })
    .await;
    let padding = "p".repeat(mcp_nextcloud::index::webhook::BODY_LENGTH_MAX);
    let mut payload = node_written(424_242, "/alice/files/x.md");
    payload["padding"] = json!(padding);
    let answer = stack.webhook("hook-secret").json(&payload).send().await.unwrap();
    assert_eq!(answer.status(), 413);
    let envelope: serde_json::Value = answer.json().await.unwrap();
    assert!(envelope["error"]["message"].as_str().unwrap().contains("too large"), "{envelope}");
    // A body that is not a payload: the envelope, and none of the parser's
    // words (they quote the body back) (issue 14).
    let answer = stack
        .webhook("hook-secret")
        .body(r#"{"event": {"class": "secret-looking-bytes-0xdeadbeef""#)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 400);
    let text = answer.text().await.unwrap();
    let envelope: serde_json::Value = serde_json::from_str(&text).expect("a JSON envelope");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("The body is not a webhook_listeners event payload"),
        "{text}"
    );
    assert!(!text.contains("deadbeef") && !text.contains("EOF"), "{text}");
    let recorded = stack
        .mcp()
        .index()
        .store()
        .run_blocking(|connection| mcp_nextcloud::index::store::doc(connection, 424_242))
        .unwrap();
    assert!(recorded.is_none(), "nothing recorded");
    // The same payload without the padding is accepted.
    let small = node_written(424_242, "/alice/files/x.md");
    let answer = stack.webhook("hook-secret").json(&small).send().await.unwrap();
    assert_eq!(answer.status(), 204);
}
