//! `tamebi eval`: the task suite (`eval/tasks.toml`, docs/models.md) run
//! against a model — an OpenAI-compatible endpoint (`--model-url`), or,
//! without one, each task's scripted fake model (`--negative` for the
//! negative controls). Each task runs on a fresh in-process stack; the
//! results print as they come, then the table by kind; `--json` writes
//! every result. Exits 1 when a hygiene rule broke (a 5xx on the page, a
//! stream without its end, call markup shown, a change nobody approved),
//! and with `--strict` also when a task failed.

use scenario::eval::{self, Model, TaskResult};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    /// The model API root including its version (OpenAI-compatible), e.g.
    /// http://127.0.0.1:8080/v1. Without it every task runs its own
    /// scripted fake model.
    #[arg(long, env = "TAMEBI_MODEL_URL")]
    model_url: Option<String>,
    /// The model name sent to the provider.
    #[arg(long, env = "TAMEBI_MODEL", default_value = "default")]
    model: String,
    /// The provider's API key, if it needs one.
    #[arg(long, env = "TAMEBI_MODEL_API_KEY", hide_env_values = true)]
    model_api_key: Option<String>,
    /// The model's context window in tokens.
    #[arg(long, default_value_t = 32768)]
    model_window: usize,
    /// The most tokens one answer may take (sent as `max_tokens`).
    #[arg(long, default_value_t = 1024)]
    model_max_tokens: u32,
    /// Seconds the model may stay silent before an answer is timed out.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=3600))]
    model_timeout_s: u64,
    /// Without --model-url: run the negative controls (each task's wrong
    /// script), which must all fail.
    #[arg(long, conflicts_with = "model_url")]
    negative: bool,
    /// Only these tasks: ids or kinds (document, calendar, contacts, deck,
    /// mail, action, two_step, no_access, injection); repeatable.
    #[arg(long)]
    only: Vec<String>,
    /// The task file.
    #[arg(long, default_value = eval::TASKS)]
    tasks: PathBuf,
    /// What the demo world gains for the suite.
    #[arg(long, default_value = eval::WORLD)]
    world: PathBuf,
    /// Also write every result as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Exit 1 when any task fails, not only on a hygiene breach.
    #[arg(long)]
    strict: bool,
}

pub async fn run(args: EvalArgs) -> anyhow::Result<()> {
    let mut tasks = eval::task::load(&args.tasks).map_err(|error| {
        anyhow::anyhow!("{error}\nFix the task file, or pass another with --tasks.")
    })?;
    if !args.only.is_empty() {
        tasks.retain(|task| {
            args.only.iter().any(|only| *only == task.id || only == task.kind.as_str())
        });
        anyhow::ensure!(!tasks.is_empty(), "--only {:?} matches no task id or kind", args.only);
    }
    let world = eval::world::fixture(&args.world)
        .map_err(|error| anyhow::anyhow!("{error}\nFix it, or pass another with --world."))?;
    let model = match &args.model_url {
        Some(url) => {
            let mut config = orchestrator::model::ModelConfig::new(url, &args.model);
            config.api_key = args
                .model_api_key
                .clone()
                .filter(|key| !key.trim().is_empty())
                .map(orchestrator::model::ApiKey::new);
            config.max_tokens = (args.model_max_tokens > 0).then_some(args.model_max_tokens);
            config.read_timeout_ms = args.model_timeout_s * 1000;
            Model::Endpoint(config)
        }
        None => Model::Scripted { wrong: args.negative },
    };
    let described = model.describe();
    println!("tamebi eval: {} tasks, model {described}", tasks.len());
    let count = tasks.len();
    let results = eval::run_suite(&tasks, &world, &model, args.model_window, |index, result| {
        print_result(index, count, result)
    })
    .await;
    println!("\n{}", eval::report::table(&results));
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&eval::report::json(&described, &results))?;
        std::fs::write(path, json)
            .map_err(|error| anyhow::anyhow!("cannot write {}: {error}", path.display()))?;
        println!("every result: {}", path.display());
    }
    let breaches = results.iter().filter(|result| !result.hygiene.is_empty()).count();
    let failed = results.iter().filter(|result| !result.passed).count();
    if breaches > 0 || (args.strict && failed > 0) {
        std::process::exit(1);
    }
    Ok(())
}

fn print_result(index: usize, count: usize, result: &TaskResult) {
    let verdict = if result.passed { "ok" } else { "FAILED" };
    println!(
        "[{}/{count}] {} ({}) ... {verdict} ({:.1} s, model {:.1} s, {} steps, {} tool calls)",
        index + 1,
        result.id,
        result.kind.as_str(),
        result.total_seconds,
        result.model_seconds,
        result.steps,
        result.tool_calls,
    );
    for problem in &result.problems {
        println!("    {problem}");
    }
    for breach in &result.hygiene {
        println!("    HYGIENE: {breach}");
    }
}
