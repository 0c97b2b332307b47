//! Who the caller is: the signed identity the Tamebi Nextcloud app attaches to
//! every request.
//!
//! Only Nextcloud knows who the user is. The app reads the uid from the user's
//! session and signs it, with a timestamp and a hash of the body, using a
//! secret it shares with the orchestrator; nothing downstream re-derives an
//! identity. [`verify`] is the one door: it turns request headers and body
//! into an [`Identity`] or an [`IdentityError`] that says which HTTP status to
//! answer. The contract, with test vectors the PHP app must reproduce, is
//! `docs/identity.md`; a test checks those vectors against this code.
//!
//! The user's access tokens ride beside the signature, not under it, so
//! each must name the signed uid as its `sub` (read without verifying the
//! token, which the MCP servers do): a request signed for one user never
//! carries another's tokens.
//!
//! Rejected alternatives: a bearer token or session cookie checked here (the
//! orchestrator would need a Nextcloud client, which it must never have), and
//! trusting a `uid` field in the body (a body uid is an attempt to choose an
//! identity, so it is refused with 400 rather than ignored).

mod replay;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;

use hmac::{Hmac, Mac};
use http::{HeaderMap, StatusCode};
use sha2::{Digest, Sha256};

use replay::{ReplaySet, Seen};

pub const HEADER_UID: &str = wire::headers::UID;
pub const HEADER_TIMESTAMP: &str = wire::headers::TIMESTAMP;
pub const HEADER_SIGNATURE: &str = wire::headers::SIGNATURE;
/// A fresh random value per request, under the signature: two requests
/// alike in every other way (two tabs listing conversations in the same
/// second) are still two requests, not a replay.
pub const HEADER_NONCE: &str = wire::headers::NONCE;
/// Bytes of a nonce: 16 to 64 of `A-Z a-z 0-9 - _`.
pub const NONCE_BYTES_MIN: usize = 16;
pub const NONCE_BYTES_MAX: usize = 64;
/// Each of the user's access tokens comes in its own header, named for its
/// audience: `x-tamebi-token-mcp-nextcloud`, `x-tamebi-token-mcp-mail`,
/// `x-tamebi-token-nextcloud` — one token per audience, so no service is
/// ever handed a token minted for another.
pub const HEADER_TOKEN_PREFIX: &str = wire::headers::TOKEN_PREFIX;
/// How [`IdentityError::MalformedHeader`] names a token header.
pub const HEADER_TOKEN_PATTERN: &str = "x-tamebi-token-*";
/// Token headers in one request.
pub const TOKENS_MAX: usize = 8;
/// Bytes of an audience name in a token header.
pub const AUDIENCE_NAME_BYTES_MAX: usize = 40;
pub const HEADER_REQUEST_ID: &str = "x-request-id";
/// The user's Nextcloud app password, in app-password mode only: the app
/// sends the one the user saved, and the orchestrator hands it to the MCP
/// servers configured to receive it (`--app-password-server`), never to
/// the others.
pub const HEADER_APP_PASSWORD: &str = wire::headers::APP_PASSWORD;
/// Bytes of an app password (Nextcloud's are 72).
pub const APP_PASSWORD_BYTES_MAX: usize = 256;

/// How far a request's timestamp may be from the orchestrator's clock, either way.
pub const TIMESTAMP_WINDOW_S: u64 = 60;
/// How many signatures the replay set remembers before it refuses new requests.
pub const REPLAY_ENTRIES_MAX_DEFAULT: usize = 100_000;
/// A shared secret shorter than this is refused at start-up.
pub const SECRET_BYTES_MIN: usize = 32;
/// Nextcloud's `IUser::MAX_USERID_LENGTH`.
pub const UID_BYTES_MAX: usize = 64;
pub const REQUEST_ID_BYTES_MAX: usize = 200;
pub const ACCESS_TOKEN_BYTES_MAX: usize = 16 * 1024;

/// A caller whose identity Nextcloud signed.
#[derive(Clone, PartialEq, Eq)]
pub struct Identity {
    /// The Nextcloud user id, exactly as signed.
    pub uid: String,
    /// The user's OIDC access tokens by audience name (`mcp-nextcloud`,
    /// `nextcloud`, ...), as the app sent them. Without them the agent has
    /// no workspace tools this turn.
    pub tokens: BTreeMap<String, AccessToken>,
    /// Nextcloud's request id: one string joins the UI, nextcloud.log and our logs.
    pub request_id: String,
    /// The user's app password, when the app runs in app-password mode and
    /// the user saved one.
    pub app_password: Option<AccessToken>,
}

/// The user's access token. It is carried to the MCP servers and never stored
/// or logged, so it has no `Display` and its `Debug` is redacted.
#[derive(Clone, PartialEq, Eq)]
pub struct AccessToken(String);

/// Checks signatures with the shared secret and remembers the ones already used.
pub struct Verifier {
    secret: Vec<u8>,
    replay: Mutex<ReplaySet>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("the shared identity secret must be at least {SECRET_BYTES_MIN} bytes long")]
pub struct SecretTooShort;

/// Why a request's identity was refused. `Display` is safe to show the
/// caller: it never carries the secret or the expected signature.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum IdentityError {
    #[error("the request carries no {0} header")]
    MissingHeader(&'static str),
    #[error("the {header} header is malformed: {reason}")]
    MalformedHeader { header: &'static str, reason: &'static str },
    #[error("the uid is not a Nextcloud user id: {reason}")]
    InvalidUid { reason: &'static str },
    #[error(
        "the request's timestamp is {skew_s} s away from the server's clock \
         (at most {TIMESTAMP_WINDOW_S} s allowed)"
    )]
    StaleTimestamp { skew_s: u64 },
    #[error("the request's signature does not match its uid, timestamp and body")]
    BadSignature,
    #[error("this signed request was already used")]
    Replayed,
    #[error("too many requests in the replay window; try again shortly")]
    ReplayCapacity,
    #[error("the request body is not JSON")]
    BodyNotJson,
    #[error("the request body names a uid; the identity comes from the signature only")]
    BodyNamesUid,
    #[error("the {audience} token is not an access token that names its user (a JWT with a `sub`)")]
    TokenUnreadable { audience: String },
    #[error("the {audience} token was issued to another user than the signed uid")]
    TokenOfAnotherUser { audience: String },
}

/// Checks the signed identity of one request. `now_unix_s` is the
/// orchestrator's clock, passed in so tests can hold it still.
///
/// The checks run cheapest first and the body is parsed only once the
/// signature holds, so an unauthenticated caller cannot make us parse JSON.
pub fn verify(
    headers: &HeaderMap,
    route: Route<'_>,
    body: &[u8],
    verifier: &Verifier,
    now_unix_s: u64,
) -> Result<Identity, IdentityError> {
    let uid = header(headers, HEADER_UID)?;
    check_uid(uid)?;
    let timestamp_text = header(headers, HEADER_TIMESTAMP)?;
    let timestamp = parse_timestamp(timestamp_text)?;
    let signature = parse_signature(header(headers, HEADER_SIGNATURE)?)?;
    let nonce = header(headers, HEADER_NONCE)?;
    check_nonce(nonce)?;
    let request_id = header(headers, HEADER_REQUEST_ID)?;
    check_request_id(request_id)?;
    let tokens = parse_tokens(headers)?;
    let app_password = parse_app_password(headers)?;

    let skew_s = now_unix_s.abs_diff(timestamp);
    if skew_s > TIMESTAMP_WINDOW_S {
        return Err(IdentityError::StaleTimestamp { skew_s });
    }

    let signed = Signed {
        uid,
        timestamp: timestamp_text,
        nonce,
        method: route.method,
        path: route.path,
        body,
    };
    let mut mac = verifier.mac();
    mac.update(signed.canonical().as_bytes());
    // `verify_slice` compares in constant time.
    mac.verify_slice(&signature).map_err(|_| IdentityError::BadSignature)?;

    let seen = verifier
        .replay
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(timestamp, signature, now_unix_s);
    match seen {
        Seen::New => {}
        Seen::Again => return Err(IdentityError::Replayed),
        Seen::Full => {
            tracing::warn!("identity replay set is full; refusing a correctly signed request");
            return Err(IdentityError::ReplayCapacity);
        }
    }

    check_token_subjects(&tokens, uid)?;
    check_body(body)?;

    Ok(Identity { uid: uid.to_owned(), tokens, request_id: request_id.to_owned(), app_password })
}

/// The identity headers for one request signed now, with a fresh nonce —
/// what the Nextcloud app attaches (tests, benchmarks and tools use it):
/// uid, timestamp, nonce and signature, as (header, value) pairs.
pub fn signed_headers(
    secret: &[u8],
    uid: &str,
    route: Route<'_>,
    body: &[u8],
) -> [(&'static str, String); 4] {
    let timestamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or(0)
        .to_string();
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let signed = Signed {
        uid,
        timestamp: &timestamp,
        nonce: &nonce,
        method: route.method,
        path: route.path,
        body,
    };
    let signature = signed.sign(secret);
    [
        (HEADER_UID, uid.to_string()),
        (HEADER_TIMESTAMP, timestamp),
        (HEADER_NONCE, nonce),
        (HEADER_SIGNATURE, signature),
    ]
}

/// The route a request was sent to: its method and its path (without the
/// query string), as the orchestrator received them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route<'a> {
    pub method: &'a str,
    pub path: &'a str,
}

/// Everything a request's signature covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signed<'a> {
    pub uid: &'a str,
    /// As sent in the header.
    pub timestamp: &'a str,
    pub nonce: &'a str,
    /// Upper case, as sent: `POST`.
    pub method: &'a str,
    /// The orchestrator route's path, no query string: `/api/chat`.
    pub path: &'a str,
    pub body: &'a [u8],
}

impl Signed<'_> {
    /// The string the app signs: uid, timestamp, nonce, method, path and
    /// the lowercase hex SHA-256 of the raw body, joined by `\n`. None of
    /// the first five can contain `\n`, so no two requests share one.
    pub fn canonical(&self) -> String {
        let Signed { uid, timestamp, nonce, method, path, body } = self;
        format!(
            "{uid}\n{timestamp}\n{nonce}\n{method}\n{path}\n{}",
            hex_lower(&Sha256::digest(body))
        )
    }

    /// Signs the way the Nextcloud app does: lowercase hex HMAC-SHA256 of
    /// [`Signed::canonical`]. For tests and the fake app.
    pub fn sign(&self, secret: &[u8]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC accepts any key length");
        mac.update(self.canonical().as_bytes());
        hex_lower(&mac.finalize().into_bytes())
    }
}

impl IdentityError {
    /// 401 when the caller is not authenticated (missing identity, bad
    /// signature, stale or replayed, a token that names no user), 403 when
    /// a token is another user's, 400 when a signed request is malformed,
    /// 503 when the replay set is full.
    pub fn status(&self) -> StatusCode {
        match self {
            IdentityError::MissingHeader(_)
            | IdentityError::StaleTimestamp { .. }
            | IdentityError::BadSignature
            | IdentityError::Replayed
            | IdentityError::TokenUnreadable { .. } => StatusCode::UNAUTHORIZED,
            IdentityError::TokenOfAnotherUser { .. } => StatusCode::FORBIDDEN,
            IdentityError::MalformedHeader { .. }
            | IdentityError::InvalidUid { .. }
            | IdentityError::BodyNotJson
            | IdentityError::BodyNamesUid => StatusCode::BAD_REQUEST,
            IdentityError::ReplayCapacity => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

impl Verifier {
    pub fn new(secret: impl Into<Vec<u8>>) -> Result<Verifier, SecretTooShort> {
        Verifier::with_replay_entries_max(secret, REPLAY_ENTRIES_MAX_DEFAULT)
    }

    pub fn with_replay_entries_max(
        secret: impl Into<Vec<u8>>,
        replay_entries_max: usize,
    ) -> Result<Verifier, SecretTooShort> {
        let secret = secret.into();
        if secret.len() < SECRET_BYTES_MIN {
            return Err(SecretTooShort);
        }
        assert!(replay_entries_max > 0);
        let replay = Mutex::new(ReplaySet::new(TIMESTAMP_WINDOW_S, replay_entries_max));
        Ok(Verifier { secret, replay })
    }

    fn mac(&self) -> Hmac<Sha256> {
        Hmac::<Sha256>::new_from_slice(&self.secret).expect("HMAC accepts any key length")
    }
}

impl fmt::Debug for Verifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Verifier").field("secret", &"[redacted]").finish_non_exhaustive()
    }
}

impl AccessToken {
    /// The token itself, for the `Authorization` header of an MCP request.
    pub fn expose(&self) -> &str {
        &self.0
    }

    #[cfg(test)]
    pub(crate) fn for_tests(text: &str) -> AccessToken {
        AccessToken(text.to_owned())
    }
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AccessToken([redacted])")
    }
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Identity")
            .field("uid", &self.uid)
            .field("tokens", &self.tokens)
            .field("request_id", &self.request_id)
            .field("app_password", &self.app_password)
            .finish()
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &'static str) -> Result<&'a str, IdentityError> {
    let mut values = headers.get_all(name).iter();
    let value = values.next().ok_or(IdentityError::MissingHeader(name))?;
    if values.next().is_some() {
        return Err(IdentityError::MalformedHeader { header: name, reason: "sent more than once" });
    }
    value
        .to_str()
        .map_err(|_| IdentityError::MalformedHeader { header: name, reason: "not visible ASCII" })
}

/// Nextcloud's own rule (`OC\User\Manager::validateUserId`): letters, digits,
/// space and `_.@-'`, not blank, no surrounding space, not `.` or `..`, at
/// most 64 bytes.
fn check_uid(uid: &str) -> Result<(), IdentityError> {
    let invalid = |reason| Err(IdentityError::InvalidUid { reason });
    if uid.trim().is_empty() {
        return invalid("it is empty");
    }
    if uid.len() > UID_BYTES_MAX {
        return invalid("it is longer than 64 bytes");
    }
    if !uid.bytes().all(|b| b.is_ascii_alphanumeric() || b" _.@-'".contains(&b)) {
        return invalid("it has a character other than letters, digits, space and _.@-'");
    }
    if uid.trim() != uid {
        return invalid("it starts or ends with a space");
    }
    if uid == "." || uid == ".." {
        return invalid("it is a dot path");
    }
    Ok(())
}

/// Unix seconds in decimal, without sign or leading zero, so that each
/// instant has exactly one spelling.
fn parse_timestamp(text: &str) -> Result<u64, IdentityError> {
    let malformed =
        |reason| Err(IdentityError::MalformedHeader { header: HEADER_TIMESTAMP, reason });
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return malformed("not unix seconds in decimal digits");
    }
    if text.len() > 1 && text.starts_with('0') {
        return malformed("has a leading zero");
    }
    match text.parse() {
        Ok(timestamp) => Ok(timestamp),
        Err(_) => malformed("out of range"),
    }
}

/// Exactly 64 lowercase hex digits: one spelling per signature, so a
/// recased signature is not a second valid one.
fn parse_signature(text: &str) -> Result<[u8; 32], IdentityError> {
    let malformed = Err(IdentityError::MalformedHeader {
        header: HEADER_SIGNATURE,
        reason: "not 64 lowercase hex digits",
    });
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return malformed;
    }
    let mut signature = [0u8; 32];
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        match (hex_digit(pair[0]), hex_digit(pair[1])) {
            (Some(high), Some(low)) => signature[i] = high << 4 | low,
            _ => return malformed,
        }
    }
    Ok(signature)
}

fn check_nonce(nonce: &str) -> Result<(), IdentityError> {
    let ok = (NONCE_BYTES_MIN..=NONCE_BYTES_MAX).contains(&nonce.len())
        && nonce.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !ok {
        return Err(IdentityError::MalformedHeader {
            header: HEADER_NONCE,
            reason: "not 16 to 64 letters, digits, - or _",
        });
    }
    Ok(())
}

fn check_request_id(request_id: &str) -> Result<(), IdentityError> {
    let ok = !request_id.is_empty()
        && request_id.len() <= REQUEST_ID_BYTES_MAX
        && request_id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.@+=/:".contains(&b));
    if !ok {
        return Err(IdentityError::MalformedHeader {
            header: HEADER_REQUEST_ID,
            reason: "not 1 to 200 letters, digits or -_.@+=/:",
        });
    }
    Ok(())
}

/// The `x-tamebi-token-<audience>` headers: each audience at most once, a
/// name of lowercase letters, digits and `-`, at most [`TOKENS_MAX`].
fn parse_tokens(headers: &HeaderMap) -> Result<BTreeMap<String, AccessToken>, IdentityError> {
    let malformed =
        |reason| IdentityError::MalformedHeader { header: HEADER_TOKEN_PATTERN, reason };
    let mut tokens = BTreeMap::new();
    for name in headers.keys() {
        let Some(audience) = name.as_str().strip_prefix(HEADER_TOKEN_PREFIX) else {
            continue;
        };
        let valid_name = !audience.is_empty()
            && audience.len() <= AUDIENCE_NAME_BYTES_MAX
            && audience.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !valid_name {
            return Err(malformed("the audience is not 1 to 40 letters, digits or -"));
        }
        let mut values = headers.get_all(name).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return Err(malformed("sent more than once"));
        };
        let text = value.to_str().map_err(|_| malformed("not visible ASCII"))?;
        tokens.insert(audience.to_owned(), parse_access_token(text)?);
        if tokens.len() > TOKENS_MAX {
            return Err(malformed("more than 8 tokens"));
        }
    }
    Ok(tokens)
}

/// The optional [`HEADER_APP_PASSWORD`]: once, 1 to 256 visible ASCII
/// characters.
fn parse_app_password(headers: &HeaderMap) -> Result<Option<AccessToken>, IdentityError> {
    let malformed = |reason| IdentityError::MalformedHeader { header: HEADER_APP_PASSWORD, reason };
    let mut values = headers.get_all(HEADER_APP_PASSWORD).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(malformed("sent more than once"));
    }
    let text = value.to_str().map_err(|_| malformed("not visible ASCII"))?;
    let ok = !text.is_empty()
        && text.len() <= APP_PASSWORD_BYTES_MAX
        && text.bytes().all(|b| b.is_ascii_graphic());
    if !ok {
        return Err(malformed("not 1 to 256 visible ASCII characters without spaces"));
    }
    Ok(Some(AccessToken(text.to_owned())))
}

fn parse_access_token(text: &str) -> Result<AccessToken, IdentityError> {
    let ok = !text.is_empty()
        && text.len() <= ACCESS_TOKEN_BYTES_MAX
        && text.bytes().all(|b| b.is_ascii_graphic());
    if !ok {
        return Err(IdentityError::MalformedHeader {
            header: HEADER_TOKEN_PATTERN,
            reason: "not 1 to 16384 visible ASCII characters without spaces",
        });
    }
    Ok(AccessToken(text.to_owned()))
}

/// The tokens must be the signed user's: each one's `sub` is the uid. The
/// app signs the uid, but the tokens are not under the signature, so
/// without this a request signed as bob could carry alice's tokens and run
/// bob's turn on alice's workspace (and store it in bob's conversation).
///
/// The payload is decoded *without* verifying the token's signature: the
/// orchestrator holds no JWKS and no Nextcloud client, and needs neither —
/// every MCP server still verifies each token it is handed (signature,
/// issuer, audience, expiry). A forged token that names the right `sub`
/// gets past this check and no further; what it stops is a genuine token
/// of another user travelling under a signed uid.
fn check_token_subjects(
    tokens: &BTreeMap<String, AccessToken>,
    uid: &str,
) -> Result<(), IdentityError> {
    for (audience, token) in tokens {
        match token_subject(token.expose()) {
            None => return Err(IdentityError::TokenUnreadable { audience: audience.clone() }),
            Some(sub) if sub != uid => {
                return Err(IdentityError::TokenOfAnotherUser { audience: audience.clone() });
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The `sub` claim of a compact JWS (`header.payload.signature`), read
/// from the base64url payload; `None` when the token has not that shape
/// or names no subject.
fn token_subject(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    if header.is_empty() || signature.is_empty() {
        return None;
    }
    let claims: serde_json::Value = serde_json::from_slice(&base64url_decode(payload)?).ok()?;
    let sub = claims.get("sub")?.as_str()?;
    (!sub.is_empty()).then(|| sub.to_owned())
}

/// Unpadded base64url (RFC 7515 §2), strictly: no padding, no other
/// alphabet, no leftover bits (the `base64` crate's `URL_SAFE_NO_PAD`).
fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).ok()
}

/// Every orchestrator endpoint takes JSON, so a non-empty body that is not
/// JSON cannot be checked for a uid and is refused. A `uid` key at any depth
/// is refused too.
fn check_body(body: &[u8]) -> Result<(), IdentityError> {
    if body.is_empty() {
        return Ok(());
    }
    // serde_json refuses nesting deeper than 128, which bounds the walk below.
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|_| IdentityError::BodyNotJson)?;
    if json_names_uid(&value) {
        return Err(IdentityError::BodyNamesUid);
    }
    Ok(())
}

fn json_names_uid(value: &serde_json::Value) -> bool {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            serde_json::Value::Object(object) => {
                if object.contains_key("uid") {
                    return true;
                }
                stack.extend(object.values());
            }
            serde_json::Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    false
}

fn hex_digit(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        _ => None,
    }
}

fn hex_lower(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        text.push(DIGITS[usize::from(byte >> 4)] as char);
        text.push(DIGITS[usize::from(byte & 0xf)] as char);
    }
    text
}

#[cfg(test)]
mod tests;
