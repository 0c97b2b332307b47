//! `tamebi eval`: how well a model does the job, measured on tasks over
//! the demo world with checks on what each turn left behind, not on its
//! wording.
//!
//! A task ([`task`]) asks one question as a user's browser does; the user
//! approves the approval cards the task names and denies every other one;
//! then the answer's facts, the tools used and the workspace's changes
//! ([`world::digest`]: all the expected ones and nothing else) decide
//! whether it passed ([`check`]). Whatever the model, hygiene must hold:
//! every post answered and ended, a last message to read, no call markup
//! shown, no change without an approval.
//!
//! Every task carries two scripts for the fake model: the right one (the
//! suite must score 100 % with them) and a negative control that does the
//! job wrong (0 %), so a check that cannot fail shows up as a control
//! that passes. A real model is measured through the same runner
//! ([`run::Model::Endpoint`]) behind a timing proxy ([`timing`]) that
//! splits the model's time from Tamebi's own.

pub mod check;
pub mod report;
pub mod run;
pub mod task;
pub mod timing;
pub mod world;

pub use run::{Model, TaskResult, run_task};
pub use task::{Kind, Task};

use std::path::Path;

/// The task file and the world additions, at the repository's root.
pub const TASKS: &str = "eval/tasks.toml";
pub const WORLD: &str = "eval/world.toml";

/// The repository's `eval/` files, wherever the caller runs from.
pub fn default_path(relative: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(relative)
}

/// Runs `tasks` one after the other on fresh stacks, the orchestrator
/// told the model's context window is `window_tokens`; `progress` hears
/// of each result as it comes.
pub async fn run_suite(
    tasks: &[Task],
    world: &fake_nextcloud::Fixture,
    model: &Model,
    window_tokens: usize,
    mut progress: impl FnMut(usize, &TaskResult),
) -> Vec<TaskResult> {
    let mut results = Vec::with_capacity(tasks.len());
    for (index, task) in tasks.iter().enumerate() {
        let result = run_task(task, world, model, window_tokens).await;
        progress(index, &result);
        results.push(result);
    }
    results
}
