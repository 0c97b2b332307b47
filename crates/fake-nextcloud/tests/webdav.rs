//! WebDAV files over real sockets: each method, its headers and its error
//! cases, answered as Nextcloud's sabre/dav server answers them.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;
mod dav_support;

use common::{Running, SMALL, start};
use dav_support::{
    DavResponse, PROPFIND_ALL_NAMED, basic_auth, by_href, multistatus, propfind_body, raw_request,
};
use reqwest::StatusCode;

const FILES: &str = "/remote.php/dav/files";
/// alice's notes in [`SMALL`].
const NOTES: &str = "Documents/notes.md";

async fn propfind(
    running: &Running,
    uid: &str,
    path: &str,
    depth: Option<&str>,
    body: &str,
) -> reqwest::Response {
    let mut request = files(running, "PROPFIND", uid, path).body(body.to_string());
    if let Some(depth) = depth {
        request = request.header("Depth", depth);
    }
    request.send().await.unwrap()
}

async fn hrefs(running: &Running, uid: &str, path: &str, depth: Option<&str>) -> Vec<String> {
    let response = propfind(running, uid, path, depth, "").await;
    assert_eq!(response.status(), StatusCode::MULTI_STATUS);
    multistatus(&response.text().await.unwrap()).into_iter().map(|response| response.href).collect()
}

/// A request as `uid` to a path in their own files.
fn files(running: &Running, method: &str, uid: &str, path: &str) -> reqwest::RequestBuilder {
    running.as_user(method, uid, &format!("{FILES}/{uid}/{path}"))
}

/// The same, sent with headers and a body.
async fn send_with(
    running: &Running,
    method: &str,
    uid: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> reqwest::Response {
    let mut request = files(running, method, uid, path).body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

/// The same, sent with no body.
async fn send(running: &Running, method: &str, uid: &str, path: &str) -> reqwest::Response {
    files(running, method, uid, path).send().await.unwrap()
}

async fn get_status(running: &Running, uid: &str, path: &str) -> StatusCode {
    send(running, "GET", uid, path).await.status()
}

async fn put(running: &Running, uid: &str, path: &str, body: &str) -> reqwest::Response {
    files(running, "PUT", uid, path).body(body.to_string()).send().await.unwrap()
}

/// The first (for Depth 0: the only) entry of a multistatus answer.
async fn first_entry(response: reqwest::Response) -> DavResponse {
    multistatus(&response.text().await.unwrap()).remove(0)
}

/// PROPFIND with Depth 0 and `body`: the one entry.
async fn propfind_one(running: &Running, uid: &str, path: &str, body: &str) -> DavResponse {
    first_entry(propfind(running, uid, path, Some("0"), body).await).await
}

fn header<'r>(response: &'r reqwest::Response, name: &str) -> &'r str {
    response.headers().get(name).map(|value| value.to_str().unwrap()).unwrap_or("")
}

// ---- PROPFIND ----------------------------------------------------------------

#[tokio::test]
async fn propfind_depth_zero_one_and_infinity() {
    let running = start(SMALL).await;
    assert_eq!(hrefs(&running, "alice", "", Some("0")).await, ["/remote.php/dav/files/alice/"]);
    let depth_one = [
        "/remote.php/dav/files/alice/",
        "/remote.php/dav/files/alice/Documents/",
        "/remote.php/dav/files/alice/Private/",
        "/remote.php/dav/files/alice/Shared/",
    ];
    assert_eq!(hrefs(&running, "alice", "", Some("1")).await, depth_one);
    // No Depth header is Depth 1 in sabre.
    assert_eq!(hrefs(&running, "alice", "", None).await, depth_one);
    let all = hrefs(&running, "alice", "", Some("infinity")).await;
    assert_eq!(all.len(), 7, "{all:?}");
    assert!(all.contains(&"/remote.php/dav/files/alice/Private/secret.txt".to_string()));
    // Depth 1 on a file is the file alone.
    assert_eq!(hrefs(&running, "alice", "Documents/notes.md", Some("1")).await.len(), 1);
}

#[tokio::test]
async fn propfind_reports_nextclouds_properties() {
    let running = start(SMALL).await;
    let response =
        propfind(&running, "alice", "Documents/notes.md", Some("0"), PROPFIND_ALL_NAMED).await;
    assert_eq!(response.status(), StatusCode::MULTI_STATUS);
    assert_eq!(header(&response, "content-type"), "application/xml; charset=utf-8");
    let responses = multistatus(&response.text().await.unwrap());
    let file = &responses[0];
    assert_eq!(file.href, "/remote.php/dav/files/alice/Documents/notes.md");
    let content = "# Notes\n\nBudget: 40 000 EUR\n";
    let fileid: u64 = file.value("{http://owncloud.org/ns}fileid").unwrap().parse().unwrap();
    let expected = [
        ("{DAV:}resourcetype", "".to_string()),
        ("{DAV:}getlastmodified", "Sun, 01 Mar 2026 10:00:00 GMT".to_string()),
        ("{DAV:}getcontentlength", content.len().to_string()),
        ("{DAV:}getcontenttype", "text/markdown".to_string()),
        ("{DAV:}displayname", "notes.md".to_string()),
        ("{DAV:}creationdate", "2026-03-01T10:00:00+00:00".to_string()),
        ("{http://owncloud.org/ns}id", format!("{fileid:08}ocfake0001")),
        ("{http://owncloud.org/ns}size", content.len().to_string()),
        ("{http://owncloud.org/ns}permissions", "RGDNVW".to_string()),
        ("{http://owncloud.org/ns}share-types", "".to_string()),
        ("{http://owncloud.org/ns}favorite", "0".to_string()),
        ("{http://owncloud.org/ns}owner-id", "alice".to_string()),
        ("{http://owncloud.org/ns}owner-display-name", "Alice Martin".to_string()),
        ("{http://nextcloud.org/ns}has-preview", "false".to_string()),
        ("{http://owncloud.org/ns}downloadURL", "".to_string()),
    ];
    for (name, value) in expected {
        assert_eq!(file.value(name), Some(value.as_str()), "{name}");
    }
    let etag = file.value("{DAV:}getetag").unwrap();
    assert!(etag.starts_with('"') && etag.ends_with('"') && etag.len() > 2, "{etag}");
    // What Nextcloud does not have for a plain file is a 404 propstat.
    for missing in [
        "{DAV:}quota-used-bytes",
        "{DAV:}quota-available-bytes",
        "{http://owncloud.org/ns}checksums",
        "{http://nextcloud.org/ns}download-url-expiration",
        "{http://owncloud.org/ns}dDC",
        "{http://nextcloud.org/ns}is-encrypted",
    ] {
        assert_eq!(file.status_of(missing), Some(404), "{missing}");
    }
}

#[tokio::test]
async fn propfind_on_folders_reports_collection_quota_and_shares() {
    let running = start(SMALL).await;
    let response = propfind(&running, "alice", "", Some("1"), PROPFIND_ALL_NAMED).await;
    let responses = by_href(&multistatus(&response.text().await.unwrap()));
    let shared = &responses["/remote.php/dav/files/alice/Shared/"];
    assert_eq!(shared.value("{DAV:}resourcetype"), Some("<collection xmlns=\"DAV:\"/>"));
    assert_eq!(
        shared.value("{DAV:}quota-available-bytes"),
        Some("-3"),
        "no quota = SPACE_UNLIMITED"
    );
    assert_eq!(shared.value("{DAV:}quota-used-bytes"), Some("10"));
    assert_eq!(shared.value("{http://owncloud.org/ns}size"), Some("10"));
    assert_eq!(shared.value("{http://owncloud.org/ns}permissions"), Some("RGDNVCK"));
    assert_eq!(
        shared.value("{http://owncloud.org/ns}share-types"),
        Some("<share-type xmlns=\"http://owncloud.org/ns\">0</share-type>")
    );
    assert_eq!(shared.status_of("{DAV:}getcontentlength"), Some(404));
    assert_eq!(shared.status_of("{DAV:}getcontenttype"), Some(404));
    let root = &responses["/remote.php/dav/files/alice/"];
    assert_eq!(root.value("{http://owncloud.org/ns}size"), Some("49"));
}

#[tokio::test]
async fn propfind_allprop_and_propname() {
    let running = start(SMALL).await;
    for body in ["", r#"<d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>"#] {
        let response = propfind(&running, "alice", "Documents/notes.md", Some("0"), body).await;
        let file = first_entry(response).await;
        let names: Vec<&str> = file.properties.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "{DAV:}getcontentlength",
                "{DAV:}getcontenttype",
                "{DAV:}getetag",
                "{DAV:}getlastmodified",
                "{DAV:}resourcetype"
            ],
            "allprop is sabre's core set, nothing missing reported ({body:?})"
        );
    }
    let include = r#"<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:allprop/><d:include><oc:fileid/><oc:checksums/></d:include></d:propfind>"#;
    let file = propfind_one(&running, "alice", "Documents/notes.md", include).await;
    assert!(file.value("{http://owncloud.org/ns}fileid").is_some());
    assert_eq!(file.status_of("{http://owncloud.org/ns}checksums"), Some(404));

    let propname = r#"<d:propfind xmlns:d="DAV:"><d:propname/></d:propfind>"#;
    let folder = propfind_one(&running, "alice", "Documents", propname).await;
    assert!(folder.properties.contains_key("{DAV:}quota-available-bytes"));
    assert!(folder.properties.values().all(|(status, value)| *status == 200 && value.is_empty()));
}

#[tokio::test]
async fn propfind_with_a_bad_body_is_400() {
    let running = start(SMALL).await;
    for body in [
        "<d:propfind xmlns:d=\"DAV:\"><d:prop>",
        "<propfind xmlns=\"DAV:\"><prop><foo xmlns:bar=\"\"/><bar:x/></prop></propfind>",
        "<d:propertyupdate xmlns:d=\"DAV:\"/>",
        "not xml",
    ] {
        let response = propfind(&running, "alice", "", Some("0"), body).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        assert!(response.text().await.unwrap().contains("Sabre\\DAV\\Exception\\BadRequest"));
    }
}

#[tokio::test]
async fn prefer_minimal_drops_the_404_propstat() {
    let running = start(SMALL).await;
    let response = files(&running, "PROPFIND", "alice", "Documents/notes.md")
        .header("Depth", "0")
        .header("Prefer", "return=minimal")
        .body(propfind_body(&["oc:fileid", "x:nothing"]))
        .send()
        .await
        .unwrap();
    let file = first_entry(response).await;
    assert_eq!(file.properties.len(), 1);
    assert!(file.value("{http://owncloud.org/ns}fileid").is_some());
}

#[tokio::test]
async fn hrefs_are_percent_encoded_like_sabre() {
    let running = start(SMALL).await;
    assert_eq!(
        put(&running, "alice", "Documents/r%C3%A9union%20(1)%2Bplan.md", "x").await.status(),
        StatusCode::CREATED
    );
    let all = hrefs(&running, "alice", "Documents", Some("1")).await;
    assert!(
        all.contains(
            &"/remote.php/dav/files/alice/Documents/r%c3%a9union%20(1)%2bplan.md".to_string()
        ),
        "{all:?}"
    );
    assert_eq!(
        get_status(&running, "alice", "Documents/r%C3%A9union%20(1)+plan.md").await,
        StatusCode::OK
    );
}

#[tokio::test]
async fn the_legacy_webdav_endpoint_is_the_same_tree() {
    let running = start(SMALL).await;
    let response = running
        .as_user("PROPFIND", "alice", "/remote.php/webdav/Documents")
        .header("Depth", "1")
        .send()
        .await
        .unwrap();
    let all: Vec<String> =
        multistatus(&response.text().await.unwrap()).into_iter().map(|r| r.href).collect();
    assert_eq!(all, ["/remote.php/webdav/Documents/", "/remote.php/webdav/Documents/notes.md"]);
}

// ---- who sees what -------------------------------------------------------------

#[tokio::test]
async fn another_users_tree_is_404_for_every_method() {
    let running = start(SMALL).await;
    for (method, path) in [
        ("PROPFIND", "/remote.php/dav/files/bob/"),
        ("PROPFIND", "/remote.php/dav/files/bob/Work/todo.md"),
        ("GET", "/remote.php/dav/files/bob/Work/todo.md"),
        ("HEAD", "/remote.php/dav/files/bob/Work/todo.md"),
        ("PUT", "/remote.php/dav/files/bob/Work/todo.md"),
        ("DELETE", "/remote.php/dav/files/bob/Work/todo.md"),
        ("MKCOL", "/remote.php/dav/files/bob/New"),
        ("PROPPATCH", "/remote.php/dav/files/bob/Work"),
        ("OPTIONS", "/remote.php/dav/files/bob/"),
        ("GET", "/remote.php/dav/files/nobody/x"),
    ] {
        let response = running.as_user(method, "alice", path).body("x").send().await.unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{method} {path}");
    }
    // Nothing changed in bob's tree.
    assert_eq!(get_status(&running, "bob", "Work/todo.md").await, StatusCode::OK);
    // alice's private file does not exist for bob under any name.
    assert_eq!(get_status(&running, "bob", "Private/secret.txt").await, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn traversal_and_encoded_slashes_are_400() {
    let running = start(SMALL).await;
    let auth = basic_auth("alice");
    for path in [
        "/remote.php/dav/files/alice/../bob/Work/todo.md",
        "/remote.php/dav/files/alice/%2e%2e/bob/Work/todo.md",
        "/remote.php/dav/files/alice/Documents%2F..%2F..%2Fbob",
        "/remote.php/dav/files/alice/a%5Cb",
    ] {
        let (status, body) = raw_request(
            running.fake.base_url(),
            &format!("GET {path}"),
            &[("Authorization", &auth)],
            "",
        )
        .await;
        assert_eq!(status, 400, "{path}");
        assert!(body.contains("Sabre\\DAV\\Exception\\BadRequest"), "{body}");
    }
}

#[tokio::test]
async fn a_recipient_sees_and_writes_through_the_share() {
    let running = start(SMALL).await;
    let response = propfind(&running, "bob", "", Some("1"), PROPFIND_ALL_NAMED).await;
    let responses = by_href(&multistatus(&response.text().await.unwrap()));
    let shared = &responses["/remote.php/dav/files/bob/Shared/"];
    assert_eq!(shared.value("{http://owncloud.org/ns}owner-id"), Some("alice"));
    assert_eq!(shared.value("{http://owncloud.org/ns}permissions"), Some("SGDNVCK"));
    assert_eq!(shared.value("{http://owncloud.org/ns}share-types"), Some(""));
    // Bob writes into the share; alice sees the file in her tree.
    assert_eq!(
        put(&running, "bob", "Shared/from-bob.txt", "hello").await.status(),
        StatusCode::CREATED
    );
    let alice_copy = send(&running, "GET", "alice", "Shared/from-bob.txt").await;
    assert_eq!(alice_copy.text().await.unwrap(), "hello");
    // Read + update + create has no delete: bob cannot delete inside.
    let delete = send(&running, "DELETE", "bob", "Shared/plan.txt").await;
    assert_eq!(delete.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn unauthenticated_requests_get_401() {
    let running = start(SMALL).await;
    let response = running
        .http
        .get(running.url(&format!("{FILES}/alice/Documents/notes.md")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(header(&response, "www-authenticate").starts_with("Basic"));
}

// ---- PROPPATCH --------------------------------------------------------------------

async fn proppatch(running: &Running, uid: &str, path: &str, body: &str) -> reqwest::Response {
    files(running, "PROPPATCH", uid, path).body(body.to_string()).send().await.unwrap()
}

#[tokio::test]
async fn proppatch_sets_and_removes_dead_properties() {
    let running = start(SMALL).await;
    let set = r#"<d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:example:test">
        <d:set><d:prop><x:color>blue &amp; green</x:color><x:tree><x:leaf a="1">v</x:leaf></x:tree></d:prop></d:set>
        <d:set><d:prop><nonamespace xmlns="">plain</nonamespace></d:prop></d:set>
    </d:propertyupdate>"#;
    let response = proppatch(&running, "alice", "Documents/notes.md", set).await;
    assert_eq!(response.status(), StatusCode::MULTI_STATUS);
    let patched = first_entry(response).await;
    assert_eq!(patched.href, "/remote.php/dav/files/alice/Documents/notes.md");
    assert!(patched.properties.values().all(|(status, _)| *status == 200), "{patched:?}");

    let body = r#"<d:propfind xmlns:d="DAV:" xmlns:x="urn:example:test"><d:prop><x:color/><x:tree/><nonamespace xmlns=""/></d:prop></d:propfind>"#;
    let file = propfind_one(&running, "alice", "Documents/notes.md", body).await;
    assert_eq!(file.value("{urn:example:test}color"), Some("blue & green"));
    assert_eq!(
        file.value("{urn:example:test}tree"),
        Some(r#"<leaf xmlns="urn:example:test" a="1">v</leaf>"#)
    );
    assert_eq!(file.value("{}nonamespace"), Some("plain"));

    // Remove then set in one request: the last instruction wins.
    let again = r#"<d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:example:test">
        <d:remove><d:prop><x:color/></d:prop></d:remove>
        <d:set><d:prop><x:tree>flat</x:tree></d:prop></d:set>
        <d:remove><d:prop><x:tree/></d:prop></d:remove>
        <d:set><d:prop><x:color>red</x:color></d:prop></d:set>
    </d:propertyupdate>"#;
    assert_eq!(
        proppatch(&running, "alice", "Documents/notes.md", again).await.status(),
        StatusCode::MULTI_STATUS
    );
    let file = propfind_one(&running, "alice", "Documents/notes.md", body).await;
    assert_eq!(file.value("{urn:example:test}color"), Some("red"));
    assert_eq!(file.status_of("{urn:example:test}tree"), Some(404));
}

#[tokio::test]
async fn proppatch_of_a_protected_property_fails_the_whole_request() {
    let running = start(SMALL).await;
    let body = r#"<d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:x="urn:example:test">
        <d:set><d:prop><x:color>blue</x:color><oc:fileid>1</oc:fileid><d:getcontentlength>3</d:getcontentlength></d:prop></d:set>
    </d:propertyupdate>"#;
    let response = proppatch(&running, "alice", "Documents/notes.md", body).await;
    assert_eq!(response.status(), StatusCode::MULTI_STATUS);
    let patched = first_entry(response).await;
    assert_eq!(patched.status_of("{urn:example:test}color"), Some(424));
    assert_eq!(patched.status_of("{http://owncloud.org/ns}fileid"), Some(403));
    assert_eq!(patched.status_of("{DAV:}getcontentlength"), Some(403));
    let file =
        propfind_one(&running, "alice", "Documents/notes.md", &propfind_body(&["x:color"])).await;
    assert_eq!(file.status_of("{urn:example:test}color"), Some(404), "nothing was applied");
}

#[tokio::test]
async fn proppatch_favorite_etag_and_lastmodified_like_nextcloud() {
    let running = start(SMALL).await;
    let body = r#"<d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">
        <d:set><d:prop><oc:favorite>1</oc:favorite><d:getetag>"custom-etag"</d:getetag><d:lastmodified>1700000000</d:lastmodified></d:prop></d:set>
    </d:propertyupdate>"#;
    let patched = first_entry(proppatch(&running, "alice", "Documents/notes.md", body).await).await;
    assert!(patched.properties.values().all(|(status, _)| *status == 200), "{patched:?}");
    let names = ["oc:favorite", "d:getetag", "d:getlastmodified"];
    let alice = propfind_one(&running, "alice", "Documents/notes.md", &propfind_body(&names)).await;
    assert_eq!(alice.value("{http://owncloud.org/ns}favorite"), Some("1"));
    assert_eq!(alice.value("{DAV:}getetag"), Some("\"custom-etag\""));
    assert_eq!(alice.value("{DAV:}getlastmodified"), Some("Tue, 14 Nov 2023 22:13:20 GMT"));
    // displayname cannot be changed; the favorite can be unset (204).
    let body = r#"<d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:set><d:prop><d:displayname>x</d:displayname></d:prop></d:set></d:propertyupdate>"#;
    let refused = first_entry(proppatch(&running, "alice", "Documents/notes.md", body).await).await;
    assert_eq!(refused.status_of("{DAV:}displayname"), Some(403));
    let body = r#"<d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:remove><d:prop><oc:favorite/></d:prop></d:remove></d:propertyupdate>"#;
    let removed = first_entry(proppatch(&running, "alice", "Documents/notes.md", body).await).await;
    assert_eq!(removed.status_of("{http://owncloud.org/ns}favorite"), Some(204));
}

#[tokio::test]
async fn favorites_are_per_user() {
    let running = start(SMALL).await;
    let body = r#"<d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:set><d:prop><oc:favorite>1</oc:favorite></d:prop></d:set></d:propertyupdate>"#;
    assert_eq!(
        proppatch(&running, "bob", "Shared/plan.txt", body).await.status(),
        StatusCode::MULTI_STATUS
    );
    let favorite = |uid: &'static str| {
        let running = &running;
        async move {
            let text = propfind(
                running,
                uid,
                "Shared/plan.txt",
                Some("0"),
                &propfind_body(&["oc:favorite"]),
            )
            .await
            .text()
            .await
            .unwrap();
            multistatus(&text)
                .remove(0)
                .value("{http://owncloud.org/ns}favorite")
                .unwrap()
                .to_string()
        }
    };
    assert_eq!(favorite("bob").await, "1");
    assert_eq!(favorite("alice").await, "0");
}

// ---- GET and HEAD -----------------------------------------------------------------

#[tokio::test]
async fn get_sends_content_and_nextclouds_headers() {
    let running = start(SMALL).await;
    let response = send(&running, "GET", "alice", "Documents/notes.md").await;
    assert_eq!(response.status(), StatusCode::OK);
    let etag = header(&response, "etag").to_string();
    assert!(etag.starts_with('"'));
    assert_eq!(header(&response, "oc-etag"), etag);
    assert_eq!(header(&response, "content-type"), "text/markdown");
    assert_eq!(header(&response, "content-length"), "28");
    assert_eq!(header(&response, "last-modified"), "Sun, 01 Mar 2026 10:00:00 GMT");
    assert_eq!(
        header(&response, "content-disposition"),
        "attachment; filename*=UTF-8''notes.md; filename=\"notes.md\""
    );
    assert_eq!(response.text().await.unwrap(), "# Notes\n\nBudget: 40 000 EUR\n");

    let head = send(&running, "HEAD", "alice", "Documents/notes.md").await;
    assert_eq!(head.status(), StatusCode::OK);
    assert_eq!(header(&head, "content-length"), "28");
    assert_eq!(header(&head, "etag"), etag);
    assert!(head.bytes().await.unwrap().is_empty());

    // A folder answers with DummyGetResponsePlugin's text.
    let folder = send(&running, "GET", "alice", "Documents/").await;
    assert_eq!(folder.status(), StatusCode::OK);
    assert!(folder.text().await.unwrap().starts_with("This is the WebDAV interface."));
}

#[tokio::test]
async fn get_with_ranges() {
    let running = start(SMALL).await;
    // "# Notes\n\nBudget: 40 000 EUR\n" is 28 bytes.
    let cases = [
        ("bytes=0-6", 206, Some("bytes 0-6/28"), "# Notes"),
        ("bytes=9-", 206, Some("bytes 9-27/28"), "Budget: 40 000 EUR\n"),
        ("bytes=-4", 206, Some("bytes 24-27/28"), "EUR\n"),
        ("bytes=20-100", 206, Some("bytes 20-27/28"), "000 EUR\n"),
        ("bytes=0-0", 206, Some("bytes 0-0/28"), "#"),
        ("bytes=0-1,4-5", 200, None, "# Notes\n\nBudget: 40 000 EUR\n"),
        ("items=0-1", 200, None, "# Notes\n\nBudget: 40 000 EUR\n"),
    ];
    for (range, status, content_range, body) in cases {
        let response = files(&running, "GET", "alice", "Documents/notes.md")
            .header("Range", range)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), status, "{range}");
        assert_eq!(
            response.headers().get("content-range").map(|v| v.to_str().unwrap()),
            content_range,
            "{range}"
        );
        assert_eq!(response.text().await.unwrap(), body, "{range}");
    }
    for range in ["bytes=28-", "bytes=5-2"] {
        let response = files(&running, "GET", "alice", "Documents/notes.md")
            .header("Range", range)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::RANGE_NOT_SATISFIABLE, "{range}");
    }
    // If-Range with a stale etag sends the whole file.
    let response = files(&running, "GET", "alice", "Documents/notes.md")
        .header("Range", "bytes=0-1")
        .header("If-Range", "\"stale\"")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn conditional_get_and_put() {
    let running = start(SMALL).await;
    let etag = header(&send(&running, "HEAD", "alice", NOTES).await, "etag").to_string();
    let not_modified =
        send_with(&running, "GET", "alice", NOTES, &[("If-None-Match", etag.as_str())], "").await;
    assert_eq!(not_modified.status(), StatusCode::NOT_MODIFIED);
    let changed =
        send_with(&running, "GET", "alice", NOTES, &[("If-None-Match", "\"other\"")], "").await;
    assert_eq!(changed.status(), StatusCode::OK);
    let since = send_with(
        &running,
        "GET",
        "alice",
        NOTES,
        &[("If-Modified-Since", "Sun, 01 Mar 2026 10:00:00 GMT")],
        "",
    )
    .await;
    assert_eq!(since.status(), StatusCode::NOT_MODIFIED);

    let wrong = send_with(&running, "PUT", "alice", NOTES, &[("If-Match", "\"other\"")], "x").await;
    assert_eq!(wrong.status(), StatusCode::PRECONDITION_FAILED);
    let exists = send_with(&running, "PUT", "alice", NOTES, &[("If-None-Match", "*")], "x").await;
    assert_eq!(exists.status(), StatusCode::PRECONDITION_FAILED);
    let missing =
        send_with(&running, "PUT", "alice", "Documents/new.md", &[("If-Match", "*")], "x").await;
    assert_eq!(missing.status(), StatusCode::PRECONDITION_FAILED);
    let right =
        send_with(&running, "PUT", "alice", NOTES, &[("If-Match", etag.as_str())], "x").await;
    assert_eq!(right.status(), StatusCode::NO_CONTENT);
    assert_ne!(header(&right, "etag"), etag, "a write changes the etag");
    let delete =
        send_with(&running, "DELETE", "alice", NOTES, &[("If-Match", etag.as_str())], "").await;
    assert_eq!(delete.status(), StatusCode::PRECONDITION_FAILED, "the old etag no longer matches");
}

// ---- PUT ----------------------------------------------------------------------------

#[tokio::test]
async fn put_creates_then_overwrites_with_nextcloud_headers() {
    let running = start(SMALL).await;
    let created = put(&running, "alice", "Documents/new.txt", "first").await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let fileid = header(&created, "oc-fileid").to_string();
    assert!(fileid.ends_with("ocfake0001") && fileid.len() == 18, "{fileid}");
    assert!(header(&created, "etag").starts_with('"'));
    assert_eq!(header(&created, "oc-etag"), header(&created, "etag"));

    let overwritten = put(&running, "alice", "Documents/new.txt", "second").await;
    assert_eq!(overwritten.status(), StatusCode::NO_CONTENT);
    assert_eq!(header(&overwritten, "oc-fileid"), fileid, "same file, same id");
    let response = send(&running, "GET", "alice", "Documents/new.txt").await;
    assert_eq!(header(&response, "content-type"), "text/plain");
    assert_eq!(response.text().await.unwrap(), "second");
}

#[tokio::test]
async fn put_errors() {
    let running = start(SMALL).await;
    let no_headers: &[(&str, &str)] = &[];
    let cases = [
        ("Missing/new.txt", no_headers, "x", StatusCode::CONFLICT),
        ("Documents/notes.md/child.txt", no_headers, "x", StatusCode::CONFLICT),
        ("Documents", no_headers, "x", StatusCode::CONFLICT),
        ("Documents/notes.md", &[("Content-Range", "bytes 0-1/2")], "xx", StatusCode::BAD_REQUEST),
    ];
    for (path, headers, body, expected) in cases {
        let answer = send_with(&running, "PUT", "alice", path, headers, body).await;
        assert_eq!(answer.status(), expected, "PUT {path} {headers:?}");
    }
}

#[tokio::test]
async fn put_with_x_oc_mtime_sets_the_modification_time() {
    let running = start(SMALL).await;
    let response = send_with(
        &running,
        "PUT",
        "alice",
        "Documents/dated.txt",
        &[("X-OC-Mtime", "1700000000")],
        "x",
    )
    .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    assert_eq!(header(&response, "x-oc-mtime"), "accepted");
    let file = propfind_one(
        &running,
        "alice",
        "Documents/dated.txt",
        &propfind_body(&["d:getlastmodified"]),
    )
    .await;
    assert_eq!(file.value("{DAV:}getlastmodified"), Some("Tue, 14 Nov 2023 22:13:20 GMT"));
    let bad = send_with(
        &running,
        "PUT",
        "alice",
        "Documents/dated.txt",
        &[("X-OC-Mtime", "yesterday")],
        "x",
    )
    .await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_read_only_share_refuses_writes_with_403() {
    let fixture = format!(
        "{SMALL}\n[[shares]]\nowner = \"bob\"\npath = \"Work\"\nshare_with = \"carol\"\npermissions = 1\n"
    );
    let running = start(&fixture).await;
    assert_eq!(get_status(&running, "carol", "Work/todo.md").await, StatusCode::OK);
    assert_eq!(put(&running, "carol", "Work/todo.md", "x").await.status(), StatusCode::FORBIDDEN);
    assert_eq!(put(&running, "carol", "Work/new.md", "x").await.status(), StatusCode::FORBIDDEN);
    let mkcol = send(&running, "MKCOL", "carol", "Work/sub").await;
    assert_eq!(mkcol.status(), StatusCode::FORBIDDEN);
    let body = r#"<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:permissions/></d:prop></d:propfind>"#;
    let file = propfind_one(&running, "carol", "Work/todo.md", body).await;
    assert_eq!(file.value("{http://owncloud.org/ns}permissions"), Some("SG"));
}

// ---- MKCOL and DELETE --------------------------------------------------------------

#[tokio::test]
async fn mkcol_and_delete() {
    let running = start(SMALL).await;
    let mkcol = |path: &str| files(&running, "MKCOL", "alice", path);
    let created = mkcol("New").send().await.unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    assert!(header(&created, "oc-fileid").ends_with("ocfake0001"));
    assert_eq!(mkcol("New").send().await.unwrap().status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(
        mkcol("Documents/notes.md").send().await.unwrap().status(),
        StatusCode::METHOD_NOT_ALLOWED
    );
    assert_eq!(mkcol("Missing/New").send().await.unwrap().status(), StatusCode::CONFLICT);
    let with_body =
        mkcol("Other").header("Content-Type", "text/plain").body("junk").send().await.unwrap();
    assert_eq!(with_body.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let extended = mkcol("Extended")
        .header("Content-Type", "application/xml")
        .body(r#"<d:mkcol xmlns:d="DAV:"><d:set><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop></d:set></d:mkcol>"#)
        .send()
        .await
        .unwrap();
    assert_eq!(extended.status(), StatusCode::CREATED);

    let delete = |path: &str| files(&running, "DELETE", "alice", path);
    assert_eq!(delete("New").send().await.unwrap().status(), StatusCode::NO_CONTENT);
    assert_eq!(delete("New").send().await.unwrap().status(), StatusCode::NOT_FOUND);
    assert_eq!(delete("Shared").send().await.unwrap().status(), StatusCode::NO_CONTENT);
    assert_eq!(get_status(&running, "alice", "Shared/plan.txt").await, StatusCode::NOT_FOUND);
    assert_eq!(
        get_status(&running, "bob", "Shared/plan.txt").await,
        StatusCode::NOT_FOUND,
        "the share went with it"
    );
    assert_eq!(delete("").send().await.unwrap().status(), StatusCode::FORBIDDEN);
}

// ---- MOVE and COPY ------------------------------------------------------------------

async fn move_or_copy(
    running: &Running,
    method: &str,
    from: &str,
    to: &str,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = files(running, method, "alice", from)
        .header("Destination", running.url(&format!("{FILES}/alice/{to}")));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn move_keeps_the_file_id_and_reports_the_etag() {
    let running = start(SMALL).await;
    let before =
        header(&put(&running, "alice", "Documents/a.txt", "A").await, "oc-fileid").to_string();
    let moved = move_or_copy(&running, "MOVE", "Documents/a.txt", "Private/b.md", &[]).await;
    assert_eq!(moved.status(), StatusCode::CREATED);
    assert_eq!(header(&moved, "oc-fileid"), before);
    assert!(header(&moved, "etag").starts_with('"'));
    assert_eq!(get_status(&running, "alice", "Documents/a.txt").await, StatusCode::NOT_FOUND);
    let response = send(&running, "GET", "alice", "Private/b.md").await;
    assert_eq!(header(&response, "content-type"), "text/markdown", "the type follows the new name");
    assert_eq!(response.text().await.unwrap(), "A");
}

/// Method, source, destination, extra headers, expected status.
type CopyMoveCase =
    (&'static str, &'static str, &'static str, &'static [(&'static str, &'static str)], StatusCode);

#[tokio::test]
async fn move_and_copy_follow_sabres_checks() {
    let running = start(SMALL).await;
    put(&running, "alice", "Documents/a.txt", "A").await;
    let cases: [CopyMoveCase; 7] = [
        (
            "COPY",
            "Documents/a.txt",
            "Documents/notes.md",
            &[("Overwrite", "F")],
            StatusCode::PRECONDITION_FAILED,
        ),
        ("MOVE", "Documents/a.txt", "Missing/a.txt", &[], StatusCode::CONFLICT),
        (
            "MOVE",
            "Documents/a.txt",
            "Documents/notes.md/a.txt",
            &[],
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ),
        ("MOVE", "Documents/a.txt", "Documents/a.txt", &[], StatusCode::FORBIDDEN),
        ("MOVE", "Documents", "Documents/Sub", &[], StatusCode::CONFLICT),
        ("MOVE", "Documents/missing.txt", "Documents/b.txt", &[], StatusCode::NOT_FOUND),
        (
            "COPY",
            "Documents/a.txt",
            "Documents/b.txt",
            &[("Overwrite", "maybe")],
            StatusCode::BAD_REQUEST,
        ),
    ];
    for (method, from, to, headers, status) in cases {
        assert_eq!(
            move_or_copy(&running, method, from, to, headers).await.status(),
            status,
            "{method} {from} -> {to}"
        );
    }
    let copied = move_or_copy(
        &running,
        "COPY",
        "Documents/a.txt",
        "Documents/notes.md",
        &[("Overwrite", "T")],
    )
    .await;
    assert_eq!(copied.status(), StatusCode::NO_CONTENT);
    let response = send(&running, "GET", "alice", "Documents/notes.md").await;
    assert_eq!(response.text().await.unwrap(), "A");
    let no_destination = send(&running, "MOVE", "alice", "Documents/a.txt").await;
    assert_eq!(no_destination.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn destinations_outside_ones_own_files_are_refused() {
    let running = start(SMALL).await;
    for destination in [
        "/remote.php/dav/files/bob/Work/stolen.md".to_string(),
        "/remote.php/dav/calendars/alice/x".to_string(),
        "/index.php/x".to_string(),
        "http://elsewhere.example/remote.php/dav/files/bob/x".to_string(),
    ] {
        let response = files(&running, "COPY", "alice", "Documents/notes.md")
            .header("Destination", &destination)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{destination}");
    }
    assert_eq!(get_status(&running, "bob", "Work/stolen.md").await, StatusCode::NOT_FOUND);
    // sabre keeps only the path of an absolute URL, whatever its host.
    let response = files(&running, "COPY", "alice", "Documents/notes.md")
        .header("Destination", "https://another.host/remote.php/dav/files/alice/Documents/copy.md")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let traversal = files(&running, "COPY", "alice", "Documents/notes.md")
        .header("Destination", "/remote.php/dav/files/alice/%2e%2e/bob/Work/x.md")
        .send()
        .await
        .unwrap();
    assert_eq!(traversal.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn copy_depth_zero_copies_the_folder_alone() {
    let running = start(SMALL).await;
    let shallow = move_or_copy(&running, "COPY", "Shared", "Shallow", &[("Depth", "0")]).await;
    assert_eq!(shallow.status(), StatusCode::CREATED);
    assert_eq!(
        hrefs(&running, "alice", "Shallow", Some("1")).await,
        ["/remote.php/dav/files/alice/Shallow/"]
    );
    let deep = move_or_copy(&running, "COPY", "Shared", "Deep", &[]).await;
    assert_eq!(deep.status(), StatusCode::CREATED);
    assert_eq!(get_status(&running, "alice", "Deep/plan.txt").await, StatusCode::OK);
    assert_ne!(header(&deep, "oc-fileid"), header(&shallow, "oc-fileid"));
}

// ---- OPTIONS and the rest -------------------------------------------------------------

#[tokio::test]
async fn options_advertises_dav_like_nextcloud() {
    let running = start(SMALL).await;
    let response = send(&running, "OPTIONS", "alice", "Documents").await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(header(&response, "dav").starts_with("1, 3, extended-mkcol"));
    assert_eq!(header(&response, "ms-author-via"), "DAV");
    let allow = header(&response, "allow");
    assert!(
        allow.contains("PROPFIND") && allow.contains("MOVE") && !allow.contains("MKCOL"),
        "{allow}"
    );
    let missing = send(&running, "OPTIONS", "alice", "Nothing").await;
    assert!(header(&missing, "allow").contains("MKCOL"));
}

#[tokio::test]
async fn unknown_methods_are_501() {
    let running = start(SMALL).await;
    for method in ["LOCK", "UNLOCK", "POST", "PATCH"] {
        let response = running
            .as_user(method, "alice", &format!("{FILES}/alice/Documents/notes.md"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::NOT_IMPLEMENTED, "{method}");
    }
}

#[tokio::test]
async fn bob_cannot_reach_alices_private_file_through_any_method() {
    let running = start(SMALL).await;
    // Bob tries to pull alice's private file into the share he writes to.
    let response = files(&running, "COPY", "bob", "Private/secret.txt")
        .header("Destination", running.url(&format!("{FILES}/bob/Shared/leak.txt")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(get_status(&running, "alice", "Shared/leak.txt").await, StatusCode::NOT_FOUND);
}
