//! WebDAV and SEARCH bodies we send, and the multistatus answers we read.

use xml_tree::{DAV, Element, NC, OC};

/// The properties every file listing asks for.
pub const FILE_PROPERTIES: &str = concat!(
    "<d:resourcetype/><d:getlastmodified/><d:getcontentlength/><d:getcontenttype/>",
    "<d:getetag/><oc:fileid/><oc:size/><oc:permissions/><oc:owner-id/>"
);

pub fn propfind_body() -> Vec<u8> {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns"><d:prop>{FILE_PROPERTIES}</d:prop></d:propfind>"#
    )
    .into_bytes()
}

/// One `d:response` with its successful properties.
#[derive(Debug, Clone)]
pub struct DavResponse {
    /// The href, percent-decoded.
    pub href: String,
    pub properties: Vec<Element>,
}

impl DavResponse {
    pub fn property(&self, ns: &str, local: &str) -> Option<&Element> {
        self.properties.iter().find(|property| property.is(ns, local))
    }

    pub fn text(&self, ns: &str, local: &str) -> Option<String> {
        self.property(ns, local).map(|property| property.text().trim().to_string())
    }
}

/// Reads a 207 body; properties from non-200 propstats are dropped.
pub fn parse_multistatus(body: &[u8]) -> Result<Vec<DavResponse>, xml_tree::XmlError> {
    let root = xml_tree::parse_limited(body, super::RESPONSE_LENGTH_MAX)?;
    let mut responses = Vec::new();
    for response in root.children_named(DAV, "response") {
        let href = response.child(DAV, "href").map(|href| href.text()).unwrap_or_default();
        let href =
            percent_encoding::percent_decode_str(href.trim()).decode_utf8_lossy().into_owned();
        let mut properties = Vec::new();
        for propstat in response.children_named(DAV, "propstat") {
            let ok = propstat
                .child(DAV, "status")
                .is_some_and(|status| status.text().split_whitespace().nth(1) == Some("200"));
            if !ok {
                continue;
            }
            if let Some(prop) = propstat.child(DAV, "prop") {
                properties.extend(prop.children().cloned());
            }
        }
        responses.push(DavResponse { href, properties });
    }
    Ok(responses)
}

/// A file or folder as the tools report it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FileInfo {
    pub fileid: u64,
    /// Path in the user's files, no leading slash; folders end without slash.
    pub path: String,
    #[serde(rename = "type")]
    pub kind: FileKind,
    pub size: u64,
    /// RFC 3339.
    pub mtime: String,
    #[serde(skip)]
    pub mtime_unix: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime: Option<String>,
    /// Nextcloud's permission letters (R share, G read, W write, D delete ...).
    pub permissions: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    #[serde(skip)]
    pub etag: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    File,
    Folder,
}

/// Converts a response under `/remote.php/dav/files/{uid}/` to a [`FileInfo`].
pub fn file_info(response: &DavResponse, uid: &str) -> Option<FileInfo> {
    let prefix = format!("/remote.php/dav/files/{uid}/");
    let start = response.href.find(&prefix)? + prefix.len();
    let path = response.href[start..].trim_end_matches('/').to_string();
    let is_folder = response
        .property(DAV, "resourcetype")
        .is_some_and(|resource_type| resource_type.child(DAV, "collection").is_some());
    let fileid = response.text(OC, "fileid")?.parse().ok()?;
    let size = response
        .text(OC, "size")
        .or_else(|| response.text(DAV, "getcontentlength"))
        .and_then(|size| size.parse().ok())
        .unwrap_or(0);
    let mtime_unix = response
        .text(DAV, "getlastmodified")
        .and_then(|date| chrono::DateTime::parse_from_rfc2822(&date).ok())
        .map(|date| date.timestamp())
        .unwrap_or(0);
    let _ = NC;
    Some(FileInfo {
        fileid,
        path,
        kind: if is_folder { FileKind::Folder } else { FileKind::File },
        size,
        mtime: chrono::DateTime::from_timestamp(mtime_unix, 0)
            .unwrap_or_default()
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string(),
        mtime_unix,
        mime: if is_folder { None } else { response.text(DAV, "getcontenttype") },
        permissions: response.text(OC, "permissions").unwrap_or_default(),
        owner: response.text(OC, "owner-id"),
        etag: response.text(DAV, "getetag"),
    })
}
