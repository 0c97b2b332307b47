//! The orchestrator's MCP client against the real mcp-nextcloud in front of
//! the fake Nextcloud: it lists and calls tools with the user's own tokens,
//! and tells "unreachable" from "sign-in refused". (This test lives here
//! because the orchestrator itself may not depend on mcp-nextcloud.)

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use orchestrator::mcp::{self, Credential, McpError, ServerConfig};
use scenario::harness::{MCP_NEXTCLOUD_AUDIENCE as MCP_AUDIENCE, Service, Stack};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_listed_and_called_as_the_user_and_failures_are_told_apart() {
    let stack = Stack::builder().only(&[Service::McpNextcloud]).start().await.unwrap();
    let config =
        ServerConfig { name: "nextcloud".into(), url: format!("{}/mcp", stack.mcp().url()) };
    let credential = Credential {
        bearer: stack.token("alice", MCP_AUDIENCE),
        headers: vec![(
            mcp_nextcloud::config::NEXTCLOUD_TOKEN_HEADER.to_string(),
            stack.token("alice", "nextcloud"),
        )],
    };
    let http = reqwest::Client::new();
    let connection = mcp::connect(&config, http.clone(), &credential).await.unwrap();
    let tools = connection.tools().await.unwrap();
    assert_eq!(tools.len(), 11, "{:?}", tools.iter().map(|tool| &tool.name).collect::<Vec<_>>());
    let read_only = |name: &str| {
        tools
            .iter()
            .find(|tool| tool.name == name)
            .and_then(|tool| tool.annotations.as_ref())
            .and_then(|annotations| annotations.read_only_hint)
    };
    assert_eq!(read_only("files_grep"), Some(true));
    assert_eq!(read_only("files_write"), Some(false));
    let mut arguments = serde_json::Map::new();
    arguments.insert("name".into(), "notes".into());
    let result = connection.call("files_search", arguments).await.unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let text = format!("{:?}", result.content);
    assert!(text.contains("Documents/notes-reunion.md"), "{text}");
    connection.close().await;

    // A token the server cannot verify: sign-in refused, not "down".
    let refused = mcp::connect(
        &config,
        http.clone(),
        &Credential { bearer: "garbage".into(), headers: vec![] },
    )
    .await
    .err()
    .expect("a garbage token is refused");
    assert_eq!(refused, McpError::SignInRefused { server: "nextcloud".into() });

    let closed = ServerConfig { name: "mail".into(), url: "http://127.0.0.1:9/mcp".into() };
    let down =
        mcp::connect(&closed, http, &credential).await.err().expect("nothing listens on port 9");
    assert_eq!(down, McpError::Unreachable { server: "mail".into() });
    stack.shutdown().await;
}
