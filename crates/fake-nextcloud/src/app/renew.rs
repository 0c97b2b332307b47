//! Token renewal (the seeds' TokenRenewer): per session and audience, the
//! access token and its expiry, renewed by running the authorization-code
//! flow server-side on a loopback call with the user's own session cookies.
//!
//! The `oidc` app issues no refresh token, so this is the only way to keep a
//! 15-minute token alive without asking the user to log in again. The call
//! goes over real HTTP to the fake's own authorize and token endpoints —
//! exactly what the PHP app does against Nextcloud — so the flow is the one
//! real clients use, consent, redirect URI and PKCE included. Only the
//! browser's `nc_*` and `oc*` cookies travel: the session, nothing else the
//! browser sent. Expiry follows the fake's clock, so a test that advances it
//! sees renewal.

use super::{Audience, SessionCaller};
use crate::Shared;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{HeaderMap, header};
use sha2::{Digest as _, Sha256};
use std::collections::HashMap;

/// Tokens held for live sessions, keyed by (session id, audience name).
#[derive(Debug, Default)]
pub struct TokenCache {
    tokens: HashMap<(String, String), CachedToken>,
}

#[derive(Debug, Clone)]
struct CachedToken {
    access_token: String,
    /// Unix seconds on the fake's clock.
    expires: i64,
}

impl TokenCache {
    /// How many tokens are held (the admin state shows it).
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

/// The path the PHP app registers as its OIDC redirect URI; the loopback
/// flow never follows it, it only reads the code from the redirect.
const CALLBACK_PATH: &str = "/apps/tamebi/oauth/callback";

/// The user's token for each configured audience, renewed where missing or
/// expiring within the margin; an audience whose token cannot be obtained is
/// left out (the orchestrator then offers no tools of that server).
pub(super) async fn tokens(
    shared: &Shared,
    caller: &SessionCaller,
    browser_headers: &HeaderMap,
) -> Vec<(String, String)> {
    let (audiences, margin_s) = {
        let mut world = shared.world();
        // Forget the tokens of ended sessions, so the cache stays bounded by
        // the live sessions times the audiences.
        let ended: Vec<String> = world
            .app
            .tokens
            .tokens
            .keys()
            .map(|(session_id, _)| session_id.clone())
            .filter(|session_id| world.oidc.session(session_id).is_none())
            .collect();
        world.app.tokens.tokens.retain(|(session_id, _), _| !ended.contains(session_id));
        (world.app.settings.audiences.clone(), world.app.settings.renew_margin_s)
    };
    let cookies = session_cookies(browser_headers);
    let mut tokens = Vec::with_capacity(audiences.len());
    for audience in &audiences {
        let key = (caller.session_id.clone(), audience.name.clone());
        let cached = shared.world().app.tokens.tokens.get(&key).cloned();
        let now = shared.now();
        if let Some(cached) = cached
            && cached.expires - now > margin_s
        {
            tokens.push((audience.name.clone(), cached.access_token));
            continue;
        }
        match obtain(shared, audience, cookies.as_deref()).await {
            Ok(obtained) => {
                shared.world().app.tokens.tokens.insert(key, obtained.clone());
                tokens.push((audience.name.clone(), obtained.access_token));
            }
            Err(error) => {
                tracing::warn!(audience = %audience.name, %error, "no token for this audience");
                shared.world().app.tokens.tokens.remove(&key);
            }
        }
    }
    tokens
}

/// The `Cookie` header of the loopback call: only the browser's `nc_*` and
/// `oc*` cookies (Nextcloud's session, its passphrase and same-site markers).
pub(super) fn session_cookies(browser_headers: &HeaderMap) -> Option<String> {
    let kept: Vec<&str> = browser_headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .map(str::trim)
        .filter(|pair| {
            let name = pair.split_once('=').map_or(*pair, |(name, _)| name);
            name.starts_with("nc_") || name.starts_with("oc")
        })
        .collect();
    (!kept.is_empty()).then(|| kept.join("; "))
}

#[derive(Debug, thiserror::Error)]
enum RenewError {
    #[error("the OIDC client {0:?} is not registered")]
    UnknownClient(String),
    #[error("the OIDC client {0:?} has no redirect URI")]
    NoRedirectUri(String),
    #[error("the session is gone (the authorize endpoint asked for a login)")]
    SessionGone,
    #[error("the authorize endpoint answered {0}")]
    Authorize(String),
    #[error("the token endpoint answered {0}")]
    Token(String),
    #[error("the loopback call failed: {0}")]
    Http(#[from] reqwest::Error),
}

async fn obtain(
    shared: &Shared,
    audience: &Audience,
    cookies: Option<&str>,
) -> Result<CachedToken, RenewError> {
    let client = shared
        .world()
        .oidc
        .client(&audience.client_id)
        .cloned()
        .ok_or_else(|| RenewError::UnknownClient(audience.client_id.clone()))?;
    let redirect_uri = client
        .redirect_uris
        .iter()
        .find(|uri| uri.ends_with(CALLBACK_PATH))
        .or(client.redirect_uris.first())
        .cloned()
        .ok_or_else(|| RenewError::NoRedirectUri(client.client_id.clone()))?;
    let verifier = crate::oidc::random_token(64);
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let state = crate::oidc::random_token(24);

    let mut authorize =
        url::Url::parse(&format!("{}/index.php/apps/oidc/authorize", shared.base_url))
            .expect("the fake's own URL");
    authorize
        .query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &client.client_id)
        .append_pair("redirect_uri", &redirect_uri)
        .append_pair("scope", "openid profile")
        .append_pair("state", &state)
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256");
    let mut request = shared.http.get(authorize.as_str());
    if let Some(cookies) = cookies {
        request = request.header(header::COOKIE, cookies);
    }
    let response = request.send().await?;
    let location = response
        .headers()
        .get(header::LOCATION)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string);
    let Some(location) = location.filter(|_| response.status().is_redirection()) else {
        return Err(RenewError::Authorize(format!("{} without a redirect", response.status())));
    };
    let code = code_from_redirect(&location, &redirect_uri, &state)?;

    let form = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "authorization_code")
        .append_pair("code", &code)
        .append_pair("redirect_uri", &redirect_uri)
        .append_pair("client_id", &client.client_id)
        .append_pair("client_secret", &client.client_secret)
        .append_pair("code_verifier", &verifier)
        .finish();
    let requested = shared.now();
    let response = shared
        .http
        .post(format!("{}/index.php/apps/oidc/token", shared.base_url))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await?;
    let status = response.status();
    if !status.is_success() {
        return Err(RenewError::Token(status.to_string()));
    }
    let answer: serde_json::Value = response.json().await?;
    let access_token = answer["access_token"].as_str().unwrap_or_default().to_string();
    let expires_in = answer["expires_in"].as_i64().unwrap_or(0);
    if access_token.is_empty() || expires_in <= 0 {
        return Err(RenewError::Token("no access token or no lifetime".into()));
    }
    Ok(CachedToken { access_token, expires: requested + expires_in })
}

/// The code of `redirect_uri?code=…&state=…`; a redirect anywhere else (the
/// login page) means the session is gone.
fn code_from_redirect(
    location: &str,
    redirect_uri: &str,
    state: &str,
) -> Result<String, RenewError> {
    let Some(query) = location.strip_prefix(redirect_uri).and_then(|rest| rest.strip_prefix('?'))
    else {
        return Err(if location.contains("/login") {
            RenewError::SessionGone
        } else {
            RenewError::Authorize("a redirect to an unexpected place".into())
        });
    };
    let pairs: HashMap<String, String> =
        url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    if let Some(error) = pairs.get("error") {
        return Err(RenewError::Authorize(format!("error {error}")));
    }
    if pairs.get("state").map(String::as_str) != Some(state) {
        return Err(RenewError::Authorize("a redirect with another state".into()));
    }
    pairs.get("code").cloned().ok_or(RenewError::Authorize("a redirect without a code".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_nextcloud_cookies_travel() {
        let mut headers = HeaderMap::new();
        headers.append(header::COOKIE, "ocabc=s1; evil=1; nc_username=alice".parse().unwrap());
        headers
            .append(header::COOKIE, "oc_sessionPassphrase=p; _ga=x; nc_token=t".parse().unwrap());
        assert_eq!(
            session_cookies(&headers).as_deref(),
            Some("ocabc=s1; nc_username=alice; oc_sessionPassphrase=p; nc_token=t")
        );
        let mut foreign = HeaderMap::new();
        foreign.append(header::COOKIE, "evil=1; noc=2".parse().unwrap());
        assert_eq!(session_cookies(&foreign), None);
    }

    #[test]
    fn the_code_comes_only_from_the_registered_redirect() {
        let redirect = "http://127.0.0.1:8080/index.php/apps/tamebi/oauth/callback";
        let good = format!("{redirect}?code=c1&state=s1");
        assert_eq!(code_from_redirect(&good, redirect, "s1").unwrap(), "c1");
        assert!(matches!(
            code_from_redirect(&good, redirect, "other"),
            Err(RenewError::Authorize(_))
        ));
        assert!(matches!(
            code_from_redirect("/index.php/login?redirect_url=x", redirect, "s1"),
            Err(RenewError::SessionGone)
        ));
        let refused = format!("{redirect}?error=invalid_request&state=s1");
        assert!(matches!(
            code_from_redirect(&refused, redirect, "s1"),
            Err(RenewError::Authorize(_))
        ));
    }
}
