//! Tool calls a model wrote as text instead of in the provider's
//! `tool_calls`: small local models, or a chat template the server does not
//! parse, leave them in the answer. Seen with real servers:
//!
//! - a bare JSON object `{"name": "files_search", "arguments": {…}}` (or
//!   `parameters`), or a list of them, perhaps in a ```json fence;
//! - Hermes/Qwen tags, `<tool_call>{…}</tool_call>`, one or more;
//! - Mistral's `[TOOL_CALLS][{…}]`;
//! - `functions.contacts_search:` followed by the arguments (SmolLM2).
//!
//! The step holds a text back while it may still be one of these (it
//! starts like one), so markup never reaches the user as if it were an
//! answer; at the end a text that is wholly calls becomes those calls, and
//! the tool set answers a name it does not offer like any unknown tool.
//! After some prose, tags and `functions.` lines are held from their first
//! character ([`crate::holdback`]) and read the same way.

use crate::model::ToolCall;
use serde_json::Value;

/// How a text call may start, after leading white space.
// Narrow on purpose: an answer that opens with a Markdown link (`[…](…)`)
// or a code fence in another language streams as soon as it cannot be one.
const OPENERS: &[&str] =
    &["{", "[{", "<tool_call>", "[TOOL_CALLS]", "functions.", "```json", "```\n{"];

/// Whether `text`, the start of an answer, may still turn out to be calls.
pub(crate) fn may_be_calls(text: &str) -> bool {
    let text = text.trim_start();
    text.is_empty()
        || OPENERS.iter().any(|opener| opener.starts_with(text) || text.starts_with(opener))
}

/// Whether `text` opens with markup that can only be a call (`<tool_call>`,
/// `[TOOL_CALLS]`, `functions.`), read or not.
pub(crate) fn is_call_markup(text: &str) -> bool {
    let text = text.trim_start();
    ["<tool_call>", "[TOOL_CALLS]", "functions."].iter().any(|opener| text.starts_with(opener))
}

/// The calls `text` is made of, if it is wholly calls; ids are `prefix`
/// and a number. Markup that can only be a call (tags, `[TOOL_CALLS]`,
/// `functions.`) is read whatever it names; plain JSON only when every
/// call names one of the `offered` tools, since an answer can be JSON.
pub(crate) fn parse(text: &str, offered: &[&str], prefix: &str) -> Option<Vec<ToolCall>> {
    let text = text.trim();
    let plain = || {
        json_calls(unfenced(text))
            .filter(|found| found.iter().all(|(name, _)| offered.contains(&name.as_str())))
    };
    let found = tagged(text)
        .or_else(|| text.strip_prefix("[TOOL_CALLS]").and_then(|rest| json_calls(rest.trim())))
        .or_else(|| functions_line(text))
        .or_else(plain)?;
    let calls = found
        .into_iter()
        .enumerate()
        .map(|(n, (name, arguments))| ToolCall { id: format!("{prefix}{n}"), name, arguments })
        .collect::<Vec<_>>();
    (!calls.is_empty()).then_some(calls)
}

type Found = Vec<(String, String)>;

/// `<tool_call>…</tool_call>` blocks with nothing but white space between.
fn tagged(text: &str) -> Option<Found> {
    let mut rest = text;
    let mut found = Vec::new();
    while !rest.is_empty() {
        let inner = rest.strip_prefix("<tool_call>")?;
        let (body, after) = inner.split_once("</tool_call>")?;
        found.extend(json_calls(body.trim())?);
        rest = after.trim_start();
    }
    (!found.is_empty()).then_some(found)
}

/// `functions.NAME:` then its arguments (a JSON object, or nothing). The
/// form can only be a call, so arguments that do not parse stay the call's
/// (the tool set says what is wrong) rather than reach the user as text.
fn functions_line(text: &str) -> Option<Found> {
    let rest = text.strip_prefix("functions.")?;
    let (name, arguments) = rest.split_once(':')?;
    let name = name.trim();
    let well_named =
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !well_named {
        return None;
    }
    let arguments = match arguments.trim() {
        "" => "{}".to_string(),
        written => match parse_json(written) {
            Some(Value::Object(object)) => Value::Object(object).to_string(),
            Some(_) => return None,
            None => decoded(written),
        },
    };
    Some(vec![(name.to_string(), arguments)])
}

/// The text inside one ```json (or bare ```) fence, or the text itself.
fn unfenced(text: &str) -> &str {
    let Some(inner) = text.strip_prefix("```") else { return text };
    let inner = inner.strip_prefix("json").unwrap_or(inner);
    inner.strip_suffix("```").unwrap_or(inner).trim()
}

/// `text` as JSON, read again with HTML's character references decoded
/// when it does not parse (small models write `{ &#34;id&#34;: 1 }`).
fn parse_json(text: &str) -> Option<Value> {
    serde_json::from_str(text).ok().or_else(|| serde_json::from_str(&decoded(text)).ok())
}

/// `text` with the character references a template escapes decoded.
fn decoded(text: &str) -> String {
    [
        ("&#34;", "\""),
        ("&quot;", "\""),
        ("&#39;", "'"),
        ("&apos;", "'"),
        ("&lt;", "<"),
        ("&gt;", ">"),
    ]
    .iter()
    .fold(text.to_string(), |text, (reference, character)| text.replace(reference, character))
    .replace("&amp;", "&")
}

/// A JSON call object, or a list of them.
fn json_calls(text: &str) -> Option<Found> {
    match parse_json(text)? {
        Value::Array(items) => {
            let found: Option<Found> = items.iter().map(json_call).collect();
            found.filter(|found| !found.is_empty())
        }
        object => Some(vec![json_call(&object)?]),
    }
}

/// `{"name": …, "arguments"|"parameters": {…} or a JSON text}`, and
/// nothing else: an answer that happens to be JSON is not a call.
fn json_call(value: &Value) -> Option<(String, String)> {
    let object = value.as_object()?;
    let name = object.get("name")?.as_str()?.to_string();
    let arguments = object.get("arguments").or_else(|| object.get("parameters"));
    let extra =
        object.keys().any(|key| !["name", "arguments", "parameters", "id"].contains(&key.as_str()));
    if extra || name.is_empty() {
        return None;
    }
    let arguments = match arguments {
        None | Some(Value::Null) => "{}".to_string(),
        Some(Value::String(text)) => text.clone(),
        Some(object @ Value::Object(_)) => object.to_string(),
        Some(_) => return None,
    };
    Some((name, arguments))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OFFERED: &[&str] = &["files_search", "files_read", "contacts_search", "a", "b"];

    fn names_and_arguments(text: &str) -> Option<Vec<(String, String)>> {
        parse(text, OFFERED, "t")
            .map(|calls| calls.into_iter().map(|c| (c.name, c.arguments)).collect())
    }

    fn one(name: &str, arguments: &str) -> Option<Vec<(String, String)>> {
        Some(vec![(name.to_string(), arguments.to_string())])
    }

    #[test]
    fn each_written_form_is_read_as_its_calls() {
        let search = one("files_search", r#"{"name":"notes"}"#);
        let cases = [
            (r#"{"name": "files_search", "arguments": {"name": "notes"}}"#, search.clone()),
            (r#"  {"name": "files_search", "parameters": {"name": "notes"}}  "#, search.clone()),
            (
                "```json\n{\"name\": \"files_search\", \"arguments\": {\"name\": \"notes\"}}\n```",
                search.clone(),
            ),
            (
                "<tool_call>\n{\"name\": \"files_search\", \"arguments\": {\"name\": \"notes\"}}\n</tool_call>",
                search.clone(),
            ),
            (
                r#"[TOOL_CALLS][{"name": "files_search", "arguments": {"name": "notes"}}]"#,
                search.clone(),
            ),
            ("functions.files_search:\n{\"name\": \"notes\"}", search.clone()),
            ("functions.contacts_search:\n{ }", one("contacts_search", "{}")),
            ("functions.contacts_search:", one("contacts_search", "{}")),
            (
                "functions.mail_search:\n{ &#34;id&#34; :2397180568 }",
                one("mail_search", r#"{"id":2397180568}"#),
            ),
            ("functions.mail_read:\n{\"id\": 12", one("mail_read", r#"{"id": 12"#)),
            (r#"{"name": "contacts_search"}"#, one("contacts_search", "{}")),
            (
                r#"{"name": "files_read", "arguments": "{\"path\": \"a\"}"}"#,
                one("files_read", r#"{"path": "a"}"#),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(names_and_arguments(text), expected, "{text}");
        }
    }

    #[test]
    fn several_calls_in_one_text() {
        let tagged = "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\n<tool_call>{\"name\": \"b\", \"arguments\": {\"x\": 1}}</tool_call>";
        let listed = r#"[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1}}]"#;
        for text in [tagged, listed] {
            let calls = parse(text, OFFERED, "t").unwrap();
            let got: Vec<(&str, &str, &str)> = calls
                .iter()
                .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
                .collect();
            assert_eq!(got, [("t0", "a", "{}"), ("t1", "b", r#"{"x":1}"#)], "{text}");
        }
    }

    #[test]
    fn answers_that_only_look_alike_are_answers() {
        for text in [
            "The meeting is in room Écluse.",
            r#"{"name": "Alice", "email": "alice@example.com"}"#,
            r#"{"title": "Budget", "arguments": {}}"#,
            r#"{"name": "Alice"}"#,
            r#"{"name": "Alice", "arguments": {}}"#,
            "[1, 2, 3]",
            "[]",
            "functions.files search: {}",
            "functions.files_search: [1]",
            "<tool_call>{\"name\": \"a\"}</tool_call> and then some prose",
            "```\nlet x = 1;\n```",
        ] {
            assert_eq!(parse(text, OFFERED, "t"), None, "{text}");
        }
    }

    #[test]
    fn markup_that_can_only_be_a_call_is_read_whatever_it_names() {
        assert_eq!(names_and_arguments("functions.weather:\n{}"), one("weather", "{}"));
        let tagged = "<tool_call>{\"name\": \"weather\", \"arguments\": {}}</tool_call>";
        assert_eq!(names_and_arguments(tagged), one("weather", "{}"));
    }

    #[test]
    fn call_markup_is_told_apart_from_answers() {
        for text in ["<tool_call>{broken", " [TOOL_CALLS] x", "functions.x: {"] {
            assert!(is_call_markup(text), "{text}");
        }
        for text in ["{\"name\": 1}", "The functions. of", "```json"] {
            assert!(!is_call_markup(text), "{text}");
        }
    }

    #[test]
    fn a_text_is_held_only_while_it_starts_like_a_call() {
        for start in
            ["", "  ", "{", "{\"na", "<tool", "<tool_call>{", "[TOOL", "functi", "```", "[{"]
        {
            assert!(may_be_calls(start), "{start:?}");
        }
        for start in [
            "The",
            "Voici",
            "<p>",
            "fun fact",
            "1. first",
            "**Bold**",
            "[Rapport",
            "```python",
            "[1",
        ] {
            assert!(!may_be_calls(start), "{start:?}");
        }
    }
}
