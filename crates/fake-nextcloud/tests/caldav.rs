//! CalDAV, principals and the DAV root over real sockets, against the demo
//! fixture: discovery, the DST-crossing weekly stand-up (expanded and found
//! by time range), object and calendar lifecycles with their error paths,
//! multiget, sync-collection, isolation between users, and the bearer fault.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod collection_support;
mod common;

use collection_support::{entry, fixture_problems, hrefs, multistatus, sync_body, sync_token};
use common::{
    DEMO_ALICE_PASSWORD, DEMO_BOB_PASSWORD, as_alice, demo_fixture, request, start_demo, start_with,
};

use fake_nextcloud::xml::{self, Element};
use reqwest::StatusCode;

const ALICE_APP_PASSWORD: &str = "alice-app-Zq7mK-2xP9d-Lw4cH-8tRvN";
const ALICE_CALENDAR: &str = "/remote.php/dav/calendars/alice/personal/";
const STANDUP: &str = "/remote.php/dav/calendars/alice/personal/weekly-standup.ics";

fn calendar_query(inner_filter: &str, calendar_data: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="utf-8"?>
<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">
  <d:prop><d:getetag/>{calendar_data}</d:prop>
  <c:filter><c:comp-filter name="VCALENDAR">{inner_filter}</c:comp-filter></c:filter>
</c:calendar-query>"#
    )
}

fn event_ics(uid: &str, summary: &str) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//test//EN\r\nBEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260601T100000Z\r\nDTEND:20260601T110000Z\r\nSUMMARY:{summary}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
}

#[tokio::test]
async fn a_client_discovers_principal_and_homes_from_the_dav_root() {
    let running = start_demo().await;
    let well_known = running.http.get(running.url("/.well-known/caldav")).send().await.unwrap();
    assert_eq!(well_known.status(), StatusCode::MOVED_PERMANENTLY);
    assert_eq!(well_known.headers()["location"], "/remote.php/dav/");

    let root = as_alice(
        &running,
        "PROPFIND",
        "/remote.php/dav/",
        Some("0"),
        r#"<d:propfind xmlns:d="DAV:"><d:prop><d:current-user-principal/><d:resourcetype/><d:principal-URL/></d:prop></d:propfind>"#,
    )
    .await;
    assert_eq!(root.status, StatusCode::MULTI_STATUS, "{}", root.body);
    let entries = multistatus(&root.body);
    assert_eq!(entries.len(), 1);
    let dav_root = entry(&entries, "/remote.php/dav/");
    assert_eq!(
        dav_root.text(xml::DAV, "current-user-principal").as_deref(),
        Some("/remote.php/dav/principals/users/alice/")
    );
    assert!(dav_root.found["{DAV:}resourcetype"].child(xml::DAV, "collection").is_some());
    // As on Nextcloud: the root is not a principal.
    assert_eq!(dav_root.missing, vec!["{DAV:}principal-URL".to_string()]);

    let principal = as_alice(
        &running,
        "PROPFIND",
        "/remote.php/dav/principals/users/alice/",
        Some("0"),
        r#"<d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:card="urn:ietf:params:xml:ns:carddav" xmlns:s="http://sabredav.org/ns">
             <d:prop><d:displayname/><c:calendar-home-set/><card:addressbook-home-set/><c:calendar-user-address-set/><d:principal-URL/><s:email-address/><d:resourcetype/></d:prop>
           </d:propfind>"#,
    )
    .await;
    assert_eq!(principal.status, StatusCode::MULTI_STATUS);
    let entries = multistatus(&principal.body);
    let alice = entry(&entries, "/remote.php/dav/principals/users/alice/");
    assert_eq!(alice.text(xml::DAV, "displayname").as_deref(), Some("Alice Martin"));
    assert_eq!(
        alice.text(xml::CALDAV, "calendar-home-set").as_deref(),
        Some("/remote.php/dav/calendars/alice/")
    );
    assert_eq!(
        alice.text(xml::CARDDAV, "addressbook-home-set").as_deref(),
        Some("/remote.php/dav/addressbooks/users/alice/")
    );
    assert_eq!(
        alice.text(xml::DAV, "principal-URL").as_deref(),
        Some("/remote.php/dav/principals/users/alice/")
    );
    assert_eq!(alice.text(xml::SABRE, "email-address").as_deref(), Some("alice@example.com"));
    let addresses: Vec<String> =
        alice.found["{urn:ietf:params:xml:ns:caldav}calendar-user-address-set"]
            .children()
            .map(Element::text)
            .collect();
    assert_eq!(
        addresses,
        vec!["mailto:alice@example.com", "/remote.php/dav/principals/users/alice/"]
    );
    assert!(alice.found["{DAV:}resourcetype"].child(xml::DAV, "principal").is_some());

    let options =
        as_alice(&running, "OPTIONS", "/remote.php/dav/principals/users/alice/", None, "").await;
    assert_eq!(options.status, StatusCode::OK);
    let dav_header = options.headers["dav"].to_str().unwrap();
    assert!(
        dav_header.contains("calendar-access") && dav_header.contains("addressbook"),
        "{dav_header}"
    );
}

#[tokio::test]
async fn the_calendar_home_lists_calendars_with_nextcloud_properties() {
    let running = start_demo().await;
    let home = as_alice(
        &running,
        "PROPFIND",
        "/remote.php/dav/calendars/alice/",
        Some("1"),
        r#"<d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/" xmlns:x1="http://apple.com/ns/ical/">
             <d:prop><d:resourcetype/><d:displayname/><cs:getctag/><d:sync-token/><c:supported-calendar-component-set/><x1:calendar-color/><d:owner/><d:current-user-privilege-set/></d:prop>
           </d:propfind>"#,
    )
    .await;
    assert_eq!(home.status, StatusCode::MULTI_STATUS, "{}", home.body);
    let entries = multistatus(&home.body);
    let hrefs: Vec<&str> = entries.iter().map(|entry| entry.href.as_str()).collect();
    assert_eq!(
        hrefs,
        vec![
            "/remote.php/dav/calendars/alice/",
            ALICE_CALENDAR,
            "/remote.php/dav/calendars/alice/inbox/",
            "/remote.php/dav/calendars/alice/outbox/",
            "/remote.php/dav/calendars/alice/trashbin/",
        ]
    );
    let personal = entry(&entries, ALICE_CALENDAR);
    let resourcetype = &personal.found["{DAV:}resourcetype"];
    assert!(
        resourcetype.child(xml::DAV, "collection").is_some()
            && resourcetype.child(xml::CALDAV, "calendar").is_some()
    );
    assert_eq!(personal.text(xml::DAV, "displayname").as_deref(), Some("Personnel"));
    assert_eq!(personal.text(xml::APPLE, "calendar-color").as_deref(), Some("#0082c9"));
    let ctag = personal.text(xml::CALSERVER, "getctag").unwrap();
    assert!(ctag.starts_with("http://sabre.io/ns/sync/"), "{ctag}");
    assert_eq!(personal.text(xml::DAV, "sync-token"), Some(ctag));
    let components: Vec<&str> =
        personal.found["{urn:ietf:params:xml:ns:caldav}supported-calendar-component-set"]
            .children()
            .filter_map(|comp| comp.attribute("name"))
            .collect();
    assert_eq!(components, vec!["VEVENT", "VTODO"]);
    assert_eq!(
        personal.text(xml::DAV, "owner").as_deref(),
        Some("/remote.php/dav/principals/users/alice/")
    );
    let inbox = entry(&entries, "/remote.php/dav/calendars/alice/inbox/");
    assert!(inbox.found["{DAV:}resourcetype"].child(xml::CALDAV, "schedule-inbox").is_some());

    // Carol has no calendar in the fixture: Nextcloud's first-login one.
    let carol = request(
        &running,
        "PROPFIND",
        ("carol", "carol-demo-password"),
        "/remote.php/dav/calendars/carol/personal/",
        Some("0"),
        &[],
        r#"<d:propfind xmlns:d="DAV:"><d:prop><d:displayname/></d:prop></d:propfind>"#,
    )
    .await;
    assert_eq!(carol.status, StatusCode::MULTI_STATUS);
    assert_eq!(
        multistatus(&carol.body)[0].text(xml::DAV, "displayname").as_deref(),
        Some("Personal")
    );
}

#[tokio::test]
async fn the_weekly_standup_expands_to_nine_oclock_berlin_across_dst() {
    let running = start_demo().await;
    let body = calendar_query(
        r#"<c:comp-filter name="VEVENT"><c:time-range start="20260301T000000Z" end="20260501T000000Z"/></c:comp-filter>"#,
        r#"<c:calendar-data><c:expand start="20260301T000000Z" end="20260501T000000Z"/></c:calendar-data>"#,
    );
    let answer = as_alice(&running, "REPORT", ALICE_CALENDAR, Some("1"), &body).await;
    assert_eq!(answer.status, StatusCode::MULTI_STATUS, "{}", answer.body);
    let entries = multistatus(&answer.body);
    let standup = entry(&entries, STANDUP);
    let expanded = standup.text(xml::CALDAV, "calendar-data").unwrap();
    let starts: Vec<&str> =
        expanded.lines().filter_map(|line| line.trim_end().strip_prefix("DTSTART:")).collect();
    assert_eq!(
        starts,
        vec![
            "20260309T080000Z",
            "20260316T080000Z",
            "20260330T070000Z",
            "20260406T080000Z",
            "20260413T070000Z",
            "20260420T070000Z",
            "20260427T070000Z",
        ],
        "{expanded}"
    );
    assert!(!expanded.contains("20260323"), "the EXDATE'd 2026-03-23 is missing: {expanded}");
    assert!(expanded.contains("RECURRENCE-ID:20260406T070000Z"), "{expanded}");
    assert!(expanded.contains("SUMMARY:Stand-up Apollo (décalé)"), "{expanded}");
    assert!(!expanded.contains("RRULE") && !expanded.contains("VTIMEZONE"), "{expanded}");
    // The non-recurring budget review is in range too, as itself.
    let budget = entry(&entries, "/remote.php/dav/calendars/alice/personal/budget-review.ics");
    assert!(
        budget.text(xml::CALDAV, "calendar-data").unwrap().contains("DTSTART:20260326T130000Z")
    );
}

#[tokio::test]
async fn a_time_range_query_finds_the_recurring_series() {
    let running = start_demo().await;
    let in_range = |start: &str, end: &str| {
        calendar_query(
            &format!(
                r#"<c:comp-filter name="VEVENT"><c:time-range start="{start}" end="{end}"/></c:comp-filter>"#
            ),
            "",
        )
    };
    let budget = "/remote.php/dav/calendars/alice/personal/budget-review.ics";
    let cases = [
        ("late April: the series", in_range("20260420T000000Z", "20260421T000000Z"), vec![STANDUP]),
        (
            "the EXDATE leaves 2026-03-23 empty",
            in_range("20260323T000000Z", "20260324T000000Z"),
            vec![],
        ),
        ("the budget review's day", in_range("20260326T000000Z", "20260327T000000Z"), vec![budget]),
        (
            "a text match on the summary, without a time range",
            calendar_query(
                r#"<c:comp-filter name="VEVENT"><c:prop-filter name="SUMMARY"><c:text-match>budget</c:text-match></c:prop-filter></c:comp-filter>"#,
                "",
            ),
            vec![budget],
        ),
    ];
    for (case, body, expected) in cases {
        let answer = as_alice(&running, "REPORT", ALICE_CALENDAR, Some("1"), &body).await;
        assert_eq!(hrefs(&answer.body), expected, "{case}: {}", answer.body);
    }

    // sabre refuses Depth: 0 on a calendar and a time range on VCALENDAR.
    let depth_zero = as_alice(
        &running,
        "REPORT",
        ALICE_CALENDAR,
        Some("0"),
        &in_range("20260420T000000Z", "20260421T000000Z"),
    )
    .await;
    assert_eq!(depth_zero.status, StatusCode::BAD_REQUEST);
    let on_vcalendar = r#"<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:time-range start="20260101T000000Z"/></c:comp-filter></c:filter></c:calendar-query>"#;
    let answer = as_alice(&running, "REPORT", ALICE_CALENDAR, Some("1"), on_vcalendar).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(
        answer.body.contains("You cannot add time-range filters on the VCALENDAR component"),
        "{}",
        answer.body
    );
}

#[tokio::test]
async fn an_object_lives_through_put_get_conditional_writes_and_delete() {
    let running = start_demo().await;
    let path = "/remote.php/dav/calendars/alice/personal/lunch.ics";
    let ics = event_ics("lunch@test", "Lunch");
    let created = request(
        &running,
        "PUT",
        ("alice", DEMO_ALICE_PASSWORD),
        path,
        None,
        &[("Content-Type", "text/calendar")],
        &ics,
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let etag = created.headers["etag"].to_str().unwrap().to_string();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");

    let fetched = as_alice(&running, "GET", path, None, "").await;
    assert_eq!(fetched.status, StatusCode::OK);
    assert_eq!(fetched.body, ics);
    assert_eq!(fetched.headers["etag"], etag.as_str());
    assert_eq!(fetched.headers["content-type"], "text/calendar; charset=utf-8; component=vevent");

    let properties = as_alice(
        &running,
        "PROPFIND",
        path,
        Some("0"),
        r#"<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/><d:getcontenttype/><d:getcontentlength/><d:getlastmodified/></d:prop></d:propfind>"#,
    )
    .await;
    let entries = multistatus(&properties.body);
    assert_eq!(entries[0].text(xml::DAV, "getetag"), Some(etag.clone()));
    assert_eq!(entries[0].text(xml::DAV, "getcontentlength"), Some(ics.len().to_string()));
    assert!(
        entries[0].has(xml::DAV, "getlastmodified") && entries[0].has(xml::DAV, "getcontenttype")
    );

    let put = |headers: Vec<(&'static str, String)>, body: String| {
        let running = &running;
        async move {
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(name, value)| (*name, value.as_str())).collect();
            request(running, "PUT", ("alice", DEMO_ALICE_PASSWORD), path, None, &headers, &body)
                .await
        }
    };
    let refused = put(vec![("If-None-Match", "*".into())], ics.clone()).await;
    assert_eq!(refused.status, StatusCode::PRECONDITION_FAILED);
    let stale = put(vec![("If-Match", "\"not-the-etag\"".into())], ics.clone()).await;
    assert_eq!(stale.status, StatusCode::PRECONDITION_FAILED);
    let updated =
        put(vec![("If-Match", etag.clone())], event_ics("lunch@test", "Long lunch")).await;
    assert_eq!(updated.status, StatusCode::NO_CONTENT);
    let new_etag = updated.headers["etag"].to_str().unwrap().to_string();
    assert_ne!(new_etag, etag);
    let missing_if_match = request(
        &running,
        "PUT",
        ("alice", DEMO_ALICE_PASSWORD),
        "/remote.php/dav/calendars/alice/personal/nothing.ics",
        None,
        &[("If-Match", "*")],
        &ics,
    )
    .await;
    assert_eq!(missing_if_match.status, StatusCode::PRECONDITION_FAILED);

    let wrong_delete = request(
        &running,
        "DELETE",
        ("alice", DEMO_ALICE_PASSWORD),
        path,
        None,
        &[("If-Match", etag.as_str())],
        "",
    )
    .await;
    assert_eq!(wrong_delete.status, StatusCode::PRECONDITION_FAILED);
    let deleted = as_alice(&running, "DELETE", path, None, "").await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    assert_eq!(as_alice(&running, "GET", path, None, "").await.status, StatusCode::NOT_FOUND);
    assert_eq!(as_alice(&running, "DELETE", path, None, "").await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn invalid_calendar_data_is_refused_like_sabre() {
    let running = start_demo().await;
    let put = |name: &'static str, body: String| {
        let running = &running;
        async move {
            as_alice(
                running,
                "PUT",
                &format!("/remote.php/dav/calendars/alice/personal/{name}"),
                None,
                &body,
            )
            .await
        }
    };
    let garbage = put("garbage.ics", "this is not iCalendar".into()).await;
    assert_eq!(garbage.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert!(
        garbage.body.contains("Sabre\\DAV\\Exception\\UnsupportedMediaType"),
        "{}",
        garbage.body
    );
    let card = put("card.ics", "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:x\r\nEND:VCARD\r\n".into()).await;
    assert_eq!(card.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let journal = put(
        "journal.ics",
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VJOURNAL\r\nUID:j1\r\nDTSTAMP:20260101T000000Z\r\nEND:VJOURNAL\r\nEND:VCALENDAR\r\n".into(),
    )
    .await;
    assert_eq!(journal.status, StatusCode::FORBIDDEN, "{}", journal.body);
    assert!(journal.body.contains("supported-calendar-component"), "{}", journal.body);
    let method = put(
        "method.ics",
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nMETHOD:REQUEST\r\nBEGIN:VEVENT\r\nUID:m1\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260101T000000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n".into(),
    )
    .await;
    assert_eq!(method.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert!(method.body.contains("METHOD"), "{}", method.body);

    // The standup's UID under another name: Nextcloud's UidConflict.
    let duplicate = put("copy.ics", event_ics("weekly-standup@tamebi.demo", "Copy")).await;
    assert_eq!(duplicate.status, StatusCode::CONFLICT, "{}", duplicate.body);
    assert!(duplicate.body.contains("no-uid-conflict"), "{}", duplicate.body);
    assert!(duplicate.body.contains(STANDUP), "{}", duplicate.body);
}

#[tokio::test]
async fn calendars_are_created_changed_and_deleted() {
    let running = start_demo().await;
    let path = "/remote.php/dav/calendars/alice/projects/";
    let mkcalendar = r#"<?xml version="1.0"?><c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop><d:displayname>Projects</d:displayname><c:supported-calendar-component-set><c:comp name="VTODO"/></c:supported-calendar-component-set></d:prop></d:set></c:mkcalendar>"#;
    let created = as_alice(&running, "MKCALENDAR", path, None, mkcalendar).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let again = as_alice(&running, "MKCALENDAR", path, None, mkcalendar).await;
    assert_eq!(again.status, StatusCode::METHOD_NOT_ALLOWED);

    let proppatch = r#"<d:propertyupdate xmlns:d="DAV:" xmlns:x1="http://apple.com/ns/ical/"><d:set><d:prop><d:displayname>Projets</d:displayname><x1:calendar-color>#ff0000</x1:calendar-color></d:prop></d:set></d:propertyupdate>"#;
    let patched = as_alice(&running, "PROPPATCH", path, None, proppatch).await;
    assert_eq!(patched.status, StatusCode::MULTI_STATUS);
    assert!(
        patched.body.contains("HTTP/1.1 200 OK") && !patched.body.contains("403"),
        "{}",
        patched.body
    );
    let protected = r#"<d:propertyupdate xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/"><d:set><d:prop><d:displayname>Nope</d:displayname><cs:getctag>x</cs:getctag></d:prop></d:set></d:propertyupdate>"#;
    let refused = as_alice(&running, "PROPPATCH", path, None, protected).await;
    assert!(
        refused.body.contains("403 Forbidden") && refused.body.contains("424 Failed Dependency"),
        "{}",
        refused.body
    );

    let properties = as_alice(
        &running,
        "PROPFIND",
        path,
        Some("0"),
        r#"<d:propfind xmlns:d="DAV:" xmlns:x1="http://apple.com/ns/ical/" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:displayname/><x1:calendar-color/><c:supported-calendar-component-set/></d:prop></d:propfind>"#,
    )
    .await;
    let entries = multistatus(&properties.body);
    assert_eq!(
        entries[0].text(xml::DAV, "displayname").as_deref(),
        Some("Projets"),
        "PROPPATCH is all or nothing"
    );
    assert_eq!(entries[0].text(xml::APPLE, "calendar-color").as_deref(), Some("#ff0000"));
    assert!(properties.body.contains(r#"<cal:comp name="VTODO"/>"#), "{}", properties.body);

    let event_refused =
        as_alice(&running, "PUT", &format!("{path}e.ics"), None, &event_ics("e@test", "E")).await;
    assert_eq!(
        event_refused.status,
        StatusCode::FORBIDDEN,
        "a VTODO-only calendar takes no events"
    );

    let extended_mkcol = r#"<d:mkcol xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop><d:resourcetype><d:collection/><c:calendar/></d:resourcetype><d:displayname>Made by MKCOL</d:displayname></d:prop></d:set></d:mkcol>"#;
    let made = as_alice(
        &running,
        "MKCOL",
        "/remote.php/dav/calendars/alice/by-mkcol/",
        None,
        extended_mkcol,
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);

    assert_eq!(as_alice(&running, "DELETE", path, None, "").await.status, StatusCode::NO_CONTENT);
    assert_eq!(
        as_alice(&running, "PROPFIND", path, Some("0"), "").await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn multiget_answers_each_href_and_404s_the_missing_one() {
    let running = start_demo().await;
    let body = format!(
        r#"<c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><c:calendar-data/></d:prop><d:href>{STANDUP}</d:href><d:href>{ALICE_CALENDAR}missing.ics</d:href></c:calendar-multiget>"#
    );
    let answer = as_alice(&running, "REPORT", ALICE_CALENDAR, Some("1"), &body).await;
    assert_eq!(answer.status, StatusCode::MULTI_STATUS);
    let entries = multistatus(&answer.body);
    assert_eq!(entries.len(), 2);
    let standup = entry(&entries, STANDUP);
    assert!(standup.text(xml::CALDAV, "calendar-data").unwrap().contains("RRULE:FREQ=WEEKLY"));
    let missing = entry(&entries, &format!("{ALICE_CALENDAR}missing.ics"));
    assert_eq!(missing.status.as_deref(), Some("HTTP/1.1 404 Not Found"));
}

#[tokio::test]
async fn sync_collection_reports_changes_since_a_token() {
    let running = start_demo().await;
    let sync = async |token: &str| {
        as_alice(&running, "REPORT", ALICE_CALENDAR, Some("0"), &sync_body(token)).await
    };
    let initial = sync("").await;
    assert_eq!(initial.status, StatusCode::MULTI_STATUS, "{}", initial.body);
    assert_eq!(multistatus(&initial.body).len(), 2, "{}", initial.body);
    let first_token = sync_token(&initial.body);
    assert!(first_token.starts_with("http://sabre.io/ns/sync/"));

    let nothing_yet = sync(&first_token).await;
    assert!(multistatus(&nothing_yet.body).is_empty(), "{}", nothing_yet.body);

    let new_path = format!("{ALICE_CALENDAR}dinner.ics");
    assert_eq!(
        as_alice(&running, "PUT", &new_path, None, &event_ics("dinner@test", "Dinner"))
            .await
            .status,
        StatusCode::CREATED
    );
    let after_put = sync(&first_token).await;
    let entries = multistatus(&after_put.body);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].href, new_path);
    assert!(entries[0].has(xml::DAV, "getetag"));
    let second_token = sync_token(&after_put.body);
    assert_ne!(second_token, first_token);

    assert_eq!(
        as_alice(&running, "DELETE", STANDUP, None, "").await.status,
        StatusCode::NO_CONTENT
    );
    let after_delete = sync(&second_token).await;
    let entries = multistatus(&after_delete.body);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].href, STANDUP);
    assert_eq!(entries[0].status.as_deref(), Some("HTTP/1.1 404 Not Found"));

    let invalid = sync("http://example.invalid/never-issued").await;
    assert_eq!(invalid.status, StatusCode::FORBIDDEN);
    assert!(invalid.body.contains("<d:valid-sync-token/>"), "{}", invalid.body);
}

#[tokio::test]
async fn bob_never_reaches_alices_calendars() {
    let running = start_demo().await;
    let bob = ("bob", DEMO_BOB_PASSWORD);
    for (method, path) in [
        ("PROPFIND", "/remote.php/dav/calendars/alice/"),
        ("PROPFIND", ALICE_CALENDAR),
        ("GET", STANDUP),
        ("DELETE", STANDUP),
        ("PUT", "/remote.php/dav/calendars/alice/personal/intrusion.ics"),
        ("MKCALENDAR", "/remote.php/dav/calendars/alice/intrusion/"),
    ] {
        let body = if method == "PUT" { event_ics("intrusion@test", "x") } else { String::new() };
        let answer = request(&running, method, bob, path, Some("0"), &[], &body).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{method} {path}: {}", answer.body);
    }
    let report = request(
        &running,
        "REPORT",
        bob,
        ALICE_CALENDAR,
        Some("1"),
        &[],
        &calendar_query(r#"<c:comp-filter name="VEVENT"/>"#, "<c:calendar-data/>"),
    )
    .await;
    assert_eq!(report.status, StatusCode::NOT_FOUND);
    // A multiget from bob's own calendar naming alice's object gets a 404 entry.
    let multiget = format!(
        r#"<c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><c:calendar-data/></d:prop><d:href>{STANDUP}</d:href></c:calendar-multiget>"#
    );
    let answer = request(
        &running,
        "REPORT",
        bob,
        "/remote.php/dav/calendars/bob/personal/",
        Some("1"),
        &[],
        &multiget,
    )
    .await;
    assert_eq!(answer.status, StatusCode::MULTI_STATUS);
    assert!(!answer.body.contains("Stand-up"), "{}", answer.body);
    assert_eq!(multistatus(&answer.body)[0].status.as_deref(), Some("HTTP/1.1 404 Not Found"));
    // Alice's object is untouched.
    assert_eq!(as_alice(&running, "GET", STANDUP, None, "").await.status, StatusCode::OK);
}

#[tokio::test]
async fn malformed_xml_is_a_400_and_unknown_properties_are_404_propstats() {
    let running = start_demo().await;
    let malformed = as_alice(
        &running,
        "PROPFIND",
        ALICE_CALENDAR,
        Some("0"),
        "<d:propfind xmlns:d=\"DAV:\"><d:prop>",
    )
    .await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
    let undeclared =
        as_alice(&running, "REPORT", ALICE_CALENDAR, Some("1"), "<c:calendar-query/>").await;
    assert_eq!(undeclared.status, StatusCode::BAD_REQUEST);
    let unknown = as_alice(
        &running,
        "PROPFIND",
        ALICE_CALENDAR,
        Some("0"),
        r#"<d:propfind xmlns:d="DAV:" xmlns:z="urn:example:z"><d:prop><d:displayname/><z:favourite-colour/></d:prop></d:propfind>"#,
    )
    .await;
    assert_eq!(unknown.status, StatusCode::MULTI_STATUS);
    let entries = multistatus(&unknown.body);
    assert_eq!(entries[0].missing, vec!["{urn:example:z}favourite-colour".to_string()]);
    assert!(entries[0].has(xml::DAV, "displayname"));
    let unknown_report = as_alice(
        &running,
        "REPORT",
        ALICE_CALENDAR,
        Some("1"),
        r#"<z:whatever xmlns:z="urn:example:z"/>"#,
    )
    .await;
    assert_eq!(unknown_report.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert!(unknown_report.body.contains("supported-report"), "{}", unknown_report.body);
}

#[tokio::test]
async fn the_bearer_fault_refuses_bearer_on_caldav_but_app_passwords_still_work() {
    let mut fixture = demo_fixture();
    fixture.faults.bearer_rejected_on.push("/remote.php/dav/calendars".into());
    let running = start_with(&fixture).await;
    let now = running.fake.shared.now();
    let token = running.fake.shared.signer.sign_access_token(&access_token::Claims {
        iss: running.fake.base_url().to_string(),
        sub: "alice".into(),
        aud: access_token::Audience::One("nextcloud".into()),
        exp: now + 600,
        iat: now,
        nbf: None,
        jti: "test-token".into(),
        client_id: "nextcloud".into(),
        azp: None,
        preferred_username: None,
        scope: None,
    });
    let with_bearer = |path: &'static str| running.propfind_status_with_bearer(path, &token);
    assert_eq!(
        with_bearer("/remote.php/dav/principals/users/alice/").await,
        StatusCode::MULTI_STATUS
    );
    assert_eq!(with_bearer(ALICE_CALENDAR).await, StatusCode::UNAUTHORIZED);
    let app_password = request(
        &running,
        "PROPFIND",
        ("alice", ALICE_APP_PASSWORD),
        ALICE_CALENDAR,
        Some("0"),
        &[],
        "",
    )
    .await;
    assert_eq!(app_password.status, StatusCode::MULTI_STATUS);
}

#[tokio::test]
async fn principal_search_finds_users_by_display_name() {
    let running = start_demo().await;
    let search = |needle: &str| {
        format!(
            r#"<d:principal-property-search xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:property-search><d:prop><d:displayname/></d:prop><d:match>{needle}</d:match></d:property-search><d:prop><d:displayname/><c:calendar-home-set/></d:prop></d:principal-property-search>"#
        )
    };
    let answer = as_alice(
        &running,
        "REPORT",
        "/remote.php/dav/principals/users/",
        Some("0"),
        &search("stone"),
    )
    .await;
    assert_eq!(answer.status, StatusCode::MULTI_STATUS);
    let entries = multistatus(&answer.body);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].href, "/remote.php/dav/principals/users/bob/");
    // On the DAV root Nextcloud finds nothing, and refuses an empty search.
    let on_root =
        as_alice(&running, "REPORT", "/remote.php/dav/", Some("0"), &search("stone")).await;
    assert_eq!(on_root.status, StatusCode::MULTI_STATUS);
    assert!(multistatus(&on_root.body).is_empty());
    let empty = r#"<d:principal-property-search xmlns:d="DAV:"><d:prop><d:displayname/></d:prop></d:principal-property-search>"#;
    assert_eq!(
        as_alice(&running, "REPORT", "/remote.php/dav/", Some("0"), empty).await.status,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn free_busy_query_reports_busy_time_in_utc() {
    let running = start_demo().await;
    let body = r#"<c:free-busy-query xmlns:c="urn:ietf:params:xml:ns:caldav"><c:time-range start="20260330T000000Z" end="20260331T000000Z"/></c:free-busy-query>"#;
    let answer = as_alice(&running, "REPORT", ALICE_CALENDAR, Some("1"), body).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert!(answer.headers["content-type"].to_str().unwrap().starts_with("text/calendar"));
    assert!(answer.body.contains("FREEBUSY:20260330T070000Z/20260330T071500Z"), "{}", answer.body);
}

#[test]
fn fixture_problems_name_the_calendar_and_the_event() {
    let problems = fixture_problems(
        r#"
[[users]]
uid = "alice"
password = "x"

[[calendars]]
owner = "alice"
uri = "work"

[[calendars.events]]
ics = "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:x\nBEGIN:VEVENT\nUID:a\nDTSTART:20260101T000000Z\nEND:VEVENT\nEND:VCALENDAR\n"

[[calendars.events]]
ics = "not a calendar"

[[calendars.events]]
source = "no/such/file.ics"

[[calendars.events]]
uri = "again.ics"
ics = "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:x\nBEGIN:VEVENT\nUID:a\nDTSTART:20260101T000000Z\nEND:VEVENT\nEND:VCALENDAR\n"

[[calendars]]
owner = "nobody"
uri = "personal"
"#,
    );
    assert_eq!(problems.len(), 4, "{problems:?}");
    assert!(problems[1].starts_with("calendar alice/work event #3: cannot read"), "{problems:?}");
    assert!(
        problems[2].contains("event #4: UID \"a\" is already used by \"a.ics\""),
        "{problems:?}"
    );
    assert!(
        problems[0].starts_with("calendar alice/work event #2: invalid iCalendar:"),
        "{problems:?}"
    );
    assert!(problems[3].contains("calendar nobody/personal: unknown owner"), "{problems:?}");
}

#[tokio::test]
async fn an_object_moves_between_the_owners_calendars() {
    let running = start_demo().await;
    let mkcalendar = r#"<c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"/>"#;
    let archive = "/remote.php/dav/calendars/alice/archive/";
    assert_eq!(
        as_alice(&running, "MKCALENDAR", archive, None, mkcalendar).await.status,
        StatusCode::CREATED
    );
    let destination = running.url(&format!("{archive}budget.ics"));
    let moved = request(
        &running,
        "MOVE",
        ("alice", DEMO_ALICE_PASSWORD),
        "/remote.php/dav/calendars/alice/personal/budget-review.ics",
        None,
        &[("Destination", destination.as_str())],
        "",
    )
    .await;
    assert_eq!(moved.status, StatusCode::CREATED, "{}", moved.body);
    assert_eq!(
        as_alice(
            &running,
            "GET",
            "/remote.php/dav/calendars/alice/personal/budget-review.ics",
            None,
            ""
        )
        .await
        .status,
        StatusCode::NOT_FOUND
    );
    let fetched = as_alice(&running, "GET", &format!("{archive}budget.ics"), None, "").await;
    assert!(fetched.body.contains("UID:budget-review@tamebi.demo"), "{}", fetched.body);
    // Into bob's calendar: refused, and nothing changes.
    let bobs = running.url("/remote.php/dav/calendars/bob/personal/stolen.ics");
    let refused = request(
        &running,
        "MOVE",
        ("alice", DEMO_ALICE_PASSWORD),
        &format!("{archive}budget.ics"),
        None,
        &[("Destination", bobs.as_str())],
        "",
    )
    .await;
    assert_eq!(refused.status, StatusCode::CONFLICT);
    assert_eq!(
        as_alice(&running, "GET", &format!("{archive}budget.ics"), None, "").await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn a_principals_default_calendar_must_be_one_of_theirs_and_is_all_or_nothing() {
    let running = start_demo().await;
    let principal = "/remote.php/dav/principals/users/alice/";
    let patch = |href: &str, extra: &str| {
        format!(
            r#"<d:propertyupdate xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop><c:schedule-default-calendar-URL><d:href>{href}</d:href></c:schedule-default-calendar-URL>{extra}</d:prop></d:set></d:propertyupdate>"#
        )
    };
    let default_of = || async {
        let body = r#"<d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><c:schedule-default-calendar-URL/></d:prop></d:propfind>"#;
        let answer = as_alice(&running, "PROPFIND", principal, Some("0"), body).await;
        answer.body
    };
    let mkcalendar = r#"<c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"/>"#;
    let projects = "/remote.php/dav/calendars/alice/projects/";
    let created = as_alice(&running, "MKCALENDAR", projects, None, mkcalendar).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let before = default_of().await;
    assert!(!before.contains(projects), "{before}");
    for (case, body) in [
        ("bob's calendar", patch("/remote.php/dav/calendars/bob/personal/", "")),
        ("no calendar", patch("/remote.php/dav/calendars/alice/nowhere/", "")),
        (
            "a valid href beside a protected property",
            patch(projects, "<d:displayname>x</d:displayname>"),
        ),
    ] {
        let refused = as_alice(&running, "PROPPATCH", principal, None, &body).await;
        assert_eq!(refused.status, StatusCode::MULTI_STATUS, "{case}");
        assert!(refused.body.contains("403 Forbidden"), "{case}: {}", refused.body);
        assert_eq!(default_of().await, before, "{case}: the default is unchanged");
    }
    let bobs = as_alice(
        &running,
        "PROPPATCH",
        "/remote.php/dav/principals/users/bob/",
        None,
        &patch("/remote.php/dav/calendars/alice/personal/", ""),
    )
    .await;
    assert_eq!(bobs.status, StatusCode::FORBIDDEN, "another user's principal: {}", bobs.body);
    let chosen = as_alice(&running, "PROPPATCH", principal, None, &patch(projects, "")).await;
    assert!(chosen.body.contains("200 OK"), "{}", chosen.body);
    assert!(default_of().await.contains(projects), "alone, the valid href is kept");
}
