//! Every way the app can answer badly becomes an `isError` result with the
//! right `_meta["tamebi/failureKind"]` and a text that says what to do next
//! — never the app's host, a URL, a stack trace or its raw body.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::*;
use serde_json::{Value, json};

/// One call per tool, with arguments our own checks accept.
fn calls() -> [(&'static str, Value); 3] {
    [
        ("mail_search", json!({"query": "budget"})),
        ("mail_read", json!({"id": 12})),
        ("mail_compose", json!({"to": ["bob@example.com"], "subject": "s", "body": "b"})),
    ]
}

const STACK_TRACE: &str = "OCA\\Mail\\Exception\\ServiceException: IMAP error in /var/www/html/apps/mail/lib/Service/MailManager.php:123\n#0 {main}";

fn envelope(message: &str) -> String {
    json!({"error": {"message": message, "requestId": "req-1"}}).to_string()
}

/// Whatever a text says, it names no infrastructure.
fn assert_clean(text: &str, app_url: &str, case: &str) {
    let host_port = app_url.trim_start_matches("http://");
    assert!(!text.is_empty(), "{case}: says something");
    assert!(!text.contains(host_port), "{case}: names the app: {text}");
    assert!(!text.contains("127.0.0.1"), "{case}: names a host: {text}");
    assert!(!text.contains("://"), "{case}: holds a URL: {text}");
    assert!(!text.contains("/var/www") && !text.contains("OCA\\"), "{case}: a trace: {text}");
    assert!(!text.contains("requestId") && !text.contains('{'), "{case}: a raw body: {text}");
    assert!(text.trim_end().ends_with('.'), "{case}: ends as a sentence: {text}");
}

#[tokio::test]
async fn app_answers_become_failure_kinds_with_clean_instructions() {
    let stack = start().await;
    let app_url = stack.app.url.clone();
    let cases: Vec<(u16, String, &str, &str)> = vec![
        (401, envelope("Sign in again."), "refused_by_nextcloud", "signing in again"),
        (
            403,
            envelope("Sending or saving mail needs your click in the chat page."),
            "refused_by_nextcloud",
            "Do not retry",
        ),
        (404, envelope("Not found."), "not_found", ""),
        (500, STACK_TRACE.to_string(), "nextcloud_unreachable", "trying again in a moment"),
        (502, "<html>Bad gateway</html>".into(), "nextcloud_unreachable", "trying again"),
        (503, envelope(&format!("{app_url} is down")), "nextcloud_unreachable", "trying again"),
        (400, envelope(&format!("{STACK_TRACE} at {app_url}")), "invalid_arguments", "mail_"),
        (400, "<html>400</html>".into(), "invalid_arguments", "mail_"),
        (200, "<html>Log in</html>".into(), "nextcloud_unreachable", "unexpected answer"),
        (200, json!({"unexpected": true}).to_string(), "nextcloud_unreachable", "do not retry"),
        (302, String::new(), "nextcloud_unreachable", "unexpected answer"),
        (409, envelope("Already sent."), "nextcloud_unreachable", "unexpected answer"),
    ];
    for (status, body, kind, says) in &cases {
        stack.app.fail(*status, body);
        for (tool, arguments) in calls() {
            let case = format!("{tool} with {status} {body:?}");
            let result = stack.call_tool("alice", tool, arguments).await;
            assert_eq!(failure_kind(&result), Some(*kind), "{case}: {result}");
            let text = text_of(&result);
            assert!(text.contains(says), "{case}: {text}");
            assert_clean(&text, &app_url, &case);
            assert!(result.get("structuredContent").is_none_or(Value::is_null), "{case}");
        }
    }
    stack.app.heal();
    stack.shutdown().await;
}

#[tokio::test]
async fn not_found_tells_the_model_how_to_find_the_message_again() {
    let stack = start().await;
    let result = stack.call_tool("alice", "mail_read", json!({"id": 999})).await;
    assert_eq!(failure_kind(&result), Some("not_found"));
    assert_eq!(
        text_of(&result),
        "There is no message with id 999 in the user's mail (it may have been deleted or moved). Find it again with mail_search and use the id it returns."
    );
    stack.app.fail(404, &envelope("No such route."));
    let search = stack.call_tool("alice", "mail_search", json!({})).await;
    assert_eq!(failure_kind(&search), Some("not_found"));
    assert!(
        text_of(&search).contains("Nextcloud Mail may not be installed"),
        "{}",
        text_of(&search)
    );
    stack.shutdown().await;
}

#[tokio::test]
async fn a_clean_field_message_of_the_app_is_relayed_and_a_dirty_one_is_not() {
    let stack = start().await;
    let compose = json!({"to": ["bob@example.com"], "subject": "s", "body": "b"});
    stack.app.fail(400, &envelope("to[0] must be local@domain or Name <local@domain>."));
    let relayed = stack.call_tool("alice", "mail_compose", compose.clone()).await;
    assert_eq!(failure_kind(&relayed), Some("invalid_arguments"));
    assert_eq!(
        text_of(&relayed),
        "to[0] must be local@domain or Name <local@domain>. Fix it and call mail_compose again."
    );
    // The stand-in's own 400 for a bad cursor, through the real route.
    stack.app.heal();
    let cursor = stack.call_tool("alice", "mail_search", json!({"cursor": "forged"})).await;
    assert_eq!(failure_kind(&cursor), Some("invalid_arguments"));
    assert_eq!(
        text_of(&cursor),
        "The cursor is not valid. Fix the arguments and call mail_search again."
    );
    // Nextcloud's own CSRF answer is relayed only because it is a plain
    // sentence; one naming a host or a class is replaced.
    for dirty in [
        envelope(&format!("Could not reach {}.", stack.app.url)),
        envelope("OCA\\Mail\\Exception\\ClientException: invalid address"),
        envelope(&"x".repeat(400)),
        envelope("line one\nline two."),
    ] {
        stack.app.fail(400, &dirty);
        let result = stack.call_tool("alice", "mail_compose", compose.clone()).await;
        assert_eq!(failure_kind(&result), Some("invalid_arguments"), "{dirty}");
        assert!(text_of(&result).starts_with("The mail was refused as written."), "{dirty}");
        assert_clean(&text_of(&result), &stack.app.url, &dirty);
    }
    stack.shutdown().await;
}

#[tokio::test]
async fn an_app_that_does_not_answer_is_unreachable() {
    // A port nothing listens on.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let closed_url = closed.clone();
    let stack = start_with(move |_| closed_url).await;
    for (tool, arguments) in calls() {
        let result = stack.call_tool("alice", tool, arguments).await;
        assert_eq!(failure_kind(&result), Some("nextcloud_unreachable"), "{tool}: {result}");
        assert_eq!(
            text_of(&result),
            "The user's mail could not be reached just now. Tell the user their mail is unavailable and suggest trying again in a moment; do not guess what it holds."
        );
        assert_clean(&text_of(&result), &closed, tool);
    }
    stack.shutdown().await;
}
