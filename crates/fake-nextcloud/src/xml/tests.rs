//! The response-writing helpers produce well-formed XML in every namespace.

use super::*;

#[test]
fn property_elements_are_well_formed_in_any_namespace() {
    // Properties are written inside a response root that declares our
    // prefixes; one in no namespace must not bind a prefix to "".
    for ns in [DAV, OC, "", "urn:example:x"] {
        for element in [empty_element(ns, "p"), element_with(ns, "p", "v &amp; w")] {
            let document = format!("<d:prop {ROOT_NAMESPACES}>{element}</d:prop>");
            let root =
                parse(document.as_bytes()).unwrap_or_else(|error| panic!("{document}: {error}"));
            let child = root.children().next().unwrap();
            assert_eq!((child.ns.as_str(), child.local.as_str()), (ns, "p"), "{document}");
        }
    }
}
