//! sabre/dav's refusals as one type. Every DAV handler (files, SEARCH,
//! CalDAV, CardDAV, principals) returns `Result<Response, DavError>` and
//! refuses with `?`; the status, the headers and the XML body sabre's
//! `Exception::serialize` writes are rendered once, here, through axum's
//! [`IntoResponse`].
//!
//! A variant is a sabre exception class. Where the fake's protocols write the
//! same class differently (files answer a 412 without `<s:header>`, CalDAV
//! and CardDAV with it; a files REPORT is refused without
//! `<d:supported-report/>`), the variant says so in a field, because the
//! bytes a client sees must stay what each protocol writes today.

use crate::xml;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, StatusCode};

/// A request the DAV server refuses, as sabre/dav would refuse it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DavError {
    /// `Sabre\DAV\Exception\BadRequest` (400).
    BadRequest(String),
    /// `Sabre\DAV\Exception\Forbidden` (403).
    Forbidden(String),
    /// `Sabre\DAV\Exception\NotFound` (404).
    NotFound(String),
    /// `Sabre\DAV\Exception\Conflict` (409).
    Conflict(String),
    /// `Sabre\DAV\Exception\NotImplemented` (501).
    NotImplemented(String),
    /// `Sabre\DAV\Exception\UnsupportedMediaType` (415).
    UnsupportedMediaType(String),
    /// `Sabre\DAV\Exception\RequestedRangeNotSatisfiable` (416).
    RangeNotSatisfiable(String),
    /// `Sabre\DAV\Exception\MethodNotAllowed` (405), with the `Allow`
    /// header when the resource's methods are known.
    MethodNotAllowed { message: String, allow: Option<String> },
    /// `Sabre\DAV\Exception\PreconditionFailed` (412); `header` names the
    /// failed header in `<s:header>` (CalDAV and CardDAV write it, files
    /// do not).
    PreconditionFailed { message: String, header: Option<String> },
    /// `Sabre\DAV\Exception\ReportNotSupported` (415), with
    /// `<d:supported-report/>` when `condition` is set.
    ReportNotSupported { message: String, condition: bool },
    /// `Sabre\DAV\Exception\InvalidResourceType` (403): an extended MKCOL
    /// asked for a resource type the collection cannot hold.
    InvalidResourceType,
    /// `Sabre\DAV\Exception\InvalidSyncToken` (403, RFC 6578 3.2).
    InvalidSyncToken,
    /// `Sabre\DAV\Exception\TooManyMatches` (507, RFC 6578 3.7).
    TooManyMatches,
    /// A protocol's own exception with its precondition element (CalDAV's
    /// `InvalidComponentType`, Nextcloud's `UidConflict`).
    Condition { status: StatusCode, exception: &'static str, message: String, condition: String },
    /// 304 to a conditional GET: not an error body, but it ends the request
    /// the same way a refusal does.
    NotModified { etag: String },
}

impl DavError {
    /// sabre's plain 404, "File not found".
    pub fn not_found() -> DavError {
        DavError::NotFound("File not found".to_string())
    }

    pub fn bad_request(message: impl Into<String>) -> DavError {
        DavError::BadRequest(message.into())
    }

    pub fn forbidden(message: impl Into<String>) -> DavError {
        DavError::Forbidden(message.into())
    }

    pub fn conflict(message: impl Into<String>) -> DavError {
        DavError::Conflict(message.into())
    }

    pub fn not_implemented(message: impl Into<String>) -> DavError {
        DavError::NotImplemented(message.into())
    }

    /// sabre's answer to a method no plugin handles.
    pub fn no_plugin_for(method: &str) -> DavError {
        DavError::NotImplemented(format!(
            "There was no plugin in the system that was willing to handle this {method} method."
        ))
    }

    pub fn unsupported_media_type(message: impl Into<String>) -> DavError {
        DavError::UnsupportedMediaType(message.into())
    }

    /// 405 with the methods the resource does allow.
    pub fn method_not_allowed(message: impl Into<String>, allow: impl Into<String>) -> DavError {
        DavError::MethodNotAllowed { message: message.into(), allow: Some(allow.into()) }
    }

    /// 412 naming the header whose condition failed.
    pub fn precondition_failed(message: impl Into<String>, header: &str) -> DavError {
        DavError::PreconditionFailed { message: message.into(), header: Some(header.to_string()) }
    }

    /// 415 with `d:supported-report`: the REPORT is not known here.
    pub fn report_not_supported(message: impl Into<String>) -> DavError {
        DavError::ReportNotSupported { message: message.into(), condition: true }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            DavError::BadRequest(_) => StatusCode::BAD_REQUEST,
            DavError::Forbidden(_) | DavError::InvalidResourceType | DavError::InvalidSyncToken => {
                StatusCode::FORBIDDEN
            }
            DavError::NotFound(_) => StatusCode::NOT_FOUND,
            DavError::Conflict(_) => StatusCode::CONFLICT,
            DavError::NotImplemented(_) => StatusCode::NOT_IMPLEMENTED,
            DavError::UnsupportedMediaType(_) | DavError::ReportNotSupported { .. } => {
                StatusCode::UNSUPPORTED_MEDIA_TYPE
            }
            DavError::RangeNotSatisfiable(_) => StatusCode::RANGE_NOT_SATISFIABLE,
            DavError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            DavError::PreconditionFailed { .. } => StatusCode::PRECONDITION_FAILED,
            DavError::TooManyMatches => StatusCode::INSUFFICIENT_STORAGE,
            DavError::Condition { status, .. } => *status,
            DavError::NotModified { .. } => StatusCode::NOT_MODIFIED,
        }
    }

    /// The exception class, the message and the precondition element.
    fn exception(&self) -> (&str, &str, Option<String>) {
        match self {
            DavError::BadRequest(message) => ("Sabre\\DAV\\Exception\\BadRequest", message, None),
            DavError::Forbidden(message) => ("Sabre\\DAV\\Exception\\Forbidden", message, None),
            DavError::NotFound(message) => ("Sabre\\DAV\\Exception\\NotFound", message, None),
            DavError::Conflict(message) => ("Sabre\\DAV\\Exception\\Conflict", message, None),
            DavError::NotImplemented(message) => {
                ("Sabre\\DAV\\Exception\\NotImplemented", message, None)
            }
            DavError::UnsupportedMediaType(message) => {
                ("Sabre\\DAV\\Exception\\UnsupportedMediaType", message, None)
            }
            DavError::RangeNotSatisfiable(message) => {
                ("Sabre\\DAV\\Exception\\RequestedRangeNotSatisfiable", message, None)
            }
            DavError::MethodNotAllowed { message, .. } => {
                ("Sabre\\DAV\\Exception\\MethodNotAllowed", message, None)
            }
            DavError::PreconditionFailed { message, header } => (
                "Sabre\\DAV\\Exception\\PreconditionFailed",
                message,
                header
                    .as_ref()
                    .map(|header| format!("<s:header>{}</s:header>", xml::escape(header))),
            ),
            DavError::ReportNotSupported { message, condition } => (
                "Sabre\\DAV\\Exception\\ReportNotSupported",
                message,
                condition.then(|| "<d:supported-report/>".to_string()),
            ),
            DavError::InvalidResourceType => (
                "Sabre\\DAV\\Exception\\InvalidResourceType",
                "Unknown resourceType for this collection",
                Some("<d:valid-resourcetype/>".to_string()),
            ),
            DavError::InvalidSyncToken => (
                "Sabre\\DAV\\Exception\\InvalidSyncToken",
                "Invalid or unknown sync token",
                Some("<d:valid-sync-token/>".to_string()),
            ),
            DavError::TooManyMatches => (
                "Sabre\\DAV\\Exception\\TooManyMatches",
                "The number of results exceeds the limit requested by the client",
                Some("<d:number-of-matches-within-limits/>".to_string()),
            ),
            DavError::Condition { exception, message, condition, .. } => {
                (exception, message, Some(condition.clone()))
            }
            DavError::NotModified { .. } => ("", "", None),
        }
    }
}

impl IntoResponse for DavError {
    fn into_response(self) -> Response {
        let status = self.status();
        if let DavError::NotModified { etag } = &self {
            let mut headers = HeaderMap::new();
            if let Ok(value) = HeaderValue::from_str(etag) {
                headers.insert(http::header::ETAG, value);
            }
            return (status, headers).into_response();
        }
        let (exception, message, condition) = self.exception();
        let body = match condition {
            None => xml::error_body(exception, message),
            // `Exception::serialize` appends the precondition after the message.
            Some(condition) => format!(
                "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<d:error xmlns:d=\"DAV:\" xmlns:s=\"http://sabredav.org/ns\">\n  <s:exception>{}</s:exception>\n  <s:message>{}</s:message>\n  {condition}\n</d:error>\n",
                xml::escape(exception),
                xml::escape(message)
            ),
        };
        let mut response =
            (status, [(http::header::CONTENT_TYPE, "application/xml; charset=utf-8")], body)
                .into_response();
        if let DavError::MethodNotAllowed { allow: Some(allow), .. } = &self
            && let Ok(value) = HeaderValue::from_str(allow)
        {
            response.headers_mut().insert(http::header::ALLOW, value);
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn rendered(error: DavError) -> (StatusCode, HeaderMap, String) {
        let response = error.into_response();
        let status = response.status();
        let headers = response.headers().clone();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.expect("body");
        (status, headers, String::from_utf8(body.to_vec()).expect("utf-8"))
    }

    #[tokio::test]
    async fn a_plain_exception_renders_sabres_body() {
        let (status, headers, body) = rendered(DavError::bad_request("a < b")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(headers[http::header::CONTENT_TYPE], "application/xml; charset=utf-8");
        assert_eq!(
            body,
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<d:error xmlns:d=\"DAV:\" xmlns:s=\"http://sabredav.org/ns\">\n  <s:exception>Sabre\\DAV\\Exception\\BadRequest</s:exception>\n  <s:message>a &lt; b</s:message>\n</d:error>\n"
        );
    }

    #[tokio::test]
    async fn a_precondition_element_follows_the_message() {
        let (status, _, body) = rendered(DavError::precondition_failed("no", "If-Match")).await;
        assert_eq!(status, StatusCode::PRECONDITION_FAILED);
        assert!(
            body.ends_with(
                "  <s:message>no</s:message>\n  <s:header>If-Match</s:header>\n</d:error>\n"
            ),
            "{body}"
        );
        let (_, _, bare) =
            rendered(DavError::PreconditionFailed { message: "no".into(), header: None }).await;
        assert!(!bare.contains("s:header"), "{bare}");
    }

    #[tokio::test]
    async fn method_not_allowed_carries_allow_and_not_modified_only_the_etag() {
        let (status, headers, _) =
            rendered(DavError::method_not_allowed("no", "OPTIONS, PROPFIND")).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(headers[http::header::ALLOW], "OPTIONS, PROPFIND");
        let (status, headers, body) =
            rendered(DavError::NotModified { etag: "\"e\"".into() }).await;
        assert_eq!(status, StatusCode::NOT_MODIFIED);
        assert_eq!(headers[http::header::ETAG], "\"e\"");
        assert!(headers.get(http::header::CONTENT_TYPE).is_none() && body.is_empty());
    }
}
