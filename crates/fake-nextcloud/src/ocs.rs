//! OCS: `/ocs/v1.php` and `/ocs/v2.php` — capabilities, the current user, the
//! files_sharing shares API and webhook_listeners registration.

use crate::AppState;
use axum::Router;

pub fn routes() -> Router<AppState> {
    Router::new()
}
