//! CalDAV at `/remote.php/dav/calendars/{uid}/`, principals at
//! `/remote.php/dav/principals/`, and the DAV root's PROPFIND.

use crate::Shared;
use crate::dav::DavRequest;
use crate::fixture::Fixture;
use crate::world::User;
use axum::response::Response;
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct Calendars {}

impl Calendars {
    pub fn from_fixture(
        fixture: &Fixture,
        users: &BTreeMap<String, User>,
        now: i64,
        problems: &mut Vec<String>,
    ) -> Calendars {
        let _ = (fixture, users, now, problems);
        Calendars {}
    }
}

pub async fn handle(shared: &Shared, request: DavRequest) -> Response {
    let _ = (shared, request);
    crate::dav::not_found()
}

pub async fn handle_principals(shared: &Shared, request: DavRequest) -> Response {
    let _ = (shared, request);
    crate::dav::not_found()
}

pub async fn handle_root(shared: &Shared, request: DavRequest) -> Response {
    let _ = (shared, request);
    crate::dav::not_found()
}
