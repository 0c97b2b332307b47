//! File versions over WebDAV, `/remote.php/dav/versions/{uid}/`, as
//! `files_versions`' sabre nodes answer: `versions/{fileid}/` lists a
//! file's versions, the current one first (named by its mtime, as
//! `LegacyVersionsBackend` lists it since Nextcloud 28) and then the kept
//! ones, newest first; GET reads one; MOVE of one to `restore/{anything}`
//! makes it current (201).
//!
//! A file id the caller cannot see is 404; another user's home is refused
//! like the trash bin's (403, or 404 for nobody).

use super::properties::Selection;
use super::trashbin::{
    Property, collection_properties, destination_below_dav, multistatus, own_home, response,
    selection,
};
use super::{insert, storage_error};
use crate::Shared;
use crate::dav::{self, DavError, DavRequest, Depth};
use crate::storage::{self, FileId, Viewer};
use crate::xml::{self, DAV, NC};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};

/// One version as listed: the current content or a kept one.
struct Listed {
    revision: i64,
    content: bytes::Bytes,
    mime: String,
    author: Option<String>,
}

pub async fn handle(shared: &Shared, request: DavRequest) -> Response {
    route(shared, &request).into_response()
}

fn route(shared: &Shared, request: &DavRequest) -> Result<Response, DavError> {
    let clean = storage::parse_dav_path(&request.path)
        .map_err(|_| DavError::bad_request("Invalid path"))?;
    let parts: Vec<&str> = clean.split('/').collect();
    let uid = own_home(shared, request, parts.first().copied().unwrap_or(""))?;
    let base = format!("{}/versions/{}/", dav::DAV_ROOT, dav::encode_segment(uid));
    let not_found = || DavError::NotFound(format!("File with name {clean} could not be located"));
    let method = request.method.as_str();
    match (&parts[1..], method) {
        ([] | ["versions"] | ["restore"], "PROPFIND") => {
            let selection = selection(request)?;
            let minimal = crate::caldav::webdav::prefers_minimal(request);
            let here = match parts.get(1) {
                Some(name) => format!("{base}{name}/"),
                None => base.clone(),
            };
            let mut body = response(&here, &collection_properties(), &selection, minimal);
            if parts.len() == 1 && request.depth(Depth::One) != Depth::Zero {
                for name in ["versions/", "restore/"] {
                    let href = format!("{base}{name}");
                    body.push_str(&response(&href, &collection_properties(), &selection, minimal));
                }
            }
            Ok(multistatus(&body))
        }
        (["versions", fileid], "PROPFIND") => {
            let id = fileid.parse::<FileId>().map_err(|_| not_found())?;
            let selection = selection(request)?;
            let minimal = crate::caldav::webdav::prefers_minimal(request);
            let world = shared.world();
            let viewer = viewer(&world, uid)?;
            let listed = listed(&world.storage, viewer, id).ok_or_else(not_found)?;
            let here = format!("{base}versions/{id}/");
            let mut body = response(&here, &collection_properties(), &selection, minimal);
            if request.depth(Depth::One) != Depth::Zero {
                for version in &listed {
                    body.push_str(&version_response(&here, version, &selection, minimal));
                }
            }
            Ok(multistatus(&body))
        }
        (["versions", fileid, revision], "PROPFIND" | "GET" | "HEAD") => {
            let id = fileid.parse::<FileId>().map_err(|_| not_found())?;
            let world = shared.world();
            let viewer = viewer(&world, uid)?;
            let listed = listed(&world.storage, viewer, id).ok_or_else(not_found)?;
            let version = listed
                .iter()
                .find(|version| version.revision.to_string() == *revision)
                .ok_or_else(not_found)?;
            if method == "PROPFIND" {
                let selection = selection(request)?;
                let minimal = crate::caldav::webdav::prefers_minimal(request);
                let here = format!("{base}versions/{id}/");
                return Ok(multistatus(&version_response(&here, version, &selection, minimal)));
            }
            let name = world
                .storage
                .path_of(viewer, id)
                .map(|path| storage::parent_and_name(&path).1.to_string())
                .unwrap_or_default();
            let mut headers = HeaderMap::new();
            insert(&mut headers, "content-type", &version.mime);
            insert(&mut headers, "content-length", &version.content.len().to_string());
            insert(&mut headers, "last-modified", &crate::clock::http_date(version.revision));
            insert(&mut headers, "etag", &format!("\"{}\"", version.revision));
            let encoded = dav::encode_segment(&name);
            insert(
                &mut headers,
                "content-disposition",
                &format!("attachment; filename=\"{encoded}\"; filename*=UTF-8''{encoded}"),
            );
            let body = if method == "HEAD" { bytes::Bytes::new() } else { version.content.clone() };
            Ok((StatusCode::OK, headers, body).into_response())
        }
        (["versions", fileid, revision], "MOVE") => {
            let id = fileid.parse::<FileId>().map_err(|_| not_found())?;
            let revision = revision.parse::<i64>().map_err(|_| not_found())?;
            let header = request
                .header("destination")
                .ok_or_else(|| DavError::bad_request("The destination header was not supplied"))?;
            let destination = destination_below_dav(header)?;
            if !destination.starts_with(&format!("versions/{uid}/restore/")) {
                return Err(DavError::forbidden("Versions can only be moved to restore/"));
            }
            let now = shared.now();
            let mut guard = shared.world();
            let world = &mut *guard;
            let viewer = world
                .users
                .get(uid)
                .map(crate::world::User::viewer)
                .ok_or_else(DavError::not_found)?;
            world
                .storage
                .rollback(viewer, id, revision, now)
                .map_err(|error| storage_error(error, &clean))?;
            Ok((StatusCode::CREATED, [(http::header::CONTENT_LENGTH, "0")]).into_response())
        }
        (["versions", _, _], "PUT" | "DELETE" | "PROPPATCH" | "COPY" | "MKCOL") => {
            Err(DavError::forbidden("Versions cannot be changed this way"))
        }
        (
            [] | ["versions"] | ["restore"] | ["versions", _],
            "PUT" | "DELETE" | "MKCOL" | "MOVE",
        ) => Err(DavError::forbidden("Not allowed in the versions collection")),
        _ => Err(not_found()),
    }
}

fn viewer<'w>(world: &'w crate::world::World, uid: &str) -> Result<Viewer<'w>, DavError> {
    world.users.get(uid).map(crate::world::User::viewer).ok_or_else(DavError::not_found)
}

/// The versions of the file `id` the viewer sees: the current content
/// first, then the kept ones newest first; `None` when the viewer sees no
/// file with that id.
fn listed(storage: &storage::Storage, viewer: Viewer<'_>, id: FileId) -> Option<Vec<Listed>> {
    let path = storage.path_of(viewer, id)?;
    let entry = storage.resolve(viewer, &path).ok()?;
    let content = entry.node.content()?.clone();
    let current = Listed {
        revision: entry.node.mtime,
        content,
        mime: entry.node.mime().to_string(),
        author: storage.author(id).map(str::to_string),
    };
    let mut listed = vec![current];
    for version in storage.versions(id) {
        if version.timestamp == entry.node.mtime {
            continue;
        }
        listed.push(Listed {
            revision: version.timestamp,
            content: version.content.clone(),
            mime: version.mime.clone(),
            author: version.author.clone(),
        });
    }
    Some(listed)
}

fn version_response(
    collection_href: &str,
    version: &Listed,
    selection: &Selection,
    minimal: bool,
) -> String {
    let text = |value: String| Some(xml::escape(&value));
    let properties: Vec<Property> = vec![
        (DAV, "resourcetype", Some(String::new())),
        (DAV, "getlastmodified", text(crate::clock::http_date(version.revision))),
        (DAV, "getcontentlength", text(version.content.len().to_string())),
        (DAV, "getcontenttype", text(version.mime.clone())),
        (DAV, "getetag", text(version.revision.to_string())),
        (NC, "version-label", None),
        (NC, "version-author", version.author.as_ref().map(|author| xml::escape(author))),
        (NC, "has-preview", text("false".to_string())),
    ];
    let href = format!("{collection_href}{}", version.revision);
    response(&href, &properties, selection, minimal)
}
