//! CardDAV at `/remote.php/dav/addressbooks/users/{uid}/`.

use crate::Shared;
use crate::dav::DavRequest;
use crate::fixture::Fixture;
use crate::world::User;
use axum::response::Response;
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct AddressBooks {}

impl AddressBooks {
    pub fn from_fixture(
        fixture: &Fixture,
        users: &BTreeMap<String, User>,
        now: i64,
        problems: &mut Vec<String>,
    ) -> AddressBooks {
        let _ = (fixture, users, now, problems);
        AddressBooks {}
    }
}

pub async fn handle(shared: &Shared, request: DavRequest) -> Response {
    let _ = (shared, request);
    crate::dav::not_found()
}
