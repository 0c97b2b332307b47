//! CalDAV at `/remote.php/dav/calendars/{uid}/`, principals at
//! `/remote.php/dav/principals/`, and the DAV root's PROPFIND.
//!
//! The shapes follow Nextcloud's sabre/dav stack: a calendar home holding
//! the user's calendars plus `inbox`, `outbox` and `trashbin`; sync tokens
//! `http://sabre.io/ns/sync/N` from a per-calendar change log; PUT bodies
//! validated like sabre's CalDAV plugin; calendar-query answered like
//! Nextcloud's `CalDavBackend::calendarQuery` (a database pre-filter on
//! component type and denormalised first/last occurrence, then sabre's
//! validator). Where Nextcloud has a bug a client can observe, the fake has
//! it too, with a comment saying so: a client that works here must work
//! there. The differences that remain are listed in
//! `docs/caldav-differences.md`.
//!
//! A user only ever reaches their own home: another uid's home, calendar or
//! object is a 404, as it is for Nextcloud's ACL-filtered tree.

#![allow(
    clippy::result_large_err,
    reason = "an Err here is the HTTP answer itself, built once and returned at once; boxing it buys nothing"
)]

pub mod filter;
pub mod ical;
mod principals;
mod report;
pub mod webdav;

pub use principals::{handle_principals, handle_root};

use crate::Shared;
use crate::dav::{DavRequest, Depth};
use crate::fixture::Fixture;
use crate::world::{User, World};
use crate::xml::{self, Element};
use axum::response::{IntoResponse, Response};
use http::{Method, StatusCode};
use ical::{CalendarData, ComponentKind, InvalidCalendarData};
use std::collections::BTreeMap;
use webdav::{ChangeLog, Operation, PropertyName, PropertyRequest, PropertySet, PropertyUpdate};

/// Where calendar homes live.
pub const CALENDARS_ROOT: &str = "/remote.php/dav/calendars/";
/// Where user principals live.
pub const PRINCIPALS_USERS: &str = "/remote.php/dav/principals/users/";
/// The calendar Nextcloud creates on first login when a user has none.
pub const DEFAULT_CALENDAR_URI: &str = "personal";
pub const DEFAULT_CALENDAR_NAME: &str = "Personal";
/// Nextcloud's default theming colour, which new calendars get.
pub const DEFAULT_CALENDAR_COLOR: &str = "#0082c9";
/// sabre's `{CALDAV:}max-resource-size`.
pub const MAX_RESOURCE_SIZE: usize = 10_000_000;
/// Children of a calendar home that are not calendars.
const SCHEDULING_COLLECTIONS: &[&str] = &["inbox", "outbox", "trashbin"];
/// Components of a fixture calendar that names none.
const FIXTURE_COMPONENTS: &[ComponentKind] = &[ComponentKind::Event, ComponentKind::Todo];
/// Components of a calendar created by MKCALENDAR without a component set:
/// Nextcloud accepts journals there (the caldav-server-tester's nextcloud
/// profile records `save-load.journal.mixed-calendar` as full).
const MKCALENDAR_COMPONENTS: &[ComponentKind] =
    &[ComponentKind::Event, ComponentKind::Todo, ComponentKind::Journal];
/// Components of the calendar Nextcloud creates on first login.
const FIRST_LOGIN_COMPONENTS: &[ComponentKind] = &[ComponentKind::Event];

/// Every user's calendars.
#[derive(Debug, Default)]
pub struct Calendars {
    /// owner uid → calendar uri → calendar.
    homes: BTreeMap<String, BTreeMap<String, Calendar>>,
    next_calendar_id: u64,
}

/// One calendar collection.
#[derive(Debug, Clone)]
pub struct Calendar {
    pub id: u64,
    pub uri: String,
    pub display_name: Option<String>,
    pub description: Option<String>,
    pub color: Option<String>,
    pub order: i64,
    /// `cal:calendar-timezone`: a VCALENDAR holding one VTIMEZONE.
    pub timezone: Option<String>,
    pub transparent: bool,
    pub components: Vec<ComponentKind>,
    /// object uri → object.
    pub objects: BTreeMap<String, CalendarObject>,
    pub changes: ChangeLog,
    /// Properties a client set that the backend does not know (Nextcloud's
    /// custom properties table), as inner XML.
    pub dead_properties: BTreeMap<PropertyName, String>,
}

/// One calendar object resource (`.ics`).
#[derive(Debug, Clone)]
pub struct CalendarObject {
    pub uri: String,
    pub data: CalendarData,
    pub etag: String,
    pub last_modified: i64,
}

impl Calendar {
    fn new(id: u64, uri: &str) -> Calendar {
        Calendar {
            id,
            uri: uri.to_string(),
            display_name: None,
            description: None,
            color: None,
            order: 0,
            timezone: None,
            transparent: false,
            components: FIXTURE_COMPONENTS.to_vec(),
            objects: BTreeMap::new(),
            changes: ChangeLog::new(),
            dead_properties: BTreeMap::new(),
        }
    }

    /// The object whose UID is `uid`, other than `except_uri`.
    fn object_with_uid(&self, uid: &str, except_uri: &str) -> Option<&CalendarObject> {
        self.objects.values().find(|object| object.data.uid == uid && object.uri != except_uri)
    }

    fn store(&mut self, uri: &str, data: CalendarData, now: i64) -> &CalendarObject {
        let operation =
            if self.objects.contains_key(uri) { Operation::Modified } else { Operation::Added };
        let etag = webdav::etag_of(data.text.as_bytes());
        self.objects.insert(
            uri.to_string(),
            CalendarObject { uri: uri.to_string(), data, etag, last_modified: now },
        );
        self.changes.record(uri, operation);
        &self.objects[uri]
    }

    fn remove(&mut self, uri: &str) -> Option<CalendarObject> {
        let removed = self.objects.remove(uri)?;
        self.changes.record(uri, Operation::Deleted);
        Some(removed)
    }
}

impl Calendars {
    /// Seeds calendars from the fixture and gives every user without one
    /// Nextcloud's default "Personal" calendar.
    pub fn from_fixture(
        fixture: &Fixture,
        users: &BTreeMap<String, User>,
        now: i64,
        problems: &mut Vec<String>,
    ) -> Calendars {
        let mut calendars = Calendars::default();
        for calendar_fixture in &fixture.calendars {
            let label = format!("calendar {}/{}", calendar_fixture.owner, calendar_fixture.uri);
            if !users.contains_key(&calendar_fixture.owner) {
                problems.push(format!("{label}: unknown owner {:?}", calendar_fixture.owner));
                continue;
            }
            if !webdav::is_valid_name(&calendar_fixture.uri)
                || SCHEDULING_COLLECTIONS.contains(&calendar_fixture.uri.as_str())
            {
                problems.push(format!(
                    "{label}: {:?} is not a valid calendar uri",
                    calendar_fixture.uri
                ));
                continue;
            }
            if calendars.get(&calendar_fixture.owner, &calendar_fixture.uri).is_some() {
                problems.push(format!("{label}: defined twice"));
                continue;
            }
            let mut components = Vec::new();
            for name in &calendar_fixture.components {
                match ComponentKind::parse(name) {
                    Some(kind) if !components.contains(&kind) => components.push(kind),
                    Some(_) => {}
                    None => problems.push(format!(
                        "{label}: unknown component {name:?} (VEVENT, VTODO or VJOURNAL)"
                    )),
                }
            }
            let calendar = calendars.create(&calendar_fixture.owner, &calendar_fixture.uri);
            calendar.display_name = calendar_fixture.display_name.clone();
            calendar.color = calendar_fixture.color.clone();
            if !components.is_empty() {
                calendar.components = components;
            }
            for (index, event) in calendar_fixture.events.iter().enumerate() {
                let label = format!("{label} event #{}", index + 1);
                let text = match (&event.ics, &event.source) {
                    (Some(ics), None) => ics.clone(),
                    (None, Some(source)) => match fixture.read_source(source) {
                        Ok(bytes) => match String::from_utf8(bytes) {
                            Ok(text) => text,
                            Err(_) => {
                                problems.push(format!("{label}: {source} is not UTF-8"));
                                continue;
                            }
                        },
                        Err(message) => {
                            problems.push(format!("{label}: {message}"));
                            continue;
                        }
                    },
                    _ => {
                        problems.push(format!("{label}: needs exactly one of ics or source"));
                        continue;
                    }
                };
                let data = match ical::parse_calendar_data(&text, &calendar.components, now) {
                    Ok(data) => data,
                    Err(error) => {
                        problems.push(format!("{label}: invalid iCalendar: {error}"));
                        continue;
                    }
                };
                let uri = event.uri.clone().unwrap_or_else(|| format!("{}.ics", data.uid));
                if !webdav::is_valid_name(&uri) {
                    problems.push(format!("{label}: {uri:?} is not a valid object uri"));
                    continue;
                }
                if calendar.objects.contains_key(&uri) {
                    problems.push(format!("{label}: uri {uri:?} is used twice"));
                    continue;
                }
                if let Some(other) = calendar.object_with_uid(&data.uid, &uri) {
                    problems.push(format!(
                        "{label}: UID {:?} is already used by {:?}",
                        data.uid, other.uri
                    ));
                    continue;
                }
                calendar.store(&uri, data, now);
            }
        }
        for uid in users.keys() {
            if calendars.homes.get(uid).is_none_or(BTreeMap::is_empty) {
                let calendar = calendars.create(uid, DEFAULT_CALENDAR_URI);
                calendar.display_name = Some(DEFAULT_CALENDAR_NAME.to_string());
                calendar.color = Some(DEFAULT_CALENDAR_COLOR.to_string());
                calendar.components = FIRST_LOGIN_COMPONENTS.to_vec();
            }
        }
        calendars
    }

    /// Creates an empty calendar; the caller made sure the uri is free.
    fn create(&mut self, owner: &str, uri: &str) -> &mut Calendar {
        assert!(self.get(owner, uri).is_none(), "calendar {owner}/{uri} exists");
        self.next_calendar_id += 1;
        let calendar = Calendar::new(self.next_calendar_id, uri);
        self.homes.entry(owner.to_string()).or_default().entry(uri.to_string()).or_insert(calendar)
    }

    pub fn get(&self, owner: &str, uri: &str) -> Option<&Calendar> {
        self.homes.get(owner)?.get(uri)
    }

    pub fn get_mut(&mut self, owner: &str, uri: &str) -> Option<&mut Calendar> {
        self.homes.get_mut(owner)?.get_mut(uri)
    }

    /// A user's calendars in uri order.
    pub fn of(&self, owner: &str) -> impl Iterator<Item = &Calendar> {
        self.homes.get(owner).into_iter().flat_map(|home| home.values())
    }
}

/// Everything a handler needs to know about the caller.
pub(crate) struct Caller<'a> {
    pub(crate) user: &'a User,
    pub(crate) now: i64,
    pub(crate) minimal: bool,
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
    if request.method == Method::OPTIONS {
        return options(&allowed_methods(world, &user.uid, &segments));
    }
    match segments.as_slice() {
        [] => calendars_root(request, &caller),
        [owner, ..] if *owner != user.uid => crate::dav::not_found(),
        [_] => home(world, request, &caller),
        [_, name] => match name.as_str() {
            "inbox" | "outbox" | "trashbin" => scheduling_collection(request, &caller, name),
            _ => calendar_collection(world, request, &caller, name),
        },
        [_, name, object] if !SCHEDULING_COLLECTIONS.contains(&name.as_str()) => {
            calendar_object(world, request, &caller, name, object)
        }
        _ => crate::dav::not_found(),
    }
}

/// The methods a path accepts, for OPTIONS and 405s.
fn allowed_methods(world: &World, uid: &str, segments: &[String]) -> String {
    let collection = "OPTIONS, GET, HEAD, DELETE, PROPFIND, PROPPATCH, COPY, MOVE, REPORT";
    match segments {
        [] | [_] => "OPTIONS, GET, HEAD, PROPFIND, REPORT".to_string(),
        [_, name] if SCHEDULING_COLLECTIONS.contains(&name.as_str()) => {
            "OPTIONS, GET, HEAD, PROPFIND, REPORT".into()
        }
        [_, name] if world.calendars.get(uid, name).is_some() => collection.to_string(),
        [_, _] => "OPTIONS, MKCALENDAR, MKCOL".to_string(),
        [_, name, object]
            if world
                .calendars
                .get(uid, name)
                .is_some_and(|calendar| calendar.objects.contains_key(object)) =>
        {
            "OPTIONS, GET, HEAD, DELETE, PROPFIND, PUT, PROPPATCH, MOVE, REPORT".to_string()
        }
        _ => "OPTIONS, PUT".to_string(),
    }
}

/// sabre's OPTIONS answer: the DAV compliance classes and allowed methods.
pub fn options(allow: &str) -> Response {
    (
        StatusCode::OK,
        [
            (http::header::ALLOW, allow.to_string()),
            (http::HeaderName::from_static("dav"), webdav::DAV_COMPLIANCE.to_string()),
            (http::HeaderName::from_static("ms-author-via"), "DAV".to_string()),
            (http::header::ACCEPT_RANGES, "bytes".to_string()),
            (http::header::CONTENT_LENGTH, "0".to_string()),
        ],
    )
        .into_response()
}

pub fn principal_href(uid: &str) -> String {
    format!("{PRINCIPALS_USERS}{}/", crate::dav::encode_segment(uid))
}

fn home_href(uid: &str) -> String {
    format!("{CALENDARS_ROOT}{}/", crate::dav::encode_segment(uid))
}

fn calendar_href(uid: &str, uri: &str) -> String {
    format!("{}{}/", home_href(uid), crate::dav::encode_segment(uri))
}

fn object_href(uid: &str, calendar_uri: &str, object_uri: &str) -> String {
    format!("{}{}", calendar_href(uid, calendar_uri), crate::dav::encode_segment(object_uri))
}

/// The owner's privileges, as sabre lists them for a node the caller owns.
pub const OWNER_PRIVILEGES: &str = "<d:privilege><d:all/></d:privilege><d:privilege><d:read/></d:privilege><d:privilege><d:write/></d:privilege><d:privilege><d:write-properties/></d:privilege><d:privilege><d:write-content/></d:privilege><d:privilege><d:unlock/></d:privilege><d:privilege><d:bind/></d:privilege><d:privilege><d:unbind/></d:privilege><d:privilege><d:write-acl/></d:privilege><d:privilege><d:read-acl/></d:privilege><d:privilege><d:read-current-user-privilege-set/></d:privilege><d:privilege><cal:read-free-busy/></d:privilege>";

pub(crate) fn supported_reports(names: &[(&str, &str)]) -> String {
    names
        .iter()
        .map(|(ns, local)| {
            format!(
                "<d:supported-report><d:report>{}</d:report></d:supported-report>",
                xml::empty_element(ns, local)
            )
        })
        .collect()
}

pub(crate) const PRINCIPAL_REPORTS: &[(&str, &str)] = &[
    (xml::DAV, "expand-property"),
    (xml::DAV, "principal-match"),
    (xml::DAV, "principal-property-search"),
    (xml::DAV, "principal-search-property-set"),
];

/// Properties every node owned by the caller has.
pub(crate) fn common_properties(
    set: &mut PropertySet,
    caller: &Caller<'_>,
    reports: &[(&str, &str)],
) {
    set.href(xml::DAV, "current-user-principal", &principal_href(&caller.user.uid));
    set.href(xml::DAV, "owner", &principal_href(&caller.user.uid));
    set.xml(xml::DAV, "current-user-privilege-set", OWNER_PRIVILEGES);
    set.xml(
        xml::DAV,
        "principal-collection-set",
        "<d:href>/remote.php/dav/principals/users/</d:href><d:href>/remote.php/dav/principals/groups/</d:href>",
    );
    let mut all_reports = PRINCIPAL_REPORTS.to_vec();
    all_reports.extend_from_slice(reports);
    set.xml(xml::DAV, "supported-report-set", supported_reports(&all_reports));
}

fn home_properties(caller: &Caller<'_>) -> PropertySet {
    let mut set = PropertySet::new();
    set.xml(xml::DAV, "resourcetype", "<d:collection/>");
    common_properties(&mut set, caller, &[]);
    set
}

const CALENDAR_REPORTS: &[(&str, &str)] = &[
    (xml::CALDAV, "calendar-multiget"),
    (xml::CALDAV, "calendar-query"),
    (xml::CALDAV, "free-busy-query"),
    (xml::DAV, "sync-collection"),
];

fn calendar_properties(caller: &Caller<'_>, calendar: &Calendar) -> PropertySet {
    let mut set = PropertySet::new();
    set.xml(xml::DAV, "resourcetype", "<d:collection/><cal:calendar/>");
    set.text_if(xml::DAV, "displayname", calendar.display_name.as_deref());
    set.text(xml::CALSERVER, "getctag", &calendar.changes.sync_token_uri());
    set.text(xml::DAV, "sync-token", &calendar.changes.sync_token_uri());
    set.xml(
        xml::CALDAV,
        "supported-calendar-component-set",
        calendar
            .components
            .iter()
            .map(|kind| format!("<cal:comp name=\"{}\"/>", kind.as_str()))
            .collect::<String>(),
    );
    set.xml(
        xml::CALDAV,
        "supported-calendar-data",
        "<cal:calendar-data content-type=\"text/calendar\" version=\"2.0\"/>",
    );
    set.xml(
        xml::CALDAV,
        "supported-collation-set",
        "<cal:supported-collation>i;ascii-casemap</cal:supported-collation><cal:supported-collation>i;octet</cal:supported-collation><cal:supported-collation>i;unicode-casemap</cal:supported-collation>",
    );
    set.text(xml::CALDAV, "max-resource-size", &MAX_RESOURCE_SIZE.to_string());
    set.xml(
        xml::CALDAV,
        "schedule-calendar-transp",
        if calendar.transparent { "<cal:transparent/>" } else { "<cal:opaque/>" },
    );
    set.text_if(xml::CALDAV, "calendar-description", calendar.description.as_deref());
    set.text_if(xml::CALDAV, "calendar-timezone", calendar.timezone.as_deref());
    set.text_if(xml::APPLE, "calendar-color", calendar.color.as_deref());
    set.text(xml::APPLE, "calendar-order", &calendar.order.to_string());
    set.text(xml::OC, "owner-principal", &format!("principals/users/{}", caller.user.uid));
    set.text(xml::NC, "owner-displayname", &caller.user.display_name);
    common_properties(&mut set, caller, CALENDAR_REPORTS);
    for (name, inner_xml) in &calendar.dead_properties {
        set.xml(&name.ns, &name.local, inner_xml.clone());
    }
    set
}

/// `text/calendar; charset=utf-8; component=vevent`, as Nextcloud's
/// objects report it.
fn object_content_type(object: &CalendarObject) -> String {
    format!(
        "text/calendar; charset=utf-8; component={}",
        object.data.kind.as_str().to_ascii_lowercase()
    )
}

fn object_properties(caller: &Caller<'_>, object: &CalendarObject) -> PropertySet {
    let mut set = PropertySet::new();
    set.xml(xml::DAV, "resourcetype", "");
    set.text(xml::DAV, "getetag", &object.etag);
    set.text(xml::DAV, "getcontenttype", &object_content_type(object));
    set.text(xml::DAV, "getcontentlength", &object.data.text.len().to_string());
    set.text(xml::DAV, "getlastmodified", &crate::clock::http_date(object.last_modified));
    set.text(xml::CALDAV, "calendar-data", &object.data.text);
    common_properties(
        &mut set,
        caller,
        &[(xml::CALDAV, "calendar-multiget"), (xml::CALDAV, "calendar-query")],
    );
    set
}

fn scheduling_properties(caller: &Caller<'_>, name: &str) -> PropertySet {
    let mut set = PropertySet::new();
    match name {
        "inbox" => {
            set.xml(xml::DAV, "resourcetype", "<d:collection/><cal:schedule-inbox/>");
        }
        "outbox" => {
            set.xml(xml::DAV, "resourcetype", "<d:collection/><cal:schedule-outbox/>");
        }
        _ => {
            set.xml(xml::DAV, "resourcetype", "<d:collection/><nc:trash-bin/>");
            set.text(xml::NC, "trash-bin-retention-duration", "2592000");
        }
    }
    common_properties(&mut set, caller, &[]);
    set
}

/// `/remote.php/dav/calendars/`: lists only the caller's own home.
fn calendars_root(request: &DavRequest, caller: &Caller<'_>) -> Response {
    if request.method.as_str() != "PROPFIND" {
        return webdav::method_not_allowed("This method is not allowed here", "OPTIONS, PROPFIND");
    }
    let properties = match webdav::parse_propfind(&request.body) {
        Ok(properties) => properties,
        Err(response) => return response,
    };
    let mut root = PropertySet::new();
    root.xml(xml::DAV, "resourcetype", "<d:collection/>");
    root.href(xml::DAV, "current-user-principal", &principal_href(&caller.user.uid));
    let mut responses = vec![root.response(CALENDARS_ROOT, &properties, caller.minimal)];
    if request.depth(Depth::One) != Depth::Zero {
        responses.push(home_properties(caller).response(
            &home_href(&caller.user.uid),
            &properties,
            caller.minimal,
        ));
    }
    webdav::multistatus(&responses, None)
}

fn home(world: &mut World, request: &DavRequest, caller: &Caller<'_>) -> Response {
    let uid = caller.user.uid.as_str();
    match request.method.as_str() {
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
                for calendar in world.calendars.of(uid) {
                    responses.push(calendar_properties(caller, calendar).response(
                        &calendar_href(uid, &calendar.uri),
                        &properties,
                        caller.minimal,
                    ));
                }
                for name in SCHEDULING_COLLECTIONS {
                    responses.push(scheduling_properties(caller, name).response(
                        &calendar_href(uid, name),
                        &properties,
                        caller.minimal,
                    ));
                }
            }
            webdav::multistatus(&responses, None)
        }
        "MKCOL" | "MKCALENDAR" => webdav::method_not_allowed(
            "The resource you tried to create already exists",
            "OPTIONS, PROPFIND",
        ),
        "REPORT" => report::home_report(request),
        "GET" | "HEAD" => webdav::not_implemented("GET is only implemented on File objects"),
        _ => webdav::method_not_allowed(
            "This method is not allowed on a calendar home",
            "OPTIONS, PROPFIND, REPORT",
        ),
    }
}

fn scheduling_collection(request: &DavRequest, caller: &Caller<'_>, name: &str) -> Response {
    match request.method.as_str() {
        "PROPFIND" => match webdav::parse_propfind(&request.body) {
            Ok(properties) => {
                let href = calendar_href(&caller.user.uid, name);
                webdav::multistatus(
                    &[scheduling_properties(caller, name).response(
                        &href,
                        &properties,
                        caller.minimal,
                    )],
                    None,
                )
            }
            Err(response) => response,
        },
        "MKCOL" | "MKCALENDAR" => webdav::method_not_allowed(
            "The resource you tried to create already exists",
            "OPTIONS, PROPFIND",
        ),
        "REPORT" => webdav::multistatus(&[], None),
        "POST" => webdav::not_implemented(
            "Scheduling requests through the outbox are not implemented here",
        ),
        "GET" | "HEAD" => webdav::not_implemented("GET is only implemented on File objects"),
        _ => webdav::method_not_allowed(
            "This method is not allowed here",
            "OPTIONS, PROPFIND, REPORT",
        ),
    }
}

fn calendar_collection(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    name: &str,
) -> Response {
    let uid = caller.user.uid.clone();
    let exists = world.calendars.get(&uid, name).is_some();
    if !exists {
        return match request.method.as_str() {
            "MKCALENDAR" => make_calendar(world, request, caller, name, false),
            "MKCOL" => make_calendar(world, request, caller, name, true),
            "PUT" => webdav::method_not_allowed(
                "Creating new files in this collection is not supported",
                "OPTIONS, MKCALENDAR, MKCOL",
            ),
            _ => crate::dav::not_found(),
        };
    }
    match request.method.as_str() {
        "PROPFIND" => {
            let properties = match webdav::parse_propfind(&request.body) {
                Ok(properties) => properties,
                Err(response) => return response,
            };
            let Some(calendar) = world.calendars.get(&uid, name) else {
                return crate::dav::not_found();
            };
            let mut responses = vec![calendar_properties(caller, calendar).response(
                &calendar_href(&uid, name),
                &properties,
                caller.minimal,
            )];
            if request.depth(Depth::One) != Depth::Zero {
                for object in calendar.objects.values() {
                    responses.push(object_properties(caller, object).response(
                        &object_href(&uid, name, &object.uri),
                        &properties,
                        caller.minimal,
                    ));
                }
            }
            webdav::multistatus(&responses, None)
        }
        "PROPPATCH" => proppatch_calendar(world, request, caller, name),
        "DELETE" => {
            if let Some(home) = world.calendars.homes.get_mut(&uid) {
                home.remove(name);
            }
            StatusCode::NO_CONTENT.into_response()
        }
        "REPORT" => report::calendar_report(world, request, caller, name, None),
        "MKCALENDAR" | "MKCOL" => webdav::method_not_allowed(
            "The resource you tried to create already exists",
            &allowed_methods(world, &uid, &[uid.clone(), name.to_string()]),
        ),
        "GET" | "HEAD" => webdav::not_implemented("GET is only implemented on File objects"),
        "PUT" => webdav::method_not_allowed(
            "PUT is not allowed on non-files.",
            &allowed_methods(world, &uid, &[uid.clone(), name.to_string()]),
        ),
        "POST" => {
            webdav::not_implemented("Sharing and publishing calendars is not implemented here")
        }
        "COPY" | "MOVE" => webdav::forbidden("Calendars cannot be copied or moved"),
        other => webdav::not_implemented(&format!(
            "There was no plugin in the system that was willing to handle this {other} method."
        )),
    }
}

/// Applies the properties of MKCALENDAR / extended MKCOL / PROPPATCH to a
/// calendar. Returns each property's status; nothing changes unless all
/// are 200 (sabre's all-or-nothing PROPPATCH).
fn apply_calendar_properties(
    calendar: &mut Calendar,
    updates: &[PropertyUpdate],
    creating: bool,
) -> Vec<(PropertyName, u16)> {
    let mut staged = calendar.clone();
    let mut results = Vec::new();
    for update in updates {
        let name = update.name();
        let status = apply_calendar_property(&mut staged, update, creating);
        results.push((name, status));
    }
    if results.iter().all(|(_, status)| *status == 200) {
        *calendar = staged;
    } else {
        for (_, status) in &mut results {
            if *status == 200 {
                *status = 424;
            }
        }
    }
    results
}

fn apply_calendar_property(
    calendar: &mut Calendar,
    update: &PropertyUpdate,
    creating: bool,
) -> u16 {
    let name = update.name();
    let value = match update {
        PropertyUpdate::Set(element) => Some(element),
        PropertyUpdate::Remove(_) => None,
    };
    let text = value.map(|element| element.text());
    match (name.ns.as_str(), name.local.as_str()) {
        (xml::DAV, "displayname") => calendar.display_name = text,
        (xml::CALDAV, "calendar-description") => calendar.description = text,
        (xml::CALDAV, "calendar-timezone") => calendar.timezone = text,
        (xml::APPLE, "calendar-color") => calendar.color = text,
        (xml::APPLE, "calendar-order") => match text.as_deref().map(str::trim) {
            None => calendar.order = 0,
            Some(order) => match order.parse::<i64>() {
                Ok(order) => calendar.order = order,
                Err(_) => return 400,
            },
        },
        (xml::CALDAV, "schedule-calendar-transp") => {
            calendar.transparent =
                value.is_some_and(|element| element.child(xml::CALDAV, "transparent").is_some());
        }
        (xml::CALDAV, "supported-calendar-component-set") => {
            if !creating {
                return 403;
            }
            let Some(element) = value else {
                return 403;
            };
            let mut components = Vec::new();
            for comp in element.children_named(xml::CALDAV, "comp") {
                match comp.attribute("name").and_then(ComponentKind::parse) {
                    Some(kind) if !components.contains(&kind) => components.push(kind),
                    Some(_) => {}
                    None => return 403,
                }
            }
            if components.is_empty() {
                return 403;
            }
            calendar.components = components;
        }
        (xml::DAV, "resourcetype") if creating => {}
        (xml::DAV, _)
        | (xml::CALSERVER, "getctag")
        | (xml::CALDAV, "supported-calendar-data")
        | (xml::CALDAV, "supported-collation-set")
        | (xml::CALDAV, "max-resource-size")
        | (xml::OC, "owner-principal")
        | (xml::NC, "owner-displayname") => return 403,
        _ => match value {
            Some(element) => {
                calendar.dead_properties.insert(name, element.inner_xml());
            }
            None => {
                calendar.dead_properties.remove(&name);
            }
        },
    }
    200
}

fn make_calendar(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    name: &str,
    extended_mkcol: bool,
) -> Response {
    let uid = caller.user.uid.clone();
    if !webdav::is_valid_name(name) {
        return webdav::forbidden("This calendar name is not allowed");
    }
    let updates = if request.body.iter().all(u8::is_ascii_whitespace) {
        if extended_mkcol {
            return webdav::method_not_allowed(
                "Creating collections in this collection is not allowed",
                "OPTIONS, MKCALENDAR, MKCOL",
            );
        }
        Vec::new()
    } else {
        let root = match webdav::parse_body(&request.body) {
            Ok(root) => root,
            Err(response) => return response,
        };
        let expected =
            if extended_mkcol { (xml::DAV, "mkcol") } else { (xml::CALDAV, "mkcalendar") };
        if !root.is(expected.0, expected.1) {
            return webdav::bad_request(&format!(
                "The request body must be a {{{}}}{} element",
                expected.0, expected.1
            ));
        }
        let updates = webdav::property_updates(&root);
        if extended_mkcol && !is_calendar_resourcetype(&updates) {
            return webdav::error_with_condition(
                StatusCode::FORBIDDEN,
                "Sabre\\DAV\\Exception\\InvalidResourceType",
                "Unknown resourceType for this collection",
                "<d:valid-resourcetype/>",
            );
        }
        updates
    };
    // Nextcloud's createCalendar: the display name defaults to the uri.
    let mut calendar = Calendar::new(0, name);
    calendar.display_name = Some(name.to_string());
    calendar.components = MKCALENDAR_COMPONENTS.to_vec();
    let results = apply_calendar_properties(&mut calendar, &updates, true);
    if results.iter().any(|(_, status)| *status != 200) {
        return webdav::proppatch_response(&calendar_href(&uid, name), &results);
    }
    let created = world.calendars.create(&uid, name);
    let id = created.id;
    *created = Calendar { id, ..calendar };
    (StatusCode::CREATED, [(http::header::CONTENT_LENGTH, "0")]).into_response()
}

fn is_calendar_resourcetype(updates: &[PropertyUpdate]) -> bool {
    updates.iter().any(|update| match update {
        PropertyUpdate::Set(element) => {
            element.is(xml::DAV, "resourcetype") && element.child(xml::CALDAV, "calendar").is_some()
        }
        PropertyUpdate::Remove(_) => false,
    })
}

fn proppatch_calendar(
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
    let Some(calendar) = world.calendars.get_mut(&caller.user.uid, name) else {
        return crate::dav::not_found();
    };
    let results = apply_calendar_properties(calendar, &updates, false);
    if !updates.is_empty() && results.iter().all(|(_, status)| *status == 200) {
        // sabre's backend logs a change of the collection itself ("").
        calendar.changes.record("", Operation::Modified);
    }
    webdav::proppatch_response(&calendar_href(&caller.user.uid, name), &results)
}

fn calendar_object(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    calendar_uri: &str,
    object_uri: &str,
) -> Response {
    let uid = caller.user.uid.clone();
    let Some(calendar) = world.calendars.get(&uid, calendar_uri) else {
        return match request.method.as_str() {
            "PUT" => webdav::conflict("Files cannot be created in non-existent collections"),
            _ => crate::dav::not_found(),
        };
    };
    let existing = calendar.objects.get(object_uri);
    match request.method.as_str() {
        "GET" | "HEAD" => match existing {
            Some(object) => get_object(object, request.method == Method::HEAD),
            None => crate::dav::not_found(),
        },
        "PUT" => put_object(world, request, caller, calendar_uri, object_uri),
        "DELETE" => {
            let Some(object) = existing else {
                return crate::dav::not_found();
            };
            if let Err(response) = webdav::check_preconditions(request, Some(&object.etag)) {
                return response;
            }
            if let Some(calendar) = world.calendars.get_mut(&uid, calendar_uri) {
                calendar.remove(object_uri);
            }
            StatusCode::NO_CONTENT.into_response()
        }
        "PROPFIND" => {
            let Some(object) = existing else {
                return crate::dav::not_found();
            };
            match webdav::parse_propfind(&request.body) {
                Ok(properties) => webdav::multistatus(
                    &[object_properties(caller, object).response(
                        &object_href(&uid, calendar_uri, object_uri),
                        &properties,
                        caller.minimal,
                    )],
                    None,
                ),
                Err(response) => response,
            }
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
            webdav::proppatch_response(&object_href(&uid, calendar_uri, object_uri), &results)
        }
        "REPORT" => {
            if existing.is_none() {
                return crate::dav::not_found();
            }
            report::calendar_report(world, request, caller, calendar_uri, Some(object_uri))
        }
        "MOVE" => move_object(world, request, caller, calendar_uri, object_uri),
        "MKCOL" | "MKCALENDAR" => webdav::method_not_allowed(
            "Calendars cannot be created inside a calendar",
            &allowed_methods(
                world,
                &uid,
                &[uid.clone(), calendar_uri.to_string(), object_uri.to_string()],
            ),
        ),
        "COPY" => webdav::not_implemented("COPY of calendar objects is not implemented here"),
        other => webdav::not_implemented(&format!(
            "There was no plugin in the system that was willing to handle this {other} method."
        )),
    }
}

fn get_object(object: &CalendarObject, head: bool) -> Response {
    let body = if head { String::new() } else { object.data.text.clone() };
    (
        StatusCode::OK,
        [
            (http::header::CONTENT_TYPE, object_content_type(object)),
            (http::header::ETAG, object.etag.clone()),
            (http::header::LAST_MODIFIED, crate::clock::http_date(object.last_modified)),
            (http::header::CONTENT_LENGTH, object.data.text.len().to_string()),
        ],
        body,
    )
        .into_response()
}

/// The error sabre (or Nextcloud) answers for invalid calendar data.
fn invalid_calendar_data(error: InvalidCalendarData, components: &[ComponentKind]) -> Response {
    match error {
        InvalidCalendarData::Parse(message) => webdav::unsupported_media_type(&format!(
            "This resource only supports valid iCalendar 2.0 data. Parse error: {message}"
        )),
        InvalidCalendarData::NotACalendar => {
            webdav::unsupported_media_type("This collection can only support iCalendar objects.")
        }
        InvalidCalendarData::MissingComponent => webdav::error_with_condition(
            StatusCode::FORBIDDEN,
            "Sabre\\CalDAV\\Exception\\InvalidComponentType",
            &format!(
                "iCalendar objects must at least have a component of type {}",
                components.iter().map(|kind| kind.as_str()).collect::<Vec<_>>().join(", ")
            ),
            "<cal:supported-calendar-component xmlns:cal=\"urn:ietf:params:xml:ns:caldav\"/>",
        ),
        InvalidCalendarData::Validation(message) => {
            webdav::unsupported_media_type(&format!("Validation error in iCalendar: {message}"))
        }
        InvalidCalendarData::NoInstances => {
            webdav::forbidden("This recurring event has no valid instances")
        }
    }
}

fn put_object(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    calendar_uri: &str,
    object_uri: &str,
) -> Response {
    let uid = caller.user.uid.clone();
    let Some(calendar) = world.calendars.get_mut(&uid, calendar_uri) else {
        return webdav::conflict("Files cannot be created in non-existent collections");
    };
    if !webdav::is_valid_name(object_uri) {
        return webdav::bad_request("This object name is not allowed");
    }
    let existing_etag = calendar.objects.get(object_uri).map(|object| object.etag.clone());
    if let Err(response) = webdav::check_preconditions(request, existing_etag.as_deref()) {
        return response;
    }
    if request.body.len() > MAX_RESOURCE_SIZE {
        return webdav::forbidden("The calendar object is larger than max-resource-size");
    }
    let Ok(text) = std::str::from_utf8(&request.body) else {
        return webdav::unsupported_media_type(
            "This resource only supports valid iCalendar 2.0 data. Parse error: the body is not UTF-8",
        );
    };
    let data = match ical::parse_calendar_data(text, &calendar.components, caller.now) {
        Ok(data) => data,
        Err(error) => return invalid_calendar_data(error, &calendar.components),
    };
    if let Some(other) = calendar.object_with_uid(&data.uid, object_uri) {
        // Nextcloud's UidConflict: 409 with CALDAV:no-uid-conflict and the
        // href of the object that already holds the UID.
        let href = object_href(&uid, calendar_uri, &other.uri);
        return webdav::error_with_condition(
            StatusCode::CONFLICT,
            "OCA\\DAV\\CalDAV\\Exception\\UidConflict",
            "Calendar object with uid already exists in this calendar collection.",
            &format!(
                "<cal:no-uid-conflict xmlns:cal=\"urn:ietf:params:xml:ns:caldav\"><d:href>{}</d:href></cal:no-uid-conflict>",
                xml::escape(&href)
            ),
        );
    }
    let repaired = data.repaired;
    let created = existing_etag.is_none();
    let object = calendar.store(object_uri, data, caller.now);
    let status = if created { StatusCode::CREATED } else { StatusCode::NO_CONTENT };
    let mut response = (status, [(http::header::CONTENT_LENGTH, "0")]).into_response();
    // sabre sends no ETag when it had to change the body.
    if !repaired && let Ok(value) = http::HeaderValue::from_str(&object.etag) {
        response.headers_mut().insert(http::header::ETAG, value);
    }
    response
}

/// MOVE of an object to another of the caller's calendars (clients move
/// events between calendars this way).
fn move_object(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    calendar_uri: &str,
    object_uri: &str,
) -> Response {
    let uid = caller.user.uid.clone();
    let Some(destination) = request.header("destination") else {
        return webdav::bad_request("The destination header was not supplied");
    };
    let path = url::Url::parse(destination)
        .map(|url| url.path().to_string())
        .unwrap_or_else(|_| destination.to_string());
    let Some(rest) = path.strip_prefix(CALENDARS_ROOT) else {
        return webdav::forbidden("Calendar objects can only be moved into calendars");
    };
    let Some(segments) = webdav::decode_path(rest) else {
        return webdav::bad_request("The destination is not a valid path");
    };
    let [owner, target_calendar, target_uri] = segments.as_slice() else {
        return webdav::forbidden("Calendar objects can only be moved into calendars");
    };
    if *owner != uid || world.calendars.get(&uid, target_calendar).is_none() {
        return webdav::conflict("The destination calendar does not exist");
    }
    let overwrite =
        request.header("overwrite").is_none_or(|value| !value.trim().eq_ignore_ascii_case("F"));
    let Some(source) = world
        .calendars
        .get(&uid, calendar_uri)
        .and_then(|calendar| calendar.objects.get(object_uri))
    else {
        return crate::dav::not_found();
    };
    if let Err(response) = webdav::check_preconditions(request, Some(&source.etag)) {
        return response;
    }
    let data = source.data.clone();
    let Some(target) = world.calendars.get(&uid, target_calendar) else {
        return webdav::conflict("The destination calendar does not exist");
    };
    if target_calendar == calendar_uri && target_uri == object_uri {
        return webdav::forbidden("Source and destination are the same");
    }
    let replaced = target.objects.contains_key(target_uri.as_str());
    if replaced && !overwrite {
        return webdav::precondition_failed(
            "The destination node already exists, and the overwrite header is set to false",
            "Overwrite",
        );
    }
    if !target.components.contains(&data.kind) {
        return invalid_calendar_data(InvalidCalendarData::MissingComponent, &target.components);
    }
    let same_calendar = target_calendar == calendar_uri;
    if let Some(other) = target.object_with_uid(&data.uid, target_uri)
        && !(same_calendar && other.uri == object_uri)
    {
        return webdav::conflict(
            "Calendar object with uid already exists in this calendar collection.",
        );
    }
    if let Some(calendar) = world.calendars.get_mut(&uid, calendar_uri) {
        calendar.remove(object_uri);
    }
    if let Some(calendar) = world.calendars.get_mut(&uid, target_calendar) {
        calendar.store(target_uri, data, caller.now);
    }
    if replaced {
        StatusCode::NO_CONTENT.into_response()
    } else {
        StatusCode::CREATED.into_response()
    }
}

/// Reads `href`s of a multiget into (calendar uri, object uri) of the
/// caller's own calendars; anything else resolves to `None` (a 404 entry).
fn resolve_object_href(href: &str, uid: &str) -> Option<(String, String)> {
    let path = url::Url::parse(href)
        .map(|url| url.path().to_string())
        .unwrap_or_else(|_| href.to_string());
    let rest = path.strip_prefix(CALENDARS_ROOT)?;
    let segments = webdav::decode_path(rest)?;
    match segments.as_slice() {
        [owner, calendar, object] if owner == uid => Some((calendar.clone(), object.clone())),
        _ => None,
    }
}

/// Reads a `d:prop` (or allprop) out of a REPORT body.
pub(crate) fn report_properties(root: &Element) -> PropertyRequest {
    match root.child(xml::DAV, "prop") {
        Some(prop) => PropertyRequest::Named(webdav::property_names(prop)),
        None if root.child(xml::DAV, "allprop").is_some() => {
            PropertyRequest::All { include: Vec::new() }
        }
        None => PropertyRequest::Named(Vec::new()),
    }
}
