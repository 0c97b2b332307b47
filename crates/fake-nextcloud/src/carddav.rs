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

mod photo;
mod report;
pub mod vcard;

use crate::Shared;
use crate::caldav::webdav::{PropertySet, PropertyUpdate};
use crate::caldav::{Caller, options};
use crate::dav::collection::{
    self, Collection, FixtureCollection, FixtureEntry, FixtureMember, Homes, Kind, Member,
    MemberData,
};
use crate::dav::{DavError, DavRequest};
use crate::fixture::{AddressBookFixture, Fixture};
use crate::world::{User, World};
use crate::xml;
use axum::response::Response;
use http::Method;
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
pub type AddressBooks = Homes<CardDav>;
pub type AddressBook = Collection<CardDav>;
/// One vCard resource (`.vcf`).
pub type Card = Member<CardData>;

/// Address books as a kind of DAV collection.
#[derive(Debug, Clone)]
pub struct CardDav;

impl MemberData for CardData {
    fn text(&self) -> &str {
        &self.text
    }

    fn uid(&self) -> &str {
        &self.uid
    }

    fn repaired(&self) -> bool {
        self.repaired
    }
}

impl Homes<CardDav> {
    /// Seeds address books from the fixture and gives every user without
    /// one Nextcloud's default "Contacts".
    pub fn from_fixture(
        fixture: &Fixture,
        users: &BTreeMap<String, User>,
        now: i64,
        problems: &mut Vec<String>,
    ) -> AddressBooks {
        let mut books =
            AddressBooks::seed_fixture(fixture, &fixture.addressbooks, users, &[], now, problems);
        books.first_login(users);
        books
    }

    /// The contacts address book Nextcloud creates at a user's first
    /// login, for each of `users` without one.
    pub fn first_login(&mut self, users: &BTreeMap<String, User>) {
        self.ensure_first_login(users, DEFAULT_ADDRESS_BOOK_URI, |book| {
            book.display_name = Some(DEFAULT_ADDRESS_BOOK_NAME.to_string());
        });
    }
}

impl FixtureCollection<CardDav> for AddressBookFixture {
    fn entry(&self) -> FixtureEntry<'_> {
        let cards = self.cards.iter();
        FixtureEntry {
            owner: &self.owner,
            uri: &self.uri,
            display_name: &self.display_name,
            members: cards.map(|c| FixtureMember::new(&c.uri, &c.vcf, &c.source)).collect(),
        }
    }
}

pub async fn handle(shared: &Shared, request: DavRequest) -> Response {
    collection::handle(shared, &request, route)
}

fn route(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    segments: &[String],
) -> Result<Response, DavError> {
    let uid = caller.user.uid.as_str();
    if request.method == Method::OPTIONS
        && let Some(allow) = allowed_methods(world, uid, segments)
    {
        return Ok(options(allow));
    }
    // `/addressbooks/` and `/addressbooks/users/` are plain collections that
    // lead to the caller's own home.
    let users_root = format!("{ADDRESSBOOKS_ROOT}users/");
    let above_home = || collection::above_home_properties(caller);
    match segments {
        [] => {
            collection::above_home(request, caller, ADDRESSBOOKS_ROOT, (&users_root, above_home()))
        }
        [users] if users == "users" => collection::above_home(
            request,
            caller,
            &users_root,
            (&collection::home_href::<CardDav>(uid), above_home()),
        ),
        [users, owner, name, ..] if users == "users" && owner != uid => {
            Err(CardDav::missing_collection(name))
        }
        [users, owner] if users == "users" && owner != uid => Err(DavError::not_found()),
        [users, _] if users == "users" => collection::home::<CardDav>(world, request, caller),
        [users, _, name] if users == "users" => {
            collection::collection::<CardDav>(world, request, caller, name)
        }
        [users, _, name, card] if users == "users" && photo::is_export(request) => {
            photo::export(world, uid, name, card)
        }
        [users, _, name, card] if users == "users" => {
            collection::member::<CardDav>(world, request, caller, name, card)
        }
        // sabre's SimpleCollection: only `users` lies below `/addressbooks/`.
        [first, ..] if first != "users" => {
            Err(DavError::NotFound(format!("File not found: {first} in 'addressbooks'")))
        }
        _ => Err(DavError::not_found()),
    }
}

/// The methods OPTIONS lists for a path of the caller's; `None` where
/// OPTIONS is answered like any other method (a 404).
fn allowed_methods(world: &World, uid: &str, segments: &[String]) -> Option<&'static str> {
    let book_exists = |name: &str| world.address_books.get(uid, name).is_some();
    match segments {
        [] => Some("OPTIONS, GET, HEAD, PROPFIND, REPORT"),
        [users, rest @ ..] if users == "users" => match rest {
            [] => Some("OPTIONS, GET, HEAD, PROPFIND, REPORT"),
            [owner, ..] if owner != uid => None,
            [_] => Some("OPTIONS, GET, HEAD, PROPFIND, REPORT"),
            [_, name] if book_exists(name) => Some(collection::COLLECTION_ALLOW),
            [_, _] => Some("OPTIONS, MKCOL"),
            [_, name, _] if book_exists(name) => {
                Some("OPTIONS, GET, HEAD, DELETE, PROPFIND, PUT, PROPPATCH, REPORT")
            }
            _ => None,
        },
        _ => None,
    }
}

const ADDRESS_BOOK_REPORTS: &[(&str, &str)] = &[
    (xml::CARDDAV, "addressbook-multiget"),
    (xml::CARDDAV, "addressbook-query"),
    (xml::DAV, "sync-collection"),
];

const CARD_CONTENT_TYPE: &str = "text/vcard; charset=utf-8";

impl Kind for CardDav {
    fn missing_collection(name: &str) -> DavError {
        DavError::NotFound(format!("Addressbook with name '{name}' could not be found"))
    }

    type Data = CardData;
    type Extra = ();
    type ParseError = InvalidCardData;

    const ROOT: &'static str = ADDRESSBOOKS_ROOT;
    const HOME_PREFIX: &'static [&'static str] = &["users"];
    const COLLECTION_NOUN: &'static str = "address book";
    const HOME_NOUN: &'static str = "an address book home";
    const HOME_ALLOW: &'static str = "OPTIONS, PROPFIND";
    const MEMBER_NOUN: &'static str = "card";
    const FIXTURE_MEMBER_NOUN: &'static str = "card";
    const RESOURCE_NOUN: &'static str = "vCard";
    const FIXTURE_FIELD: &'static str = "vcf";
    const FORMAT: &'static str = "vCard";
    const NOT_UTF8: &'static str =
        "This resource only supports valid vCard data. Parse error: the body is not UTF-8";
    const MAX_RESOURCE_SIZE: usize = MAX_RESOURCE_SIZE;
    const CREATE_METHODS: &'static [&'static str] = &["MKCOL"];
    const CREATE_ALLOW: &'static str = "OPTIONS, MKCOL";
    // Address books are only made by extended MKCOL.
    const CREATE_ELEMENT: (&'static str, &'static str) = (xml::DAV, "mkcol");
    const RESOURCETYPE: (&'static str, &'static str) = (xml::CARDDAV, "addressbook");
    const NAME_BEFORE_BODY: bool = false;
    const DATA_PROPERTY: (&'static str, &'static str) = (xml::CARDDAV, "address-data");
    const MEMBER_REPORTS: &'static [(&'static str, &'static str)] =
        &[(xml::CARDDAV, "addressbook-multiget"), (xml::CARDDAV, "addressbook-query")];

    fn homes(world: &World) -> &AddressBooks {
        &world.address_books
    }

    fn homes_mut(world: &mut World) -> &mut AddressBooks {
        &mut world.address_books
    }

    const COLLECTION_REPORTS: &'static [(&'static str, &'static str)] = ADDRESS_BOOK_REPORTS;

    fn own_properties(set: &mut PropertySet, caller: &Caller<'_>, book: &AddressBook) {
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
    }

    fn content_type(_card: &Card) -> String {
        CARD_CONTENT_TYPE.to_string()
    }

    fn apply_property(book: &mut AddressBook, update: &PropertyUpdate, creating: bool) -> u16 {
        let name = update.name();
        let text = match update {
            PropertyUpdate::Set(element) => Some(element.text()),
            PropertyUpdate::Remove(_) => None,
        };
        match (name.ns.as_str(), name.local.as_str()) {
            (xml::DAV, "displayname") => book.display_name = text,
            (xml::CARDDAV, "addressbook-description") => book.description = text,
            (xml::DAV, "resourcetype") if creating => {}
            (xml::DAV, _)
            | (xml::CALSERVER, "getctag")
            | (xml::CARDDAV, _)
            | (xml::OC, "owner-principal") => return 403,
            _ => collection::apply_dead_property(book, update),
        }
        200
    }

    fn prepare_new(_book: &mut AddressBook) {}

    fn parse(text: &str, _book: &AddressBook, _now: i64) -> Result<CardData, InvalidCardData> {
        vcard::parse_card_data(text)
    }

    fn invalid(error: InvalidCardData, _book: &AddressBook) -> DavError {
        match error {
            InvalidCardData::Parse(message) => DavError::unsupported_media_type(format!(
                "This resource only supports valid vCard data. Parse error: {message}"
            )),
            InvalidCardData::NotACard => {
                DavError::unsupported_media_type("This collection can only support vcard objects.")
            }
            InvalidCardData::Validation(message) => {
                DavError::unsupported_media_type(format!("Validation error in vCard: {message}"))
            }
        }
    }

    /// Nextcloud's CardDavBackend refuses a second card with a UID.
    fn uid_conflict(_other_href: &str) -> DavError {
        DavError::bad_request(
            "VCard object with uid already exists in this addressbook collection.",
        )
    }

    const REPORT: collection::Report = report::address_book_report;

    fn other_member_method(
        _world: &mut World,
        request: &DavRequest,
        _caller: &Caller<'_>,
        _book_uri: &str,
        _card_uri: &str,
    ) -> Result<Response, DavError> {
        match request.method.as_str() {
            "MKCOL" => Err(DavError::method_not_allowed(
                "Collections cannot be created inside an address book",
                "OPTIONS, PUT",
            )),
            other => Err(DavError::no_plugin_for(other)),
        }
    }
}
