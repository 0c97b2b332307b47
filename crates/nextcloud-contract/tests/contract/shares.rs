//! The files_sharing OCS API as the sharing tests call it (v2 and JSON
//! unless a name says v1): making, reading, updating, deleting and
//! listing shares, each answer as the server gave it for the test to
//! check.

use nextcloud_contract::{Account, Target, ocs_json};
use serde_json::Value;

pub(super) const SHARES: &str = "/ocs/v2.php/apps/files_sharing/api/v1/shares";
pub(super) const SHARES_V1: &str = "/ocs/v1.php/apps/files_sharing/api/v1/shares";

/// One share's address: `…/shares/{id}?format=json` (v2).
pub(super) fn share_path(id: &str) -> String {
    format!("{SHARES}/{id}?format=json")
}

/// A field of a share as text, a number without quotes (ids are numbers on
/// some servers and strings on others).
pub(super) fn text(share: &Value, field: &str) -> String {
    share[field].to_string().trim_matches('"').to_string()
}

/// The id of the share an answer to a create or an update holds.
pub(super) fn id_of(answer: &Value) -> String {
    text(&answer["ocs"]["data"], "id")
}

/// The ids of the shares in a list answer.
pub(super) fn ids(answer: &Value) -> Vec<String> {
    let list = answer["ocs"]["data"].as_array();
    let list = list.unwrap_or_else(|| panic!("a list of shares: {answer}"));
    list.iter().map(|share| text(share, "id")).collect()
}

/// `fields` with owned values, as a form body takes them.
pub(super) fn owned<'a>(fields: &[(&'a str, &str)]) -> Vec<(&'a str, String)> {
    fields.iter().map(|(name, value)| (*name, value.to_string())).collect()
}

/// The day `days` from today, as `expireDate` takes it (`Y-m-d`).
pub(super) fn day_in(days: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::days(days)).format("%Y-%m-%d").to_string()
}

/// A share `owner` makes with `fields`: the status and the whole answer.
pub(super) async fn create_share(
    target: &Target,
    owner: &Account,
    fields: &[(&str, String)],
) -> (u16, Value) {
    create_share_at(target, owner, SHARES, fields).await
}

/// [`create_share`] through `api` ([`SHARES`] or [`SHARES_V1`], whose
/// failures are HTTP 200 with the OCS status code in the answer).
pub(super) async fn create_share_at(
    target: &Target,
    owner: &Account,
    api: &str,
    fields: &[(&str, String)],
) -> (u16, Value) {
    let response = target.ocs_form(owner, "POST", &format!("{api}?format=json"), fields).await;
    ocs_json(response).await
}

/// A user share of `path` from `owner` to `recipient`, with `permissions`
/// or the server's default: the status and the answer.
pub(super) async fn share_with(
    target: &Target,
    owner: &Account,
    path: &str,
    recipient: &Account,
    permissions: Option<&str>,
) -> (u16, Value) {
    share_of(target, owner, path, "0", &recipient.uid, permissions).await
}

/// A group share of `path` from `owner` to the group `gid`, with
/// `permissions` or the server's default: the status and the answer.
pub(super) async fn share_with_group(
    target: &Target,
    owner: &Account,
    path: &str,
    gid: &str,
    permissions: Option<&str>,
) -> (u16, Value) {
    share_of(target, owner, path, "1", gid, permissions).await
}

/// [`share_with`], which must succeed: the new share's id.
pub(super) async fn shared_with(
    target: &Target,
    owner: &Account,
    path: &str,
    recipient: &Account,
    permissions: Option<&str>,
) -> String {
    let (status, answer) = share_with(target, owner, path, recipient, permissions).await;
    assert_eq!(status, 200, "{} shares {path} with {}: {answer}", owner.uid, recipient.uid);
    id_of(&answer)
}

/// [`share_with_group`], which must succeed: the new share's id.
pub(super) async fn shared_with_group(
    target: &Target,
    owner: &Account,
    path: &str,
    gid: &str,
    permissions: Option<&str>,
) -> String {
    let (status, answer) = share_with_group(target, owner, path, gid, permissions).await;
    assert_eq!(status, 200, "{} shares {path} with {gid}: {answer}", owner.uid);
    id_of(&answer)
}

/// The fields of a share of `path` of type `share_type` with `with`.
pub(super) fn share_fields(
    path: &str,
    share_type: &str,
    with: &str,
) -> Vec<(&'static str, String)> {
    vec![
        ("path", format!("/{path}")),
        ("shareType", share_type.to_string()),
        ("shareWith", with.to_string()),
    ]
}

async fn share_of(
    target: &Target,
    owner: &Account,
    path: &str,
    share_type: &str,
    with: &str,
    permissions: Option<&str>,
) -> (u16, Value) {
    let mut fields = share_fields(path, share_type, with);
    if let Some(permissions) = permissions {
        fields.push(("permissions", permissions.to_string()));
    }
    create_share(target, owner, &fields).await
}

/// `account` updates share `id` with `fields`: the status and the whole
/// answer.
pub(super) async fn update_share(
    target: &Target,
    account: &Account,
    id: &str,
    fields: &[(&str, String)],
) -> (u16, Value) {
    ocs_json(target.ocs_form(account, "PUT", &share_path(id), fields).await).await
}

/// `account` sets the permissions of share `id`: the status and the answer.
pub(super) async fn update_permissions(
    target: &Target,
    account: &Account,
    id: &str,
    permissions: &str,
) -> (u16, Value) {
    update_share(target, account, id, &[("permissions", permissions.to_string())]).await
}

/// Share `id` as `account` sees it (`GET /shares/{id}`): the status and the
/// share (`null` where there is none).
pub(super) async fn share_info(target: &Target, account: &Account, id: &str) -> (u16, Value) {
    let (status, answer) = target.ocs_call(account, "GET", &share_path(id)).await;
    (status, answer["ocs"]["data"][0].clone())
}

/// `account` deletes share `id`: the status and the answer.
pub(super) async fn delete_share(target: &Target, account: &Account, id: &str) -> (u16, Value) {
    target.ocs_call(account, "DELETE", &share_path(id)).await
}

/// The share list `account` gets with `query` (`shared_with_me=true`,
/// `path=…`; empty for the plain list): the status and the answer.
pub(super) async fn list_shares(target: &Target, account: &Account, query: &str) -> (u16, Value) {
    let path = match query {
        "" => format!("{SHARES}?format=json"),
        query => format!("{SHARES}?format=json&{query}"),
    };
    target.ocs_call(account, "GET", &path).await
}
