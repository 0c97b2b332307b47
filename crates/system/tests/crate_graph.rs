//! The invariants that the crate graph makes structural (ARCHITECTURE.md).
//!
//! 1. The orchestrator holds the model key, so it must not depend, directly
//!    or transitively, on any crate that can talk to Nextcloud. Our own
//!    crates it may reach are an allow-list: a new workspace crate is
//!    refused until someone has checked it holds no Nextcloud client and
//!    added it here, rather than allowed until someone remembers to deny it.
//! 2. The fakes never depend on the services they stand in front of.
//! 3. The agent loop receives its tools and context as values: the `agent`
//!    crate reaches no MCP transport, no storage and no HTTP client, and no
//!    workspace crate off its allow-list (the orchestrator's stores, its
//!    MCP client and its prompt files are the orchestrator's, which the
//!    agent cannot depend on without a cycle).

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Crates that contain a Nextcloud client (DAV/OCS) or a Nextcloud itself.
const TALKS_TO_NEXTCLOUD: &[&str] =
    &["mcp-nextcloud", "mcp-mail", "fake-nextcloud", "nextcloud-contract"];

/// The workspace crates the orchestrator may reach, directly or not; each
/// checked to hold no Nextcloud client: one SQLite file (`sqlite-db`), the
/// wire vocabulary (`wire`, names and types, no I/O), bounded listeners
/// (`http-serve`, server side only), the agent loop (`agent`, which itself
/// reaches no workspace crate).
const ORCHESTRATOR_MAY_REACH: &[&str] = &["sqlite-db", "wire", "http-serve", "agent"];

/// Crates the agent loop may not reach, directly or not: the MCP transport,
/// SQLite, the HTTP client.
const AGENT_MUST_NOT_REACH: &[&str] = &["rmcp", "rusqlite", "reqwest"];

/// The workspace crates the agent loop may reach: none. Its collaborators
/// arrive as values; a workspace crate added here must hold no transport,
/// storage or prompt file.
const AGENT_MAY_REACH: &[&str] = &[];

/// Crates that are fakes, and the service crates they must not know.
const FAKES: &[&str] = &["fake-nextcloud", "fake-model"];
const SERVICES: &[&str] = &["orchestrator", "mcp-nextcloud", "mcp-mail"];

/// The crate graph: normal (non-dev) dependencies by package name, and
/// which packages are this workspace's own.
struct Graph {
    edges: BTreeMap<String, BTreeSet<String>>,
    members: BTreeSet<String>,
}

/// The workspace crates `root` reaches that `allowed` does not name.
fn beyond_allow_list(graph: &Graph, root: &str, allowed: &[&str]) -> BTreeSet<String> {
    transitive(&graph.edges, root)
        .into_iter()
        .filter(|name| graph.members.contains(name) && !allowed.contains(&name.as_str()))
        .collect()
}

/// name → normal (non-dev) dependencies, for every package in the workspace's graph.
fn dependency_graph() -> BTreeMap<String, BTreeSet<String>> {
    graph().edges
}

fn graph() -> Graph {
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
    let members = metadata["workspace_members"]
        .as_array()
        .expect("workspace members")
        .iter()
        .map(|id| names[id.as_str().unwrap()].to_string())
        .collect();
    Graph { edges: graph, members }
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
fn the_orchestrator_reaches_only_allowed_workspace_crates() {
    let graph = graph();
    let beyond = beyond_allow_list(&graph, "orchestrator", ORCHESTRATOR_MAY_REACH);
    assert!(
        beyond.is_empty(),
        "the orchestrator now reaches workspace crates that are not on its allow-list: {beyond:?}. \
         If such a crate holds no Nextcloud client (no DAV/OCS/HTTP client to Nextcloud, no \
         Nextcloud credential), add it to ORCHESTRATOR_MAY_REACH with why; otherwise the \
         orchestrator must not depend on it"
    );
    // The list itself names no crate that talks to Nextcloud.
    for allowed in ORCHESTRATOR_MAY_REACH {
        assert!(!TALKS_TO_NEXTCLOUD.contains(allowed), "{allowed}");
    }
}

#[test]
fn a_new_crate_that_talks_to_nextcloud_fails_the_allow_list() {
    // The graph of today plus one new workspace crate the deny-list has never
    // heard of, reached through an allowed one: the allow-list refuses it.
    let mut graph = graph();
    graph.members.insert("nextcloud-client".into());
    graph.edges.insert("nextcloud-client".into(), BTreeSet::from(["reqwest".to_string()]));
    graph.edges.entry("sqlite-db".into()).or_default().insert("nextcloud-client".into());
    let beyond = beyond_allow_list(&graph, "orchestrator", ORCHESTRATOR_MAY_REACH);
    assert_eq!(beyond, BTreeSet::from(["nextcloud-client".to_string()]));
    // The deny-list alone would have let it through.
    let reachable = transitive(&graph.edges, "orchestrator");
    assert!(TALKS_TO_NEXTCLOUD.iter().all(|name| !reachable.contains(*name)));
    // And an external crate is not a workspace crate: it is not refused here.
    assert!(!beyond.contains("reqwest"));
}

#[test]
fn the_agent_reaches_no_transport_storage_or_workspace_crate() {
    let graph = graph();
    assert!(graph.edges.contains_key("agent"), "the agent crate exists");
    assert!(
        transitive(&graph.edges, "orchestrator").contains("agent"),
        "the orchestrator drives the agent crate's loop"
    );
    let reachable = transitive(&graph.edges, "agent");
    for forbidden in AGENT_MUST_NOT_REACH {
        assert!(!reachable.contains(*forbidden), "the agent crate depends on {forbidden}");
    }
    let beyond = beyond_allow_list(&graph, "agent", AGENT_MAY_REACH);
    assert!(
        beyond.is_empty(),
        "the agent crate now reaches workspace crates that are not on its allow-list: {beyond:?}. \
         The loop gets its model, tools and context as values: if such a crate holds no MCP \
         transport, storage or prompt file, add it to AGENT_MAY_REACH with why; otherwise pass \
         what the loop needs from it in through the agent's traits"
    );
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
