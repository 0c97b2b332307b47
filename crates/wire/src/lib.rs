//! What crosses a service boundary, as types and names, with no I/O: the
//! failure kinds a tool result carries ([`failure`]), the `_meta` keys
//! ([`meta`]) and the header names of the signed identity the Nextcloud app
//! sends the orchestrator and the orchestrator sends the MCP servers
//! ([`headers`]).
//!
//! One definition each means a renamed header or a new failure kind is a
//! compile error on both sides of the wire, never a string that drifted on
//! one side. The PHP app (`nc-app/`) writes the same names; its tests check
//! them against `docs/vectors/identity.json`.

pub mod failure;
pub mod headers;
pub mod meta;

pub use failure::{
    DETAIL_CHARS_MAX, FAILURE_KIND_META_KEY, FailureKind, QUOTE_CHARS_MAX, Received, ToolFailure,
    UNKNOWN_KIND_MAX,
};
