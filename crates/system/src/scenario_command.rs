//! `tamebi scenario run [PATH...]`: runs scenario files (or every `*.toml`
//! of a folder, `scenarios/` by default) on fresh services, one after the
//! other, printing each verdict, every failure with the transcript, and a
//! summary line. Snapshots are compared by the test harness only
//! (`cargo test -p system --test scenarios`), not here.

use std::path::PathBuf;

#[derive(Debug, clap::Subcommand)]
pub enum ScenarioCommand {
    /// Run scenarios; exits 1 when any fails.
    Run {
        /// Scenario files or folders of them (default: scenarios/).
        paths: Vec<PathBuf>,
    },
}

pub async fn run(command: ScenarioCommand) -> anyhow::Result<()> {
    let ScenarioCommand::Run { paths } = command;
    let paths = if paths.is_empty() { vec![PathBuf::from("scenarios")] } else { paths };
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let found = scenario::discover(&path).map_err(|error| {
                anyhow::anyhow!("cannot list {}: {error}; check the path", path.display())
            })?;
            files.extend(found);
        } else if path.is_file() {
            files.push(path);
        } else {
            anyhow::bail!("{} is neither a scenario file nor a folder of them", path.display());
        }
    }
    if files.is_empty() {
        anyhow::bail!("no scenario file (*.toml) found; give a file or a folder that holds some");
    }
    let (mut passed, mut failed) = (0, 0);
    for file in &files {
        let scenario = match scenario::load(file) {
            Ok(scenario) => scenario,
            Err(error) => {
                println!("scenario {} ... INVALID\n{error}\n", file.display());
                failed += 1;
                continue;
            }
        };
        let outcome = scenario::run(&scenario).await;
        let seconds = outcome.elapsed.as_secs_f64();
        if outcome.passed() {
            println!("scenario {} ... ok ({seconds:.1} s)", scenario.name);
            passed += 1;
        } else {
            println!("scenario {} ... FAILED ({seconds:.1} s)", scenario.name);
            for failure in &outcome.failures {
                println!("  {failure}");
            }
            println!("the transcript:\n{}", outcome.transcript);
            failed += 1;
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}
