//! The request log and the admin endpoint: a test sees exactly what the
//! model was shown, and can replace the script while the server runs.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::{ask, http, post, read_stream, recorded, start};
use serde_json::{Value, json};

#[tokio::test]
async fn every_request_is_recorded_as_sent() {
    let fake = start("[[rules]]\nname = \"hi\"\nwhen.turn = 0\ntext = \"hi\"").await;
    let first = ask("What is in Projects/Apollo?", &["files_grep", "files_read"], true);
    read_stream(post(&fake, &first).await).await;
    let second = json!({
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "You are Tamebi."},
            {"role": "user", "content": "budget?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "files_grep", "arguments": "{\"query\":\"budget\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "- Projects/Apollo/budget.ods (fileid 1, offset 0, 9 bytes)\n  Budget"},
        ],
    });
    post(&fake, &second).await;
    let records = recorded(&fake).await;
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["seq"], 1);
    assert_eq!(records[0]["stream"], true);
    assert_eq!(records[0]["body"], first, "the body exactly as sent");
    assert_eq!(records[0]["body"]["messages"][0]["content"], "You are Tamebi.");
    assert_eq!(records[0]["body"]["tools"][1]["function"]["name"], "files_read");
    assert_eq!(records[0]["rule"], json!({"index": 0, "name": "hi"}));
    assert_eq!(records[0]["by"], "rule");
    assert_eq!(records[0]["answer"], "text");
    // Unmatched requests are recorded too, with who answered.
    assert_eq!(records[1]["by"], "no_rule_matched");
    assert_eq!(records[1]["rule"], Value::Null);
    assert_eq!(records[1]["body"]["messages"][3]["tool_call_id"], "call_1");
    assert_eq!(fake.requests().len(), 2, "the library sees the same log");

    let cleared = common::admin_json(&fake, reqwest::Method::DELETE, "/__fake/requests").await;
    assert_eq!(cleared, json!({"cleared": 2}));
    assert!(recorded(&fake).await.is_empty());
    fake.shutdown().await;
}

#[tokio::test]
async fn the_script_is_replaced_at_run_time() {
    let fake = start("[[rules]]\ntext = \"old\"").await;
    let script = json!({
        "faults": {"delta_delay_ms": 1},
        "rules": [
            {"name": "search", "when": {"tool_available": "files_grep"}, "times": 1,
             "tool_calls": [{"name": "files_grep", "arguments": {"query": "apollo"}, "id": "call_fixed"}]},
            {"text": "new"},
        ],
    });
    let response = common::admin_put(&fake, "/__fake/script", &script).await;
    assert_eq!(response.status(), 200);
    let stream = read_stream(post(&fake, &ask("x", &["files_grep"], true)).await).await;
    assert_eq!(stream.tool_calls[0].0, "call_fixed");
    assert_eq!(stream.tool_calls[0].2, r#"{"query":"apollo"}"#);
    let stream = read_stream(post(&fake, &ask("x", &["files_grep"], true)).await).await;
    assert_eq!(stream.text, "new", "times = 1 used up");
    let current = common::admin_json(&fake, reqwest::Method::GET, "/__fake/script").await;
    assert_eq!(current["rules"][0]["name"], "search");
    assert_eq!(current["faults"], json!({"delta_delay_ms": 1}));
    fake.shutdown().await;
}

#[tokio::test]
async fn a_bad_script_is_refused_whole() {
    let fake = start("[[rules]]\ntext = \"kept\"").await;
    let script =
        json!({"rules": [{"when": {"last_user_regex": "("}, "text": "x"}, {"name": "mute"}]});
    let response = common::admin_put(&fake, "/__fake/script", &script).await;
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("rules[0]: when.last_user_regex"), "{message}");
    assert!(message.contains("rules[1] (mute): says nothing"), "{message}");
    let typo = json!({"rules": [{"txt": "x"}]});
    let response = common::admin_put(&fake, "/__fake/script", &typo).await;
    assert_eq!(response.status(), 400);
    // The old script still answers.
    let stream = read_stream(post(&fake, &ask("x", &[], true)).await).await;
    assert_eq!(stream.text, "kept");
    fake.shutdown().await;
}

/// Issue 14: the recorded requests hold document text and memory facts,
/// and the script decides what every user is told; any local process could
/// read or replace them. Without the admin token nothing is shown or
/// changed; with the routes off they do not exist.
#[tokio::test]
async fn the_admin_routes_need_the_token_and_can_be_off() {
    let fake = start(
        r#"[[rules]]
text = "the real script"
"#,
    )
    .await;
    post(&fake, &ask("a secret question", &[], false)).await;
    let token = fake.admin_token().unwrap().to_string();
    for (method, path) in [
        (reqwest::Method::GET, "/__fake/requests"),
        (reqwest::Method::DELETE, "/__fake/requests"),
        (reqwest::Method::GET, "/__fake/script"),
        (reqwest::Method::PUT, "/__fake/script"),
        (reqwest::Method::PUT, "/__fake/faults"),
    ] {
        for wrong in [None, Some("nope"), Some(&token[1..])] {
            let mut request = http()
                .request(method.clone(), format!("{}{path}", fake.url()))
                .json(&json!({"rules": [{"text": "hijacked"}]}));
            if let Some(wrong) = wrong {
                request = request.header(fake_model::admin::TOKEN_HEADER, wrong);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), 401, "{method} {path} with {wrong:?}");
            let text = response.text().await.unwrap();
            assert!(!text.contains("a secret question"), "{text}");
        }
    }
    assert_eq!(recorded(&fake).await.len(), 1, "the log was not cleared");
    let stream = read_stream(post(&fake, &ask("again", &[], true)).await).await;
    assert_eq!(stream.text, "the real script", "the script was not replaced");
    fake.shutdown().await;

    let off = fake_model::FakeModel::start(fake_model::Config {
        admin: fake_model::Admin::Off,
        ..fake_model::Config::default()
    })
    .await
    .unwrap();
    assert_eq!(off.admin_token(), None);
    let response = http()
        .get(format!("{}/__fake/requests", off.url()))
        .header(fake_model::admin::TOKEN_HEADER, &token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    off.shutdown().await;
}
