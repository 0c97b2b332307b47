//! The promise under test: a user reaches exactly what they can see.
//!
//! Random worlds (3–4 users in two groups, a few files each, user and group
//! shares with random permissions, some revoked after start) are checked
//! against a naive model written here from the share graph alone, not from
//! `Storage::resolve`. For every user, PROPFIND Depth infinity, SEARCH and
//! GET must show exactly the model's view, and every file of another user
//! that the model does not grant must be a 404 through GET and PROPFIND and
//! absent from SEARCH. Proptest prints the failing world; the seed of a
//! failure is kept in `no_leak.proptest-regressions` beside this file.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;
mod dav_support;

use dav_support::{multistatus, name_like, propfind_body, search_body};
use fake_nextcloud::{AppConfig, FakeNextcloud, Fixture};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

const USER_COUNT_MAX: usize = 4;
const GROUPS: [&str; 2] = ["g0", "g1"];
/// Files a user may have; their folders exist when a file below does.
const FILES: [&str; 4] = ["z.txt", "a/x.txt", "a/c/w.txt", "b/y.txt"];
/// What may be shared: the files and the folders.
const SHAREABLE: [&str; 7] = ["z.txt", "a/x.txt", "a/c/w.txt", "b/y.txt", "a", "a/c", "b"];
const SHARE_COUNT_MAX: usize = 6;

#[derive(Debug, Clone)]
struct ShareSpec {
    owner: usize,
    node: usize,
    to_group: bool,
    /// A user index, or a group index for a group share.
    recipient: usize,
    permissions: u8,
    revoked: bool,
}

#[derive(Debug, Clone)]
struct Graph {
    user_count: usize,
    memberships: Vec<[bool; 2]>,
    files: Vec<[bool; 4]>,
    shares: Vec<ShareSpec>,
}

fn uid(index: usize) -> String {
    format!("u{index}")
}

impl Graph {
    /// The user's nodes: (path, is_folder), root excluded.
    fn nodes_of(&self, user: usize) -> BTreeMap<String, bool> {
        let mut nodes = BTreeMap::new();
        for (index, file) in FILES.iter().enumerate() {
            if !self.files[user][index] {
                continue;
            }
            nodes.insert(file.to_string(), false);
            let mut parent = *file;
            while let Some((folder, _)) = parent.rsplit_once('/') {
                nodes.insert(folder.to_string(), true);
                parent = folder;
            }
        }
        nodes
    }

    fn groups_of(&self, user: usize) -> Vec<&'static str> {
        GROUPS
            .iter()
            .enumerate()
            .filter(|(index, _)| self.memberships[user][*index])
            .map(|(_, gid)| *gid)
            .collect()
    }

    /// The shares the fixture can create, in fixture order.
    fn valid_shares(&self) -> Vec<ShareSpec> {
        self.shares
            .iter()
            .filter(|share| share.owner < self.user_count)
            .filter(|share| self.nodes_of(share.owner).contains_key(SHAREABLE[share.node]))
            .filter(|share| {
                share.to_group
                    || (share.recipient < self.user_count && share.recipient != share.owner)
            })
            .cloned()
            .collect()
    }

    fn fixture(&self) -> String {
        let mut toml = String::new();
        for gid in GROUPS {
            toml.push_str(&format!("[[groups]]\ngid = \"{gid}\"\n\n"));
        }
        for user in 0..self.user_count {
            let groups: Vec<String> =
                self.groups_of(user).iter().map(|gid| format!("\"{gid}\"")).collect();
            toml.push_str(&format!(
                "[[users]]\nuid = \"{0}\"\npassword = \"{0}-pw\"\ngroups = [{1}]\n\n",
                uid(user),
                groups.join(", ")
            ));
            for (path, is_folder) in self.nodes_of(user) {
                if !is_folder {
                    toml.push_str(&format!(
                        "[[files]]\nowner = \"{0}\"\npath = \"{path}\"\ncontent = \"{0}:{path}\"\n\n",
                        uid(user)
                    ));
                }
            }
        }
        for (index, share) in self.valid_shares().iter().enumerate() {
            let with = if share.to_group {
                format!("share_with_group = \"{}\"", GROUPS[share.recipient % 2])
            } else {
                format!("share_with = \"{}\"", uid(share.recipient))
            };
            toml.push_str(&format!(
                "[[shares]]\nowner = \"{}\"\npath = \"{}\"\n{with}\npermissions = {}\ntarget = \"share-{index}\"\n\n",
                uid(share.owner),
                SHAREABLE[share.node],
                share.permissions
            ));
        }
        toml
    }

    /// The model: what `viewer` sees, path → (owner, owner path, is folder).
    fn view(&self, viewer: usize) -> BTreeMap<String, (usize, String, bool)> {
        let mut view = BTreeMap::new();
        view.insert(String::new(), (viewer, String::new(), true));
        for (path, is_folder) in self.nodes_of(viewer) {
            view.insert(path.clone(), (viewer, path, is_folder));
        }
        // Shares of one node a viewer receives several times (a user share
        // and group shares) are one mount, the first one's (Nextcloud
        // merges them).
        let mut mounted = std::collections::BTreeSet::new();
        for (index, share) in self.valid_shares().iter().enumerate() {
            if share.revoked || share.owner == viewer {
                continue;
            }
            let receives = if share.to_group {
                self.memberships[viewer][share.recipient % 2]
            } else {
                share.recipient == viewer
            };
            if !receives || !mounted.insert((share.owner, share.node)) {
                continue;
            }
            let shared = SHAREABLE[share.node];
            let target = format!("share-{index}");
            for (path, is_folder) in self.nodes_of(share.owner) {
                let rest = if path == shared {
                    Some(String::new())
                } else {
                    path.strip_prefix(&format!("{shared}/")).map(str::to_string)
                };
                if let Some(rest) = rest {
                    let visible =
                        if rest.is_empty() { target.clone() } else { format!("{target}/{rest}") };
                    view.insert(visible, (share.owner, path, is_folder));
                }
            }
        }
        view
    }
}

fn share_strategy() -> impl Strategy<Value = ShareSpec> {
    (
        0..USER_COUNT_MAX,
        0..SHAREABLE.len(),
        any::<bool>(),
        0..USER_COUNT_MAX,
        0u8..32,
        proptest::bool::weighted(0.3),
    )
        .prop_map(|(owner, node, to_group, recipient, bits, revoked)| ShareSpec {
            owner,
            node,
            to_group,
            recipient,
            // Nextcloud shares always include read.
            permissions: bits | 1,
            revoked,
        })
}

fn graph_strategy() -> impl Strategy<Value = Graph> {
    (
        3..=USER_COUNT_MAX,
        proptest::collection::vec(any::<[bool; 2]>(), USER_COUNT_MAX),
        proptest::collection::vec(any::<[bool; 4]>(), USER_COUNT_MAX),
        proptest::collection::vec(share_strategy(), 0..=SHARE_COUNT_MAX),
    )
        .prop_map(|(user_count, memberships, files, shares)| Graph {
            user_count,
            memberships,
            files,
            shares,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn every_user_reaches_exactly_what_the_model_grants(graph in graph_strategy()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(check_world(&graph));
    }
}

async fn check_world(graph: &Graph) {
    let fixture = Fixture::parse(&graph.fixture()).expect("fixture parses");
    let fake = common::start_fake_with_app(&fixture, AppConfig::default()).await;
    // Revoke after start, as an owner would through OCS.
    {
        let mut world = fake.shared.world();
        let mut ids: Vec<(u64, String)> =
            world.storage.shares().map(|share| (share.id, share.owner.clone())).collect();
        ids.sort();
        let valid = graph.valid_shares();
        assert_eq!(ids.len(), valid.len(), "every valid share was created");
        for ((id, owner), spec) in ids.into_iter().zip(&valid) {
            if spec.revoked {
                world.storage.delete_share(&owner, id).expect("the owner revokes");
            }
        }
    }
    let http = reqwest::Client::new();
    for viewer in 0..graph.user_count {
        check_viewer(&fake, &http, graph, viewer).await;
    }
    fake.shutdown().await;
}

async fn check_viewer(fake: &FakeNextcloud, http: &reqwest::Client, graph: &Graph, viewer: usize) {
    let me = uid(viewer);
    let model = graph.view(viewer);
    let request = |method: &str, path: &str| {
        http.request(
            reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
            format!("{}{path}", fake.base_url()),
        )
        .basic_auth(&me, Some(format!("{me}-pw")))
    };
    let search = |body: String| {
        request("SEARCH", "/remote.php/dav/").header("Content-Type", "text/xml").body(body).send()
    };
    let prefix = format!("/remote.php/dav/files/{me}/");
    let to_path = |href: &str| {
        href.strip_prefix(&prefix).expect("own href").trim_end_matches('/').to_string()
    };

    // PROPFIND Depth infinity shows exactly the model, with the right owners.
    let response = request("PROPFIND", &prefix)
        .header("Depth", "infinity")
        .body(propfind_body(&["oc:owner-id", "d:resourcetype"]))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 207);
    let listed: BTreeMap<String, (String, bool)> = multistatus(&response.text().await.unwrap())
        .into_iter()
        .map(|entry| {
            let owner =
                entry.value("{http://owncloud.org/ns}owner-id").unwrap_or_default().to_string();
            let is_folder =
                entry.value("{DAV:}resourcetype").is_some_and(|value| value.contains("collection"));
            (to_path(&entry.href), (owner, is_folder))
        })
        .collect();
    let expected: BTreeMap<String, (String, bool)> = model
        .iter()
        .map(|(path, (owner, _, is_folder))| (path.clone(), (uid(*owner), *is_folder)))
        .collect();
    assert_eq!(listed, expected, "PROPFIND of {me}");

    // SEARCH for everything finds the same, minus the scope root.
    let body = search_body(
        &format!("/files/{me}"),
        &name_like("%"),
        "<d:limit><d:nresults>1000</d:nresults></d:limit>",
    );
    let response = search(body).await.unwrap();
    assert_eq!(response.status().as_u16(), 207);
    let found: BTreeSet<String> = multistatus(&response.text().await.unwrap())
        .iter()
        .map(|entry| to_path(&entry.href))
        .collect();
    let expected: BTreeSet<String> =
        model.keys().filter(|path| !path.is_empty()).cloned().collect();
    assert_eq!(found, expected, "SEARCH of {me}");

    // GET returns each visible file's own content.
    for (path, (owner, owner_path, is_folder)) in &model {
        if *is_folder {
            continue;
        }
        let response = request("GET", &format!("{prefix}{path}")).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 200, "{me} GET {path}");
        assert_eq!(
            response.text().await.unwrap(),
            format!("{}:{owner_path}", uid(*owner)),
            "{me} GET {path}"
        );
    }

    // What the model does not grant is not reachable by any name.
    for other in (0..graph.user_count).filter(|other| *other != viewer) {
        let granted: BTreeSet<&String> = model
            .values()
            .filter(|(owner, _, _)| *owner == other)
            .map(|(_, owner_path, _)| owner_path)
            .collect();
        for (path, is_folder) in graph.nodes_of(other) {
            if granted.contains(&path) || is_folder {
                continue;
            }
            let theirs = format!("/remote.php/dav/files/{}/{path}", uid(other));
            assert_eq!(
                request("GET", &theirs).send().await.unwrap().status().as_u16(),
                404,
                "{me} GET {theirs}"
            );
            let propfind = request("PROPFIND", &theirs).header("Depth", "0").send().await.unwrap();
            assert_eq!(propfind.status().as_u16(), 404, "{me} PROPFIND {theirs}");
            // The same path in one's own tree is one's own file or nothing.
            let response = request("GET", &format!("{prefix}{path}")).send().await.unwrap();
            match model.get(&path) {
                Some((owner, owner_path, false)) => {
                    assert_eq!(
                        response.text().await.unwrap(),
                        format!("{}:{owner_path}", uid(*owner))
                    );
                }
                Some((_, _, true)) => {}
                None => assert_eq!(response.status().as_u16(), 404, "{me} GET {path}"),
            }
        }
        // Searching another user's tree finds nothing of theirs.
        let body = search_body(&format!("/files/{}", uid(other)), &name_like("%"), "");
        let response = search(body).await.unwrap();
        assert_eq!(response.status().as_u16(), 404, "{me} SEARCH in {}", uid(other));
    }
}

#[test]
fn the_model_follows_the_share_graph() {
    // u1 shares folder "a" with u0 and file "z.txt" with group g1 (u0, u2);
    // the group share to g0 is revoked.
    let graph = Graph {
        user_count: 3,
        memberships: vec![[true, true], [false, false], [false, true], [false, false]],
        files: vec![[false; 4], [true, true, true, false], [true, false, false, false], [false; 4]],
        shares: vec![
            ShareSpec {
                owner: 1,
                node: 4,
                to_group: false,
                recipient: 0,
                permissions: 1,
                revoked: false,
            },
            ShareSpec {
                owner: 1,
                node: 0,
                to_group: true,
                recipient: 1,
                permissions: 1,
                revoked: false,
            },
            ShareSpec {
                owner: 1,
                node: 5,
                to_group: true,
                recipient: 0,
                permissions: 1,
                revoked: true,
            },
            // Invalid: u2 has no "b/y.txt".
            ShareSpec {
                owner: 2,
                node: 3,
                to_group: false,
                recipient: 0,
                permissions: 1,
                revoked: false,
            },
        ],
    };
    let view: Vec<String> = graph.view(0).into_keys().collect();
    assert_eq!(view, ["", "share-0", "share-0/c", "share-0/c/w.txt", "share-0/x.txt", "share-1"]);
    let view: Vec<String> = graph.view(2).into_keys().collect();
    assert_eq!(view, ["", "share-1", "z.txt"]);
    assert_eq!(graph.valid_shares().len(), 3);
}
