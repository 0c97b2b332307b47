//! CardDAV as Nextcloud's `dav` app serves it (sabre/dav's CardDAV plugin,
//! RFC 6352), with the requests mcp-nextcloud sends (`nextcloud/carddav.rs`).

use super::dav::propfind_error;
use nextcloud_contract::{Account, Target};
use xml_tree::{CARDDAV, DAV};

fn home(account: &Account) -> String {
    format!("/remote.php/dav/addressbooks/users/{}/", account.uid)
}

async fn make_address_book(target: &Target, account: &Account, uri: &str) -> u16 {
    // Extended MKCOL (RFC 5689), as Nextcloud's clients create address books.
    let body = r#"<?xml version="1.0" encoding="UTF-8"?>
<d:mkcol xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav"><d:set><d:prop>
<d:resourcetype><d:collection/><card:addressbook/></d:resourcetype>
<d:displayname>Contract</d:displayname>
</d:prop></d:set></d:mkcol>"#;
    let path = format!("{}{uri}/", home(account));
    target.send_xml(account, "MKCOL", &path, None, body).await.status().as_u16()
}

/// mcp-nextcloud's addressbook-query: `anyof` text matches on the searched
/// properties.
fn query_body(literal: &str) -> String {
    let filters: String = ["FN", "N", "NICKNAME", "EMAIL", "TEL", "ORG", "NOTE"]
        .iter()
        .map(|name| {
            format!(
                r#"<c:prop-filter name="{name}"><c:text-match collation="i;unicode-casemap" match-type="contains">{literal}</c:text-match></c:prop-filter>"#
            )
        })
        .collect();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:prop><d:getetag/><c:address-data/></d:prop><c:filter test="anyof">{filters}</c:filter><c:limit><c:nresults>5</c:nresults></c:limit></c:addressbook-query>"#
    )
}

#[tokio::test]
async fn address_books_are_listed_and_queried_by_text() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let book = target.unique("book");
    assert_eq!(make_address_book(&target, &alice, &book).await, 201, "extended MKCOL");

    let body = r#"<?xml version="1.0" encoding="UTF-8"?><d:propfind xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav"><d:prop><d:resourcetype/><d:displayname/></d:prop></d:propfind>"#;
    let (status, multistatus) = target.propfind(&alice, &home(&alice), "1", body).await;
    assert_eq!(status, 207);
    let listed = multistatus.unwrap();
    let entry = listed.find(&format!("/{book}/")).expect("the new address book is listed");
    let resourcetype = entry.prop(DAV, "resourcetype").unwrap();
    assert!(resourcetype.child(CARDDAV, "addressbook").is_some(), "card:addressbook");
    assert_eq!(entry.text(DAV, "displayname").as_deref(), Some("Contract"));

    // A contact with a distinctive organisation.
    let marker = format!("Zyx{:08x}", rand::random::<u32>());
    let uid = target.unique("card");
    let vcard = format!(
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:{uid}\r\nFN:Chloé Durand\r\nN:Durand;Chloé;;;\r\n\
EMAIL;TYPE=WORK:chloe@example.com\r\nORG:{marker} SARL\r\nEND:VCARD\r\n"
    );
    let card = format!("{}{book}/{uid}.vcf", home(&alice));
    let put = target.put_new(&alice, &card, "text/vcard; charset=utf-8", vcard).await;
    assert_eq!(put.status(), 201);

    let book_path = format!("{}{book}/", home(&alice));
    let report = |literal: String| {
        target.send_xml(&alice, "REPORT", &book_path, Some("1"), query_body(&literal))
    };
    // Case-insensitive "contains" on ORG.
    let found = report(marker.to_lowercase()).await;
    assert_eq!(found.status(), 207);
    let found = nextcloud_contract::Multistatus::parse(&found.bytes().await.unwrap());
    assert_eq!(found.responses.len(), 1, "the card whose ORG contains the text");
    let data = found.responses[0].text(CARDDAV, "address-data").expect("address-data");
    assert!(data.contains(&format!("UID:{uid}")) && data.contains("FN:Chloé Durand"), "{data}");
    // EMAIL is searched too.
    let by_email = report("chloe@example".to_string()).await;
    let by_email = nextcloud_contract::Multistatus::parse(&by_email.bytes().await.unwrap());
    assert_eq!(by_email.responses.len(), 1);
    // Nothing matches a text no property contains.
    let none = report(format!("{marker}-absent")).await;
    let none = nextcloud_contract::Multistatus::parse(&none.bytes().await.unwrap());
    assert!(none.responses.is_empty());

    let deleted = target.as_account(&alice, "DELETE", &card).send().await.unwrap();
    assert_eq!(deleted.status(), 204);
    let _ = target.as_account(&alice, "DELETE", &format!("{}{book}/", home(&alice))).send().await;
}

/// Nextcloud's integration suite (`dav_features/carddav.feature`): the
/// 404s for address books of another user carry sabre's exact messages.
#[tokio::test]
async fn another_users_address_books_are_404_in_nextclouds_words() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let uri = target.unique("elsewhere");
    let not_found = "Sabre\\DAV\\Exception\\NotFound".to_string();
    let message = format!("Addressbook with name '{uri}' could not be found");
    let bobs = format!("{}{uri}/", home(&bob));
    assert_eq!(
        propfind_error(&target, &alice, &bobs, "").await,
        (404, not_found.clone(), message.clone()),
        "an address book that does not exist"
    );
    assert_eq!(make_address_book(&target, &bob, &uri).await, 201);
    assert_eq!(
        propfind_error(&target, &alice, &bobs, "").await,
        (404, not_found.clone(), message.clone()),
        "bob's address book, not shared with alice"
    );
    let missing_legacy = format!("/remote.php/carddav/addressbooks/{}/{uri}-none/", bob.uid);
    assert_eq!(
        propfind_error(&target, &alice, &missing_legacy, "").await,
        (404, not_found.clone(), format!("Addressbook with name '{uri}-none' could not be found")),
        "an address book that does not exist, through the legacy endpoint"
    );
    let onto_existing = format!("/remote.php/dav/addressbooks/{}/{uri}/", bob.uid);
    let created = target.send_xml(&alice, "MKCOL", &onto_existing, None, "").await;
    assert_eq!(
        nextcloud_contract::sabre_error(created).await,
        (404, not_found.clone(), format!("File not found: {} in 'addressbooks'", bob.uid)),
        "creating an address book over bob's existing one, outside users/"
    );
    let legacy = format!("/remote.php/carddav/addressbooks/{}/{uri}/", bob.uid);
    assert_eq!(
        propfind_error(&target, &alice, &legacy, "").await,
        (404, not_found.clone(), message),
        "the same through the legacy endpoint"
    );
    let own = target.send_xml(&bob, "PROPFIND", &legacy, Some("0"), "").await;
    assert_eq!(own.status(), 207, "bob reaches his address book through the legacy endpoint");
    let outside = format!("/remote.php/dav/addressbooks/{}/{uri}-2/", bob.uid);
    let created = target.send_xml(&alice, "MKCOL", &outside, None, "").await;
    assert_eq!(
        nextcloud_contract::sabre_error(created).await,
        (404, not_found, format!("File not found: {} in 'addressbooks'", bob.uid)),
        "creating an address book outside users/"
    );
    let _ = target.as_account(&bob, "DELETE", &bobs).send().await;
}
