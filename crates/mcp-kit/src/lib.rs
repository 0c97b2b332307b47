//! The MCP server kit: what mcp-nextcloud and mcp-mail are built from, so
//! the two servers differ only in their tools, their caller check and the
//! client a tool call gets.
//!
//! - [`registry`]: a tool is one module with a `register` function and one
//!   line in its server's `tools::all()`; its input schema is derived from
//!   its input type ([`schema`]), so the schema the model reads and the
//!   struct that parses the call cannot drift apart.
//! - [`result`]: a tool's outcome as a `CallToolResult`, a failure with
//!   `isError: true` and its kind in `_meta` (the `wire` vocabulary).
//! - [`server`]: the rmcp handler (list, dispatch, argument parsing, the
//!   call log) over a server's [`server::Service`].
//! - [`config`]: what every server is told about itself ([`ServerConfig`]).
//! - [`arguments`]: checks on parsed arguments several tools share.
//! - [`http`]: the stateless streamable-HTTP endpoint behind `mcp-auth`'s
//!   caller check, and the listener.
//!
//! It holds no Nextcloud client and knows no tool: the orchestrator's
//! crate-graph boundary is unaffected by it.

pub mod arguments;
pub mod config;
pub mod http;
pub mod registry;
pub mod result;
pub mod schema;
pub mod server;

pub use config::ServerConfig;
pub use http::{Endpoint, ListenError, Running};
pub use registry::{Definition, RegisteredTool, Registry, ToolKind, ToolOutcome, ToolOutput};
pub use result::into_result;
pub use server::{About, Caller, McpHandler, Service};
pub use tokio_util::sync::CancellationToken;
pub use wire::{FailureKind, ToolFailure};
