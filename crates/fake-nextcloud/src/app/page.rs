//! The chat page, `GET /apps/tamebi/`, and the built chat island it loads
//! (`web/`, docs/web.md): `js/tamebi-main.mjs` and `css/tamebi-main.css`,
//! read at run time from [`AppConfig::web_dir`](super::AppConfig::web_dir)
//! (default `web/dist`, made by `npm --prefix web ci && npm --prefix web run
//! build`). Nextcloud serves an app's `js/` and `css/` the same way, as
//! static files without a session.
//!
//! The page carries what the island needs — the session's request token,
//! where Nextcloud's layout puts it (`<head data-requesttoken>`) — under a
//! policy like Nextcloud's (scripts only from the origin, frames only from
//! the origin, for the re-served MCP Apps). When the bundle is absent the
//! page stays a placeholder that names the command that builds it.
//!
//! Without a session the page does what any Nextcloud page does: it sends
//! the browser to the login form, which comes back here afterwards.

use super::{Csrf, session_caller};
use crate::{AppState, RequestId};
use axum::extract::{Extension, OriginalUri, Path, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use http::{HeaderMap, HeaderValue, StatusCode, header};

/// The island's module, as `vite build` names it.
pub const SCRIPT: &str = "tamebi-main.mjs";
/// The island's stylesheet.
pub const STYLESHEET: &str = "tamebi-main.css";
/// The command that builds the island, shown when it is missing.
pub const BUILD_COMMAND: &str = "npm --prefix web ci && npm --prefix web run build";

/// The page's policy: Nextcloud's is stricter still (nonces); this one is
/// enough to catch an inline script or a foreign fetch in the browser tests.
const PAGE_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'self'";

/// `GET /apps/tamebi` → the page's canonical URL with its slash.
pub(super) async fn to_chat_page(OriginalUri(uri): OriginalUri) -> Response {
    Redirect::to(&format!("{}/", uri.path())).into_response()
}

/// A file's modification time, as a cache-busting version.
fn version(path: &std::path::Path) -> Option<u64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    Some(modified.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs())
}

pub(super) async fn chat_page(
    State(shared): State<AppState>,
    Extension(request_id): Extension<RequestId>,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
) -> Response {
    let Ok(caller) = session_caller(&shared, &headers, &request_id, Csrf::NotRequired) else {
        let login = format!(
            "/index.php/login?redirect_url={}",
            percent_encoding::utf8_percent_encode(uri.path(), percent_encoding::NON_ALPHANUMERIC)
        );
        return Redirect::to(&login).into_response();
    };
    let (request_token, display_name, web_dir) = {
        let world = shared.world();
        let session = world.oidc.session(&caller.session_id).expect("checked just now");
        let user = world.user(&caller.uid).expect("a session's user exists");
        (
            session.request_token.clone(),
            user.display_name.clone(),
            world.app.settings.web_dir.clone(),
        )
    };
    let escape = crate::xml::escape;
    let body = match version(&web_dir.join(SCRIPT)) {
        Some(script_version) => {
            let style = version(&web_dir.join(STYLESHEET)).map_or(String::new(), |v| {
                format!("<link rel=\"stylesheet\" href=\"css/{STYLESHEET}?v={v}\">\n")
            });
            format!(
                "{style}<script type=\"module\" src=\"js/{SCRIPT}?v={script_version}\"></script>\n</head>\n<body>\n<main id=\"tamebi\" data-requesttoken=\"{token}\">\n<noscript>The Tamebi chat needs JavaScript.</noscript>\n</main>\n",
                token = escape(&request_token),
            )
        }
        None => format!(
            "</head>\n<body>\n<main id=\"tamebi-placeholder\" data-requesttoken=\"{token}\">\n<h1>Tamebi</h1>\n<p>Signed in as {name}.</p>\n<p>The chat page is not built: no <code>{script}</code> in <code>{dir}</code>. Build it from the repository root with</p>\n<pre>{command}</pre>\n<p>then reload this page.</p>\n</main>\n",
            token = escape(&request_token),
            name = escape(&display_name),
            script = SCRIPT,
            dir = escape(&web_dir.display().to_string()),
            command = escape(BUILD_COMMAND),
        ),
    };
    let mut response = Html(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head data-user=\"{uid}\" data-user-displayname=\"{name}\" data-requesttoken=\"{token}\">\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>Tamebi – Nextcloud (fake)</title>\n{body}</body>\n</html>\n",
        uid = escape(&caller.uid),
        name = escape(&display_name),
        token = escape(&request_token),
    ))
    .into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(PAGE_POLICY));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `GET /apps/tamebi/js/{file}` and `/css/{file}`: the built island, read
/// at each request (a rebuild shows on reload). Only plain file names of
/// the island's own kinds; anything else is 404.
pub(super) async fn asset(State(shared): State<AppState>, Path(file): Path<String>) -> Response {
    let content_type = match file.rsplit_once('.').map(|(_, extension)| extension) {
        Some("mjs" | "js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("map") => "application/json",
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    let plain = !file.starts_with('.')
        && file.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
    if !plain {
        return StatusCode::NOT_FOUND.into_response();
    }
    let web_dir = shared.world().app.settings.web_dir.clone();
    match tokio::fs::read(web_dir.join(&file)).await {
        Ok(bytes) => (
            [
                (header::CONTENT_TYPE, content_type),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            bytes,
        )
            .into_response(),
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}
