//! The properties of a file or folder as Nextcloud reports them, and the
//! `<d:response>` element that carries them; PROPFIND and SEARCH both answer
//! with it.
//!
//! A live property has a value (200), or does not apply to this kind of node
//! (then a dead property of that name may answer, else 404). Values follow
//! Nextcloud's FilesPlugin, TagsPlugin and SharesPlugin and sabre's
//! CorePlugin; `allprop` returns only sabre's seven core properties plus the
//! dead ones, as sabre's PropFind does.

use crate::storage::{Entry, PropertyName, Summary, Viewer, permission};
use crate::world::World;
use crate::xml::{self, DAV, NC, OC};

/// The Open Collaboration Services namespace (`share-permissions`).
pub const OCS: &str = "http://open-collaboration-services.org/ns";

/// Which properties a PROPFIND or SEARCH asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// `allprop` (or no body): the core properties and dead properties,
    /// plus any `include`d ones; missing ones are left out, not 404.
    All { include: Vec<PropertyName> },
    /// `propname`: the names only.
    Names,
    /// `prop`: exactly these, missing ones as 404.
    Named(Vec<PropertyName>),
}

impl Selection {
    /// Reads the children of a `d:prop` element; an empty list means
    /// allprop, as in sabre.
    pub fn from_prop_element(prop: &xml::Element) -> Selection {
        let names: Vec<PropertyName> =
            prop.children().map(|child| (child.ns.clone(), child.local.clone())).collect();
        if names.is_empty() {
            Selection::All { include: Vec::new() }
        } else {
            Selection::Named(names)
        }
    }
}

/// sabre's allprop set (PropFind::ALLPROPS), in its order.
const ALLPROP: [(&str, &str); 7] = [
    (DAV, "getlastmodified"),
    (DAV, "getcontentlength"),
    (DAV, "resourcetype"),
    (DAV, "quota-used-bytes"),
    (DAV, "quota-available-bytes"),
    (DAV, "getetag"),
    (DAV, "getcontenttype"),
];

/// Everything needed to compute properties: the world, read-only, and who
/// is looking.
pub struct Context<'w> {
    pub world: &'w World,
    pub viewer: Viewer<'w>,
    /// The public link the request came through, if it did.
    pub link: Option<&'w crate::storage::Share>,
}

/// Writes one `<d:response>` for an entry. `minimal` (`Prefer:
/// return=minimal`) leaves out the 404 propstat.
pub fn response(
    context: &Context<'_>,
    entry: &Entry<'_>,
    href: &str,
    selection: &Selection,
    minimal: bool,
) -> String {
    let summary = context.world.storage.summary(context.viewer, entry);
    let mut found: Vec<String> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    match selection {
        Selection::All { include } => {
            let mut names: Vec<PropertyName> =
                ALLPROP.iter().map(|(ns, local)| (ns.to_string(), local.to_string())).collect();
            names.extend(entry.node.dead_properties.keys().cloned());
            for name in include {
                if !names.contains(name) {
                    names.push(name.clone());
                }
            }
            for (ns, local) in &names {
                match value(context, entry, &summary, ns, local) {
                    Some(inner) => found.push(xml::element_with(ns, local, &inner)),
                    // allprop leaves out what does not exist; an explicit
                    // include still reports it missing.
                    None if include.contains(&(ns.clone(), local.clone())) => {
                        missing.push(xml::empty_element(ns, local))
                    }
                    None => {}
                }
            }
        }
        Selection::Names => {
            let mut names: Vec<PropertyName> =
                ALLPROP.iter().map(|(ns, local)| (ns.to_string(), local.to_string())).collect();
            names.extend(entry.node.dead_properties.keys().cloned());
            for (ns, local) in &names {
                if value(context, entry, &summary, ns, local).is_some() {
                    found.push(xml::empty_element(ns, local));
                }
            }
        }
        Selection::Named(names) => {
            for (ns, local) in names {
                match value(context, entry, &summary, ns, local) {
                    Some(inner) => found.push(xml::element_with(ns, local, &inner)),
                    None => missing.push(xml::empty_element(ns, local)),
                }
            }
        }
    }
    response_element(href, &found, &missing, minimal)
}

/// One `<d:response>`: the found properties in a 200 propstat, the missing
/// ones in a 404 propstat unless the client asked for a minimal answer.
pub fn response_element(href: &str, found: &[String], missing: &[String], minimal: bool) -> String {
    let mut out = format!("<d:response><d:href>{}</d:href>", xml::escape(href));
    if !found.is_empty() {
        push_propstat(&mut out, found, "HTTP/1.1 200 OK");
    }
    if !missing.is_empty() && !minimal {
        push_propstat(&mut out, missing, "HTTP/1.1 404 Not Found");
    }
    out.push_str("</d:response>");
    out
}

pub fn push_propstat(out: &mut String, properties: &[String], status: &str) {
    out.push_str("<d:propstat><d:prop>");
    for property in properties {
        out.push_str(property);
    }
    out.push_str("</d:prop><d:status>");
    out.push_str(status);
    out.push_str("</d:status></d:propstat>");
}

/// Wraps responses in a `d:multistatus` document.
pub fn multistatus(responses: &str) -> String {
    format!(
        "<?xml version=\"1.0\"?>\n<d:multistatus {}>{responses}</d:multistatus>\n",
        xml::ROOT_NAMESPACES
    )
}

/// The XML content of one property, or `None` when it does not exist for
/// this node (a 404 propstat).
pub fn value(
    context: &Context<'_>,
    entry: &Entry<'_>,
    summary: &Summary,
    ns: &str,
    local: &str,
) -> Option<String> {
    live(context, entry, summary, ns, local)
        .or_else(|| entry.node.dead_properties.get(&(ns.to_string(), local.to_string())).cloned())
}

fn live(
    context: &Context<'_>,
    entry: &Entry<'_>,
    summary: &Summary,
    ns: &str,
    local: &str,
) -> Option<String> {
    let node = entry.node;
    let is_folder = node.is_folder();
    let text = |value: String| Some(xml::escape(&value));
    match (ns, local) {
        (DAV, "resourcetype") => {
            Some(if is_folder { "<d:collection/>".to_string() } else { String::new() })
        }
        (DAV, "getlastmodified") => text(crate::clock::http_date(summary.mtime)),
        (DAV, "getcontentlength") if !is_folder => text(summary.size.to_string()),
        (DAV, "getcontenttype") if !is_folder => text(node.mime().to_string()),
        (DAV, "getetag") => text(crate::files::quoted(&summary.etag)),
        (DAV, "creationdate") => text(atom(node.ctime)),
        (DAV, "displayname") => text(display_name(entry)),
        (DAV, "quota-used-bytes") if is_folder => {
            text(context.world.storage.size(node).to_string())
        }
        (DAV, "quota-available-bytes") if is_folder => {
            text(super::quota::free_space(context.world, &entry.node.owner).to_string())
        }
        (OC, "id") => {
            text(crate::files::padded_file_id(node.id, &context.world.server.instance_id))
        }
        (OC, "fileid") => text(node.id.to_string()),
        (OC, "size") => text(summary.size.to_string()),
        (OC, "permissions") => text(entry.dav_permissions()),
        (OC, "share-types") => Some(
            context
                .world
                .storage
                .share_types_of(context.viewer, node.id)
                .iter()
                .map(|share_type| format!("<oc:share-type>{share_type}</oc:share-type>"))
                .collect(),
        ),
        (OC, "favorite") => {
            text(if entry.is_favorite_of(context.viewer.uid) { "1" } else { "0" }.to_string())
        }
        (OC, "tags") => Some(String::new()),
        (OC, "owner-id") => text(node.owner.clone()),
        (OC, "owner-display-name") => {
            context.world.user(&node.owner).map(|owner| xml::escape(&owner.display_name))
        }
        // A file has no direct download URL here: Nextcloud answers `false`,
        // which sabre writes as an empty 200 element.
        (OC, "downloadURL") if !is_folder => Some(String::new()),
        (OC, "data-fingerprint") => Some(String::new()),
        (OC, "comments-count") | (OC, "comments-unread") => Some("0".to_string()),
        (OCS, "share-permissions") => text(share_permissions(entry).to_string()),
        (NC, "has-preview") => Some("false".to_string()),
        (NC, "mount-type") => Some(if entry.share.is_some() { "shared" } else { "" }.to_string()),
        (NC, "is-mount-root") => {
            Some(if entry.is_mount_root { "true" } else { "false" }.to_string())
        }
        (NC, "is-federated") | (NC, "hidden") => Some("false".to_string()),
        (NC, "creation_time") => text(node.ctime.to_string()),
        (NC, "upload_time") => Some("0".to_string()),
        // The note of the share the entry came through: a recipient's
        // mount, or the public link's own root.
        (NC, "note") if entry.share.is_some() => entry.share.map(|share| share.note.clone()),
        (NC, "note") if context.link.is_some_and(|link| link.node == node.id) => {
            context.link.map(|link| link.note.clone())
        }
        (NC, "contained-folder-count") | (NC, "contained-file-count") if is_folder => {
            let children =
                context.world.storage.children(context.viewer, &entry.path).unwrap_or_default();
            let want_folders = local == "contained-folder-count";
            let count =
                children.iter().filter(|child| child.node.is_folder() == want_folders).count();
            text(count.to_string())
        }
        _ => None,
    }
}

/// The name Nextcloud reports: the name the viewer sees (a mount point's
/// name for a received share); the files root is called "files" as its
/// cache entry is.
fn display_name(entry: &Entry<'_>) -> String {
    if entry.path.is_empty() {
        return "files".to_string();
    }
    crate::storage::parent_and_name(&entry.path).1.to_string()
}

/// `Node::getSharePermissions`: the share's bits through a share, the
/// node's own otherwise; a file never has create or delete.
fn share_permissions(entry: &Entry<'_>) -> u8 {
    let mut permissions = match entry.share {
        Some(share) => share.permissions,
        None => entry.permissions,
    };
    if !entry.node.is_folder() {
        permissions &= !(permission::CREATE | permission::DELETE);
    }
    permissions
}

/// `DateTimeInterface::ATOM`, which FilesPlugin uses for `creationdate`.
pub fn atom(unix_seconds: i64) -> String {
    chrono::DateTime::from_timestamp(unix_seconds, 0)
        .unwrap_or_default()
        .format("%Y-%m-%dT%H:%M:%S+00:00")
        .to_string()
}
