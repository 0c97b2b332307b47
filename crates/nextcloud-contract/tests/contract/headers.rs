//! The headers Nextcloud sends with what it serves, as its integration
//! suite checks them: security headers on file and vCard downloads
//! (`dav_features/webdav-related.feature`, `dav_features/carddav.feature`),
//! one `WWW-Authenticate` challenge on an anonymous DAV call, the
//! AppFramework's policy on OCS answers, and the OCS content types
//! (`features/ocs-v1.feature`, `/cloud/config`).

use nextcloud_contract::{Account, Target, header};

/// What `OC_Response::addSecurityHeaders` (or the web server) adds to
/// every answer, with the values the suite expects.
const EVERY_ANSWER: [(&str, &str); 5] = [
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "SAMEORIGIN"),
    ("x-permitted-cross-domain-policies", "none"),
    ("x-robots-tag", "noindex, nofollow"),
    ("x-xss-protection", "1; mode=block"),
];

/// `first`, then every one of [`EVERY_ANSWER`].
fn with_every_answer<'a>(first: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    first.iter().copied().chain(EVERY_ANSWER).collect()
}

/// The suite's "the following headers should be set", and "there are no
/// duplicate headers" (a cookie aside, nothing is sent twice).
fn assert_headers(response: &reqwest::Response, expected: &[(&str, &str)], what: &str) {
    for (name, value) in expected {
        assert_eq!(header(response, name), *value, "{what}: {name}");
    }
    let mut seen = std::collections::BTreeSet::new();
    for name in response.headers().keys() {
        if name != "set-cookie" {
            assert!(seen.insert(name.as_str()), "{what}: {name} is sent twice");
        }
    }
}

#[tokio::test]
async fn file_downloads_carry_the_security_headers_on_both_endpoints() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let name = format!("{}.txt", target.unique("headers"));
    assert!(target.put_file(&alice, &name, "Welcome to the contract").await.status().is_success());

    let disposition = format!("attachment; filename*=UTF-8''{name}; filename=\"{name}\"");
    let expected = with_every_answer(&[
        ("content-disposition", disposition.as_str()),
        ("content-security-policy", "default-src 'none';"),
    ]);
    for path in [target.files_path(&alice, &name), format!("/remote.php/webdav/{name}")] {
        let response = target.as_account(&alice, "GET", &path).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        assert_headers(&response, &expected, &path);
        assert_eq!(response.text().await.unwrap(), "Welcome to the contract");
    }
    target.cleanup(&alice, &name).await;
}

#[tokio::test]
async fn an_anonymous_dav_call_gets_one_basic_challenge() {
    let target = Target::get().await;
    for path in ["/remote.php/webdav/", "/remote.php/dav/files/"] {
        let response = target.anonymous("PROPFIND", path).send().await.unwrap();
        assert_eq!(response.status(), 401, "{path}");
        assert_headers(
            &response,
            &[("www-authenticate", "Basic realm=\"Nextcloud\", charset=\"UTF-8\"")],
            path,
        );
    }
}

fn card_home(account: &Account) -> String {
    format!("/remote.php/dav/addressbooks/users/{}/", account.uid)
}

async fn make_address_book(target: &Target, account: &Account, uri: &str) {
    let body = r#"<?xml version="1.0" encoding="UTF-8"?>
<d:mkcol xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav"><d:set><d:prop>
<d:resourcetype><d:collection/><card:addressbook/></d:resourcetype>
</d:prop></d:set></d:mkcol>"#;
    let path = format!("{}{uri}/", card_home(account));
    let made = target.send_xml(account, "MKCOL", &path, None, body).await;
    assert_eq!(made.status(), 201, "extended MKCOL");
}

/// The first bytes of a JFIF file, base64: a photo's data as vCard 3.0
/// carries it.
const JPEG_BASE64: &str = "/9j/4AAQSkZJRgABAQ==";

#[tokio::test]
async fn vcards_and_their_photos_download_as_attachments() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let book = target.unique("headers-book");
    make_address_book(&target, &alice, &book).await;
    let book_path = format!("{}{book}/", card_home(&alice));

    let with_photo = "bjoern.vcf";
    let card = format!(
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:{}\r\nFN:Bjoern\r\nN:;Bjoern;;;\r\n\
PHOTO;ENCODING=b;TYPE=JPEG:{JPEG_BASE64}\r\nEND:VCARD\r\n",
        target.unique("photo")
    );
    let put = target.put_new(&alice, &format!("{book_path}{with_photo}"), "text/vcard", card).await;
    assert_eq!(put.status(), 201);

    let card_path = format!("{book_path}{with_photo}");
    let response = target.as_account(&alice, "GET", &card_path).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let expected = with_every_answer(&[
        ("content-disposition", "attachment; filename*=UTF-8''bjoern.vcf; filename=\"bjoern.vcf\""),
        ("content-type", "text/vcard; charset=utf-8"),
        ("content-security-policy", "default-src 'none';"),
    ]);
    assert_headers(&response, &expected, "vCard download");

    let photo = target.as_account(&alice, "GET", &format!("{card_path}?photo")).send().await;
    let photo = photo.unwrap();
    assert_eq!(photo.status(), 200);
    let expected = with_every_answer(&[
        ("content-disposition", "attachment; filename=bjoern.vcf.jpg"),
        ("content-type", "image/jpeg"),
        ("content-security-policy", "default-src 'none';"),
    ]);
    assert_headers(&photo, &expected, "photo export");
    assert_eq!(&photo.bytes().await.unwrap()[..4], &[0xFF, 0xD8, 0xFF, 0xE0]);

    // A card without a photo has none to export.
    let plain = format!(
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:{}\r\nFN:Plain\r\nN:;Plain;;;\r\nEND:VCARD\r\n",
        target.unique("plain")
    );
    let plain_path = format!("{book_path}plain.vcf");
    assert_eq!(target.put_new(&alice, &plain_path, "text/vcard", plain).await.status(), 201);
    let none = target.as_account(&alice, "GET", &format!("{plain_path}?photo")).send().await;
    assert_eq!(none.unwrap().status(), 404);

    let _ = target.as_account(&alice, "DELETE", &book_path).send().await;
}

#[tokio::test]
async fn ocs_answers_carry_the_app_frameworks_policy_and_content_types() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let ocs =
        |path: &str| target.as_account(&alice, "GET", path).header("OCS-APIRequest", "true").send();

    // An AppFramework controller: its policy, XML as `BaseResponse` types it.
    let config = ocs("/ocs/v1.php/cloud/config").await.unwrap();
    assert_eq!(config.status(), 200);
    let expected = with_every_answer(&[
        ("content-type", "application/xml; charset=utf-8"),
        (
            "content-security-policy",
            "default-src 'none';base-uri 'none';manifest-src 'self';frame-ancestors 'none'",
        ),
        ("cache-control", "no-cache, no-store, must-revalidate"),
    ]);
    assert_headers(&config, &expected, "cloud/config");
    let body = config.text().await.unwrap();
    assert!(body.contains("<website>Nextcloud</website>"), "{body}");
    assert!(body.contains("<version>1.7</version>"), "{body}");

    let json = ocs("/ocs/v2.php/cloud/config?format=json").await.unwrap();
    assert_eq!(header(&json, "content-type"), "application/json; charset=utf-8");
    let body: serde_json::Value = json.json().await.unwrap();
    assert_eq!(body["ocs"]["data"]["website"], "Nextcloud");
    assert_eq!(body["ocs"]["data"]["ssl"], "false");

    // No route: `ocs/v1.php` answers itself, in its older XML, whatever
    // the Accept header asks for.
    let missing = target
        .as_account(&alice, "GET", "/ocs/v1.php/apps/tamebi-contract-none/thing")
        .header("OCS-APIRequest", "true")
        .header("Accept", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 200);
    assert_eq!(header(&missing, "content-type"), "text/xml; charset=UTF-8");
    let body = missing.text().await.unwrap();
    assert!(body.contains("<statuscode>998</statuscode>"), "{body}");
    let missing_v2 = ocs("/ocs/v2.php/apps/tamebi-contract-none/thing?format=json").await.unwrap();
    assert_eq!(missing_v2.status(), 404);
    let body: serde_json::Value = missing_v2.json().await.unwrap();
    assert_eq!(body["ocs"]["meta"]["statuscode"], 404);
    assert_eq!(body["ocs"]["data"], serde_json::Value::Null);
}
