//! The worked example in docs/fake-model.md is a real script that does
//! what the page says, so the manual cannot drift from the code.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::{post, read_stream, start};
use serde_json::{Value, json};

fn documented_script() -> String {
    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/fake-model.md"))
            .unwrap();
    let start = page.find("```toml\n").expect("the page has a TOML example") + "```toml\n".len();
    let length = page[start..].find("```").unwrap();
    page[start..start + length].to_string()
}

fn body(messages: Value) -> Value {
    json!({
        "model": "m",
        "messages": messages,
        "tools": [{"type": "function", "function": {"name": "files_grep"}}, {"type": "function", "function": {"name": "files_read"}}],
        "stream": true,
    })
}

#[tokio::test]
async fn the_documented_example_does_what_the_page_says() {
    let fake = start(&documented_script()).await;
    let question = json!([{"role": "user", "content": "Quel est le budget d'Apollo ?"}]);
    let stream = read_stream(post(&fake, &body(question)).await).await;
    assert_eq!(stream.tool_calls[0].1, "files_grep");
    let (id, name, arguments) = stream.tool_calls[0].clone();

    let after = json!([
        {"role": "user", "content": "Quel est le budget d'Apollo ?"},
        {"role": "assistant", "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": id, "content": "- Projects/Apollo/CR-reunion-mars.docx — §3. Budget prévisionnel (fileid 1, offset 0, 9 bytes)\n  120 k€"},
    ]);
    let stream = read_stream(post(&fake, &body(after)).await).await;
    assert!(stream.text.contains("§3. Budget prévisionnel, Projects/Apollo/CR-reunion-mars.docx"));

    let summary = json!([{"role": "user", "content": "Please summarise this conversation"}]);
    let response = post(&fake, &body(summary.clone())).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "2");
    let stream = read_stream(post(&fake, &body(summary)).await).await;
    assert!(stream.text.starts_with("Decisions:"));

    let broken = json!([{"role": "user", "content": "break it"}]);
    let stream = read_stream(post(&fake, &body(broken)).await).await;
    assert!(stream.broken);
    assert_eq!(stream.tool_calls[0].0, "call_broken");

    let unmatched = json!([{"role": "user", "content": "hello"}]);
    let stream = read_stream(post(&fake, &body(unmatched)).await).await;
    assert!(stream.text.starts_with(
        "[fake-model] No script rule matched this request (turn 0, last message from user: «hello»)"
    ));
    fake.shutdown().await;
}
