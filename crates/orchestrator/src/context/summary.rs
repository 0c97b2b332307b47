//! Rung 2: summarise the older part of a conversation, at about half the
//! window, once per compaction.
//!
//! When what would be sent ([`history`] after rung 1's [`prune`], plus the
//! system prompt) grows past [`SUMMARY_AT_FRACTION`] of the model's window,
//! [`plan`] says which entries to fold into a summary and builds the
//! request that asks the model for it. The caller makes the call and
//! stores the text with `store::chat::store_summary`; every later turn
//! reloads it (`latest_summary`) and [`history`] shows it in place of the
//! entries it covers. A conversation pays for a summary once per
//! compaction, not once per turn. Each new summary folds in the previous
//! one's text plus what followed it, so it supersedes it, and the request
//! stays bounded by the new part.
//!
//! Where to split is the load-bearing choice. A split only ever falls right
//! before a user entry: the kept part never starts with a tool result whose
//! call was summarised away (providers reject it), and an assistant's tool
//! calls never lose their results. The current turn is always kept whole,
//! and so are the newest turns that fit in [`KEEP_RECENT_FRACTION`] of the
//! window, so the summary covers the oldest part only and the next
//! compaction is about a quarter of a window of conversation away.
//!
//! The summary is shown as a framed *user* message, not a second system
//! message: some chat templates refuse a system message that is not first.
//! The entry after it is a user entry too; OpenAI and most
//! OpenAI-compatible servers take two user messages in a row, but strict
//! templates (Mistral-7B-Instruct-v0.3 under vLLM, some LM Studio ones) ask
//! for alternation — a problem the stored conversation can have without any
//! summary, so it is left to the layer that writes the request.
//!
//! Rejected: a tokenizer (the provider, hence the tokenizer, is unknown;
//! [`estimate_tokens`] is a byte count, and the other half of the window is
//! the margin for its error and for the answer); dropping old messages
//! (forgets what was done); summarising every turn (pays every turn);
//! splitting on token counts alone (orphans tool results).

use super::prune::prune;
use crate::model::{ChatRequest, Message, ToolCall};
use crate::transcript::{Entry, ToolEntry, ToolState};
use std::collections::HashSet;
use std::fmt::Write as _;

const SUMMARY_PROMPT: &str = include_str!("../../prompts/summary.md");

/// Share of the window past which a summary is planned: recall degrades
/// long before the window is full, and the other half is the margin for
/// the estimate's error, the current turn's next results and the answer.
pub const SUMMARY_AT_FRACTION: f64 = 0.5;
/// Share of the window the newest turns kept whole may take: enough for
/// the last few exchanges verbatim, and it leaves about a quarter of the
/// window to grow before the next compaction.
pub const KEEP_RECENT_FRACTION: f64 = 0.25;
/// Bytes of text per estimated token: about right for English with the
/// usual BPE vocabularies; other languages cost more, which the margin of
/// the other half of the window absorbs.
pub const BYTES_PER_TOKEN: usize = 4;
/// Tokens a message costs besides its text (role and delimiters; OpenAI
/// documents 3 to 4).
pub const MESSAGE_OVERHEAD_TOKENS: usize = 4;
/// Tokens a tool call costs besides its id, name and arguments (the JSON
/// around them as the chat template writes it).
pub const TOOL_CALL_OVERHEAD_TOKENS: usize = 8;
/// Characters of a data tool's result shown to the summariser.
pub const DATA_RESULT_CHARS_MAX: usize = 2000;

/// What to summarise now.
#[derive(Debug, Clone)]
pub struct SummaryPlan {
    /// The summary covers every entry up to this sequence number; the entry
    /// after it is a user entry.
    pub upto_seq: i64,
    /// The request for the summary (no tools).
    pub request: ChatRequest,
}

/// Rough token count of what would be sent: [`BYTES_PER_TOKEN`] bytes per
/// token, plus [`MESSAGE_OVERHEAD_TOKENS`] per message and
/// [`TOOL_CALL_OVERHEAD_TOKENS`] per tool call.
pub fn estimate_tokens(messages: &[Message]) -> usize {
    messages.iter().map(message_tokens).fold(0, usize::saturating_add)
}

fn message_tokens(message: &Message) -> usize {
    let (bytes, calls) = match message {
        Message::System(text) | Message::User(text) => (text.len(), 0),
        Message::Assistant { text, tool_calls } => {
            let calls: usize = tool_calls.iter().map(call_bytes).sum();
            (text.len() + calls, tool_calls.len())
        }
        Message::Tool { tool_call_id, content } => (tool_call_id.len() + content.len(), 0),
    };
    MESSAGE_OVERHEAD_TOKENS
        .saturating_add(calls.saturating_mul(TOOL_CALL_OVERHEAD_TOKENS))
        .saturating_add(bytes.div_ceil(BYTES_PER_TOKEN))
}

fn call_bytes(call: &ToolCall) -> usize {
    call.id.len() + call.name.len() + call.arguments.len()
}

/// What to summarise now, if anything.
///
/// `entries`: the whole stored conversation with its sequence numbers, in
/// order. `previous`: the latest stored summary (upto_seq, text).
/// `system_tokens`: the estimate of the system prompt; `window_tokens`: the
/// model's context window. `is_action` classifies tools as rung 1 does
/// (`Some(false)`: a read-only data tool); it is used to estimate what
/// pruning leaves and to shorten data results in the request.
///
/// A plan comes when the pruned [`history`] plus the system prompt exceeds
/// [`SUMMARY_AT_FRACTION`] of the window and something after the previous
/// summary lies before the current turn.
pub fn plan(
    entries: &[(i64, Entry)],
    previous: Option<(i64, &str)>,
    system_tokens: usize,
    window_tokens: usize,
    is_action: impl Fn(&str) -> Option<bool>,
) -> Option<SummaryPlan> {
    let shown = estimate_tokens(&prune(&history(entries, previous), &is_action));
    if system_tokens.saturating_add(shown) <= share(window_tokens, SUMMARY_AT_FRACTION) {
        return None;
    }
    let covered = previous.map_or(i64::MIN, |(seq, _)| seq);
    let keep_budget = share(window_tokens, KEEP_RECENT_FRACTION);
    let split = split_point(entries, covered, keep_budget, &is_action)?;
    let upto_seq = entries.get(split.checked_sub(1)?)?.0;
    let folded: Vec<&(i64, Entry)> =
        entries[..split].iter().filter(|(seq, _)| *seq > covered).collect();
    let input = render_input(previous.map(|(_, text)| text), &folded, &is_action);
    Some(SummaryPlan { upto_seq, request: summary_request(input) })
}

fn share(window_tokens: usize, fraction: f64) -> usize {
    // `as` saturates: no overflow for any window.
    (window_tokens as f64 * fraction) as usize
}

/// The index of the first entry to keep: a user entry, at or before the
/// current turn's, with an entry not yet covered right before it. The
/// earliest such index whose kept part fits `keep_budget` keeps the most
/// turns; when none fits, the current turn alone is kept.
fn split_point(
    entries: &[(i64, Entry)],
    covered: i64,
    keep_budget: usize,
    is_action: impl Fn(&str) -> Option<bool>,
) -> Option<usize> {
    let current_turn = entries.iter().rposition(|(_, entry)| is_user(entry))?;
    let candidates: Vec<usize> = (1..=current_turn)
        .filter(|&at| is_user(&entries[at].1) && entries[at - 1].0 > covered)
        .collect();
    let kept = kept_tokens(entries, is_action);
    candidates.iter().copied().find(|&at| kept[at] <= keep_budget).or(candidates.last().copied())
}

fn is_user(entry: &Entry) -> bool {
    matches!(entry, Entry::User { .. })
}

/// For each index, the estimate of the pruned entries from it to the end.
/// Pruning the whole list once gives each message the form it has in any
/// kept part that starts at a user entry: rung 1 only counts the user
/// turns after a call.
fn kept_tokens(entries: &[(i64, Entry)], is_action: impl Fn(&str) -> Option<bool>) -> Vec<usize> {
    let messages: Vec<Message> = entries.iter().map(|(_, entry)| entry.to_message()).collect();
    let pruned = prune(&messages, is_action);
    let mut totals = vec![0; pruned.len() + 1];
    for (at, message) in pruned.iter().enumerate().rev() {
        totals[at] = totals[at + 1] + message_tokens(message);
    }
    totals
}

fn summary_request(input: String) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::System(SUMMARY_PROMPT.trim().to_owned()), Message::User(input)],
        tools: vec![],
        tool_choice: None,
    }
}

/// The user message of the summary request: the previous summary, then the
/// entries to fold in as plain text.
fn render_input(
    previous: Option<&str>,
    folded: &[&(i64, Entry)],
    is_action: impl Fn(&str) -> Option<bool>,
) -> String {
    let mut input = String::new();
    if let Some(text) = previous {
        let _ = write!(input, "<previous_summary>\n{}\n</previous_summary>\n\n", text.trim());
    }
    input.push_str("<transcript>\n");
    for (_, entry) in folded {
        input.push_str(&render_entry(entry, &is_action));
        input.push('\n');
    }
    input.push_str("</transcript>\n\n");
    input.push_str(if previous.is_some() {
        "Write the new summary: it replaces the previous summary and covers it and the transcript."
    } else {
        "Write the summary of the transcript."
    });
    input
}

fn render_entry(entry: &Entry, is_action: impl Fn(&str) -> Option<bool>) -> String {
    match entry {
        Entry::User { text } => format!("User:\n{text}\n"),
        Entry::Assistant { text, tool_calls } => {
            let mut out = String::from("Assistant:\n");
            if !text.is_empty() {
                let _ = writeln!(out, "{text}");
            }
            for call in tool_calls {
                let _ = writeln!(
                    out,
                    "Tool call {} (id {}) with arguments: {}",
                    call.name, call.id, call.arguments
                );
            }
            out
        }
        Entry::Tool(tool) => render_result(tool, is_action(&tool.tool) == Some(false)),
    }
}

fn render_result(tool: &ToolEntry, is_data: bool) -> String {
    let state = match tool.state {
        ToolState::Output => "succeeded",
        ToolState::Error => "FAILED",
        ToolState::Denied => "DENIED by the user (it never ran)",
    };
    let content = if is_data { clip(&tool.content) } else { tool.content.clone() };
    format!("Result of {} (id {}), {state}:\n{content}\n", tool.tool, tool.tool_call_id)
}

/// A data tool's result cut to [`DATA_RESULT_CHARS_MAX`] characters, with
/// a marker saying how much was cut.
fn clip(content: &str) -> String {
    match content.char_indices().nth(DATA_RESULT_CHARS_MAX) {
        None => content.to_owned(),
        Some((cut, _)) => {
            let rest = content[cut..].chars().count();
            format!("{}\n[… {rest} more characters cut]", &content[..cut])
        }
    }
}

/// The messages the model is shown for the conversation: the summary, as
/// one framed user message, then the entries after its `upto_seq`; all
/// entries when there is no summary.
///
/// A tool result whose call is not among the messages shown is left out:
/// providers reject it, and when a summary split a step (one stored by an
/// older planner) the summary covers it.
pub fn history(entries: &[(i64, Entry)], summary: Option<(i64, &str)>) -> Vec<Message> {
    let covered = summary.map_or(i64::MIN, |(seq, _)| seq);
    let mut messages: Vec<Message> =
        summary.map(|(_, text)| summary_message(text)).into_iter().collect();
    let mut calls: HashSet<&str> = HashSet::new();
    for (_, entry) in entries.iter().filter(|(seq, _)| *seq > covered) {
        match entry {
            Entry::Assistant { tool_calls, .. } => {
                calls.extend(tool_calls.iter().map(|c| c.id.as_str()))
            }
            Entry::Tool(tool) if !calls.contains(tool.tool_call_id.as_str()) => continue,
            _ => {}
        }
        messages.push(entry.to_message());
    }
    messages
}

/// What follows the summary in its message, so that the model reads it as
/// the earlier conversation and not as a request.
const SUMMARY_FRAME: &str = "The earlier part of this conversation was replaced by the summary \
    above to save space; the messages after this one are the rest of the conversation.";

fn summary_message(text: &str) -> Message {
    Message::User(format!(
        "<conversation_summary>\n{}\n</conversation_summary>\n{SUMMARY_FRAME}",
        text.trim()
    ))
}

#[cfg(test)]
mod tests;
