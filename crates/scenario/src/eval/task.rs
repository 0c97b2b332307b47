//! The task file (`eval/tasks.toml`): what each task asks, what the user
//! decides on an approval card, what must be true afterwards, and two
//! scripts for the fake model — one that does the job right and one that
//! does it wrong (the negative control that must fail).
//!
//! Read strictly, like a scenario: unknown keys, duplicate ids, a task
//! without a check or without a negative control, and scripts the fake
//! model would refuse are all errors, reported together.

use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::Path;

/// The groups a task is counted in; the report has a row for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A question answered from a document, citing it.
    Document,
    Calendar,
    Contacts,
    Deck,
    Mail,
    /// An action proposed with the right arguments, then approved or denied.
    Action,
    /// Find something, then act on it.
    TwoStep,
    /// About something the user cannot read: the answer says so, no leak.
    NoAccess,
    /// A prompt injection in the user's data: no effect without an exact
    /// approval card, nothing remembered or sent, the real task still done.
    Injection,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Document => "document",
            Kind::Calendar => "calendar",
            Kind::Contacts => "contacts",
            Kind::Deck => "deck",
            Kind::Mail => "mail",
            Kind::Action => "action",
            Kind::TwoStep => "two_step",
            Kind::NoAccess => "no_access",
            Kind::Injection => "injection",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskFile {
    #[serde(rename = "task")]
    pub tasks: Vec<Task>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    pub id: String,
    pub kind: Kind,
    /// `en` or `fr`: the language the question is written in.
    pub language: String,
    #[serde(default = "alice")]
    pub user: String,
    pub question: String,
    /// Tools whose approval requests the user approves; every other
    /// approval request is denied (an injected action among them).
    #[serde(default)]
    pub approve: Vec<String>,
    pub expect: Expect,
    /// The fake model's rules that do the task right.
    pub model: toml::Table,
    /// The fake model's rules that do it wrong: the task must fail.
    pub wrong: toml::Table,
}

fn alice() -> String {
    "alice".to_string()
}

/// What must hold once the turn (and every decision) is over. Answers are
/// compared after [`crate::eval::check::normalise`]: case, accents'
/// spacing, digit grouping (`40 000` = `40,000` = `40000`) do not count.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Expect {
    /// Each group: one of its texts appears in the answer.
    pub answer_has: Vec<Vec<String>>,
    /// None of these appears in the answer (another user's data, a
    /// secret from an injection).
    pub answer_lacks: Vec<String>,
    /// Tools that must have been called (and answered) during the turn.
    pub tools_used: Vec<String>,
    /// Changes the workspace must show afterwards, each matched against
    /// the lines the world's digest gained (see `world::digest`), e.g.
    /// `card "Préparer la démo" in "À faire"`. Any other change fails the
    /// task: nothing happens that the task did not ask for.
    pub changes: Vec<String>,
    /// Lines the digest must have lost (a card no longer in its stack).
    pub removed: Vec<String>,
}

/// Every problem of a task file at once.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {}", problems.join("; "))]
pub struct TaskError {
    pub path: String,
    pub problems: Vec<String>,
}

pub fn load(path: &Path) -> Result<Vec<Task>, TaskError> {
    let error = |problems: Vec<String>| TaskError { path: path.display().to_string(), problems };
    let text = std::fs::read_to_string(path)
        .map_err(|source| error(vec![format!("cannot read it: {source}")]))?;
    parse(&text).map_err(error)
}

pub fn parse(text: &str) -> Result<Vec<Task>, Vec<String>> {
    let file: TaskFile = toml::from_str(text).map_err(|error| vec![error.to_string()])?;
    let mut problems = Vec::new();
    let mut ids = BTreeSet::new();
    for task in &file.tasks {
        let id = &task.id;
        if !ids.insert(id.clone()) {
            problems.push(format!("task {id} is defined twice"));
        }
        if !["en", "fr"].contains(&task.language.as_str()) {
            problems.push(format!("task {id}: language must be en or fr"));
        }
        let expect = &task.expect;
        if expect.answer_has.is_empty()
            && expect.tools_used.is_empty()
            && expect.changes.is_empty()
            && expect.removed.is_empty()
        {
            problems.push(format!(
                "task {id}: expect checks nothing a wrong model could fail (answer_has, tools_used, changes or removed)"
            ));
        }
        if expect.answer_has.iter().any(Vec::is_empty) {
            problems.push(format!("task {id}: an answer_has group is empty"));
        }
        for (name, script) in [("model", &task.model), ("wrong", &task.wrong)] {
            if let Err(error) = script_of(script) {
                problems.push(format!("task {id}: its {name} script: {error}"));
            }
        }
    }
    if file.tasks.is_empty() {
        problems.push("the file holds no [[task]]".to_string());
    }
    if problems.is_empty() { Ok(file.tasks) } else { Err(problems) }
}

/// A script table as the fake model reads it.
pub fn script_of(table: &toml::Table) -> Result<fake_model::script::Script, String> {
    let text = toml::to_string(table).map_err(|error| error.to_string())?;
    fake_model::script::Script::from_toml(&text).map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = r#"
[[task]]
id = "a"
kind = "document"
language = "en"
question = "What is the budget?"
expect = { answer_has = [["40000"]] }
model = { rules = [{ text = "40 000 €" }] }
wrong = { rules = [{ text = "I do not know." }] }
"#;

    #[test]
    fn a_task_file_is_read() {
        let tasks = parse(ONE).unwrap();
        assert_eq!(tasks.len(), 1);
        assert_eq!(tasks[0].user, "alice");
        assert_eq!(tasks[0].kind, Kind::Document);
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let text = format!(
            "{ONE}{}",
            ONE.replace("language = \"en\"", "language = \"de\"")
                .replace("answer_has = [[\"40000\"]]", "answer_lacks = [\"x\"]")
        );
        let problems = parse(&text).unwrap_err();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].contains("defined twice"));
        assert!(problems[1].contains("language"));
        assert!(problems[2].contains("checks nothing"));
    }

    #[test]
    fn a_script_the_fake_model_refuses_is_an_error() {
        let text = ONE.replace("{ text = \"I do not know.\" }", "{ txt = \"typo\" }");
        let problems = parse(&text).unwrap_err();
        assert!(problems[0].contains("its wrong script"), "{problems:?}");
    }
}
