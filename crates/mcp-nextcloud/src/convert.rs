//! The OnlyOffice converter path: text out of the documents the in-process
//! extractor (the `extract` crate) cannot read — DOC, RTF, XLS(X), PPT(X),
//! EPUB ([`Converter::takes`]).
//!
//! The flow. The caller already holds the file's bytes (downloaded as the
//! user). We lend them to the document server on a one-shot URL served by a
//! listener of our own ([`lend`]), ask the converter to fetch and convert
//! them (`POST {url}/converter`, OnlyOffice's conversion API, synchronous,
//! output `txt`), fetch the text it made, and normalise it the way `extract`
//! does (UTF-8, no BOM, `\n` newlines), so an offset means the same thing
//! whichever path read a document.
//!
//! Why a one-shot loan and not a public share link. The document server holds
//! no user credential, so it has to fetch the file from a URL that needs none.
//! A share link would be created as the user and be visible to them in
//! Nextcloud, would outlive the conversion unless we remembered to delete it,
//! and would be reachable by anyone on the internet who saw it. A loan is a
//! 256-bit random token, kept in memory only, good for one GET within 60 s,
//! on a listener meant for the Compose network only (`lend_listen`, reached
//! as `lend_url`). The token is never logged.
//!
//! Why the errors are typed as they are. The seeds' bug: an MCP server started
//! without ONLYOFFICE_JWT_SECRET sent no token, the document server answered
//! -8 to every request, and each document was reported as unreadable — a
//! configuration fault dressed up as a property of the document, so nobody
//! looked at the configuration. [`ConvertError`] keeps the two apart
//! ([`ConvertError::is_configuration_fault`]): -8 (the secret), -4 (the
//! converter cannot reach our lend URL) and a converter that does not answer
//! are the operator's to fix; only -3/-5/-7/-9 blame the document. The secret
//! is checked by the converter, not by us: we sign every request with it
//! (HS256, [`jwt`]) when it is configured.
//!
//! Bounds. A whole conversion, polling included, takes at most
//! [`CONVERSION_TIME_MAX`] ([`ConvertError::Timeout`] past it); loans are
//! bounded in count and in bytes, and past either bound `convert` answers
//! [`ConvertError::Busy`] instead of growing; the converter's answer and the
//! converted text are bounded in length. [`ConverterLimits`] holds them all so
//! tests can shrink them.
//!
//! Lifecycle: the lend listener runs until [`Converter::shutdown`] is called
//! on any clone or the last clone is dropped, whichever comes first.

mod jwt;
mod lend;

#[cfg(test)]
mod tests;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use lend::{LendError, Loans};
use rand::RngCore as _;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The longest a whole conversion may take: lending, the converter's work
/// (and our polling of it), fetching the text.
pub const CONVERSION_TIME_MAX: Duration = Duration::from_secs(120);
/// How long a one-shot URL stays valid if nobody fetches it.
pub const LOAN_LIFETIME: Duration = Duration::from_secs(60);
/// The most loans outstanding at once.
pub const LOAN_COUNT_MAX: usize = 64;
/// The most bytes lent out at once, all loans together.
pub const LOANED_LENGTH_MAX: usize = 256 * 1024 * 1024;
/// The largest document we send to the converter (the in-process extractor's
/// bound, so neither path takes what the other refuses).
pub const INPUT_LENGTH_MAX: usize = extract::INPUT_LENGTH_MAX;
/// The longest converted text we accept (the in-process extractor's bound).
pub const RESULT_LENGTH_MAX: usize = extract::TEXT_LENGTH_MAX;
/// The longest answer to `POST /converter` we read; real ones are a few
/// hundred bytes.
pub const ANSWER_LENGTH_MAX: usize = 64 * 1024;
/// How long we wait between asking again while the converter reports a
/// conversion still running (`endConvert: false`).
pub const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// The most times we ask about one conversion.
pub const POLL_COUNT_MAX: u32 = 120;
/// How long [`Converter::shutdown`] waits for the lend listener to finish its
/// connections before aborting it.
pub const SHUTDOWN_TIME_MAX: Duration = Duration::from_secs(5);

/// The input types we send to the converter: those OnlyOffice reads and the
/// in-process extractor does not.
pub const CONVERTED_TYPES: &[&str] = &["doc", "rtf", "xlsx", "xls", "pptx", "ppt", "epub"];

/// Where the converter is and how we lend it documents.
#[derive(Clone)]
pub struct ConverterConfig {
    /// The document server's base URL, e.g. `http://onlyoffice` (we add
    /// `/converter`).
    pub url: String,
    /// The document server's JWT secret (OnlyOffice's `JWT_SECRET`); `None`
    /// sends unsigned requests, which a document server with JWT enabled
    /// refuses ([`ConvertError::Refused`]).
    pub secret: Option<String>,
    /// Where the lend listener binds: a Compose-internal address, never the
    /// public one.
    pub lend_listen: SocketAddr,
    /// The base URL the document server reaches the lend listener at, e.g.
    /// `http://mcp-nextcloud:9110`; default `http://{bound lend address}`.
    pub lend_url: Option<String>,
}

impl std::fmt::Debug for ConverterConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ConverterConfig")
            .field("url", &self.url)
            .field("secret", &self.secret.as_ref().map(|_| "<set>"))
            .field("lend_listen", &self.lend_listen)
            .field("lend_url", &self.lend_url)
            .finish()
    }
}

/// The bounds a [`Converter`] runs under. `Default` is what production uses;
/// tests shrink them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConverterLimits {
    pub conversion_time_max: Duration,
    pub loan_lifetime: Duration,
    pub loan_count_max: usize,
    pub loaned_length_max: usize,
    pub input_length_max: usize,
    pub result_length_max: usize,
    pub answer_length_max: usize,
    pub poll_interval: Duration,
    pub poll_count_max: u32,
}

impl Default for ConverterLimits {
    fn default() -> Self {
        ConverterLimits {
            conversion_time_max: CONVERSION_TIME_MAX,
            loan_lifetime: LOAN_LIFETIME,
            loan_count_max: LOAN_COUNT_MAX,
            loaned_length_max: LOANED_LENGTH_MAX,
            input_length_max: INPUT_LENGTH_MAX,
            result_length_max: RESULT_LENGTH_MAX,
            answer_length_max: ANSWER_LENGTH_MAX,
            poll_interval: POLL_INTERVAL,
            poll_count_max: POLL_COUNT_MAX,
        }
    }
}

/// Why a document has no text from the converter.
///
/// [`Refused`](ConvertError::Refused), [`Download`](ConvertError::Download)
/// and [`Unreachable`](ConvertError::Unreachable) are configuration faults:
/// no document would convert until an operator fixes something, and they must
/// not be reported (or cached) as "this document is unreadable".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// -8: the converter rejected our JWT (the secret is missing on our side
    /// or differs from the document server's).
    #[error(
        "the document converter refused the request: its JWT secret and ours differ or one is missing"
    )]
    Refused,
    /// -4: the converter could not fetch the document from our lend URL
    /// (`lend_url` is not reachable from the document server).
    #[error("the document converter could not fetch the document from the lend URL")]
    Download,
    /// -3, -5, -7, -9 and unknown codes: the document itself cannot be
    /// converted (damaged, password-protected, unrecognised).
    #[error("the document converter cannot convert this document")]
    Unconvertible,
    /// -2, or the conversion outlived its time bound.
    #[error("the conversion did not finish in time")]
    Timeout,
    /// -10, or the document or its text is past our bounds.
    #[error("the document or its text is too large to convert")]
    TooLarge,
    /// The converter did not answer, answered with an HTTP error, or answered
    /// something that is not the conversion API.
    #[error("the document converter is unreachable or did not answer as one")]
    Unreachable,
    /// Too many documents are lent out at once; try again shortly.
    #[error("too many conversions are under way")]
    Busy,
}

impl ConvertError {
    /// True when no document would convert until the configuration is fixed.
    pub fn is_configuration_fault(&self) -> bool {
        matches!(self, ConvertError::Refused | ConvertError::Download | ConvertError::Unreachable)
    }

    /// The kind as a snake_case word, for logs and audit rows.
    pub fn as_str(&self) -> &'static str {
        match self {
            ConvertError::Refused => "refused",
            ConvertError::Download => "download",
            ConvertError::Unconvertible => "unconvertible",
            ConvertError::Timeout => "timeout",
            ConvertError::TooLarge => "too_large",
            ConvertError::Unreachable => "unreachable",
            ConvertError::Busy => "busy",
        }
    }

    /// OnlyOffice's conversion error codes.
    fn from_code(code: i64) -> ConvertError {
        match code {
            -8 => ConvertError::Refused,
            -4 => ConvertError::Download,
            -2 => ConvertError::Timeout,
            -10 => ConvertError::TooLarge,
            // -3 conversion, -5 password, -7 input, -9 undetectable format,
            // and the rest (-1 unknown, -6 database) are about this document
            // or this attempt, not about our configuration.
            _ => ConvertError::Unconvertible,
        }
    }
}

/// The converter client and its lend listener. Cheap to clone: clones share
/// the listener and the loans.
#[derive(Clone)]
pub struct Converter {
    inner: Arc<Inner>,
}

struct Inner {
    /// The document server's base URL, without a trailing slash.
    converter_url: String,
    secret: Option<String>,
    /// The lend listener's base URL as the document server reaches it,
    /// without a trailing slash.
    lend_url: String,
    lend_address: SocketAddr,
    http: reqwest::Client,
    loans: Arc<Loans>,
    limits: ConverterLimits,
    stop: CancellationToken,
    listener_task: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The last clone is gone: nobody can lend any more, so stop serving.
        self.stop.cancel();
    }
}

/// What one `POST /converter` said.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Answer {
    /// The text is ready at this URL.
    Done { file_url: String },
    /// Still converting; ask again with the same key.
    Running,
}

impl Converter {
    /// Binds the lend listener and starts serving it, under the default
    /// [`ConverterLimits`].
    pub async fn start(
        config: ConverterConfig,
        http: reqwest::Client,
    ) -> Result<Converter, std::io::Error> {
        Converter::start_with_limits(config, http, ConverterLimits::default()).await
    }

    /// [`Converter::start`] under caller-chosen bounds.
    pub async fn start_with_limits(
        config: ConverterConfig,
        http: reqwest::Client,
        limits: ConverterLimits,
    ) -> Result<Converter, std::io::Error> {
        Converter::start_serving(config, http, limits, http_serve::Limits::default()).await
    }

    /// [`Converter::start_with_limits`] with the lend listener's
    /// connections under `listener` (the server's own bounds).
    pub(crate) async fn start_serving(
        config: ConverterConfig,
        http: reqwest::Client,
        limits: ConverterLimits,
        listener_limits: http_serve::Limits,
    ) -> Result<Converter, std::io::Error> {
        assert!(limits.input_length_max <= limits.loaned_length_max, "one document fits the loans");
        assert!(limits.loan_count_max > 0);
        let listener = TcpListener::bind(config.lend_listen).await?;
        let lend_address = listener.local_addr()?;
        let lend_url = config
            .lend_url
            .unwrap_or_else(|| format!("http://{lend_address}"))
            .trim_end_matches('/')
            .to_string();
        let loans = Arc::new(Loans::new(
            limits.loan_lifetime,
            limits.loan_count_max,
            limits.loaned_length_max,
        ));
        let stop = CancellationToken::new();
        let listener_task = lend::serve(listener, loans.clone(), stop.clone(), listener_limits);
        tracing::info!(%lend_address, "converter lend listener started");
        Ok(Converter {
            inner: Arc::new(Inner {
                converter_url: config.url.trim_end_matches('/').to_string(),
                secret: config.secret,
                lend_url,
                lend_address,
                http,
                loans,
                limits,
                stop,
                listener_task: Mutex::new(Some(listener_task)),
            }),
        })
    }

    /// True for the formats we send to the converter ([`CONVERTED_TYPES`]),
    /// by extension, case-insensitively. A routing helper: [`convert`]
    /// itself sends whatever it is given.
    ///
    /// [`convert`]: Converter::convert
    pub fn takes(file_name: &str) -> bool {
        extension(file_name).is_some_and(|extension| CONVERTED_TYPES.contains(&extension.as_str()))
    }

    /// The lend listener's bound address.
    pub fn lend_address(&self) -> SocketAddr {
        self.inner.lend_address
    }

    /// Stops the lend listener (for every clone) and waits for it, at most
    /// [`SHUTDOWN_TIME_MAX`]. Conversions still running on other clones then
    /// fail with [`ConvertError::Download`]. Dropping the last clone stops the
    /// listener too, without waiting.
    pub async fn shutdown(self) {
        self.inner.stop.cancel();
        let task =
            self.inner.listener_task.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
        if let Some(mut task) = task
            && tokio::time::timeout(SHUTDOWN_TIME_MAX, &mut task).await.is_err()
        {
            task.abort();
        }
    }

    /// Converts a document to text: lends `bytes`, has the converter fetch
    /// and convert them, and returns the text (UTF-8, no BOM, `\n`
    /// newlines). The file's type is its name's extension; `file_name` is
    /// also the title the converter sees.
    pub async fn convert(&self, bytes: Bytes, file_name: &str) -> Result<String, ConvertError> {
        let file_type = extension(file_name);
        let conversion = self.convert_unbounded(bytes, file_name);
        let result =
            match tokio::time::timeout(self.inner.limits.conversion_time_max, conversion).await {
                Ok(result) => result,
                Err(_elapsed) => Err(ConvertError::Timeout),
            };
        if let Err(error) = &result {
            // The file type, not the file name or any URL: a loan's URL
            // carries its token.
            if error.is_configuration_fault() {
                tracing::warn!(kind = error.as_str(), ?file_type, "conversion failed: {error}");
            } else {
                tracing::debug!(kind = error.as_str(), ?file_type, "conversion failed: {error}");
            }
        }
        result
    }

    async fn convert_unbounded(
        &self,
        bytes: Bytes,
        file_name: &str,
    ) -> Result<String, ConvertError> {
        let inner = &self.inner;
        let file_type = extension(file_name).ok_or(ConvertError::Unconvertible)?;
        if bytes.len() > inner.limits.input_length_max {
            return Err(ConvertError::TooLarge);
        }
        let loan = inner.loans.lend(bytes, Instant::now()).map_err(|error| match error {
            LendError::Full => ConvertError::Busy,
        })?;
        let title = file_name.rsplit('/').next().unwrap_or(file_name);
        let mut request = json!({
            "async": false,
            "filetype": file_type,
            "key": random_key(),
            "outputtype": "txt",
            "title": title,
            "url": format!("{}/lend/{}", inner.lend_url, loan.token()),
        });
        if let Some(secret) = &inner.secret {
            request["token"] = Value::String(jwt::sign_hs256(secret, &request));
        }
        let file_url = self.request_conversion(&request).await?;
        // The converter has fetched the document (or cached it under the
        // key); an unfetched loan must not wait out its lifetime.
        drop(loan);
        self.fetch_text(&file_url).await
    }

    /// Posts the conversion request until the converter says it is done, at
    /// most `poll_count_max` times.
    async fn request_conversion(&self, request: &Value) -> Result<String, ConvertError> {
        let inner = &self.inner;
        let url = format!("{}/converter", inner.converter_url);
        for attempt in 0..inner.limits.poll_count_max {
            if attempt > 0 {
                tokio::time::sleep(inner.limits.poll_interval).await;
            }
            let response = inner
                .http
                .post(&url)
                .header(reqwest::header::ACCEPT, "application/json")
                .json(request)
                .send()
                .await
                .map_err(|_| ConvertError::Unreachable)?;
            if !response.status().is_success() {
                return Err(ConvertError::Unreachable);
            }
            let body = read_bounded(response, inner.limits.answer_length_max)
                .await
                .map_err(|_| ConvertError::Unreachable)?;
            match parse_answer(&body)? {
                Answer::Done { file_url } => return Ok(file_url),
                Answer::Running => continue,
            }
        }
        Err(ConvertError::Timeout)
    }

    /// Fetches the converted text from where the converter left it.
    async fn fetch_text(&self, file_url: &str) -> Result<String, ConvertError> {
        let inner = &self.inner;
        let file_url = url::Url::parse(file_url).map_err(|_| ConvertError::Unreachable)?;
        if !matches!(file_url.scheme(), "http" | "https") {
            return Err(ConvertError::Unreachable);
        }
        // The result lies on the document server itself: a URL elsewhere
        // (another host, port or scheme) is never fetched, so a converter
        // answer cannot point us at an internal service (SSRF).
        let same_origin = url::Url::parse(&inner.converter_url)
            .is_ok_and(|converter| converter.origin() == file_url.origin());
        if !same_origin {
            tracing::warn!("the converter named a result outside its own origin; not fetched");
            return Err(ConvertError::Unreachable);
        }
        let response =
            inner.http.get(file_url).send().await.map_err(|_| ConvertError::Unreachable)?;
        if !response.status().is_success() {
            return Err(ConvertError::Unreachable);
        }
        let body =
            read_bounded(response, inner.limits.result_length_max).await.map_err(|error| {
                match error {
                    ReadError::TooLong => ConvertError::TooLarge,
                    ReadError::Transport => ConvertError::Unreachable,
                }
            })?;
        Ok(normalise_text(&body))
    }

    #[cfg(test)]
    fn loans(&self) -> &Arc<Loans> {
        &self.inner.loans
    }

    #[cfg(test)]
    fn lend_url(&self) -> &str {
        &self.inner.lend_url
    }
}

/// A file name's extension, lowercased; `None` without one.
fn extension(file_name: &str) -> Option<String> {
    let base_name = file_name.rsplit('/').next().unwrap_or(file_name);
    base_name
        .rsplit_once('.')
        .map(|(_, extension)| extension.to_ascii_lowercase())
        .filter(|extension| !extension.is_empty())
}

/// A fresh conversion key: the converter caches results by key, so each
/// conversion gets its own. 128 random bits, base64url (OnlyOffice allows
/// `[0-9a-zA-Z._=-]`, at most 128 characters).
fn random_key() -> String {
    let mut key = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut key);
    URL_SAFE_NO_PAD.encode(key)
}

/// Reads one `POST /converter` answer: `{"error": N}`, or `{"endConvert":
/// true, "fileUrl": …}`, or `{"endConvert": false, …}` while it runs.
/// Anything else is not the conversion API talking.
fn parse_answer(body: &[u8]) -> Result<Answer, ConvertError> {
    let Ok(Value::Object(answer)) = serde_json::from_slice::<Value>(body) else {
        return Err(ConvertError::Unreachable);
    };
    if let Some(code) = answer.get("error") {
        return match code.as_i64() {
            Some(0) => Err(ConvertError::Unreachable),
            Some(code) => Err(ConvertError::from_code(code)),
            None => Err(ConvertError::Unreachable),
        };
    }
    match (answer.get("endConvert").and_then(Value::as_bool), answer.get("fileUrl")) {
        (Some(true), Some(Value::String(file_url))) => {
            Ok(Answer::Done { file_url: file_url.clone() })
        }
        (Some(false), _) => Ok(Answer::Running),
        _ => Err(ConvertError::Unreachable),
    }
}

/// The converter's text as `extract` writes text: UTF-8 (a stray invalid
/// byte becomes U+FFFD rather than losing the document), no BOM, `\r\n` and
/// lone `\r` as `\n`.
fn normalise_text(body: &[u8]) -> String {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let text = String::from_utf8_lossy(body);
    if !text.contains('\r') {
        return text.into_owned();
    }
    text.replace("\r\n", "\n").replace('\r', "\n")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadError {
    TooLong,
    Transport,
}

/// Reads a body, refusing it as soon as it is longer than `length_max`
/// (announced or actual).
async fn read_bounded(
    mut response: reqwest::Response,
    length_max: usize,
) -> Result<Bytes, ReadError> {
    if response.content_length().is_some_and(|length| length > length_max as u64) {
        return Err(ReadError::TooLong);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|_| ReadError::Transport)? {
        if body.len() + chunk.len() > length_max {
            return Err(ReadError::TooLong);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(body))
}
