//! The trash bin over WebDAV, `/remote.php/dav/trashbin/{uid}/`, as
//! `files_trashbin`'s sabre nodes answer: `trash/` lists the deleted items
//! (`name.d<deletion time>`, with the `nc:trashbin-*` properties
//! `TrashbinPlugin` adds), a deleted folder lists what was in it, GET reads a
//! deleted file, DELETE removes an item for good (or empties `trash/`), and
//! MOVE to `restore/{anything}` restores it (201).
//!
//! Another user's trash home is refused as upstream's principal collection
//! refuses it (403 when the user exists, 404 when not); nothing of its
//! content is answered either way.

use super::properties::{self, Selection};
use super::{insert, storage_error};
use crate::Shared;
use crate::dav::{self, DavError, DavRequest, Depth};
use crate::storage::{self, TrashEntry};
use crate::xml::{self, DAV, NC, OC};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};

/// One property of a node that is not in the files tree: its value as
/// escaped XML, or `None` when it does not exist for this node (404).
pub(crate) type Property = (&'static str, &'static str, Option<String>);

/// sabre's allprop names, for nodes outside the files tree (no quota).
const ALLPROP: [(&str, &str); 5] = [
    (DAV, "getlastmodified"),
    (DAV, "getcontentlength"),
    (DAV, "resourcetype"),
    (DAV, "getetag"),
    (DAV, "getcontenttype"),
];

/// A `<d:response>` for a node outside the files tree.
pub(crate) fn response(
    href: &str,
    properties: &[Property],
    selection: &Selection,
    minimal: bool,
) -> String {
    let lookup = |ns: &str, local: &str| {
        properties
            .iter()
            .find(|(p_ns, p_local, _)| *p_ns == ns && *p_local == local)
            .and_then(|(_, _, value)| value.clone())
    };
    let mut found = Vec::new();
    let mut missing = Vec::new();
    match selection {
        Selection::All { include } => {
            let mut names: Vec<(String, String)> =
                ALLPROP.iter().map(|(ns, local)| (ns.to_string(), local.to_string())).collect();
            names.extend(include.iter().cloned());
            for (ns, local) in &names {
                match lookup(ns, local) {
                    Some(value) => found.push(xml::element_with(ns, local, &value)),
                    None if include.contains(&(ns.clone(), local.clone())) => {
                        missing.push(xml::empty_element(ns, local))
                    }
                    None => {}
                }
            }
        }
        Selection::Names => {
            for (ns, local, value) in properties {
                if value.is_some() {
                    found.push(xml::empty_element(ns, local));
                }
            }
        }
        Selection::Named(names) => {
            for (ns, local) in names {
                match lookup(ns, local) {
                    Some(value) => found.push(xml::element_with(ns, local, &value)),
                    None => missing.push(xml::empty_element(ns, local)),
                }
            }
        }
    }
    properties::response_element(href, &found, &missing, minimal)
}

/// The properties of a plain collection (a home, `trash/`, `restore/`).
pub(crate) fn collection_properties() -> Vec<Property> {
    vec![(DAV, "resourcetype", Some("<d:collection/>".to_string()))]
}

/// The PROPFIND selection of a request (no body: allprop).
pub(crate) fn selection(request: &DavRequest) -> Result<Selection, DavError> {
    if request.body.is_empty() {
        return Ok(Selection::All { include: Vec::new() });
    }
    super::propfind::parse_propfind(&request.body).map_err(DavError::BadRequest)
}

/// A 207 with the headers a files PROPFIND carries.
pub(crate) fn multistatus(responses: &str) -> Response {
    let mut headers = HeaderMap::new();
    insert(&mut headers, "content-type", "application/xml; charset=utf-8");
    insert(&mut headers, "vary", "Brief,Prefer");
    insert(&mut headers, "dav", super::DAV_FEATURES);
    (StatusCode::MULTI_STATUS, headers, super::properties::multistatus(responses)).into_response()
}

/// The uid a per-user collection (`trashbin/{uid}`, `versions/{uid}`) is
/// asked about, when it is the caller's own: the bare root lists nobody,
/// and someone else's home is [`foreign_home`].
pub(crate) fn own_home<'a>(
    shared: &Shared,
    request: &DavRequest,
    uid: &'a str,
) -> Result<&'a str, DavError> {
    if uid.is_empty() {
        return Err(DavError::method_not_allowed(
            "Listing members of this collection is disabled",
            "OPTIONS, PROPFIND",
        ));
    }
    if uid != request.user.uid {
        return Err(foreign_home(shared, uid));
    }
    Ok(uid)
}

/// A principal collection's refusal of someone else's home: 403 when the
/// user exists (sabre's Forbidden, no message), 404 when not.
fn foreign_home(shared: &Shared, uid: &str) -> DavError {
    if shared.world().users.contains_key(uid) {
        DavError::Forbidden(String::new())
    } else {
        DavError::NotFound(format!("Principal with name {uid} not found"))
    }
}

/// The path below `/remote.php/dav/` a `Destination` header names, clean.
pub(crate) fn destination_below_dav(header: &str) -> Result<String, DavError> {
    let path = match header.find("://") {
        Some(scheme_end) => {
            let after = &header[scheme_end + 3..];
            after.find('/').map(|slash| &after[slash..]).unwrap_or("/")
        }
        None => header,
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    let below = path
        .strip_prefix(dav::DAV_ROOT)
        .and_then(|rest| rest.strip_prefix('/'))
        .ok_or_else(|| DavError::bad_request("The destination is not in /remote.php/dav"))?;
    storage::parse_dav_path(below).map_err(|_| DavError::bad_request("Invalid destination path"))
}

pub async fn handle(shared: &Shared, request: DavRequest) -> Response {
    route(shared, &request).into_response()
}

fn route(shared: &Shared, request: &DavRequest) -> Result<Response, DavError> {
    let clean = storage::parse_dav_path(&request.path)
        .map_err(|_| DavError::bad_request("Invalid path"))?;
    let mut parts = clean.splitn(3, '/');
    let uid = own_home(shared, request, parts.next().unwrap_or(""))?;
    let collection = parts.next().unwrap_or("");
    let rest = parts.next().unwrap_or("");
    let base = format!("{}/trashbin/{}/", dav::DAV_ROOT, dav::encode_segment(uid));
    match (collection, request.method.as_str()) {
        ("", "PROPFIND") => {
            let selection = selection(request)?;
            let minimal = crate::caldav::webdav::prefers_minimal(request);
            let mut body = response(&base, &collection_properties(), &selection, minimal);
            if request.depth(Depth::One) != Depth::Zero {
                for name in ["restore/", "trash/"] {
                    let href = format!("{base}{name}");
                    body.push_str(&response(&href, &collection_properties(), &selection, minimal));
                }
            }
            Ok(multistatus(&body))
        }
        ("restore", "PROPFIND") if rest.is_empty() => {
            let selection = selection(request)?;
            let minimal = crate::caldav::webdav::prefers_minimal(request);
            let href = format!("{base}restore/");
            Ok(multistatus(&response(&href, &collection_properties(), &selection, minimal)))
        }
        ("trash", method) => trash(shared, request, uid, rest, &base, method),
        ("" | "restore", "DELETE" | "PUT" | "MKCOL" | "MOVE" | "COPY" | "PROPPATCH") => {
            Err(DavError::forbidden("Not allowed in the trash bin"))
        }
        ("" | "restore", other) if rest.is_empty() => Err(DavError::no_plugin_for(other)),
        _ => Err(DavError::NotFound(format!("File with name {clean} could not be located"))),
    }
}

fn trash(
    shared: &Shared,
    request: &DavRequest,
    uid: &str,
    path: &str,
    base: &str,
    method: &str,
) -> Result<Response, DavError> {
    let not_found = || DavError::NotFound(format!("File with name {path} could not be located"));
    match method {
        "PROPFIND" => {
            let selection = selection(request)?;
            let minimal = crate::caldav::webdav::prefers_minimal(request);
            let depth = request.depth(Depth::One);
            let world = shared.world();
            let mut body = String::new();
            let trash_href = format!("{base}trash/");
            let folder = if path.is_empty() {
                body.push_str(&response(
                    &trash_href,
                    &collection_properties(),
                    &selection,
                    minimal,
                ));
                true
            } else {
                let entry = world.storage.trash_entry(uid, path).ok_or_else(not_found)?;
                let href = entry_href(&trash_href, &entry);
                body.push_str(&response(
                    &href,
                    &entry_properties(&world, &entry),
                    &selection,
                    minimal,
                ));
                entry.node.is_folder()
            };
            if folder && depth != Depth::Zero {
                for child in world.storage.trash_children(uid, path) {
                    let href = entry_href(&trash_href, &child);
                    let properties = entry_properties(&world, &child);
                    body.push_str(&response(&href, &properties, &selection, minimal));
                }
            }
            Ok(multistatus(&body))
        }
        "GET" | "HEAD" => {
            let world = shared.world();
            let entry = world.storage.trash_entry(uid, path).ok_or_else(not_found)?;
            let Some(content) = entry.node.content() else {
                return Err(DavError::no_plugin_for("GET"));
            };
            let mut headers = HeaderMap::new();
            insert(&mut headers, "content-type", entry.node.mime());
            insert(&mut headers, "content-length", &content.len().to_string());
            insert(&mut headers, "last-modified", &crate::clock::http_date(entry.item.deleted_at));
            insert(
                &mut headers,
                "content-disposition",
                &format!("attachment; filename=\"{}\"", entry.filename()),
            );
            let body = if method == "HEAD" { bytes::Bytes::new() } else { content.clone() };
            Ok((StatusCode::OK, headers, body).into_response())
        }
        "DELETE" => {
            let mut world = shared.world();
            if path.is_empty() {
                world.storage.empty_trash(uid);
            } else {
                world.storage.purge_from_trash(uid, path).map_err(|_| not_found())?;
            }
            Ok((StatusCode::NO_CONTENT, [(http::header::CONTENT_LENGTH, "0")]).into_response())
        }
        "MOVE" if !path.is_empty() => {
            let header = request
                .header("destination")
                .ok_or_else(|| DavError::bad_request("The destination header was not supplied"))?;
            let destination = destination_below_dav(header)?;
            let restore_prefix = format!("trashbin/{uid}/restore/");
            if !destination.starts_with(&restore_prefix) {
                return Err(DavError::forbidden("Trash items can only be moved to restore/"));
            }
            let now = shared.now();
            let mut guard = shared.world();
            let world = &mut *guard;
            if world.storage.trash_entry(uid, path).is_none() {
                return Err(not_found());
            }
            let viewer =
                world.users.get(uid).map(crate::world::User::viewer).ok_or_else(not_found)?;
            world
                .storage
                .restore_from_trash(viewer, path, now)
                .map_err(|error| storage_error(error, path))?;
            Ok((StatusCode::CREATED, [(http::header::CONTENT_LENGTH, "0")]).into_response())
        }
        "PUT" | "MKCOL" | "MOVE" | "COPY" | "PROPPATCH" => {
            Err(DavError::forbidden("Not allowed to change the trash bin this way"))
        }
        other => Err(DavError::no_plugin_for(other)),
    }
}

fn entry_href(trash_href: &str, entry: &TrashEntry<'_>) -> String {
    let mut href = format!("{trash_href}{}", dav::encode_segment(&entry.item.trash_name()));
    if !entry.rest.is_empty() {
        href.push('/');
        href.push_str(&dav::encode_path(&entry.rest));
    }
    if entry.node.is_folder() {
        href.push('/');
    }
    href
}

/// What `TrashbinPlugin` and sabre's core plugin answer for a trash node.
fn entry_properties(world: &crate::world::World, entry: &TrashEntry<'_>) -> Vec<Property> {
    let text = |value: String| Some(xml::escape(&value));
    let is_folder = entry.node.is_folder();
    let deleted_by = &entry.item.deleted_by;
    let size = entry.size().to_string();
    vec![
        (NC, "trashbin-filename", text(entry.filename().to_string())),
        (NC, "trashbin-original-location", text(entry.original_location())),
        (NC, "trashbin-title", text(entry.original_location())),
        (NC, "trashbin-deletion-time", text(entry.item.deleted_at.to_string())),
        (NC, "trashbin-deleted-by-id", text(deleted_by.clone())),
        (
            NC,
            "trashbin-deleted-by-display-name",
            world.user(deleted_by).map(|user| xml::escape(&user.display_name)),
        ),
        (DAV, "displayname", text(entry.filename().to_string())),
        (
            DAV,
            "resourcetype",
            Some(if is_folder { "<d:collection/>".to_string() } else { String::new() }),
        ),
        (DAV, "getlastmodified", text(crate::clock::http_date(entry.item.deleted_at))),
        (DAV, "getcontentlength", if is_folder { None } else { text(size.clone()) }),
        (DAV, "getcontenttype", if is_folder { None } else { text(entry.node.mime().to_string()) }),
        (DAV, "getetag", text(entry.item.deleted_at.to_string())),
        (OC, "size", text(size)),
        (OC, "id", text(entry.node.id.to_string())),
        (OC, "fileid", text(entry.node.id.to_string())),
        (OC, "permissions", text("GD".to_string())),
        (NC, "has-preview", text("false".to_string())),
        (NC, "mount-type", Some(String::new())),
    ]
}
