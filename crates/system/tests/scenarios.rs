//! Every `scenarios/*.toml` file as a test, through a custom harness (no
//! libtest), so that a new scenario needs no Rust: each file runs on fresh
//! services, its expectations are checked, and its normalised transcript is
//! compared with `scenarios/snapshots/<name>.snap` by insta.
//!
//! A missing or changed snapshot fails (insta writes a `.snap.new` beside it
//! to review with `cargo insta review`, or run with `INSTA_UPDATE=always` to
//! accept). Arguments that are not flags filter scenarios by name.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// How many scenarios run at once; each starts its own five services.
const CONCURRENT_MAX: usize = 4;

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

fn main() -> ExitCode {
    let filters: Vec<String> =
        std::env::args().skip(1).filter(|arg| !arg.starts_with('-')).collect();
    let paths = scenario::discover(&scenarios_dir()).expect("the scenarios folder is readable");
    assert!(!paths.is_empty(), "no scenario found in {}", scenarios_dir().display());
    let paths: Vec<PathBuf> = paths
        .into_iter()
        .filter(|path| {
            let name = path.file_stem().unwrap().to_string_lossy();
            filters.is_empty() || filters.iter().any(|filter| name.contains(filter.as_str()))
        })
        .collect();
    println!("\nrunning {} scenarios", paths.len());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(8)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let started = Instant::now();
    let outcomes = runtime.block_on(async {
        let semaphore = std::sync::Arc::new(tokio::sync::Semaphore::new(CONCURRENT_MAX));
        let tasks: Vec<_> = paths
            .iter()
            .cloned()
            .map(|path| {
                let semaphore = semaphore.clone();
                tokio::spawn(async move {
                    let _permit = semaphore.acquire_owned().await.expect("semaphore open");
                    match scenario::load(&path) {
                        Err(error) => Err(error.to_string()),
                        Ok(scenario) => Ok((scenario.name.clone(), scenario::run(&scenario).await)),
                    }
                })
            })
            .collect();
        let mut outcomes = Vec::new();
        for task in tasks {
            outcomes.push(task.await.expect("a scenario task does not panic"));
        }
        outcomes
    });
    let mut failed = Vec::new();
    for (path, outcome) in paths.iter().zip(outcomes) {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let problems = match outcome {
            Err(load_error) => {
                println!("test {name} ... FAILED (the file is invalid)");
                vec![load_error]
            }
            Ok((name, outcome)) => {
                let mut problems = outcome.failures.clone();
                if let Err(snapshot) = check_snapshot(&name, &outcome.transcript) {
                    problems.push(snapshot);
                }
                if !problems.is_empty() {
                    problems.push(format!("the transcript:\n{}", outcome.transcript));
                }
                println!(
                    "test {name} ... {} ({:.1} s)",
                    verdict(&problems),
                    outcome.elapsed.as_secs_f64()
                );
                problems
            }
        };
        if problems.is_empty() {
            continue;
        }
        failed.push((name, problems));
    }
    for (name, problems) in &failed {
        println!("\n---- {name} ----");
        for problem in problems {
            println!("{problem}");
        }
    }
    let passed = paths.len() - failed.len();
    println!(
        "\ntest result: {}. {passed} passed; {} failed; finished in {:.1} s\n",
        if failed.is_empty() { "ok" } else { "FAILED" },
        failed.len(),
        started.elapsed().as_secs_f64()
    );
    if failed.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

fn verdict(problems: &[String]) -> &'static str {
    if problems.is_empty() { "ok" } else { "FAILED" }
}

/// Compares the transcript with the committed snapshot; insta prints the diff.
fn check_snapshot(name: &str, transcript: &str) -> Result<(), String> {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(scenarios_dir().join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        settings.bind(|| insta::assert_snapshot!(name.to_string(), transcript));
    }));
    result.map_err(|_| {
        format!("the transcript differs from scenarios/snapshots/{name}.snap (diff above)")
    })
}
