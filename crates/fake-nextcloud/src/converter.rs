//! An OnlyOffice-style document converter on its own listener.

use crate::AppState;
use axum::Router;

pub fn router(shared: AppState) -> Router {
    Router::new().with_state(shared)
}
