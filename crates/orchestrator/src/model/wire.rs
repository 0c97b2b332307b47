//! The request body of `POST /chat/completions`, written from the
//! orchestrator's own types, in the subset of OpenAI's format that every
//! compatible provider accepts.
//!
//! Choices made for the strictest providers: `tools` and `tool_choice` are
//! left out when there are no tools (some refuse an empty list);
//! `stream_options` is sent only with `stream: true` (OpenAI refuses it
//! otherwise); an assistant message that only calls tools has `content:
//! ""` — OpenAI, vLLM, Ollama and llama.cpp read it as empty, while
//! llama-cpp-python refuses `null` (500, "Input should be a valid string")
//! and its chat templates read `message.content`, so a message without the
//! key fails there too (500, "'dict object' has no attribute 'content'");
//! consecutive user
//! messages are joined into one (chat templates that insist roles alternate
//! — Mistral's in vLLM, several in LM Studio — refuse two in a row, and a
//! conversation can hold two: the summary before the kept turns, or a
//! question whose answer failed).
//!
//! Tool parameters are sent plain: the length, count and pattern bounds of
//! a JSON Schema are left out. Servers that constrain sampling by a grammar
//! built from the schema (llama.cpp, llama-cpp-python) expand a
//! `maxLength: 1048576` into a grammar that takes minutes or crashes them;
//! the MCP server checks every bound again when the call arrives, and says
//! what was wrong.

use serde_json::{Value, json};

use super::{ChatRequest, Message, ToolChoice};

/// The request body; `max_tokens` bounds the answer where given.
pub(super) fn request_body(
    model: &str,
    max_tokens: Option<u32>,
    request: &ChatRequest,
    stream: bool,
) -> Value {
    let mut body = json!({
        "model": model,
        "messages": alternating(&request.messages).iter().map(message).collect::<Vec<_>>(),
        "stream": stream,
    });
    if stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    if let Some(max_tokens) = max_tokens {
        body["max_tokens"] = json!(max_tokens);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": plain(&tool.parameters),
                }})
            })
            .collect();
        if let Some(tool_choice) = &request.tool_choice {
            body["tool_choice"] = match tool_choice {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::None => json!("none"),
                ToolChoice::Required => json!("required"),
                ToolChoice::Function(name) => {
                    json!({"type": "function", "function": {"name": name}})
                }
            };
        }
    }
    body
}

/// The messages with each run of user messages joined into one.
fn alternating(messages: &[Message]) -> Vec<Message> {
    let mut joined: Vec<Message> = Vec::with_capacity(messages.len());
    for message in messages {
        match (joined.last_mut(), message) {
            (Some(Message::User(previous)), Message::User(text)) => {
                previous.push_str("\n\n");
                previous.push_str(text);
            }
            _ => joined.push(message.clone()),
        }
    }
    joined
}

fn message(message: &Message) -> Value {
    match message {
        Message::System(text) => json!({"role": "system", "content": text}),
        Message::User(text) => json!({"role": "user", "content": text}),
        Message::Assistant { text, tool_calls } if tool_calls.is_empty() => {
            json!({"role": "assistant", "content": text})
        }
        Message::Assistant { text, tool_calls } => {
            json!({
                "role": "assistant",
                "content": text,
                "tool_calls": tool_calls.iter().map(|call| json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                })).collect::<Vec<_>>(),
            })
        }
        Message::Tool { tool_call_id, content } => {
            json!({"role": "tool", "tool_call_id": tool_call_id, "content": content})
        }
    }
}

/// Schema keywords left out of what the model is sent (see the module).
const BOUNDS: &[&str] = &[
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "maxProperties",
    "minProperties",
];

/// `schema` without [`BOUNDS`], at every level that is a schema: the
/// values of `properties`, `$defs` and `definitions`, `items`,
/// `additionalProperties`, and the branches of `anyOf`, `oneOf`, `allOf`.
/// A property that happens to be named `pattern` stays.
fn plain(schema: &Value) -> Value {
    let Value::Object(schema) = schema else { return schema.clone() };
    let mut out = serde_json::Map::new();
    for (key, value) in schema {
        if BOUNDS.contains(&key.as_str()) {
            continue;
        }
        let value = match (key.as_str(), value) {
            ("properties" | "$defs" | "definitions", Value::Object(named)) => Value::Object(
                named.iter().map(|(name, schema)| (name.clone(), plain(schema))).collect(),
            ),
            ("anyOf" | "oneOf" | "allOf", Value::Array(branches)) => {
                Value::Array(branches.iter().map(plain).collect())
            }
            ("items" | "additionalProperties" | "not", schema) => plain(schema),
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ToolCall, ToolDefinition};

    #[test]
    fn a_conversation_with_tools_is_written_as_openai_reads_it() {
        let request = ChatRequest {
            messages: vec![
                Message::System("Tu es Tamebi.".into()),
                Message::User("Où est le rapport ?".into()),
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![ToolCall {
                        id: "call_1".into(),
                        name: "files_search".into(),
                        arguments: r#"{"name":"rapport"}"#.into(),
                    }],
                },
                Message::Tool { tool_call_id: "call_1".into(), content: "/Rapport.odt".into() },
                Message::Assistant { text: "Dans /Rapport.odt.".into(), tool_calls: vec![] },
            ],
            tools: vec![ToolDefinition {
                name: "files_search".into(),
                description: "Find files by name.".into(),
                parameters: json!({"type": "object", "properties": {"name": {"type": "string"}}}),
            }],
            tool_choice: Some(ToolChoice::Function("files_search".into())),
        };
        let expected = json!({
            "model": "m",
            "stream": true,
            "stream_options": {"include_usage": true},
            "messages": [
                {"role": "system", "content": "Tu es Tamebi."},
                {"role": "user", "content": "Où est le rapport ?"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "files_search", "arguments": "{\"name\":\"rapport\"}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "/Rapport.odt"},
                {"role": "assistant", "content": "Dans /Rapport.odt."},
            ],
            "tools": [{"type": "function", "function": {"name": "files_search",
                "description": "Find files by name.",
                "parameters": {"type": "object", "properties": {"name": {"type": "string"}}}}}],
            "tool_choice": {"type": "function", "function": {"name": "files_search"}},
        });
        assert_eq!(request_body("m", None, &request, true), expected);
    }

    #[test]
    fn consecutive_user_messages_are_sent_as_one() {
        let request = ChatRequest {
            messages: vec![
                Message::System("s".into()),
                Message::User("<conversation_summary>x</conversation_summary>".into()),
                Message::User("next".into()),
                Message::Assistant { text: "ok".into(), tool_calls: vec![] },
                Message::User("again".into()),
            ],
            ..ChatRequest::default()
        };
        let body = request_body("m", None, &request, false);
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["system", "user", "assistant", "user"]);
        assert_eq!(
            body["messages"][1]["content"],
            "<conversation_summary>x</conversation_summary>\n\nnext"
        );
    }

    #[test]
    fn without_tools_or_streaming_the_optional_fields_are_left_out() {
        let request = ChatRequest {
            messages: vec![Message::User("a".into())],
            tools: vec![],
            tool_choice: Some(ToolChoice::Auto),
        };
        let expected = json!({"model": "m", "stream": false,
            "messages": [{"role": "user", "content": "a"}]});
        assert_eq!(request_body("m", None, &request, false), expected);
    }

    #[test]
    fn max_tokens_is_sent_when_configured() {
        let request =
            ChatRequest { messages: vec![Message::User("a".into())], ..ChatRequest::default() };
        assert_eq!(request_body("m", Some(512), &request, false)["max_tokens"], 512);
        assert!(request_body("m", None, &request, false).get("max_tokens").is_none());
    }

    #[test]
    fn tool_parameters_are_sent_without_length_count_or_pattern_bounds() {
        let parameters = json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "minLength": 1, "maxLength": 200, "description": "d"},
                "content": {"type": "string", "maxLength": 1_048_576},
                "paths": {"type": "array", "maxItems": 20, "items": {"type": "string", "pattern": "^/"}},
                "when": {"anyOf": [{"type": "string", "maxLength": 40}, {"type": "null"}]},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            },
            "$defs": {"Id": {"type": "string", "maxLength": 64}},
        });
        let request = ChatRequest {
            messages: vec![Message::User("a".into())],
            tools: vec![ToolDefinition { name: "t".into(), description: "d".into(), parameters }],
            tool_choice: Some(ToolChoice::Auto),
        };
        let sent = &request_body("m", None, &request, false)["tools"][0]["function"]["parameters"];
        let expected = json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "d"},
                "content": {"type": "string"},
                "paths": {"type": "array", "items": {"type": "string"}},
                "when": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            },
            "$defs": {"Id": {"type": "string"}},
        });
        assert_eq!(*sent, expected);
    }
}
