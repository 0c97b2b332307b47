//! Chunked upload on `/remote.php/dav/uploads/{uid}/{transfer-id}/`, the
//! dav app's `Upload/` collections as a Nextcloud on its default storage
//! answers them: MKCOL makes an upload folder, PUT stores numbered chunks in
//! it, MOVE (or COPY) of its `.file` writes the chunks, in the natural order
//! of their names, to a file in the caller's files, and DELETE aborts.
//!
//! Chunking v2 (the `Destination` header on MKCOL and PUT, chunks numbered
//! 1 to 10000 and at least 5 MB but the last) only changes anything on a
//! server with a distributed cache and an S3 primary storage, where chunks
//! go straight into a multipart upload. Everywhere else `ChunkingV2Plugin`
//! steps aside and the same requests are served as here, by
//! `ChunkingPlugin`, `UploadFolder`, `FutureFile` and `AssemblyStream`:
//! `Destination` is read only by the final MOVE, chunk names and sizes are
//! free, and a missing `Destination` on MKCOL changes nothing.
//!
//! The assembled file is an ordinary write: it goes through
//! [`crate::storage::Storage::put`], so permissions (a share's included),
//! file ids, etags, webhook events and SEARCH are those of a PUT.
//!
//! Chunks live in memory like every file of the fake. One chunk is a request
//! body, so [`crate::REQUEST_BODY_LENGTH_MAX`] bounds it (413); what one user
//! keeps in unfinished uploads, and so the largest assembled file, is
//! bounded by [`PENDING_BYTES_MAX`] (507, as Nextcloud answers an upload
//! past the quota).

use super::transfer::{
    Current, FOLDER_GET_TEXT, check_preconditions, file_written, requested_mtime,
};
use super::tree::{Operation, check_destination_parent, destination_uri, overwrite};
use super::{insert, not_found_path, padded_file_id, quoted, storage_error};
use crate::Shared;
use crate::caldav::webdav::{PropertySet, multistatus, parse_propfind, prefers_minimal};
use crate::dav::{self, DavError, DavRequest, Depth};
use crate::storage::{self, StorageError};
use crate::xml::DAV;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// The most bytes one user may hold in unfinished uploads, which is also
/// the largest file a chunked upload can assemble: 512 MiB. Assembling
/// copies the chunks into the file once, so an upload costs at most twice
/// this while its MOVE runs.
pub const PENDING_BYTES_MAX: u64 = 512 * 1024 * 1024;

/// The name under which an upload folder offers its assembled file.
const FUTURE_FILE: &str = ".file";

/// Every user's unfinished uploads.
#[derive(Debug, Default)]
pub struct Uploads {
    /// (uid, transfer id) → its folder.
    folders: BTreeMap<(String, String), Folder>,
    etag_counter: u64,
}

#[derive(Debug)]
struct Folder {
    mtime: i64,
    /// Unquoted; changes with every chunk (`.file` reports it too).
    etag: String,
    chunks: BTreeMap<String, Chunk>,
}

#[derive(Debug)]
struct Chunk {
    content: Bytes,
    mtime: i64,
    etag: String,
}

impl Uploads {
    fn next_etag(&mut self) -> String {
        self.etag_counter += 1;
        format!("{:013x}", 0x7570_0000_0000u64 + self.etag_counter * 0x9e37)
    }

    fn pending_bytes(&self, uid: &str) -> u64 {
        self.of(uid).map(|(_, folder)| folder.size()).sum()
    }

    fn of<'u>(&'u self, uid: &'u str) -> impl Iterator<Item = (&'u str, &'u Folder)> + 'u {
        self.folders
            .range((uid.to_string(), String::new())..)
            .take_while(move |((owner, _), _)| owner == uid)
            .map(|((_, id), folder)| (id.as_str(), folder))
    }

    fn folder(&self, uid: &str, id: &str) -> Option<&Folder> {
        self.folders.get(&(uid.to_string(), id.to_string()))
    }

    /// A chunk was added, replaced or removed: the folder changes.
    fn touch(&mut self, uid: &str, id: &str, now: i64) {
        let etag = self.next_etag();
        if let Some(folder) = self.folders.get_mut(&(uid.to_string(), id.to_string())) {
            folder.mtime = now;
            folder.etag = etag;
        }
    }
}

impl Folder {
    fn size(&self) -> u64 {
        self.chunks.values().map(|chunk| chunk.content.len() as u64).sum()
    }

    /// The chunks in `AssemblyStream`'s order: natural order of their names.
    fn ordered(&self) -> Vec<&Chunk> {
        let mut chunks: Vec<(&String, &Chunk)> = self.chunks.iter().collect();
        chunks.sort_by(|(a, _), (b, _)| natural_order(a, b));
        chunks.into_iter().map(|(_, chunk)| chunk).collect()
    }

    fn assembled(&self) -> Vec<u8> {
        let mut content = Vec::with_capacity(self.size() as usize);
        for chunk in self.ordered() {
            content.extend_from_slice(&chunk.content);
        }
        content
    }
}

/// PHP's `strnatcmp` as far as chunk names need it: runs of digits compare
/// by their value ("2" before "10"), everything else byte by byte.
fn natural_order(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let (number_a, rest_a) = split_digits(a);
                let (number_b, rest_b) = split_digits(b);
                let (value_a, value_b) = (trim_zeros(number_a), trim_zeros(number_b));
                let order = value_a.len().cmp(&value_b.len()).then(value_a.cmp(value_b));
                if order != Ordering::Equal {
                    return order;
                }
                (a, b) = (rest_a, rest_b);
            }
            (Some(x), Some(y)) if x != y => return x.cmp(y),
            _ => (a, b) = (&a[1..], &b[1..]),
        }
    }
}

fn split_digits(text: &[u8]) -> (&[u8], &[u8]) {
    let end = text.iter().position(|byte| !byte.is_ascii_digit()).unwrap_or(text.len());
    text.split_at(end)
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let start = digits.iter().position(|&byte| byte != b'0').unwrap_or(digits.len());
    &digits[start..]
}

/// What a request below `/remote.php/dav/uploads/` names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    /// `uploads/` itself.
    Root,
    /// `uploads/{uid}/`, the caller's upload home.
    Home,
    /// An upload folder.
    Folder(String),
    /// A chunk, or `.file`, in an upload folder.
    Item(String, String),
}

pub async fn handle(shared: &Shared, request: DavRequest) -> Response {
    answer(shared, &request).into_response()
}

fn answer(shared: &Shared, request: &DavRequest) -> Result<Response, DavError> {
    let place = place(request)?;
    match request.method.as_str() {
        "OPTIONS" => options(shared, request, &place),
        "PROPFIND" => propfind(shared, request, &place),
        "MKCOL" => mkcol(shared, request, &place),
        "PUT" => put(shared, request, &place),
        "GET" | "HEAD" => get(shared, request, &place),
        "DELETE" => delete(shared, request, &place),
        "MOVE" | "COPY" => {
            let operation =
                if request.method.as_str() == "MOVE" { Operation::Move } else { Operation::Copy };
            match &place {
                Place::Item(id, name) if name == FUTURE_FILE => {
                    assemble(shared, request, id, operation)
                }
                // sabre would move a chunk like any file; no client does.
                Place::Item(..) => Err(DavError::forbidden(
                    "Only the .file of an upload can be moved or copied out of it",
                )),
                _ => Err(DavError::forbidden("Permission denied to rename this folder")),
            }
        }
        other => Err(DavError::no_plugin_for(other)),
    }
}

/// Splits `alice/{id}/{chunk}`; another user's uploads are a 404, as
/// everything of theirs is.
fn place(request: &DavRequest) -> Result<Place, DavError> {
    let clean = storage::parse_dav_path(&request.path)
        .map_err(|_| DavError::bad_request("Invalid path"))?;
    let mut segments = clean.split('/').filter(|segment| !segment.is_empty());
    let Some(uid) = segments.next() else { return Ok(Place::Root) };
    if uid != request.user.uid {
        return Err(DavError::NotFound(format!("Principal with name {uid} not found")));
    }
    match (segments.next(), segments.next(), segments.next()) {
        (None, _, _) => Ok(Place::Home),
        (Some(id), None, _) => Ok(Place::Folder(id.to_string())),
        (Some(id), Some(name), None) => Ok(Place::Item(id.to_string(), name.to_string())),
        _ => Err(not_found_path(&clean)),
    }
}

fn root_href() -> String {
    format!("{}/uploads/", dav::DAV_ROOT)
}

fn home_href(uid: &str) -> String {
    format!("{}{}/", root_href(), dav::encode_segment(uid))
}

fn folder_href(uid: &str, id: &str) -> String {
    format!("{}{}/", home_href(uid), dav::encode_segment(id))
}

fn item_href(uid: &str, id: &str, name: &str) -> String {
    format!("{}{}", folder_href(uid, id), dav::encode_segment(name))
}

fn missing_folder(uid: &str, id: &str) -> DavError {
    not_found_path(&format!("uploads/{uid}/{id}"))
}

fn exists(uploads: &Uploads, uid: &str, place: &Place) -> bool {
    match place {
        Place::Root | Place::Home => true,
        Place::Folder(id) => uploads.folder(uid, id).is_some(),
        Place::Item(id, name) => uploads
            .folder(uid, id)
            .is_some_and(|folder| name == FUTURE_FILE || folder.chunks.contains_key(name)),
    }
}

fn options(shared: &Shared, request: &DavRequest, place: &Place) -> Result<Response, DavError> {
    let exists = exists(&shared.world().uploads, &request.user.uid, place);
    Ok((StatusCode::OK, super::options_headers(exists), "").into_response())
}

// ---- PROPFIND ------------------------------------------------------------

/// The upload collections are not Nextcloud file nodes: they carry sabre's
/// core properties only (no `oc:fileid`, no permissions).
fn collection_properties(mtime: Option<i64>) -> PropertySet {
    let mut set = PropertySet::new();
    set.xml(DAV, "resourcetype", "<d:collection/>");
    if let Some(mtime) = mtime {
        set.text(DAV, "getlastmodified", &crate::clock::http_date(mtime));
    }
    set
}

fn file_properties(size: u64, mime: &str, etag: &str, mtime: i64) -> PropertySet {
    let mut set = PropertySet::new();
    set.xml(DAV, "resourcetype", "");
    set.text(DAV, "getcontentlength", &size.to_string());
    set.text(DAV, "getcontenttype", mime);
    set.text(DAV, "getetag", &quoted(etag));
    set.text(DAV, "getlastmodified", &crate::clock::http_date(mtime));
    set
}

/// An upload folder's members: `.file` (`FutureFile`: the chunks' total,
/// the folder's etag), then its chunks.
fn members(uid: &str, id: &str, folder: &Folder) -> Vec<(String, PropertySet)> {
    let mut members = vec![(
        item_href(uid, id, FUTURE_FILE),
        file_properties(folder.size(), "application/octet-stream", &folder.etag, folder.mtime),
    )];
    for (name, chunk) in &folder.chunks {
        let size = chunk.content.len() as u64;
        let properties = file_properties(size, storage::mime_for(name), &chunk.etag, chunk.mtime);
        members.push((item_href(uid, id, name), properties));
    }
    members
}

fn levels(depth: Depth) -> u32 {
    match depth {
        Depth::Zero => 0,
        Depth::One => 1,
        Depth::Levels(levels) => levels,
        Depth::Infinity => u32::MAX,
    }
}

type Found = Vec<(String, PropertySet)>;

/// The caller's upload home and `below` levels of what it holds.
fn home_and_below(found: &mut Found, uploads: &Uploads, uid: &str, below: u32) {
    let mtime = uploads.of(uid).map(|(_, folder)| folder.mtime).max();
    found.push((home_href(uid), collection_properties(mtime)));
    if below > 0 {
        for (id, folder) in uploads.of(uid) {
            folder_and_below(found, uid, id, folder, below - 1);
        }
    }
}

/// An upload folder and, `below` one level or more, its members.
fn folder_and_below(found: &mut Found, uid: &str, id: &str, folder: &Folder, below: u32) {
    found.push((folder_href(uid, id), collection_properties(Some(folder.mtime))));
    if below > 0 {
        found.extend(members(uid, id, folder));
    }
}

/// `uploads/` lists the caller's own home only.
fn propfind(shared: &Shared, request: &DavRequest, place: &Place) -> Result<Response, DavError> {
    let wanted = parse_propfind(&request.body)?;
    let levels = levels(request.depth(Depth::One));
    let minimal = prefers_minimal(request);
    let uid = request.user.uid.as_str();
    let world = shared.world();
    let uploads = &world.uploads;
    let mut found = Found::new();
    match place {
        Place::Root => {
            found.push((root_href(), collection_properties(None)));
            if levels > 0 {
                home_and_below(&mut found, uploads, uid, levels - 1);
            }
        }
        Place::Home => home_and_below(&mut found, uploads, uid, levels),
        Place::Folder(id) => {
            let folder = uploads.folder(uid, id).ok_or_else(|| missing_folder(uid, id))?;
            folder_and_below(&mut found, uid, id, folder, levels);
        }
        Place::Item(id, name) => {
            let folder = uploads.folder(uid, id).ok_or_else(|| missing_folder(uid, id))?;
            let href = item_href(uid, id, name);
            let member = members(uid, id, folder)
                .into_iter()
                .find(|(member_href, _)| *member_href == href)
                .ok_or_else(|| not_found_path(&format!("uploads/{uid}/{id}/{name}")))?;
            found.push(member);
        }
    }
    let responses: Vec<String> =
        found.iter().map(|(href, set)| set.response(href, &wanted, minimal)).collect();
    Ok(multistatus(&responses, None))
}

// ---- MKCOL, PUT, GET, DELETE --------------------------------------------------

fn mkcol(shared: &Shared, request: &DavRequest, place: &Place) -> Result<Response, DavError> {
    if !request.body.is_empty() {
        let content_type = request.header("content-type").unwrap_or("");
        if !content_type.starts_with("application/xml") && !content_type.starts_with("text/xml") {
            return Err(DavError::unsupported_media_type(
                "The request body for the MKCOL request must have an xml Content-Type",
            ));
        }
    }
    let already = || DavError::MethodNotAllowed {
        message: "The resource you tried to create already exists".to_string(),
        allow: None,
    };
    let uid = request.user.uid.as_str();
    let now = shared.now();
    let mut world = shared.world();
    let uploads = &mut world.uploads;
    match place {
        Place::Root | Place::Home => Err(already()),
        Place::Folder(id) => {
            if uploads.folder(uid, id).is_some() {
                return Err(already());
            }
            let etag = uploads.next_etag();
            let folder = Folder { mtime: now, etag, chunks: BTreeMap::new() };
            uploads.folders.insert((uid.to_string(), id.clone()), folder);
            Ok((StatusCode::CREATED, [(http::header::CONTENT_LENGTH, "0")]).into_response())
        }
        Place::Item(id, name) => match uploads.folder(uid, id) {
            None => Err(DavError::conflict("Parent node does not exist")),
            Some(_) if exists(uploads, uid, place) => Err(already()),
            // UploadFolder::createDirectory: an upload holds files only.
            Some(_) => Err(DavError::Forbidden(format!(
                "Permission denied to create file (filename {name})"
            ))),
        },
    }
}

fn put(shared: &Shared, request: &DavRequest, place: &Place) -> Result<Response, DavError> {
    let Place::Item(id, name) = place else {
        return Err(DavError::conflict("PUT is not allowed on non-files."));
    };
    if request.header("content-range").is_some() {
        return Err(DavError::bad_request("Content-Range on PUT requests are forbidden."));
    }
    let uid = request.user.uid.as_str();
    let now = shared.now();
    let mut world = shared.world();
    let uploads = &mut world.uploads;
    let Some(folder) = uploads.folder(uid, id) else {
        return Err(DavError::conflict("Files cannot be created in non-existent collections"));
    };
    if name == FUTURE_FILE {
        return Err(DavError::forbidden("Permission denied to put into this file"));
    }
    let replaced = folder.chunks.get(name).map(|chunk| chunk.content.len() as u64);
    // QuotaPlugin reads the announced total of a chunked upload first.
    let announced = request.header("oc-total-length").and_then(|text| text.trim().parse().ok());
    let pending = uploads.pending_bytes(uid) - replaced.unwrap_or(0) + request.body.len() as u64;
    if announced.is_some_and(|total: u64| total > PENDING_BYTES_MAX) || pending > PENDING_BYTES_MAX
    {
        return Err(insufficient_storage(uid, id));
    }
    let etag = uploads.next_etag();
    let chunk = Chunk { content: request.body.clone(), mtime: now, etag: etag.clone() };
    let key = (uid.to_string(), id.clone());
    uploads.folders.get_mut(&key).expect("checked above").chunks.insert(name.clone(), chunk);
    uploads.touch(uid, id, now);
    drop(world);
    let mut headers = HeaderMap::new();
    insert(&mut headers, "content-length", "0");
    insert(&mut headers, "etag", &quoted(&etag));
    let status = if replaced.is_some() { StatusCode::NO_CONTENT } else { StatusCode::CREATED };
    Ok((status, headers).into_response())
}

/// sabre's `InsufficientStorage` (507), naming the fake's own bound.
fn insufficient_storage(uid: &str, id: &str) -> DavError {
    DavError::Condition {
        status: StatusCode::INSUFFICIENT_STORAGE,
        exception: "Sabre\\DAV\\Exception\\InsufficientStorage",
        message: format!(
            "Insufficient space in uploads/{uid}/{id}: the fake Nextcloud keeps at most \
             {} MiB of unfinished uploads per user, which this chunk (or the announced \
             OC-Total-Length) would pass; upload a smaller file, or finish or delete other \
             uploads first",
            PENDING_BYTES_MAX / (1024 * 1024)
        ),
        condition: String::new(),
    }
}

fn get(shared: &Shared, request: &DavRequest, place: &Place) -> Result<Response, DavError> {
    let uid = request.user.uid.as_str();
    let world = shared.world();
    if !exists(&world.uploads, uid, place) {
        return Err(not_found_path(&request.path));
    }
    drop(world);
    if let Place::Item(..) = place {
        // ChunkingV2Plugin::beforeGet, whatever the storage.
        return Err(DavError::MethodNotAllowed {
            message: "Reading intermediate uploads is not allowed".to_string(),
            allow: None,
        });
    }
    let body = if request.method.as_str() == "HEAD" { "" } else { FOLDER_GET_TEXT };
    Ok((StatusCode::OK, [(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")], body)
        .into_response())
}

fn delete(shared: &Shared, request: &DavRequest, place: &Place) -> Result<Response, DavError> {
    let uid = request.user.uid.as_str();
    let now = shared.now();
    let mut world = shared.world();
    let uploads = &mut world.uploads;
    match place {
        Place::Root => return Err(DavError::forbidden("Permission denied to delete node")),
        // UploadHome::delete removes the whole uploads folder.
        Place::Home => uploads.folders.retain(|(owner, _), _| owner != uid),
        // FutureFile::delete removes its folder, as DELETE of the folder does.
        Place::Folder(id) => remove_folder(uploads, uid, id)?,
        Place::Item(id, name) if name == FUTURE_FILE => remove_folder(uploads, uid, id)?,
        Place::Item(id, name) => {
            let key = (uid.to_string(), id.clone());
            let folder = uploads.folders.get_mut(&key).ok_or_else(|| missing_folder(uid, id))?;
            if folder.chunks.remove(name).is_none() {
                return Err(not_found_path(&format!("uploads/{uid}/{id}/{name}")));
            }
            uploads.touch(uid, id, now);
        }
    }
    drop(world);
    Ok((StatusCode::NO_CONTENT, [(http::header::CONTENT_LENGTH, "0")]).into_response())
}

fn remove_folder(uploads: &mut Uploads, uid: &str, id: &str) -> Result<(), DavError> {
    match uploads.folders.remove(&(uid.to_string(), id.to_string())) {
        Some(_) => Ok(()),
        None => Err(missing_folder(uid, id)),
    }
}

// ---- assembly -----------------------------------------------------------------

/// A `Destination` for an assembled file: a path in the caller's files
/// under `/remote.php/dav/files/{uid}/`. Outside `/remote.php/dav/` is
/// sabre's 403; anywhere else in it there is no such folder to write to
/// (409, as for a missing destination parent).
fn files_destination(header: &str, uid: &str) -> Result<String, DavError> {
    let uri = destination_uri(header)?;
    let base = format!("{}/", dav::DAV_ROOT);
    let Some(rest) = uri.strip_prefix(&base) else {
        return Err(DavError::Forbidden(format!(
            "Requested uri ({uri}) is out of base uri ({base})"
        )));
    };
    let clean = storage::parse_dav_path(rest)
        .map_err(|_| DavError::bad_request("Invalid destination path"))?;
    let mut segments = clean.splitn(3, '/');
    match (segments.next(), segments.next()) {
        (Some("files"), Some(owner)) if owner == uid => {
            Ok(segments.next().unwrap_or("").to_string())
        }
        _ => Err(DavError::conflict("The destination node is not found")),
    }
}

/// MOVE (or COPY) of `.file`: in sabre's order, the preconditions against
/// `.file`, the destination's checks (`getCopyAndMoveInfo`), the upload
/// itself (404), `OC-Total-Length` (`ChunkingPlugin::verifySize`, MOVE
/// only), then the write. A MOVE removes the upload folder once the file is
/// written; a refused one leaves it to be finished.
fn assemble(
    shared: &Shared,
    request: &DavRequest,
    id: &str,
    operation: Operation,
) -> Result<Response, DavError> {
    let uid = request.user.uid.as_str();
    let mtime = requested_mtime(request)?;
    let now = shared.now();
    let mut guard = shared.world();
    let world = &mut *guard;
    let current = world
        .uploads
        .folder(uid, id)
        .map(|folder| Current { etag: quoted(&folder.etag), mtime: folder.mtime });
    check_preconditions(request, current.as_ref())?;
    let Some(header) = request.header("destination") else {
        return Err(DavError::bad_request("The destination header was not supplied"));
    };
    let destination = files_destination(header, uid)?;
    let overwrite = overwrite(request)?;
    let viewer =
        world.users.get(uid).map(crate::world::User::viewer).ok_or_else(DavError::not_found)?;
    check_destination_parent(&world.storage, viewer, &destination)?;
    let existing =
        world.storage.resolve(viewer, &destination).ok().map(|entry| entry.node.is_folder());
    if existing.is_some() && !overwrite {
        return Err(storage_error(StorageError::DestinationExists, &destination));
    }
    let folder = world.uploads.folder(uid, id).ok_or_else(|| missing_folder(uid, id))?;
    let size = folder.size();
    if operation == Operation::Move
        && let Some(expected) = request.header("oc-total-length")
        && expected.trim() != size.to_string()
    {
        return Err(DavError::bad_request(format!(
            "Chunks on server do not sum up to {} but to {size} bytes",
            expected.trim()
        )));
    }
    if existing == Some(true) {
        return Err(storage_error(StorageError::NotAFile, &destination));
    }
    super::quota::check(world, viewer, &destination, size)?;
    let content = folder.assembled();
    let (fileid, created) = world
        .storage
        .put(viewer, &destination, content, now)
        .map_err(|error| storage_error(error, &destination))?;
    if let Some(mtime) = mtime {
        world
            .storage
            .set_mtime(viewer, &destination, mtime)
            .map_err(|error| storage_error(error, &destination))?;
    }
    let etag = match world.storage.resolve(viewer, &destination) {
        Ok(entry) => quoted(&world.storage.summary(viewer, &entry).etag),
        Err(error) => return Err(storage_error(error, &destination)),
    };
    if operation == Operation::Move {
        world.uploads.folders.remove(&(uid.to_string(), id.to_string()));
    }
    let fileid = padded_file_id(fileid, &world.server.instance_id);
    drop(guard);

    let mut headers = HeaderMap::new();
    insert(&mut headers, "content-length", "0");
    insert(&mut headers, "oc-fileid", &fileid);
    // CopyEtagHeaderPlugin::afterMove, as for any MOVE of a file.
    if operation == Operation::Move {
        insert(&mut headers, "etag", &etag);
        insert(&mut headers, "oc-etag", &etag);
    }
    Ok(file_written(headers, mtime.is_some(), created))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_names_sort_naturally() {
        let mut names = vec!["10", "2", "1", "02-b", "a", "", "000010", "9"];
        names.sort_by(|a, b| natural_order(a, b));
        assert_eq!(names, ["", "1", "2", "02-b", "9", "10", "000010", "a"]);
    }

    #[test]
    fn a_folder_assembles_its_chunks_in_that_order() {
        let chunk = |text: &'static str| Chunk {
            content: Bytes::from_static(text.as_bytes()),
            mtime: 0,
            etag: String::new(),
        };
        let mut chunks = BTreeMap::new();
        for (name, text) in [("10", "C"), ("2", "B"), ("1", "A")] {
            chunks.insert(name.to_string(), chunk(text));
        }
        let folder = Folder { mtime: 0, etag: String::new(), chunks };
        assert_eq!(folder.size(), 3);
        assert_eq!(folder.assembled(), b"ABC");
    }
}
