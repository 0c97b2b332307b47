//! What `GET …/shares?reshares=true` and `?subfiles=true` list for a user
//! who received a file and has moved it or shared it on, and what a file
//! moved into a group-shared folder becomes (`sharing-v1-part2.feature`,
//! `sharing-v1-part3.feature`).
//!
//! Each account gets a file of the same name first, as the suite's skeleton
//! gives everyone `textfile0.txt`, so received copies mount as `name (2)`.
//! A share's `file_target` is the name it was made under until the
//! recipient's files mount it, as on Nextcloud.
//!
//! The suite's "after revoking the resharing rights" step sends its
//! `permissions=1` update as nobody (no "As an" precedes it, so the
//! update goes out without a signed-in user) and never checks the answer:
//! the update is refused and the recipient keeps their rights. These tests
//! send that same update, see it refused, and check the listings the suite
//! checks.

use super::dav::sees;
use super::shares::{SHARES, SHARES_V1, list_shares, share_info, shared_with, shared_with_group};
use super::sharing::transfer;
use super::throwaway::Throwaway;
use nextcloud_contract::{Account, Target};
use serde_json::Value;

/// Every account of `users` gets a file `name` of its own.
async fn everyone_has(target: &Target, users: &[Account], name: &str) {
    for user in users {
        let put = target.put_file(user, name, "Nextcloud test text file\n").await;
        assert!(put.status().is_success(), "{}: {}", user.uid, put.status());
    }
}

/// "user X accepts last share": the recipient's POST to the pending share
/// (already accepted where shares are accepted on creation, Nextcloud's
/// default; either way the recipient's files now mount it).
async fn accept(target: &Target, recipient: &Account, id: &str) {
    let path = format!("{SHARES}/pending/{id}?format=json");
    let (status, answer) = target.ocs_call(recipient, "POST", &path).await;
    assert_eq!(status, 200, "{answer}");
}

/// The suite's "Updating last share with permissions 1", sent as nobody:
/// refused (v1: 401 with OCS 997), the share untouched.
async fn update_as_nobody(target: &Target, owner: &Account, id: &str) {
    let refused = target
        .anonymous("PUT", &format!("{SHARES_V1}/{id}?format=json"))
        .header("OCS-APIREQUEST", "true")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("permissions=1")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let (_, still) = share_info(target, owner, id).await;
    assert_eq!(still["permissions"], 19, "{still}");
}

/// The fields the suite compares, of each share listed at `query`, in the
/// server's order.
async fn listed(target: &Target, account: &Account, query: &str) -> Vec<[String; 7]> {
    let (status, answer) = list_shares(target, account, query).await;
    assert_eq!(status, 200, "{answer}");
    let field = |share: &Value, name: &str| share[name].as_str().unwrap_or_default().to_string();
    answer["ocs"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|share| {
            [
                "uid_owner",
                "uid_file_owner",
                "share_with",
                "path",
                "storage_id",
                "file_target",
                "item_type",
            ]
            .map(|name| field(share, name))
        })
        .collect()
}

fn row(fields: [&str; 7]) -> [String; 7] {
    fields.map(str::to_string)
}

/// "getting all shares of a file with a received share after revoking the
/// resharing rights" and "… also reshared after revoking the resharing
/// rights" (part2): the recipient lists every share of the file they
/// received — the owner's other share and their own reshare — named as
/// they see the file.
#[tokio::test]
async fn a_recipient_who_may_reshare_lists_every_share_of_the_file() {
    let target = Target::get().await;
    let (people, users) = Throwaway::accounts::<4>(&target).await;
    let [me, owner, other, mine] = &users;
    let stem = target.unique("textfile0");
    let (name, mounted) = (format!("{stem}.txt"), format!("{stem} (2).txt"));
    everyone_has(&target, &users, &name).await;

    let received = shared_with(&target, owner, &name, me, None).await;
    accept(&target, me, &received).await;
    let query = format!("reshares=true&path=/{mounted}");
    update_as_nobody(&target, owner, &received).await;
    shared_with(&target, owner, &name, other, None).await;
    let storage = format!("shared::/{mounted}");
    let by_owner = row([
        &owner.uid,
        &owner.uid,
        &other.uid,
        &format!("/{mounted}"),
        &storage,
        &format!("/{name}"),
        "file",
    ]);
    assert_eq!(listed(&target, me, &query).await, vec![by_owner.clone()]);

    shared_with(&target, me, &mounted, mine, None).await;
    let by_me = row([
        &me.uid,
        &owner.uid,
        &mine.uid,
        &format!("/{mounted}"),
        &storage,
        &format!("/{mounted}"),
        "file",
    ]);
    let mut rows = listed(&target, me, &query).await;
    rows.sort();
    let mut expected = vec![by_me, by_owner];
    expected.sort();
    assert_eq!(rows, expected);
    people.remove().await;
}

/// "getting all shares including subfiles in a directory after moving a
/// received share not reshareable also shared with another user" and
/// "… after moving a share and a received share …" (part2): in a folder of
/// one's own, every share of its files is listed — one's own share, and
/// the owner's other share of a file one received and moved there.
#[tokio::test]
async fn subfiles_of_ones_own_folder_list_the_shares_of_a_received_file_moved_into_it() {
    let target = Target::get().await;
    let (people, users) = Throwaway::accounts::<3>(&target).await;
    let [me, owner, other] = &users;
    let stem = target.unique("textfile0");
    let (name, mounted) = (format!("{stem}.txt"), format!("{stem} (2).txt"));
    everyone_has(&target, &users, &name).await;
    let folder = target.scratch_folder(me, "FOLDER").await;

    let mine = shared_with(&target, me, &name, owner, None).await;
    accept(&target, owner, &mine).await;
    let received = shared_with(&target, owner, &name, me, None).await;
    accept(&target, me, &received).await;
    update_as_nobody(&target, owner, &received).await;
    shared_with(&target, owner, &name, other, None).await;

    assert_eq!(transfer(&target, me, "MOVE", &mounted, &format!("{folder}/{name}")).await, 201);
    let moved = format!("/{folder}/{name}");
    let owners = row([
        &owner.uid,
        &owner.uid,
        &other.uid,
        &moved,
        &format!("shared::{moved}"),
        &format!("/{name}"),
        "file",
    ]);
    let query = format!("subfiles=true&path=/{folder}");
    assert_eq!(listed(&target, me, &query).await, vec![owners]);

    // Now both: one's own file beside the received one.
    assert_eq!(transfer(&target, me, "MOVE", &moved, &format!("{folder}/{mounted}")).await, 201);
    assert_eq!(transfer(&target, me, "MOVE", &name, &format!("{folder}/{name}")).await, 201);
    let (own_path, received_path) = (format!("/{folder}/{name}"), format!("/{folder}/{mounted}"));
    let mut expected = vec![
        row([
            &me.uid,
            &me.uid,
            &owner.uid,
            &own_path,
            &format!("home::{}", me.uid),
            &format!("/{mounted}"),
            "file",
        ]),
        row([
            &owner.uid,
            &owner.uid,
            &other.uid,
            &received_path,
            &format!("shared::{received_path}"),
            &format!("/{name}"),
            "file",
        ]),
    ];
    expected.sort();
    let mut rows = listed(&target, me, &query).await;
    rows.sort();
    assert_eq!(rows, expected);
    people.remove().await;
}

/// "Share a file by multiple channels" (part2, part3): a file its owner
/// shared with one member of a group, then moved into a folder shared with
/// that group, is read by the member there too.
#[tokio::test]
async fn a_file_moved_into_a_group_folder_is_read_through_the_group_share() {
    let target = Target::get().await;
    let (people, users) = Throwaway::accounts::<3>(&target).await;
    let [folder_owner, file_owner, member] = &users;
    let gid = people.group(&[file_owner, member]).await;
    let common = target.unique("common");
    assert_eq!(target.mkcol(folder_owner, &common).await, 201);
    assert_eq!(target.mkcol(folder_owner, &format!("{common}/sub")).await, 201);
    shared_with_group(&target, folder_owner, &common, &gid, None).await;
    let name = format!("{}.txt", target.unique("textfile0"));
    everyone_has(&target, std::slice::from_ref(file_owner), &name).await;
    shared_with(&target, file_owner, &name, member, None).await;

    let into = format!("{common}/{name}");
    assert_eq!(transfer(&target, file_owner, "MOVE", &name, &into).await, 201);
    let deeper = format!("{common}/sub/{name}");
    assert_eq!(transfer(&target, file_owner, "MOVE", &into, &deeper).await, 201);

    let ranged = target
        .as_account(member, "GET", &target.files_path(member, &deeper))
        .header("Range", "bytes=10-18")
        .send()
        .await
        .unwrap();
    assert_eq!(ranged.status(), 206);
    assert_eq!(ranged.text().await.unwrap(), "test text");
    assert!(sees(&target, member, &deeper).await, "the member sees {deeper}");
    people.remove().await;
}
