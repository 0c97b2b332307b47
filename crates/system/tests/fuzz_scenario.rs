//! Bounded fuzzing of the scenario file reader (`scenario::format::parse`,
//! used read-only here): every scenario in `scenarios/` mutated character
//! by character, and random TOML-ish text. A broken file must be a
//! diagnostic with a line and a column inside the file, never a panic.
//! Cases: `PROPTEST_CASES` (default 256); docs/reliability.md, "Fuzzing".

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

static SCENARIOS: LazyLock<Vec<(PathBuf, String)>> = LazyLock::new(|| {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "toml"))
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            (path, text)
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no scenarios found in {}", directory.display());
    files
});

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(256);
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

const CASE_TIME_MAX: Duration = Duration::from_secs(5);

fn parse_bounded(path: &Path, text: &str) -> Result<(), TestCaseError> {
    let started = Instant::now();
    let result = scenario::format::parse(path, text);
    prop_assert!(started.elapsed() < CASE_TIME_MAX, "took {:?}", started.elapsed());
    if let Err(error) = result {
        prop_assert!(!error.0.is_empty(), "an error names at least one problem");
        let lines = text.lines().count().max(1);
        for diagnostic in &error.0 {
            prop_assert!(diagnostic.line >= 1 && diagnostic.line <= lines + 1, "{diagnostic:?}");
            prop_assert!(diagnostic.column >= 1, "{diagnostic:?}");
            prop_assert!(!diagnostic.message.is_empty());
        }
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Edit {
    Replace(prop::sample::Index, char),
    Delete(prop::sample::Index, usize),
    Insert(prop::sample::Index, String),
    Duplicate(prop::sample::Index, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let interesting = prop_oneof![
        Just("\"".to_string()),
        Just("[".to_string()),
        Just("]]".to_string()),
        Just("\n[[turns]]\n".to_string()),
        Just("=".to_string()),
        Just("\"\"\"".to_string()),
        Just("\n".to_string()),
        Just("{".to_string()),
        Just("#".to_string()),
        "\\PC{1,8}",
    ];
    prop_oneof![
        (any::<prop::sample::Index>(), any::<char>()).prop_map(|(at, c)| Edit::Replace(at, c)),
        (any::<prop::sample::Index>(), 1..40usize).prop_map(|(at, n)| Edit::Delete(at, n)),
        (any::<prop::sample::Index>(), interesting).prop_map(|(at, s)| Edit::Insert(at, s)),
        (any::<prop::sample::Index>(), 1..200usize).prop_map(|(at, n)| Edit::Duplicate(at, n)),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for edit in edits {
        if chars.is_empty() {
            break;
        }
        match edit {
            Edit::Replace(at, c) => {
                let at = at.index(chars.len());
                chars[at] = *c;
            }
            Edit::Delete(at, n) => {
                let at = at.index(chars.len());
                let end = (at + n).min(chars.len());
                chars.drain(at..end);
            }
            Edit::Insert(at, s) => {
                let at = at.index(chars.len());
                chars.splice(at..at, s.chars());
            }
            Edit::Duplicate(at, n) => {
                let at = at.index(chars.len());
                let end = (at + n).min(chars.len());
                let slice: Vec<char> = chars[at..end].to_vec();
                chars.splice(end..end, slice);
            }
        }
    }
    chars.into_iter().collect()
}

#[test]
fn every_scenario_parses_unmutated() {
    for (path, text) in SCENARIOS.iter() {
        if let Err(error) = scenario::format::parse(path, text) {
            panic!("{}: {:?}", path.display(), error.0);
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn mutated_scenarios_are_diagnostics_never_panics(
        which in any::<prop::sample::Index>(),
        edits in proptest::collection::vec(edit(), 1..6),
    ) {
        let (path, text) = &SCENARIOS[which.index(SCENARIOS.len())];
        parse_bounded(path, &apply(text, edits.as_slice()))?;
    }

    #[test]
    fn random_text_is_a_diagnostic_never_a_panic(text in "(\\PC|\n|\\[|\\]|=|\"){0,400}") {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/fuzz.toml");
        parse_bounded(&path, &text)?;
    }
}
