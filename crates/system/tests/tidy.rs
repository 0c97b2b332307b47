//! Repository hygiene that code review would otherwise have to remember.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// Every module says what it is for in its first line.
#[test]
fn every_module_opens_with_a_doc_comment() {
    let mut files = Vec::new();
    for crate_dir in std::fs::read_dir(workspace_root().join("crates")).unwrap() {
        let crate_dir = crate_dir.unwrap().path();
        for sub in ["src", "tests"] {
            if crate_dir.join(sub).is_dir() {
                rust_files(&crate_dir.join(sub), &mut files);
            }
        }
    }
    assert!(files.len() > 10, "found the sources");
    let missing: Vec<String> = files
        .iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            let first = text.lines().find(|line| !line.trim().is_empty()).unwrap_or("");
            !first.starts_with("//!")
        })
        .map(|path| path.strip_prefix(workspace_root()).unwrap().display().to_string())
        .collect();
    assert!(missing.is_empty(), "modules without a `//!` opening doc: {missing:#?}");
}

/// Each crate says its one job in its manifest.
#[test]
fn every_crate_has_a_description() {
    for crate_dir in std::fs::read_dir(workspace_root().join("crates")).unwrap() {
        let manifest = crate_dir.unwrap().path().join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        assert!(text.contains("\ndescription = "), "{} has no description", manifest.display());
    }
}

/// Each crate inherits the workspace's lints (`unsafe_code` and
/// `clippy::unwrap_used` denied), so a new crate cannot opt out by omission.
#[test]
fn every_crate_inherits_the_workspace_lints() {
    for crate_dir in std::fs::read_dir(workspace_root().join("crates")).unwrap() {
        let manifest = crate_dir.unwrap().path().join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        assert!(
            text.contains("\n[lints]\nworkspace = true\n"),
            "{} does not say [lints] workspace = true",
            manifest.display()
        );
    }
}
