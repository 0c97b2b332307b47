//! The model API over a real socket: streamed text and tool calls
//! reassemble to what the script says, usage only when asked, the
//! non-streamed shape, the model list, and OpenAI's errors.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::{ask, http, post, read_stream, start, start_with};
use fake_model::{Config, Script};
use serde_json::{Value, json};

const SCRIPT: &str = r#"
[[rules]]
name = "search"
when = { last_role = "user", last_user_contains = "budget" }
tool_calls = [
    { name = "files_grep", arguments = { query = "budget prévisionnel apollo", limit = 5 } },
    { name = "files_search", arguments = { name = "CR-reunion" } },
]

[[rules]]
name = "greet"
when.last_user_regex = '(?i)^hello\b'
text = "Hello! I can search your documents, read your calendar and more."

[[rules]]
name = "mixed"
when.last_user_contains = "mixed"
text = "Let me look."
tool_calls = [{ name = "files_grep", arguments = { query = "x" } }]
"#;

#[tokio::test]
async fn streamed_text_reassembles_to_the_script() {
    let fake = start(SCRIPT).await;
    let stream = read_stream(post(&fake, &ask("Hello there", &["files_grep"], true)).await).await;
    assert!(stream.done);
    assert!(!stream.broken);
    assert_eq!(stream.role.as_deref(), Some("assistant"));
    assert_eq!(stream.text, "Hello! I can search your documents, read your calendar and more.");
    assert!(stream.chunks.len() > 5, "text comes in several deltas");
    assert_eq!(stream.finish_reason.as_deref(), Some("stop"));
    assert!(stream.tool_calls.is_empty());
    assert!(stream.usage.is_none(), "no usage chunk without include_usage");
    assert!(stream.chunks.iter().all(|chunk| chunk.get("usage").is_none()));
    // The model named in the request is echoed, as OpenAI does.
    assert!(stream.chunks.iter().all(|chunk| chunk["model"] == "test-model"));
    let ids: std::collections::BTreeSet<&str> =
        stream.chunks.iter().map(|chunk| chunk["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 1, "one id for the whole stream");
    fake.shutdown().await;
}

#[tokio::test]
async fn streamed_tool_calls_reassemble_to_the_script() {
    let fake = start(SCRIPT).await;
    let stream = read_stream(
        post(&fake, &ask("What's the budget?", &["files_grep", "files_search"], true)).await,
    )
    .await;
    assert!(stream.done);
    assert_eq!(stream.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(stream.text, "");
    assert_eq!(stream.tool_calls.len(), 2);
    let (id_0, name_0, arguments_0) = &stream.tool_calls[0];
    let (id_1, name_1, arguments_1) = &stream.tool_calls[1];
    assert!(id_0.starts_with("call_"));
    assert_ne!(id_0, id_1);
    assert_eq!(name_0, "files_grep");
    assert_eq!(name_1, "files_search");
    assert_eq!(
        serde_json::from_str::<Value>(arguments_0).unwrap(),
        json!({"query": "budget prévisionnel apollo", "limit": 5})
    );
    assert_eq!(serde_json::from_str::<Value>(arguments_1).unwrap(), json!({"name": "CR-reunion"}));
    // Arguments arrive in fragments, not whole.
    let fragments = stream
        .chunks
        .iter()
        .filter(|chunk| chunk.pointer("/choices/0/delta/tool_calls/0/function/arguments").is_some())
        .count();
    assert!(fragments > 6, "{fragments} argument deltas");
    fake.shutdown().await;
}

#[tokio::test]
async fn text_then_tool_calls_in_one_answer() {
    let fake = start(SCRIPT).await;
    let stream = read_stream(post(&fake, &ask("mixed please", &["files_grep"], true)).await).await;
    assert_eq!(stream.text, "Let me look.");
    assert_eq!(stream.tool_calls.len(), 1);
    assert_eq!(stream.finish_reason.as_deref(), Some("tool_calls"));
    fake.shutdown().await;
}

#[tokio::test]
async fn usage_comes_only_with_include_usage() {
    let fake = start(SCRIPT).await;
    let mut body = ask("What's the budget?", &["files_grep"], true);
    body["stream_options"] = json!({"include_usage": true});
    let stream = read_stream(post(&fake, &body).await).await;
    assert!(stream.done);
    let usage = stream.usage.expect("a usage chunk");
    let last = stream.chunks.last().unwrap();
    assert_eq!(last["choices"], json!([]), "usage is the last chunk before [DONE]");
    assert_eq!(
        usage["total_tokens"].as_u64().unwrap(),
        usage["prompt_tokens"].as_u64().unwrap() + usage["completion_tokens"].as_u64().unwrap()
    );
    assert!(usage["prompt_tokens"].as_u64().unwrap() > 0);
    body["stream_options"] = json!({"include_usage": false});
    assert!(read_stream(post(&fake, &body).await).await.usage.is_none());
    fake.shutdown().await;
}

#[tokio::test]
async fn non_streamed_answers_have_openai_shape() {
    let fake = start(SCRIPT).await;
    let response = post(&fake, &ask("What's the budget?", &["files_grep"], false)).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("application/json"));
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["object"], "chat.completion");
    assert!(body["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert_eq!(body["model"], "test-model");
    let choice = &body["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["role"], "assistant");
    assert_eq!(choice["message"]["content"], Value::Null);
    let call = &choice["message"]["tool_calls"][0];
    assert_eq!(call["type"], "function");
    assert_eq!(call["function"]["name"], "files_grep");
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments["query"], "budget prévisionnel apollo");
    assert!(body["usage"]["total_tokens"].as_u64().unwrap() > 0);

    let body: Value = post(&fake, &ask("hello", &[], false)).await.json().await.unwrap();
    assert_eq!(
        body["choices"][0]["message"]["content"],
        "Hello! I can search your documents, read your calendar and more."
    );
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    assert!(body["choices"][0]["message"].get("tool_calls").is_none());
    fake.shutdown().await;
}

#[tokio::test]
async fn no_matching_rule_answers_a_clear_fallback() {
    let fake = start(SCRIPT).await;
    let stream = read_stream(post(&fake, &ask("something else entirely", &[], true)).await).await;
    assert!(stream.text.contains("No script rule matched"), "{}", stream.text);
    assert!(stream.text.contains("something else entirely"), "{}", stream.text);
    assert_eq!(stream.finish_reason.as_deref(), Some("stop"));
    fake.shutdown().await;
}

#[tokio::test]
async fn the_model_list() {
    let fake = start("").await;
    let list: Value =
        http().get(format!("{}/v1/models", fake.url())).send().await.unwrap().json().await.unwrap();
    assert_eq!(list["object"], "list");
    assert_eq!(list["data"][0]["id"], "fake-model");
    assert_eq!(list["data"][0]["object"], "model");
    let one = http().get(format!("{}/v1/models/fake-model", fake.url())).send().await.unwrap();
    assert_eq!(one.status(), 200);
    let missing = http().get(format!("{}/v1/models/gpt-9", fake.url())).send().await.unwrap();
    assert_eq!(missing.status(), 404);
    let body: Value = missing.json().await.unwrap();
    assert_eq!(body["error"]["code"], "model_not_found");
    fake.shutdown().await;
}

/// Status and the OpenAI error object's `param` and `code`.
async fn check_error(
    response: reqwest::Response,
    status: u16,
    param: Option<&str>,
    code: Option<&str>,
) {
    assert_eq!(response.status(), status);
    let body: Value = response.json().await.unwrap();
    let error = body["error"].as_object().unwrap();
    assert!(error["message"].as_str().is_some_and(|message| !message.is_empty()));
    assert!(error["type"].is_string());
    assert_eq!(error["param"].as_str(), param);
    assert_eq!(error["code"].as_str(), code);
}

#[tokio::test]
async fn malformed_bodies_get_openai_400s() {
    let fake = start(SCRIPT).await;
    let url = format!("{}/v1/chat/completions", fake.url());
    let raw = http()
        .post(&url)
        .header("content-type", "application/json")
        .body("{\"messages\": [")
        .send();
    check_error(raw.await.unwrap(), 400, None, None).await;
    check_error(
        post(&fake, &json!({"model": "m"})).await,
        400,
        Some("messages"),
        Some("missing_required_parameter"),
    )
    .await;
    check_error(
        post(&fake, &json!({"messages": []})).await,
        400,
        Some("messages"),
        Some("empty_array"),
    )
    .await;
    let unanswered = json!({"messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}]},
        {"role": "user", "content": "q2"},
    ]});
    check_error(post(&fake, &unanswered).await, 400, Some("messages.[1].role"), None).await;
    // Unknown fields are ignored, as real servers do.
    let mut lenient = ask("hello", &[], false);
    lenient["seed"] = json!(7);
    lenient["parallel_tool_calls"] = json!(false);
    lenient["vendor_extension"] = json!({"anything": [1, 2]});
    assert_eq!(post(&fake, &lenient).await.status(), 200);
    // Nothing invalid was recorded; the lenient request was.
    assert_eq!(common::recorded(&fake).await.len(), 1);
    fake.shutdown().await;
}

#[tokio::test]
async fn unknown_routes_are_openai_404s() {
    let fake = start("").await;
    let response = http().post(format!("{}/v1/completions/nope", fake.url())).send().await.unwrap();
    check_error(response, 404, None, None).await;
    fake.shutdown().await;
}

#[tokio::test]
async fn a_configured_key_is_required() {
    let config = Config {
        script: Script::from_toml(SCRIPT).unwrap(),
        api_key: Some("sk-test-key-0001".to_string()),
        ..Config::default()
    };
    let fake = start_with(config).await;
    let url = format!("{}/v1/chat/completions", fake.url());
    let body = ask("hello", &[], false);
    check_error(http().post(&url).json(&body).send().await.unwrap(), 401, None, None).await;
    let wrong =
        http().post(&url).bearer_auth("sk-wrong-key-9999").json(&body).send().await.unwrap();
    check_error(wrong, 401, None, Some("invalid_api_key")).await;
    let right = http().post(&url).bearer_auth("sk-test-key-0001").json(&body).send().await.unwrap();
    assert_eq!(right.status(), 200);
    let models = http().get(format!("{}/v1/models", fake.url())).send().await.unwrap();
    assert_eq!(models.status(), 401);
    // The admin endpoint takes its own token, not the API key.
    let admin =
        common::admin(&fake, reqwest::Method::GET, "/__fake/requests").send().await.unwrap();
    assert_eq!(admin.status(), 200);
    let with_key = http()
        .get(format!("{}/__fake/requests", fake.url()))
        .bearer_auth("sk-test-key-0001")
        .send()
        .await
        .unwrap();
    assert_eq!(with_key.status(), 401);
    assert_eq!(common::recorded(&fake).await.len(), 1, "refused requests are not recorded");
    fake.shutdown().await;
}
