//! The MCP Apps views the orchestrator may attach (`crates/orchestrator/src/tools/view_pins.txt`)
//! against the views mcp-nextcloud ships, and the attachment itself: a
//! pinned view reaches the page beside the tool's result, a view whose
//! content is not the reviewed one does not. (It lives here because the
//! orchestrator may not depend on mcp-nextcloud.) After reviewing a view's
//! change, regenerate the list with
//!
//! ```sh
//! TAMEBI_UPDATE_DOCS=1 cargo test -p system --test view_pins
//! ```

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use orchestrator::agent::ToolSet as _;
use orchestrator::mcp::{Credential, ServerConfig};
use orchestrator::model::ToolCall;
use orchestrator::tools::views::{ViewPins, fingerprint};
use orchestrator::tools::{self, Caller};
use scenario::harness::{MCP_NEXTCLOUD_AUDIENCE as MCP_AUDIENCE, Service, Stack};
use std::path::Path;
use std::sync::Arc;

const REGENERATE: &str = "TAMEBI_UPDATE_DOCS=1 cargo test -p system --test view_pins";

/// Every view mcp-nextcloud serves, fingerprinted as it reaches the orchestrator.
fn shipped_views() -> Vec<(String, String)> {
    mcp_nextcloud::apps::all()
        .iter()
        .map(|app| {
            let view = orchestrator::mcp::view_json(app.contents(), app.uri).expect("a text view");
            (app.uri.to_string(), fingerprint(&view["resource"]))
        })
        .collect()
}

#[test]
fn the_pin_list_is_exactly_the_views_mcp_nextcloud_ships() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../orchestrator/src/tools/view_pins.txt");
    let rendered = ViewPins::render(&shipped_views());
    if std::env::var_os("TAMEBI_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &rendered).unwrap();
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap();
    assert!(
        current == rendered,
        "the view pins are out of date with mcp-nextcloud's views (crates/mcp-nextcloud/src/apps/).\n\
         Review the changed view (its HTML and _meta), then regenerate the list with\n\n    {REGENERATE}\n\n\
         and commit the result.\n--- pinned\n{current}\n--- shipped\n{rendered}"
    );
    // What was compiled in is what is on disk (no stale build).
    assert_eq!(orchestrator::tools::views::SHIPPED, current);
}

/// The fake Nextcloud and mcp-nextcloud in front of it.
async fn start() -> Stack {
    Stack::builder().only(&[Service::McpNextcloud]).start().await.unwrap()
}

/// One `files_search` through the turn's tools with these pins: the
/// result's `_meta.ui.resource`, if a view was attached.
async fn attached_view(stack: &Stack, pins: Option<Arc<ViewPins>>) -> Option<serde_json::Value> {
    let config =
        ServerConfig { name: "nextcloud".into(), url: format!("{}/mcp", stack.mcp().url()) };
    let credential = Credential {
        bearer: stack.fake.shared.mint_access_token("alice", MCP_AUDIENCE),
        headers: vec![(
            mcp_nextcloud::config::NEXTCLOUD_TOKEN_HEADER.to_string(),
            stack.fake.shared.mint_access_token("alice", "nextcloud"),
        )],
    };
    let memory = orchestrator::store::memory::open(None).unwrap();
    let mut set = tools::assemble(
        &[(config, Some(credential))],
        &reqwest::Client::new(),
        tools::memory::MemoryTools::new(memory, "alice"),
        Vec::new(),
        orchestrator::store::audit::open(None).unwrap(),
        Caller { uid: "alice".into(), conversation_id: "c1".into() },
    )
    .await;
    if let Some(pins) = pins {
        set = set.with_view_pins(pins);
    }
    let call = ToolCall {
        id: "c".into(),
        name: "files_search".into(),
        arguments: r#"{"name":"notes"}"#.into(),
    };
    let result = set.call(&call).await;
    assert!(!result.is_error, "{}", result.text);
    assert!(result.text.contains("notes-reunion.md"), "the text stays whole: {}", result.text);
    set.close().await;
    result.output.pointer("/_meta/ui/resource").cloned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_view_is_attached_and_a_changed_one_is_not() {
    let stack = start().await;
    let uri = mcp_nextcloud::apps::FILES_SEARCH_URI;

    // The shipped pins: the reviewed view reaches the page.
    let view = attached_view(&stack, None).await.expect("the reviewed view is attached");
    assert_eq!(view["resource"]["uri"], uri);

    // The server now serves something else under that URI than what was
    // reviewed (pinned: the reviewed HTML plus one byte). Not attached.
    let mut reviewed = view["resource"].clone();
    reviewed["text"] = format!("{} ", reviewed["text"].as_str().unwrap()).into();
    let pins = ViewPins::parse(&ViewPins::render(&[(uri.to_string(), fingerprint(&reviewed))]));
    let changed = attached_view(&stack, Some(Arc::new(pins.unwrap()))).await;
    assert!(changed.is_none(), "a view whose content is not the reviewed one was attached");

    // A view nobody pinned at all: not attached either.
    let unknown = attached_view(&stack, Some(Arc::new(ViewPins::default()))).await;
    assert!(unknown.is_none(), "a view that is not pinned was attached");

    stack.shutdown().await;
}
