//! Routing, policy and audit of the turn's tools, with no MCP server
//! (those are exercised against the real mcp-nextcloud in the system crate).

use super::*;
use crate::store::memory as memory_store;

struct Echo;

impl Flow for Echo {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            definition: ToolDefinition {
                name: "flow_echo".into(),
                description: "Echo through memory_search.".into(),
                parameters: serde_json::json!({"type": "object"}),
            },
            kind: ToolKind::Data,
            dynamic: false,
        }
    }

    fn run<'a>(&'a self, tools: &'a dyn ToolSet, _call: &'a ToolCall) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let inner = ToolCall {
                id: "inner".into(),
                name: memory::SEARCH.into(),
                arguments: r#"{"query":"tea"}"#.into(),
            };
            tools.call(&inner).await
        })
    }
}

async fn set(flows: Vec<Box<dyn Flow>>) -> (TurnTools, Vec<Capability>, Database, Database) {
    let memory_db = memory_store::open(None).unwrap();
    let audit_db = audit::open(None).unwrap();
    let caller = Caller { uid: "alice".into(), conversation_id: "c1".into() };
    let unreachable =
        ServerConfig { name: "nextcloud".into(), url: "http://127.0.0.1:9/mcp".into() };
    let tools = assemble(
        &[(unreachable, Some(Credential::default()))],
        &reqwest::Client::new(),
        memory::MemoryTools::new(memory_db.clone(), "alice"),
        flows,
        audit_db.clone(),
        caller,
    )
    .await;
    let capabilities = tools.capabilities();
    (tools, capabilities, memory_db, audit_db)
}

fn call(name: &str, arguments: &str) -> ToolCall {
    ToolCall { id: "c".into(), name: name.into(), arguments: arguments.into() }
}

fn outcomes(audit_db: &Database) -> Vec<(String, String)> {
    audit_db
        .run_blocking(|c| audit::calls_of(c, "alice"))
        .unwrap()
        .into_iter()
        .map(|record| (record.tool, record.outcome))
        .collect()
}

#[tokio::test]
async fn memory_write_is_an_action_and_search_finds_what_it_wrote() {
    let (tools, capabilities, memory_db, audit_db) = set(vec![]).await;
    assert_eq!(capabilities[0].reach, Reach::ServerUnreachable, "{capabilities:?}");
    let kind =
        |name: &str| tools.specs().iter().find(|s| s.definition.name == name).map(|s| s.kind);
    assert_eq!(kind(memory::WRITE), Some(ToolKind::Action));
    assert_eq!(kind(memory::SEARCH), Some(ToolKind::Data));

    let written = tools.call(&call(memory::WRITE, r#"{"fact":"Prefers green tea"}"#)).await;
    assert!(!written.is_error, "{written:?}");
    let facts = memory_db.run_blocking(|c| memory_store::list(c, "alice", 10)).unwrap();
    assert_eq!((facts[0].text.as_str(), facts[0].source.as_str()), ("Prefers green tea", "agent"));
    let found = tools.call(&call(memory::SEARCH, r#"{"query":"TEA"}"#)).await;
    assert!(found.text.contains("Prefers green tea (source: agent)"), "{found:?}");
    assert_eq!(
        outcomes(&audit_db),
        [("memory_write".into(), "ok".into()), ("memory_search".into(), "ok".into())]
    );
}

#[tokio::test]
async fn misuse_is_answered_with_what_to_do_and_audited_as_misuse() {
    let (tools, _, _, audit_db) = set(vec![]).await;
    let unknown = tools.call(&call("files_delete_everything", "{}")).await;
    assert!(unknown.is_error && unknown.text.contains("no tool named"));
    let bad = tools.call(&call(memory::SEARCH, "[1]")).await;
    assert!(bad.is_error && bad.text.contains("JSON object"));
    let empty = tools.call(&call(memory::WRITE, r#"{"fact":"  "}"#)).await;
    assert!(empty.is_error);
    assert!(outcomes(&audit_db).iter().all(|(_, outcome)| outcome == "model_misuse"));
}

#[tokio::test]
async fn a_flow_is_one_registration_and_runs_the_turns_other_tools() {
    let (tools, _, memory_db, _) = set(vec![Box::new(Echo)]).await;
    memory_db
        .run_blocking(|c| {
            memory_store::write(c, "alice", "Likes tea", memory_store::Source::User, 1)
        })
        .unwrap();
    assert!(tools.specs().iter().any(|spec| spec.definition.name == "flow_echo"));
    let result = tools.call(&call("flow_echo", "{}")).await;
    assert!(result.text.contains("Likes tea"), "{result:?}");
    assert!(crate::flows::all().is_empty(), "no flow until a real task needs one");
}

fn listed(annotations: Option<rmcp::model::ToolAnnotations>) -> ToolKind {
    let schema = serde_json::Map::new();
    let mut tool = Tool::new("any_tool", "Does something.", std::sync::Arc::new(schema));
    tool.annotations = annotations;
    spec_of(&tool).kind
}

/// The approval boundary follows from one annotation only: a tool is data
/// when it says `readOnlyHint: true`, and an action in every other case,
/// including a server that annotates nothing or says other things.
#[test]
fn only_read_only_hint_true_makes_a_tool_data_unannotated_is_an_action() {
    use rmcp::model::ToolAnnotations;
    assert_eq!(listed(None), ToolKind::Action, "no annotations at all");
    assert_eq!(listed(Some(ToolAnnotations::new())), ToolKind::Action, "empty annotations");
    assert_eq!(listed(Some(ToolAnnotations::with_title("Search"))), ToolKind::Action);
    assert_eq!(listed(Some(ToolAnnotations::new().read_only(false))), ToolKind::Action);
    let harmless_sounding =
        ToolAnnotations::new().destructive(false).idempotent(true).open_world(false);
    assert_eq!(
        listed(Some(harmless_sounding)),
        ToolKind::Action,
        "not destructive is not read-only"
    );
    assert_eq!(listed(Some(ToolAnnotations::new().read_only(true))), ToolKind::Data);
    assert_eq!(
        listed(Some(ToolAnnotations::new().read_only(true).destructive(true))),
        ToolKind::Data,
        "the read-only hint decides"
    );
}

fn failed(kind: Option<serde_json::Value>) -> CallToolResult {
    let mut result =
        CallToolResult::error(vec![rmcp::model::ContentBlock::text("It failed. Do this next.")]);
    if let Some(kind) = kind {
        let mut meta = serde_json::Map::new();
        meta.insert(FAILURE_KIND_META_KEY.to_string(), kind);
        result.meta = Some(rmcp::model::MetaObject(meta));
    }
    result
}

/// The result conversion reads the kind through the shared vocabulary: a 404
/// and a scan are their own outcomes, an unknown kind is kept, not filed as
/// the model's misuse.
#[test]
fn failure_kinds_become_their_own_audit_outcomes() {
    let outcome = |kind: Option<serde_json::Value>| mcp_result(failed(kind)).1.as_str().to_owned();
    assert_eq!(outcome(Some("not_found".into())), "not_found");
    assert_eq!(outcome(Some("unreadable".into())), "unreadable");
    assert_eq!(outcome(Some("refused_by_nextcloud".into())), "refused_by_nextcloud");
    assert_eq!(outcome(Some("invalid_arguments".into())), "model_misuse");
    assert_eq!(outcome(Some("nextcloud_unreachable".into())), "unreachable");
    assert_eq!(outcome(Some("quota_exceeded".into())), "unknown:quota_exceeded");
    assert_eq!(outcome(Some(serde_json::json!(42))), "unknown");
    assert_eq!(outcome(None), "unknown");
    let (result, ok) =
        mcp_result(CallToolResult::success(vec![rmcp::model::ContentBlock::text("fine")]));
    assert_eq!((result.is_error, ok.as_str()), (false, "ok"));
    let (result, _) = mcp_result(failed(Some("not_found".into())));
    assert!(result.is_error && result.text == "It failed. Do this next.");
}
