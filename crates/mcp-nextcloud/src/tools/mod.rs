//! The tool registry. Each tool is one module with a `register` function;
//! [`all`] has one line per tool, so adding a tool is one file plus one line.
//! The registry itself, the definitions and the result conversion are
//! `mcp-kit`'s, shared with mcp-mail.
//!
//! Data tools are annotated `readOnlyHint: true`; action tools are not, and
//! the orchestrator asks the user before every call to one of them. There is
//! deliberately no public-link, share or delete tool (see the decisions on
//! omissions): for those, "don't offer it" costs nothing.

pub mod calendar_create_event;
pub mod calendar_events;
pub mod contacts_search;
pub mod deck_cards;
pub mod deck_create_card;
pub mod deck_move_card;
pub mod files_grep;
pub mod files_move;
pub mod files_read;
pub mod files_search;
pub mod files_write;

use crate::nextcloud::Nextcloud;

pub use mcp_kit::{Definition, ToolKind, ToolOutcome, ToolOutput};

/// Everything one call gets besides its parsed input: the Nextcloud client
/// built from the caller's own credential, and the passage index (which
/// holds no credential of its own).
pub struct ToolCall {
    pub nextcloud: Nextcloud,
    pub index: crate::index::Index,
}

/// The set of tools this server offers.
pub type Registry = mcp_kit::Registry<ToolCall>;

/// Every tool of this server, one line each.
pub fn all() -> Registry {
    Registry::with(&[
        files_search::register,
        files_read::register,
        files_grep::register,
        calendar_events::register,
        calendar_create_event::register,
        contacts_search::register,
        deck_cards::register,
        deck_create_card::register,
        deck_move_card::register,
        files_write::register,
        files_move::register,
    ])
}
