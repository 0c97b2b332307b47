//! The admin endpoint only tests use: faults, the clock, webhook flushing.

use crate::AppState;
use axum::Router;

pub const PREFIX: &str = "/__fake/";

pub fn routes() -> Router<AppState> {
    Router::new()
}
