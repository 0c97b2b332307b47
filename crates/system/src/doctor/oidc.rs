//! The browser's way to a token, for the doctor: log in through the login
//! form (keeping the session cookies), then the authorization-code flow with
//! PKCE against Nextcloud's `oidc` app, exactly as the Tamebi app renews
//! tokens (docs/app-contract.md, "Token renewal"). Also decodes a JWT's
//! header and claims, without verifying: the services verify; the doctor
//! only reads what was minted.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::Rng as _;
use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// A logged-in browser session: the cookies Nextcloud set.
pub struct Session {
    cookies: Vec<(String, String)>,
}

impl Session {
    fn header(&self) -> String {
        self.cookies
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn absorb(&mut self, response: &reqwest::Response) {
        for value in response.headers().get_all(reqwest::header::SET_COOKIE) {
            let Ok(text) = value.to_str() else { continue };
            let Some((name, value)) = text.split(';').next().and_then(|pair| pair.split_once('='))
            else {
                continue;
            };
            let (name, value) = (name.trim().to_string(), value.trim().to_string());
            self.cookies.retain(|(known, _)| known != &name);
            if value != "deleted" && !value.is_empty() {
                self.cookies.push((name, value));
            }
        }
    }
}

/// Logs in through the form, as a browser does: fetch the page (cookies and
/// the CSRF request token a real Nextcloud requires), then post the form.
pub async fn login(
    http: &reqwest::Client,
    base: &str,
    user: &str,
    password: &str,
) -> Result<Session, String> {
    let mut session = Session { cookies: Vec::new() };
    let page_url = format!("{base}/index.php/login");
    let page = http.get(&page_url).send().await.map_err(|error| format!("{page_url}: {error}"))?;
    session.absorb(&page);
    let text = page.text().await.unwrap_or_default();
    let request_token = ["data-requesttoken=\"", "name=\"requesttoken\" value=\""]
        .iter()
        .find_map(|marker| text.split(marker).nth(1).and_then(|rest| rest.split('"').next()))
        .map(str::to_string);
    let mut form = vec![("user", user.to_string()), ("password", password.to_string())];
    if let Some(token) = request_token {
        form.push(("requesttoken", token));
    }
    let mut request = form_post(http, &page_url, &form);
    if !session.cookies.is_empty() {
        request = request.header(reqwest::header::COOKIE, session.header());
    }
    let answer = request.send().await.map_err(|error| format!("{page_url}: {error}"))?;
    session.absorb(&answer);
    let location = location(&answer);
    let failed = !answer.status().is_redirection()
        || location.contains("/login?")
        || location.ends_with("/login");
    if failed {
        return Err(format!(
            "the login form did not accept {user}'s password (HTTP {}, to {location:?})",
            answer.status().as_u16()
        ));
    }
    Ok(session)
}

/// A form POST (reqwest is built without its `form` feature).
fn form_post(
    http: &reqwest::Client,
    url: &str,
    pairs: &[(&str, String)],
) -> reqwest::RequestBuilder {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs.iter().map(|(name, value)| (*name, value.as_str())))
        .finish();
    http.post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(body)
}

fn location(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_string()
}

/// The client a token is asked of.
pub struct Client<'a> {
    pub client_id: &'a str,
    pub client_secret: &'a str,
    pub redirect_uri: &'a str,
}

/// Runs authorize + token with PKCE; the access token.
pub async fn code_flow(
    http: &reqwest::Client,
    base: &str,
    session: &Session,
    client: &Client<'_>,
) -> Result<String, String> {
    let verifier = random_string(64);
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    let state = random_string(24);
    let authorize = format!("{base}/index.php/apps/oidc/authorize");
    let authorize_url = url::Url::parse_with_params(
        &authorize,
        &[
            ("response_type", "code"),
            ("client_id", client.client_id),
            ("redirect_uri", client.redirect_uri),
            ("scope", "openid profile"),
            ("state", state.as_str()),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
        ],
    )
    .map_err(|error| format!("{authorize}: {error}"))?;
    let answer = http
        .get(authorize_url)
        .header(reqwest::header::COOKIE, session.header())
        .send()
        .await
        .map_err(|error| format!("{authorize}: {error}"))?;
    let status = answer.status().as_u16();
    let target = location(&answer);
    if !answer.status().is_redirection() {
        let body = answer.text().await.unwrap_or_default();
        return Err(format!(
            "the authorize endpoint answered HTTP {status}: {}",
            body.chars().take(200).collect::<String>()
        ));
    }
    if !target.starts_with(client.redirect_uri) {
        return Err(format!(
            "the authorize endpoint redirected to {target:?} instead of the redirect URI (a login page means the session was not accepted; a consent page means consent is not on record)"
        ));
    }
    let url = url::Url::parse(&target).map_err(|error| format!("{target}: {error}"))?;
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    let get = |key: &str| pairs.iter().find(|(name, _)| name == key).map(|(_, v)| v.clone());
    if let Some(error) = get("error") {
        return Err(format!("the authorize endpoint answered error={error}"));
    }
    if get("state").as_deref() != Some(state.as_str()) {
        return Err("the authorize endpoint did not return our state".into());
    }
    let code = get("code").ok_or("the authorize endpoint's redirect carries no code")?;
    let token_url = format!("{base}/index.php/apps/oidc/token");
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", client.redirect_uri),
        ("client_id", client.client_id),
        ("client_secret", client.client_secret),
        ("code_verifier", verifier.as_str()),
    ]
    .map(|(name, value)| (name, value.to_string()));
    let answer = form_post(http, &token_url, &form)
        .send()
        .await
        .map_err(|error| format!("{token_url}: {error}"))?;
    let status = answer.status().as_u16();
    let body: Value = answer.json().await.unwrap_or(Value::Null);
    match body["access_token"].as_str() {
        Some(token) if status == 200 => Ok(token.to_string()),
        _ => Err(format!(
            "the token endpoint answered HTTP {status}: {} {}",
            body["error"].as_str().unwrap_or(""),
            body["error_description"].as_str().unwrap_or("")
        )),
    }
}

/// A JWT's header and claims, unverified; `None` for an opaque token.
pub fn decode(token: &str) -> Option<(Value, Value)> {
    let mut parts = token.split('.');
    let (header, claims) = (parts.next()?, parts.next()?);
    parts.next()?;
    let part = |text: &str| -> Option<Value> {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(text.trim_end_matches('=')).ok()?).ok()
    };
    Some((part(header)?, part(claims)?))
}

/// The `aud` claim as a list (it may be one string or an array).
pub fn audiences(claims: &Value) -> Vec<String> {
    match &claims["aud"] {
        Value::String(one) => vec![one.clone()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

fn random_string(length: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
    let mut rng = rand::thread_rng();
    (0..length).map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char).collect()
}
