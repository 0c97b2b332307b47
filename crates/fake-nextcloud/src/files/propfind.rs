//! PROPFIND and PROPPATCH on files and folders.
//!
//! PROPFIND: no body means allprop; `Depth` defaults to 1 as in sabre, and
//! `infinity` and depths past 1 (`3`: three levels) are honoured because
//! Nextcloud turns `enablePropfindDepthInfinity` on. PROPPATCH follows sabre's PropPatch:
//! the last instruction for a property wins, and one refused property fails
//! the whole request (403 for it, 424 for the rest, nothing applied).

use super::properties::{self, Context, Selection};
use super::{Target, insert, storage_error};
use crate::Shared;
use crate::dav::{DavError, DavRequest, Depth};
use crate::storage::{PropertyName, permission};
use crate::xml::{self, DAV, NC, OC};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};

pub(super) fn propfind(
    shared: &Shared,
    request: &DavRequest,
    target: &Target,
) -> Result<Response, DavError> {
    let selection = if request.body.is_empty() {
        Selection::All { include: Vec::new() }
    } else {
        match parse_propfind(&request.body) {
            Ok(selection) => selection,
            Err(message) => return Err(DavError::BadRequest(message)),
        }
    };
    let depth = request.depth(Depth::One);
    let minimal = crate::caldav::webdav::prefers_minimal(request);
    let body = {
        let world = shared.world();
        let viewer = target.viewer(&world.users)?;
        let root = target.entry(&world.storage, viewer)?;
        let entries = match depth {
            Depth::Zero => vec![root],
            Depth::One => {
                let children = world.storage.children(viewer, &target.path).unwrap_or_default();
                let mut entries = vec![root];
                entries.extend(children);
                entries
            }
            Depth::Levels(levels) => {
                world.storage.walk_levels(viewer, &target.path, levels).unwrap_or_default()
            }
            Depth::Infinity => world.storage.walk(viewer, &target.path).unwrap_or_default(),
        };
        let link = target.link.as_ref().and_then(|(_, id)| world.storage.share(*id));
        let context = Context { world: &world, viewer, link };
        let mut responses = String::new();
        for entry in &entries {
            let href = target.href(&entry.path, entry.node.is_folder());
            responses.push_str(&properties::response(&context, entry, &href, &selection, minimal));
        }
        properties::multistatus(&responses)
    };
    let mut headers = HeaderMap::new();
    insert(&mut headers, "content-type", "application/xml; charset=utf-8");
    insert(&mut headers, "vary", "Brief,Prefer");
    insert(&mut headers, "dav", super::DAV_FEATURES);
    Ok((StatusCode::MULTI_STATUS, headers, body).into_response())
}

pub(super) fn parse_propfind(body: &[u8]) -> Result<Selection, String> {
    let root = xml::parse(body).map_err(|error| error.to_string())?;
    if !root.is(DAV, "propfind") {
        return Err(format!("Expected {{DAV:}}propfind, got {{{}}}{}", root.ns, root.local));
    }
    if root.child(DAV, "propname").is_some() {
        return Ok(Selection::Names);
    }
    if root.child(DAV, "allprop").is_some() {
        let include = root
            .child(DAV, "include")
            .map(|include| {
                include.children().map(|child| (child.ns.clone(), child.local.clone())).collect()
            })
            .unwrap_or_default();
        return Ok(Selection::All { include });
    }
    match root.child(DAV, "prop") {
        Some(prop) => Ok(Selection::from_prop_element(prop)),
        None => Ok(Selection::All { include: Vec::new() }),
    }
}

// ---- PROPPATCH -----------------------------------------------------------

/// Properties nobody may set (sabre's protected list plus FilesPlugin's).
/// `{DAV:}getetag` is missing on purpose: Nextcloud lets clients set it.
const PROTECTED: &[(&str, &str)] = &[
    (DAV, "getcontentlength"),
    (DAV, "getlastmodified"),
    (DAV, "lockdiscovery"),
    (DAV, "supportedlock"),
    (DAV, "quota-available-bytes"),
    (DAV, "quota-used-bytes"),
    (DAV, "supported-privilege-set"),
    (DAV, "current-user-privilege-set"),
    (DAV, "acl"),
    (DAV, "acl-restrictions"),
    (DAV, "inherited-acl-set"),
    (DAV, "supported-method-set"),
    (DAV, "supported-report-set"),
    (DAV, "sync-token"),
    (DAV, "resourcetype"),
    (DAV, "getcontenttype"),
    (OC, "id"),
    (OC, "fileid"),
    (OC, "permissions"),
    (properties::OCS, "share-permissions"),
    (NC, "share-attributes"),
    (OC, "size"),
    (OC, "downloadURL"),
    (OC, "owner-id"),
    (OC, "owner-display-name"),
    (OC, "checksums"),
    (OC, "data-fingerprint"),
    (NC, "has-preview"),
    (NC, "mount-type"),
    (NC, "is-federated"),
    (NC, "note"),
];

/// One property's fate in a PROPPATCH.
#[derive(Debug, Clone)]
struct Mutation {
    name: PropertyName,
    /// `Some(raw XML)` to set, `None` to remove.
    value: Option<String>,
    /// The text content, for live properties that take a scalar.
    text: String,
}

/// What PROPPATCH does with one property.
#[derive(Debug, Clone, PartialEq)]
enum Plan {
    Refuse,
    Etag(String),
    Mtime(i64),
    CreationTime(i64),
    Favorite(bool),
    Dead,
}

pub(super) fn proppatch(
    shared: &Shared,
    request: &DavRequest,
    target: &Target,
) -> Result<Response, DavError> {
    let mutations = match parse_propertyupdate(&request.body) {
        Ok(mutations) => mutations,
        Err(message) => return Err(DavError::BadRequest(message)),
    };
    let minimal = crate::caldav::webdav::prefers_minimal(request);
    let mut guard = shared.world();
    let world = &mut *guard;
    let viewer = target.viewer(&world.users)?;
    let entry = target.entry(&world.storage, viewer)?;
    let can_update = entry.can(permission::UPDATE);
    // The storage's rule for dead properties: one's own nodes and mount
    // roots always, nodes inside a share only with update permission.
    let can_write_dead = can_update || entry.is_mount_root || entry.share.is_none();
    let plans: Vec<Plan> =
        mutations.iter().map(|mutation| plan(mutation, can_update, can_write_dead)).collect();
    let failed = plans.contains(&Plan::Refuse);

    let mut statuses: Vec<(PropertyName, u16)> = Vec::new();
    if failed {
        for (mutation, plan) in mutations.iter().zip(&plans) {
            let status = if *plan == Plan::Refuse { 403 } else { 424 };
            statuses.push((mutation.name.clone(), status));
        }
    } else {
        let id = entry.node.id;
        let mut dead_set = Vec::new();
        let mut dead_remove = Vec::new();
        // FilesPlugin handles `lastmodified` before `getetag`, so a touch
        // cannot overwrite an etag set in the same request.
        let mut order: Vec<usize> = (0..mutations.len()).collect();
        order.sort_by_key(|&index| matches!(plans[index], Plan::Etag(_)));
        let mut outcomes = vec![0u16; mutations.len()];
        for index in order {
            let (mutation, plan) = (&mutations[index], &plans[index]);
            let outcome = match plan {
                Plan::Refuse => unreachable!("checked above"),
                Plan::Etag(etag) => {
                    world.storage.set_etag(viewer, &target.path, etag).map(|()| 200)
                }
                Plan::Mtime(mtime) => {
                    world.storage.set_mtime(viewer, &target.path, *mtime).map(|()| 200)
                }
                Plan::CreationTime(ctime) => {
                    world.storage.set_creation_time(viewer, &target.path, *ctime).map(|()| 200)
                }
                Plan::Favorite(favorite) => {
                    world.storage.set_favorite_for(viewer.uid, id, *favorite);
                    // TagsPlugin confirms a removal with 204.
                    Ok(if mutation.value.is_none() { 204 } else { 200 })
                }
                Plan::Dead => {
                    match &mutation.value {
                        Some(value) => dead_set.push((mutation.name.clone(), value.clone())),
                        None => dead_remove.push(mutation.name.clone()),
                    }
                    Ok(200)
                }
            };
            outcomes[index] = outcome.unwrap_or(403);
        }
        for (mutation, outcome) in mutations.iter().zip(outcomes) {
            statuses.push((mutation.name.clone(), outcome));
        }
        if (!dead_set.is_empty() || !dead_remove.is_empty())
            && let Err(error) =
                world.storage.patch_properties(viewer, &target.path, dead_set, dead_remove)
        {
            // Checked by `can_write_dead`; a refusal here is a model bug.
            debug_assert!(false, "patch_properties refused after the check: {error:?}");
            return Err(storage_error(error, &target.path));
        }
    }
    let is_folder = entry_is_folder(world, viewer, &target.path);
    drop(guard);

    if minimal && statuses.iter().all(|(_, status)| *status < 300) {
        let mut headers = HeaderMap::new();
        insert(&mut headers, "vary", "Brief,Prefer");
        return Ok((StatusCode::NO_CONTENT, headers).into_response());
    }
    let mut out = String::new();
    out.push_str("<d:response><d:href>");
    out.push_str(&xml::escape(&target.href(&target.path, is_folder)));
    out.push_str("</d:href>");
    let mut seen_statuses: Vec<u16> = Vec::new();
    for (_, status) in &statuses {
        if !seen_statuses.contains(status) {
            seen_statuses.push(*status);
        }
    }
    for status in seen_statuses {
        let names: Vec<String> = statuses
            .iter()
            .filter(|(_, candidate)| *candidate == status)
            .map(|((ns, local), _)| xml::empty_element(ns, local))
            .collect();
        properties::push_propstat(&mut out, &names, &status_line(status));
    }
    out.push_str("</d:response>");
    let mut headers = HeaderMap::new();
    insert(&mut headers, "content-type", "application/xml; charset=utf-8");
    insert(&mut headers, "vary", "Brief,Prefer");
    Ok((StatusCode::MULTI_STATUS, headers, properties::multistatus(&out)).into_response())
}

fn entry_is_folder(world: &crate::World, viewer: crate::storage::Viewer<'_>, path: &str) -> bool {
    world.storage.resolve(viewer, path).map(|entry| entry.node.is_folder()).unwrap_or(false)
}

fn plan(mutation: &Mutation, can_update: bool, can_write_dead: bool) -> Plan {
    let (ns, local) = (mutation.name.0.as_str(), mutation.name.1.as_str());
    if PROTECTED.contains(&(ns, local)) {
        return Plan::Refuse;
    }
    let text = mutation.text.trim();
    let setting = mutation.value.is_some();
    match (ns, local) {
        // FilesPlugin: an empty value makes the handler return false (403).
        (DAV, "getetag") if setting && !text.is_empty() && can_update => {
            Plan::Etag(text.trim_matches('"').to_string())
        }
        (DAV, "lastmodified") if setting && can_update => match parse_time(text) {
            Some(mtime) => Plan::Mtime(mtime),
            None => Plan::Refuse,
        },
        (DAV, "creationdate") if setting && can_update => match parse_time(text) {
            Some(ctime) => Plan::CreationTime(ctime),
            None => Plan::Refuse,
        },
        (DAV, "getetag") | (DAV, "lastmodified") | (DAV, "creationdate") | (DAV, "displayname") => {
            Plan::Refuse
        }
        (OC, "favorite") => {
            Plan::Favorite(setting && (text == "1" || text.eq_ignore_ascii_case("true")))
        }
        _ if can_write_dead => Plan::Dead,
        _ => Plan::Refuse,
    }
}

/// A Unix timestamp or an RFC 3339 date.
fn parse_time(text: &str) -> Option<i64> {
    if let Ok(seconds) = text.parse::<i64>() {
        return Some(seconds);
    }
    crate::clock::parse_rfc3339(text)
}

fn parse_propertyupdate(body: &[u8]) -> Result<Vec<Mutation>, String> {
    let root = xml::parse(body).map_err(|error| error.to_string())?;
    if !root.is(DAV, "propertyupdate") {
        return Err(format!("Expected {{DAV:}}propertyupdate, got {{{}}}{}", root.ns, root.local));
    }
    let mut mutations: Vec<Mutation> = Vec::new();
    for instruction in root.children() {
        let setting = if instruction.is(DAV, "set") {
            true
        } else if instruction.is(DAV, "remove") {
            false
        } else {
            continue;
        };
        for prop in instruction.children_named(DAV, "prop") {
            for property in prop.children() {
                let name = (property.ns.clone(), property.local.clone());
                let mutation = Mutation {
                    name: name.clone(),
                    value: setting.then(|| property.inner_xml()),
                    text: property.text(),
                };
                // The last instruction for a property wins (sabre keeps a map).
                match mutations.iter_mut().find(|existing| existing.name == name) {
                    Some(existing) => *existing = mutation,
                    None => mutations.push(mutation),
                }
            }
        }
    }
    Ok(mutations)
}

fn status_line(status: u16) -> String {
    let reason =
        StatusCode::from_u16(status).ok().and_then(|code| code.canonical_reason()).unwrap_or("");
    format!("HTTP/1.1 {status} {reason}")
}
