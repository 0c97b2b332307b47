//! Running one task: a fresh stack on the eval world, the question asked
//! as the user's browser asks it, each approval card decided as the task
//! says, and the checks on what the turn left behind.

use super::check::{self, Turn};
use super::task::{Kind, Task};
use super::timing::TimingProxy;
use super::world;
use crate::harness::Stack;
use crate::sse::of_type;
use fake_nextcloud::Fixture;
use orchestrator::model::ModelConfig;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// A bound on approve-then-continue rounds in one task.
const DECISION_ROUNDS_MAX: usize = 6;

/// Who answers the tasks.
#[derive(Debug, Clone)]
pub enum Model {
    /// Each task's own script on the fake model: the right one, or the
    /// negative control.
    Scripted { wrong: bool },
    /// An OpenAI-compatible endpoint (`base_url` with its `/v1`).
    Endpoint(ModelConfig),
}

impl Model {
    pub fn describe(&self) -> String {
        match self {
            Model::Scripted { wrong: false } => "scripted (the right scripts)".to_string(),
            Model::Scripted { wrong: true } => "scripted (the negative controls)".to_string(),
            Model::Endpoint(config) => format!("{} at {}", config.model, config.base_url),
        }
    }
}

/// What one task came to.
#[derive(Debug, Clone, Serialize)]
pub struct TaskResult {
    pub id: String,
    pub kind: Kind,
    pub language: String,
    pub passed: bool,
    /// Why it failed (empty when it passed).
    pub problems: Vec<String>,
    /// Breaches of what must hold whatever the model does: every post
    /// answered 200 and ended, a readable last message, no call markup
    /// shown, no effect without an approval.
    pub hygiene: Vec<String>,
    /// Model requests (the orchestrator's steps, retries included).
    pub steps: usize,
    pub tool_calls: usize,
    pub approvals_asked: usize,
    /// (tool, what it said) for each call that failed.
    pub tool_errors: Vec<(String, String)>,
    pub model_seconds: f64,
    pub total_seconds: f64,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    /// The answer's text, every round together.
    pub answer: String,
}

impl TaskResult {
    /// The turn's time that was not the model's.
    pub fn tamebi_seconds(&self) -> f64 {
        (self.total_seconds - self.model_seconds).max(0.0)
    }

    fn broken(task: &Task, problem: String) -> TaskResult {
        TaskResult {
            id: task.id.clone(),
            kind: task.kind,
            language: task.language.clone(),
            passed: false,
            problems: vec![problem.clone()],
            hygiene: vec![problem],
            steps: 0,
            tool_calls: 0,
            approvals_asked: 0,
            tool_errors: Vec::new(),
            model_seconds: 0.0,
            total_seconds: 0.0,
            prompt_tokens: None,
            completion_tokens: None,
            answer: String::new(),
        }
    }
}

/// Runs `task` on a fresh stack over `fixture`; a stack that does not
/// start is a failed task with its reason, not an abort of the suite.
pub async fn run_task(
    task: &Task,
    fixture: &Fixture,
    model: &Model,
    window_tokens: usize,
) -> TaskResult {
    match try_run(task, fixture, model, window_tokens).await {
        Ok(result) => result,
        Err(problem) => TaskResult::broken(task, problem),
    }
}

async fn try_run(
    task: &Task,
    fixture: &Fixture,
    model: &Model,
    window_tokens: usize,
) -> Result<TaskResult, String> {
    let (fake_model, config) = match model {
        Model::Scripted { wrong } => {
            let script = super::task::script_of(if *wrong { &task.wrong } else { &task.model })?;
            let fake = crate::harness::start_fake_model(script).await?;
            let config = crate::harness::fake_model_config(&fake);
            (Some(fake), config)
        }
        Model::Endpoint(config) => (None, config.clone()),
    };
    let (origin, path) = split_origin(&config.base_url);
    let proxy = TimingProxy::start(origin, Duration::from_millis(config.read_timeout_ms)).await?;
    let mut proxied = config.clone();
    proxied.base_url = format!("{}{path}", proxy.url());
    let outcome = async {
        let mut stack = Stack::builder()
            .fixture(fixture.clone())
            .model_endpoint(proxied)
            .window_tokens(window_tokens)
            .start()
            .await?;
        let silence = Duration::from_millis(config.read_timeout_ms);
        let outcome = drive(task, &mut stack, &proxy, silence).await;
        stack.shutdown().await;
        outcome
    }
    .await;
    proxy.shutdown().await;
    if let Some(fake) = fake_model {
        fake.shutdown().await;
    }
    outcome
}

/// `http://host:port` and the rest (`/v1`) of a base URL.
fn split_origin(base_url: &str) -> (&str, &str) {
    let after_scheme = base_url.find("://").map(|at| at + 3).unwrap_or(0);
    match base_url[after_scheme..].find('/') {
        Some(at) => base_url.split_at(after_scheme + at),
        None => (base_url, ""),
    }
}

async fn drive(
    task: &Task,
    stack: &mut Stack,
    proxy: &TimingProxy,
    silence: Duration,
) -> Result<TaskResult, String> {
    let users = [task.user.as_str()];
    // A deployed index has read the drive long before the question: the
    // user's first search starts the pass, and the task waits for it.
    stack
        .call_tool("nextcloud", &task.user, "files_grep", &serde_json::json!({"query": "a"}))
        .await?;
    if let Some(mcp) = stack.mcp_running() {
        mcp.index().idle().await;
    }
    let before = world::digest(stack, &users).await?;
    // The harness's browser gives a whole request a minute; a real model
    // may think longer than that, so this one only bounds silence, by
    // more than the orchestrator waits for the model (it speaks first).
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .read_timeout(silence + Duration::from_secs(30))
        .build()
        .map_err(|error| error.to_string())?;
    let password = stack.password(&task.user);
    let browser =
        crate::browser::Browser::login(&http, stack.fake.base_url(), &task.user, &password)
            .await
            .map_err(|error| format!("login of {}: {error}", task.user))?;
    let conversation = format!("eval-{}", task.id);
    let started = Instant::now();
    let mut turn = Turn::default();
    let mut body = crate::browser::question(&conversation, &task.question);
    for _ in 0..DECISION_ROUNDS_MAX {
        let (status, chunks) = browser.chat(&body).await?;
        let names: HashMap<String, (String, Value)> = of_type(&chunks, "tool-input-available")
            .into_iter()
            .map(|chunk| {
                let id = chunk["toolCallId"].as_str().unwrap_or("").to_string();
                let name = chunk["toolName"].as_str().unwrap_or("").to_string();
                (id, (name, chunk["input"].clone()))
            })
            .collect();
        let requests: Vec<Value> =
            of_type(&chunks, "tool-approval-request").into_iter().cloned().collect();
        turn.record(status, &chunks);
        if status != 200 || requests.is_empty() {
            break;
        }
        let decisions: Vec<(&Value, bool)> = requests
            .iter()
            .map(|request| {
                let id = request["toolCallId"].as_str().unwrap_or("");
                let (name, input) = names.get(id).cloned().unwrap_or_default();
                let approved = task.approve.contains(&name);
                turn.decided(&name, &input, approved);
                (request, approved)
            })
            .collect();
        body = crate::browser::decision(&conversation, &decisions);
    }
    let total_seconds = started.elapsed().as_secs_f64();
    let after = world::digest(stack, &users).await?;
    let calls = proxy.take();
    // Requests that failed report no usage; the rest still count.
    let sum = |tokens: fn(&super::timing::ModelCall) -> Option<u64>| {
        calls.iter().filter_map(tokens).reduce(|all, one| all + one)
    };
    let verdict = check::judge(task, &turn, &before, &after);
    Ok(TaskResult {
        id: task.id.clone(),
        kind: task.kind,
        language: task.language.clone(),
        passed: verdict.problems.is_empty() && verdict.hygiene.is_empty(),
        problems: verdict.problems,
        hygiene: verdict.hygiene,
        steps: calls.len(),
        tool_calls: turn.tool_calls.len(),
        approvals_asked: turn.decisions.len(),
        tool_errors: turn.tool_errors.clone(),
        model_seconds: calls.iter().map(|call| call.seconds).sum(),
        total_seconds,
        prompt_tokens: sum(|call| call.prompt_tokens),
        completion_tokens: sum(|call| call.completion_tokens),
        answer: turn.answer(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_splits_at_its_path() {
        assert_eq!(split_origin("http://127.0.0.1:8081/v1"), ("http://127.0.0.1:8081", "/v1"));
        assert_eq!(split_origin("https://api.example/v1/"), ("https://api.example", "/v1/"));
        assert_eq!(split_origin("http://localhost:11434"), ("http://localhost:11434", ""));
    }
}
