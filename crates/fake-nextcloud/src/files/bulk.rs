//! Bulk upload on `POST /remote.php/dav/bulk`, as the dav app's
//! BulkUploadPlugin and MultipartRequestParser serve it to the desktop
//! client: a `multipart/related` body whose parts each carry
//! `X-File-Path`, `X-File-MD5` (of the part's bytes), `Content-Length` and
//! optionally `X-OC-Mtime` (or the older `X-File-Mtime`).
//!
//! Parts are written in order through [`crate::storage::Storage::put`], so
//! a share's permissions, quota, versions, webhooks and the index see them
//! as ordinary PUTs. A part that cannot be written is reported in the JSON
//! answer (`error: true` with a message) and the rest go on; a body that
//! does not parse stops there with 400 and the JSON of what was written.

use super::{insert, padded_file_id, quota, transfer::sanitize_mtime};
use crate::Shared;
use crate::dav::{DavError, DavRequest};
use crate::storage;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use md5::{Digest, Md5};
use serde_json::{Map, Value, json};

pub async fn handle(shared: &Shared, request: DavRequest) -> Response {
    if request.method != http::Method::POST || !request.path.is_empty() {
        return super::not_found_path("bulk").into_response();
    }
    let boundary = match boundary(request.header("content-type")) {
        Ok(boundary) => boundary,
        Err(error) => return error.into_response(),
    };
    let mut parts = Parts { body: &request.body, at: 0, boundary };
    let mut written = Map::new();
    while !parts.at_last_boundary() {
        let part = match parts.next_part() {
            Ok(part) => part,
            Err(_) => return answer(StatusCode::BAD_REQUEST, written),
        };
        let (path, outcome) = write(shared, &request, &part);
        written.insert(path, outcome);
    }
    answer(StatusCode::OK, written)
}

fn answer(status: StatusCode, written: Map<String, Value>) -> Response {
    let mut headers = HeaderMap::new();
    insert(&mut headers, "content-type", "application/json; charset=utf-8");
    (status, headers, Value::Object(written).to_string()).into_response()
}

/// `parseBoundaryFromHeaders`: `multipart/related; boundary=…`, quotes
/// allowed around the value.
fn boundary(content_type: Option<&str>) -> Result<String, DavError> {
    let Some(content_type) = content_type else {
        return Err(DavError::bad_request("Content-Type can not be null"));
    };
    let parse_error =
        || DavError::bad_request("Error while parsing boundary in Content-Type header.");
    let (mime, parameter) = content_type.split_once(';').ok_or_else(parse_error)?;
    let (key, value) = parameter.split_once('=').ok_or_else(parse_error)?;
    if mime.trim() != "multipart/related" {
        return Err(DavError::bad_request("Content-Type must be multipart/related"));
    }
    if key.trim() != "boundary" {
        return Err(DavError::bad_request("Boundary is invalid"));
    }
    let value = value.trim();
    let value = value.strip_prefix('"').and_then(|inner| inner.strip_suffix('"')).unwrap_or(value);
    Ok(value.to_string())
}

/// One part: its headers (names lower-cased) and its bytes.
struct Part {
    headers: Vec<(String, String)>,
    content: Vec<u8>,
}

impl Part {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }
}

/// A cursor over the body, reading parts the way MultipartRequestParser
/// does: a boundary line, header lines up to an empty one, exactly
/// `Content-Length` bytes whose MD5 must match, then CRLF.
struct Parts<'b> {
    body: &'b [u8],
    at: usize,
    boundary: String,
}

/// Why a body stopped parsing (the answer is 400 either way).
#[derive(Debug, PartialEq, Eq)]
enum ParseError {
    NoBoundary,
    BadHeader,
    NoLength,
    NoMd5,
    WrongMd5,
    Truncated,
}

impl Parts<'_> {
    fn rest(&self) -> &[u8] {
        &self.body[self.at.min(self.body.len())..]
    }

    fn at_last_boundary(&self) -> bool {
        self.rest().starts_with(format!("--{}--\r\n", self.boundary).as_bytes())
    }

    fn next_part(&mut self) -> Result<Part, ParseError> {
        let opening = format!("--{}\r\n", self.boundary);
        if !self.rest().starts_with(opening.as_bytes()) {
            return Err(ParseError::NoBoundary);
        }
        self.at += opening.len();
        let mut headers = Vec::new();
        loop {
            let rest = self.rest();
            let end =
                rest.windows(2).position(|pair| pair == b"\r\n").ok_or(ParseError::BadHeader)?;
            let line = rest[..end].to_vec();
            self.at += end + 2;
            if line.is_empty() {
                break;
            }
            let line = std::str::from_utf8(&line).map_err(|_| ParseError::BadHeader)?;
            let (key, value) = line.split_once(':').ok_or(ParseError::BadHeader)?;
            headers.push((key.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
        let part = Part { headers, content: Vec::new() };
        let length: usize = part
            .header("content-length")
            .ok_or(ParseError::NoLength)?
            .parse()
            .map_err(|_| ParseError::NoLength)?;
        let md5 = part.header("x-file-md5").ok_or(ParseError::NoMd5)?.to_ascii_lowercase();
        let rest = self.rest();
        if rest.len() < length {
            return Err(ParseError::Truncated);
        }
        let content = &rest[..length];
        if hex(&Md5::digest(content)) != md5 {
            return Err(ParseError::WrongMd5);
        }
        let content = content.to_vec();
        self.at += length;
        if length != 0 && self.at >= self.body.len() {
            return Err(ParseError::Truncated);
        }
        // The CRLF that ends the part's bytes.
        self.at += 2;
        Ok(Part { content, ..part })
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// One part written as the caller: `(X-File-Path, what the answer says)`.
fn write(shared: &Shared, request: &DavRequest, part: &Part) -> (String, Value) {
    let named = part.header("x-file-path").unwrap_or_default().to_string();
    let outcome = match written(shared, request, part, &named) {
        Ok(outcome) => outcome,
        Err(message) => json!({ "error": true, "message": message }),
    };
    (named, outcome)
}

/// The answer entry of a part written at `named`, or why it was not:
/// `Folder::newFile` throws one "Could not create path" for every refusal
/// of the storage (a missing folder, a read-only share, no space left).
fn written(
    shared: &Shared,
    request: &DavRequest,
    part: &Part,
    named: &str,
) -> Result<Value, String> {
    let uid = request.user.uid.as_str();
    let mtime = match part.header("x-file-mtime").or(part.header("x-oc-mtime")) {
        None => None,
        Some(text) => Some(sanitize_mtime(text).map_err(str::to_string)?),
    };
    let could_not =
        || format!("Could not create path \"/{uid}/files/{}\"", named.trim_start_matches('/'));
    let path = storage::clean_path(named).map_err(|_| could_not())?;
    let now = shared.now();
    let mut guard = shared.world();
    let world = &mut *guard;
    let viewer = world.users.get(uid).map(crate::world::User::viewer).ok_or_else(could_not)?;
    quota::check(world, viewer, &path, part.content.len() as u64).map_err(|_| could_not())?;
    let (fileid, _) =
        world.storage.put(viewer, &path, part.content.clone(), now).map_err(|_| could_not())?;
    if let Some(mtime) = mtime {
        world.storage.set_mtime(viewer, &path, mtime).map_err(|_| could_not())?;
    }
    let entry = world.storage.resolve(viewer, &path).map_err(|_| could_not())?;
    Ok(json!({
        "error": false,
        "etag": world.storage.summary(viewer, &entry).etag,
        "fileid": padded_file_id(fileid, &world.server.instance_id),
        "permissions": entry.dav_permissions(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(parts: &[(&str, &str)], boundary: &str) -> Vec<u8> {
        let mut body = String::new();
        for (path, content) in parts {
            let md5 = hex(&Md5::digest(content.as_bytes()));
            body.push_str(&format!(
                "--{boundary}\r\nX-File-Path: {path}\r\nX-File-MD5: {md5}\r\nContent-Length: {}\r\n\r\n{content}\r\n",
                content.len()
            ));
        }
        body.push_str(&format!("--{boundary}--\r\n"));
        body.into_bytes()
    }

    #[test]
    fn parts_are_read_in_order_with_their_headers() {
        let bytes = body(&[("A.txt", "AAAAA"), ("dir/B.txt", "")], "b_1");
        let mut parts = Parts { body: &bytes, at: 0, boundary: "b_1".into() };
        let first = parts.next_part().unwrap();
        assert_eq!(
            (first.header("x-file-path"), first.content.as_slice()),
            (Some("A.txt"), &b"AAAAA"[..])
        );
        let second = parts.next_part().unwrap();
        assert_eq!((second.header("x-file-path"), second.content.len()), (Some("dir/B.txt"), 0));
        assert!(parts.at_last_boundary());
    }

    #[test]
    fn a_wrong_digest_or_a_missing_header_stops_the_parse() {
        let bytes = body(&[("A.txt", "AAAAA")], "b");
        let tampered = String::from_utf8(bytes.clone()).unwrap().replace("AAAAA\r\n", "AAAAB\r\n");
        let mut parts = Parts { body: tampered.as_bytes(), at: 0, boundary: "b".into() };
        assert_eq!(parts.next_part().err(), Some(ParseError::WrongMd5));

        let no_length = String::from_utf8(bytes).unwrap().replace("Content-Length: 5\r\n", "");
        let mut parts = Parts { body: no_length.as_bytes(), at: 0, boundary: "b".into() };
        assert_eq!(parts.next_part().err(), Some(ParseError::NoLength));

        let mut parts = Parts { body: b"--other\r\n", at: 0, boundary: "b".into() };
        assert_eq!(parts.next_part().err(), Some(ParseError::NoBoundary));
    }

    #[test]
    fn the_boundary_comes_from_a_multipart_related_content_type() {
        assert_eq!(boundary(Some("multipart/related; boundary=\"x y\"")).unwrap(), "x y");
        assert_eq!(boundary(Some("multipart/related; boundary=abc")).unwrap(), "abc");
        assert!(boundary(Some("multipart/form-data; boundary=abc")).is_err());
        assert!(boundary(Some("multipart/related")).is_err());
        assert!(boundary(None).is_err());
    }
}
