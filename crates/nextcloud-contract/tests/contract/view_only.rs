//! Share attributes: a share whose `download` attribute is false is
//! view-only (`sharing-v1-part2b.feature`). Its reshares keep the
//! restriction, its files are not copied out, and they are not downloaded
//! either while `shareapi_allow_view_without_download` is off.

use super::provisioning::{create_account, delete_account};
use nextcloud_contract::{Account, Target, form_encode, ocs_json};
use serde_json::Value;

const SHARES: &str = "/ocs/v2.php/apps/files_sharing/api/v1/shares";
const CONFIG: &str = "/ocs/v2.php/apps/provisioning_api/api/v1/config/apps/core";
const VIEW_ONLY: &str = r#"[{"scope":"permissions","key":"download","value":false}]"#;

async fn create(target: &Target, owner: &Account, fields: &[(&str, &str)]) -> Value {
    let fields: Vec<(&str, String)> =
        fields.iter().map(|(name, value)| (*name, value.to_string())).collect();
    let response = target.ocs_form(owner, "POST", &format!("{SHARES}?format=json"), &fields).await;
    let (status, answer) = ocs_json(response).await;
    assert_eq!(status, 200, "{fields:?}: {answer}");
    answer["ocs"]["data"].clone()
}

async fn info(target: &Target, account: &Account, share: &Value) -> Value {
    let id = share["id"].to_string().trim_matches('"').to_string();
    let (status, answer) =
        target.ocs_call(account, "GET", &format!("{SHARES}/{id}?format=json")).await;
    assert_eq!(status, 200, "{answer}");
    answer["ocs"]["data"][0].clone()
}

async fn allow_view_without_download(target: &Target, value: Option<&str>) {
    let path = format!("{CONFIG}/shareapi_allow_view_without_download?format=json");
    let response = match value {
        Some(value) => target
            .ocs(target.admin(), "POST", &path)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form_encode(&[("value", value.to_string())])),
        None => target.ocs(target.admin(), "DELETE", &path),
    };
    assert_eq!(response.send().await.unwrap().status(), 200);
}

/// "download restrictions can not be dropped" and "… when re-sharing even
/// on link shares": the attributes read back as set; a reshare made
/// without them gets them, and a link reshare hides its download even when
/// asked not to.
#[tokio::test]
async fn download_restrictions_survive_a_reshare() {
    let target = Target::get().await;
    let owner = create_account(&target, &[]).await;
    let resharer = create_account(&target, &[]).await;
    let next = create_account(&target, &[]).await;
    assert!(target.put_file(&owner, "tmp.txt", "foo").await.status().is_success());
    let first = create(
        &target,
        &owner,
        &[
            ("path", "/tmp.txt"),
            ("shareType", "0"),
            ("shareWith", &resharer.uid),
            ("permissions", "17"),
            ("attributes", VIEW_ONLY),
        ],
    )
    .await;
    let seen = info(&target, &resharer, &first).await;
    assert_eq!(
        (seen["uid_owner"].clone(), seen["permissions"].clone(), seen["attributes"].clone()),
        (owner.uid.as_str().into(), 17.into(), VIEW_ONLY.into())
    );

    let fields =
        [("path", "/tmp.txt"), ("shareType", "0"), ("shareWith", &next.uid), ("permissions", "1")];
    let reshare = create(&target, &resharer, &fields).await;
    let seen = info(&target, &next, &reshare).await;
    assert_eq!(seen["attributes"], VIEW_ONLY, "{seen}");
    assert_eq!(
        (seen["uid_owner"].clone(), seen["uid_file_owner"].clone(), seen["permissions"].clone()),
        (resharer.uid.as_str().into(), owner.uid.as_str().into(), 1.into())
    );

    let link = create(
        &target,
        &resharer,
        &[("path", "/tmp.txt"), ("shareType", "3"), ("permissions", "1")],
    )
    .await;
    let id = link["id"].to_string().trim_matches('"').to_string();
    let response = target
        .ocs_form(
            &resharer,
            "PUT",
            &format!("{SHARES}/{id}?format=json"),
            &[("hideDownload", "false".to_string())],
        )
        .await;
    assert_eq!(response.status(), 200);
    let seen = info(&target, &resharer, &link).await;
    assert_eq!(
        (seen["hide_download"].clone(), seen["attributes"].clone()),
        (1.into(), VIEW_ONLY.into())
    );
    for account in [&owner, &resharer, &next] {
        delete_account(&target, &account.uid).await;
    }
}

/// "Cannot download a file when it's shared view-only without
/// shareapi_allow_view_without_download", "… when its parent is shared
/// view-only …", "Cannot copy a file when it's shared view-only even with
/// shareapi_allow_view_without_download enabled" and "Cannot copy a file
/// when its parent is shared view-only".
#[tokio::test]
async fn a_view_only_share_is_neither_copied_nor_downloaded_without_the_setting() {
    let target = Target::get().await;
    let owner = create_account(&target, &[]).await;
    let recipient = create_account(&target, &[]).await;
    assert!(target.put_file(&owner, "document.odt", "a document").await.status().is_success());
    assert_eq!(target.mkcol(&owner, "sharedviewonly").await, 201);
    let inner = "sharedviewonly/document.odt";
    assert!(target.put_file(&owner, inner, "a document").await.status().is_success());
    for path in ["/document.odt", "/sharedviewonly"] {
        create(
            &target,
            &owner,
            &[
                ("path", path),
                ("shareType", "0"),
                ("shareWith", &recipient.uid),
                ("attributes", VIEW_ONLY),
            ],
        )
        .await;
    }
    let get = |path: &'static str| {
        let target = &target;
        let recipient = &recipient;
        async move {
            let url = target.files_path(recipient, path);
            target.as_account(recipient, "GET", &url).send().await.unwrap().status().as_u16()
        }
    };
    let copy = |path: &'static str| {
        let target = &target;
        let recipient = &recipient;
        async move {
            let destination = target.url(&target.files_path(recipient, "copyforbidden.odt"));
            let url = target.files_path(recipient, path);
            let request =
                target.as_account(recipient, "COPY", &url).header("Destination", destination);
            request.send().await.unwrap().status().as_u16()
        }
    };
    for path in ["document.odt", "sharedviewonly/document.odt"] {
        allow_view_without_download(&target, Some("no")).await;
        assert_eq!(get(path).await, 403, "{path} without the setting");
        assert_eq!(copy(path).await, 403, "{path}");
        allow_view_without_download(&target, Some("yes")).await;
        assert_eq!(get(path).await, 200, "{path} with it");
        assert_eq!(copy(path).await, 403, "{path}: never copied");
    }
    allow_view_without_download(&target, None).await;
    delete_account(&target, &owner.uid).await;
    delete_account(&target, &recipient.uid).await;
}
