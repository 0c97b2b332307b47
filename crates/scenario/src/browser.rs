//! Signing in the way a browser does, against the fake Nextcloud or a real
//! one: the login form (`POST /index.php/login`), the session cookies it
//! sets, and the request token the chat page carries in `<head
//! data-requesttoken>` (docs/app-contract.md). The scenario runner, `tamebi
//! ask`, the end-to-end tests and the load benchmark all sign in with it.
//! A [`Browser`] is such a session bound to its Nextcloud, posting to the
//! chat route what the page posts ([`question`], [`decision`]).

use serde_json::{Value, json};

/// A signed-in browser: what every app route needs.
#[derive(Debug, Clone)]
pub struct Session {
    /// `name=value` pairs of the session cookies, as a `Cookie` header.
    pub cookies: String,
    /// The page's request token, for the `requesttoken` header.
    pub request_token: String,
}

#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("the login form could not be reached: {0}")]
    Unreachable(reqwest::Error),
    #[error("the login answered {0}")]
    Refused(reqwest::StatusCode),
    #[error("the chat page could not be loaded: {0}")]
    Page(reqwest::Error),
    #[error("the chat page carries no request token")]
    NoRequestToken,
}

/// Posts the login form as `user` and reads the chat page's request token.
/// `http` must not follow redirects (the login answers one, with the
/// cookies).
pub async fn login(
    http: &reqwest::Client,
    base: &str,
    user: &str,
    password: &str,
) -> Result<Session, LoginError> {
    let form = format!("user={}&password={}", form_encode(user), form_encode(password));
    let login = http
        .post(format!("{base}/index.php/login"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .map_err(LoginError::Unreachable)?;
    let cookies = login
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .filter_map(|value| value.split(';').next())
        .collect::<Vec<_>>()
        .join("; ");
    if !login.status().is_redirection() || cookies.is_empty() {
        return Err(LoginError::Refused(login.status()));
    }
    let page = http
        .get(format!("{base}/apps/tamebi/"))
        .header("Cookie", &cookies)
        .send()
        .await
        .map_err(LoginError::Page)?
        .text()
        .await
        .map_err(LoginError::Page)?;
    let request_token = request_token(&page).ok_or(LoginError::NoRequestToken)?;
    Ok(Session { cookies, request_token })
}

/// A signed-in browser at its Nextcloud: requests carry the session's
/// cookies and request token.
#[derive(Debug, Clone)]
pub struct Browser {
    pub session: Session,
    base: String,
    http: reqwest::Client,
}

impl Browser {
    /// Signs in as [`login`] does; `http` must not follow redirects.
    pub async fn login(
        http: &reqwest::Client,
        base: &str,
        user: &str,
        password: &str,
    ) -> Result<Browser, LoginError> {
        let session = login(http, base, user, password).await?;
        Ok(Browser { session, base: base.to_string(), http: http.clone() })
    }

    /// A request to `path` on the Nextcloud, as this browser.
    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .header("Cookie", self.session.cookies.clone())
            .header("requesttoken", self.session.request_token.clone())
    }

    /// Posts a chat body to the app's chat route; the answer, its stream
    /// not yet read.
    pub async fn post_chat(&self, body: &Value) -> Result<reqwest::Response, String> {
        self.request(reqwest::Method::POST, "/apps/tamebi/api/chat")
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|error| format!("the chat post failed: {error}"))
    }

    /// Posts a chat body to the app; the status and the stream's chunks,
    /// every one JSON (or the error envelope, alone).
    pub async fn chat(&self, body: &Value) -> Result<(u16, Vec<Value>), String> {
        let response = self.post_chat(body).await?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(|error| format!("the stream broke: {error}"))?;
        if status != 200 {
            return Ok((status, vec![serde_json::from_str(&text).unwrap_or(Value::String(text))]));
        }
        Ok((status, crate::sse::json_chunks(&text)?))
    }

    /// Asks a question; the answer's chunks, or what answered instead of
    /// a stream.
    pub async fn ask(&self, conversation: &str, text: &str) -> Result<Vec<Value>, String> {
        match self.chat(&question(conversation, text)).await? {
            (200, chunks) => Ok(chunks),
            (status, answer) => Err(format!("the chat answered {status}: {answer:?}")),
        }
    }
}

/// A question as the page posts it: the new message only.
pub fn question(conversation: &str, text: &str) -> Value {
    json!({
        "id": conversation,
        "trigger": "submit-message",
        "message": {"id": "u", "role": "user", "parts": [{"type": "text", "text": text}]},
    })
}

/// Decisions on approval requests (`tool-approval-request` chunks) as the
/// page posts them: the last message only, trimmed to the decisions.
pub fn decision(conversation: &str, decisions: &[(&Value, bool)]) -> Value {
    let parts: Vec<Value> = decisions
        .iter()
        .map(|(request, approved)| {
            json!({
                "type": "dynamic-tool",
                "toolCallId": request["toolCallId"],
                "state": "approval-responded",
                "approval": {"id": request["approvalId"], "approved": approved},
            })
        })
        .collect();
    json!({
        "id": conversation,
        "trigger": "submit-message",
        "message": {"id": "a", "role": "assistant", "parts": parts},
    })
}

/// The request token of a Nextcloud page, unescaped (Nextcloud writes it
/// HTML-escaped, `+`, `/` and `=` included).
pub fn request_token(page: &str) -> Option<String> {
    let escaped = page.split("data-requesttoken=\"").nth(1)?.split('"').next()?;
    Some(
        escaped
            .replace("&#x2B;", "+")
            .replace("&#x2F;", "/")
            .replace("&#x3D;", "=")
            .replace("&amp;", "&"),
    )
}

/// `application/x-www-form-urlencoded` for one value.
fn form_encode(value: &str) -> String {
    value
        .bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (byte as char).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_token_is_read_from_the_head_and_unescaped() {
        let page = r#"<head data-user="alice" data-requesttoken="a&#x2B;b&#x2F;c&#x3D;&amp;d">"#;
        assert_eq!(request_token(page).as_deref(), Some("a+b/c=&d"));
        assert_eq!(request_token("<head>"), None);
    }

    #[test]
    fn form_values_are_encoded() {
        assert_eq!(form_encode("a b&c=d+é"), "a%20b%26c%3Dd%2B%C3%A9");
    }
}
