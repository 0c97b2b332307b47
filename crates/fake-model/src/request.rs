//! What a client sends to `/v1/chat/completions`, read the way real servers
//! read it: lenient about what they ignore (unknown fields, content as a
//! string or as parts, extra tool types), strict where OpenAI is strict
//! (`messages` required and non-empty, known roles, every tool call
//! answered by a tool message and no tool message without its call).
//!
//! The strict half matters most: an orchestrator that drops a tool result or
//! replays a call without its answer works against a lenient local server
//! and fails against OpenAI. The fake fails it first, with OpenAI's message.

use crate::error::ApiError;
use serde::Deserialize;
use serde_json::Value;

/// The roles OpenAI accepts, in the order its error message lists them.
pub const ROLES: &[&str] = &["system", "assistant", "user", "function", "tool", "developer"];

/// A request that passed validation.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    /// The body exactly as received, for the recorder.
    pub body: Value,
    pub model: Option<String>,
    pub messages: Vec<Message>,
    pub stream: bool,
    pub include_usage: bool,
    /// Names of the function tools offered, in order.
    pub tool_names: Vec<String>,
    /// `tool_choice` as sent; absent is `None`.
    pub tool_choice: Option<Value>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Message {
    pub role: String,
    #[serde(default)]
    pub content: Option<Content>,
    #[serde(default)]
    pub tool_calls: Option<Vec<MessageToolCall>>,
    #[serde(default)]
    pub tool_call_id: Option<String>,
}

/// A message's content: a string, or parts of which the `text` ones count.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Parts(Vec<Value>),
}

#[derive(Debug, Clone, Deserialize)]
pub struct MessageToolCall {
    pub id: String,
    pub function: MessageFunction,
}

#[derive(Debug, Clone, Deserialize)]
pub struct MessageFunction {
    pub name: String,
    /// A JSON text per OpenAI; some clients send an object, which is read too.
    #[serde(default)]
    pub arguments: Value,
}

#[derive(Debug, Deserialize)]
struct RawRequest {
    #[serde(default)]
    model: Option<String>,
    messages: Vec<Message>,
    #[serde(default)]
    stream: Option<bool>,
    #[serde(default)]
    stream_options: Option<RawStreamOptions>,
    #[serde(default)]
    tools: Option<Vec<Value>>,
    #[serde(default)]
    tool_choice: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct RawStreamOptions {
    #[serde(default)]
    include_usage: Option<bool>,
}

/// `text` without the `<environment>` blocks the orchestrator puts before
/// the latest question (the block and the blank line after it): what the
/// user wrote, which is what a script's `last_user_*` and the demo match.
pub fn without_environment(text: &str) -> String {
    let mut rest = text;
    let mut kept = String::new();
    while let Some(start) = rest.find("<environment>\n") {
        let Some(length) = rest[start..].find("\n</environment>") else { break };
        kept.push_str(&rest[..start]);
        let after = &rest[start + length + "\n</environment>".len()..];
        rest = after.strip_prefix("\n\n").unwrap_or(after);
    }
    kept.push_str(rest);
    kept
}

impl Message {
    /// What the user wrote: [`Message::text`] without an environment block.
    pub fn question(&self) -> String {
        without_environment(&self.text())
    }

    /// The text of the content; parts other than text are skipped.
    pub fn text(&self) -> String {
        match &self.content {
            None => String::new(),
            Some(Content::Text(text)) => text.clone(),
            Some(Content::Parts(parts)) => parts
                .iter()
                .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

impl MessageFunction {
    /// The arguments as a JSON value (a text that is not JSON stays a string).
    pub fn arguments_value(&self) -> Value {
        match &self.arguments {
            Value::String(text) => {
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
            }
            other => other.clone(),
        }
    }
}

/// A body that is a JSON object, or OpenAI's 400 for one that is not: what
/// every `/v1` route reads first.
pub fn json_object(bytes: &[u8]) -> Result<Value, ApiError> {
    let body: Value = serde_json::from_slice(bytes).map_err(|_| {
        ApiError::invalid(
            "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
            None,
            None,
        )
    })?;
    if !body.is_object() {
        return Err(ApiError::invalid(
            "Invalid type for request body: expected an object.",
            None,
            Some("invalid_type"),
        ));
    }
    Ok(body)
}

impl ChatRequest {
    /// Parses and validates a body. The errors are OpenAI's, word for word
    /// where we know them.
    pub fn parse(bytes: &[u8]) -> Result<ChatRequest, ApiError> {
        let body = json_object(bytes)?;
        if body.get("messages").is_none_or(Value::is_null) {
            return Err(ApiError::invalid(
                "Missing required parameter: 'messages'.",
                Some("messages"),
                Some("missing_required_parameter"),
            ));
        }
        let raw: RawRequest = serde_json::from_value(body.clone()).map_err(|error| {
            ApiError::invalid(format!("Invalid request body: {error}."), None, Some("invalid_type"))
        })?;
        if raw.messages.is_empty() {
            return Err(ApiError::invalid(
                "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
                Some("messages"),
                Some("empty_array"),
            ));
        }
        validate_messages(&raw.messages)?;
        let tool_names = tool_names(raw.tools.as_deref().unwrap_or_default())?;
        Ok(ChatRequest {
            model: raw.model,
            stream: raw.stream.unwrap_or(false),
            include_usage: raw
                .stream_options
                .and_then(|options| options.include_usage)
                .unwrap_or(false),
            tool_names,
            tool_choice: raw.tool_choice.filter(|choice| !choice.is_null()),
            messages: raw.messages,
            body,
        })
    }

    /// The number of assistant turns so far: the script's `turn`.
    pub fn turn(&self) -> u32 {
        let count = self.messages.iter().filter(|message| message.role == "assistant").count();
        u32::try_from(count).unwrap_or(u32::MAX)
    }

    pub fn last_message(&self) -> &Message {
        self.messages.last().expect("validated: messages is not empty")
    }

    /// The last message of role `user`.
    pub fn last_user(&self) -> Option<&Message> {
        self.messages.iter().rev().find(|message| message.role == "user")
    }

    /// The last message of role `tool`.
    pub fn last_tool_result(&self) -> Option<&Message> {
        self.messages.iter().rev().find(|message| message.role == "tool")
    }

    /// The call a tool message answers, found in the assistant messages.
    pub fn call_answered_by(&self, tool_message: &Message) -> Option<&MessageToolCall> {
        let id = tool_message.tool_call_id.as_deref()?;
        self.messages
            .iter()
            .flat_map(|message| message.tool_calls.iter().flatten())
            .rev()
            .find(|call| call.id == id)
    }

    /// Streaming with tools and automatic tool choice: what llama.cpp's
    /// server refuses.
    /// Whether an assistant message replays a tool call whose arguments
    /// are a text that is not JSON.
    pub fn replays_unparsable_arguments(&self) -> bool {
        let mut calls =
            self.messages.iter().flat_map(|message| message.tool_calls.iter().flatten());
        calls.any(|call| match &call.function.arguments {
            Value::String(text) => serde_json::from_str::<Value>(text).is_err(),
            _ => false,
        })
    }

    pub fn streams_with_automatic_tools(&self) -> bool {
        let automatic = match &self.tool_choice {
            None => true,
            Some(Value::String(choice)) => choice == "auto",
            Some(_) => false,
        };
        self.stream && !self.tool_names.is_empty() && automatic
    }
}

fn validate_messages(messages: &[Message]) -> Result<(), ApiError> {
    // Tool calls not yet answered, with the index of the assistant message.
    let mut open_calls: Vec<String> = Vec::new();
    let mut open_since: Option<usize> = None;
    for (index, message) in messages.iter().enumerate() {
        if !ROLES.contains(&message.role.as_str()) {
            return Err(ApiError::invalid(
                format!(
                    "Invalid value: '{}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.",
                    message.role
                ),
                Some(&format!("messages[{index}].role")),
                Some("invalid_value"),
            ));
        }
        if message.role == "tool" {
            let Some(id) = message.tool_call_id.as_deref() else {
                return Err(ApiError::invalid(
                    format!("Missing required parameter: 'messages[{index}].tool_call_id'."),
                    Some(&format!("messages[{index}].tool_call_id")),
                    Some("missing_required_parameter"),
                ));
            };
            let Some(position) = open_calls.iter().position(|open| open == id) else {
                return Err(ApiError::invalid(
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
                    Some(&format!("messages.[{index}].role")),
                    None,
                ));
            };
            open_calls.remove(position);
            continue;
        }
        if let Some(since) = open_since.take().filter(|_| !open_calls.is_empty()) {
            return Err(unanswered_calls(since, &open_calls));
        }
        open_calls.clear();
        if message.role == "assistant" {
            let calls = message.tool_calls.as_deref().unwrap_or_default();
            if !calls.is_empty() {
                open_calls = calls.iter().map(|call| call.id.clone()).collect();
                open_since = Some(index);
            }
        }
    }
    match open_since {
        Some(since) if !open_calls.is_empty() => Err(unanswered_calls(since, &open_calls)),
        _ => Ok(()),
    }
}

fn unanswered_calls(index: usize, ids: &[String]) -> ApiError {
    ApiError::invalid(
        format!(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
            ids.join(", ")
        ),
        Some(&format!("messages.[{index}].role")),
        None,
    )
}

/// The names of the function tools; other tool types are ignored.
fn tool_names(tools: &[Value]) -> Result<Vec<String>, ApiError> {
    let mut names = Vec::new();
    for (index, tool) in tools.iter().enumerate() {
        if tool.get("type").and_then(Value::as_str).unwrap_or("function") != "function" {
            continue;
        }
        match tool.pointer("/function/name").and_then(Value::as_str) {
            Some(name) => names.push(name.to_string()),
            None => {
                return Err(ApiError::invalid(
                    format!("Missing required parameter: 'tools[{index}].function.name'."),
                    Some(&format!("tools[{index}].function.name")),
                    Some("missing_required_parameter"),
                ));
            }
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(body: Value) -> Result<ChatRequest, ApiError> {
        ChatRequest::parse(body.to_string().as_bytes())
    }

    fn rejected(body: Value) -> (Option<String>, String) {
        match parse(body) {
            Ok(_) => panic!("accepted"),
            Err(ApiError::InvalidRequest { message, param, .. }) => (param, message),
            Err(other) => panic!("not a 400: {other:?}"),
        }
    }

    fn call(id: &str) -> Value {
        json!({"id": id, "type": "function", "function": {"name": "files_grep", "arguments": "{}"}})
    }

    #[test]
    fn the_environment_block_is_not_part_of_the_question() {
        let block = "<environment>\nUser: Alice (uid alice)\n- mail: reachable\n</environment>\n\n";
        assert_eq!(
            without_environment(&format!("{block}Where is my calendar?")),
            "Where is my calendar?"
        );
        assert_eq!(
            without_environment(&format!("Please break\n\n{block}Are you there?")),
            "Please break\n\nAre you there?"
        );
        assert_eq!(without_environment("no block here"), "no block here");
        assert_eq!(without_environment("<environment>\nunclosed"), "<environment>\nunclosed");
    }

    #[test]
    fn unknown_fields_and_content_parts_are_accepted() {
        let request = parse(json!({
            "model": "m", "temperature": 0.2, "whatever": {"x": 1},
            "messages": [
                {"role": "system", "content": "S", "name": "x"},
                {"role": "user", "content": [{"type": "text", "text": "hello"}, {"type": "image_url", "image_url": {}}]},
            ],
            "tools": [{"type": "function", "function": {"name": "files_grep", "parameters": {}}}, {"type": "custom", "custom": {}}],
            "stream": true, "stream_options": {"include_usage": true},
        }))
        .unwrap();
        assert_eq!(request.last_user().unwrap().text(), "hello");
        assert_eq!(request.tool_names, ["files_grep"]);
        assert!(request.stream);
        assert!(request.include_usage);
        assert_eq!(request.turn(), 0);
    }

    #[test]
    fn bodies_openai_refuses_are_refused() {
        assert!(matches!(ChatRequest::parse(b"{not json"), Err(ApiError::InvalidRequest { .. })));
        assert_eq!(rejected(json!({"model": "m"})).0.as_deref(), Some("messages"));
        assert_eq!(rejected(json!({"messages": []})).0.as_deref(), Some("messages"));
        assert_eq!(rejected(json!({"messages": "hi"})).0, None);
        assert_eq!(
            rejected(json!({"messages": [{"role": "robot", "content": "x"}]})).0.as_deref(),
            Some("messages[0].role")
        );
        assert_eq!(
            rejected(json!({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {}}]}))
                .0
                .as_deref(),
            Some("tools[0].function.name")
        );
    }

    #[test]
    fn every_tool_call_needs_its_answer() {
        let (param, message) = rejected(json!({"messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": null, "tool_calls": [call("a"), call("b")]},
            {"role": "tool", "tool_call_id": "a", "content": "r"},
            {"role": "user", "content": "q2"},
        ]}));
        assert_eq!(param.as_deref(), Some("messages.[1].role"));
        assert!(message.ends_with("did not have response messages: b"), "{message}");
        // Also at the very end of the conversation.
        let (_, message) = rejected(json!({"messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "tool_calls": [call("a")]},
        ]}));
        assert!(message.contains("response messages: a"), "{message}");
    }

    #[test]
    fn a_tool_message_needs_its_call() {
        let (param, message) = rejected(json!({"messages": [
            {"role": "user", "content": "q"},
            {"role": "tool", "tool_call_id": "a", "content": "r"},
        ]}));
        assert_eq!(param.as_deref(), Some("messages.[1].role"));
        assert!(message.contains("must be a response to a preceeding message"), "{message}");
        let (param, _) = rejected(json!({"messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "tool_calls": [call("a")]},
            {"role": "tool", "content": "r"},
        ]}));
        assert_eq!(param.as_deref(), Some("messages[2].tool_call_id"));
    }

    #[test]
    fn a_complete_tool_round_is_read() {
        let request = parse(json!({"messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "", "tool_calls": [call("a"), call("b")]},
            {"role": "tool", "tool_call_id": "b", "content": "rb"},
            {"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": "ra"}]},
        ]}))
        .unwrap();
        assert_eq!(request.turn(), 1);
        let last = request.last_tool_result().unwrap();
        assert_eq!(last.text(), "ra");
        assert_eq!(request.call_answered_by(last).unwrap().id, "a");
        assert_eq!(request.last_message().role, "tool");
    }

    #[test]
    fn automatic_tool_choice_is_absent_or_auto() {
        let base = json!({"messages": [{"role": "user", "content": "q"}], "stream": true,
            "tools": [{"type": "function", "function": {"name": "t"}}]});
        assert!(parse(base.clone()).unwrap().streams_with_automatic_tools());
        let mut auto = base.clone();
        auto["tool_choice"] = json!("auto");
        assert!(parse(auto).unwrap().streams_with_automatic_tools());
        let mut required = base.clone();
        required["tool_choice"] = json!("required");
        assert!(!parse(required).unwrap().streams_with_automatic_tools());
        let mut not_streamed = base.clone();
        not_streamed["stream"] = json!(false);
        assert!(!parse(not_streamed).unwrap().streams_with_automatic_tools());
        let mut no_tools = base;
        no_tools["tools"] = json!([]);
        assert!(!parse(no_tools).unwrap().streams_with_automatic_tools());
    }
}
