//! How much of each model request a provider's prefix cache can reuse from
//! the request before it: a three-turn conversation with tool calls runs
//! through the whole stack (fake Nextcloud, mcp-nextcloud, the fake model,
//! the orchestrator), and each request the model received is rendered the
//! way chat templates lay a request out. The same requests are rendered a
//! second time with the environment block moved back where it was (the
//! second section of the system prompt), the baseline of this run.
//!
//! ```text
//! cargo run -p system --example prefix_reuse
//! ```
//!
//! Two layouts, since templates differ: *tools after the system prompt*
//! (Qwen 2.5, Hermes: the tool schemas inside the system turn, after its
//! text) and *tools first* (the tools before every message). Figures are
//! characters (about four to a token); "re-read" is what the provider must
//! read again because it differs from the previous request. See
//! docs/benchmarks.md.

use scenario::harness::Stack;
use serde_json::Value;

const SCRIPT: &str = r#"
[[rules]]
name = "find"
when = { last_role = "user", last_user_contains = "notes" }
tool_calls = [{ name = "files_search", arguments = { name = "notes" } }]

[[rules]]
name = "read"
when = { last_role = "tool", last_tool_result_contains = "notes-reunion", turn = 1 }
tool_calls = [{ name = "files_read", arguments = { path = "Documents/notes-reunion.md" } }]

[[rules]]
name = "calendar"
when = { last_role = "user", last_user_contains = "calendar" }
tool_calls = [{ name = "calendar_events", arguments = { from = "2026-03-01T00:00:00Z", to = "2026-03-31T00:00:00Z" } }]

[[rules]]
name = "answer"
when = { last_role = "tool" }
text = "Here is what I found."

[[rules]]
name = "thanks"
when = { last_role = "user" }
text = "You are welcome."
"#;

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let mut stack =
        Stack::builder().model_script(SCRIPT).start().await.map_err(anyhow::Error::msg)?;
    let alice = stack.browser("alice").await.map_err(anyhow::Error::msg)?;
    for question in ["Where are my meeting notes?", "And my calendar in March?", "Thanks!"] {
        alice.ask("c-prefix", question).await.map_err(anyhow::Error::msg)?;
    }
    // Turns minutes apart, as people ask: each turn's block names its own
    // time (the run itself takes a second, all in one minute).
    let bodies: Vec<Value> =
        stack.model().requests().into_iter().map(|r| minutes_apart(r.body)).collect();
    anyhow::ensure!(bodies.len() >= 6, "the conversation made {} requests", bodies.len());

    println!("prefix reuse over {} model requests (3 turns, 3 tool calls)", bodies.len());
    println!("{:<64} {:>9} {:>14} {:>10}", "layout", "reused", "re-read chars", "re-read ×");
    for (name, render) in [
        ("tools after the system prompt", tools_after_system as fn(&Value) -> String),
        ("tools first", tools_first),
    ] {
        let now = reuse(&bodies, render);
        let before = reuse(&bodies.iter().map(environment_in_system).collect::<Vec<_>>(), render);
        for (when, figures) in
            [("environment in the system prompt", before), ("environment opens the question", now)]
        {
            println!(
                "{:<64} {:>8.1}% {:>14} {:>10.2}",
                format!("{name}, {when}"),
                100.0 * figures.reused as f64 / figures.total as f64,
                figures.total - figures.reused,
                (figures.total - figures.reused) as f64 / (before.total - before.reused) as f64,
            );
        }
    }
    stack.shutdown().await;
    Ok(())
}

#[derive(Clone, Copy)]
struct Reuse {
    /// Characters of every request but the first.
    total: usize,
    /// Of those, the characters each shares with the request before it.
    reused: usize,
}

fn reuse(bodies: &[Value], render: fn(&Value) -> String) -> Reuse {
    let rendered: Vec<String> = bodies.iter().map(render).collect();
    let mut figures = Reuse { total: 0, reused: 0 };
    for pair in rendered.windows(2) {
        let shared = pair[0].chars().zip(pair[1].chars()).take_while(|(a, b)| a == b).count();
        figures.total += pair[1].chars().count();
        figures.reused += shared;
    }
    figures
}

fn messages(body: &Value) -> &[Value] {
    body["messages"].as_array().map_or(&[], Vec::as_slice)
}

fn turn(message: &Value) -> String {
    let content = message["content"].as_str().unwrap_or_default();
    let calls = message.get("tool_calls").map(Value::to_string).unwrap_or_default();
    format!("<|im_start|>{}\n{content}{calls}<|im_end|>\n", message["role"].as_str().unwrap_or(""))
}

fn tools(body: &Value) -> String {
    body.get("tools").map(Value::to_string).unwrap_or_default()
}

/// Qwen 2.5 and Hermes: the tools inside the system turn, after its text.
fn tools_after_system(body: &Value) -> String {
    let all = messages(body);
    let system = all.first().and_then(|m| m["content"].as_str()).unwrap_or_default();
    let rest: String = all.iter().skip(1).map(turn).collect();
    format!("<|im_start|>system\n{system}\n# Tools\n{}<|im_end|>\n{rest}", tools(body))
}

/// Templates that put the tools before every message.
fn tools_first(body: &Value) -> String {
    format!("{}\n{}", tools(body), messages(body).iter().map(turn).collect::<String>())
}

/// The request with its environment's `Now:` line naming the turn (the
/// number of questions so far), as if each turn came a minute later.
fn minutes_apart(mut body: Value) -> Value {
    let questions = messages(&body).iter().filter(|m| m["role"] == "user").count();
    let Some(all) = body["messages"].as_array_mut() else { return body };
    for message in all.iter_mut() {
        let Some(text) = message["content"].as_str() else { continue };
        let Some(start) = text.find("\nNow: ") else { continue };
        let end = text[start + 1..].find('\n').map_or(text.len(), |at| start + 1 + at);
        let dated = format!("{}\nNow: minute {questions}{}", &text[..start], &text[end..]);
        message["content"] = Value::String(dated);
    }
    body
}

/// The request as it was before the environment moved: the block taken
/// out of the latest question and put back after `<identity>`.
fn environment_in_system(body: &Value) -> Value {
    let mut body = body.clone();
    let Some(all) = body["messages"].as_array_mut() else { return body };
    let mut block = None;
    for message in all.iter_mut().filter(|m| m["role"] == "user") {
        let text = message["content"].as_str().unwrap_or_default().to_string();
        if let Some(start) = text.find("<environment>\n")
            && let Some(length) = text[start..].find("</environment>\n\n")
        {
            let end = start + length + "</environment>\n\n".len();
            block = Some(text[start..end].trim_end().to_string());
            message["content"] = Value::String(format!("{}{}", &text[..start], &text[end..]));
        }
    }
    if let (Some(block), Some(system)) = (block, all.first_mut()) {
        let text = system["content"].as_str().unwrap_or_default();
        let moved = text.replacen("</identity>\n\n", &format!("</identity>\n\n{block}\n\n"), 1);
        system["content"] = Value::String(moved);
    }
    body
}
