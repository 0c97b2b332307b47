//! The chat page, `GET /apps/tamebi/`: for now a placeholder that carries
//! what the chat island (issue 8) will need — the session's request token,
//! where Nextcloud's layout puts it (`<head data-requesttoken>`).
//!
//! Without a session the page does what any Nextcloud page does: it sends
//! the browser to the login form, which comes back here afterwards.

use super::{Csrf, session_caller};
use crate::{AppState, RequestId};
use axum::extract::{Extension, OriginalUri, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use http::HeaderMap;

/// `GET /apps/tamebi` → the page's canonical URL with its slash.
pub(super) async fn to_chat_page(OriginalUri(uri): OriginalUri) -> Response {
    Redirect::to(&format!("{}/", uri.path())).into_response()
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
    let (request_token, display_name) = {
        let world = shared.world();
        let session = world.oidc.session(&caller.session_id).expect("checked just now");
        let user = world.user(&caller.uid).expect("a session's user exists");
        (session.request_token.clone(), user.display_name.clone())
    };
    let escape = crate::xml::escape;
    Html(format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head data-user="{uid}" data-user-displayname="{name}" data-requesttoken="{token}">
<meta charset="utf-8"><title>Tamebi – Nextcloud (fake)</title>
</head>
<body>
<main id="tamebi" data-requesttoken="{token}">
<p>Tamebi, signed in as {name}. The chat island is built by issue 8.</p>
</main>
</body>
</html>
"#,
        uid = escape(&caller.uid),
        name = escape(&display_name),
        token = escape(&request_token),
    ))
    .into_response()
}
