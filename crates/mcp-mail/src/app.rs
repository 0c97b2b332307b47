//! The client of the Tamebi app's mail contract (docs/app-contract.md,
//! "Mail"): three routes and the status asked before listing, called with the user's Nextcloud-audience token as
//! the bearer, and the translation of their answers into failures a model
//! can act on.
//!
//! A client is built per tool call from the verified [`Caller`]; it holds no
//! state between requests. No answer body of the app reaches the model
//! except a 400's message that passes [`clean_sentence`].

use crate::caller::Caller;
use http::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use wire::{FailureKind, ToolFailure};

/// Where the contract lives under Nextcloud's base URL. The `index.php`
/// form, because Nextcloud answers it with or without pretty URLs.
pub const MAIL_PATH: &str = "/index.php/apps/tamebi/api/mail";
/// The longest a single request to the app may take.
pub const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// The largest answer read from the app.
pub const RESPONSE_LENGTH_MAX: usize = 8 * 1024 * 1024;
/// The longest app message relayed to the model.
pub const RELAYED_MESSAGE_LENGTH_MAX: usize = 300;
/// The `code` of the app's 503 when Nextcloud Mail is missing (disabled,
/// or its contracts moved): docs/app-contract.md, "Mail".
pub const MAIL_UNAVAILABLE_CODE: &str = "mail_unavailable";
/// The longest the status check before a listing may take: a listing waits
/// for it, and an app that hangs is found out by the calls anyway.
pub const STATUS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
/// The largest status answer read.
const STATUS_LENGTH_MAX: usize = 64 * 1024;

/// Whether the user's mail exists here at all, as the app's status route
/// says before the tools are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    /// Nextcloud Mail's contracts are there.
    Available,
    /// The app said `mail_unavailable`: Mail is disabled or moved, so the
    /// tools are not listed (the seeds' degradation, like an unreachable
    /// server).
    Unavailable,
    /// No clear answer (the app did not answer, refused the sign-in, or
    /// predates the status route): the tools are listed, and their calls
    /// say what is wrong.
    Unknown,
}

/// What a search result and a whole message both say about a message, as
/// the contract answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    pub id: u64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub mailbox: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub from: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub to: Vec<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub cc: Vec<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub subject: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub date: String,
}

/// One message in a search page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageSummary {
    #[serde(flatten)]
    pub envelope: Envelope,
    #[serde(default, deserialize_with = "null_as_default")]
    pub seen: bool,
    #[serde(default, deserialize_with = "null_as_default")]
    pub preview: String,
}

/// A page of search results, newest first.
#[derive(Debug, Clone, Deserialize)]
pub struct SearchPage {
    pub messages: Vec<MessageSummary>,
    #[serde(rename = "nextCursor", default)]
    pub next_cursor: Option<String>,
}

/// One message with its text.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Message {
    #[serde(flatten)]
    pub envelope: Envelope,
    #[serde(default, deserialize_with = "null_as_default")]
    pub body: String,
}

/// What `POST …/compose` takes.
#[derive(Debug, Clone, Serialize)]
pub struct Draft {
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub subject: String,
    pub body: String,
}

/// The stored preview: not sent, not saved as a draft.
#[derive(Debug, Clone, Deserialize)]
pub struct Preview {
    #[serde(rename = "previewId", deserialize_with = "string_or_number")]
    pub preview_id: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub from: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub to: Vec<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub cc: Vec<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub subject: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub body: String,
    /// The exact text that would go out.
    pub preview: String,
}

/// The search arguments, already validated.
#[derive(Debug, Clone, Default)]
pub struct SearchQuery<'a> {
    pub query: &'a str,
    pub mailbox: Option<&'a str>,
    pub limit: u32,
    pub cursor: Option<&'a str>,
}

/// Which call failed, so failures can say it in the model's terms.
#[derive(Debug, Clone, Copy)]
pub enum Subject {
    Search,
    Message(u64),
    Compose,
}

/// The user's mail, reached through the app with their own token.
#[derive(Clone)]
pub struct MailApp {
    base_url: String,
    http: reqwest::Client,
    token: String,
    pub uid: String,
}

impl MailApp {
    pub fn new(app_url: &str, http: reqwest::Client, caller: &Caller) -> MailApp {
        MailApp {
            base_url: app_url.trim_end_matches('/').to_string(),
            http,
            token: caller.nextcloud_token.clone(),
            uid: caller.uid.clone(),
        }
    }

    pub async fn search(&self, query: &SearchQuery<'_>) -> Result<SearchPage, ToolFailure> {
        let mut url = self.url("/search")?;
        {
            let mut pairs = url.query_pairs_mut();
            pairs.append_pair("query", query.query);
            if let Some(mailbox) = query.mailbox {
                pairs.append_pair("mailbox", mailbox);
            }
            pairs.append_pair("limit", &query.limit.to_string());
            if let Some(cursor) = query.cursor {
                pairs.append_pair("cursor", cursor);
            }
        }
        self.call(Method::GET, url, None, Subject::Search).await
    }

    pub async fn message(&self, id: u64) -> Result<Message, ToolFailure> {
        let url = self.url(&format!("/messages/{id}"))?;
        self.call(Method::GET, url, None, Subject::Message(id)).await
    }

    pub async fn compose(&self, draft: &Draft) -> Result<Preview, ToolFailure> {
        let url = self.url("/compose")?;
        let body = serde_json::to_vec(draft).expect("a draft serialises");
        self.call(Method::POST, url, Some(body), Subject::Compose).await
    }

    /// Asks the app's status route whether Nextcloud Mail is there. Only
    /// the app's explicit `mail_unavailable` answer is [`Availability::Unavailable`].
    pub async fn availability(&self) -> Availability {
        let Ok(url) = self.url("/status") else {
            return Availability::Unknown;
        };
        let request = self
            .http
            .get(url)
            .timeout(STATUS_TIMEOUT)
            .bearer_auth(&self.token)
            .header(http::header::ACCEPT, "application/json");
        let mut response = match request.send().await {
            Ok(response) => response,
            Err(error) => {
                tracing::warn!(error = %error.without_url(), "the mail status check failed");
                return Availability::Unknown;
            }
        };
        let status = response.status();
        if status.is_success() {
            return Availability::Available;
        }
        let mut answer = Vec::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            if answer.len() + chunk.len() > STATUS_LENGTH_MAX {
                return Availability::Unknown;
            }
            answer.extend_from_slice(&chunk);
        }
        if status == StatusCode::SERVICE_UNAVAILABLE && says_mail_unavailable(&answer) {
            tracing::info!(uid = %self.uid, "Nextcloud Mail is not available; no mail tools listed");
            return Availability::Unavailable;
        }
        tracing::info!(%status, "the mail status check gave no clear answer; listing the tools");
        Availability::Unknown
    }

    fn url(&self, route: &str) -> Result<url::Url, ToolFailure> {
        url::Url::parse(&format!("{}{MAIL_PATH}{route}", self.base_url)).map_err(|error| {
            // A configuration mistake, not the model's: say it in the log.
            tracing::error!(%error, "the app URL does not parse");
            unreachable_failure()
        })
    }

    /// Sends one request with the caller's token and parses a 2xx answer;
    /// anything else becomes a failure.
    async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        url: url::Url,
        body: Option<Vec<u8>>,
        subject: Subject,
    ) -> Result<T, ToolFailure> {
        let mut request = self
            .http
            .request(method, url)
            .timeout(REQUEST_TIMEOUT)
            .bearer_auth(&self.token)
            .header(http::header::ACCEPT, "application/json");
        if let Some(body) = body {
            request = request.header(http::header::CONTENT_TYPE, "application/json").body(body);
        }
        let mut response = request.send().await.map_err(|error| {
            tracing::warn!(error = %error.without_url(), "mail request failed");
            unreachable_failure()
        })?;
        let status = response.status();
        let mut answer = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|error| {
            tracing::warn!(error = %error.without_url(), "mail answer failed");
            unreachable_failure()
        })? {
            if answer.len() + chunk.len() > RESPONSE_LENGTH_MAX {
                tracing::warn!(%status, "mail answer longer than {RESPONSE_LENGTH_MAX} bytes");
                return Err(unexpected_failure());
            }
            answer.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            tracing::info!(%status, uid = %self.uid, "the mail contract refused");
            return Err(status_failure(status, &answer, subject, &self.base_url));
        }
        serde_json::from_slice(&answer).map_err(|error| {
            tracing::warn!(%error, "the mail answer does not follow the contract");
            unexpected_failure()
        })
    }
}

pub fn unreachable_failure() -> ToolFailure {
    ToolFailure::new(
        FailureKind::NextcloudUnreachable,
        "The user's mail could not be reached just now. Tell the user their mail is unavailable and suggest trying again in a moment; do not guess what it holds.",
    )
}

fn unexpected_failure() -> ToolFailure {
    ToolFailure::new(
        FailureKind::NextcloudUnreachable,
        "Nextcloud gave an unexpected answer about the user's mail. Tell the user the request could not be completed; do not retry it blindly.",
    )
}

/// Turns a non-success status into a failure the model can act on.
pub fn status_failure(
    status: StatusCode,
    body: &[u8],
    subject: Subject,
    app_url: &str,
) -> ToolFailure {
    match status {
        StatusCode::UNAUTHORIZED => ToolFailure::new(
            FailureKind::RefusedByNextcloud,
            "Nextcloud did not accept the user's sign-in for their mail. Tell the user the assistant cannot reach their mail right now and that reloading the page or signing in again should fix it.",
        ),
        StatusCode::FORBIDDEN => ToolFailure::new(
            FailureKind::RefusedByNextcloud,
            "Nextcloud refused the assistant access to the user's mail. Do not retry; tell the user, and suggest they check that Nextcloud Mail is set up for their account or ask their administrator.",
        ),
        StatusCode::NOT_FOUND => ToolFailure::new(
            FailureKind::NotFound,
            match subject {
                Subject::Message(id) => format!(
                    "There is no message with id {id} in the user's mail (it may have been deleted or moved). Find it again with mail_search and use the id it returns."
                ),
                Subject::Search | Subject::Compose => "The user's mail is not available in Nextcloud (Nextcloud Mail may not be installed or set up for them). Tell the user; do not retry.".to_string(),
            },
        ),
        StatusCode::BAD_REQUEST => {
            let relayed = app_message(body).and_then(|message| clean_sentence(&message, app_url));
            ToolFailure::invalid_arguments(match (subject, relayed) {
                (Subject::Compose, Some(message)) => {
                    format!("{message} Fix it and call mail_compose again.")
                }
                (Subject::Compose, None) => "The mail was refused as written. Check that to has at least one address, that every address is local@domain or Name <local@domain>, that the subject is at most 255 bytes and the body at most 100000 bytes, then call mail_compose again.".to_string(),
                (Subject::Search, Some(message)) => {
                    format!("{message} Fix the arguments and call mail_search again.")
                }
                (Subject::Search, None) => "The search was refused as written. Call mail_search again with plain words as query, a mailbox name such as INBOX, and no cursor (a cursor only comes from the previous page).".to_string(),
                (Subject::Message(_), Some(message)) => {
                    format!("{message} Use an id returned by mail_search.")
                }
                (Subject::Message(_), None) => "That message id was refused. Use an id returned by mail_search.".to_string(),
            })
        }
        StatusCode::SERVICE_UNAVAILABLE if says_mail_unavailable(body) => ToolFailure::new(
            FailureKind::NextcloudUnreachable,
            "Nextcloud Mail is not available on this Nextcloud (it is disabled or not installed), so the user's mail cannot be reached. Tell the user and suggest they ask their administrator; do not retry.",
        ),
        status if status.is_server_error() => unreachable_failure(),
        _ => unexpected_failure(),
    }
}

/// Whether an answer is the app's envelope with the `mail_unavailable` code.
fn says_mail_unavailable(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|value| {
            value.pointer("/error/code").and_then(|code| code.as_str()).map(str::to_owned)
        })
        .is_some_and(|code| code == MAIL_UNAVAILABLE_CODE)
}

/// The `message` of the app's error envelope (`{"error": {"message"}}`), or
/// of Nextcloud's own `{"message"}`.
fn app_message(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let message = value
        .pointer("/error/message")
        .or_else(|| value.get("message"))
        .and_then(serde_json::Value::as_str)?;
    Some(message.to_string())
}

/// `message` if it can be shown to a model as it is: one short line of
/// prose, with nothing that looks like infrastructure (a URL, a path, a PHP
/// class, code, the app's host). `None` otherwise, and the caller says it in
/// its own words.
pub fn clean_sentence(message: &str, app_url: &str) -> Option<String> {
    let message = message.trim();
    let length = message.chars().count();
    if length == 0 || length > RELAYED_MESSAGE_LENGTH_MAX {
        return None;
    }
    if message.chars().any(char::is_control) || !message.chars().any(char::is_alphabetic) {
        return None;
    }
    const MARKERS: &[&str] =
        &["://", "\\", ".php", "exception", "stack trace", "#0", "{", "}", "/var/", "/usr/"];
    let lower = message.to_lowercase();
    if MARKERS.iter().any(|marker| lower.contains(marker)) {
        return None;
    }
    if let Some(host) =
        url::Url::parse(app_url).ok().and_then(|url| url.host_str().map(str::to_string))
        && lower.contains(&host.to_lowercase())
    {
        return None;
    }
    let mut sentence = message.to_string();
    if !sentence.ends_with(['.', '!', '?']) {
        sentence.push('.');
    }
    Some(sentence)
}

/// `null` reads as the type's default: the contract's PHP side may send
/// `null` for an empty subject or list.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// A preview id as a string, whether the app sends a string or a number.
fn string_or_number<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::String(id) if !id.is_empty() => Ok(id),
        serde_json::Value::Number(id) => Ok(id.to_string()),
        other => Err(serde::de::Error::custom(format!("previewId is {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const APP: &str = "http://nextcloud.internal:8080";

    #[test]
    fn clean_sentences_pass_and_anything_technical_does_not() {
        let check = |message: &str, expected: Option<&str>| {
            assert_eq!(clean_sentence(message, APP).as_deref(), expected, "{message:?}");
        };
        check("to: \"bob\" is not an address.", Some("to: \"bob\" is not an address."));
        check("subject is longer than 255 bytes", Some("subject is longer than 255 bytes."));
        check(
            "cc[0] must be local@domain or Name <local@domain>.",
            Some("cc[0] must be local@domain or Name <local@domain>."),
        );
        check("", None);
        check("   ", None);
        check("42", None);
        check("two\nlines.", None);
        check("See http://example.org/help.", None);
        check("OCA\\Mail\\Exception\\ClientException: boom", None);
        check("Error in /var/www/html/apps/mail/lib/Service.php line 12", None);
        check("#0 {main}", None);
        check("nextcloud.internal refused the connection.", None);
        check("NEXTCLOUD.INTERNAL refused the connection.", None);
        check(&"a".repeat(RELAYED_MESSAGE_LENGTH_MAX + 1), None);
    }

    #[test]
    fn the_app_message_is_read_from_either_envelope() {
        assert_eq!(
            app_message(br#"{"error": {"message": "to is empty.", "requestId": "r1"}}"#),
            Some("to is empty.".to_string())
        );
        assert_eq!(
            app_message(br#"{"message": "CSRF check failed"}"#),
            Some("CSRF check failed".into())
        );
        assert_eq!(app_message(b"<html>oops</html>"), None);
        assert_eq!(app_message(br#"{"error": "nope"}"#), None);
    }

    #[test]
    fn answers_are_parsed_leniently() {
        let summary: MessageSummary = serde_json::from_str(
            r#"{"id": 3, "from": "a@b.c", "subject": null, "date": "2026-01-01T00:00:00Z", "cc": null}"#,
        )
        .unwrap();
        assert_eq!(summary.envelope.subject, "");
        assert!(summary.envelope.cc.is_empty());
        assert!(!summary.seen);
        for (preview_id, expected) in [("\"p-1\"", "p-1"), ("17", "17")] {
            let preview: Preview = serde_json::from_str(&format!(
                r#"{{"previewId": {preview_id}, "preview": "From: a@b.c"}}"#
            ))
            .unwrap();
            assert_eq!(preview.preview_id, expected);
        }
        assert!(serde_json::from_str::<Preview>(r#"{"previewId": "", "preview": ""}"#).is_err());
    }
}
