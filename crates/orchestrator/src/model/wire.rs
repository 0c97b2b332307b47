//! The request body of `POST /chat/completions`, written from the
//! orchestrator's own types, in the subset of OpenAI's format that every
//! compatible provider accepts.
//!
//! Choices made for the strictest providers: `tools` and `tool_choice` are
//! left out when there are no tools (some refuse an empty list);
//! `stream_options` is sent only with `stream: true` (OpenAI refuses it
//! otherwise); an assistant message that only calls tools has `content:
//! null`, not `""`; consecutive user messages are joined into one (chat
//! templates that insist roles alternate — Mistral's in vLLM, several in LM
//! Studio — refuse two in a row, and a conversation can hold two: the
//! summary before the kept turns, or a question whose answer failed).

use serde_json::{Value, json};

use super::{ChatRequest, Message, ToolChoice};

pub(super) fn request_body(model: &str, request: &ChatRequest, stream: bool) -> Value {
    let mut body = json!({
        "model": model,
        "messages": alternating(&request.messages).iter().map(message).collect::<Vec<_>>(),
        "stream": stream,
    });
    if stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
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
        Message::Assistant { text, tool_calls } => json!({
            "role": "assistant",
            "content": if text.is_empty() { Value::Null } else { json!(text) },
            "tool_calls": tool_calls.iter().map(|call| json!({
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            })).collect::<Vec<_>>(),
        }),
        Message::Tool { tool_call_id, content } => {
            json!({"role": "tool", "tool_call_id": tool_call_id, "content": content})
        }
    }
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
                {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "files_search", "arguments": "{\"name\":\"rapport\"}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "/Rapport.odt"},
                {"role": "assistant", "content": "Dans /Rapport.odt."},
            ],
            "tools": [{"type": "function", "function": {"name": "files_search",
                "description": "Find files by name.",
                "parameters": {"type": "object", "properties": {"name": {"type": "string"}}}}}],
            "tool_choice": {"type": "function", "function": {"name": "files_search"}},
        });
        assert_eq!(request_body("m", &request, true), expected);
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
        let body = request_body("m", &request, false);
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
        assert_eq!(request_body("m", &request, false), expected);
    }
}
