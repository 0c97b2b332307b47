//! The flows registry: deterministic workflows the model can decide to
//! enter, each offered as one tool. A flow is a loop inside a tool — it
//! runs the turn's other tools in a fixed order — for the case where the
//! sequence is known and the model demonstrably gets it wrong.
//!
//! It is empty on purpose: a flow is added when a real task fails
//! reproducibly, never in advance. Adding one is one file under `flows/`
//! and one line in [`all`]; nothing in the loop changes (the tool set
//! routes calls to flows by name, and a test registers one to show it).

use crate::model::ToolCall;
use agent::{ToolResult, ToolSet, ToolSpec};
use futures_util::future::BoxFuture;

/// A workflow offered as a tool.
pub trait Flow: Send + Sync {
    /// How the model sees it (name, description, parameters, kind).
    fn spec(&self) -> ToolSpec;
    /// Runs it; `tools` are the turn's other tools, called as the user.
    fn run<'a>(&'a self, tools: &'a dyn ToolSet, call: &'a ToolCall) -> BoxFuture<'a, ToolResult>;
}

/// Every registered flow.
pub fn all() -> Vec<Box<dyn Flow>> {
    vec![]
}
