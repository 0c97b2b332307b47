//! The agent: one loop. The model is given the conversation and a tool set,
//! calls tools or answers, reads the results, and goes again — at most
//! [`STEPS_MAX`] times per request. No workflow engine, no graph, no
//! sub-agents: a deterministic sequence, when one is needed, is a tool
//! (a flow) the model decides to enter.
//!
//! Everything the loop touches arrives as a value: a [`Model`], a
//! [`ToolSet`] and a [`Context`] engine. This crate depends on no MCP
//! transport, storage or HTTP client (the workspace's crate-graph test,
//! `crates/system/tests/crate_graph.rs`) and reads no file, the prompt
//! files included (`tests/reads_no_file.rs`), so the loop can be driven by
//! anything that can list and call tools, and its behaviour is the same in
//! tests and in production. The value types it speaks to a model in are
//! [`model`]'s. What it
//! produces is a stream of [`AgentEvent`]s: the turn driver persists them
//! and turns them into the browser's stream.
//!
//! Repeats: a call made again in the very next step, same tool and same
//! arguments, after it succeeded is not run again — the model reads that it
//! already has the result (small models loop on one call to the step cap).
//! The same call failing in two steps running makes the next step the last:
//! it is asked to answer without tools, so the turn ends in an honest answer
//! instead of a third identical failure.
//!
//! Approvals: a call to a tool that acts ([`ToolKind::Action`]) never runs
//! in the step that proposes it. The step runs the data calls of its batch,
//! announces an approval request for every action call, and the loop stops.
//! The next request brings the user's decisions as [`Resolution`]s of the
//! calls the server stored — never the browser's copy of them — and the
//! loop runs exactly what was approved, tells the model what was denied,
//! and goes on.

mod holdback;
pub mod model;
mod prompt_tags;
mod step;
#[cfg(test)]
mod tests;
mod text_calls;

use crate::model::{ChatRequest, Message, ModelError, ModelEvent, ToolCall, ToolDefinition};
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use tokio::sync::mpsc;

/// Model steps per request. The last one is asked to answer without tools.
pub const STEPS_MAX: usize = 10;

/// What the model's answer to a denied call says.
pub const DENIED_TEXT: &str = "The user denied this action; it was not performed. Do not try it again \
unless the user asks; say what was not done and ask how they want to proceed.";

/// Something that answers chat requests: the model client, or a stand-in.
pub trait Model: Send + Sync {
    fn answer(
        &self,
        request: ChatRequest,
    ) -> BoxFuture<'_, Result<BoxStream<'static, Result<ModelEvent, ModelError>>, ModelError>>;
}

/// Whether a tool reads or acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// Declared read-only: runs without asking.
    Data,
    /// Anything else: runs only once the user approved the exact call.
    Action,
}

/// One tool on offer this turn.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub definition: ToolDefinition,
    pub kind: ToolKind,
    /// Announced as a dynamic tool to the browser (MCP tools, whose set is
    /// not known when the page is built).
    pub dynamic: bool,
}

/// How a call ended, as the model and the browser are told.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// What the model reads.
    pub text: String,
    /// What the browser shows: the structured result, or the text.
    pub output: serde_json::Value,
    /// The tool's own failure flag: the call happened and failed.
    pub is_error: bool,
}

/// The tools of this turn. Calling records the call (audit) and never
/// fails outright: a failure is a result with `is_error`, whose text says
/// what to do next.
pub trait ToolSet: Send + Sync {
    fn specs(&self) -> &[ToolSpec];
    fn call<'a>(&'a self, call: &'a ToolCall) -> BoxFuture<'a, ToolResult>;
}

/// The context engine: what the model is shown of the conversation at each
/// step (rung 1, clearing stale results, lives behind this).
pub trait Context: Send + Sync {
    fn for_step(&self, messages: &[Message]) -> Vec<Message>;
}

/// The user's decision on a stored call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    pub call: ToolCall,
    pub approved: bool,
}

/// What the loop reports, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    StepStart,
    TextDelta(String),
    /// A call the model made, with its arguments parsed when they parse.
    ToolInput {
        call: ToolCall,
        input: serde_json::Value,
        dynamic: bool,
    },
    /// An action call waiting for the user; nothing ran.
    ApprovalRequest {
        call: ToolCall,
    },
    ToolOutput {
        tool_call_id: String,
        tool: String,
        result: ToolResult,
        dynamic: bool,
    },
    ToolDenied {
        call: ToolCall,
    },
    /// A complete message to keep: an assistant step (text and calls), or
    /// a tool's result. Emitted before anything that depends on it.
    Message(Message),
    StepFinish,
}

/// How the loop ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// The model answered.
    Answered,
    /// Action calls wait for the user's decision.
    AwaitingApproval,
    /// The model failed; what was said before stays said.
    ModelFailed(ModelError),
    /// The receiver of the events went away.
    Abandoned,
}

/// The loop's inputs for one request.
pub struct Agent<'a> {
    pub model: &'a dyn Model,
    pub tools: &'a dyn ToolSet,
    pub context: &'a dyn Context,
}

impl Agent<'_> {
    /// Runs one request: first the decided calls of the previous step, then
    /// up to [`STEPS_MAX`] model steps. `messages` starts with the system
    /// prompt and ends with what the model has not answered yet.
    pub async fn run(
        &self,
        mut messages: Vec<Message>,
        resolutions: Vec<Resolution>,
        events: &mpsc::Sender<AgentEvent>,
    ) -> Ending {
        let mut out = Out { events, open: true };
        for resolution in resolutions {
            let message = self.resolve(resolution, &mut out).await;
            messages.push(message);
        }
        let mut recall = step::Recall::default();
        for step in 1..=STEPS_MAX {
            messages = self.context.for_step(&messages);
            let last = match (step == STEPS_MAX, recall.stuck) {
                (_, true) => step::Last::Stuck,
                (true, false) => step::Last::StepCap,
                (false, false) => step::Last::No,
            };
            let ending = step::run(self, &mut messages, last, &mut recall, &mut out).await;
            if !out.open {
                return Ending::Abandoned;
            }
            if let Some(ending) = ending {
                return ending;
            }
        }
        Ending::Answered
    }

    async fn resolve(&self, resolution: Resolution, out: &mut Out<'_>) -> Message {
        let call = resolution.call;
        let dynamic = self.spec(&call.name).is_none_or(|spec| spec.dynamic);
        if resolution.approved {
            let result = self.tools.call(&call).await;
            let message =
                Message::Tool { tool_call_id: call.id.clone(), content: result.text.clone() };
            out.send(AgentEvent::Message(message.clone())).await;
            out.send(AgentEvent::ToolOutput {
                tool_call_id: call.id.clone(),
                tool: call.name.clone(),
                result,
                dynamic,
            })
            .await;
            message
        } else {
            let message =
                Message::Tool { tool_call_id: call.id.clone(), content: DENIED_TEXT.to_string() };
            out.send(AgentEvent::Message(message.clone())).await;
            out.send(AgentEvent::ToolDenied { call }).await;
            message
        }
    }

    fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.specs().iter().find(|spec| spec.definition.name == name)
    }
}

/// The event channel, which notices once when the receiver is gone and
/// stops sending (the loop then stops at the end of the step).
struct Out<'a> {
    events: &'a mpsc::Sender<AgentEvent>,
    open: bool,
}

impl Out<'_> {
    async fn send(&mut self, event: AgentEvent) {
        if self.open && self.events.send(event).await.is_err() {
            self.open = false;
        }
    }
}
