//! The browser's wire format: the Vercel AI SDK "UI message stream" v1 that
//! `useChat` (npm `ai`, pinned at 6.0.326) reads, and the bodies it posts
//! back.
//!
//! This is only the wire layer, with no HTTP server and no agent in it:
//! [`Chunk`]s framed as server-sent events for an answer, [`parse_chat_post`]
//! for what the browser sends, and [`ui_messages`] for the history a page
//! shows after a reload. Every shape follows the `ai` package's own zod
//! schemas (`uiMessageChunkSchema`, `uiMessagesSchema`); the Node check in
//! `ci/peers/ai_stream/` runs our frames through the real client.
//!
//! The browser's copy of a conversation is never trusted: only the last
//! posted message is read, and an approval answer names a call the server
//! must look up in what it stored itself.

mod chunk;
mod history;
mod post;
#[cfg(test)]
mod tests;

pub use chunk::{Chunk, DONE_FRAME, FinishReason, RESPONSE_HEADERS, frame};
pub use history::{INTERRUPTED_CALL_TEXT, ui_messages};
pub use post::{
    APPROVALS_MAX, ApprovalResponse, ChatPost, ID_BYTES_MAX, PostError, PostInput, TEXT_BYTES_MAX,
    parse_chat_post,
};
