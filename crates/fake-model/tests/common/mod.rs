//! Shared by the integration tests: start a fake on a free port, post to
//! it, and read a stream the way a client must — parsing the SSE by hand
//! and assembling deltas, so the tests check the wire, not our own types.

#![allow(dead_code)] // each test file uses a different part

use fake_model::{Config, FakeModel, Script};
use serde_json::{Value, json};

pub async fn start(script_toml: &str) -> FakeModel {
    start_with(Config { script: Script::from_toml(script_toml).unwrap(), ..Config::default() })
        .await
}

pub async fn start_with(config: Config) -> FakeModel {
    FakeModel::start(config).await.unwrap()
}

pub fn http() -> reqwest::Client {
    reqwest::Client::builder().timeout(std::time::Duration::from_secs(20)).build().unwrap()
}

pub async fn post(fake: &FakeModel, body: &Value) -> reqwest::Response {
    http().post(format!("{}/v1/chat/completions", fake.url())).json(body).send().await.unwrap()
}

/// A request with a system prompt, one user message and the given tools.
pub fn ask(question: &str, tools: &[&str], stream: bool) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|name| {
            json!({"type": "function", "function": {"name": name, "description": "d",
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}})
        })
        .collect();
    let mut body = json!({
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "You are Tamebi."},
            {"role": "user", "content": question},
        ],
        "stream": stream,
    });
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    body
}

/// What a stream said, assembled from its deltas.
#[derive(Debug, Default)]
pub struct Assembled {
    pub chunks: Vec<Value>,
    /// `data: [DONE]` arrived.
    pub done: bool,
    /// The body ended with a transport error (a cut connection).
    pub broken: bool,
    pub role: Option<String>,
    pub text: String,
    /// (id, name, arguments) per call index.
    pub tool_calls: Vec<(String, String, String)>,
    pub finish_reason: Option<String>,
    pub usage: Option<Value>,
}

/// Reads a whole SSE body, tolerating a cut connection.
pub async fn read_stream(response: reqwest::Response) -> Assembled {
    use futures_util::StreamExt as _;
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"].to_str().unwrap().to_string();
    assert!(content_type.starts_with("text/event-stream"), "{content_type}");
    let mut raw = Vec::new();
    let mut broken = false;
    let mut body = response.bytes_stream();
    while let Some(piece) = body.next().await {
        match piece {
            Ok(bytes) => raw.extend_from_slice(&bytes),
            Err(_) => {
                broken = true;
                break;
            }
        }
    }
    let mut assembled = Assembled { broken, ..Assembled::default() };
    let text = String::from_utf8(raw).unwrap();
    for event in text.split("\n\n").filter(|event| !event.trim().is_empty()) {
        let data = event
            .strip_prefix("data: ")
            .unwrap_or_else(|| panic!("not an SSE data event: {event:?}"));
        assert!(!assembled.done, "an event after [DONE]");
        if data == "[DONE]" {
            assembled.done = true;
            continue;
        }
        let chunk: Value = serde_json::from_str(data).unwrap();
        assert_eq!(chunk["object"], "chat.completion.chunk");
        assert!(chunk["id"].as_str().unwrap().starts_with("chatcmpl-"));
        assert!(chunk["created"].is_u64());
        if let Some(usage) = chunk.get("usage").filter(|usage| !usage.is_null()) {
            assert_eq!(chunk["choices"], json!([]));
            assembled.usage = Some(usage.clone());
        }
        for choice in chunk["choices"].as_array().unwrap() {
            assert_eq!(choice["index"], 0);
            let delta = &choice["delta"];
            if let Some(role) = delta["role"].as_str() {
                assert!(assembled.role.is_none(), "role sent twice");
                assert!(assembled.chunks.is_empty(), "role not in the first delta");
                assembled.role = Some(role.to_string());
            }
            if let Some(content) = delta["content"].as_str() {
                assembled.text += content;
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = call["index"].as_u64().unwrap() as usize;
                if let Some(id) = call["id"].as_str() {
                    assert_eq!(
                        index,
                        assembled.tool_calls.len(),
                        "a new call takes the next index"
                    );
                    assert_eq!(call["type"], "function");
                    let name = call["function"]["name"].as_str().unwrap().to_string();
                    let arguments =
                        call["function"]["arguments"].as_str().unwrap_or("").to_string();
                    assembled.tool_calls.push((id.to_string(), name, arguments));
                } else {
                    assert!(
                        call.get("type").is_none(),
                        "only the first delta of a call has a type"
                    );
                    assert!(call["function"].get("name").is_none(), "the name comes once");
                    assembled.tool_calls[index].2 +=
                        call["function"]["arguments"].as_str().unwrap();
                }
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                assembled.finish_reason = Some(reason.to_string());
            }
        }
        assembled.chunks.push(chunk);
    }
    assembled
}

/// A request to the admin endpoint (`/__fake/…`), with the admin token.
pub fn admin(fake: &FakeModel, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
    http().request(method, format!("{}{path}", fake.url())).header(
        fake_model::admin::TOKEN_HEADER,
        fake.admin_token().expect("the admin routes are on"),
    )
}

/// What an admin endpoint answers, as JSON.
pub async fn admin_json(fake: &FakeModel, method: reqwest::Method, path: &str) -> Value {
    admin(fake, method, path).send().await.unwrap().json().await.unwrap()
}

/// Puts `body` to an admin endpoint (the script, the faults).
pub async fn admin_put(fake: &FakeModel, path: &str, body: &Value) -> reqwest::Response {
    admin(fake, reqwest::Method::PUT, path).json(body).send().await.unwrap()
}

pub async fn recorded(fake: &FakeModel) -> Vec<Value> {
    let answer = admin_json(fake, reqwest::Method::GET, "/__fake/requests").await;
    answer["requests"].as_array().unwrap().clone()
}
