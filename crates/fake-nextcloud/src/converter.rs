//! An OnlyOffice-style document converter on its own listener.
//!
//! `POST /converter` (alias `/ConvertService.ashx`, the legacy name) takes
//! the conversion API's JSON — `{async, filetype, key, outputtype, title,
//! url, token}` — fetches `url` itself, as the real document server does
//! (it holds no user credential: the caller lends the file on a one-shot
//! URL), converts, and answers with a URL on this listener where the result
//! can be fetched: `GET /cache/{id}/output.txt`. Answers are JSON when the
//! request's `Accept` names `application/json` and XML otherwise, and
//! failures are OnlyOffice's error codes in an HTTP 200, as the real one
//! sends them ([`ErrorCode`]).
//!
//! The JWT secret. With a secret configured (`server.converter_secret`), the
//! request must carry an HS256 token signed with it — in the body's `token`
//! or as `Authorization: Bearer` — and the token's payload is what gets
//! converted (a body token's payload holds the fields themselves, a header
//! token's holds them under `payload`, as in OnlyOffice). A missing or wrong
//! token is -8. That is the seeds' bug seen from the client: an MCP server
//! started without ONLYOFFICE_JWT_SECRET sends no token and every document
//! fails with -8, exactly like an unreadable file. The fault
//! `converter_secret_missing` is the other side: the converter runs as a
//! document server with JWT disabled, so it requires no token and ignores
//! one that is sent. `POST /__fake/server` sets or clears the secret at run
//! time ("fixing the configuration").
//!
//! What converts to `txt`: plain text (txt, md, csv) as it is, minus a
//! byte-order mark, and RTF through a small reader of its own ([`rtf`]),
//! whose failures (not RTF, unbalanced braces, an unsupported code page)
//! are -3. The other office formats (docx, odt, pdf...) answer -3 until
//! real extractors arrive; an unknown type is -9.

pub mod rtf;

use crate::AppState;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use hmac::Mac as _;
use http::{HeaderMap, StatusCode, header};
use serde_json::{Map, Value, json};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// The largest conversion request accepted.
pub const REQUEST_BODY_LENGTH_MAX: usize = 64 * 1024;
/// The largest document downloaded (OnlyOffice's `maxDownloadBytes`); -10 past it.
pub const DOWNLOAD_LENGTH_MAX: usize = 100 * 1024 * 1024;
/// Converted results kept for fetching; the oldest go first.
pub const RESULTS_MAX: usize = 256;

/// OnlyOffice's conversion error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    Unknown = -1,
    Timeout = -2,
    Conversion = -3,
    Download = -4,
    Password = -5,
    Database = -6,
    Input = -7,
    InvalidToken = -8,
    UndetectableFormat = -9,
    SizeLimit = -10,
}

/// Plain-text input types, converted as they are.
pub const TEXT_TYPES: &[&str] = &["txt", "md", "markdown", "csv"];
/// Input types read by [`rtf`].
pub const RTF_TYPES: &[&str] = &["rtf"];
/// Input types the real server converts that the fake does not yet.
pub const OFFICE_TYPES: &[&str] = &[
    "docx", "doc", "odt", "pdf", "xlsx", "xls", "ods", "pptx", "ppt", "odp", "html", "htm", "epub",
    "djvu", "xps",
];

/// How a document of a converted type becomes text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextReader {
    Plain,
    Rtf,
}

impl TextReader {
    fn for_type(file_type: &str) -> Result<TextReader, ErrorCode> {
        if TEXT_TYPES.contains(&file_type) {
            Ok(TextReader::Plain)
        } else if RTF_TYPES.contains(&file_type) {
            Ok(TextReader::Rtf)
        } else if OFFICE_TYPES.contains(&file_type) {
            Err(ErrorCode::Conversion)
        } else {
            Err(ErrorCode::UndetectableFormat)
        }
    }

    fn text(self, document: &[u8]) -> Result<String, ErrorCode> {
        match self {
            TextReader::Plain => {
                let text = String::from_utf8_lossy(document);
                Ok(text.strip_prefix('\u{feff}').unwrap_or(&text).to_string())
            }
            TextReader::Rtf => rtf::to_text(document).map_err(|error| {
                tracing::debug!(%error, "the RTF document could not be read");
                ErrorCode::Conversion
            }),
        }
    }
}

#[derive(Clone)]
struct ConverterState {
    shared: AppState,
    results: Arc<Mutex<Results>>,
}

#[derive(Default)]
struct Results {
    /// result id → text
    by_id: HashMap<String, Bytes>,
    /// conversion key → result id (OnlyOffice caches by key)
    by_key: HashMap<String, String>,
    order: VecDeque<(String, String)>,
}

impl Results {
    fn insert(&mut self, key: &str, text: Bytes) -> String {
        if self.order.len() >= RESULTS_MAX
            && let Some((old_id, old_key)) = self.order.pop_front()
        {
            self.by_id.remove(&old_id);
            self.by_key.remove(&old_key);
        }
        let id = crate::oidc::random_token(32);
        self.by_id.insert(id.clone(), text);
        self.by_key.insert(key.to_string(), id.clone());
        self.order.push_back((id.clone(), key.to_string()));
        id
    }
}

pub fn router(shared: AppState) -> Router {
    let state = ConverterState { shared, results: Arc::new(Mutex::new(Results::default())) };
    Router::new()
        .route("/converter", post(convert))
        .route("/ConvertService.ashx", post(convert))
        .route("/cache/{id}/{name}", get(cached))
        .route("/healthcheck", get(|| async { "true" }))
        .layer(DefaultBodyLimit::max(REQUEST_BODY_LENGTH_MAX))
        .with_state(state)
}

/// The converter's answer format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Xml,
}

fn respond_error(format: Format, code: ErrorCode) -> Response {
    let code = code as i32;
    match format {
        Format::Json => axum::Json(json!({ "error": code })).into_response(),
        Format::Xml => xml(format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><FileResult><Error>{code}</Error></FileResult>"
        )),
    }
}

fn respond_done(format: Format, file_url: &str) -> Response {
    match format {
        Format::Json => axum::Json(json!({
            "endConvert": true,
            "fileType": "txt",
            "fileUrl": file_url,
            "percent": 100,
        }))
        .into_response(),
        Format::Xml => xml(format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><FileResult><FileUrl>{}</FileUrl><FileType>txt</FileType><Percent>100</Percent><EndConvert>True</EndConvert></FileResult>",
            crate::xml::escape(file_url)
        )),
    }
}

fn xml(body: String) -> Response {
    ([(header::CONTENT_TYPE, "application/xml; charset=utf-8")], body).into_response()
}

async fn convert(State(state): State<ConverterState>, headers: HeaderMap, body: Bytes) -> Response {
    let format = match headers.get(header::ACCEPT).and_then(|value| value.to_str().ok()) {
        Some(accept) if accept.contains("application/json") => Format::Json,
        _ => Format::Xml,
    };
    match conversion(&state, &headers, &body).await {
        Ok(file_url) => respond_done(format, &file_url),
        Err(code) => {
            tracing::debug!(code = code as i32, "conversion failed");
            respond_error(format, code)
        }
    }
}

async fn conversion(
    state: &ConverterState,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<String, ErrorCode> {
    let shared = &state.shared;
    let Ok(Value::Object(body)) = serde_json::from_slice::<Value>(body) else {
        return Err(ErrorCode::Input);
    };
    let secret = {
        let world = shared.world();
        if world.faults.converter_secret_missing {
            None
        } else {
            world.server.converter_secret.clone()
        }
    };
    let request = match secret {
        None => body,
        Some(secret) => {
            let token = match body.get("token").and_then(Value::as_str) {
                Some(token) => token.to_string(),
                None => headers
                    .get(header::AUTHORIZATION)
                    .and_then(|value| value.to_str().ok())
                    .and_then(|value| value.strip_prefix("Bearer "))
                    .map(str::to_string)
                    .ok_or(ErrorCode::InvalidToken)?,
            };
            let payload =
                verify_hs256(&secret, &token, shared.now()).ok_or(ErrorCode::InvalidToken)?;
            match payload.get("payload") {
                Some(Value::Object(inner)) => inner.clone(),
                _ => payload,
            }
        }
    };
    let text_of = |name: &str| request.get(name).and_then(Value::as_str).map(str::to_string);
    let url = text_of("url").ok_or(ErrorCode::Input)?;
    let key = text_of("key").ok_or(ErrorCode::Input)?;
    let output_type = text_of("outputtype").ok_or(ErrorCode::Input)?;
    let file_type = text_of("filetype")
        .or_else(|| text_of("title").and_then(|title| extension(&title)))
        .map(|file_type| file_type.to_ascii_lowercase())
        .ok_or(ErrorCode::UndetectableFormat)?;
    if !output_type.eq_ignore_ascii_case("txt") {
        return Err(ErrorCode::Conversion);
    }
    let reader = TextReader::for_type(&file_type)?;
    if let Some(id) =
        state.results.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).by_key.get(&key)
    {
        return Ok(format!("{}/cache/{id}/output.txt", shared.converter_url));
    }
    let document = download(shared, &url).await?;
    let text = reader.text(&document)?;
    let id = state
        .results
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(&key, Bytes::from(text));
    Ok(format!("{}/cache/{id}/output.txt", shared.converter_url))
}

fn extension(name: &str) -> Option<String> {
    name.rsplit_once('.')
        .map(|(_, extension)| extension.to_string())
        .filter(|extension| !extension.is_empty())
}

/// Fetches the document: http(s) only, 2xx only, at most
/// [`DOWNLOAD_LENGTH_MAX`] bytes.
async fn download(shared: &crate::Shared, url: &str) -> Result<Vec<u8>, ErrorCode> {
    let parsed = url::Url::parse(url).map_err(|_| ErrorCode::Download)?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ErrorCode::Download);
    }
    let mut response = shared.http.get(parsed).send().await.map_err(|_| ErrorCode::Download)?;
    if !response.status().is_success() {
        return Err(ErrorCode::Download);
    }
    if response.content_length().is_some_and(|length| length as usize > DOWNLOAD_LENGTH_MAX) {
        return Err(ErrorCode::SizeLimit);
    }
    let mut document = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|_| ErrorCode::Download)? {
        if document.len() + chunk.len() > DOWNLOAD_LENGTH_MAX {
            return Err(ErrorCode::SizeLimit);
        }
        document.extend_from_slice(&chunk);
    }
    Ok(document)
}

async fn cached(
    State(state): State<ConverterState>,
    Path((id, _name)): Path<(String, String)>,
) -> Response {
    let results = state.results.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    match results.by_id.get(&id) {
        Some(text) => {
            ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text.clone()).into_response()
        }
        None => (StatusCode::NOT_FOUND, "Not found\n").into_response(),
    }
}

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// Signs `payload` as an HS256 JWT, as the document server's clients do.
pub fn sign_hs256(secret: &str, payload: &Value) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let payload =
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(payload).expect("JSON values serialise"));
    let signing_input = format!("{header}.{payload}");
    let mut mac =
        HmacSha256::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(signing_input.as_bytes());
    format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes()))
}

/// Checks an HS256 JWT (header `alg` must be HS256; `exp`, when present,
/// must not have passed) and returns its payload object.
pub fn verify_hs256(secret: &str, token: &str, now: i64) -> Option<Map<String, Value>> {
    if token.len() > access_token::TOKEN_LENGTH_MAX {
        return None;
    }
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).ok()?).ok()?;
    if header.get("alg").and_then(Value::as_str) != Some("HS256") {
        return None;
    }
    let signature = URL_SAFE_NO_PAD.decode(signature).ok()?;
    let mut mac =
        HmacSha256::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(&token.as_bytes()[..token.len() - parts_tail_length(token)]);
    mac.verify_slice(&signature).ok()?;
    let Value::Object(payload) =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?
    else {
        return None;
    };
    if let Some(expiry) = payload.get("exp").and_then(Value::as_i64)
        && expiry < now
    {
        return None;
    }
    Some(payload)
}

/// The length of ".signature" at the end of a token.
fn parts_tail_length(token: &str) -> usize {
    token.rfind('.').map(|dot| token.len() - dot).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hs256_round_trips_and_rejects_tampering() {
        let payload = json!({"url": "http://x/a.md", "exp": 2_000});
        let token = sign_hs256("secret", &payload);
        assert_eq!(verify_hs256("secret", &token, 1_000).map(Value::Object), Some(payload));
        assert!(verify_hs256("other", &token, 1_000).is_none());
        assert!(verify_hs256("secret", &token, 3_000).is_none(), "expired");
        let mut tampered = token.clone();
        tampered.insert(token.find('.').unwrap() + 2, 'x');
        assert!(verify_hs256("secret", &tampered, 1_000).is_none());
        assert!(verify_hs256("secret", "a.b", 1_000).is_none());
    }

    #[test]
    fn hs256_matches_a_known_vector() {
        // Computed independently with Python's hmac and base64 modules over
        // the same header and payload bytes.
        let token = sign_hs256("demo-converter-secret", &json!({"a": 1}));
        assert_eq!(
            token,
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJhIjoxfQ.21KfL29VVZnh-dSpbhxyueezDozbXv862MSU1kYBs4A"
        );
    }

    #[test]
    fn alg_none_is_refused() {
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none"}"#);
        let payload = URL_SAFE_NO_PAD.encode(br#"{"url":"x"}"#);
        assert!(verify_hs256("secret", &format!("{header}.{payload}."), 0).is_none());
    }

    #[test]
    fn results_are_bounded() {
        let mut results = Results::default();
        for index in 0..RESULTS_MAX + 3 {
            results.insert(&format!("key{index}"), Bytes::from_static(b"x"));
        }
        assert_eq!(results.by_id.len(), RESULTS_MAX);
        assert!(!results.by_key.contains_key("key0"));
        assert!(results.by_key.contains_key(&format!("key{}", RESULTS_MAX + 2)));
    }
}
