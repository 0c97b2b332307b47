//! `coverage.toml` against the contract suite and the docs (issue 16).
//!
//! The file lists every scenario of the Nextcloud integration features the
//! fake's scope applies to, each `covered` by named contract tests, a `gap`
//! or `out_of_scope` for one of [`REASONS`]. This test fails when a named
//! test does not exist in `tests/contract/{module}.rs`, a scenario has no
//! status or two, a reason is not in the list, or the table in
//! `docs/fake-vs-real.md` (between the coverage markers) is not the one the
//! file implies. Regenerate the table with
//!
//! ```sh
//! TAMEBI_UPDATE_DOCS=1 cargo test -p nextcloud-contract --test coverage
//! ```

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Why a scenario may be out of the fake's scope; docs/fake-vs-real.md says
/// why each is.
const REASONS: &[&str] = &["federation", "LDAP", "S3/object storage", "encryption"];

const REGENERATE: &str = "TAMEBI_UPDATE_DOCS=1 cargo test -p nextcloud-contract --test coverage";
const BEGIN: &str = "<!-- coverage:begin (generated from crates/nextcloud-contract/coverage.toml by tests/coverage.rs; do not edit) -->";
const END: &str = "<!-- coverage:end -->";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Coverage {
    feature: Vec<Feature>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Feature {
    file: String,
    scenario: Vec<Scenario>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    title: String,
    covered: Option<Vec<String>>,
    gap: Option<String>,
    out_of_scope: Option<String>,
}

enum Status<'a> {
    Covered(&'a [String]),
    Gap(&'a str),
    OutOfScope(&'a str),
}

impl Scenario {
    fn status(&self, file: &str) -> Status<'_> {
        match (&self.covered, &self.gap, &self.out_of_scope) {
            (Some(tests), None, None) => Status::Covered(tests),
            (None, Some(note), None) => Status::Gap(note),
            (None, None, Some(reason)) => Status::OutOfScope(reason),
            _ => {
                panic!("{file}: \"{}\" needs exactly one of covered, gap, out_of_scope", self.title)
            }
        }
    }
}

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn load() -> Coverage {
    let text = std::fs::read_to_string(crate_dir().join("coverage.toml")).unwrap();
    toml::from_str(&text).unwrap_or_else(|error| panic!("coverage.toml: {error}"))
}

/// Whether `tests/contract/{module}.rs` defines a function `name`.
fn defines(sources: &mut BTreeMap<String, Option<String>>, module: &str, name: &str) -> bool {
    let source = sources.entry(module.to_string()).or_insert_with(|| {
        let path = crate_dir().join("tests/contract").join(format!("{module}.rs"));
        std::fs::read_to_string(path).ok()
    });
    let Some(source) = source else { return false };
    source.lines().any(|line| {
        let line = line.trim_start();
        let line = line.strip_prefix("pub(super) ").unwrap_or(line);
        let line = line.strip_prefix("async ").unwrap_or(line);
        line.strip_prefix("fn ")
            .and_then(|rest| rest.strip_prefix(name))
            .is_some_and(|rest| rest.starts_with('(') || rest.starts_with('<'))
    })
}

#[test]
fn every_covered_scenario_names_tests_that_exist() {
    let coverage = load();
    let mut sources = BTreeMap::new();
    let mut missing = Vec::new();
    for feature in &coverage.feature {
        for scenario in &feature.scenario {
            if let Status::Covered(tests) = scenario.status(&feature.file) {
                assert!(
                    !tests.is_empty(),
                    "{}: \"{}\" covered by no test",
                    feature.file,
                    scenario.title
                );
                for test in tests {
                    let (module, name) = test.split_once("::").unwrap_or_else(|| {
                        panic!("{}: {test:?} is not `module::test_fn`", feature.file)
                    });
                    if !defines(&mut sources, module, name) {
                        missing
                            .push(format!("{}: \"{}\" names {test}", feature.file, scenario.title));
                    }
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "tests that do not exist in tests/contract/:\n{}",
        missing.join("\n")
    );
}

#[test]
fn out_of_scope_reasons_are_from_the_fixed_list_and_gaps_say_what_is_missing() {
    for feature in &load().feature {
        assert!(!feature.scenario.is_empty(), "{}: no scenarios", feature.file);
        for scenario in &feature.scenario {
            assert!(
                !scenario.title.trim().is_empty(),
                "{}: a scenario without a title",
                feature.file
            );
            match scenario.status(&feature.file) {
                Status::OutOfScope(reason) => assert!(
                    REASONS.contains(&reason),
                    "{}: \"{}\" is out of scope for {reason:?}, not one of {REASONS:?}",
                    feature.file,
                    scenario.title
                ),
                Status::Gap(note) => assert!(
                    !note.trim().is_empty(),
                    "{}: \"{}\" is a gap without saying what is missing",
                    feature.file,
                    scenario.title
                ),
                Status::Covered(_) => {}
            }
        }
    }
}

/// The docs table: one row per feature file, then its gaps grouped by note.
fn render(coverage: &Coverage) -> String {
    let mut out = String::new();
    out.push_str(BEGIN);
    out.push_str("\n\n| upstream feature (`build/integration/`) | scenarios | covered | gap | out of scope |\n|---|---|---|---|---|\n");
    let mut totals = [0usize; 4];
    let mut gaps = String::new();
    for feature in &coverage.feature {
        let (mut covered, mut gap) = (0, 0);
        let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
        let mut notes: Vec<(&str, usize)> = Vec::new();
        for scenario in &feature.scenario {
            match scenario.status(&feature.file) {
                Status::Covered(_) => covered += 1,
                Status::Gap(note) => {
                    gap += 1;
                    match notes.iter_mut().find(|(known, _)| *known == note) {
                        Some((_, count)) => *count += 1,
                        None => notes.push((note, 1)),
                    }
                }
                Status::OutOfScope(reason) => *reasons.entry(reason).or_default() += 1,
            }
        }
        let out_of_scope: usize = reasons.values().sum();
        let why = reasons
            .iter()
            .map(|(reason, count)| format!("{count} {reason}"))
            .collect::<Vec<_>>()
            .join(", ");
        let out_of_scope =
            if why.is_empty() { "0".to_string() } else { format!("{out_of_scope} ({why})") };
        let scenarios = feature.scenario.len();
        out.push_str(&format!(
            "| `{}` | {scenarios} | {covered} | {gap} | {out_of_scope} |\n",
            feature.file
        ));
        for (total, count) in
            totals.iter_mut().zip([scenarios, covered, gap, scenarios - covered - gap])
        {
            *total += count;
        }
        if !notes.is_empty() {
            gaps.push_str(&format!("- `{}`:", feature.file));
            let notes: Vec<String> = notes
                .iter()
                .map(
                    |(note, count)| {
                        if *count == 1 { note.to_string() } else { format!("{note} (×{count})") }
                    },
                )
                .collect();
            gaps.push_str(&format!(" {}.\n", notes.join("; ")));
        }
    }
    let gaps = if gaps.is_empty() {
        "No gaps: every scenario in scope is checked.\n".to_string()
    } else {
        format!("Gaps, by what is missing:\n\n{gaps}")
    };
    out.push_str(&format!(
        "| **all** | {} | {} | {} | {} |\n\n{gaps}\n{END}",
        totals[0], totals[1], totals[2], totals[3]
    ));
    out
}

#[test]
fn the_docs_table_is_the_one_coverage_toml_implies() {
    let path = crate_dir().join("../../docs/fake-vs-real.md");
    let page = std::fs::read_to_string(&path).unwrap();
    let (Some(start), Some(end)) = (page.find("<!-- coverage:begin"), page.find(END)) else {
        panic!(
            "docs/fake-vs-real.md has no coverage markers (`<!-- coverage:begin … -->` … `{END}`)"
        )
    };
    let current = &page[start..end + END.len()];
    let rendered = render(&load());
    if std::env::var_os("TAMEBI_UPDATE_DOCS").is_some() {
        let updated = format!("{}{rendered}{}", &page[..start], &page[end + END.len()..]);
        std::fs::write(Path::new(&path), updated).unwrap();
        return;
    }
    assert!(
        current == rendered,
        "docs/fake-vs-real.md's coverage table is out of date with coverage.toml.\n\
         Regenerate it with:\n\n    {REGENERATE}\n\nand commit the result."
    );
}
