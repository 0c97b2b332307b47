//! The browser's side of a turn: UI message stream frames, written as they
//! happen. Text is framed as text-start / deltas / text-end with one id
//! per run of text; an error carries the envelope with the request id the
//! app sent. When the browser has gone, frames are dropped and the turn
//! goes on (what it does is stored either way).

use crate::ui_stream::{self, Chunk, FinishReason};
use bytes::Bytes;
use tokio::sync::mpsc;

pub(super) struct Frames {
    sender: mpsc::Sender<Bytes>,
    open: bool,
    request_id: String,
    text_id: Option<String>,
    texts: usize,
}

/// The error envelope: what happened and what to do, and the request id
/// that joins the browser, nextcloud.log and our logs. The page shows the
/// message only because the id is there.
pub fn envelope(message: &str, request_id: &str) -> serde_json::Value {
    serde_json::json!({ "error": { "message": message, "requestId": request_id } })
}

impl Frames {
    pub(super) fn new(sender: mpsc::Sender<Bytes>, request_id: String) -> Frames {
        Frames { sender, open: true, request_id, text_id: None, texts: 0 }
    }

    pub(super) async fn chunk(&mut self, chunk: Chunk) {
        self.write(ui_stream::frame(&chunk)).await;
    }

    async fn write(&mut self, frame: Bytes) {
        if self.open && self.sender.send(frame).await.is_err() {
            self.open = false;
        }
    }

    pub(super) async fn text(&mut self, delta: String) {
        let id = match &self.text_id {
            Some(id) => id.clone(),
            None => {
                let id = format!("txt-{}", self.texts);
                self.texts += 1;
                self.text_id = Some(id.clone());
                self.chunk(Chunk::TextStart { id: id.clone() }).await;
                id
            }
        };
        self.chunk(Chunk::TextDelta { id, delta }).await;
    }

    pub(super) async fn close_text(&mut self) {
        if let Some(id) = self.text_id.take() {
            self.chunk(Chunk::TextEnd { id }).await;
        }
    }

    pub(super) async fn finish(&mut self, reason: FinishReason) {
        self.close_text().await;
        self.chunk(Chunk::Finish { finish_reason: Some(reason) }).await;
    }

    /// An error the user reads: the envelope as the chunk's text.
    pub(super) async fn error(&mut self, message: &str) {
        self.close_text().await;
        let error_text = envelope(message, &self.request_id)["error"].to_string();
        self.chunk(Chunk::Error { error_text }).await;
    }

    pub(super) async fn done(mut self) {
        self.write(Bytes::from_static(ui_stream::DONE_FRAME)).await;
    }
}
