//! The parser resolves namespaces itself; these pin what it accepts.

use super::*;
use proptest::prelude::*;

#[test]
fn propfind_body_resolves_namespaces() {
    let body = br#"<?xml version="1.0"?>
<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">
  <d:prop><d:getetag/><oc:fileid/></d:prop>
</d:propfind>"#;
    let root = parse(body).unwrap();
    assert!(root.is(DAV, "propfind"));
    let prop = root.child(DAV, "prop").unwrap();
    let names: Vec<_> = prop.children().map(|c| (c.ns.as_str(), c.local.as_str())).collect();
    assert_eq!(names, vec![(DAV, "getetag"), (OC, "fileid")]);
}

#[test]
fn default_namespace_applies_to_elements_not_attributes() {
    let root = parse(br#"<a xmlns="urn:x" b="1"><c/></a>"#).unwrap();
    assert_eq!(root.ns, "urn:x");
    assert_eq!(root.attributes, vec![(String::new(), "b".to_string(), "1".to_string())]);
    assert_eq!(root.children().next().unwrap().ns, "urn:x");
}

#[test]
fn undeclared_prefix_is_an_error() {
    assert_eq!(parse(b"<d:propfind/>"), Err(XmlError::UnknownPrefix("d".into())));
}

#[test]
fn malformed_bodies_are_errors() {
    for body in [&b"<a>"[..], b"<a></b>", b"<a/><b/>", b"text", b"", b"<a>&nope;</a>"] {
        assert!(parse(body).is_err(), "{:?}", String::from_utf8_lossy(body));
    }
}

#[test]
fn doctype_is_refused() {
    let body = br#"<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>"#;
    assert!(parse(body).is_err());
}

#[test]
fn entities_and_char_refs_decode() {
    let root = parse(b"<a>x &amp; y &#233; &lt;</a>").unwrap();
    assert_eq!(root.text(), "x & y \u{e9} <");
}

#[test]
fn deep_nesting_is_bounded() {
    let body = format!("{}{}", "<a>".repeat(100), "</a>".repeat(100));
    assert_eq!(parse(body.as_bytes()), Err(XmlError::TooLarge));
}

fn element_strategy() -> impl Strategy<Value = Element> {
    let name = "[a-z][a-z0-9]{0,6}";
    let ns = prop_oneof![Just(String::new()), Just(DAV.to_string()), "urn:[a-z]{1,5}"];
    let text =
        "[ -~\u{e9}\u{1F600}]{1,12}".prop_filter("not blank", |t: &String| !t.trim().is_empty());
    let leaf =
        (ns.clone(), name, proptest::option::of(text.clone())).prop_map(|(ns, local, text)| {
            Element {
                ns,
                local,
                attributes: Vec::new(),
                content: text.map(Content::Text).into_iter().collect(),
            }
        });
    leaf.prop_recursive(3, 16, 4, move |inner| {
        (ns.clone(), "[a-z]{1,6}", proptest::collection::vec(inner, 1..4)).prop_map(
            |(ns, local, children)| Element {
                ns,
                local,
                attributes: Vec::new(),
                content: children.into_iter().map(Content::Element).collect(),
            },
        )
    })
}

proptest! {
    #[test]
    fn written_xml_parses_back_to_the_same_tree(element in element_strategy()) {
        let mut xml = String::new();
        element.write_to(&mut xml);
        prop_assert_eq!(parse(xml.as_bytes()).unwrap(), element);
    }

    #[test]
    fn parse_never_panics(body in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = parse(&body);
    }
}
