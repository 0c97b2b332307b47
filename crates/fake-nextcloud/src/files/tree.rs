//! MKCOL, DELETE, MOVE and COPY: changes to the shape of the tree.
//!
//! MOVE and COPY check in sabre's order (`Server::getCopyAndMoveInfo`):
//! Destination and Overwrite headers (400), destination parent (409, or 415
//! when it is a file), existing destination with `Overwrite: F` (412), same
//! path (403), destination inside the source (409). A destination outside
//! the caller's own files is refused with 403, as sabre refuses a URI
//! outside its base.

use super::transfer::{Current, check_preconditions};
use super::{Target, insert, padded_file_id, quoted, storage_error};
use crate::Shared;
use crate::dav::{DavError, DavRequest, Depth};
use crate::storage::{self, StorageError};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Operation {
    Move,
    Copy,
}

pub(super) fn mkcol(
    shared: &Shared,
    request: &DavRequest,
    target: &Target,
) -> Result<Response, DavError> {
    if !request.body.is_empty() {
        let content_type = request.header("content-type").unwrap_or("");
        if !content_type.starts_with("application/xml") && !content_type.starts_with("text/xml") {
            return Err(DavError::unsupported_media_type(
                "The request body for the MKCOL request must have an xml Content-Type",
            ));
        }
        // Extended MKCOL (RFC 5689): only a plain collection can be made here.
        match crate::xml::parse(&request.body) {
            Err(error) => return Err(DavError::bad_request(error.to_string())),
            Ok(root) if !root.is(crate::xml::DAV, "mkcol") => {
                return Err(DavError::bad_request(
                    "The request body must be a {DAV:}mkcol document",
                ));
            }
            Ok(root) => {
                let is_collection = root
                    .children_named(crate::xml::DAV, "set")
                    .flat_map(|set| set.children_named(crate::xml::DAV, "prop"))
                    .flat_map(|prop| prop.children_named(crate::xml::DAV, "resourcetype"))
                    .any(|resourcetype| {
                        resourcetype.child(crate::xml::DAV, "collection").is_some()
                    });
                if !is_collection {
                    return Err(DavError::bad_request(
                        "The mkcol request must include a {DAV:}resourcetype property",
                    ));
                }
            }
        }
    }
    let now = shared.now();
    let mut guard = shared.world();
    let world = &mut *guard;
    let viewer = target.viewer(&world.users)?;
    let fileid = world
        .storage
        .mkcol(viewer, &target.path, now)
        .map_err(|error| storage_error(error, &target.path))?;
    let fileid = padded_file_id(fileid, &world.server.instance_id);
    drop(guard);
    let mut headers = HeaderMap::new();
    insert(&mut headers, "content-length", "0");
    insert(&mut headers, "oc-fileid", &fileid);
    Ok((StatusCode::CREATED, headers).into_response())
}

pub(super) fn delete(
    shared: &Shared,
    request: &DavRequest,
    target: &Target,
) -> Result<Response, DavError> {
    let now = shared.now();
    let mut guard = shared.world();
    let world = &mut *guard;
    let viewer = target.viewer(&world.users)?;
    check_existing_preconditions(world, viewer, request, target)?;
    if target.path.is_empty() {
        return Err(DavError::forbidden("The files root cannot be deleted"));
    }
    if let Err(error) = world.storage.delete(viewer, &target.path, now) {
        return Err(storage_error(error, &target.path));
    }
    drop(guard);
    Ok((StatusCode::NO_CONTENT, [(http::header::CONTENT_LENGTH, "0")]).into_response())
}

pub(super) fn move_or_copy(
    shared: &Shared,
    request: &DavRequest,
    target: &Target,
    operation: Operation,
) -> Result<Response, DavError> {
    let Some(destination_header) = request.header("destination") else {
        return Err(DavError::bad_request("The destination header was not supplied"));
    };
    let destination = destination_path(destination_header, target)?;
    let overwrite = overwrite(request)?;
    // COPY of a collection with Depth 0 copies the collection alone.
    let recursive = request.depth(Depth::Infinity) != Depth::Zero;

    let now = shared.now();
    let mut guard = shared.world();
    let world = &mut *guard;
    let viewer = target.viewer(&world.users)?;
    check_existing_preconditions(world, viewer, request, target)?;
    // A view-only share's content is not copied out (ViewOnlyPlugin).
    if operation == Operation::Copy
        && world
            .storage
            .resolve(viewer, &target.path)
            .is_ok_and(|entry| entry.share.is_some_and(|share| !share.allows_download()))
    {
        return Err(DavError::Forbidden(super::transfer::VIEW_ONLY.to_string()));
    }
    check_destination_parent(&world.storage, viewer, &destination)?;
    let destination_exists = world.storage.resolve(viewer, &destination).is_ok();
    if destination_exists && !overwrite {
        return Err(storage_error(StorageError::DestinationExists, &destination));
    }
    if destination == target.path {
        return Err(storage_error(StorageError::SameSourceAndDestination, &destination));
    }
    if destination.starts_with(&format!("{}/", target.path)) || target.path.is_empty() {
        return Err(storage_error(StorageError::IntoItself, &destination));
    }
    if target.path.starts_with(&format!("{destination}/")) || destination.is_empty() {
        return Err(storage_error(StorageError::OntoItsParent, &destination));
    }
    check_quota(world, viewer, &target.path, &destination, operation)?;
    let result = match operation {
        Operation::Move => world.storage.rename(viewer, &target.path, &destination, overwrite, now),
        Operation::Copy => {
            world.storage.copy(viewer, &target.path, &destination, overwrite, recursive, now)
        }
    };
    let (fileid, created) = match result {
        Ok(result) => result,
        Err(error) => return Err(storage_error(error, &target.path)),
    };
    let mut headers = HeaderMap::new();
    insert(&mut headers, "content-length", "0");
    insert(&mut headers, "oc-fileid", &padded_file_id(fileid, &world.server.instance_id));
    // CopyEtagHeaderPlugin::afterMove: a moved file reports its etag.
    if operation == Operation::Move
        && let Ok(entry) = world.storage.resolve(viewer, &destination)
        && !entry.node.is_folder()
    {
        let etag = quoted(&world.storage.summary(viewer, &entry).etag);
        insert(&mut headers, "etag", &etag);
        insert(&mut headers, "oc-etag", &etag);
    }
    drop(guard);
    let status = if created { StatusCode::CREATED } else { StatusCode::NO_CONTENT };
    Ok((status, headers).into_response())
}

/// A copy adds its size to the destination owner's files, and so does a
/// move between two owners' files (into or out of a share); a move inside
/// one owner's files changes nothing.
fn check_quota(
    world: &crate::world::World,
    viewer: crate::storage::Viewer<'_>,
    source: &str,
    destination: &str,
    operation: Operation,
) -> Result<(), DavError> {
    let Ok(entry) = world.storage.resolve(viewer, source) else { return Ok(()) };
    let (parent, _) = crate::storage::parent_and_name(destination);
    let lands_with = world.storage.resolve(viewer, parent).map(|parent| parent.node.owner.clone());
    if operation == Operation::Move && lands_with.as_deref() == Ok(entry.node.owner.as_str()) {
        return Ok(());
    }
    super::quota::check(world, viewer, destination, world.storage.size(entry.node))
}

/// The `Overwrite` header: T (also when absent) or F, anything else 400.
pub(super) fn overwrite(request: &DavRequest) -> Result<bool, DavError> {
    match request.header("overwrite").map(str::trim) {
        None | Some("") => Ok(true),
        Some(value) if value.eq_ignore_ascii_case("t") => Ok(true),
        Some(value) if value.eq_ignore_ascii_case("f") => Ok(false),
        Some(_) => Err(DavError::bad_request("The HTTP Overwrite header should be either T or F")),
    }
}

/// sabre's preconditions against the resource the request names, which
/// must exist (a 404 otherwise).
fn check_existing_preconditions(
    world: &crate::world::World,
    viewer: storage::Viewer<'_>,
    request: &DavRequest,
    target: &Target,
) -> Result<(), DavError> {
    let entry = target.entry(&world.storage, viewer)?;
    let current = Current {
        etag: quoted(&world.storage.summary(viewer, &entry).etag),
        mtime: entry.node.mtime,
    };
    check_preconditions(request, Some(&current))
}

/// The clean path a `Destination` header names in the caller's files.
fn destination_path(header: &str, target: &Target) -> Result<String, DavError> {
    let collapsed = destination_uri(header)?;
    let base = target.href_base.trim_end_matches('/');
    let outside = || {
        DavError::Forbidden(format!(
            "Requested uri ({collapsed}) is out of base uri ({})",
            target.href_base
        ))
    };
    let rest = match collapsed.strip_prefix(base) {
        Some("") => "",
        Some(rest) if rest.starts_with('/') => rest,
        _ => return Err(outside()),
    };
    storage::parse_dav_path(rest).map_err(|_| DavError::bad_request("Invalid destination path"))
}

/// The still percent-encoded path a `Destination` header names: sabre
/// ignores the scheme and host of an absolute URL and collapses repeated
/// slashes before comparing the path with its base.
pub(super) fn destination_uri(header: &str) -> Result<String, DavError> {
    let header = header.trim();
    let raw_path = if !header.starts_with('/') && header.contains("://") {
        match url::Url::parse(header) {
            Ok(url) => url.path().to_string(),
            Err(_) => {
                return Err(DavError::bad_request("The destination header is not a valid URL"));
            }
        }
    } else {
        header.to_string()
    };
    // Collapse repeated slashes as sabre does before comparing with its base.
    let mut collapsed = String::with_capacity(raw_path.len());
    for character in raw_path.chars() {
        if character == '/' && collapsed.ends_with('/') {
            continue;
        }
        collapsed.push(character);
    }
    Ok(collapsed)
}

/// sabre's `getCopyAndMoveInfo`: the destination's parent must exist (409)
/// and be a collection (415).
pub(super) fn check_destination_parent(
    storage: &storage::Storage,
    viewer: crate::storage::Viewer<'_>,
    destination: &str,
) -> Result<(), DavError> {
    let (parent, _) = storage::parent_and_name(destination);
    match storage.resolve(viewer, parent) {
        Err(_) => Err(DavError::conflict("The destination node is not found")),
        Ok(parent) if !parent.node.is_folder() => {
            Err(DavError::unsupported_media_type("The destination node is not a collection"))
        }
        Ok(_) => Ok(()),
    }
}
