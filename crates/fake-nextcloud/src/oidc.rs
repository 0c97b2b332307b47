//! The OIDC provider, shaped like Nextcloud's `oidc` app, and the browser
//! login that its authorize endpoint relies on.
//!
//! Authorization code flow only, PKCE S256, login by session cookie; the
//! token response carries `access_token`, `token_type`, `expires_in` and
//! `id_token` and never a refresh token (the oidc app issues none, which is
//! why the Tamebi app renews tokens by replaying the session). Access tokens
//! are RFC 9068 JWTs whose `aud` is the client's resource URL. The issuer is
//! derived from the request's Host unless `overwritehost` is set — exactly
//! the behaviour that produces the documented iss-mismatch bug.

use crate::fixture::Fixture;
use crate::world::World;
use crate::{AppState, Shared};
use axum::Router;
use axum::extract::{Form, Query, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{HeaderMap, StatusCode, header};
use serde::Deserialize;
use serde_json::json;
use sha2::{Digest as _, Sha256};
use std::collections::HashMap;

/// How long an authorization code may wait for the token request.
pub const CODE_LIFETIME_SECONDS: i64 = 600;
/// Authorize requests remembered for the admin endpoint.
pub const AUTHORIZE_RECORD_COUNT_MAX: usize = 64;

/// How long a browser session lasts without activity.
pub const SESSION_LIFETIME_SECONDS: i64 = 24 * 3600;

#[derive(Debug, Clone)]
pub struct Client {
    pub client_id: String,
    pub client_secret: String,
    pub name: String,
    pub redirect_uris: Vec<String>,
    pub resource_url: Option<String>,
    pub jwt_tokens: bool,
}

/// A logged-in browser session.
#[derive(Debug, Clone)]
pub struct Session {
    pub uid: String,
    /// The CSRF token (`requesttoken`) app routes require.
    pub request_token: String,
    pub created: i64,
}

#[derive(Debug, Clone)]
struct Code {
    client_id: String,
    uid: String,
    redirect_uri: String,
    code_challenge: Option<String>,
    scope: String,
    nonce: Option<String>,
    created: i64,
}

#[derive(Debug, Clone)]
struct IssuedToken {
    uid: String,
    expires: i64,
}

/// What one authorize request carried, names only (never a value): lets a
/// test prove the Tamebi app's loopback call sends only the session cookies.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AuthorizeRecord {
    pub client_id: Option<String>,
    pub cookie_names: Vec<String>,
    pub header_names: Vec<String>,
}

#[derive(Debug, Default)]
pub struct Oidc {
    pub clients: Vec<Client>,
    /// The latest authorize requests, oldest first.
    pub authorize_records: std::collections::VecDeque<AuthorizeRecord>,
    sessions: HashMap<String, Session>,
    codes: HashMap<String, Code>,
    /// sha256(token) → owner, for userinfo and `oidc_provider_bearer_validation`.
    issued: HashMap<String, IssuedToken>,
}

impl Oidc {
    pub fn from_fixture(fixture: &Fixture, problems: &mut Vec<String>) -> Oidc {
        let mut clients = Vec::new();
        for client in &fixture.oidc_clients {
            if !matches!(client.token_type.as_str(), "jwt" | "opaque") {
                problems.push(format!(
                    "OIDC client {:?}: token_type must be \"jwt\" or \"opaque\"",
                    client.client_id
                ));
            }
            clients.push(Client {
                client_id: client.client_id.clone(),
                client_secret: client.client_secret.clone(),
                name: client.name.clone().unwrap_or(client.client_id.clone()),
                redirect_uris: client.redirect_uris.clone(),
                resource_url: client.resource_url.clone(),
                jwt_tokens: client.token_type == "jwt",
            });
        }
        Oidc { clients, ..Oidc::default() }
    }

    pub fn client(&self, client_id: &str) -> Option<&Client> {
        self.clients.iter().find(|client| client.client_id == client_id)
    }

    /// Starts a browser session for `uid`; returns its id.
    pub fn create_session(&mut self, uid: &str, now: i64) -> String {
        let id = random_token(26);
        self.sessions.insert(
            id.clone(),
            Session { uid: uid.to_string(), request_token: random_token(32), created: now },
        );
        id
    }

    pub fn session(&self, id: &str) -> Option<&Session> {
        self.sessions.get(id)
    }

    pub fn end_session(&mut self, id: &str) {
        self.sessions.remove(id);
    }

    /// Ends every session of a user (a test switch: "the session is gone");
    /// returns how many ended.
    pub fn end_sessions_of(&mut self, uid: &str) -> usize {
        let before = self.sessions.len();
        self.sessions.retain(|_, session| session.uid != uid);
        before - self.sessions.len()
    }

    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// Finds the owner of an access token the provider issued and that has
    /// not expired.
    pub fn lookup_access_token(&self, token: &str, now: i64) -> Option<String> {
        let issued = self.issued.get(&token_hash(token))?;
        (issued.expires >= now).then(|| issued.uid.clone())
    }
}

/// The cookie holding the session id, as Nextcloud names it (`oc` + instance id).
pub fn session_cookie_name(world: &World) -> String {
    world.server.instance_id.clone()
}

/// The session named by the request's cookies, if any.
pub fn session_from_headers<'w>(world: &'w World, headers: &HeaderMap) -> Option<&'w Session> {
    let name = session_cookie_name(world);
    cookies(headers).find(|(key, _)| *key == name).and_then(|(_, value)| world.oidc.session(value))
}

/// Whether the request carries its browser session's `requesttoken`
/// (the CSRF token web code sends), as OCS and DAV check it.
pub fn passes_request_token(world: &World, headers: &HeaderMap) -> bool {
    let token = headers.get("requesttoken").and_then(|value| value.to_str().ok());
    let session = session_from_headers(world, headers);
    matches!((session, token), (Some(session), Some(token)) if session.request_token == token)
}

/// The session id named by the request's cookies, if any.
pub fn session_id_from_headers(world: &World, headers: &HeaderMap) -> Option<String> {
    let name = session_cookie_name(world);
    cookies(headers)
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_string())
        .filter(|id| world.oidc.session(id).is_some())
}

fn cookies(headers: &HeaderMap) -> impl Iterator<Item = (&str, &str)> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
}

/// The absolute base URL Nextcloud would generate for a request with this
/// Host: `overwritehost` wins unless the fault unsets it.
pub fn issuer(world: &World, host: Option<&str>, base_url: &str) -> String {
    match (&world.server.overwritehost, world.faults.overwritehost_unset) {
        (Some(overwritehost), false) => {
            format!("{}://{overwritehost}", world.server.overwriteprotocol)
        }
        _ => match host {
            Some(host) => format!("http://{host}"),
            None => base_url.to_string(),
        },
    }
}

/// [`issuer`] for an incoming request.
pub fn request_base(shared: &Shared, world: &World, headers: &HeaderMap) -> String {
    let host = headers.get(header::HOST).and_then(|host| host.to_str().ok());
    issuer(world, host, &shared.base_url)
}

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/index.php/.well-known/openid-configuration", get(discovery))
        .route("/.well-known/openid-configuration", get(discovery))
        .route("/index.php/apps/oidc/openid-configuration", get(discovery))
        .route("/index.php/apps/oidc/jwks", get(jwks))
        .route("/index.php/apps/oidc/authorize", get(authorize))
        .route("/index.php/apps/oidc/token", axum::routing::post(token))
        .route("/index.php/apps/oidc/userinfo", get(userinfo).post(userinfo))
        .route("/index.php/login", get(login_page).post(login))
        .route("/login", get(login_page).post(login))
        .route("/index.php/logout", get(logout))
        .route("/index.php/csrftoken", get(csrf_token))
        .route("/csrftoken", get(csrf_token))
}

/// Core's `CSRFTokenController`: the session's request token, which web
/// code sends as `requesttoken` on anything but a GET. Without a session
/// there is nothing to protect here: 403, as core answers a request
/// failing its strict cookie check.
async fn csrf_token(State(shared): State<AppState>, headers: HeaderMap) -> Response {
    let world = shared.world();
    match session_from_headers(&world, &headers) {
        Some(session) => {
            axum::Json(serde_json::json!({"token": session.request_token})).into_response()
        }
        None => StatusCode::FORBIDDEN.into_response(),
    }
}

async fn discovery(State(shared): State<AppState>, headers: HeaderMap) -> Response {
    let world = shared.world();
    let base = request_base(&shared, &world, &headers);
    axum::Json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/index.php/apps/oidc/authorize"),
        "token_endpoint": format!("{base}/index.php/apps/oidc/token"),
        "userinfo_endpoint": format!("{base}/index.php/apps/oidc/userinfo"),
        "jwks_uri": format!("{base}/index.php/apps/oidc/jwks"),
        "end_session_endpoint": format!("{base}/index.php/apps/oidc/logout"),
        "scopes_supported": ["openid", "profile", "email", "roles", "groups"],
        // The oidc app's lists (its DiscoveryGenerator); of these the fake
        // implements `code` only and refuses the others with
        // unsupported_response_type (docs/fake-vs-real.md).
        "response_types_supported": ["code", "code id_token", "id_token"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "implicit"],
        "acr_values_supported": ["0"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "code_challenge_methods_supported": ["S256"],
        "claim_types_supported": ["normal"],
        "claims_supported": ["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "azp", "preferred_username", "name", "email", "email_verified", "roles", "groups"],
        "request_parameter_supported": false,
        "request_uri_parameter_supported": false,
    }))
    .into_response()
}

async fn jwks(State(shared): State<AppState>) -> Response {
    axum::Json(access_token::JwkSet { keys: vec![shared.signer.jwk()] }).into_response()
}

#[derive(Debug, Deserialize)]
struct AuthorizeQuery {
    response_type: Option<String>,
    client_id: Option<String>,
    redirect_uri: Option<String>,
    scope: Option<String>,
    state: Option<String>,
    nonce: Option<String>,
    code_challenge: Option<String>,
    code_challenge_method: Option<String>,
}

async fn authorize(
    State(shared): State<AppState>,
    headers: HeaderMap,
    uri: http::Uri,
    Query(query): Query<AuthorizeQuery>,
) -> Response {
    let now = shared.now();
    let mut world = shared.world();
    if world.oidc.authorize_records.len() == AUTHORIZE_RECORD_COUNT_MAX {
        world.oidc.authorize_records.pop_front();
    }
    world.oidc.authorize_records.push_back(AuthorizeRecord {
        client_id: query.client_id.clone(),
        cookie_names: cookies(&headers).map(|(name, _)| name.to_string()).collect(),
        header_names: headers.keys().map(|name| name.as_str().to_string()).collect(),
    });
    let Some(client) = query.client_id.as_deref().and_then(|id| world.oidc.client(id)).cloned()
    else {
        return (StatusCode::BAD_REQUEST, "Your client is not authorized to connect. Please inform the administrator of your client.").into_response();
    };
    let redirect_uri = query.redirect_uri.clone().unwrap_or_default();
    if !client.redirect_uris.iter().any(|allowed| allowed == &redirect_uri) {
        return (StatusCode::BAD_REQUEST, "The received redirect URI is not accepted to connect. Please inform the administrator of your client.").into_response();
    }
    let error_redirect = |error: &str| {
        let mut url = url::Url::parse(&redirect_uri).expect("registered redirect URIs are URLs");
        url.query_pairs_mut().append_pair("error", error);
        if let Some(state) = &query.state {
            url.query_pairs_mut().append_pair("state", state);
        }
        Redirect::to(url.as_str()).into_response()
    };
    if query.response_type.as_deref() != Some("code") {
        return error_redirect("unsupported_response_type");
    }
    if let Some(method) = &query.code_challenge_method
        && method != "S256"
    {
        return error_redirect("invalid_request");
    }
    let Some(session) = session_from_headers(&world, &headers).cloned() else {
        // Not logged in: to the login page, back here afterwards.
        let back = uri.path_and_query().map(|pq| pq.as_str()).unwrap_or("/");
        let login = format!(
            "/index.php/login?redirect_url={}",
            percent_encoding::utf8_percent_encode(back, percent_encoding::NON_ALPHANUMERIC)
        );
        return Redirect::to(&login).into_response();
    };
    let code = random_token(64);
    world.oidc.codes.insert(
        code.clone(),
        Code {
            client_id: client.client_id.clone(),
            uid: session.uid.clone(),
            redirect_uri: redirect_uri.clone(),
            code_challenge: query.code_challenge.clone(),
            scope: query.scope.clone().unwrap_or("openid".to_string()),
            nonce: query.nonce.clone(),
            created: now,
        },
    );
    let mut url = url::Url::parse(&redirect_uri).expect("registered redirect URIs are URLs");
    url.query_pairs_mut().append_pair("code", &code);
    if let Some(state) = &query.state {
        url.query_pairs_mut().append_pair("state", state);
    }
    (StatusCode::SEE_OTHER, [(header::LOCATION, url.to_string())]).into_response()
}

#[derive(Debug, Deserialize)]
struct TokenForm {
    grant_type: Option<String>,
    code: Option<String>,
    redirect_uri: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    code_verifier: Option<String>,
}

fn token_error(status: StatusCode, error: &str, description: &str) -> Response {
    (
        status,
        [(header::CACHE_CONTROL, "no-store")],
        axum::Json(json!({ "error": error, "error_description": description })),
    )
        .into_response()
}

async fn token(
    State(shared): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<TokenForm>,
) -> Response {
    let now = shared.now();
    let mut world = shared.world();
    if form.grant_type.as_deref() != Some("authorization_code") {
        return token_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "Only the authorization_code grant is supported.",
        );
    }
    // Client authentication: HTTP Basic or form fields.
    let (client_id, client_secret) = match basic_credentials(&headers) {
        Some(credentials) => credentials,
        None => (
            form.client_id.clone().unwrap_or_default(),
            form.client_secret.clone().unwrap_or_default(),
        ),
    };
    let Some(client) = world.oidc.client(&client_id).cloned() else {
        return token_error(StatusCode::UNAUTHORIZED, "invalid_client", "The client is not known.");
    };
    if client.client_secret != client_secret {
        return token_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "The client secret is wrong.",
        );
    }
    let Some(code) = form.code.as_deref().and_then(|code| world.oidc.codes.remove(code)) else {
        return token_error(
            StatusCode::BAD_REQUEST,
            "invalid_grant",
            "The authorization code is not valid.",
        );
    };
    if code.client_id != client.client_id
        || form.redirect_uri.as_deref().is_some_and(|uri| uri != code.redirect_uri)
        || now - code.created > CODE_LIFETIME_SECONDS
    {
        return token_error(
            StatusCode::BAD_REQUEST,
            "invalid_grant",
            "The authorization code is not valid.",
        );
    }
    if let Some(challenge) = &code.code_challenge {
        let verifier = form.code_verifier.as_deref().unwrap_or("");
        let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        if &computed != challenge {
            return token_error(
                StatusCode::BAD_REQUEST,
                "invalid_grant",
                "The code verifier does not match.",
            );
        }
    }
    let Some(user) = world.users.get(&code.uid).cloned() else {
        return token_error(StatusCode::BAD_REQUEST, "invalid_grant", "The user no longer exists.");
    };
    let issuer = request_base(&shared, &world, &headers);
    let lifetime =
        world.faults.token_lifetime_seconds.unwrap_or(world.server.token_lifetime_seconds);
    let expires = now + lifetime;
    let access_token = if client.jwt_tokens {
        let claims = access_token::Claims {
            iss: issuer.clone(),
            sub: user.uid.clone(),
            aud: access_token::Audience::One(
                client.resource_url.clone().unwrap_or(client.client_id.clone()),
            ),
            exp: expires,
            iat: now,
            nbf: None,
            jti: random_token(32),
            client_id: client.client_id.clone(),
            azp: Some(client.client_id.clone()),
            preferred_username: Some(user.uid.clone()),
            scope: Some(code.scope.clone()),
        };
        shared.signer.sign_access_token(&claims)
    } else {
        random_token(72)
    };
    world
        .oidc
        .issued
        .insert(token_hash(&access_token), IssuedToken { uid: user.uid.clone(), expires });
    let mut id_claims = json!({
        "iss": issuer,
        "sub": user.uid,
        "aud": client.client_id,
        "exp": expires,
        "iat": now,
        "auth_time": now,
        "azp": client.client_id,
    });
    add_profile(&mut id_claims, &user);
    if let Some(nonce) = &code.nonce {
        id_claims["nonce"] = json!(nonce);
    }
    let id_token = shared.signer.sign("JWT", &id_claims);
    (
        StatusCode::OK,
        [(header::CACHE_CONTROL, "no-store"), (header::PRAGMA, "no-cache")],
        axum::Json(json!({
            "access_token": access_token,
            "token_type": "Bearer",
            "expires_in": lifetime,
            "id_token": id_token,
        })),
    )
        .into_response()
}

async fn userinfo(State(shared): State<AppState>, headers: HeaderMap) -> Response {
    let now = shared.now();
    let world = shared.world();
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or("");
    let Some(user) =
        world.oidc.lookup_access_token(token, now).and_then(|uid| world.users.get(&uid))
    else {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer error=\"invalid_token\"")],
        )
            .into_response();
    };
    let mut body = json!({ "sub": user.uid, "groups": user.groups });
    add_profile(&mut body, user);
    axum::Json(body).into_response()
}

/// The profile claims the ID token and userinfo both carry: the user's
/// name and, when they have one, their (verified) email.
fn add_profile(claims: &mut serde_json::Value, user: &crate::world::User) {
    claims["preferred_username"] = json!(user.uid);
    claims["name"] = json!(user.display_name);
    if let Some(email) = &user.email {
        claims["email"] = json!(email);
        claims["email_verified"] = json!(true);
    }
}

#[derive(Debug, Deserialize)]
struct LoginQuery {
    redirect_url: Option<String>,
}

async fn login_page(Query(query): Query<LoginQuery>) -> Response {
    let redirect = crate::xml::escape(query.redirect_url.as_deref().unwrap_or(""));
    Html(format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Login – Nextcloud (fake)</title></head>
<body>
<main>
<h1>Log in to Nextcloud</h1>
<form method="post" action="/index.php/login" name="login">
<input type="hidden" name="redirect_url" value="{redirect}">
<label>Account name or email <input name="user" id="user" autocomplete="username" required></label>
<label>Password <input type="password" name="password" id="password" autocomplete="current-password" required></label>
<button type="submit" id="submit-form">Log in</button>
</form>
</main>
</body></html>"#
    ))
    .into_response()
}

#[derive(Debug, Deserialize)]
struct LoginForm {
    user: String,
    password: String,
    #[serde(default)]
    redirect_url: Option<String>,
}

async fn login(State(shared): State<AppState>, Form(form): Form<LoginForm>) -> Response {
    let now = shared.now();
    let mut world = shared.world();
    let valid = world
        .users
        .get(&form.user)
        .is_some_and(|user| user.enabled && user.password == form.password);
    if !valid {
        return (
            StatusCode::SEE_OTHER,
            [(header::LOCATION, "/index.php/login?direct=1&user=".to_string() + &form.user)],
        )
            .into_response();
    }
    let session_id = world.oidc.create_session(&form.user, now);
    let cookie_name = session_cookie_name(&world);
    // Only local paths: an open redirect is a bug even in a fake.
    let target = form
        .redirect_url
        .filter(|url| url.starts_with('/') && !url.starts_with("//"))
        .unwrap_or("/index.php/apps/tamebi/".to_string());
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, target)]).into_response();
    let headers = response.headers_mut();
    for cookie in [
        format!("{cookie_name}={session_id}; path=/; HttpOnly; SameSite=Lax"),
        format!("oc_sessionPassphrase={}; path=/; HttpOnly; SameSite=Lax", random_token(40)),
        "nc_sameSiteCookielax=true; path=/; HttpOnly; SameSite=Lax".to_string(),
        "nc_sameSiteCookiestrict=true; path=/; HttpOnly; SameSite=Strict".to_string(),
        format!("nc_username={}; path=/; HttpOnly; SameSite=Lax", form.user),
    ] {
        headers.append(header::SET_COOKIE, cookie.parse().expect("cookie header"));
    }
    response
}

async fn logout(State(shared): State<AppState>, headers: HeaderMap) -> Response {
    let mut world = shared.world();
    if let Some(id) = session_id_from_headers(&world, &headers) {
        world.oidc.end_session(&id);
    }
    Redirect::to("/index.php/login").into_response()
}

fn basic_credentials(headers: &HeaderMap) -> Option<(String, String)> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let encoded = value.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (id, secret) = decoded.split_once(':')?;
    // RFC 6749 §2.3.1: both parts are form-urlencoded.
    let decode = |part: &str| {
        percent_encoding::percent_decode_str(&part.replace('+', " "))
            .decode_utf8_lossy()
            .into_owned()
    };
    Some((decode(id), decode(secret)))
}

/// A random URL-safe token of `length` characters.
pub fn random_token(length: usize) -> String {
    use rand::Rng as _;
    let mut rng = rand::thread_rng();
    (0..length).map(|_| rng.sample(rand::distributions::Alphanumeric) as char).collect()
}

fn token_hash(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}
