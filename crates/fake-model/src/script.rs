//! The script: what the model says on each turn, chosen by matchers on the
//! request. A TOML file at start, the same structure as JSON through
//! `PUT /__fake/script`.
//!
//! Rules are tried in order and the first whose matchers all hold answers;
//! a rule with `times` stops matching once it has answered that many
//! requests. The format is read strictly (unknown keys are errors, every
//! problem is reported at once), unlike the API the fake serves: a typo in
//! a test's script should fail the test, not silently never match.
//!
//! We rejected a plain list of answers consumed in order: the orchestrator
//! retries, falls back from streaming and summarises, so the request count
//! drifts, while "after a files_grep result that mentions Apollo, answer X"
//! stays true.

use crate::answer::{Reply, ReplyToolCall};
use crate::faults::{Cut, Faults};
use crate::request::ChatRequest;
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The script as written, before validation; also what `GET /__fake/script`
/// answers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScriptSource {
    /// Faults applied to every request (see [`Faults`]).
    #[serde(skip_serializing_if = "Faults::is_empty")]
    pub faults: Faults,
    pub rules: Vec<RuleSource>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSource {
    /// Shown in the request log and in diagnostics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// All must hold; none given matches every request.
    #[serde(default)]
    pub when: Matchers,
    /// Text to answer, streamed a word at a time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Tool calls to answer (after the text, if both are given).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallSource>,
    /// Answer at most this many requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
    /// Faults for the requests this rule answers, over the global ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Faults>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCallSource {
    pub name: String,
    /// An object (or any JSON value) is sent as its JSON text; a string is
    /// sent verbatim, so a script can send malformed arguments.
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// The call id; default `call_…`, unique per server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Matchers {
    /// The last user message contains this (case-insensitive).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_user_contains: Option<String>,
    /// The last user message matches this regular expression.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_user_regex: Option<String>,
    /// The last tool message contains this (case-insensitive).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_tool_result_contains: Option<String>,
    /// The number of assistant messages in the request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    /// A function tool of this name is offered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_available: Option<String>,
    /// The role of the last message (`user`, `tool`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_role: Option<String>,
}

/// A validated script, with how often each rule has answered.
#[derive(Debug, Clone, Default)]
pub struct Script {
    source: ScriptSource,
    rules: Vec<Rule>,
    answered: Vec<u32>,
}

#[derive(Debug, Clone)]
struct Rule {
    name: Option<String>,
    when: Matchers,
    last_user_regex: Option<Regex>,
    reply: Option<Reply>,
    times: Option<u32>,
    fault: Option<Faults>,
}

/// The rule that answers a request.
#[derive(Debug, Clone, PartialEq)]
pub struct Matched {
    pub index: usize,
    pub name: Option<String>,
    /// `None` when the rule only injects an error.
    pub reply: Option<Reply>,
    pub fault: Option<Faults>,
}

#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("cannot read the script {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("the script is not valid TOML for this format: {0}")]
    Toml(#[from] toml::de::Error),
    #[error("the script is not valid JSON for this format: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the script has problems:\n  {}", .0.join("\n  "))]
    Invalid(Vec<String>),
}

impl Script {
    pub fn load(path: &Path) -> Result<Script, ScriptError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ScriptError::Read { path: path.to_path_buf(), source })?;
        Script::from_toml(&text)
    }

    pub fn from_toml(text: &str) -> Result<Script, ScriptError> {
        Script::new(toml::from_str(text)?)
    }

    pub fn from_json(value: Value) -> Result<Script, ScriptError> {
        Script::new(serde_json::from_value(value)?)
    }

    /// Validates a source, reporting every problem found.
    pub fn new(source: ScriptSource) -> Result<Script, ScriptError> {
        let mut problems = Vec::new();
        if source.faults.times.is_some() && source.faults.is_empty() {
            problems.push("faults: times is given but no fault".to_string());
        }
        let mut rules = Vec::new();
        for (index, rule) in source.rules.iter().enumerate() {
            let place = match &rule.name {
                Some(name) => format!("rules[{index}] ({name})"),
                None => format!("rules[{index}]"),
            };
            let mut problem = |text: String| problems.push(format!("{place}: {text}"));
            let last_user_regex = match rule.when.last_user_regex.as_deref().map(Regex::new) {
                None => None,
                Some(Ok(regex)) => Some(regex),
                Some(Err(error)) => {
                    problem(format!("when.last_user_regex does not compile: {error}"));
                    None
                }
            };
            let reply = (rule.text.is_some() || !rule.tool_calls.is_empty()).then(|| Reply {
                text: rule.text.clone(),
                tool_calls: rule
                    .tool_calls
                    .iter()
                    .map(|call| ReplyToolCall {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        arguments: match &call.arguments {
                            Value::String(verbatim) => verbatim.clone(),
                            other => other.to_string(),
                        },
                    })
                    .collect(),
            });
            for (call_index, call) in rule.tool_calls.iter().enumerate() {
                if call.name.trim().is_empty() {
                    problem(format!("tool_calls[{call_index}].name is empty"));
                }
            }
            let fault = rule.fault.as_ref();
            let answers_with_error = fault.is_some_and(|fault| fault.error.is_some());
            if reply.is_none() && !answers_with_error {
                problem(
                    "says nothing: give text, tool_calls, or fault.error (an error status)"
                        .to_string(),
                );
            }
            if fault.is_some_and(|fault| fault.times.is_some()) {
                problem("fault.times has no meaning on a rule: use the rule's times".to_string());
            }
            if fault.is_some_and(|fault| fault.cut == Some(Cut::MidToolCall))
                && rule.tool_calls.is_empty()
            {
                problem("fault.cut is mid_tool_call but the rule has no tool_calls".to_string());
            }
            if fault.is_some_and(|fault| fault.cut == Some(Cut::MidText)) && rule.text.is_none() {
                problem("fault.cut is mid_text but the rule has no text".to_string());
            }
            if rule.times == Some(0) {
                problem("times = 0 never answers: remove the rule".to_string());
            }
            rules.push(Rule {
                name: rule.name.clone(),
                when: rule.when.clone(),
                last_user_regex,
                reply,
                times: rule.times,
                fault: rule.fault.clone(),
            });
        }
        if !problems.is_empty() {
            return Err(ScriptError::Invalid(problems));
        }
        let answered = vec![0; rules.len()];
        Ok(Script { source, rules, answered })
    }

    pub fn source(&self) -> &ScriptSource {
        &self.source
    }

    pub fn rule_count(&self) -> usize {
        self.rules.len()
    }

    /// The first rule that matches and has answers left; counts the answer.
    pub fn answer(&mut self, request: &ChatRequest) -> Option<Matched> {
        let index = (0..self.rules.len()).find(|&index| {
            let rule = &self.rules[index];
            rule.times.is_none_or(|times| self.answered[index] < times) && rule.matches(request)
        })?;
        self.answered[index] += 1;
        let rule = &self.rules[index];
        Some(Matched {
            index,
            name: rule.name.clone(),
            reply: rule.reply.clone(),
            fault: rule.fault.clone(),
        })
    }
}

impl Rule {
    fn matches(&self, request: &ChatRequest) -> bool {
        let when = &self.when;
        let contains = |haystack: Option<String>, needle: &str| {
            haystack.is_some_and(|text| text.to_lowercase().contains(&needle.to_lowercase()))
        };
        let last_user = || request.last_user().map(|message| message.question());
        if let Some(needle) = &when.last_user_contains
            && !contains(last_user(), needle)
        {
            return false;
        }
        if let Some(regex) = &self.last_user_regex
            && !last_user().is_some_and(|text| regex.is_match(&text))
        {
            return false;
        }
        if let Some(needle) = &when.last_tool_result_contains
            && !contains(request.last_tool_result().map(|message| message.text()), needle)
        {
            return false;
        }
        if when.turn.is_some_and(|turn| turn != request.turn()) {
            return false;
        }
        if let Some(tool) = &when.tool_available
            && !request.tool_names.contains(tool)
        {
            return false;
        }
        if let Some(role) = &when.last_role
            && request.last_message().role != *role
        {
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(messages: Value) -> ChatRequest {
        let body = json!({
            "model": "m",
            "messages": messages,
            "tools": [{"type": "function", "function": {"name": "files_grep"}}],
        });
        ChatRequest::parse(body.to_string().as_bytes()).unwrap()
    }

    fn user(text: &str) -> ChatRequest {
        request(json!([{"role": "system", "content": "S"}, {"role": "user", "content": text}]))
    }

    fn after_tool(result: &str) -> ChatRequest {
        request(json!([
            {"role": "user", "content": "budget?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "files_grep", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": result},
        ]))
    }

    /// The index of the rule answering each request in turn (None: no rule).
    fn check(script: &str, requests: &[ChatRequest], expected: &[Option<usize>]) {
        let mut script = Script::from_toml(script).unwrap();
        let answered: Vec<Option<usize>> =
            requests.iter().map(|request| script.answer(request).map(|m| m.index)).collect();
        assert_eq!(answered, expected);
    }

    #[test]
    fn the_first_matching_rule_answers() {
        let script = r#"
            [[rules]]
            when.last_user_contains = "BUDGET"
            text = "a"
            [[rules]]
            text = "b"
        "#;
        check(script, &[user("the budget please"), user("hello")], &[Some(0), Some(1)]);
    }

    #[test]
    fn each_matcher_selects() {
        let script = r#"
            [[rules]]
            when.last_user_regex = '^\d+ euros?$'
            text = "regex"
            [[rules]]
            when.last_tool_result_contains = "apollo"
            text = "tool"
            [[rules]]
            when.turn = 1
            text = "turn 1"
            [[rules]]
            when.tool_available = "mail_send"
            text = "never: not offered"
            [[rules]]
            when = { last_role = "user", turn = 0 }
            text = "user first"
        "#;
        check(
            script,
            &[
                user("12 euros"),
                after_tool("- Projects/Apollo/x.md"),
                after_tool("nothing"),
                user("hi"),
            ],
            &[Some(0), Some(1), Some(2), Some(4)],
        );
    }

    #[test]
    fn times_limits_a_rule() {
        let script = r#"
            [[rules]]
            times = 2
            fault = { error = "rate_limit" }
            [[rules]]
            text = "ok"
        "#;
        check(script, &[user("a"), user("b"), user("c")], &[Some(0), Some(0), Some(1)]);
    }

    #[test]
    fn nothing_matches_an_empty_script() {
        check("", &[user("a")], &[None]);
        check("[[rules]]\nwhen.turn = 3\ntext = \"x\"", &[user("a")], &[None]);
    }

    #[test]
    fn tool_calls_and_their_arguments() {
        let mut script = Script::from_toml(
            r#"
            [[rules]]
            text = "Let me look."
            tool_calls = [
                { name = "files_grep", arguments = { query = "budget apollo", limit = 3 } },
                { name = "files_read", arguments = '{"path": broken', id = "call_x" },
                { name = "memory_search" },
            ]
            "#,
        )
        .unwrap();
        let reply = script.answer(&user("x")).unwrap().reply.unwrap();
        assert_eq!(reply.text.as_deref(), Some("Let me look."));
        let arguments: Value = serde_json::from_str(&reply.tool_calls[0].arguments).unwrap();
        assert_eq!(arguments, json!({"query": "budget apollo", "limit": 3}));
        assert_eq!(reply.tool_calls[1].arguments, r#"{"path": broken"#);
        assert_eq!(reply.tool_calls[1].id.as_deref(), Some("call_x"));
        assert_eq!(reply.tool_calls[2].arguments, "{}");
    }

    #[test]
    fn json_and_toml_are_the_same_format() {
        let from_toml = Script::from_toml(
            "[faults]\ndelta_delay_ms = 5\n[[rules]]\nname = \"r\"\nwhen.turn = 0\ntool_calls = [{ name = \"t\", arguments = { a = 1 } }]\n",
        )
        .unwrap();
        let from_json = Script::from_json(json!({
            "faults": {"delta_delay_ms": 5},
            "rules": [{"name": "r", "when": {"turn": 0}, "tool_calls": [{"name": "t", "arguments": {"a": 1}}]}],
        }))
        .unwrap();
        assert_eq!(from_toml.source(), from_json.source());
        let round_trip = serde_json::to_value(from_toml.source()).unwrap();
        assert_eq!(Script::from_json(round_trip).unwrap().source(), from_json.source());
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let error = Script::from_toml(
            r#"
            [[rules]]
            name = "silent"
            [[rules]]
            when.last_user_regex = "(unclosed"
            text = "x"
            [[rules]]
            text = "x"
            fault = { cut = "mid_tool_call", times = 2 }
            [[rules]]
            tool_calls = [{ name = "" }]
            times = 0
            "#,
        )
        .unwrap_err();
        let ScriptError::Invalid(problems) = error else { panic!("{error}") };
        let expected = [
            "rules[0] (silent): says nothing",
            "rules[1]: when.last_user_regex does not compile",
            "rules[2]: fault.times has no meaning",
            "rules[2]: fault.cut is mid_tool_call",
            "rules[3]: tool_calls[0].name is empty",
            "rules[3]: times = 0",
        ];
        assert_eq!(problems.len(), expected.len(), "{problems:#?}");
        for (problem, start) in problems.iter().zip(expected) {
            assert!(problem.starts_with(start), "{problem} should start with {start}");
        }
    }

    #[test]
    fn typos_are_errors() {
        assert!(matches!(Script::from_toml("[[rules]]\ntxt = \"x\""), Err(ScriptError::Toml(_))));
        assert!(matches!(
            Script::from_toml("[[rules]]\ntext = \"x\"\nwhen.last_user_contain = \"y\""),
            Err(ScriptError::Toml(_))
        ));
    }
}
