//! The invariants that the crate graph makes structural (ARCHITECTURE.md).
//!
//! 1. The orchestrator holds the model key, so it must not depend, directly
//!    or transitively, on any crate that can talk to Nextcloud.
//! 2. The fakes never depend on the services they stand in front of.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Crates that contain a Nextcloud client (DAV/OCS) or a Nextcloud itself.
const TALKS_TO_NEXTCLOUD: &[&str] =
    &["mcp-nextcloud", "mcp-mail", "fake-nextcloud", "nextcloud-contract"];

/// Crates that are fakes, and the service crates they must not know.
const FAKES: &[&str] = &["fake-nextcloud", "fake-model"];
const SERVICES: &[&str] = &["orchestrator", "mcp-nextcloud", "mcp-mail"];

/// name → normal (non-dev) dependencies, for every package in the workspace's graph.
fn dependency_graph() -> BTreeMap<String, BTreeSet<String>> {
    // Only this platform's graph: other platforms' dependencies need not be
    // downloaded, and the invariants are the same everywhere.
    let rustc = Command::new("rustc").arg("-vV").output().expect("rustc runs");
    let host = String::from_utf8_lossy(&rustc.stdout)
        .lines()
        .find_map(|line| line.strip_prefix("host: ").map(str::to_string))
        .expect("rustc -vV names the host");
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--filter-platform", &host])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("metadata is JSON");
    let names: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|package| (package["id"].as_str().unwrap(), package["name"].as_str().unwrap()))
        .collect();
    let mut graph = BTreeMap::new();
    for node in metadata["resolve"]["nodes"].as_array().expect("resolve nodes") {
        let name = names[node["id"].as_str().unwrap()].to_string();
        let dependencies = node["deps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|dep| {
                dep["dep_kinds"].as_array().unwrap().iter().any(|kind| kind["kind"].is_null())
            })
            .map(|dep| names[dep["pkg"].as_str().unwrap()].to_string())
            .collect();
        graph.insert(name, dependencies);
    }
    graph
}

fn transitive(graph: &BTreeMap<String, BTreeSet<String>>, root: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![root.to_string()];
    while let Some(name) = stack.pop() {
        for dependency in graph.get(&name).into_iter().flatten() {
            if seen.insert(dependency.clone()) {
                stack.push(dependency.clone());
            }
        }
    }
    seen
}

#[test]
fn orchestrator_cannot_reach_nextcloud() {
    let graph = dependency_graph();
    assert!(graph.contains_key("orchestrator"), "the orchestrator crate exists");
    let reachable = transitive(&graph, "orchestrator");
    for forbidden in TALKS_TO_NEXTCLOUD {
        assert!(!reachable.contains(*forbidden), "orchestrator depends on {forbidden}");
    }
}

#[test]
fn fakes_do_not_know_the_services() {
    let graph = dependency_graph();
    for fake in FAKES {
        let reachable = transitive(&graph, fake);
        for service in SERVICES {
            assert!(!reachable.contains(*service), "{fake} depends on {service}");
        }
    }
}

#[test]
fn the_checker_sees_edges() {
    // A checker that finds no edges would pass everything: prove it finds one.
    let graph = dependency_graph();
    assert!(transitive(&graph, "system").contains("fake-nextcloud"));
}
