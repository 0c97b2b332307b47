//! The runner: starts the whole stack for one scenario on ephemeral loopback
//! ports (the fake Nextcloud with its Tamebi app, mcp-nextcloud, mcp-mail,
//! the scripted fake model, the orchestrator on a fresh data directory),
//! drives the steps through the app's routes like a browser, checks every
//! expectation and writes the normalised transcript.
//!
//! A failed expectation does not stop the scenario: every failure is
//! collected, so one run shows all that is wrong.

use crate::format::{
    Action, Approve, AuditRow, ConverterSetting, Expect, ModelShown, Scenario, UpstreamSetting,
};
use crate::normalise::Normaliser;
use fake_model::{FakeModel, Script};
use fake_nextcloud::{AppConfig, FakeNextcloud};
use orchestrator::mcp::ServerConfig;
use orchestrator::service::{self, Orchestrator};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const SECRET: &str = "scenario-runner-shared-secret-0123456789";
const WEBHOOK_SECRET: &str = "scenario-runner-webhook-secret";
const MCP_NEXTCLOUD_AUDIENCE: &str = "http://127.0.0.1:9101/mcp";
const MCP_MAIL_AUDIENCE: &str = "http://127.0.0.1:9102/mcp";
/// No single HTTP request of a scenario may take longer.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// What one run of a scenario produced.
#[derive(Debug)]
pub struct Outcome {
    /// Every expectation that did not hold, with its step and line.
    pub failures: Vec<String>,
    /// The normalised transcript (the snapshot).
    pub transcript: String,
    pub elapsed: Duration,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// Runs one scenario on fresh services and shuts them down.
pub async fn run(scenario: &Scenario) -> Outcome {
    let started = Instant::now();
    let mut transcript = Transcript::default();
    let _ = writeln!(transcript.text, "# {}\n# {}", scenario.name, scenario.description);
    let mut failures = Vec::new();
    match Stack::start(scenario).await {
        Err(error) => failures.push(format!("the stack did not start: {error}")),
        Ok(mut stack) => {
            for (index, step) in scenario.steps.iter().enumerate() {
                let label =
                    format!("step {} ({}, line {})", index + 1, step.action.kind(), step.line);
                let _ = writeln!(transcript.text, "\n## {label}");
                let mut problems = Vec::new();
                match stack.act(&step.action, &mut transcript).await {
                    Err(error) => problems.push(format!("could not run: {error}")),
                    Ok(result) => {
                        if let Err(error) = stack.settle().await {
                            problems.push(error);
                        }
                        stack.check(&step.action, &step.expect, &result, &mut problems)
                    }
                }
                failures.extend(problems.into_iter().map(|problem| format!("{label}: {problem}")));
            }
            stack.shutdown().await;
        }
    }
    Outcome { failures, transcript: transcript.text, elapsed: started.elapsed() }
}

#[derive(Default)]
struct Transcript {
    text: String,
    normaliser: Normaliser,
}

impl Transcript {
    fn line(&mut self, line: &str) {
        let line = self.normaliser.text(line);
        let _ = writeln!(self.text, "{line}");
    }

    fn value(&mut self, value: &Value) {
        let value = self.normaliser.value(value);
        let _ = writeln!(self.text, "{value}");
    }

    /// The chunks, one a line, text deltas joined into one `text` line.
    fn chunks(&mut self, chunks: &[Value]) {
        let mut text = String::new();
        for chunk in chunks {
            if chunk["type"] == "text-delta" {
                text.push_str(chunk["delta"].as_str().unwrap_or_default());
                continue;
            }
            if !text.is_empty() {
                self.value(&json!({"type": "text", "text": std::mem::take(&mut text)}));
            }
            let mut chunk = chunk.clone();
            // As for tool steps (`settled_view`): a files_grep result's
            // readiness races with the pass it started.
            if let Some(output) = chunk.get_mut("output").and_then(Value::as_object_mut)
                && output.contains_key("passages")
            {
                output.remove("index");
            }
            self.value(&chunk);
        }
        if !text.is_empty() {
            self.value(&json!({"type": "text", "text": text}));
        }
    }
}

/// What a step's request answered.
#[derive(Default)]
struct StepResult {
    status: Option<u16>,
    chunks: Vec<Value>,
    body: Option<Value>,
    first_text_before_end: Option<Duration>,
    conversation: Option<String>,
    user: String,
    /// The model's request log length before the step.
    model_requests_before: usize,
    /// A tool step's text content (chat steps: the text deltas).
    tool_text: Option<String>,
}

type Browser = crate::browser::Session;

struct Stack {
    fake: FakeNextcloud,
    mcp: Option<mcp_nextcloud::McpNextcloud>,
    /// mcp-nextcloud's configuration, for restarts (same port, same index).
    mcp_config: mcp_nextcloud::Config,
    webhooks: bool,
    mail: Option<mcp_mail::McpMail>,
    model: FakeModel,
    orchestrator: Option<Orchestrator>,
    http: reqwest::Client,
    browsers: HashMap<String, Browser>,
    passwords: HashMap<String, String>,
    /// The latest approval requests per conversation.
    pending: HashMap<String, Vec<Value>>,
    preview_id: Option<String>,
    window_tokens: usize,
    servers: Vec<ServerConfig>,
    data_dir: PathBuf,
}

impl Stack {
    async fn start(scenario: &Scenario) -> Result<Stack, String> {
        let app = AppConfig {
            shared_secret: Some(SECRET.as_bytes().to_vec()),
            renew_margin_s: scenario.options.renew_margin_s,
            ..AppConfig::default()
        };
        let mut fixture = scenario.fixture.clone();
        if scenario.options.webhooks {
            // Delivered when the runner flushes them after each step, so a
            // step's uploads have reached the index before its checks.
            fixture.webhooks.delivery = fake_nextcloud::webhooks::Delivery::OnDemand;
        }
        let fake = FakeNextcloud::start_with_app(&fixture, fake_nextcloud::Config::default(), app)
            .await
            .map_err(|error| format!("fake Nextcloud: {error}"))?;
        seed_corpus(&fake, &scenario.corpus);
        let base = fake.base_url().to_string();
        let data_dir = std::env::temp_dir().join(format!(
            "tamebi-scenario-{}-{}-{}",
            scenario.name,
            std::process::id(),
            unique()
        ));
        std::fs::create_dir_all(&data_dir)
            .map_err(|error| format!("cannot create {}: {error}", data_dir.display()))?;
        let mut index = mcp_nextcloud::index::IndexConfig {
            path: Some(data_dir.join("index.db")),
            webhook_secret: Some(WEBHOOK_SECRET.into()),
            limits: Default::default(),
        };
        let limits = scenario.options.index_limits;
        let defaults = index.limits;
        index.limits.pass_documents = limits.pass_documents.unwrap_or(defaults.pass_documents);
        index.limits.discovery_page = limits.discovery_page.unwrap_or(defaults.discovery_page);
        index.limits.discovery_pages = limits.discovery_pages.unwrap_or(defaults.discovery_pages);
        let mut mcp_config = mcp_nextcloud::Config {
            listen: "127.0.0.1:0".parse().expect("address"),
            canonical_url: MCP_NEXTCLOUD_AUDIENCE.into(),
            issuer: base.clone(),
            jwks_url: None,
            nextcloud_url: base.clone(),
            upstream: upstream_auth(scenario.options.upstream),
            allowed_hosts: vec!["127.0.0.1".into()],
            clock: fake_clock(&fake),
            index,
            converter: converter_config(&fake, scenario.options.converter),
        };
        let mcp = mcp_nextcloud::McpNextcloud::start(mcp_config.clone())
            .await
            .map_err(|error| format!("mcp-nextcloud: {error}"))?;
        // Restarts listen on the same port: the orchestrator and the
        // registered webhooks keep their URLs.
        mcp_config.listen = mcp.url().trim_start_matches("http://").parse().expect("address");
        if scenario.options.webhooks {
            register_webhooks(
                &fake,
                &scenario.fixture,
                &format!("{}/webhooks/nextcloud", mcp.url()),
            )
            .await?;
        }
        let mail = mcp_mail::McpMail::start(mcp_mail::Config {
            listen: "127.0.0.1:0".parse().expect("address"),
            canonical_url: MCP_MAIL_AUDIENCE.into(),
            issuer: base.clone(),
            jwks_url: None,
            app_url: base.clone(),
            nextcloud_audience: "nextcloud".into(),
            allowed_hosts: vec!["127.0.0.1".into()],
            clock: fake_clock(&fake),
        })
        .await
        .map_err(|error| format!("mcp-mail: {error}"))?;
        let script = Script::from_toml(&scenario.model_script)
            .map_err(|error| format!("the model script: {error}"))?;
        let model = FakeModel::start(fake_model::Config {
            listen: "127.0.0.1:0".parse().expect("address"),
            script,
            ..fake_model::Config::default()
        })
        .await
        .map_err(|error| format!("fake model: {error}"))?;
        let servers = [
            ServerConfig { name: "nextcloud".into(), url: format!("{}/mcp", mcp.url()) },
            ServerConfig { name: "mail".into(), url: format!("{}/mcp", mail.url()) },
        ]
        .into_iter()
        .filter(|server| scenario.options.mcp_servers.contains(&server.name))
        .collect();
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(REQUEST_TIMEOUT)
            .build()
            .expect("HTTP client");
        let passwords = scenario
            .fixture
            .users
            .iter()
            .map(|user| (user.uid.clone(), user.password.clone()))
            .collect();
        let mut stack = Stack {
            fake,
            mcp: Some(mcp),
            mcp_config,
            webhooks: scenario.options.webhooks,
            mail: Some(mail),
            model,
            orchestrator: None,
            http,
            browsers: HashMap::new(),
            passwords,
            pending: HashMap::new(),
            preview_id: None,
            window_tokens: scenario.options.window_tokens,
            servers,
            data_dir,
        };
        stack.start_orchestrator().await?;
        Ok(stack)
    }

    async fn start_orchestrator(&mut self) -> Result<(), String> {
        let mut model = orchestrator::model::ModelConfig::new(self.model.api_base(), "fake-model");
        model.retry.backoff_first_ms = 10;
        let orchestrator = Orchestrator::start(service::Config {
            listen: "127.0.0.1:0".parse().expect("address"),
            secret: SECRET.as_bytes().to_vec(),
            model,
            window_tokens: self.window_tokens,
            servers: self.servers.clone(),
            // As an app-password deployment sets it; nothing is sent until
            // a user saves an app password in the app.
            app_password_servers: vec!["nextcloud".into()],
            data_dir: Some(self.data_dir.clone()),
        })
        .await
        .map_err(|error| format!("orchestrator: {error}"))?;
        let set = self
            .nextcloud_admin(reqwest::Method::POST, "/__fake/app")
            .json(&json!({ "orchestrator_url": orchestrator.url() }))
            .send()
            .await
            .map_err(|error| format!("POST /__fake/app: {error}"))?;
        if !set.status().is_success() {
            return Err(format!("POST /__fake/app answered {}", set.status()));
        }
        self.orchestrator = Some(orchestrator);
        Ok(())
    }

    async fn shutdown(mut self) {
        if let Some(orchestrator) = self.orchestrator.take() {
            orchestrator.shutdown().await;
        }
        self.mcp.take();
        self.mail.take();
        self.model.shutdown().await;
        self.fake.shutdown().await;
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }

    fn orchestrator(&self) -> &Orchestrator {
        self.orchestrator.as_ref().expect("the orchestrator runs between steps")
    }

    async fn browser(&mut self, uid: &str) -> Result<&Browser, String> {
        if !self.browsers.contains_key(uid) {
            let password = self.passwords.get(uid).cloned().unwrap_or_default();
            let session = crate::browser::login(&self.http, self.fake.base_url(), uid, &password)
                .await
                .map_err(|error| {
                    format!("login of {uid}: {error} (is {uid} a user of the fixture?)")
                })?;
            self.browsers.insert(uid.to_string(), session);
        }
        Ok(&self.browsers[uid])
    }

    async fn act(
        &mut self,
        action: &Action,
        transcript: &mut Transcript,
    ) -> Result<StepResult, String> {
        let mut result =
            StepResult { model_requests_before: self.model.requests().len(), ..Default::default() };
        match action {
            Action::Ask { user, conversation, text, metadata, .. } => {
                transcript.line(&format!("{user} asks in {conversation}: {text}"));
                let mut message =
                    json!({"id": "u", "role": "user", "parts": [{"type": "text", "text": text}]});
                if let Some(metadata) = metadata {
                    message["metadata"] = metadata.clone();
                }
                let body =
                    json!({"id": conversation, "trigger": "submit-message", "message": message});
                self.chat(user, conversation, &body, &mut result, transcript).await?;
            }
            Action::Decide { user, conversation, approve, .. } => {
                let requests = self.pending.get(conversation).cloned().unwrap_or_default();
                let decisions: Vec<bool> = match approve {
                    Approve::All(approved) => vec![*approved; requests.len()],
                    Approve::Each(each) => each.clone(),
                };
                if decisions.len() != requests.len() {
                    return Err(format!(
                        "{} decisions for {} pending approval requests",
                        decisions.len(),
                        requests.len()
                    ));
                }
                transcript.line(&format!("{user} decides in {conversation}: {decisions:?}"));
                let parts: Vec<Value> = requests
                    .iter()
                    .zip(&decisions)
                    .map(|(request, approved)| {
                        json!({
                            "type": "dynamic-tool", "toolCallId": request["toolCallId"],
                            "state": "approval-responded",
                            "approval": {"id": request["approvalId"], "approved": approved},
                        })
                    })
                    .collect();
                let body = json!({
                    "id": conversation, "trigger": "submit-message",
                    "message": {"id": "a", "role": "assistant", "parts": parts},
                });
                self.chat(user, conversation, &body, &mut result, transcript).await?;
            }
            Action::Http { method, path, auth, user, headers, body, .. } => {
                // The template goes to the transcript: the id changes every run.
                transcript.line(&format!("{method} {path} as {auth} {user}"));
                let path = match &self.preview_id {
                    Some(id) => path.replace("{previewId}", id),
                    None => path.clone(),
                };
                let method = reqwest::Method::from_bytes(method.as_bytes())
                    .map_err(|_| format!("{method:?} is not an HTTP method"))?;
                let url = format!("{}{path}", self.fake.base_url());
                let mut request = self.http.request(method, url);
                match auth.as_str() {
                    "browser" => {
                        let browser = self.browser(user).await?;
                        request = request
                            .header("Cookie", browser.cookies.clone())
                            .header("requesttoken", browser.request_token.clone());
                    }
                    "basic" => {
                        let password = self.passwords.get(user).cloned().unwrap_or_default();
                        request = request.basic_auth(user, Some(password));
                    }
                    "bearer" => {
                        let token = self.fake.shared.mint_access_token(user, "nextcloud");
                        request = request.bearer_auth(token);
                    }
                    "admin" => {
                        let token = self
                            .fake
                            .admin_token()
                            .expect("the runner's fake has its admin routes on");
                        request = request.header(fake_nextcloud::admin::TOKEN_HEADER, token);
                    }
                    _ => {}
                }
                for (name, value) in headers {
                    request = request.header(name.as_str(), value.as_str());
                }
                request = match body {
                    Some(Value::String(text)) => request.body(text.clone()),
                    Some(value) => request.json(value),
                    None => request,
                };
                let response = request.send().await.map_err(|error| error.to_string())?;
                result.status = Some(response.status().as_u16());
                let text = response.text().await.map_err(|error| error.to_string())?;
                let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
                transcript.line(&format!("status {}", result.status.unwrap_or_default()));
                if body != Value::String(String::new()) {
                    transcript.value(&body);
                }
                result.body = Some(body);
                result.user = user.clone();
            }
            Action::NextcloudFaults { faults, .. } => {
                transcript.line(&format!("nextcloud faults: {faults}"));
                let set = self
                    .nextcloud_admin(reqwest::Method::PUT, "/__fake/faults")
                    .json(faults)
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                if !set.status().is_success() {
                    let text = set.text().await.unwrap_or_default();
                    return Err(format!("PUT /__fake/faults refused them: {text}"));
                }
            }
            Action::ModelFaults { faults, .. } => {
                transcript.line(&format!("model faults: {faults}"));
                let set = self
                    .model_admin(reqwest::Method::PUT, "/__fake/faults")
                    .json(faults)
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                if !set.status().is_success() {
                    let text = set.text().await.unwrap_or_default();
                    return Err(format!("the fake model refused the faults: {text}"));
                }
            }
            Action::AdvanceClock { seconds, .. } => {
                transcript.line(&format!("clock +{seconds} s"));
                let set = self
                    .nextcloud_admin(reqwest::Method::POST, "/__fake/clock/advance")
                    .json(&json!({"seconds": seconds}))
                    .send()
                    .await
                    .map_err(|error| error.to_string())?;
                if !set.status().is_success() {
                    return Err(format!("the clock did not move: {}", set.status()));
                }
            }
            Action::Wait { ms, .. } => {
                transcript.line(&format!("wait {ms} ms"));
                tokio::time::sleep(Duration::from_millis(*ms)).await;
            }
            Action::EndSession { user, .. } => {
                transcript.line(&format!("{user}'s session ends"));
                let path = format!("/__fake/sessions/{user}/end");
                let end = self
                    .nextcloud_admin(reqwest::Method::POST, &path)
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                if !end.status().is_success() {
                    return Err(format!("ending the session answered {}", end.status()));
                }
            }
            Action::RestartOrchestrator { .. } => {
                transcript.line("the orchestrator restarts");
                if let Some(orchestrator) = self.orchestrator.take() {
                    orchestrator.shutdown().await;
                }
                self.start_orchestrator().await?;
            }
            Action::Tool { server, name, arguments, user, .. } => {
                transcript.line(&format!("{user} calls {server} {name} {arguments}"));
                let (status, body) = self.call_tool(server, user, name, arguments).await?;
                result.status = Some(status);
                transcript.line(&format!("status {status}"));
                transcript.value(&settled_view(&body));
                let texts = body["content"].as_array().into_iter().flatten();
                result.tool_text =
                    Some(texts.filter_map(|content| content["text"].as_str()).collect());
                result.body = Some(body);
                result.user = user.clone();
            }
            Action::Webhook { event, user, path, to, fileid, secret, .. } => {
                transcript.line(&format!(
                    "webhook {event} {user}/{path}{}",
                    to.as_deref().map(|to| format!(" -> {to}")).unwrap_or_default()
                ));
                let fileid = match fileid {
                    Some(fileid) => *fileid,
                    None => {
                        let world = self.fake.shared.world();
                        let node = world.storage.node_at(user, to.as_deref().unwrap_or(path));
                        node.map(|node| node.id).ok_or_else(|| {
                            format!("{user} has no file {path:?}: give its `fileid`")
                        })?
                    }
                };
                let class = match event.as_str() {
                    "written" => mcp_nextcloud::index::webhook::NODE_WRITTEN,
                    "created" => mcp_nextcloud::index::webhook::NODE_CREATED,
                    "deleted" => mcp_nextcloud::index::webhook::NODE_DELETED,
                    _ => mcp_nextcloud::index::webhook::NODE_RENAMED,
                };
                let node =
                    |path: &str| json!({"id": fileid, "path": format!("/{user}/files/{path}")});
                let mut event = json!({"class": class});
                match to {
                    Some(to) => {
                        event["source"] = node(path);
                        event["target"] = node(to);
                    }
                    None => event["node"] = node(path),
                }
                let url = format!("{}/webhooks/nextcloud", self.mcp_config_url());
                let mut request = self.http.post(url).json(&json!({
                    "event": event, "user": {"uid": user, "displayName": user},
                }));
                match secret.as_deref() {
                    Some("") => {}
                    given => {
                        request = request.header(
                            mcp_nextcloud::index::webhook::SECRET_HEADER,
                            given.unwrap_or(WEBHOOK_SECRET),
                        )
                    }
                }
                let response = request.send().await.map_err(|error| error.to_string())?;
                let status = response.status().as_u16();
                result.status = Some(status);
                transcript.line(&format!("status {status}"));
            }
            Action::StopMcpNextcloud { .. } => {
                transcript.line("mcp-nextcloud stops");
                if let Some(mcp) = self.mcp.take() {
                    mcp.index().idle().await;
                    mcp.shutdown().await;
                }
            }
            Action::RestartMcpNextcloud { converter, upstream, .. } => {
                transcript.line("mcp-nextcloud restarts");
                if let Some(mcp) = self.mcp.take() {
                    mcp.index().idle().await;
                    mcp.shutdown().await;
                }
                if let Some(converter) = converter {
                    self.mcp_config.converter = converter_config(&self.fake, *converter);
                }
                if let Some(upstream) = upstream {
                    self.mcp_config.upstream = upstream_auth(*upstream);
                }
                let mcp = mcp_nextcloud::McpNextcloud::start(self.mcp_config.clone())
                    .await
                    .map_err(|error| format!("mcp-nextcloud did not start again: {error}"))?;
                self.mcp = Some(mcp);
            }
            Action::Erase { user, agent_facts, .. } => {
                transcript.line(&format!(
                    "erase {user}{}",
                    if *agent_facts { ": the facts the agent wrote" } else { "" }
                ));
                let said = self.erase(user, *agent_facts).await?;
                transcript.line(&said);
                result.user = user.clone();
            }
            Action::Check { .. } => {}
        }
        Ok(result)
    }

    /// Erases as `tamebi erase` does: its own connections to the files.
    async fn erase(&self, uid: &str, agent_facts: bool) -> Result<String, String> {
        use orchestrator::store::{chat, memory};
        let memory_db = memory::open(Some(&self.data_dir.join("memory.db")))
            .map_err(|error| format!("memory.db: {error}"))?;
        let who = uid.to_string();
        if agent_facts {
            let purged = memory_db
                .run(move |c| memory::purge_agent_facts(c, Some(&who)))
                .await
                .map_err(|error| error.to_string())?;
            return Ok(format!("{purged} agent fact(s) removed"));
        }
        let chat_db = chat::open(Some(&self.data_dir.join("chat.db")))
            .map_err(|error| format!("chat.db: {error}"))?;
        let conversations =
            chat_db.run(move |c| chat::erase_user(c, &who)).await.map_err(|e| e.to_string())?;
        let who = uid.to_string();
        let facts =
            memory_db.run(move |c| memory::erase_user(c, &who)).await.map_err(|e| e.to_string())?;
        Ok(format!("{conversations} conversation(s) and {facts} fact(s) erased"))
    }

    fn mcp_config_url(&self) -> String {
        format!("http://{}", self.mcp_config.listen)
    }

    /// Lets what a step started finish before its checks: queued webhook
    /// calls are delivered, and the index passes they and the searches
    /// started have ended.
    async fn settle(&self) -> Result<(), String> {
        if self.webhooks {
            let flushed = self
                .nextcloud_admin(reqwest::Method::POST, "/__fake/webhooks/flush")
                .send()
                .await
                .map_err(|e| e.to_string())?;
            if !flushed.status().is_success() {
                return Err(format!("flushing the webhooks answered {}", flushed.status()));
            }
        }
        if let Some(mcp) = &self.mcp {
            mcp.index().idle().await;
        }
        Ok(())
    }

    /// One `tools/call` as the user, with the tokens the app would hand
    /// the orchestrator for that server; the JSON-RPC result.
    async fn call_tool(
        &self,
        server: &str,
        user: &str,
        name: &str,
        arguments: &Value,
    ) -> Result<(u16, Value), String> {
        let (url, audience) = match server {
            "mail" => (self.mail.as_ref().map(|mail| mail.url().to_string()), MCP_MAIL_AUDIENCE),
            _ => (Some(self.mcp_config_url()), MCP_NEXTCLOUD_AUDIENCE),
        };
        let url = url.ok_or_else(|| format!("the {server} server does not run"))?;
        let shared = &self.fake.shared;
        // What the orchestrator adds for mcp-nextcloud once the user has
        // saved an app password in the app.
        let app_password = match server {
            "nextcloud" => shared.world().app.app_passwords.get(user).cloned(),
            _ => None,
        };
        let mut request = self.http.post(format!("{url}/mcp"));
        if let Some(app_password) = app_password {
            request = request.header(mcp_nextcloud::config::APP_PASSWORD_HEADER, app_password);
        }
        let response = request
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .bearer_auth(shared.mint_access_token(user, audience))
            .header(
                mcp_nextcloud::config::NEXTCLOUD_TOKEN_HEADER,
                shared.mint_access_token(user, "nextcloud"),
            )
            .json(&json!({
                "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }))
            .send()
            .await
            .map_err(|error| format!("tools/call {name}: {error}"))?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(|error| error.to_string())?;
        let json_text = text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .find(|line| !line.is_empty())
            .unwrap_or(text.trim());
        let message: Value = serde_json::from_str(json_text).unwrap_or(Value::String(text.clone()));
        let body = match message.get("result") {
            Some(result) => result.clone(),
            None => message,
        };
        Ok((status, body))
    }

    /// Posts to the app's chat route as the user's browser and reads the
    /// stream as it comes.
    async fn chat(
        &mut self,
        user: &str,
        conversation: &str,
        body: &Value,
        result: &mut StepResult,
        transcript: &mut Transcript,
    ) -> Result<(), String> {
        let url = format!("{}/apps/tamebi/api/chat", self.fake.base_url());
        let browser = self.browser(user).await?;
        let (cookies, request_token) = (browser.cookies.clone(), browser.request_token.clone());
        let started = Instant::now();
        let mut response = self
            .http
            .post(url)
            .header("Cookie", cookies)
            .header("requesttoken", request_token)
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|error| format!("the chat post failed: {error}"))?;
        let status = response.status().as_u16();
        let mut seen = String::new();
        let mut first_text = None;
        while let Some(bytes) =
            response.chunk().await.map_err(|error| format!("the stream broke: {error}"))?
        {
            seen.push_str(&String::from_utf8_lossy(&bytes));
            if first_text.is_none() && seen.contains("\"text-delta\"") {
                first_text = Some(started.elapsed());
            }
        }
        let total = started.elapsed();
        result.status = Some(status);
        result.user = user.to_string();
        result.conversation = Some(conversation.to_string());
        transcript.line(&format!("status {status}"));
        if status != 200 {
            let body = serde_json::from_str(&seen).unwrap_or(Value::String(seen));
            transcript.value(&body);
            result.body = Some(body);
            return Ok(());
        }
        result.first_text_before_end = first_text.map(|first| total.saturating_sub(first));
        result.chunks = frames(&seen);
        transcript.chunks(&result.chunks);
        // Kept until an answer brings new ones, so a scenario can post the
        // same decisions twice (a replay must be refused).
        let requests: Vec<Value> =
            of_type(&result.chunks, "tool-approval-request").into_iter().cloned().collect();
        if !requests.is_empty() {
            self.pending.insert(conversation.to_string(), requests);
        }
        for output in of_type(&result.chunks, "tool-output-available") {
            let output = &output["output"];
            if let Some(id) = output["previewId"].as_str().or(output["preview_id"].as_str()) {
                self.preview_id = Some(id.to_string());
            }
        }
        Ok(())
    }

    fn check(
        &self,
        action: &Action,
        expect: &Expect,
        result: &StepResult,
        problems: &mut Vec<String>,
    ) {
        check_invariants(action, result, problems);
        if let Some(status) = expect.status
            && result.status != Some(status)
        {
            problems.push(format!(
                "status: expected {status}, got {:?}{}",
                result.status,
                body_hint(result)
            ));
        }
        for wanted in &expect.chunks_include {
            if !result.chunks.iter().any(|chunk| matches_partially(chunk, wanted)) {
                problems.push(format!("no chunk matches {wanted}"));
            }
        }
        for unwanted in &expect.chunks_exclude {
            if let Some(chunk) =
                result.chunks.iter().find(|chunk| matches_partially(chunk, unwanted))
            {
                problems.push(format!("chunk {chunk} matches the excluded {unwanted}"));
            }
        }
        let text = result.tool_text.clone().unwrap_or_else(|| text_of(&result.chunks));
        for wanted in &expect.text_contains {
            if !text.contains(wanted.as_str()) {
                problems.push(format!("the text does not contain {wanted:?}; it is {text:?}"));
            }
        }
        if let Some(wanted) = &expect.text_equals
            && &text != wanted
        {
            problems.push(format!("text: expected {wanted:?}, got {text:?}"));
        }
        if let Some(wanted) = &expect.error_contains {
            let shown = error_message(result);
            if !shown.as_deref().unwrap_or_default().contains(wanted.as_str()) {
                problems
                    .push(format!("the error shown does not contain {wanted:?}; it is {shown:?}"));
            }
        }
        if let Some(wanted) = &expect.tools_called {
            let called: Vec<&str> = of_type(&result.chunks, "tool-input-available")
                .iter()
                .filter_map(|chunk| chunk["toolName"].as_str())
                .collect();
            if called != *wanted {
                problems.push(format!("tools called: expected {wanted:?}, got {called:?}"));
            }
        }
        if let Some(wanted) = &expect.finish_reason {
            let got =
                of_type(&result.chunks, "finish").last().map(|chunk| chunk["finishReason"].clone());
            if got.as_ref().and_then(Value::as_str) != Some(wanted.as_str()) {
                problems.push(format!("finishReason: expected {wanted:?}, got {got:?}"));
            }
        }
        if let Some(ms) = expect.first_text_before_end_ms {
            match result.first_text_before_end {
                Some(gap) if gap >= Duration::from_millis(ms) => {}
                gap => problems.push(format!(
                    "the first text delta should arrive at least {ms} ms before the end; the gap was {gap:?}"
                )),
            }
        }
        if let Some(wanted) = &expect.body_includes {
            match &result.body {
                Some(body) if matches_partially(body, wanted) => {}
                body => problems.push(format!("the body {body:?} does not match {wanted}")),
            }
        }
        if let Some(wanted) = &expect.audit {
            let got = self.audit(&result.user);
            if got != *wanted {
                problems.push(format!(
                    "audit: expected {}, got {}",
                    audit_text(wanted),
                    audit_text(&got)
                ));
            }
        }
        if let Some(wanted) = expect.memory_facts {
            let uid = result.user.clone();
            let facts = self
                .orchestrator()
                .services()
                .memory
                .run_blocking(move |c| orchestrator::store::memory::list(c, &uid, 1000))
                .map(|facts| facts.len());
            if facts.as_ref().ok() != Some(&wanted) {
                problems.push(format!("memory facts: expected {wanted}, got {facts:?}"));
            }
        }
        if let Some(wanted) = expect.summary_upto {
            let conversation = result.conversation.clone().unwrap_or_else(|| "c-1".into());
            let got = self
                .orchestrator()
                .services()
                .chat
                .run_blocking(move |c| orchestrator::store::chat::latest_summary(c, &conversation))
                .map(|summary| summary.map(|(seq, _)| seq));
            if got.as_ref().ok() != Some(&Some(wanted)) {
                problems.push(format!("summary: expected one up to {wanted}, got {got:?}"));
            }
        }
        if let Some(wanted) = expect.index_queries {
            let got =
                self.mcp.as_ref().expect("mcp-nextcloud runs").index().store().run_blocking(|c| {
                    c.query_row("SELECT count(*) FROM queries", [], |row| row.get::<_, i64>(0))
                        .map_err(Into::into)
                });
            if got.as_ref().ok() != Some(&wanted) {
                problems.push(format!("index.db queries rows: expected {wanted}, got {got:?}"));
            }
        }
        if !expect.index_docs.is_empty() || expect.index_status.is_some() {
            self.check_index(expect, problems);
        }
        let requests: Vec<fake_model::RecordedRequest> =
            self.model.requests().into_iter().skip(result.model_requests_before).collect();
        if let Some(wanted) = expect.model_requests
            && requests.len() != wanted
        {
            problems.push(format!(
                "model requests in this step: expected {wanted}, got {}",
                requests.len()
            ));
        }
        if let Some(shown) = &expect.model_shown {
            check_model_shown(shown, &requests, problems);
        }
        if let Some(wanted) = &expect.nextcloud_state {
            let state = self.fake_state();
            if !matches_partially(&state, wanted) {
                problems
                    .push(format!("the fake Nextcloud's state {state} does not match {wanted}"));
            }
        }
    }

    fn check_index(&self, expect: &Expect, problems: &mut Vec<String>) {
        let Some(mcp) = &self.mcp else {
            problems.push("index expectations, but mcp-nextcloud does not run".into());
            return;
        };
        let rows = mcp.index().store().run_blocking(|connection| {
            let mut statement = connection.prepare(
                "SELECT path, mtime IS NOT NULL, dirty, attempts, status, last_error FROM docs",
            )?;
            let rows = statement.query_map([], |row| {
                Ok(json!({
                    "path": row.get::<_, String>(0)?,
                    "mtime_known": row.get::<_, bool>(1)?,
                    "dirty": row.get::<_, bool>(2)?,
                    "attempts": row.get::<_, i64>(3)?,
                    "status": row.get::<_, String>(4)?,
                    "last_error": row.get::<_, Option<String>>(5)?,
                }))
            })?;
            Ok(rows.collect::<Result<Vec<Value>, _>>()?)
        });
        let rows = match rows {
            Ok(rows) => rows,
            Err(error) => {
                problems.push(format!("index.db could not be read: {error}"));
                return;
            }
        };
        for wanted in &expect.index_docs {
            let row = rows.iter().find(|row| row["path"] == wanted["path"]);
            let absent = wanted["absent"] == Value::Bool(true);
            match (row, absent) {
                (None, true) => {}
                (Some(row), true) => problems.push(format!("index.db has a row {row}")),
                (None, false) => {
                    problems.push(format!("index.db has no row for {}", wanted["path"]))
                }
                (Some(row), false) if !matches_partially(row, wanted) => {
                    problems.push(format!("index.db row {row} does not match {wanted}"))
                }
                _ => {}
            }
        }
        if let Some(wanted) = &expect.index_status {
            let status =
                mcp.index().store().run_blocking(|c| mcp_nextcloud::index::store::status(c));
            match status {
                Ok(status) => {
                    let got = json!({
                        "known": status.known, "read": status.read, "pending": status.pending,
                        "failed": status.failed, "needs_ocr": status.needs_ocr,
                        "retrying": status.retrying,
                    });
                    if !matches_partially(&got, wanted) {
                        problems.push(format!("index status {got} does not match {wanted}"));
                    }
                }
                Err(error) => problems.push(format!("index status: {error}")),
            }
        }
    }

    fn audit(&self, uid: &str) -> Vec<AuditRow> {
        let uid = uid.to_string();
        self.orchestrator()
            .services()
            .audit
            .run_blocking(move |c| orchestrator::store::audit::calls_of(c, &uid))
            .unwrap_or_default()
            .into_iter()
            .map(|record| AuditRow { tool: record.tool, outcome: record.outcome })
            .collect()
    }

    /// A request to the fake Nextcloud's admin routes, with its token.
    fn nextcloud_admin(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let token = self.fake.admin_token().expect("the runner's fake has its admin routes on");
        self.http
            .request(method, format!("{}{path}", self.fake.base_url()))
            .header(fake_nextcloud::admin::TOKEN_HEADER, token)
    }

    /// A request to the fake model's admin routes, with its token.
    fn model_admin(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let token =
            self.model.admin_token().expect("the runner's fake model has its admin routes on");
        self.http
            .request(method, format!("{}{path}", self.model.url()))
            .header(fake_model::admin::TOKEN_HEADER, token)
    }

    fn fake_state(&self) -> Value {
        let request = self.nextcloud_admin(reqwest::Method::GET, "/__fake/state");
        // The checks are synchronous; one blocking call in place.
        tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current().block_on(async move {
                match request.send().await {
                    Ok(response) => response.json().await.unwrap_or(Value::Null),
                    Err(_) => Value::Null,
                }
            })
        })
    }
}

/// What every step checks whatever it expects: an error the user sees
/// always carries a request id (so the page shows it, and support can find
/// it in the logs).
fn check_invariants(action: &Action, result: &StepResult, problems: &mut Vec<String>) {
    let is_app_route = match action {
        Action::Ask { .. } | Action::Decide { .. } => true,
        Action::Http { path, .. } => path.contains("/apps/tamebi/"),
        _ => false,
    };
    if !is_app_route {
        return;
    }
    if let Some(body) = &result.body
        && body.get("error").is_some()
        && body["error"]["requestId"].as_str().is_none_or(|id| id.is_empty())
    {
        problems.push(format!("an error envelope without a requestId: {body}"));
    }
    for chunk in of_type(&result.chunks, "error") {
        let envelope: Value = serde_json::from_str(chunk["errorText"].as_str().unwrap_or_default())
            .unwrap_or_default();
        if envelope["requestId"].as_str().is_none_or(|id| id.is_empty()) {
            problems.push(format!("an error chunk without a requestId: {chunk}"));
        }
    }
}

fn check_model_shown(
    shown: &ModelShown,
    requests: &[fake_model::RecordedRequest],
    problems: &mut Vec<String>,
) {
    if let Some(wanted) = shown.some_not_streamed {
        let got = requests.iter().any(|request| !request.stream);
        if got != wanted {
            problems.push(format!("some request not streamed: expected {wanted}, got {got}"));
        }
    }
    let index =
        if shown.request < 0 { requests.len() as i64 + shown.request } else { shown.request };
    let Some(request) = usize::try_from(index).ok().and_then(|index| requests.get(index)) else {
        problems.push(format!(
            "model_shown: request {} does not exist; this step made {} model requests",
            shown.request,
            requests.len()
        ));
        return;
    };
    let body = &request.body;
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let content = |message: &Value| match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let system =
        messages.first().filter(|m| m["role"] == "system").map(content).unwrap_or_default();
    for wanted in &shown.system_contains {
        if !system.contains(wanted.as_str()) {
            problems.push(format!("the system prompt does not contain {wanted:?}:\n{system}"));
        }
    }
    for unwanted in &shown.system_excludes {
        if system.contains(unwanted.as_str()) {
            problems.push(format!("the system prompt contains {unwanted:?}"));
        }
    }
    let tools: Vec<String> = body["tools"]
        .as_array()
        .map(|tools| {
            tools.iter().filter_map(|t| t["function"]["name"].as_str().map(String::from)).collect()
        })
        .unwrap_or_default();
    for wanted in &shown.tools_include {
        if !tools.contains(wanted) {
            problems.push(format!("the tool {wanted} was not offered; offered: {tools:?}"));
        }
    }
    for unwanted in &shown.tools_exclude {
        if tools.contains(unwanted) {
            problems.push(format!("the tool {unwanted} was offered: {tools:?}"));
        }
    }
    if let Some(wanted) = &shown.tools_equal {
        let mut got = tools.clone();
        got.sort();
        let mut wanted = wanted.clone();
        wanted.sort();
        if got != wanted {
            problems.push(format!("tools offered: expected {wanted:?}, got {got:?}"));
        }
    }
    if let Some(wanted) = &shown.user_messages {
        let got: Vec<String> =
            messages.iter().filter(|m| m["role"] == "user").map(content).collect();
        if got != *wanted {
            problems.push(format!("user messages: expected {wanted:?}, got {got:?}"));
        }
    }
    let rest: Vec<String> =
        messages.iter().skip(1).map(|m| format!("{}: {}", m["role"], content(m))).collect();
    let rest = rest.join("\n");
    for wanted in &shown.messages_contain {
        if !rest.contains(wanted.as_str()) {
            problems.push(format!("no message contains {wanted:?}; the messages:\n{rest}"));
        }
    }
    for unwanted in &shown.messages_exclude {
        if rest.contains(unwanted.as_str()) {
            problems.push(format!("a message contains {unwanted:?}; the messages:\n{rest}"));
        }
    }
    if let Some(wanted) = shown.tool_results {
        let got = messages.iter().filter(|m| m["role"] == "tool").count();
        if got != wanted {
            problems.push(format!("tool results shown: expected {wanted}, got {got}"));
        }
    }
}

fn body_hint(result: &StepResult) -> String {
    match &result.body {
        Some(body) => format!(" (body {body})"),
        None => String::new(),
    }
}

fn error_message(result: &StepResult) -> Option<String> {
    if let Some(message) = result.body.as_ref().and_then(|body| body["error"]["message"].as_str()) {
        return Some(message.to_string());
    }
    of_type(&result.chunks, "error").last().map(|chunk| {
        let text = chunk["errorText"].as_str().unwrap_or_default();
        serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|envelope| envelope["message"].as_str().map(String::from))
            .unwrap_or_else(|| text.to_string())
    })
}

fn audit_text(rows: &[AuditRow]) -> String {
    let rows: Vec<String> =
        rows.iter().map(|row| format!("{} {}", row.tool, row.outcome)).collect();
    format!("[{}]", rows.join(", "))
}

/// `wanted` is a part of `value`: objects key by key, arrays element by
/// element (same length), everything else equal.
pub fn matches_partially(value: &Value, wanted: &Value) -> bool {
    match (value, wanted) {
        (Value::Object(value), Value::Object(wanted)) => wanted.iter().all(|(key, wanted)| {
            value.get(key).is_some_and(|value| matches_partially(value, wanted))
        }),
        (Value::Array(value), Value::Array(wanted)) => {
            value.len() == wanted.len()
                && value.iter().zip(wanted).all(|(value, wanted)| matches_partially(value, wanted))
        }
        (value, wanted) => value == wanted,
    }
}

fn frames(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|frame| frame.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| serde_json::from_str(data).unwrap_or(Value::String(data.to_string())))
        .collect()
}

fn of_type<'a>(chunks: &'a [Value], kind: &str) -> Vec<&'a Value> {
    chunks.iter().filter(|chunk| chunk["type"] == kind).collect()
}

fn text_of(chunks: &[Value]) -> String {
    of_type(chunks, "text-delta").iter().filter_map(|c| c["delta"].as_str()).collect()
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// What a tool step writes to the transcript. A files_grep answer says
/// whether the index was ready when the search ended, which races with the
/// pass the search itself started; its readiness (the `index` field and
/// the text, which words it) is left out so the snapshot is the same every
/// run. Expectations still see the whole answer.
fn settled_view(body: &Value) -> Value {
    let mut view = body.clone();
    if let Some(structured) = view.get_mut("structuredContent").and_then(Value::as_object_mut)
        && structured.remove("index").is_some()
        && let Some(object) = view.as_object_mut()
    {
        object.remove("content");
    }
    view
}

/// Seeds the generated files into the fake Nextcloud.
fn seed_corpus(fake: &FakeNextcloud, corpus: &[crate::format::Corpus]) {
    let mut world = fake.shared.world();
    for series in corpus {
        for number in 0..series.count {
            let fill = |template: &str| template.replace("{n}", &format!("{number:03}"));
            world.storage.seed_file(
                &series.owner,
                &fill(&series.path),
                fill(&series.text).into_bytes(),
                None,
                series.first_mtime + number as i64,
            );
        }
    }
}

/// The MCP servers check tokens against the fake Nextcloud's clock, so an
/// `advance_clock` step expires them as the same time passing would.
fn fake_clock(fake: &FakeNextcloud) -> mcp_auth::Clock {
    let shared = fake.shared.clone();
    mcp_auth::Clock::from_fn(move || shared.clock.now())
}

fn upstream_auth(setting: UpstreamSetting) -> mcp_nextcloud::UpstreamAuth {
    match setting {
        UpstreamSetting::SecondToken => {
            mcp_nextcloud::UpstreamAuth::SecondToken { nextcloud_audience: "nextcloud".into() }
        }
        UpstreamSetting::AppPassword => mcp_nextcloud::UpstreamAuth::AppPassword,
    }
}

/// mcp-nextcloud's converter for a setting: the fake's converter, with or
/// without the fixture's secret.
fn converter_config(
    fake: &FakeNextcloud,
    setting: ConverterSetting,
) -> Option<mcp_nextcloud::convert::ConverterConfig> {
    let secret = match setting {
        ConverterSetting::None => return None,
        ConverterSetting::WithSecret => fake.shared.world().server.converter_secret.clone(),
        ConverterSetting::WithoutSecret | ConverterSetting::Unreachable => None,
    };
    let url = match setting {
        // Port 9 (discard) on loopback: nothing listens there.
        ConverterSetting::Unreachable => "http://127.0.0.1:9".to_string(),
        _ => fake.converter_url().to_string(),
    };
    Some(mcp_nextcloud::convert::ConverterConfig {
        url,
        secret,
        lend_listen: "127.0.0.1:0".parse().expect("address"),
        lend_url: None,
    })
}

/// Registers mcp-nextcloud's webhook endpoint as `tamebi webhooks register`
/// does, with the fixture's first administrator.
async fn register_webhooks(
    fake: &FakeNextcloud,
    fixture: &fake_nextcloud::Fixture,
    endpoint: &str,
) -> Result<(), String> {
    let admin =
        fixture.users.iter().find(|user| user.groups.iter().any(|group| group == "admin")).ok_or(
            "[options] webhooks needs an administrator (a user in group \"admin\") in the fixture",
        )?;
    mcp_nextcloud::index::webhook::register(
        &reqwest::Client::new(),
        fake.base_url(),
        (&admin.uid, &admin.password),
        endpoint,
        WEBHOOK_SECRET,
    )
    .await
    .map(drop)
    .map_err(|error| format!("registering the webhooks: {error}"))
}
