//! A property: whatever the app answers — any status, a body that names its
//! host, a URL, a PHP trace or random text — no tool text the model reads
//! contains the app's host.
//!
//! One stack serves every case (the fake's RSA key is costly); each case
//! switches the stand-in's answer. On failure proptest prints the smallest
//! case; `PROPTEST_RNG_SEED=<seed>` replays a run.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::json;

/// Cases per run: each is one tool call through the whole stack.
const CASES: u32 = 256;

/// A body the app might send, built around its own address.
#[derive(Debug, Clone)]
enum Body {
    /// The error envelope whose message names the host.
    EnvelopeNamingHost { prefix: String },
    /// Nextcloud's `{"message"}` with a URL on the host.
    MessageWithUrl { path: String },
    /// A PHP trace mentioning the host.
    Trace,
    /// An HTML page with a link to the host.
    Html,
    /// Printable noise with the host inside.
    Noise { before: String, after: String },
    /// A clean-looking sentence that happens to name the host.
    Sentence { field: String },
}

impl Body {
    fn render(&self, app_url: &str, host: &str) -> String {
        match self {
            Body::EnvelopeNamingHost { prefix } => json!({
                "error": {"message": format!("{prefix} {host} refused."), "requestId": "r"}
            })
            .to_string(),
            Body::MessageWithUrl { path } => {
                json!({"message": format!("See {app_url}/{path}")}).to_string()
            }
            Body::Trace => format!(
                "OCA\\Mail\\Exception\\ServiceException: cannot connect to {host}\n#0 /var/www/html/lib/private/AppFramework/App.php(184)\n#1 {{main}}"
            ),
            Body::Html => format!("<html><a href=\"{app_url}/login\">Log in</a></html>"),
            Body::Noise { before, after } => format!("{before}{host}{after}"),
            Body::Sentence { field } => json!({
                "error": {"message": format!("{field} is not accepted by {host}."), "requestId": "r"}
            })
            .to_string(),
        }
    }
}

fn body_strategy() -> impl Strategy<Value = Body> {
    prop_oneof![
        "[A-Za-z ]{0,20}".prop_map(|prefix| Body::EnvelopeNamingHost { prefix }),
        "[a-z/]{0,20}".prop_map(|path| Body::MessageWithUrl { path }),
        Just(Body::Trace),
        Just(Body::Html),
        ("[ -~]{0,40}", "[ -~]{0,40}").prop_map(|(before, after)| Body::Noise { before, after }),
        prop::sample::select(vec!["to", "cc", "subject", "body", "cursor"])
            .prop_map(|field| Body::Sentence { field: field.to_string() }),
    ]
}

fn call_strategy() -> impl Strategy<Value = (&'static str, serde_json::Value)> {
    prop_oneof![
        ("[a-z ]{0,12}", prop::option::of(prop::sample::select(vec!["INBOX", "Sent"]))).prop_map(
            |(query, mailbox)| ("mail_search", json!({"query": query, "mailbox": mailbox}))
        ),
        (1..1000u64).prop_map(|id| ("mail_read", json!({"id": id}))),
        ("[a-z]{1,8}", "[ -~]{0,30}").prop_map(|(local, body)| (
            "mail_compose",
            json!({"to": [format!("{local}@example.com")], "subject": "s", "body": body})
        )),
    ]
}

#[test]
fn no_tool_text_names_the_app_host() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let stack = runtime.block_on(start());
    let app_url = stack.app.url.clone();
    let host_port = app_url.trim_start_matches("http://").to_string();
    let host = host_port.split(':').next().unwrap().to_string();
    let mut runner =
        TestRunner::new(Config { cases: CASES, failure_persistence: None, ..Config::default() });
    // Statuses 200-599: success codes carry bodies that are not the
    // contract, so every case is a failure the tool must word itself.
    let strategy = (200..600u16, body_strategy(), call_strategy());
    let outcome = runner.run(&strategy, |(status, body, (tool, arguments))| {
        let rendered = body.render(&app_url, &host);
        stack.app.fail(status, &rendered);
        let result = runtime.block_on(stack.call_tool("alice", tool, arguments.clone()));
        let text = text_of(&result);
        prop_assert!(failure_kind(&result).is_some(), "{tool} {status}: {result}");
        prop_assert!(!text.is_empty());
        for leak in [host.as_str(), host_port.as_str(), "://", "/var/www", "OCA\\"] {
            prop_assert!(
                !text.contains(leak),
                "{tool} {arguments} with {status} {rendered:?} leaked {leak:?}: {text}"
            );
        }
        Ok::<(), TestCaseError>(())
    });
    stack.app.heal();
    runtime.block_on(stack.shutdown());
    if let Err(error) = outcome {
        panic!("{error}");
    }
}

#[test]
fn the_property_sees_a_leak_when_there_is_one() {
    // A property that cannot fail is a defect: the rendered bodies do name
    // the host, so a tool that relayed them would be caught.
    let (app_url, host) = ("http://127.0.0.1:4242", "127.0.0.1");
    for body in [
        Body::EnvelopeNamingHost { prefix: String::new() },
        Body::MessageWithUrl { path: String::new() },
        Body::Trace,
        Body::Html,
        Body::Noise { before: String::new(), after: String::new() },
        Body::Sentence { field: "to".into() },
    ] {
        assert!(body.render(app_url, host).contains(host), "{body:?}");
    }
}
