//! XML in and out for the DAV protocols.
//!
//! Requests are parsed by the `xml-tree` crate into a namespace-resolved tree
//! ([`Element`]) — an undeclared prefix is an error (400) as in sabre/dav, and
//! a property value can be written back with explicit namespace declarations.
//! Responses are built here as strings with the prefixes Nextcloud uses
//! (`d:`, `s:`, `oc:`, `nc:`, `cal:`, `card:`, `cs:`).

pub use xml_tree::{
    APPLE, BODY_LENGTH_MAX, CALDAV, CALSERVER, CARDDAV, Content, DAV, Element, NC, OC, SABRE,
    XmlError, escape, parse,
};

/// The namespace declarations every response root carries.
pub const ROOT_NAMESPACES: &str = concat!(
    r#"xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns" xmlns:oc="http://owncloud.org/ns" "#,
    r#"xmlns:nc="http://nextcloud.org/ns" xmlns:cal="urn:ietf:params:xml:ns:caldav" "#,
    r#"xmlns:card="urn:ietf:params:xml:ns:carddav" xmlns:cs="http://calendarserver.org/ns/" "#,
    r#"xmlns:x1="http://apple.com/ns/ical/""#
);

/// The prefix our responses use for a namespace, if it is one of ours.
pub fn known_prefix(ns: &str) -> Option<&'static str> {
    match ns {
        DAV => Some("d"),
        SABRE => Some("s"),
        OC => Some("oc"),
        NC => Some("nc"),
        CALDAV => Some("cal"),
        CARDDAV => Some("card"),
        CALSERVER => Some("cs"),
        APPLE => Some("x1"),
        _ => None,
    }
}

/// Writes an empty element for a property name, declaring its namespace
/// when it is not one of the root's.
pub fn empty_element(ns: &str, local: &str) -> String {
    match known_prefix(ns) {
        Some(prefix) => format!("<{prefix}:{local}/>"),
        // A prefix cannot be bound to the empty namespace: an element in no
        // namespace resets the default one instead.
        None if ns.is_empty() => format!("<{local} xmlns=\"\"/>"),
        None => format!("<x:{local} xmlns:x=\"{}\"/>", escape(ns)),
    }
}

/// Writes an element for a property with already-escaped XML content.
pub fn element_with(ns: &str, local: &str, inner_xml: &str) -> String {
    if inner_xml.is_empty() {
        return empty_element(ns, local);
    }
    match known_prefix(ns) {
        Some(prefix) => format!("<{prefix}:{local}>{inner_xml}</{prefix}:{local}>"),
        None if ns.is_empty() => format!("<{local} xmlns=\"\">{inner_xml}</{local}>"),
        None => format!("<x:{local} xmlns:x=\"{}\">{inner_xml}</x:{local}>", escape(ns)),
    }
}

/// A sabre/dav error body.
pub fn error_body(exception: &str, message: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<d:error xmlns:d=\"DAV:\" xmlns:s=\"http://sabredav.org/ns\">\n  <s:exception>{}</s:exception>\n  <s:message>{}</s:message>\n</d:error>\n",
        escape(exception),
        escape(message)
    )
}

#[cfg(test)]
mod tests;
