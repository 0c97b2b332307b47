//! The runner: stands the whole system up for one scenario with
//! [`crate::harness`] (the fake Nextcloud with its Tamebi app,
//! mcp-nextcloud, mcp-mail, the scripted fake model, the orchestrator on a
//! fresh data directory), drives the steps through the app's routes like a
//! browser, checks every expectation and writes the normalised transcript.
//! What belongs to one scenario stays here: the pending approval requests,
//! the latest preview id, the transcript.
//!
//! A failed expectation does not stop the scenario: every failure is
//! collected, so one run shows all that is wrong.

use crate::format::{Action, Approve, AuditRow, Expect, ModelShown, Scenario};
use crate::harness::{Stack, WEBHOOK_SECRET};
use crate::normalise::Normaliser;
use crate::sse::{of_type, text_of};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

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
    match Runner::start(scenario).await {
        Err(error) => failures.push(format!("the stack did not start: {error}")),
        Ok(mut runner) => {
            for (index, step) in scenario.steps.iter().enumerate() {
                let label =
                    format!("step {} ({}, line {})", index + 1, step.action.kind(), step.line);
                let _ = writeln!(transcript.text, "\n## {label}");
                let mut problems = Vec::new();
                match runner.act(&step.action, &mut transcript).await {
                    Err(error) => problems.push(format!("could not run: {error}")),
                    Ok(result) => {
                        if let Err(error) = runner.settle().await {
                            problems.push(error);
                        }
                        runner.check(&step.action, &step.expect, &result, &mut problems)
                    }
                }
                failures.extend(problems.into_iter().map(|problem| format!("{label}: {problem}")));
            }
            runner.stack.shutdown().await;
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
    /// The model's embeddings log length before the step.
    model_embeddings_requests_before: usize,
    /// A tool step's text content (chat steps: the text deltas).
    tool_text: Option<String>,
}

/// One scenario's run: its stack and what its steps carry over.
struct Runner {
    stack: Stack,
    /// Whether webhooks are registered (and delivered when a step settles).
    webhooks: bool,
    /// The latest approval requests per conversation.
    pending: HashMap<String, Vec<Value>>,
    preview_id: Option<String>,
}

impl Runner {
    async fn start(scenario: &Scenario) -> Result<Runner, String> {
        let options = &scenario.options;
        let mut fixture = scenario.fixture.clone();
        let mut builder = Stack::builder();
        if options.webhooks {
            // Delivered when the runner flushes them after each step, so a
            // step's uploads have reached the index before its checks.
            fixture.webhooks.delivery = fake_nextcloud::webhooks::Delivery::OnDemand;
            builder = builder.webhooks();
        }
        if let Some(embeddings) = options.embeddings {
            builder = builder.embeddings(embeddings.fusion);
        }
        let servers: Vec<&str> = options.mcp_servers.iter().map(String::as_str).collect();
        let stack = builder
            .fixture(fixture)
            .corpus(scenario.corpus.clone())
            .app(fake_nextcloud::AppConfig {
                renew_margin_s: options.renew_margin_s,
                ..fake_nextcloud::AppConfig::default()
            })
            .model_script(&scenario.model_script)
            .upstream(options.upstream)
            .converter(options.converter)
            .index_limits(options.index_limits)
            .orchestrator_servers(&servers)
            .window_tokens(options.window_tokens)
            .temp_data_dir(&scenario.name)
            .start()
            .await?;
        Ok(Runner { stack, webhooks: options.webhooks, pending: HashMap::new(), preview_id: None })
    }

    /// Runs one step: what it sends, written to the transcript, and what
    /// came back.
    async fn act(
        &mut self,
        action: &Action,
        transcript: &mut Transcript,
    ) -> Result<StepResult, String> {
        let mut result = StepResult {
            model_requests_before: self.stack.model().requests().len(),
            model_embeddings_requests_before: self.stack.model().embeddings_requests().len(),
            ..Default::default()
        };
        match action {
            Action::Ask { user, conversation, text, metadata, .. } => {
                transcript.line(&format!("{user} asks in {conversation}: {text}"));
                let mut body = crate::browser::question(conversation, text);
                if let Some(metadata) = metadata {
                    body["message"]["metadata"] = metadata.clone();
                }
                self.chat(user, conversation, &body, &mut result, transcript).await?;
            }
            Action::Decide { user, conversation, approve, .. } => {
                self.decide(user, conversation, approve, &mut result, transcript).await?
            }
            Action::Http { method, path, auth, user, headers, body, .. } => {
                let request = HttpStep { method, path, auth, user, headers, body: body.as_ref() };
                self.http(request, &mut result, transcript).await?
            }
            Action::NextcloudFaults { faults, .. } => {
                transcript.line(&format!("nextcloud faults: {faults}"));
                self.stack.nextcloud_faults(faults).await?;
            }
            Action::ModelFaults { faults, .. } => {
                transcript.line(&format!("model faults: {faults}"));
                self.stack.model_faults(faults).await?;
            }
            Action::AdvanceClock { seconds, .. } => {
                transcript.line(&format!("clock +{seconds} s"));
                self.stack.advance_clock(*seconds).await?;
            }
            Action::Wait { ms, .. } => {
                transcript.line(&format!("wait {ms} ms"));
                tokio::time::sleep(Duration::from_millis(*ms)).await;
            }
            Action::EndSession { user, .. } => {
                transcript.line(&format!("{user}'s session ends"));
                self.stack.end_session(user).await?;
            }
            Action::RestartOrchestrator { .. } => {
                transcript.line("the orchestrator restarts");
                self.stack.restart_orchestrator().await?;
            }
            Action::Tool { server, name, arguments, user, .. } => {
                transcript.line(&format!("{user} calls {server} {name} {arguments}"));
                self.tool(server, user, name, arguments, &mut result, transcript).await?
            }
            Action::Webhook { event, user, path, to, fileid, secret, .. } => {
                let webhook = WebhookStep {
                    event,
                    user,
                    path,
                    to: to.as_deref(),
                    fileid: *fileid,
                    secret: secret.as_deref(),
                };
                self.webhook(webhook, &mut result, transcript).await?
            }
            Action::StopMcpNextcloud { .. } => {
                transcript.line("mcp-nextcloud stops");
                self.stack.stop_mcp_nextcloud().await;
            }
            Action::RestartMcpNextcloud { converter, upstream, .. } => {
                transcript.line("mcp-nextcloud restarts");
                self.stack.restart_mcp_nextcloud(*converter, *upstream).await?;
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

    /// Answers the pending approval requests of the conversation as the page
    /// does: the last message only, trimmed to the decisions.
    async fn decide(
        &mut self,
        user: &str,
        conversation: &str,
        approve: &Approve,
        result: &mut StepResult,
        transcript: &mut Transcript,
    ) -> Result<(), String> {
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
        let decided: Vec<(&Value, bool)> = requests.iter().zip(decisions).collect();
        let body = crate::browser::decision(conversation, &decided);
        self.chat(user, conversation, &body, result, transcript).await
    }

    /// A plain HTTP request to the fake Nextcloud, signed in as the step says.
    async fn http(
        &mut self,
        step: HttpStep<'_>,
        result: &mut StepResult,
        transcript: &mut Transcript,
    ) -> Result<(), String> {
        let HttpStep { method, path, auth, user, headers, body } = step;
        // The template goes to the transcript: the id changes every run.
        transcript.line(&format!("{method} {path} as {auth} {user}"));
        let path = match &self.preview_id {
            Some(id) => path.replace("{previewId}", id),
            None => path.to_string(),
        };
        let method = reqwest::Method::from_bytes(method.as_bytes())
            .map_err(|_| format!("{method:?} is not an HTTP method"))?;
        let url = format!("{}{path}", self.stack.fake.base_url());
        let mut request = self.stack.http.request(method, url);
        match auth {
            "browser" => {
                let session = self.stack.browser(user).await?.session;
                request = request
                    .header("Cookie", session.cookies)
                    .header("requesttoken", session.request_token);
            }
            "basic" => request = request.basic_auth(user, Some(self.stack.password(user))),
            "bearer" => request = request.bearer_auth(self.stack.token(user, "nextcloud")),
            "admin" => {
                let token = self
                    .stack
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
        result.user = user.to_string();
        Ok(())
    }

    /// One MCP tool call as the user.
    async fn tool(
        &mut self,
        server: &str,
        user: &str,
        name: &str,
        arguments: &Value,
        result: &mut StepResult,
        transcript: &mut Transcript,
    ) -> Result<(), String> {
        let (status, body) = self.stack.call_tool(server, user, name, arguments).await?;
        result.status = Some(status);
        transcript.line(&format!("status {status}"));
        transcript.value(&settled_view(&body));
        let texts = body["content"].as_array().into_iter().flatten();
        result.tool_text = Some(texts.filter_map(|content| content["text"].as_str()).collect());
        result.body = Some(body);
        result.user = user.to_string();
        Ok(())
    }

    /// A webhook call to mcp-nextcloud as Nextcloud's webhook_listeners
    /// makes it.
    async fn webhook(
        &mut self,
        step: WebhookStep<'_>,
        result: &mut StepResult,
        transcript: &mut Transcript,
    ) -> Result<(), String> {
        let WebhookStep { event, user, path, to, fileid, secret } = step;
        transcript.line(&format!(
            "webhook {event} {user}/{path}{}",
            to.map(|to| format!(" -> {to}")).unwrap_or_default()
        ));
        let fileid = match fileid {
            Some(fileid) => fileid,
            None => {
                let world = self.stack.fake.shared.world();
                let node = world.storage.node_at(user, to.unwrap_or(path));
                node.map(|node| node.id)
                    .ok_or_else(|| format!("{user} has no file {path:?}: give its `fileid`"))?
            }
        };
        let class = match event {
            "written" => mcp_nextcloud::index::webhook::NODE_WRITTEN,
            "created" => mcp_nextcloud::index::webhook::NODE_CREATED,
            "deleted" => mcp_nextcloud::index::webhook::NODE_DELETED,
            _ => mcp_nextcloud::index::webhook::NODE_RENAMED,
        };
        let node = |path: &str| json!({"id": fileid, "path": format!("/{user}/files/{path}")});
        let mut event = json!({"class": class});
        match to {
            Some(to) => {
                event["source"] = node(path);
                event["target"] = node(to);
            }
            None => event["node"] = node(path),
        }
        let base = self.stack.mcp_nextcloud_url().ok_or("this stack runs no mcp-nextcloud")?;
        let mut request = self.stack.http.post(format!("{base}/webhooks/nextcloud")).json(&json!({
            "event": event, "user": {"uid": user, "displayName": user},
        }));
        match secret {
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
        Ok(())
    }

    /// Erases as `tamebi erase` does: its own connections to the files.
    async fn erase(&self, uid: &str, agent_facts: bool) -> Result<String, String> {
        use orchestrator::store::{chat, memory};
        let data_dir = self.stack.data_dir().ok_or("the orchestrator keeps no files")?;
        let memory_db = memory::open(Some(&data_dir.join("memory.db")))
            .map_err(|error| format!("memory.db: {error}"))?;
        let who = uid.to_string();
        if agent_facts {
            let purged = memory_db
                .run(move |c| memory::purge_agent_facts(c, Some(&who)))
                .await
                .map_err(|error| error.to_string())?;
            return Ok(format!("{purged} agent fact(s) removed"));
        }
        let chat_db = chat::open(Some(&data_dir.join("chat.db")))
            .map_err(|error| format!("chat.db: {error}"))?;
        let conversations =
            chat_db.run(move |c| chat::erase_user(c, &who)).await.map_err(|e| e.to_string())?;
        let who = uid.to_string();
        let facts =
            memory_db.run(move |c| memory::erase_user(c, &who)).await.map_err(|e| e.to_string())?;
        Ok(format!("{conversations} conversation(s) and {facts} fact(s) erased"))
    }

    /// Lets what a step started finish before its checks: queued webhook
    /// calls are delivered, and the index passes they and the searches
    /// started have ended, the embedding that follows a pass included.
    async fn settle(&self) -> Result<(), String> {
        if self.webhooks {
            self.stack.flush_webhooks().await?;
        }
        let Some(mcp) = self.stack.mcp_running() else {
            return Ok(());
        };
        mcp.index().idle().await;
        Ok(())
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
        let browser = self.stack.browser(user).await?;
        let started = Instant::now();
        let response = browser.post_chat(body).await?;
        let status = response.status().as_u16();
        let crate::sse::Timed { text: seen, first: first_text, whole: total } =
            crate::sse::read_timed(response, started, "\"text-delta\"")
                .await
                .map_err(|error| format!("the stream broke: {error}"))?;
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
        result.chunks = crate::sse::chunks(&seen);
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
                .stack
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
                .stack
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
                self.stack.mcp_running().expect("mcp-nextcloud runs").index().store().run_blocking(
                    |c| {
                        c.query_row("SELECT count(*) FROM queries", [], |row| row.get::<_, i64>(0))
                            .map_err(Into::into)
                    },
                );
            if got.as_ref().ok() != Some(&wanted) {
                problems.push(format!("index.db queries rows: expected {wanted}, got {got:?}"));
            }
        }
        if !expect.index_docs.is_empty() || expect.index_status.is_some() {
            self.check_index(expect, problems);
        }
        let requests: Vec<fake_model::RecordedRequest> =
            self.stack.model().requests().into_iter().skip(result.model_requests_before).collect();
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
        if let Some(wanted) = expect.model_embeddings_requests {
            let got = self.stack.model().embeddings_requests().len()
                - result.model_embeddings_requests_before;
            if got != wanted {
                problems.push(format!(
                    "embeddings requests in this step: expected {wanted}, got {got}"
                ));
            }
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
        let Some(mcp) = self.stack.mcp_running() else {
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
                        "retrying": status.retrying, "passages": status.passages,
                        "embedded": status.embedded,
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
        self.stack
            .orchestrator()
            .services()
            .audit
            .run_blocking(move |c| orchestrator::store::audit::calls_of(c, &uid))
            .unwrap_or_default()
            .into_iter()
            .map(|record| AuditRow { tool: record.tool, outcome: record.outcome })
            .collect()
    }

    fn fake_state(&self) -> Value {
        // The checks are synchronous; one blocking call in place.
        tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current().block_on(self.stack.fake_state())
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
    let tools: Vec<String> = body["tools"]
        .as_array()
        .map(|tools| {
            tools.iter().filter_map(|t| t["function"]["name"].as_str().map(String::from)).collect()
        })
        .unwrap_or_default();
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
        // What the user wrote: the orchestrator's environment block is left out.
        let got: Vec<String> = messages
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| fake_model::request::without_environment(&content(m)))
            .collect();
        if got != *wanted {
            problems.push(format!("user messages: expected {wanted:?}, got {got:?}"));
        }
    }
    let rest: Vec<String> =
        messages.iter().skip(1).map(|m| format!("{}: {}", m["role"], content(m))).collect();
    let rest = rest.join("\n");
    let offered = |name: &str| tools.iter().any(|tool| tool == name);
    // Each list of the expectation, what must hold of each entry, and the
    // problem when it does not.
    type Check<'a> = (&'a [String], &'a dyn Fn(&str) -> bool, &'a dyn Fn(&str) -> String);
    let checks: [Check; 6] = [
        (&shown.system_contains, &|wanted| system.contains(wanted), &|wanted| {
            format!("the system prompt does not contain {wanted:?}:\n{system}")
        }),
        (&shown.system_excludes, &|unwanted| !system.contains(unwanted), &|unwanted| {
            format!("the system prompt contains {unwanted:?}")
        }),
        (&shown.tools_include, &offered, &|wanted| {
            format!("the tool {wanted} was not offered; offered: {tools:?}")
        }),
        (&shown.tools_exclude, &|unwanted| !offered(unwanted), &|unwanted| {
            format!("the tool {unwanted} was offered: {tools:?}")
        }),
        (&shown.messages_contain, &|wanted| rest.contains(wanted), &|wanted| {
            format!("no message contains {wanted:?}; the messages:\n{rest}")
        }),
        (&shown.messages_exclude, &|unwanted| !rest.contains(unwanted), &|unwanted| {
            format!("a message contains {unwanted:?}; the messages:\n{rest}")
        }),
    ];
    for (entries, holds, problem) in checks {
        for entry in entries {
            if !holds(entry) {
                problems.push(problem(entry));
            }
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

/// An `http` step's request.
struct HttpStep<'a> {
    method: &'a str,
    path: &'a str,
    auth: &'a str,
    user: &'a str,
    headers: &'a std::collections::BTreeMap<String, String>,
    body: Option<&'a Value>,
}

/// A `webhook` step's call.
struct WebhookStep<'a> {
    event: &'a str,
    user: &'a str,
    path: &'a str,
    to: Option<&'a str>,
    fileid: Option<u64>,
    secret: Option<&'a str>,
}
