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

pub mod delegation;
pub mod filter;
pub mod ical;
mod principals;
pub mod publishing;
mod report;
pub mod webdav;

pub use principals::{handle_principals, handle_root};

use crate::Shared;
use crate::dav::collection::{
    self, Collection, FixtureCollection, FixtureEntry, FixtureMember, Homes, Kind, Member,
    MemberData,
};
use crate::dav::{DavError, DavRequest};
use crate::fixture::{CalendarFixture, Fixture};
use crate::world::{User, World};
use crate::xml::{self, Element};
use axum::response::{IntoResponse, Response};
use http::{Method, StatusCode};
use ical::{CalendarData, ComponentKind, InvalidCalendarData};
use std::collections::BTreeMap;
use webdav::{PropertyRequest, PropertySet, PropertyUpdate};

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
pub type Calendars = Homes<CalDav>;
/// One calendar collection.
pub type Calendar = Collection<CalDav>;
/// One calendar object resource (`.ics`).
pub type CalendarObject = Member<CalendarData>;

/// Calendars as a kind of DAV collection.
#[derive(Debug, Clone)]
pub struct CalDav;

/// What a calendar holds beyond what every collection does.
#[derive(Debug, Clone)]
pub struct CalendarExtra {
    pub color: Option<String>,
    pub order: i64,
    /// `cal:calendar-timezone`: a VCALENDAR holding one VTIMEZONE.
    pub timezone: Option<String>,
    pub transparent: bool,
    pub components: Vec<ComponentKind>,
    /// The token of the calendar's public link, while it is published.
    pub published: Option<String>,
}

impl Default for CalendarExtra {
    fn default() -> Self {
        CalendarExtra {
            color: None,
            order: 0,
            timezone: None,
            transparent: false,
            components: FIXTURE_COMPONENTS.to_vec(),
            published: None,
        }
    }
}

impl MemberData for CalendarData {
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

impl Homes<CalDav> {
    /// Seeds calendars from the fixture and gives every user without one
    /// Nextcloud's default "Personal" calendar.
    pub fn from_fixture(
        fixture: &Fixture,
        users: &BTreeMap<String, User>,
        now: i64,
        problems: &mut Vec<String>,
    ) -> Calendars {
        let mut calendars = Calendars::seed_fixture(
            fixture,
            &fixture.calendars,
            users,
            SCHEDULING_COLLECTIONS,
            now,
            problems,
        );
        calendars.first_login(users);
        calendars
    }

    /// The personal calendar Nextcloud creates at a user's first login,
    /// for each of `users` without a calendar.
    pub fn first_login(&mut self, users: &BTreeMap<String, User>) {
        self.ensure_first_login(users, DEFAULT_CALENDAR_URI, |calendar| {
            calendar.display_name = Some(DEFAULT_CALENDAR_NAME.to_string());
            calendar.extra.color = Some(DEFAULT_CALENDAR_COLOR.to_string());
            calendar.extra.components = FIRST_LOGIN_COMPONENTS.to_vec();
        });
    }
}

impl FixtureCollection<CalDav> for CalendarFixture {
    fn entry(&self) -> FixtureEntry<'_> {
        let events = self.events.iter();
        FixtureEntry {
            owner: &self.owner,
            uri: &self.uri,
            display_name: &self.display_name,
            members: events.map(|e| FixtureMember::new(&e.uri, &e.ics, &e.source)).collect(),
        }
    }

    fn configure(&self, calendar: &mut Calendar, label: &str, problems: &mut Vec<String>) {
        let mut components = Vec::new();
        for name in &self.components {
            match ComponentKind::parse(name) {
                Some(kind) if !components.contains(&kind) => components.push(kind),
                Some(_) => {}
                None => problems.push(format!(
                    "{label}: unknown component {name:?} (VEVENT, VTODO or VJOURNAL)"
                )),
            }
        }
        calendar.extra.color = self.color.clone();
        if !components.is_empty() {
            calendar.extra.components = components;
        }
    }
}

/// Everything a handler needs to know about the caller.
pub struct Caller<'a> {
    /// Whose home the request is in: the caller, or the user whose
    /// calendars a delegate reaches ([`Caller::access`]).
    pub(crate) user: &'a User,
    pub(crate) now: i64,
    pub(crate) minimal: bool,
    /// Who sent the request (`current-user-principal`).
    pub(crate) principal: String,
    /// `None` for the home's owner; a delegate's proxy otherwise.
    pub(crate) access: Option<delegation::Proxy>,
    /// The absolute URL the server names itself by, for absolute links.
    pub(crate) base: String,
    /// Where the hrefs of a published calendar are rooted for a reader by
    /// its token; `None`: the DAV tree's own paths.
    pub(crate) public: Option<PublicRoot>,
}

/// A published calendar's DAV path and the public path it is read at.
pub(crate) struct PublicRoot {
    /// The calendar's `/remote.php/dav/calendars/{owner}/{uri}/`.
    pub(crate) private: String,
    /// `/remote.php/dav/public-calendars/{token}/`.
    pub(crate) public: String,
}

impl<'a> Caller<'a> {
    /// `user` sending `request` at `now`; `minimal` as its Prefer/Brief ask.
    pub(crate) fn new(user: &'a User, now: i64, request: &DavRequest, base: String) -> Caller<'a> {
        Caller {
            user,
            now,
            minimal: webdav::prefers_minimal(request),
            principal: user.uid.clone(),
            access: None,
            base,
            public: None,
        }
    }

    /// `href` as this caller reaches it: below the public path for a
    /// reader of a published calendar, unchanged otherwise.
    fn rooted(&self, href: String) -> String {
        match &self.public {
            Some(root) => match href.strip_prefix(&root.private) {
                Some(rest) => format!("{}{rest}", root.public),
                None => href,
            },
            None => href,
        }
    }

    /// `href` as the DAV tree names it: a public path made the calendar's own.
    pub(crate) fn unrooted<'h>(&self, href: &'h str) -> std::borrow::Cow<'h, str> {
        match &self.public {
            Some(root) => match href.strip_prefix(&root.public) {
                Some(rest) => format!("{}{rest}", root.private).into(),
                None => href.into(),
            },
            None => href.into(),
        }
    }

    /// The href of collection `uri` of `uid`'s home, as this caller reaches it.
    pub(crate) fn collection_href<K: Kind>(&self, uid: &str, uri: &str) -> String {
        self.rooted(collection::collection_href::<K>(uid, uri))
    }

    /// The href of member `member_uri` of collection `collection_uri`, as
    /// this caller reaches it.
    pub(crate) fn member_href<K: Kind>(
        &self,
        uid: &str,
        collection_uri: &str,
        member_uri: &str,
    ) -> String {
        self.rooted(collection::member_href::<K>(uid, collection_uri, member_uri))
    }
}

/// The absolute base URL Nextcloud generates links with for `request`.
pub(crate) fn request_base(world: &World, request: &DavRequest) -> String {
    let host = request.headers.get(http::header::HOST).and_then(|host| host.to_str().ok());
    crate::oidc::issuer(world, host, "")
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
    if request.method == Method::OPTIONS {
        return Ok(options(&allowed_methods(world, uid, segments)));
    }
    match segments {
        // `/remote.php/dav/calendars/`: lists only the caller's own home.
        [] => collection::above_home(
            request,
            caller,
            CALENDARS_ROOT,
            (&collection::home_href::<CalDav>(uid), collection::home_properties(caller)),
        ),
        [owner, ..] if owner != uid => match world.calendar_delegations.access(owner, uid) {
            Some(access) => delegated(world, request, caller, owner, access, segments),
            None => match segments {
                [owner, name] => Err(elsewhere(world, request, owner, name)),
                _ => Err(DavError::not_found()),
            },
        },
        _ => in_home(world, request, caller, segments),
    }
}

/// Methods a read-only delegate may send.
pub(crate) const READ_METHODS: &[&str] = &["PROPFIND", "REPORT", "GET", "HEAD", "OPTIONS"];

/// A request into `owner`'s home from a delegate of theirs: answered as in
/// the owner's home, naming the delegate as the current user; a read
/// proxy only reads (sabre's ACL plugin refuses the rest with 403).
fn delegated(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    owner: &str,
    access: delegation::Proxy,
    segments: &[String],
) -> Result<Response, DavError> {
    if access == delegation::Proxy::Read && !READ_METHODS.contains(&request.method.as_str()) {
        let privilege = match request.method.as_str() {
            "PUT" => "write-content",
            "PROPPATCH" => "write-properties",
            "DELETE" | "MOVE" => "unbind",
            "MKCOL" | "MKCALENDAR" | "COPY" => "bind",
            _ => "write",
        };
        return Err(DavError::forbidden(format!(
            "User did not have the required privileges ({{DAV:}}{privilege}) for path calendars/{}",
            segments.join("/")
        )));
    }
    let home_owner = world.users.get(owner).cloned().ok_or_else(DavError::not_found)?;
    let as_delegate = Caller {
        user: &home_owner,
        now: caller.now,
        minimal: caller.minimal,
        principal: caller.principal.clone(),
        access: Some(access),
        base: caller.base.clone(),
        public: None,
    };
    in_home(world, request, &as_delegate, segments)
}

/// A request inside the home of `caller.user`.
pub(crate) fn in_home(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    segments: &[String],
) -> Result<Response, DavError> {
    match segments {
        [_] => collection::home::<CalDav>(world, request, caller),
        [_, name] => match name.as_str() {
            "inbox" | "outbox" | "trashbin" => scheduling_collection(request, caller, name),
            _ if request.method == Method::POST => publishing::post(world, request, caller, name),
            _ => collection::collection::<CalDav>(world, request, caller, name),
        },
        [_, name, object] if !SCHEDULING_COLLECTIONS.contains(&name.as_str()) => {
            collection::member::<CalDav>(world, request, caller, name, object)
        }
        _ => Err(DavError::not_found()),
    }
}

/// The 404 for a calendar in another user's home, in Nextcloud's words
/// (`dav_features/caldav.feature`): creating one there names the home, a
/// calendar that exists but is not shared says so, anything else is
/// sabre's "Node with name".
fn elsewhere(world: &World, request: &DavRequest, owner: &str, name: &str) -> DavError {
    if CalDav::CREATE_METHODS.contains(&request.method.as_str()) {
        return node_not_found(owner);
    }
    match CalDav::homes(world).get(owner, name) {
        Some(_) => DavError::NotFound(format!("Calendar with name '{name}' could not be found")),
        None => node_not_found(name),
    }
}

fn node_not_found(name: &str) -> DavError {
    DavError::NotFound(format!("Node with name '{name}' could not be found"))
}

/// The methods a path accepts, for OPTIONS and 405s.
fn allowed_methods(world: &World, uid: &str, segments: &[String]) -> String {
    match segments {
        [] | [_] => "OPTIONS, GET, HEAD, PROPFIND, REPORT".to_string(),
        [_, name] if SCHEDULING_COLLECTIONS.contains(&name.as_str()) => {
            "OPTIONS, GET, HEAD, PROPFIND, REPORT".into()
        }
        [_, name] if world.calendars.get(uid, name).is_some() => {
            collection::COLLECTION_ALLOW.to_string()
        }
        [_, _] => "OPTIONS, MKCALENDAR, MKCOL".to_string(),
        [_, name, object]
            if world
                .calendars
                .get(uid, name)
                .is_some_and(|calendar| calendar.members.contains_key(object)) =>
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

/// sabre's refusal on a node that is neither a file nor writable (the DAV
/// root, a principal, a scheduling collection): GET and HEAD are not
/// implemented there, anything else is a 405 saying `not_allowed`.
pub(crate) fn refuse_on_read_only_node(method: &str, not_allowed: &str) -> DavError {
    match method {
        "GET" | "HEAD" => DavError::not_implemented("GET is only implemented on File objects"),
        _ => DavError::method_not_allowed(not_allowed, "OPTIONS, PROPFIND, REPORT"),
    }
}

pub fn principal_href(uid: &str) -> String {
    format!("{PRINCIPALS_USERS}{}/", crate::dav::encode_segment(uid))
}

/// The owner's privileges, as sabre lists them for a node the caller owns.
pub const OWNER_PRIVILEGES: &str = "<d:privilege><d:all/></d:privilege><d:privilege><d:read/></d:privilege><d:privilege><d:write/></d:privilege><d:privilege><d:write-properties/></d:privilege><d:privilege><d:write-content/></d:privilege><d:privilege><d:unlock/></d:privilege><d:privilege><d:bind/></d:privilege><d:privilege><d:unbind/></d:privilege><d:privilege><d:write-acl/></d:privilege><d:privilege><d:read-acl/></d:privilege><d:privilege><d:read-current-user-privilege-set/></d:privilege><d:privilege><cal:read-free-busy/></d:privilege>";

/// What a read proxy may do in the home it reaches.
const DELEGATE_READ_PRIVILEGES: &str = "<d:privilege><d:read/></d:privilege><d:privilege><d:read-acl/></d:privilege><d:privilege><d:read-current-user-privilege-set/></d:privilege><d:privilege><cal:read-free-busy/></d:privilege>";

/// What a write proxy may do there: all but change who may.
const DELEGATE_WRITE_PRIVILEGES: &str = "<d:privilege><d:read/></d:privilege><d:privilege><d:write/></d:privilege><d:privilege><d:write-properties/></d:privilege><d:privilege><d:write-content/></d:privilege><d:privilege><d:unlock/></d:privilege><d:privilege><d:bind/></d:privilege><d:privilege><d:unbind/></d:privilege><d:privilege><d:read-acl/></d:privilege><d:privilege><d:read-current-user-privilege-set/></d:privilege><d:privilege><cal:read-free-busy/></d:privilege>";

/// `current-user-principal`: the caller's principal, or
/// `d:unauthenticated` for someone reading a published calendar unsigned.
pub(crate) fn current_user_principal(set: &mut PropertySet, caller: &Caller<'_>) {
    if caller.principal.is_empty() {
        set.xml(xml::DAV, "current-user-principal", "<d:unauthenticated/>");
    } else {
        set.href(xml::DAV, "current-user-principal", &principal_href(&caller.principal));
    }
}

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
    current_user_principal(set, caller);
    set.href(xml::DAV, "owner", &principal_href(&caller.user.uid));
    let privileges = match caller.access {
        None => OWNER_PRIVILEGES,
        Some(delegation::Proxy::Write) => DELEGATE_WRITE_PRIVILEGES,
        Some(delegation::Proxy::Read) => DELEGATE_READ_PRIVILEGES,
    };
    set.xml(xml::DAV, "current-user-privilege-set", privileges);
    principal_collections(set, reports);
}

/// `principal-collection-set` and `supported-report-set` (the principal
/// REPORTs, then `reports`): how sabre ends the properties of a principal
/// and of every node a caller owns.
pub(crate) fn principal_collections(set: &mut PropertySet, reports: &[(&str, &str)]) {
    set.xml(
        xml::DAV,
        "principal-collection-set",
        "<d:href>/remote.php/dav/principals/users/</d:href><d:href>/remote.php/dav/principals/groups/</d:href>",
    );
    let mut all_reports = PRINCIPAL_REPORTS.to_vec();
    all_reports.extend_from_slice(reports);
    set.xml(xml::DAV, "supported-report-set", supported_reports(&all_reports));
}

const CALENDAR_REPORTS: &[(&str, &str)] = &[
    (xml::CALDAV, "calendar-multiget"),
    (xml::CALDAV, "calendar-query"),
    (xml::CALDAV, "free-busy-query"),
    (xml::DAV, "sync-collection"),
];

impl Kind for CalDav {
    fn missing_collection(name: &str) -> DavError {
        node_not_found(name)
    }

    type Data = CalendarData;
    type Extra = CalendarExtra;
    type ParseError = InvalidCalendarData;

    const ROOT: &'static str = CALENDARS_ROOT;
    const HOME_PREFIX: &'static [&'static str] = &[];
    const COLLECTION_NOUN: &'static str = "calendar";
    const HOME_NOUN: &'static str = "a calendar home";
    const HOME_ALLOW: &'static str = "OPTIONS, PROPFIND, REPORT";
    const MEMBER_NOUN: &'static str = "object";
    const FIXTURE_MEMBER_NOUN: &'static str = "event";
    const RESOURCE_NOUN: &'static str = "calendar object";
    const FIXTURE_FIELD: &'static str = "ics";
    const FORMAT: &'static str = "iCalendar";
    const NOT_UTF8: &'static str =
        "This resource only supports valid iCalendar 2.0 data. Parse error: the body is not UTF-8";
    const MAX_RESOURCE_SIZE: usize = MAX_RESOURCE_SIZE;
    const CREATE_METHODS: &'static [&'static str] = &["MKCALENDAR", "MKCOL"];
    const CREATE_ALLOW: &'static str = "OPTIONS, MKCALENDAR, MKCOL";
    const CREATE_ELEMENT: (&'static str, &'static str) = (xml::CALDAV, "mkcalendar");
    const RESOURCETYPE: (&'static str, &'static str) = (xml::CALDAV, "calendar");
    const NAME_BEFORE_BODY: bool = true;
    const DATA_PROPERTY: (&'static str, &'static str) = (xml::CALDAV, "calendar-data");
    const MEMBER_REPORTS: &'static [(&'static str, &'static str)] =
        &[(xml::CALDAV, "calendar-multiget"), (xml::CALDAV, "calendar-query")];

    fn homes(world: &World) -> &Calendars {
        &world.calendars
    }

    fn homes_mut(world: &mut World) -> &mut Calendars {
        &mut world.calendars
    }

    const COLLECTION_REPORTS: &'static [(&'static str, &'static str)] = CALENDAR_REPORTS;

    fn own_properties(set: &mut PropertySet, caller: &Caller<'_>, calendar: &Calendar) {
        set.text(xml::CALSERVER, "getctag", &calendar.changes.sync_token_uri());
        set.text(xml::DAV, "sync-token", &calendar.changes.sync_token_uri());
        set.xml(
            xml::CALDAV,
            "supported-calendar-component-set",
            calendar
                .extra
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
            if calendar.extra.transparent { "<cal:transparent/>" } else { "<cal:opaque/>" },
        );
        set.text_if(xml::CALDAV, "calendar-description", calendar.description.as_deref());
        set.text_if(xml::CALDAV, "calendar-timezone", calendar.extra.timezone.as_deref());
        set.text_if(xml::APPLE, "calendar-color", calendar.extra.color.as_deref());
        set.text(xml::APPLE, "calendar-order", &calendar.extra.order.to_string());
        set.text(xml::OC, "owner-principal", &format!("principals/users/{}", caller.user.uid));
        set.text(xml::NC, "owner-displayname", &caller.user.display_name);
        set.xml(xml::CALSERVER, "allowed-sharing-modes", publishing::ALLOWED_SHARING_MODES);
        if let Some(token) = &calendar.extra.published {
            set.xml(xml::CALSERVER, "publish-url", publishing::publish_url(&caller.base, token));
        }
    }

    /// `text/calendar; charset=utf-8; component=vevent`, as Nextcloud's
    /// objects report it.
    fn content_type(object: &CalendarObject) -> String {
        format!(
            "text/calendar; charset=utf-8; component={}",
            object.data.kind.as_str().to_ascii_lowercase()
        )
    }

    fn apply_property(calendar: &mut Calendar, update: &PropertyUpdate, creating: bool) -> u16 {
        apply_calendar_property(calendar, update, creating)
    }

    /// Nextcloud's createCalendar: the display name defaults to the uri.
    fn prepare_new(calendar: &mut Calendar) {
        calendar.display_name = Some(calendar.uri.clone());
        calendar.extra.components = MKCALENDAR_COMPONENTS.to_vec();
    }

    fn parse(
        text: &str,
        calendar: &Calendar,
        now: i64,
    ) -> Result<CalendarData, InvalidCalendarData> {
        ical::parse_calendar_data(text, &calendar.extra.components, now)
    }

    fn invalid(error: InvalidCalendarData, calendar: &Calendar) -> DavError {
        invalid_calendar_data(error, &calendar.extra.components)
    }

    /// Nextcloud's UidConflict: 409 with CALDAV:no-uid-conflict and the
    /// href of the object that already holds the UID.
    fn uid_conflict(other_href: &str) -> DavError {
        DavError::Condition {
            status: StatusCode::CONFLICT,
            exception: "OCA\\DAV\\CalDAV\\Exception\\UidConflict",
            message: "Calendar object with uid already exists in this calendar collection."
                .to_string(),
            condition: format!(
                "<cal:no-uid-conflict xmlns:cal=\"urn:ietf:params:xml:ns:caldav\"><d:href>{}</d:href></cal:no-uid-conflict>",
                xml::escape(other_href)
            ),
        }
    }

    const REPORT: collection::Report = report::calendar_report;

    fn home_children(caller: &Caller<'_>) -> Vec<(String, PropertySet)> {
        SCHEDULING_COLLECTIONS
            .iter()
            .map(|name| {
                (
                    caller.collection_href::<CalDav>(&caller.user.uid, name),
                    scheduling_properties(caller, name),
                )
            })
            .collect()
    }

    fn other_collection_method(method: &str) -> DavError {
        match method {
            "COPY" | "MOVE" => DavError::forbidden("Calendars cannot be copied or moved"),
            other => DavError::no_plugin_for(other),
        }
    }

    fn other_member_method(
        world: &mut World,
        request: &DavRequest,
        caller: &Caller<'_>,
        calendar_uri: &str,
        object_uri: &str,
    ) -> Result<Response, DavError> {
        let uid = caller.user.uid.clone();
        match request.method.as_str() {
            "MOVE" => move_object(world, request, caller, calendar_uri, object_uri),
            "MKCOL" | "MKCALENDAR" => Err(DavError::method_not_allowed(
                "Calendars cannot be created inside a calendar",
                allowed_methods(
                    world,
                    &uid,
                    &[uid.clone(), calendar_uri.to_string(), object_uri.to_string()],
                ),
            )),
            "COPY" => {
                Err(DavError::not_implemented("COPY of calendar objects is not implemented here"))
            }
            other => Err(DavError::no_plugin_for(other)),
        }
    }
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

fn scheduling_collection(
    request: &DavRequest,
    caller: &Caller<'_>,
    name: &str,
) -> Result<Response, DavError> {
    match request.method.as_str() {
        "PROPFIND" => {
            let properties = webdav::parse_propfind(&request.body)?;
            let href = caller.collection_href::<CalDav>(&caller.user.uid, name);
            Ok(webdav::multistatus(
                &[scheduling_properties(caller, name).response(&href, &properties, caller.minimal)],
                None,
            ))
        }
        "MKCOL" | "MKCALENDAR" => Err(DavError::method_not_allowed(
            "The resource you tried to create already exists",
            "OPTIONS, PROPFIND",
        )),
        "REPORT" => Ok(webdav::multistatus(&[], None)),
        "POST" => Err(DavError::not_implemented(
            "Scheduling requests through the outbox are not implemented here",
        )),
        method => Err(refuse_on_read_only_node(method, "This method is not allowed here")),
    }
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
        (xml::CALDAV, "calendar-timezone") => calendar.extra.timezone = text,
        (xml::APPLE, "calendar-color") => calendar.extra.color = text,
        (xml::APPLE, "calendar-order") => match text.as_deref().map(str::trim) {
            None => calendar.extra.order = 0,
            Some(order) => match order.parse::<i64>() {
                Ok(order) => calendar.extra.order = order,
                Err(_) => return 400,
            },
        },
        (xml::CALDAV, "schedule-calendar-transp") => {
            calendar.extra.transparent =
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
            calendar.extra.components = components;
        }
        (xml::DAV, "resourcetype") if creating => {}
        (xml::DAV, _)
        | (xml::CALSERVER, "getctag")
        | (xml::CALDAV, "supported-calendar-data")
        | (xml::CALDAV, "supported-collation-set")
        | (xml::CALDAV, "max-resource-size")
        | (xml::OC, "owner-principal")
        | (xml::NC, "owner-displayname") => return 403,
        _ => collection::apply_dead_property(calendar, update),
    }
    200
}

/// The error sabre (or Nextcloud) answers for invalid calendar data.
fn invalid_calendar_data(error: InvalidCalendarData, components: &[ComponentKind]) -> DavError {
    match error {
        InvalidCalendarData::Parse(message) => DavError::unsupported_media_type(format!(
            "This resource only supports valid iCalendar 2.0 data. Parse error: {message}"
        )),
        InvalidCalendarData::NotACalendar => {
            DavError::unsupported_media_type("This collection can only support iCalendar objects.")
        }
        InvalidCalendarData::MissingComponent => DavError::Condition {
            status: StatusCode::FORBIDDEN,
            exception: "Sabre\\CalDAV\\Exception\\InvalidComponentType",
            message: format!(
                "iCalendar objects must at least have a component of type {}",
                components.iter().map(|kind| kind.as_str()).collect::<Vec<_>>().join(", ")
            ),
            condition:
                "<cal:supported-calendar-component xmlns:cal=\"urn:ietf:params:xml:ns:caldav\"/>"
                    .to_string(),
        },
        InvalidCalendarData::Validation(message) => {
            DavError::unsupported_media_type(format!("Validation error in iCalendar: {message}"))
        }
        InvalidCalendarData::NoInstances => {
            DavError::forbidden("This recurring event has no valid instances")
        }
    }
}

/// MOVE of an object to another of the caller's calendars (clients move
/// events between calendars this way).
fn move_object(
    world: &mut World,
    request: &DavRequest,
    caller: &Caller<'_>,
    calendar_uri: &str,
    object_uri: &str,
) -> Result<Response, DavError> {
    let uid = caller.user.uid.clone();
    let Some(destination) = request.header("destination") else {
        return Err(DavError::bad_request("The destination header was not supplied"));
    };
    let path = url::Url::parse(destination)
        .map(|url| url.path().to_string())
        .unwrap_or_else(|_| destination.to_string());
    let Some(rest) = path.strip_prefix(CALENDARS_ROOT) else {
        return Err(DavError::forbidden("Calendar objects can only be moved into calendars"));
    };
    let Some(segments) = webdav::decode_path(rest) else {
        return Err(DavError::bad_request("The destination is not a valid path"));
    };
    let [owner, target_calendar, target_uri] = segments.as_slice() else {
        return Err(DavError::forbidden("Calendar objects can only be moved into calendars"));
    };
    if *owner != uid || world.calendars.get(&uid, target_calendar).is_none() {
        return Err(DavError::conflict("The destination calendar does not exist"));
    }
    let overwrite =
        request.header("overwrite").is_none_or(|value| !value.trim().eq_ignore_ascii_case("F"));
    let Some(source) = world
        .calendars
        .get(&uid, calendar_uri)
        .and_then(|calendar| calendar.members.get(object_uri))
    else {
        return Err(DavError::not_found());
    };
    webdav::check_preconditions(request, Some(&source.etag))?;
    let data = source.data.clone();
    let Some(target) = world.calendars.get(&uid, target_calendar) else {
        return Err(DavError::conflict("The destination calendar does not exist"));
    };
    if target_calendar == calendar_uri && target_uri == object_uri {
        return Err(DavError::forbidden("Source and destination are the same"));
    }
    let replaced = target.members.contains_key(target_uri.as_str());
    if replaced && !overwrite {
        return Err(DavError::precondition_failed(
            "The destination node already exists, and the overwrite header is set to false",
            "Overwrite",
        ));
    }
    if !target.extra.components.contains(&data.kind) {
        return Err(invalid_calendar_data(
            InvalidCalendarData::MissingComponent,
            &target.extra.components,
        ));
    }
    let same_calendar = target_calendar == calendar_uri;
    if let Some(other) = target.member_with_uid(&data.uid, target_uri)
        && !(same_calendar && other.uri == object_uri)
    {
        return Err(DavError::conflict(
            "Calendar object with uid already exists in this calendar collection.",
        ));
    }
    if let Some(calendar) = world.calendars.get_mut(&uid, calendar_uri) {
        calendar.remove(object_uri);
    }
    if let Some(calendar) = world.calendars.get_mut(&uid, target_calendar) {
        calendar.store(target_uri, data, caller.now);
    }
    if replaced {
        Ok(StatusCode::NO_CONTENT.into_response())
    } else {
        Ok(StatusCode::CREATED.into_response())
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
