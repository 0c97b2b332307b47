//! One chat request, from a signed post to the last frame of its stream.
//!
//! The driver is where the agent's values are built and its events land:
//! it records what the post decides (the user's message, or the user's
//! decisions on the stored calls) before anything runs, assembles the
//! turn's tools with the user's tokens, renders the prompt, reloads or
//! makes the conversation's summary, runs the loop, and for every event
//! first stores what must outlive the request and then writes the frame.
//! Nothing reaches the browser that was not stored first, and the turn
//! runs to its end even when the browser goes away, so a reload finds
//! everything that was acknowledged.

mod decide;
mod frames;

use crate::context::{prune, summary};
use crate::identity::{HEADER_APP_PASSWORD, Identity};
use crate::mcp::{Credential, ServerConfig};
use crate::model::{ChatRequest, Message, ModelError, ModelEvent};
use crate::prompt::{self, Environment};
use crate::store::{Database, StoreError, chat, memory, now_ms};
use crate::tools::{self, Caller, TurnTools};
use crate::transcript::{Entry, ToolEntry, ToolState};
use crate::ui_stream::{ChatPost, Chunk, FinishReason};
use agent::{Agent, AgentEvent, Context, Ending, Model, Resolution, ToolKind};
use bytes::Bytes;
use futures_util::StreamExt as _;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::mpsc;

pub use decide::TurnError;
use frames::Frames;
pub use frames::envelope;

/// The header under which each MCP server receives the user's
/// Nextcloud-audience token, to spend upstream.
pub const NEXTCLOUD_TOKEN_HEADER: &str = wire::headers::NEXTCLOUD_TOKEN;
/// The audience name of the token the MCP servers spend upstream.
pub const NEXTCLOUD_AUDIENCE: &str = "nextcloud";

/// What every turn shares.
pub struct Services {
    pub model: Arc<dyn Model>,
    pub chat: Database,
    pub audit: Database,
    pub memory: Database,
    pub servers: Vec<ServerConfig>,
    /// The servers that receive the user's app password (app-password mode).
    pub app_password_servers: Vec<String>,
    pub http: reqwest::Client,
    /// The model's context window in tokens; the conversation is summarised
    /// at about half of it.
    pub window_tokens: usize,
    /// Conversations with a turn running: one turn at a time each.
    pub busy: Busy,
}

/// The conversations whose turn is running. A second post to one of them
/// is refused rather than interleaved with the first.
#[derive(Default)]
pub struct Busy(std::sync::Mutex<std::collections::HashSet<String>>);

/// Holds a conversation busy until dropped (the turn's end, however it ends).
struct BusyGuard {
    services: Arc<Services>,
    conversation_id: String,
}

impl Busy {
    fn enter(services: &Arc<Services>, conversation_id: &str) -> Option<BusyGuard> {
        let mut running = services.busy.0.lock().unwrap_or_else(|p| p.into_inner());
        running.insert(conversation_id.to_string()).then(|| BusyGuard {
            services: services.clone(),
            conversation_id: conversation_id.to_string(),
        })
    }
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        let mut running = self.services.busy.0.lock().unwrap_or_else(|p| p.into_inner());
        running.remove(&self.conversation_id);
    }
}

/// One signed chat post.
pub struct Turn {
    pub identity: Identity,
    pub display_name: String,
    pub time_zone: chrono_tz::Tz,
    /// The user's language tag (`fr`, `de-DE`), when the app sent one.
    pub language: Option<String>,
    pub post: ChatPost,
}

/// Starts the turn: what the post decides is stored before this returns,
/// so an error here is an HTTP status and nothing ran. The frames of the
/// stream arrive on the receiver.
pub async fn start(
    services: Arc<Services>,
    turn: Turn,
) -> Result<mpsc::Receiver<Bytes>, TurnError> {
    let busy = Busy::enter(&services, &turn.post.conversation_id).ok_or(TurnError::Conflict(
        "The assistant is still answering in this conversation. Wait for the answer to finish, then send again.",
    ))?;
    let resolutions = decide::record(&services, &turn).await?;
    let (sender, receiver) = mpsc::channel(64);
    tokio::spawn(async move {
        let request_id = turn.identity.request_id.clone();
        let mut frames = Frames::new(sender, request_id);
        run(&services, &turn, resolutions, &mut frames).await;
        // Free before the stream ends, so the page's next post never finds
        // the conversation still held.
        drop(busy);
        frames.done().await;
    });
    Ok(receiver)
}

async fn run(services: &Services, turn: &Turn, resolutions: Vec<Resolution>, frames: &mut Frames) {
    let identity = &turn.identity;
    let conversation_id = turn.post.conversation_id.clone();
    let caller = Caller { uid: identity.uid.clone(), conversation_id: conversation_id.clone() };
    let servers: Vec<(ServerConfig, Option<Credential>)> = services
        .servers
        .iter()
        .map(|server| {
            let app_password = services.app_password_servers.contains(&server.name);
            (server.clone(), credential(server, identity, app_password))
        })
        .collect();
    let tools = tools::assemble(
        &servers,
        &services.http,
        tools::memory::MemoryTools::new(services.memory.clone(), identity.uid.clone()),
        crate::flows::all(),
        services.audit.clone(),
        caller.clone(),
    )
    .await;
    let result = converse(services, turn, &tools, resolutions, frames).await;
    if let Err(error) = result {
        tracing::error!(request_id = %identity.request_id, %error, "turn failed");
        frames.error(&error.to_string()).await;
    }
    tools.close().await;
}

/// Why a turn stopped before its end.
#[derive(Debug, thiserror::Error)]
enum Stopped {
    #[error(
        "The conversation could not be saved, so the assistant stopped. Try again in a moment."
    )]
    Store(#[from] StoreError),
    #[error("{0}")]
    Model(String),
}

impl Stopped {
    /// The sentence the user reads for a model failure: what happened,
    /// capitalised, and what to do — "again in a moment" only where
    /// another try can pass.
    /// `first_question`: the conversation had no question before this one,
    /// so one that does not fit is the window's size, not the
    /// conversation's length.
    fn model(error: &ModelError, first_question: bool) -> Stopped {
        let what = error.to_string();
        let mut letters = what.chars();
        let what: String = match letters.next() {
            Some(first) => first.to_uppercase().chain(letters).collect(),
            None => what,
        };
        let next = match error {
            ModelError::ContextExceeded { .. } if first_question => {
                "Even a first question does not fit: ask your administrator to give the model a larger context window (and Tamebi's --model-window to match)."
            }
            ModelError::ContextExceeded { .. } => {
                "Start a new conversation, or ask a shorter question; this conversation is kept as it is."
            }
            ModelError::TimedOut { .. } => {
                "Try a shorter question; if it keeps happening, ask your administrator to raise the model timeout or use a faster model."
            }
            error if error.may_pass_on_retry() => "Send your message again in a moment.",
            _ => {
                "Sending it again will not help: ask your administrator to check the model's configuration (the orchestrator's log says what the model answered)."
            }
        };
        Stopped::Model(format!("{what}. {next}"))
    }
}

async fn converse(
    services: &Services,
    turn: &Turn,
    tools: &TurnTools,
    resolutions: Vec<Resolution>,
    frames: &mut Frames,
) -> Result<(), Stopped> {
    let uid = turn.identity.uid.clone();
    let conversation_id = turn.post.conversation_id.clone();
    let environment = environment(services, turn, tools).await?;
    let system = prompt::system_prompt();

    let entries = load(&services.chat, &uid, &conversation_id).await?;
    frames.chunk(Chunk::Start { message_id: Some(answer_message_id(&entries)) }).await;
    let stored = {
        let conversation_id = conversation_id.clone();
        services.chat.run(move |c| chat::latest_summary(c, &conversation_id)).await?
    };
    // What the model reads before the history, for the window's arithmetic.
    let fixed = format!("{system}\n\n{}", prompt::render_environment(&environment));
    let summary =
        summarise_if_due(services, tools, &conversation_id, &entries, stored, &fixed).await?;
    let mut messages = vec![Message::System(system)];
    messages.extend(summary::history(
        &entries,
        summary.as_ref().map(|(seq, text)| (*seq, text.as_str())),
    ));

    let context = StepContext { environment, tools };
    let agent = Agent { model: services.model.as_ref(), tools, context: &context };
    let (sender, mut events) = mpsc::channel(64);
    let running = async move { agent.run(messages, resolutions, &sender).await };
    let recording = async {
        let mut recorder = Recorder::new(services, &uid, &conversation_id);
        while let Some(event) = events.recv().await {
            if let Err(error) = recorder.record(event, frames).await {
                // Dropping the receiver stops the loop at its next event.
                drop(events);
                return Err(error);
            }
        }
        frames.close_text().await;
        Ok(())
    };
    let (ending, recorded) = tokio::join!(running, recording);
    recorded?;
    match ending {
        Ending::Answered => frames.finish(FinishReason::Stop).await,
        Ending::AwaitingApproval => frames.finish(FinishReason::ToolCalls).await,
        Ending::ModelFailed(error) => {
            tracing::warn!(request_id = %turn.identity.request_id, detail = error.detail(), "model failed");
            let questions =
                entries.iter().filter(|(_, entry)| matches!(entry, Entry::User { .. })).count();
            return Err(Stopped::model(&error, questions <= 1));
        }
        Ending::Abandoned => {}
    }
    Ok(())
}

/// The id of the assistant message this turn writes to, as the page holds
/// it (`ui_stream::ui_messages` names a message after the sequence number
/// of its first entry): the message after the last question — the one a
/// continuation after an approval extends, which the client requires to
/// keep its id — or the entry about to be written.
fn answer_message_id(entries: &[(i64, Entry)]) -> String {
    let last_question = entries.iter().rposition(|(_, entry)| matches!(entry, Entry::User { .. }));
    let first_answer = last_question.and_then(|at| entries.get(at + 1)).map(|(seq, _)| *seq);
    let next = entries.last().map_or(1, |(seq, _)| seq + 1);
    format!("m{}", first_answer.unwrap_or(next))
}

/// The bearer for `server` is the token minted for `mcp-<name>`; the
/// Nextcloud-audience token rides along for the server to spend upstream,
/// and the user's app password too where the server is one configured to
/// receive it.
fn credential(
    server: &ServerConfig,
    identity: &Identity,
    app_password: bool,
) -> Option<Credential> {
    let bearer = identity.tokens.get(&format!("mcp-{}", server.name))?;
    let mut headers = Vec::new();
    if let Some(token) = identity.tokens.get(NEXTCLOUD_AUDIENCE) {
        headers.push((NEXTCLOUD_TOKEN_HEADER.to_string(), token.expose().to_string()));
    }
    if let Some(password) = identity.app_password.as_ref().filter(|_| app_password) {
        headers.push((HEADER_APP_PASSWORD.to_string(), password.expose().to_string()));
    }
    Some(Credential { bearer: bearer.expose().to_string(), headers })
}

async fn environment(
    services: &Services,
    turn: &Turn,
    tools: &TurnTools,
) -> Result<Environment, StoreError> {
    let uid = turn.identity.uid.clone();
    let facts =
        services.memory.run(move |c| memory::list(c, &uid, prompt::MEMORY_FACTS_SHOWN_MAX)).await?;
    let now = chrono::Utc::now().with_timezone(&turn.time_zone);
    Ok(Environment {
        uid: turn.identity.uid.clone(),
        display_name: turn.display_name.clone(),
        local_time: now.format("%A %Y-%m-%d %H:%M").to_string(),
        time_zone: turn.time_zone.name().to_string(),
        language: turn.language.clone(),
        capabilities: tools.capabilities(),
        memory: facts.into_iter().map(|fact| (fact.text, fact.source)).collect(),
    })
}

/// The stored conversation with its sequence numbers.
pub(crate) async fn load(
    chat_db: &Database,
    uid: &str,
    conversation_id: &str,
) -> Result<Vec<(i64, Entry)>, StoreError> {
    let (uid, conversation_id) = (uid.to_string(), conversation_id.to_string());
    let stored =
        chat_db.run(move |c| chat::messages(c, &uid, &conversation_id)).await?.unwrap_or_default();
    Ok(stored
        .into_iter()
        .filter_map(|message| match Entry::from_json(&message.content) {
            Ok(entry) => Some((message.seq, entry)),
            Err(error) => {
                tracing::error!(seq = message.seq, %error, "skipping an unreadable stored message");
                None
            }
        })
        .collect())
}

/// Rung 2: the stored summary, or a new one when the conversation has grown
/// past about half the window (made once, stored, reloaded later).
async fn summarise_if_due(
    services: &Services,
    tools: &TurnTools,
    conversation_id: &str,
    entries: &[(i64, Entry)],
    stored: Option<(i64, String)>,
    system: &str,
) -> Result<Option<(i64, String)>, Stopped> {
    let definitions: Vec<_> =
        agent::ToolSet::specs(tools).iter().map(|spec| spec.definition.clone()).collect();
    let tool_tokens = serde_json::to_string(
        &definitions.iter().map(|d| (&d.name, &d.description, &d.parameters)).collect::<Vec<_>>(),
    )
    .map(|text| text.len() / 4)
    .unwrap_or(0);
    let system_tokens =
        summary::estimate_tokens(&[Message::System(system.to_string())]) + tool_tokens;
    let kinds = kinds(tools);
    let is_action = |name: &str| kinds.get(name).map(|kind| *kind == ToolKind::Action);
    let previous = stored.as_ref().map(|(seq, text)| (*seq, text.as_str()));
    let Some(plan) =
        summary::plan(entries, previous, system_tokens, services.window_tokens, is_action)
    else {
        return Ok(stored);
    };
    let text = answer_text(services.model.as_ref(), plan.request).await;
    let text = match text {
        Ok(text) if !text.trim().is_empty() => text,
        Ok(_) | Err(_) => {
            // Without a summary the turn goes on with the whole history:
            // longer, not wrong.
            tracing::warn!("the conversation could not be summarised this turn");
            return Ok(stored);
        }
    };
    let (id, upto) = (conversation_id.to_string(), plan.upto_seq);
    let stored_text = text.clone();
    services.chat.run(move |c| chat::store_summary(c, &id, upto, &stored_text, now_ms())).await?;
    Ok(Some((plan.upto_seq, text)))
}

async fn answer_text(model: &dyn Model, request: ChatRequest) -> Result<String, Stopped> {
    let mut stream = model.answer(request).await.map_err(|e| Stopped::model(&e, false))?;
    let mut text = String::new();
    while let Some(event) = stream.next().await {
        if let ModelEvent::TextDelta(delta) = event.map_err(|e| Stopped::model(&e, false))? {
            text.push_str(&delta);
        }
    }
    Ok(text)
}

fn kinds(tools: &TurnTools) -> HashMap<String, ToolKind> {
    agent::ToolSet::specs(tools)
        .iter()
        .map(|spec| (spec.definition.name.clone(), spec.kind))
        .collect()
}

/// The context engine of a turn: every step, the environment is rendered
/// again (a workspace whose calls all failed shows as not reachable before
/// the model answers) and stale data results are cleared (rung 1).
struct StepContext<'a> {
    environment: Environment,
    tools: &'a TurnTools,
}

impl Context for StepContext<'_> {
    fn for_step(&self, messages: &[Message]) -> Vec<Message> {
        let kinds = kinds(self.tools);
        let mut pruned =
            prune::prune(messages, |name| kinds.get(name).map(|kind| *kind == ToolKind::Action));
        let environment =
            Environment { capabilities: self.tools.capabilities(), ..self.environment.clone() };
        let latest = pruned.iter_mut().rev().find_map(|message| match message {
            Message::User(question) => Some(question),
            _ => None,
        });
        if let Some(question) = latest {
            *question = prompt::with_environment(&environment, question);
        }
        pruned
    }
}

/// Stores the agent's events, then writes their frames.
struct Recorder<'a> {
    services: &'a Services,
    uid: &'a str,
    conversation_id: &'a str,
    caller: Caller,
}

impl<'a> Recorder<'a> {
    fn new(services: &'a Services, uid: &'a str, conversation_id: &'a str) -> Recorder<'a> {
        let caller = Caller { uid: uid.to_string(), conversation_id: conversation_id.to_string() };
        Recorder { services, uid, conversation_id, caller }
    }

    async fn record(&mut self, event: AgentEvent, frames: &mut Frames) -> Result<(), Stopped> {
        match event {
            AgentEvent::StepStart => frames.chunk(Chunk::StartStep).await,
            AgentEvent::TextDelta(delta) => frames.text(delta).await,
            AgentEvent::ToolInput { call, input, dynamic } => {
                frames.close_text().await;
                frames
                    .chunk(Chunk::ToolInputAvailable {
                        tool_call_id: call.id,
                        tool_name: call.name,
                        input,
                        dynamic: dynamic.then_some(true),
                    })
                    .await;
            }
            AgentEvent::ApprovalRequest { call } => {
                let approval = chat::Approval {
                    approval_id: format!("apr-{}", uuid::Uuid::new_v4()),
                    conversation_id: self.conversation_id.to_string(),
                    tool_call_id: call.id.clone(),
                    tool: call.name.clone(),
                    arguments_hash: crate::store::arguments_hash(&call.arguments),
                    arguments: call.arguments,
                    decision: None,
                };
                let chunk = Chunk::ToolApprovalRequest {
                    approval_id: approval.approval_id.clone(),
                    tool_call_id: approval.tool_call_id.clone(),
                };
                self.services
                    .chat
                    .run(move |c| chat::request_approval(c, &approval, now_ms()))
                    .await?;
                frames.chunk(chunk).await;
            }
            AgentEvent::Message(message) => {
                // Tool results are stored with their output, below.
                if let Message::Assistant { text, tool_calls } = message {
                    frames.close_text().await;
                    self.append(Entry::Assistant { text, tool_calls }).await?;
                }
            }
            AgentEvent::ToolOutput { tool_call_id, tool, result, dynamic } => {
                let state = if result.is_error { ToolState::Error } else { ToolState::Output };
                let entry = ToolEntry {
                    tool_call_id: tool_call_id.clone(),
                    tool,
                    content: result.text.clone(),
                    output: result.output.clone(),
                    state,
                };
                self.append(Entry::Tool(entry)).await?;
                let dynamic = dynamic.then_some(true);
                let chunk = if result.is_error {
                    Chunk::ToolOutputError { tool_call_id, error_text: result.text, dynamic }
                } else {
                    Chunk::ToolOutputAvailable { tool_call_id, output: result.output, dynamic }
                };
                frames.chunk(chunk).await;
            }
            AgentEvent::ToolDenied { call } => {
                tools::record_denied(&self.services.audit, &self.caller, &call).await;
                let tool_call_id = call.id.clone();
                self.append(Entry::Tool(ToolEntry {
                    tool_call_id: tool_call_id.clone(),
                    tool: call.name,
                    content: agent::DENIED_TEXT.to_string(),
                    output: serde_json::Value::Null,
                    state: ToolState::Denied,
                }))
                .await?;
                frames.chunk(Chunk::ToolOutputDenied { tool_call_id }).await;
            }
            AgentEvent::StepFinish => {
                frames.close_text().await;
                frames.chunk(Chunk::FinishStep).await;
            }
        }
        Ok(())
    }

    async fn append(&self, entry: Entry) -> Result<(), StoreError> {
        append(&self.services.chat, self.uid, self.conversation_id, entry).await
    }
}

pub(crate) async fn append(
    chat_db: &Database,
    uid: &str,
    conversation_id: &str,
    entry: Entry,
) -> Result<(), StoreError> {
    let (uid, conversation_id) = (uid.to_string(), conversation_id.to_string());
    chat_db
        .run(move |c| {
            chat::append_message(
                c,
                &uid,
                &conversation_id,
                entry.role(),
                &entry.to_json(),
                now_ms(),
            )
        })
        .await?;
    Ok(())
}

#[cfg(test)]
mod credential_tests {
    use super::*;
    use crate::identity::AccessToken;

    fn identity(app_password: Option<&str>) -> Identity {
        let mut tokens = std::collections::BTreeMap::new();
        for audience in ["mcp-nextcloud", "mcp-mail", "nextcloud"] {
            tokens.insert(audience.to_string(), AccessToken::for_tests(&format!("{audience}.t")));
        }
        Identity {
            uid: "alice".into(),
            tokens,
            request_id: "r".into(),
            app_password: app_password.map(AccessToken::for_tests),
        }
    }

    fn server(name: &str) -> ServerConfig {
        ServerConfig { name: name.into(), url: format!("http://{name}/mcp") }
    }

    #[test]
    fn the_app_password_goes_only_to_the_servers_configured_for_it() {
        let identity = identity(Some("app-pw"));
        let nextcloud = credential(&server("nextcloud"), &identity, true).unwrap();
        assert_eq!(nextcloud.bearer, "mcp-nextcloud.t");
        assert!(nextcloud.headers.contains(&(HEADER_APP_PASSWORD.into(), "app-pw".into())));
        let mail = credential(&server("mail"), &identity, false).unwrap();
        assert_eq!(mail.bearer, "mcp-mail.t");
        assert!(mail.headers.iter().all(|(name, _)| name != HEADER_APP_PASSWORD), "{mail:?}");
        assert!(mail.headers.contains(&(NEXTCLOUD_TOKEN_HEADER.into(), "nextcloud.t".into())));
    }

    #[test]
    fn without_a_saved_app_password_nothing_is_added() {
        let credential = credential(&server("nextcloud"), &identity(None), true).unwrap();
        assert!(credential.headers.iter().all(|(name, _)| name != HEADER_APP_PASSWORD));
    }
}
