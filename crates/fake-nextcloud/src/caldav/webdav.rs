//! The WebDAV plumbing CalDAV and CardDAV share: which properties a request
//! asks for, how one resource's properties become a `d:response`, ETags,
//! PROPPATCH bodies and the per-collection change log behind sync tokens.
//!
//! Properties are computed eagerly per resource as a [`PropertySet`] (they
//! are cheap: the costliest is `calendar-data`, which is the stored text) and
//! then filtered by the request, so every protocol module answers `prop`,
//! `allprop` and `propname` requests the same way sabre/dav does: found
//! properties in a 200 propstat, the rest in a 404 one.

use crate::dav::DavError;
use crate::xml::{self, Element};
use axum::response::Response;
use http::StatusCode;

/// The prefix of every sync token, as sabre/dav writes it.
pub const SYNC_TOKEN_PREFIX: &str = "http://sabre.io/ns/sync/";

/// The `DAV:` header Nextcloud sends on every DAV response to OPTIONS.
pub const DAV_COMPLIANCE: &str = "1, 3, extended-mkcol, access-control, calendarserver-principal-property-search, calendar-access, calendar-proxy, calendar-auto-schedule, calendar-availability, nc-calendar-trashbin, nc-calendar-webcal-cache, calendarserver-subscribed, oc-resource-sharing, oc-calendar-publishing, calendarserver-sharing, nc-calendar-search, nc-enable-birthday-calendar, addressbook, nextcloud-checksum-update";

/// A property name in Clark terms: namespace plus local name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PropertyName {
    pub ns: String,
    pub local: String,
}

impl PropertyName {
    pub fn new(ns: &str, local: &str) -> PropertyName {
        PropertyName { ns: ns.to_string(), local: local.to_string() }
    }

    pub fn is(&self, ns: &str, local: &str) -> bool {
        self.ns == ns && self.local == local
    }

    fn of(element: &Element) -> PropertyName {
        PropertyName { ns: element.ns.clone(), local: element.local.clone() }
    }
}

/// What a PROPFIND (or a REPORT's `d:prop`) asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PropertyRequest {
    /// `allprop` (or an empty body), plus any `d:include`d names.
    All { include: Vec<PropertyName> },
    /// `propname`: names only, no values.
    Names,
    /// `prop`: exactly these.
    Named(Vec<PropertyName>),
}

impl PropertyRequest {
    pub fn named(names: &[(&str, &str)]) -> PropertyRequest {
        PropertyRequest::Named(
            names.iter().map(|(ns, local)| PropertyName::new(ns, local)).collect(),
        )
    }

    /// Whether the request asks for this property by name (or for all).
    pub fn wants(&self, ns: &str, local: &str) -> bool {
        match self {
            PropertyRequest::All { .. } => true,
            PropertyRequest::Names => false,
            PropertyRequest::Named(names) => names.iter().any(|name| name.is(ns, local)),
        }
    }
}

/// Reads a `d:prop` element's children as property names.
pub fn property_names(prop: &Element) -> Vec<PropertyName> {
    prop.children().map(PropertyName::of).collect()
}

/// Parses a PROPFIND body; an empty body means `allprop` (RFC 4918 9.1).
pub fn parse_propfind(body: &[u8]) -> Result<PropertyRequest, DavError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(PropertyRequest::All { include: Vec::new() });
    }
    let root = parse_body(body)?;
    if !root.is(xml::DAV, "propfind") {
        return Err(DavError::bad_request(
            "The root element of a PROPFIND request must be {DAV:}propfind",
        ));
    }
    if let Some(prop) = root.child(xml::DAV, "prop") {
        return Ok(PropertyRequest::Named(property_names(prop)));
    }
    if root.child(xml::DAV, "propname").is_some() {
        return Ok(PropertyRequest::Names);
    }
    let include = root.child(xml::DAV, "include").map(property_names).unwrap_or_default();
    Ok(PropertyRequest::All { include })
}

/// Parses an XML request body, answering 400 the way sabre/dav does when it
/// is not well-formed.
pub fn parse_body(body: &[u8]) -> Result<Element, DavError> {
    xml::parse(body).map_err(|error| DavError::bad_request(error.to_string()))
}

/// One property's value, as already-escaped inner XML.
#[derive(Debug, Clone)]
pub struct PropertyValue {
    pub name: PropertyName,
    pub inner_xml: String,
    /// sabre/dav leaves a few expensive properties out of `allprop`.
    pub in_allprop: bool,
}

/// All the properties one resource has.
#[derive(Debug, Clone, Default)]
pub struct PropertySet {
    pub values: Vec<PropertyValue>,
}

impl PropertySet {
    pub fn new() -> PropertySet {
        PropertySet::default()
    }

    /// Adds a property whose value is already XML.
    pub fn xml(&mut self, ns: &str, local: &str, inner_xml: impl Into<String>) -> &mut PropertySet {
        self.values.push(PropertyValue {
            name: PropertyName::new(ns, local),
            inner_xml: inner_xml.into(),
            in_allprop: true,
        });
        self
    }

    /// Adds a property whose value is text (escaped here).
    pub fn text(&mut self, ns: &str, local: &str, text: &str) -> &mut PropertySet {
        self.xml(ns, local, xml::escape(text))
    }

    /// Adds a property holding one `d:href`.
    pub fn href(&mut self, ns: &str, local: &str, href: &str) -> &mut PropertySet {
        self.xml(ns, local, format!("<d:href>{}</d:href>", xml::escape(href)))
    }

    /// Adds a property only when `value` is set; otherwise it stays a 404.
    pub fn text_if(&mut self, ns: &str, local: &str, value: Option<&str>) -> &mut PropertySet {
        if let Some(value) = value {
            self.text(ns, local, value);
        }
        self
    }

    /// Marks the last added property as left out of `allprop`.
    pub fn not_in_allprop(&mut self) -> &mut PropertySet {
        if let Some(last) = self.values.last_mut() {
            last.in_allprop = false;
        }
        self
    }

    pub fn get(&self, ns: &str, local: &str) -> Option<&PropertyValue> {
        self.values.iter().find(|value| value.name.is(ns, local))
    }

    /// The `d:response` element for this resource.
    pub fn response(&self, href: &str, request: &PropertyRequest, minimal: bool) -> String {
        let mut found = String::new();
        let mut missing = String::new();
        match request {
            PropertyRequest::All { include } => {
                for value in self.values.iter().filter(|value| value.in_allprop) {
                    found.push_str(&xml::element_with(
                        &value.name.ns,
                        &value.name.local,
                        &value.inner_xml,
                    ));
                }
                for name in include {
                    match self.values.iter().find(|value| value.name == *name && !value.in_allprop)
                    {
                        Some(value) => found.push_str(&xml::element_with(
                            &name.ns,
                            &name.local,
                            &value.inner_xml,
                        )),
                        None if self.get(&name.ns, &name.local).is_some() => {}
                        None => missing.push_str(&xml::empty_element(&name.ns, &name.local)),
                    }
                }
            }
            PropertyRequest::Names => {
                for value in &self.values {
                    found.push_str(&xml::empty_element(&value.name.ns, &value.name.local));
                }
            }
            PropertyRequest::Named(names) => {
                for name in names {
                    match self.get(&name.ns, &name.local) {
                        Some(value) => found.push_str(&xml::element_with(
                            &name.ns,
                            &name.local,
                            &value.inner_xml,
                        )),
                        None => missing.push_str(&xml::empty_element(&name.ns, &name.local)),
                    }
                }
            }
        }
        let mut out = format!("<d:response><d:href>{}</d:href>", xml::escape(href));
        if !found.is_empty() || missing.is_empty() {
            out.push_str(&propstat(&found, "HTTP/1.1 200 OK"));
        }
        if !missing.is_empty() && !minimal {
            out.push_str(&propstat(&missing, "HTTP/1.1 404 Not Found"));
        }
        out.push_str("</d:response>");
        out
    }
}

fn propstat(props: &str, status: &str) -> String {
    format!("<d:propstat><d:prop>{props}</d:prop><d:status>{status}</d:status></d:propstat>")
}

/// A `d:response` carrying only a status (a deleted member in a sync
/// report, a missing href in a multiget).
pub fn status_response(href: &str, status: &str) -> String {
    format!(
        "<d:response><d:href>{}</d:href><d:status>{status}</d:status></d:response>",
        xml::escape(href)
    )
}

/// A whole multistatus body.
pub fn multistatus_body(responses: &[String], sync_token: Option<&str>) -> String {
    let mut out = format!("<?xml version=\"1.0\"?>\n<d:multistatus {}>", xml::ROOT_NAMESPACES);
    for response in responses {
        out.push_str(response);
    }
    if let Some(token) = sync_token {
        out.push_str(&format!("<d:sync-token>{}</d:sync-token>", xml::escape(token)));
    }
    out.push_str("</d:multistatus>\n");
    out
}

/// A 207 response with sabre's `Vary` header for REPORTs.
pub fn multistatus(responses: &[String], sync_token: Option<&str>) -> Response {
    crate::dav::multistatus(multistatus_body(responses, sync_token))
}

/// A 207 with `Vary: Brief,Prefer`: sabre's answer to a query or multiget
/// REPORT, whose entries those headers shape.
pub fn varying_multistatus(responses: &[String]) -> Response {
    let mut response = multistatus(responses, None);
    response
        .headers_mut()
        .insert(http::header::VARY, http::HeaderValue::from_static("Brief,Prefer"));
    response
}

/// Whether the client asked for `Prefer: return=minimal` (or `Brief: t`),
/// which drops 404 propstats.
pub fn prefers_minimal(request: &crate::dav::DavRequest) -> bool {
    let prefer = request.header("prefer").unwrap_or("");
    let brief = request.header("brief").unwrap_or("");
    prefer.split(',').any(|part| part.trim().eq_ignore_ascii_case("return=minimal"))
        || brief.trim().eq_ignore_ascii_case("t")
}

/// Nextcloud's ETags are the md5 of the stored data in quotes; we have no
/// md5 at hand, so the first 128 bits of its SHA-256 look the same to a
/// client and change exactly when the data does.
pub fn etag_of(data: &[u8]) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(data);
    let hex: String = digest.iter().take(16).map(|byte| format!("{byte:02x}")).collect();
    format!("\"{hex}\"")
}

/// Checks `If-Match` / `If-None-Match` against the current ETag (`None` =
/// the resource does not exist), the way sabre's `checkPreconditions` does.
pub fn check_preconditions(
    request: &crate::dav::DavRequest,
    current_etag: Option<&str>,
) -> Result<(), DavError> {
    if let Some(if_match) = request.header("if-match") {
        let holds = match current_etag {
            None => false,
            Some(etag) => if_match.split(',').map(str::trim).any(|tag| tag == "*" || tag == etag),
        };
        if !holds {
            let message = match current_etag {
                None => "An If-Match header was specified and the resource did not exist",
                Some(_) => {
                    "An If-Match header was specified, but none of the specified ETags matched."
                }
            };
            return Err(DavError::precondition_failed(message, "If-Match"));
        }
    }
    if let Some(if_none_match) = request.header("if-none-match")
        && let Some(etag) = current_etag
    {
        let matches = if_none_match.split(',').map(str::trim).any(|tag| tag == "*" || tag == etag);
        if matches {
            let message = if if_none_match.trim() == "*" {
                "An If-None-Match header was specified, but the resource exists"
            } else {
                "An If-None-Match header was specified, but the ETag matched (or * was specified)."
            };
            return Err(DavError::precondition_failed(message, "If-None-Match"));
        }
    }
    Ok(())
}

/// One property operation of a PROPPATCH (or of MKCALENDAR / extended MKCOL).
#[derive(Debug, Clone)]
pub enum PropertyUpdate {
    Set(Element),
    Remove(PropertyName),
}

impl PropertyUpdate {
    pub fn name(&self) -> PropertyName {
        match self {
            PropertyUpdate::Set(element) => PropertyName::of(element),
            PropertyUpdate::Remove(name) => name.clone(),
        }
    }
}

/// A PROPPATCH body's updates: its root must be `d:propertyupdate` (400
/// otherwise, as sabre says).
pub fn parse_proppatch(body: &[u8]) -> Result<Vec<PropertyUpdate>, DavError> {
    let root = parse_body(body)?;
    if !root.is(xml::DAV, "propertyupdate") {
        return Err(DavError::bad_request(
            "The root element of a PROPPATCH request must be {DAV:}propertyupdate",
        ));
    }
    Ok(property_updates(&root))
}

/// Reads the `d:set` / `d:remove` blocks under `root` in document order.
pub fn property_updates(root: &Element) -> Vec<PropertyUpdate> {
    let mut updates = Vec::new();
    for block in root.children() {
        let is_set = block.is(xml::DAV, "set");
        let is_remove = block.is(xml::DAV, "remove");
        if !is_set && !is_remove {
            continue;
        }
        for prop in block.children_named(xml::DAV, "prop") {
            for property in prop.children() {
                updates.push(if is_set {
                    PropertyUpdate::Set(property.clone())
                } else {
                    PropertyUpdate::Remove(PropertyName::of(property))
                });
            }
        }
    }
    updates
}

/// The 207 answer to a PROPPATCH: every property with its own status.
pub fn proppatch_response(href: &str, results: &[(PropertyName, u16)]) -> Response {
    let mut by_status: std::collections::BTreeMap<u16, String> = std::collections::BTreeMap::new();
    for (name, status) in results {
        by_status.entry(*status).or_default().push_str(&xml::empty_element(&name.ns, &name.local));
    }
    let mut out = format!("<d:response><d:href>{}</d:href>", xml::escape(href));
    for (status, props) in by_status {
        let reason = StatusCode::from_u16(status)
            .ok()
            .and_then(|code| code.canonical_reason())
            .unwrap_or("");
        out.push_str(&propstat(&props, &format!("HTTP/1.1 {status} {reason}")));
    }
    out.push_str("</d:response>");
    multistatus(&[out], None)
}

/// What happened to a member of a collection, as sabre numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    Added = 1,
    Modified = 2,
    Deleted = 3,
}

#[derive(Debug, Clone)]
struct Change {
    token: u64,
    uri: String,
    operation: Operation,
}

/// The change log of one collection: sabre's `calendarchanges` /
/// `addressbookchanges` table. A change is recorded with the token current
/// at the time, then the token moves on, so "changes since token T" are the
/// ones recorded with a token in `T..current`.
#[derive(Debug, Clone)]
pub struct ChangeLog {
    sync_token: u64,
    changes: Vec<Change>,
}

/// The members that changed since a token, grouped like Nextcloud's
/// `GROUP BY uri` with `MAX(operation)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    pub added: Vec<String>,
    pub modified: Vec<String>,
    pub deleted: Vec<String>,
}

impl Default for ChangeLog {
    fn default() -> Self {
        ChangeLog::new()
    }
}

impl ChangeLog {
    /// Nextcloud creates collections with sync token 1.
    pub fn new() -> ChangeLog {
        ChangeLog { sync_token: 1, changes: Vec::new() }
    }

    pub fn sync_token(&self) -> u64 {
        self.sync_token
    }

    /// `http://sabre.io/ns/sync/N`, the value of `d:sync-token` and `cs:getctag`.
    pub fn sync_token_uri(&self) -> String {
        format!("{SYNC_TOKEN_PREFIX}{}", self.sync_token)
    }

    pub fn record(&mut self, uri: &str, operation: Operation) {
        self.changes.push(Change { token: self.sync_token, uri: uri.to_string(), operation });
        self.sync_token += 1;
    }

    /// Changes recorded since `token`, at most `limit` members (Nextcloud
    /// applies the limit to the grouped query and still hands out the newest
    /// token, so the rest are never reported).
    pub fn changes_since(&self, token: u64, limit: Option<usize>) -> Changes {
        let mut order: Vec<String> = Vec::new();
        let mut strongest: std::collections::HashMap<String, Operation> =
            std::collections::HashMap::new();
        for change in self
            .changes
            .iter()
            .filter(|change| change.token >= token && change.token < self.sync_token)
        {
            match strongest.get_mut(&change.uri) {
                Some(operation) => *operation = (*operation).max(change.operation),
                None => {
                    order.push(change.uri.clone());
                    strongest.insert(change.uri.clone(), change.operation);
                }
            }
        }
        if let Some(limit) = limit {
            order.truncate(limit);
        }
        let mut changes = Changes::default();
        for uri in order {
            match strongest[&uri] {
                Operation::Added => changes.added.push(uri),
                Operation::Modified => changes.modified.push(uri),
                Operation::Deleted => changes.deleted.push(uri),
            }
        }
        changes
    }
}

/// A parsed `d:sync-collection` REPORT body.
#[derive(Debug, Clone)]
pub struct SyncCollection {
    /// `None` = initial sync (empty or absent token).
    pub token: Option<String>,
    pub limit: Option<usize>,
    pub properties: PropertyRequest,
}

pub fn parse_sync_collection(root: &Element) -> Result<SyncCollection, DavError> {
    let token = root.child(xml::DAV, "sync-token").map(|element| element.text().trim().to_string());
    let token = token.filter(|token| !token.is_empty());
    let limit = root
        .child(xml::DAV, "limit")
        .and_then(|limit| limit.child(xml::DAV, "nresults"))
        .map(|nresults| nresults.text().trim().parse::<usize>())
        .transpose()
        .map_err(|_| DavError::bad_request("The {DAV:}nresults element must be an integer"))?;
    let Some(prop) = root.child(xml::DAV, "prop") else {
        return Err(DavError::bad_request(
            "The {DAV:}prop element is required for a sync-collection report",
        ));
    };
    Ok(SyncCollection { token, limit, properties: PropertyRequest::Named(property_names(prop)) })
}

/// What a sync-collection REPORT resolves to before properties are fetched.
#[derive(Debug, Clone)]
pub enum SyncPlan {
    /// Everything is new: list these members.
    Initial {
        members: Vec<String>,
    },
    Incremental(Changes),
}

/// Interprets a sync token the way sabre's Sync plugin and Nextcloud's
/// backend do: a foreign prefix is refused (403 `valid-sync-token`), a
/// non-numeric rest means an initial sync, and an initial sync that would
/// exceed `DAV:limit` is refused with 507.
pub fn plan_sync(
    report: &SyncCollection,
    log: &ChangeLog,
    members: impl FnOnce() -> Vec<String>,
) -> Result<SyncPlan, DavError> {
    let number = match &report.token {
        None => None,
        Some(token) => {
            let Some(rest) = token.strip_prefix(SYNC_TOKEN_PREFIX) else {
                return Err(DavError::InvalidSyncToken);
            };
            rest.parse::<u64>().ok()
        }
    };
    match number {
        None => {
            let members = members();
            if report.limit.is_some_and(|limit| members.len() > limit) {
                return Err(DavError::TooManyMatches);
            }
            Ok(SyncPlan::Initial { members })
        }
        Some(number) => Ok(SyncPlan::Incremental(log.changes_since(number, report.limit))),
    }
}

/// Decodes one percent-encoded path segment; `None` when it is not UTF-8.
pub fn decode_segment(segment: &str) -> Option<String> {
    percent_encoding::percent_decode_str(segment).decode_utf8().ok().map(|text| text.into_owned())
}

/// Splits a percent-encoded path into decoded segments, dropping empty ones.
pub fn decode_path(path: &str) -> Option<Vec<String>> {
    path.split('/').filter(|segment| !segment.is_empty()).map(decode_segment).collect()
}

/// Allowed characters of a collection or member name we create.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\'])
        && name.len() <= 255
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_log_groups_by_member_with_the_strongest_operation() {
        let mut log = ChangeLog::new();
        assert_eq!(log.sync_token(), 1);
        log.record("a.ics", Operation::Added);
        log.record("b.ics", Operation::Added);
        let token_after_b = log.sync_token();
        log.record("a.ics", Operation::Modified);
        log.record("c.ics", Operation::Added);
        log.record("c.ics", Operation::Deleted);
        assert_eq!(log.sync_token(), 6);
        let all = log.changes_since(1, None);
        assert_eq!(all.added, vec!["b.ics"]);
        assert_eq!(all.modified, vec!["a.ics"]);
        assert_eq!(all.deleted, vec!["c.ics"]);
        let later = log.changes_since(token_after_b, None);
        assert_eq!(later.added, Vec::<String>::new());
        assert_eq!(later.modified, vec!["a.ics"]);
        assert_eq!(later.deleted, vec!["c.ics"]);
        assert_eq!(log.changes_since(log.sync_token(), None), Changes::default());
        let limited = log.changes_since(1, Some(1));
        assert_eq!(limited.modified, vec!["a.ics"]);
        assert!(limited.added.is_empty() && limited.deleted.is_empty());
    }

    #[test]
    fn propfind_bodies_parse_into_requests() {
        assert_eq!(parse_propfind(b"").unwrap(), PropertyRequest::All { include: vec![] });
        let named = parse_propfind(
            br#"<d:propfind xmlns:d="DAV:" xmlns:x="urn:x"><d:prop><d:getetag/><x:y/></d:prop></d:propfind>"#,
        )
        .unwrap();
        assert_eq!(named, PropertyRequest::named(&[("DAV:", "getetag"), ("urn:x", "y")]));
        assert_eq!(
            parse_propfind(br#"<propfind xmlns="DAV:"><propname/></propfind>"#).unwrap(),
            PropertyRequest::Names
        );
        assert_eq!(parse_propfind(b"<d:propfind").unwrap_err().status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            parse_propfind(br#"<x xmlns="DAV:"/>"#).unwrap_err().status(),
            StatusCode::BAD_REQUEST
        );
    }

    #[test]
    fn a_response_splits_found_and_missing_properties() {
        let mut set = PropertySet::new();
        set.text(xml::DAV, "displayname", "A & B");
        let request = PropertyRequest::named(&[("DAV:", "displayname"), ("urn:x", "nope")]);
        let response = set.response("/c/", &request, false);
        assert!(response.contains("<d:displayname>A &amp; B</d:displayname>"), "{response}");
        assert!(response.contains("HTTP/1.1 404 Not Found"), "{response}");
        assert!(response.contains(r#"<x:nope xmlns:x="urn:x"/>"#), "{response}");
        let minimal = set.response("/c/", &request, true);
        assert!(!minimal.contains("404"), "{minimal}");
    }

    #[test]
    fn sync_tokens_from_elsewhere_are_refused_and_odd_ones_mean_initial() {
        let mut log = ChangeLog::new();
        log.record("a.ics", Operation::Added);
        let report = |token: Option<&str>, limit| SyncCollection {
            token: token.map(str::to_string),
            limit,
            properties: PropertyRequest::Named(vec![]),
        };
        let refused =
            plan_sync(&report(Some("http://example.invalid/x"), None), &log, Vec::new).unwrap_err();
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        assert!(matches!(
            plan_sync(&report(Some("http://sabre.io/ns/sync/abc"), None), &log, || vec![
                "a.ics".into()
            ]),
            Ok(SyncPlan::Initial { .. })
        ));
        let too_many =
            plan_sync(&report(None, Some(1)), &log, || vec!["a.ics".into(), "b.ics".into()])
                .unwrap_err();
        assert_eq!(too_many.status(), StatusCode::INSUFFICIENT_STORAGE);
        assert!(matches!(
            plan_sync(&report(Some("http://sabre.io/ns/sync/1"), None), &log, Vec::new),
            Ok(SyncPlan::Incremental(changes)) if changes.added == vec!["a.ics"]
        ));
    }

    #[test]
    fn etags_are_quoted_and_follow_the_data() {
        let etag = etag_of(b"x");
        assert!(etag.starts_with('"') && etag.ends_with('"') && etag.len() == 34);
        assert_ne!(etag, etag_of(b"y"));
    }
}
