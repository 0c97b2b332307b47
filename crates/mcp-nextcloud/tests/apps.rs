//! MCP Apps over the wire: tools name their views in `_meta.ui.resourceUri`,
//! the views are listed and read as `ui://` resources with the MCP Apps
//! MIME type and a default-deny CSP, and the server advertises resources.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::*;
use serde_json::{Value, json};

const MIME_TYPE: &str = "text/html;profile=mcp-app";
const CALENDAR_VIEW: &str = "ui://tamebi/calendar-events.html";
const FILES_VIEW: &str = "ui://tamebi/files-search.html";

async fn tools(stack: &Stack) -> Vec<Value> {
    let result = stack.rpc_result(&stack.headers_for("alice"), "tools/list", json!({})).await;
    result["tools"].as_array().unwrap().clone()
}

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools.iter().find(|tool| tool["name"] == name).unwrap_or_else(|| panic!("no tool {name}"))
}

#[tokio::test]
async fn tools_name_their_views_in_meta_ui_resource_uri() {
    let stack = start(second_token()).await;
    let tools = tools(&stack).await;
    assert_eq!(tool(&tools, "calendar_events")["_meta"]["ui"]["resourceUri"], CALENDAR_VIEW);
    assert_eq!(tool(&tools, "files_search")["_meta"]["ui"]["resourceUri"], FILES_VIEW);
    assert!(tool(&tools, "calendar_create_event").get("_meta").is_none());
    // Every view a tool names is a resource the server lists.
    let listed = stack.rpc_result(&stack.headers_for("alice"), "resources/list", json!({})).await;
    let uris: Vec<&str> = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|resource| resource["uri"].as_str().unwrap())
        .collect();
    for tool in &tools {
        if let Some(uri) = tool["_meta"]["ui"]["resourceUri"].as_str() {
            assert!(uris.contains(&uri), "{} names {uri}, which is not listed", tool["name"]);
        }
    }
}

#[tokio::test]
async fn calendar_tools_carry_their_annotations() {
    let stack = start(second_token()).await;
    let tools = tools(&stack).await;
    let events = &tool(&tools, "calendar_events")["annotations"];
    assert_eq!(events["readOnlyHint"], true);
    let create = &tool(&tools, "calendar_create_event")["annotations"];
    assert_eq!(create["readOnlyHint"], false);
    assert_eq!(create["destructiveHint"], false);
    assert_eq!(create["idempotentHint"], false);
    for name in ["calendar_events", "calendar_create_event"] {
        let tool = tool(&tools, name);
        assert_eq!(tool["inputSchema"]["additionalProperties"], false, "{name}");
        assert!(tool["outputSchema"]["required"].is_array(), "{name}");
    }
}

#[tokio::test]
async fn the_views_are_listed_as_mcp_app_resources() {
    let stack = start(second_token()).await;
    let listed = stack.rpc_result(&stack.headers_for("alice"), "resources/list", json!({})).await;
    let resources = listed["resources"].as_array().unwrap();
    for uri in [CALENDAR_VIEW, FILES_VIEW] {
        let resource = resources
            .iter()
            .find(|resource| resource["uri"] == uri)
            .unwrap_or_else(|| panic!("{uri} is not listed: {listed}"));
        assert_eq!(resource["mimeType"], MIME_TYPE);
        assert!(resource["name"].is_string());
        assert_eq!(resource["_meta"]["ui"]["csp"]["connectDomains"], json!([]));
    }
}

#[tokio::test]
async fn reading_a_view_returns_its_html_with_the_mime_type_and_csp() {
    let stack = start(second_token()).await;
    for uri in [CALENDAR_VIEW, FILES_VIEW] {
        let read = stack
            .rpc_result(&stack.headers_for("bob"), "resources/read", json!({"uri": uri}))
            .await;
        let contents = read["contents"].as_array().unwrap();
        assert_eq!(contents.len(), 1);
        let content = &contents[0];
        assert_eq!(content["uri"], uri);
        assert_eq!(content["mimeType"], MIME_TYPE);
        let html = content["text"].as_str().unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"), "{uri}");
        assert!(
            html.contains(
                r#"<meta http-equiv="Content-Security-Policy" content="default-src 'none';"#
            ),
            "{uri}"
        );
        assert!(html.contains("ui/notifications/tool-result"), "{uri}");
        let csp = &content["_meta"]["ui"]["csp"];
        for key in ["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"] {
            assert_eq!(csp[key], json!([]), "{uri} {key}");
        }
    }
}

#[tokio::test]
async fn an_unknown_resource_is_a_resource_not_found_error() {
    let stack = start(second_token()).await;
    let response = stack
        .rpc(&stack.headers_for("alice"), "resources/read", json!({"uri": "ui://tamebi/nope.html"}))
        .await;
    assert_eq!(response.status(), 200);
    let body = response.text().await.unwrap();
    let message: Value = serde_json::from_str(
        body.lines().filter_map(|line| line.strip_prefix("data:")).next().unwrap_or(&body).trim(),
    )
    .unwrap();
    assert_eq!(message["error"]["code"], -32002, "{message}");
}

#[tokio::test]
async fn resources_need_a_valid_bearer_like_everything_else() {
    let stack = start(second_token()).await;
    let response = stack.rpc(&[], "resources/list", json!({})).await;
    assert_eq!(response.status(), 401);
}

#[tokio::test]
async fn the_server_advertises_resources() {
    let stack = start(second_token()).await;
    let result = stack
        .rpc_result(
            &stack.headers_for("alice"),
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": [MIME_TYPE]}}},
                "clientInfo": {"name": "test", "version": "0"}
            }),
        )
        .await;
    assert!(result["capabilities"]["resources"].is_object(), "{result}");
    assert!(result["capabilities"]["tools"].is_object(), "{result}");
}
