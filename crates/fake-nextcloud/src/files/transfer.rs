//! GET, HEAD and PUT: file content in and out, with sabre's conditional
//! request handling (If-Match, If-None-Match, If-(Un)Modified-Since), byte
//! ranges, and the headers Nextcloud adds (OC-FileId, OC-ETag,
//! X-OC-MTime, Content-Disposition).

use super::{Target, insert, padded_file_id, precondition_failed, quoted, storage_error};
use crate::Shared;
use crate::dav::{DavError, DavRequest};
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderMap, StatusCode};

/// What DummyGetResponsePlugin answers to a GET on a folder.
pub const FOLDER_GET_TEXT: &str = "This is the WebDAV interface. It can only be accessed by WebDAV clients such as the Nextcloud desktop sync client.";

/// The refusal of a download through a view-only share.
pub(super) const VIEW_ONLY: &str =
    "Access to this shared resource has been denied because its download permission is disabled.";

/// The state of an existing resource that preconditions compare against.
#[derive(Debug, Clone)]
pub(super) struct Current {
    /// Quoted.
    pub etag: String,
    pub mtime: i64,
}

/// A file as read under the lock, so the response is built without it.
struct Snapshot {
    content: Bytes,
    mime: String,
    name: String,
    current: Current,
}

pub(super) fn get(
    shared: &Shared,
    request: &DavRequest,
    target: &Target,
    head_only: bool,
) -> Result<Response, DavError> {
    let snapshot = {
        let world = shared.world();
        let viewer = target.viewer(&world.users)?;
        let entry = target.entry(&world.storage, viewer)?;
        if entry.share.is_some_and(|share| !share.allows_download())
            && !crate::ocs::app_config::Settings::of(&world).view_without_download()
        {
            return Err(DavError::Forbidden(VIEW_ONLY.to_string()));
        }
        let summary = world.storage.summary(viewer, &entry);
        let current = Current { etag: quoted(&summary.etag), mtime: summary.mtime };
        match entry.node.content() {
            None if super::zip::wanted(request.header("accept")) => {
                let archive =
                    super::zip::archive(&world.storage, viewer, &entry).ok_or_else(|| {
                        DavError::Forbidden("The folder could not be archived".into())
                    })?;
                let mut headers = HeaderMap::new();
                insert(&mut headers, "content-type", "application/zip");
                let name = super::zip::file_name(&entry);
                insert(&mut headers, "content-disposition", &attachment_disposition(&name));
                insert(&mut headers, "content-length", &archive.len().to_string());
                let body = if head_only { Body::empty() } else { Body::from(archive) };
                return Ok((StatusCode::OK, headers, body).into_response());
            }
            None => {
                check_preconditions(request, Some(&current))?;
                let body = if head_only { "" } else { FOLDER_GET_TEXT };
                return Ok((
                    StatusCode::OK,
                    [(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                    body,
                )
                    .into_response());
            }
            Some(content) => Snapshot {
                content: content.clone(),
                mime: entry.node.mime().to_string(),
                name: crate::storage::parent_and_name(&entry.path).1.to_string(),
                current,
            },
        }
    };
    check_preconditions(request, Some(&snapshot.current))?;
    let size = snapshot.content.len() as u64;
    let mut headers = HeaderMap::new();
    insert(&mut headers, "content-type", secure_mime(&snapshot.mime));
    insert(&mut headers, "last-modified", &crate::clock::http_date(snapshot.current.mtime));
    insert(&mut headers, "etag", &snapshot.current.etag);
    insert(&mut headers, "oc-etag", &snapshot.current.etag);
    insert(&mut headers, "content-disposition", &attachment_disposition(&snapshot.name));
    insert(&mut headers, "x-accel-buffering", "no");

    let range = requested_range(request, &snapshot.current, size);
    let (status, body) = match range {
        RangeRequest::Whole => (StatusCode::OK, snapshot.content),
        RangeRequest::Unsatisfiable(message) => {
            return Err(DavError::RangeNotSatisfiable(message));
        }
        RangeRequest::Part { start, end } => {
            insert(&mut headers, "content-range", &format!("bytes {start}-{end}/{size}"));
            (StatusCode::PARTIAL_CONTENT, snapshot.content.slice(start as usize..=end as usize))
        }
    };
    insert(&mut headers, "content-length", &body.len().to_string());
    let body = if head_only { Body::empty() } else { Body::from(body) };
    Ok((status, headers, body).into_response())
}

enum RangeRequest {
    Whole,
    Part { start: u64, end: u64 },
    Unsatisfiable(String),
}

/// sabre's `getHTTPRange` and its use in `CorePlugin::httpGet`: one
/// `bytes=a-b`, `a-` or `-n` range; anything else (several ranges, other
/// units) is ignored and the whole file sent. `If-Range` that does not match
/// also sends the whole file.
fn requested_range(request: &DavRequest, current: &Current, size: u64) -> RangeRequest {
    let Some(range) = request.header("range") else { return RangeRequest::Whole };
    let Some((first, last)) = parse_range(range) else { return RangeRequest::Whole };
    // No ranges on an empty file: sabre needs a size to compute them.
    if size == 0 {
        return RangeRequest::Whole;
    }
    if let Some(if_range) = request.header("if-range") {
        let matches = match httpdate::parse_http_date(if_range) {
            Ok(date) => {
                let date_seconds = date
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|duration| duration.as_secs() as i64)
                    .unwrap_or(0);
                current.mtime <= date_seconds
            }
            Err(_) => if_range.trim() == current.etag,
        };
        if !matches {
            return RangeRequest::Whole;
        }
    }
    match (first, last) {
        (Some(start), last) => {
            if start >= size {
                return RangeRequest::Unsatisfiable(format!(
                    "The start offset ({start}) exceeded the size of the entity ({size})"
                ));
            }
            let end = last.unwrap_or(size - 1);
            if end < start {
                return RangeRequest::Unsatisfiable(format!(
                    "The end offset ({end}) is lower than the start offset ({start})"
                ));
            }
            RangeRequest::Part { start, end: end.min(size - 1) }
        }
        (None, Some(suffix)) => {
            if suffix == 0 {
                return RangeRequest::Unsatisfiable(
                    "A suffix range of zero bytes is empty".to_string(),
                );
            }
            RangeRequest::Part { start: size.saturating_sub(suffix), end: size - 1 }
        }
        (None, None) => RangeRequest::Whole,
    }
}

/// `bytes=([0-9]*)-([0-9]*)`, case-insensitive, both sides optional but not
/// both empty.
fn parse_range(header: &str) -> Option<(Option<u64>, Option<u64>)> {
    let header = header.trim();
    let prefix = header.get(..6)?;
    if !prefix.eq_ignore_ascii_case("bytes=") {
        return None;
    }
    let (first, last) = header[6..].split_once('-')?;
    let number = |text: &str| -> Option<Option<u64>> {
        if text.is_empty() {
            Some(None)
        } else if text.bytes().all(|byte| byte.is_ascii_digit()) {
            text.parse().ok().map(Some)
        } else {
            None
        }
    };
    let (first, last) = (number(first)?, number(last)?);
    if first.is_none() && last.is_none() {
        return None;
    }
    Some((first, last))
}

/// `IMimeTypeDetector::getSecureMimeType`: types a browser would execute
/// are served as text/plain.
fn secure_mime(mime: &str) -> &str {
    match mime {
        "text/html"
        | "application/xhtml+xml"
        | "image/svg+xml"
        | "text/javascript"
        | "application/javascript" => "text/plain",
        other => other,
    }
}

/// The `Content-Disposition` of a download: sabre's `FilesPlugin::httpGet`
/// adds it to every GET of a DAV file (files, cards and calendar objects
/// alike), in the form `OC_Response::setContentDispositionHeader` writes.
pub(crate) fn attachment_disposition(name: &str) -> String {
    let encoded = raw_url_encode(name);
    format!("attachment; filename*=UTF-8''{encoded}; filename=\"{encoded}\"")
}

/// PHP's `rawurlencode`: everything but `A-Za-z0-9-_.~` as `%XX`.
fn raw_url_encode(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// sabre's `Server::checkPreconditions`, for every method. `current` is
/// `None` when nothing exists at the path.
pub(super) fn check_preconditions(
    request: &DavRequest,
    current: Option<&Current>,
) -> Result<(), DavError> {
    let is_read = matches!(request.method.as_str(), "GET" | "HEAD");
    if let Some(if_match) = request.header("if-match") {
        let Some(current) = current else {
            return Err(precondition_failed(
                "An If-Match header was specified and the resource did not exist",
            ));
        };
        if !etag_list_matches(if_match, &current.etag) {
            return Err(precondition_failed(
                "An If-Match header was specified, but none of the specified ETags matched.",
            ));
        }
    }
    match (request.header("if-none-match"), current) {
        (Some(if_none_match), Some(current)) if etag_list_matches(if_none_match, &current.etag) => {
            if is_read {
                return Err(not_modified(current));
            }
            return Err(precondition_failed(
                "An If-None-Match header was specified, but the ETag matched (or * was specified).",
            ));
        }
        (Some(_), _) => {}
        // If-Modified-Since counts only without If-None-Match (RFC 7232).
        (None, Some(current)) => {
            if is_read
                && let Some(since) = request.header("if-modified-since").and_then(http_date_seconds)
                && current.mtime <= since
            {
                return Err(not_modified(current));
            }
        }
        (None, None) => {}
    }
    if let Some(current) = current
        && let Some(since) = request.header("if-unmodified-since").and_then(http_date_seconds)
        && current.mtime > since
    {
        return Err(precondition_failed("Resource was changed since If-Unmodified-Since date."));
    }
    Ok(())
}

fn etag_list_matches(header: &str, etag: &str) -> bool {
    header.split(',').map(str::trim).any(|candidate| candidate == "*" || candidate == etag)
}

fn http_date_seconds(text: &str) -> Option<i64> {
    let date = httpdate::parse_http_date(text).ok()?;
    date.duration_since(std::time::UNIX_EPOCH).ok().map(|duration| duration.as_secs() as i64)
}

fn not_modified(current: &Current) -> DavError {
    DavError::NotModified { etag: current.etag.clone() }
}

pub(super) fn put(
    shared: &Shared,
    request: &DavRequest,
    target: &Target,
) -> Result<Response, DavError> {
    if request.header("content-range").is_some() {
        return Err(DavError::bad_request("Content-Range on PUT requests are forbidden."));
    }
    let requested_mtime = requested_mtime(request)?;
    let now = shared.now();
    let mut guard = shared.world();
    let world = &mut *guard;
    let viewer = target.viewer(&world.users)?;
    let existing = world.storage.resolve(viewer, &target.path).ok().map(|entry| {
        let summary = world.storage.summary(viewer, &entry);
        (entry.node.is_folder(), Current { etag: quoted(&summary.etag), mtime: summary.mtime })
    });
    check_preconditions(request, existing.as_ref().map(|(_, current)| current))?;
    if let Some((true, _)) = existing {
        return Err(DavError::conflict("PUT is not allowed on non-files."));
    }
    super::quota::check(world, viewer, &target.path, request.body.len() as u64)?;
    let (fileid, created) = world
        .storage
        .put(viewer, &target.path, request.body.to_vec(), now)
        .map_err(|error| storage_error(error, &target.path))?;
    if let Some(mtime) = requested_mtime
        && let Err(error) = world.storage.set_mtime(viewer, &target.path, mtime)
    {
        return Err(storage_error(error, &target.path));
    }
    let etag = match world.storage.resolve(viewer, &target.path) {
        Ok(entry) => quoted(&world.storage.summary(viewer, &entry).etag),
        Err(error) => return Err(storage_error(error, &target.path)),
    };
    let fileid = padded_file_id(fileid, &world.server.instance_id);
    drop(guard);

    let mut headers = HeaderMap::new();
    insert(&mut headers, "content-length", "0");
    insert(&mut headers, "etag", &etag);
    insert(&mut headers, "oc-etag", &etag);
    insert(&mut headers, "oc-fileid", &fileid);
    Ok(file_written(headers, requested_mtime.is_some(), created))
}

/// The answer to a write that stored a file (a PUT, the MOVE that
/// assembles a chunked upload): `headers`, `X-OC-MTime: accepted` when the
/// client set the mtime, 201 for a new file and 204 for an overwrite.
pub(super) fn file_written(mut headers: HeaderMap, mtime_set: bool, created: bool) -> Response {
    if mtime_set {
        insert(&mut headers, "x-oc-mtime", "accepted");
    }
    let status = if created { StatusCode::CREATED } else { StatusCode::NO_CONTENT };
    (status, headers).into_response()
}

/// `X-OC-MTime` as MtimeSanitizer reads it: a number (Unix seconds),
/// nothing else (400). PUT and the MOVE that assembles a chunked upload
/// both honour it.
pub(super) fn requested_mtime(request: &DavRequest) -> Result<Option<i64>, DavError> {
    let Some(text) = request.header("x-oc-mtime") else { return Ok(None) };
    sanitize_mtime(text).map(Some).map_err(DavError::bad_request)
}

/// MtimeSanitizer: Unix seconds as a number, or the message it refuses
/// anything else with.
pub(super) fn sanitize_mtime(text: &str) -> Result<i64, &'static str> {
    match text.trim().parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && !text.trim().starts_with("0x") => Ok(seconds as i64),
        _ => Err("X-OC-MTime header must be an integer (unix timestamp)."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_like_sabre() {
        assert_eq!(parse_range("bytes=0-9"), Some((Some(0), Some(9))));
        assert_eq!(parse_range("BYTES=5-"), Some((Some(5), None)));
        assert_eq!(parse_range("bytes=-3"), Some((None, Some(3))));
        assert_eq!(parse_range("bytes=-"), None);
        assert_eq!(parse_range("bytes=0-1,3-4"), None);
        assert_eq!(parse_range("items=0-1"), None);
    }

    #[test]
    fn raw_url_encode_matches_php() {
        assert_eq!(raw_url_encode("a b+é.md"), "a%20b%2B%C3%A9.md");
    }
}
