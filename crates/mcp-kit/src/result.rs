//! A tool's outcome as the MCP result: text plus structured content, or
//! `isError: true` with the failure's instructions as text and its kind in
//! `_meta[wire::meta::FAILURE_KIND]`, which the orchestrator's audit reads
//! back as the same enum.

use crate::registry::ToolOutcome;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject};
use serde_json::Value;

pub fn into_result(outcome: ToolOutcome) -> CallToolResult {
    match outcome {
        Ok(output) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(output.text)]);
            result.structured_content = Some(output.structured);
            result
        }
        Err(failure) => {
            let mut result = CallToolResult::error(vec![ContentBlock::text(failure.message)]);
            let mut meta = JsonObject::new();
            meta.insert(
                wire::meta::FAILURE_KIND.to_string(),
                Value::String(failure.kind.as_str().to_string()),
            );
            result.meta = Some(MetaObject(meta));
            result
        }
    }
}
