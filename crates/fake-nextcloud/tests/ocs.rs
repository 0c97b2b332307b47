//! OCS over real sockets: the envelope in both versions and formats, the CSRF
//! rule, capabilities as nc-py-api reads them, users, and the shares API —
//! including that deleting a share revokes WebDAV access at once.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::{Running, SMALL, form, start};
use serde_json::{Value, json};

async fn ocs_json(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let body = response.text().await.unwrap();
    (status, serde_json::from_str(&body).unwrap_or_else(|_| panic!("not JSON: {body}")))
}

/// Whether `uid` sees `path` — asked of the storage's single `resolve`,
/// which every protocol (WebDAV included) goes through.
fn sees(running: &Running, uid: &str, path: &str) -> bool {
    let world = running.fake.shared.world();
    let user = world.user(uid).unwrap();
    world.storage.resolve(user.viewer(), path).is_ok()
}

/// The permission bits `uid` holds on `path`.
fn permissions(running: &Running, uid: &str, path: &str) -> u8 {
    let world = running.fake.shared.world();
    let user = world.user(uid).unwrap();
    world.storage.resolve(user.viewer(), path).unwrap().permissions
}

/// An OCS call as `uid`: status and JSON body.
async fn call(running: &Running, method: &str, uid: &str, path: &str) -> (u16, Value) {
    ocs_json(running.ocs(method, uid, path).send().await.unwrap()).await
}

/// An OCS call as `uid` with a form body: status and JSON body.
async fn call_with_form(
    running: &Running,
    method: &str,
    uid: &str,
    path: &str,
    pairs: &[(&str, &str)],
) -> (u16, Value) {
    let request = running
        .ocs(method, uid, path)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form(pairs));
    ocs_json(request.send().await.unwrap()).await
}

#[tokio::test]
async fn capabilities_satisfy_nc_py_api() {
    let running = start(SMALL).await;
    let response = running
        .ocs("GET", "alice", "/ocs/v1.php/cloud/capabilities?format=json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "application/json; charset=utf-8");
    let (status, body) = ocs_json(response).await;
    assert_eq!(status, 200);
    assert_eq!(body["ocs"]["meta"]["status"], "ok");
    assert_eq!(body["ocs"]["meta"]["statuscode"], 100);
    let version = &body["ocs"]["data"]["version"];
    assert_eq!(version["major"], 31);
    assert_eq!(version["minor"], 0);
    assert_eq!(version["micro"], 5);
    assert_eq!(version["string"], "31.0.5");
    assert_eq!(version["extendedSupport"], false);
    let capabilities = &body["ocs"]["data"]["capabilities"];
    assert_eq!(capabilities["core"]["webdav-root"], "remote.php/webdav");
    assert_eq!(capabilities["dav"]["chunking"], "1.0");
    // Public links are served (files/public.rs, ocs/links.rs).
    assert_eq!(capabilities["files_sharing"]["public"]["enabled"], true);
    assert_eq!(capabilities["webhook_listeners"]["enabled"], true);
    // files_trashbin and files_versions are served (files/trashbin.rs, files/versions.rs).
    assert_eq!(capabilities["files"]["undelete"], true);
    assert_eq!(capabilities["files"]["versioning"], true);
    assert!(capabilities["deck"]["version"].is_string());
}

#[tokio::test]
async fn capabilities_are_public_and_need_no_header() {
    let running = start(SMALL).await;
    let response = running
        .http
        .get(running.url("/ocs/v2.php/cloud/capabilities?format=json"))
        .send()
        .await
        .unwrap();
    let (status, body) = ocs_json(response).await;
    assert_eq!(status, 200);
    assert_eq!(body["ocs"]["meta"]["statuscode"], 200);
    assert!(body["ocs"]["meta"].get("totalitems").is_none(), "v2 leaves totalitems out");
    assert!(
        body["ocs"]["data"]["capabilities"].get("deck").is_none(),
        "anonymous callers get the public subset"
    );
}

#[tokio::test]
async fn xml_is_the_default_and_accept_json_switches() {
    let running = start(SMALL).await;
    let response = running.ocs("GET", "alice", "/ocs/v1.php/cloud/user").send().await.unwrap();
    assert_eq!(response.headers()["content-type"], "application/xml; charset=utf-8");
    let body = response.text().await.unwrap();
    assert!(
        body.starts_with("<?xml version=\"1.0\"?>\n<ocs>\n <meta>\n  <status>ok</status>"),
        "{body}"
    );
    assert!(body.contains("<statuscode>100</statuscode>"), "{body}");
    assert!(body.contains("<id>alice</id>"), "{body}");
    assert!(body.contains("<groups>\n   <element>staff</element>\n  </groups>"), "{body}");

    let response = running
        .ocs("GET", "alice", "/ocs/v1.php/cloud/user")
        .header("Accept", "application/json")
        .send()
        .await
        .unwrap();
    let (_, body) = ocs_json(response).await;
    assert_eq!(body["ocs"]["data"]["id"], "alice");
}

#[tokio::test]
async fn current_user_reports_profile_fields() {
    let running = start(SMALL).await;
    let (status, body) = call(&running, "GET", "alice", "/ocs/v2.php/cloud/user?format=json").await;
    assert_eq!(status, 200);
    let data = &body["ocs"]["data"];
    assert_eq!(data["id"], "alice");
    assert_eq!(data["display-name"], "Alice Martin");
    assert_eq!(data["displayname"], "Alice Martin");
    assert_eq!(data["email"], "alice@example.com");
    assert_eq!(data["groups"], json!(["staff"]));
    assert_eq!(data["language"], "en");
    assert!(data["quota"]["used"].as_i64().unwrap() > 0);
}

#[tokio::test]
async fn app_passwords_and_sessions_authenticate_ocs() {
    let running = start(SMALL).await;
    let response = running
        .http
        .get(running.url("/ocs/v2.php/cloud/user?format=json"))
        .basic_auth("alice", Some("alice-app-password"))
        .header("OCS-APIRequest", "true")
        .send()
        .await
        .unwrap();
    assert_eq!(ocs_json(response).await.1["ocs"]["data"]["id"], "alice");

    let cookies = common::cookies(&running.login("bob", "bob-pw", None).await);
    let response = running
        .http
        .get(running.url("/ocs/v2.php/cloud/user?format=json"))
        .header("Cookie", &cookies)
        .header("OCS-APIRequest", "true")
        .send()
        .await
        .unwrap();
    assert_eq!(ocs_json(response).await.1["ocs"]["data"]["id"], "bob");
    // A session without the header and without a request token fails CSRF.
    let response = running
        .http
        .get(running.url("/ocs/v2.php/cloud/user?format=json"))
        .header("Cookie", &cookies)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 412);
}

#[tokio::test]
async fn missing_ocs_header_fails_the_csrf_check() {
    let running = start(SMALL).await;
    let response =
        running.as_user("GET", "alice", "/ocs/v2.php/cloud/user?format=json").send().await.unwrap();
    assert_eq!(response.status(), 412);
    assert_eq!(response.text().await.unwrap(), r#"{"message":"CSRF check failed"}"#);
}

#[tokio::test]
async fn unauthenticated_is_997_with_401_in_both_versions() {
    let running = start(SMALL).await;
    for version in ["v1", "v2"] {
        let response = running
            .http
            .get(running.url(&format!("/ocs/{version}.php/cloud/user?format=json")))
            .basic_auth("alice", Some("wrong"))
            .header("OCS-APIRequest", "true")
            .send()
            .await
            .unwrap();
        let (status, body) = ocs_json(response).await;
        assert_eq!(status, 401, "{version}");
        assert_eq!(body["ocs"]["meta"]["statuscode"], 997, "{version}");
        assert_eq!(body["ocs"]["meta"]["message"], "Current user is not logged in");
    }
}

#[tokio::test]
async fn other_users_are_visible_to_admins_only() {
    let fixture = format!(
        "{SMALL}\n[[users]]\nuid = \"admin\"\npassword = \"admin-pw\"\ngroups = [\"admin\"]\n"
    );
    let running = start(&fixture).await;
    let (status, body) =
        call(&running, "GET", "alice", "/ocs/v2.php/cloud/users/alice?format=json").await;
    assert_eq!((status, body["ocs"]["data"]["id"].clone()), (200, json!("alice")));
    let (status, body) =
        call(&running, "GET", "alice", "/ocs/v2.php/cloud/users/bob?format=json").await;
    assert_eq!(status, 404);
    assert_eq!(body["ocs"]["meta"]["statuscode"], 998);
    let (status, body) =
        call(&running, "GET", "admin", "/ocs/v2.php/cloud/users/bob?format=json").await;
    assert_eq!((status, body["ocs"]["data"]["id"].clone()), (200, json!("bob")));
    let (status, _) =
        call(&running, "GET", "admin", "/ocs/v2.php/cloud/users/nobody?format=json").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn unknown_ocs_routes_are_998() {
    let running = start(SMALL).await;
    let (status, body) =
        call(&running, "GET", "alice", "/ocs/v1.php/apps/nope/thing?format=json").await;
    assert_eq!(status, 200);
    assert_eq!(body["ocs"]["meta"]["statuscode"], 998);
}

// ---- shares -------------------------------------------------------------

const SHARES: &str = "/ocs/v2.php/apps/files_sharing/api/v1/shares";

#[tokio::test]
async fn share_lists_show_outgoing_and_incoming() {
    let running = start(SMALL).await;
    let (_, body) = call(&running, "GET", "alice", &format!("{SHARES}?format=json")).await;
    let shares = body["ocs"]["data"].as_array().unwrap();
    assert_eq!(shares.len(), 1);
    let share = &shares[0];
    assert!(share["id"].is_string(), "ids are strings");
    assert_eq!(share["share_type"], 0);
    assert_eq!(share["uid_owner"], "alice");
    assert_eq!(share["displayname_owner"], "Alice Martin");
    assert_eq!(share["share_with"], "bob");
    assert_eq!(share["share_with_displayname"], "Bob Stone");
    assert_eq!(share["permissions"], 7);
    assert_eq!(share["item_type"], "folder");
    assert_eq!(share["path"], "/Shared");
    assert_eq!(share["file_target"], "/Shared");
    assert_eq!(share["mimetype"], "httpd/unix-directory");
    assert_eq!(share["item_source"], share["file_source"]);
    assert!(share["stime"].is_i64());

    let (_, body) =
        call(&running, "GET", "bob", &format!("{SHARES}?format=json&shared_with_me=true")).await;
    let shares = body["ocs"]["data"].as_array().unwrap();
    assert_eq!(shares.len(), 1);
    assert_eq!(shares[0]["uid_owner"], "alice");
    let (_, body) = call(&running, "GET", "bob", &format!("{SHARES}?format=json")).await;
    assert_eq!(body["ocs"]["data"], json!([]), "bob shared nothing himself");
    let (_, body) =
        call(&running, "GET", "carol", &format!("{SHARES}?format=json&shared_with_me=true")).await;
    assert_eq!(body["ocs"]["data"], json!([]));
}

#[tokio::test]
async fn share_lists_filter_by_path_and_subfiles() {
    let running = start(SMALL).await;
    let (_, body) =
        call(&running, "GET", "alice", &format!("{SHARES}?format=json&path=/Documents")).await;
    assert_eq!(body["ocs"]["data"], json!([]));
    let (_, body) =
        call(&running, "GET", "alice", &format!("{SHARES}?format=json&path=/Shared")).await;
    assert_eq!(body["ocs"]["data"].as_array().unwrap().len(), 1);
    let (_, body) =
        call(&running, "GET", "alice", &format!("{SHARES}?format=json&path=/&subfiles=true")).await;
    assert_eq!(body["ocs"]["data"].as_array().unwrap().len(), 1);
    let (status, body) =
        call(&running, "GET", "alice", &format!("{SHARES}?format=json&path=/Nope")).await;
    assert_eq!(status, 404);
    assert_eq!(body["ocs"]["meta"]["message"], "Wrong path, file/folder does not exist");
    let (status, _) = call(
        &running,
        "GET",
        "alice",
        &format!("{SHARES}?format=json&path=/Documents/notes.md&subfiles=true"),
    )
    .await;
    assert_eq!(status, 400, "subfiles of a file");
}

#[tokio::test]
async fn creating_a_share_grants_webdav_access_and_deleting_revokes_it() {
    let running = start(SMALL).await;
    assert!(!sees(&running, "carol", "notes.md"));

    let form = [
        ("path", "/Documents/notes.md"),
        ("shareType", "0"),
        ("shareWith", "carol"),
        ("permissions", "31"),
    ];
    let (status, body) =
        call_with_form(&running, "POST", "alice", &format!("{SHARES}?format=json"), &form).await;
    assert_eq!(status, 200, "{body}");
    let share = &body["ocs"]["data"];
    assert_eq!(share["item_type"], "file");
    assert_eq!(share["permissions"], 19, "a file share loses create and delete");
    assert_eq!(share["file_target"], "/notes.md");
    assert_eq!(share["share_with_displayname"], "carol");
    let id = share["id"].as_str().unwrap().to_string();
    let share_path = format!("{SHARES}/{id}?format=json");

    assert!(sees(&running, "carol", "notes.md"));

    let (_, body) = call(&running, "GET", "carol", &share_path).await;
    assert_eq!(body["ocs"]["data"][0]["id"], id.as_str(), "GET one answers a one-element list");

    let (status, body) = call(&running, "DELETE", "alice", &share_path).await;
    assert_eq!(status, 200);
    assert_eq!(body["ocs"]["data"], json!([]));
    assert!(!sees(&running, "carol", "notes.md"), "revocation takes effect immediately");
    let (status, _) = call(&running, "GET", "alice", &share_path).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn json_bodies_and_group_shares_work() {
    let running = start(SMALL).await;
    let response = running
        .ocs("POST", "bob", &format!("{SHARES}?format=json"))
        .json(&json!({"path": "Work", "shareType": 1, "shareWith": "staff", "permissions": 1}))
        .send()
        .await
        .unwrap();
    let (status, body) = ocs_json(response).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["ocs"]["data"]["share_type"], 1);
    assert_eq!(body["ocs"]["data"]["share_with_displayname"], "staff");
    assert!(sees(&running, "alice", "Work/todo.md"), "alice is in staff");
    assert!(!sees(&running, "carol", "Work/todo.md"), "carol is not");
}

#[tokio::test]
async fn share_creation_errors_match_nextcloud() {
    let running = start(SMALL).await;
    let path = format!("{SHARES}?format=json");
    // (caller, form, status, message)
    type Case = (&'static str, Vec<(&'static str, &'static str)>, u16, &'static str);
    let cases: Vec<Case> = vec![
        (
            "alice",
            vec![("shareType", "0"), ("shareWith", "bob")],
            404,
            "Please specify a file or folder path",
        ),
        (
            "alice",
            vec![("path", "/Nope"), ("shareType", "0"), ("shareWith", "bob")],
            404,
            "Wrong path, file/folder does not exist",
        ),
        (
            "alice",
            vec![("path", "/Documents"), ("shareType", "0"), ("shareWith", "nobody")],
            404,
            "Please specify a valid account to share with",
        ),
        (
            "alice",
            vec![("path", "/Documents"), ("shareType", "1"), ("shareWith", "nogroup")],
            404,
            "Please specify a valid group",
        ),
        (
            "alice",
            vec![("path", "/Documents/notes.md"), ("shareType", "3"), ("publicUpload", "true")],
            404,
            "Public upload is only possible for publicly shared folders",
        ),
        (
            "alice",
            vec![("path", "/"), ("shareType", "0"), ("shareWith", "bob")],
            403,
            "You cannot share your root folder",
        ),
        ("alice", vec![("path", "/Documents"), ("shareType", "42")], 400, "Unknown share type"),
        (
            "alice",
            vec![("path", "/Documents"), ("shareType", "0"), ("shareWith", "alice")],
            403,
            "Cannot share with yourself",
        ),
        (
            "alice",
            vec![
                ("path", "/Documents"),
                ("shareType", "0"),
                ("shareWith", "bob"),
                ("permissions", "64"),
            ],
            404,
            "Invalid permissions",
        ),
        // bob received "Shared" with 7 (no share bit): no resharing.
        (
            "bob",
            vec![("path", "/Shared"), ("shareType", "0"), ("shareWith", "carol")],
            404,
            "You are not allowed to share Shared",
        ),
    ];
    for (uid, form, status, message) in cases {
        let (got_status, body) = call_with_form(&running, "POST", uid, &path, &form).await;
        assert_eq!(got_status, status, "{form:?}: {body}");
        assert_eq!(body["ocs"]["meta"]["message"], message, "{form:?}");
        assert_eq!(body["ocs"]["meta"]["status"], "failure");
    }
}

#[tokio::test]
async fn v1_share_errors_are_http_200_with_the_code_in_meta() {
    let running = start(SMALL).await;
    let path = "/ocs/v1.php/apps/files_sharing/api/v1/shares?format=json";
    let form = [("path", "/Documents"), ("shareType", "0"), ("shareWith", "nobody")];
    let (status, body) = call_with_form(&running, "POST", "alice", path, &form).await;
    assert_eq!(status, 200);
    assert_eq!(body["ocs"]["meta"]["statuscode"], 404);
}

#[tokio::test]
async fn updating_permissions_takes_effect_and_recipients_cannot() {
    let running = start(SMALL).await;
    let (_, body) = call(&running, "GET", "alice", &format!("{SHARES}?format=json")).await;
    let id = body["ocs"]["data"][0]["id"].as_str().unwrap().to_string();
    let share_path = format!("{SHARES}/{id}?format=json");
    assert_eq!(permissions(&running, "bob", "Shared"), 7);

    let (status, body) =
        call_with_form(&running, "PUT", "alice", &share_path, &[("permissions", "1")]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["ocs"]["data"]["permissions"], 1);
    assert_eq!(permissions(&running, "bob", "Shared"), 1, "bob can no longer write");

    let (status, _) =
        call_with_form(&running, "PUT", "bob", &share_path, &[("permissions", "31")]).await;
    assert_eq!(status, 403, "recipients cannot edit incoming shares");
    let (status, _) = call(&running, "PUT", "alice", &share_path).await;
    assert_eq!(status, 400, "no update parameter");
    let (status, _) =
        call_with_form(&running, "PUT", "carol", &share_path, &[("permissions", "1")]).await;
    assert_eq!(status, 404, "strangers learn nothing");
}

#[tokio::test]
async fn a_recipient_deleting_a_share_leaves_it() {
    let running = start(SMALL).await;
    let (_, body) =
        call(&running, "GET", "bob", &format!("{SHARES}?format=json&shared_with_me=true")).await;
    let id = body["ocs"]["data"][0]["id"].as_str().unwrap().to_string();
    let share_path = format!("{SHARES}/{id}?format=json");
    let (status, _) = call(&running, "DELETE", "carol", &share_path).await;
    assert_eq!(status, 404, "carol has nothing to do with it");
    let (status, _) = call(&running, "DELETE", "bob", &share_path).await;
    assert_eq!(status, 200);
    assert!(!sees(&running, "bob", "Shared/plan.txt"));
    assert!(sees(&running, "alice", "Shared/plan.txt"), "the owner keeps the folder");
}

/// `sharing.force_share_accept` (sharing-v1-part3's "Accept a share" and
/// "Decline a share" in a server that makes shares wait): a new share is
/// listed as pending and not mounted until accepted; declining one ends it.
#[tokio::test]
async fn forced_acceptance_keeps_shares_pending_until_accepted() {
    let fixture = SMALL.replace("[server]\n", "[server]\nforce_share_accept = true\n");
    let running = start(&fixture).await;
    let shares = "/ocs/v2.php/apps/files_sharing/api/v1/shares";
    let (status, created) = share_to_bob(&running, "/Documents/notes.md").await;
    assert_eq!(status, 200, "{created}");
    let id = created["ocs"]["data"]["id"].as_str().unwrap().to_string();
    assert!(!sees(&running, "bob", "notes.md"), "a pending share is not mounted");
    let (_, received) =
        call(&running, "GET", "bob", &format!("{shares}?format=json&shared_with_me=true")).await;
    let received: Vec<&Value> = received["ocs"]["data"].as_array().unwrap().iter().collect();
    assert!(received.iter().all(|share| share["id"] != id.as_str()), "nor listed as received");

    let (status, pending) =
        call(&running, "GET", "bob", &format!("{shares}/pending?format=json")).await;
    assert_eq!(status, 200, "{pending}");
    let listed = &pending["ocs"]["data"];
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["path"], "/notes.md");
    assert_eq!(listed[0]["permissions"], 0);

    let (status, accepted) =
        call(&running, "POST", "bob", &format!("{shares}/pending/{id}?format=json")).await;
    assert_eq!((status, accepted["ocs"]["data"].clone()), (200, json!([])), "{accepted}");
    assert!(sees(&running, "bob", "notes.md"), "an accepted share is mounted");
    let (_, pending) = call(&running, "GET", "bob", &format!("{shares}/pending?format=json")).await;
    assert_eq!(pending["ocs"]["data"], json!([]));

    let (_, second) = share_to_bob(&running, "/Documents").await;
    let second = second["ocs"]["data"]["id"].as_str().unwrap().to_string();
    let (status, declined) =
        call(&running, "DELETE", "bob", &format!("{shares}/{second}?format=json")).await;
    assert_eq!(status, 200, "{declined}");
    let (status, gone) =
        call(&running, "GET", "alice", &format!("{shares}/{second}?format=json")).await;
    assert_eq!(status, 404, "a declined user share ends: {gone}");
    assert!(!sees(&running, "bob", "Documents"));
    let (status, unknown) =
        call(&running, "POST", "carol", &format!("{shares}/pending/{id}?format=json")).await;
    assert_eq!(status, 404, "an outsider cannot accept: {unknown}");
}

/// Alice shares `path` with bob through v2.
/// The notification's accept link on a server that makes shares wait:
/// the confirmation page changes nothing, the POST with the session's
/// request token mounts the share and leads to the file.
#[tokio::test]
async fn the_accept_link_mounts_a_pending_share() {
    let fixture = SMALL.replace("[server]\n", "[server]\nforce_share_accept = true\n");
    let running = start(&fixture).await;
    let (status, created) = share_to_bob(&running, "/Documents/notes.md").await;
    assert_eq!(status, 200, "{created}");
    let id = created["ocs"]["data"]["id"].as_str().unwrap().to_string();
    let url = running.url(&format!("/index.php/apps/files_sharing/accept/ocinternal:{id}"));
    let anonymous = running.http.get(&url).send().await.unwrap();
    let login = anonymous.headers()["location"].to_str().unwrap();
    assert!(login.starts_with("/index.php/login?redirect_url="), "{login}");
    let cookies = common::cookies(&running.login("bob", "bob-pw", None).await);
    let page = running.http.get(&url).header("Cookie", &cookies).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("notes.md"), "the page names the file: {html}");
    assert!(!sees(&running, "bob", "notes.md"), "showing the page accepts nothing");

    let token = running.http.get(running.url("/index.php/csrftoken")).header("Cookie", &cookies);
    let token: Value = token.send().await.unwrap().json().await.unwrap();
    let token = token["token"].as_str().unwrap().to_string();
    let basic = running.as_user("POST", "bob", &url.replace(&running.url(""), "")).send().await;
    assert_eq!(basic.unwrap().status(), 412, "an app route's CSRF check holds for Basic too");
    assert!(!sees(&running, "bob", "notes.md"));
    let accepted = running
        .http
        .post(&url)
        .header("Cookie", &cookies)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form(&[("requesttoken", &token)]))
        .send()
        .await
        .unwrap();
    assert_eq!(accepted.status(), 303);
    assert!(sees(&running, "bob", "notes.md"), "an accepted share is mounted");
    let location = accepted.headers()["location"].to_str().unwrap().to_string();
    let file = running.http.get(&location).header("Cookie", &cookies).send().await.unwrap();
    assert_eq!(file.status(), 303);
    let files_page = file.headers()["location"].to_str().unwrap();
    assert!(files_page.contains("/index.php/apps/files/files/"), "{files_page}");
    assert!(files_page.ends_with("?dir=%2F&openfile=true"), "{files_page}");
}

async fn share_to_bob(running: &Running, path: &str) -> (u16, Value) {
    let pairs = [("path", path), ("shareType", "0"), ("shareWith", "bob")];
    let shares = "/ocs/v2.php/apps/files_sharing/api/v1/shares?format=json";
    call_with_form(running, "POST", "alice", shares, &pairs).await
}

/// Without the switch (Nextcloud's default) a share is accepted at once
/// and nothing is pending.
#[tokio::test]
async fn by_default_shares_are_accepted_at_once() {
    let running = start(SMALL).await;
    let shares = "/ocs/v2.php/apps/files_sharing/api/v1/shares";
    let pairs = [("path", "/Documents/notes.md"), ("shareType", "0"), ("shareWith", "bob")];
    let (status, _) =
        call_with_form(&running, "POST", "alice", &format!("{shares}?format=json"), &pairs).await;
    assert_eq!(status, 200);
    assert!(sees(&running, "bob", "notes.md"));
    let (_, pending) = call(&running, "GET", "bob", &format!("{shares}/pending?format=json")).await;
    assert_eq!(pending["ocs"]["data"], json!([]));
}
