//! Helpers shared by the WebDAV, SEARCH and no-leak tests: read a
//! multistatus answer into plain data, send raw requests that an HTTP client
//! would normalise, and build SEARCH bodies.

#![allow(dead_code)]

use fake_nextcloud::xml::{self, DAV, Element};
use std::collections::BTreeMap;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// One `d:response` of a multistatus: its href and, per property
/// (`"{ns}local"`), the status code and the property's XML content.
#[derive(Debug, Clone, PartialEq)]
pub struct DavResponse {
    pub href: String,
    pub properties: BTreeMap<String, (u16, String)>,
}

impl DavResponse {
    /// The text of a property found with 200.
    pub fn value(&self, name: &str) -> Option<&str> {
        match self.properties.get(name) {
            Some((200, value)) => Some(value.as_str()),
            _ => None,
        }
    }

    pub fn status_of(&self, name: &str) -> Option<u16> {
        self.properties.get(name).map(|(status, _)| *status)
    }
}

/// Parses a 207 body; panics (the test fails) on anything else.
pub fn multistatus(body: &str) -> Vec<DavResponse> {
    let root = xml::parse(body.as_bytes()).expect("multistatus parses");
    assert!(root.is(DAV, "multistatus"), "root is d:multistatus: {body}");
    root.children_named(DAV, "response").map(response).collect()
}

fn response(element: &Element) -> DavResponse {
    let href = element.child(DAV, "href").expect("a response has an href").text();
    let mut properties = BTreeMap::new();
    for propstat in element.children_named(DAV, "propstat") {
        let status_line = propstat.child(DAV, "status").expect("propstat status").text();
        let status: u16 =
            status_line.split(' ').nth(1).expect("HTTP/1.1 NNN").parse().expect("status code");
        for prop in propstat.children_named(DAV, "prop") {
            for property in prop.children() {
                let key = format!("{{{}}}{}", property.ns, property.local);
                let value = if property.children().next().is_some() {
                    property.inner_xml()
                } else {
                    property.text()
                };
                properties.insert(key, (status, value));
            }
        }
    }
    DavResponse { href, properties }
}

/// The responses keyed by href.
pub fn by_href(responses: &[DavResponse]) -> BTreeMap<String, DavResponse> {
    responses.iter().map(|response| (response.href.clone(), response.clone())).collect()
}

pub const PROPFIND_ALL_NAMED: &str = r#"<?xml version="1.0"?>
<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
  <d:prop>
    <d:resourcetype/><d:getlastmodified/><d:getcontentlength/><d:getcontenttype/><d:getetag/>
    <d:creationdate/><d:displayname/><d:quota-used-bytes/><d:quota-available-bytes/>
    <oc:id/><oc:fileid/><oc:size/><oc:permissions/><oc:share-types/><oc:favorite/>
    <oc:owner-id/><oc:owner-display-name/><nc:has-preview/><oc:checksums/><oc:downloadURL/>
    <nc:download-url-expiration/><oc:dDC/><nc:is-encrypted/>
  </d:prop>
</d:propfind>"#;

/// A PROPFIND body asking for the given `prefix:name` properties.
pub fn propfind_body(properties: &[&str]) -> String {
    let props: String = properties.iter().map(|name| format!("<{name}/>")).collect();
    format!(
        r#"<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns" xmlns:x="urn:example:test"><d:prop>{props}</d:prop></d:propfind>"#
    )
}

/// A `d:searchrequest` with the given scope href, `where` body, and extra
/// basicsearch children (orderby, limit).
pub fn search_body(scope: &str, condition: &str, extra: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
  <d:basicsearch>
    <d:select><d:prop><d:displayname/><oc:fileid/><d:getcontenttype/><oc:size/><oc:owner-id/><d:getlastmodified/></d:prop></d:select>
    <d:from><d:scope><d:href>{scope}</d:href><d:depth>infinity</d:depth></d:scope></d:from>
    <d:where>{condition}</d:where>
    {extra}
  </d:basicsearch>
</d:searchrequest>"#
    )
}

/// `d:like` on the display name.
pub fn name_like(pattern: &str) -> String {
    format!("<d:like><d:prop><d:displayname/></d:prop><d:literal>{pattern}</d:literal></d:like>")
}

/// Sends one request byte for byte (no URL normalisation) and returns the
/// status code and the body.
pub async fn raw_request(
    base_url: &str,
    request_line: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let address = base_url.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.expect("connects");
    let mut request =
        format!("{request_line} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).await.expect("writes");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("reads");
    let answer = String::from_utf8_lossy(&answer).to_string();
    let status =
        answer.split(' ').nth(1).and_then(|code| code.parse().ok()).expect("a status line");
    let body = answer.split_once("\r\n\r\n").map(|(_, body)| body.to_string()).unwrap_or_default();
    (status, body)
}

/// `Authorization: Basic` for `uid` with password `{uid}-pw`.
pub fn basic_auth(uid: &str) -> String {
    use base64::Engine as _;
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{uid}:{uid}-pw")))
}
