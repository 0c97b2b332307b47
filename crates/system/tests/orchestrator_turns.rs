//! The orchestrator end to end on real sockets: the fake Nextcloud, the
//! real mcp-nextcloud, the scripted fake model and the orchestrator, driven
//! through its signed chat API the way the Nextcloud app drives it. Each
//! test is one behaviour the issue names: multi-step retrieval, approvals
//! granted / denied / in a parallel batch, the confident-while-failing
//! case, the summary stored once and reloaded, and a crash that loses
//! nothing acknowledged. (They live here because the orchestrator itself
//! may not depend on mcp-nextcloud or the fakes.) A case a scenario can
//! state is a scenario instead: the restart with an approval pending is
//! `scenarios/restart_loses_nothing_acknowledged.toml`, the model that
//! cannot stream tool calls `scenarios/model_refuses_streaming_with_tools.toml`,
//! the prompt injection that can only produce approval requests
//! `scenarios/poisoned_document_cannot_write_memory.toml`, the model cut
//! mid tool call `scenarios/model_cut_mid_tool_call.toml`.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

#[path = "common/orchestrator_process.rs"]
mod orchestrator_process;

use orchestrator::identity;
use orchestrator_process::{Flags, OrchestratorProcess};
use scenario::browser::{decision, question};
use scenario::harness::{MCP_NEXTCLOUD_AUDIENCE as MCP_AUDIENCE, SECRET, Service, Stack};
use scenario::sse::{of_type, text_of};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

struct Options {
    window_tokens: usize,
    mcp_reachable: bool,
    data_dir: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Options {
        Options { window_tokens: 100_000, mcp_reachable: true, data_dir: None }
    }
}

/// The fake Nextcloud, mcp-nextcloud, the fake model and the orchestrator
/// (no mcp-mail), driven through the orchestrator's signed chat API the way
/// the app drives it.
struct Turns {
    stack: Stack,
}

impl std::ops::Deref for Turns {
    type Target = Stack;

    fn deref(&self) -> &Stack {
        &self.stack
    }
}

impl std::ops::DerefMut for Turns {
    fn deref_mut(&mut self) -> &mut Stack {
        &mut self.stack
    }
}

async fn start(script: &str, options: Options) -> Turns {
    let mut builder = Stack::builder()
        .only(&[Service::McpNextcloud, Service::Model, Service::Orchestrator])
        .model_script(script)
        .window_tokens(options.window_tokens)
        .orchestrator_data_dir(options.data_dir);
    if !options.mcp_reachable {
        builder = builder.unreachable("nextcloud");
    }
    Turns { stack: builder.start().await.unwrap() }
}

impl Turns {
    fn signed(
        &self,
        method: reqwest::Method,
        path: &str,
        uid: &str,
        body: &[u8],
    ) -> reqwest::RequestBuilder {
        self.signed_to(self.orchestrator().url(), method, path, uid, body)
    }

    fn signed_to(
        &self,
        base: &str,
        method: reqwest::Method,
        path: &str,
        uid: &str,
        body: &[u8],
    ) -> reqwest::RequestBuilder {
        self.signed_with_tokens_of(base, method, path, uid, uid, body)
    }

    /// Signed as `uid`, carrying genuine tokens of `token_owner`.
    fn signed_with_tokens_of(
        &self,
        base: &str,
        method: reqwest::Method,
        path: &str,
        uid: &str,
        token_owner: &str,
        body: &[u8],
    ) -> reqwest::RequestBuilder {
        let route = identity::Route { method: method.as_str(), path };
        let mut request = self.http.request(method.clone(), format!("{base}{path}"));
        for (name, value) in identity::signed_headers(SECRET.as_bytes(), uid, route, body) {
            request = request.header(name, value);
        }
        request
            .header(identity::HEADER_REQUEST_ID, format!("req-{}", uuid_ish()))
            .header(
                "x-tamebi-token-mcp-nextcloud",
                self.fake.shared.mint_access_token(token_owner, MCP_AUDIENCE),
            )
            .header(
                "x-tamebi-token-nextcloud",
                self.fake.shared.mint_access_token(token_owner, "nextcloud"),
            )
            .header("x-tamebi-display-name", "Alice%20Martin")
            .header("x-tamebi-time-zone", "Europe/Paris")
            .body(body.to_vec())
    }

    /// Posts a chat body; returns the status and the stream's chunks (or
    /// the error envelope as the only value).
    async fn post(&self, uid: &str, body: &Value) -> (u16, Vec<Value>) {
        let bytes = serde_json::to_vec(body).unwrap();
        let response =
            self.signed(reqwest::Method::POST, "/api/chat", uid, &bytes).send().await.unwrap();
        let status = response.status().as_u16();
        if status != 200 {
            return (status, vec![response.json().await.unwrap()]);
        }
        assert_eq!(response.headers()["x-vercel-ai-ui-message-stream"], "v1");
        let text = response.text().await.unwrap();
        assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
        (status, frames(&text))
    }

    async fn ask(&self, uid: &str, conversation: &str, text: &str) -> Vec<Value> {
        let (status, chunks) = self.post(uid, &question(conversation, text)).await;
        assert_eq!(status, 200, "{chunks:?}");
        chunks
    }

    /// Answers approval requests the way the page does: the last message
    /// only, trimmed to the decision.
    async fn decide(
        &self,
        uid: &str,
        conversation: &str,
        decisions: &[(&Value, bool)],
    ) -> Vec<Value> {
        let (status, chunks) = self.post(uid, &decision(conversation, decisions)).await;
        assert_eq!(status, 200, "{chunks:?}");
        chunks
    }

    async fn get(&self, uid: &str, path: &str) -> (u16, Value) {
        let response = self.signed(reqwest::Method::GET, path, uid, b"").send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    fn audit(&self, uid: &str) -> Vec<(String, String)> {
        self.orchestrator()
            .services()
            .audit
            .run_blocking(|c| orchestrator::store::audit::calls_of(c, uid))
            .unwrap()
            .into_iter()
            .map(|record| (record.tool, record.outcome))
            .collect()
    }

    /// What the model was shown, request by request (the request bodies).
    fn shown(&self) -> Vec<Value> {
        self.model().requests().into_iter().map(|record| record.body).collect()
    }

    fn mcp_url(&self) -> String {
        format!("{}/mcp", self.mcp().url())
    }
}

fn uuid_ish() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The chunks of a UI message stream.
fn frames(text: &str) -> Vec<Value> {
    scenario::sse::json_chunks(text).unwrap()
}

/// The latest question as the model read it: it opens with the
/// environment block.
fn environment_shown(request: &Value) -> String {
    let messages = request["messages"].as_array().unwrap();
    let latest = messages.iter().rev().find(|message| message["role"] == "user");
    let text = latest.and_then(|message| message["content"].as_str()).unwrap_or_default();
    assert!(text.starts_with("<environment>"), "the question opens with it: {text}");
    text.to_string()
}

/// The names of the tools a request offered, in order.
fn offered(request: &Value) -> Vec<&str> {
    let tools = request["tools"].as_array().unwrap();
    tools.iter().map(|t| t["function"]["name"].as_str().unwrap()).collect()
}

/// The text parts of a stored conversation's messages, in order.
fn texts(conversation: &Value) -> Vec<&str> {
    let messages = conversation["messages"].as_array().unwrap().iter();
    let parts = messages.flat_map(|message| message["parts"].as_array().unwrap());
    parts.filter_map(|part| part["text"].as_str()).collect()
}

/// The content of every message of a role in a request.
/// The messages of `role`, as written: without the environment block that
/// opens the latest question.
fn contents(request: &Value, role: &str) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == role)
        .map(|m| m["content"].as_str().unwrap_or_default())
        .map(fake_model::request::without_environment)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_takes_several_steps_and_every_call_is_audited() {
    let stack = start(
        r#"
[[rules]]
name = "find"
when = { last_role = "user", last_user_contains = "notes" }
tool_calls = [{ name = "files_search", arguments = { name = "notes" } }]

[[rules]]
name = "read"
when = { last_role = "tool", turn = 1 }
tool_calls = [{ name = "files_read", arguments = { path = "Documents/notes-reunion.md" } }]

[[rules]]
name = "answer"
when = { last_role = "tool", turn = 2, last_tool_result_contains = "Écluse" }
text = "The meeting was in room Écluse (Documents/notes-reunion.md)."
"#,
        Options::default(),
    )
    .await;
    let chunks = stack.ask("alice", "c-notes", "Where was the meeting in my notes?").await;
    assert_eq!(of_type(&chunks, "start-step").len(), 3, "{chunks:#?}");
    let inputs = of_type(&chunks, "tool-input-available");
    assert_eq!(inputs.len(), 2);
    assert_eq!(inputs[0]["toolName"], "files_search");
    assert_eq!(inputs[0]["dynamic"], true);
    assert_eq!(of_type(&chunks, "tool-output-available").len(), 2);
    assert_eq!(text_of(&chunks), "The meeting was in room Écluse (Documents/notes-reunion.md).");
    assert_eq!(chunks.last().unwrap()["finishReason"], "stop");

    let shown = stack.shown();
    assert_eq!(shown.len(), 3);
    let system = environment_shown(&shown[0]);
    assert!(system.contains("User: Alice Martin (uid alice)"), "{system}");
    assert!(system.contains("(Europe/Paris)"));
    assert!(system.contains("files, calendar, contacts and Deck: reachable, 11 tools"), "{system}");
    let offered = offered(&shown[0]);
    assert!(offered.contains(&"files_grep") && offered.contains(&"memory_write"), "{offered:?}");
    assert_eq!(contents(&shown[2], "tool").len(), 2, "both results reach the last step");

    assert_eq!(
        stack.audit("alice"),
        [("files_search".into(), "ok".into()), ("files_read".into(), "ok".into())]
    );
    let (status, conversation) = stack.get("alice", "/api/conversations/c-notes").await;
    assert_eq!(status, 200);
    let messages = conversation["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "the question and one assistant message: {conversation:#}");
    let (status, _) = stack.get("bob", "/api/conversations/c-notes").await;
    assert_eq!(status, 404, "another user's conversation does not exist for bob");
}

const APPROVAL_SCRIPT: &str = r#"
[[rules]]
name = "plan the meeting"
when = { last_role = "user", last_user_contains = "meeting" }
tool_calls = [{ name = "calendar_create_event", arguments = { summary = "Budget review", start = "2026-12-03T10:00:00", end = "2026-12-03T11:00:00", time_zone = "Europe/Paris" } }]

[[rules]]
name = "card"
when = { last_role = "user", last_user_contains = "card" }
tool_calls = [{ name = "deck_create_card", arguments = { board_id = 1, stack_id = 1, title = "Order pizza" } }]

[[rules]]
name = "two files"
when = { last_role = "user", last_user_contains = "two files" }
tool_calls = [
    { name = "files_write", arguments = { path = "Documents/a.txt", content = "A" } },
    { name = "files_write", arguments = { path = "Documents/b.txt", content = "B" } },
]

[[rules]]
name = "done"
when = { last_role = "tool" }
text = "Done as you decided."
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_action_runs_exactly_as_stored_and_a_denied_one_never_runs() {
    let stack = start(APPROVAL_SCRIPT, Options::default()).await;
    let first = stack.ask("alice", "c-plan", "Put the meeting in my calendar").await;
    let requests = of_type(&first, "tool-approval-request");
    assert_eq!(requests.len(), 1, "{first:#?}");
    assert_eq!(first.last().unwrap()["finishReason"], "tool-calls");
    assert!(stack.audit("alice").is_empty(), "nothing ran before the user decided");

    let approved = stack.decide("alice", "c-plan", &[(requests[0], true)]).await;
    let outputs = of_type(&approved, "tool-output-available");
    assert_eq!(outputs.len(), 1, "{approved:#?}");
    assert_eq!(outputs[0]["output"]["summary"], "Budget review");
    assert_eq!(text_of(&approved), "Done as you decided.");
    assert_eq!(stack.audit("alice"), [("calendar_create_event".into(), "ok".into())]);

    // The same decision again (a new request, not a replayed signature) is
    // refused: it was decided once.
    let mut replay = decision("c-plan", &[(requests[0], true)]);
    replay["messageId"] = json!("again");
    let (status, envelope) = stack.post("alice", &replay).await;
    assert_eq!(status, 409, "{envelope:?}");
    assert!(envelope[0]["error"]["requestId"].as_str().unwrap().starts_with("req-"));

    let card = stack.ask("alice", "c-plan", "Add a card for the pizza").await;
    let requests = of_type(&card, "tool-approval-request");
    let denied = stack.decide("alice", "c-plan", &[(requests[0], false)]).await;
    assert_eq!(of_type(&denied, "tool-output-denied").len(), 1, "{denied:#?}");
    assert_eq!(
        stack.audit("alice").last().unwrap(),
        &("deck_create_card".into(), "denied_by_user".into())
    );
    let last = stack.shown().pop().unwrap();
    let results = contents(&last, "tool");
    assert!(results.last().unwrap().contains("The user denied this action"), "{results:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_of_a_parallel_batch_waits_and_each_decision_holds() {
    let stack = start(APPROVAL_SCRIPT, Options::default()).await;
    let first = stack.ask("alice", "c-two", "Write two files please").await;
    let requests = of_type(&first, "tool-approval-request");
    assert_eq!(requests.len(), 2, "{first:#?}");

    // Deciding only one of them is refused: both wait.
    let one_of_two = decision("c-two", &[(requests[0], true)]);
    assert_eq!(stack.post("alice", &one_of_two).await.0, 409);

    let after = stack.decide("alice", "c-two", &[(requests[0], true), (requests[1], false)]).await;
    assert_eq!(of_type(&after, "tool-output-available").len(), 1, "{after:#?}");
    assert_eq!(of_type(&after, "tool-output-denied").len(), 1);
    assert_eq!(
        stack.audit("alice"),
        [("files_write".into(), "ok".into()), ("files_write".into(), "denied_by_user".into())]
    );
    let (_, listing) = stack.get("alice", "/api/conversations").await;
    assert_eq!(listing["conversations"][0]["title"], "Write two files please");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_workspace_unreachable_the_environment_says_so() {
    let script = r#"
[[rules]]
name = "answer"
when = { last_role = "user" }
text = "I cannot reach your workspace right now, so I have not looked at your files."
"#;
    let stack = start(script, Options { mcp_reachable: false, ..Options::default() }).await;
    let chunks = stack.ask("alice", "c-down", "What is the Apollo budget?").await;
    assert!(text_of(&chunks).contains("cannot reach your workspace"));
    let shown = stack.shown();
    let system = environment_shown(&shown[0]);
    assert!(system.contains("Workspace: NOT REACHABLE this turn"), "{system}");
    assert!(system.contains("NOT reachable (the service did not answer)"), "{system}");
    let offered = offered(&shown[0]);
    assert_eq!(offered, ["memory_search", "memory_write"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_every_call_fails_the_next_step_is_told_the_workspace_is_not_reachable() {
    let script = r#"
[[rules]]
name = "look"
when = { last_role = "user" }
tool_calls = [{ name = "files_search", arguments = { name = "budget" } }, { name = "files_search", arguments = { name = "apollo" } }]

[[rules]]
name = "answer"
when = { last_role = "tool" }
text = "I could not reach your files, so I cannot tell."
"#;
    let stack = start(script, Options::default()).await;
    stack.fake.shared.world().faults.routes.push(fake_nextcloud::faults::RouteFault {
        prefix: "/remote.php".into(),
        status: Some(503),
        ..Default::default()
    });
    stack.ask("alice", "c-failing", "What is the Apollo budget?").await;
    let shown = stack.shown();
    assert!(environment_shown(&shown[0]).contains("reachable, 11 tools"), "listing worked");
    let second = environment_shown(&shown[1]);
    assert!(second.contains("Workspace: NOT REACHABLE this turn"), "{second}");
    assert!(second.contains("every call this turn failed"), "{second}");
    assert_eq!(
        stack.audit("alice"),
        [
            ("files_search".into(), "unreachable".into()),
            ("files_search".into(), "unreachable".into())
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_request_is_the_only_identity() {
    let stack = start("", Options::default()).await;
    let body = json!({
        "id": "c-uid", "trigger": "submit-message",
        "message": {"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}], "metadata": {"uid": "bob"}},
    });
    let (status, envelope) = stack.post("alice", &body).await;
    assert_eq!(status, 400);
    let message = envelope[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("signed-in user"), "{message}");

    let unsigned = stack
        .http
        .post(format!("{}/api/chat", stack.orchestrator().url()))
        .header(identity::HEADER_REQUEST_ID, "req-unsigned")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(unsigned.status(), 401);
    let envelope: Value = unsigned.json().await.unwrap();
    assert_eq!(envelope["error"]["requestId"], "req-unsigned");
    assert!(!envelope.to_string().contains("x-tamebi"), "no internal detail: {envelope}");

    let health: Value = stack
        .http
        .get(format!("{}/health", stack.orchestrator().url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["status"], "ok");
}

/// Signed as bob, carrying alice's genuine tokens: this once ran bob's
/// turn on alice's files and stored it in bob's conversation. Now refused
/// before anything runs: no model request, no tool call, nothing stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_signed_for_one_user_cannot_carry_anothers_tokens() {
    let script = r#"
[[rules]]
name = "read alice's budget"
when = { last_role = "user" }
tool_calls = [{ name = "files_read", arguments = { path = "Projects/Apollo/budget.ods" } }]
"#;
    let stack = start(script, Options::default()).await;
    let body = serde_json::to_vec(&question("c-stolen", "What is in the Apollo budget?")).unwrap();
    let base = stack.orchestrator().url();
    let post = stack.signed_with_tokens_of(
        base,
        reqwest::Method::POST,
        "/api/chat",
        "bob",
        "alice",
        &body,
    );
    let response = post.send().await.unwrap();
    assert_eq!(response.status(), 403);
    let envelope: Value = response.json().await.unwrap();
    let message = envelope["error"]["message"].as_str().unwrap();
    assert!(message.contains("belongs to another user"), "{message}");
    assert!(envelope["error"]["requestId"].as_str().is_some_and(|id| id.starts_with("req-")));
    assert!(stack.model().requests().is_empty(), "the model was never asked");
    assert!(stack.audit("bob").is_empty() && stack.audit("alice").is_empty(), "nothing ran");
    let (status, listed) = stack.get("bob", "/api/conversations").await;
    assert_eq!((status, &listed["conversations"]), (200, &json!([])), "nothing was stored");

    // The contrast: bob with his own tokens is served.
    let chunks = stack.ask("bob", "c-own", "What is in the Apollo budget?").await;
    assert!(!of_type(&chunks, "tool-input-available").is_empty(), "{chunks:#?}");
}

fn tempdir() -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("tamebi-turns-{}-{}", std::process::id(), uuid_ish()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_conversation_is_summarised_once_and_the_summary_reloaded() {
    let script = r#"
[[rules]]
name = "summarise"
when = { last_user_contains = "<transcript>" }
text = "Decisions: none. Facts the user stated: project Zephyr starts in May."

[[rules]]
name = "answer"
when = { last_role = "user" }
text = "Noted."
"#;
    let options = Options { window_tokens: 6000, mcp_reachable: false, ..Options::default() };
    let stack = start(script, options).await;
    let long = |topic: &str| format!("{topic}: {}", "zephyr details ".repeat(290));
    stack.ask("alice", "c-long", &long("first")).await;
    stack.ask("alice", "c-long", &long("second")).await;
    stack.ask("alice", "c-long", "Thanks, that is all.").await;

    let shown = stack.shown();
    let summaries: Vec<&Value> = shown
        .iter()
        .filter(|request| contents(request, "user").iter().any(|c| c.contains("<transcript>")))
        .collect();
    assert_eq!(summaries.len(), 1, "one compaction, paid once");
    assert!(contents(summaries[0], "user")[0].contains("first: zephyr"));
    let last = shown.last().unwrap();
    let users = contents(last, "user");
    assert!(users[0].contains("<conversation_summary>"), "{users:?}");
    assert!(users[0].contains("project Zephyr starts in May"));
    let sent = users.join("\n");
    assert!(!sent.contains("first: zephyr"), "the summarised turn is not sent again");
    assert!(sent.contains("second: zephyr"), "the recent turn is kept whole");
    let stored = stack
        .orchestrator()
        .services()
        .chat
        .run_blocking(|c| orchestrator::store::chat::latest_summary(c, "c-long"))
        .unwrap();
    assert_eq!(stored.map(|(seq, _)| seq), Some(2), "covers the first question and its answer");
}

/// The orchestrator killed mid-turn (SIGKILL, as a crash) while a tool call
/// is running: after a restart the conversation holds everything that was
/// acknowledged, the interrupted call gets a result saying so, and the next
/// question reaches a model that refuses a call without its result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_turn_loses_nothing_acknowledged() {
    let script = r#"
[[rules]]
name = "search"
when = { last_role = "user", last_user_contains = "notes" }
tool_calls = [{ name = "files_search", arguments = { name = "notes" } }]

[[rules]]
name = "answer"
when = { last_role = "user" }
text = "Still here."
"#;
    let stack = start(script, Options::default()).await;
    stack.fake.shared.world().faults.routes.push(fake_nextcloud::faults::RouteFault {
        prefix: "/remote.php".into(),
        latency_ms: 5_000,
        ..Default::default()
    });
    let data = tempdir();
    let process = Binary::start(&stack, &data).await;

    let bytes = serde_json::to_vec(&question("c-crash", "Find my notes")).unwrap();
    let mut response = stack
        .signed_to(&process.url, reqwest::Method::POST, "/api/chat", "alice", &bytes)
        .send()
        .await
        .unwrap();
    let mut seen = String::new();
    while !seen.contains("tool-input-available") {
        let chunk = response.chunk().await.unwrap().expect("the stream goes on until the call");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    drop(process);
    stack.fake.shared.world().faults.routes.clear();

    let process = Binary::start(&stack, &data).await;
    let bytes = serde_json::to_vec(&question("c-crash", "Hello?")).unwrap();
    let text = stack
        .signed_to(&process.url, reqwest::Method::POST, "/api/chat", "alice", &bytes)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(text_of(&frames(&text)), "Still here.", "{text}");
    let last = stack.shown().pop().unwrap();
    let results = contents(&last, "tool");
    assert_eq!(results.len(), 1, "{last:#}");
    assert!(results[0].contains("interrupted"), "{results:?}");
    assert_eq!(contents(&last, "user"), ["Find my notes", "Hello?"]);
    drop(process);
    std::fs::remove_dir_all(data).ok();
}

const PLAIN_SCRIPT: &str = r#"
[[rules]]
name = "answer"
when = { last_role = "user" }
text = "Noted."
"#;

/// chat.db locked by another writer for longer than the busy timeout (5 s):
/// the question cannot be stored, so nothing is asked and the page gets
/// one sentence with a request id; once the lock goes, the conversation
/// holds every acknowledged message and nothing of the refused one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_chat_db_refuses_clearly_and_loses_nothing() {
    let data = tempdir();
    let stack =
        start(PLAIN_SCRIPT, Options { data_dir: Some(data.clone()), ..Options::default() }).await;
    stack.ask("alice", "c-lock", "first").await;
    let locker = rusqlite::Connection::open(data.join("chat.db")).unwrap();
    locker.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let asked_before = stack.shown().len();
    let (status, answer) = stack.post("alice", &question("c-lock", "second")).await;
    assert_eq!(status, 503, "{answer:?}");
    assert_eq!(
        answer[0]["error"]["message"],
        "The assistant's storage is unavailable right now. Try again in a moment."
    );
    assert!(answer[0]["error"]["requestId"].as_str().is_some_and(|id| !id.is_empty()));
    assert_eq!(stack.shown().len(), asked_before, "the model is not asked what was not stored");
    locker.execute_batch("ROLLBACK").unwrap();
    drop(locker);

    stack.ask("alice", "c-lock", "third").await;
    assert_eq!(contents(&stack.shown().pop().unwrap(), "user"), ["first", "third"]);
    let (_, conversation) = stack.get("alice", "/api/conversations/c-lock").await;
    assert_eq!(texts(&conversation), ["first", "Noted.", "third", "Noted."], "{conversation:#}");
    std::fs::remove_dir_all(data).ok();
}

/// memory.db locked past the busy timeout when an approved memory_write
/// runs: the model reads that memory is unavailable and goes on, the call
/// is audited `unreachable`, no fact is half-written; afterwards a new
/// approval writes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_memory_db_fails_the_write_clearly_and_audits_it() {
    let script = r#"
[[rules]]
name = "remember"
when = { last_role = "user" }
tool_calls = [{ name = "memory_write", arguments = { fact = "Alice prefers French" } }]

[[rules]]
name = "answer"
when = { last_role = "tool" }
text = "Done."
"#;
    let data = tempdir();
    let stack = start(script, Options { data_dir: Some(data.clone()), ..Options::default() }).await;
    let asked = stack.ask("alice", "c-mem", "Remember I prefer French").await;
    let request = of_type(&asked, "tool-approval-request")[0].clone();
    let locker = rusqlite::Connection::open(data.join("memory.db")).unwrap();
    locker.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let decided = stack.decide("alice", "c-mem", &[(&request, true)]).await;
    locker.execute_batch("ROLLBACK").unwrap();
    drop(locker);
    let failed = of_type(&decided, "tool-output-error");
    assert_eq!(failed.len(), 1, "{decided:#?}");
    assert!(
        failed[0]["errorText"].as_str().unwrap().starts_with("Memory is unavailable right now.")
    );
    assert_eq!(text_of(&decided), "Done.");
    assert_eq!(stack.audit("alice"), [("memory_write".to_string(), "unreachable".to_string())]);
    let (_, facts) = stack.get("alice", "/api/memory").await;
    assert_eq!(facts["facts"], json!([]), "{facts}");

    let again = stack.ask("alice", "c-mem", "Remember I prefer French").await;
    let request = of_type(&again, "tool-approval-request")[0].clone();
    stack.decide("alice", "c-mem", &[(&request, true)]).await;
    let (_, facts) = stack.get("alice", "/api/memory").await;
    assert_eq!(facts["facts"].as_array().map(Vec::len), Some(1), "{facts}");
    std::fs::remove_dir_all(data).ok();
}

/// The disk fills up under chat.db (the orchestrator's files may not grow
/// past 512 KiB: RLIMIT_FSIZE, with SIGXFSZ ignored, so a write fails with
/// EFBIG as on a full disk). Questions of 90 kB are asked until storing
/// fails: every failure is one sentence with a request id, the process
/// keeps serving, and after a restart with room the conversation holds
/// exactly what was acknowledged — each question answered 200 (stored
/// before its first frame) and each answer whose text reached the page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_clearly_and_loses_nothing() {
    const SAVE_FAILED: &str =
        "The assistant's storage is unavailable right now. Try again in a moment.";
    let stack = start(PLAIN_SCRIPT, Options::default()).await;
    let data = tempdir();
    let process = Binary::start_limited(&stack, &data, Some(512)).await;
    let (mut questions, mut answers, mut failures) = (Vec::new(), 0, 0);
    for number in 0..40 {
        let text = format!("q{number:02} {}", "x".repeat(90_000));
        let bytes = serde_json::to_vec(&question("c-full", &text)).unwrap();
        let response = stack
            .signed_to(&process.url, reqwest::Method::POST, "/api/chat", "alice", &bytes)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        if status == 503 {
            let envelope: Value = response.json().await.unwrap();
            assert_eq!(envelope["error"]["message"], SAVE_FAILED, "{envelope}");
            assert!(envelope["error"]["requestId"].as_str().is_some_and(|id| !id.is_empty()));
            failures += 1;
            break;
        }
        assert_eq!(status, 200);
        questions.push(format!("q{number:02}"));
        let chunks = frames(&response.text().await.unwrap());
        if text_of(&chunks) == "Noted." {
            answers += 1;
        }
        if let Some(error) = of_type(&chunks, "error").first() {
            let envelope: Value =
                serde_json::from_str(error["errorText"].as_str().unwrap()).unwrap();
            assert_eq!(envelope["message"], SAVE_FAILED, "{envelope}");
            assert!(envelope["requestId"].as_str().is_some_and(|id| !id.is_empty()));
            failures += 1;
            break;
        }
    }
    assert_eq!(failures, 1, "the limit was never reached: the test proves nothing");
    assert!(answers >= 1, "nothing was acknowledged before the limit: {questions:?}");
    eprintln!(
        "{} question(s) and {answers} answer(s) acknowledged before the disk was full",
        questions.len()
    );
    let health = stack.http.get(format!("{}/health", process.url)).send().await.unwrap();
    assert!(health.status().is_success(), "the process still serves");
    drop(process);

    let process = Binary::start(&stack, &data).await;
    let response = stack
        .signed_to(&process.url, reqwest::Method::GET, "/api/conversations/c-full", "alice", b"")
        .send()
        .await
        .unwrap();
    let conversation: Value = response.json().await.unwrap();
    let texts: Vec<String> =
        texts(&conversation).into_iter().map(|text| text.chars().take(3).collect()).collect();
    let stored_questions: Vec<&String> = texts.iter().filter(|t| t.starts_with('q')).collect();
    assert_eq!(stored_questions, questions.iter().collect::<Vec<_>>());
    assert_eq!(texts.iter().filter(|t| *t == "Not").count(), answers, "{texts:?}");
    drop(process);
    std::fs::remove_dir_all(data).ok();
}

/// `tamebi orchestrator` as its own process, on the stack's model and
/// mcp-nextcloud.
struct Binary;

impl Binary {
    async fn start(stack: &Turns, data: &Path) -> OrchestratorProcess {
        Binary::start_limited(stack, data, None).await
    }

    /// With `file_kib`, the process may not write a file past that size
    /// (bash's `ulimit -f`), and a write beyond fails instead of killing it.
    async fn start_limited(
        stack: &Turns,
        data: &Path,
        file_kib: Option<u64>,
    ) -> OrchestratorProcess {
        let command = match file_kib {
            None => std::process::Command::new(env!("CARGO_BIN_EXE_tamebi")),
            Some(kib) => {
                let mut command = std::process::Command::new("bash");
                let limit = format!("trap '' XFSZ; ulimit -f {kib}; exec \"$0\" \"$@\"");
                command.args(["-c", &limit, env!("CARGO_BIN_EXE_tamebi")]);
                command
            }
        };
        let model_url = stack.model().api_base();
        let mcp = format!("nextcloud={}", stack.mcp_url());
        let flags = Flags { model_url: &model_url, mcp: &mcp, data_dir: data, secret: SECRET };
        OrchestratorProcess::start(command, flags).await.unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_turn_at_a_time_per_conversation() {
    let script = r#"
[[rules]]
name = "slow"
when = { last_role = "user" }
text = "A slow answer in several words for the test."
fault = { delta_delay_ms = 40 }
"#;
    let stack = start(script, Options::default()).await;
    let bytes = serde_json::to_vec(&question("c-busy", "first")).unwrap();
    let mut first =
        stack.signed(reqwest::Method::POST, "/api/chat", "alice", &bytes).send().await.unwrap();
    let _ = first.chunk().await.unwrap();
    let (status, envelope) = stack.post("alice", &question("c-busy", "second")).await;
    assert_eq!(status, 409, "{envelope:?}");
    assert!(envelope[0]["error"]["message"].as_str().unwrap().contains("still answering"));
    let (status, _) = stack.post("alice", &question("c-other", "elsewhere")).await;
    assert_eq!(status, 200, "other conversations are not held");
    while first.chunk().await.unwrap().is_some() {}
    let again = stack.ask("alice", "c-busy", "third").await;
    assert!(text_of(&again).starts_with("A slow answer"), "free again once the turn ended");
}
