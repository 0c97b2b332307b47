//! One step of the loop: ask the model, stream its text, then run the data
//! calls it made and hold its action calls for the user.

use super::{Agent, AgentEvent, Ending, Out, ToolKind, ToolResult, ToolSpec};
use crate::holdback::{Held, Holdback};
use crate::model::{ChatRequest, FinishReason, Message, ModelEvent, ToolCall, ToolChoice};
use crate::text_calls;
use futures_util::StreamExt as _;

/// What the model says when the last step would still call tools.
pub const STEP_LIMIT_TEXT: &str = "I stopped after the maximum number of steps for one request \
without finishing. Ask me to continue and I will pick up from here.";

/// What the model says when, told to answer after the same call failed
/// twice running, it would still call tools.
pub const STUCK_TEXT: &str = "I stopped because the same step failed twice in a row, and trying \
it a third time would not help. Ask me again, perhaps in other words, or later if something \
was unavailable.";

/// What the user reads when the model wrote a tool call as text that
/// cannot be read as one.
pub const UNREADABLE_CALL_TEXT: &str = "The model tried to use a tool but wrote the call in a \
form that could not be read, so nothing was done. Ask again, perhaps in other words.";

/// What the user reads when the model answered with nothing at all.
pub const EMPTY_ANSWER_TEXT: &str = "The model gave an empty answer. Ask again, perhaps in \
other words.";

/// What the model reads instead of a result when it repeats the call it
/// made in the step before, word for word, and that call succeeded.
pub const ALREADY_HAVE_TEXT: &str = "You made this exact call in the previous step and its \
result is above: use it to answer, or call a tool with other arguments.";

/// What the loop remembers from one step to the next.
#[derive(Default)]
pub(super) struct Recall {
    /// The previous step's calls that ran, by tool and arguments, and how
    /// each ended.
    previous: Vec<(CallKey, ToolResult)>,
    /// The same call failed in two steps running: the next step is asked
    /// to answer without tools.
    pub(super) stuck: bool,
}

/// A call by what it asks: its tool and its arguments, written alike when
/// they are the same JSON.
#[derive(PartialEq, Eq)]
struct CallKey(String, String);

impl CallKey {
    fn of(call: &ToolCall) -> CallKey {
        let arguments = serde_json::from_str::<serde_json::Value>(&call.arguments)
            .map_or_else(|_| call.arguments.clone(), |value| value.to_string());
        CallKey(call.name.clone(), arguments)
    }
}

impl Recall {
    fn previous(&self, key: &CallKey) -> Option<&ToolResult> {
        self.previous.iter().find(|(seen, _)| seen == key).map(|(_, result)| result)
    }
}

/// Why a step is asked to answer without tools.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Last {
    No,
    /// The step cap.
    StepCap,
    /// The same call failed twice running.
    Stuck,
}

/// Runs one step; `None` means "go on to the next step".
pub(super) async fn run(
    agent: &Agent<'_>,
    messages: &mut Vec<Message>,
    last: Last,
    recall: &mut Recall,
    out: &mut Out<'_>,
) -> Option<Ending> {
    let answer_now = last != Last::No;
    out.send(AgentEvent::StepStart).await;
    let specs = agent.tools.specs();
    // `auto` is said, not left to the provider's default: with some chat
    // formats (llama-cpp-python's `chatml-function-calling`) an absent
    // `tool_choice` means the tools are never put in the prompt.
    let tool_choice = match (specs.is_empty(), answer_now) {
        (true, _) => None,
        (false, true) => Some(ToolChoice::None),
        (false, false) => Some(ToolChoice::Auto),
    };
    let request = ChatRequest {
        messages: messages.clone(),
        tools: specs.iter().map(|spec| spec.definition.clone()).collect(),
        tool_choice,
    };
    let mut stream = match agent.model.answer(request).await {
        Ok(stream) => stream,
        Err(error) => {
            out.send(AgentEvent::StepFinish).await;
            return Some(Ending::ModelFailed(error));
        }
    };
    let mut text = String::new();
    // Text not shown yet: it may still be calls written as text, or markup.
    let mut holdback = Holdback::new();
    let mut calls = Vec::new();
    let mut finish = None;
    let mut completion_tokens = None;
    while let Some(event) = stream.next().await {
        match event {
            Ok(ModelEvent::TextDelta(delta)) => {
                let shown = holdback.push(&delta);
                if !shown.is_empty() {
                    text.push_str(&shown);
                    out.send(AgentEvent::TextDelta(shown)).await;
                }
            }
            Ok(ModelEvent::ToolCall(call)) => calls.push(call),
            Ok(ModelEvent::Finish { reason }) => finish = Some(reason),
            Ok(ModelEvent::Usage { completion_tokens: tokens, .. }) => {
                completion_tokens = Some(tokens);
            }
            Err(error) => {
                // What the user already saw is kept (what was held back,
                // perhaps a call being written, was never shown and goes);
                // the calls of a cut answer are not run.
                if !text.is_empty() {
                    let said = Message::Assistant { text, tool_calls: vec![] };
                    out.send(AgentEvent::Message(said)).await;
                }
                out.send(AgentEvent::StepFinish).await;
                return Some(Ending::ModelFailed(error));
            }
        }
    }
    let offered: Vec<&str> = specs.iter().map(|spec| spec.definition.name.as_str()).collect();
    // Ids as unique as the provider's: a conversation keeps every call.
    let prefix = format!("call_{}_", uuid::Uuid::new_v4().simple());
    let shown_at_end = match holdback.finish() {
        // After prose, call markup beside the provider's own calls only
        // repeats them.
        Held::Calls(_) if !calls.is_empty() => None,
        Held::Opening(pending) | Held::Calls(pending) => {
            let written = calls.is_empty().then(|| text_calls::parse(&pending, &offered, &prefix));
            match written.flatten() {
                Some(written) => {
                    calls = written;
                    None
                }
                // Call markup that cannot be read is still not an answer.
                None if text_calls::is_call_markup(&pending) => {
                    Some(UNREADABLE_CALL_TEXT.to_string())
                }
                None => Some(pending),
            }
        }
        Held::Prose(pending) => Some(pending),
        // A template's tokens, and the echo or next turn after them.
        Held::Template(_) => None,
    };
    if let Some(shown) = shown_at_end.filter(|shown| !shown.is_empty()) {
        text.push_str(&shown);
        out.send(AgentEvent::TextDelta(shown)).await;
    }
    if finish == Some(FinishReason::Length) {
        // A provider may close the JSON of a call it cut (llama.cpp heals
        // partial arguments), so a cut call can look whole: none of a cut
        // answer's calls run, and the user is told it was cut.
        let note = cut_note(completion_tokens, !calls.is_empty());
        calls.clear();
        out.send(AgentEvent::TextDelta(note.clone())).await;
        text.push_str(&note);
    }
    if answer_now && !calls.is_empty() {
        calls.clear();
        if text.is_empty() {
            text = if last == Last::Stuck { STUCK_TEXT } else { STEP_LIMIT_TEXT }.to_string();
            out.send(AgentEvent::TextDelta(text.clone())).await;
        }
    }
    if calls.is_empty() && text.trim().is_empty() {
        // An answer of nothing (small models do this) would leave the user
        // looking at a blank reply.
        text = EMPTY_ANSWER_TEXT.to_string();
        out.send(AgentEvent::TextDelta(text.clone())).await;
    }
    // What is kept and replayed to the model on every later step: a call
    // whose arguments are not a JSON object is kept with `{}` (providers
    // refuse to read back arguments that do not parse; llama.cpp answers
    // 500 to every later request), its result saying what was wrong.
    let kept_calls = calls.iter().map(replayable).collect();
    let assistant = Message::Assistant { text, tool_calls: kept_calls };
    messages.push(assistant.clone());
    out.send(AgentEvent::Message(assistant)).await;
    if calls.is_empty() {
        out.send(AgentEvent::StepFinish).await;
        return Some(Ending::Answered);
    }

    let mut held = Vec::new();
    let mut runs = Vec::new();
    for call in calls {
        let spec = agent.spec(&call.name);
        let input = serde_json::from_str::<serde_json::Value>(&call.arguments)
            .unwrap_or_else(|_| serde_json::Value::String(call.arguments.clone()));
        let input_is_object = input.is_object();
        out.send(AgentEvent::ToolInput {
            call: call.clone(),
            input,
            dynamic: spec.is_none_or(|spec| spec.dynamic),
        })
        .await;
        // An action whose arguments are not even an object cannot be shown
        // to the user as a proposal: it goes to the tool set, which
        // answers the model with what is wrong, and nothing happens.
        match spec {
            Some(ToolSpec { kind: ToolKind::Action, .. }) if input_is_object => held.push(call),
            _ => runs.push(call),
        }
    }
    let keys: Vec<CallKey> = runs.iter().map(CallKey::of).collect();
    let results = futures_util::future::join_all(runs.iter().zip(&keys).map(|(call, key)| {
        let repeated = recall.previous(key).filter(|result| !result.is_error);
        let already = repeated.map(|result| ToolResult {
            text: ALREADY_HAVE_TEXT.to_string(),
            output: result.output.clone(),
            is_error: false,
        });
        async move {
            match already {
                Some(result) => result,
                None => agent.tools.call(call).await,
            }
        }
    }))
    .await;
    let this_step: Vec<(CallKey, ToolResult)> =
        keys.into_iter().zip(results.iter().cloned()).collect();
    recall.stuck = this_step.iter().any(|(key, result)| {
        result.is_error && recall.previous(key).is_some_and(|before| before.is_error)
    });
    recall.previous = this_step;
    for (call, result) in runs.iter().zip(results) {
        let message = Message::Tool { tool_call_id: call.id.clone(), content: result.text.clone() };
        messages.push(message.clone());
        out.send(AgentEvent::Message(message)).await;
        out.send(AgentEvent::ToolOutput {
            tool_call_id: call.id.clone(),
            tool: call.name.clone(),
            result,
            dynamic: agent.spec(&call.name).is_none_or(|spec| spec.dynamic),
        })
        .await;
    }
    for call in &held {
        out.send(AgentEvent::ApprovalRequest { call: call.clone() }).await;
    }
    out.send(AgentEvent::StepFinish).await;
    (!held.is_empty()).then_some(Ending::AwaitingApproval)
}

/// What the user reads after an answer cut at the provider's length limit.
fn cut_note(completion_tokens: Option<u64>, had_calls: bool) -> String {
    let limit = match completion_tokens {
        Some(tokens) => format!("at {tokens} tokens"),
        None => "at the model's length limit".to_string(),
    };
    let calls = if had_calls { " The actions it started to propose were not run." } else { "" };
    format!("\n\n(The answer was cut off {limit}.{calls} Ask for a shorter answer or continue.)")
}

/// The call as the conversation keeps it: as made when its arguments are
/// a JSON object, with `{}` otherwise.
fn replayable(call: &ToolCall) -> ToolCall {
    match serde_json::from_str::<serde_json::Value>(&call.arguments) {
        Ok(serde_json::Value::Object(_)) => call.clone(),
        _ => ToolCall { arguments: "{}".to_string(), ..call.clone() },
    }
}
