//! The Nextcloud client: DAV and OCS requests made with the caller's own
//! credential, and the translation of Nextcloud's answers into failures a
//! model can act on.
//!
//! A client is built per tool call from the verified [`Caller`]; it holds no
//! state between requests.

pub mod caldav;
pub mod carddav;
pub mod dav;
pub mod deck;
pub mod ical;

use crate::bearer::{Caller, UpstreamCredential};
use http::{Method, StatusCode};
use wire::{FailureKind, ToolFailure};

/// The longest a single Nextcloud request may take.
pub const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// The largest body read from Nextcloud (a file download included).
pub const RESPONSE_LENGTH_MAX: usize = 64 * 1024 * 1024;

#[derive(Clone)]
pub struct Nextcloud {
    base_url: String,
    http: reqwest::Client,
    credential: UpstreamCredential,
    pub uid: String,
}

/// A raw answer from Nextcloud.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: http::HeaderMap,
    pub body: bytes::Bytes,
}

/// What a request was about, so failures can say it in the model's terms.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    Path(&'a str),
    Calendar,
    Contacts,
    Deck,
    Account,
}

impl Nextcloud {
    pub fn new(base_url: &str, http: reqwest::Client, caller: &Caller) -> Nextcloud {
        Nextcloud {
            base_url: base_url.trim_end_matches('/').to_string(),
            http,
            credential: caller.upstream.clone(),
            uid: caller.uid.clone(),
        }
    }

    /// `/remote.php/dav/files/{uid}/{path}` with each segment encoded.
    pub fn files_url(&self, path: &str) -> String {
        format!(
            "{}/remote.php/dav/files/{}/{}",
            self.base_url,
            encode(&self.uid),
            encode_path(path)
        )
    }

    pub fn url(&self, path_and_query: &str) -> String {
        format!("{}{path_and_query}", self.base_url)
    }

    /// Sends a request with the caller's credential; transport failures
    /// become [`FailureKind::NextcloudUnreachable`].
    pub async fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<Vec<u8>>,
    ) -> Result<Answer, ToolFailure> {
        let mut request = self.http.request(method, url).timeout(REQUEST_TIMEOUT);
        request = match &self.credential {
            UpstreamCredential::Bearer(token) => request.bearer_auth(token),
            UpstreamCredential::Basic { uid, password } => request.basic_auth(uid, Some(password)),
        };
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = request.send().await.map_err(|error| {
            tracing::warn!(error = %error.without_url(), "Nextcloud request failed");
            unreachable_failure()
        })?;
        let status = response.status();
        let headers = response.headers().clone();
        let too_large = || {
            ToolFailure::new(
                FailureKind::InvalidArguments,
                "That file is too large to read in one call. Read it in parts with files_read's offset and length.",
            )
        };
        if response.content_length().is_some_and(|length| length as usize > RESPONSE_LENGTH_MAX) {
            return Err(too_large());
        }
        // Chunked answers carry no length: the bound holds while reading too.
        let mut response = response;
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|error| {
            tracing::warn!(error = %error.without_url(), "Nextcloud response body failed");
            unreachable_failure()
        })? {
            if body.len() + chunk.len() > RESPONSE_LENGTH_MAX {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Answer { status, headers, body: body.into() })
    }

    /// Sends a DAV `SEARCH` (`body`, a `d:searchrequest`) and reads its
    /// multistatus; any other status is a failure about `subject`, and an
    /// answer that does not parse is Nextcloud being unreachable.
    pub async fn search(
        &self,
        body: String,
        subject: Subject<'_>,
    ) -> Result<Vec<dav::DavResponse>, ToolFailure> {
        let answer = self
            .send(
                Method::from_bytes(b"SEARCH").expect("valid method"),
                &self.url("/remote.php/dav/"),
                &[("content-type", "text/xml; charset=utf-8")],
                Some(body.into_bytes()),
            )
            .await?;
        if answer.status.as_u16() != 207 {
            return Err(status_failure(answer.status, subject));
        }
        dav::parse_multistatus(&answer.body).map_err(|_| unreachable_failure())
    }
}

pub fn unreachable_failure() -> ToolFailure {
    ToolFailure::new(
        FailureKind::NextcloudUnreachable,
        "Nextcloud could not be reached just now. Tell the user the workspace is unavailable and suggest trying again in a moment; do not guess the answer.",
    )
}

/// A 401 from a service that some servers close to token sign-ins while the
/// rest of Nextcloud accepts them (CardDAV, Deck's app routes): with a
/// bearer, `bearer_refused` says so and how an administrator fixes it; with
/// an app password, the password itself was refused and `service` (how the
/// sentence names what could not be reached) is all that differs.
pub fn unauthorized_failure(
    credential: &UpstreamCredential,
    bearer_refused: &'static str,
    service: &str,
) -> ToolFailure {
    match credential {
        UpstreamCredential::Bearer(_) => {
            ToolFailure::new(FailureKind::RefusedByNextcloud, bearer_refused)
        }
        UpstreamCredential::Basic { .. } => ToolFailure::new(
            FailureKind::RefusedByNextcloud,
            format!(
                "Nextcloud did not accept the app password the assistant uses for this user, so {service} can't be reached. Do not retry. Tell the user; signing in to the assistant again, or asking an administrator to renew the app password, should fix it."
            ),
        ),
    }
}

/// Turns a non-success status into a failure the model can act on.
pub fn status_failure(status: StatusCode, subject: Subject<'_>) -> ToolFailure {
    let what = match subject {
        Subject::Path("") => "your files".to_string(),
        Subject::Path(path) => format!("\"{path}\""),
        Subject::Calendar => "that calendar".to_string(),
        Subject::Contacts => "the address book".to_string(),
        Subject::Deck => "that Deck board".to_string(),
        Subject::Account => "the account".to_string(),
    };
    match status {
        StatusCode::UNAUTHORIZED => ToolFailure::new(
            FailureKind::RefusedByNextcloud,
            "Nextcloud did not accept the user's sign-in for this request. Tell the user the assistant cannot reach their workspace right now and that reloading the page or signing in again should fix it.",
        ),
        StatusCode::FORBIDDEN => ToolFailure::new(
            FailureKind::RefusedByNextcloud,
            format!(
                "The user does not have permission for {what}. Do not retry; tell the user, and suggest they ask the owner to share it with the right permissions."
            ),
        ),
        StatusCode::NOT_FOUND => ToolFailure::new(
            FailureKind::NotFound,
            format!(
                "{} does not exist or is not shared with the user. Check the path with files_search, or ask the user where it is.",
                capitalise(&what)
            ),
        ),
        StatusCode::CONFLICT => ToolFailure::new(
            FailureKind::Conflict,
            format!(
                "The folder for {what} does not exist. Create it or choose an existing folder (files_search can list folders)."
            ),
        ),
        StatusCode::PRECONDITION_FAILED => ToolFailure::new(
            FailureKind::Conflict,
            format!(
                "{} already exists or changed meanwhile. Read it again, or ask the user whether to overwrite.",
                capitalise(&what)
            ),
        ),
        StatusCode::LOCKED => ToolFailure::new(
            FailureKind::Conflict,
            format!("{} is locked by another user or app. Try again later.", capitalise(&what)),
        ),
        status if status.is_server_error() => unreachable_failure(),
        _ => ToolFailure::new(
            FailureKind::NextcloudUnreachable,
            "Nextcloud gave an unexpected answer. Tell the user the request could not be completed; do not retry it blindly.",
        ),
    }
}

fn capitalise(text: &str) -> String {
    let mut characters = text.chars();
    match characters.next() {
        Some(first) => first.to_uppercase().chain(characters).collect(),
        None => String::new(),
    }
}

/// Percent-encodes one path segment.
pub fn encode(segment: &str) -> String {
    const SEGMENT: &percent_encoding::AsciiSet =
        &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');
    percent_encoding::utf8_percent_encode(segment, SEGMENT).to_string()
}

pub fn encode_path(path: &str) -> String {
    path.split('/').filter(|segment| !segment.is_empty()).map(encode).collect::<Vec<_>>().join("/")
}
