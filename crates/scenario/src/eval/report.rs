//! The suite's results as a Markdown table (one row per kind and a total)
//! and as JSON (every task, with why it failed).

use super::run::TaskResult;
use super::task::Kind;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The table `tamebi eval` prints and docs/models.md keeps.
pub fn table(results: &[TaskResult]) -> String {
    let mut rows: BTreeMap<Kind, Vec<&TaskResult>> = BTreeMap::new();
    for result in results {
        rows.entry(result.kind).or_default().push(result);
    }
    let mut lines = vec![
        "| kind | tasks | passed | hygiene breaches | steps / task | tool calls / task | model s | Tamebi s | tokens in / out |".to_string(),
        "|---|---|---|---|---|---|---|---|---|".to_string(),
    ];
    for (kind, results) in &rows {
        lines.push(row(kind.as_str(), results));
    }
    let all: Vec<&TaskResult> = results.iter().collect();
    lines.push(row("**all**", &all));
    lines.join("\n")
}

fn row(name: &str, results: &[&TaskResult]) -> String {
    let count = results.len();
    let passed = results.iter().filter(|result| result.passed).count();
    let breaches = results.iter().filter(|result| !result.hygiene.is_empty()).count();
    let mean = |value: fn(&TaskResult) -> f64| {
        results.iter().map(|result| value(result)).sum::<f64>() / count.max(1) as f64
    };
    let total =
        |value: fn(&TaskResult) -> f64| results.iter().map(|result| value(result)).sum::<f64>();
    let tokens = |value: fn(&TaskResult) -> Option<u64>| {
        results.iter().filter_map(|result| value(result)).reduce(|all, one| all + one)
    };
    let tokens = match (tokens(|r| r.prompt_tokens), tokens(|r| r.completion_tokens)) {
        (Some(prompt), Some(completion)) => format!("{prompt} / {completion}"),
        _ => "not reported".to_string(),
    };
    format!(
        "| {name} | {count} | {passed} ({:.0} %) | {breaches} | {:.1} | {:.1} | {:.1} | {:.1} | {tokens} |",
        100.0 * passed as f64 / count.max(1) as f64,
        mean(|r| r.steps as f64),
        mean(|r| r.tool_calls as f64),
        total(|r| r.model_seconds),
        total(TaskResult::tamebi_seconds),
    )
}

/// Every result, for a machine.
pub fn json(model: &str, results: &[TaskResult]) -> Value {
    let passed = results.iter().filter(|result| result.passed).count();
    let breaches = results.iter().filter(|result| !result.hygiene.is_empty()).count();
    json!({
        "model": model,
        "tasks": results.len(),
        "passed": passed,
        "hygiene_breaches": breaches,
        "results": results,
    })
}
