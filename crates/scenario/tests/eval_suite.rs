//! The `tamebi eval` suite scored with the fake model: every task's right
//! script must pass and every negative control must fail, so a task whose
//! checks cannot fail (or cannot pass) is caught here, before a real model
//! is measured with it.

use scenario::eval::{self, Model, TaskResult};

async fn suite(wrong: bool) -> Vec<TaskResult> {
    let tasks = eval::task::load(&eval::default_path(eval::TASKS)).expect("the task file");
    assert!(tasks.len() >= 40, "the suite has at least 40 tasks, it has {}", tasks.len());
    let world = eval::world::fixture(&eval::default_path(eval::WORLD)).expect("the eval world");
    eval::run_suite(&tasks, &world, &Model::Scripted { wrong }, 32_768, |_, _| {}).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_right_script_passes() {
    let results = suite(false).await;
    let failed: Vec<String> = results
        .iter()
        .filter(|result| !result.passed)
        .map(|result| {
            format!(
                "{}: {:?} {:?} tool errors {:?} answer {:?}",
                result.id, result.problems, result.hygiene, result.tool_errors, result.answer
            )
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} failed:\n{}",
        failed.len(),
        results.len(),
        failed.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_negative_control_fails_and_stays_hygienic() {
    let results = suite(true).await;
    let passed: Vec<&str> =
        results.iter().filter(|result| result.passed).map(|result| result.id.as_str()).collect();
    assert!(passed.is_empty(), "negative controls that passed: {passed:?}");
    // A wrong model is still served cleanly: what it does wrong is the
    // model's, never a broken stream or an unapproved change.
    let breaches: Vec<String> = results
        .iter()
        .filter(|result| !result.hygiene.is_empty())
        .map(|result| format!("{}: {:?}", result.id, result.hygiene))
        .collect();
    assert!(breaches.is_empty(), "{}", breaches.join("\n"));
}
