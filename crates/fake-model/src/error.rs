//! Every error the fake answers, in the shape its real counterpart uses, so
//! a client's error handling meets what it will meet in production.
//!
//! OpenAI's shape is `{"error": {"message", "type", "param", "code"}}` with
//! the status saying the class; llama.cpp's server answers its refusal of
//! streamed tool calls in its own shape (`code` is the status, no `param`),
//! and that is kept too, because the orchestrator must recognise both.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use serde_json::{Value, json};

/// What llama.cpp's server says when asked to stream with automatic tool
/// choice (llama-cpp-python 0.3.36, see PEERS.md).
pub const STREAMING_TOOLS_REFUSED_MESSAGE: &str =
    "Automatic streaming tool choice is not supported";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// 400: the request is not one OpenAI would accept.
    InvalidRequest { message: String, param: Option<String>, code: Option<&'static str> },
    /// 401: an API key is configured and none was sent.
    MissingKey,
    /// 401: an API key is configured and another was sent.
    WrongKey { sent: String },
    /// 404: no such route.
    UnknownUrl { method: String, path: String },
    /// 404: `GET /v1/models/{id}` for a model this server does not list.
    ModelNotFound { model: String },
    /// 413: the body is over [`crate::REQUEST_BODY_LENGTH_MAX`].
    BodyTooLarge,
    /// 429, a fault: with `retry-after`.
    RateLimited { retry_after_seconds: u32 },
    /// 500, a fault: OpenAI's generic server error.
    ServerError,
    /// 500, a fault: llama.cpp's refusal of streaming with tools.
    StreamingToolsRefused,
    /// 500, a fault: llama.cpp reading back a tool call whose arguments
    /// are not JSON.
    ArgumentsNotJson,
    /// 400, a fault: llama.cpp's answer to a prompt over its context size.
    ContextExceeded,
}

impl ApiError {
    pub fn invalid(
        message: impl Into<String>,
        param: Option<&str>,
        code: Option<&'static str>,
    ) -> ApiError {
        ApiError::InvalidRequest { message: message.into(), param: param.map(str::to_string), code }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::InvalidRequest { .. } => StatusCode::BAD_REQUEST,
            ApiError::MissingKey | ApiError::WrongKey { .. } => StatusCode::UNAUTHORIZED,
            ApiError::UnknownUrl { .. } | ApiError::ModelNotFound { .. } => StatusCode::NOT_FOUND,
            ApiError::BodyTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::ContextExceeded => StatusCode::BAD_REQUEST,
            ApiError::ServerError
            | ApiError::StreamingToolsRefused
            | ApiError::ArgumentsNotJson => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The JSON body.
    pub fn body(&self) -> Value {
        let openai = |message: String, kind: &str, param: Option<&str>, code: Option<&str>| json!({ "error": { "message": message, "type": kind, "param": param, "code": code } });
        match self {
            ApiError::InvalidRequest { message, param, code } => {
                openai(message.clone(), "invalid_request_error", param.as_deref(), *code)
            }
            ApiError::MissingKey => openai(
                "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).".to_string(),
                "invalid_request_error",
                None,
                None,
            ),
            ApiError::WrongKey { sent } => openai(
                format!("Incorrect API key provided: {}.", mask(sent)),
                "invalid_request_error",
                None,
                Some("invalid_api_key"),
            ),
            ApiError::UnknownUrl { method, path } => openai(
                format!("Invalid URL ({method} {path})"),
                "invalid_request_error",
                None,
                None,
            ),
            ApiError::ModelNotFound { model } => openai(
                format!("The model `{model}` does not exist or you do not have access to it."),
                "invalid_request_error",
                None,
                Some("model_not_found"),
            ),
            ApiError::BodyTooLarge => openai(
                format!(
                    "The request body is larger than {} bytes.",
                    crate::REQUEST_BODY_LENGTH_MAX
                ),
                "invalid_request_error",
                None,
                None,
            ),
            ApiError::RateLimited { retry_after_seconds } => openai(
                format!(
                    "Rate limit reached for requests (injected by fake-model). Please try again in {retry_after_seconds}s."
                ),
                "requests",
                None,
                Some("rate_limit_exceeded"),
            ),
            ApiError::ServerError => openai(
                "The server had an error while processing your request. Sorry about that! (injected by fake-model)".to_string(),
                "server_error",
                None,
                None,
            ),
            ApiError::StreamingToolsRefused => json!({
                "error": { "code": 500, "message": STREAMING_TOOLS_REFUSED_MESSAGE, "type": "server_error" }
            }),
            ApiError::ArgumentsNotJson => json!({
                "error": { "code": 500, "message": "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error (injected by fake-model)", "type": "server_error" }
            }),
            ApiError::ContextExceeded => json!({
                "error": { "code": 400, "message": "request (10287 tokens) exceeds the available context size (8192 tokens), try increasing it (injected by fake-model)", "type": "exceed_context_size_error" }
            }),
        }
    }
}

/// Shows a key as OpenAI does: its start and end only.
fn mask(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() <= 8 {
        return "*".repeat(chars.len());
    }
    let start: String = chars[..3].iter().collect();
    let end: String = chars[chars.len() - 4..].iter().collect();
    format!("{start}***{end}")
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status(), axum::Json(self.body())).into_response();
        if let ApiError::RateLimited { retry_after_seconds } = self {
            let value = HeaderValue::from(retry_after_seconds);
            response.headers_mut().insert(header::RETRY_AFTER, value.clone());
            response.headers_mut().insert("x-ratelimit-reset-requests", {
                HeaderValue::from_str(&format!("{retry_after_seconds}s")).expect("ascii")
            });
            response.headers_mut().insert("x-ratelimit-remaining-requests", HeaderValue::from(0));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_errors_have_all_four_fields() {
        for error in [
            ApiError::invalid("bad", Some("messages"), Some("empty_array")),
            ApiError::MissingKey,
            ApiError::WrongKey { sent: "sk-abcdefghijkl".into() },
            ApiError::RateLimited { retry_after_seconds: 2 },
            ApiError::ServerError,
        ] {
            let body = error.body();
            let fields = body["error"].as_object().unwrap();
            for field in ["message", "type", "param", "code"] {
                assert!(fields.contains_key(field), "{error:?} lacks {field}");
            }
        }
    }

    #[test]
    fn the_llama_cpp_refusal_is_verbatim() {
        assert_eq!(
            ApiError::StreamingToolsRefused.body(),
            json!({"error": {"code": 500, "message": "Automatic streaming tool choice is not supported", "type": "server_error"}})
        );
        assert_eq!(ApiError::StreamingToolsRefused.status(), 500);
    }

    #[test]
    fn a_wrong_key_is_not_echoed_whole() {
        let message =
            ApiError::WrongKey { sent: "sk-secret-value-1234".into() }.body()["error"]["message"]
                .as_str()
                .unwrap()
                .to_string();
        assert!(message.contains("sk-***1234"), "{message}");
        assert!(!message.contains("secret"), "{message}");
    }

    #[test]
    fn rate_limits_say_when_to_retry() {
        let response = ApiError::RateLimited { retry_after_seconds: 3 }.into_response();
        assert_eq!(response.status(), 429);
        assert_eq!(response.headers()["retry-after"], "3");
    }
}
