//! The demo mode's two turns over a real socket: a question becomes one
//! files_grep call; the files_grep result becomes a quoted answer with
//! citations that says it is a stand-in.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::{post, read_stream, recorded, start_with};
use fake_model::{Config, Script};
use serde_json::{Value, json};

fn tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "files_search", "parameters": {"type": "object"}}},
        {"type": "function", "function": {"name": "files_grep", "parameters": {"type": "object"}}},
    ])
}

const GREP_RESULT: &str = "\
- Projects/Apollo/CR-reunion-mars.docx — §3. Budget prévisionnel (fileid 12, offset 812, 412 bytes)
  Le **budget** prévisionnel est de 120 k€.
To read a passage in context, call files_read with its path and offset; cite it by its section.";

#[tokio::test]
async fn the_demo_searches_then_quotes() {
    let fake = start_with(Config { demo: true, ..Config::default() }).await;
    let question = "Quel est le budget prévisionnel d'Apollo ?";
    let mut messages = json!([
        {"role": "system", "content": "You are Tamebi."},
        {"role": "user", "content": question},
    ]);
    let first = json!({"model": "demo", "messages": messages, "tools": tools(), "stream": true});
    let stream = read_stream(post(&fake, &first).await).await;
    assert_eq!(stream.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(stream.tool_calls.len(), 1);
    let (id, name, arguments) = stream.tool_calls[0].clone();
    assert_eq!(name, "files_grep");
    assert_eq!(
        serde_json::from_str::<Value>(&arguments).unwrap(),
        json!({"query": "budget prévisionnel apollo"})
    );

    let messages_array = messages.as_array_mut().unwrap();
    messages_array.push(json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}]}));
    messages_array.push(json!({"role": "tool", "tool_call_id": id, "content": GREP_RESULT}));
    let second = json!({"model": "demo", "messages": messages, "tools": tools(), "stream": true});
    let stream = read_stream(post(&fake, &second).await).await;
    assert_eq!(stream.finish_reason.as_deref(), Some("stop"));
    assert!(stream.tool_calls.is_empty());
    assert!(
        stream.text.contains("«Le budget prévisionnel est de 120 k€.» — §3. Budget prévisionnel, Projects/Apollo/CR-reunion-mars.docx"),
        "{}",
        stream.text
    );
    assert!(stream.text.contains("pas d'un modèle de langage"), "{}", stream.text);
    let records = recorded(&fake).await;
    assert!(records.iter().all(|record| record["by"] == "demo"));
    fake.shutdown().await;
}

#[tokio::test]
async fn script_rules_come_before_the_demo() {
    let config = Config {
        demo: true,
        script: Script::from_toml(
            "[[rules]]\nwhen.last_user_contains = \"hello\"\ntext = \"scripted\"",
        )
        .unwrap(),
        ..Config::default()
    };
    let fake = start_with(config).await;
    let body = |question: &str| json!({"messages": [{"role": "user", "content": question}], "tools": tools(), "stream": true});
    assert_eq!(read_stream(post(&fake, &body("hello")).await).await.text, "scripted");
    let stream = read_stream(post(&fake, &body("Apollo kickoff")).await).await;
    assert_eq!(stream.tool_calls[0].1, "files_grep");
    fake.shutdown().await;
}

#[tokio::test]
async fn without_files_grep_the_demo_says_so() {
    let fake = start_with(Config { demo: true, ..Config::default() }).await;
    let body = json!({"messages": [{"role": "user", "content": "What is the Apollo budget?"}], "stream": false});
    let answer: Value = post(&fake, &body).await.json().await.unwrap();
    let text = answer["choices"][0]["message"]["content"].as_str().unwrap();
    assert!(text.contains("cannot search your documents"), "{text}");
    assert!(text.contains("not a language model"), "{text}");
    fake.shutdown().await;
}
