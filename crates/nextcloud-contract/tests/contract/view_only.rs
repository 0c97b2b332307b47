//! Share attributes: a share whose `download` attribute is false is
//! view-only (`sharing-v1-part2b.feature`). Its reshares keep the
//! restriction, its files are not copied out, and they are not downloaded
//! either while `shareapi_allow_view_without_download` is off.

use super::share_settings::{set, unset};
use super::shares::{create_share, owned, share_info, text, update_share};
use super::throwaway::Throwaway;
use nextcloud_contract::{Account, Target};
use serde_json::Value;

const VIEW_ONLY: &str = r#"[{"scope":"permissions","key":"download","value":false}]"#;

/// A share made with `fields`, which must succeed: the share.
async fn create(target: &Target, owner: &Account, fields: &[(&str, &str)]) -> Value {
    let (status, answer) = create_share(target, owner, &owned(fields)).await;
    assert_eq!(status, 200, "{fields:?}: {answer}");
    answer["ocs"]["data"].clone()
}

/// `share` as `account` sees it, which must be there.
async fn info(target: &Target, account: &Account, share: &Value) -> Value {
    let (status, seen) = share_info(target, account, &text(share, "id")).await;
    assert_eq!(status, 200, "{seen}");
    seen
}

/// Sets `shareapi_allow_view_without_download` to `value`, or back to the
/// default.
async fn allow_view_without_download(target: &Target, value: Option<&str>) {
    let key = "shareapi_allow_view_without_download";
    match value {
        Some(value) => set(target, "core", key, value).await,
        None => unset(target, "core", key).await,
    }
}

/// "download restrictions can not be dropped" and "… when re-sharing even
/// on link shares": the attributes read back as set; a reshare made
/// without them gets them, and a link reshare hides its download even when
/// asked not to.
#[tokio::test]
async fn download_restrictions_survive_a_reshare() {
    let target = Target::get().await;
    let (people, [owner, resharer, next]) = Throwaway::accounts(&target).await;
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
    let fields = [("hideDownload", "false".to_string())];
    assert_eq!(update_share(&target, &resharer, &text(&link, "id"), &fields).await.0, 200);
    let seen = info(&target, &resharer, &link).await;
    assert_eq!(
        (seen["hide_download"].clone(), seen["attributes"].clone()),
        (1.into(), VIEW_ONLY.into())
    );
    people.remove().await;
}

/// "Cannot download a file when it's shared view-only without
/// shareapi_allow_view_without_download", "… when its parent is shared
/// view-only …", "Cannot copy a file when it's shared view-only even with
/// shareapi_allow_view_without_download enabled" and "Cannot copy a file
/// when its parent is shared view-only".
#[tokio::test]
async fn a_view_only_share_is_neither_copied_nor_downloaded_without_the_setting() {
    let target = Target::get().await;
    let (people, [owner, recipient]) = Throwaway::accounts(&target).await;
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
    people.remove().await;
}
