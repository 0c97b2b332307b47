//! provisioning_api's users and groups as Nextcloud's provisioning suite
//! checks them (`features/provisioning-v1.feature`,
//! `provisioning-v2.feature`): the administrator creates, edits, disables
//! and deletes accounts and groups; a created account works at once over
//! DAV and OCS; regular users are refused. Every account and group made
//! here has a unique name and is deleted again.

use nextcloud_contract::{Account, Target, ocs_json};
use serde_json::Value;

const V1: &str = "/ocs/v1.php/cloud";
const V2: &str = "/ocs/v2.php/cloud";

pub(super) fn statuscode(answer: &Value) -> Value {
    answer["ocs"]["meta"]["statuscode"].clone()
}

/// An OCS request as `account` with form fields; its status and answer.
pub(super) async fn send(
    target: &Target,
    account: &Account,
    method: &str,
    path: &str,
    fields: &[(&str, String)],
) -> (u16, Value) {
    let response = target.ocs_form(account, method, &format!("{path}?format=json"), fields).await;
    ocs_json(response).await
}

/// A fresh account made by the administrator through v1; its account.
pub(super) async fn create_account(target: &Target, extra: &[(&str, String)]) -> Account {
    let uid = target.unique("user");
    // Long and random enough for the password_policy app of a real server.
    let password = format!("Pw-{}-{}", rand_part(), rand_part());
    let mut fields = vec![("userid", uid.clone()), ("password", password.clone())];
    fields.extend(extra.iter().cloned());
    let (status, answer) =
        send(target, target.admin(), "POST", &format!("{V1}/users"), &fields).await;
    assert_eq!((status, statuscode(&answer)), (200, 100.into()), "{answer}");
    assert_eq!(answer["ocs"]["data"]["id"], uid.as_str(), "{answer}");
    Account { uid, password, app_password: None }
}

fn rand_part() -> String {
    format!("{:016x}", rand::random::<u64>())
}

pub(super) async fn delete_account(target: &Target, uid: &str) {
    let _ =
        target.ocs_call(target.admin(), "DELETE", &format!("{V1}/users/{uid}?format=json")).await;
}

async fn user_data(target: &Target, uid: &str) -> (u16, Value) {
    target.ocs_call(target.admin(), "GET", &format!("{V1}/users/{uid}?format=json")).await
}

/// "Create a user", "Get an existing user", "Delete a user" and "Getting
/// an not existing user" (provisioning-v1): the new account answers its
/// own OCS and DAV requests at once; once deleted it is 404 to the admin
/// and its credentials are refused.
#[tokio::test]
async fn a_created_account_works_at_once_and_a_deleted_one_is_gone() {
    let target = Target::get().await;
    let account = create_account(
        &target,
        &[
            ("displayName", "Brand New User".to_string()),
            ("email", "brand-new@example.com".to_string()),
        ],
    )
    .await;

    let (status, data) = user_data(&target, &account.uid).await;
    assert_eq!((status, statuscode(&data)), (200, 100.into()), "{data}");
    let data = &data["ocs"]["data"];
    assert_eq!(data["id"], account.uid.as_str());
    assert_eq!(data["displayname"], "Brand New User");
    assert_eq!(data["email"], "brand-new@example.com");
    assert_eq!(data["enabled"], true);

    let (status, me) = target.ocs_call(&account, "GET", &format!("{V2}/user?format=json")).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(me["ocs"]["data"]["id"], account.uid.as_str());
    let home = format!("/remote.php/dav/files/{}/", account.uid);
    let (status, _) = target.propfind(&account, &home, "1", "").await;
    assert_eq!(status, 207, "the new account's files home is served");
    let put = target.put_file(&account, "first.txt", "hello").await;
    assert_eq!(put.status(), 201);

    let (status, deleted) = target
        .ocs_call(target.admin(), "DELETE", &format!("{V1}/users/{}?format=json", account.uid))
        .await;
    assert_eq!((status, statuscode(&deleted)), (200, 100.into()), "{deleted}");
    let (status, gone) = user_data(&target, &account.uid).await;
    assert_eq!((status, statuscode(&gone)), (200, 404.into()), "{gone}");
    let (status, _) = target.propfind(&account, &home, "0", "").await;
    assert_eq!(status, 401, "a deleted account's credentials are refused");
}

/// "Create an existing user" (provisioning-v1, and v2's HTTP 400 for an
/// OCS code below 200): a taken uid is 102 and the account is unchanged.
#[tokio::test]
async fn creating_a_taken_uid_is_102() {
    let target = Target::get().await;
    let account = create_account(&target, &[]).await;
    let fields = [("userid", account.uid.clone()), ("password", account.password.clone())];
    let (status, answer) =
        send(&target, target.admin(), "POST", &format!("{V1}/users"), &fields).await;
    assert_eq!((status, statuscode(&answer)), (200, 102.into()), "{answer}");
    let (status, answer) =
        send(&target, target.admin(), "POST", &format!("{V2}/users"), &fields).await;
    assert_eq!((status, statuscode(&answer)), (400, 102.into()), "{answer}");
    let (_, data) = user_data(&target, &account.uid).await;
    assert_eq!(data["ocs"]["data"]["displayname"], account.uid.as_str());
    assert_eq!(data["ocs"]["data"]["email"], Value::Null);
    delete_account(&target, &account.uid).await;
}

/// "Listing all users" and "Getting all users" (provisioning-v1): the
/// admin lists every account, searches by uid and pages with limit; a
/// regular user is refused (`Logged in account must be an admin or sub
/// admin`, 403).
#[tokio::test]
async fn the_admin_lists_and_searches_accounts_and_a_regular_user_cannot() {
    let target = Target::get().await;
    let account = create_account(&target, &[]).await;
    let (status, all) =
        target.ocs_call(target.admin(), "GET", &format!("{V1}/users?format=json")).await;
    assert_eq!((status, statuscode(&all)), (200, 100.into()));
    let users = all["ocs"]["data"]["users"].as_array().unwrap().clone();
    assert!(users.contains(&Value::from(account.uid.clone())), "{users:?}");
    assert!(users.contains(&Value::from(target.admin().uid.clone())), "{users:?}");

    let searched = format!("{V1}/users?format=json&search={}", account.uid);
    let (_, found) = target.ocs_call(target.admin(), "GET", &searched).await;
    assert_eq!(found["ocs"]["data"]["users"], serde_json::json!([account.uid]));
    let (_, one) =
        target.ocs_call(target.admin(), "GET", &format!("{V1}/users?format=json&limit=1")).await;
    assert_eq!(one["ocs"]["data"]["users"].as_array().unwrap().len(), 1);

    let (status, refused) =
        target.ocs_call(target.alice(), "GET", &format!("{V1}/users?format=json")).await;
    assert_eq!((status, statuscode(&refused)), (200, 403.into()), "{refused}");
    let (status, refused) =
        target.ocs_call(target.alice(), "GET", &format!("{V2}/users?format=json")).await;
    assert_eq!((status, statuscode(&refused)), (403, 403.into()), "{refused}");
    delete_account(&target, &account.uid).await;
}

/// "Edit a user" (provisioning-v1): display name, quota, email and profile
/// fields, each 100, then read back.
#[tokio::test]
async fn the_admin_edits_an_account() {
    let target = Target::get().await;
    let account = create_account(&target, &[]).await;
    let path = format!("{V1}/users/{}", account.uid);
    for (key, value) in [
        ("displayname", "Brand New User"),
        ("quota", "12MB"),
        ("email", "no-reply@example.com"),
        ("address", "Foo Bar Town"),
        ("website", "https://nextcloud.com"),
        ("twitter", "Nextcloud"),
    ] {
        let fields = [("key", key.to_string()), ("value", value.to_string())];
        let (status, answer) = send(&target, target.admin(), "PUT", &path, &fields).await;
        assert_eq!((status, statuscode(&answer)), (200, 100.into()), "{key}: {answer}");
    }
    let (_, data) = user_data(&target, &account.uid).await;
    let data = &data["ocs"]["data"];
    assert_eq!(data["displayname"], "Brand New User");
    assert_eq!(data["email"], "no-reply@example.com");
    assert_eq!(data["address"], "Foo Bar Town");
    assert_eq!(data["website"], "https://nextcloud.com");
    assert_eq!(data["twitter"], "Nextcloud");
    // PHP may render the byte count as a float (12582912.0).
    let quota = data["quota"]["quota"].as_f64();
    assert_eq!(quota, Some(12.0 * 1024.0 * 1024.0), "{}", data["quota"]);

    // "An admin cannot edit user account property scopes": not an
    // editable key for anyone else, 113.
    let fields = [("key", "phoneScope".to_string()), ("value", "v2-private".to_string())];
    let (status, answer) = send(&target, target.admin(), "PUT", &path, &fields).await;
    assert_eq!((status, statuscode(&answer)), (200, 113.into()), "{answer}");
    delete_account(&target, &account.uid).await;
}

/// "disable an user", "enable an user", "Admin user cannot disable
/// himself", "disable an user with a regular user" and "Making a ocs
/// request with a disabled user" (provisioning-v1), and "A disabled user
/// cannot use webdav" (webdav-related): a disabled account's right
/// password is 997 on OCS, even on the public capabilities, and 503 on
/// DAV, and it cannot share; enabled again, it works.
#[tokio::test]
async fn a_disabled_account_is_refused_until_enabled() {
    let target = Target::get().await;
    let account = create_account(&target, &[]).await;
    let admin = target.admin().clone();
    let toggle = |who: &'static str| format!("{V1}/users/{}/{who}?format=json", account.uid);

    let (status, refused) = target.ocs_call(target.alice(), "PUT", &toggle("disable")).await;
    assert_eq!((status, statuscode(&refused)), (200, 403.into()), "{refused}");
    let (status, own) = target
        .ocs_call(&admin, "PUT", &format!("{V1}/users/{}/disable?format=json", admin.uid))
        .await;
    assert_eq!((status, statuscode(&own)), (200, 101.into()), "{own}");

    let (status, disabled) = target.ocs_call(&admin, "PUT", &toggle("disable")).await;
    assert_eq!((status, statuscode(&disabled)), (200, 100.into()), "{disabled}");
    let (_, data) = user_data(&target, &account.uid).await;
    assert_eq!(data["ocs"]["data"]["enabled"], false);

    let (status, capabilities) =
        target.ocs_call(&account, "GET", &format!("{V1}/capabilities?format=json")).await;
    assert_eq!((status, statuscode(&capabilities)), (401, 997.into()), "{capabilities}");
    // "Creating a new share with a disabled user" (sharing-v1-part3).
    let fields = [
        ("path", "/welcome.txt".to_string()),
        ("shareWith", admin.uid.clone()),
        ("shareType", "0".to_string()),
    ];
    let shares = "/ocs/v1.php/apps/files_sharing/api/v1/shares";
    let (status, shared) = send(&target, &account, "POST", shares, &fields).await;
    assert_eq!((status, statuscode(&shared)), (401, 997.into()), "{shared}");
    let response = target
        .as_account(&account, "GET", &target.files_path(&account, "welcome.txt"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503, "DAV refuses a disabled account with 503");

    let (status, enabled) = target.ocs_call(&admin, "PUT", &toggle("enable")).await;
    assert_eq!((status, statuscode(&enabled)), (200, 100.into()), "{enabled}");
    let (status, capabilities) =
        target.ocs_call(&account, "GET", &format!("{V1}/capabilities?format=json")).await;
    assert_eq!((status, statuscode(&capabilities)), (200, 100.into()), "{capabilities}");
    delete_account(&target, &account.uid).await;
}

/// "Create a group", "Create a group with special characters", "adding
/// user to a group without sending the group", "adding user to a group
/// which doesn't exist", "adding user to a group without privileges",
/// "adding user to a group", "getting groups of an user", "adding a user
/// which doesn't exist to a group", "getting a group", "Getting all
/// groups", "removing a user from a group which doesn't exists",
/// "removing a user from a group", "Delete a group" and "Delete a group
/// with special characters" (provisioning-v1).
#[tokio::test]
async fn the_admin_manages_groups_and_their_members() {
    let target = Target::get().await;
    let admin = target.admin().clone();
    let account = create_account(&target, &[]).await;
    let gid = format!("{}-España", target.unique("group"));
    let encoded: String = url::form_urlencoded::byte_serialize(gid.as_bytes()).collect();

    let (status, created) =
        send(&target, &admin, "POST", &format!("{V1}/groups"), &[("groupid", gid.clone())]).await;
    assert_eq!((status, statuscode(&created)), (200, 100.into()), "{created}");
    let (_, again) =
        send(&target, &admin, "POST", &format!("{V1}/groups"), &[("groupid", gid.clone())]).await;
    assert_eq!(statuscode(&again), 102, "{again}");
    let (_, all) = target.ocs_call(&admin, "GET", &format!("{V1}/groups?format=json")).await;
    let groups = all["ocs"]["data"]["groups"].as_array().unwrap().clone();
    assert!(groups.contains(&Value::from(gid.clone())) && groups.contains(&Value::from("admin")));

    let membership = format!("{V1}/users/{}/groups", account.uid);
    let (_, answer) =
        send(&target, &admin, "POST", &membership, &[("groupid", String::new())]).await;
    assert_eq!(statuscode(&answer), 101, "no group named: {answer}");
    let missing = target.unique("not-group");
    let (_, answer) =
        send(&target, &admin, "POST", &membership, &[("groupid", missing.clone())]).await;
    assert_eq!(statuscode(&answer), 102, "unknown group: {answer}");
    let nobody = format!("{V1}/users/{}/groups", target.unique("not-user"));
    let (_, answer) = send(&target, &admin, "POST", &nobody, &[("groupid", gid.clone())]).await;
    assert_eq!(statuscode(&answer), 103, "unknown account: {answer}");
    let (status, answer) =
        send(&target, &account, "POST", &membership, &[("groupid", gid.clone())]).await;
    assert_eq!((status, statuscode(&answer)), (200, 403.into()), "not an admin: {answer}");

    let (status, added) =
        send(&target, &admin, "POST", &membership, &[("groupid", gid.clone())]).await;
    assert_eq!((status, statuscode(&added)), (200, 100.into()), "{added}");
    let (_, groups) = target.ocs_call(&admin, "GET", &format!("{membership}?format=json")).await;
    assert_eq!(groups["ocs"]["data"]["groups"], serde_json::json!([gid]));
    let (status, members) =
        target.ocs_call(&admin, "GET", &format!("{V1}/groups/{encoded}?format=json")).await;
    assert_eq!((status, statuscode(&members)), (200, 100.into()), "{members}");
    assert_eq!(members["ocs"]["data"]["users"], serde_json::json!([account.uid]));

    let (_, answer) = send(&target, &admin, "DELETE", &membership, &[("groupid", missing)]).await;
    assert_eq!(statuscode(&answer), 102, "{answer}");
    let (_, removed) =
        send(&target, &admin, "DELETE", &membership, &[("groupid", gid.clone())]).await;
    assert_eq!(statuscode(&removed), 100, "{removed}");
    let (_, groups) = target.ocs_call(&admin, "GET", &format!("{membership}?format=json")).await;
    assert_eq!(groups["ocs"]["data"]["groups"], serde_json::json!([]));

    let (status, deleted) =
        target.ocs_call(&admin, "DELETE", &format!("{V1}/groups/{encoded}?format=json")).await;
    assert_eq!((status, statuscode(&deleted)), (200, 100.into()), "{deleted}");
    let (status, gone) =
        target.ocs_call(&admin, "GET", &format!("{V2}/groups/{encoded}?format=json")).await;
    assert_eq!((status, statuscode(&gone)), (404, 404.into()), "{gone}");
    let (_, admin_group) =
        target.ocs_call(&admin, "DELETE", &format!("{V1}/groups/admin?format=json")).await;
    assert_eq!(statuscode(&admin_group), 102, "the admin group stays: {admin_group}");
    delete_account(&target, &account.uid).await;
}

/// A created account is a full member of the world: shares reach it, and
/// its first-login calendar is there (what the sharing suite's set-up
/// relies on when it creates users through this API).
#[tokio::test]
async fn a_created_account_receives_shares_and_has_a_calendar() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let account = create_account(&target, &[]).await;
    let name = format!("{}.txt", target.unique("for-new"));
    target.put_file(&alice, &name, "shared").await;
    let (status, share) = super::shares::share_with(&target, &alice, &name, &account, None).await;
    assert_eq!(status, 200, "{share}");
    let response = target
        .as_account(&account, "GET", &target.files_path(&account, &name))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "shared");
    let calendars = format!("/remote.php/dav/calendars/{}/", account.uid);
    let (status, _) = target.propfind(&account, &calendars, "1", "").await;
    assert_eq!(status, 207);
    delete_account(&target, &account.uid).await;
    target.cleanup(&alice, &name).await;
}

/// "Should create default calendar on first login" (caldav) and "Should
/// create default addressbook on first login" (carddav): an account the
/// administrator just made has its personal calendar and its contacts
/// address book at their default names, at its first request.
#[tokio::test]
async fn a_new_account_finds_its_default_calendar_and_address_book() {
    let target = Target::get().await;
    let account = create_account(&target, &[]).await;
    for collection in [
        format!("/remote.php/dav/calendars/{}/personal/", account.uid),
        format!("/remote.php/dav/addressbooks/users/{}/contacts/", account.uid),
    ] {
        let (status, _) = target.propfind(&account, &collection, "0", "").await;
        assert_eq!(status, 207, "{collection}");
    }
    let missing = format!("/remote.php/dav/addressbooks/users/{}/not-made/", account.uid);
    assert_eq!(target.propfind(&account, &missing, "0", "").await.0, 404);
    delete_account(&target, &account.uid).await;
}
