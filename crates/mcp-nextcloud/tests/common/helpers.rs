//! What several tests do with a [`Stack`] beyond calling a tool: the
//! index's passes, faults in the fake, webhook deliveries.

use super::*;

impl Stack {
    /// [`route_fault`] in the fake from now on.
    pub fn fail_route(
        &self,
        prefix: &str,
        method: Option<&str>,
        status: u16,
        remaining: Option<u32>,
    ) {
        let fault = route_fault(prefix, method, status, remaining);
        self.fake.shared.world().faults.routes.push(fault);
    }

    /// A POST to mcp-nextcloud's webhook endpoint with the shared `secret`.
    pub fn webhook(&self, secret: &str) -> reqwest::RequestBuilder {
        let endpoint = format!("{}/webhooks/nextcloud", self.mcp().url());
        self.client.http.post(endpoint).header(wire::headers::WEBHOOK_SECRET, secret)
    }
}

/// One `files_grep` as `uid`.
pub async fn grep(stack: &Stack, uid: &str, arguments: Value) -> Value {
    stack.call_tool(uid, "files_grep", arguments).await
}

/// Searches until `uid`'s index is ready (each search starts a pass).
pub async fn warm(stack: &Stack, uid: &str) {
    for _ in 0..20 {
        let result = grep(stack, uid, json!({"query": "warming"})).await;
        stack.mcp().index().idle().await;
        if result["structuredContent"]["index"] == "ready" {
            return;
        }
    }
    panic!("{uid}'s index never became ready");
}

/// The fake answers `status` instead of handling what starts with
/// `prefix` (of `method` only, where given), the next `remaining` times or
/// always.
pub fn route_fault(
    prefix: &str,
    method: Option<&str>,
    status: u16,
    remaining: Option<u32>,
) -> fake_nextcloud::faults::RouteFault {
    fake_nextcloud::faults::RouteFault {
        prefix: prefix.to_string(),
        method: method.map(str::to_string),
        status: Some(status),
        remaining,
        ..Default::default()
    }
}

/// A write event as webhook_listeners posts it, for the node `id` at
/// `path` (`/alice/files/…`).
pub fn node_written(id: u64, path: impl Into<String>) -> Value {
    let class = "OCP\\Files\\Events\\Node\\NodeWrittenEvent";
    json!({"event": {"class": class, "node": {"id": id, "path": path.into()}}})
}
