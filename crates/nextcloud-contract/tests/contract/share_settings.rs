//! The share API's settings, as Nextcloud's sharing suite sets them through
//! provisioning_api's `config/apps` ("parameter X of app Y is set to Z"):
//! default permissions, default expiry days of internal shares and links,
//! public upload and outgoing federation. Each test restores what it
//! changed (on a real server the settings are the whole server's).

use super::provisioning::statuscode;
use super::shares::{create_share, day_in, list_shares, share_with};
use super::throwaway::Throwaway;
use nextcloud_contract::{Account, Target, ocs_json};
use serde_json::Value;

const CONFIG: &str = "/ocs/v2.php/apps/provisioning_api/api/v1/config/apps";

pub(super) async fn set(target: &Target, app: &str, key: &str, value: &str) {
    let response = target
        .ocs_form(
            target.admin(),
            "POST",
            &format!("{CONFIG}/{app}/{key}?format=json"),
            &[("value", value.to_string())],
        )
        .await;
    let (status, answer) = ocs_json(response).await;
    assert_eq!(status, 200, "setting {app}/{key}: {answer}");
}

pub(super) async fn unset(target: &Target, app: &str, key: &str) {
    let path = format!("{CONFIG}/{app}/{key}?format=json");
    let (status, answer) = target.ocs_call(target.admin(), "DELETE", &path).await;
    assert_eq!(status, 200, "deleting {app}/{key}: {answer}");
}

/// A share made with `fields` (v2): the status and the share.
async fn create(target: &Target, owner: &Account, fields: &[(&str, String)]) -> (u16, Value) {
    let (status, answer) = create_share(target, owner, fields).await;
    (status, answer["ocs"]["data"].clone())
}

/// An expiry `days` from today as a share shows it.
fn in_days(days: i64) -> String {
    format!("{} 00:00:00", day_in(days))
}

/// The config API itself: a value set reads back, `defaultValue` stands in
/// for a missing one, a deleted one is gone, and only the administrator
/// may read or write.
#[tokio::test]
async fn the_administrator_sets_and_reads_app_config() {
    let target = Target::get().await;
    let key = target.unique("contract_key").replace('-', "_");
    set(&target, "core", &key, "value one").await;
    let path = format!("{CONFIG}/core/{key}?format=json");
    let (_, answer) = target.ocs_call(target.admin(), "GET", &path).await;
    assert_eq!(answer["ocs"]["data"]["data"], "value one", "{answer}");
    unset(&target, "core", &key).await;
    let with_default = format!("{CONFIG}/core/{key}?format=json&defaultValue=fallback");
    let (_, answer) = target.ocs_call(target.admin(), "GET", &with_default).await;
    assert_eq!(answer["ocs"]["data"]["data"], "fallback", "{answer}");
    let (status, answer) = target.ocs_call(target.alice(), "GET", &path).await;
    assert_ne!(status, 200, "not for a regular user: {answer}");
    let (status, answer) = target
        .ocs_call(target.admin(), "POST", &format!("{CONFIG}/core/public_files?format=json"))
        .await;
    assert_eq!((status, statuscode(&answer)), (403, 403.into()), "{answer}");
}

/// "Creating a new share of a file with default permissions", "… of a
/// folder …" (sharing-v1) and both "Receiving a share of a file without
/// delete permission gives delete permission anyway" (part4, to a user and
/// to a group): with no `permissions`, a share gets the server's default,
/// less what a file cannot have; the recipient may still remove it (27).
#[tokio::test]
async fn the_default_permissions_shape_new_shares() {
    let target = Target::get().await;
    let (people, [owner, recipient]) = Throwaway::accounts(&target).await;
    assert!(target.put_file(&owner, "welcome.txt", "welcome").await.status().is_success());
    assert_eq!(target.mkcol(&owner, "FOLDER").await, 201);

    set(&target, "core", "shareapi_default_permissions", "7").await;
    let (status, file) = share_with(&target, &owner, "welcome.txt", &recipient, None).await;
    assert_eq!((status, file["ocs"]["data"]["permissions"].clone()), (200, 3.into()), "{file}");
    let (status, folder) = share_with(&target, &owner, "FOLDER", &recipient, None).await;
    assert_eq!((status, folder["ocs"]["data"]["permissions"].clone()), (200, 7.into()), "{folder}");

    set(&target, "core", "shareapi_default_permissions", "23").await;
    let gid = people.group(&[&recipient]).await;
    for (share_type, with) in [("0", recipient.uid.clone()), ("1", gid.clone())] {
        let name = format!("{}.txt", target.unique("welcome"));
        assert!(target.put_file(&owner, &name, "welcome").await.status().is_success());
        let fields = [
            ("path", format!("/{name}")),
            ("shareType", share_type.to_string()),
            ("shareWith", with),
        ];
        let (status, share) = create(&target, &owner, &fields).await;
        assert_eq!((status, share["permissions"].clone()), (200, 19.into()), "{share}");
        let received = format!("shared_with_me=true&path=/{name}");
        let (_, answer) = list_shares(&target, &recipient, &received).await;
        let seen = &answer["ocs"]["data"][0];
        assert_eq!(
            (seen["permissions"].clone(), seen["item_permissions"].clone()),
            (19.into(), 27.into()),
            "type {share_type}: {answer}"
        );
    }
    unset(&target, "core", "shareapi_default_permissions").await;
    people.remove().await;
}

/// "Creating a new internal share with default expiration date", "… with
/// relaxed default expiration date", "… too large", the same three for
/// links, and "Creating a new share with expiration date removed, when
/// default expiration is set" (sharing-v1): a default expiry applies the
/// relaxed number of days when it is shorter than the limit, the limit
/// otherwise; an empty `expireDate` means none.
#[tokio::test]
async fn default_expiry_days_apply_to_new_shares() {
    let target = Target::get().await;
    let (people, [owner, recipient]) = Throwaway::accounts(&target).await;
    let user_share = |name: &str| {
        vec![
            ("path", format!("/{name}")),
            ("shareType", "0".to_string()),
            ("shareWith", recipient.uid.clone()),
        ]
    };
    let link = |name: &str| vec![("path", format!("/{name}")), ("shareType", "3".to_string())];
    for (link_default, on, limit, relaxed) in [
        (
            false,
            "shareapi_default_internal_expire_date",
            "shareapi_internal_expire_after_n_days",
            "internal_defaultExpDays",
        ),
        (
            true,
            "shareapi_default_expire_date",
            "shareapi_expire_after_n_days",
            "link_defaultExpDays",
        ),
    ] {
        set(&target, "core", on, "yes").await;
        set(&target, "core", limit, "3").await;
        for (relaxed_days, expected) in [(None, 3), (Some("1"), 1), (Some("10"), 3)] {
            match relaxed_days {
                Some(days) => set(&target, "core", relaxed, days).await,
                None => unset(&target, "core", relaxed).await,
            }
            let name = format!("{}.txt", target.unique("welcome"));
            assert!(target.put_file(&owner, &name, "welcome").await.status().is_success());
            let fields = if link_default { link(&name) } else { user_share(&name) };
            let (status, share) = create(&target, &owner, &fields).await;
            assert_eq!(status, 200, "{share}");
            assert_eq!(share["expiration"], in_days(expected), "{on} {relaxed_days:?}: {share}");
        }
        if link_default {
            let name = format!("{}.txt", target.unique("welcome"));
            assert!(target.put_file(&owner, &name, "welcome").await.status().is_success());
            let mut fields = user_share(&name);
            fields.push(("expireDate", String::new()));
            let (status, share) = create(&target, &owner, &fields).await;
            assert_eq!((status, share["expiration"].clone()), (200, Value::Null), "{share}");
        }
        for key in [on, limit, relaxed] {
            unset(&target, "core", key).await;
        }
    }
    people.remove().await;
}

/// "Changing api_enabled" (capabilities: `public.upload` follows
/// `shareapi_allow_public_upload`) and "Downloading a file from public
/// share without Ajax header and disabled s2s share" (dav-v2-public):
/// without public upload a link cannot take uploads (403); without
/// outgoing federation a new link has no share permission, and its files
/// still download.
#[tokio::test]
async fn public_upload_and_federation_settings_shape_links() {
    let target = Target::get().await;
    let (people, [owner]) = Throwaway::accounts(&target).await;
    assert_eq!(target.mkcol(&owner, "testshare").await, 201);
    assert!(
        target
            .put_file(&owner, "testshare/image.png", "not really a png")
            .await
            .status()
            .is_success()
    );
    let capabilities = || async {
        let (_, answer) = target
            .ocs_call(target.admin(), "GET", "/ocs/v2.php/cloud/capabilities?format=json")
            .await;
        answer["ocs"]["data"]["capabilities"]["files_sharing"]["public"].clone()
    };
    assert_eq!(capabilities().await["upload"], true);
    set(&target, "core", "shareapi_allow_public_upload", "no").await;
    assert_eq!(capabilities().await["upload"], false);
    assert_eq!(capabilities().await["enabled"], true);
    let fields = [
        ("path", "/testshare".to_string()),
        ("shareType", "3".to_string()),
        ("publicUpload", "true".to_string()),
    ];
    let (status, refused) = create(&target, &owner, &fields).await;
    assert_eq!(status, 403, "{refused}");
    unset(&target, "core", "shareapi_allow_public_upload").await;

    set(&target, "files_sharing", "outgoing_server2server_share_enabled", "no").await;
    let fields = [
        ("path", "/testshare".to_string()),
        ("shareType", "3".to_string()),
        ("permissions", "1".to_string()),
    ];
    let (status, link) = create(&target, &owner, &fields).await;
    assert_eq!((status, link["permissions"].clone()), (200, 1.into()), "{link}");
    let token = link["token"].as_str().unwrap().to_string();
    let download =
        target.anonymous("GET", &format!("/public.php/dav/files/{token}/image.png")).send().await;
    assert_eq!(download.unwrap().text().await.unwrap(), "not really a png");
    unset(&target, "files_sharing", "outgoing_server2server_share_enabled").await;
    people.remove().await;
}

/// The capability lines of "getting capabilities with admin user" and
/// "Changing api_enabled" (capabilities.feature), on v1 as the admin, but
/// `files_sharing.federation`: the fake serves no federated sharing, so it
/// says `outgoing` and `incoming` are off where a default Nextcloud says
/// on (docs/fake-vs-real.md). Without public upload, `public.upload` is
/// off and nothing else moves.
#[tokio::test]
async fn capabilities_name_what_the_suite_expects() {
    let target = Target::get().await;
    let capabilities = || async {
        let (status, answer) = target
            .ocs_call(target.admin(), "GET", "/ocs/v1.php/cloud/capabilities?format=json")
            .await;
        assert_eq!((status, answer["ocs"]["meta"]["statuscode"].clone()), (200, 100.into()));
        answer["ocs"]["data"]["capabilities"].clone()
    };
    let lines = |capabilities: &Value| {
        [
            capabilities["core"]["pollinterval"].clone(),
            capabilities["core"]["webdav-root"].clone(),
            capabilities["files_sharing"]["api_enabled"].clone(),
            capabilities["files_sharing"]["public"]["enabled"].clone(),
            capabilities["files_sharing"]["resharing"].clone(),
            capabilities["files"]["bigfilechunking"].clone(),
            capabilities["files"]["undelete"].clone(),
            capabilities["files"]["versioning"].clone(),
        ]
    };
    let expected: [Value; 8] = [
        60.into(),
        "remote.php/webdav".into(),
        true.into(),
        true.into(),
        true.into(),
        true.into(),
        true.into(),
        true.into(),
    ];
    let before = capabilities().await;
    assert_eq!(lines(&before), expected, "{before}");
    assert_eq!(before["files_sharing"]["public"]["upload"], true);
    if target.is_fake() {
        let federation = &before["files_sharing"]["federation"];
        assert_eq!(
            (federation["outgoing"].clone(), federation["incoming"].clone()),
            (false.into(), false.into())
        );
    }

    set(&target, "core", "shareapi_allow_public_upload", "no").await;
    let after = capabilities().await;
    unset(&target, "core", "shareapi_allow_public_upload").await;
    assert_eq!(lines(&after), expected, "{after}");
    assert_eq!(after["files_sharing"]["public"]["upload"], false, "{after}");
}
