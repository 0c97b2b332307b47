//! OCS: the envelope (`ocs.meta` + `ocs.data`), v1 versus v2 status codes
//! (v1: HTTP 200 and `statuscode` 100 on success, failures inside the
//! envelope with HTTP 200 except 997 → 401; v2: `statuscode` = the HTTP
//! status), the current user, capabilities as nc-py-api reads them
//! (`../shared/PEERS.md`), and files_sharing's shares API.

use super::shares::{delete_share, id_of, ids, list_shares, share_with};
use nextcloud_contract::{Account, Target, ocs_json, require_app};
use serde_json::Value;

fn meta(value: &Value) -> &Value {
    &value["ocs"]["meta"]
}

#[tokio::test]
async fn the_current_user_in_v1_and_v2_envelopes() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let (status, v1) = target.ocs_call(&alice, "GET", "/ocs/v1.php/cloud/user?format=json").await;
    assert_eq!(status, 200);
    assert_eq!(meta(&v1)["status"], "ok");
    assert_eq!(meta(&v1)["statuscode"], 100, "v1 success is statuscode 100");
    assert!(meta(&v1)["message"].is_string() || meta(&v1)["message"].is_null());
    assert_eq!(v1["ocs"]["data"]["id"].as_str(), Some(alice.uid.as_str()));
    // V1Response's meta carries the paging fields; V2Response's does not.
    for field in ["totalitems", "itemsperpage"] {
        assert!(meta(&v1).get(field).is_some(), "v1 meta has {field}: {}", meta(&v1));
    }

    let (status, v2) = target.ocs_call(&alice, "GET", "/ocs/v2.php/cloud/user?format=json").await;
    assert_eq!(status, 200);
    assert_eq!(meta(&v2)["status"], "ok");
    assert_eq!(meta(&v2)["statuscode"], 200, "v2 success is statuscode 200");
    assert!(meta(&v2).get("totalitems").is_none(), "v2 meta has no paging fields");
    let data = &v2["ocs"]["data"];
    assert_eq!(data["id"].as_str(), Some(alice.uid.as_str()));
    assert!(
        data["display-name"].is_string() || data["displayname"].is_string(),
        "a display name: {data}"
    );
}

#[tokio::test]
async fn failures_are_in_the_envelope_with_v1_and_v2_status_codes() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let path = "apps/files_sharing/api/v1/shares/987654321";
    let (status, v2) =
        target.ocs_call(&alice, "GET", &format!("/ocs/v2.php/{path}?format=json")).await;
    assert_eq!(status, 404, "v2: the HTTP status is the OCS status");
    assert_eq!(meta(&v2)["status"], "failure");
    assert_eq!(meta(&v2)["statuscode"], 404);

    let (status, v1) =
        target.ocs_call(&alice, "GET", &format!("/ocs/v1.php/{path}?format=json")).await;
    assert_eq!(status, 200, "v1: failures travel with HTTP 200");
    assert_eq!(meta(&v1)["status"], "failure");
    assert_eq!(meta(&v1)["statuscode"], 404);

    for version in ["v1", "v2"] {
        let response = target
            .anonymous("GET", &format!("/ocs/{version}.php/cloud/user?format=json"))
            .header("OCS-APIRequest", "true")
            .header("Accept", "application/json")
            .send()
            .await
            .unwrap();
        let (status, body) = ocs_json(response).await;
        assert_eq!(status, 401, "{version} without credentials");
        assert_eq!(meta(&body)["statuscode"], 997, "{version}: 997 = not authorised");
    }
}

#[tokio::test]
async fn capabilities_carry_what_nc_py_api_reads() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let (status, body) =
        target.ocs_call(&alice, "GET", "/ocs/v1.php/cloud/capabilities?format=json").await;
    assert_eq!(status, 200);
    assert_eq!(meta(&body)["status"], "ok");
    let version = &body["ocs"]["data"]["version"];
    for field in ["major", "minor", "micro"] {
        assert!(version[field].is_u64(), "version.{field} is a number: {version}");
    }
    assert!(version["string"].is_string(), "version.string: {version}");
    assert!(version["extendedSupport"].is_boolean(), "version.extendedSupport: {version}");
    let capabilities = &body["ocs"]["data"]["capabilities"];
    assert!(capabilities.is_object(), "data.capabilities is an object");
    assert_eq!(capabilities["core"]["webdav-root"], "remote.php/webdav");
    assert!(capabilities["files_sharing"]["api_enabled"].as_bool() == Some(true), "sharing on");
}

/// `owner` shares their `path` read-only with `recipient`: the OCS answer.
async fn share_read_only(
    target: &Target,
    owner: &Account,
    path: &str,
    recipient: &Account,
) -> (u16, Value) {
    share_with(target, owner, path, recipient, Some("1")).await
}

#[tokio::test]
async fn a_folder_shared_with_a_user_appears_in_their_files_until_unshared() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let folder = target.unique("share");
    assert_eq!(target.mkcol(&alice, &folder).await, 201);
    target.put_file(&alice, &format!("{folder}/inside.txt"), "shared").await;

    let (status, created) = share_read_only(&target, &alice, &folder, &bob).await;
    assert_eq!(status, 200, "{created}");
    let share = &created["ocs"]["data"];
    let id = match &share["id"] {
        Value::String(id) => id.clone(),
        Value::Number(id) => id.to_string(),
        other => panic!("a share id, got {other}"),
    };
    assert_eq!(share["share_type"], 0);
    assert_eq!(share["uid_owner"].as_str(), Some(alice.uid.as_str()));
    assert_eq!(share["share_with"].as_str(), Some(bob.uid.as_str()));
    assert_eq!(share["path"].as_str(), Some(format!("/{folder}").as_str()));
    assert_eq!(share["item_type"], "folder");
    assert_eq!(share["permissions"], 1);

    let query = format!("path=/{folder}&reshares=false");
    let (status, listed) = list_shares(&target, &alice, &query).await;
    assert_eq!(status, 200);
    assert_eq!(ids(&listed), std::slice::from_ref(&id), "the folder's shares");

    let (_, with_me) = list_shares(&target, &bob, "shared_with_me=true").await;
    assert!(ids(&with_me).contains(&id), "bob sees the share with shared_with_me");
    let mount = target.files_path(&bob, &folder);
    let body = r#"<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:permissions/><oc:owner-id/></d:prop></d:propfind>"#;
    let (status, multistatus) = target.propfind(&bob, &mount, "0", body).await;
    assert_eq!(status, 207, "the share is mounted at its name in bob's files");
    let root = &multistatus.unwrap().responses[0];
    let permissions = root.text(xml_tree::OC, "permissions").expect("oc:permissions");
    assert!(
        permissions.contains('S') && permissions.contains('G'),
        "shared, readable: {permissions}"
    );
    assert!(!permissions.contains('C') && !permissions.contains('R'), "read only: {permissions}");
    assert_eq!(root.text(xml_tree::OC, "owner-id").as_deref(), Some(alice.uid.as_str()));
    let in_bobs_files = target.files_path(&bob, &format!("{folder}/inside.txt"));
    let got = target.as_account(&bob, "GET", &in_bobs_files).send().await.unwrap();
    assert_eq!(got.status(), 200, "the share is mounted at its name in bob's files");
    let write = target.put_file(&bob, &format!("{folder}/inside.txt"), "bob was here").await;
    assert_eq!(write.status(), 403, "read-only share: no update");

    let (status, deleted) = delete_share(&target, &alice, &id).await;
    assert_eq!(status, 200, "{deleted}");
    let got = target.as_account(&bob, "GET", &in_bobs_files).send().await.unwrap();
    assert_eq!(got.status(), 404, "unshared: gone from bob's files");
    target.cleanup(&alice, &folder).await;
}

#[tokio::test]
async fn an_unknown_ocs_app_route_is_a_404() {
    // What the suite relies on to name a missing app (`require_app`).
    let target = Target::get().await;
    let alice = target.alice().clone();
    let response = target
        .ocs(&alice, "GET", "/ocs/v2.php/apps/tamebi_contract_no_such_app/api/v1/x?format=json")
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    assert_eq!(status, 404);
    let result = std::panic::catch_unwind(|| require_app(status, "no_such_app", "/x"));
    assert!(result.is_err(), "require_app fails on a 404");
}

/// Nextcloud's sharing suite: a recipient who already has `textfile0.txt`
/// sees the share as `textfile0 (2).txt` (the number before the extension),
/// while the owner's `file_target` right after creation is `/textfile0.txt`.
#[tokio::test]
async fn a_shared_file_that_clashes_is_mounted_as_name_2_before_the_extension() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let stem = target.unique("clash");
    let name = format!("{stem}.txt");
    target.put_file(&alice, &name, "alice's").await;
    target.put_file(&bob, &name, "bob's own").await;
    let (status, created) = share_read_only(&target, &alice, &name, &bob).await;
    assert_eq!(status, 200, "{created}");
    let share = &created["ocs"]["data"];
    assert_eq!(share["file_target"].as_str(), Some(format!("/{name}").as_str()), "{share}");
    let id = id_of(&created);

    let mounted = format!("{stem} (2).txt");
    let got = target.as_account(&bob, "GET", &target.files_path(&bob, &mounted)).send().await;
    let got = got.unwrap();
    assert_eq!(got.status(), 200, "bob finds the share at {mounted:?}");
    assert_eq!(got.text().await.unwrap(), "alice's");
    let own = target.as_account(&bob, "GET", &target.files_path(&bob, &name)).send().await;
    assert_eq!(own.unwrap().text().await.unwrap(), "bob's own", "bob's own file is untouched");
    let (_, with_me) = list_shares(&target, &bob, "shared_with_me=true").await;
    let received = with_me["ocs"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|share| share["id"].to_string().trim_matches('"') == id);
    let received = received.expect("bob's view of the share");
    assert_eq!(received["file_target"].as_str(), Some(format!("/{mounted}").as_str()));

    let _ = delete_share(&target, &alice, &id).await;
    target.cleanup(&alice, &name).await;
    target.cleanup(&bob, &name).await;
}

/// `Share20\Manager::userCreateChecks`: a node is shared with a user once;
/// a second user share of it to the same recipient is refused with 403
/// (`AlreadySharedException`), and the first stays the only one.
#[tokio::test]
async fn a_node_is_shared_with_the_same_user_once() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let name = format!("{}.txt", target.unique("twice"));
    target.put_file(&alice, &name, "once").await;
    let (status, created) = share_read_only(&target, &alice, &name, &bob).await;
    assert_eq!(status, 200, "{created}");
    let id = id_of(&created);

    let (status, again) = share_read_only(&target, &alice, &name, &bob).await;
    assert_eq!(status, 403, "{again}");
    let message = again["ocs"]["meta"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(&format!(
            "Sharing {name} failed, because this item is already shared with the account"
        )),
        "{message}"
    );
    let (_, listed) = list_shares(&target, &alice, &format!("path=/{name}")).await;
    assert_eq!(listed["ocs"]["data"].as_array().map(Vec::len), Some(1), "{listed}");

    let _ = delete_share(&target, &alice, &id).await;
    target.cleanup(&alice, &name).await;
}
