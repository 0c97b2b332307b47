//! What the browser posts: `useChat`'s `DefaultChatTransport` body
//! `{id, messages, trigger, messageId?}`, or the trimmed `{id, message,
//! trigger, messageId?}` our page sends through `prepareSendMessagesRequest`.
//!
//! Only the last message is read. The server keeps its own copy of the
//! conversation, so the earlier messages the browser may send are ignored
//! rather than trusted, and an approval answer is only a claim that the
//! caller checks against the approval it stored. The body is read as a
//! `serde_json::Value` and picked apart by hand so that every failure maps
//! to a sentence the user can act on, never to a parser's message.

use serde_json::{Map, Value};

/// Bytes of a user's message text.
pub const TEXT_BYTES_MAX: usize = 100_000;
/// Approval answers in one post.
pub const APPROVALS_MAX: usize = 64;
/// Bytes of a conversation or message id.
pub const ID_BYTES_MAX: usize = 100;

/// A post, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatPost {
    pub conversation_id: String,
    /// The message the post continues, when the client names one (it does
    /// for approval answers: the assistant message holding the calls).
    pub message_id: Option<String>,
    pub input: PostInput,
}

/// What the last message asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostInput {
    /// A new question: the text parts of a user message.
    UserText(String),
    /// The user's answers to pending approvals.
    Approvals(Vec<ApprovalResponse>),
}

/// The user's answer to one approval request, as the browser claims it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalResponse {
    pub approval_id: String,
    pub tool_call_id: String,
    pub approved: bool,
    pub reason: Option<String>,
}

/// Why a post was refused. Its `Display` is the sentence the page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PostError {
    #[error("The request could not be read. Reload the page and send your message again.")]
    Unreadable,
    #[error("This conversation's id is not valid. Start a new conversation and ask again.")]
    ConversationId,
    #[error("The request names an invalid message. Reload the page and send your message again.")]
    MessageId,
    #[error("The request carried no message. Type your message and send it again.")]
    NoMessage,
    #[error("Regenerating an answer is not supported yet. Send your question again instead.")]
    Regenerate,
    #[error("This kind of request is not supported. Reload the page and send your message again.")]
    UnknownTrigger,
    #[error("Only your messages and approval answers can be sent. Reload the page and try again.")]
    UnknownRole,
    #[error("The message is empty. Type your question and send it again.")]
    EmptyText,
    #[error("The message is too long (more than 100000 bytes). Shorten it and send it again.")]
    TextTooLong,
    #[error("No answer to an approval was found. Approve or deny the action again.")]
    NoApprovals,
    #[error("Too many approvals at once (at most 64). Reload the page and answer them again.")]
    TooManyApprovals,
}

/// Reads what the browser posted; see the module documentation.
pub fn parse_chat_post(body: &[u8]) -> Result<ChatPost, PostError> {
    let value: Value = serde_json::from_slice(body).map_err(|_| PostError::Unreadable)?;
    let post = value.as_object().ok_or(PostError::Unreadable)?;
    check_trigger(post)?;
    let conversation_id = optional_string(post, "id")?.ok_or(PostError::ConversationId)?;
    if !is_valid_id(conversation_id) {
        return Err(PostError::ConversationId);
    }
    let message_id = message_id(post)?;
    let input = read_last_message(last_message(post)?)?;
    Ok(ChatPost { conversation_id: conversation_id.to_owned(), message_id, input })
}

/// Non-empty, at most [`ID_BYTES_MAX`] bytes, visible ASCII only: safe to
/// log, to put in a URL and to compare byte for byte.
fn is_valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= ID_BYTES_MAX && id.bytes().all(|byte| byte.is_ascii_graphic())
}

/// A field that may be missing or `null`, but is a string when present.
fn optional_string<'a>(
    object: &'a Map<String, Value>,
    name: &str,
) -> Result<Option<&'a str>, PostError> {
    match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(PostError::Unreadable),
    }
}

fn check_trigger(post: &Map<String, Value>) -> Result<(), PostError> {
    match optional_string(post, "trigger")? {
        None | Some("submit-message") => Ok(()),
        Some("regenerate-message") => Err(PostError::Regenerate),
        Some(_) => Err(PostError::UnknownTrigger),
    }
}

/// An empty `messageId` counts as none.
fn message_id(post: &Map<String, Value>) -> Result<Option<String>, PostError> {
    match optional_string(post, "messageId")? {
        None | Some("") => Ok(None),
        Some(id) if is_valid_id(id) => Ok(Some(id.to_owned())),
        Some(_) => Err(PostError::MessageId),
    }
}

/// The trimmed form's `message`, else the last of `messages`.
fn last_message(post: &Map<String, Value>) -> Result<&Map<String, Value>, PostError> {
    let message = match (post.get("message"), post.get("messages")) {
        (Some(message), _) if !message.is_null() => message,
        (_, Some(Value::Array(messages))) => messages.last().ok_or(PostError::NoMessage)?,
        (_, None | Some(Value::Null)) => return Err(PostError::NoMessage),
        (_, Some(_)) => return Err(PostError::Unreadable),
    };
    message.as_object().ok_or(PostError::Unreadable)
}

fn read_last_message(message: &Map<String, Value>) -> Result<PostInput, PostError> {
    let parts = match message.get("parts") {
        Some(Value::Array(parts)) => parts.as_slice(),
        _ => return Err(PostError::Unreadable),
    };
    match optional_string(message, "role")? {
        Some("user") => user_text(parts).map(PostInput::UserText),
        Some("assistant") => approvals(parts).map(PostInput::Approvals),
        _ => Err(PostError::UnknownRole),
    }
}

/// The text parts joined by a blank line; files and other parts are ignored.
fn user_text(parts: &[Value]) -> Result<String, PostError> {
    let texts: Vec<&str> = parts
        .iter()
        .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|part| part.get("text").and_then(Value::as_str))
        .collect();
    let separators = texts.len().saturating_sub(1) * 2;
    if texts.iter().map(|text| text.len()).sum::<usize>() + separators > TEXT_BYTES_MAX {
        return Err(PostError::TextTooLong);
    }
    let text = texts.join("\n\n");
    if text.trim().is_empty() {
        return Err(PostError::EmptyText);
    }
    Ok(text)
}

/// Every tool part (`tool-*` or `dynamic-tool`) the user has answered.
fn approvals(parts: &[Value]) -> Result<Vec<ApprovalResponse>, PostError> {
    let responses: Vec<ApprovalResponse> = parts.iter().filter_map(approval_response).collect();
    if responses.is_empty() {
        return Err(PostError::NoApprovals);
    }
    if responses.len() > APPROVALS_MAX {
        return Err(PostError::TooManyApprovals);
    }
    let reason_bytes =
        |response: &ApprovalResponse| response.reason.as_ref().map_or(0, String::len);
    if responses.iter().any(|response| reason_bytes(response) > TEXT_BYTES_MAX) {
        return Err(PostError::TextTooLong);
    }
    Ok(responses)
}

/// A part in state `approval-responded` with `approval: {id, approved,
/// reason?}`; anything else is not an answer and is skipped.
fn approval_response(part: &Value) -> Option<ApprovalResponse> {
    let kind = part.get("type")?.as_str()?;
    if !(kind.starts_with("tool-") || kind == "dynamic-tool") {
        return None;
    }
    if part.get("state")?.as_str()? != "approval-responded" {
        return None;
    }
    let approval = part.get("approval")?;
    let reason = match approval.get("reason") {
        None | Some(Value::Null) => None,
        Some(reason) => Some(reason.as_str()?.to_owned()),
    };
    Some(ApprovalResponse {
        approval_id: approval.get("id")?.as_str()?.to_owned(),
        tool_call_id: part.get("toolCallId")?.as_str()?.to_owned(),
        approved: approval.get("approved")?.as_bool()?,
        reason,
    })
}
