//! OCS: `/ocs/v1.php` and `/ocs/v2.php` — capabilities, the current user, the
//! files_sharing shares API and webhook_listeners registration.
//!
//! Every answer is Nextcloud's envelope `{"ocs":{"meta":…,"data":…}}`, in
//! JSON when `?format=json` (or an `Accept: application/json` header) asks
//! for it and in XML otherwise, rendered the way `OC\AppFramework\OCS`
//! renders it:
//!
//! - v1 answers HTTP 200 for everything except "not logged in" (401), and
//!   its `statuscode` is 100 for success and the failure code otherwise;
//!   `totalitems` and `itemsperpage` are always present as strings.
//! - v2 answers the failure code as the HTTP status (997 → 401, 998 → 404,
//!   996/999 → 500, anything outside 200..=600 → 400), `statuscode` 200 on
//!   success, and leaves `totalitems`/`itemsperpage` out.
//!
//! Security follows `SecurityMiddleware`: routes that are not public need a
//! user (else 997 "Current user is not logged in"), and routes without
//! `NoCSRFRequired` need the `OCS-APIRequest` header, a bearer token or a
//! session's request token — else the bare `{"message":"CSRF check failed"}`
//! with HTTP 412 that real clients get when they forget the header.

pub(crate) mod app_config;
mod links;
mod provisioning;
mod shares;
mod webhook_listeners;

use crate::auth::{self, AuthMethod, Authenticated};
use crate::{AppState, Shared};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use http::{HeaderMap, StatusCode, header};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::marker::PhantomData;

/// OCS status codes that are not HTTP statuses (`OCSController::RESPOND_*`).
pub mod code {
    pub const SERVER_ERROR: u16 = 996;
    pub const UNAUTHORISED: u16 = 997;
    pub const NOT_FOUND: u16 = 998;
    pub const UNKNOWN_ERROR: u16 = 999;
}

/// The largest OCS request body parsed.
pub const BODY_LENGTH_MAX: usize = 1024 * 1024;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/ocs/{version}/cloud/capabilities", get(capabilities))
        .route("/ocs/{version}/cloud/config", get(config))
        .route("/ocs/{version}/cloud/user", get(current_user))
        .merge(provisioning::routes())
        .merge(app_config::routes())
        .route(
            "/ocs/{version}/apps/files_sharing/api/v1/shares",
            get(shares::list).post(shares::create),
        )
        .route("/ocs/{version}/apps/files_sharing/api/v1/shares/pending", get(shares::pending))
        .route("/ocs/{version}/apps/files_sharing/api/v1/shares/inherited", get(shares::inherited))
        .route(
            "/ocs/{version}/apps/files_sharing/api/v1/shares/pending/{id}",
            axum::routing::post(shares::accept),
        )
        .route(
            "/ocs/{version}/apps/files_sharing/api/v1/shares/{id}",
            get(shares::show).put(shares::update).delete(shares::delete),
        )
        .route(
            "/ocs/{version}/apps/webhook_listeners/api/v1/webhooks",
            get(webhook_listeners::list).post(webhook_listeners::create),
        )
        .route(
            "/ocs/{version}/apps/webhook_listeners/api/v1/webhooks/{id}",
            get(webhook_listeners::show)
                .post(webhook_listeners::update)
                .delete(webhook_listeners::delete),
        )
        .route("/ocs/{version}/{*rest}", any(unknown_route))
}

/// Which entry point a request came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Xml,
}

/// How to render one OCS answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ocs {
    pub version: Version,
    pub format: Format,
}

impl Ocs {
    /// Reads the version from the `v1.php`/`v2.php` path segment and the
    /// format from `?format=` or, failing that, the first `Accept` entry
    /// that names a format (`getResponderByHTTPHeader`).
    pub fn new(version_segment: &str, query: Option<&str>, headers: &HeaderMap) -> Option<Ocs> {
        let version = match version_segment {
            "v1.php" => Version::V1,
            "v2.php" => Version::V2,
            _ => return None,
        };
        let format = match query_format(query).as_deref() {
            Some("json") => Format::Json,
            Some(_) => Format::Xml,
            None => format_from_accept(headers),
        };
        Some(Ocs { version, format })
    }

    /// Success with `data`.
    pub fn ok(&self, data: Value) -> Response {
        self.respond(200, "", data, HeaderMap::new())
    }

    /// A failure with an OCS code (an HTTP status or one of [`code`]).
    pub fn error(&self, status: u16, message: &str) -> Response {
        self.respond(status, message, json!([]), HeaderMap::new())
    }

    /// The same failure as [`Ocs::error`], as a value a handler returns
    /// with `?`.
    pub fn fail(&self, status: u16, message: impl Into<String>) -> OcsError {
        OcsError::Failure { ocs: *self, status, message: message.into() }
    }

    /// The general case: `status` as an OCS controller would set it.
    pub fn respond(
        &self,
        status: u16,
        message: &str,
        data: Value,
        extra_headers: HeaderMap,
    ) -> Response {
        let (http_status, meta) = match self.version {
            Version::V1 => {
                let http_status = if status == code::UNAUTHORISED { 401 } else { 200 };
                let ocs_status = if status == 200 { 100 } else { status };
                let ok = ocs_status == 100;
                let meta = vec![
                    ("status", json!(if ok { "ok" } else { "failure" })),
                    ("statuscode", json!(ocs_status)),
                    ("message", json!(if ok { "OK" } else { message })),
                    ("totalitems", json!("")),
                    ("itemsperpage", json!("")),
                ];
                (http_status, meta)
            }
            Version::V2 => {
                let http_status = match status {
                    code::UNAUTHORISED => 401,
                    code::NOT_FOUND => 404,
                    code::SERVER_ERROR | code::UNKNOWN_ERROR => 500,
                    status if !(200..=600).contains(&status) => 400,
                    status => status,
                };
                let ok = (200..300).contains(&status);
                let meta = vec![
                    ("status", json!(if ok { "ok" } else { "failure" })),
                    ("statuscode", json!(status)),
                    ("message", json!(if ok { "OK" } else { message })),
                ];
                (http_status, meta)
            }
        };
        let (content_type, body) = render(self.format, &meta, &data, XML_CONTENT_TYPE);
        let http_status =
            StatusCode::from_u16(http_status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response =
            (http_status, [(header::CONTENT_TYPE, content_type)], body).into_response();
        response.headers_mut().extend(extra_headers);
        response
    }
}

/// The XML content type of AppFramework answers (`BaseResponse`).
const XML_CONTENT_TYPE: &str = "application/xml; charset=utf-8";

/// The XML content type of `ocs/v1.php`'s own answers (`OC_API`).
const LEGACY_XML_CONTENT_TYPE: &str = "text/xml; charset=UTF-8";

/// The envelope's bytes and content type. Written by hand so that meta
/// comes before data, as PHP's ordered arrays put it (serde_json's maps
/// sort their keys).
fn render(
    format: Format,
    meta: &[(&str, Value)],
    data: &Value,
    xml_content_type: &'static str,
) -> (&'static str, String) {
    match format {
        Format::Json => {
            let meta: Vec<String> = meta
                .iter()
                .map(|(key, value)| format!("\"{key}\":{}", json_hex_tag(value)))
                .collect();
            let body = format!(
                "{{\"ocs\":{{\"meta\":{{{}}},\"data\":{}}}}}",
                meta.join(","),
                json_hex_tag(data)
            );
            ("application/json; charset=utf-8", body)
        }
        Format::Xml => {
            let mut body = String::from("<?xml version=\"1.0\"?>\n<ocs>\n <meta>\n");
            for (key, value) in meta {
                write_xml_element(&mut body, key, value, 2);
            }
            body.push_str(" </meta>\n");
            write_xml_element(&mut body, "data", data, 1);
            body.push_str("</ocs>\n");
            (xml_content_type, body)
        }
    }
}

/// How `ocs/v1.php` answers when no controller does (no route matched, or
/// a failure before one ran): `OC_API::respond`, older than the
/// AppFramework's renderer and different from it in four ways — the format
/// comes from `?format=` alone (no `Accept`), XML is `text/xml`, `data` is
/// null, and `totalitems`/`itemsperpage` are present in v2 as well.
fn legacy_failure(version: Version, query: Option<&str>, status: u16, message: &str) -> Response {
    let format = match query_format(query).as_deref() {
        Some("json") => Format::Json,
        _ => Format::Xml,
    };
    // `mapStatusCodes` for v2; v1 keeps the OCS code in a 200 (401 aside).
    let mapped = match status {
        code::NOT_FOUND => 404,
        code::SERVER_ERROR | code::UNKNOWN_ERROR => 500,
        status if (200..600).contains(&status) => status,
        _ => 400,
    };
    let (http_status, ocs_status) = match version {
        _ if status == code::UNAUTHORISED => (401, status),
        Version::V1 => (200, status),
        Version::V2 => (mapped, mapped),
    };
    let meta = [
        ("status", json!("failure")),
        ("statuscode", json!(ocs_status)),
        ("message", json!(message)),
        ("totalitems", json!("")),
        ("itemsperpage", json!("")),
    ];
    let (content_type, body) = render(format, &meta, &Value::Null, LEGACY_XML_CONTENT_TYPE);
    let http_status = StatusCode::from_u16(http_status).unwrap_or(StatusCode::BAD_REQUEST);
    (http_status, [(header::CONTENT_TYPE, content_type)], body).into_response()
}

fn query_format(query: Option<&str>) -> Option<String> {
    query.and_then(|query| {
        url::form_urlencoded::parse(query.as_bytes())
            .find(|(key, _)| key == "format")
            .map(|(_, value)| value.into_owned())
    })
}

/// Why an OCS request ends before its handler's answer. Handlers return
/// `Result<Response, OcsError>` and refuse with `?`; the bytes each refusal
/// sends are rendered once, here, through [`IntoResponse`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OcsError {
    /// The path names neither `v1.php` nor `v2.php`: no OCS entry point, so
    /// the web server's plain 404 rather than an envelope.
    UnknownVersion,
    /// `SecurityMiddleware`'s CSRF refusal, which OCS passes through
    /// unwrapped (see [`csrf_failed`]).
    CsrfFailed,
    /// A failure envelope, rendered as [`Ocs::error`] renders it.
    Failure { ocs: Ocs, status: u16, message: String },
    /// A disabled account's right credentials: the login throws before any
    /// controller runs, and `ocs/v1.php` answers 997 "Unauthorised" in its
    /// own legacy envelope, public routes included.
    LoginRefused { version: Version, query: Option<String> },
}

impl IntoResponse for OcsError {
    fn into_response(self) -> Response {
        match self {
            OcsError::UnknownVersion => (StatusCode::NOT_FOUND, "Not found\n").into_response(),
            OcsError::CsrfFailed => csrf_failed(),
            OcsError::Failure { ocs, status, message } => ocs.error(status, &message),
            OcsError::LoginRefused { version, query } => {
                legacy_failure(version, query.as_deref(), code::UNAUTHORISED, "Unauthorised")
            }
        }
    }
}

fn format_from_accept(headers: &HeaderMap) -> Format {
    let accept = headers.get(header::ACCEPT).and_then(|value| value.to_str().ok()).unwrap_or("");
    for entry in accept.split(',') {
        let entry = entry.trim().to_ascii_lowercase();
        match entry.strip_prefix("application/") {
            Some("json") => return Format::Json,
            Some("xml") => return Format::Xml,
            _ => continue,
        }
    }
    Format::Xml
}

/// `json_encode($response, JSON_HEX_TAG)`: `<` and `>` escaped.
fn json_hex_tag(value: &Value) -> String {
    serde_json::to_string(value)
        .expect("JSON values serialise")
        .replace('<', "\\u003C")
        .replace('>', "\\u003E")
}

/// `BaseResponse::toXML`: keys become elements, list items `<element>`,
/// `true` is "1", `false` and `null` are empty.
pub fn to_xml(value: &Value) -> String {
    let mut out = String::from("<?xml version=\"1.0\"?>\n");
    if let Value::Object(map) = value {
        for (key, child) in map {
            write_xml_element(&mut out, key, child, 0);
        }
    }
    out
}

fn write_xml_element(out: &mut String, name: &str, value: &Value, depth: usize) {
    let indent = " ".repeat(depth);
    let children: Vec<(String, &Value)> = match value {
        Value::Object(map) => map.iter().map(|(key, child)| (key.clone(), child)).collect(),
        Value::Array(items) => items.iter().map(|child| ("element".to_string(), child)).collect(),
        _ => Vec::new(),
    };
    match value {
        Value::Object(_) | Value::Array(_) if children.is_empty() => {
            out.push_str(&format!("{indent}<{name}/>\n"));
        }
        Value::Object(_) | Value::Array(_) => {
            out.push_str(&format!("{indent}<{name}>\n"));
            for (key, child) in children {
                write_xml_element(out, &key, child, depth + 1);
            }
            out.push_str(&format!("{indent}</{name}>\n"));
        }
        Value::Null | Value::Bool(false) => out.push_str(&format!("{indent}<{name}/>\n")),
        Value::Bool(true) => out.push_str(&format!("{indent}<{name}>1</{name}>\n")),
        Value::Number(number) => out.push_str(&format!("{indent}<{name}>{number}</{name}>\n")),
        Value::String(text) if text.is_empty() => {
            out.push_str(&format!("{indent}<{name}></{name}>\n"))
        }
        Value::String(text) => {
            out.push_str(&format!("{indent}<{name}>{}</{name}>\n", crate::xml::escape(text)))
        }
    }
}

/// What a route demands of the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// `#[PublicPage] #[NoCSRFRequired]`: anyone; credentials optional.
    Public,
    /// `#[NoAdminRequired]`: a user, and the CSRF rule.
    User,
    /// Admin-only (`AuthorizedAdminSetting`): a user in group "admin", and
    /// the CSRF rule.
    Admin,
    /// `#[NoAdminRequired]` without `#[NoSubAdminRequired]`: an admin or a
    /// sub-admin (the fake has none), and the CSRF rule.
    SubAdmin,
}

/// One OCS request, authenticated and with its parameters merged from the
/// query string and the body (JSON or form), as `IRequest::getParam` sees them.
#[derive(Debug)]
pub struct OcsCall {
    pub ocs: Ocs,
    /// `None` only on public routes called anonymously.
    pub user: Option<Authenticated>,
    pub params: Map<String, Value>,
    pub path: String,
    pub headers: HeaderMap,
    /// The route's path parameters after the version (`id`, `uid`).
    pub path_params: HashMap<String, String>,
}

impl OcsCall {
    /// A path parameter of the route, e.g. the share's `id`.
    pub fn path_param(&self, name: &str) -> &str {
        self.path_params.get(name).map_or("", String::as_str)
    }

    /// The uid; only call on routes whose guard requires a user.
    pub fn uid(&self) -> &str {
        &self.user.as_ref().expect("guarded route has a user").uid
    }

    /// A parameter as text (numbers and booleans are accepted as PHP would
    /// cast them).
    pub fn text(&self, name: &str) -> Option<String> {
        match self.params.get(name)? {
            Value::String(text) => Some(text.clone()),
            Value::Number(number) => Some(number.to_string()),
            Value::Bool(flag) => Some(if *flag { "true" } else { "false" }.to_string()),
            _ => None,
        }
    }

    /// A parameter as an integer: `Err` when present but not a number.
    pub fn integer(&self, name: &str) -> Result<Option<i64>, NotANumber> {
        match self.params.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(number)) => number.as_i64().map(Some).ok_or(NotANumber),
            Some(Value::String(text)) => text.trim().parse().map(Some).map_err(|_| NotANumber),
            Some(_) => Err(NotANumber),
        }
    }
}

/// A parameter that should have been an integer was not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotANumber;

/// What a handler answers: its envelope, or the refusal to send.
pub type OcsResult = Result<Response, OcsError>;

/// A [`Guard`] as a type, for [`Guarded`].
pub trait RouteGuard {
    const GUARD: Guard;
}

/// The marker types of the three guards.
pub mod guard {
    use super::{Guard, RouteGuard};

    pub enum Public {}
    pub enum User {}
    pub enum Admin {}
    pub enum SubAdmin {}

    impl RouteGuard for Public {
        const GUARD: Guard = Guard::Public;
    }
    impl RouteGuard for User {
        const GUARD: Guard = Guard::User;
    }
    impl RouteGuard for Admin {
        const GUARD: Guard = Guard::Admin;
    }
    impl RouteGuard for SubAdmin {
        const GUARD: Guard = Guard::SubAdmin;
    }
}

/// An OCS request that passed the route's guard `G`, as a handler's
/// argument: how every OCS handler begins ([`begin`], with the version and
/// the other path parameters read from the route).
pub struct Guarded<G>(pub OcsCall, PhantomData<G>);

impl<G: RouteGuard> FromRequest<AppState> for Guarded<G> {
    type Rejection = Response;

    async fn from_request(request: Request, shared: &AppState) -> Result<Self, Response> {
        let (mut parts, body) = request.into_parts();
        let Path(mut path_params) =
            Path::<HashMap<String, String>>::from_request_parts(&mut parts, shared)
                .await
                .map_err(IntoResponse::into_response)?;
        let version = path_params.remove("version").unwrap_or_default();
        let request = Request::from_parts(parts, body);
        let call = begin(shared, &version, request, G::GUARD, path_params)
            .await
            .map_err(IntoResponse::into_response)?;
        Ok(Guarded(call, PhantomData))
    }
}

/// Authenticates, checks the guard and reads the parameters; any failure is
/// the refusal to send.
async fn begin(
    shared: &Shared,
    version: &str,
    request: Request,
    guard: Guard,
    path_params: HashMap<String, String>,
) -> Result<OcsCall, OcsError> {
    let (parts, body) = request.into_parts();
    let ocs =
        Ocs::new(version, parts.uri.query(), &parts.headers).ok_or(OcsError::UnknownVersion)?;
    let path = parts.uri.path().to_string();
    let user = match auth::authenticate(shared, &parts.headers, &path) {
        Ok(user) => Some(user),
        Err(auth::AuthError::Disabled) => {
            let query = parts.uri.query().map(str::to_string);
            return Err(OcsError::LoginRefused { version: ocs.version, query });
        }
        Err(_) if guard == Guard::Public => None,
        Err(_) => return Err(ocs.fail(code::UNAUTHORISED, "Current user is not logged in")),
    };
    if guard != Guard::Public {
        let user = user.as_ref().expect("checked above");
        if guard == Guard::Admin && !is_admin(shared, &user.uid) {
            return Err(ocs.fail(403, "Logged in account must be an admin"));
        }
        if guard == Guard::SubAdmin && !is_admin(shared, &user.uid) {
            return Err(ocs.fail(403, "Logged in account must be an admin or sub admin"));
        }
        if !passes_csrf(shared, &parts.headers, user) {
            return Err(OcsError::CsrfFailed);
        }
        if path.contains("/apps/files_sharing/") {
            shared.world().set_up_files(&user.uid);
        }
    }
    let body = axum::body::to_bytes(body, BODY_LENGTH_MAX)
        .await
        .map_err(|_| ocs.fail(400, "The request body is too large"))?;
    let params = parameters(parts.uri.query(), &parts.headers, &body)
        .map_err(|message| ocs.fail(400, message))?;
    Ok(OcsCall { ocs, user, params, path, headers: parts.headers, path_params })
}

/// Members of the group "admin" are Nextcloud administrators.
pub fn is_admin(shared: &Shared, uid: &str) -> bool {
    shared.world().user(uid).is_some_and(|user| user.groups.contains("admin"))
}

/// `SecurityMiddleware`'s rule for OCS controllers.
pub(crate) fn passes_csrf(shared: &Shared, headers: &HeaderMap, user: &Authenticated) -> bool {
    let ocs_header =
        headers.get("ocs-apirequest").and_then(|value| value.to_str().ok()).unwrap_or("");
    if !ocs_header.is_empty() || user.method == AuthMethod::Bearer {
        return true;
    }
    if user.method == AuthMethod::Session {
        return crate::oidc::passes_request_token(&shared.world(), headers);
    }
    false
}

/// What `SecurityMiddleware::afterException` sends for a CSRF failure; the
/// OCS middleware passes a 412 through unwrapped.
pub fn csrf_failed() -> Response {
    (
        StatusCode::PRECONDITION_FAILED,
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        r#"{"message":"CSRF check failed"}"#,
    )
        .into_response()
}

/// Query string, then a JSON or form body on top, as Nextcloud merges them.
pub(crate) fn parameters(
    query: Option<&str>,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Map<String, Value>, String> {
    let mut params = Map::new();
    if let Some(query) = query {
        for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
            insert_form_field(&mut params, &key, value.into_owned());
        }
    }
    if body.is_empty() {
        return Ok(params);
    }
    let content_type =
        headers.get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).unwrap_or("");
    if content_type.contains("json") {
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(map)) => params.extend(map),
            Ok(_) => {}
            Err(_) => return Err("Could not decode the request body as JSON".to_string()),
        }
    } else if content_type.contains("application/x-www-form-urlencoded") {
        for (key, value) in url::form_urlencoded::parse(body) {
            insert_form_field(&mut params, &key, value.into_owned());
        }
    }
    Ok(params)
}

/// One form field as PHP reads it: `groups[]=a&groups[]=b` is the list
/// `groups`, anything else a string (the last one wins).
fn insert_form_field(params: &mut Map<String, Value>, key: &str, value: String) {
    match key.strip_suffix("[]") {
        Some(list) => {
            let entry = params.entry(list.to_string()).or_insert_with(|| Value::Array(Vec::new()));
            match entry {
                Value::Array(items) => items.push(Value::String(value)),
                other => *other = Value::Array(vec![Value::String(value)]),
            }
        }
        None => {
            params.insert(key.to_string(), Value::String(value));
        }
    }
}

/// `ocs/v1.php`'s answer to a route nobody registered.
async fn unknown_route(
    Path((version, _rest)): Path<(String, String)>,
    request: Request,
) -> Response {
    let Some(ocs) = Ocs::new(&version, request.uri().query(), request.headers()) else {
        return OcsError::UnknownVersion.into_response();
    };
    legacy_failure(
        ocs.version,
        request.uri().query(),
        code::NOT_FOUND,
        "Invalid query, please check the syntax. API specifications are here: http://www.freedesktop.org/wiki/Specifications/open-collaboration-services.\n",
    )
}

// ---- cloud ------------------------------------------------------------

async fn capabilities(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::Public>,
) -> OcsResult {
    let world = shared.world();
    let data = json!({
        "version": version_object(&world.server.version),
        "capabilities": capability_set(call.user.is_some(), &app_config::Settings::of(&world)),
    });
    // `setETag(md5(json_encode($result)))`: the same set, the same tag.
    let digest = <md5::Md5 as md5::Digest>::digest(data.to_string().as_bytes());
    let etag = format!("\"{}\"", crate::app::sign::hex_lower(&digest));
    let mut headers = HeaderMap::new();
    if let Ok(value) = http::HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, value);
    }
    Ok(call.ocs.respond(200, "", data, headers))
}

/// `OCSController::getConfig`: the OCS provider's description, public.
async fn config(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::Public>,
) -> OcsResult {
    // `IRequest::getServerHost`: overwritehost when set, else the Host.
    let host = shared.world().server.overwritehost.clone().unwrap_or_else(|| {
        call.headers
            .get(header::HOST)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_string()
    });
    Ok(call.ocs.ok(json!({
        "version": "1.7",
        "website": "Nextcloud",
        "host": host,
        "contact": "",
        "ssl": "false",
    })))
}

/// `data.version` as `OC_Util::getVersion()` fills it.
pub fn version_object(version: &str) -> Value {
    let mut numbers = version.split('.').map(|part| part.parse::<u64>().unwrap_or(0));
    let major = numbers.next().unwrap_or(0);
    let minor = numbers.next().unwrap_or(0);
    let micro = numbers.next().unwrap_or(0);
    json!({
        "major": major,
        "minor": minor,
        "micro": micro,
        "string": format!("{major}.{minor}.{micro}"),
        "edition": "",
        "extendedSupport": false,
    })
}

/// A Nextcloud 31 capability set for the apps the fake speaks, claiming
/// only what it serves: `tests/ocs.rs` probes every claimed feature (and
/// every feature the fake has) and fails when the two disagree.
fn capability_set(logged_in: bool, settings: &app_config::Settings<'_>) -> Value {
    let mut capabilities = json!({
        "core": {
            "pollinterval": 60,
            "webdav-root": "remote.php/webdav",
            // No reference (link preview) API: the fake does not serve
            // `/ocs/v2.php/references/`, so it does not claim it.
            "reference-api": false,
            "mod-rewrite-working": false,
        },
        "bruteforce": { "delay": 0, "allow-listed": false },
        "files": {
            "bigfilechunking": true,
            "blacklisted_files": [".htaccess"],
            "forbidden_filenames": [".htaccess"],
            "forbidden_filename_basenames": [],
            "forbidden_filename_characters": ["\\", "/"],
            "forbidden_filename_extensions": [".part", ".filepart"],
            // Nextcloud's default max_size is 100 MiB; clients send chunks
            // up to it, so the fake names its own request body limit.
            "chunked_upload": { "max_size": crate::REQUEST_BODY_LENGTH_MAX, "max_parallel_count": 5 },
            "file_conversions": [],
            // files_trashbin and files_versions (`files/trashbin.rs`,
            // `files/versions.rs`); labels and deleting a version are not served.
            "undelete": true,
            "version_labeling": false,
            "version_deletion": false,
            "versioning": true,
            "comments": false,
        },
        // `bulkupload`: `/remote.php/dav/bulk` (`files/bulk.rs`).
        "dav": { "chunking": "1.0", "bulkupload": "1.0", "search_supports_creation_time": true, "search_supports_upload_time": true },
        "files_sharing": {
            "api_enabled": true,
            "public": {
                "enabled": settings.links_allowed(),
                "password": { "enforced": false, "askForOptionalPassword": false },
                "multiple_links": true,
                "expire_date": { "enabled": false },
                "expire_date_internal": { "enabled": false },
                "expire_date_remote": { "enabled": false },
                "send_mail": false,
                "upload": settings.public_upload_allowed(),
                "upload_files_drop": settings.public_upload_allowed(),
                "custom_tokens": false,
            },
            "resharing": true,
            "user": { "send_mail": false, "expire_date": { "enabled": true } },
            "group_sharing": true,
            "group": { "enabled": true, "expire_date": { "enabled": true } },
            "default_permissions": 31,
            "federation": { "outgoing": false, "incoming": false, "expire_date": { "enabled": false }, "expire_date_supported": { "enabled": false } },
            "sharee": { "query_lookup_default": false, "always_show_unique": true },
            "sharebymail": { "enabled": false },
        },
        "webhook_listeners": { "enabled": true },
        "deck": {
            "version": "1.15.0",
            "canCreateBoards": true,
            "apiVersions": ["1.0", "1.1"],
        },
        "theming": {
            "name": "Nextcloud",
            "url": "https://nextcloud.com",
            "slogan": "a safe home for all your data",
            "color": "#00679e",
            "color-text": "#ffffff",
            "color-element": "#00679e",
            "background-plain": false,
            "background-default": true,
        },
    });
    if !logged_in {
        // Anonymous callers get the public subset, as in Nextcloud.
        if let Some(map) = capabilities.as_object_mut() {
            map.remove("webhook_listeners");
            map.remove("deck");
        }
    }
    capabilities
}

async fn current_user(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::User>,
) -> OcsResult {
    user_answer(&shared, &call, call.uid())
}

/// What the users API answers for an account that does not exist (also
/// what the shares API answers when the caller's own account is gone).
pub(crate) const USER_MISSING: &str = "User does not exist";

/// One account's data as the users API answers it.
pub(crate) fn user_answer(
    shared: &Shared,
    call: &OcsCall,
    uid: &str,
) -> Result<Response, OcsError> {
    let data = user_data(shared, uid).ok_or_else(|| call.ocs.fail(404, USER_MISSING))?;
    Ok(call.ocs.ok(data))
}

/// `UsersController::getUserData` for one account.
pub(crate) fn user_data(shared: &Shared, uid: &str) -> Option<Value> {
    let world = shared.world();
    let user = world.user(uid)?;
    let used =
        world.storage.node_at(uid, "").map(|root| world.storage.size(root) as i64).unwrap_or(0);
    let quota = match user.quota_bytes {
        Some(total) => json!({
            "free": (total - used).max(0),
            "used": used,
            "total": total,
            "relative": if total > 0 { (used as f64 * 10000.0 / total as f64).round() / 100.0 } else { 0.0 },
            "quota": total,
        }),
        None => json!({
            "free": 1_000_000_000_000_i64,
            "used": used,
            "total": 1_000_000_000_000_i64 + used,
            "relative": 0,
            "quota": -3,
        }),
    };
    let profile = |key: &str| user.profile.get(key).cloned().unwrap_or_default();
    Some(json!({
        "enabled": user.enabled,
        "storageLocation": format!("/var/www/html/data/{uid}"),
        "id": user.uid,
        "firstLoginTimestamp": 1_700_000_000,
        "lastLoginTimestamp": shared.now(),
        "lastLogin": shared.now() * 1000,
        "backend": "Database",
        "subadmin": [],
        "quota": quota,
        "manager": "",
        "email": user.email,
        "additional_mail": [],
        "displayname": user.display_name,
        "display-name": user.display_name,
        "phone": profile("phone"),
        "address": profile("address"),
        "website": profile("website"),
        "twitter": profile("twitter"),
        "fediverse": profile("fediverse"),
        "organisation": profile("organisation"),
        "role": profile("role"),
        "headline": profile("headline"),
        "biography": profile("biography"),
        "profile_enabled": "1",
        "pronouns": "",
        "groups": user.groups.iter().collect::<Vec<_>>(),
        "language": user.language,
        "locale": "",
        "timezone": user.timezone.as_deref().unwrap_or("UTC"),
        "notify_email": null,
        "backendCapabilities": { "setDisplayName": true, "setPassword": true },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ocs(version: Version, format: Format) -> Ocs {
        Ocs { version, format }
    }

    async fn body_of(response: Response) -> (u16, String) {
        let status = response.status().as_u16();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (status, String::from_utf8(bytes.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn v1_failures_are_http_200_except_unauthorised() {
        let (status, body) = body_of(ocs(Version::V1, Format::Json).error(404, "gone")).await;
        assert_eq!(status, 200);
        let value: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(value["ocs"]["meta"]["statuscode"], 404);
        assert_eq!(value["ocs"]["meta"]["status"], "failure");
        assert_eq!(value["ocs"]["meta"]["totalitems"], "");
        let (status, _) =
            body_of(ocs(Version::V1, Format::Json).error(code::UNAUTHORISED, "no")).await;
        assert_eq!(status, 401);
    }

    #[tokio::test]
    async fn v2_maps_ocs_codes_to_http_statuses() {
        for (code, http) in [
            (code::UNAUTHORISED, 401),
            (code::NOT_FOUND, 404),
            (code::UNKNOWN_ERROR, 500),
            (403, 403),
            (100, 400),
        ] {
            let (status, body) = body_of(ocs(Version::V2, Format::Json).error(code, "x")).await;
            assert_eq!(status, http, "OCS code {code}");
            let value: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(value["ocs"]["meta"]["statuscode"], code);
            assert!(value["ocs"]["meta"].get("totalitems").is_none());
        }
        let (status, body) = body_of(ocs(Version::V2, Format::Json).ok(json!({"a": 1}))).await;
        assert_eq!(status, 200);
        let value: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(value["ocs"]["meta"]["statuscode"], 200);
        assert_eq!(value["ocs"]["meta"]["message"], "OK");
    }

    async fn parts_of(response: Response) -> (u16, HeaderMap, String) {
        let headers = response.headers().clone();
        let (status, body) = body_of(response).await;
        (status, headers, body)
    }

    #[tokio::test]
    async fn a_refusal_sends_the_same_bytes_as_the_envelope_it_stands_for() {
        for version in [Version::V1, Version::V2] {
            for format in [Format::Json, Format::Xml] {
                let ocs = ocs(version, format);
                for status in [400, 403, 404, code::UNAUTHORISED, code::NOT_FOUND] {
                    let direct = parts_of(ocs.error(status, "gone <now>")).await;
                    let refused = parts_of(ocs.fail(status, "gone <now>").into_response()).await;
                    assert_eq!(refused, direct, "{version:?} {format:?} {status}");
                }
            }
        }
        let (status, _, body) = parts_of(OcsError::UnknownVersion.into_response()).await;
        assert_eq!((status, body.as_str()), (404, "Not found\n"));
        let (status, headers, body) = parts_of(OcsError::CsrfFailed.into_response()).await;
        assert_eq!((status, body.as_str()), (412, r#"{"message":"CSRF check failed"}"#));
        assert_eq!(headers[header::CONTENT_TYPE], "application/json; charset=utf-8");
    }

    #[test]
    fn xml_renders_lists_as_element_and_booleans_as_php_strings() {
        let xml = to_xml(
            &json!({"ocs": {"data": {"list": [1, 2], "yes": true, "no": false, "none": null, "text": "a<b"}}}),
        );
        assert!(xml.starts_with("<?xml version=\"1.0\"?>\n<ocs>"), "{xml}");
        assert!(
            xml.contains("<list>\n   <element>1</element>\n   <element>2</element>\n  </list>"),
            "{xml}"
        );
        assert!(xml.contains("<yes>1</yes>"));
        assert!(xml.contains("<no/>"));
        assert!(xml.contains("<none/>"));
        assert!(xml.contains("<text>a&lt;b</text>"));
    }

    #[test]
    fn format_comes_from_the_parameter_then_the_accept_header() {
        let mut headers = HeaderMap::new();
        assert_eq!(Ocs::new("v1.php", None, &headers).unwrap().format, Format::Xml);
        headers.insert(header::ACCEPT, "text/html, application/json".parse().unwrap());
        assert_eq!(Ocs::new("v1.php", None, &headers).unwrap().format, Format::Json);
        assert_eq!(Ocs::new("v2.php", Some("format=xml"), &headers).unwrap().format, Format::Xml);
        assert_eq!(
            Ocs::new("v2.php", Some("format=json"), &HeaderMap::new()).unwrap().format,
            Format::Json
        );
        assert!(Ocs::new("v3.php", None, &headers).is_none());
    }

    #[test]
    fn json_escapes_tags_like_php() {
        assert_eq!(json_hex_tag(&json!({"a": "<b>"})), r#"{"a":"\u003Cb\u003E"}"#);
    }
}
