//! Deck's REST API at `/index.php/apps/deck/api/v1.0/` and the OCS variant.

use crate::AppState;
use crate::fixture::Fixture;
use crate::world::User;
use axum::Router;
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct Deck {}

impl Deck {
    pub fn from_fixture(
        fixture: &Fixture,
        users: &BTreeMap<String, User>,
        now: i64,
        problems: &mut Vec<String>,
    ) -> Deck {
        let _ = (fixture, users, now, problems);
        Deck {}
    }
}

pub fn routes() -> Router<AppState> {
    Router::new()
}
