//! mcp-nextcloud on the target: the tools reach it with the tokens the
//! target's own OIDC provider mints through the login and code flow (no
//! key of the suite's), answer as the user those tokens name, and give
//! nobody what only another user can read. Against the fake this is the
//! path every scenario takes; with `TAMEBI_CONTRACT_URL` it is the same
//! server binary in front of a real Nextcloud.

use mcp_nextcloud::{Config, McpNextcloud, UpstreamAuth};
use nextcloud_contract::{Account, Target};
use scenario::harness::Stack;
use scenario::mcp_client::{McpClient, failure_kind, text_of};
use serde_json::json;

/// mcp-nextcloud in front of the target: its audience is the resource
/// client's, the target is issuer and Nextcloud, and the second token is
/// the Nextcloud client's.
async fn start(target: &Target) -> McpNextcloud {
    let config = Config {
        server: Stack::mcp_server_config_at(&target.base_url, &target.resource_client.audience),
        upstream: UpstreamAuth::SecondToken {
            nextcloud_audience: target.nextcloud_client.audience.clone(),
        },
        index: Default::default(),
        converter: None,
    };
    McpNextcloud::start(config).await.expect("mcp-nextcloud starts")
}

/// What the orchestrator sends for `account`: a token addressed to the
/// server and one addressed to Nextcloud, both minted by the target.
async fn headers(target: &Target, account: &Account) -> Vec<(String, String)> {
    let mcp = target.access_token(account, &target.resource_client).await;
    let nextcloud = target.access_token(account, &target.nextcloud_client).await;
    vec![
        ("authorization".into(), format!("Bearer {mcp}")),
        (wire::headers::NEXTCLOUD_TOKEN.into(), nextcloud),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tools_read_the_target_as_the_user_and_only_as_them() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let name = target.unique("tools");
    let path = format!("{name}.md");
    let put = target.put_file(&alice, &path, "# Contract\n\nwritten for the tools check\n").await;
    assert!(put.status().is_success(), "alice can write her file: {}", put.status());
    let mcp = start(&target).await;
    let client = McpClient::new(format!("{}/mcp", mcp.url()));
    let as_alice = headers(&target, &alice).await;
    let as_bob = headers(&target, &bob).await;

    let found = client.call_tool_with(&as_alice, "files_search", json!({"name": name})).await;
    assert_eq!(failure_kind(&found), None, "{found}");
    assert!(text_of(&found).contains(&path), "alice's search finds her file: {found}");
    let read = client.call_tool_with(&as_alice, "files_read", json!({"path": path})).await;
    assert!(text_of(&read).contains("written for the tools check"), "alice reads it: {read}");

    let searched = client.call_tool_with(&as_bob, "files_search", json!({"name": name})).await;
    assert_eq!(failure_kind(&searched), None, "{searched}");
    assert!(!text_of(&searched).contains(&name), "bob's search shows nothing of it: {searched}");
    let refused = client.call_tool_with(&as_bob, "files_read", json!({"path": path})).await;
    assert_eq!(failure_kind(&refused), Some("not_found"), "bob cannot read it: {refused}");
    assert!(!text_of(&refused).contains("written for"), "{refused}");

    target.cleanup(&alice, &path).await;
    mcp.shutdown().await;
}
