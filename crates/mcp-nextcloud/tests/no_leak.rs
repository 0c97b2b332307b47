//! The promise, as a property: over random share graphs, no tool gives a
//! user anything they cannot read.
//!
//! Each case builds a random world — 3 or 4 users, two groups with random
//! members, random folders and text files, random user and group shares
//! with random permissions — into one running fake Nextcloud (its users,
//! groups and storage are replaced per case; the stack starts once, because
//! starting it costs an RSA key). Then, for every user: `files_search` for
//! everything, `files_grep` for a word every file holds (after the user's
//! own searches filled the index), `files_read` by path and by fileid of every node in the world
//! must answer exactly what an independent model of Nextcloud's sharing
//! says that user can read, and `not_found` for the rest. Random shares are
//! then revoked and everything is checked again (a revoked share is gone on
//! the next call). Last, every user writes into every folder of the world:
//! a write lands only where the model says the user may create, and never
//! a file appears anywhere else.
//!
//! The model knows nothing of the fake: a user sees their own tree, plus,
//! for every share they receive (directly or through a group, never their
//! own), the shared node's subtree mounted at the share's target; they may
//! create in a folder they own or one shared with the create bit.
//!
//! On failure the seed is printed; `PROPTEST_RNG_SEED=<seed>` replays the
//! case and proptest prints the smallest world it shrank to.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::*;
use fake_nextcloud::fixture::{
    FileFixture, FolderFixture, GroupFixture, ShareFixture, UserFixture,
};
use fake_nextcloud::{Fixture, World};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Cases per run: enough to cover user shares, group shares, nesting and
/// revocations, few enough for CI (each case is several hundred calls).
const CASES: u32 = 16;
/// How many smaller worlds a failure is retried with while shrinking.
const SHRINK_ITERATIONS_MAX: u32 = 256;
const USERS: [&str; 4] = ["ana", "ben", "cyd", "dee"];
const GROUPS: [&str; 2] = ["red", "blue"];
const FOLDERS: [&str; 5] = ["Docs", "Docs/Old", "Work", "Work/Plans", "Private"];
const NAMES: [&str; 4] = ["a.txt", "b.md", "notes.md", "plan.txt"];

/// The random choices; indices wrap around the lists above, so any vector
/// is a valid world and shrinking stays simple.
#[derive(Debug, Clone)]
struct Plan {
    user_count: usize,
    /// Per user: member of red, member of blue.
    memberships: Vec<(bool, bool)>,
    /// (user, folder) explicitly created, possibly empty.
    folders: Vec<(usize, usize)>,
    /// (user, folder or root, name).
    files: Vec<(usize, usize, usize)>,
    shares: Vec<SharePlan>,
}

#[derive(Debug, Clone)]
struct SharePlan {
    owner: usize,
    /// Index into the owner's nodes (folders and files, sorted).
    node: usize,
    recipient: Recipient,
    /// Bits over read: update, create, delete, share.
    extra_permissions: u8,
    revoked: bool,
}

#[derive(Debug, Clone, Copy)]
enum Recipient {
    User(usize),
    Group(usize),
}

fn plan_strategy() -> impl Strategy<Value = Plan> {
    let share = (
        0..4usize,
        0..32usize,
        prop_oneof![(0..4usize).prop_map(Recipient::User), (0..2usize).prop_map(Recipient::Group),],
        0..16u8,
        any::<bool>(),
    )
        .prop_map(|(owner, node, recipient, extra_permissions, revoked)| SharePlan {
            owner,
            node,
            recipient,
            extra_permissions,
            revoked,
        });
    (
        3..=4usize,
        proptest::collection::vec((any::<bool>(), any::<bool>()), 4),
        proptest::collection::vec((0..4usize, 0..FOLDERS.len()), 0..6),
        proptest::collection::vec((0..4usize, 0..=FOLDERS.len(), 0..NAMES.len()), 1..14),
        proptest::collection::vec(share, 0..8),
    )
        .prop_map(|(user_count, memberships, folders, files, shares)| Plan {
            user_count,
            memberships,
            folders,
            files,
            shares,
        })
}

/// The world a plan describes, in plain terms.
#[derive(Debug, Clone)]
struct Spec {
    users: Vec<&'static str>,
    /// uid → groups.
    groups: BTreeMap<&'static str, BTreeSet<&'static str>>,
    /// (owner, path) → content; `None` for a folder. Roots ("") included.
    nodes: BTreeMap<(&'static str, String), Option<String>>,
    shares: Vec<ShareSpec>,
}

#[derive(Debug, Clone)]
struct ShareSpec {
    owner: &'static str,
    path: String,
    recipient: RecipientSpec,
    permissions: u8,
    /// Mount point in every recipient's root; unique, so no collisions.
    target: String,
    /// Revoked after the first round of checks; the model of the second
    /// round is the spec without these shares.
    revoked: bool,
}

#[derive(Debug, Clone)]
enum RecipientSpec {
    User(&'static str),
    Group(&'static str),
}

impl Plan {
    fn spec(&self) -> Spec {
        let users: Vec<&'static str> = USERS[..self.user_count].to_vec();
        let user = |index: usize| users[index % users.len()];
        let mut groups = BTreeMap::new();
        for (index, uid) in users.iter().enumerate() {
            let (red, blue) = self.memberships[index];
            let mut member_of = BTreeSet::new();
            if red {
                member_of.insert(GROUPS[0]);
            }
            if blue {
                member_of.insert(GROUPS[1]);
            }
            groups.insert(*uid, member_of);
        }
        let mut nodes = BTreeMap::new();
        let add_folder = |nodes: &mut BTreeMap<_, _>, owner: &'static str, path: &str| {
            let mut prefix = String::new();
            nodes.insert((owner, String::new()), None);
            for segment in path.split('/').filter(|segment| !segment.is_empty()) {
                if !prefix.is_empty() {
                    prefix.push('/');
                }
                prefix.push_str(segment);
                nodes.insert((owner, prefix.clone()), None);
            }
        };
        for uid in &users {
            add_folder(&mut nodes, uid, "");
        }
        for (owner, folder) in &self.folders {
            add_folder(&mut nodes, user(*owner), FOLDERS[*folder]);
        }
        for (index, (owner, folder, name)) in self.files.iter().enumerate() {
            let owner = user(*owner);
            let folder = FOLDERS.get(*folder).copied().unwrap_or("");
            add_folder(&mut nodes, owner, folder);
            let path = if folder.is_empty() {
                NAMES[*name].to_string()
            } else {
                format!("{folder}/{}", NAMES[*name])
            };
            nodes
                .entry((owner, path.clone()))
                .or_insert_with(|| Some(format!("{owner}'s {path}, written #{index}\n")));
        }
        let mut shares = Vec::new();
        let mut shared_nodes = BTreeSet::new();
        for share in &self.shares {
            let owner = user(share.owner);
            let candidates: Vec<&String> = nodes
                .keys()
                .filter(|(node_owner, path)| *node_owner == owner && !path.is_empty())
                .map(|(_, path)| path)
                .collect();
            if candidates.is_empty() {
                continue;
            }
            let path = candidates[share.node % candidates.len()].clone();
            let recipient = match share.recipient {
                // Nextcloud refuses a share with oneself.
                Recipient::User(index) if user(index) == owner => continue,
                Recipient::User(index) => RecipientSpec::User(user(index)),
                Recipient::Group(index) => RecipientSpec::Group(GROUPS[index]),
            };
            // One share per node: Nextcloud merges several shares of one
            // node into one mount (a "super share"), which this model and
            // the fake do not simulate.
            if !shared_nodes.insert((owner, path.clone())) {
                continue;
            }
            shares.push(ShareSpec {
                owner,
                path,
                recipient,
                permissions: 1 | (share.extra_permissions << 1),
                target: format!("in-{}", shares.len()),
                revoked: share.revoked,
            });
        }
        Spec { users, groups, nodes, shares }
    }

    fn fixture(spec: &Spec) -> Fixture {
        let mut fixture = Fixture::default();
        for gid in GROUPS {
            fixture.groups.push(GroupFixture { gid: gid.to_string(), display_name: None });
        }
        for uid in &spec.users {
            fixture.users.push(UserFixture {
                uid: uid.to_string(),
                display_name: None,
                password: format!("{uid}-password"),
                app_passwords: Vec::new(),
                email: None,
                groups: spec.groups[uid].iter().map(|gid| gid.to_string()).collect(),
                language: None,
                timezone: None,
                quota_bytes: None,
            });
        }
        for ((owner, path), content) in &spec.nodes {
            match content {
                None if path.is_empty() => {}
                None => fixture.folders.push(FolderFixture {
                    owner: owner.to_string(),
                    path: path.clone(),
                    mtime: None,
                }),
                Some(content) => fixture.files.push(FileFixture {
                    owner: owner.to_string(),
                    path: path.clone(),
                    content: Some(content.clone()),
                    source: None,
                    mtime: None,
                    mime: None,
                    favorite: false,
                }),
            }
        }
        for share in &spec.shares {
            let (share_with, share_with_group) = match share.recipient {
                RecipientSpec::User(uid) => (Some(uid.to_string()), None),
                RecipientSpec::Group(gid) => (None, Some(gid.to_string())),
            };
            fixture.shares.push(ShareFixture {
                owner: share.owner.to_string(),
                path: share.path.clone(),
                share_with,
                share_with_group,
                permissions: share.permissions,
                target: Some(share.target.clone()),
            });
        }
        fixture
    }
}

/// What one user sees at one path, according to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    owner: &'static str,
    owner_path: String,
    content: Option<String>,
    can_create: bool,
}

impl Spec {
    /// The model: every path the user sees (the root included), and what is there.
    fn view(&self, uid: &str) -> BTreeMap<String, Seen> {
        let mut view = BTreeMap::new();
        for ((owner, path), content) in &self.nodes {
            if *owner == uid {
                view.insert(
                    path.clone(),
                    Seen {
                        owner,
                        owner_path: path.clone(),
                        content: content.clone(),
                        can_create: content.is_none(),
                    },
                );
            }
        }
        for share in &self.shares {
            let receives = match share.recipient {
                RecipientSpec::User(recipient) => recipient == uid,
                RecipientSpec::Group(gid) => self.groups[uid].contains(gid),
            };
            if share.owner == uid || !receives {
                continue;
            }
            for ((owner, path), content) in &self.nodes {
                let rest = if *path == share.path {
                    Some(String::new())
                } else {
                    path.strip_prefix(&format!("{}/", share.path)).map(|rest| format!("/{rest}"))
                };
                let Some(rest) = rest.filter(|_| *owner == share.owner) else { continue };
                view.insert(
                    format!("{}{rest}", share.target),
                    Seen {
                        owner,
                        owner_path: path.clone(),
                        content: content.clone(),
                        can_create: content.is_none() && share.permissions & 4 != 0,
                    },
                );
            }
        }
        view
    }

    fn is_folder(&self, owner: &str, path: &str) -> bool {
        self.nodes.iter().any(|((node_owner, node_path), content)| {
            *node_owner == owner && node_path == path && content.is_none()
        })
    }
}

/// (path, fileid) of each item of the result's `list` (`files`, `passages`).
fn found(result: &Value, list: &str) -> BTreeSet<(String, u64)> {
    let items = result["structuredContent"][list].as_array().unwrap().iter();
    items
        .map(|item| (item["path"].as_str().unwrap().to_string(), item["fileid"].as_u64().unwrap()))
        .collect()
}

/// Fails the case with what was asked, of whom, and what came back.
macro_rules! ensure {
    ($condition:expr, $($message:tt)+) => {
        if !$condition {
            return Err(TestCaseError::fail(format!($($message)+)));
        }
    };
}

/// Replaces the fake's users, groups and files with the spec's world;
/// returns the fileid of every (owner, path).
fn install(stack: &Stack, spec: &Spec) -> BTreeMap<(&'static str, String), u64> {
    let fixture = Plan::fixture(spec);
    let built = World::from_fixture(&fixture, stack.fake.shared.now())
        .unwrap_or_else(|problems| panic!("the generated fixture is consistent: {problems:?}"));
    let mut world = stack.fake.shared.world();
    world.users = built.users;
    world.groups = built.groups;
    world.storage = built.storage;
    spec.nodes
        .keys()
        .map(|(owner, path)| {
            let id = world.storage.node_at(owner, path).expect("every node was seeded").id;
            ((*owner, path.clone()), id)
        })
        .collect()
}

/// Every (owner, path) that exists in the fake, from each user's own tree.
fn stored_nodes(stack: &Stack) -> BTreeSet<(String, String)> {
    let world = stack.fake.shared.world();
    let mut nodes = BTreeSet::new();
    for user in world.users.values() {
        for entry in world.storage.walk(user.viewer(), "").unwrap_or_default() {
            if entry.share.is_none() {
                nodes.insert((user.uid.clone(), entry.path.clone()));
            }
        }
    }
    nodes
}

/// One call and what the model expects of it.
struct Probe {
    uid: &'static str,
    tool: &'static str,
    arguments: Value,
    expect: Expect,
    /// What the call means, for the failure message.
    context: String,
}

enum Expect {
    /// Exactly these (path, fileid) pairs, or a subset of them when the
    /// model holds more than one search returns.
    Search(BTreeSet<(String, u64)>),
    /// `files_grep` passages from exactly these (path, fileid) files, or a
    /// subset when the model holds more than one page.
    Grep(BTreeSet<(String, u64)>),
    /// This text, from this file.
    Text { content: String, fileid: Option<u64> },
    /// A success.
    Success,
    /// A failure of one of these kinds.
    Failure(&'static [&'static str]),
}

/// Calls in flight at once: the case is latency-bound, not CPU-bound.
const IN_FLIGHT_MAX: usize = 8;

/// Runs the probes concurrently and checks each answer against its expectation.
async fn run_probes(stack: &Arc<Stack>, probes: Vec<Probe>) -> Result<(), TestCaseError> {
    let mut answers: Vec<Option<Value>> = vec![None; probes.len()];
    // Minting a token is an RSA signature, which would cost more than the
    // call itself: each user's headers are minted once per run of probes.
    let mut headers: BTreeMap<&str, Arc<Vec<(String, String)>>> = BTreeMap::new();
    for probe in &probes {
        headers.entry(probe.uid).or_insert_with(|| Arc::new(stack.headers_for(probe.uid)));
    }
    let mut in_flight = tokio::task::JoinSet::new();
    for (index, probe) in probes.iter().enumerate() {
        if in_flight.len() == IN_FLIGHT_MAX {
            let (index, answer) = in_flight.join_next().await.unwrap().unwrap();
            answers[index] = Some(answer);
        }
        let stack = stack.clone();
        let headers = headers[probe.uid].clone();
        let params = json!({"name": probe.tool, "arguments": probe.arguments});
        in_flight
            .spawn(async move { (index, stack.rpc_result(&headers, "tools/call", params).await) });
    }
    while let Some(joined) = in_flight.join_next().await {
        let (index, answer) = joined.unwrap();
        answers[index] = Some(answer);
    }
    for (probe, answer) in probes.iter().zip(answers) {
        let result = answer.expect("every probe answered");
        let kind = failure_kind(&result);
        let Probe { uid, tool, arguments, context, .. } = probe;
        let what = format!("{context}: {uid} called {tool} {arguments}");
        match &probe.expect {
            Expect::Search(expected) => {
                ensure!(kind.is_none(), "{what} and failed: {result}");
                let found = found(&result, "files");
                if expected.len() <= files_search_limit_max() {
                    ensure!(&found == expected, "{what}\n found {found:?}\n model {expected:?}");
                } else {
                    ensure!(
                        found.is_subset(expected),
                        "{what}: found what the model hides: {:?}",
                        found.difference(expected)
                    );
                }
            }
            Expect::Grep(expected) => {
                ensure!(kind.is_none(), "{what} and failed: {result}");
                let found = found(&result, "passages");
                // A file mounted twice (a file share inside a shared
                // folder) is one file: it is found once, at one of its paths.
                ensure!(
                    found.is_subset(expected),
                    "{what}: found what the model hides: {:?}",
                    found.difference(expected)
                );
                let found_ids: BTreeSet<u64> = found.iter().map(|(_, id)| *id).collect();
                let expected_ids: BTreeSet<u64> = expected.iter().map(|(_, id)| *id).collect();
                if expected_ids.len() <= files_grep_limit_max() {
                    ensure!(
                        found_ids == expected_ids,
                        "{what}\n found {found:?}\n model {expected:?}"
                    );
                }
            }
            Expect::Text { content, fileid } => {
                ensure!(
                    result["structuredContent"]["text"] == json!(content),
                    "{what}, the model says {content:?}: {result}"
                );
                if let Some(fileid) = fileid {
                    ensure!(
                        result["structuredContent"]["fileid"] == json!(fileid),
                        "{what}: {result}"
                    );
                }
            }
            Expect::Success => ensure!(kind.is_none(), "{what}, the model allows it: {result}"),
            Expect::Failure(kinds) => ensure!(
                kind.is_some_and(|kind| kinds.contains(&kind)),
                "{what}, the model expects one of {kinds:?}: {result}"
            ),
        }
    }
    Ok(())
}

fn files_grep_limit_max() -> usize {
    mcp_nextcloud::tools::files_grep::LIMIT_MAX
}

fn files_search_limit_max() -> usize {
    mcp_nextcloud::tools::files_search::LIMIT_MAX as usize
}

fn read_probes(
    spec: &Spec,
    ids: &BTreeMap<(&'static str, String), u64>,
    phase: &str,
) -> Vec<Probe> {
    let mut probes = Vec::new();
    for uid in &spec.users {
        let view = spec.view(uid);
        let id_of = |seen: &Seen| ids[&(seen.owner, seen.owner_path.clone())];
        let probe = |tool, arguments, expect, context: String| Probe {
            uid,
            tool,
            arguments,
            expect,
            context: format!("{phase}, {context}"),
        };

        // files_search, everything.
        let expected: BTreeSet<(String, u64)> = view
            .iter()
            .filter(|(path, _)| !path.is_empty())
            .map(|(path, seen)| (path.clone(), id_of(seen)))
            .collect();
        probes.push(probe(
            "files_search",
            json!({"limit": files_search_limit_max()}),
            Expect::Search(expected),
            "searching everything".to_string(),
        ));

        // files_grep for the word every file's content has: passages of
        // exactly the files the user can read, wherever the index got them.
        let readable: BTreeSet<(String, u64)> = view
            .iter()
            .filter(|(_, seen)| seen.content.is_some())
            .map(|(path, seen)| (path.clone(), id_of(seen)))
            .collect();
        probes.push(probe(
            "files_grep",
            json!({"query": "written", "limit": files_grep_limit_max()}),
            Expect::Grep(readable),
            "grepping every file".to_string(),
        ));

        // files_read by path: every path of the world and every path the user sees.
        let paths: BTreeSet<String> = spec
            .nodes
            .keys()
            .map(|(_, path)| path.clone())
            .chain(view.keys().cloned())
            .filter(|path| !path.is_empty())
            .collect();
        for path in paths {
            let expect = match view.get(&path) {
                Some(Seen { content: Some(content), .. }) => {
                    Expect::Text { content: content.clone(), fileid: None }
                }
                Some(Seen { content: None, .. }) => Expect::Failure(&["invalid_arguments"]),
                None => Expect::Failure(&["not_found"]),
            };
            probes.push(probe("files_read", json!({"path": path}), expect, "by path".to_string()));
        }

        // files_read by fileid: every node of the world.
        for ((owner, owner_path), fileid) in ids {
            if owner_path.is_empty() {
                continue;
            }
            let visible =
                view.values().find(|seen| seen.owner == *owner && seen.owner_path == *owner_path);
            let expect = match visible {
                Some(Seen { content: Some(content), .. }) => {
                    Expect::Text { content: content.clone(), fileid: Some(*fileid) }
                }
                Some(Seen { content: None, .. }) => Expect::Failure(&["invalid_arguments"]),
                None => Expect::Failure(&["not_found"]),
            };
            probes.push(probe(
                "files_read",
                json!({"fileid": fileid}),
                expect,
                format!("by the fileid of {owner}:{owner_path}"),
            ));
        }
    }
    probes
}

/// Every user writes into every folder path of the world and every folder
/// they see; returns the probes and the (owner, path) of each file the model
/// says is created.
fn write_probes(spec: &Spec) -> (Vec<Probe>, BTreeSet<(String, String)>) {
    let mut probes = Vec::new();
    let mut created = BTreeSet::new();
    for uid in &spec.users {
        let view = spec.view(uid);
        let folders: BTreeSet<String> = spec
            .nodes
            .iter()
            .filter(|(_, content)| content.is_none())
            .map(|((_, path), _)| path.clone())
            .chain(
                view.iter()
                    .filter(|(_, seen)| seen.content.is_none())
                    .map(|(path, _)| path.clone()),
            )
            .collect();
        for (index, folder) in folders.iter().enumerate() {
            let name = format!("from-{uid}-{index}.txt");
            let path = if folder.is_empty() { name.clone() } else { format!("{folder}/{name}") };
            let expect = match view.get(folder) {
                Some(seen) if seen.can_create => {
                    let owner_path = if seen.owner_path.is_empty() {
                        name.clone()
                    } else {
                        format!("{}/{name}", seen.owner_path)
                    };
                    created.insert((seen.owner.to_string(), owner_path));
                    Expect::Success
                }
                Some(seen) => {
                    assert!(spec.is_folder(seen.owner, &seen.owner_path));
                    Expect::Failure(&["refused_by_nextcloud"])
                }
                // A folder the user cannot see is one that does not exist.
                None => Expect::Failure(&["conflict", "not_found", "refused_by_nextcloud"]),
            };
            probes.push(Probe {
                uid,
                tool: "files_write",
                arguments: json!({"path": path, "content": "written"}),
                expect,
                context: format!("writing into {folder:?}"),
            });
        }
    }
    (probes, created)
}

/// How many cases exercised each thing worth testing, so the property can
/// never pass by generating only dull worlds.
#[derive(Debug, Default)]
struct Coverage {
    shared_file_read: std::cell::Cell<u32>,
    shared_folder_created_in: std::cell::Cell<u32>,
    received_share_revoked: std::cell::Cell<u32>,
}

impl Coverage {
    fn count(&self, spec: &Spec, revoked: &Spec) {
        let bump = |counter: &std::cell::Cell<u32>| counter.set(counter.get() + 1);
        let views: Vec<(&str, BTreeMap<String, Seen>)> =
            spec.users.iter().map(|uid| (*uid, spec.view(uid))).collect();
        if views.iter().any(|(uid, view)| {
            view.values().any(|seen| seen.owner != *uid && seen.content.is_some())
        }) {
            bump(&self.shared_file_read);
        }
        if views
            .iter()
            .any(|(uid, view)| view.values().any(|seen| seen.owner != *uid && seen.can_create))
        {
            bump(&self.shared_folder_created_in);
        }
        if spec.users.iter().any(|uid| spec.view(uid).len() != revoked.view(uid).len()) {
            bump(&self.received_share_revoked);
        }
    }
}

/// Searches as `uid` until their passes have read everything they can.
async fn warm_index(stack: &Stack, uid: &str) -> Result<(), TestCaseError> {
    for _ in 0..10 {
        let result = stack.call_tool(uid, "files_grep", json!({"query": "written"})).await;
        stack.mcp().index().idle().await;
        if result["structuredContent"]["index"] == "ready" {
            return Ok(());
        }
    }
    Err(TestCaseError::fail(format!("{uid}'s index never became ready")))
}

async fn check_case(
    stack: &Arc<Stack>,
    plan: &Plan,
    coverage: &Coverage,
) -> Result<(), TestCaseError> {
    let spec = plan.spec();
    let ids = install(stack, &spec);
    // File ids start again with every world: the index starts again too,
    // and every user's searches fill it with what they can read.
    stack.mcp().index().clear().await.expect("the index clears");
    for uid in &spec.users {
        warm_index(stack, uid).await?;
    }
    run_probes(stack, read_probes(&spec, &ids, "before revocations")).await?;
    {
        let mut world = stack.fake.shared.world();
        for share in spec.shares.iter().filter(|share| share.revoked) {
            let id = world
                .storage
                .shares()
                .find(|stored| stored.target == share.target)
                .expect("the share was created")
                .id;
            world.storage.delete_share(share.owner, id).expect("the owner may revoke");
        }
    }
    let mut revoked = spec.clone();
    revoked.shares.retain(|share| !share.revoked);
    coverage.count(&spec, &revoked);
    run_probes(stack, read_probes(&revoked, &ids, "after revocations")).await?;

    let before = stored_nodes(stack);
    let (probes, created) = write_probes(&revoked);
    run_probes(stack, probes).await?;
    let after = stored_nodes(stack);
    let expected: BTreeSet<(String, String)> = before.union(&created).cloned().collect();
    ensure!(
        after == expected,
        "writes changed the world unexpectedly\n appeared {:?}\n missing {:?}",
        after.difference(&expected).collect::<Vec<_>>(),
        expected.difference(&after).collect::<Vec<_>>()
    );
    Ok(())
}

#[test]
fn no_tool_gives_a_user_what_they_cannot_read() {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
                as u64
        });
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let stack = Arc::new(runtime.block_on(start(second_token())));
    let cases =
        std::env::var("PROPTEST_CASES").ok().and_then(|cases| cases.parse().ok()).unwrap_or(CASES);
    let config = Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        // A case is hundreds of calls: shrink for a while, not for hours.
        max_shrink_iters: SHRINK_ITERATIONS_MAX,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let coverage = Coverage::default();
    let outcome =
        runner.run(&plan_strategy(), |plan| runtime.block_on(check_case(&stack, &plan, &coverage)));
    if let Err(failure) = outcome {
        panic!("{failure}\nreplay with PROPTEST_RNG_SEED={seed}");
    }
    assert!(coverage.shared_file_read.get() > 0, "{coverage:?} (seed {seed})");
    assert!(coverage.shared_folder_created_in.get() > 0, "{coverage:?} (seed {seed})");
    assert!(coverage.received_share_revoked.get() > 0, "{coverage:?} (seed {seed})");
    let stack = Arc::into_inner(stack).expect("no probe outlives its case");
    runtime.block_on(async move {
        stack.shutdown().await;
    });
}
