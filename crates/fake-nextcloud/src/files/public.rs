//! Public links (share type 3) as whoever holds the link reaches them:
//! WebDAV on `/public.php/dav/files/{token}/` (and the legacy
//! `/public.php/webdav/`, Basic with the token as user name), the share's
//! page `/index.php/s/{token}` and its `/download`.
//!
//! The link's root is the shared node: a file link is the file itself, a
//! folder link lists the folder. A password-protected link wants the
//! password as Basic credentials (any user name on the new endpoint); an
//! expired one does not exist. What the link's permissions allow: read
//! (GET, HEAD, PROPFIND, the download), create (PUT of a new file, MKCOL),
//! update (PUT over a file), delete (DELETE below the root). Everything is
//! done in the owner's files, as the owner, so quota and webhooks apply as
//! for the owner's own writes. MOVE, COPY and PROPPATCH through a link are
//! refused (403): the fake does not serve them.

use super::{Target, propfind, transfer, tree};
use crate::auth::{AuthMethod, Authenticated};
use crate::dav::{DavError, DavRequest};
use crate::storage::{self, Share, permission};
use crate::{AppState, RequestId, Shared};
use axum::Router;
use axum::extract::{Request, State};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{any, get};
use base64::Engine as _;
use http::{HeaderMap, StatusCode, header};

const NEW_ROOT: &str = "/public.php/dav/files";
const LEGACY_ROOT: &str = "/public.php/webdav";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(NEW_ROOT, any(dav))
        .route("/public.php/dav/files/", any(dav))
        .route("/public.php/dav/files/{*rest}", any(dav))
        .route(LEGACY_ROOT, any(dav))
        .route("/public.php/webdav/", any(dav))
        .route("/public.php/webdav/{*rest}", any(dav))
        .route("/index.php/s/{token}", get(page))
        .route("/index.php/s/{token}/download", get(download))
}

/// Basic credentials, decoded: user and password.
fn basic(headers: &HeaderMap) -> Option<(String, String)> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (user, password) = decoded.split_once(':')?;
    Some((user.to_string(), password.to_string()))
}

/// The live link with `token`: not expired. `None` is a 404 to anyone.
fn live_link<'w>(world: &'w crate::world::World, token: &str, now: i64) -> Option<&'w Share> {
    let share = world.storage.link_share(token)?;
    let today = crate::clock::day(now);
    match &share.expiration {
        Some(day) if day.as_str() < today.as_str() => None,
        _ => Some(share),
    }
}

/// A password-protected link asks for it, as sabre's Basic challenge.
fn password_wanted() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Basic realm=\"Nextcloud\", charset=\"UTF-8\"")],
        crate::xml::error_body(
            "Sabre\\DAV\\Exception\\NotAuthenticated",
            "No public access to this resource., Username or password was incorrect",
        ),
    )
        .into_response()
}

async fn dav(State(shared): State<AppState>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let full_path = parts.uri.path().to_string();
    let legacy = full_path.starts_with(LEGACY_ROOT);
    let credentials = basic(&parts.headers);
    // The token and the (still percent-encoded) path below the link.
    let (token, rest) = if legacy {
        let rest = full_path.strip_prefix(LEGACY_ROOT).unwrap_or("").trim_start_matches('/');
        match &credentials {
            Some((user, _)) => (user.clone(), rest.to_string()),
            None => return password_wanted(),
        }
    } else {
        let rest = full_path.strip_prefix(NEW_ROOT).unwrap_or("").trim_start_matches('/');
        let (token, below) = rest.split_once('/').unwrap_or((rest, ""));
        (token.to_string(), below.to_string())
    };
    let Ok(body) = axum::body::to_bytes(body, crate::REQUEST_BODY_LENGTH_MAX).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "Request body too large\n").into_response();
    };
    let request_id = parts.extensions.get::<RequestId>().map(|id| id.0.clone()).unwrap_or_default();
    let (target, permissions, owner) = {
        let world = shared.world();
        let Some(share) = live_link(&world, &token, shared.now()) else {
            return DavError::not_found().into_response();
        };
        let link = share.link.as_ref().expect("a link share has its link");
        if link.password.is_some() {
            let given = credentials.as_ref().map(|(_, password)| password.as_str());
            if !given.is_some_and(|password| link.accepts(password)) {
                return password_wanted();
            }
        }
        let Some(node) = world.storage.node(share.node) else {
            return DavError::not_found().into_response();
        };
        let Ok(below) = storage::parse_dav_path(&rest) else {
            return DavError::bad_request("Invalid path").into_response();
        };
        if !node.is_folder() && !below.is_empty() {
            return DavError::not_found().into_response();
        }
        let path = match below.as_str() {
            "" => node.path.clone(),
            below => format!("{}/{below}", node.path),
        };
        let root = if legacy { LEGACY_ROOT.to_string() } else { format!("{NEW_ROOT}/{token}") };
        let href_base = if node.is_folder() { format!("{root}/") } else { root };
        let target = Target {
            uid: share.owner.clone(),
            path,
            href_base,
            link: Some((node.path.clone(), share.id)),
        };
        (target, share.permissions, share.owner.clone())
    };
    let request = DavRequest {
        method: parts.method,
        path: rest,
        full_path,
        query: parts.uri.query().map(str::to_string),
        headers: parts.headers,
        body,
        user: Authenticated { uid: owner, method: AuthMethod::Password },
        request_id,
    };
    let answer = answer(&shared, &request, &target, permissions).into_response();
    crate::dav::after(&shared);
    answer
}

fn answer(
    shared: &Shared,
    request: &DavRequest,
    target: &Target,
    permissions: u8,
) -> Result<Response, DavError> {
    let can = |wanted: u8| permissions & wanted != 0;
    let at_root = target.link.as_ref().is_some_and(|(root, _)| *root == target.path);
    let forbidden = || DavError::Forbidden("Permission denied through this link".to_string());
    match request.method.as_str() {
        "GET" | "HEAD" if !can(permission::READ) => Err(forbidden()),
        "GET" => transfer::get(shared, request, target, false),
        "HEAD" => transfer::get(shared, request, target, true),
        // A link without read ("hide file list") shows its root alone.
        "PROPFIND"
            if !can(permission::READ)
                && request.depth(crate::dav::Depth::One) != crate::dav::Depth::Zero =>
        {
            let mut request = request.clone();
            request.headers.insert("depth", http::HeaderValue::from_static("0"));
            propfind::propfind(shared, &request, target)
        }
        "PROPFIND" => propfind::propfind(shared, request, target),
        "PUT" => {
            let exists = {
                let world = shared.world();
                let viewer = target.viewer(&world.users)?;
                world.storage.resolve(viewer, &target.path).is_ok()
            };
            let wanted = if exists { permission::UPDATE } else { permission::CREATE };
            if !can(wanted) {
                return Err(forbidden());
            }
            transfer::put(shared, request, target)
        }
        "MKCOL" if !can(permission::CREATE) => Err(forbidden()),
        "MKCOL" => tree::mkcol(shared, request, target),
        "DELETE" if at_root || !can(permission::DELETE) => Err(forbidden()),
        "DELETE" => tree::delete(shared, request, target),
        "OPTIONS" => Ok((StatusCode::OK, super::options_headers(true), "").into_response()),
        "MOVE" | "COPY" | "PROPPATCH" => Err(forbidden()),
        other => Err(DavError::no_plugin_for(other)),
    }
}

/// `/index.php/s/{token}`: the share's public page, naming what is shared.
async fn page(
    State(shared): State<AppState>,
    axum::extract::Path(token): axum::extract::Path<String>,
) -> Response {
    let world = shared.world();
    let Some(share) = live_link(&world, &token, shared.now()) else {
        return (StatusCode::NOT_FOUND, Html("<!DOCTYPE html>\n<p>Share not found</p>\n"))
            .into_response();
    };
    let name = world.storage.node(share.node).map(|node| node.name().to_string());
    let owner = world.user(&share.owner).map(|user| user.display_name.clone());
    let escape = crate::xml::escape;
    Html(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>{name} – Nextcloud (fake)</title></head>\n<body>\n<main>\n<h1>{name}</h1>\n<p>Shared by {owner}</p>\n<a href=\"/index.php/s/{token}/download\">Download</a>\n</main>\n</body>\n</html>\n",
        name = escape(&name.unwrap_or_default()),
        owner = escape(&owner.unwrap_or_default()),
        token = escape(&token),
    ))
    .into_response()
}

/// `/index.php/s/{token}/download`: a file link's file, a folder link's
/// folder as a zip. A password-protected link sends the browser to its
/// password page, as Nextcloud does.
async fn download(
    State(shared): State<AppState>,
    axum::extract::Path(token): axum::extract::Path<String>,
    headers: HeaderMap,
) -> Response {
    let (content, name, mime) = {
        let world = shared.world();
        let Some(share) = live_link(&world, &token, shared.now()) else {
            return StatusCode::NOT_FOUND.into_response();
        };
        let link = share.link.as_ref().expect("a link share has its link");
        let given = basic(&headers).map(|(_, password)| password);
        if link.password.is_some() && !given.as_deref().is_some_and(|given| link.accepts(given)) {
            let location = format!("/index.php/s/{token}/authenticate/downloadShare");
            return axum::response::Redirect::to(&location).into_response();
        }
        if share.permissions & permission::READ == 0 {
            return StatusCode::FORBIDDEN.into_response();
        }
        let Some(node) = world.storage.node(share.node) else {
            return StatusCode::NOT_FOUND.into_response();
        };
        let Some(content) = node.content() else {
            // A folder link's download is the folder as an archive.
            let owner = world.user(&share.owner).map(crate::world::User::viewer);
            let root = owner.and_then(|viewer| {
                let root = world.storage.resolve(viewer, &node.path).ok()?;
                Some((
                    super::zip::archive(&world.storage, viewer, &root)?,
                    super::zip::file_name(&root),
                ))
            });
            let Some((archive, name)) = root else {
                return StatusCode::NOT_FOUND.into_response();
            };
            return (
                StatusCode::OK,
                [
                    (header::CONTENT_TYPE, "application/zip".to_string()),
                    (header::CONTENT_DISPOSITION, transfer::attachment_disposition(&name)),
                ],
                archive,
            )
                .into_response();
        };
        (content.clone(), node.name().to_string(), node.mime().to_string())
    };
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, mime),
            (header::CONTENT_DISPOSITION, transfer::attachment_disposition(&name)),
        ],
        content,
    )
        .into_response()
}
