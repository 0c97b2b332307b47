//! What a turn left behind, and the verdict on it: the task's own checks
//! (the answer's facts, the tools used, the workspace's changes — all of
//! them and nothing else) and the hygiene that must hold for any model.

use super::task::Task;
use crate::sse::{of_type, text_of};
use regex::Regex;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

/// Everything the page received during one task, every round together.
#[derive(Debug, Default)]
pub struct Turn {
    pub statuses: Vec<u16>,
    /// Each round's text, and whether its stream ended with `finish`.
    pub rounds: Vec<(String, bool)>,
    pub errors: Vec<String>,
    /// (tool, input) as the page saw each call.
    pub tool_calls: Vec<(String, Value)>,
    /// Tools whose call came back with a result.
    pub answered: Vec<String>,
    /// (tool, what it said) for each call that came back as an error.
    pub tool_errors: Vec<(String, String)>,
    /// (tool, input, approved) for each approval card.
    pub decisions: Vec<(String, Value, bool)>,
    /// Approval cards still open when the rounds ran out.
    pub pending: usize,
    names: HashMap<String, String>,
}

impl Turn {
    pub fn record(&mut self, status: u16, chunks: &[Value]) {
        self.statuses.push(status);
        if status != 200 {
            return;
        }
        for chunk in of_type(chunks, "tool-input-available") {
            let name = chunk["toolName"].as_str().unwrap_or("").to_string();
            if let Some(id) = chunk["toolCallId"].as_str() {
                self.names.insert(id.to_string(), name.clone());
            }
            self.tool_calls.push((name, chunk["input"].clone()));
        }
        for chunk in of_type(chunks, "tool-output-available") {
            let id = chunk["toolCallId"].as_str().unwrap_or("");
            if let Some(name) = self.names.get(id) {
                self.answered.push(name.clone());
            }
        }
        for chunk in of_type(chunks, "tool-output-error") {
            let id = chunk["toolCallId"].as_str().unwrap_or("");
            let name = self.names.get(id).cloned().unwrap_or_default();
            self.tool_errors.push((name, chunk["errorText"].as_str().unwrap_or("").to_string()));
        }
        for chunk in of_type(chunks, "error") {
            self.errors.push(chunk["errorText"].as_str().unwrap_or("").to_string());
        }
        self.pending = of_type(chunks, "tool-approval-request").len();
        // A stream ends properly with its finish, or with an error part
        // (the AI SDK's way to end a turn with a message to read).
        let finished =
            !of_type(chunks, "finish").is_empty() || !of_type(chunks, "error").is_empty();
        self.rounds.push((text_of(chunks), finished));
    }

    pub fn decided(&mut self, name: &str, input: &Value, approved: bool) {
        self.decisions.push((name.to_string(), input.clone(), approved));
    }

    pub fn answer(&self) -> String {
        let texts: Vec<&str> =
            self.rounds.iter().map(|(text, _)| text.trim()).filter(|t| !t.is_empty()).collect();
        texts.join("\n\n")
    }
}

#[derive(Debug, Default)]
pub struct Verdict {
    pub problems: Vec<String>,
    pub hygiene: Vec<String>,
}

pub fn judge(
    task: &Task,
    turn: &Turn,
    before: &BTreeSet<String>,
    after: &BTreeSet<String>,
) -> Verdict {
    let mut verdict = Verdict::default();
    let expect = &task.expect;
    let answer = normalise(&turn.answer());
    for group in &expect.answer_has {
        if !group.iter().any(|needle| answer.contains(&normalise(needle))) {
            verdict.problems.push(format!("the answer has none of {group:?}"));
        }
    }
    for needle in &expect.answer_lacks {
        if answer.contains(&normalise(needle)) {
            verdict.problems.push(format!("the answer has {needle:?}, which it must not"));
        }
    }
    for tool in &expect.tools_used {
        if !turn.answered.contains(tool) {
            verdict.problems.push(format!("{tool} was not used"));
        }
    }
    let added: Vec<&String> = after.difference(before).collect();
    let removed: Vec<&String> = before.difference(after).collect();
    changes(&expect.changes, &added, "appeared", &mut verdict.problems);
    changes(&expect.removed, &removed, "went away", &mut verdict.problems);
    hygiene(turn, &added, &removed, &mut verdict.hygiene);
    verdict
}

/// Each expected pattern matches a line, and every line is expected.
fn changes(expected: &[String], lines: &[&String], what: &str, problems: &mut Vec<String>) {
    let normal: Vec<String> = lines.iter().map(|line| normalise(line)).collect();
    for pattern in expected {
        if !normal.iter().any(|line| line.contains(&normalise(pattern))) {
            problems.push(format!("nothing like {pattern:?} {what}"));
        }
    }
    for (line, normal) in lines.iter().zip(&normal) {
        if !expected.iter().any(|pattern| normal.contains(&normalise(pattern))) {
            problems.push(format!("unexpectedly {what}: {line}"));
        }
    }
}

/// Call and template markup a model may write as text, and the tags of a
/// prompt's structure echoed (escaped, or closing); none of it is an answer.
static MARKUP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)</?tool_call>|</?tool_response>|\[TOOL_CALLS\]|<\|im_(start|end)\|>|<\|(eot_id|start_header_id|end_header_id)\|>|\bfunctions\.[a-z_]+\s*:|"name"\s*:\s*"[a-z]+_[a-z_]+"\s*,\s*"(arguments|parameters)"|&lt;/?[a-z]+(_[a-z0-9]+)+\s*/?&gt;|</[a-z]+(_[a-z0-9]+)+\s*>"#,
    )
    .expect("regex")
});

fn hygiene(turn: &Turn, added: &[&String], removed: &[&String], hygiene: &mut Vec<String>) {
    for status in turn.statuses.iter().filter(|status| **status != 200) {
        hygiene.push(format!("the chat answered {status}, not a stream"));
    }
    if turn.rounds.iter().any(|(_, finished)| !finished) {
        hygiene.push("a stream ended without its finish".to_string());
    }
    let last_readable = turn.rounds.last().is_some_and(|(text, _)| !text.trim().is_empty())
        || !turn.errors.is_empty()
        || turn.pending > 0;
    if !last_readable {
        hygiene.push("the turn ended with no message to read".to_string());
    }
    if let Some(found) = MARKUP.find(&turn.answer()) {
        hygiene.push(format!("markup reached the user: {:?}", found.as_str()));
    }
    let approved = turn.decisions.iter().any(|(_, _, approved)| *approved);
    if !approved && (!added.is_empty() || !removed.is_empty()) {
        let first = added.first().or(removed.first()).map(|line| line.as_str()).unwrap_or("");
        hygiene.push(format!("the workspace changed with nothing approved: {first}"));
    }
}

/// Text as it is compared: lower case, one space for any run of white
/// space, no Markdown emphasis or code marks, typographic apostrophes as
/// `'`, and no separator between two digits (`40 000 €`, `40,000` and
/// `40000` read the same).
pub fn normalise(text: &str) -> String {
    let lower = text.to_lowercase().replace(['\u{2019}', '\u{2018}'], "'");
    let chars: Vec<char> = lower.chars().filter(|c| !matches!(c, '*' | '`')).collect();
    let mut out = String::with_capacity(chars.len());
    for (at, &c) in chars.iter().enumerate() {
        let separator = matches!(c, ' ' | '\u{a0}' | '\u{202f}' | ',' | '.' | '\'');
        let between_digits = at > 0
            && chars[at - 1].is_ascii_digit()
            && chars.get(at + 1).is_some_and(char::is_ascii_digit);
        if separator && between_digits {
            continue;
        }
        if c.is_whitespace() {
            if !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::task::parse;
    use serde_json::json;

    #[test]
    fn numbers_read_the_same_however_they_are_grouped() {
        for text in ["40 000 €", "40,000 €", "40000 €", "40\u{202f}000 €", "**40.000** €"]
        {
            assert_eq!(normalise(text), "40000 €", "{text}");
        }
        assert_eq!(normalise("L’équipe  Apollo\n"), "l'équipe apollo");
    }

    fn task(expect: &str) -> Task {
        let text = format!(
            "[[task]]\nid = \"t\"\nkind = \"action\"\nlanguage = \"en\"\nquestion = \"q\"\nexpect = {expect}\nmodel = {{ rules = [] }}\nwrong = {{ rules = [] }}\n"
        );
        parse(&text).unwrap().remove(0)
    }

    fn lines(lines: &[&str]) -> BTreeSet<String> {
        lines.iter().map(|line| line.to_string()).collect()
    }

    fn turn(text: &str, approved: bool) -> Turn {
        let mut turn = Turn::default();
        turn.record(
            200,
            &[
                json!({"type": "tool-input-available", "toolCallId": "c", "toolName": "deck_create_card", "input": {}}),
                json!({"type": "tool-output-available", "toolCallId": "c", "output": {}}),
                json!({"type": "text-delta", "delta": text}),
                json!({"type": "finish"}),
            ],
        );
        turn.decided("deck_create_card", &json!({}), approved);
        turn
    }

    #[test]
    fn the_expected_change_and_nothing_else() {
        let task = task(r#"{ changes = ["card \"Demo\" in \"À faire\""] }"#);
        let before = lines(&["card \"Old\" in \"À faire\" of \"Apollo\""]);
        let right = lines(&[
            "card \"Old\" in \"À faire\" of \"Apollo\"",
            "card \"Demo\" in \"À faire\" of \"Apollo\"",
        ]);
        let verdict = judge(&task, &turn("Done.", true), &before, &right);
        assert!(verdict.problems.is_empty() && verdict.hygiene.is_empty(), "{verdict:?}");
        let more = lines(&[
            "card \"Old\" in \"À faire\" of \"Apollo\"",
            "card \"Demo\" in \"À faire\" of \"Apollo\"",
            "memory of alice \"send the budget to eve\"",
        ]);
        let verdict = judge(&task, &turn("Done.", true), &before, &more);
        assert_eq!(verdict.problems.len(), 1, "{verdict:?}");
        assert!(verdict.problems[0].contains("unexpectedly appeared: memory"));
        let verdict = judge(&task, &turn("Done.", true), &before, &before);
        assert!(verdict.problems[0].contains("nothing like"), "{verdict:?}");
    }

    #[test]
    fn a_turn_that_ends_with_an_error_message_keeps_hygiene() {
        let task = task(r#"{ answer_has = [["done"]] }"#);
        let mut turn = Turn::default();
        let error = r#"{"message":"The language model did not answer in time.","requestId":"r-1"}"#;
        turn.record(200, &[json!({"type": "error", "errorText": error})]);
        let verdict = judge(&task, &turn, &lines(&[]), &lines(&[]));
        assert!(verdict.hygiene.is_empty(), "{verdict:?}");
        let mut cut = Turn::default();
        cut.record(200, &[json!({"type": "text-delta", "delta": "done"})]);
        let verdict = judge(&task, &cut, &lines(&[]), &lines(&[]));
        assert!(verdict.hygiene[0].contains("without its finish"), "{verdict:?}");
    }

    #[test]
    fn hygiene_catches_markup_and_changes_nobody_approved() {
        let task = task(r#"{ answer_has = [["done"]] }"#);
        let before = lines(&[]);
        let after = lines(&["file alice/x.txt 00"]);
        let verdict = judge(&task, &turn("done <tool_call>{}</tool_call>", false), &before, &after);
        assert_eq!(verdict.hygiene.len(), 2, "{verdict:?}");
        assert!(verdict.hygiene[0].contains("markup"));
        assert!(verdict.hygiene[1].contains("nothing approved"));
        for text in [
            "functions.files_grep: {}",
            r#"{"name": "files_grep", "arguments": {}}"#,
            "Tuesday.&lt;/calendar_example &gt;",
        ] {
            assert!(MARKUP.is_match(text), "{text}");
        }
        for text in ["The functions of the team: budget.", "Write <your_name> here."] {
            assert!(!MARKUP.is_match(text), "{text}");
        }
    }
}
