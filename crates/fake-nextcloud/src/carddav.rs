//! CardDAV at `/remote.php/dav/addressbooks/users/{uid}/`.
//!
//! Shaped like Nextcloud's sabre/dav CardDAV: an address book home per
//! user, address books with `http://sabre.io/ns/sync/N` sync tokens from a
//! change log, vCards validated (and repaired) like sabre's CardDAV plugin,
//! addressbook-query filtered by its `validateFilters`. A user only reaches
//! their own home; anything else is a 404.
//!
//! One difference is deliberate: sabre converts vCards to the version a
//! client negotiates (3.0 by default) on GET and in `address-data`; this
//! fake serves them as stored. It is listed in `docs/caldav-differences.md`.

#![allow(
    clippy::result_large_err,
    reason = "an Err here is the HTTP answer itself, built once and returned at once; boxing it buys nothing"
)]

mod report;
pub mod vcard;

use crate::Shared;
use crate::caldav::webdav::{
    self, ChangeLog, Operation, PropertyName, PropertySet, PropertyUpdate,
};
use crate::caldav::{Caller, common_properties, options};
use crate::dav::{DavRequest, Depth};
use crate::fixture::Fixture;
use crate::world::{User, World};
use crate::xml;
use axum::response::{IntoResponse, Response};
use http::{Method, StatusCode};
use std::collections::BTreeMap;
use vcard::{CardData, InvalidCardData};

/// Where address book homes live.
pub const ADDRESSBOOKS_ROOT: &str = "/remote.php/dav/addressbooks/";
/// The address book Nextcloud creates on first login when a user has none.
pub const DEFAULT_ADDRESS_BOOK_URI: &str = "contacts";
pub const DEFAULT_ADDRESS_BOOK_NAME: &str = "Contacts";
/// sabre's `{CARDDAV:}max-resource-size`.
pub const MAX_RESOURCE_SIZE: usize = 10_000_000;

/// Every user's address books.
#[derive(Debug, Default)]
pub struct AddressBooks {
    /// owner uid → address book uri → address book.
    homes: BTreeMap<String, BTreeMap<String, AddressBook>>,
    next_address_book_id: u64,
}

#[derive(Debug, Clone)]
pub struct AddressBook {
    pub id: u64,
    pub uri: String,
    pub display_name: Option<String>,
    pub description: Option<String>,
    /// card uri → card.
    pub cards: BTreeMap<String, Card>,
    pub changes: ChangeLog,
    pub dead_properties: BTreeMap<PropertyName, String>,
}

/// One vCard resource (`.vcf`).
#[derive(Debug, Clone)]
pub struct Card {
    pub uri: String,
    pub data: CardData,
    pub etag: String,
    pub last_modified: i64,
}

impl AddressBook {
    fn new(id: u64, uri: &str) -> AddressBook {
        AddressBook {
            id,
            uri: uri.to_string(),
            display_name: None,
            description: None,
            cards: BTreeMap::new(),
            changes: ChangeLog::new(),
            dead_properties: BTreeMap::new(),
        }
    }

    fn card_with_uid(&self, uid: &str, except_uri: &str) -> Option<&Card> {
        self.cards.values().find(|card| card.data.uid == uid && card.uri != except_uri)
    }

    fn store(&mut self, uri: &str, data: CardData, now: i64) -> &Card {
        let operation =
            if self.cards.contains_key(uri) { Operation::Modified } else { Operation::Added };
        let etag = webdav::etag_of(data.text.as_bytes());
        self.cards
            .insert(uri.to_string(), Card { uri: uri.to_string(), data, etag, last_modified: now });
        self.changes.record(uri, operation);
        &self.cards[uri]
    }

    fn remove(&mut self, uri: &str) -> Option<Card> {
        let removed = self.cards.remove(uri)?;
        self.changes.record(uri, Operation::Deleted);
        Some(removed)
    }
}

impl AddressBooks {
    /// Seeds address books from the fixture and gives every user without
    /// one Nextcloud's default "Contacts".
    pub fn from_fixture(
        fixture: &Fixture,
        users: &BTreeMap<String, User>,
        now: i64,
        problems: &mut Vec<String>,
    ) -> AddressBooks {
        let mut books = AddressBooks::default();
        for book_fixture in &fixture.addressbooks {
            let label = format!("address book {}/{}", book_fixture.owner, book_fixture.uri);
            if !users.contains_key(&book_fixture.owner) {
                problems.push(format!("{label}: unknown owner {:?}", book_fixture.owner));
                continue;
            }
            if !webdav::is_valid_name(&book_fixture.uri) {
                problems.push(format!(
                    "{label}: {:?} is not a valid address book uri",
                    book_fixture.uri
                ));
                continue;
            }
            if books.get(&book_fixture.owner, &book_fixture.uri).is_some() {
                problems.push(format!("{label}: defined twice"));
                continue;
            }
            let book = books.create(&book_fixture.owner, &book_fixture.uri);
            book.display_name = book_fixture.display_name.clone();
            for (index, card) in book_fixture.cards.iter().enumerate() {
                let label = format!("{label} card #{}", index + 1);
                let text = match (&card.vcf, &card.source) {
                    (Some(vcf), None) => vcf.clone(),
                    (None, Some(source)) => {
                        match fixture.read_source(source).map(String::from_utf8) {
                            Ok(Ok(text)) => text,
                            Ok(Err(_)) => {
                                problems.push(format!("{label}: {source} is not UTF-8"));
                                continue;
                            }
                            Err(message) => {
                                problems.push(format!("{label}: {message}"));
                                continue;
                            }
                        }
                    }
                    _ => {
                        problems.push(format!("{label}: needs exactly one of vcf or source"));
                        continue;
                    }
                };
                let data = match vcard::parse_card_data(&text) {
                    Ok(data) => data,
                    Err(error) => {
                        problems.push(format!("{label}: invalid vCard: {error}"));
                        continue;
                    }
                };
                let uri = card.uri.clone().unwrap_or_else(|| format!("{}.vcf", data.uid));
                if !webdav::is_valid_name(&uri) {
                    problems.push(format!("{label}: {uri:?} is not a valid card uri"));
                    continue;
                }
                if book.cards.contains_key(&uri) {
                    problems.push(format!("{label}: uri {uri:?} is used twice"));
                    continue;
                }
                if let Some(other) = book.card_with_uid(&data.uid, &uri) {
                    problems.push(format!(
                        "{label}: UID {:?} is already used by {:?}",
                        data.uid, other.uri
                    ));
                    continue;
                }
                book.store(&uri, data, now);
            }
        }
        for uid in users.keys() {
            if books.homes.get(uid).is_none_or(BTreeMap::is_empty) {
                let book = books.create(uid, DEFAULT_ADDRESS_BOOK_URI);
                book.display_name = Some(DEFAULT_ADDRESS_BOOK_NAME.to_string());
            }
        }
        books
    }

    fn create(&mut self, owner: &str, uri: &str) -> &mut AddressBook {
        assert!(self.get(owner, uri).is_none(), "address book {owner}/{uri} exists");
        self.next_address_book_id += 1;
        let book = AddressBook::new(self.next_address_book_id, uri);
        self.homes.entry(owner.to_string()).or_default().entry(uri.to_string()).or_insert(book)
    }

    pub fn get(&self, owner: &str, uri: &str) -> Option<&AddressBook> {
        self.homes.get(owner)?.get(uri)
    }

    pub fn get_mut(&mut self, owner: &str, uri: &str) -> Option<&mut AddressBook> {
        self.homes.get_mut(owner)?.get_mut(uri)
    }

    /// A user's address books in uri order.
    pub fn of(&self, owner: &str) -> impl Iterator<Item = &AddressBook> {
        self.homes.get(owner).into_iter().flat_map(|home| home.values())
    }
}

pub fn home_href(uid: &str) -> String {
    format!("{ADDRESSBOOKS_ROOT}users/{}/", crate::dav::encode_segment(uid))
}

fn book_href(uid: &str, uri: &str) -> String {
    format!("{}{}/", home_href(uid), crate::dav::encode_segment(uri))
}

fn card_href(uid: &str, book: &str, card: &str) -> String {
    format!("{}{}", book_href(uid, book), crate::dav::encode_segment(card))
}

pub async fn handle(shared: &Shared, request: DavRequest) -> Response {
    let now = shared.now();
    let mut world = shared.world();
    handle_locked(&mut world, &request, now)
}

fn handle_locked(world: &mut World, request: &DavRequest, now: i64) -> Response {
    let Some(segments) = webdav::decode_path(&request.path) else {
        return crate::dav::not_found();
    };
    let Some(user) = world.users.get(&request.user.uid).cloned() else {
        return crate::dav::not_found();
    };
    let caller = Caller { user: &user, now, minimal: webdav::prefers_minimal(request) };
    match segments.as_slice() {
        [] => collection(
            request,
            &caller,
            ADDRESSBOOKS_ROOT,
            Some(&format!("{ADDRESSBOOKS_ROOT}users/")),
        ),
        [users] if users == "users" => collection(
            request,
            &caller,
            &format!("{ADDRESSBOOKS_ROOT}users/"),
            Some(&home_href(&user.uid)),
        ),
        [users, owner, ..] if users == "users" && *owner != user.uid => crate::dav::not_found(),
        [users, _] if users == "users" => home(world, request, &caller),
        [users, _, name] if users == "users" => address_book(world, request, &caller, name),
        [users, _, name, card] if users == "users" => {
            card_resource(world, request, &caller, name, card)
        }
        _ => crate::dav::not_found(),
    }
}

/// `/addressbooks/` and `/addressbooks/users/`: plain collections that
/// lead to the caller's own home.
fn collection(
    request: &DavRequest,
    caller: &Caller<'_>,
    href: &str,
    child: Option<&str>,
) -> Response {
    match request.method.as_str() {
        "OPTIONS" => options("OPTIONS, GET, HEAD, PROPFIND, REPORT"),
        "PROPFIND" => {
            let properties = match webdav::parse_propfind(&request.body) {
                Ok(properties) => properties,
                Err(response) => return response,
            };
            let mut set = PropertySet::new();
            set.xml(xml::DAV, "resourcetype", "<d:collection/>");
            set.href(
                xml::DAV,
                "current-user-principal",
                &crate::caldav::principal_href(&caller.user.uid),
            );
            let mut responses = vec![set.response(href, &properties, caller.minimal)];
            if request.depth(Depth::One) != Depth::Zero
                && let Some(child) = child
            {
                responses.push(set.response(child, &properties, caller.minimal));
            }
            webdav::multistatus(&responses, None)
        }
        _ => webdav::method_not_allowed("This method is not allowed here", "OPTIONS, PROPFIND"),
    }
}

const ADDRESS_BOOK_REPORTS: &[(&str, &str)] = &[
    (xml::CARDDAV, "addressbook-multiget"),
    (xml::CARDDAV, "addressbook-query"),
    (xml::DAV, "sync-collection"),
];

fn home_properties(caller: &Caller<'_>) -> PropertySet {
    let mut set = PropertySet::new();
    set.xml(xml::DAV, "resourcetype", "<d:collection/>");
    common_properties(&mut set, caller, &[]);
    set
}

fn book_properties(caller: &Caller<'_>, book: &AddressBook) -> PropertySet {
    let mut set = PropertySet::new();
    set.xml(xml::DAV, "resourcetype", "<d:collection/><card:addressbook/>");
    set.text_if(xml::DAV, "displayname", book.display_name.as_deref());
    set.text_if(xml::CARDDAV, "addressbook-description", book.description.as_deref());
    // Unlike calendars, sabre's and Nextcloud's address book backends give
    // the bare sync token number as the ctag.
    set.text(xml::CALSERVER, "getctag", &book.changes.sync_token().to_string());
    set.text(xml::DAV, "sync-token", &book.changes.sync_token_uri());
    set.xml(
        xml::CARDDAV,
        "supported-address-data",
        "<card:address-data-type content-type=\"text/vcard\" version=\"3.0\"/><card:address-data-type content-type=\"text/vcard\" version=\"4.0\"/>",
    );
    set.text(xml::CARDDAV, "max-resource-size", &MAX_RESOURCE_SIZE.to_string());
    set.text(xml::OC, "owner-principal", &format!("principals/users/{}", caller.user.uid));
    common_properties(&mut set, caller, ADDRESS_BOOK_REPORTS);
    for (name, inner_xml) in &book.dead_properties {
        set.xml(&name.ns, &name.local, inner_xml.clone());
    }
    set
}

const CARD_CONTENT_TYPE: &str = "text/vcard; charset=utf-8";

fn card_properties(caller: &Caller<'_>, card: &Card) -> PropertySet {
    let mut set = PropertySet::new();
    set.xml(xml::DAV, "resourcetype", "");
    set.text(xml::DAV, "getetag", &card.etag);
    set.text(xml::DAV, "getcontenttype", CARD_CONTENT_TYPE);
    set.text(xml::DAV, "getcontentlength", &card.data.text.len().to_string());
    set.text(xml::DAV, "getlastmodified", &crate::clock::http_date(card.last_modified));
    set.text(xml::CARDDAV, "address-data", &card.data.text);
    common_properties(
        &mut set,
        caller,
        &[(xml::CARDDAV, "addressbook-multiget"), (xml::CARDDAV, "addressbook-query")],
    );
    set
}

fn home(world: &mut World, request: &DavRequest, caller: &Caller<'_>) -> Response {
    let uid = caller.user.uid.as_str();
    match request.method.as_str() {
        "OPTIONS" => options("OPTIONS, GET, HEAD, PROPFIND, REPORT"),
        "PROPFIND" => {
            let properties = match webdav::parse_propfind(&request.body) {
                Ok(properties) => properties,
                Err(response) => return response,
            };
            let mut responses = vec![home_properties(caller).response(
                &home_href(uid),
                &properties,
                caller.minimal,
            )];
            if request.depth(Depth::One) != Depth::Zero {
                for book in world.address_books.of(uid) {
                    responses.push(book_properties(caller, book).response(
                        &book_href(uid, &book.uri),
                        &properties,
                        caller.minimal,
                    ));
                }
            }
            webdav::multistatus(&responses, None)
        }
        "MKCOL" => webdav::method_not_allowed(
            "The resource you tried to create already exists",
            "OPTIONS, PROPFIND",
        ),
        "REPORT" => match webdav::parse_body(&request.body) {
            Ok(_) => {
                webdav::report_not_supported("The REPORT is not supported on an address book home")
            }
            Err(response) => response,
        },
        "GET" | "HEAD" => webdav::not_implemented("GET is only implemented on File objects"),
        _ => webdav::method_not_allowed(
            "This method is not allowed on an address book home",
            "OPTIONS, PROPFIND",
        ),
    }
}

fn address_book(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    name: &str,
) -> Response {
    let uid = caller.user.uid.clone();
    let Some(book) = world.address_books.get(&uid, name) else {
        return match request.method.as_str() {
            "MKCOL" => make_address_book(world, request, caller, name),
            "OPTIONS" => options("OPTIONS, MKCOL"),
            "PUT" => webdav::method_not_allowed(
                "Creating new files in this collection is not supported",
                "OPTIONS, MKCOL",
            ),
            _ => crate::dav::not_found(),
        };
    };
    let allow = "OPTIONS, GET, HEAD, DELETE, PROPFIND, PROPPATCH, COPY, MOVE, REPORT";
    match request.method.as_str() {
        "OPTIONS" => options(allow),
        "PROPFIND" => {
            let properties = match webdav::parse_propfind(&request.body) {
                Ok(properties) => properties,
                Err(response) => return response,
            };
            let mut responses = vec![book_properties(caller, book).response(
                &book_href(&uid, name),
                &properties,
                caller.minimal,
            )];
            if request.depth(Depth::One) != Depth::Zero {
                for card in book.cards.values() {
                    responses.push(card_properties(caller, card).response(
                        &card_href(&uid, name, &card.uri),
                        &properties,
                        caller.minimal,
                    ));
                }
            }
            webdav::multistatus(&responses, None)
        }
        "PROPPATCH" => proppatch_address_book(world, request, caller, name),
        "DELETE" => {
            if let Some(home) = world.address_books.homes.get_mut(&uid) {
                home.remove(name);
            }
            StatusCode::NO_CONTENT.into_response()
        }
        "REPORT" => report::address_book_report(world, request, caller, name, None),
        "MKCOL" => {
            webdav::method_not_allowed("The resource you tried to create already exists", allow)
        }
        "GET" | "HEAD" => webdav::not_implemented("GET is only implemented on File objects"),
        "PUT" => webdav::method_not_allowed("PUT is not allowed on non-files.", allow),
        other => webdav::not_implemented(&format!(
            "There was no plugin in the system that was willing to handle this {other} method."
        )),
    }
}

fn apply_book_properties(
    book: &mut AddressBook,
    updates: &[PropertyUpdate],
    creating: bool,
) -> Vec<(PropertyName, u16)> {
    let mut staged = book.clone();
    let mut results = Vec::new();
    for update in updates {
        let name = update.name();
        let value = match update {
            PropertyUpdate::Set(element) => Some(element),
            PropertyUpdate::Remove(_) => None,
        };
        let status = match (name.ns.as_str(), name.local.as_str()) {
            (xml::DAV, "displayname") => {
                staged.display_name = value.map(|element| element.text());
                200
            }
            (xml::CARDDAV, "addressbook-description") => {
                staged.description = value.map(|element| element.text());
                200
            }
            (xml::DAV, "resourcetype") if creating => 200,
            (xml::DAV, _)
            | (xml::CALSERVER, "getctag")
            | (xml::CARDDAV, _)
            | (xml::OC, "owner-principal") => 403,
            _ => {
                match value {
                    Some(element) => {
                        staged.dead_properties.insert(name.clone(), element.inner_xml());
                    }
                    None => {
                        staged.dead_properties.remove(&name);
                    }
                }
                200
            }
        };
        results.push((name, status));
    }
    if results.iter().all(|(_, status)| *status == 200) {
        *book = staged;
    } else {
        for (_, status) in &mut results {
            if *status == 200 {
                *status = 424;
            }
        }
    }
    results
}

/// Extended MKCOL (RFC 5689) with resourcetype `card:addressbook`.
fn make_address_book(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    name: &str,
) -> Response {
    let uid = caller.user.uid.clone();
    if request.body.iter().all(u8::is_ascii_whitespace) {
        return webdav::method_not_allowed(
            "Creating collections in this collection is not allowed",
            "OPTIONS, MKCOL",
        );
    }
    if !webdav::is_valid_name(name) {
        return webdav::forbidden("This address book name is not allowed");
    }
    let root = match webdav::parse_body(&request.body) {
        Ok(root) => root,
        Err(response) => return response,
    };
    if !root.is(xml::DAV, "mkcol") {
        return webdav::bad_request("The request body must be a {DAV:}mkcol element");
    }
    let updates = webdav::property_updates(&root);
    let is_address_book = updates.iter().any(|update| match update {
        PropertyUpdate::Set(element) => {
            element.is(xml::DAV, "resourcetype")
                && element.child(xml::CARDDAV, "addressbook").is_some()
        }
        PropertyUpdate::Remove(_) => false,
    });
    if !is_address_book {
        return webdav::error_with_condition(
            StatusCode::FORBIDDEN,
            "Sabre\\DAV\\Exception\\InvalidResourceType",
            "Unknown resourceType for this collection",
            "<d:valid-resourcetype/>",
        );
    }
    let mut book = AddressBook::new(0, name);
    let results = apply_book_properties(&mut book, &updates, true);
    if results.iter().any(|(_, status)| *status != 200) {
        return webdav::proppatch_response(&book_href(&uid, name), &results);
    }
    let created = world.address_books.create(&uid, name);
    let id = created.id;
    *created = AddressBook { id, ..book };
    (StatusCode::CREATED, [(http::header::CONTENT_LENGTH, "0")]).into_response()
}

fn proppatch_address_book(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    name: &str,
) -> Response {
    let root = match webdav::parse_body(&request.body) {
        Ok(root) => root,
        Err(response) => return response,
    };
    if !root.is(xml::DAV, "propertyupdate") {
        return webdav::bad_request(
            "The root element of a PROPPATCH request must be {DAV:}propertyupdate",
        );
    }
    let updates = webdav::property_updates(&root);
    let Some(book) = world.address_books.get_mut(&caller.user.uid, name) else {
        return crate::dav::not_found();
    };
    let results = apply_book_properties(book, &updates, false);
    if !updates.is_empty() && results.iter().all(|(_, status)| *status == 200) {
        book.changes.record("", Operation::Modified);
    }
    webdav::proppatch_response(&book_href(&caller.user.uid, name), &results)
}

fn card_resource(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    book_uri: &str,
    card_uri: &str,
) -> Response {
    let uid = caller.user.uid.clone();
    let Some(book) = world.address_books.get(&uid, book_uri) else {
        return match request.method.as_str() {
            "PUT" => webdav::conflict("Files cannot be created in non-existent collections"),
            _ => crate::dav::not_found(),
        };
    };
    let existing = book.cards.get(card_uri);
    if request.method == Method::OPTIONS {
        return options("OPTIONS, GET, HEAD, DELETE, PROPFIND, PUT, PROPPATCH, REPORT");
    }
    match request.method.as_str() {
        "GET" | "HEAD" => match existing {
            Some(card) => {
                let body = if request.method == Method::HEAD {
                    String::new()
                } else {
                    card.data.text.clone()
                };
                (
                    StatusCode::OK,
                    [
                        (http::header::CONTENT_TYPE, CARD_CONTENT_TYPE.to_string()),
                        (http::header::ETAG, card.etag.clone()),
                        (http::header::LAST_MODIFIED, crate::clock::http_date(card.last_modified)),
                        (http::header::CONTENT_LENGTH, card.data.text.len().to_string()),
                    ],
                    body,
                )
                    .into_response()
            }
            None => crate::dav::not_found(),
        },
        "PUT" => put_card(world, request, caller, book_uri, card_uri),
        "DELETE" => {
            let Some(card) = existing else {
                return crate::dav::not_found();
            };
            if let Err(response) = webdav::check_preconditions(request, Some(&card.etag)) {
                return response;
            }
            if let Some(book) = world.address_books.get_mut(&uid, book_uri) {
                book.remove(card_uri);
            }
            StatusCode::NO_CONTENT.into_response()
        }
        "PROPFIND" => {
            let Some(card) = existing else {
                return crate::dav::not_found();
            };
            match webdav::parse_propfind(&request.body) {
                Ok(properties) => webdav::multistatus(
                    &[card_properties(caller, card).response(
                        &card_href(&uid, book_uri, card_uri),
                        &properties,
                        caller.minimal,
                    )],
                    None,
                ),
                Err(response) => response,
            }
        }
        "REPORT" => {
            if existing.is_none() {
                return crate::dav::not_found();
            }
            report::address_book_report(world, request, caller, book_uri, Some(card_uri))
        }
        "PROPPATCH" => {
            if existing.is_none() {
                return crate::dav::not_found();
            }
            let root = match webdav::parse_body(&request.body) {
                Ok(root) => root,
                Err(response) => return response,
            };
            let results: Vec<(PropertyName, u16)> =
                webdav::property_updates(&root).iter().map(|update| (update.name(), 403)).collect();
            webdav::proppatch_response(&card_href(&uid, book_uri, card_uri), &results)
        }
        "MKCOL" => webdav::method_not_allowed(
            "Collections cannot be created inside an address book",
            "OPTIONS, PUT",
        ),
        other => webdav::not_implemented(&format!(
            "There was no plugin in the system that was willing to handle this {other} method."
        )),
    }
}

fn put_card(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    book_uri: &str,
    card_uri: &str,
) -> Response {
    let uid = caller.user.uid.clone();
    let Some(book) = world.address_books.get_mut(&uid, book_uri) else {
        return webdav::conflict("Files cannot be created in non-existent collections");
    };
    if !webdav::is_valid_name(card_uri) {
        return webdav::bad_request("This card name is not allowed");
    }
    let existing_etag = book.cards.get(card_uri).map(|card| card.etag.clone());
    if let Err(response) = webdav::check_preconditions(request, existing_etag.as_deref()) {
        return response;
    }
    if request.body.len() > MAX_RESOURCE_SIZE {
        return webdav::forbidden("The vCard is larger than max-resource-size");
    }
    let Ok(text) = std::str::from_utf8(&request.body) else {
        return webdav::unsupported_media_type(
            "This resource only supports valid vCard data. Parse error: the body is not UTF-8",
        );
    };
    let data = match vcard::parse_card_data(text) {
        Ok(data) => data,
        Err(InvalidCardData::Parse(message)) => {
            return webdav::unsupported_media_type(&format!(
                "This resource only supports valid vCard data. Parse error: {message}"
            ));
        }
        Err(InvalidCardData::NotACard) => {
            return webdav::unsupported_media_type(
                "This collection can only support vcard objects.",
            );
        }
        Err(InvalidCardData::Validation(message)) => {
            return webdav::unsupported_media_type(&format!(
                "Validation error in vCard: {message}"
            ));
        }
    };
    if book.card_with_uid(&data.uid, card_uri).is_some() {
        // Nextcloud's CardDavBackend refuses a second card with a UID.
        return webdav::bad_request(
            "VCard object with uid already exists in this addressbook collection.",
        );
    }
    let repaired = data.repaired;
    let created = existing_etag.is_none();
    let card = book.store(card_uri, data, caller.now);
    let status = if created { StatusCode::CREATED } else { StatusCode::NO_CONTENT };
    let mut response = (status, [(http::header::CONTENT_LENGTH, "0")]).into_response();
    if !repaired && let Ok(value) = http::HeaderValue::from_str(&card.etag) {
        response.headers_mut().insert(http::header::ETAG, value);
    }
    response
}

/// Reads `href`s of a multiget into (address book uri, card uri) of the
/// caller's own address books.
fn resolve_card_href(href: &str, uid: &str) -> Option<(String, String)> {
    let path = url::Url::parse(href)
        .map(|url| url.path().to_string())
        .unwrap_or_else(|_| href.to_string());
    let rest = path.strip_prefix(ADDRESSBOOKS_ROOT)?;
    let segments = webdav::decode_path(rest)?;
    match segments.as_slice() {
        [users, owner, book, card] if users == "users" && owner == uid => {
            Some((book.clone(), card.clone()))
        }
        _ => None,
    }
}
