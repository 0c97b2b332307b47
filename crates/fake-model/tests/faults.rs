//! Every fault over a real socket: 429 with retry-after, 500, streams cut
//! mid-text and mid-tool-call, slow tokens, llama.cpp's refusal to stream
//! with tools; per rule, global, and set at run time.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::{ask, post, read_stream, recorded, start};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const ANSWERS: &str = r#"
[[rules]]
when.last_user_contains = "budget"
tool_calls = [{ name = "files_grep", arguments = { query = "budget prévisionnel apollo" } }]

[[rules]]
text = "one two three four five six seven eight"
"#;

async fn put_faults(fake: &fake_model::FakeModel, faults: Value) {
    let response = common::admin_put(fake, "/__fake/faults", &faults).await;
    assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
}

async fn error_of(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

#[tokio::test]
async fn a_rate_limit_says_when_to_retry() {
    let fake = start(&format!(
        "[[rules]]\ntimes = 1\nfault = {{ error = \"rate_limit\", retry_after_seconds = 3 }}\n{ANSWERS}"
    ))
    .await;
    let response = post(&fake, &ask("hello", &[], true)).await;
    assert_eq!(response.headers()["retry-after"], "3");
    let (status, body) = error_of(response).await;
    assert_eq!(status, 429);
    assert_eq!(body["error"]["code"], "rate_limit_exceeded");
    assert_eq!(body["error"]["param"], Value::Null);
    // `times = 1`: the retry is answered.
    let stream = read_stream(post(&fake, &ask("hello", &[], true)).await).await;
    assert_eq!(stream.text, "one two three four five six seven eight");
    fake.shutdown().await;
}

#[tokio::test]
async fn a_server_error_has_openai_shape() {
    let fake = start(ANSWERS).await;
    put_faults(&fake, json!({"error": "server_error", "times": 1})).await;
    let (status, body) = error_of(post(&fake, &ask("hello", &[], false)).await).await;
    assert_eq!(status, 500);
    assert_eq!(body["error"]["type"], "server_error");
    for field in ["message", "param", "code"] {
        assert!(body["error"].get(field).is_some(), "{field}");
    }
    // The global fault applied to one request and cleared itself.
    assert_eq!(post(&fake, &ask("hello", &[], false)).await.status(), 200);
    let faults = common::admin_json(&fake, reqwest::Method::GET, "/__fake/faults").await;
    assert_eq!(faults, json!({}));
    fake.shutdown().await;
}

#[tokio::test]
async fn a_stream_cut_mid_text_has_no_done() {
    let fake = start(ANSWERS).await;
    put_faults(&fake, json!({"cut": "mid_text"})).await;
    let stream = read_stream(post(&fake, &ask("hello", &[], true)).await).await;
    assert!(stream.broken, "the connection closes before the body ends");
    assert!(!stream.done);
    assert_eq!(stream.finish_reason, None);
    assert!(!stream.text.is_empty(), "some text arrived");
    assert!("one two three four five six seven eight".starts_with(&stream.text));
    assert_ne!(stream.text, "one two three four five six seven eight");
    // A non-streamed answer is cut too: the body is not whole JSON.
    let response = post(&fake, &ask("hello", &[], false)).await;
    assert_eq!(response.status(), 200);
    assert!(response.bytes().await.is_err(), "the body breaks off");
    fake.shutdown().await;
}

#[tokio::test]
async fn a_stream_cut_mid_tool_call_leaves_broken_arguments() {
    let fake = start(&format!(
        "[[rules]]\nwhen.turn = 0\ntimes = 1\ntool_calls = [{{ name = \"files_grep\", arguments = {{ query = \"budget prévisionnel apollo\" }} }}]\nfault = {{ cut = \"mid_tool_call\" }}\n{ANSWERS}"
    ))
    .await;
    let stream = read_stream(post(&fake, &ask("budget", &["files_grep"], true)).await).await;
    assert!(stream.broken);
    assert!(!stream.done);
    assert_eq!(stream.finish_reason, None);
    assert_eq!(stream.tool_calls.len(), 1);
    let (_, name, arguments) = &stream.tool_calls[0];
    assert_eq!(name, "files_grep");
    assert!(!arguments.is_empty());
    assert!(serde_json::from_str::<Value>(arguments).is_err(), "{arguments} is incomplete");
    // The rule answered once; the retry is whole.
    let stream = read_stream(post(&fake, &ask("budget", &["files_grep"], true)).await).await;
    assert!(stream.done);
    let (_, _, arguments) = &stream.tool_calls[0];
    assert_eq!(
        serde_json::from_str::<Value>(arguments).unwrap()["query"],
        "budget prévisionnel apollo"
    );
    fake.shutdown().await;
}

#[tokio::test]
async fn slow_tokens_delay_each_delta() {
    let fake = start(ANSWERS).await;
    put_faults(&fake, json!({"delta_delay_ms": 40})).await;
    let response = post(&fake, &ask("hello", &[], true)).await;
    // Headers come at once; the deltas trickle.
    let started = Instant::now();
    let stream = read_stream(response).await;
    let elapsed = started.elapsed();
    let deltas = stream.chunks.len() as u32;
    assert!(deltas >= 10);
    assert!(elapsed >= Duration::from_millis(40) * (deltas - 1), "{elapsed:?} for {deltas} deltas");
    assert!(stream.done);
    // Non-streamed: the whole answer is as late.
    let started = Instant::now();
    assert_eq!(post(&fake, &ask("hello", &[], false)).await.status(), 200);
    assert!(started.elapsed() >= Duration::from_millis(400));
    let records = recorded(&fake).await;
    assert_eq!(records[0]["fault"], "slow_deltas");
    fake.shutdown().await;
}

#[tokio::test]
async fn streaming_with_tools_can_be_refused_like_llama_cpp() {
    let fake = start(&format!("[faults]\nrefuse_streaming_with_tools = true\n{ANSWERS}")).await;
    let (status, body) = error_of(post(&fake, &ask("budget", &["files_grep"], true)).await).await;
    assert_eq!(status, 500);
    assert_eq!(
        body,
        json!({"error": {"code": 500, "message": "Automatic streaming tool choice is not supported", "type": "server_error"}})
    );
    let mut auto = ask("budget", &["files_grep"], true);
    auto["tool_choice"] = json!("auto");
    assert_eq!(post(&fake, &auto).await.status(), 500);
    // The fallbacks a client has: no streaming, or an explicit tool choice.
    let body: Value =
        post(&fake, &ask("budget", &["files_grep"], false)).await.json().await.unwrap();
    assert_eq!(body["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "files_grep");
    let mut required = ask("budget", &["files_grep"], true);
    required["tool_choice"] = json!("required");
    assert!(read_stream(post(&fake, &required).await).await.done);
    // Streaming without tools is fine.
    assert!(read_stream(post(&fake, &ask("hello", &[], true)).await).await.done);
    let faults: Vec<Value> =
        recorded(&fake).await.iter().map(|record| record["fault"].clone()).collect();
    assert_eq!(
        faults[..3],
        [json!("streaming_with_tools_refused"), json!("streaming_with_tools_refused"), Value::Null]
    );
    fake.shutdown().await;
}

#[tokio::test]
async fn global_faults_act_before_rules_are_counted() {
    let fake = start(&format!(
        "[faults]\nerror = \"rate_limit\"\ntimes = 2\n[[rules]]\ntimes = 1\ntext = \"the only answer\"\n{ANSWERS}"
    ))
    .await;
    assert_eq!(post(&fake, &ask("hello", &[], false)).await.status(), 429);
    assert_eq!(post(&fake, &ask("hello", &[], false)).await.status(), 429);
    let body: Value = post(&fake, &ask("hello", &[], false)).await.json().await.unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], "the only answer");
    let records = recorded(&fake).await;
    assert_eq!(records.len(), 3, "faulted requests are recorded");
    assert_eq!(records[0]["by"], "fault");
    assert_eq!(records[0]["rule"], Value::Null);
    assert_eq!(records[2]["by"], "rule");
    assert_eq!(records[2]["rule"]["index"], 0);
    fake.shutdown().await;
}

#[tokio::test]
async fn bad_faults_are_refused() {
    let fake = start("").await;
    let response = common::admin_put(&fake, "/__fake/faults", &json!({"error": "teapot"})).await;
    assert_eq!(response.status(), 400);
    fake.shutdown().await;
}
