//! Sharing scenarios that need more people than the suite's three
//! accounts, or groups made for them (`sharing_features/sharing-v1*`):
//! the administrator makes the accounts and groups through the
//! provisioning API and deletes them afterwards ([`Throwaway`]).

use super::dav::{props_of, sees};
use super::provisioning::statuscode;
use super::shares::{
    SHARES, create_share, day_in, delete_share, id_of, ids, list_shares, share_info, share_with,
    share_with_group, shared_with, shared_with_group, update_permissions, update_share,
};
use super::sharing::transfer;
use super::throwaway::Throwaway;
use nextcloud_contract::{Account, Target};
use serde_json::Value;

/// "Group shares are deleted when the group is deleted" (sharing-v1-part2a):
/// once the administrator deletes the group, its share is gone for the
/// owner and its former members no longer have the folder.
#[tokio::test]
async fn deleting_a_group_deletes_its_shares() {
    let target = Target::get().await;
    let (people, [owner, member]) = Throwaway::accounts(&target).await;
    let gid = people.group(&[&member]).await;
    let folder = target.unique("group-shared");
    assert_eq!(target.mkcol(&owner, &folder).await, 201);
    let id = shared_with_group(&target, &owner, &folder, &gid, None).await;
    assert!(sees(&target, &member, &folder).await, "a member has the folder");

    let deleted = people.delete_group(&gid).await;
    assert_eq!(statuscode(&deleted), 100, "{deleted}");
    assert_eq!(share_info(&target, &owner, &id).await.0, 404, "the share is gone");
    assert!(!sees(&target, &member, &folder).await, "the former member lost the folder");
    assert!(sees(&target, &owner, &folder).await, "the owner keeps it");
    people.remove().await;
}

/// "Keep usergroup shares (#22143)" (sharing-v1-part2b): a member moves
/// the group share into a folder of their own; deleting another member's
/// account leaves it there.
#[tokio::test]
async fn deleting_one_member_keeps_the_group_share_for_the_others() {
    let target = Target::get().await;
    let (people, [owner, one, other]) = Throwaway::accounts(&target).await;
    let gid = people.group(&[&one, &other]).await;
    let tmp = target.unique("TMP");
    assert_eq!(target.mkcol(&owner, &tmp).await, 201);
    shared_with_group(&target, &owner, &tmp, &gid, None).await;
    assert!(sees(&target, &other, &tmp).await);

    assert_eq!(target.mkcol(&one, "myFOLDER").await, 201);
    assert_eq!(transfer(&target, &one, "MOVE", &tmp, "myFOLDER/myTMP").await, 201);
    people.delete_account(&other).await;
    assert!(sees(&target, &one, "myFOLDER/myTMP").await, "the moved share stays");
    people.remove().await;
}

/// "Reshared files can be still accessed if a user in the middle removes
/// it." (sharing-v1-part2): a file passed on from one account to the next
/// stays readable at the end of the chain when someone in the middle
/// deletes their mount of it.
#[tokio::test]
async fn a_reshare_outlives_the_resharer_leaving_the_share() {
    let target = Target::get().await;
    let (people, chain) = Throwaway::accounts::<4>(&target).await;
    let name = format!("{}.txt", target.unique("textfile0"));
    let put = target.put_file(&chain[0], &name, "Nextcloud test text file").await;
    assert!(put.status().is_success());
    for pair in chain.windows(2) {
        shared_with(&target, &pair[0], &name, &pair[1], Some("31")).await;
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
    people.remove().await;
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
    let (people, users) = Throwaway::accounts::<4>(&target).await;
    let [owner, resharer, recipient, other] = &users;
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
        shared_with(&target, from, path, to, Some(permissions)).await;
    }

    let (status, answer) = share_with(&target, resharer, &tmp, recipient, Some("31")).await;
    assert_eq!(status, 404, "a new reshare past 21: {answer}");
    let id = shared_with(&target, resharer, &tmp, recipient, Some("21")).await;
    let (status, answer) = update_permissions(&target, resharer, &id, "31").await;
    assert_eq!(status, 404, "an update past 21: {answer}");
    people.remove().await;
}

/// "Empting trashbin" and "orphaned shares" (sharing-v1-part3): a shared
/// folder deleted with its parent is gone for its recipient, in the trash
/// and after the trash is emptied (204).
#[tokio::test]
async fn a_share_deleted_with_its_parent_is_gone_for_the_recipient() {
    let target = Target::get().await;
    let (people, [owner, recipient]) = Throwaway::accounts(&target).await;
    assert_eq!(target.mkcol(&owner, "common").await, 201);
    assert_eq!(target.mkcol(&owner, "common/sub").await, 201);
    shared_with(&target, &owner, "common/sub", &recipient, Some("31")).await;
    assert!(sees(&target, &recipient, "sub").await);

    assert_eq!(target.delete_file(&owner, "common").await, 204);
    assert!(!sees(&target, &recipient, "sub").await, "gone while in the trash");
    let trash = format!("/remote.php/dav/trashbin/{}/trash/", owner.uid);
    assert_eq!(target.send(&owner, "DELETE", &trash).await.status(), 204, "the trash emptied");
    assert!(!sees(&target, &recipient, "sub").await, "and after");
    people.remove().await;
}

/// "Get a share with a user with resharing rights", "delete a share with a
/// user with resharing rights that didn't receive the share" (part2b) and
/// "Get a share with a user which didn't received the share": a recipient
/// who may reshare a file sees its other shares, but can neither delete
/// (403) nor edit (403) them; someone with no access gets 404.
#[tokio::test]
async fn resharing_rights_show_sibling_shares_but_do_not_own_them() {
    let target = Target::get().await;
    let (people, users) = Throwaway::accounts::<4>(&target).await;
    let [owner, resharer, sibling, outsider] = &users;
    let name = format!("{}.txt", target.unique("textfile0"));
    assert!(target.put_file(owner, &name, "shared twice").await.status().is_success());
    shared_with(&target, owner, &name, resharer, None).await;
    let id = shared_with(&target, owner, &name, sibling, None).await;

    let (status, seen) = share_info(&target, resharer, &id).await;
    assert_eq!(status, 200, "{seen}");
    assert_eq!(seen["share_with"], sibling.uid.as_str(), "{seen}");
    assert_eq!(
        (seen["uid_owner"].clone(), seen["permissions"].clone()),
        (owner.uid.as_str().into(), 19.into())
    );
    assert_eq!(seen["path"], format!("/{name}"), "the path as the resharer sees it");
    assert_eq!(share_info(&target, outsider, &id).await.0, 404);

    let v1 = format!("/ocs/v1.php/apps/files_sharing/api/v1/shares/{id}?format=json");
    let (status, refused) = target.ocs_call(resharer, "DELETE", &v1).await;
    assert_eq!(
        (status, refused["ocs"]["meta"]["statuscode"].clone()),
        (200, 403.into()),
        "{refused}"
    );
    let (status, _) = update_permissions(&target, resharer, &id, "1").await;
    assert_eq!(status, 403, "not theirs to edit");
    assert!(sees(&target, resharer, &name).await, "and their own share is untouched");
    assert!(sees(&target, sibling, &name).await, "nor the sibling's");
    people.remove().await;
}

/// The shares `?subfiles=true&path=…` lists for `account`: (sharer, file
/// owner, recipient, path) of each, in the server's order.
async fn subfile_shares(target: &Target, account: &Account, path: &str) -> Vec<[String; 4]> {
    let query = format!("subfiles=true&path={path}");
    let (status, answer) = list_shares(target, account, &query).await;
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
    let (people, [owner, one, two]) = Throwaway::accounts(&target).await;
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
        shared_with(&target, from, path, to, None).await;
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
    people.remove().await;
}

/// "getting all shares including subfiles in a shared directory with
/// reshares", "… in a directory by a resharer" and "… by a resharer after
/// revoking the resharing rights" (part2): the owner and a resharer see
/// every reshare below the folder; without resharing rights, only one's
/// own.
#[tokio::test]
async fn subfiles_shows_reshares_to_whoever_may_reshare() {
    let target = Target::get().await;
    let (people, users) = Throwaway::accounts::<4>(&target).await;
    let [owner, one, two, three] = &users;
    assert_eq!(target.mkcol(owner, "PARENT").await, 201);
    assert_eq!(target.mkcol(owner, "PARENT/CHILD").await, 201);
    let first = shared_with(&target, owner, "PARENT", one, Some("31")).await;
    shared_with(&target, one, "PARENT/CHILD", two, Some("31")).await;
    shared_with(&target, two, "CHILD", three, Some("31")).await;
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
    assert_eq!(update_permissions(&target, owner, &first, "1").await.0, 200);
    assert_eq!(subfile_shares(&target, one, "PARENT").await, vec![row(one, two, "/PARENT/CHILD")]);
    people.remove().await;
}

/// `oc:permissions` of `path` as `account` sees it.
async fn dav_permissions(target: &Target, account: &Account, path: &str) -> String {
    let body = r#"<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:permissions/></d:prop></d:propfind>"#;
    let response = props_of(target, account, path, body).await;
    response.text("http://owncloud.org/ns", "permissions").unwrap_or_default()
}

/// `getetag` of `path` as `account` sees it.
async fn etag(target: &Target, account: &Account, path: &str) -> String {
    props_of(target, account, path, "").await.text("DAV:", "getetag").unwrap_or_default()
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
    let (people, [owner, member, next]) = Throwaway::accounts(&target).await;
    let one = people.group(&[&member]).await;
    let two = people.group(&[&member]).await;
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
            shared_with_group(&target, &owner, folder, gid, Some(permissions)).await;
        }
        if let Some(permissions) = user {
            shared_with(&target, &owner, folder, &member, Some(permissions)).await;
        }
        assert!(sees(&target, &member, folder).await, "{folder}");
        assert!(!sees(&target, &member, &format!("{folder} (2)")).await, "{folder}: one mount");
        assert_eq!(dav_permissions(&target, &member, folder).await, "SRGDNVCK", "{folder}");
    }

    // A group share (15) and a user share (17) of one folder: reshares
    // may have the union (31).
    assert_eq!(target.mkcol(&owner, "TMP").await, 201);
    shared_with_group(&target, &owner, "TMP", &one, Some("15")).await;
    shared_with(&target, &owner, "TMP", &member, Some("17")).await;
    let reshare = shared_with(&target, &member, "TMP", &next, Some("17")).await;
    let (status, answer) = update_permissions(&target, &member, &reshare, "31").await;
    assert_eq!(status, 200, "the union allows it: {answer}");
    people.remove().await;
}

/// "Merging shares for recipient when shared from inside with group", "…
/// with two groups" and "… with group with less permissions": an owner in
/// the groups they share with sees their own folder once, with their own
/// permissions.
#[tokio::test]
async fn an_owner_in_the_groups_they_share_with_sees_one_folder() {
    let target = Target::get().await;
    let (people, [owner]) = Throwaway::accounts(&target).await;
    let one = people.group(&[&owner]).await;
    let two = people.group(&[&owner]).await;
    let folder = "merge-test-inside-twogroups-perms";
    assert_eq!(target.mkcol(&owner, folder).await, 201);
    shared_with_group(&target, &owner, folder, &one, Some("31")).await;
    shared_with_group(&target, &owner, folder, &two, Some("1")).await;
    for suffix in [" (2)", " (3)"] {
        assert!(!sees(&target, &owner, &format!("{folder}{suffix}")).await);
    }
    assert_eq!(dav_permissions(&target, &owner, folder).await, "RGDNVCK");
    people.remove().await;
}

/// "Merging shares for recipient when shared from outside with group then
/// user and recipient renames in between" and "… with user then group …":
/// the second share of a node joins the mount where the recipient moved
/// the first.
#[tokio::test]
async fn a_second_share_joins_the_renamed_mount() {
    let target = Target::get().await;
    let (people, [owner, member]) = Throwaway::accounts(&target).await;
    let gid = people.group(&[&member]).await;
    for group_first in [true, false] {
        let folder = target.unique("merge-test-rename");
        assert_eq!(target.mkcol(&owner, &folder).await, 201);
        let with_user = || shared_with(&target, &owner, &folder, &member, Some("31"));
        let with_group = || shared_with_group(&target, &owner, &folder, &gid, Some("31"));
        if group_first {
            with_group().await;
        } else {
            with_user().await;
        }
        let renamed = format!("{folder}-renamed");
        assert_eq!(transfer(&target, &member, "MOVE", &folder, &renamed).await, 201);
        if group_first {
            with_user().await;
        } else {
            with_group().await;
        }
        assert_eq!(
            dav_permissions(&target, &member, &renamed).await,
            "SRGDNVCK",
            "group first: {group_first}"
        );
        assert!(!sees(&target, &member, &folder).await, "group first: {group_first}");
    }
    people.remove().await;
}

/// "Share of folder and sub-folder to same user - core#20645"
/// (part2b): a folder shared with a user and its sub-folder with a group
/// the user is in are two mounts, the sub-folder also inside the first.
#[tokio::test]
async fn a_folder_and_its_sub_folder_shared_apart_are_two_mounts() {
    let target = Target::get().await;
    let (people, [owner, member]) = Throwaway::accounts(&target).await;
    let gid = people.group(&[&member]).await;
    assert_eq!(target.mkcol(&owner, "PARENT").await, 201);
    assert_eq!(target.mkcol(&owner, "PARENT/CHILD").await, 201);
    assert!(target.put_file(&owner, "PARENT/CHILD/child.txt", "child").await.status().is_success());
    shared_with(&target, &owner, "PARENT", &member, Some("31")).await;
    shared_with_group(&target, &owner, "PARENT/CHILD", &gid, Some("31")).await;
    for path in ["PARENT", "PARENT/CHILD", "PARENT/CHILD/child.txt", "CHILD", "CHILD/child.txt"] {
        assert!(sees(&target, &member, path).await, "{path}");
    }
    people.remove().await;
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
    let (people, [owner, member]) = Throwaway::accounts(&target).await;
    let gid = people.group(&[&owner, &member]).await;
    assert!(
        target.put_file(&member, "textfile0.txt", "the member's own").await.status().is_success()
    );
    assert_eq!(target.mkcol(&owner, "PARENT").await, 201);
    assert!(target.put_file(&owner, "PARENT/textfile0.txt", "shared").await.status().is_success());
    let shared = "PARENT/textfile0.txt";
    let id = shared_with_group(&target, &owner, shared, &gid, None).await;
    let owners = share_info(&target, &owner, &id).await.1;
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
    let members = share_info(&target, &member, &id).await.1;
    for (field, value) in [
        ("file_target", Value::from("/textfile0 (2).txt")),
        ("path", "/textfile0 (2).txt".into()),
        ("permissions", 19.into()),
        ("storage_id", "shared::/textfile0 (2).txt".into()),
    ] {
        assert_eq!(members[field], value, "member's {field}: {members}");
    }

    let owners_folder = etag(&target, &owner, "PARENT").await;
    let members_root = etag(&target, &member, "").await;
    let (status, left) = delete_share(&target, &member, &id).await;
    assert_eq!(status, 200, "{left}");
    assert!(!sees(&target, &member, "textfile0 (2).txt").await, "gone from the member's files");
    assert_ne!(etag(&target, &member, "").await, members_root, "the member's root changed");
    assert_eq!(etag(&target, &owner, "PARENT").await, owners_folder, "the owner's folder did not");
    assert_eq!(share_info(&target, &owner, &id).await.0, 200, "the share stays the owner's");

    // "sharing again an own file while belonging to a group" (part3).
    assert_eq!(delete_share(&target, &owner, &id).await.0, 200);
    let (status, _) = share_with_group(&target, &owner, shared, &gid, None).await;
    assert_eq!(status, 200, "shared again");
    people.remove().await;
}

/// "keep group permissions in sync" (part2a) and "Delete all group shares"
/// (part2b): a member moves a group share into a folder of their own; the
/// owner's update of its permissions reaches it there, and the owner's
/// delete takes it away from there.
#[tokio::test]
async fn a_moved_group_mount_follows_its_share() {
    let target = Target::get().await;
    let (people, [owner, member]) = Throwaway::accounts(&target).await;
    let gid = people.group(&[&member]).await;
    assert!(target.put_file(&owner, "textfile0.txt", "in sync").await.status().is_success());
    assert!(target.put_file(&member, "textfile0.txt", "the member's").await.status().is_success());
    assert_eq!(target.mkcol(&member, "FOLDER").await, 201);
    let id = shared_with_group(&target, &owner, "textfile0.txt", &gid, None).await;
    let moved = transfer(&target, &member, "MOVE", "textfile0 (2).txt", "FOLDER/textfile0.txt");
    assert_eq!(moved.await, 201);

    let (status, updated) = update_permissions(&target, &owner, &id, "1").await;
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

    assert_eq!(delete_share(&target, &owner, &id).await.0, 200);
    let (_, received) = list_shares(&target, &member, "shared_with_me=true").await;
    assert!(!ids(&received).contains(&id), "{received}");
    assert!(!sees(&target, &member, "FOLDER/textfile0.txt").await);
    people.remove().await;
}

/// The recipients the share list names for `account` with `query`.
async fn listed_recipients(target: &Target, account: &Account, query: &str) -> Vec<String> {
    let (status, answer) = list_shares(target, account, query).await;
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
    let (people, users) = Throwaway::accounts::<4>(&target).await;
    let [owner, one, two, three] = &users;
    assert!(target.put_file(owner, "textfile0.txt", "listed").await.status().is_success());
    shared_with(&target, owner, "textfile0.txt", one, None).await;
    shared_with(&target, one, "textfile0.txt", two, None).await;
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
        shared_with(&target, owner, &name, recipient, None).await;
    }
    let seen = listed_recipients(&target, one, &format!("reshares=true&path={name}")).await;
    assert_eq!(seen, vec![two.uid.clone()], "not the share made with them");
    people.remove().await;
}

/// "getting inherited shares of a file" (sharing-v1): `/shares/inherited`
/// lists the shares of the folders above a node, as its owner and as a
/// recipient who may reshare see them; someone who cannot reach the node
/// gets 404.
#[tokio::test]
async fn inherited_shares_are_those_of_the_folders_above() {
    let target = Target::get().await;
    let (people, users) = Throwaway::accounts::<4>(&target).await;
    let [owner, one, two, three] = &users;
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
        shared_with(&target, owner, path, to, permissions).await;
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
    people.remove().await;
}

/// "Link shares inside of group shares keep their original data when the
/// root share is updated" (part3): a member's link inside a group share
/// loses what the owner takes from the group share, and keeps the rest of
/// its own (no expiry of its own, its target).
#[tokio::test]
async fn a_link_inside_a_group_share_is_capped_by_the_group_share() {
    let target = Target::get().await;
    let (people, [owner, member]) = Throwaway::accounts(&target).await;
    let gid = people.group(&[&member]).await;
    assert_eq!(target.mkcol(&owner, "share").await, 201);
    let id = shared_with_group(&target, &owner, "share", &gid, None).await;
    assert_eq!(target.mkcol(&owner, "share/subfolder").await, 201);
    let fields = [
        ("path", "/share/subfolder".to_string()),
        ("shareType", "3".to_string()),
        ("permissions", "31".to_string()),
    ];
    let (status, link) = create_share(&target, &member, &fields).await;
    assert_eq!((status, link["ocs"]["data"]["permissions"].clone()), (200, 31.into()), "{link}");

    let fields = [("permissions", "23".to_string()), ("expireDate", day_in(3))];
    assert_eq!(update_share(&target, &owner, &id, &fields).await.0, 200);
    let (_, shown) = share_info(&target, &member, &id_of(&link)).await;
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
    people.remove().await;
}
