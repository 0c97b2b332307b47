//! Helpers the CalDAV and CardDAV tests share: a multistatus answer read
//! into entries (200 properties as elements, the names of the others), and
//! the problems a fixture with faults is refused with.

#![allow(dead_code)] // each test crate uses its own part

use fake_nextcloud::Fixture;
use fake_nextcloud::xml::{self, Element};
use std::collections::BTreeMap;

/// One `d:response` of a multistatus.
#[derive(Debug)]
pub struct Entry {
    pub href: String,
    pub status: Option<String>,
    /// "{ns}local" → element, for properties in a 200 propstat.
    pub found: BTreeMap<String, Element>,
    /// "{ns}local" of properties in a 404 propstat.
    pub missing: Vec<String>,
}

impl Entry {
    pub fn text(&self, ns: &str, local: &str) -> Option<String> {
        self.found.get(&format!("{{{ns}}}{local}")).map(Element::text)
    }

    pub fn has(&self, ns: &str, local: &str) -> bool {
        self.found.contains_key(&format!("{{{ns}}}{local}"))
    }
}

pub fn multistatus(body: &str) -> Vec<Entry> {
    let root = xml::parse(body.as_bytes()).unwrap_or_else(|error| panic!("{error}: {body}"));
    assert!(root.is(xml::DAV, "multistatus"), "{body}");
    root.children_named(xml::DAV, "response")
        .map(|response| {
            let href = response.child(xml::DAV, "href").map(Element::text).unwrap_or_default();
            let status = response.child(xml::DAV, "status").map(Element::text);
            let mut found = BTreeMap::new();
            let mut missing = Vec::new();
            for propstat in response.children_named(xml::DAV, "propstat") {
                let status =
                    propstat.child(xml::DAV, "status").map(Element::text).unwrap_or_default();
                for prop in propstat.children_named(xml::DAV, "prop") {
                    for property in prop.children() {
                        let key = format!("{{{}}}{}", property.ns, property.local);
                        if status.contains(" 200 ") {
                            found.insert(key, property.clone());
                        } else {
                            missing.push(key);
                        }
                    }
                }
            }
            Entry { href, status, found, missing }
        })
        .collect()
}

/// The href of each response of a multistatus, in order.
pub fn hrefs(body: &str) -> Vec<String> {
    multistatus(body).into_iter().map(|entry| entry.href).collect()
}

pub fn entry<'a>(entries: &'a [Entry], href: &str) -> &'a Entry {
    entries
        .iter()
        .find(|entry| entry.href == href)
        .unwrap_or_else(|| panic!("no response for {href} in {entries:?}"))
}

/// A sync-collection REPORT body (sync-level 1, asking for getetag) from
/// `token` ("" for the initial sync).
pub fn sync_body(token: &str) -> String {
    format!(
        r#"<d:sync-collection xmlns:d="DAV:"><d:sync-token>{token}</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>"#
    )
}

/// The `d:sync-token` of a sync-collection answer; panics without one.
pub fn sync_token(body: &str) -> String {
    let root = xml::parse(body.as_bytes()).unwrap_or_else(|error| panic!("{error}: {body}"));
    root.child(xml::DAV, "sync-token").map(Element::text).expect("a sync token")
}

/// The problems `World::from_fixture` refuses the fixture `toml` with.
pub fn fixture_problems(toml: &str) -> Vec<String> {
    let fixture = Fixture::parse(toml).expect("the fixture parses");
    fake_nextcloud::World::from_fixture(&fixture, 0).expect_err("the fixture is inconsistent")
}
