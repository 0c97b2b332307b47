//! A raw MCP client for tests: one stateless JSON-RPC request as a
//! 2025-11-25 client sends it over streamable HTTP, and the message that
//! answers it read back whether the server chose a JSON body or an SSE
//! stream.
//!
//! The helpers assert as they go (a status, a parsable answer): they are
//! test support, and a panic names the request that went wrong.
//!
//! Raw on purpose: the MCP servers' test suites check the wire itself
//! (status codes, challenges, headers a client must send), which a full MCP
//! client library would hide. Both servers' suites and anything else
//! calling a tool over HTTP share this one, so the request a client sends
//! and the reading of `data:` lines are written once.

use serde_json::{Value, json};

/// The MCP protocol revision the requests announce.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// A client for one MCP endpoint (`…/mcp`).
#[derive(Debug, Clone)]
pub struct McpClient {
    pub http: reqwest::Client,
    /// The endpoint's URL, e.g. `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl McpClient {
    pub fn new(url: impl Into<String>) -> McpClient {
        McpClient { http: reqwest::Client::new(), url: url.into() }
    }

    /// One JSON-RPC request (id 1) with `headers` added, not yet sent, so
    /// that a test can add what no client would (another `Host`).
    pub fn request(
        &self,
        headers: &[(String, String)],
        method: &str,
        params: Value,
    ) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", PROTOCOL_VERSION)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
        for (name, value) in headers {
            request = request.header(name, value);
        }
        request
    }

    /// [`McpClient::request`], sent; a test's assertion that the server
    /// answered at all.
    pub async fn rpc(
        &self,
        headers: &[(String, String)],
        method: &str,
        params: Value,
    ) -> reqwest::Response {
        let sent = self.request(headers, method, params).send().await;
        sent.unwrap_or_else(|error| panic!("{method} was not answered: {error}"))
    }

    /// The JSON-RPC message answering one request (result or error),
    /// asserting that it came with 200.
    pub async fn rpc_message(
        &self,
        headers: &[(String, String)],
        method: &str,
        params: Value,
    ) -> Value {
        let response = self.rpc(headers, method, params).await;
        assert_eq!(response.status(), 200, "{method} answered {}", response.status());
        let text = response.text().await.unwrap_or_else(|error| panic!("{method}: {error}"));
        parse_message(&text).unwrap_or_else(|_| panic!("JSON-RPC answer: {text}"))
    }

    /// The JSON-RPC result of a request, asserting that it succeeded.
    pub async fn rpc_result(
        &self,
        headers: &[(String, String)],
        method: &str,
        params: Value,
    ) -> Value {
        let message = self.rpc_message(headers, method, params).await;
        assert!(message.get("error").is_none(), "{method} failed: {message}");
        message["result"].clone()
    }

    /// One `tools/call` with the caller's `headers`: the tool's result
    /// (a tool failure is a result too, with `isError`).
    pub async fn call_tool_with(
        &self,
        headers: &[(String, String)],
        name: &str,
        arguments: Value,
    ) -> Value {
        self.rpc_result(headers, "tools/call", json!({"name": name, "arguments": arguments})).await
    }
}

/// Where an MCP server publishes its protected resource metadata (RFC
/// 9728): at the root, and suffixed with the endpoint's path.
pub const METADATA_PATHS: [&str; 2] =
    ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"];

impl McpClient {
    /// The server's protected resource metadata at each of
    /// [`METADATA_PATHS`], with the path; a test's assertion that each is
    /// served as JSON.
    pub async fn resource_metadata(&self) -> Vec<(&'static str, Value)> {
        let base = self.url.trim_end_matches("/mcp");
        let mut found = Vec::new();
        for path in METADATA_PATHS {
            let sent = self.http.get(format!("{base}{path}")).send().await;
            let response = sent.unwrap_or_else(|error| panic!("{path}: {error}"));
            let metadata = response.json().await.unwrap_or_else(|error| panic!("{path}: {error}"));
            found.push((path, metadata));
        }
        found
    }
}

/// The JSON-RPC message in an answer's body: the first non-empty SSE
/// `data:` line, or the whole body where the server answered with JSON.
pub fn message_text(body: &str) -> &str {
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or(body.trim())
}

/// [`message_text`], parsed.
pub fn parse_message(body: &str) -> serde_json::Result<Value> {
    serde_json::from_str(message_text(body))
}

/// The text a model reads in a tool result: its first content block.
pub fn text_of(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_string()
}

/// `Some(kind)` for a tool failure (`isError`, its kind in `_meta` under
/// the wire's key), `None` for a success; a failure without a kind fails
/// the test.
pub fn failure_kind(result: &Value) -> Option<&str> {
    let key = orchestrator::tools::FAILURE_KIND_META_KEY;
    let kind = || result["_meta"][key].as_str().unwrap_or_else(|| panic!("no {key}: {result}"));
    (result["isError"] == json!(true)).then(kind)
}

/// Asserts what a refusal of the caller's bearer must look like (RFC 6750
/// and the MCP authorization spec): 401, a challenge that points at the
/// protected resource metadata `metadata_url` and says nothing else, and an
/// empty body. `case` names the attempt in the failure.
pub async fn assert_bare_refusal(response: reqwest::Response, metadata_url: &str, case: &str) {
    assert_eq!(response.status(), 401, "{case}");
    let challenge = response.headers().get("www-authenticate").cloned();
    let expected = format!("Bearer resource_metadata=\"{metadata_url}\"");
    assert_eq!(
        challenge.as_ref().and_then(|value| value.to_str().ok()),
        Some(&*expected),
        "{case}"
    );
    let body = response.text().await.unwrap_or_else(|error| panic!("{case}: {error}"));
    assert!(body.is_empty(), "{case}: a refusal explains nothing, got {body:?}");
}
