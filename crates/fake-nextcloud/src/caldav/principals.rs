//! Principals at `/remote.php/dav/principals/` and the DAV root
//! `/remote.php/dav/`: what a CalDAV/CardDAV client reads to find its
//! calendar and address book homes (RFC 5397 current-user-principal, RFC
//! 4791 calendar-home-set, RFC 6352 addressbook-home-set).
//!
//! Every user and group principal is visible to every user, as on a
//! Nextcloud that allows sharing with all users; what a principal points to
//! (homes) is still only reachable by its owner. A user's own principal
//! takes one property by PROPPATCH, `schedule-default-calendar-URL`.

use super::CalDav;
use super::delegation::Proxy;
use super::webdav::{self, PropertyRequest, PropertySet};
use super::{
    Caller, OWNER_PRIVILEGES, PRINCIPAL_REPORTS, principal_collections, principal_href,
    supported_reports,
};
use crate::Shared;
use crate::carddav::CardDav;
use crate::dav::collection;
use crate::dav::{DavError, DavRequest, Depth};
use crate::world::{User, World};
use crate::xml::{self, Element};
use axum::response::{IntoResponse, Response};
use http::Method;
use std::collections::BTreeSet;

const PRINCIPALS_ROOT: &str = "/remote.php/dav/principals/";
const DAV_ROOT_HREF: &str = "/remote.php/dav/";
/// Children of `/remote.php/dav/` on a Nextcloud with the usual apps.
const DAV_ROOT_CHILDREN: &[&str] = &[
    "principals",
    "calendars",
    "system-calendars",
    "addressbooks",
    "system-addressbooks",
    "files",
    "uploads",
    "comments",
    "systemtags",
    "systemtags-relations",
    "trashbin",
    "versions",
    "avatars",
    "public-calendars",
    "provisioning",
];
/// Children of `/remote.php/dav/principals/`.
const PRINCIPAL_COLLECTIONS: &[&str] = &["users", "groups", "calendar-resources", "calendar-rooms"];

/// The read-only privileges a caller has on somebody else's principal.
const READ_PRIVILEGES: &str = "<d:privilege><d:read/></d:privilege><d:privilege><d:read-acl/></d:privilege><d:privilege><d:read-current-user-privilege-set/></d:privilege>";

pub async fn handle_principals(shared: &Shared, request: DavRequest) -> Response {
    let now = shared.now();
    let mut world = shared.world();
    principals_locked(&mut world, &request, now).into_response()
}

pub async fn handle_root(shared: &Shared, request: DavRequest) -> Response {
    let now = shared.now();
    let world = shared.world();
    root_locked(&world, &request, now).into_response()
}

fn group_href(gid: &str) -> String {
    format!("{PRINCIPALS_ROOT}groups/{}/", crate::dav::encode_segment(gid))
}

fn collection_properties(caller: &Caller<'_>) -> PropertySet {
    let mut set = PropertySet::new();
    set.xml(xml::DAV, "resourcetype", "<d:collection/>");
    set.href(xml::DAV, "current-user-principal", &principal_href(&caller.user.uid));
    principal_collections(&mut set, &[]);
    set
}

fn user_principal_properties(caller: &Caller<'_>, world: &World, user: &User) -> PropertySet {
    let uid = user.uid.as_str();
    let principal = principal_href(uid);
    let mut set = PropertySet::new();
    set.xml(xml::DAV, "resourcetype", "<d:collection/><d:principal/>");
    set.text(xml::DAV, "displayname", &user.display_name);
    set.href(xml::DAV, "principal-URL", &principal);
    let mailto = user.email.as_ref().map(|email| format!("mailto:{email}"));
    set.xml(xml::DAV, "alternate-URI-set", hrefs(mailto.iter().cloned()));
    let proxies: Vec<(&str, Proxy)> = world.calendar_delegations.held_by(uid).collect();
    set.xml(
        xml::DAV,
        "group-membership",
        hrefs(
            user.groups.iter().map(|gid| group_href(gid)).chain(
                proxies.iter().map(|(owner, proxy)| format!("{}/", proxy_href(owner, *proxy))),
            ),
        ),
    );
    for (proxy, property) in
        [(Proxy::Read, "calendar-proxy-read-for"), (Proxy::Write, "calendar-proxy-write-for")]
    {
        let owners = proxies.iter().filter(|(_, held)| *held == proxy);
        set.xml(xml::CALSERVER, property, hrefs(owners.map(|(owner, _)| principal_href(owner))));
    }
    set.xml(xml::DAV, "group-member-set", "");
    set.href(xml::CALDAV, "calendar-home-set", &collection::home_href::<CalDav>(uid));
    set.href(
        xml::CALDAV,
        "schedule-inbox-URL",
        &collection::collection_href::<CalDav>(uid, "inbox"),
    );
    set.href(
        xml::CALDAV,
        "schedule-outbox-URL",
        &collection::collection_href::<CalDav>(uid, "outbox"),
    );
    if caller.user.uid == uid
        && let Some(calendar) = world.calendars.of(uid).next()
    {
        let chosen = world.schedule_defaults.get(uid).and_then(|uri| world.calendars.get(uid, uri));
        let default = chosen
            .or_else(|| world.calendars.get(uid, super::DEFAULT_CALENDAR_URI))
            .unwrap_or(calendar);
        set.href(
            xml::CALDAV,
            "schedule-default-calendar-URL",
            &collection::collection_href::<CalDav>(uid, &default.uri),
        );
    }
    set.xml(
        xml::CALDAV,
        "calendar-user-address-set",
        hrefs(mailto.into_iter().chain([principal.clone()])),
    );
    set.text(xml::CALDAV, "calendar-user-type", "INDIVIDUAL");
    set.href(xml::CARDDAV, "addressbook-home-set", &collection::home_href::<CardDav>(uid));
    if let Some(email) = &user.email {
        set.text(xml::SABRE, "email-address", email);
        set.xml(
            xml::CALSERVER,
            "email-address-set",
            format!("<cs:email-address>{}</cs:email-address>", xml::escape(email)),
        );
    }
    set.href(xml::DAV, "current-user-principal", &principal_href(&caller.user.uid));
    set.href(xml::DAV, "owner", &principal);
    set.xml(
        xml::DAV,
        "current-user-privilege-set",
        if caller.user.uid == uid { OWNER_PRIVILEGES } else { READ_PRIVILEGES },
    );
    principal_collections(&mut set, &[]);
    set
}

fn group_principal_properties(
    caller: &Caller<'_>,
    world: &World,
    gid: &str,
    display_name: &str,
) -> PropertySet {
    let mut set = PropertySet::new();
    set.xml(xml::DAV, "resourcetype", "<d:principal/>");
    set.text(xml::DAV, "displayname", display_name);
    set.href(xml::DAV, "principal-URL", &group_href(gid));
    set.xml(xml::DAV, "alternate-URI-set", "");
    set.xml(xml::DAV, "group-membership", "");
    set.xml(
        xml::DAV,
        "group-member-set",
        hrefs(
            world
                .users
                .values()
                .filter(|user| user.groups.contains(gid))
                .map(|user| principal_href(&user.uid)),
        ),
    );
    set.text(xml::CALDAV, "calendar-user-type", "GROUP");
    set.href(xml::DAV, "current-user-principal", &principal_href(&caller.user.uid));
    set.xml(xml::DAV, "current-user-privilege-set", READ_PRIVILEGES);
    set.xml(xml::DAV, "supported-report-set", supported_reports(PRINCIPAL_REPORTS));
    set
}

fn proxy_href(uid: &str, proxy: Proxy) -> String {
    // A proxy is a principal but no collection: sabre writes its href
    // without the trailing slash its principal-URL has.
    format!("{}{}", principal_href(uid), proxy.segment())
}

fn proxy_properties(caller: &Caller<'_>, world: &World, uid: &str, proxy: Proxy) -> PropertySet {
    let mut set = PropertySet::new();
    let resourcetype = match proxy {
        Proxy::Read => "<d:principal/><cs:calendar-proxy-read/>",
        Proxy::Write => "<d:principal/><cs:calendar-proxy-write/>",
    };
    set.xml(xml::DAV, "resourcetype", resourcetype);
    set.href(xml::DAV, "principal-URL", &format!("{}/", proxy_href(uid, proxy)));
    set.xml(
        xml::DAV,
        "group-member-set",
        hrefs(world.calendar_delegations.members(uid, proxy).map(principal_href)),
    );
    set.xml(xml::DAV, "group-membership", "");
    set.href(xml::DAV, "current-user-principal", &principal_href(&caller.user.uid));
    set
}

fn hrefs(hrefs: impl Iterator<Item = String>) -> String {
    hrefs.map(|href| format!("<d:href>{}</d:href>", xml::escape(&href))).collect()
}

fn principals_locked(
    world: &mut World,
    request: &DavRequest,
    now: i64,
) -> Result<Response, DavError> {
    let Some(segments) = webdav::decode_path(&request.path) else {
        return Err(DavError::not_found());
    };
    let Some(user) = world.users.get(&request.user.uid) else {
        return Err(DavError::not_found());
    };
    let user = user.clone();
    let caller = Caller::new(&user, now, request, super::request_base(world, request));
    let exists = match segments.as_slice() {
        [] => true,
        [collection] => PRINCIPAL_COLLECTIONS.contains(&collection.as_str()),
        [users, uid] if users == "users" => world.users.contains_key(uid),
        [groups, gid] if groups == "groups" => world.groups.contains_key(gid),
        [users, uid, proxy] if users == "users" => {
            world.users.contains_key(uid) && Proxy::from_segment(proxy).is_some()
        }
        _ => false,
    };
    if !exists {
        return Err(DavError::not_found());
    }
    if request.method == Method::OPTIONS {
        return Ok(super::options("OPTIONS, GET, HEAD, PROPFIND, PROPPATCH, REPORT"));
    }
    match request.method.as_str() {
        "PROPFIND" => {
            let properties = webdav::parse_propfind(&request.body)?;
            let deep = request.depth(Depth::One) != Depth::Zero;
            Ok(webdav::multistatus(
                &principal_responses(world, &caller, &segments, &properties, deep),
                None,
            ))
        }
        "REPORT" => principal_report(world, request, &caller, &segments),
        "PROPPATCH" => match segments.as_slice() {
            [users, uid] if users == "users" && *uid == user.uid => {
                principal_proppatch(world, request, uid)
            }
            [users, uid, proxy] if users == "users" => match Proxy::from_segment(proxy) {
                Some(proxy) if *uid == user.uid => proxy_proppatch(world, request, uid, proxy),
                // Someone else's proxies are not there for the caller.
                _ => Err(DavError::not_found()),
            },
            _ => Err(DavError::forbidden("Principal properties cannot be changed here")),
        },
        method => {
            Err(super::refuse_on_read_only_node(method, "This method is not allowed on principals"))
        }
    }
}

/// PROPPATCH of the caller's own principal: `schedule-default-calendar-URL`
/// may name one of their calendars (Nextcloud's schedule plugin keeps it,
/// `dav_features/caldav.feature`); any other property, or an href that is
/// not their calendar, is 403, and then nothing is applied (the rest 424),
/// as sabre's PropPatch is all or nothing.
fn principal_proppatch(
    world: &mut World,
    request: &DavRequest,
    uid: &str,
) -> Result<Response, DavError> {
    let updates = webdav::parse_proppatch(&request.body)?;
    let calendar_of = |href: &str| {
        world.calendars.of(uid).find(|calendar| {
            collection::collection_href::<CalDav>(uid, &calendar.uri) == href.trim()
        })
    };
    let mut chosen = None;
    let mut results = Vec::new();
    for update in updates {
        let name = update.name();
        let status = match &update {
            webdav::PropertyUpdate::Set(element)
                if element.is(xml::CALDAV, "schedule-default-calendar-URL") =>
            {
                let href = element.child(xml::DAV, "href").map(Element::text).unwrap_or_default();
                match calendar_of(&href) {
                    Some(calendar) => {
                        chosen = Some(calendar.uri.clone());
                        200
                    }
                    None => 403,
                }
            }
            _ => 403,
        };
        results.push((name, status));
    }
    if results.iter().all(|(_, status)| *status == 200) {
        if let Some(uri) = chosen {
            world.schedule_defaults.insert(uid.to_string(), uri);
        }
    } else {
        for (_, status) in &mut results {
            if *status == 200 {
                *status = 424;
            }
        }
    }
    Ok(webdav::proppatch_response(&principal_href(uid), &results))
}

/// PROPPATCH of the caller's own calendar-proxy principal: setting
/// `{DAV:}group-member-set` names who may read (or write) their calendars
/// (`dav_features/caldav-delegation.feature`); an empty set, or removing
/// the property, clears it. A member that is not a user principal, or any
/// other property, is 403 and nothing is applied (the rest 424).
fn proxy_proppatch(
    world: &mut World,
    request: &DavRequest,
    uid: &str,
    proxy: Proxy,
) -> Result<Response, DavError> {
    let updates = webdav::parse_proppatch(&request.body)?;
    let user_of = |href: &str| {
        let href = href.trim();
        let path = href.strip_suffix('/').unwrap_or(href);
        let member = path.strip_prefix(PRINCIPALS_ROOT)?.strip_prefix("users/")?;
        let member = webdav::decode_segment(member)?;
        (member != uid && world.users.contains_key(&member)).then_some(member)
    };
    let mut members = None;
    let mut results = Vec::new();
    for update in updates {
        let name = update.name();
        let status = match &update {
            webdav::PropertyUpdate::Set(element) if element.is(xml::DAV, "group-member-set") => {
                let named: Option<BTreeSet<String>> = element
                    .children_named(xml::DAV, "href")
                    .map(|href| user_of(&href.text()))
                    .collect();
                match named {
                    Some(named) => {
                        members = Some(named);
                        200
                    }
                    None => 403,
                }
            }
            webdav::PropertyUpdate::Remove(property)
                if property.is(xml::DAV, "group-member-set") =>
            {
                members = Some(BTreeSet::new());
                200
            }
            _ => 403,
        };
        results.push((name, status));
    }
    if results.iter().all(|(_, status)| *status == 200) {
        if let Some(members) = members {
            world.calendar_delegations.set(uid, proxy, members);
        }
    } else {
        for (_, status) in &mut results {
            if *status == 200 {
                *status = 424;
            }
        }
    }
    Ok(webdav::proppatch_response(&proxy_href(uid, proxy), &results))
}

fn principal_responses(
    world: &World,
    caller: &Caller<'_>,
    segments: &[String],
    properties: &PropertyRequest,
    deep: bool,
) -> Vec<String> {
    let mut responses = Vec::new();
    match segments {
        [] => {
            responses.push(collection_properties(caller).response(
                PRINCIPALS_ROOT,
                properties,
                caller.minimal,
            ));
            if deep {
                for name in PRINCIPAL_COLLECTIONS {
                    responses.push(collection_properties(caller).response(
                        &format!("{PRINCIPALS_ROOT}{name}/"),
                        properties,
                        caller.minimal,
                    ));
                }
            }
        }
        [collection] => {
            let href = format!("{PRINCIPALS_ROOT}{collection}/");
            responses.push(collection_properties(caller).response(
                &href,
                properties,
                caller.minimal,
            ));
            if deep && collection == "users" {
                for user in world.users.values() {
                    responses.push(user_principal_properties(caller, world, user).response(
                        &principal_href(&user.uid),
                        properties,
                        caller.minimal,
                    ));
                }
            }
            if deep && collection == "groups" {
                for (gid, display_name) in &world.groups {
                    responses.push(
                        group_principal_properties(caller, world, gid, display_name).response(
                            &group_href(gid),
                            properties,
                            caller.minimal,
                        ),
                    );
                }
            }
        }
        [users, uid] if users == "users" => {
            if let Some(user) = world.users.get(uid) {
                responses.push(user_principal_properties(caller, world, user).response(
                    &principal_href(uid),
                    properties,
                    caller.minimal,
                ));
                if deep {
                    for proxy in [Proxy::Read, Proxy::Write] {
                        responses.push(proxy_properties(caller, world, uid, proxy).response(
                            &proxy_href(uid, proxy),
                            properties,
                            caller.minimal,
                        ));
                    }
                }
            }
        }
        [groups, gid] if groups == "groups" => {
            if let Some(display_name) = world.groups.get(gid) {
                responses.push(
                    group_principal_properties(caller, world, gid, display_name).response(
                        &group_href(gid),
                        properties,
                        caller.minimal,
                    ),
                );
            }
        }
        [_, uid, proxy] => {
            if let Some(proxy) = Proxy::from_segment(proxy) {
                responses.push(proxy_properties(caller, world, uid, proxy).response(
                    &proxy_href(uid, proxy),
                    properties,
                    caller.minimal,
                ));
            }
        }
        _ => {}
    }
    responses
}

/// One `d:property-search`: property names and the text to find.
struct PropertySearch {
    names: Vec<webdav::PropertyName>,
    needle: String,
}

/// Parses `d:principal-property-search`; sabre refuses one without any
/// `d:property-search` with 400, and Depth other than 0 with 400.
fn parse_principal_property_search(
    request: &DavRequest,
    root: &Element,
) -> Result<(Vec<PropertySearch>, bool, PropertyRequest, bool), DavError> {
    if request.depth(Depth::Zero) != Depth::Zero {
        return Err(DavError::bad_request("This report is only defined when Depth: 0"));
    }
    let mut searches = Vec::new();
    for search in root.children_named(xml::DAV, "property-search") {
        let names = search.child(xml::DAV, "prop").map(webdav::property_names).unwrap_or_default();
        let needle = search.child(xml::DAV, "match").map(Element::text).unwrap_or_default();
        searches.push(PropertySearch { names, needle });
    }
    if searches.is_empty() {
        return Err(DavError::bad_request(
            "The {DAV:}principal-property-search report must contain at least 1 {DAV:}property-search element",
        ));
    }
    let any_of = root.attribute("test") == Some("anyof");
    let properties = super::report_properties(root);
    let whole_set = root.child(xml::DAV, "apply-to-principal-collection-set").is_some();
    Ok((searches, any_of, properties, whole_set))
}

/// Whether a user matches one search, the way Nextcloud's principal backend
/// searches: display name, email and calendar user address, substring and
/// case-insensitive.
fn user_matches(user: &User, search: &PropertySearch) -> bool {
    let needle = search.needle.to_lowercase();
    search.names.iter().any(|name| {
        let value = if name.is(xml::DAV, "displayname") {
            Some(user.display_name.clone())
        } else if name.is(xml::SABRE, "email-address")
            || name.is(xml::CALDAV, "calendar-user-address-set")
        {
            user.email.clone()
        } else {
            None
        };
        value.is_some_and(|value| value.to_lowercase().contains(&needle))
    })
}

fn principal_report(
    world: &World,
    request: &DavRequest,
    caller: &Caller<'_>,
    segments: &[String],
) -> Result<Response, DavError> {
    let root = webdav::parse_body(&request.body)?;
    if !root.is(xml::DAV, "principal-property-search") {
        return Err(DavError::report_not_supported(format!(
            "The {{{}}}{} REPORT is not supported here",
            root.ns, root.local
        )));
    }
    let (searches, any_of, properties, whole_set) =
        parse_principal_property_search(request, &root)?;
    let on_users = whole_set || segments == ["users"];
    let mut responses = Vec::new();
    if on_users {
        for user in world.users.values() {
            let matched = if any_of {
                searches.iter().any(|search| user_matches(user, search))
            } else {
                searches.iter().all(|search| user_matches(user, search))
            };
            if matched {
                responses.push(user_principal_properties(caller, world, user).response(
                    &principal_href(&user.uid),
                    &properties,
                    caller.minimal,
                ));
            }
        }
    }
    Ok(webdav::multistatus(&responses, None))
}

fn root_locked(world: &World, request: &DavRequest, now: i64) -> Result<Response, DavError> {
    let Some(user) = world.users.get(&request.user.uid) else {
        return Err(DavError::not_found());
    };
    let caller = Caller::new(user, now, request, super::request_base(world, request));
    match request.method.as_str() {
        "OPTIONS" => Ok(super::options("OPTIONS, GET, HEAD, PROPFIND, REPORT")),
        "PROPFIND" => {
            let properties = webdav::parse_propfind(&request.body)?;
            let mut root = collection_properties(&caller);
            root.xml(xml::DAV, "current-user-privilege-set", READ_PRIVILEGES);
            let mut responses = vec![root.response(DAV_ROOT_HREF, &properties, caller.minimal)];
            if request.depth(Depth::One) != Depth::Zero {
                for child in DAV_ROOT_CHILDREN {
                    let mut set = PropertySet::new();
                    set.xml(xml::DAV, "resourcetype", "<d:collection/>");
                    set.href(xml::DAV, "current-user-principal", &principal_href(&user.uid));
                    responses.push(set.response(
                        &format!("{DAV_ROOT_HREF}{child}/"),
                        &properties,
                        caller.minimal,
                    ));
                }
            }
            Ok(webdav::multistatus(&responses, None))
        }
        "REPORT" => {
            let root = webdav::parse_body(&request.body)?;
            if !root.is(xml::DAV, "principal-property-search") {
                return Err(DavError::report_not_supported(format!(
                    "The {{{}}}{} REPORT is not supported here",
                    root.ns, root.local
                )));
            }
            // The root is not a principal collection: sabre searches nothing
            // there unless the client asks for the principal collection set.
            match parse_principal_property_search(request, &root)? {
                (_, _, _, true) => principal_report(world, request, &caller, &[]),
                _ => Ok(webdav::multistatus(&[], None)),
            }
        }
        method => Err(super::refuse_on_read_only_node(
            method,
            "This method is not allowed on the DAV root",
        )),
    }
}
