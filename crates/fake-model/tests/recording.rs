//! The request log and the admin endpoint: a test sees exactly what the
//! model was shown, and can replace the script while the server runs.

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

    let cleared: Value = http()
        .delete(format!("{}/__fake/requests", fake.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
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
    let response =
        http().put(format!("{}/__fake/script", fake.url())).json(&script).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let stream = read_stream(post(&fake, &ask("x", &["files_grep"], true)).await).await;
    assert_eq!(stream.tool_calls[0].0, "call_fixed");
    assert_eq!(stream.tool_calls[0].2, r#"{"query":"apollo"}"#);
    let stream = read_stream(post(&fake, &ask("x", &["files_grep"], true)).await).await;
    assert_eq!(stream.text, "new", "times = 1 used up");
    let current: Value = http()
        .get(format!("{}/__fake/script", fake.url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(current["rules"][0]["name"], "search");
    assert_eq!(current["faults"], json!({"delta_delay_ms": 1}));
    fake.shutdown().await;
}

#[tokio::test]
async fn a_bad_script_is_refused_whole() {
    let fake = start("[[rules]]\ntext = \"kept\"").await;
    let script =
        json!({"rules": [{"when": {"last_user_regex": "("}, "text": "x"}, {"name": "mute"}]});
    let response =
        http().put(format!("{}/__fake/script", fake.url())).json(&script).send().await.unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("rules[0]: when.last_user_regex"), "{message}");
    assert!(message.contains("rules[1] (mute): says nothing"), "{message}");
    let typo = json!({"rules": [{"txt": "x"}]});
    let response =
        http().put(format!("{}/__fake/script", fake.url())).json(&typo).send().await.unwrap();
    assert_eq!(response.status(), 400);
    // The old script still answers.
    let stream = read_stream(post(&fake, &ask("x", &[], true)).await).await;
    assert_eq!(stream.text, "kept");
    fake.shutdown().await;
}
