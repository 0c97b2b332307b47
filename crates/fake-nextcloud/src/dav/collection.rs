//! The DAV collections CalDAV and CardDAV share, written once: every user's
//! home of collections (calendars, address books), each collection a
//! change-logged set of member resources (`.ics` objects, `.vcf` cards), and
//! the methods both protocols answer alike — PROPFIND, PROPPATCH, MKCOL /
//! MKCALENDAR, DELETE, GET/HEAD, PUT, and the multiget and sync-collection
//! REPORTs behind the sync tokens and ETags.
//!
//! What differs between the two is a [`Kind`]: the member format and how it
//! is validated, the properties, the words in sabre's messages, the method
//! lists, and the protocol's own REPORTs and methods. Each protocol module
//! keeps its routing (the paths differ) and calls in here per resource.

use crate::caldav::Caller;
use crate::caldav::webdav::{
    self, ChangeLog, Operation, PropertyName, PropertyRequest, PropertySet, PropertyUpdate,
    SyncPlan,
};
use crate::dav::{DavError, DavRequest, Depth};
use crate::fixture::Fixture;
use crate::world::{User, World};
use crate::xml::{self, Element};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use std::collections::BTreeMap;

/// What a collection needs to know of a member's parsed data.
pub trait MemberData: Clone + std::fmt::Debug {
    /// The stored text, served as it is.
    fn text(&self) -> &str;
    /// The UID, unique within a collection.
    fn uid(&self) -> &str;
    /// Whether validation changed the body (sabre then sends no ETag).
    fn repaired(&self) -> bool;
}

/// A kind of collection: calendars or address books.
pub trait Kind: Clone + std::fmt::Debug + Sized + 'static {
    type Data: MemberData;
    /// What a collection of this kind holds beyond the shared fields.
    type Extra: Clone + std::fmt::Debug + Default;
    /// Why a member's text is not valid.
    type ParseError: std::fmt::Display;

    /// Where homes live, e.g. `/remote.php/dav/calendars/`.
    const ROOT: &'static str;
    /// The segments between [`Kind::ROOT`] and the owner (`users` for
    /// address books, none for calendars).
    const HOME_PREFIX: &'static [&'static str];
    /// "calendar", "address book": in fixture problems and messages.
    const COLLECTION_NOUN: &'static str;
    /// "a calendar home", "an address book home".
    const HOME_NOUN: &'static str;
    /// The methods a home allows besides the ones it answers itself.
    const HOME_ALLOW: &'static str;
    /// "object", "card": in "This object name is not allowed".
    const MEMBER_NOUN: &'static str;
    /// "event", "card": a member's label in fixture problems.
    const FIXTURE_MEMBER_NOUN: &'static str;
    /// "calendar object", "vCard": in the max-resource-size refusal.
    const RESOURCE_NOUN: &'static str;
    /// "ics", "vcf": the fixture field holding a member inline, and the
    /// extension of a fixture member's default uri (its UID).
    const FIXTURE_FIELD: &'static str;
    /// "iCalendar", "vCard": in fixture problems.
    const FORMAT: &'static str;
    /// The refusal of a body that is not UTF-8.
    const NOT_UTF8: &'static str;
    /// sabre's `max-resource-size`.
    const MAX_RESOURCE_SIZE: usize;
    /// The methods that create a collection (MKCOL, and MKCALENDAR for
    /// calendars); MKCOL is always the extended one.
    const CREATE_METHODS: &'static [&'static str];
    /// `Allow` where a collection could be created.
    const CREATE_ALLOW: &'static str;
    /// The body element of the non-extended creation method.
    const CREATE_ELEMENT: (&'static str, &'static str);
    /// The element an extended MKCOL's `d:resourcetype` must hold.
    const RESOURCETYPE: (&'static str, &'static str);
    /// Whether an invalid collection name is refused before an empty
    /// extended MKCOL body is. CalDAV checks the name first and CardDAV
    /// second; the order decides which refusal a request with both faults
    /// gets, so each keeps its own.
    const NAME_BEFORE_BODY: bool;

    /// The property holding a member's text (`cal:calendar-data`).
    const DATA_PROPERTY: (&'static str, &'static str);
    /// The REPORTs a member supports.
    const MEMBER_REPORTS: &'static [(&'static str, &'static str)];

    /// The 404 for a collection `name` the caller has no such collection
    /// of, in Nextcloud's words (its integration suite checks them).
    fn missing_collection(name: &str) -> DavError;
    fn homes(world: &World) -> &Homes<Self>;
    fn homes_mut(world: &mut World) -> &mut Homes<Self>;
    /// The REPORTs a collection supports.
    const COLLECTION_REPORTS: &'static [(&'static str, &'static str)];
    /// A collection's own properties: those between its display name and
    /// the owner's common ones in [`collection_properties`].
    fn own_properties(set: &mut PropertySet, caller: &Caller<'_>, collection: &Collection<Self>);
    /// `Content-Type` of a member on GET and in `getcontenttype`.
    fn content_type(member: &Member<Self::Data>) -> String;
    /// Applies one property of a PROPPATCH or a creation to a staged copy;
    /// the HTTP status for it.
    fn apply_property(
        collection: &mut Collection<Self>,
        update: &PropertyUpdate,
        creating: bool,
    ) -> u16;
    /// A collection about to be created from a request, before its
    /// properties are applied.
    fn prepare_new(collection: &mut Collection<Self>);
    /// Validates (and repairs) a member's text for this collection.
    fn parse(
        text: &str,
        collection: &Collection<Self>,
        now: i64,
    ) -> Result<Self::Data, Self::ParseError>;
    /// The refusal of a PUT body [`Kind::parse`] rejected.
    fn invalid(error: Self::ParseError, collection: &Collection<Self>) -> DavError;
    /// The refusal of a PUT whose UID `other_href` already holds.
    fn uid_conflict(other_href: &str) -> DavError;
    /// A REPORT on a collection (`member` = `None`) or one of its members.
    const REPORT: Report;
    /// Extra responses of a home's Depth 1 PROPFIND after the collections.
    fn home_children(_caller: &Caller<'_>) -> Vec<(String, PropertySet)> {
        Vec::new()
    }
    /// A method on an existing collection the shared code does not answer.
    fn other_collection_method(method: &str) -> DavError {
        DavError::no_plugin_for(method)
    }
    /// A method on a member the shared code does not answer.
    fn other_member_method(
        _world: &mut World,
        request: &DavRequest,
        _caller: &Caller<'_>,
        _collection_uri: &str,
        _member_uri: &str,
    ) -> Result<Response, DavError> {
        Err(DavError::no_plugin_for(request.method.as_str()))
    }
}

/// A protocol's REPORTs: world, request, caller, collection uri and, on a
/// member, its uri.
pub type Report =
    fn(&World, &DavRequest, &Caller<'_>, &str, Option<&str>) -> Result<Response, DavError>;

/// Every user's collections of one kind.
#[derive(Debug)]
pub struct Homes<K: Kind> {
    /// owner uid → collection uri → collection.
    homes: BTreeMap<String, BTreeMap<String, Collection<K>>>,
    next_id: u64,
}

impl<K: Kind> Default for Homes<K> {
    fn default() -> Self {
        Homes { homes: BTreeMap::new(), next_id: 0 }
    }
}

/// One collection: a calendar or an address book.
#[derive(Debug, Clone)]
pub struct Collection<K: Kind> {
    pub id: u64,
    pub uri: String,
    pub display_name: Option<String>,
    pub description: Option<String>,
    /// member uri → member.
    pub members: BTreeMap<String, Member<K::Data>>,
    pub changes: ChangeLog,
    /// Properties a client set that the backend does not know (Nextcloud's
    /// custom properties table), as inner XML.
    pub dead_properties: BTreeMap<PropertyName, String>,
    pub extra: K::Extra,
}

/// One member resource.
#[derive(Debug, Clone)]
pub struct Member<D> {
    pub uri: String,
    pub data: D,
    pub etag: String,
    pub last_modified: i64,
}

impl<K: Kind> Collection<K> {
    pub fn new(id: u64, uri: &str) -> Collection<K> {
        Collection {
            id,
            uri: uri.to_string(),
            display_name: None,
            description: None,
            members: BTreeMap::new(),
            changes: ChangeLog::new(),
            dead_properties: BTreeMap::new(),
            extra: K::Extra::default(),
        }
    }

    /// The member whose UID is `uid`, other than `except_uri`.
    pub fn member_with_uid(&self, uid: &str, except_uri: &str) -> Option<&Member<K::Data>> {
        self.members.values().find(|member| member.data.uid() == uid && member.uri != except_uri)
    }

    pub fn store(&mut self, uri: &str, data: K::Data, now: i64) -> &Member<K::Data> {
        let operation =
            if self.members.contains_key(uri) { Operation::Modified } else { Operation::Added };
        let etag = webdav::etag_of(data.text().as_bytes());
        self.members.insert(
            uri.to_string(),
            Member { uri: uri.to_string(), data, etag, last_modified: now },
        );
        self.changes.record(uri, operation);
        &self.members[uri]
    }

    pub fn remove(&mut self, uri: &str) -> Option<Member<K::Data>> {
        let removed = self.members.remove(uri)?;
        self.changes.record(uri, Operation::Deleted);
        Some(removed)
    }

    /// Adds a fixture member, or says why it cannot be added.
    pub fn seed(
        &mut self,
        label: &str,
        uri: Option<&String>,
        data: K::Data,
        now: i64,
        problems: &mut Vec<String>,
    ) {
        let uri = uri.cloned().unwrap_or_else(|| format!("{}.{}", data.uid(), K::FIXTURE_FIELD));
        if !webdav::is_valid_name(&uri) {
            problems.push(format!("{label}: {uri:?} is not a valid {} uri", K::MEMBER_NOUN));
            return;
        }
        if self.members.contains_key(&uri) {
            problems.push(format!("{label}: uri {uri:?} is used twice"));
            return;
        }
        if let Some(other) = self.member_with_uid(data.uid(), &uri) {
            problems.push(format!(
                "{label}: UID {:?} is already used by {:?}",
                data.uid(),
                other.uri
            ));
            return;
        }
        self.store(&uri, data, now);
    }
}

/// One member of a fixture collection, as the fixture gives it: its uri,
/// and its text inline or as a source file.
pub struct FixtureMember<'a> {
    pub uri: Option<&'a String>,
    pub inline: Option<&'a String>,
    pub source: Option<&'a String>,
}

impl<K: Kind> Collection<K> {
    /// Adds a fixture collection's members, recording each one that cannot
    /// be added and why; `label` names the collection.
    pub fn seed_members<'a>(
        &mut self,
        fixture: &Fixture,
        label: &str,
        members: impl IntoIterator<Item = FixtureMember<'a>>,
        now: i64,
        problems: &mut Vec<String>,
    ) {
        for (index, member) in members.into_iter().enumerate() {
            let label = format!("{label} {} #{}", K::FIXTURE_MEMBER_NOUN, index + 1);
            let Some(text) = fixture_text(
                fixture,
                &label,
                K::FIXTURE_FIELD,
                member.inline,
                member.source,
                problems,
            ) else {
                continue;
            };
            match K::parse(&text, self, now) {
                Ok(data) => self.seed(&label, member.uri, data, now, problems),
                Err(error) => problems.push(format!("{label}: invalid {}: {error}", K::FORMAT)),
            }
        }
    }
}

/// A fixture's collection entry (a calendar, an address book), as the
/// shared seeding reads it.
pub struct FixtureEntry<'a> {
    pub owner: &'a str,
    pub uri: &'a str,
    pub display_name: &'a Option<String>,
    /// In fixture order.
    pub members: Vec<FixtureMember<'a>>,
}

impl<'a> FixtureMember<'a> {
    pub fn new(
        uri: &'a Option<String>,
        inline: &'a Option<String>,
        source: &'a Option<String>,
    ) -> FixtureMember<'a> {
        FixtureMember { uri: uri.as_ref(), inline: inline.as_ref(), source: source.as_ref() }
    }
}

/// A kind's fixture entry type; each kind implements it for its own.
pub trait FixtureCollection<K: Kind> {
    fn entry(&self) -> FixtureEntry<'_>;
    /// Sets what the entry says of the collection beyond its display name,
    /// recording each problem under `label`; runs before the members are
    /// seeded, so the collection's problems come first.
    fn configure(
        &self,
        _collection: &mut Collection<K>,
        _label: &str,
        _problems: &mut Vec<String>,
    ) {
    }
}

impl<K: Kind> Homes<K> {
    /// Every user's collections as the fixture's `entries` give them,
    /// recording each collection or member that cannot be added and why;
    /// `reserved` are names a home holds that are not collections.
    pub fn seed_fixture<F: FixtureCollection<K>>(
        fixture: &Fixture,
        entries: &[F],
        users: &BTreeMap<String, User>,
        reserved: &[&str],
        now: i64,
        problems: &mut Vec<String>,
    ) -> Homes<K> {
        let mut homes = Homes::default();
        for item in entries {
            let entry = item.entry();
            let label = fixture_label::<K>(entry.owner, entry.uri);
            let Some(collection) = homes.seed(users, entry.owner, entry.uri, reserved, problems)
            else {
                continue;
            };
            collection.display_name = entry.display_name.clone();
            item.configure(collection, &label, problems);
            collection.seed_members(fixture, &label, entry.members, now, problems);
        }
        homes
    }

    /// Gives every user without a collection of this kind the one Nextcloud
    /// creates on first login.
    pub fn ensure_first_login(
        &mut self,
        users: &BTreeMap<String, User>,
        uri: &str,
        prepare: impl Fn(&mut Collection<K>),
    ) {
        for uid in users.keys() {
            if self.homes.get(uid).is_none_or(BTreeMap::is_empty) {
                prepare(self.create(uid, uri));
            }
        }
    }

    /// Forgets every collection of `owner` (a deleted account).
    pub fn remove_owner(&mut self, owner: &str) {
        self.homes.remove(owner);
    }

    /// Creates an empty collection; the caller made sure the uri is free.
    pub fn create(&mut self, owner: &str, uri: &str) -> &mut Collection<K> {
        assert!(self.get(owner, uri).is_none(), "{} {owner}/{uri} exists", K::COLLECTION_NOUN);
        self.next_id += 1;
        let collection = Collection::new(self.next_id, uri);
        self.homes
            .entry(owner.to_string())
            .or_default()
            .entry(uri.to_string())
            .or_insert(collection)
    }

    pub fn get(&self, owner: &str, uri: &str) -> Option<&Collection<K>> {
        self.homes.get(owner)?.get(uri)
    }

    pub fn get_mut(&mut self, owner: &str, uri: &str) -> Option<&mut Collection<K>> {
        self.homes.get_mut(owner)?.get_mut(uri)
    }

    /// Every collection with its owner.
    pub fn all(&self) -> impl Iterator<Item = (&str, &Collection<K>)> {
        self.homes.iter().flat_map(|(owner, home)| {
            home.values().map(move |collection| (owner.as_str(), collection))
        })
    }

    /// A user's collections in uri order.
    pub fn of(&self, owner: &str) -> impl Iterator<Item = &Collection<K>> {
        self.homes.get(owner).into_iter().flat_map(|home| home.values())
    }

    fn remove(&mut self, owner: &str, uri: &str) {
        if let Some(home) = self.homes.get_mut(owner) {
            home.remove(uri);
        }
    }

    /// Creates a fixture collection, or says why it cannot be created.
    /// `reserved` are names the home holds that are not collections.
    pub fn seed(
        &mut self,
        users: &BTreeMap<String, User>,
        owner: &str,
        uri: &str,
        reserved: &[&str],
        problems: &mut Vec<String>,
    ) -> Option<&mut Collection<K>> {
        let label = fixture_label::<K>(owner, uri);
        if !users.contains_key(owner) {
            problems.push(format!("{label}: unknown owner {owner:?}"));
            return None;
        }
        if !webdav::is_valid_name(uri) || reserved.contains(&uri) {
            problems.push(format!("{label}: {uri:?} is not a valid {} uri", K::COLLECTION_NOUN));
            return None;
        }
        if self.get(owner, uri).is_some() {
            problems.push(format!("{label}: defined twice"));
            return None;
        }
        Some(self.create(owner, uri))
    }
}

/// "calendar alice/personal": how fixture problems name a collection.
pub fn fixture_label<K: Kind>(owner: &str, uri: &str) -> String {
    format!("{} {owner}/{uri}", K::COLLECTION_NOUN)
}

/// A fixture member's text: given inline (`inline_name` in the fixture) or
/// read from a source file; `None` after recording why not.
fn fixture_text(
    fixture: &Fixture,
    label: &str,
    inline_name: &str,
    inline: Option<&String>,
    source: Option<&String>,
    problems: &mut Vec<String>,
) -> Option<String> {
    match (inline, source) {
        (Some(text), None) => Some(text.clone()),
        (None, Some(source)) => match fixture.read_source(source).map(String::from_utf8) {
            Ok(Ok(text)) => Some(text),
            Ok(Err(_)) => {
                problems.push(format!("{label}: {source} is not UTF-8"));
                None
            }
            Err(message) => {
                problems.push(format!("{label}: {message}"));
                None
            }
        },
        _ => {
            problems.push(format!("{label}: needs exactly one of {inline_name} or source"));
            None
        }
    }
}

pub fn home_href<K: Kind>(uid: &str) -> String {
    let mut href = K::ROOT.to_string();
    for segment in K::HOME_PREFIX {
        href.push_str(segment);
        href.push('/');
    }
    href.push_str(&crate::dav::encode_segment(uid));
    href.push('/');
    href
}

pub fn collection_href<K: Kind>(uid: &str, uri: &str) -> String {
    format!("{}{}/", home_href::<K>(uid), crate::dav::encode_segment(uri))
}

pub fn member_href<K: Kind>(uid: &str, collection_uri: &str, member_uri: &str) -> String {
    format!(
        "{}{}",
        collection_href::<K>(uid, collection_uri),
        crate::dav::encode_segment(member_uri)
    )
}

/// Reads the `href` of a multiget into (collection uri, member uri) of the
/// caller's own collections; anything else is `None` (a 404 entry).
fn resolve_member_href<K: Kind>(href: &str, uid: &str) -> Option<(String, String)> {
    let path = url::Url::parse(href)
        .map(|url| url.path().to_string())
        .unwrap_or_else(|_| href.to_string());
    let rest = path.strip_prefix(K::ROOT)?;
    let segments = webdav::decode_path(rest)?;
    let in_home_prefix = segments.len() >= K::HOME_PREFIX.len()
        && segments.iter().zip(K::HOME_PREFIX).all(|(segment, prefix)| segment == prefix);
    if !in_home_prefix {
        return None;
    }
    match &segments[K::HOME_PREFIX.len()..] {
        [owner, collection, member] if owner == uid => Some((collection.clone(), member.clone())),
        _ => None,
    }
}

/// Properties of a member resource.
pub fn member_properties<K: Kind>(caller: &Caller<'_>, member: &Member<K::Data>) -> PropertySet {
    let mut set = PropertySet::new();
    set.xml(xml::DAV, "resourcetype", "");
    set.text(xml::DAV, "getetag", &member.etag);
    set.text(xml::DAV, "getcontenttype", &K::content_type(member));
    set.text(xml::DAV, "getcontentlength", &member.data.text().len().to_string());
    set.text(xml::DAV, "getlastmodified", &crate::clock::http_date(member.last_modified));
    set.text(K::DATA_PROPERTY.0, K::DATA_PROPERTY.1, member.data.text());
    crate::caldav::common_properties(&mut set, caller, K::MEMBER_REPORTS);
    set
}

/// Properties of a collection: a collection of the kind's resource type
/// with its display name, the kind's own properties, the owner's common ones
/// with the kind's REPORTs, then the dead properties a client set.
pub fn collection_properties<K: Kind>(
    caller: &Caller<'_>,
    collection: &Collection<K>,
) -> PropertySet {
    let mut set = PropertySet::new();
    let (ns, local) = K::RESOURCETYPE;
    set.xml(xml::DAV, "resourcetype", format!("<d:collection/>{}", xml::empty_element(ns, local)));
    set.text_if(xml::DAV, "displayname", collection.display_name.as_deref());
    K::own_properties(&mut set, caller, collection);
    crate::caldav::common_properties(&mut set, caller, K::COLLECTION_REPORTS);
    dead_properties(&mut set, collection);
    set
}

/// Adds the dead properties a client set on a collection.
fn dead_properties<K: Kind>(set: &mut PropertySet, collection: &Collection<K>) {
    for (name, inner_xml) in &collection.dead_properties {
        set.xml(&name.ns, &name.local, inner_xml.clone());
    }
}

/// How CalDAV and CardDAV answer a path below their root: the world, the
/// request, the caller and the path's decoded segments.
pub type Route = fn(&mut World, &DavRequest, &Caller<'_>, &[String]) -> Result<Response, DavError>;

/// A CalDAV or CardDAV request, answered under the world's lock: the path
/// decoded and the caller looked up (either failing is a 404) before
/// `route` runs.
pub fn handle(shared: &crate::Shared, request: &DavRequest, route: Route) -> Response {
    let now = shared.now();
    routed(&mut shared.world(), request, now, route).into_response()
}

fn routed(
    world: &mut World,
    request: &DavRequest,
    now: i64,
    route: Route,
) -> Result<Response, DavError> {
    let segments = webdav::decode_path(&request.path).ok_or_else(DavError::not_found)?;
    let user = world.users.get(&request.user.uid).cloned().ok_or_else(DavError::not_found)?;
    let caller = Caller::new(&user, now, request, crate::caldav::request_base(world, request));
    route(world, request, &caller, &segments)
}

/// Properties of a collection above the homes: a plain collection that
/// names the caller.
pub fn above_home_properties(caller: &Caller<'_>) -> PropertySet {
    let mut set = PropertySet::new();
    set.xml(xml::DAV, "resourcetype", "<d:collection/>");
    crate::caldav::current_user_principal(&mut set, caller);
    set
}

/// A collection above the homes (`/calendars/`, `/addressbooks/`,
/// `/addressbooks/users/`): PROPFIND only, listing the one `child` (href and
/// properties) that leads down to the caller's home.
pub fn above_home(
    request: &DavRequest,
    caller: &Caller<'_>,
    href: &str,
    (child_href, child): (&str, PropertySet),
) -> Result<Response, DavError> {
    if request.method.as_str() != "PROPFIND" {
        return Err(DavError::method_not_allowed(
            "This method is not allowed here",
            "OPTIONS, PROPFIND",
        ));
    }
    let properties = webdav::parse_propfind(&request.body)?;
    let mut responses =
        vec![above_home_properties(caller).response(href, &properties, caller.minimal)];
    if request.depth(Depth::One) != Depth::Zero {
        responses.push(child.response(child_href, &properties, caller.minimal));
    }
    Ok(webdav::multistatus(&responses, None))
}

/// Properties of a home: a plain collection owned by the caller.
pub fn home_properties(caller: &Caller<'_>) -> PropertySet {
    let mut set = PropertySet::new();
    set.xml(xml::DAV, "resourcetype", "<d:collection/>");
    crate::caldav::common_properties(&mut set, caller, &[]);
    set
}

/// The caller's home.
pub fn home<K: Kind>(
    world: &World,
    request: &DavRequest,
    caller: &Caller<'_>,
) -> Result<Response, DavError> {
    let uid = caller.user.uid.as_str();
    match request.method.as_str() {
        "PROPFIND" => {
            let properties = webdav::parse_propfind(&request.body)?;
            let mut responses = vec![home_properties(caller).response(
                &home_href::<K>(uid),
                &properties,
                caller.minimal,
            )];
            if request.depth(Depth::One) != Depth::Zero {
                for collection in K::homes(world).of(uid) {
                    responses.push(collection_properties::<K>(caller, collection).response(
                        &collection_href::<K>(uid, &collection.uri),
                        &properties,
                        caller.minimal,
                    ));
                }
                for (href, set) in K::home_children(caller) {
                    responses.push(set.response(&href, &properties, caller.minimal));
                }
            }
            Ok(webdav::multistatus(&responses, None))
        }
        method if K::CREATE_METHODS.contains(&method) => Err(DavError::method_not_allowed(
            "The resource you tried to create already exists",
            "OPTIONS, PROPFIND",
        )),
        "REPORT" => {
            webdav::parse_body(&request.body)?;
            Err(DavError::report_not_supported(format!(
                "The REPORT is not supported on {}",
                K::HOME_NOUN
            )))
        }
        "GET" | "HEAD" => Err(DavError::not_implemented("GET is only implemented on File objects")),
        _ => Err(DavError::method_not_allowed(
            format!("This method is not allowed on {}", K::HOME_NOUN),
            K::HOME_ALLOW,
        )),
    }
}

/// `Allow` of an existing collection.
pub const COLLECTION_ALLOW: &str =
    "OPTIONS, GET, HEAD, DELETE, PROPFIND, PROPPATCH, COPY, MOVE, REPORT";

/// A collection in the caller's home, existing or not.
pub fn collection<K: Kind>(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    name: &str,
) -> Result<Response, DavError> {
    let uid = caller.user.uid.clone();
    let method = request.method.as_str();
    let Some(collection) = K::homes(world).get(&uid, name) else {
        return match method {
            method if K::CREATE_METHODS.contains(&method) => {
                make::<K>(world, request, caller, name, method == "MKCOL")
            }
            "PUT" => Err(DavError::method_not_allowed(
                "Creating new files in this collection is not supported",
                K::CREATE_ALLOW,
            )),
            _ => Err(K::missing_collection(name)),
        };
    };
    match method {
        "PROPFIND" => {
            let properties = webdav::parse_propfind(&request.body)?;
            let mut responses = vec![collection_properties::<K>(caller, collection).response(
                &caller.collection_href::<K>(&uid, name),
                &properties,
                caller.minimal,
            )];
            if request.depth(Depth::One) != Depth::Zero {
                for member in collection.members.values() {
                    responses.push(member_properties::<K>(caller, member).response(
                        &caller.member_href::<K>(&uid, name, &member.uri),
                        &properties,
                        caller.minimal,
                    ));
                }
            }
            Ok(webdav::multistatus(&responses, None))
        }
        "PROPPATCH" => proppatch::<K>(world, request, caller, name),
        "DELETE" => {
            K::homes_mut(world).remove(&uid, name);
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        "REPORT" => (K::REPORT)(world, request, caller, name, None),
        method if K::CREATE_METHODS.contains(&method) => Err(DavError::method_not_allowed(
            "The resource you tried to create already exists",
            COLLECTION_ALLOW,
        )),
        "GET" | "HEAD" => Err(DavError::not_implemented("GET is only implemented on File objects")),
        "PUT" => {
            Err(DavError::method_not_allowed("PUT is not allowed on non-files.", COLLECTION_ALLOW))
        }
        other => Err(K::other_collection_method(other)),
    }
}

/// Applies the properties of a creation or a PROPPATCH. Returns each
/// property's status; nothing changes unless all are 200 (sabre's
/// all-or-nothing PROPPATCH: the rest become 424).
fn apply_properties<K: Kind>(
    collection: &mut Collection<K>,
    updates: &[PropertyUpdate],
    creating: bool,
) -> Vec<(PropertyName, u16)> {
    let mut staged = collection.clone();
    let mut results = Vec::new();
    for update in updates {
        let status = K::apply_property(&mut staged, update, creating);
        results.push((update.name(), status));
    }
    if results.iter().all(|(_, status)| *status == 200) {
        *collection = staged;
    } else {
        for (_, status) in &mut results {
            if *status == 200 {
                *status = 424;
            }
        }
    }
    results
}

/// Stores a dead property (or removes it): what a collection does with a
/// property its backend does not know.
pub fn apply_dead_property<K: Kind>(collection: &mut Collection<K>, update: &PropertyUpdate) {
    match update {
        PropertyUpdate::Set(element) => {
            collection.dead_properties.insert(update.name(), element.inner_xml());
        }
        PropertyUpdate::Remove(name) => {
            collection.dead_properties.remove(name);
        }
    }
}

/// MKCALENDAR, or extended MKCOL (RFC 5689) with the kind's resource type.
fn make<K: Kind>(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    name: &str,
    extended_mkcol: bool,
) -> Result<Response, DavError> {
    let uid = caller.user.uid.clone();
    let check_name = || {
        if webdav::is_valid_name(name) {
            Ok(())
        } else {
            Err(DavError::forbidden(format!("This {} name is not allowed", K::COLLECTION_NOUN)))
        }
    };
    if K::NAME_BEFORE_BODY {
        check_name()?;
    }
    let empty = request.body.iter().all(u8::is_ascii_whitespace);
    if empty && extended_mkcol {
        return Err(DavError::method_not_allowed(
            "Creating collections in this collection is not allowed",
            K::CREATE_ALLOW,
        ));
    }
    if !K::NAME_BEFORE_BODY {
        check_name()?;
    }
    let updates = if empty {
        Vec::new()
    } else {
        let root = webdav::parse_body(&request.body)?;
        let expected = if extended_mkcol { (xml::DAV, "mkcol") } else { K::CREATE_ELEMENT };
        if !root.is(expected.0, expected.1) {
            return Err(DavError::bad_request(format!(
                "The request body must be a {{{}}}{} element",
                expected.0, expected.1
            )));
        }
        let updates = webdav::property_updates(&root);
        if extended_mkcol && !has_resourcetype(&updates, K::RESOURCETYPE) {
            return Err(DavError::InvalidResourceType);
        }
        updates
    };
    let mut collection = Collection::<K>::new(0, name);
    K::prepare_new(&mut collection);
    let results = apply_properties(&mut collection, &updates, true);
    if results.iter().any(|(_, status)| *status != 200) {
        return Ok(webdav::proppatch_response(&caller.collection_href::<K>(&uid, name), &results));
    }
    let created = K::homes_mut(world).create(&uid, name);
    let id = created.id;
    *created = Collection { id, ..collection };
    Ok((StatusCode::CREATED, [(http::header::CONTENT_LENGTH, "0")]).into_response())
}

fn has_resourcetype(updates: &[PropertyUpdate], (ns, local): (&str, &str)) -> bool {
    updates.iter().any(|update| match update {
        PropertyUpdate::Set(element) => {
            element.is(xml::DAV, "resourcetype") && element.child(ns, local).is_some()
        }
        PropertyUpdate::Remove(_) => false,
    })
}

fn proppatch<K: Kind>(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    name: &str,
) -> Result<Response, DavError> {
    let updates = webdav::parse_proppatch(&request.body)?;
    let collection =
        K::homes_mut(world).get_mut(&caller.user.uid, name).ok_or_else(DavError::not_found)?;
    let results = apply_properties(collection, &updates, false);
    if !updates.is_empty() && results.iter().all(|(_, status)| *status == 200) {
        // sabre's backend logs a change of the collection itself ("").
        collection.changes.record("", Operation::Modified);
    }
    Ok(webdav::proppatch_response(&caller.collection_href::<K>(&caller.user.uid, name), &results))
}

/// A member of one of the caller's collections, existing or not.
pub fn member<K: Kind>(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    collection_uri: &str,
    member_uri: &str,
) -> Result<Response, DavError> {
    let uid = caller.user.uid.clone();
    let Some(collection) = K::homes(world).get(&uid, collection_uri) else {
        return match request.method.as_str() {
            "PUT" => Err(DavError::conflict("Files cannot be created in non-existent collections")),
            _ => Err(DavError::not_found()),
        };
    };
    let existing = collection.members.get(member_uri);
    let href = || caller.member_href::<K>(&uid, collection_uri, member_uri);
    match request.method.as_str() {
        "GET" | "HEAD" => {
            let member = existing.ok_or_else(DavError::not_found)?;
            Ok(get::<K>(member, request.method == http::Method::HEAD))
        }
        "PUT" => put::<K>(world, request, caller, collection_uri, member_uri),
        "DELETE" => {
            let member = existing.ok_or_else(DavError::not_found)?;
            webdav::check_preconditions(request, Some(&member.etag))?;
            if let Some(collection) = K::homes_mut(world).get_mut(&uid, collection_uri) {
                collection.remove(member_uri);
            }
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        "PROPFIND" => {
            let member = existing.ok_or_else(DavError::not_found)?;
            let properties = webdav::parse_propfind(&request.body)?;
            Ok(webdav::multistatus(
                &[member_properties::<K>(caller, member).response(
                    &href(),
                    &properties,
                    caller.minimal,
                )],
                None,
            ))
        }
        "PROPPATCH" => {
            existing.ok_or_else(DavError::not_found)?;
            let root = webdav::parse_body(&request.body)?;
            // A member's properties are all computed: every one is refused.
            let results: Vec<(PropertyName, u16)> =
                webdav::property_updates(&root).iter().map(|update| (update.name(), 403)).collect();
            Ok(webdav::proppatch_response(&href(), &results))
        }
        "REPORT" => {
            existing.ok_or_else(DavError::not_found)?;
            (K::REPORT)(world, request, caller, collection_uri, Some(member_uri))
        }
        _ => K::other_member_method(world, request, caller, collection_uri, member_uri),
    }
}

fn get<K: Kind>(member: &Member<K::Data>, head: bool) -> Response {
    let text = member.data.text();
    let body = if head { String::new() } else { text.to_string() };
    (
        StatusCode::OK,
        [
            (http::header::CONTENT_TYPE, K::content_type(member)),
            (http::header::ETAG, member.etag.clone()),
            (http::header::LAST_MODIFIED, crate::clock::http_date(member.last_modified)),
            (http::header::CONTENT_LENGTH, text.len().to_string()),
            (
                http::header::CONTENT_DISPOSITION,
                crate::files::transfer::attachment_disposition(&member.uri),
            ),
        ],
        body,
    )
        .into_response()
}

fn put<K: Kind>(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    collection_uri: &str,
    member_uri: &str,
) -> Result<Response, DavError> {
    let uid = caller.user.uid.clone();
    let collection = K::homes_mut(world)
        .get_mut(&uid, collection_uri)
        .ok_or_else(|| DavError::conflict("Files cannot be created in non-existent collections"))?;
    if !webdav::is_valid_name(member_uri) {
        return Err(DavError::bad_request(format!("This {} name is not allowed", K::MEMBER_NOUN)));
    }
    let existing_etag = collection.members.get(member_uri).map(|member| member.etag.clone());
    webdav::check_preconditions(request, existing_etag.as_deref())?;
    if request.body.len() > K::MAX_RESOURCE_SIZE {
        return Err(DavError::forbidden(format!(
            "The {} is larger than max-resource-size",
            K::RESOURCE_NOUN
        )));
    }
    let text = std::str::from_utf8(&request.body)
        .map_err(|_| DavError::unsupported_media_type(K::NOT_UTF8))?;
    let data =
        K::parse(text, collection, caller.now).map_err(|error| K::invalid(error, collection))?;
    if let Some(other) = collection.member_with_uid(data.uid(), member_uri) {
        return Err(K::uid_conflict(&caller.member_href::<K>(&uid, collection_uri, &other.uri)));
    }
    let repaired = data.repaired();
    let created = existing_etag.is_none();
    let member = collection.store(member_uri, data, caller.now);
    let status = if created { StatusCode::CREATED } else { StatusCode::NO_CONTENT };
    let mut response = (status, [(http::header::CONTENT_LENGTH, "0")]).into_response();
    // sabre sends no ETag when it had to change the body.
    if !repaired && let Ok(value) = http::HeaderValue::from_str(&member.etag) {
        response.headers_mut().insert(http::header::ETAG, value);
    }
    Ok(response)
}

/// The responses of a multiget REPORT: each `d:href`'s member through
/// `respond` (with its canonical href), or a 404 entry.
pub fn multiget<K: Kind>(
    world: &World,
    caller: &Caller<'_>,
    root: &Element,
    respond: impl Fn(&Member<K::Data>, &str) -> String,
) -> Vec<String> {
    let uid = caller.user.uid.as_str();
    let mut responses = Vec::new();
    for href_element in root.children_named(xml::DAV, "href") {
        let href = href_element.text().trim().to_string();
        let found = resolve_member_href::<K>(&caller.unrooted(&href), uid).and_then(
            |(collection_uri, member_uri)| {
                let member = K::homes(world).get(uid, &collection_uri)?.members.get(&member_uri)?;
                Some((collection_uri, member))
            },
        );
        match found {
            Some((collection_uri, member)) => responses
                .push(respond(member, &caller.member_href::<K>(uid, &collection_uri, &member.uri))),
            None => responses.push(webdav::status_response(&href, "HTTP/1.1 404 Not Found")),
        }
    }
    responses
}

/// A sync-collection REPORT (RFC 6578) on a collection.
pub fn sync_collection<K: Kind>(
    caller: &Caller<'_>,
    collection: &Collection<K>,
    root: &Element,
) -> Result<Response, DavError> {
    let uid = caller.user.uid.as_str();
    let report = webdav::parse_sync_collection(root)?;
    let plan = webdav::plan_sync(&report, &collection.changes, || {
        collection.members.keys().cloned().collect()
    })?;
    let properties: &PropertyRequest = &report.properties;
    let href = |uri: &str| caller.member_href::<K>(uid, &collection.uri, uri);
    let member_response = |uri: &str| -> Option<String> {
        if uri.is_empty() {
            return Some(collection_properties::<K>(caller, collection).response(
                &caller.collection_href::<K>(uid, &collection.uri),
                properties,
                caller.minimal,
            ));
        }
        let member = collection.members.get(uri)?;
        Some(member_properties::<K>(caller, member).response(
            &href(uri),
            properties,
            caller.minimal,
        ))
    };
    let mut responses = Vec::new();
    match plan {
        SyncPlan::Initial { members } => {
            responses.extend(members.iter().filter_map(|uri| member_response(uri)));
        }
        SyncPlan::Incremental(changes) => {
            for uri in changes.added.iter().chain(changes.modified.iter()) {
                responses.push(member_response(uri).unwrap_or_else(|| {
                    webdav::status_response(&href(uri), "HTTP/1.1 404 Not Found")
                }));
            }
            for uri in &changes.deleted {
                responses.push(webdav::status_response(&href(uri), "HTTP/1.1 404 Not Found"));
            }
        }
    }
    Ok(webdav::multistatus(&responses, Some(&collection.changes.sync_token_uri())))
}
