//! What the loop says to a model and hears back, as values: the request,
//! the conversation's messages, tool definitions and calls, the events an
//! answer is made of, and how an answer fails.
//!
//! These are the agent's types, not the wire's: they are not `Serialize`.
//! The orchestrator's OpenAI-compatible client writes them as a provider's
//! request and reads a provider's answer back into them; a test's stand-in
//! model builds them directly.

mod error;

pub use error::ModelError;

/// What the model is asked.
#[derive(Clone, Debug, Default)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDefinition>,
    /// The provider's default (`auto` when there are tools) when `None`.
    pub tool_choice: Option<ToolChoice>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    System(String),
    User(String),
    /// What the model said before, with the tool calls it made.
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
    },
    /// A tool's result, answering the call with this id.
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// A function the model may call; `parameters` is a JSON Schema object.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolChoice {
    Auto,
    None,
    Required,
    /// Force this one function.
    Function(String),
}

/// One complete tool call. `arguments` is the JSON text the model wrote,
/// unparsed: it may be invalid, and saying so is the caller's job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// What an answer is made of, in order: text deltas, complete tool calls,
/// then one `Finish`, then `Usage` when the provider reported it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelEvent {
    TextDelta(String),
    /// Emitted once the call is complete (at the finish), never in pieces.
    ToolCall(ToolCall),
    Finish {
        reason: FinishReason,
    },
    Usage {
        prompt_tokens: u64,
        completion_tokens: u64,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    /// The answer hit the token limit.
    Length,
    ToolCalls,
    ContentFilter,
    /// A reason this client does not know, as the provider spelled it.
    Other(String),
}
