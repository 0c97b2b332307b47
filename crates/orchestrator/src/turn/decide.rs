//! What a post decides, stored before anything runs: the user's new
//! message, or the user's decisions on the calls waiting for approval.
//!
//! Decisions are checked against what the server stored when it asked:
//! each posted response must name a pending approval of this
//! conversation and its tool call, every pending call must be decided, and
//! what runs is the stored call (tool and exact arguments, whose hash is
//! checked again) — never the browser's copy. A new message while calls
//! wait denies them: the user moved on. A call a restart interrupted gets
//! a result saying so, so the model never sees a call without an answer.

use super::{Services, Turn, append, load};
use crate::model::ToolCall;
use crate::store::{StoreError, arguments_hash, chat, now_ms};
use crate::tools::{self, Caller};
use crate::transcript::{Entry, ToolEntry, ToolState, unanswered_calls};
use crate::ui_stream::{ApprovalResponse, PostInput};
use agent::Resolution;
use http::StatusCode;

/// What the model reads for a call the user left undecided.
pub const MOVED_ON_TEXT: &str = "The user did not approve this call and sent a new message \
instead; it was not performed. Do not repeat it unless the user asks.";
/// What the model reads for a call a restart interrupted.
pub const INTERRUPTED_TEXT: &str = "This call was interrupted before it finished (the service \
restarted); its effect is unknown. Check before calling it again.";

/// A post that cannot be taken; nothing was stored.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error("This conversation does not exist (it may have been deleted). Start a new one.")]
    NotFound,
    #[error("{0}")]
    Conflict(&'static str),
    #[error("The assistant's storage is unavailable right now. Try again in a moment.")]
    Store(#[from] StoreError),
}

impl TurnError {
    pub fn status(&self) -> StatusCode {
        match self {
            TurnError::NotFound => StatusCode::NOT_FOUND,
            TurnError::Conflict(_) => StatusCode::CONFLICT,
            TurnError::Store(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

/// A conversation's title: the start of its first question.
const TITLE_CHARS_MAX: usize = 80;

pub(super) async fn record(services: &Services, turn: &Turn) -> Result<Vec<Resolution>, TurnError> {
    let uid = turn.identity.uid.as_str();
    let conversation_id = turn.post.conversation_id.as_str();
    let caller = Caller { uid: uid.to_string(), conversation_id: conversation_id.to_string() };
    match &turn.post.input {
        PostInput::UserText(text) => {
            let title: String = text.chars().take(TITLE_CHARS_MAX).collect();
            let (owner, id) = (uid.to_string(), conversation_id.to_string());
            let owned = services
                .chat
                .run(move |c| chat::ensure_conversation(c, &owner, &id, title.trim(), now_ms()))
                .await?;
            if !owned {
                return Err(TurnError::NotFound);
            }
            let entries = load(&services.chat, uid, conversation_id).await?;
            let pending = pending(services, uid, conversation_id).await?;
            for call in unanswered_calls(&strip(&entries)) {
                let entry = match pending.iter().find(|a| a.tool_call_id == call.id) {
                    Some(approval) => {
                        let (owner, id) = (uid.to_string(), approval.approval_id.clone());
                        services
                            .chat
                            .run(move |c| chat::decide(c, &owner, &id, chat::Decision::Denied))
                            .await?;
                        tools::record_denied(&services.audit, &caller, &call).await;
                        closing(&call, MOVED_ON_TEXT, ToolState::Denied)
                    }
                    None => closing(&call, INTERRUPTED_TEXT, ToolState::Error),
                };
                append(&services.chat, uid, conversation_id, entry).await?;
            }
            let entry = Entry::User { text: text.clone() };
            append(&services.chat, uid, conversation_id, entry).await?;
            Ok(Vec::new())
        }
        PostInput::Approvals(responses) => {
            let entries = load(&services.chat, uid, conversation_id).await?;
            if entries.is_empty() {
                return Err(TurnError::NotFound);
            }
            let pending = pending(services, uid, conversation_id).await?;
            let unanswered = unanswered_calls(&strip(&entries));
            let resolutions = match_decisions(&unanswered, &pending, responses)?;
            for call in &unanswered {
                if !resolutions.iter().any(|(r, _)| r.call.id == call.id) {
                    let entry = closing(call, INTERRUPTED_TEXT, ToolState::Error);
                    append(&services.chat, uid, conversation_id, entry).await?;
                }
            }
            let mut decided = Vec::new();
            for (resolution, approval_id) in resolutions {
                let decision = if resolution.approved {
                    chat::Decision::Approved
                } else {
                    chat::Decision::Denied
                };
                let owner = uid.to_string();
                let outcome = services
                    .chat
                    .run(move |c| chat::decide(c, &owner, &approval_id, decision))
                    .await?;
                match outcome {
                    chat::Decided::Now(_) => decided.push(resolution),
                    chat::Decided::Already(_) | chat::Decided::Unknown => {
                        return Err(TurnError::Conflict(ALREADY_DECIDED));
                    }
                }
            }
            Ok(decided)
        }
    }
}

const ALREADY_DECIDED: &str =
    "This action was already decided or is no longer waiting. Reload the conversation.";

fn strip(entries: &[(i64, Entry)]) -> Vec<Entry> {
    entries.iter().map(|(_, entry)| entry.clone()).collect()
}

async fn pending(
    services: &Services,
    uid: &str,
    conversation_id: &str,
) -> Result<Vec<chat::Approval>, StoreError> {
    let (uid, id) = (uid.to_string(), conversation_id.to_string());
    let approvals = services.chat.run(move |c| chat::approvals(c, &uid, &id)).await?;
    Ok(approvals.into_iter().filter(|approval| approval.decision.is_none()).collect())
}

fn closing(call: &ToolCall, text: &str, state: ToolState) -> Entry {
    Entry::Tool(ToolEntry {
        tool_call_id: call.id.clone(),
        tool: call.name.clone(),
        content: text.to_string(),
        output: serde_json::Value::Null,
        state,
    })
}

/// Pairs each waiting call with the user's decision on it; every waiting
/// call must be decided, and only waiting calls can be.
fn match_decisions(
    unanswered: &[ToolCall],
    pending: &[chat::Approval],
    responses: &[ApprovalResponse],
) -> Result<Vec<(Resolution, String)>, TurnError> {
    if responses.iter().any(|response| {
        !pending.iter().any(|a| {
            a.approval_id == response.approval_id && a.tool_call_id == response.tool_call_id
        })
    }) {
        return Err(TurnError::Conflict(ALREADY_DECIDED));
    }
    let mut resolutions = Vec::new();
    for call in unanswered {
        let Some(approval) = pending.iter().find(|a| a.tool_call_id == call.id) else {
            continue;
        };
        let Some(response) = responses.iter().find(|r| r.approval_id == approval.approval_id)
        else {
            return Err(TurnError::Conflict(
                "Some actions are still waiting for your decision. Approve or deny each of them.",
            ));
        };
        // The stored call is what runs; it must still be the call the model made.
        let intact = approval.tool == call.name
            && approval.arguments == call.arguments
            && approval.arguments_hash == arguments_hash(&approval.arguments);
        if !intact {
            tracing::error!(approval = %approval.approval_id, "stored approval does not match its call");
            return Err(TurnError::Conflict(ALREADY_DECIDED));
        }
        let call = ToolCall {
            id: approval.tool_call_id.clone(),
            name: approval.tool.clone(),
            arguments: approval.arguments.clone(),
        };
        let resolution = Resolution { call, approved: response.approved };
        resolutions.push((resolution, approval.approval_id.clone()));
    }
    Ok(resolutions)
}
