//! The DAV entry point: `/remote.php/dav/*` (and the legacy
//! `/remote.php/webdav/*`), authenticated once here and dispatched by the
//! first path segment to files, chunked and bulk uploads, the trash bin, versions,
//! calendars, address books or principals.
//!
//! After every request the storage's file events move to the webhook queue,
//! so no protocol module has to remember to do it.

pub mod collection;
mod error;

pub use error::DavError;

use crate::auth::{self, AuthMethod, Authenticated};
use crate::{AppState, RequestId};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use http::{HeaderMap, Method, StatusCode};

/// One authenticated DAV request.
#[derive(Debug, Clone)]
pub struct DavRequest {
    pub method: Method,
    /// The percent-encoded path below the handler's collection: for
    /// `/remote.php/dav/files/alice/a%20b.md` the files handler sees
    /// `alice/a%20b.md`.
    pub path: String,
    /// The full request path, for hrefs.
    pub full_path: String,
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub user: Authenticated,
    pub request_id: String,
}

impl DavRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }

    /// `Depth` as sabre's `getHTTPDepth` reads it: digits are that many
    /// levels (`3` is three, as Nextcloud enables deep PROPFINDs),
    /// `infinity` is every level; `default` when absent or anything else.
    pub fn depth(&self, default: Depth) -> Depth {
        match self.header("depth").map(str::trim) {
            Some(value) if value.eq_ignore_ascii_case("infinity") => Depth::Infinity,
            Some(value) if !value.is_empty() && value.bytes().all(|byte| byte.is_ascii_digit()) => {
                match value.parse::<u32>() {
                    Ok(0) => Depth::Zero,
                    Ok(1) => Depth::One,
                    Ok(levels) => Depth::Levels(levels),
                    Err(_) => Depth::Infinity,
                }
            }
            _ => default,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    Zero,
    One,
    /// Two or more levels below the target.
    Levels(u32),
    Infinity,
}

pub const DAV_ROOT: &str = "/remote.php/dav";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/remote.php/dav", any(dav))
        .route("/remote.php/dav/", any(dav))
        .route("/remote.php/dav/{*rest}", any(dav))
        .route("/remote.php/webdav", any(webdav))
        .route("/remote.php/webdav/", any(webdav))
        .route("/remote.php/webdav/{*rest}", any(webdav))
        .route("/remote.php/caldav/{*rest}", any(legacy_caldav))
        .route("/remote.php/carddav/{*rest}", any(legacy_carddav))
        .route("/.well-known/caldav", any(well_known))
        .route("/.well-known/carddav", any(well_known))
        .route("/status.php", get(status))
}

async fn status(State(shared): State<AppState>) -> Response {
    let world = shared.world();
    let version = world.server.version.clone();
    let version_string = version.split('.').take(3).collect::<Vec<_>>().join(".");
    axum::Json(serde_json::json!({
        "installed": true,
        "maintenance": false,
        "needsDbUpgrade": false,
        "version": version,
        "versionstring": version_string,
        "edition": "",
        "productname": "Nextcloud",
        "extendedSupport": false,
    }))
    .into_response()
}

async fn well_known() -> Response {
    (StatusCode::MOVED_PERMANENTLY, [(http::header::LOCATION, "/remote.php/dav/")]).into_response()
}

async fn dav(State(shared): State<AppState>, request: Request) -> Response {
    let shared = &shared;
    // Published calendars are read with or without credentials.
    let path = request.uri().path();
    if path == crate::caldav::publishing::PUBLIC_ROOT
        || path.starts_with(&format!("{}/", crate::caldav::publishing::PUBLIC_ROOT))
    {
        return crate::caldav::publishing::handle_public(shared, request).await;
    }
    served(shared, request, |request| async move {
        let rest = legacy_rest(&request, DAV_ROOT);
        let (collection, below) = rest.split_once('/').unwrap_or((rest.as_str(), ""));
        let tree = match collection {
            "files" => Tree::Files,
            "uploads" => Tree::Uploads,
            "bulk" => Tree::Bulk,
            "trashbin" => Tree::Trashbin,
            "versions" => Tree::Versions,
            "calendars" => Tree::Calendars,
            "addressbooks" => Tree::AddressBooks,
            "principals" => Tree::Principals,
            "" if request.method.as_str() == "SEARCH" => {
                return crate::search::handle(shared, request).await;
            }
            "" => return crate::caldav::handle_root(shared, request).await,
            _ => return DavError::not_found().into_response(),
        };
        tree.handle(shared, below.to_string(), request).await
    })
    .await
}

/// The trees below `/remote.php/dav/`, each handler answering paths below
/// its own root, so the new endpoint and the legacy ones name the same
/// nodes through the same handler.
enum Tree {
    Files,
    Uploads,
    Bulk,
    Trashbin,
    Versions,
    Calendars,
    AddressBooks,
    Principals,
}

impl Tree {
    /// `request`, addressed to `path` below this tree's root, answered.
    async fn handle(self, shared: &crate::Shared, path: String, request: DavRequest) -> Response {
        let request = DavRequest { path, ..request };
        match self {
            Tree::Files => crate::files::handle(shared, request).await,
            Tree::Uploads => crate::files::uploads::handle(shared, request).await,
            Tree::Bulk => crate::files::bulk::handle(shared, request).await,
            Tree::Trashbin => crate::files::trashbin::handle(shared, request).await,
            Tree::Versions => crate::files::versions::handle(shared, request).await,
            Tree::Calendars => crate::caldav::handle(shared, request).await,
            Tree::AddressBooks => crate::carddav::handle(shared, request).await,
            Tree::Principals => crate::caldav::handle_principals(shared, request).await,
        }
    }
}

/// `/remote.php/webdav/x` is `/remote.php/dav/files/{uid}/x`.
async fn webdav(State(shared): State<AppState>, request: Request) -> Response {
    let shared = &shared;
    served(shared, request, |request| async move {
        let path = format!("{}/{}", request.user.uid, legacy_rest(&request, "/remote.php/webdav"));
        Tree::Files.handle(shared, path, request).await
    })
    .await
}

/// `/remote.php/caldav/`, the dav app's legacy CalDAV tree
/// (`appinfo/v1/caldav.php`): `calendars/{uid}/…` and `principals/…`, the
/// same nodes as under `/remote.php/dav/`. (The answers' hrefs name the
/// new endpoint, where the fake serves the same nodes: a known difference.)
async fn legacy_caldav(State(shared): State<AppState>, request: Request) -> Response {
    legacy(&shared, request, "/remote.php/caldav", |first, below| match first {
        "calendars" => Some((Tree::Calendars, below.to_string())),
        "principals" => Some((Tree::Principals, below.to_string())),
        _ => None,
    })
    .await
}

/// `/remote.php/carddav/`, the legacy CardDAV tree
/// (`appinfo/v1/carddav.php`): `addressbooks/{uid}/…` without the `users/`
/// level of the new endpoint.
async fn legacy_carddav(State(shared): State<AppState>, request: Request) -> Response {
    legacy(&shared, request, "/remote.php/carddav", |first, below| match (first, below) {
        ("addressbooks", "") => Some((Tree::AddressBooks, String::new())),
        ("addressbooks", below) => Some((Tree::AddressBooks, format!("users/{below}"))),
        ("principals", below) => Some((Tree::Principals, below.to_string())),
        _ => None,
    })
    .await
}

/// A request to a legacy endpoint below `root`: `route` maps its first
/// segment and the rest onto a tree of the new endpoint and the path there;
/// what it maps nowhere is a 404.
async fn legacy(
    shared: &crate::Shared,
    request: Request,
    root: &'static str,
    route: fn(&str, &str) -> Option<(Tree, String)>,
) -> Response {
    served(shared, request, |request| async move {
        let rest = legacy_rest(&request, root);
        let (first, below) = rest.split_once('/').unwrap_or((rest.as_str(), ""));
        match route(first, below) {
            Some((tree, path)) => tree.handle(shared, path, request).await,
            None => DavError::not_found().into_response(),
        }
    })
    .await
}

fn legacy_rest(request: &DavRequest, root: &str) -> String {
    request.full_path.strip_prefix(root).unwrap_or("").trim_start_matches('/').to_string()
}

/// A DAV request authenticated and buffered (401 and 413 otherwise),
/// answered by `answer`, and the file events it caused handed on to the
/// webhooks.
async fn served<F, Fut>(shared: &crate::Shared, request: Request, answer: F) -> Response
where
    F: FnOnce(DavRequest) -> Fut,
    Fut: std::future::Future<Output = Response>,
{
    let request = match read(shared, request).await {
        Ok(request) => request,
        Err(refusal) => return refusal,
    };
    let response = answer(request).await;
    after(shared);
    response
}

pub(crate) fn after(shared: &crate::Shared) {
    let mut world = shared.world();
    world.flush_file_events();
    if world.webhooks.has_pending() {
        shared.webhook_wakeup.notify_one();
    }
}

/// Authenticates and buffers the body; the refusal otherwise (401, or 413
/// for a body past the limit).
async fn read(shared: &crate::Shared, request: Request) -> Result<DavRequest, Response> {
    let (parts, body) = request.into_parts();
    let full_path = parts.uri.path().to_string();
    let user =
        auth::authenticate(shared, &parts.headers, &full_path).map_err(|error| match error {
            auth::AuthError::Disabled => auth::dav_login_refused(),
            _ => auth::dav_unauthorized(),
        })?;
    if !passes_csrf(shared, &parts, &user) {
        return Err(auth::dav_csrf_failed());
    }
    shared.world().set_up_files(&user.uid);
    let request_id = parts.extensions.get::<RequestId>().map(|id| id.0.clone()).unwrap_or_default();
    let body = axum::body::to_bytes(body, crate::REQUEST_BODY_LENGTH_MAX)
        .await
        .map_err(|_| (StatusCode::PAYLOAD_TOO_LARGE, "Request body too large\n").into_response())?;
    Ok(DavRequest {
        method: parts.method,
        path: String::new(),
        full_path,
        query: parts.uri.query().map(str::to_string),
        headers: parts.headers,
        body,
        user,
        request_id,
    })
}

/// The dav app's CSRF rule (`Connector/Sabre/Auth`): a request riding on
/// a browser session (logged in on the web, not over DAV) needs the
/// session's `requesttoken`, except a GET. Basic, app passwords and
/// bearers need none.
fn passes_csrf(shared: &crate::Shared, parts: &http::request::Parts, user: &Authenticated) -> bool {
    if user.method != AuthMethod::Session || parts.method == Method::GET {
        return true;
    }
    crate::oidc::passes_request_token(&shared.world(), &parts.headers)
}

/// A 207 Multi-Status response from a body.
pub fn multistatus(body: String) -> Response {
    (
        StatusCode::MULTI_STATUS,
        [(http::header::CONTENT_TYPE, "application/xml; charset=utf-8")],
        body,
    )
        .into_response()
}

/// Percent-encodes one path segment the way sabre/dav writes hrefs
/// (`Sabre\HTTP\encodePathSegment`): everything but `A-Za-z0-9_-.~():@`
/// becomes `%xx`, lowercase hex, byte by byte.
pub fn encode_segment(segment: &str) -> String {
    let mut encoded = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        let kept = byte.is_ascii_alphanumeric() || b"_-.~():@".contains(&byte);
        if kept {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02x}"));
        }
    }
    encoded
}

/// Percent-encodes a clean relative path, segment by segment.
pub fn encode_path(path: &str) -> String {
    path.split('/').map(encode_segment).collect::<Vec<_>>().join("/")
}
