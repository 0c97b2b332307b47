//! Random sequences of WebDAV operations (PUT, MKCOL, MOVE, COPY, DELETE,
//! PROPFIND at depth 0 to 3 and infinity, each listing checked) and of
//! shares created and removed (OCS, alice to bob) against the fake and
//! against a tiny model of alice's tree and bob's view of it, written from
//! sabre/dav's and Nextcloud's rules. After every request the answer must
//! be well formed (a status, never a dropped connection or a 5xx) and
//! succeed exactly when the model says it may; after every case alice's
//! tree and bob's must agree with the model's, file contents included.
//!
//! The rules the model follows (sabre `CorePlugin` and Nextcloud's
//! integration suite, `dav_features/`): a missing parent is 409; MKCOL on
//! an existing name is 405; MOVE and COPY onto themselves are 403, into
//! their own subtree 409, onto one of their own ancestors 403 (the
//! destination would be deleted with the source inside it), onto an
//! existing node with `Overwrite: F` 412; PUT onto a folder is refused.
//! Shares (`ShareAPIController`, `Share20\Manager`): any node but the root
//! may be shared, once per recipient (a second share is 403); the
//! recipient mounts it at their root under the name it had, numbered
//! before the extension on a clash (`a (2)`, `b (2).txt`), and keeps that
//! name when the owner renames or moves the node; a share goes with its
//! node when that is deleted or overwritten, and a copy is not shared.
//! Regression: `MOVE /a/a` to `/a` panicked the fake ("no entry found for
//! key") and dropped the connection.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::collections::BTreeMap;

const CASES: u32 = 48;
const OPERATIONS_MAX: usize = 20;
/// Two names, so that sequences often build on what they made: nested
/// folders, overwrites and collisions come up in most cases.
const SEGMENTS: [&str; 2] = ["a", "b.txt"];

const WORLD: &str = concat!(common::small_people!(), "");

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Folder,
    File(String),
}

#[derive(Debug, Clone)]
enum Operation {
    Put(String, String),
    Mkcol(String),
    Delete(String),
    Move {
        from: String,
        to: String,
        overwrite: bool,
    },
    Copy {
        from: String,
        to: String,
        overwrite: bool,
    },
    /// Depth 0 to 3, or 4 for `infinity`.
    Propfind(String, u8),
    /// Alice shares the node with bob.
    Share(String),
    /// Alice removes one of her shares, chosen by index among those that
    /// exist (nothing is sent when there are none).
    Unshare(usize),
}

fn path() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(SEGMENTS.to_vec()), 1..=3)
        .prop_map(|segments| segments.join("/"))
}

/// A path to list: mostly the root, where every level is in view.
fn listed_path() -> impl Strategy<Value = String> {
    prop_oneof![2 => Just(String::new()), 1 => path()]
}

fn operation() -> impl Strategy<Value = Operation> {
    prop_oneof![
        3 => (path(), "[a-z]{0,8}").prop_map(|(path, content)| Operation::Put(path, content)),
        4 => path().prop_map(Operation::Mkcol),
        1 => path().prop_map(Operation::Delete),
        3 => (path(), path(), any::<bool>())
            .prop_map(|(from, to, overwrite)| Operation::Move { from, to, overwrite }),
        2 => (path(), path(), any::<bool>())
            .prop_map(|(from, to, overwrite)| Operation::Copy { from, to, overwrite }),
        2 => (listed_path(), 0u8..=4).prop_map(|(path, depth)| Operation::Propfind(path, depth)),
        2 => path().prop_map(Operation::Share),
        1 => any::<usize>().prop_map(Operation::Unshare),
    ]
}

/// Alice's tree: relative paths without a leading slash; the root is
/// implied. And her shares with bob, in the order they were made.
#[derive(Debug, Default)]
struct Model {
    nodes: BTreeMap<String, Node>,
    shares: Vec<ModelShare>,
}

#[derive(Debug, Clone)]
struct ModelShare {
    /// Where the shared node is in alice's tree now.
    path: String,
    /// Where bob mounted it: fixed when the share was made.
    mount: String,
    /// The share's OCS id, once the fake has answered its creation.
    id: Option<String>,
}

/// `SharedMount`'s free name: `name (n).ext` for the first n from 2 up
/// that nobody holds (PHP's `pathinfo`: the extension after the last dot).
fn free_mount(wanted: &str, taken: &[String]) -> String {
    if !taken.iter().any(|name| name == wanted) {
        return wanted.to_string();
    }
    let (stem, extension) = match wanted.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() => (stem, format!(".{extension}")),
        _ => (wanted, String::new()),
    };
    (2..)
        .map(|n| format!("{stem} ({n}){extension}"))
        .find(|name| !taken.iter().any(|taken| taken == name))
        .expect("a free name")
}

fn parent(path: &str) -> Option<&str> {
    path.rsplit_once('/').map(|(parent, _)| parent)
}

/// Whether `inner` lies strictly below `outer`.
fn below(inner: &str, outer: &str) -> bool {
    inner.len() > outer.len() && inner.starts_with(outer) && inner.as_bytes()[outer.len()] == b'/'
}

impl Model {
    fn parent_is_folder(&self, path: &str) -> bool {
        match parent(path) {
            None => true,
            Some(parent) => self.nodes.get(parent) == Some(&Node::Folder),
        }
    }

    fn subtree(&self, path: &str) -> Vec<(String, Node)> {
        self.nodes
            .iter()
            .filter(|(name, _)| *name == path || below(name, path))
            .map(|(name, node)| (name.clone(), node.clone()))
            .collect()
    }

    /// What a PROPFIND of `path` at `depth` lists: the node and what lies
    /// at most `depth` levels below it.
    fn listing(&self, path: &str, depth: u8) -> Vec<String> {
        let levels = if depth == 4 { usize::MAX } else { usize::from(depth) };
        let level = |name: &str| match path {
            "" => name.matches('/').count() + 1,
            _ => name[path.len()..].matches('/').count(),
        };
        let inside = |name: &str| path.is_empty() || below(name, path);
        let mut listing: Vec<String> = self
            .nodes
            .keys()
            .filter(|name| *name == path || (inside(name) && level(name) <= levels))
            .cloned()
            .collect();
        if path.is_empty() {
            listing.push(String::new());
        }
        listing.sort();
        listing
    }

    /// Removes a subtree, and the shares of what was in it.
    fn remove(&mut self, path: &str) {
        self.nodes.retain(|name, _| name != path && !below(name, path));
        self.shares.retain(|share| share.path != path && !below(&share.path, path));
    }

    /// Which share `Operation::Unshare(index)` removes, if any.
    fn unshare_index(&self, index: usize) -> Option<usize> {
        (!self.shares.is_empty()).then(|| index % self.shares.len())
    }

    /// Bob's view: each mount holds the shared node's subtree.
    fn bobs_view(&self) -> BTreeMap<String, Node> {
        let mut view = BTreeMap::new();
        for share in &self.shares {
            for (name, node) in self.subtree(&share.path) {
                view.insert(format!("{}{}", share.mount, &name[share.path.len()..]), node);
            }
        }
        view
    }

    /// Applies `operation` where the rules allow it; whether they did.
    fn apply(&mut self, operation: &Operation) -> bool {
        match operation {
            Operation::Put(path, content) => {
                let allowed =
                    self.parent_is_folder(path) && self.nodes.get(path) != Some(&Node::Folder);
                if allowed {
                    self.nodes.insert(path.clone(), Node::File(content.clone()));
                }
                allowed
            }
            Operation::Mkcol(path) => {
                let allowed = self.parent_is_folder(path) && !self.nodes.contains_key(path);
                if allowed {
                    self.nodes.insert(path.clone(), Node::Folder);
                }
                allowed
            }
            Operation::Delete(path) => {
                let allowed = self.nodes.contains_key(path);
                self.remove(path);
                allowed
            }
            Operation::Move { from, to, overwrite } | Operation::Copy { from, to, overwrite } => {
                let allowed = self.nodes.contains_key(from)
                    && from != to
                    && !below(to, from)
                    && !below(from, to)
                    && self.parent_is_folder(to)
                    && (*overwrite || !self.nodes.contains_key(to));
                if allowed {
                    let moved = self.subtree(from);
                    // The destination goes first, with its shares.
                    self.remove(to);
                    if matches!(operation, Operation::Move { .. }) {
                        self.nodes.retain(|name, _| name != from && !below(name, from));
                        // A moved node keeps its shares; a copy has none.
                        for share in &mut self.shares {
                            if share.path == *from || below(&share.path, from) {
                                share.path = format!("{to}{}", &share.path[from.len()..]);
                            }
                        }
                    }
                    for (name, node) in moved {
                        self.nodes.insert(format!("{to}{}", &name[from.len()..]), node);
                    }
                }
                allowed
            }
            Operation::Propfind(path, _) => path.is_empty() || self.nodes.contains_key(path),
            Operation::Share(path) => {
                let allowed = self.nodes.contains_key(path)
                    && !self.shares.iter().any(|share| share.path == *path);
                if allowed {
                    let taken: Vec<String> =
                        self.shares.iter().map(|share| share.mount.clone()).collect();
                    let name = path.rsplit('/').next().unwrap_or(path);
                    let mount = free_mount(name, &taken);
                    self.shares.push(ModelShare { path: path.clone(), mount, id: None });
                }
                allowed
            }
            Operation::Unshare(index) => {
                if let Some(index) = self.unshare_index(*index) {
                    self.shares.remove(index);
                }
                true
            }
        }
    }
}

fn encode(path: &str) -> String {
    path.split('/').map(|segment| segment.replace('.', "%2E")).collect::<Vec<_>>().join("/")
}

fn dav(path: &str) -> String {
    format!("/remote.php/dav/files/alice/{}", encode(path))
}

const SHARES: &str = "/ocs/v2.php/apps/files_sharing/api/v1/shares";

/// Sends `operation` as alice; its status and body, or the failure to get
/// one. `unshare` is the OCS id of the share an `Unshare` removes.
async fn send(
    fake: &common::Running,
    operation: &Operation,
    unshare: Option<&str>,
) -> Result<(u16, Vec<u8>), String> {
    let request = match operation {
        Operation::Put(path, content) => {
            fake.as_user("PUT", "alice", &dav(path)).body(content.clone())
        }
        Operation::Mkcol(path) => fake.as_user("MKCOL", "alice", &dav(path)),
        Operation::Delete(path) => fake.as_user("DELETE", "alice", &dav(path)),
        Operation::Move { from, to, overwrite } | Operation::Copy { from, to, overwrite } => {
            let method = if matches!(operation, Operation::Move { .. }) { "MOVE" } else { "COPY" };
            fake.as_user(method, "alice", &dav(from))
                .header("Destination", fake.url(&dav(to)))
                .header("Overwrite", if *overwrite { "T" } else { "F" })
        }
        Operation::Propfind(path, depth) => {
            let depth = if *depth == 4 { "infinity".to_string() } else { depth.to_string() };
            fake.as_user("PROPFIND", "alice", &dav(path)).header("Depth", depth)
        }
        Operation::Share(path) => {
            let form = url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs([("path", format!("/{path}").as_str()), ("shareType", "0")])
                .append_pair("shareWith", "bob")
                .finish();
            fake.ocs("POST", "alice", &format!("{SHARES}?format=json"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .body(form)
        }
        Operation::Unshare(_) => {
            let id = unshare.ok_or("an Unshare with no share to remove is never sent")?;
            fake.ocs("DELETE", "alice", &format!("{SHARES}/{id}?format=json"))
        }
    };
    let response = request.send().await.map_err(|error| format!("no answer: {error}"))?;
    let status = response.status().as_u16();
    let body = response.bytes().await.map_err(|error| format!("the answer was cut: {error}"))?;
    Ok((status, body.to_vec()))
}

/// The paths a multistatus lists, relative to alice's root.
fn listed(body: &[u8]) -> Vec<String> {
    let root = "/remote.php/dav/files/alice/";
    let multistatus = xml_tree::parse(body).unwrap();
    let mut names: Vec<String> = multistatus
        .children_named(xml_tree::DAV, "response")
        .map(|response| response.child(xml_tree::DAV, "href").unwrap().text())
        .map(|href| percent_decode(href.split_once(root).unwrap().1.trim_end_matches('/')))
        .collect();
    names.sort();
    names
}

/// A user's tree as the fake serves it: PROPFIND depth 1 from the root
/// down, and a GET of every file.
async fn served_tree(fake: &common::Running, uid: &str) -> BTreeMap<String, Node> {
    let mut tree = BTreeMap::new();
    let mut folders = vec![String::new()];
    let root = format!("/remote.php/dav/files/{uid}/");
    let root = root.as_str();
    while let Some(folder) = folders.pop() {
        let answer = fake
            .as_user("PROPFIND", uid, &format!("{root}{}", encode(&folder)))
            .header("Depth", "1")
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), 207, "PROPFIND {folder:?}");
        let body = answer.bytes().await.unwrap();
        let multistatus = xml_tree::parse(&body).unwrap();
        for response in multistatus.children_named(xml_tree::DAV, "response") {
            let href = response.child(xml_tree::DAV, "href").unwrap().text();
            let name = percent_decode(href.split_once(root).unwrap().1.trim_end_matches('/'));
            if name == folder {
                continue;
            }
            if href.ends_with('/') {
                folders.push(name.clone());
                tree.insert(name, Node::Folder);
            } else {
                let path = format!("{root}{}", encode(&name));
                let file = fake.as_user("GET", uid, &path).send().await.unwrap();
                tree.insert(name, Node::File(file.text().await.unwrap()));
            }
        }
    }
    tree
}

fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text).decode_utf8().unwrap().into_owned()
}

async fn check(operations: &[Operation]) -> Result<(), TestCaseError> {
    let fake = common::start(WORLD).await;
    let mut model = Model::default();
    for (step, operation) in operations.iter().enumerate() {
        let unshare = match operation {
            Operation::Unshare(index) => match model.unshare_index(*index) {
                Some(index) => model.shares[index].id.clone(),
                // No share to remove: nothing to send.
                None => continue,
            },
            _ => None,
        };
        let expected = model.apply(operation);
        let (status, body) = send(&fake, operation, unshare.as_deref())
            .await
            .map_err(|error| TestCaseError::fail(format!("step {step} {operation:?}: {error}")))?;
        if let (Operation::Propfind(path, depth), 207) = (operation, status) {
            prop_assert_eq!(
                listed(&body),
                model.listing(path, *depth),
                "step {} {:?}",
                step,
                operation
            );
        }
        prop_assert!(status < 500, "step {step} {operation:?}: {status}");
        prop_assert_eq!(
            (200..300).contains(&status),
            expected,
            "step {} {:?}: {} where the model {}",
            step,
            operation,
            status,
            if expected { "succeeds" } else { "refuses" }
        );
        if let (Operation::Share(_), true) = (operation, expected) {
            let answer: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let id = &answer["ocs"]["data"]["id"];
            let id = id.as_str().map(String::from).unwrap_or_else(|| id.to_string());
            model.shares.last_mut().expect("the share just made").id = Some(id);
        }
    }
    let served = served_tree(&fake, "alice").await;
    prop_assert_eq!(&served, &model.nodes, "alice's tree after {:?}", operations);
    let bobs = served_tree(&fake, "bob").await;
    prop_assert_eq!(&bobs, &model.bobs_view(), "bob's view after {:?}", operations);
    fake.fake.shutdown().await;
    Ok(())
}

#[test]
fn random_webdav_sequences_agree_with_the_model_and_never_break_the_fake() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let cases =
        std::env::var("PROPTEST_CASES").ok().and_then(|cases| cases.parse().ok()).unwrap_or(CASES);
    let mut runner =
        TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let operations = prop::collection::vec(operation(), 1..=OPERATIONS_MAX);
    let outcome = runner.run(&operations, |operations| runtime.block_on(check(&operations)));
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_folder_moved_onto_its_own_parent_is_refused_and_the_fake_answers_on() {
    let operations = [
        Operation::Mkcol("a".into()),
        Operation::Mkcol("a/a".into()),
        Operation::Move { from: "a/a".into(), to: "a".into(), overwrite: true },
        Operation::Propfind("a/a".into(), 0),
    ];
    check(&operations).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_is_shared_once_per_recipient_and_mounts_keep_their_names() {
    let operations = [
        Operation::Mkcol("a".into()),
        Operation::Mkcol("a/a".into()),
        Operation::Put("a/b.txt".into(), "x".into()),
        Operation::Share("a".into()),
        Operation::Share("a/a".into()),
        Operation::Share("a".into()),
        Operation::Move { from: "a".into(), to: "b.txt".into(), overwrite: true },
        Operation::Unshare(0),
    ];
    check(&operations).await.unwrap();
}
