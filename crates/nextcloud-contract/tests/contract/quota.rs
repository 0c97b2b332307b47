//! Quota as Nextcloud's WebDAV suite checks it (`webdav-related.feature`,
//! `dav-v2.feature`, `sharing-v1-part2b.feature`): what a folder reports
//! free (`DAV:quota-available-bytes`) is its owner's quota less the
//! owner's own files, an upload past it is 507, and a share spends its
//! owner's quota, not the recipient's. Every account here is made by the
//! administrator for the test and deleted after it; quotas are set through
//! the provisioning API and read back as the server stored them (it rounds
//! them through `humanFileSize`).

use super::provisioning::{send, statuscode};
use super::shares::shared_with;
use super::throwaway::Throwaway;
use nextcloud_contract::{Account, Target, sabre_error};
use xml_tree::DAV;

const QUOTA_PROPS: &str = r#"<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:quota-available-bytes/><d:quota-used-bytes/></d:prop></d:propfind>"#;

/// Sets `account`'s quota ("0", "10 MB", "none"); the quota the server
/// stored, in bytes, or `None` for unlimited.
async fn set_quota(target: &Target, account: &Account, quota: &str) -> Option<i64> {
    let path = format!("/ocs/v1.php/cloud/users/{}", account.uid);
    let fields = [("key", "quota".to_string()), ("value", quota.to_string())];
    let (status, answer) = send(target, target.admin(), "PUT", &path, &fields).await;
    assert_eq!((status, statuscode(&answer)), (200, 100.into()), "{answer}");
    let path = format!("/ocs/v1.php/cloud/users/{}?format=json", account.uid);
    let (_, data) = target.ocs_call(target.admin(), "GET", &path).await;
    let stored = data["ocs"]["data"]["quota"]["quota"].as_i64().expect("the stored quota");
    (stored >= 0).then_some(stored)
}

/// What the folder at `path` (in `account`'s files) reports: available
/// and used bytes.
async fn quota_of(target: &Target, account: &Account, path: &str) -> (i64, i64) {
    let url = target.files_path(account, path);
    let (status, multistatus) = target.propfind(account, &url, "0", QUOTA_PROPS).await;
    assert_eq!(status, 207, "PROPFIND {path}");
    let response = multistatus.unwrap().responses.into_iter().next().expect("one response");
    let number = |local: &str| {
        let text = response.text(DAV, local).unwrap_or_else(|| panic!("{local} of {path}"));
        text.parse::<i64>().unwrap_or_else(|_| panic!("{local} of {path}: {text:?}"))
    };
    (number("quota-available-bytes"), number("quota-used-bytes"))
}

async fn put(target: &Target, account: &Account, url: &str, bytes: usize) -> reqwest::Response {
    let request = target.as_account(account, "PUT", url).body("q".repeat(bytes));
    request.send().await.unwrap()
}

/// "Upload forbidden if quota is 0" (old endpoint) and "Uploading a file
/// having 0B as quota" (new): 507, sabre's InsufficientStorage.
#[tokio::test]
async fn with_a_quota_of_nothing_an_upload_is_507() {
    let target = Target::get().await;
    let (people, [user]) = Throwaway::accounts(&target).await;
    assert_eq!(set_quota(&target, &user, "0").await, Some(0));
    for url in [
        format!("/remote.php/webdav/{}.txt", target.unique("asdf")),
        target.files_path(&user, &format!("{}.txt", target.unique("asdf"))),
    ] {
        let (status, exception, _) = sabre_error(put(&target, &user, &url, 35).await).await;
        assert_eq!(
            (status, exception.as_str()),
            (507, "Sabre\\DAV\\Exception\\InsufficientStorage")
        );
    }
    // The MOVE that assembles a chunked upload (v2) checks the same.
    let upload = format!("/remote.php/dav/uploads/{}/{}", user.uid, target.unique("chunking"));
    let destination =
        target.url(&target.files_path(&user, &format!("{}.txt", target.unique("big"))));
    let mkcol = target.as_account(&user, "MKCOL", &upload).header("Destination", &destination);
    assert_eq!(mkcol.send().await.unwrap().status(), 201);
    let chunk = target
        .as_account(&user, "PUT", &format!("{upload}/00001"))
        .header("Destination", &destination);
    assert!(chunk.body("AAAAA").send().await.unwrap().status().is_success());
    let assemble = target
        .as_account(&user, "MOVE", &format!("{upload}/.file"))
        .header("Destination", &destination)
        .send()
        .await
        .unwrap();
    assert_eq!(assemble.status(), 507);
    people.remove().await;
}

/// "Retrieving folder quota when no quota is set", "… when quota is set"
/// and "… when quota is set and a file was uploaded": unlimited is -3;
/// with a quota, what is free is the quota less the account's own files,
/// and an upload spends it byte for byte. Past what is free, uploads and
/// copies are 507; a move inside one's own files needs no space.
#[tokio::test]
async fn what_is_free_is_the_quota_less_ones_own_files() {
    let target = Target::get().await;
    let (people, [user]) = Throwaway::accounts(&target).await;
    assert_eq!(set_quota(&target, &user, "none").await, None);
    assert_eq!(quota_of(&target, &user, "").await.0, -3, "no quota");

    let quota = set_quota(&target, &user, "10 MB").await.unwrap();
    assert_eq!(quota, 10 * 1024 * 1024);
    let (available, used) = quota_of(&target, &user, "").await;
    assert_eq!(available, quota - used);

    let (before, used) = quota_of(&target, &user, "").await;
    let small = format!("{}.txt", target.unique("prueba"));
    let response = put(&target, &user, &target.files_path(&user, &small), 93).await;
    assert_eq!(response.status(), 201);
    assert_eq!(quota_of(&target, &user, "").await, (before - 93, used + 93));

    // Room for one 600-byte file, not two.
    let quota = set_quota(&target, &user, &(used + 93 + 1000).to_string()).await.unwrap();
    let free = quota - used - 93;
    assert!((600..1200).contains(&free), "the stored quota leaves {free} bytes");
    let first = format!("{}.txt", target.unique("first"));
    let response = put(&target, &user, &target.files_path(&user, &first), 600).await;
    assert_eq!(response.status(), 201);
    let second = target.files_path(&user, &format!("{}.txt", target.unique("second")));
    assert_eq!(put(&target, &user, &second, 600).await.status(), 507);
    let copy = target
        .as_account(&user, "COPY", &target.files_path(&user, &first))
        .header("Destination", target.url(&second))
        .send()
        .await
        .unwrap();
    assert_eq!(copy.status(), 507, "a copy needs the space too");
    let moved = target
        .as_account(&user, "MOVE", &target.files_path(&user, &first))
        .header("Destination", target.url(&second))
        .send()
        .await
        .unwrap();
    assert_eq!(moved.status(), 201, "a move inside one's files needs none");

    people.remove().await;
}

/// "Retrieving folder quota when quota is set and a file was received":
/// a file shared with the account does not count against its quota.
#[tokio::test]
async fn a_received_file_costs_the_recipient_nothing() {
    let target = Target::get().await;
    let (people, [owner, recipient]) = Throwaway::accounts(&target).await;
    let quota = set_quota(&target, &recipient, "1 KB").await.unwrap();
    let (before, used) = quota_of(&target, &recipient, "").await;
    assert_eq!(before, (quota - used).max(0));
    let name = format!("{}.txt", target.unique("user0"));
    assert_eq!(put(&target, &owner, &target.files_path(&owner, &name), 93).await.status(), 201);
    shared_with(&target, &owner, &name, &recipient, None).await;
    assert_eq!(quota_of(&target, &recipient, "").await.0, before);
    people.remove().await;
}

/// "Retrieving folder quota of shared folder with quota when no quota is
/// set for recipient", "Uploading a file as recipient using webdav
/// having quota" (old and new endpoints) and "Check quota of owners parent
/// directory of a shared file": a shared folder reports its owner's free
/// space, an upload into it spends the owner's quota, and a recipient with
/// no space of their own may still overwrite a file shared with them.
#[tokio::test]
async fn a_share_reports_and_spends_its_owners_quota() {
    let target = Target::get().await;
    let (people, [owner, recipient]) = Throwaway::accounts(&target).await;
    set_quota(&target, &owner, "10 MB").await.unwrap();
    set_quota(&target, &recipient, "none").await;
    let folder = target.unique("testquota");
    assert_eq!(target.mkcol(&owner, &folder).await, 201);
    shared_with(&target, &owner, &folder, &recipient, Some("31")).await;
    let (owners_free, _) = quota_of(&target, &owner, "").await;
    assert_eq!(quota_of(&target, &recipient, &folder).await.0, owners_free);

    set_quota(&target, &recipient, "10 MB").await.unwrap();
    let old = format!("/remote.php/webdav/{folder}/asdf.txt");
    assert_eq!(put(&target, &recipient, &old, 35).await.status(), 201);
    let new = target.files_path(&recipient, &format!("{folder}/asdf-new.txt"));
    assert_eq!(put(&target, &recipient, &new, 35).await.status(), 201);
    assert_eq!(quota_of(&target, &owner, "").await.0, owners_free - 70, "the owner's quota paid");

    let file = format!("{}.txt", target.unique("myfile"));
    assert_eq!(put(&target, &owner, &target.files_path(&owner, &file), 40).await.status(), 201);
    shared_with(&target, &owner, &file, &recipient, Some("19")).await;
    assert_eq!(set_quota(&target, &recipient, "0").await, Some(0));
    let own = put(&target, &recipient, &format!("/remote.php/webdav/{file}-own.txt"), 60).await;
    assert_eq!(own.status(), 507, "the recipient's own files have no room");
    let overwrite = put(&target, &recipient, &format!("/remote.php/webdav/{file}"), 60).await;
    assert_eq!(overwrite.status(), 204, "the file's owner has the space");

    people.remove().await;
}
