//! Who is calling: Basic (password or app password), Bearer (validated the
//! way user_oidc does it) or a browser session cookie.
//!
//! Bearer validation follows user_oidc's self-encoded validator: signature via
//! the provider's JWKS, `exp` with 60 s leeway, `iss` compared to the issuer
//! of the discovery document fetched through the configured internal URL, as
//! an exact string, and — when `audience_check` is on — `aud` must contain the
//! user_oidc provider's client id. Any failure is a bare 401, as the real one
//! gives: the caller learns nothing about why.

use crate::Shared;
use crate::world::World;
use base64::Engine as _;
use http::HeaderMap;

/// How a request proved who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethod {
    Password,
    AppPassword,
    Bearer,
    Session,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authenticated {
    pub uid: String,
    pub method: AuthMethod,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("no credentials")]
    Missing,
    #[error("invalid credentials")]
    Invalid,
    /// The right password of a disabled account: Nextcloud's login throws
    /// (`LoginException`) rather than failing quietly, so DAV answers 503
    /// and OCS 401 even on public routes.
    #[error("the account is disabled")]
    Disabled,
}

/// user_oidc's leeway on `exp`/`iat`.
pub const BEARER_LEEWAY_SECONDS: i64 = 60;

/// Authenticates a request to `path`.
pub fn authenticate(
    shared: &Shared,
    headers: &HeaderMap,
    path: &str,
) -> Result<Authenticated, AuthError> {
    let world = shared.world();
    if let Some(authorization) = headers.get(http::header::AUTHORIZATION) {
        let authorization = authorization.to_str().map_err(|_| AuthError::Invalid)?;
        let (scheme, value) = authorization.split_once(' ').ok_or(AuthError::Invalid)?;
        if scheme.eq_ignore_ascii_case("basic") {
            return basic(&world, value.trim());
        }
        if scheme.eq_ignore_ascii_case("bearer") {
            if world.faults.bearer_rejected(path) {
                return Err(AuthError::Invalid);
            }
            return bearer(shared, &world, value.trim());
        }
        return Err(AuthError::Invalid);
    }
    if let Some(uid) = session_uid(shared, &world, headers) {
        return Ok(Authenticated { uid, method: AuthMethod::Session });
    }
    Err(AuthError::Missing)
}

fn basic(world: &World, value: &str) -> Result<Authenticated, AuthError> {
    let decoded =
        base64::engine::general_purpose::STANDARD.decode(value).map_err(|_| AuthError::Invalid)?;
    let decoded = String::from_utf8(decoded).map_err(|_| AuthError::Invalid)?;
    let (uid, secret) = decoded.split_once(':').ok_or(AuthError::Invalid)?;
    let user = world.users.get(uid).ok_or(AuthError::Invalid)?;
    let method = if user.password == secret {
        AuthMethod::Password
    } else if user.app_passwords.iter().any(|app_password| app_password == secret) {
        AuthMethod::AppPassword
    } else {
        return Err(AuthError::Invalid);
    };
    if !user.enabled {
        return Err(AuthError::Disabled);
    }
    Ok(Authenticated { uid: uid.to_string(), method })
}

fn bearer(shared: &Shared, world: &World, token: &str) -> Result<Authenticated, AuthError> {
    let now = shared.now();
    let uid = if world.user_oidc.oidc_provider_bearer_validation {
        // The oidc app's own token store: no iss or aud check at all.
        world.oidc.lookup_access_token(token, now).ok_or(AuthError::Invalid)?
    } else {
        let discovery_base = world
            .user_oidc
            .discovery_url
            .as_deref()
            .and_then(|url| url::Url::parse(url).ok())
            .and_then(|url| {
                url.host_str().map(|host| match url.port() {
                    Some(port) => format!("{host}:{port}"),
                    None => host.to_string(),
                })
            });
        let discovery_host = discovery_base
            .unwrap_or_else(|| shared.base_url.trim_start_matches("http://").to_string());
        let issuer = crate::oidc::issuer(world, Some(&discovery_host), &shared.base_url);
        let validation = access_token::Validation {
            issuer,
            audience: world
                .user_oidc
                .audience_check
                .then(|| world.user_oidc.provider_client_id.clone()),
            require_at_jwt: false,
            leeway_seconds: BEARER_LEEWAY_SECONDS,
        };
        match verified(shared, token, &validation, now) {
            Ok(claims) => claims.sub,
            Err(error) => {
                tracing::debug!(%error, "bearer token refused");
                return Err(AuthError::Invalid);
            }
        }
    };
    if !world.users.get(&uid).is_some_and(|user| user.enabled) {
        return Err(AuthError::Invalid);
    }
    Ok(Authenticated { uid, method: AuthMethod::Bearer })
}

/// Validates a bearer as user_oidc does, checking a token's RS256
/// signature once: a token already verified under the same issuer and
/// audience is only checked for its time window again. (The check held the
/// world lock; it was most of the fake's CPU under load, docs/performance.md.)
fn verified(
    shared: &Shared,
    token: &str,
    validation: &access_token::Validation,
    now: i64,
) -> Result<access_token::Claims, access_token::TokenError> {
    let key = format!("{}\n{:?}\n{token}", validation.issuer, validation.audience);
    let leeway = validation.leeway_seconds;
    let remembered = shared.verified_bearers.lock().expect("bearer cache").get(&key).cloned();
    if let Some(claims) = remembered
        && now <= claims.exp + leeway
        && claims.nbf.is_none_or(|nbf| nbf <= now + leeway)
        && claims.iat <= now + leeway
    {
        return Ok(claims);
    }
    let jwks = access_token::JwkSet { keys: vec![shared.signer.jwk()] };
    let claims = access_token::validate(token, &jwks, validation, now)?;
    let mut cache = shared.verified_bearers.lock().expect("bearer cache");
    if cache.len() >= VERIFIED_BEARERS_MAX {
        cache.clear();
    }
    cache.insert(key, claims.clone());
    Ok(claims)
}

/// Verified bearers remembered before the cache starts over.
const VERIFIED_BEARERS_MAX: usize = 10_000;

/// The uid of a logged-in browser session, from Nextcloud's cookies.
pub fn session_uid(shared: &Shared, world: &World, headers: &HeaderMap) -> Option<String> {
    let session = crate::oidc::session_from_headers(world, headers)?;
    let _ = shared;
    world.users.get(&session.uid).filter(|user| user.enabled)?;
    Some(session.uid.clone())
}

/// The 401 of a DAV request on a browser session without its request
/// token (the dav app's CSRF check).
pub fn dav_csrf_failed() -> axum::response::Response {
    use axum::response::IntoResponse as _;
    (
        http::StatusCode::UNAUTHORIZED,
        [(http::header::CONTENT_TYPE, "application/xml; charset=utf-8")],
        crate::xml::error_body("Sabre\\DAV\\Exception\\NotAuthenticated", "CSRF check not passed."),
    )
        .into_response()
}

/// What DAV answers a disabled account's right password: its auth
/// plugin turns the login's exception into sabre's 503.
pub fn dav_login_refused() -> axum::response::Response {
    use axum::response::IntoResponse as _;
    (
        http::StatusCode::SERVICE_UNAVAILABLE,
        [(http::header::CONTENT_TYPE, "application/xml; charset=utf-8")],
        crate::xml::error_body(
            "Sabre\\DAV\\Exception\\ServiceUnavailable",
            "OC\\User\\LoginException: Account disabled",
        ),
    )
        .into_response()
}

/// The 401 a DAV client gets.
pub fn dav_unauthorized() -> axum::response::Response {
    use axum::response::IntoResponse as _;
    (
        http::StatusCode::UNAUTHORIZED,
        [
            (http::header::CONTENT_TYPE, "application/xml; charset=utf-8"),
            (http::header::WWW_AUTHENTICATE, "Basic realm=\"Nextcloud\", charset=\"UTF-8\""),
        ],
        crate::xml::error_body(
            "Sabre\\DAV\\Exception\\NotAuthenticated",
            "No public access to this resource., No 'Authorization: Basic' header found, Either no authentication was provided or the credentials were wrong",
        ),
    )
        .into_response()
}
