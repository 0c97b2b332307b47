//! provisioning_api's users and groups (`UsersController`,
//! `GroupsController`): list, create, edit, disable and delete accounts,
//! and manage groups and their members.
//!
//! Accounts live in [`crate::world::World::users`], the same map every
//! protocol authenticates against, so a created account logs in at once
//! over DAV and OCS, and a deleted one cannot. Failures carry the
//! controller's own OCS codes (101 to 113; v2 answers them as HTTP 400).
//! Only administrators provision; the fake has no sub-admins, so where
//! Nextcloud checks "admin or sub-admin of the group" the fake checks
//! "admin". Password confirmation never applies: Basic and bearer requests
//! skip it on the real server too.

use super::guard;
use super::{Guarded, OcsCall, OcsResult, USER_MISSING, code, user_answer, user_data};
use crate::AppState;
use crate::world::{User, World};
use axum::Router;
use axum::extract::State;
use axum::routing::{get, put};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/ocs/{version}/cloud/users", get(list_users).post(add_user))
        .route("/ocs/{version}/cloud/users/details", get(list_users_details))
        .route(
            "/ocs/{version}/cloud/users/{uid}",
            get(show_user).put(edit_user).delete(delete_user),
        )
        .route("/ocs/{version}/cloud/users/{uid}/enable", put(enable_user))
        .route("/ocs/{version}/cloud/users/{uid}/disable", put(disable_user))
        .route(
            "/ocs/{version}/cloud/users/{uid}/groups",
            get(user_groups).post(add_to_group).delete(remove_from_group),
        )
        .route("/ocs/{version}/cloud/groups", get(list_groups).post(add_group))
        .route("/ocs/{version}/cloud/groups/{gid}", get(group_users).delete(delete_group))
        .route("/ocs/{version}/cloud/groups/{gid}/users", get(group_users))
}

/// The longest uid Nextcloud accepts (`IUser::MAX_USERID_LENGTH`).
const UID_LENGTH_MAX: usize = 64;

fn is_admin(world: &World, uid: &str) -> bool {
    world.user(uid).is_some_and(|user| user.groups.contains("admin"))
}

/// `search`, `limit` and `offset` as the user and group searches read them.
struct Page {
    search: String,
    limit: Option<usize>,
    offset: usize,
}

impl Page {
    fn of(call: &OcsCall) -> Page {
        let number = |name: &str| {
            call.integer(name).ok().flatten().and_then(|value| usize::try_from(value).ok())
        };
        Page {
            search: call.text("search").unwrap_or_default().to_lowercase(),
            limit: number("limit"),
            offset: number("offset").unwrap_or(0),
        }
    }

    /// The items whose id or one of their texts contains the search, paged.
    fn apply<'a, const N: usize>(
        &self,
        items: impl Iterator<Item = (&'a str, [&'a str; N])>,
    ) -> Vec<String> {
        let contains = |text: &str| text.to_lowercase().contains(&self.search);
        let matching = items.filter(|(id, texts)| {
            self.search.is_empty() || contains(id) || texts.iter().any(|text| contains(text))
        });
        let paged = matching.skip(self.offset).map(|(id, _)| id.to_string());
        match self.limit {
            Some(limit) => paged.take(limit).collect(),
            None => paged.collect(),
        }
    }
}

/// `getUsers`: the uids an admin may see (everybody, searched by uid,
/// display name or email); anyone else sees an empty list.
async fn list_users(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::SubAdmin>,
) -> OcsResult {
    let uids = visible_uids(&call, &shared.world());
    Ok(call.ocs.ok(json!({ "users": uids })))
}

fn visible_uids(call: &OcsCall, world: &World) -> Vec<String> {
    if !is_admin(world, call.uid()) {
        return Vec::new();
    }
    Page::of(call).apply(world.users.values().map(|user| {
        let email = user.email.as_deref().unwrap_or("");
        (user.uid.as_str(), [user.display_name.as_str(), email])
    }))
}

/// `getUsersDetails`: the same accounts with their data, by uid.
async fn list_users_details(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::SubAdmin>,
) -> OcsResult {
    let uids = visible_uids(&call, &shared.world());
    if uids.is_empty() {
        return Ok(call.ocs.ok(json!({ "users": [] })));
    }
    let mut details = Map::new();
    for uid in uids {
        if let Some(data) = user_data(&shared, &uid) {
            details.insert(uid, data);
        }
    }
    Ok(call.ocs.ok(json!({ "users": details })))
}

/// `getUser`: an admin sees anyone; a user only themselves (998 else).
async fn show_user(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::User>,
) -> OcsResult {
    let uid = call.path_param("uid").to_string();
    {
        let world = shared.world();
        if !world.users.contains_key(&uid) {
            return Err(call.ocs.fail(404, USER_MISSING));
        }
        if uid != call.uid() && !is_admin(&world, call.uid()) {
            return Err(call.ocs.fail(code::NOT_FOUND, ""));
        }
    }
    user_answer(&shared, &call, &uid)
}

/// `addUser`, for an administrator: answers `{"id": uid}`.
async fn add_user(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::SubAdmin>,
) -> OcsResult {
    let now = shared.now();
    let text = |name: &str| call.text(name).unwrap_or_default();
    let (uid, password, email) = (text("userid"), text("password"), text("email"));
    let groups = list_param(&call, "groups");
    let mut world = shared.world();
    let admin = is_admin(&world, call.uid());
    if world.users.keys().any(|existing| existing.eq_ignore_ascii_case(&uid)) {
        return Err(call.ocs.fail(102, "User already exists"));
    }
    if groups.is_empty() {
        if !admin {
            return Err(call.ocs.fail(106, "no group specified (required for subadmins)"));
        }
    } else {
        for gid in &groups {
            if !world.groups.contains_key(gid) {
                return Err(call.ocs.fail(104, format!("group {gid} does not exist")));
            }
            if !admin {
                return Err(call.ocs.fail(105, format!("insufficient privileges for group {gid}")));
            }
        }
    }
    if !list_param(&call, "subadmin").is_empty() {
        // No sub-admins in the fake: refuse rather than pretend.
        return Err(call.ocs.fail(103, "Sub-admins are not supported by this server"));
    }
    // Without a password Nextcloud mails a link to set one; the fake sends
    // no mail, so the account has a password nobody knows.
    if password.is_empty() && email.is_empty() {
        return Err(call
            .ocs
            .fail(108, "To send a password link to the user an email address is required."));
    }
    if let Err(message) = valid_uid(&uid) {
        return Err(call.ocs.fail(101, message));
    }
    let display_name = text("displayName");
    let quota = match call.text("quota").filter(|quota| !quota.is_empty()) {
        None => None,
        Some(quota) => parse_quota(&quota)
            .ok_or_else(|| call.ocs.fail(102, format!("Invalid quota value {quota}")))?,
    };
    let language = text("language");
    if !language.is_empty() && !valid_language(&language) {
        return Err(call.ocs.fail(102, "Invalid language"));
    }
    if !email.is_empty() && !valid_email(&email) {
        return Err(call.ocs.fail(101, ""));
    }
    let secret = if password.is_empty() {
        use rand::Rng as _;
        let mut rng = rand::thread_rng();
        (0..32).map(|_| rng.sample(rand::distributions::Alphanumeric) as char).collect()
    } else {
        password
    };
    let user = User {
        uid: uid.clone(),
        display_name: if display_name.is_empty() { uid.clone() } else { display_name },
        password: secret,
        app_passwords: Vec::new(),
        email: (!email.is_empty()).then_some(email),
        groups: groups.into_iter().collect::<BTreeSet<_>>(),
        language: if language.is_empty() { "en".to_string() } else { language },
        timezone: None,
        quota_bytes: quota,
        enabled: true,
        profile: BTreeMap::new(),
    };
    world.add_user(user, now);
    Ok(call.ocs.ok(json!({ "id": uid })))
}

/// A list parameter: `name[]=…` form fields or a JSON array (a single
/// string counts as one item).
fn list_param(call: &OcsCall, name: &str) -> Vec<String> {
    match call.params.get(name) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| match item {
                Value::String(text) => Some(text.clone()),
                Value::Number(number) => Some(number.to_string()),
                _ => None,
            })
            .filter(|item| !item.is_empty())
            .collect(),
        Some(Value::String(text)) if !text.is_empty() => vec![text.clone()],
        _ => Vec::new(),
    }
}

/// `Manager::validateUserId`.
fn valid_uid(uid: &str) -> Result<(), &'static str> {
    let allowed =
        |character: char| character.is_ascii_alphanumeric() || " _.@-'".contains(character);
    if !uid.chars().all(allowed) {
        return Err(
            "Only the following characters are allowed in an Login: \"a-z\", \"A-Z\", \"0-9\", spaces and \"_.@-'\"",
        );
    }
    if uid.trim().is_empty() {
        return Err("A valid Login must be provided");
    }
    if uid.trim() != uid {
        return Err("Login contains whitespace at the beginning or at the end");
    }
    if uid == "." || uid == ".." {
        return Err("Login must not consist of dots only");
    }
    if uid.len() > UID_LENGTH_MAX {
        return Err("Login is too long");
    }
    Ok(())
}

fn valid_email(email: &str) -> bool {
    let Some((local, domain)) = email.rsplit_once('@') else { return false };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !email.contains(char::is_whitespace)
}

fn valid_language(code: &str) -> bool {
    let (language, region) = code.split_once('_').unwrap_or((code, ""));
    (2..=3).contains(&language.len())
        && language.chars().all(|c| c.is_ascii_lowercase())
        && (region.is_empty()
            || ((2..=4).contains(&region.len()) && region.chars().all(|c| c.is_ascii_alphabetic())))
}

/// A quota as `editUser` reads it: "none" or "default" (unlimited),
/// bytes, or a size such as "12MB" or "1.5 GB"; stored as Nextcloud stores
/// it, rounded through `humanFileSize`. `None`: not a quota.
fn parse_quota(text: &str) -> Option<Option<i64>> {
    if text == "none" || text == "default" {
        return Some(None);
    }
    let bytes = computer_file_size(text)?;
    if bytes == -1.0 {
        return Some(None);
    }
    Some(Some(computer_file_size(&human_file_size(bytes))?.round() as i64))
}

/// `OCP\Util::computerFileSize`.
fn computer_file_size(text: &str) -> Option<f64> {
    let lower = text.trim().to_lowercase();
    if let Ok(number) = lower.parse::<f64>() {
        return Some(number);
    }
    let units: [(&str, f64); 11] = [
        ("kb", 1024.0),
        ("mb", 1024f64.powi(2)),
        ("gb", 1024f64.powi(3)),
        ("tb", 1024f64.powi(4)),
        ("pb", 1024f64.powi(5)),
        ("k", 1024.0),
        ("m", 1024f64.powi(2)),
        ("g", 1024f64.powi(3)),
        ("t", 1024f64.powi(4)),
        ("p", 1024f64.powi(5)),
        ("b", 1.0),
    ];
    let (suffix, factor) = units.iter().find(|(suffix, _)| lower.ends_with(suffix))?;
    let number = lower.strip_suffix(suffix)?.trim();
    // PHP's `(float)` cast: the leading number, 0 when there is none.
    let end = number
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map_or(number.len(), |(index, _)| index);
    let value = number[..end].parse::<f64>().unwrap_or(0.0);
    Some((value * factor).round())
}

/// `OCP\Util::humanFileSize`.
fn human_file_size(bytes: f64) -> String {
    if bytes < 1024.0 {
        return format!("{bytes} B");
    }
    let kilo = (bytes / 1024.0).round();
    if kilo < 1024.0 {
        return format!("{kilo} KB");
    }
    let round1 = |value: f64| (value * 10.0).round() / 10.0;
    let mut value = round1(kilo / 1024.0);
    for unit in ["MB", "GB", "TB"] {
        if value < 1024.0 {
            return format!("{value} {unit}");
        }
        value = round1(value / 1024.0);
    }
    format!("{value} PB")
}

/// The keys `editUser` lets a user change on their own account.
const SELF_EDITABLE: &[&str] = &[
    "display",
    "displayname",
    "email",
    "password",
    "language",
    "locale",
    "phone",
    "address",
    "website",
    "twitter",
    "fediverse",
    "organisation",
    "role",
    "headline",
    "biography",
    "profile_enabled",
];

/// `editUser`: `key` and `value`. Oneself: the profile, password and
/// language (an admin their quota too); an admin: anyone's.
async fn edit_user(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::User>,
) -> OcsResult {
    let uid = call.path_param("uid").to_string();
    let key = call.text("key").unwrap_or_default();
    let value = call.text("value").unwrap_or_default();
    let mut world = shared.world();
    if !world.users.contains_key(&uid) {
        return Err(call.ocs.fail(code::NOT_FOUND, ""));
    }
    let admin = is_admin(&world, call.uid());
    let permitted = if uid == call.uid() {
        SELF_EDITABLE.contains(&key.as_str()) || (admin && key == "quota")
    } else if admin {
        SELF_EDITABLE.contains(&key.as_str()) || key == "quota"
    } else {
        return Err(call.ocs.fail(code::NOT_FOUND, ""));
    };
    if !permitted {
        return Err(call.ocs.fail(113, ""));
    }
    let user = world.users.get_mut(&uid).expect("checked above");
    match key.as_str() {
        "display" | "displayname" => {
            let name = value.trim();
            if name.is_empty() {
                return Err(call.ocs.fail(101, "Invalid display name"));
            }
            user.display_name = name.to_string();
        }
        "email" => {
            if value.is_empty() {
                user.email = None;
            } else if valid_email(&value) {
                user.email = Some(value);
            } else {
                return Err(call.ocs.fail(101, ""));
            }
        }
        "quota" => {
            user.quota_bytes = parse_quota(&value)
                .ok_or_else(|| call.ocs.fail(102, format!("Invalid quota value {value}")))?;
        }
        "password" => {
            if value.is_empty() {
                return Err(call.ocs.fail(107, "A valid password must be provided"));
            }
            user.password = value;
        }
        "language" => {
            if !valid_language(&value) {
                return Err(call.ocs.fail(102, "Invalid language"));
            }
            user.language = value;
        }
        "locale" => {
            if !valid_language(&value) {
                return Err(call.ocs.fail(102, "Invalid locale"));
            }
            user.profile.insert(key, value);
        }
        _ => {
            user.profile.insert(key, value);
        }
    }
    Ok(call.ocs.ok(json!([])))
}

/// `deleteUser`: an admin deletes anyone but themselves (101).
async fn delete_user(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::SubAdmin>,
) -> OcsResult {
    let uid = call.path_param("uid").to_string();
    let mut world = shared.world();
    if !world.users.contains_key(&uid) {
        return Err(call.ocs.fail(code::NOT_FOUND, ""));
    }
    if uid == call.uid() {
        return Err(call.ocs.fail(101, ""));
    }
    if !is_admin(&world, call.uid()) {
        return Err(call.ocs.fail(code::NOT_FOUND, ""));
    }
    world.remove_user(&uid);
    Ok(call.ocs.ok(json!([])))
}

async fn enable_user(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::SubAdmin>,
) -> OcsResult {
    set_enabled(&shared, &call, true)
}

async fn disable_user(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::SubAdmin>,
) -> OcsResult {
    set_enabled(&shared, &call, false)
}

/// `setEnabled`: unknown accounts and oneself are 101, other users' 998.
fn set_enabled(shared: &crate::Shared, call: &OcsCall, enabled: bool) -> OcsResult {
    let uid = call.path_param("uid");
    let mut world = shared.world();
    if !world.users.contains_key(uid) || uid == call.uid() {
        return Err(call.ocs.fail(101, ""));
    }
    if !is_admin(&world, call.uid()) {
        return Err(call.ocs.fail(code::NOT_FOUND, ""));
    }
    if let Some(user) = world.users.get_mut(uid) {
        user.enabled = enabled;
    }
    Ok(call.ocs.ok(json!([])))
}

/// `getUsersGroups`: oneself or, for an admin, anyone.
async fn user_groups(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::User>,
) -> OcsResult {
    let uid = call.path_param("uid");
    let world = shared.world();
    let Some(user) = world.user(uid) else {
        return Err(call.ocs.fail(code::NOT_FOUND, ""));
    };
    if uid != call.uid() && !is_admin(&world, call.uid()) {
        return Err(call.ocs.fail(code::NOT_FOUND, ""));
    }
    Ok(call.ocs.ok(json!({ "groups": user.groups.iter().collect::<Vec<_>>() })))
}

/// `addToGroup`: 101 no group named, 102 unknown group, 103 unknown
/// account, 104 not allowed.
async fn add_to_group(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::SubAdmin>,
) -> OcsResult {
    let uid = call.path_param("uid").to_string();
    let gid = call.text("groupid").unwrap_or_default();
    let mut world = shared.world();
    check_membership_change(&call, &world, &uid, &gid)?;
    if let Some(user) = world.users.get_mut(&uid) {
        user.groups.insert(gid);
    }
    Ok(call.ocs.ok(json!([])))
}

/// `removeFromGroup`: as [`add_to_group`], and an admin cannot leave the
/// admin group (105).
async fn remove_from_group(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::SubAdmin>,
) -> OcsResult {
    let uid = call.path_param("uid").to_string();
    let gid = call.text("groupid").unwrap_or_default();
    let mut world = shared.world();
    check_membership_change(&call, &world, &uid, &gid)?;
    if uid == call.uid() && gid == "admin" {
        return Err(call.ocs.fail(105, "Cannot remove yourself from the admin group"));
    }
    if let Some(user) = world.users.get_mut(&uid) {
        user.groups.remove(&gid);
    }
    Ok(call.ocs.ok(json!([])))
}

fn check_membership_change(
    call: &OcsCall,
    world: &World,
    uid: &str,
    gid: &str,
) -> Result<(), super::OcsError> {
    if gid.trim().is_empty() {
        return Err(call.ocs.fail(101, ""));
    }
    if !world.groups.contains_key(gid) {
        return Err(call.ocs.fail(102, ""));
    }
    if !world.users.contains_key(uid) {
        return Err(call.ocs.fail(103, ""));
    }
    if !is_admin(world, call.uid()) {
        return Err(call.ocs.fail(104, ""));
    }
    Ok(())
}

/// `getGroups`: any user, searched by gid or display name.
async fn list_groups(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::SubAdmin>,
) -> OcsResult {
    let world = shared.world();
    let page = Page::of(&call);
    let gids = page.apply(world.groups.iter().map(|(gid, name)| (gid.as_str(), [name.as_str()])));
    Ok(call.ocs.ok(json!({ "groups": gids })))
}

/// `addGroup` (admins): 101 no name, 102 exists.
async fn add_group(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::Admin>,
) -> OcsResult {
    let gid = call.text("groupid").unwrap_or_default();
    if gid.is_empty() {
        return Err(call.ocs.fail(101, "Invalid group name"));
    }
    let mut world = shared.world();
    if world.groups.contains_key(&gid) {
        return Err(call.ocs.fail(102, "group exists"));
    }
    let display_name = call.text("displayname").filter(|name| !name.is_empty());
    world.groups.insert(gid.clone(), display_name.unwrap_or(gid));
    Ok(call.ocs.ok(json!([])))
}

/// `getGroupUsers`: the members' uids, for an admin (403 for others).
async fn group_users(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::SubAdmin>,
) -> OcsResult {
    let gid = call.path_param("gid");
    let world = shared.world();
    if !world.groups.contains_key(gid) {
        return Err(call.ocs.fail(404, "The requested group could not be found"));
    }
    if !is_admin(&world, call.uid()) {
        return Err(call.ocs.fail(403, ""));
    }
    let members: Vec<&str> = world
        .users
        .values()
        .filter(|user| user.groups.contains(gid))
        .map(|user| user.uid.as_str())
        .collect();
    Ok(call.ocs.ok(json!({ "users": members })))
}

/// `deleteGroup` (admins): 101 unknown, 102 the admin group.
async fn delete_group(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::Admin>,
) -> OcsResult {
    let gid = call.path_param("gid").to_string();
    let mut world = shared.world();
    if !world.groups.contains_key(&gid) {
        return Err(call.ocs.fail(101, ""));
    }
    if gid == "admin" {
        return Err(call.ocs.fail(102, ""));
    }
    world.remove_group(&gid);
    Ok(call.ocs.ok(json!([])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_round_trip_through_human_file_size_as_nextcloud_stores_them() {
        assert_eq!(parse_quota("12MB"), Some(Some(12 * 1024 * 1024)));
        assert_eq!(parse_quota("12 MB"), Some(Some(12 * 1024 * 1024)));
        assert_eq!(parse_quota("1000"), Some(Some(1000)));
        assert_eq!(parse_quota("2048"), Some(Some(2048)));
        assert_eq!(parse_quota("1500000"), Some(Some(1_468_006)));
        assert_eq!(parse_quota("none"), Some(None));
        assert_eq!(parse_quota("default"), Some(None));
        assert_eq!(parse_quota("-1"), Some(None));
        assert_eq!(parse_quota("lots"), None);
        assert_eq!(parse_quota("12X"), None);
    }

    #[test]
    fn uids_follow_the_user_managers_rules() {
        assert!(valid_uid("brand-new-user").is_ok());
        assert!(valid_uid("o'neil@example.com").is_ok());
        assert!(valid_uid("with space").is_ok());
        assert!(valid_uid("").is_err());
        assert!(valid_uid(" lead").is_err());
        assert!(valid_uid("..").is_err());
        assert!(valid_uid("a/b").is_err());
        assert!(valid_uid(&"x".repeat(65)).is_err());
    }
}
