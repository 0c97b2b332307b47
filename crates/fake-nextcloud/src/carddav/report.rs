//! CardDAV REPORTs: addressbook-query (sabre's `validateFilters`, with
//! `anyof`/`allof` and `card:limit`), addressbook-multiget and
//! sync-collection.

use super::vcard::{self, CardData};
use super::{AddressBook, Card, CardDav};
use crate::caldav::Caller;
use crate::caldav::filter::{self, TextMatch};
use crate::caldav::webdav::{self, PropertyRequest};
use crate::dav::collection;
use crate::dav::{DavError, DavRequest, Depth};
use crate::world::World;
use crate::xml::{self, Element};
use axum::response::Response;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Test {
    AnyOf,
    AllOf,
}

#[derive(Debug, Clone)]
struct PropFilter {
    name: String,
    test: Test,
    is_not_defined: bool,
    param_filters: Vec<ParamFilter>,
    text_matches: Vec<TextMatch>,
}

#[derive(Debug, Clone)]
struct ParamFilter {
    name: String,
    is_not_defined: bool,
    text_match: Option<TextMatch>,
}

#[derive(Debug, Clone)]
struct AddressBookQuery {
    filters: Vec<PropFilter>,
    test: Test,
    limit: Option<usize>,
    properties: PropertyRequest,
    address_data_properties: Vec<String>,
}

/// The default collation of a CardDAV text-match.
const CARDDAV_COLLATION: &str = "i;unicode-casemap";

pub(super) fn address_book_report(
    world: &World,
    request: &DavRequest,
    caller: &Caller<'_>,
    book_uri: &str,
    card: Option<&str>,
) -> Result<Response, DavError> {
    let root = webdav::parse_body(&request.body)?;
    let Some(book) = world.address_books.get(&caller.user.uid, book_uri) else {
        return Err(DavError::not_found());
    };

    match (root.ns.as_str(), root.local.as_str()) {
        (xml::CARDDAV, "addressbook-query") => {
            address_book_query(request, caller, book, card, &root)
        }
        (xml::CARDDAV, "addressbook-multiget") => multiget(world, caller, &root),
        (xml::DAV, "sync-collection") if card.is_none() => {
            collection::sync_collection(caller, book, &root)
        }
        _ => Err(DavError::report_not_supported(format!(
            "The {{{}}}{} REPORT is not supported here",
            root.ns, root.local
        ))),
    }
}

fn parse_query(root: &Element) -> Result<AddressBookQuery, String> {
    let mut filters = Vec::new();
    let mut test = Test::AnyOf;
    let mut seen_filter = false;
    for filter_element in root.children_named(xml::CARDDAV, "filter") {
        if seen_filter {
            return Err(
                "You can only include 1 {urn:ietf:params:xml:ns:carddav}filter element".into()
            );
        }
        seen_filter = true;
        test = match filter_element.attribute("test") {
            None | Some("anyof") => Test::AnyOf,
            Some("allof") => Test::AllOf,
            Some(_) => {
                return Err("The \"test\" attribute must be one of \"allof\" or \"anyof\"".into());
            }
        };
        for prop_filter in filter_element.children_named(xml::CARDDAV, "prop-filter") {
            filters.push(parse_prop_filter(prop_filter)?);
        }
    }
    let limit = root
        .child(xml::CARDDAV, "limit")
        .and_then(|limit| limit.child(xml::CARDDAV, "nresults"))
        .map(|nresults| nresults.text().trim().parse::<usize>().unwrap_or(0))
        .filter(|limit| *limit > 0);
    let address_data_properties = root
        .child(xml::DAV, "prop")
        .and_then(|prop| prop.child(xml::CARDDAV, "address-data"))
        .map(address_data_properties)
        .unwrap_or_default();
    Ok(AddressBookQuery {
        filters,
        test,
        limit,
        properties: crate::caldav::report_properties(root),
        address_data_properties,
    })
}

fn address_data_properties(address_data: &Element) -> Vec<String> {
    address_data
        .children_named(xml::CARDDAV, "prop")
        .filter_map(|prop| prop.attribute("name").map(str::to_string))
        .collect()
}

fn parse_prop_filter(element: &Element) -> Result<PropFilter, String> {
    let name = element.attribute("name").ok_or("A prop-filter needs a name attribute")?.to_string();
    let test = if element.attribute("test") == Some("allof") { Test::AllOf } else { Test::AnyOf };
    let mut filter = PropFilter {
        name,
        test,
        is_not_defined: false,
        param_filters: Vec::new(),
        text_matches: Vec::new(),
    };
    for child in element.children().filter(|child| child.ns == xml::CARDDAV) {
        match child.local.as_str() {
            "is-not-defined" => filter.is_not_defined = true,
            "text-match" => {
                filter.text_matches.push(filter::parse_text_match(child, CARDDAV_COLLATION)?)
            }
            "param-filter" => {
                let name = child
                    .attribute("name")
                    .ok_or("A param-filter needs a name attribute")?
                    .to_string();
                let mut param_filter =
                    ParamFilter { name, is_not_defined: false, text_match: None };
                for grandchild in child.children() {
                    if grandchild.is(xml::CARDDAV, "is-not-defined") {
                        param_filter.is_not_defined = true;
                    }
                    if grandchild.is(xml::CARDDAV, "text-match") {
                        param_filter.text_match =
                            Some(filter::parse_text_match(grandchild, CARDDAV_COLLATION)?);
                    }
                }
                filter.param_filters.push(param_filter);
            }
            _ => {}
        }
    }
    Ok(filter)
}

/// sabre's `validateFilters`: anyof stops at the first success, allof at
/// the first failure.
fn card_matches(data: &CardData, filters: &[PropFilter], test: Test) -> bool {
    if filters.is_empty() {
        return true;
    }
    for filter in filters {
        let properties: Vec<_> = vcard::entries_named(&data.vcard, &filter.name).collect();
        let is_defined = !properties.is_empty();
        let success = if filter.is_not_defined {
            !is_defined
        } else if (filter.param_filters.is_empty() && filter.text_matches.is_empty()) || !is_defined
        {
            is_defined
        } else {
            let mut results = Vec::new();
            if !filter.param_filters.is_empty() {
                results.push(param_filters_hold(&properties, &filter.param_filters, filter.test));
            }
            if !filter.text_matches.is_empty() {
                let texts: Vec<String> =
                    properties.iter().map(|entry| vcard::entry_text(entry)).collect();
                results.push(text_matches_hold(&texts, &filter.text_matches, filter.test));
            }
            match (results.as_slice(), filter.test) {
                ([only], _) => *only,
                ([first, second], Test::AnyOf) => *first || *second,
                ([first, second], Test::AllOf) => *first && *second,
                _ => unreachable!("one or two partial results"),
            }
        };
        if test == Test::AnyOf && success {
            return true;
        }
        if test == Test::AllOf && !success {
            return false;
        }
    }
    test == Test::AllOf
}

fn param_filters_hold(
    properties: &[&calcard::vcard::VCardEntry],
    filters: &[ParamFilter],
    test: Test,
) -> bool {
    for filter in filters {
        let values: Vec<Vec<String>> = properties
            .iter()
            .filter_map(|entry| vcard::parameter_values(entry, &filter.name))
            .collect();
        let is_defined = !values.is_empty();
        let success = if filter.is_not_defined {
            !is_defined
        } else {
            match (&filter.text_match, is_defined) {
                (None, _) | (_, false) => is_defined,
                (Some(text_match), true) => {
                    values.iter().any(|parts| text_match.matches(&parts.join(",")))
                }
            }
        };
        if test == Test::AnyOf && success {
            return true;
        }
        if test == Test::AllOf && !success {
            return false;
        }
    }
    test == Test::AllOf
}

fn text_matches_hold(texts: &[String], text_matches: &[TextMatch], test: Test) -> bool {
    for text_match in text_matches {
        let success = texts.iter().any(|text| text_match.matches(text));
        if success && test == Test::AnyOf {
            return true;
        }
        if !success && test == Test::AllOf {
            return false;
        }
    }
    test == Test::AllOf
}

fn card_response(
    caller: &Caller<'_>,
    card: &Card,
    href: &str,
    properties: &PropertyRequest,
    reduce_to: &[String],
) -> String {
    let mut set = collection::member_properties::<CardDav>(caller, card);
    if !reduce_to.is_empty()
        && let Some(value) =
            set.values.iter_mut().find(|value| value.name.is(xml::CARDDAV, "address-data"))
    {
        value.inner_xml = xml::escape(&vcard::reduced(&card.data, reduce_to));
    }
    set.response(href, properties, caller.minimal)
}

fn address_book_query(
    request: &DavRequest,
    caller: &Caller<'_>,
    book: &AddressBook,
    card: Option<&str>,
    root: &Element,
) -> Result<Response, DavError> {
    let uid = caller.user.uid.as_str();
    let query = parse_query(root).map_err(DavError::BadRequest)?;
    let candidates: Vec<&Card> = match (request.depth(Depth::Zero), card) {
        (Depth::Zero, Some(card_uri)) => book.members.get(card_uri).into_iter().collect(),
        (Depth::Zero, None) => {
            return Err(DavError::report_not_supported(
                "The addressbook-query report is not supported on this url with Depth: 0",
            ));
        }
        (_, Some(_)) => Vec::new(),
        (_, None) => book.members.values().collect(),
    };
    let mut responses = Vec::new();
    for candidate in candidates {
        if !card_matches(&candidate.data, &query.filters, query.test) {
            continue;
        }
        responses.push(card_response(
            caller,
            candidate,
            &caller.member_href::<CardDav>(uid, &book.uri, &candidate.uri),
            &query.properties,
            &query.address_data_properties,
        ));
        if query.limit.is_some_and(|limit| responses.len() >= limit) {
            break;
        }
    }
    Ok(webdav::varying_multistatus(&responses))
}

fn multiget(world: &World, caller: &Caller<'_>, root: &Element) -> Result<Response, DavError> {
    let properties = crate::caldav::report_properties(root);
    let reduce_to = root
        .child(xml::DAV, "prop")
        .and_then(|prop| prop.child(xml::CARDDAV, "address-data"))
        .map(address_data_properties)
        .unwrap_or_default();
    let responses = collection::multiget::<CardDav>(world, caller, root, |card, href| {
        card_response(caller, card, href, &properties, &reduce_to)
    });
    Ok(webdav::multistatus(&responses, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHLOE: &str = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:chloe@tamebi.demo\r\nFN:Chloé Dubois\r\nN:Dubois;Chloé;;;\r\nORG:Finance\r\nEMAIL;TYPE=WORK:chloe.dubois@example.com\r\nNOTE:Valide le budget du projet Apollo.\r\nEND:VCARD\r\n";

    fn query(filter_xml: &str) -> AddressBookQuery {
        let body = format!(
            r#"<c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:prop><d:getetag/></d:prop>{filter_xml}</c:addressbook-query>"#
        );
        parse_query(&xml::parse(body.as_bytes()).expect("xml")).expect("query")
    }

    fn matches(filter_xml: &str) -> bool {
        let data = vcard::parse_card_data(CHLOE).expect("valid");
        let query = query(filter_xml);
        card_matches(&data, &query.filters, query.test)
    }

    #[test]
    fn text_matches_use_unicode_casemap_by_default() {
        assert!(matches(
            r#"<c:filter><c:prop-filter name="FN"><c:text-match>chloé</c:text-match></c:prop-filter></c:filter>"#
        ));
        assert!(!matches(
            r#"<c:filter><c:prop-filter name="FN"><c:text-match collation="i;octet">chloé</c:text-match></c:prop-filter></c:filter>"#
        ));
        assert!(matches(
            r#"<c:filter><c:prop-filter name="EMAIL"><c:text-match match-type="starts-with">CHLOE.</c:text-match></c:prop-filter></c:filter>"#
        ));
        assert!(matches(
            r#"<c:filter><c:prop-filter name="ORG"><c:text-match match-type="equals">finance</c:text-match></c:prop-filter></c:filter>"#
        ));
        assert!(!matches(
            r#"<c:filter><c:prop-filter name="ORG"><c:text-match match-type="equals">fin</c:text-match></c:prop-filter></c:filter>"#
        ));
    }

    #[test]
    fn anyof_and_allof_combine_prop_filters() {
        let both = |test: &str| {
            format!(
                r#"<c:filter test="{test}"><c:prop-filter name="NOTE"><c:text-match>apollo</c:text-match></c:prop-filter><c:prop-filter name="TEL"/></c:filter>"#
            )
        };
        assert!(matches(&both("anyof")));
        assert!(!matches(&both("allof")));
        assert!(matches(
            r#"<c:filter><c:prop-filter name="TEL"><c:is-not-defined/></c:prop-filter></c:filter>"#
        ));
        assert!(matches(
            r#"<c:filter><c:prop-filter name="EMAIL"><c:param-filter name="TYPE"><c:text-match>work</c:text-match></c:param-filter></c:prop-filter></c:filter>"#
        ));
        assert!(matches(""), "no filter matches everything");
    }

    #[test]
    fn limits_and_bad_attributes_are_read() {
        assert_eq!(query("<c:limit><c:nresults>2</c:nresults></c:limit>").limit, Some(2));
        let body = r#"<c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><c:filter test="sometimes"/></c:addressbook-query>"#;
        assert!(parse_query(&xml::parse(body.as_bytes()).expect("xml")).is_err());
    }
}
