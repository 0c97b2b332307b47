//! The files_sharing OCS API as Nextcloud's sharing suite checks it
//! (`sharing_features/sharing-v1*.feature`): who sees which shares in the
//! lists, what an outsider gets, and how incoming shares are mounted.
//! Three accounts take part: alice (owner), bob (recipient) and the
//! administrator (an outsider, or a second owner).

use nextcloud_contract::{Account, Target, form_encode, header, ocs_json};
use serde_json::Value;

const SHARES: &str = "/ocs/v2.php/apps/files_sharing/api/v1/shares";

/// A user share of `path` from `owner` to `recipient` (v2, JSON), with
/// `permissions` or the server's default; the status and the answer.
pub(super) async fn share_with(
    target: &Target,
    owner: &Account,
    path: &str,
    recipient: &Account,
    permissions: Option<&str>,
) -> (u16, Value) {
    let mut fields = vec![
        ("path", format!("/{path}")),
        ("shareType", "0".to_string()),
        ("shareWith", recipient.uid.clone()),
    ];
    if let Some(permissions) = permissions {
        fields.push(("permissions", permissions.to_string()));
    }
    let response = target
        .ocs(owner, "POST", &format!("{SHARES}?format=json"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form_encode(&fields))
        .send()
        .await
        .unwrap();
    ocs_json(response).await
}

/// [`share_with`] the default permissions.
async fn share(target: &Target, owner: &Account, path: &str, recipient: &Account) -> (u16, Value) {
    share_with(target, owner, path, recipient, None).await
}

fn id_of(answer: &Value) -> String {
    answer["ocs"]["data"]["id"].to_string().trim_matches('"').to_string()
}

/// The ids in a list answer.
fn ids(answer: &Value) -> Vec<String> {
    let list = answer["ocs"]["data"].as_array().cloned().unwrap_or_default();
    list.iter().map(|share| share["id"].to_string().trim_matches('"').to_string()).collect()
}

async fn unshare(target: &Target, owner: &Account, id: &str) {
    let _ = target.ocs_call(owner, "DELETE", &format!("{SHARES}/{id}?format=json")).await;
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
        .ocs(&alice, "POST", "/ocs/v1.php/apps/files_sharing/api/v1/shares?format=json")
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
    let (status, to_bob) = share(&target, &alice, &name, &bob).await;
    assert_eq!(status, 200, "{to_bob}");
    let (status, to_admin) = share(&target, &alice, &name, &admin).await;
    assert_eq!(status, 200, "{to_admin}");
    let (to_bob, to_admin) = (id_of(&to_bob), id_of(&to_admin));

    let (status, own) = target.ocs_call(&alice, "GET", &format!("{SHARES}?format=json")).await;
    assert_eq!(status, 200);
    let own = ids(&own);
    assert!(own.contains(&to_bob) && own.contains(&to_admin), "alice lists her shares: {own:?}");

    let (_, others) = target.ocs_call(&admin, "GET", &format!("{SHARES}?format=json")).await;
    assert!(!ids(&others).contains(&to_bob), "another user's list holds none of alice's shares");

    let (_, of_file) =
        target.ocs_call(&alice, "GET", &format!("{SHARES}?format=json&path=/{name}")).await;
    let recipients: Vec<Value> = of_file["ocs"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|share| share["share_with"].clone())
        .collect();
    assert!(recipients.contains(&Value::from(bob.uid.clone())), "{recipients:?}");
    assert!(recipients.contains(&Value::from(admin.uid.clone())), "{recipients:?}");

    unshare(&target, &alice, &to_bob).await;
    unshare(&target, &alice, &to_admin).await;
    target.cleanup(&alice, &name).await;
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

    let filtered = format!("{SHARES}?format=json&shared_with_me=true&path=/{first}");
    let (status, answer) = target.ocs_call(&bob, "GET", &filtered).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(ids(&answer), vec![kept.clone()], "only the share at that path");

    unshare(&target, &alice, &kept).await;
    unshare(&target, &alice, &other).await;
    target.cleanup(&alice, &first).await;
    target.cleanup(&alice, &second).await;
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
    let v1 = format!("/ocs/v1.php/apps/files_sharing/api/v1/shares/{id}?format=json");

    let (status, answer) = target.ocs_call(&admin, "GET", &v1).await;
    assert_eq!((status, answer["ocs"]["meta"]["statuscode"].clone()), (200, 404.into()));
    let (status, answer) = target.ocs_call(&admin, "DELETE", &v1).await;
    assert_eq!((status, answer["ocs"]["meta"]["statuscode"].clone()), (200, 404.into()));
    let (status, still) =
        target.ocs_call(&alice, "GET", &format!("{SHARES}/{id}?format=json")).await;
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
    let (status, from_alice) = share(&target, &alice, &folder, &bob).await;
    assert_eq!(status, 200, "{from_alice}");
    let (status, from_admin) = share(&target, &admin, &folder, &bob).await;
    assert_eq!(status, 200, "{from_admin}");

    let received = format!("{SHARES}?format=json&shared_with_me=true");
    let (_, answer) = target.ocs_call(&bob, "GET", &received).await;
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

    unshare(&target, &alice, &id_of(&from_alice)).await;
    unshare(&target, &admin, &id_of(&from_admin)).await;
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
    let (status, created) = share_with(&target, &alice, &folder, &bob, Some("17")).await;
    assert_eq!(status, 200, "{created}");
    let id = id_of(&created);

    let raised = target
        .ocs(&bob, "PUT", &format!("{SHARES}/{id}?format=json"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form_encode(&[("permissions", "19".to_string())]))
        .send()
        .await
        .unwrap();
    let (status, answer) = ocs_json(raised).await;
    assert_eq!((status, answer["ocs"]["meta"]["statuscode"].clone()), (403, 403.into()));
    let (_, still) = target.ocs_call(&alice, "GET", &format!("{SHARES}/{id}?format=json")).await;
    assert_eq!(still["ocs"]["data"][0]["permissions"], 17, "{still}");

    unshare(&target, &alice, &id).await;
    target.cleanup(&alice, &folder).await;
}
