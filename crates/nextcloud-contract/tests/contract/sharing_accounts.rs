//! Sharing scenarios that need more people than the suite's three
//! accounts, or groups made for them (`sharing_features/sharing-v1*`):
//! the administrator makes the accounts and groups through the
//! provisioning API and deletes them afterwards.

use super::provisioning::{create_account, delete_account, send, statuscode};
use super::sharing::share_with;
use nextcloud_contract::{Account, Target, ocs_json};
use serde_json::Value;

const SHARES: &str = "/ocs/v2.php/apps/files_sharing/api/v1/shares";
const GROUPS: &str = "/ocs/v1.php/cloud/groups";

/// `count` accounts made for the test.
pub(super) async fn accounts(target: &Target, count: usize) -> Vec<Account> {
    let mut made = Vec::with_capacity(count);
    for _ in 0..count {
        made.push(create_account(target, &[]).await);
    }
    made
}

pub(super) async fn delete_accounts(target: &Target, accounts: &[Account]) {
    for account in accounts {
        delete_account(target, &account.uid).await;
    }
}

/// A group made for the test, with `members`.
pub(super) async fn create_group(target: &Target, members: &[&Account]) -> String {
    let gid = target.unique("group");
    let (status, answer) =
        send(target, target.admin(), "POST", GROUPS, &[("groupid", gid.clone())]).await;
    assert_eq!((status, statuscode(&answer)), (200, 100.into()), "{answer}");
    for member in members {
        let path = format!("/ocs/v1.php/cloud/users/{}/groups", member.uid);
        let (status, answer) =
            send(target, target.admin(), "POST", &path, &[("groupid", gid.clone())]).await;
        assert_eq!((status, statuscode(&answer)), (200, 100.into()), "{answer}");
    }
    gid
}

pub(super) async fn delete_group(target: &Target, gid: &str) -> Value {
    let path = format!("{GROUPS}/{gid}?format=json");
    target.ocs_call(target.admin(), "DELETE", &path).await.1
}

pub(super) async fn share_with_group(
    target: &Target,
    owner: &Account,
    path: &str,
    gid: &str,
) -> String {
    let fields = [
        ("path", format!("/{path}")),
        ("shareType", "1".to_string()),
        ("shareWith", gid.to_string()),
    ];
    let response = target.ocs_form(owner, "POST", &format!("{SHARES}?format=json"), &fields).await;
    let (status, answer) = ocs_json(response).await;
    assert_eq!(status, 200, "{answer}");
    answer["ocs"]["data"]["id"].to_string().trim_matches('"').to_string()
}

/// Whether `account` can list the folder or read the file at `path`.
async fn sees(target: &Target, account: &Account, path: &str) -> bool {
    let (status, _) = target.propfind(account, &target.files_path(account, path), "0", "").await;
    status == 207
}

async fn share_status(target: &Target, account: &Account, id: &str) -> u16 {
    target.ocs_call(account, "GET", &format!("{SHARES}/{id}?format=json")).await.0
}

/// "Group shares are deleted when the group is deleted" (sharing-v1-part2a):
/// once the administrator deletes the group, its share is gone for the
/// owner and its former members no longer have the folder.
#[tokio::test]
async fn deleting_a_group_deletes_its_shares() {
    let target = Target::get().await;
    let owner = create_account(&target, &[]).await;
    let member = create_account(&target, &[]).await;
    let gid = create_group(&target, &[&member]).await;
    let folder = target.unique("group-shared");
    assert_eq!(target.mkcol(&owner, &folder).await, 201);
    let id = share_with_group(&target, &owner, &folder, &gid).await;
    assert!(sees(&target, &member, &folder).await, "a member has the folder");

    let deleted = delete_group(&target, &gid).await;
    assert_eq!(statuscode(&deleted), 100, "{deleted}");
    assert_eq!(share_status(&target, &owner, &id).await, 404, "the share is gone");
    assert!(!sees(&target, &member, &folder).await, "the former member lost the folder");
    assert!(sees(&target, &owner, &folder).await, "the owner keeps it");

    delete_account(&target, &owner.uid).await;
    delete_account(&target, &member.uid).await;
}

/// "Keep usergroup shares (#22143)" (sharing-v1-part2b): a member moves
/// the group share into a folder of their own; deleting another member's
/// account leaves it there.
#[tokio::test]
async fn deleting_one_member_keeps_the_group_share_for_the_others() {
    let target = Target::get().await;
    let owner = create_account(&target, &[]).await;
    let (one, other) = (create_account(&target, &[]).await, create_account(&target, &[]).await);
    let gid = create_group(&target, &[&one, &other]).await;
    let tmp = target.unique("TMP");
    assert_eq!(target.mkcol(&owner, &tmp).await, 201);
    share_with_group(&target, &owner, &tmp, &gid).await;
    assert!(sees(&target, &other, &tmp).await);

    assert_eq!(target.mkcol(&one, "myFOLDER").await, 201);
    let moved = target
        .as_account(&one, "MOVE", &target.files_path(&one, &tmp))
        .header("Destination", target.url(&target.files_path(&one, "myFOLDER/myTMP")))
        .send()
        .await
        .unwrap();
    assert_eq!(moved.status(), 201);
    delete_account(&target, &other.uid).await;
    assert!(sees(&target, &one, "myFOLDER/myTMP").await, "the moved share stays");

    delete_group(&target, &gid).await;
    delete_account(&target, &owner.uid).await;
    delete_account(&target, &one.uid).await;
}

/// "Reshared files can be still accessed if a user in the middle removes
/// it." (sharing-v1-part2): a file passed on from one account to the next
/// stays readable at the end of the chain when someone in the middle
/// deletes their mount of it.
#[tokio::test]
async fn a_reshare_outlives_the_resharer_leaving_the_share() {
    let target = Target::get().await;
    let mut chain = Vec::new();
    for _ in 0..4 {
        chain.push(create_account(&target, &[]).await);
    }
    let name = format!("{}.txt", target.unique("textfile0"));
    let put = target.put_file(&chain[0], &name, "Nextcloud test text file").await;
    assert!(put.status().is_success());
    for pair in chain.windows(2) {
        let (status, answer) = share_with(&target, &pair[0], &name, &pair[1], Some("31")).await;
        assert_eq!(status, 200, "{} to {}: {answer}", pair[0].uid, pair[1].uid);
    }
    assert_eq!(target.delete_file(&chain[1], &name).await, 204, "the middle leaves the share");
    let range = target
        .as_account(&chain[3], "GET", &target.files_path(&chain[3], &name))
        .header("Range", "bytes=1-8")
        .send()
        .await
        .unwrap();
    assert_eq!(range.status(), 206);
    assert_eq!(range.text().await.unwrap(), "extcloud");

    for account in &chain {
        delete_account(&target, &account.uid).await;
    }
}

/// "… not allowed to reshare file with more permissions even if shares of
/// same file to other users have them", "… of other files from same user
/// …" and "… of other files from other users …" (sharing-v1-part2a, as a
/// new reshare) and their "Do not allow reshare to exceed permissions even
/// if …" twins (part2b, as an update): what limits a reshare is the share
/// the resharer received of that node, whatever else anyone holds.
#[tokio::test]
async fn a_reshare_is_limited_by_its_own_share_whatever_else_is_shared() {
    let target = Target::get().await;
    let users = accounts(&target, 4).await;
    let [owner, resharer, recipient, other] = [&users[0], &users[1], &users[2], &users[3]];
    let tmp = target.unique("TMP");
    let folder = target.unique("FOLDER");
    let others_folder = target.unique("FOLDER3");
    assert_eq!(target.mkcol(owner, &tmp).await, 201);
    assert_eq!(target.mkcol(owner, &folder).await, 201);
    assert_eq!(target.mkcol(other, &others_folder).await, 201);
    for (from, path, to, permissions) in [
        (owner, &tmp, other, "15"),
        (owner, &folder, resharer, "15"),
        (other, &others_folder, resharer, "15"),
        (owner, &tmp, resharer, "21"),
    ] {
        let (status, answer) = share_with(&target, from, path, to, Some(permissions)).await;
        assert_eq!(status, 200, "{answer}");
    }

    let (status, answer) = share_with(&target, resharer, &tmp, recipient, Some("31")).await;
    assert_eq!(status, 404, "a new reshare past 21: {answer}");
    let (status, answer) = share_with(&target, resharer, &tmp, recipient, Some("21")).await;
    assert_eq!(status, 200, "{answer}");
    let id = answer["ocs"]["data"]["id"].to_string().trim_matches('"').to_string();
    let response = target
        .ocs_form(
            resharer,
            "PUT",
            &format!("{SHARES}/{id}?format=json"),
            &[("permissions", "31".to_string())],
        )
        .await;
    let (status, answer) = ocs_json(response).await;
    assert_eq!(status, 404, "an update past 21: {answer}");

    delete_accounts(&target, &users).await;
}

/// "Empting trashbin" and "orphaned shares" (sharing-v1-part3): a shared
/// folder deleted with its parent is gone for its recipient, in the trash
/// and after the trash is emptied (204).
#[tokio::test]
async fn a_share_deleted_with_its_parent_is_gone_for_the_recipient() {
    let target = Target::get().await;
    let owner = create_account(&target, &[]).await;
    let recipient = create_account(&target, &[]).await;
    assert_eq!(target.mkcol(&owner, "common").await, 201);
    assert_eq!(target.mkcol(&owner, "common/sub").await, 201);
    let (status, answer) = share_with(&target, &owner, "common/sub", &recipient, Some("31")).await;
    assert_eq!(status, 200, "{answer}");
    assert!(sees(&target, &recipient, "sub").await);

    assert_eq!(target.delete_file(&owner, "common").await, 204);
    assert!(!sees(&target, &recipient, "sub").await, "gone while in the trash");
    let trash = format!("/remote.php/dav/trashbin/{}/trash/", owner.uid);
    assert_eq!(target.send(&owner, "DELETE", &trash).await.status(), 204, "the trash emptied");
    assert!(!sees(&target, &recipient, "sub").await, "and after");

    delete_account(&target, &owner.uid).await;
    delete_account(&target, &recipient.uid).await;
}

/// "Get a share with a user with resharing rights", "delete a share with a
/// user with resharing rights that didn't receive the share" (part2b) and
/// "Get a share with a user which didn't received the share": a recipient
/// who may reshare a file sees its other shares, but can neither delete
/// (403) nor edit (403) them; someone with no access gets 404.
#[tokio::test]
async fn resharing_rights_show_sibling_shares_but_do_not_own_them() {
    let target = Target::get().await;
    let users = accounts(&target, 4).await;
    let [owner, resharer, sibling, outsider] = [&users[0], &users[1], &users[2], &users[3]];
    let name = format!("{}.txt", target.unique("textfile0"));
    assert!(target.put_file(owner, &name, "shared twice").await.status().is_success());
    let (status, first) = share_with(&target, owner, &name, resharer, None).await;
    assert_eq!(status, 200, "{first}");
    let (status, second) = share_with(&target, owner, &name, sibling, None).await;
    assert_eq!(status, 200, "{second}");
    let id = second["ocs"]["data"]["id"].to_string().trim_matches('"').to_string();
    let path = format!("{SHARES}/{id}?format=json");

    let (status, seen) = target.ocs_call(resharer, "GET", &path).await;
    assert_eq!(status, 200, "{seen}");
    let seen = &seen["ocs"]["data"][0];
    assert_eq!(seen["share_with"], sibling.uid.as_str(), "{seen}");
    assert_eq!(
        (seen["uid_owner"].clone(), seen["permissions"].clone()),
        (owner.uid.as_str().into(), 19.into())
    );
    assert_eq!(seen["path"], format!("/{name}"), "the path as the resharer sees it");
    assert_eq!(target.ocs_call(outsider, "GET", &path).await.0, 404);

    let v1 = format!("/ocs/v1.php/apps/files_sharing/api/v1/shares/{id}?format=json");
    let (status, refused) = target.ocs_call(resharer, "DELETE", &v1).await;
    assert_eq!(
        (status, refused["ocs"]["meta"]["statuscode"].clone()),
        (200, 403.into()),
        "{refused}"
    );
    let response =
        target.ocs_form(resharer, "PUT", &path, &[("permissions", "1".to_string())]).await;
    assert_eq!(ocs_json(response).await.0, 403, "not theirs to edit");
    assert!(sees(&target, resharer, &name).await, "and their own share is untouched");
    assert!(sees(&target, sibling, &name).await, "nor the sibling's");
    delete_accounts(&target, &users).await;
}

/// The shares `?subfiles=true&path=…` lists for `account`: (sharer, file
/// owner, recipient, path) of each, in the server's order.
async fn subfile_shares(target: &Target, account: &Account, path: &str) -> Vec<[String; 4]> {
    let query = format!("{SHARES}?format=json&subfiles=true&path={path}");
    let (status, answer) = target.ocs_call(account, "GET", &query).await;
    assert_eq!(status, 200, "{answer}");
    let text = |share: &Value, field: &str| share[field].as_str().unwrap_or_default().to_string();
    answer["ocs"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|share| {
            [
                text(share, "uid_owner"),
                text(share, "uid_file_owner"),
                text(share, "share_with"),
                text(share, "path"),
            ]
        })
        .collect()
}

/// "getting all shares including subfiles in a directory", "… with
/// received shares" and "… with shares in subdirectories" (part2): the
/// shares of a folder's direct children, not those made with the caller,
/// not those of deeper nodes.
#[tokio::test]
async fn subfiles_lists_the_shares_of_a_folders_children() {
    let target = Target::get().await;
    let [owner, one, two] = [
        create_account(&target, &[]).await,
        create_account(&target, &[]).await,
        create_account(&target, &[]).await,
    ];
    assert_eq!(target.mkcol(&owner, "PARENT").await, 201);
    assert_eq!(target.mkcol(&owner, "PARENT/CHILD").await, 201);
    for (account, path) in [
        (&owner, "PARENT/parent.txt"),
        (&owner, "PARENT/CHILD/child.txt"),
        (&owner, "textfile0.txt"),
        (&one, "textfile0.txt"),
    ] {
        assert!(target.put_file(account, path, "content").await.status().is_success());
    }
    for (from, path, to) in [
        (&owner, "PARENT/CHILD", &one),
        (&owner, "PARENT/parent.txt", &two),
        (&owner, "PARENT/CHILD/child.txt", &two),
        (&owner, "textfile0.txt", &one),
        (&one, "textfile0.txt", &owner),
    ] {
        let (status, answer) = share_with(&target, from, path, to, None).await;
        assert_eq!(status, 200, "{path}: {answer}");
    }
    let o = owner.uid.clone();
    assert_eq!(
        subfile_shares(&target, &owner, "PARENT").await,
        vec![
            [o.clone(), o.clone(), one.uid.clone(), "/PARENT/CHILD".to_string()],
            [o.clone(), o.clone(), two.uid.clone(), "/PARENT/parent.txt".to_string()],
        ]
    );
    let root = subfile_shares(&target, &owner, "/").await;
    assert_eq!(
        root,
        vec![[o.clone(), o.clone(), one.uid.clone(), "/textfile0.txt".to_string()]],
        "not the one received"
    );
    for account in [&owner, &one, &two] {
        delete_account(&target, &account.uid).await;
    }
}

/// "getting all shares including subfiles in a shared directory with
/// reshares", "… in a directory by a resharer" and "… by a resharer after
/// revoking the resharing rights" (part2): the owner and a resharer see
/// every reshare below the folder; without resharing rights, only one's
/// own.
#[tokio::test]
async fn subfiles_shows_reshares_to_whoever_may_reshare() {
    let target = Target::get().await;
    let users = accounts(&target, 4).await;
    let [owner, one, two, three] = [&users[0], &users[1], &users[2], &users[3]];
    assert_eq!(target.mkcol(owner, "PARENT").await, 201);
    assert_eq!(target.mkcol(owner, "PARENT/CHILD").await, 201);
    let (status, first) = share_with(&target, owner, "PARENT", one, Some("31")).await;
    assert_eq!(status, 200, "{first}");
    let (status, answer) = share_with(&target, one, "PARENT/CHILD", two, Some("31")).await;
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = share_with(&target, two, "CHILD", three, Some("31")).await;
    assert_eq!(status, 200, "{answer}");
    let row = |by: &Account, to: &Account, path: &str| {
        [by.uid.clone(), owner.uid.clone(), to.uid.clone(), path.to_string()]
    };
    assert_eq!(
        subfile_shares(&target, owner, "PARENT").await,
        vec![row(one, two, "/PARENT/CHILD"), row(two, three, "/PARENT/CHILD")]
    );
    assert_eq!(
        subfile_shares(&target, one, "PARENT").await,
        vec![row(one, two, "/PARENT/CHILD"), row(two, three, "/PARENT/CHILD")]
    );
    let id = first["ocs"]["data"]["id"].to_string().trim_matches('"').to_string();
    let response = target
        .ocs_form(
            owner,
            "PUT",
            &format!("{SHARES}/{id}?format=json"),
            &[("permissions", "1".to_string())],
        )
        .await;
    assert_eq!(response.status(), 200);
    assert_eq!(subfile_shares(&target, one, "PARENT").await, vec![row(one, two, "/PARENT/CHILD")]);
    delete_accounts(&target, &users).await;
}

/// `oc:permissions` of `path` as `account` sees it.
async fn dav_permissions(target: &Target, account: &Account, path: &str) -> String {
    let body = r#"<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:permissions/></d:prop></d:propfind>"#;
    let (status, multistatus) =
        target.propfind(account, &target.files_path(account, path), "0", body).await;
    assert_eq!(status, 207, "PROPFIND {path} as {}", account.uid);
    let response = &multistatus.unwrap().responses[0];
    response.text("http://owncloud.org/ns", "permissions").unwrap_or_default()
}

async fn share_folder_with_group(
    target: &Target,
    owner: &Account,
    path: &str,
    gid: &str,
    permissions: &str,
) {
    let fields = [
        ("path", format!("/{path}")),
        ("shareType", "1".to_string()),
        ("shareWith", gid.to_string()),
        ("permissions", permissions.to_string()),
    ];
    let response = target.ocs_form(owner, "POST", &format!("{SHARES}?format=json"), &fields).await;
    let (status, answer) = ocs_json(response).await;
    assert_eq!(status, 200, "{path} with {gid}: {answer}");
}

/// The "Merging shares for recipient when shared from outside …" scenarios
/// (with group and member, with different permissions, with two groups,
/// two groups with different permissions, two groups and member) and
/// "User is allowed to reshare file with more permissions if shares of
/// same file to same user have them" / "Allow reshare to exceed
/// permissions if shares of same file to same user have them": the shares
/// of one node a recipient gets by several channels are one folder, with
/// the permissions of all of them together.
#[tokio::test]
async fn shares_of_one_node_merge_into_one_mount() {
    let target = Target::get().await;
    let owner = create_account(&target, &[]).await;
    let member = create_account(&target, &[]).await;
    let next = create_account(&target, &[]).await;
    let one = create_group(&target, &[&member]).await;
    let two = create_group(&target, &[&member]).await;
    // (folder, its group shares (group, permissions), a user share's permissions)
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, Option<&'a str>);
    let cases: [Case; 5] = [
        ("merge-test-outside", vec![(&one, "31")], Some("31")),
        ("merge-test-outside-perms", vec![(&one, "1")], Some("31")),
        ("merge-test-outside-twogroups", vec![(&one, "31"), (&two, "31")], None),
        ("merge-test-outside-twogroups-perms", vec![(&one, "1"), (&two, "31")], None),
        ("merge-test-outside-twogroups-member-perms", vec![(&one, "1"), (&two, "31")], Some("1")),
    ];
    for (folder, groups, user) in cases {
        assert_eq!(target.mkcol(&owner, folder).await, 201);
        for (gid, permissions) in groups {
            share_folder_with_group(&target, &owner, folder, gid, permissions).await;
        }
        if let Some(permissions) = user {
            let (status, answer) =
                share_with(&target, &owner, folder, &member, Some(permissions)).await;
            assert_eq!(status, 200, "{folder}: {answer}");
        }
        assert!(sees(&target, &member, folder).await, "{folder}");
        assert!(!sees(&target, &member, &format!("{folder} (2)")).await, "{folder}: one mount");
        assert_eq!(dav_permissions(&target, &member, folder).await, "SRGDNVCK", "{folder}");
    }

    // A group share (15) and a user share (17) of one folder: reshares
    // may have the union (31).
    assert_eq!(target.mkcol(&owner, "TMP").await, 201);
    share_folder_with_group(&target, &owner, "TMP", &one, "15").await;
    let (status, answer) = share_with(&target, &owner, "TMP", &member, Some("17")).await;
    assert_eq!(status, 200, "{answer}");
    let (status, reshare) = share_with(&target, &member, "TMP", &next, Some("17")).await;
    assert_eq!(status, 200, "{reshare}");
    let id = reshare["ocs"]["data"]["id"].to_string().trim_matches('"').to_string();
    let response = target
        .ocs_form(
            &member,
            "PUT",
            &format!("{SHARES}/{id}?format=json"),
            &[("permissions", "31".to_string())],
        )
        .await;
    let (status, answer) = ocs_json(response).await;
    assert_eq!(status, 200, "the union allows it: {answer}");
    for gid in [&one, &two] {
        delete_group(&target, gid).await;
    }
    for account in [&owner, &member, &next] {
        delete_account(&target, &account.uid).await;
    }
}

/// "Merging shares for recipient when shared from inside with group", "…
/// with two groups" and "… with group with less permissions": an owner in
/// the groups they share with sees their own folder once, with their own
/// permissions.
#[tokio::test]
async fn an_owner_in_the_groups_they_share_with_sees_one_folder() {
    let target = Target::get().await;
    let owner = create_account(&target, &[]).await;
    let one = create_group(&target, &[&owner]).await;
    let two = create_group(&target, &[&owner]).await;
    assert_eq!(target.mkcol(&owner, "merge-test-inside-twogroups-perms").await, 201);
    share_folder_with_group(&target, &owner, "merge-test-inside-twogroups-perms", &one, "31").await;
    share_folder_with_group(&target, &owner, "merge-test-inside-twogroups-perms", &two, "1").await;
    for suffix in [" (2)", " (3)"] {
        assert!(
            !sees(&target, &owner, &format!("merge-test-inside-twogroups-perms{suffix}")).await
        );
    }
    assert_eq!(
        dav_permissions(&target, &owner, "merge-test-inside-twogroups-perms").await,
        "RGDNVCK"
    );
    for gid in [&one, &two] {
        delete_group(&target, gid).await;
    }
    delete_account(&target, &owner.uid).await;
}

/// "Merging shares for recipient when shared from outside with group then
/// user and recipient renames in between" and "… with user then group …":
/// the second share of a node joins the mount where the recipient moved
/// the first.
#[tokio::test]
async fn a_second_share_joins_the_renamed_mount() {
    let target = Target::get().await;
    let owner = create_account(&target, &[]).await;
    let member = create_account(&target, &[]).await;
    let gid = create_group(&target, &[&member]).await;
    for group_first in [true, false] {
        let folder = target.unique("merge-test-rename");
        assert_eq!(target.mkcol(&owner, &folder).await, 201);
        let first_user = || async {
            let (status, answer) = share_with(&target, &owner, &folder, &member, Some("31")).await;
            assert_eq!(status, 200, "{answer}");
        };
        if group_first {
            share_folder_with_group(&target, &owner, &folder, &gid, "31").await;
        } else {
            first_user().await;
        }
        let renamed = format!("{folder}-renamed");
        let moved = target
            .as_account(&member, "MOVE", &target.files_path(&member, &folder))
            .header("Destination", target.url(&target.files_path(&member, &renamed)))
            .send()
            .await
            .unwrap();
        assert_eq!(moved.status(), 201);
        if group_first {
            first_user().await;
        } else {
            share_folder_with_group(&target, &owner, &folder, &gid, "31").await;
        }
        assert_eq!(
            dav_permissions(&target, &member, &renamed).await,
            "SRGDNVCK",
            "group first: {group_first}"
        );
        assert!(!sees(&target, &member, &folder).await, "group first: {group_first}");
    }
    delete_group(&target, &gid).await;
    delete_account(&target, &owner.uid).await;
    delete_account(&target, &member.uid).await;
}

/// "Share of folder and sub-folder to same user - core#20645"
/// (part2b): a folder shared with a user and its sub-folder with a group
/// the user is in are two mounts, the sub-folder also inside the first.
#[tokio::test]
async fn a_folder_and_its_sub_folder_shared_apart_are_two_mounts() {
    let target = Target::get().await;
    let owner = create_account(&target, &[]).await;
    let member = create_account(&target, &[]).await;
    let gid = create_group(&target, &[&member]).await;
    assert_eq!(target.mkcol(&owner, "PARENT").await, 201);
    assert_eq!(target.mkcol(&owner, "PARENT/CHILD").await, 201);
    assert!(target.put_file(&owner, "PARENT/CHILD/child.txt", "child").await.status().is_success());
    let (status, answer) = share_with(&target, &owner, "PARENT", &member, Some("31")).await;
    assert_eq!(status, 200, "{answer}");
    share_folder_with_group(&target, &owner, "PARENT/CHILD", &gid, "31").await;
    for path in ["PARENT", "PARENT/CHILD", "PARENT/CHILD/child.txt", "CHILD", "CHILD/child.txt"] {
        assert!(sees(&target, &member, path).await, "{path}");
    }
    delete_group(&target, &gid).await;
    delete_account(&target, &owner.uid).await;
    delete_account(&target, &member.uid).await;
}

/// "getting share info of a group share" (part2), "Deleting a group share
/// as user" and "unshare from self" (part3): the owner sees the share on
/// their home, a member on the mount (`shared::/…`, the mount's name as
/// target and path); a member who deletes the share leaves it alone — it
/// is gone from their files (their root's etag changes) and stays the
/// owner's (whose folder's etag does not).
#[tokio::test]
async fn a_group_share_seen_by_owner_and_member_and_left_by_one() {
    let target = Target::get().await;
    let owner = create_account(&target, &[]).await;
    let member = create_account(&target, &[]).await;
    let gid = create_group(&target, &[&owner, &member]).await;
    assert!(
        target.put_file(&member, "textfile0.txt", "the member's own").await.status().is_success()
    );
    assert_eq!(target.mkcol(&owner, "PARENT").await, 201);
    assert!(target.put_file(&owner, "PARENT/textfile0.txt", "shared").await.status().is_success());
    let fields = [
        ("path", "/PARENT/textfile0.txt".to_string()),
        ("shareType", "1".to_string()),
        ("shareWith", gid.clone()),
    ];
    let response = target.ocs_form(&owner, "POST", &format!("{SHARES}?format=json"), &fields).await;
    let (status, created) = ocs_json(response).await;
    assert_eq!(status, 200, "{created}");
    let id = created["ocs"]["data"]["id"].to_string().trim_matches('"').to_string();
    let info = |account: &Account| {
        let target = &target;
        let path = format!("{SHARES}/{id}?format=json");
        let account = account.clone();
        async move { target.ocs_call(&account, "GET", &path).await.1["ocs"]["data"][0].clone() }
    };
    let owners = info(&owner).await;
    for (field, value) in [
        ("share_type", Value::from(1)),
        ("share_with", gid.as_str().into()),
        ("share_with_displayname", gid.as_str().into()),
        ("file_target", "/textfile0.txt".into()),
        ("path", "/PARENT/textfile0.txt".into()),
        ("permissions", 19.into()),
        ("storage_id", format!("home::{}", owner.uid).into()),
    ] {
        assert_eq!(owners[field], value, "owner's {field}: {owners}");
    }
    let members = info(&member).await;
    for (field, value) in [
        ("file_target", Value::from("/textfile0 (2).txt")),
        ("path", "/textfile0 (2).txt".into()),
        ("permissions", 19.into()),
        ("storage_id", "shared::/textfile0 (2).txt".into()),
    ] {
        assert_eq!(members[field], value, "member's {field}: {members}");
    }

    let etag = |account: &Account, path: &'static str| {
        let target = &target;
        let account = account.clone();
        async move {
            let url = target.files_path(&account, path);
            let (_, multistatus) = target.propfind(&account, &url, "0", "").await;
            multistatus.unwrap().responses[0].text("DAV:", "getetag").unwrap_or_default()
        }
    };
    let (owners_folder, members_root) = (etag(&owner, "PARENT").await, etag(&member, "").await);
    let (status, left) =
        target.ocs_call(&member, "DELETE", &format!("{SHARES}/{id}?format=json")).await;
    assert_eq!(status, 200, "{left}");
    assert!(!sees(&target, &member, "textfile0 (2).txt").await, "gone from the member's files");
    assert_ne!(etag(&member, "").await, members_root, "the member's root changed");
    assert_eq!(etag(&owner, "PARENT").await, owners_folder, "the owner's folder did not");
    assert_eq!(share_status(&target, &owner, &id).await, 200, "the share stays the owner's");

    // "sharing again an own file while belonging to a group" (part3).
    let (status, _) =
        target.ocs_call(&owner, "DELETE", &format!("{SHARES}/{id}?format=json")).await;
    assert_eq!(status, 200);
    let response = target.ocs_form(&owner, "POST", &format!("{SHARES}?format=json"), &fields).await;
    assert_eq!(ocs_json(response).await.0, 200, "shared again");
    delete_group(&target, &gid).await;
    delete_account(&target, &owner.uid).await;
    delete_account(&target, &member.uid).await;
}

/// "keep group permissions in sync" (part2a) and "Delete all group shares"
/// (part2b): a member moves a group share into a folder of their own; the
/// owner's update of its permissions reaches it there, and the owner's
/// delete takes it away from there.
#[tokio::test]
async fn a_moved_group_mount_follows_its_share() {
    let target = Target::get().await;
    let owner = create_account(&target, &[]).await;
    let member = create_account(&target, &[]).await;
    let gid = create_group(&target, &[&member]).await;
    assert!(target.put_file(&owner, "textfile0.txt", "in sync").await.status().is_success());
    assert!(target.put_file(&member, "textfile0.txt", "the member's").await.status().is_success());
    assert_eq!(target.mkcol(&member, "FOLDER").await, 201);
    let fields = [
        ("path", "/textfile0.txt".to_string()),
        ("shareType", "1".to_string()),
        ("shareWith", gid.clone()),
    ];
    let response = target.ocs_form(&owner, "POST", &format!("{SHARES}?format=json"), &fields).await;
    let (status, created) = ocs_json(response).await;
    assert_eq!(status, 200, "{created}");
    let id = created["ocs"]["data"]["id"].to_string().trim_matches('"').to_string();
    let moved = target
        .as_account(&member, "MOVE", &target.files_path(&member, "textfile0 (2).txt"))
        .header("Destination", target.url(&target.files_path(&member, "FOLDER/textfile0.txt")))
        .send()
        .await
        .unwrap();
    assert_eq!(moved.status(), 201);

    let response = target
        .ocs_form(
            &owner,
            "PUT",
            &format!("{SHARES}/{id}?format=json"),
            &[("permissions", "1".to_string())],
        )
        .await;
    let (status, updated) = ocs_json(response).await;
    assert_eq!(status, 200, "{updated}");
    let shown = &updated["ocs"]["data"];
    assert_eq!(
        (shown["file_target"].clone(), shown["permissions"].clone()),
        ("/textfile0.txt".into(), 1.into())
    );
    let moved_permissions = dav_permissions(&target, &member, "FOLDER/textfile0.txt").await;
    assert!(
        !moved_permissions.contains('W') && !moved_permissions.contains('R'),
        "read only where moved: {moved_permissions}"
    );
    let put = target.put_file(&member, "FOLDER/textfile0.txt", "overwritten").await;
    assert_eq!(put.status(), 403, "no writes through it now");
    assert_eq!(
        target.get_text(&member, &target.files_path(&member, "textfile0.txt")).await.1,
        "the member's"
    );

    let (status, _) =
        target.ocs_call(&owner, "DELETE", &format!("{SHARES}/{id}?format=json")).await;
    assert_eq!(status, 200);
    let (_, received) =
        target.ocs_call(&member, "GET", &format!("{SHARES}?format=json&shared_with_me=true")).await;
    let ids: Vec<String> = received["ocs"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|share| share["id"].to_string().trim_matches('"').to_string())
        .collect();
    assert!(!ids.contains(&id), "{received}");
    assert!(!sees(&target, &member, "FOLDER/textfile0.txt").await);
    delete_group(&target, &gid).await;
    delete_account(&target, &owner.uid).await;
    delete_account(&target, &member.uid).await;
}

/// The recipients the share list names for `account` with `query`.
async fn listed_recipients(target: &Target, account: &Account, query: &str) -> Vec<String> {
    let (status, answer) =
        target.ocs_call(account, "GET", &format!("{SHARES}?format=json&{query}")).await;
    assert_eq!(status, 200, "{answer}");
    let mut with: Vec<String> = answer["ocs"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|share| share["share_with"].as_str().unwrap_or_default().to_string())
        .collect();
    with.sort();
    with
}

/// "getting all shares of a file with reshares" (part2) and "getting all
/// shares of a file with a user with resharing rights but not yourself"
/// (sharing-v1): `reshares=true` with a path lists every share of the
/// node — to its owner, and to a recipient who may reshare it, but for the
/// share made with them.
#[tokio::test]
async fn reshares_lists_every_share_of_the_node_to_whoever_may_reshare() {
    let target = Target::get().await;
    let users = accounts(&target, 4).await;
    let [owner, one, two, three] = [&users[0], &users[1], &users[2], &users[3]];
    assert!(target.put_file(owner, "textfile0.txt", "listed").await.status().is_success());
    let (status, answer) = share_with(&target, owner, "textfile0.txt", one, None).await;
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = share_with(&target, one, "textfile0.txt", two, None).await;
    assert_eq!(status, 200, "{answer}");
    let mut expected = vec![one.uid.clone(), two.uid.clone()];
    expected.sort();
    assert_eq!(
        listed_recipients(&target, owner, "reshares=true&path=textfile0.txt").await,
        expected
    );
    assert!(!expected.contains(&three.uid));

    let name = format!("{}.txt", target.unique("second"));
    assert!(target.put_file(owner, &name, "listed").await.status().is_success());
    for recipient in [one, two] {
        let (status, answer) = share_with(&target, owner, &name, recipient, None).await;
        assert_eq!(status, 200, "{answer}");
    }
    let seen = listed_recipients(&target, one, &format!("reshares=true&path={name}")).await;
    assert_eq!(seen, vec![two.uid.clone()], "not the share made with them");
    delete_accounts(&target, &users).await;
}

/// "getting inherited shares of a file" (sharing-v1): `/shares/inherited`
/// lists the shares of the folders above a node, as its owner and as a
/// recipient who may reshare see them; someone who cannot reach the node
/// gets 404.
#[tokio::test]
async fn inherited_shares_are_those_of_the_folders_above() {
    let target = Target::get().await;
    let users = accounts(&target, 4).await;
    let [owner, one, two, three] = [&users[0], &users[1], &users[2], &users[3]];
    assert_eq!(target.mkcol(owner, "first").await, 201);
    assert_eq!(target.mkcol(owner, "first/second").await, 201);
    for path in ["first/test1.txt", "first/second/test2.txt"] {
        assert!(target.put_file(owner, path, "inherited").await.status().is_success());
    }
    for (path, to, permissions) in [
        ("first", one, Some("16")),
        ("first/second", two, None),
        ("first/test1.txt", three, None),
        ("first/second/test2.txt", three, None),
    ] {
        let (status, answer) = share_with(&target, owner, path, to, permissions).await;
        assert_eq!(status, 200, "{path}: {answer}");
    }
    let inherited = |account: &Account, path: &'static str| {
        let target = &target;
        let account = account.clone();
        async move {
            let query = format!("{SHARES}/inherited?format=json&path={path}");
            let (status, answer) = target.ocs_call(&account, "GET", &query).await;
            let mut with: Vec<String> = answer["ocs"]["data"]
                .as_array()
                .map(|list| {
                    list.iter()
                        .map(|share| share["share_with"].as_str().unwrap_or_default().to_string())
                        .collect()
                })
                .unwrap_or_default();
            with.sort();
            (status, with)
        }
    };
    let mut both = vec![one.uid.clone(), two.uid.clone()];
    both.sort();
    assert_eq!(inherited(owner, "first/second/test2.txt").await, (200, both));
    assert_eq!(inherited(owner, "first/test1.txt").await, (200, vec![one.uid.clone()]));
    assert_eq!(inherited(two, "first/test1.txt").await.0, 404, "not theirs to reach");
    assert_eq!(inherited(one, "first/second/test2.txt").await, (200, vec![two.uid.clone()]));
    assert_eq!(inherited(one, "first/test1.txt").await, (200, vec![]));
    delete_accounts(&target, &users).await;
}

/// "Link shares inside of group shares keep their original data when the
/// root share is updated" (part3): a member's link inside a group share
/// loses what the owner takes from the group share, and keeps the rest of
/// its own (no expiry of its own, its target).
#[tokio::test]
async fn a_link_inside_a_group_share_is_capped_by_the_group_share() {
    let target = Target::get().await;
    let owner = create_account(&target, &[]).await;
    let member = create_account(&target, &[]).await;
    let gid = create_group(&target, &[&member]).await;
    assert_eq!(target.mkcol(&owner, "share").await, 201);
    let fields = [
        ("path", "/share".to_string()),
        ("shareType", "1".to_string()),
        ("shareWith", gid.clone()),
    ];
    let response = target.ocs_form(&owner, "POST", &format!("{SHARES}?format=json"), &fields).await;
    let (status, group_share) = ocs_json(response).await;
    assert_eq!(status, 200, "{group_share}");
    assert_eq!(target.mkcol(&owner, "share/subfolder").await, 201);
    let fields = [
        ("path", "/share/subfolder".to_string()),
        ("shareType", "3".to_string()),
        ("permissions", "31".to_string()),
    ];
    let response =
        target.ocs_form(&member, "POST", &format!("{SHARES}?format=json"), &fields).await;
    let (status, link) = ocs_json(response).await;
    assert_eq!((status, link["ocs"]["data"]["permissions"].clone()), (200, 31.into()), "{link}");

    let id = group_share["ocs"]["data"]["id"].to_string().trim_matches('"').to_string();
    let in_three_days =
        (chrono::Utc::now() + chrono::Duration::days(3)).format("%Y-%m-%d").to_string();
    let response = target
        .ocs_form(
            &owner,
            "PUT",
            &format!("{SHARES}/{id}?format=json"),
            &[("permissions", "23".to_string()), ("expireDate", in_three_days)],
        )
        .await;
    assert_eq!(response.status(), 200);
    let link_id = link["ocs"]["data"]["id"].to_string().trim_matches('"').to_string();
    let (_, shown) =
        target.ocs_call(&member, "GET", &format!("{SHARES}/{link_id}?format=json")).await;
    let shown = &shown["ocs"]["data"][0];
    assert_eq!(
        (
            shown["share_type"].clone(),
            shown["permissions"].clone(),
            shown["file_target"].clone(),
            shown["expiration"].clone()
        ),
        (3.into(), 23.into(), "/subfolder".into(), Value::Null),
        "{shown}"
    );
    delete_group(&target, &gid).await;
    delete_account(&target, &owner.uid).await;
    delete_account(&target, &member.uid).await;
}
