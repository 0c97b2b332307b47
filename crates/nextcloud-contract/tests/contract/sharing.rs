//! The files_sharing OCS API as Nextcloud's sharing suite checks it
//! (`sharing_features/sharing-v1*.feature`): who sees which shares in the
//! lists, what an outsider gets, and how incoming shares are mounted.
//! Three accounts take part: alice (owner), bob (recipient) and the
//! administrator (an outsider, or a second owner).

use super::dav::{props_of, share_types};
use super::shares::{
    SHARES_V1, create_share_at, delete_share, id_of, ids, list_shares, share_fields, share_info,
    share_with, share_with_group, shared_with, shared_with_group, update_permissions,
};
use nextcloud_contract::{Account, Target, form_encode, header, ocs_json};
use serde_json::Value;

/// [`share_with`] the default permissions.
async fn share(target: &Target, owner: &Account, path: &str, recipient: &Account) -> (u16, Value) {
    share_with(target, owner, path, recipient, None).await
}

async fn unshare(target: &Target, owner: &Account, id: &str) {
    let _ = delete_share(target, owner, id).await;
}

/// Deletes `owner`'s shares `ids`, then their `paths` (cleanup only).
async fn unshare_and_remove(target: &Target, owner: &Account, ids: &[&str], paths: &[&str]) {
    for id in ids {
        unshare(target, owner, id).await;
    }
    for path in paths {
        target.cleanup(owner, path).await;
    }
}

/// "Creating a new share with user" (sharing-v1): the v1 answer is status
/// 100 in an HTTP 200, with the AppFramework's policy.
#[tokio::test]
async fn a_user_share_made_through_v1_is_100_with_the_app_frameworks_policy() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let name = format!("{}.txt", target.unique("v1"));
    target.put_file(&alice, &name, "v1").await;
    let response = target
        .ocs(&alice, "POST", &format!("{SHARES_V1}?format=json"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form_encode(&[
            ("path", format!("/{name}")),
            ("shareType", "0".to_string()),
            ("shareWith", bob.uid.clone()),
        ]))
        .send()
        .await
        .unwrap();
    assert_eq!(
        header(&response, "content-security-policy"),
        "default-src 'none';base-uri 'none';manifest-src 'self';frame-ancestors 'none'"
    );
    let (status, answer) = ocs_json(response).await;
    assert_eq!((status, answer["ocs"]["meta"]["statuscode"].clone()), (200, 100.into()));
    unshare(&target, &alice, &id_of(&answer)).await;
    target.cleanup(&alice, &name).await;
}

/// "getting all shares of a user using that user / using another user"
/// and "getting all shares of a file" (sharing-v1): the unfiltered list is
/// the caller's own shares; `path=` lists every recipient of that node.
#[tokio::test]
async fn share_lists_are_the_callers_own_and_a_path_lists_every_recipient() {
    let target = Target::get().await;
    let (alice, bob, admin) =
        (target.alice().clone(), target.bob().clone(), target.admin().clone());
    let name = format!("{}.txt", target.unique("listed"));
    target.put_file(&alice, &name, "listed").await;
    let to_bob = shared_with(&target, &alice, &name, &bob, None).await;
    let to_admin = shared_with(&target, &alice, &name, &admin, None).await;

    let (status, own) = list_shares(&target, &alice, "").await;
    assert_eq!(status, 200);
    let own = ids(&own);
    assert!(own.contains(&to_bob) && own.contains(&to_admin), "alice lists her shares: {own:?}");

    let (_, others) = list_shares(&target, &admin, "").await;
    assert!(!ids(&others).contains(&to_bob), "another user's list holds none of alice's shares");

    let (_, of_file) = list_shares(&target, &alice, &format!("path=/{name}")).await;
    let recipients: Vec<Value> = of_file["ocs"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|share| share["share_with"].clone())
        .collect();
    assert!(recipients.contains(&Value::from(bob.uid.clone())), "{recipients:?}");
    assert!(recipients.contains(&Value::from(admin.uid.clone())), "{recipients:?}");

    unshare_and_remove(&target, &alice, &[&to_bob, &to_admin], &[&name]).await;
}

/// "Sharee can see the filtered share" and "Sharee can't see the share
/// that is filtered out" (sharing-v1-part2): `shared_with_me` with a
/// `path` in the recipient's own tree.
#[tokio::test]
async fn a_recipient_filters_received_shares_by_their_own_path() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let first = format!("{}.txt", target.unique("filtered-in"));
    let second = format!("{}.txt", target.unique("filtered-out"));
    target.put_file(&alice, &first, "in").await;
    target.put_file(&alice, &second, "out").await;
    let (_, kept) = share(&target, &alice, &first, &bob).await;
    let (_, other) = share(&target, &alice, &second, &bob).await;
    let (kept, other) = (id_of(&kept), id_of(&other));

    let filtered = format!("shared_with_me=true&path=/{first}");
    let (status, answer) = list_shares(&target, &bob, &filtered).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(ids(&answer), vec![kept.clone()], "only the share at that path");

    unshare_and_remove(&target, &alice, &[&kept, &other], &[&first, &second]).await;
}

/// "Get a share with a user which didn't received the share" and "delete
/// a share with a user that didn't receive the share" (sharing-v1-part2):
/// to an outsider the share does not exist (v1: 404 in an HTTP 200), and
/// it survives their DELETE.
#[tokio::test]
async fn to_an_outsider_a_share_does_not_exist() {
    let target = Target::get().await;
    let (alice, bob, admin) =
        (target.alice().clone(), target.bob().clone(), target.admin().clone());
    let name = format!("{}.txt", target.unique("outsider"));
    target.put_file(&alice, &name, "mine").await;
    let (_, created) = share(&target, &alice, &name, &bob).await;
    let id = id_of(&created);
    let v1 = format!("{SHARES_V1}/{id}?format=json");

    let (status, answer) = target.ocs_call(&admin, "GET", &v1).await;
    assert_eq!((status, answer["ocs"]["meta"]["statuscode"].clone()), (200, 404.into()));
    let (status, answer) = target.ocs_call(&admin, "DELETE", &v1).await;
    assert_eq!((status, answer["ocs"]["meta"]["statuscode"].clone()), (200, 404.into()));
    let (status, still) = share_info(&target, &alice, &id).await;
    assert_eq!(status, 200, "the share is still there: {still}");

    unshare(&target, &alice, &id).await;
    target.cleanup(&alice, &name).await;
}

/// "unique target names for incoming shares" (sharing-v1-part3): two
/// owners share folders of the same name with one recipient, who mounts
/// them as `name` and `name (2)`.
#[tokio::test]
async fn incoming_shares_of_the_same_name_get_unique_targets() {
    let target = Target::get().await;
    let (alice, bob, admin) =
        (target.alice().clone(), target.bob().clone(), target.admin().clone());
    let folder = target.unique("foo");
    assert_eq!(target.mkcol(&alice, &folder).await, 201);
    assert_eq!(target.mkcol(&admin, &folder).await, 201);
    let from_alice = shared_with(&target, &alice, &folder, &bob, None).await;
    let from_admin = shared_with(&target, &admin, &folder, &bob, None).await;

    let (_, answer) = list_shares(&target, &bob, "shared_with_me=true").await;
    let mut targets: Vec<String> = answer["ocs"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|share| share["file_target"].as_str())
        .filter(|file_target| file_target.starts_with(&format!("/{folder}")))
        .map(str::to_string)
        .collect();
    targets.sort();
    assert_eq!(targets, vec![format!("/{folder}"), format!("/{folder} (2)")]);

    unshare(&target, &alice, &from_alice).await;
    unshare(&target, &admin, &from_admin).await;
    target.cleanup(&alice, &folder).await;
    target.cleanup(&admin, &folder).await;
}

/// "do not allow to increase permissions on received share"
/// (sharing-v1-part3): a recipient cannot edit the share they received.
#[tokio::test]
async fn a_recipient_cannot_raise_the_permissions_of_a_received_share() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let folder = target.unique("tmp");
    assert_eq!(target.mkcol(&alice, &folder).await, 201);
    let id = shared_with(&target, &alice, &folder, &bob, Some("17")).await;

    let (status, answer) = update_permissions(&target, &bob, &id, "19").await;
    assert_eq!((status, answer["ocs"]["meta"]["statuscode"].clone()), (403, 403.into()));
    let (_, still) = share_info(&target, &alice, &id).await;
    assert_eq!(still["permissions"], 17, "{still}");

    unshare(&target, &alice, &id).await;
    target.cleanup(&alice, &folder).await;
}

/// `account` sets the permissions of share `id`: the HTTP status and the
/// OCS statuscode (v2: the same number).
async fn set_permissions(target: &Target, account: &Account, id: &str, permissions: &str) -> u16 {
    let (status, answer) = update_permissions(target, account, id, permissions).await;
    assert_eq!(answer["ocs"]["meta"]["statuscode"], status, "v2: statuscode = HTTP: {answer}");
    status
}

/// The Administrators' group: there on every Nextcloud, with the suite's
/// administrator in it and neither user, so alice can share with a group
/// whose member the suite can act as.
const ADMIN_GROUP: &str = "admin";

/// `<ocs:share-permissions>` of `path` as `account` sees it.
async fn share_permissions(target: &Target, account: &Account, path: &str) -> String {
    let body = r#"<d:propfind xmlns:d="DAV:" xmlns:x="http://open-collaboration-services.org/ns"><d:prop><x:share-permissions/></d:prop></d:propfind>"#;
    let response = props_of(target, account, path, body).await;
    response
        .text("http://open-collaboration-services.org/ns", "share-permissions")
        .unwrap_or_else(|| panic!("share-permissions of {path} as {}", account.uid))
}

/// `method` (MOVE or COPY) of `from` to `to`, both in `account`'s files.
pub(super) async fn transfer(
    target: &Target,
    account: &Account,
    method: &str,
    from: &str,
    to: &str,
) -> u16 {
    let destination = target.url(&target.files_path(account, to));
    let request = target.as_account(account, method, &target.files_path(account, from));
    request.header("Destination", destination).send().await.unwrap().status().as_u16()
}

/// `path`'s content as `account` downloads it, or the status.
async fn content(target: &Target, account: &Account, path: &str) -> Result<String, u16> {
    let answer =
        target.as_account(account, "GET", &target.files_path(account, path)).send().await.unwrap();
    match answer.status().as_u16() {
        200 => Ok(answer.text().await.unwrap()),
        status => Err(status),
    }
}

/// `sharing-v1-part2b.feature` "Correct webdav share-permissions for owned
/// file" and `sharing-v1-part3.feature` "Correct webdav share-permissions
/// for owned folder" and "… for received file / folder with …" (19, 3, 17;
/// 31, 29, 27, 23, 15): the `share-permissions` property is what the owner
/// may share (19 for a file: no create, no delete; 31 for a folder) and,
/// for the recipient, the share's permissions as the owner last set them.
#[tokio::test]
async fn share_permissions_follow_ownership_and_the_share() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let file = format!("{}.txt", target.unique("share-permissions"));
    let folder = target.unique("share-permissions");
    target.put_file(&alice, &file, "foo").await;
    assert_eq!(target.mkcol(&alice, &folder).await, 201);
    assert_eq!(share_permissions(&target, &alice, &file).await, "19", "an owned file");
    assert_eq!(share_permissions(&target, &alice, &folder).await, "31", "an owned folder");
    assert_eq!(share_permissions(&target, &alice, "").await, "31", "the owner's root");

    let to_file = shared_with(&target, &alice, &file, &bob, None).await;
    assert_eq!(share_permissions(&target, &bob, &file).await, "19", "edit and reshare");
    for permissions in ["3", "17"] {
        assert_eq!(set_permissions(&target, &alice, &to_file, permissions).await, 200);
        assert_eq!(share_permissions(&target, &bob, &file).await, permissions);
    }

    let to_folder = shared_with(&target, &alice, &folder, &bob, None).await;
    assert_eq!(share_permissions(&target, &bob, &folder).await, "31", "all permissions");
    for permissions in ["29", "27", "23", "15"] {
        assert_eq!(set_permissions(&target, &alice, &to_folder, permissions).await, 200);
        assert_eq!(share_permissions(&target, &bob, &folder).await, permissions);
    }
    unshare_and_remove(&target, &alice, &[&to_file, &to_folder], &[&file, &folder]).await;
}

/// `webdav-related.feature` "Moving a file to a folder with no
/// permissions", "Moving a file to overwrite a file in a folder with no
/// permissions", "Copying a file to a folder with no permissions", "Copying
/// a file to overwrite a file into a folder with no permissions" and
/// "Copying files into a folder without edit permissions": into a share
/// with read permission only, a MOVE or COPY is 403, nothing arrives and
/// nothing there is overwritten.
#[tokio::test]
async fn a_read_only_share_refuses_moves_and_copies_into_it() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let folder = target.unique("testshare");
    assert_eq!(target.mkcol(&alice, &folder).await, 201);
    let kept = format!("{folder}/overwritethis.txt");
    target.put_file(&alice, &kept, "Welcome").await;
    let read_only = shared_with(&target, &alice, &folder, &bob, Some("1")).await;
    let own = format!("{}.txt", target.unique("bobs"));
    target.put_file(&bob, &own, "bob's text").await;

    for method in ["MOVE", "COPY"] {
        let new = format!("{folder}/{method}.txt");
        assert_eq!(transfer(&target, &bob, method, &own, &new).await, 403, "{method} into it");
        assert_eq!(content(&target, &bob, &new).await, Err(404), "nothing arrived");
        assert_eq!(transfer(&target, &bob, method, &own, &kept).await, 403, "{method} over a file");
        assert_eq!(content(&target, &bob, &kept).await, Ok("Welcome".to_string()));
        assert_eq!(content(&target, &bob, &own).await, Ok("bob's text".to_string()));
    }
    unshare(&target, &alice, &read_only).await;
    target.cleanup(&alice, &folder).await;
    target.cleanup(&bob, &own).await;
}

/// `webdav-related.feature` "Copying files into a folder with edit
/// permissions", "Moving a file from shared folder to root folder",
/// "Moving a file from root folder to shared folder" and "Uploading a file
/// as recipient with limited permissions" (23: no delete; the owner deletes
/// it), and `sharing-v1-part3.feature` "moving a file into a share as
/// recipient" (the owner sees it): an editable share takes files in, by
/// COPY, MOVE and PUT, and gives them out by MOVE.
#[tokio::test]
async fn an_editable_share_takes_files_in_and_gives_them_out() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let folder = target.unique("testshare");
    assert_eq!(target.mkcol(&alice, &folder).await, 201);
    target.put_file(&alice, &format!("{folder}/welcome.txt"), "Welcome").await;
    let editable = shared_with(&target, &alice, &folder, &bob, Some("31")).await;
    let own = format!("{}.txt", target.unique("copytest"));
    target.put_file(&bob, &own, "copytest").await;

    let copied = format!("{folder}/copytest.txt");
    assert_eq!(transfer(&target, &bob, "COPY", &own, &copied).await, 201, "COPY into the share");
    assert_eq!(content(&target, &alice, &copied).await, Ok("copytest".to_string()));

    let moved_out = format!("{}.txt", target.unique("movedwelcome"));
    let from_share = format!("{folder}/welcome.txt");
    assert_eq!(transfer(&target, &bob, "MOVE", &from_share, &moved_out).await, 201);
    assert_eq!(content(&target, &bob, &moved_out).await, Ok("Welcome".to_string()));
    assert_eq!(content(&target, &alice, &from_share).await, Err(404), "gone from the share");

    let moved_in = format!("{folder}/shared_file.txt");
    assert_eq!(transfer(&target, &bob, "MOVE", &own, &moved_in).await, 201, "MOVE into it");
    assert_eq!(content(&target, &bob, &moved_in).await, Ok("copytest".to_string()));
    assert_eq!(content(&target, &alice, &moved_in).await, Ok("copytest".to_string()));
    assert_eq!(content(&target, &bob, &own).await, Err(404));

    let limited = target.unique("testfolder");
    assert_eq!(target.mkcol(&alice, &limited).await, 201);
    let no_delete = shared_with(&target, &alice, &limited, &bob, Some("23")).await;
    let uploaded = format!("{limited}/asdf.txt");
    let put = target.put_file(&bob, &uploaded, "uploaded by the recipient").await;
    assert_eq!(put.status(), 201, "create permission: the recipient uploads");
    let deleted = target.as_account(&alice, "DELETE", &target.files_path(&alice, &uploaded));
    assert_eq!(deleted.send().await.unwrap().status(), 204, "the owner deletes it");

    unshare_and_remove(&target, &alice, &[&editable, &no_delete], &[&folder, &limited]).await;
    target.cleanup(&bob, &moved_out).await;
}

/// `sharing-v1-part2a.feature` "getting share info of a share" and
/// `sharing-v1-part4.feature` "Creating a new share of a file shows size
/// and mtime", "… you own shows the file permissions", "Receiving a share
/// of a file gives no create permission" and "… of a folder gives create
/// permission" (with the default permissions, 31): `GET /shares/{id}` names
/// the share and its item; a file's share is 19 and its item 27, a folder's
/// 31 and 31, for the owner and in the recipient's `shared_with_me`.
#[tokio::test]
async fn share_info_names_the_share_and_its_item() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let name = format!("{}.txt", target.unique("textfile0"));
    let text = "a file to share\n";
    target.put_file(&alice, &name, text).await;
    let id = shared_with(&target, &alice, &name, &bob, None).await;

    let (status, owned) = share_info(&target, &alice, &id).await;
    assert_eq!(status, 200, "{owned}");
    assert_eq!(owned["id"].to_string().trim_matches('"'), id, "{owned}");
    let expected = [
        ("item_type", Value::from("file")),
        ("share_type", 0.into()),
        ("share_with", bob.uid.clone().into()),
        ("file_target", format!("/{name}").into()),
        ("path", format!("/{name}").into()),
        ("permissions", 19.into()),
        ("mail_send", 0.into()),
        ("uid_owner", alice.uid.clone().into()),
        ("storage_id", format!("home::{}", alice.uid).into()),
        ("mimetype", "text/plain".into()),
        ("item_permissions", 27.into()),
        ("item_size", text.len().into()),
    ];
    for (field, value) in expected {
        assert_eq!(owned[field], value, "{field} in {owned}");
    }
    for field in ["item_source", "file_source", "stime", "storage", "file_parent", "item_mtime"] {
        assert!(owned[field].is_u64(), "{field} is a number in {owned}");
    }
    for field in ["share_with_displayname", "displayname_owner"] {
        assert!(owned[field].as_str().is_some_and(|name| !name.is_empty()), "{field}: {owned}");
    }

    let folder = target.unique("CHILD");
    assert_eq!(target.mkcol(&alice, &folder).await, 201);
    let to_folder = shared_with(&target, &alice, &folder, &bob, None).await;
    let (_, folder_share) = share_info(&target, &alice, &to_folder).await;
    assert_eq!(
        (folder_share["permissions"].clone(), folder_share["item_permissions"].clone()),
        (31.into(), 31.into())
    );

    let (_, received) = list_shares(&target, &bob, "shared_with_me=true").await;
    let received = received["ocs"]["data"].as_array().unwrap().clone();
    let find = |id: &str| {
        received
            .iter()
            .find(|share| share["id"].to_string().trim_matches('"') == id)
            .unwrap_or_else(|| panic!("share {id} in bob's shared_with_me"))
            .clone()
    };
    let file_share = find(&id);
    assert_eq!(file_share["path"], format!("/{name}"), "{file_share}");
    assert_eq!(
        (file_share["permissions"].clone(), file_share["item_permissions"].clone()),
        (19.into(), 27.into())
    );
    let folder_share = find(&to_folder);
    assert_eq!(folder_share["path"], format!("/{folder}"), "{folder_share}");
    assert_eq!(
        (folder_share["permissions"].clone(), folder_share["item_permissions"].clone()),
        (31.into(), 31.into())
    );

    unshare_and_remove(&target, &alice, &[&id, &to_folder], &[&name, &folder]).await;
}

/// `sharing-v1.feature` "Creating a share with a group",
/// `sharing-v1-part2a.feature` "Sharee can see the group share" and
/// `sharing-v1-part3.feature` "Deleting a group share as its owner": a
/// share with a group is in its members' `shared_with_me` and mounted in
/// their files; once its owner deletes it, neither the owner nor a member
/// finds it (404).
#[tokio::test]
async fn a_group_share_reaches_its_members_until_its_owner_deletes_it() {
    let target = Target::get().await;
    let (alice, admin) = (target.alice().clone(), target.admin().clone());
    let name = format!("{}.txt", target.unique("welcome"));
    target.put_file(&alice, &name, "for the group").await;
    let (status, created) = share_with_group(&target, &alice, &name, ADMIN_GROUP, None).await;
    assert_eq!(status, 200, "{created}");
    let share = &created["ocs"]["data"];
    assert_eq!(
        (share["share_type"].clone(), share["share_with"].clone()),
        (1.into(), ADMIN_GROUP.into())
    );
    let id = id_of(&created);

    let (_, received) = list_shares(&target, &admin, "shared_with_me=true").await;
    assert!(ids(&received).contains(&id), "a member sees the group share: {received}");
    assert_eq!(content(&target, &admin, &name).await, Ok("for the group".to_string()));
    assert_eq!(share_info(&target, &admin, &id).await.0, 200, "a member gets the share");

    let (status, deleted) = delete_share(&target, &alice, &id).await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(share_info(&target, &alice, &id).await.0, 404, "gone for the owner");
    assert_eq!(share_info(&target, &admin, &id).await.0, 404, "gone for the member");
    assert_eq!(content(&target, &admin, &name).await, Err(404), "unmounted");
    target.cleanup(&alice, &name).await;
}

/// `webdav-related.feature` "A file that is not shared does not have a
/// share-types property", "… shared to a user has a share-types property"
/// and "… shared to a group has a share-types property": `oc:share-types`
/// is there and empty on a node nobody shares, and lists 0 (user) and 1
/// (group) as shares are made.
#[tokio::test]
async fn share_types_name_the_kinds_of_shares_made() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let folder = target.unique("test");
    assert_eq!(target.mkcol(&alice, &folder).await, 201);
    let types = || share_types(&target, &alice, &folder);
    assert!(types().await.is_empty(), "not shared: an empty share-types");
    let to_bob = shared_with(&target, &alice, &folder, &bob, None).await;
    assert_eq!(types().await, ["0"], "shared with a user");
    let to_group = shared_with_group(&target, &alice, &folder, ADMIN_GROUP, None).await;
    assert_eq!(types().await, ["0", "1"], "and with a group");
    unshare_and_remove(&target, &alice, &[&to_bob, &to_group], &[&folder]).await;
}

/// `sharing-v1-part2a.feature` "User is not allowed to reshare file" and
/// "… with more permissions", `sharing-v1-part2b.feature` "User is not
/// allowed to reshare file with additional delete permissions" (a folder:
/// refused) "… for files" (a file: accepted, without delete), "Allow
/// modification of reshare", "Do not allow reshare to exceed permissions"
/// and "Do not allow sub reshare to exceed permissions": a recipient
/// reshares at most what they received, and cannot raise a reshare past it
/// later; without the share permission not at all (404 for all of these).
#[tokio::test]
async fn a_reshare_cannot_exceed_what_was_received() {
    let target = Target::get().await;
    let (alice, bob, admin) =
        (target.alice().clone(), target.bob().clone(), target.admin().clone());
    let file = format!("{}.txt", target.unique("textfile0"));
    let unshareable = format!("{}.txt", target.unique("textfile1"));
    let folder = target.unique("TMP");
    target.put_file(&alice, &file, "to reshare").await;
    target.put_file(&alice, &unshareable, "not to reshare").await;
    assert_eq!(target.mkcol(&alice, &folder).await, 201);
    assert_eq!(target.mkcol(&alice, &format!("{folder}/SUB")).await, 201);
    let mut made = Vec::new();
    for (path, permissions) in [(&unshareable, "1"), (&file, "17"), (&folder, "21")] {
        made.push(shared_with(&target, &alice, path, &bob, Some(permissions)).await);
    }

    let (status, answer) = share_with(&target, &bob, &unshareable, &admin, Some("1")).await;
    assert_eq!(status, 404, "no share permission, no reshare: {answer}");
    let (status, answer) = share_with(&target, &bob, &file, &admin, Some("19")).await;
    assert_eq!(status, 404, "more than received (update): {answer}");
    let (status, answer) = share_with(&target, &bob, &file, &admin, Some("25")).await;
    assert_eq!(status, 200, "delete means nothing on a file: {answer}");
    assert_eq!(answer["ocs"]["data"]["permissions"], 17, "{answer}");
    let reshare_of_file = id_of(&answer);
    let (status, answer) = share_with(&target, &bob, &folder, &admin, Some("29")).await;
    assert_eq!(status, 404, "more than received (delete) on a folder: {answer}");

    let reshare = shared_with(&target, &bob, &folder, &admin, Some("21")).await;
    assert_eq!(set_permissions(&target, &bob, &reshare, "31").await, 404, "raised past 21");
    assert_eq!(set_permissions(&target, &bob, &reshare, "1").await, 200, "lowered");
    let sub = format!("{folder}/SUB");
    let sub_reshare = shared_with(&target, &bob, &sub, &admin, Some("21")).await;
    assert_eq!(set_permissions(&target, &bob, &sub_reshare, "31").await, 404, "the sub-folder too");
    let (_, sub_share) = share_info(&target, &bob, &sub_reshare).await;
    assert_eq!(sub_share["permissions"], 21, "the refused update changed nothing: {sub_share}");

    for id in [reshare_of_file, reshare, sub_reshare] {
        unshare(&target, &bob, &id).await;
    }
    for id in made {
        unshare(&target, &alice, &id).await;
    }
    for path in [&file, &unshareable, &folder] {
        target.cleanup(&alice, path).await;
    }
}

/// `sharing-v1.feature`, "Creating a new room share when Talk is not
/// enabled": share type 10 without Talk is the v1 API's 403 (HTTP 200),
/// naming the node by its full path. (A real server must have Talk off.)
#[tokio::test]
async fn a_room_share_without_talk_is_refused() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let name = format!("{}.txt", target.unique("room"));
    assert!(target.put_file(&alice, &name, "for a room").await.status().is_success());
    let fields = share_fields(&name, "10", "a-room-token");
    let (status, answer) = create_share_at(&target, &alice, SHARES_V1, &fields).await;
    assert_eq!(status, 200, "v1 answers HTTP 200: {answer}");
    assert_eq!(answer["ocs"]["meta"]["statuscode"], 403, "{answer}");
    assert_eq!(
        answer["ocs"]["meta"]["message"],
        format!(
            "Sharing /{}/files/{name} failed because the back end does not support room shares",
            alice.uid
        ),
    );
    target.cleanup(&alice, &name).await;
}
