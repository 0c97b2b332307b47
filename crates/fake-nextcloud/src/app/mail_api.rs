//! The mail routes: search, read and compose for mcp-mail (a bearer minted
//! for Nextcloud's audience), and a stored preview's page, send and save
//! for the chat page (session + CSRF only).
//!
//! The split is the point: a bearer token can put a preview in front of the
//! user but never send or save it — a request carrying `Authorization:
//! Bearer` on send or save is refused whatever else it carries — so an agent
//! holding the user's tokens still needs the user's click. Previews are
//! stored per user in the world; each is acted on once (send or save), then
//! 409. Mail comes from [`crate::mail`], the fake's Nextcloud Mail.

// A refusal is a ready HTTP response, built once per request.
#![allow(clippy::result_large_err)]

use super::{Csrf, SessionCaller, envelope, read_body, session_caller};
use crate::mail::Message;
use crate::{AppState, RequestId, Shared};
use axum::extract::{Extension, Path, RawQuery, Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, post};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{HeaderMap, StatusCode, header};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// Messages per search page: the default, and the range a client may ask.
pub const SEARCH_LIMIT_DEFAULT: usize = 20;
pub const SEARCH_LIMIT_MAX: usize = 50;
/// Characters of text in a search result's `preview`.
pub const PREVIEW_TEXT_LENGTH_MAX: usize = 200;
pub const SUBJECT_LENGTH_MAX: usize = 255;
pub const BODY_LENGTH_MAX: usize = 100_000;
/// Recipients in `to` and `cc` together.
pub const RECIPIENT_COUNT_MAX: usize = 100;
/// Previews kept per user; the oldest goes when a new one would pass it.
pub const PREVIEW_COUNT_MAX: usize = 100;

/// The `code` of the 503 every mail route answers when Nextcloud Mail is
/// missing (docs/app-contract.md, "Mail"): mcp-mail then lists no tools.
pub const MAIL_UNAVAILABLE_CODE: &str = "mail_unavailable";
const MAIL_UNAVAILABLE: &str = "Nextcloud Mail is not available on this Nextcloud, so the assistant cannot reach your mail. Ask your administrator.";

const NEEDS_CLICK: &str = "Sending or saving mail needs your click in the chat page.";
const TOKEN_REFUSED: &str = "The request carries no valid Nextcloud access token. Obtain a new token for Nextcloud's audience and try again.";
const NO_SUCH_MESSAGE: &str = "This message does not exist in your mailboxes.";
const NO_SUCH_PREVIEW: &str =
    "This mail preview does not exist. Ask the assistant to compose the mail again.";

/// A composed mail waiting for the user's click.
#[derive(Debug, Clone)]
pub struct Preview {
    pub id: String,
    pub uid: String,
    pub account_id: u64,
    pub from: String,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub subject: String,
    pub body: String,
    /// Fake clock, Unix seconds.
    pub created: i64,
    pub outcome: Option<PreviewOutcome>,
}

/// What the user's click did with a preview.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreviewOutcome {
    Sent { message_id: u64 },
    Saved { message_id: u64 },
}

/// Every user's previews, by id.
#[derive(Debug, Default)]
pub struct Previews {
    by_id: BTreeMap<String, Preview>,
}

impl Previews {
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// Every user's previews, by id.
    pub fn iter(&self) -> impl Iterator<Item = &Preview> {
        self.by_id.values()
    }

    /// A preview of this user; another user's is as absent as a missing one.
    pub fn get(&self, uid: &str, id: &str) -> Option<&Preview> {
        self.by_id.get(id).filter(|preview| preview.uid == uid)
    }

    fn insert(&mut self, preview: Preview) {
        super::drop_oldest_past(&mut self.by_id, PREVIEW_COUNT_MAX, |stored| {
            (stored.uid == preview.uid).then_some(stored.created)
        });
        self.by_id.insert(preview.id.clone(), preview);
    }
}

impl Preview {
    /// The exact text that would go out, as the contract spells it.
    pub fn text(&self) -> String {
        let line = |name: &str, value: &str| {
            if value.is_empty() { format!("{name}:") } else { format!("{name}: {value}") }
        };
        [
            line("From", &self.from),
            line("To", &self.to.join(", ")),
            line("Cc", &self.cc.join(", ")),
            line("Subject", &self.subject),
            String::new(),
            self.body.clone(),
        ]
        .join("\n")
    }

    fn to_json(&self) -> Value {
        json!({
            "previewId": self.id,
            "from": self.from,
            "to": self.to,
            "cc": self.cc,
            "subject": self.subject,
            "body": self.body,
            "preview": self.text(),
        })
    }
}

/// The uid of a request authenticated by a bearer token, validated the way
/// DAV and OCS validate one (`user_oidc`); anything else is a 401 envelope.
fn bearer_caller(
    shared: &Shared,
    headers: &HeaderMap,
    path: &str,
    request_id: &RequestId,
) -> Result<String, Response> {
    let refused = || {
        let mut response = envelope(StatusCode::UNAUTHORIZED, TOKEN_REFUSED, request_id);
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, http::HeaderValue::from_static("Bearer"));
        response
    };
    if !carries_bearer(headers) {
        return Err(refused());
    }
    match crate::auth::authenticate(shared, headers, path) {
        Ok(caller) if caller.method == crate::auth::AuthMethod::Bearer => Ok(caller.uid),
        _ => Err(refused()),
    }
}

/// The 503 a mail route answers while the `mail_unavailable` fault is on
/// (Nextcloud Mail disabled or moved), `None` while Mail is there.
fn mail_missing(shared: &Shared, request_id: &RequestId) -> Option<Response> {
    if !shared.world().faults.mail_unavailable {
        return None;
    }
    let mut body = json!({ "error": { "message": MAIL_UNAVAILABLE, "requestId": request_id.0 } });
    body["error"]["code"] = json!(MAIL_UNAVAILABLE_CODE);
    Some(
        (StatusCode::SERVICE_UNAVAILABLE, [(header::CACHE_CONTROL, "no-store")], axum::Json(body))
            .into_response(),
    )
}

/// The bearer's uid once Nextcloud Mail is known to be there: how every
/// route mcp-mail calls begins (the token is checked first, so a caller
/// without one learns nothing about Mail).
fn mail_caller(
    shared: &Shared,
    headers: &HeaderMap,
    path: &str,
    request_id: &RequestId,
) -> Result<String, Response> {
    let uid = bearer_caller(shared, headers, path, request_id)?;
    mail_missing(shared, request_id).map_or(Ok(uid), Err)
}

/// The signed-in user once Nextcloud Mail is known to be there: how every
/// route the chat page calls begins.
fn mail_session(
    shared: &Shared,
    headers: &HeaderMap,
    request_id: &RequestId,
) -> Result<SessionCaller, Response> {
    let caller = session_caller(shared, headers, request_id, Csrf::Required)?;
    mail_missing(shared, request_id).map_or(Ok(caller), Err)
}

/// `GET /api/mail/status`: whether the user's mail can be reached through
/// Nextcloud Mail's contracts at all, asked by mcp-mail before it lists its
/// tools (`{"available": true}`, or the `mail_unavailable` 503).
pub(super) async fn status(
    State(shared): State<AppState>,
    Extension(request_id): Extension<RequestId>,
    request: Request,
) -> Result<Response, Response> {
    mail_caller(&shared, request.headers(), request.uri().path(), &request_id)?;
    Ok(([(header::CACHE_CONTROL, "no-store")], axum::Json(json!({ "available": true })))
        .into_response())
}

fn carries_bearer(headers: &HeaderMap) -> bool {
    headers.get_all(header::AUTHORIZATION).iter().any(|value| {
        value.as_bytes().len() > 7 && value.as_bytes()[..7].eq_ignore_ascii_case(b"bearer ")
    })
}

/// What a search result and a read message both say of a message.
fn message_header(message: &Message) -> Value {
    json!({
        "id": message.id,
        "mailbox": message.mailbox,
        "from": message.from,
        "to": message.to,
        "cc": message.cc,
        "subject": message.subject,
        "date": crate::clock::iso8601(message.date),
    })
}

fn message_summary(message: &Message) -> Value {
    let mut summary = message_header(message);
    summary["seen"] = json!(message.seen);
    summary["preview"] = json!(preview_text(&message.body));
    summary
}

/// The start of a body on one line, cut at a word with `…`.
fn preview_text(body: &str) -> String {
    let one_line = body.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= PREVIEW_TEXT_LENGTH_MAX {
        return one_line;
    }
    let cut: String = one_line.chars().take(PREVIEW_TEXT_LENGTH_MAX).collect();
    let cut = match cut.rfind(' ') {
        Some(space) if space > 0 => &cut[..space],
        _ => &cut,
    };
    format!("{cut} …")
}

/// `GET /api/mail/search?query=&mailbox=&limit=&cursor=`
pub(super) async fn search(
    State(shared): State<AppState>,
    Extension(request_id): Extension<RequestId>,
    RawQuery(query): RawQuery,
    request: Request,
) -> Result<Response, Response> {
    let uid = mail_caller(&shared, request.headers(), request.uri().path(), &request_id)?;
    let params: BTreeMap<String, String> =
        url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()).into_owned().collect();
    let bad_request = |message: &str| envelope(StatusCode::BAD_REQUEST, message, &request_id);
    let limit = match params.get("limit").filter(|limit| !limit.is_empty()) {
        None => SEARCH_LIMIT_DEFAULT,
        Some(limit) => match limit.parse::<usize>() {
            Ok(limit) if (1..=SEARCH_LIMIT_MAX).contains(&limit) => limit,
            _ => return Err(bad_request("limit must be a whole number from 1 to 50.")),
        },
    };
    let after = match params.get("cursor").filter(|cursor| !cursor.is_empty()) {
        None => None,
        Some(cursor) => match decode_cursor(cursor) {
            Some(position) => Some(position),
            None => {
                return Err(bad_request("The cursor is not valid. Search again without a cursor."));
            }
        },
    };
    let words: Vec<String> = params
        .get("query")
        .map(|query| query.split_whitespace().map(str::to_lowercase).collect())
        .unwrap_or_default();
    let mailbox = params.get("mailbox").filter(|mailbox| !mailbox.is_empty());

    let world = shared.world();
    let accounts: Vec<u64> = world.mail.accounts_of(&uid).map(|account| account.id).collect();
    let mut found: Vec<&Message> = world
        .mail
        .messages
        .iter()
        .filter(|message| accounts.contains(&message.account_id))
        .filter(|message| {
            mailbox.is_none_or(|mailbox| message.mailbox.eq_ignore_ascii_case(mailbox))
        })
        .filter(|message| {
            let haystack = [
                message.subject.as_str(),
                message.from.as_str(),
                &message.to.join(" "),
                &message.cc.join(" "),
                message.body.as_str(),
            ]
            .join("\n")
            .to_lowercase();
            words.iter().all(|word| haystack.contains(word.as_str()))
        })
        .filter(|message| after.is_none_or(|after| (message.date, message.id) < after))
        .collect();
    // Newest first; the id breaks ties so pages never overlap.
    found.sort_by_key(|message| std::cmp::Reverse((message.date, message.id)));
    let more = found.len() > limit;
    found.truncate(limit);
    let next_cursor = match found.last() {
        Some(last) if more => Some(encode_cursor((last.date, last.id))),
        _ => None,
    };
    Ok(axum::Json(json!({
        "messages": found.into_iter().map(message_summary).collect::<Vec<_>>(),
        "nextCursor": next_cursor,
    }))
    .into_response())
}

fn encode_cursor((date, id): (i64, u64)) -> String {
    URL_SAFE_NO_PAD.encode(format!("{date}:{id}"))
}

fn decode_cursor(cursor: &str) -> Option<(i64, u64)> {
    let text = String::from_utf8(URL_SAFE_NO_PAD.decode(cursor).ok()?).ok()?;
    let (date, id) = text.split_once(':')?;
    Some((date.parse().ok()?, id.parse().ok()?))
}

/// `GET /api/mail/messages/{id}`
pub(super) async fn read(
    State(shared): State<AppState>,
    Extension(request_id): Extension<RequestId>,
    Path(id): Path<String>,
    request: Request,
) -> Result<Response, Response> {
    let uid = mail_caller(&shared, request.headers(), request.uri().path(), &request_id)?;
    let world = shared.world();
    let message = id.parse::<u64>().ok().and_then(|id| {
        world.mail.messages.iter().find(|message| {
            message.id == id
                && world
                    .mail
                    .account(message.account_id)
                    .is_some_and(|account| account.owner == uid)
        })
    });
    let message =
        message.ok_or_else(|| envelope(StatusCode::NOT_FOUND, NO_SUCH_MESSAGE, &request_id))?;
    let mut answer = message_header(message);
    answer["body"] = json!(message.body);
    Ok(axum::Json(answer).into_response())
}

/// A compose body that passed every check.
struct Draft {
    to: Vec<String>,
    cc: Vec<String>,
    subject: String,
    body: String,
}

/// `local@domain` or `Name <local@domain>`, on one line.
static ADDRESS: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r#"^(?:[^<>\r\n]*[^<>\s] *<[^<>\s@]+@[^<>\s@]+>|[^<>\s@,;"]+@[^<>\s@,;"]+)$"#)
        .expect("address pattern")
});

/// Checks a compose body, naming the field and the reason on failure.
fn parse_draft(body: &[u8]) -> Result<Draft, String> {
    let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(body) else {
        return Err("The body must be a JSON object with to, cc, subject and body.".into());
    };
    let addresses = |name: &str| -> Result<Vec<String>, String> {
        let list = match fields.get(name) {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Array(list)) => list,
            Some(_) => return Err(format!("{name} must be a list of addresses.")),
        };
        let mut addresses = Vec::with_capacity(list.len());
        for (index, item) in list.iter().enumerate() {
            let Some(address) = item.as_str().map(str::trim) else {
                return Err(format!("{name}[{index}] must be a string."));
            };
            if !ADDRESS.is_match(address) {
                return Err(format!(
                    "{name}[{index}] is not an address: write local@domain or Name <local@domain>."
                ));
            }
            addresses.push(address.to_string());
        }
        Ok(addresses)
    };
    let text = |name: &str| -> Result<String, String> {
        match fields.get(name) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(text)) => Ok(text.clone()),
            Some(_) => Err(format!("{name} must be a string.")),
        }
    };
    let to = addresses("to")?;
    let cc = addresses("cc")?;
    if to.is_empty() {
        return Err("to must list at least one recipient.".into());
    }
    if to.len() + cc.len() > RECIPIENT_COUNT_MAX {
        return Err(format!("to and cc list more than {RECIPIENT_COUNT_MAX} recipients."));
    }
    let subject = text("subject")?;
    if subject.len() > SUBJECT_LENGTH_MAX {
        return Err(format!(
            "subject has {} bytes; it may have at most {SUBJECT_LENGTH_MAX}.",
            subject.len()
        ));
    }
    if subject.contains(['\r', '\n']) {
        return Err("subject must be a single line.".into());
    }
    let body = text("body")?;
    if body.len() > BODY_LENGTH_MAX {
        return Err(format!(
            "body has {} bytes; it may have at most {BODY_LENGTH_MAX}.",
            body.len()
        ));
    }
    Ok(Draft { to, cc, subject, body })
}

/// `POST /api/mail/compose`: stores a preview; sends nothing, saves nothing.
pub(super) async fn compose(
    State(shared): State<AppState>,
    Extension(request_id): Extension<RequestId>,
    request: Request,
) -> Result<Response, Response> {
    let (parts, body) = request.into_parts();
    let uid = mail_caller(&shared, &parts.headers, parts.uri.path(), &request_id)?;
    let body = read_body(body, &request_id).await?;
    let draft = parse_draft(&body)
        .map_err(|message| envelope(StatusCode::BAD_REQUEST, &message, &request_id))?;
    let now = shared.now();
    let mut world = shared.world();
    let Some(account) = world.mail.accounts_of(&uid).next().cloned() else {
        return Err(envelope(
            StatusCode::BAD_REQUEST,
            "You have no mail account in Nextcloud Mail. Add one in the Mail app, then try again.",
            &request_id,
        ));
    };
    let preview = Preview {
        id: crate::oidc::random_token(24),
        uid,
        account_id: account.id,
        from: account.email,
        to: draft.to,
        cc: draft.cc,
        subject: draft.subject,
        body: draft.body,
        created: now,
        outcome: None,
    };
    let answer = preview.to_json();
    world.app.previews.insert(preview);
    Ok(axum::Json(answer).into_response())
}

/// `GET /api/mail/previews/{id}`: the preview and what became of it
/// (`status`: `pending`, `sent` or `saved`).
pub(super) async fn preview(
    State(shared): State<AppState>,
    Extension(request_id): Extension<RequestId>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Response> {
    let caller = mail_session(&shared, &headers, &request_id)?;
    let world = shared.world();
    let preview = world
        .app
        .previews
        .get(&caller.uid, &id)
        .ok_or_else(|| envelope(StatusCode::NOT_FOUND, NO_SUCH_PREVIEW, &request_id))?;
    let mut answer = preview.to_json();
    answer["status"] = json!(match preview.outcome {
        None => "pending",
        Some(PreviewOutcome::Sent { .. }) => "sent",
        Some(PreviewOutcome::Saved { .. }) => "saved",
    });
    Ok(axum::Json(answer).into_response())
}

/// The user's click on a preview: send it, or save it as a draft.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Click {
    Send,
    Save,
}

/// `POST /api/mail/previews/{id}/send` and `…/save`: one route per click,
/// both handled by [`click`].
pub(super) fn clicked(action: Click) -> MethodRouter<AppState> {
    post(
        move |State(shared): State<AppState>,
              Extension(request_id): Extension<RequestId>,
              Path(id): Path<String>,
              headers: HeaderMap| async move {
            click(&shared, &request_id, &id, &headers, action)
        },
    )
}

fn click(
    shared: &Shared,
    request_id: &RequestId,
    id: &str,
    headers: &HeaderMap,
    click: Click,
) -> Result<Response, Response> {
    // First, before the session: a bearer means an agent, never a click.
    if carries_bearer(headers) {
        return Err(envelope(StatusCode::FORBIDDEN, NEEDS_CLICK, request_id));
    }
    let SessionCaller { uid, .. } = mail_session(shared, headers, request_id)?;
    let now = shared.now();
    let mut world = shared.world();
    let preview = world
        .app
        .previews
        .get(&uid, id)
        .cloned()
        .ok_or_else(|| envelope(StatusCode::NOT_FOUND, NO_SUCH_PREVIEW, request_id))?;
    // Each preview is acted on once; a second click changes nothing.
    if let Some(outcome) = preview.outcome {
        let done = match outcome {
            PreviewOutcome::Sent { .. } => {
                "This mail has already been sent; nothing more was done."
            }
            PreviewOutcome::Saved { .. } => {
                "This mail has already been saved as a draft; nothing more was done."
            }
        };
        return Err(envelope(StatusCode::CONFLICT, done, request_id));
    }
    let mailbox = match click {
        Click::Send => "Sent",
        Click::Save => "Drafts",
    };
    let message_id = world.mail.append(Message {
        id: 0,
        account_id: preview.account_id,
        mailbox: mailbox.to_string(),
        from: preview.from.clone(),
        to: preview.to.clone(),
        cc: preview.cc.clone(),
        subject: preview.subject.clone(),
        date: now,
        body: preview.body.clone(),
        seen: true,
    });
    let outcome = match click {
        Click::Send => PreviewOutcome::Sent { message_id },
        Click::Save => PreviewOutcome::Saved { message_id },
    };
    world.app.previews.by_id.get_mut(id).expect("found above").outcome = Some(outcome);
    Ok(axum::Json(json!({ "previewId": preview.id, "id": message_id, "mailbox": mailbox }))
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preview(to: &[&str], cc: &[&str], subject: &str, body: &str) -> Preview {
        Preview {
            id: "p1".into(),
            uid: "alice".into(),
            account_id: 1,
            from: "alice@example.com".into(),
            to: to.iter().map(|address| address.to_string()).collect(),
            cc: cc.iter().map(|address| address.to_string()).collect(),
            subject: subject.into(),
            body: body.into(),
            created: 0,
            outcome: None,
        }
    }

    #[test]
    fn the_preview_text_is_the_contracts() {
        let text =
            preview(&["bob@example.com"], &[], "Stand-up", "Bob, the stand-up moves to 10:00.")
                .text();
        assert_eq!(
            text,
            "From: alice@example.com\nTo: bob@example.com\nCc:\nSubject: Stand-up\n\nBob, the stand-up moves to 10:00."
        );
        let text = preview(&["a@x.org", "B <b@x.org>"], &["c@x.org"], "", "").text();
        assert_eq!(
            text,
            "From: alice@example.com\nTo: a@x.org, B <b@x.org>\nCc: c@x.org\nSubject:\n\n"
        );
    }

    #[test]
    fn addresses_are_local_at_domain_or_named() {
        for good in ["bob@example.com", "Bob Stone <bob@example.com>", "\"Stone, Bob\" <b@x>"] {
            assert!(ADDRESS.is_match(good), "{good}");
        }
        for bad in
            ["bob", "bob@", "@x", "Bob <bob>", "a@x\nBcc: e@vil", "<b@x>", "a@x, b@y", "a b@x"]
        {
            assert!(!ADDRESS.is_match(bad), "{bad}");
        }
    }

    #[test]
    fn a_compose_body_is_refused_with_the_field_and_the_reason() {
        let refusal = |body: &str| parse_draft(body.as_bytes()).err().unwrap();
        assert_eq!(refusal(r#"{"to":[],"subject":"s"}"#), "to must list at least one recipient.");
        assert!(refusal(r#"{"to":["x"]}"#).starts_with("to[0] is not an address"));
        assert!(refusal(r#"{"to":["a@b"],"cc":["nope"]}"#).starts_with("cc[0]"));
        let long_subject = format!(r#"{{"to":["a@b"],"subject":"{}"}}"#, "s".repeat(256));
        assert!(refusal(&long_subject).starts_with("subject has 256 bytes"));
        assert_eq!(refusal(r#"{"to":["a@b"],"subject":"a\nb"}"#), "subject must be a single line.");
        let long_body = format!(r#"{{"to":["a@b"],"body":"{}"}}"#, "b".repeat(100_001));
        assert!(refusal(&long_body).starts_with("body has 100001 bytes"));
        assert!(parse_draft(br#"{"to":["a@b"],"subject":"s","body":"b"}"#).is_ok());
    }

    #[test]
    fn a_long_body_is_cut_at_a_word() {
        let body = "word ".repeat(100);
        let text = preview_text(&body);
        assert!(text.ends_with("word …"), "{text}");
        assert!(text.chars().count() <= PREVIEW_TEXT_LENGTH_MAX + 2);
        assert_eq!(preview_text("Hi\n\nthere"), "Hi there");
    }

    #[test]
    fn cursors_round_trip_and_garbage_is_refused() {
        assert_eq!(decode_cursor(&encode_cursor((1_773_479_520, 12))), Some((1_773_479_520, 12)));
        assert_eq!(decode_cursor("not a cursor"), None);
    }
}
