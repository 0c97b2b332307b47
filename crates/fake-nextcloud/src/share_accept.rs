//! The link a share notification carries: files_sharing's `AcceptController`
//! on `/index.php/apps/files_sharing/accept/{shareId}` (`ocinternal:12`),
//! and the Files app's `/index.php/f/{fileid}` it sends the browser to.
//!
//! - `GET` shows a confirmation page (no CSRF check: it changes nothing)
//!   to a recipient of the share — the user it names, or a member of the
//!   group — and is 404 to anyone else and for a share that does not exist.
//! - `POST` accepts it (`IManager::acceptShare`: a pending share is mounted;
//!   an accepted one stays as it is) and answers 303 to the file; the
//!   request token of the session is required, as on every app route that
//!   does not waive it (a Basic-authenticated POST fails the check too:
//!   only OCS controllers waive it). A share the caller cannot accept is 404.
//! - `/index.php/f/{fileid}` sends a user who can see the file to the Files
//!   app's page for it; the fake's page names the file and its folder only.
//!
//! Without a login every page sends the browser to the login form.

use crate::auth::{self, Authenticated};
use crate::storage::{ShareId, ShareType};
use crate::world::World;
use crate::{AppState, Shared};
use axum::Router;
use axum::extract::{OriginalUri, Path, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use http::{HeaderMap, StatusCode, header};
use std::sync::MutexGuard;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/index.php/apps/files_sharing/accept/{share_id}", get(show).post(accept))
        .route("/index.php/f/{fileid}", get(file_link))
        .route("/index.php/apps/files/files/{fileid}", get(file_page))
}

/// Who is signed in: Basic, Bearer or the session.
fn signed_in(shared: &Shared, headers: &HeaderMap, uri: &http::Uri) -> Option<String> {
    auth::authenticate(shared, headers, uri.path()).ok().map(|Authenticated { uid, .. }| uid)
}

/// What any Nextcloud page gives without a login: the login form, which
/// comes back here afterwards.
fn to_login(uri: &http::Uri) -> Response {
    let back =
        percent_encoding::utf8_percent_encode(uri.path(), percent_encoding::NON_ALPHANUMERIC);
    Redirect::to(&format!("/index.php/login?redirect_url={back}")).into_response()
}

/// `ocinternal:12`: the only provider the fake has. Anything else names
/// no share (`getShareById` finds none).
fn parse(full_id: &str) -> Option<ShareId> {
    let id = full_id.strip_prefix("ocinternal:")?;
    if id.is_empty() || !id.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    id.parse().ok()
}

/// Whether `uid` is who the share was made for: the user it names, or a
/// member of the group (`AcceptController::isRecipient`).
fn is_recipient(world: &World, uid: &str, share_type: ShareType, share_with: &str) -> bool {
    match share_type {
        ShareType::User => share_with == uid,
        ShareType::Group => world.user(uid).is_some_and(|user| user.groups.contains(share_with)),
        ShareType::Link | ShareType::Email => false,
    }
}

fn not_found() -> Response {
    let page = page("Not found", "<p>This page could not be found on the server.</p>", "");
    (StatusCode::NOT_FOUND, Html(page)).into_response()
}

/// A guest page of Nextcloud's layout: the request token where its
/// `<head>` carries it.
fn page(title: &str, body: &str, request_token: &str) -> String {
    let escape = crate::xml::escape;
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head data-requesttoken=\"{token}\">\n<meta charset=\"utf-8\">\n<title>{title} – Nextcloud (fake)</title>\n</head>\n<body>\n<main>\n{body}</main>\n</body>\n</html>\n",
        token = escape(request_token),
        title = escape(title),
    )
}

async fn show(
    State(shared): State<AppState>,
    OriginalUri(uri): OriginalUri,
    Path(share_id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some(uid) = signed_in(&shared, &headers, &uri) else {
        return to_login(&uri);
    };
    let world = shared.world();
    let Some(share) = parse(&share_id).and_then(|id| world.storage.share(id)) else {
        return not_found();
    };
    if !is_recipient(&world, &uid, share.share_type, &share.share_with) {
        return not_found();
    }
    let Some(node) = world.storage.node(share.node) else {
        return not_found();
    };
    let sharer = world
        .user(&share.initiator)
        .map(|user| user.display_name.clone())
        .unwrap_or_else(|| share.initiator.clone());
    let token = crate::oidc::session_from_headers(&world, &headers)
        .map(|session| session.request_token.clone())
        .unwrap_or_default();
    let escape = crate::xml::escape;
    let body = format!(
        "<h2>Accept share</h2>\n<p>{sharer} shared “{name}” with you.</p>\n<form method=\"post\" action=\"{action}\">\n<input type=\"hidden\" name=\"requesttoken\" value=\"{token}\">\n<button type=\"submit\">Accept share</button>\n</form>\n",
        sharer = escape(&sharer),
        name = escape(node.name()),
        action = escape(uri.path()),
        token = escape(&token),
    );
    let mut response = Html(page("Accept share", &body, &token)).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, "no-store".parse().expect("static"));
    response
}

async fn accept(
    State(shared): State<AppState>,
    OriginalUri(uri): OriginalUri,
    Path(share_id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let Some(uid) = signed_in(&shared, &headers, &uri) else {
        return to_login(&uri);
    };
    let mut world = shared.world();
    if !passes_csrf(&world, &headers, &body) {
        return crate::ocs::csrf_failed();
    }
    let Some(id) = parse(&share_id).filter(|id| world.storage.share(*id).is_some()) else {
        return not_found();
    };
    let Some(user) = world.user(&uid).cloned() else {
        return not_found();
    };
    if world.storage.accept(user.viewer(), id).is_err() {
        return not_found();
    }
    let fileid = world.storage.share(id).map(|share| share.node).unwrap_or_default();
    let base = crate::oidc::request_base(&shared, &world, &headers);
    Redirect::to(&format!("{base}/index.php/f/{fileid}")).into_response()
}

/// The session's request token, in the `requesttoken` header or the
/// form's field: a form post carries it in its body.
fn passes_csrf(world: &World, headers: &HeaderMap, body: &[u8]) -> bool {
    if crate::oidc::passes_request_token(world, headers) {
        return true;
    }
    let Some(session) = crate::oidc::session_from_headers(world, headers) else {
        return false;
    };
    url::form_urlencoded::parse(body)
        .any(|(key, value)| key == "requesttoken" && value == session.request_token.as_str())
}

/// `ViewController::showFile`: to the Files app's page of a file the user
/// can see; 404 for any other id.
async fn file_link(
    State(shared): State<AppState>,
    OriginalUri(uri): OriginalUri,
    Path(fileid): Path<String>,
    headers: HeaderMap,
) -> Response {
    let (world, path) = match visible_file(&shared, &headers, &uri, &fileid) {
        Ok(found) => found,
        Err(refusal) => return *refusal,
    };
    let (parent, _) = crate::storage::parent_and_name(&path);
    let dir = percent_encoding::utf8_percent_encode(
        &format!("/{parent}"),
        percent_encoding::NON_ALPHANUMERIC,
    )
    .to_string();
    let base = crate::oidc::request_base(&shared, &world, &headers);
    Redirect::to(&format!("{base}/index.php/apps/files/files/{fileid}?dir={dir}&openfile=true"))
        .into_response()
}

async fn file_page(
    State(shared): State<AppState>,
    OriginalUri(uri): OriginalUri,
    Path(fileid): Path<String>,
    headers: HeaderMap,
) -> Response {
    let (world, path) = match visible_file(&shared, &headers, &uri, &fileid) {
        Ok(found) => found,
        Err(refusal) => return *refusal,
    };
    let token = crate::oidc::session_from_headers(&world, &headers)
        .map(|session| session.request_token.clone())
        .unwrap_or_default();
    let body = format!("<h2>Files</h2>\n<p>/{}</p>\n", crate::xml::escape(&path));
    Html(page("Files", &body, &token)).into_response()
}

/// The world and the file's path in the signed-in user's files, when they
/// can see it; the login form without a login, 404 for any other id.
fn visible_file<'s>(
    shared: &'s Shared,
    headers: &HeaderMap,
    uri: &http::Uri,
    fileid: &str,
) -> Result<(MutexGuard<'s, World>, String), Box<Response>> {
    let uid = signed_in(shared, headers, uri).ok_or_else(|| Box::new(to_login(uri)))?;
    let world = shared.world();
    let path = visible_path(&world, &uid, fileid).ok_or_else(|| Box::new(not_found()))?;
    Ok((world, path))
}

/// The file's path in `uid`'s files, when they can see it.
fn visible_path(world: &World, uid: &str, fileid: &str) -> Option<String> {
    let fileid = fileid.parse().ok()?;
    let user = world.user(uid)?;
    world.storage.path_of(user.viewer(), fileid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_internal_full_id_names_a_share() {
        assert_eq!(parse("ocinternal:12"), Some(12));
        for id in ["12", "invalid:format", "ocinternal:", "ocinternal:1x", "ocinternal:+1"] {
            assert_eq!(parse(id), None, "{id}");
        }
    }
}
