//! Calendar delegation (`dav_features/caldav-delegation.feature`): a user
//! names, in the `{DAV:}group-member-set` of their own
//! `principals/users/{uid}/calendar-proxy-read` (or `-write`) principal, who
//! may read (or also write) their calendars; nobody else sets it.
//!
//! The suite grants admin's calendars to user0; these tests make two
//! accounts of their own, so that they touch nobody's real delegations.

use super::caldav::{home, mkcalendar, put_event};
use super::throwaway::Throwaway;
use nextcloud_contract::{Account, Target};
use xml_tree::DAV;

const CALSERVER: &str = "http://calendarserver.org/ns/";

fn principal(account: &Account) -> String {
    format!("/remote.php/dav/principals/users/{}", account.uid)
}

fn proxy(account: &Account, kind: &str) -> String {
    format!("{}/calendar-proxy-{kind}", principal(account))
}

/// PROPPATCH of `owner`'s proxy `kind` by `by`, naming `members` (none
/// clears it), as the suite's step writes it: hrefs without a trailing slash.
async fn set_members(
    target: &Target,
    by: &Account,
    owner: &Account,
    kind: &str,
    members: &[&Account],
) -> reqwest::Response {
    let hrefs: String =
        members.iter().map(|member| format!("<d:href>{}</d:href>", principal(member))).collect();
    let body = format!(
        r#"<?xml version="1.0"?>
<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:group-member-set>{hrefs}</d:group-member-set></d:prop></d:set></d:propertyupdate>"#
    );
    target.send_xml(by, "PROPPATCH", &proxy(owner, kind), None, body).await
}

/// The hrefs a property holds, without their trailing slash.
fn hrefs_of(response: &nextcloud_contract::DavResponse, ns: &str, local: &str) -> Vec<String> {
    response
        .prop(ns, local)
        .map(|property| {
            property
                .children_named(DAV, "href")
                .map(|href| href.text().trim().trim_end_matches('/').to_string())
                .collect()
        })
        .unwrap_or_default()
}

async fn principal_props(
    target: &Target,
    by: &Account,
    path: &str,
) -> nextcloud_contract::DavResponse {
    let body = r#"<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/"><d:prop><d:group-member-set/><d:group-membership/><cs:calendar-proxy-read-for/><cs:calendar-proxy-write-for/></d:prop></d:propfind>"#;
    let (status, multistatus) = target.propfind(by, path, "0", body).await;
    assert_eq!(status, 207, "PROPFIND {path}");
    multistatus.unwrap().responses.into_iter().next().expect("one response")
}

/// Whether `delegate` can list `owner`'s calendar home, and what it may do
/// on `calendar` there.
async fn reach(
    target: &Target,
    delegate: &Account,
    owner: &Account,
    calendar: &str,
) -> Option<Vec<String>> {
    let body = r#"<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:current-user-privilege-set/><d:current-user-principal/></d:prop></d:propfind>"#;
    let (status, multistatus) = target.propfind(delegate, &home(owner), "1", body).await;
    if status == 404 {
        return None;
    }
    assert_eq!(status, 207, "a delegate's PROPFIND of the home it reaches");
    let multistatus = multistatus.unwrap();
    let listed =
        multistatus.find(&format!("/{calendar}/")).expect("the owner's calendar is listed");
    let me = hrefs_of(listed, DAV, "current-user-principal");
    assert_eq!(me, [principal(delegate)], "the delegate is still the current user");
    let privileges = listed.prop(DAV, "current-user-privilege-set").expect("privileges");
    Some(
        privileges
            .children_named(DAV, "privilege")
            .flat_map(|privilege| {
                privilege.children().map(|name| name.local.clone()).collect::<Vec<_>>()
            })
            .collect(),
    )
}

#[tokio::test]
async fn an_owner_grants_and_withdraws_read_access_through_their_proxy() {
    let target = Target::get().await;
    let (people, users) = Throwaway::accounts::<2>(&target).await;
    let [owner, delegate] = &users;
    let calendar = target.unique("cal");
    assert_eq!(mkcalendar(&target, owner, &calendar).await, 201);
    assert_eq!(
        reach(&target, delegate, owner, &calendar).await,
        None,
        "no access before the grant"
    );

    let response = set_members(&target, owner, owner, "read", &[delegate]).await;
    assert_eq!(response.status(), 207, "the suite: the CalDAV response should be multi status");
    let multistatus = nextcloud_contract::Multistatus::parse(&response.bytes().await.unwrap());
    let answered = &multistatus.responses[0];
    assert_eq!(answered.href, proxy(owner, "read"), "the proxy's href, as the suite compares it");
    assert!(answered.prop(DAV, "group-member-set").is_some(), "group-member-set set (200)");

    let members = principal_props(&target, owner, &proxy(owner, "read")).await;
    assert_eq!(hrefs_of(&members, DAV, "group-member-set"), [principal(delegate)]);
    let theirs = principal_props(&target, delegate, &format!("{}/", principal(delegate))).await;
    assert!(hrefs_of(&theirs, DAV, "group-membership").contains(&proxy(owner, "read")));
    assert_eq!(hrefs_of(&theirs, CALSERVER, "calendar-proxy-read-for"), [principal(owner)]);

    let privileges =
        reach(&target, delegate, owner, &calendar).await.expect("the grant opens the home");
    assert!(privileges.iter().any(|name| name == "read"), "{privileges:?}");
    assert!(!privileges.iter().any(|name| name == "write" || name == "all"), "{privileges:?}");
    let object = format!("{}{calendar}/delegated.ics", home(owner));
    let put = put_event(target.as_account(delegate, "PUT", &object), "delegated").await;
    assert_eq!(put, 403, "a read proxy writes nothing");

    let cleared = set_members(&target, owner, owner, "read", &[]).await;
    assert_eq!(cleared.status(), 207, "an empty group-member-set withdraws the grant");
    assert_eq!(reach(&target, delegate, owner, &calendar).await, None, "no access after it");
    people.remove().await;
}

#[tokio::test]
async fn a_write_proxy_adds_events_to_the_owners_calendars() {
    let target = Target::get().await;
    let (people, users) = Throwaway::accounts::<2>(&target).await;
    let [owner, delegate] = &users;
    let calendar = target.unique("cal");
    assert_eq!(mkcalendar(&target, owner, &calendar).await, 201);

    let response = set_members(&target, owner, owner, "write", &[delegate]).await;
    assert_eq!(response.status(), 207);
    let multistatus = nextcloud_contract::Multistatus::parse(&response.bytes().await.unwrap());
    assert_eq!(multistatus.responses[0].href, proxy(owner, "write"));
    assert!(multistatus.responses[0].prop(DAV, "group-member-set").is_some());

    let privileges =
        reach(&target, delegate, owner, &calendar).await.expect("the grant opens the home");
    assert!(privileges.iter().any(|name| name == "write"), "{privileges:?}");
    let object = format!("{}{calendar}/delegated.ics", home(owner));
    let put = put_event(target.as_account(delegate, "PUT", &object), "delegated").await;
    assert_eq!(put, 201, "a write proxy adds an event");
    let (status, text) = target.get_text(owner, &object).await;
    assert_eq!(status, 200, "the owner finds it in their calendar");
    assert!(text.contains("UID:delegated"), "{text}");
    let theirs = principal_props(&target, delegate, &format!("{}/", principal(delegate))).await;
    assert_eq!(hrefs_of(&theirs, CALSERVER, "calendar-proxy-write-for"), [principal(owner)]);
    people.remove().await;
}

#[tokio::test]
async fn nobody_sets_another_users_proxy() {
    let target = Target::get().await;
    let (people, users) = Throwaway::accounts::<3>(&target).await;
    let [owner, meddler, beneficiary] = &users;
    let response = set_members(&target, meddler, owner, "write", &[beneficiary]).await;
    assert_eq!(response.status(), 404, "the suite: someone else's proxy is a 404");
    let members = principal_props(&target, owner, &proxy(owner, "write")).await;
    assert!(hrefs_of(&members, DAV, "group-member-set").is_empty(), "and nothing changed");
    people.remove().await;
}
