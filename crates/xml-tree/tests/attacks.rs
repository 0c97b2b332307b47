//! Hostile XML against the DAV tree both sides use: entity expansion
//! (billion laughs, external entities), nesting deep enough to overflow a
//! recursive parser or destructor, bodies past the length bound, and a flat
//! flood of elements. Each is refused with its error, quickly; the last
//! is parsed within its bound. Fuzzing of random and mutated bodies is in
//! `src/tests.rs` and `crates/mcp-nextcloud/tests/fuzz.rs`.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use std::time::{Duration, Instant};
use xml_tree::{XmlError, parse, parse_limited};

const QUICKLY: Duration = Duration::from_secs(5);

fn timed<T>(run: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let result = run();
    assert!(started.elapsed() < QUICKLY, "took {:?}", started.elapsed());
    result
}

#[test]
fn entity_definitions_are_refused_not_expanded() {
    let laughs = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<d:propfind xmlns:d="DAV:"><d:prop>&lol4;</d:prop></d:propfind>"#;
    let external = r#"<?xml version="1.0"?>
<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<d:propfind xmlns:d="DAV:"><d:prop>&xxe;</d:prop></d:propfind>"#;
    for (case, body) in [("billion laughs", laughs), ("external entity", external)] {
        let result = timed(|| parse(body.as_bytes()));
        assert!(matches!(result, Err(XmlError::Malformed(_))), "{case}: {result:?}");
    }
    // An undefined entity reference without a DOCTYPE is no better.
    let undefined = r#"<d:prop xmlns:d="DAV:">&xxe;</d:prop>"#;
    assert!(matches!(parse(undefined.as_bytes()), Err(XmlError::Malformed(_))));
    // The five predefined ones and character references are text.
    let fine = r#"<d:prop xmlns:d="DAV:">&lt;&amp;&gt;&quot;&apos;&#233;&#x20AC;</d:prop>"#;
    assert_eq!(parse(fine.as_bytes()).unwrap().text(), "<&>\"'é€");
}

#[test]
fn deep_nesting_is_refused_without_overflowing_the_stack() {
    for depth in [65, 1_000, 200_000] {
        let body = format!(
            r#"<d:a xmlns:d="DAV:">{}{}</d:a>"#,
            "<d:a>".repeat(depth),
            "</d:a>".repeat(depth)
        );
        let result = timed(|| parse_limited(body.as_bytes(), body.len()));
        assert_eq!(result.err(), Some(XmlError::TooLarge), "depth {depth}");
    }
    // Unclosed, too: the depth bound holds before the end is reached.
    let unclosed = format!(r#"<d:a xmlns:d="DAV:">{}"#, "<d:a>".repeat(200_000));
    let result = timed(|| parse_limited(unclosed.as_bytes(), unclosed.len()));
    assert_eq!(result.err(), Some(XmlError::TooLarge));
}

#[test]
fn a_body_past_the_length_bound_is_refused_before_parsing() {
    let body = format!(r#"<d:a xmlns:d="DAV:">{}</d:a>"#, "x".repeat(xml_tree::BODY_LENGTH_MAX));
    let result = timed(|| parse(body.as_bytes()));
    assert_eq!(result.err(), Some(XmlError::TooLarge));
    assert_eq!(parse_limited(b"<a/>", 3).err(), Some(XmlError::TooLarge));
}

#[test]
fn a_flat_flood_of_elements_parses_within_its_bound() {
    let count = 80_000;
    let body = format!(
        r#"<d:multistatus xmlns:d="DAV:">{}</d:multistatus>"#,
        "<d:response><d:href>/x</d:href></d:response>".repeat(count)
    );
    assert!(body.len() <= xml_tree::BODY_LENGTH_MAX);
    let root = timed(|| parse(body.as_bytes())).unwrap();
    assert_eq!(root.children().count(), count);
    // A flood of undeclared prefixes is one error, not one per element.
    let prefixes = format!("<root>{}</root>", "<x:a/>".repeat(count));
    assert!(matches!(timed(|| parse(prefixes.as_bytes())), Err(XmlError::UnknownPrefix(_))));
}
