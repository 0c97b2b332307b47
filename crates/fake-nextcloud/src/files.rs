//! WebDAV on `/remote.php/dav/files/{uid}/` (and the legacy
//! `/remote.php/webdav/`): PROPFIND, PROPPATCH, GET (with Range), HEAD, PUT,
//! MKCOL, MOVE, COPY, DELETE, OPTIONS — answered the way Nextcloud's sabre/dav
//! server answers them, statuses, headers and error bodies included; and
//! chunked uploads into them on `/remote.php/dav/uploads/{uid}/` ([`uploads`])
//! and bulk uploads on `/remote.php/dav/bulk` ([`bulk`]);
//! the trash bin on `/remote.php/dav/trashbin/{uid}/` ([`trashbin`]) and
//! file versions on `/remote.php/dav/versions/{uid}/` ([`versions`]).
//!
//! Every request resolves its path through [`crate::storage::Storage`], so
//! what a user sees here is exactly what SEARCH and OCS see. A path in another
//! user's tree is a 404, never a 403: nobody learns that it exists.

pub mod bulk;
pub(crate) mod properties;
mod propfind;
pub mod public;
mod quota;
pub(crate) mod transfer;
pub mod trashbin;
mod tree;
pub mod uploads;
pub mod versions;
pub(crate) mod zip;

use crate::Shared;
use crate::dav::{self, DavError, DavRequest};
use crate::storage::{self, StorageError};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, StatusCode};

/// The DAV compliance classes and extensions Nextcloud advertises in `DAV:`
/// (one sabre server serves all of `/remote.php/dav`, so files and calendars
/// share the list).
pub const DAV_FEATURES: &str = "1, 3, extended-mkcol, access-control, \
calendarserver-principal-property-search, calendar-access, calendar-proxy, \
calendar-auto-schedule, calendar-availability, nc-calendar-trashbin, \
nc-calendar-webcal-cache, calendarserver-subscribed, oc-resource-sharing, \
oc-calendar-publishing, calendarserver-sharing, nc-calendar-search, \
nc-enable-birthday-calendar, addressbook, nextcloud-checksum-update, nc-paginate";

/// What a files request is about: a clean path in the caller's files and
/// the href prefix its responses use.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub uid: String,
    /// Clean, decoded, relative to the user's files root ("" = the root).
    pub path: String,
    /// `/remote.php/dav/files/alice/` or `/remote.php/webdav/`, with the
    /// trailing slash.
    pub href_base: String,
    /// Through a public link: the shared node's path in its owner's files,
    /// which hrefs leave out (they start at the link's root), and the link.
    pub link: Option<(String, storage::ShareId)>,
}

impl Target {
    /// The caller as storage sees them; an unknown one is a 404. Borrows
    /// only `users`, so the world's storage stays free to change.
    pub fn viewer<'w>(
        &self,
        users: &'w std::collections::BTreeMap<String, crate::world::User>,
    ) -> Result<storage::Viewer<'w>, DavError> {
        users.get(&self.uid).map(crate::world::User::viewer).ok_or_else(DavError::not_found)
    }

    /// The entry at the target's path as `viewer` sees it, or storage's
    /// refusal as sabre words it.
    pub fn entry<'s>(
        &self,
        storage: &'s storage::Storage,
        viewer: storage::Viewer<'_>,
    ) -> Result<storage::Entry<'s>, DavError> {
        storage.resolve(viewer, &self.path).map_err(|error| storage_error(error, &self.path))
    }

    /// The href of a path in the caller's files (folders end with a slash).
    pub fn href(&self, path: &str, is_folder: bool) -> String {
        let relative = match &self.link {
            None => path,
            Some((root, _)) if path == root => "",
            Some((root, _)) => path
                .strip_prefix(root.as_str())
                .map_or(path, |rest| rest.strip_prefix('/').unwrap_or(rest)),
        };
        href(&self.href_base, relative, is_folder)
    }
}

/// Joins an href base and a clean path, percent-encoding it as sabre does.
pub(crate) fn href(base: &str, path: &str, is_folder: bool) -> String {
    let mut href = base.to_string();
    if !path.is_empty() {
        href.push_str(&dav::encode_path(path));
        if is_folder {
            href.push('/');
        }
    }
    href
}

/// The href prefix of a user's files in `/remote.php/dav`.
pub(crate) fn files_href_base(uid: &str) -> String {
    format!("{}/files/{}/", dav::DAV_ROOT, dav::encode_segment(uid))
}

pub async fn handle(shared: &Shared, request: DavRequest) -> Response {
    handle_target(shared, &request).into_response()
}

fn handle_target(shared: &Shared, request: &DavRequest) -> Result<Response, DavError> {
    let target = parse_target(request)?;
    match request.method.as_str() {
        "OPTIONS" => options(shared, request, &target),
        "PROPFIND" => propfind::propfind(shared, request, &target),
        "PROPPATCH" => propfind::proppatch(shared, request, &target),
        "GET" => transfer::get(shared, request, &target, false),
        "HEAD" => transfer::get(shared, request, &target, true),
        "PUT" => transfer::put(shared, request, &target),
        "MKCOL" => tree::mkcol(shared, request, &target),
        "DELETE" => tree::delete(shared, request, &target),
        "MOVE" => tree::move_or_copy(shared, request, &target, tree::Operation::Move),
        "COPY" => tree::move_or_copy(shared, request, &target, tree::Operation::Copy),
        "REPORT" => report(request),
        other => Err(DavError::no_plugin_for(other)),
    }
}

/// Splits `alice/Documents/a%20b.md` into the uid and a clean path, refusing
/// traversal (400) and another user's tree (404).
fn parse_target(request: &DavRequest) -> Result<Target, DavError> {
    let legacy = request.full_path.starts_with("/remote.php/webdav");
    let clean = storage::parse_dav_path(&request.path)
        .map_err(|_| DavError::bad_request("Invalid path"))?;
    let (uid, path) = clean.split_once('/').unwrap_or((clean.as_str(), ""));
    if uid.is_empty() || uid != request.user.uid {
        return Err(not_found_path(&clean));
    }
    let href_base = if legacy { "/remote.php/webdav/".to_string() } else { files_href_base(uid) };
    Ok(Target { uid: uid.to_string(), path: path.to_string(), href_base, link: None })
}

fn options(shared: &Shared, request: &DavRequest, target: &Target) -> Result<Response, DavError> {
    let exists = {
        let world = shared.world();
        let user = world.user(&request.user.uid).ok_or_else(DavError::not_found)?;
        world.storage.resolve(user.viewer(), &target.path).is_ok()
    };
    let mut headers = options_headers(exists);
    insert(&mut headers, "accept-ranges", "bytes");
    Ok((StatusCode::OK, headers, "").into_response())
}

/// sabre's `CorePlugin::httpOptions` headers for a node of the files tree
/// (or an upload): the methods it allows, MKCOL only where nothing exists
/// yet, and the DAV classes.
fn options_headers(exists: bool) -> HeaderMap {
    let mut allow =
        String::from("OPTIONS, GET, HEAD, DELETE, PROPFIND, PUT, PROPPATCH, COPY, MOVE, REPORT");
    if !exists {
        allow.push_str(", MKCOL");
    }
    let mut headers = HeaderMap::new();
    insert(&mut headers, "allow", &allow);
    insert(&mut headers, "dav", DAV_FEATURES);
    insert(&mut headers, "ms-author-via", "DAV");
    headers
}

/// sabre parses the body and then finds no plugin for the report; Nextcloud's
/// files REPORTs (oc:filter-files, sync-collection) are not simulated.
fn report(request: &DavRequest) -> Result<Response, DavError> {
    let root = crate::xml::parse(&request.body)
        .map_err(|error| DavError::bad_request(error.to_string()))?;
    Err(DavError::ReportNotSupported {
        message: format!(
            "The {{{}}}{} REPORT is not supported by this server",
            root.ns, root.local
        ),
        condition: false,
    })
}

// ---- shared helpers for the method modules -------------------------------

/// Nextcloud's `oc:id` and `OC-FileId`: the file id zero-padded to eight
/// digits followed by the instance id.
pub(crate) fn padded_file_id(fileid: storage::FileId, instance_id: &str) -> String {
    format!("{fileid:08}{instance_id}")
}

pub(crate) fn quoted(etag: &str) -> String {
    format!("\"{etag}\"")
}

pub(crate) fn insert(headers: &mut HeaderMap, name: &'static str, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        headers.insert(name, value);
    }
}

pub(crate) fn not_found_path(path: &str) -> DavError {
    DavError::NotFound(format!("File with name {path} could not be located"))
}

/// Files answer a failed precondition without naming the header.
pub(crate) fn precondition_failed(message: &str) -> DavError {
    DavError::PreconditionFailed { message: message.to_string(), header: None }
}

/// The sabre exception a storage refusal becomes.
pub(crate) fn storage_error(error: StorageError, path: &str) -> DavError {
    match error {
        StorageError::NotFound => not_found_path(path),
        StorageError::ParentMissing => DavError::conflict("Parent node does not exist"),
        StorageError::Forbidden => DavError::Forbidden(format!("{path} is not writable")),
        StorageError::AlreadyExists => DavError::MethodNotAllowed {
            message: "The resource you tried to create already exists".to_string(),
            allow: None,
        },
        StorageError::DestinationExists => precondition_failed(
            "The destination node already exists, and the overwrite header is set to false",
        ),
        StorageError::BadPath => DavError::bad_request("Invalid path"),
        StorageError::NotAFile => DavError::conflict("PUT is not allowed on non-files."),
        StorageError::SameSourceAndDestination => {
            DavError::forbidden("Source and destination uri are identical.")
        }
        StorageError::IntoItself => DavError::conflict(
            "The destination may not be part of the same subtree as the source path.",
        ),
        StorageError::OntoItsParent => {
            DavError::forbidden("The destination may not be a folder the source is in.")
        }
    }
}
