//! The scenario file format (docs/scenarios.md): raw serde types read from
//! TOML with their spans, then checked into a [`Scenario`] the runner uses.
//!
//! Every problem is reported with the file, the line and what was expected;
//! TOML syntax and unknown keys come from `toml`'s own spanned errors, the
//! semantic checks (a fixture that does not load, a model script the fake
//! model refuses, a decision with no question before it) from the spans kept
//! here.

use mcp_nextcloud::index::search::Fusion;
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// A checked scenario, ready to run.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The file name without `.toml`: the test's and the snapshot's name.
    pub name: String,
    pub path: PathBuf,
    pub description: String,
    pub fixture: fake_nextcloud::Fixture,
    /// The fake model's script, as TOML text (fake-model's format).
    pub model_script: String,
    pub options: Options,
    /// Generated files seeded into the fake Nextcloud before the first step.
    pub corpus: Vec<Corpus>,
    pub steps: Vec<Step>,
}

/// Settings of the stack that a scenario may change.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// The model's context window in tokens (summaries start at half).
    #[serde(default = "window_tokens_default")]
    pub window_tokens: usize,
    /// The app renews a cached token expiring within this many seconds.
    #[serde(default = "renew_margin_s_default")]
    pub renew_margin_s: i64,
    /// The MCP servers the orchestrator is configured with (`nextcloud`,
    /// `mail`); the others are not offered at all.
    #[serde(default = "mcp_servers_default")]
    pub mcp_servers: Vec<String>,
    /// mcp-nextcloud's index bounds, each optional (its defaults otherwise).
    #[serde(default)]
    pub index_limits: IndexLimits,
    /// Register webhook_listeners webhooks for mcp-nextcloud's endpoint (as
    /// `tamebi webhooks register` does), so that uploads reach the index.
    #[serde(default)]
    pub webhooks: bool,
    /// The OnlyOffice-style converter mcp-nextcloud is given.
    #[serde(default)]
    pub converter: ConverterSetting,
    /// How mcp-nextcloud signs in to Nextcloud.
    #[serde(default)]
    pub upstream: UpstreamSetting,
    /// mcp-nextcloud embeds passages through the scenario's own fake model
    /// (off by default).
    #[serde(default)]
    pub embeddings: Option<EmbeddingsSetting>,
}

/// mcp-nextcloud's embeddings (`tamebi mcp-nextcloud --embeddings-*`),
/// pointed at the scenario's fake model: its `/v1/embeddings` answers with
/// a hashed bag of words, deterministic and not semantic
/// (docs/fake-model.md), so a scenario shows the plumbing, never retrieval
/// quality.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingsSetting {
    /// How files_grep combines words and meaning, by its
    /// `--embeddings-fusion` name (default `fused`).
    #[serde(default, deserialize_with = "fusion_by_name")]
    pub fusion: Fusion,
}

/// mcp-nextcloud's `--upstream` (docs/mcp-nextcloud.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UpstreamSetting {
    /// A second token of the user, for Nextcloud's audience.
    #[default]
    SecondToken,
    /// The app password the user saved in the Tamebi app.
    AppPassword,
}

/// The bounds of an index pass (docs/mcp-nextcloud.md), each optional.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexLimits {
    /// Documents read per pass (default 20).
    pub pass_documents: Option<usize>,
    /// Files per discovery page (default 500)...
    pub discovery_page: Option<usize>,
    /// ...and discovery pages per pass (default 4).
    pub discovery_pages: Option<usize>,
}

/// Whether mcp-nextcloud has the fake's document converter, and its secret.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConverterSetting {
    /// No converter: formats only it reads stay unread.
    #[default]
    None,
    /// The converter with the fixture's `server.converter_secret`.
    WithSecret,
    /// The converter without a secret (the seeds' misconfiguration).
    WithoutSecret,
    /// A converter URL where nothing listens (the document server is down).
    Unreachable,
}

/// `count` generated files of one owner: `{n}` in `path` and `text` is the
/// file's number (0-based, three digits); file `n` is modified at
/// `first_mtime + n`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Corpus {
    pub owner: String,
    pub count: usize,
    pub path: String,
    pub text: String,
    #[serde(default = "first_mtime_default")]
    pub first_mtime: i64,
}

fn first_mtime_default() -> i64 {
    1_600_000_000
}

impl Default for Options {
    fn default() -> Options {
        Options {
            window_tokens: window_tokens_default(),
            renew_margin_s: renew_margin_s_default(),
            mcp_servers: mcp_servers_default(),
            index_limits: IndexLimits::default(),
            webhooks: false,
            converter: ConverterSetting::None,
            upstream: UpstreamSetting::SecondToken,
            embeddings: None,
        }
    }
}

/// A fusion by its name; an unknown name is refused with the known ones.
fn fusion_by_name<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Fusion, D::Error> {
    let name = String::deserialize(deserializer)?;
    Fusion::parse(&name).ok_or_else(|| {
        serde::de::Error::custom(format!(
            "fusion = {name:?}: expected one of {:?}",
            Fusion::names()
        ))
    })
}

fn window_tokens_default() -> usize {
    100_000
}

fn renew_margin_s_default() -> i64 {
    120
}

fn mcp_servers_default() -> Vec<String> {
    vec!["nextcloud".to_string(), "mail".to_string()]
}

/// One step: what is done, and what must then hold.
#[derive(Debug, Clone)]
pub struct Step {
    /// 1-based line of the step's table in the file.
    pub line: usize,
    pub action: Action,
    pub expect: Expect,
}

/// What a step does.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// A user's message posted to the app's chat endpoint by their browser.
    Ask {
        #[serde(default = "user_default")]
        user: String,
        #[serde(default = "conversation_default")]
        conversation: String,
        text: String,
        /// Added to the message as its `metadata` (e.g. a forged `uid`).
        #[serde(default)]
        metadata: Option<Value>,
        #[serde(default)]
        expect: Expect,
    },
    /// The user's decisions on the approval requests of the conversation's
    /// latest answer that had any: `approve = true` (all), `false` (none)
    /// or one boolean per request, in order.
    Decide {
        #[serde(default = "user_default")]
        user: String,
        #[serde(default = "conversation_default")]
        conversation: String,
        approve: Approve,
        #[serde(default)]
        expect: Expect,
    },
    /// Any HTTP request to the fake Nextcloud (its DAV, OCS, app routes or
    /// `/__fake/` admin routes). `{previewId}` in the path is the last mail
    /// preview a tool produced.
    Http {
        #[serde(default = "method_default")]
        method: String,
        path: String,
        /// `browser` (session cookies and request token), `basic` (the
        /// user's password from the fixture), `bearer` (a valid token of
        /// the user minted for Nextcloud's audience), `admin` (the fake's
        /// admin token, for `/__fake/` routes, which refuse anything else)
        /// or `none`.
        #[serde(default = "auth_default")]
        auth: String,
        /// Extra request headers (e.g. `OCS-APIRequest = "true"`).
        #[serde(default)]
        headers: std::collections::BTreeMap<String, String>,
        #[serde(default = "user_default")]
        user: String,
        /// JSON body (a table), or text (a string).
        #[serde(default)]
        body: Option<Value>,
        #[serde(default)]
        expect: Expect,
    },
    /// Replace the fake Nextcloud's faults (`PUT /__fake/faults`).
    NextcloudFaults {
        faults: Value,
        #[serde(default)]
        expect: Expect,
    },
    /// Replace the fake model's global faults.
    ModelFaults {
        faults: Value,
        #[serde(default)]
        expect: Expect,
    },
    /// Move the fake Nextcloud's clock.
    AdvanceClock {
        seconds: i64,
        #[serde(default)]
        expect: Expect,
    },
    /// Wait in real time (tokens are checked against the real clock by the
    /// MCP servers).
    Wait {
        ms: u64,
        #[serde(default)]
        expect: Expect,
    },
    /// End the user's browser sessions.
    EndSession {
        #[serde(default = "user_default")]
        user: String,
        #[serde(default)]
        expect: Expect,
    },
    /// Stop the orchestrator and start it again on the same data directory.
    RestartOrchestrator {
        #[serde(default)]
        expect: Expect,
    },
    /// Call one MCP tool directly as the user (tokens minted as the app
    /// would get them), without the orchestrator or the model.
    Tool {
        #[serde(default = "server_default")]
        server: String,
        name: String,
        #[serde(default = "empty_object")]
        arguments: Value,
        #[serde(default = "user_default")]
        user: String,
        #[serde(default)]
        expect: Expect,
    },
    /// A webhook_listeners delivery to mcp-nextcloud's endpoint about one
    /// of the user's files: `event` is `written`, `created`, `deleted` or
    /// `renamed` (then `to` is the new path). `secret` replaces the right
    /// one (`""`: no secret header).
    Webhook {
        event: String,
        #[serde(default = "user_default")]
        user: String,
        path: String,
        #[serde(default)]
        to: Option<String>,
        /// The file's id; looked up by path in the fake when left out.
        #[serde(default)]
        fileid: Option<u64>,
        #[serde(default)]
        secret: Option<String>,
        #[serde(default)]
        expect: Expect,
    },
    /// Stop mcp-nextcloud and start it again on the same index.db,
    /// optionally with another converter or upstream setting.
    RestartMcpNextcloud {
        #[serde(default)]
        converter: Option<ConverterSetting>,
        #[serde(default)]
        upstream: Option<UpstreamSetting>,
        #[serde(default)]
        expect: Expect,
    },
    /// Stop mcp-nextcloud (once its passes end) until a
    /// `restart_mcp_nextcloud` step: the workspace is down meanwhile.
    StopMcpNextcloud {
        #[serde(default)]
        expect: Expect,
    },
    /// What `tamebi erase --uid USER` does to the orchestrator's databases
    /// (with `agent_facts`: `tamebi erase --uid USER --agent-facts`), on
    /// their files while the orchestrator runs.
    Erase {
        #[serde(default = "user_default")]
        user: String,
        #[serde(default)]
        agent_facts: bool,
        #[serde(default)]
        expect: Expect,
    },
    /// Only check expectations (the state after the previous steps).
    Check {
        #[serde(default)]
        expect: Expect,
    },
}

impl Action {
    pub fn expect(&self) -> &Expect {
        match self {
            Action::Ask { expect, .. }
            | Action::Decide { expect, .. }
            | Action::Http { expect, .. }
            | Action::NextcloudFaults { expect, .. }
            | Action::ModelFaults { expect, .. }
            | Action::AdvanceClock { expect, .. }
            | Action::Wait { expect, .. }
            | Action::EndSession { expect, .. }
            | Action::RestartOrchestrator { expect, .. }
            | Action::Tool { expect, .. }
            | Action::Webhook { expect, .. }
            | Action::RestartMcpNextcloud { expect, .. }
            | Action::StopMcpNextcloud { expect, .. }
            | Action::Erase { expect, .. }
            | Action::Check { expect, .. } => expect,
        }
    }

    /// The step's kind as written in the file.
    pub fn kind(&self) -> &'static str {
        match self {
            Action::Ask { .. } => "ask",
            Action::Decide { .. } => "decide",
            Action::Http { .. } => "http",
            Action::NextcloudFaults { .. } => "nextcloud_faults",
            Action::ModelFaults { .. } => "model_faults",
            Action::AdvanceClock { .. } => "advance_clock",
            Action::Wait { .. } => "wait",
            Action::EndSession { .. } => "end_session",
            Action::RestartOrchestrator { .. } => "restart_orchestrator",
            Action::Tool { .. } => "tool",
            Action::Webhook { .. } => "webhook",
            Action::RestartMcpNextcloud { .. } => "restart_mcp_nextcloud",
            Action::StopMcpNextcloud { .. } => "stop_mcp_nextcloud",
            Action::Erase { .. } => "erase",
            Action::Check { .. } => "check",
        }
    }
}

/// Decisions on pending approval requests.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Approve {
    All(bool),
    Each(Vec<bool>),
}

/// What must hold after a step. Every field is optional; an empty table
/// checks only the invariants every step checks (an error envelope carries
/// a request id).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The HTTP status of the step's request.
    pub status: Option<u16>,
    /// Each entry matches at least one chunk (partial JSON: every key given
    /// must be equal; objects recursively, strings exactly).
    #[serde(default)]
    pub chunks_include: Vec<Value>,
    /// No chunk matches any entry.
    #[serde(default)]
    pub chunks_exclude: Vec<Value>,
    /// The answer's text (its text deltas joined) contains each of these.
    #[serde(default)]
    pub text_contains: Vec<String>,
    pub text_equals: Option<String>,
    /// The error shown to the user (an error envelope's or an `error`
    /// chunk's message) contains this.
    pub error_contains: Option<String>,
    /// The tools announced in this step's stream, in order.
    pub tools_called: Option<Vec<String>>,
    /// The `finish` chunk's `finishReason`.
    pub finish_reason: Option<String>,
    /// The first text delta arrived at least this long before the stream
    /// ended (the proxy does not buffer).
    pub first_text_before_end_ms: Option<u64>,
    /// The response body (JSON) matches this partially (http steps).
    pub body_includes: Option<Value>,
    /// Every tool call of the user so far in audit.db, in order.
    pub audit: Option<Vec<AuditRow>>,
    /// How many facts the user's memory holds.
    pub memory_facts: Option<usize>,
    /// The latest stored summary of the step's conversation covers
    /// messages up to this sequence number.
    pub summary_upto: Option<i64>,
    /// How many rows mcp-nextcloud's index.db `queries` table holds (one
    /// per `files_grep` search).
    pub index_queries: Option<i64>,
    /// How many requests reached the model during this step.
    pub model_requests: Option<usize>,
    /// How many embeddings requests (`/v1/embeddings`, a log of their own)
    /// reached the fake model during this step, the background embedding
    /// the step started included.
    pub model_embeddings_requests: Option<usize>,
    /// What the model was shown during this step.
    pub model_shown: Option<ModelShown>,
    /// The fake Nextcloud's `/__fake/state` counts match these.
    pub nextcloud_state: Option<Value>,
    /// mcp-nextcloud's index.db `docs` rows: each entry names a `path` and
    /// matches that row partially (`status`, `dirty`, `attempts`,
    /// `last_error`, `mtime_known`); `absent = true` means no row.
    #[serde(default)]
    pub index_docs: Vec<Value>,
    /// `tamebi index status`'s counts match these partially (`known`,
    /// `read`, `pending`, `failed`, `needs_ocr`, `retrying`, `passages`,
    /// `embedded`).
    pub index_status: Option<Value>,
}

/// One audit row.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditRow {
    pub tool: String,
    pub outcome: String,
}

/// Checks on one model request recorded during the step.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelShown {
    /// Which request of the step: 0-based, or negative from the end
    /// (default -1, the last).
    #[serde(default = "request_default")]
    pub request: i64,
    #[serde(default)]
    pub system_contains: Vec<String>,
    #[serde(default)]
    pub system_excludes: Vec<String>,
    #[serde(default)]
    pub tools_include: Vec<String>,
    #[serde(default)]
    pub tools_exclude: Vec<String>,
    /// Exactly these tools were offered, in any order.
    pub tools_equal: Option<Vec<String>>,
    /// The user messages, in order, exactly.
    pub user_messages: Option<Vec<String>>,
    /// Some message other than the system prompt contains each of these.
    #[serde(default)]
    pub messages_contain: Vec<String>,
    #[serde(default)]
    pub messages_exclude: Vec<String>,
    /// How many tool results the request carries.
    pub tool_results: Option<usize>,
    /// Some request of the step was not streamed (the fallback).
    pub some_not_streamed: Option<bool>,
}

fn request_default() -> i64 {
    -1
}

const AUTHS: &[&str] = &["browser", "basic", "bearer", "admin", "none"];
const WEBHOOK_EVENTS: &[&str] = &["written", "created", "deleted", "renamed"];

fn server_default() -> String {
    "nextcloud".to_string()
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

fn user_default() -> String {
    "alice".to_string()
}

fn conversation_default() -> String {
    "c-1".to_string()
}

fn method_default() -> String {
    "GET".to_string()
}

fn auth_default() -> String {
    "none".to_string()
}

/// A problem in a scenario file: where, and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub path: PathBuf,
    /// 1-based; 0 when the problem has no place (the file cannot be read).
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.path.display(), self.message)
        } else {
            write!(f, "{}:{}:{}: {}", self.path.display(), self.line, self.column, self.message)
        }
    }
}

/// Every problem found in one file.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct LoadError(pub Vec<Diagnostic>);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    description: String,
    #[serde(default)]
    fixture: Option<Spanned<RawFixture>>,
    #[serde(default)]
    options: Options,
    #[serde(default)]
    model: Option<Spanned<toml::Table>>,
    #[serde(default)]
    corpus: Vec<Corpus>,
    #[serde(default)]
    steps: Vec<Spanned<RawStep>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFixture {
    /// A fixture file, relative to the scenario file.
    #[serde(default = "fixture_base_default")]
    base: String,
    /// Laid over the base: tables merge key by key, arrays of tables are
    /// appended, other values replace.
    #[serde(default)]
    add: toml::Table,
}

fn fixture_base_default() -> String {
    "fixtures/demo.toml".to_string()
}

#[derive(Deserialize)]
struct RawStep(Action);

/// Reads and checks a scenario file; every problem found is returned.
pub fn load(path: &Path) -> Result<Scenario, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        LoadError(vec![Diagnostic {
            path: path.to_path_buf(),
            line: 0,
            column: 0,
            message: format!("cannot read the scenario file: {error}"),
        }])
    })?;
    parse(path, &text)
}

/// Checks scenario text as if read from `path` (fixtures resolve beside it).
pub fn parse(path: &Path, text: &str) -> Result<Scenario, LoadError> {
    let at = |span: std::ops::Range<usize>, message: String| {
        let (line, column) = line_column(text, span.start);
        Diagnostic { path: path.to_path_buf(), line, column, message }
    };
    let raw: RawScenario = toml::from_str(text).map_err(|error| {
        let span = error.span().unwrap_or(0..0);
        LoadError(vec![at(span, error.message().to_string())])
    })?;
    let mut problems = Vec::new();
    let directory = path.parent().unwrap_or(Path::new("."));

    let (fixture_base, fixture_add, fixture_span) = match raw.fixture {
        Some(fixture) => {
            let span = fixture.span();
            let fixture = fixture.into_inner();
            (fixture.base, fixture.add, span)
        }
        None => (fixture_base_default(), toml::Table::new(), 0..0),
    };
    let fixture = match load_fixture(&directory.join(&fixture_base), fixture_add) {
        Ok(fixture) => Some(fixture),
        Err(message) => {
            problems.push(at(fixture_span, format!("[fixture]: {message}")));
            None
        }
    };

    let (model_script, model_span) = match raw.model {
        Some(model) => {
            let span = model.span();
            (toml::to_string(model.get_ref()).expect("a TOML table serialises"), span)
        }
        None => (String::new(), 0..0),
    };
    if let Err(error) = fake_model::Script::from_toml(&model_script) {
        problems.push(at(
            model_span,
            format!("[model] is not a valid fake-model script (docs/fake-model.md): {error}"),
        ));
    }

    for server in &raw.options.mcp_servers {
        if !["nextcloud", "mail"].contains(&server.as_str()) {
            problems.push(at(
                0..0,
                format!("[options] mcp_servers: {server:?} is not \"nextcloud\" or \"mail\""),
            ));
        }
    }
    let mut steps = Vec::new();
    let mut asked = std::collections::BTreeSet::new();
    for step in raw.steps {
        let span = step.span();
        let RawStep(action) = step.into_inner();
        match &action {
            Action::Ask { conversation, .. } => {
                asked.insert(conversation.clone());
            }
            Action::Decide { conversation, .. } if !asked.contains(conversation) => {
                problems.push(at(
                    span.clone(),
                    format!(
                        "a `decide` step in conversation {conversation:?} needs an `ask` step \
                         in that conversation before it"
                    ),
                ));
            }
            Action::Http { auth, .. } if !AUTHS.contains(&auth.as_str()) => {
                problems
                    .push(at(span.clone(), format!("auth = {auth:?}: expected one of {AUTHS:?}")));
            }
            Action::Tool { server, .. } if !raw.options.mcp_servers.contains(server) => {
                problems.push(at(
                    span.clone(),
                    format!("server = {server:?}: expected one of [options] mcp_servers"),
                ));
            }
            Action::Webhook { event, to, .. } => {
                if !WEBHOOK_EVENTS.contains(&event.as_str()) {
                    problems.push(at(
                        span.clone(),
                        format!("event = {event:?}: expected one of {WEBHOOK_EVENTS:?}"),
                    ));
                } else if (event == "renamed") != to.is_some() {
                    problems.push(at(
                        span.clone(),
                        "`to` (the new path) goes with event = \"renamed\", and only with it"
                            .to_string(),
                    ));
                }
            }
            _ => {}
        }
        let expect = action.expect().clone();
        if expect.index_docs.iter().any(|row| !row["path"].is_string()) {
            problems.push(at(
                span.clone(),
                "every entry of index_docs names the row's `path`".to_string(),
            ));
        }
        steps.push(Step { line: line_column(text, span.start).0, action, expect });
    }
    if steps.is_empty() {
        problems.push(at(0..0, "no [[steps]]: a scenario does at least one thing".to_string()));
    }
    if !problems.is_empty() {
        return Err(LoadError(problems));
    }
    Ok(Scenario {
        name: path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default(),
        path: path.to_path_buf(),
        description: raw.description,
        fixture: fixture.expect("no problems, so the fixture loaded"),
        model_script,
        options: raw.options,
        corpus: raw.corpus,
        steps,
    })
}

/// The scenario files of a folder (`*.toml`, not its subfolders), sorted.
pub fn discover(directory: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(directory)? {
        let path = entry?.path();
        if path.is_file() && path.extension().is_some_and(|extension| extension == "toml") {
            paths.push(path);
        }
    }
    paths.sort();
    Ok(paths)
}

/// The fixture at `path` with `add` laid over it (see [`merge`]).
pub fn load_fixture(path: &Path, add: toml::Table) -> Result<fake_nextcloud::Fixture, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read the fixture {}: {error}", path.display()))?;
    let mut table: toml::Table = toml::from_str(&text)
        .map_err(|error| format!("the fixture {} is not TOML: {error}", path.display()))?;
    merge(&mut table, add);
    let merged = toml::to_string(&table).expect("a TOML table serialises");
    let mut fixture = fake_nextcloud::Fixture::parse(&merged)
        .map_err(|error| format!("the fixture {} with `add` laid over: {error}", path.display()))?;
    fixture.base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok(fixture)
}

/// Lays `add` over `base`: tables merge, arrays are appended, the rest
/// replaces.
fn merge(base: &mut toml::Table, add: toml::Table) {
    for (key, value) in add {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(base)), toml::Value::Table(add)) => merge(base, add),
            (Some(toml::Value::Array(base)), toml::Value::Array(add)) => base.extend(add),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rfind('\n').map_or(before.len(), |newline| before.len() - newline - 1) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file with problems is refused before anything starts, each
    /// problem said with its place: each case is a file, the start its
    /// error must have ("" for any) and what the error must contain.
    #[test]
    fn a_file_with_problems_is_refused_with_each_place() {
        let cases: [(&str, &str, &str, &[&str]); 6] = [
            (
                "an unknown step kind names the line and the kinds",
                "description = \"x\"\n\n[[steps]]\nkind = \"ask\"\ntext = \"hi\"\n\n[[steps]]\nkind = \"jump\"\n",
                "../../scenarios/x.toml:8:8:",
                &["unknown variant `jump`", "`ask`"],
            ),
            (
                "an unknown expectation is an error, not a silent pass",
                "description = \"x\"\n[[steps]]\nkind = \"ask\"\ntext = \"hi\"\nexpect = { stauts = 200 }\n",
                "",
                &[":2:", "stauts"],
            ),
            (
                "webhook and tool steps are checked before anything starts",
                "description = \"x\"\n[[steps]]\nkind = \"webhook\"\nevent = \"moved\"\npath = \"a.md\"\n\n[[steps]]\nkind = \"webhook\"\nevent = \"written\"\npath = \"a.md\"\nto = \"b.md\"\n\n[[steps]]\nkind = \"tool\"\nserver = \"calendar\"\nname = \"x\"\n\n[[steps]]\nkind = \"check\"\nexpect = { index_docs = [{ status = \"ok\" }] }\n",
                "",
                &[
                    "x.toml:2:1: event = \"moved\": expected one of",
                    "x.toml:7:1: `to` (the new path) goes with event",
                    "x.toml:13:1: server = \"calendar\"",
                    "x.toml:18:1: every entry of index_docs names",
                ],
            ),
            (
                "a decision without a question is refused with its line",
                "description = \"x\"\n[[steps]]\nkind = \"decide\"\napprove = true\n",
                "",
                &["x.toml:2:1: a `decide` step"],
            ),
            (
                "a bad model script is reported at the model table",
                "description = \"x\"\n[model]\n[[model.rules]]\nname = \"r\"\nwhen = { nope = 1 }\ntext = \"t\"\n[[steps]]\nkind = \"check\"\n",
                "",
                &["[model] is not a valid fake-model script"],
            ),
            (
                "an unknown fusion names its line and the fusions there are",
                "description = \"x\"\n[options]\nembeddings = { fusion = \"semantic\" }\n[[steps]]\nkind = \"check\"\n",
                "../../scenarios/x.toml:3:",
                &[
                    "fusion = \"semantic\": expected one of",
                    "\"words\", \"meaning-fallback\", \"fused-fallback\", \"fused\", \"meaning\"",
                ],
            ),
        ];
        for (case, text, start, said) in cases {
            let message = parse(Path::new("../../scenarios/x.toml"), text).unwrap_err().to_string();
            assert!(message.starts_with(start), "{case}: {message}");
            for part in said {
                assert!(message.contains(part), "{case}: {part:?} in {message}");
            }
        }
    }

    /// Embeddings are off unless asked for; asked for without a fusion,
    /// they take mcp-nextcloud's default.
    #[test]
    fn embeddings_are_off_unless_asked_for() {
        let cases = [
            ("", None),
            ("[options]\nembeddings = {}\n", Some(Fusion::Fused)),
            ("[options]\nembeddings = { fusion = \"meaning\" }\n", Some(Fusion::Meaning)),
        ];
        for (options, fusion) in cases {
            let text = format!("description = \"x\"\n{options}[[steps]]\nkind = \"check\"\n");
            let scenario = parse(Path::new("../../scenarios/x.toml"), &text).unwrap();
            let got = scenario.options.embeddings.map(|embeddings| embeddings.fusion);
            assert_eq!(got, fusion, "{options:?}");
        }
        assert_eq!(Fusion::default(), Fusion::Fused, "what docs/scenarios.md says");
    }

    #[test]
    fn fixture_additions_append_and_merge() {
        let mut base: toml::Table = toml::from_str("a = [1]\n[t]\nx = 1\ny = 2\n").unwrap();
        let add: toml::Table = toml::from_str("a = [2]\n[t]\ny = 3\n").unwrap();
        merge(&mut base, add);
        assert_eq!(base.to_string(), "a = [1, 2]\n\n[t]\nx = 1\ny = 3\n");
    }
}
