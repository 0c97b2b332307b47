//! CalDAV as Nextcloud's `dav` app serves it (sabre/dav's CalDAV plugin,
//! RFC 4791), with the requests mcp-nextcloud sends
//! (`nextcloud/caldav.rs`): the calendar home PROPFIND, a calendar-query
//! REPORT with a time range, PUT with `If-None-Match: *`.

use super::dav::propfind_error;
use nextcloud_contract::{Account, Target};
use xml_tree::{APPLE, CALDAV, DAV};

const HOME_BODY: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<d:propfind xmlns:d="DAV:" xmlns:cal="urn:ietf:params:xml:ns:caldav" xmlns:x1="http://apple.com/ns/ical/">
<d:prop><d:resourcetype/><d:displayname/><cal:supported-calendar-component-set/><d:current-user-privilege-set/><x1:calendar-color/><x1:calendar-order/></d:prop>
</d:propfind>"#;

pub(super) fn home(account: &Account) -> String {
    format!("/remote.php/dav/calendars/{}/", account.uid)
}

pub(super) async fn mkcalendar(target: &Target, account: &Account, uri: &str) -> u16 {
    let body = r#"<?xml version="1.0" encoding="UTF-8"?>
<c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop>
<d:displayname>Contract</d:displayname>
<c:supported-calendar-component-set><c:comp name="VEVENT"/></c:supported-calendar-component-set>
</d:prop></d:set></c:mkcalendar>"#;
    let path = format!("{}{uri}/", home(account));
    target.send_xml(account, "MKCALENDAR", &path, None, body).await.status().as_u16()
}

pub(super) fn event(uid: &str, start: &str, end: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Tamebi//contract//EN\r\nBEGIN:VEVENT\r\n\
UID:{uid}\r\nDTSTAMP:20260301T090000Z\r\nDTSTART:{start}\r\nDTEND:{end}\r\n\
SUMMARY:Contract meeting\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
}

async fn query(
    target: &Target,
    account: &Account,
    calendar: &str,
    start: &str,
    end: &str,
) -> nextcloud_contract::Multistatus {
    let body = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<cal:calendar-query xmlns:d="DAV:" xmlns:cal="urn:ietf:params:xml:ns:caldav">
<d:prop><d:getetag/><cal:calendar-data/></d:prop>
<cal:filter><cal:comp-filter name="VCALENDAR"><cal:comp-filter name="VEVENT"><cal:time-range start="{start}" end="{end}"/></cal:comp-filter></cal:comp-filter></cal:filter>
</cal:calendar-query>"#
    );
    let path = format!("{}{calendar}/", home(account));
    let response = target.send_xml(account, "REPORT", &path, Some("1"), body).await;
    assert_eq!(response.status(), 207, "calendar-query REPORT");
    nextcloud_contract::Multistatus::parse(&response.bytes().await.unwrap())
}

#[tokio::test]
async fn the_calendar_home_lists_calendars_with_their_components_and_privileges() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let uri = target.unique("cal");
    assert_eq!(mkcalendar(&target, &alice, &uri).await, 201, "MKCALENDAR creates a calendar");

    let (status, multistatus) = target.propfind(&alice, &home(&alice), "1", HOME_BODY).await;
    assert_eq!(status, 207, "PROPFIND depth 1 on the calendar home");
    let multistatus = multistatus.unwrap();
    let own = multistatus.find(&home(&alice)).expect("the home itself is listed");
    assert!(own.prop(DAV, "resourcetype").unwrap().child(DAV, "collection").is_some());
    let calendar = multistatus.find(&format!("/{uri}/")).expect("the new calendar is listed");
    let resourcetype = calendar.prop(DAV, "resourcetype").expect("resourcetype");
    assert!(resourcetype.child(DAV, "collection").is_some());
    assert!(resourcetype.child(CALDAV, "calendar").is_some(), "cal:calendar resource type");
    assert_eq!(calendar.text(DAV, "displayname").as_deref(), Some("Contract"));
    let components: Vec<String> = calendar
        .prop(CALDAV, "supported-calendar-component-set")
        .expect("supported-calendar-component-set")
        .children_named(CALDAV, "comp")
        .filter_map(|comp| comp.attribute("name").map(str::to_string))
        .collect();
    assert_eq!(components, ["VEVENT"]);
    let privileges = calendar.prop(DAV, "current-user-privilege-set").expect("privilege set");
    let mut names = Vec::new();
    for privilege in privileges.children_named(DAV, "privilege") {
        names.extend(privilege.children().map(|name| name.local.clone()));
    }
    assert!(
        names.iter().any(|name| name == "write" || name == "all"),
        "the owner may write: {names:?}"
    );
    // A property the calendar lacks is reported in a 404 propstat, not dropped.
    let missing: Vec<&str> = calendar
        .not_found
        .iter()
        .filter(|property| property.ns == APPLE)
        .map(|property| property.local.as_str())
        .collect();
    assert!(
        calendar.prop(APPLE, "calendar-color").is_some() || missing.contains(&"calendar-color"),
        "calendar-color is answered in a 200 or a 404 propstat"
    );

    let deleted = target
        .as_account(&alice, "DELETE", &format!("{}{uri}/", home(&alice)))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
}

#[tokio::test]
async fn calendar_query_filters_by_time_range_and_put_honours_if_none_match() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let calendar = target.unique("query");
    assert_eq!(mkcalendar(&target, &alice, &calendar).await, 201);
    let uid = target.unique("event");
    let object = format!("{}{calendar}/{uid}.ics", home(&alice));
    let data = event(&uid, "20260317T090000Z", "20260317T100000Z");
    let put = target.put_new(&alice, &object, "text/calendar; charset=utf-8", data.clone()).await;
    assert_eq!(put.status(), 201, "a new calendar object is 201");

    let again = target.put_new(&alice, &object, "text/calendar; charset=utf-8", data).await;
    assert_eq!(again.status(), 412, "If-None-Match: * on an existing object");

    let found = query(&target, &alice, &calendar, "20260316T000000Z", "20260318T000000Z").await;
    assert_eq!(found.responses.len(), 1, "the event inside the range");
    let response = &found.responses[0];
    assert!(response.decoded_href().ends_with(&format!("/{calendar}/{uid}.ics")));
    assert!(response.text(DAV, "getetag").is_some_and(|etag| etag.starts_with('"')));
    let calendar_data = response.text(CALDAV, "calendar-data").expect("calendar-data");
    assert!(calendar_data.contains(&format!("UID:{uid}")), "the stored object: {calendar_data}");

    let outside = query(&target, &alice, &calendar, "20260318T000000Z", "20260320T000000Z").await;
    assert!(outside.responses.is_empty(), "no event outside the range");
    // The range's end is exclusive and its start inclusive of overlaps (RFC 4791 §9.9).
    let touching = query(&target, &alice, &calendar, "20260317T095959Z", "20260317T120000Z").await;
    assert_eq!(touching.responses.len(), 1, "an overlapping range");
    let before = query(&target, &alice, &calendar, "20260317T080000Z", "20260317T090000Z").await;
    assert!(before.responses.is_empty(), "a range ending when the event starts");

    let other = target
        .as_account(target.bob(), "GET", &object.replace(&alice.uid, &target.bob().uid))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 404, "not in bob's calendars");
    let deleted = target.as_account(&alice, "DELETE", &object).send().await.unwrap();
    assert_eq!(deleted.status(), 204);
    let _ =
        target.as_account(&alice, "DELETE", &format!("{}{calendar}/", home(&alice))).send().await;
}

/// Nextcloud's integration suite (`dav_features/caldav.feature`): the
/// 404s for calendars in another user's home carry sabre's exact messages.
#[tokio::test]
async fn another_users_calendars_are_404_in_nextclouds_words() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let uri = target.unique("elsewhere");
    let bobs = format!("{}{uri}/", home(&bob));
    let propfind = |account: &Account| {
        let (target, account, bobs) = (&target, account.clone(), bobs.clone());
        async move { propfind_error(target, &account, &bobs, HOME_BODY).await }
    };
    let not_found = "Sabre\\DAV\\Exception\\NotFound".to_string();
    assert_eq!(
        propfind(&alice).await,
        (404, not_found.clone(), format!("Node with name '{uri}' could not be found")),
        "a calendar that does not exist"
    );
    assert_eq!(mkcalendar(&target, &bob, &uri).await, 201);
    assert_eq!(
        propfind(&alice).await,
        (404, not_found.clone(), format!("Calendar with name '{uri}' could not be found")),
        "bob's calendar, not shared with alice"
    );
    let missing_legacy = format!("/remote.php/caldav/calendars/{}/{uri}-none/", bob.uid);
    assert_eq!(
        propfind_error(&target, &alice, &missing_legacy, HOME_BODY).await,
        (404, not_found.clone(), format!("Node with name '{uri}-none' could not be found")),
        "a calendar that does not exist, through the legacy endpoint"
    );
    let onto_existing = target.send_xml(&alice, "MKCALENDAR", &bobs, None, "").await;
    assert_eq!(
        nextcloud_contract::sabre_error(onto_existing).await,
        (404, not_found.clone(), format!("Node with name '{}' could not be found", bob.uid)),
        "creating a calendar over bob's existing one"
    );
    let legacy = format!("/remote.php/caldav/calendars/{}/{uri}/", bob.uid);
    assert_eq!(
        propfind_error(&target, &alice, &legacy, HOME_BODY).await,
        (404, not_found.clone(), format!("Calendar with name '{uri}' could not be found")),
        "the same through the legacy endpoint"
    );
    let own = target.send_xml(&bob, "PROPFIND", &legacy, Some("0"), HOME_BODY).await;
    assert_eq!(own.status(), 207, "bob reaches his calendar through the legacy endpoint");
    let created =
        target.send_xml(&alice, "MKCALENDAR", &format!("{}{uri}-2/", home(&bob)), None, "").await;
    assert_eq!(
        nextcloud_contract::sabre_error(created).await,
        (404, not_found, format!("Node with name '{}' could not be found", bob.uid)),
        "creating a calendar in bob's home"
    );
    let _ = target.as_account(&bob, "DELETE", &bobs).send().await;
}

/// Nextcloud's integration suite (`dav_features/caldav.feature`, "Update a
/// principal's schedule-default-calendar-URL"): the user's own principal
/// takes one of their calendars as the default for scheduling, and keeps it.
#[tokio::test]
async fn a_principals_schedule_default_calendar_can_be_chosen_and_sticks() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let uri = target.unique("default");
    assert_eq!(mkcalendar(&target, &alice, &uri).await, 201);
    let webroot =
        url::Url::parse(&target.base_url).unwrap().path().trim_end_matches('/').to_string();
    let href = format!("{webroot}{}{uri}/", home(&alice));
    let principal = format!("/remote.php/dav/principals/users/{}/", alice.uid);
    let body = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><d:propertyupdate xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop><c:schedule-default-calendar-URL><d:href>{href}</d:href></c:schedule-default-calendar-URL></d:prop></d:set></d:propertyupdate>"#
    );
    let patched = target.send_xml(&alice, "PROPPATCH", &principal, None, body).await;
    assert_eq!(patched.status(), 207, "PROPPATCH of the principal is a multistatus");
    let patched = nextcloud_contract::Multistatus::parse(&patched.bytes().await.unwrap());
    let answer = patched.find(&format!("/principals/users/{}/", alice.uid)).expect("the principal");
    let set = answer.prop(CALDAV, "schedule-default-calendar-URL");
    assert!(set.is_some(), "the property is set (200): {:?}", answer.not_found);

    let body = r#"<?xml version="1.0" encoding="UTF-8"?><d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><c:schedule-default-calendar-URL/></d:prop></d:propfind>"#;
    let (status, found) = target.propfind(&alice, &principal, "0", body).await;
    assert_eq!(status, 207);
    let found = found.unwrap();
    let value =
        found.responses[0].prop(CALDAV, "schedule-default-calendar-URL").expect("the property");
    let value = value.child(DAV, "href").map(xml_tree::Element::text).unwrap_or_default();
    assert_eq!(value, href, "the chosen calendar is the default now");
    let _ = target.as_account(&alice, "DELETE", &format!("{}{uri}/", home(&alice))).send().await;
}

/// Nextcloud's integration suite (`dav_features/principal-property-search.feature`):
/// a `principal-property-search` REPORT on the DAV root with
/// `apply-to-principal-collection-set` searches the principal collections
/// (the calendar app's attendee search) and finds the user by name.
#[tokio::test]
async fn a_principal_search_on_the_dav_root_applies_to_the_principal_collections() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let body = format!(
        r#"<x0:principal-property-search xmlns:x0="DAV:" test="anyof"><x0:property-search><x0:prop><x0:displayname/><x2:email-address xmlns:x2="http://sabredav.org/ns"/></x0:prop><x0:match>{}</x0:match></x0:property-search><x0:prop><x0:displayname/><x1:calendar-home-set xmlns:x1="urn:ietf:params:xml:ns:caldav"/></x0:prop><x0:apply-to-principal-collection-set/></x0:principal-property-search>"#,
        alice.uid
    );
    let response = target.send_xml(&bob, "REPORT", "/remote.php/dav/", Some("0"), body).await;
    assert_eq!(response.status(), 207);
    let text = response.text().await.unwrap();
    assert!(
        text.contains(&format!("<d:href>/remote.php/dav/principals/users/{}/</d:href>", alice.uid)),
        "{text}"
    );
}

/// PUT of a one-hour event with `uid` by `request` (a signed-in or an
/// anonymous request builder for the object's path); its status.
pub(super) async fn put_event(request: reqwest::RequestBuilder, uid: &str) -> u16 {
    let body = event(uid, "20261201T090000Z", "20261201T100000Z");
    let sent = request.header("Content-Type", "text/calendar").body(body).send().await;
    sent.unwrap().status().as_u16()
}

const CALSERVER: &str = "http://calendarserver.org/ns/";

async fn publishing(
    target: &Target,
    account: &Account,
    calendar: &str,
    element: &str,
) -> reqwest::Response {
    let body = format!(r#"<cs:{element} xmlns:cs="http://calendarserver.org/ns/"/>"#);
    let path = format!("{}{calendar}", home(account));
    target.send_xml(account, "POST", &path, None, body).await
}

/// `caldav.feature`, "Propfind on public calendar endpoint without
/// calendars": publishing is a 202 that says everything went well; the
/// public root lists no calendar, even one just published; the calendar is
/// read, and only read, by its token, signed in or not.
#[tokio::test]
async fn a_published_calendar_is_read_by_its_token_and_the_public_root_lists_none() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let bob = target.bob().clone();
    let calendar = target.unique("cal");
    assert_eq!(mkcalendar(&target, &alice, &calendar).await, 201);
    let object = format!("{}{calendar}/published.ics", home(&alice));
    let put = put_event(target.as_account(&alice, "PUT", &object), "published").await;
    assert_eq!(put, 201);

    let published = publishing(&target, &alice, &calendar, "publish-calendar").await;
    assert_eq!(published.status(), 202, "the suite: publishing is 202");
    assert_eq!(nextcloud_contract::header(&published, "X-Sabre-Status"), "everything-went-well");
    let body = r#"<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/"><d:prop><cs:publish-url/><cs:allowed-sharing-modes/></d:prop></d:propfind>"#;
    let path = format!("{}{calendar}/", home(&alice));
    let (status, multistatus) = target.propfind(&alice, &path, "0", body).await;
    assert_eq!(status, 207);
    let multistatus = multistatus.unwrap();
    let own = &multistatus.responses[0];
    let url = own
        .prop(CALSERVER, "publish-url")
        .and_then(|property| property.child(DAV, "href"))
        .map(|href| href.text().trim().to_string())
        .expect("a published calendar has its publish-url");
    assert!(url.starts_with("http"), "an absolute URL: {url}");
    let (_, token) =
        url.split_once("/remote.php/dav/public-calendars/").expect("below the public root");
    assert!(!token.is_empty() && !token.contains('/'), "{url}");
    let modes = own.prop(CALSERVER, "allowed-sharing-modes").expect("allowed-sharing-modes");
    assert!(modes.child(CALSERVER, "can-be-published").is_some());

    // The suite's check: the root, with no Depth header, holds itself alone.
    let response = target
        .as_account(&alice, "PROPFIND", "/remote.php/dav/public-calendars/")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 207, "PROPFIND of the public calendars root");
    let listed = nextcloud_contract::Multistatus::parse(&response.bytes().await.unwrap());
    assert_eq!(listed.responses.len(), 1, "no calendar is enumerated: {:?}", listed.responses);

    let public = format!("/remote.php/dav/public-calendars/{token}/");
    let response = target.anonymous("PROPFIND", &public).header("Depth", "1").send().await.unwrap();
    assert_eq!(response.status(), 207, "anyone with the token reads the calendar");
    let listed = nextcloud_contract::Multistatus::parse(&response.bytes().await.unwrap());
    assert!(
        listed.responses.iter().any(|response| response.href == format!("{public}published.ics")),
        "its objects, named below the public path: {:?}",
        listed.responses.iter().map(|response| &response.href).collect::<Vec<_>>()
    );
    let got = target.anonymous("GET", &format!("{public}published.ics")).send().await.unwrap();
    assert_eq!(got.status(), 200);
    assert!(got.text().await.unwrap().contains("UID:published"));
    let intruder = format!("{public}intruder.ics");
    let anonymous_put = put_event(target.anonymous("PUT", &intruder), "intruder").await;
    assert_eq!(anonymous_put, 401, "writing asks an anonymous caller to sign in");
    let signed_in_put = put_event(target.as_account(&bob, "PUT", &intruder), "intruder").await;
    assert_eq!(signed_in_put, 403, "and refuses a signed-in one");

    let withdrawn = publishing(&target, &alice, &calendar, "unpublish-calendar").await;
    assert_eq!(withdrawn.status(), 200, "unpublishing is 200");
    let gone = target.anonymous("PROPFIND", &public).header("Depth", "0").send().await.unwrap();
    assert_eq!(gone.status(), 404, "the token no longer reaches the calendar");
    assert_eq!(target.send(&alice, "DELETE", &path).await.status(), 204);
}
