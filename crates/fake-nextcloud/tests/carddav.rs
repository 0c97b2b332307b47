//! CardDAV over real sockets against the demo fixture: the address book
//! home, vCard lifecycle and validation, addressbook-query filters,
//! multiget, sync-collection, extended MKCOL and isolation between users.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod collection_support;
mod common;

use collection_support::{fixture_problems, hrefs, multistatus, sync_body, sync_token};
use common::{DEMO_ALICE_PASSWORD, DEMO_BOB_PASSWORD, as_alice, request, start_demo};

use fake_nextcloud::xml;
use reqwest::StatusCode;

const ALICE_CONTACTS: &str = "/remote.php/dav/addressbooks/users/alice/contacts/";
const CHLOE: &str = "/remote.php/dav/addressbooks/users/alice/contacts/chloe.vcf";

fn query(filter: &str) -> String {
    format!(
        r#"<c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:prop><d:getetag/><c:address-data/></d:prop>{filter}</c:addressbook-query>"#
    )
}

fn card(uid: &str, name: &str) -> String {
    format!("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:{uid}\r\nFN:{name}\r\nEMAIL:{uid}\r\nEND:VCARD\r\n")
}

#[tokio::test]
async fn the_address_book_home_lists_address_books() {
    let running = start_demo().await;
    let answer = as_alice(
        &running,
        "PROPFIND",
        "/remote.php/dav/addressbooks/users/alice/",
        Some("1"),
        r#"<d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/"><d:prop><d:resourcetype/><d:displayname/><cs:getctag/><d:sync-token/></d:prop></d:propfind>"#,
    )
    .await;
    assert_eq!(answer.status, StatusCode::MULTI_STATUS, "{}", answer.body);
    let entries = multistatus(&answer.body);
    assert_eq!(
        hrefs(&answer.body),
        vec!["/remote.php/dav/addressbooks/users/alice/", ALICE_CONTACTS]
    );
    let contacts = &entries[1];
    assert!(contacts.found["{DAV:}resourcetype"].child(xml::CARDDAV, "addressbook").is_some());
    assert_eq!(contacts.text(xml::DAV, "displayname").unwrap(), "Contacts");
    let token = contacts.text(xml::DAV, "sync-token").unwrap();
    let ctag = contacts.text(xml::CALSERVER, "getctag").unwrap();
    // Address books, unlike calendars, carry the bare number as ctag.
    assert_eq!(token, format!("http://sabre.io/ns/sync/{ctag}"));
    assert!(ctag.parse::<u64>().is_ok(), "{ctag}");
    // Carol has none in the fixture: Nextcloud's default "contacts".
    let carol = request(
        &running,
        "PROPFIND",
        ("carol", "carol-demo-password"),
        "/remote.php/dav/addressbooks/users/carol/contacts/",
        Some("0"),
        &[],
        "",
    )
    .await;
    assert_eq!(carol.status, StatusCode::MULTI_STATUS);
}

#[tokio::test]
async fn a_card_lives_through_put_get_and_delete() {
    let running = start_demo().await;
    let path = format!("{ALICE_CONTACTS}eve.vcf");
    let body = card("eve@example.org", "Eve Adams");
    let created = as_alice(&running, "PUT", &path, None, &body).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let etag = created.headers["etag"].to_str().unwrap().to_string();
    let fetched = as_alice(&running, "GET", &path, None, "").await;
    assert_eq!(fetched.status, StatusCode::OK);
    assert_eq!(fetched.body, body);
    assert_eq!(fetched.headers["content-type"], "text/vcard; charset=utf-8");
    assert_eq!(fetched.headers["etag"], etag.as_str());

    let if_none_match = request(
        &running,
        "PUT",
        ("alice", DEMO_ALICE_PASSWORD),
        &path,
        None,
        &[("If-None-Match", "*")],
        &body,
    )
    .await;
    assert_eq!(if_none_match.status, StatusCode::PRECONDITION_FAILED);
    let updated = request(
        &running,
        "PUT",
        ("alice", DEMO_ALICE_PASSWORD),
        &path,
        None,
        &[("If-Match", etag.as_str())],
        &card("eve@example.org", "Eve Adams-Martin"),
    )
    .await;
    assert_eq!(updated.status, StatusCode::NO_CONTENT);

    assert_eq!(as_alice(&running, "DELETE", &path, None, "").await.status, StatusCode::NO_CONTENT);
    assert_eq!(as_alice(&running, "GET", &path, None, "").await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn invalid_vcards_are_refused() {
    let running = start_demo().await;
    let put = async |name: &str, body: &str| {
        as_alice(&running, "PUT", &format!("{ALICE_CONTACTS}{name}"), None, body).await
    };
    let garbage = put("x.vcf", "hello").await;
    assert_eq!(garbage.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let calendar = put("y.vcf", "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n").await;
    assert_eq!(calendar.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert!(
        calendar.body.contains("This collection can only support vcard objects."),
        "{}",
        calendar.body
    );
    let duplicate = put("dup.vcf", &card("chloe@tamebi.demo", "Other")).await;
    assert_eq!(duplicate.status, StatusCode::BAD_REQUEST, "{}", duplicate.body);
    // A card without UID is repaired, so the PUT carries no ETag.
    let repaired = put("z.vcf", "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Zoe\r\nEND:VCARD\r\n").await;
    assert_eq!(repaired.status, StatusCode::CREATED);
    assert!(!repaired.headers.contains_key("etag"));
    assert!(
        as_alice(&running, "GET", &format!("{ALICE_CONTACTS}z.vcf"), None, "")
            .await
            .body
            .contains("UID:")
    );
}

#[tokio::test]
async fn addressbook_query_filters_on_properties() {
    let running = start_demo().await;
    let run = |filter: &'static str| {
        let running = &running;
        async move {
            let answer =
                as_alice(running, "REPORT", ALICE_CONTACTS, Some("1"), &query(filter)).await;
            assert_eq!(answer.status, StatusCode::MULTI_STATUS, "{}", answer.body);
            hrefs(&answer.body)
        }
    };
    let bob_card = format!("{ALICE_CONTACTS}bob.vcf");
    assert_eq!(run(r#"<c:filter><c:prop-filter name="FN"><c:text-match>chloé</c:text-match></c:prop-filter></c:filter>"#).await, vec![CHLOE]);
    assert_eq!(run(r#"<c:filter><c:prop-filter name="EMAIL"><c:text-match match-type="starts-with">bob@</c:text-match></c:prop-filter></c:filter>"#).await, vec![bob_card.clone()]);
    assert_eq!(run(r#"<c:filter><c:prop-filter name="TEL"><c:text-match>+33 6</c:text-match></c:prop-filter></c:filter>"#).await, vec![CHLOE]);
    assert_eq!(run(r#"<c:filter><c:prop-filter name="NOTE"><c:text-match>apollo</c:text-match></c:prop-filter></c:filter>"#).await, vec![CHLOE]);
    assert_eq!(run(r#"<c:filter><c:prop-filter name="ORG"><c:text-match match-type="equals">finance</c:text-match></c:prop-filter></c:filter>"#).await, vec![CHLOE]);
    assert!(run(r#"<c:filter><c:prop-filter name="ORG"><c:text-match match-type="equals">fin</c:text-match></c:prop-filter></c:filter>"#).await.is_empty());
    let either = r#"<c:filter test="anyof"><c:prop-filter name="FN"><c:text-match>bob</c:text-match></c:prop-filter><c:prop-filter name="ORG"><c:text-match>finance</c:text-match></c:prop-filter></c:filter>"#;
    assert_eq!(run(either).await.len(), 2);
    let both = r#"<c:filter test="allof"><c:prop-filter name="FN"><c:text-match>bob</c:text-match></c:prop-filter><c:prop-filter name="ORG"><c:text-match>finance</c:text-match></c:prop-filter></c:filter>"#;
    assert!(run(both).await.is_empty());
    let limited = r#"<c:filter><c:prop-filter name="EMAIL"/></c:filter><c:limit><c:nresults>1</c:nresults></c:limit>"#;
    assert_eq!(run(limited).await.len(), 1);

    let answer = as_alice(
        &running,
        "REPORT",
        ALICE_CONTACTS,
        Some("1"),
        &query(r#"<c:filter><c:prop-filter name="FN"><c:text-match collation="i;klingon">x</c:text-match></c:prop-filter></c:filter>"#),
    )
    .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    let depth_zero = as_alice(&running, "REPORT", ALICE_CONTACTS, Some("0"), &query("")).await;
    assert_eq!(depth_zero.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[tokio::test]
async fn address_data_can_be_limited_to_some_properties() {
    let running = start_demo().await;
    let body = format!(
        r#"<c:addressbook-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:prop><c:address-data><c:prop name="EMAIL"/></c:address-data></d:prop><d:href>{CHLOE}</d:href><d:href>{ALICE_CONTACTS}nobody.vcf</d:href></c:addressbook-multiget>"#
    );
    let answer = as_alice(&running, "REPORT", ALICE_CONTACTS, Some("1"), &body).await;
    assert_eq!(answer.status, StatusCode::MULTI_STATUS);
    let entries = multistatus(&answer.body);
    assert_eq!(entries.len(), 2);
    let data = entries[0].text(xml::CARDDAV, "address-data").unwrap();
    assert!(data.contains("chloe.dubois@example.com"), "{data}");
    assert!(!data.contains("TEL"), "{data}");
    assert_eq!(entries[1].status.as_deref(), Some("HTTP/1.1 404 Not Found"));
}

#[tokio::test]
async fn sync_collection_lists_added_and_deleted_cards() {
    let running = start_demo().await;
    let sync = async |token: &str| {
        as_alice(&running, "REPORT", ALICE_CONTACTS, None, &sync_body(token)).await
    };
    let initial = sync("").await;
    assert_eq!(hrefs(&initial.body).len(), 2);
    let token = sync_token(&initial.body);
    let new_card = format!("{ALICE_CONTACTS}new.vcf");
    assert_eq!(
        as_alice(&running, "PUT", &new_card, None, &card("new@example.org", "New")).await.status,
        StatusCode::CREATED
    );
    assert_eq!(as_alice(&running, "DELETE", CHLOE, None, "").await.status, StatusCode::NO_CONTENT);
    let changes = sync(&token).await;
    let entries = multistatus(&changes.body);
    assert_eq!(entries.len(), 2, "{}", changes.body);
    assert_eq!(entries[0].href, new_card);
    assert_eq!(entries[1].href, CHLOE);
    assert_eq!(entries[1].status.as_deref(), Some("HTTP/1.1 404 Not Found"));
    let invalid = sync("urn:nope").await;
    assert_eq!(invalid.status, StatusCode::FORBIDDEN);
    assert!(invalid.body.contains("valid-sync-token"));
}

#[tokio::test]
async fn extended_mkcol_creates_an_address_book() {
    let running = start_demo().await;
    let path = "/remote.php/dav/addressbooks/users/alice/clients/";
    let body = r#"<d:mkcol xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:set><d:prop><d:resourcetype><d:collection/><c:addressbook/></d:resourcetype><d:displayname>Clients</d:displayname></d:prop></d:set></d:mkcol>"#;
    assert_eq!(as_alice(&running, "MKCOL", path, None, body).await.status, StatusCode::CREATED);
    assert_eq!(
        as_alice(&running, "MKCOL", path, None, body).await.status,
        StatusCode::METHOD_NOT_ALLOWED
    );
    let plain = r#"<d:mkcol xmlns:d="DAV:"><d:set><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop></d:set></d:mkcol>"#;
    let refused =
        as_alice(&running, "MKCOL", "/remote.php/dav/addressbooks/users/alice/plain/", None, plain)
            .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert!(refused.body.contains("valid-resourcetype"));
    let listed = as_alice(&running, "PROPFIND", path, Some("0"), "").await;
    assert!(listed.body.contains("<d:displayname>Clients</d:displayname>"), "{}", listed.body);
    assert_eq!(as_alice(&running, "DELETE", path, None, "").await.status, StatusCode::NO_CONTENT);
    assert_eq!(
        as_alice(&running, "PROPFIND", path, Some("0"), "").await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn bob_never_reaches_alices_address_books() {
    let running = start_demo().await;
    let bob = ("bob", DEMO_BOB_PASSWORD);
    for (method, path) in [
        ("PROPFIND", "/remote.php/dav/addressbooks/users/alice/"),
        ("PROPFIND", ALICE_CONTACTS),
        ("GET", CHLOE),
        ("DELETE", CHLOE),
        ("PUT", "/remote.php/dav/addressbooks/users/alice/contacts/intrusion.vcf"),
        ("REPORT", ALICE_CONTACTS),
    ] {
        let body = match method {
            "PUT" => card("intrusion@example.org", "Intruder"),
            "REPORT" => query(""),
            _ => String::new(),
        };
        let answer = request(&running, method, bob, path, Some("1"), &[], &body).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{method} {path}: {}", answer.body);
    }
    let home = request(
        &running,
        "PROPFIND",
        bob,
        "/remote.php/dav/addressbooks/users/",
        Some("1"),
        &[],
        "",
    )
    .await;
    assert!(!home.body.contains("/users/alice/"), "{}", home.body);
    assert_eq!(as_alice(&running, "GET", CHLOE, None, "").await.status, StatusCode::OK);
}

#[test]
fn fixture_problems_name_the_address_book_and_the_card() {
    let problems = fixture_problems(
        r#"
[[users]]
uid = "alice"
password = "x"

[[addressbooks]]
owner = "alice"
uri = "contacts"

[[addressbooks.cards]]
vcf = "BEGIN:VCARD\nVERSION:3.0\nUID:c1\nFN:One\nEND:VCARD\n"

[[addressbooks.cards]]
vcf = "BEGIN:VCARD\nUID:c2\nFN:No version\nEND:VCARD\n"

[[addressbooks.cards]]
uri = "c1.vcf"
vcf = "BEGIN:VCARD\nVERSION:3.0\nUID:c3\nFN:Same uri\nEND:VCARD\n"
"#,
    );
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].starts_with("address book alice/contacts card #2: invalid vCard: VERSION"),
        "{problems:?}"
    );
    assert!(problems[1].contains("card #3: uri \"c1.vcf\" is used twice"), "{problems:?}");
}
