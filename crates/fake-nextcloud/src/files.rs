//! WebDAV on `/remote.php/dav/files/{uid}/`: PROPFIND, PROPPATCH, GET (with
//! Range), HEAD, PUT, MKCOL, MOVE, COPY, DELETE, OPTIONS.

use crate::Shared;
use crate::dav::DavRequest;
use axum::response::Response;

pub async fn handle(shared: &Shared, request: DavRequest) -> Response {
    let _ = (shared, request);
    crate::dav::not_found()
}
