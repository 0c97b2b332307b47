//! RFC 5323 SEARCH (`basicsearch`) at `/remote.php/dav/`, as Nextcloud's
//! files search answers it.

use crate::Shared;
use crate::dav::DavRequest;
use axum::response::Response;

pub async fn handle(shared: &Shared, request: DavRequest) -> Response {
    let _ = (shared, request);
    crate::dav::not_found()
}
