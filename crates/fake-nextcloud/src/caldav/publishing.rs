//! Calendar publishing, as Nextcloud's `PublishPlugin` and
//! `PublicCalendarRoot` serve it (`dav_features/caldav.feature`, "Propfind
//! on public calendar endpoint without calendars"):
//!
//! - `POST` of `<cs:publish-calendar/>` (an XML content type) on a calendar
//!   publishes it: 202 with `X-Sabre-Status: everything-went-well`;
//!   `<cs:unpublish-calendar/>` withdraws it: 200, the same header. Both
//!   need write access (a read proxy gets 403 before this runs).
//! - A published calendar has `cs:publish-url`, the absolute
//!   `/remote.php/dav/public-calendars/{token}`; every calendar has
//!   `cs:allowed-sharing-modes`.
//! - `/remote.php/dav/public-calendars/` lists nothing (Nextcloud does not
//!   enumerate published calendars); `/remote.php/dav/public-calendars/{token}/`
//!   is the calendar, read-only, to anyone with the token, signed in or not.

use super::delegation::Proxy;
use super::{CalDav, Caller, PublicRoot, READ_METHODS};
use crate::Shared;
use crate::auth::{self, AuthMethod, Authenticated};
use crate::dav::collection::{self, Kind};
use crate::dav::{DavError, DavRequest};
use crate::world::World;
use crate::xml;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use http::StatusCode;

pub const PUBLIC_ROOT: &str = "/remote.php/dav/public-calendars";

/// What a published calendar's token looks like: 16 characters, as
/// Nextcloud's `CHAR_HUMAN_READABLE` tokens.
const TOKEN_LENGTH: usize = 16;

/// `cs:allowed-sharing-modes` of a calendar the caller may share.
pub const ALLOWED_SHARING_MODES: &str = "<cs:can-be-shared/><cs:can-be-published/>";

/// The publish-url property's value for `token`, below `base`.
pub fn publish_url(base: &str, token: &str) -> String {
    format!("<d:href>{}</d:href>", xml::escape(&format!("{base}{PUBLIC_ROOT}/{token}")))
}

/// A POST on calendar `name` of `caller.user`'s home.
pub fn post(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    name: &str,
) -> Result<Response, DavError> {
    let owner = caller.user.uid.clone();
    if world.calendars.get(&owner, name).is_none() {
        return Err(CalDav::missing_collection(name));
    }
    let content_type = request
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    if !content_type.contains("application/xml") && !content_type.contains("text/xml") {
        return Err(DavError::no_plugin_for("POST"));
    }
    let root = super::webdav::parse_body(&request.body)?;
    let published = if root.is(xml::CALSERVER, "publish-calendar") {
        true
    } else if root.is(xml::CALSERVER, "unpublish-calendar") {
        false
    } else if root.is(xml::CALSERVER, "share") || root.is(xml::OC, "share") {
        return Err(DavError::not_implemented(
            "Sharing calendars with other users is not implemented here",
        ));
    } else {
        return Err(DavError::no_plugin_for("POST"));
    };
    let calendar = world.calendars.get_mut(&owner, name).ok_or_else(DavError::not_found)?;
    let status = if published {
        if calendar.extra.published.is_none() {
            calendar.extra.published = Some(crate::oidc::random_token(TOKEN_LENGTH));
        }
        StatusCode::ACCEPTED
    } else {
        calendar.extra.published = None;
        StatusCode::OK
    };
    Ok((status, [("X-Sabre-Status", "everything-went-well")]).into_response())
}

/// A request below `/remote.php/dav/public-calendars`.
pub async fn handle_public(shared: &Shared, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    // Credentials are optional here; wrong ones are still refused.
    let user = match auth::authenticate(shared, &parts.headers, parts.uri.path()) {
        Ok(user) => user,
        Err(auth::AuthError::Missing) => {
            Authenticated { uid: String::new(), method: AuthMethod::Password }
        }
        Err(_) => return auth::dav_unauthorized(),
    };
    let Ok(body) = axum::body::to_bytes(body, crate::REQUEST_BODY_LENGTH_MAX).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "Request body too large\n").into_response();
    };
    let full_path = parts.uri.path().to_string();
    let below = full_path.strip_prefix(PUBLIC_ROOT).unwrap_or("").trim_start_matches('/');
    let request = DavRequest {
        method: parts.method,
        path: below.to_string(),
        full_path: full_path.clone(),
        query: parts.uri.query().map(str::to_string),
        headers: parts.headers,
        body,
        request_id: String::new(),
        user,
    };
    let now = shared.now();
    let mut world = shared.world();
    public_locked(&mut world, &request, now).unwrap_or_else(IntoResponse::into_response)
}

fn public_locked(world: &mut World, request: &DavRequest, now: i64) -> Result<Response, DavError> {
    let segments = super::webdav::decode_path(&request.path).ok_or_else(DavError::not_found)?;
    let principal = request.user.uid.clone();
    let reader = world.users.get(&principal).cloned();
    let Some((token, rest)) = segments.split_first() else {
        return root(request, &principal, reader.is_some());
    };
    let (owner, uri) = world
        .calendars
        .all()
        .find(|(_, calendar)| calendar.extra.published.as_deref() == Some(token.as_str()))
        .map(|(owner, calendar)| (owner.to_string(), calendar.uri.clone()))
        .ok_or_else(|| {
            DavError::NotFound(format!("Node with name '{token}' could not be found"))
        })?;
    if !READ_METHODS.contains(&request.method.as_str()) {
        // sabre's ACL: who is not signed in is asked to; who is, is refused.
        if reader.is_none() {
            return Ok(auth::dav_unauthorized());
        }
        return Err(DavError::forbidden(format!(
            "User did not have the required privileges ({{DAV:}}write) for path public-calendars/{}",
            segments.join("/")
        )));
    }
    let owner_user = world.users.get(&owner).cloned().ok_or_else(DavError::not_found)?;
    let caller = Caller {
        user: &owner_user,
        now,
        minimal: super::webdav::prefers_minimal(request),
        principal: if reader.is_some() { principal } else { String::new() },
        access: Some(Proxy::Read),
        base: super::request_base(world, request),
        public: Some(PublicRoot {
            private: collection::collection_href::<CalDav>(&owner, &uri),
            public: format!("{PUBLIC_ROOT}/{}/", crate::dav::encode_segment(token)),
        }),
    };
    let mut inside = vec![owner, uri];
    inside.extend(rest.iter().cloned());
    super::in_home(world, request, &caller, &inside)
}

/// `/remote.php/dav/public-calendars/`: a collection that lists nothing.
fn root(request: &DavRequest, principal: &str, signed_in: bool) -> Result<Response, DavError> {
    match request.method.as_str() {
        "OPTIONS" => Ok(super::options("OPTIONS, GET, HEAD, PROPFIND")),
        "PROPFIND" => {
            let properties = super::webdav::parse_propfind(&request.body)?;
            let mut set = super::webdav::PropertySet::new();
            set.xml(xml::DAV, "resourcetype", "<d:collection/>");
            if signed_in {
                set.href(xml::DAV, "current-user-principal", &super::principal_href(principal));
            } else {
                set.xml(xml::DAV, "current-user-principal", "<d:unauthenticated/>");
            }
            // Any depth lists the root alone: it never enumerates calendars.
            let minimal = super::webdav::prefers_minimal(request);
            let href = format!("{PUBLIC_ROOT}/");
            Ok(super::webdav::multistatus(&[set.response(&href, &properties, minimal)], None))
        }
        method => Err(super::refuse_on_read_only_node(
            method,
            "Published calendars are only reached by their token",
        )),
    }
}
