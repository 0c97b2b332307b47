//! files_sharing's OCS shares API (`ShareAPIController`): list, show,
//! create, update and delete user, group and link shares (a link's own
//! fields in [`super::links`]).
//!
//! Shares live in [`crate::storage::Storage`], so a share created or deleted
//! here changes what WebDAV, SEARCH and the converter see at once: deleting a
//! share is how tests revoke access. Tamebi offers no tool that makes links;
//! users have them, and clients list them.

use super::guard;
use super::{Guarded, OcsCall, OcsError, OcsResult, USER_MISSING};
use super::{app_config, links};
use crate::AppState;
use crate::storage::{self, Link, Share, ShareId, ShareType, StorageError, permission};
use crate::world::{User, World};
use axum::extract::State;
use serde_json::{Value, json};

const WRONG_SHARE_ID: &str = "Wrong share ID, share does not exist";
const WRONG_PATH: &str = "Wrong path, file/folder does not exist";
const COULD_NOT_DELETE: &str = "Could not delete share";

pub async fn list(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::User>,
) -> OcsResult {
    let flag = |name: &str| call.text(name).as_deref() == Some("true");
    let world = shared.world();
    let viewer = caller(&call, &world)?.viewer();
    let path_node = match call.text("path") {
        None => None,
        Some(path) => {
            let Ok(path) = storage::clean_path(&path) else {
                return Err(call.ocs.fail(404, WRONG_PATH));
            };
            match world.storage.resolve(viewer, &path) {
                Ok(entry) => Some((path, entry.node.id, entry.node.is_folder())),
                Err(_) => return Err(call.ocs.fail(404, WRONG_PATH)),
            }
        }
    };
    let shares: Vec<&Share> = if flag("shared_with_me") {
        world
            .storage
            .received_shares(viewer)
            .into_iter()
            .filter(|share| path_node.as_ref().is_none_or(|(_, id, _)| *id == share.node))
            .collect()
    } else if flag("subfiles") {
        let Some((path, _, is_folder)) = &path_node else {
            return Err(call.ocs.fail(400, "Not a directory"));
        };
        if !is_folder {
            return Err(call.ocs.fail(400, "Not a directory"));
        }
        let children: Vec<u64> = match world.storage.children(viewer, path) {
            Ok(children) => children.iter().map(|entry| entry.node.id).collect(),
            Err(_) => return Err(call.ocs.fail(404, WRONG_PATH)),
        };
        // `getSharesInDir`: every share of a child (by anyone), but the
        // ones made with the caller; all of them to someone with resharing
        // rights on the folder, else only the caller's own.
        let in_dir: Vec<&Share> = world
            .storage
            .shares()
            .filter(|share| children.contains(&share.node))
            .filter(|share| {
                !(share.share_type == ShareType::User && share.share_with == viewer.uid)
            })
            .filter(|share| format_share(&world, viewer.uid, share).is_some())
            .collect();
        let folder = path_node.as_ref().map(|(_, id, _)| *id).expect("checked above");
        let resharing = resharing_rights(&world, viewer.uid, &in_dir, folder);
        in_dir.into_iter().filter(|share| resharing || share.initiator == viewer.uid).collect()
    } else {
        // `getFormattedShares`: the caller's own shares; with `reshares`,
        // every share of the node at `path` (without one: those of the
        // caller's nodes too), shown whole to someone with resharing
        // rights and cut to the caller's own otherwise.
        let reshares = flag("reshares");
        let node = path_node.as_ref().map(|(_, id, _)| *id);
        let candidates: Vec<&Share> = world
            .storage
            .shares()
            .filter(|share| match node {
                Some(node) => share.node == node && (reshares || share.initiator == viewer.uid),
                None => share.initiator == viewer.uid || (reshares && share.owner == viewer.uid),
            })
            .filter(|share| {
                !(share.share_type == ShareType::User && share.share_with == viewer.uid)
            })
            .collect();
        let resharing = node
            .is_some_and(|node| resharing_rights(&world, viewer.uid, &candidates, node))
            || resharing_rights_without_node(&world, viewer.uid, &candidates);
        candidates.into_iter().filter(|share| resharing || share.initiator == viewer.uid).collect()
    };
    let formatted: Vec<Value> =
        shares.into_iter().filter_map(|share| format_share(&world, call.uid(), share)).collect();
    Ok(call.ocs.ok(Value::Array(formatted)))
}

pub async fn show(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::User>,
) -> OcsResult {
    let id = call.path_param("id").to_string();
    let world = shared.world();
    let share = accessible_share(&call, &world, &id, true, WRONG_SHARE_ID)?;
    let formatted = formatted_share(&call, &world, share, WRONG_SHARE_ID)?;
    Ok(call.ocs.ok(json!([formatted])))
}

pub async fn create(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::User>,
) -> OcsResult {
    let now = shared.now();
    let Ok(permissions) = call.integer("permissions") else {
        return Err(call.ocs.fail(400, "Invalid permissions"));
    };
    let share_type = match call.integer("shareType") {
        Ok(Some(share_type)) => share_type,
        Ok(None) | Err(_) => -1,
    };
    let Some(path) = call.text("path") else {
        return Err(call.ocs.fail(404, "Please specify a file or folder path"));
    };
    let mut world = shared.world();
    let user = caller(&call, &world)?.clone();
    let Ok(path) = storage::clean_path(&path) else {
        return Err(call.ocs.fail(404, WRONG_PATH));
    };
    let (node, node_name, is_folder, held) = match world.storage.resolve(user.viewer(), &path) {
        // `Manager::generalCreateChecks`, for every kind of share.
        Ok(_) if path.is_empty() => {
            return Err(call.ocs.fail(403, "You cannot share your root folder"));
        }
        Ok(entry) => (
            entry.node.id,
            entry.node.name().to_string(),
            entry.node.is_folder(),
            entry.permissions,
        ),
        Err(_) => return Err(call.ocs.fail(404, WRONG_PATH)),
    };
    if share_type == 3 {
        let settings = app_config::Settings::of(&world);
        if !settings.links_allowed() {
            return Err(call.ocs.fail(404, "Public link sharing is disabled by the administrator"));
        }
        let link_permissions = links::permissions(&call, &settings, permissions, is_folder)?;
        let default_expiration = links::default_expiration(&call, &settings, true, now);
        if held & permission::SHARE == 0 {
            return Err(call.ocs.fail(404, format!("You are not allowed to share {node_name}")));
        }
        if link_permissions & !held != 0 {
            return Err(call.ocs.fail(404, format!("Cannot increase permissions of {node_name}")));
        }
        let base = crate::oidc::request_base(&shared, &world, &call.headers);
        let today = crate::clock::day(now);
        let created = world.storage.create_share(
            user.viewer(),
            &path,
            ShareType::Link,
            "",
            link_permissions,
            None,
            now,
        );
        let Ok(id) = created else {
            return Err(call.ocs.fail(404, format!("You are not allowed to share {node_name}")));
        };
        let share = world.storage.share_mut(id).expect("share just created");
        let token = links::token();
        share.link =
            Some(Link { url: format!("{base}/index.php/s/{token}"), token, password: None });
        share.permissions = link_permissions;
        return finish_created(&call, &mut world, id, default_expiration, &today);
    }
    let settings = app_config::Settings::of(&world);
    let default_expiration = links::default_expiration(&call, &settings, false, now);
    let permissions = permissions.unwrap_or(settings.default_permissions());
    if !(0..=permission::ALL as i64).contains(&permissions) {
        return Err(call.ocs.fail(404, "Invalid permissions"));
    }
    // Shares always carry read; a single file never grants create or delete.
    let mut permissions = permissions as u8 | permission::READ;
    if !is_folder {
        permissions &= !(permission::DELETE | permission::CREATE);
    }
    let share_with = call.text("shareWith").unwrap_or_default();
    let (share_type, target) = match share_type {
        0 => {
            let Some(recipient) = world.user(&share_with).cloned() else {
                return Err(call.ocs.fail(404, "Please specify a valid account to share with"));
            };
            if recipient.uid == user.uid {
                return Err(call.ocs.fail(403, "Cannot share with yourself"));
            }
            // `Manager::userCreateChecks`: one user share per node and
            // recipient (`AlreadySharedException`, a 403).
            let already = world.storage.shares().any(|share| {
                share.node == node
                    && share.share_type == ShareType::User
                    && share.share_with == recipient.uid
            });
            if already {
                return Err(call.ocs.fail(
                    403,
                    format!(
                        "Sharing {node_name} failed, because this item is already shared with the account {}",
                        recipient.display_name
                    ),
                ));
            }
            // A node the recipient already has mounted (through a group)
            // stays at its mount: the shares are merged.
            let mounted = world
                .storage
                .mounts(recipient.viewer())
                .into_iter()
                .find(|share| share.node == node)
                .map(|share| share.target_for(&recipient.uid).to_string());
            let target = mounted
                .unwrap_or_else(|| world.storage.free_target(recipient.viewer(), &node_name));
            (ShareType::User, target)
        }
        1 => {
            if !world.groups.contains_key(&share_with) {
                return Err(call.ocs.fail(404, "Please specify a valid group"));
            }
            (ShareType::Group, node_name.clone())
        }
        // Talk is not in the fake: `ShareAPIController` without the room
        // share helper, naming the node by its full path.
        10 => {
            return Err(call.ocs.fail(
                403,
                format!(
                    "Sharing /{}/files/{} failed because the back end does not support room shares",
                    user.uid,
                    path.trim_start_matches('/')
                ),
            ));
        }
        4 => {
            return create_mail_share(
                &shared,
                &call,
                &mut world,
                &user,
                &path,
                &share_with,
                permissions,
                held,
                now,
            );
        }
        6 | 7 => {
            return Err(call.ocs.fail(
                403,
                "Sharing failed because the back end does not allow shares from this type",
            ));
        }
        _ => return Err(call.ocs.fail(400, "Unknown share type")),
    };
    if held & permission::SHARE == 0 {
        return Err(call.ocs.fail(404, format!("You are not allowed to share {node_name}")));
    }
    if permissions & !held != 0 {
        return Err(call.ocs.fail(404, format!("Cannot increase permissions of {node_name}")));
    }
    // Each member of a group gets the mount under a name free in their
    // own files, or joins the mount they already have of the node.
    let member_targets: std::collections::BTreeMap<String, String> = match share_type {
        ShareType::Group => world
            .users
            .values()
            .filter(|member| member.groups.contains(&share_with) && member.uid != user.uid)
            .filter_map(|member| {
                let mounted = world
                    .storage
                    .mounts(member.viewer())
                    .into_iter()
                    .find(|share| share.node == node)
                    .map(|share| share.target_for(&member.uid).to_string());
                let own =
                    mounted.unwrap_or_else(|| world.storage.free_target(member.viewer(), &target));
                (own != target).then(|| (member.uid.clone(), own))
            })
            .collect(),
        _ => std::collections::BTreeMap::new(),
    };
    let created = world.storage.create_share(
        user.viewer(),
        &path,
        share_type,
        &share_with,
        permissions,
        Some(&target),
        now,
    );
    if let Ok(id) = created
        && let Some(share) = world.storage.share_mut(id)
    {
        share.member_targets = member_targets;
    }
    let id = match created {
        Ok(id) => id,
        Err(StorageError::Forbidden) => {
            return Err(call.ocs.fail(404, format!("You are not allowed to share {node_name}")));
        }
        Err(_) => return Err(call.ocs.fail(404, WRONG_PATH)),
    };
    if world.server.force_share_accept {
        world.storage.require_acceptance(id);
    }
    finish_created(&call, &mut world, id, default_expiration, &crate::clock::day(now))
}

/// `getInheritedShares`: the shares of the folders above `path` (in its
/// owner's files, up to their root), for a caller who may reshare the
/// node: each as `getFormattedShares` would list the folder's shares with
/// `reshares`, with `via_fileid` and `via_path` naming the nearest of those
/// folders the caller sees.
pub async fn inherited(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::User>,
) -> OcsResult {
    let world = shared.world();
    let viewer = caller(&call, &world)?.viewer();
    let Ok(path) = storage::clean_path(&call.text("path").unwrap_or_default()) else {
        return Err(call.ocs.fail(404, WRONG_PATH));
    };
    let Ok(entry) = world.storage.resolve(viewer, &path) else {
        return Err(call.ocs.fail(404, WRONG_PATH));
    };
    if entry.permissions & permission::SHARE == 0 {
        return Err(call.ocs.fail(404, "no sharing rights on this item"));
    }
    let node = entry.node;
    let mut parents = Vec::new();
    let mut at = node.path.as_str();
    while let Some((parent, _)) = at.rsplit_once('/') {
        if let Some(folder) = world.storage.node_at(&node.owner, parent) {
            parents.push(folder);
        }
        at = parent;
    }
    let (mut via, mut formatted, mut known) = (None, Vec::new(), Vec::new());
    for folder in parents {
        if let Some(path) = world.storage.path_of(viewer, folder.id) {
            via = Some((folder.id, path));
        }
        let candidates: Vec<&Share> = world
            .storage
            .shares()
            .filter(|share| share.node == folder.id)
            .filter(|share| {
                !(share.share_type == ShareType::User && share.share_with == viewer.uid)
            })
            .collect();
        let resharing = resharing_rights(&world, viewer.uid, &candidates, folder.id);
        for share in candidates {
            if known.contains(&share.id) || !(resharing || share.initiator == viewer.uid) {
                continue;
            }
            let Some(mut shown) = format_share(&world, viewer.uid, share) else { continue };
            if let Some((fileid, path)) = &via {
                shown["via_fileid"] = json!(fileid);
                shown["via_path"] = json!(format!("/{path}"));
            }
            known.push(share.id);
            formatted.push(shown);
        }
    }
    Ok(call.ocs.ok(Value::Array(formatted)))
}

/// `pendingShares`: the user and group shares waiting for the caller to
/// accept them, with `path` the node's name and `permissions` 0, as
/// `ShareAPIController` formats them.
pub async fn pending(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::User>,
) -> OcsResult {
    let world = shared.world();
    let viewer = caller(&call, &world)?.viewer();
    let formatted: Vec<Value> = world
        .storage
        .pending_for(viewer)
        .into_iter()
        .filter_map(|share| format_share(&world, call.uid(), share))
        .map(|mut share| {
            share["permissions"] = json!(0);
            share
        })
        .collect();
    Ok(call.ocs.ok(Value::Array(formatted)))
}

/// `acceptShare`: mounts a pending share in the caller's files.
pub async fn accept(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::User>,
) -> OcsResult {
    let id = call.path_param("id").to_string();
    let mut world = shared.world();
    let share = accessible_share(&call, &world, &id, true, WRONG_SHARE_ID)?.id;
    let user = caller(&call, &world)?.clone();
    if world.storage.accept(user.viewer(), share).is_err() {
        return Err(call
            .ocs
            .fail(400, "The share could not be accepted: you are not its recipient"));
    }
    Ok(call.ocs.ok(json!([])))
}

pub async fn update(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::User>,
) -> OcsResult {
    let id = call.path_param("id").to_string();
    let mut world = shared.world();
    let share = accessible_share(&call, &world, &id, false, WRONG_SHARE_ID)?.clone();
    if share.owner != call.uid() && share.initiator != call.uid() {
        return Err(call.ocs.fail(403, "You are not allowed to edit incoming shares"));
    }
    let updatable = [
        "permissions",
        "password",
        "publicUpload",
        "expireDate",
        "note",
        "label",
        "hideDownload",
        "attributes",
    ];
    if !updatable.iter().any(|name| call.params.contains_key(*name)) {
        return Err(call.ocs.fail(400, "Wrong or no update parameter given"));
    }
    let is_folder = world.storage.node(share.node).is_some_and(storage::Node::is_folder);
    let given = call.integer("permissions");
    let link_permissions = match (&share.share_type, given) {
        (ShareType::Link, Ok(given))
            if given.is_some() || call.params.contains_key("publicUpload") =>
        {
            Some(links::permissions(&call, &app_config::Settings::of(&world), given, is_folder)?)
        }
        _ => None,
    };
    let new_permissions = match (link_permissions, given) {
        (Some(permissions), _) => Some(permissions as i64),
        (None, Ok(permissions)) if share.share_type != ShareType::Link => permissions,
        _ => None,
    };
    if let Some(permissions) = new_permissions {
        if !(0..=permission::ALL as i64).contains(&permissions) {
            return Err(call.ocs.fail(400, "Invalid permissions"));
        }
        let mut permissions = permissions as u8;
        if !is_folder && share.share_type != ShareType::Link {
            permissions &= !(permission::DELETE | permission::CREATE);
        }
        // As at creation (`Manager::generalCreateChecks`): no more than the
        // updater holds on the node, what a resharer received.
        let user = caller(&call, &world)?;
        let held = world
            .storage
            .path_of(user.viewer(), share.node)
            .and_then(|path| world.storage.resolve(user.viewer(), &path).ok())
            .map(|entry| (entry.permissions, entry.node.name().to_string()));
        if let Some((held, name)) = held
            && permissions & !held != 0
        {
            return Err(call.ocs.fail(404, format!("Cannot increase permissions of {name}")));
        }
        if world.storage.update_share_permissions(call.uid(), share.id, permissions).is_err() {
            return Err(call.ocs.fail(404, WRONG_SHARE_ID));
        }
        cap_reshares(&mut world, share.id);
    } else if given.is_err() {
        return Err(call.ocs.fail(400, "Invalid permissions"));
    }
    let today = crate::clock::day(shared.now());
    let stored = world.storage.share_mut(share.id).expect("share still exists");
    links::apply_fields(&call, stored, &today)?;
    inherit_restrictions(&mut world, share.id);
    let share = world.storage.share(share.id).expect("share still exists");
    Ok(call.ocs.ok(formatted_share(&call, &world, share, WRONG_SHARE_ID)?))
}

pub async fn delete(
    State(shared): State<AppState>,
    Guarded(call, _): Guarded<guard::User>,
) -> OcsResult {
    let id = call.path_param("id").to_string();
    let now = shared.now();
    let mut world = shared.world();
    let share = accessible_share(&call, &world, &id, true, COULD_NOT_DELETE)?.clone();
    let user =
        world.user(call.uid()).cloned().ok_or_else(|| call.ocs.fail(404, COULD_NOT_DELETE))?;
    let result = if share.owner == user.uid || share.initiator == user.uid {
        world.storage.delete_share(&user.uid, share.id)
    } else if share.is_pending_for(&user.uid) {
        // Declining a share never accepted: nothing is mounted to leave.
        world.storage.decline(user.viewer(), share.id)
    } else if !is_recipient(&world, &user.uid, &share, true) {
        // Seen through resharing rights: not theirs to end.
        return Err(call.ocs.fail(403, COULD_NOT_DELETE));
    } else {
        // A recipient "deletes" by leaving: the mount goes away for them only
        // (group shares) or the share ends (user shares), as in Nextcloud.
        match world.storage.path_of(user.viewer(), share.node) {
            Some(path) => world.storage.delete(user.viewer(), &path, now),
            None => Err(StorageError::NotFound),
        }
    };
    result.map_err(|_| call.ocs.fail(404, COULD_NOT_DELETE))?;
    Ok(call.ocs.ok(json!([])))
}

/// The caller's account; gone only if a test removed it mid-session.
fn caller<'w>(call: &OcsCall, world: &'w World) -> Result<&'w User, OcsError> {
    world.user(call.uid()).ok_or_else(|| call.ocs.fail(404, USER_MISSING))
}

/// The share `id` names, if the caller may reach it: an unknown id is
/// "Wrong share ID", an inaccessible one `denied` (each route words it its
/// own way, as `ShareAPIController` does).
fn accessible_share<'w>(
    call: &OcsCall,
    world: &'w World,
    id: &str,
    check_groups: bool,
    denied: &str,
) -> Result<&'w Share, OcsError> {
    let share = parse_id(id)
        .and_then(|id| world.storage.share(id))
        .ok_or_else(|| call.ocs.fail(404, WRONG_SHARE_ID))?;
    if !can_access(world, call.uid(), share, check_groups) {
        return Err(call.ocs.fail(404, denied));
    }
    Ok(share)
}

/// [`format_share`] for the caller; a share they cannot see is refused with
/// `missing`.
fn formatted_share(
    call: &OcsCall,
    world: &World,
    share: &Share,
    missing: &str,
) -> Result<Value, OcsError> {
    format_share(world, call.uid(), share).ok_or_else(|| call.ocs.fail(404, missing))
}

fn parse_id(id: &str) -> Option<ShareId> {
    // Nextcloud accepts "ocinternal:12" as well as "12".
    id.strip_prefix("ocinternal:").unwrap_or(id).parse().ok()
}

/// `ShareAPIController::canAccessShare`.
fn can_access(world: &World, uid: &str, share: &Share, check_groups: bool) -> bool {
    if share.permissions == 0 {
        return false;
    }
    if share.owner == uid || share.initiator == uid || is_recipient(world, uid, share, check_groups)
    {
        return true;
    }
    // Resharing rights on the node: its other shares are visible too.
    holds(world, uid, share.node).is_some_and(|held| held & permission::SHARE != 0)
}

/// Whether `uid` is who the share was made for (a group share only when
/// groups are checked).
fn is_recipient(world: &World, uid: &str, share: &Share, check_groups: bool) -> bool {
    match share.share_type {
        ShareType::User => share.share_with == uid,
        ShareType::Group => {
            check_groups
                && world.user(uid).is_some_and(|user| user.groups.contains(&share.share_with))
                && !share.declined.contains(uid)
        }
        ShareType::Link | ShareType::Email => false,
    }
}

/// A mail share (`ShareByMailProvider`): a token of its own for one
/// address, with the link's expiry settings and an optional password.
/// The fake sends no mail.
#[allow(clippy::too_many_arguments)]
fn create_mail_share(
    shared: &crate::Shared,
    call: &OcsCall,
    world: &mut World,
    user: &crate::world::User,
    path: &str,
    address: &str,
    permissions: u8,
    held: u8,
    now: i64,
) -> OcsResult {
    let name = storage::parent_and_name(path).1.to_string();
    if !address.contains('@') {
        return Err(call.ocs.fail(404, "Please specify a valid email address"));
    }
    if held & permission::SHARE == 0 {
        return Err(call.ocs.fail(404, format!("You are not allowed to share {name}")));
    }
    let node = world.storage.resolve(user.viewer(), path).map(|entry| entry.node.id).ok();
    let already = world.storage.shares().any(|share| {
        Some(share.node) == node
            && share.share_type == ShareType::Email
            && share.share_with.eq_ignore_ascii_case(address)
    });
    if already {
        return Err(call.ocs.fail(
            403,
            format!("Sharing {name} failed, because this item is already shared with the account {address}"),
        ));
    }
    let settings = app_config::Settings::of(world);
    let default_expiration = links::default_expiration(call, &settings, true, now);
    let base = crate::oidc::request_base(shared, world, &call.headers);
    let today = crate::clock::day(now);
    let Ok(id) = world.storage.create_share(
        user.viewer(),
        path,
        ShareType::Email,
        address,
        permissions,
        None,
        now,
    ) else {
        return Err(call.ocs.fail(404, format!("You are not allowed to share {name}")));
    };
    let share = world.storage.share_mut(id).expect("share just created");
    let token = links::token();
    share.link = Some(Link { url: format!("{base}/index.php/s/{token}"), token, password: None });
    finish_created(call, world, id, default_expiration, &today)
}

/// The end of every create: the default expiry, the request's optional
/// fields (a refused one takes the new share back), the restrictions a
/// reshare inherits, and the answer.
fn finish_created(
    call: &OcsCall,
    world: &mut World,
    id: ShareId,
    default_expiration: Option<String>,
    today: &str,
) -> OcsResult {
    let share = world.storage.share_mut(id).expect("share just created");
    share.expiration = default_expiration;
    if let Err(refused) = links::apply_fields(call, share, today) {
        world.storage.remove_share(id);
        return Err(refused);
    }
    inherit_restrictions(world, id);
    let share = world.storage.share(id).expect("share just created");
    Ok(call.ocs.ok(formatted_share(call, world, share, WRONG_PATH)?))
}

/// After a share's permissions change, what its recipients made of it
/// (their reshares and links of the node or below it) keeps no more than
/// they now hold there.
fn cap_reshares(world: &mut World, id: ShareId) {
    let Some(share) = world.storage.share(id) else { return };
    if matches!(share.share_type, ShareType::Link | ShareType::Email) {
        return;
    }
    let Some(root) = world.storage.node(share.node) else { return };
    let (owner, root_path) = (root.owner.clone(), root.path.clone());
    let recipients: Vec<String> = world
        .users
        .values()
        .filter(|user| is_recipient(world, &user.uid, share, true))
        .map(|user| user.uid.clone())
        .collect();
    let capped: Vec<(ShareId, u8)> = world
        .storage
        .shares()
        .filter(|reshare| reshare.id != id && recipients.contains(&reshare.initiator))
        .filter(|reshare| {
            world.storage.node(reshare.node).is_some_and(|node| {
                node.owner == owner
                    && (node.path == root_path || node.path.starts_with(&format!("{root_path}/")))
            })
        })
        .filter_map(|reshare| {
            let held = holds(world, &reshare.initiator, reshare.node)?;
            (reshare.permissions & !held != 0).then_some((reshare.id, reshare.permissions & held))
        })
        .collect();
    for (reshare, permissions) in capped {
        if let Some(reshare) = world.storage.share_mut(reshare) {
            reshare.permissions = permissions;
        }
    }
}

/// A reshare keeps the download restriction of the share its creator
/// received the node through: its attributes say `download` false, and a
/// link hides its download, whatever was asked.
fn inherit_restrictions(world: &mut World, id: ShareId) {
    let Some(share) = world.storage.share(id) else { return };
    let restricted = world.user(&share.initiator).is_some_and(|user| {
        let viewer = user.viewer();
        world
            .storage
            .path_of(viewer, share.node)
            .and_then(|path| world.storage.resolve(viewer, &path).ok())
            .and_then(|entry| entry.share)
            .is_some_and(|received| !received.allows_download())
    });
    if !restricted {
        return;
    }
    let share = world.storage.share_mut(id).expect("looked up above");
    links::restrict_download(share);
    if share.share_type == ShareType::Link {
        share.hide_download = true;
    }
}

/// `shareProviderResharingRights` over a list of `node`'s shares: whether
/// `uid` may see all of them — they own one, may reshare the node, or
/// received one that may be reshared.
fn resharing_rights(world: &World, uid: &str, shares: &[&Share], node: storage::FileId) -> bool {
    holds(world, uid, node).is_some_and(|held| held & permission::SHARE != 0)
        || resharing_rights_without_node(world, uid, shares)
}

/// [`resharing_rights`] when no node was named.
fn resharing_rights_without_node(world: &World, uid: &str, shares: &[&Share]) -> bool {
    shares.iter().any(|share| {
        share.owner == uid
            || (share.permissions & permission::SHARE != 0 && is_recipient(world, uid, share, true))
    })
}

/// The permissions `uid` holds on a node, if they see it at all.
fn holds(world: &World, uid: &str, node: storage::FileId) -> Option<u8> {
    let viewer = world.user(uid)?.viewer();
    let path = world.storage.path_of(viewer, node)?;
    world.storage.resolve(viewer, &path).ok().map(|entry| entry.permissions)
}

/// `ShareAPIController::formatShare`, as seen by `uid`; `None` when the
/// node is not visible to them (Nextcloud skips such shares).
fn format_share(world: &World, uid: &str, share: &Share) -> Option<Value> {
    let user = world.user(uid)?;
    let viewer = user.viewer();
    let node = world.storage.node(share.node)?;
    // The storage the viewer reaches the node on: their home, or the
    // mount of a share they received (`shared::/{mount point}`).
    let (path, item_permissions, is_mount_root, mount_type, storage_id) =
        match world.storage.path_of(viewer, node.id) {
            Some(path) => {
                let entry = world.storage.resolve(viewer, &path).ok()?;
                let (mount_type, storage_id) = match entry.share {
                    Some(mount) => ("shared", format!("shared::/{}", mount.target_for(uid))),
                    None => ("", format!("home::{}", node.owner)),
                };
                (path, entry.permissions, entry.is_mount_root, mount_type, storage_id)
            }
            // Not mounted yet: the pending list names it by its node.
            None if share.is_pending_for(uid) => {
                let storage_id = format!("shared::/{}", node.name());
                (node.name().to_string(), share.permissions, true, "shared", storage_id)
            }
            None => return None,
        };
    let display_name = |uid: &str| {
        world.user(uid).map(|user| user.display_name.clone()).unwrap_or(uid.to_string())
    };
    let (parent_path, _) = storage::parent_and_name(&node.path);
    let file_parent = world.storage.node_at(&node.owner, parent_path).map(|parent| parent.id);
    let storage_number =
        world.users.keys().position(|key| key == &node.owner).map(|index| index + 1).unwrap_or(0);
    let is_owner_side = share.owner == uid || share.initiator == uid;
    let mut formatted = json!({
        "id": share.id.to_string(),
        "share_type": share.share_type as u8,
        "uid_owner": share.initiator,
        "displayname_owner": display_name(&share.initiator),
        "permissions": share.permissions,
        "can_edit": is_owner_side,
        "can_delete": true,
        "stime": share.stime,
        "parent": null,
        "expiration": share.expiration.as_ref().map(|day| format!("{day} 00:00:00")),
        "token": null,
        "uid_file_owner": share.owner,
        "note": share.note,
        "label": share.label,
        "displayname_file_owner": display_name(&share.owner),
        "path": format!("/{path}"),
        "item_type": if node.is_folder() { "folder" } else { "file" },
        // A file has no create permission in Nextcloud's node info (27,
        // not 31: sharing-v1-part4 "… shows the file permissions").
        // A recipient may always remove a share's mount from their files
        // (delete), and a file never has create (sharing-v1-part4: 27).
        "item_permissions": ((item_permissions
            | if is_mount_root { permission::DELETE } else { 0 })
            & if node.is_folder() { !0 } else { !permission::CREATE }),
        "is-mount-root": is_mount_root,
        "mount-type": mount_type,
        "mimetype": node.mime(),
        "has_preview": false,
        "storage_id": storage_id,
        "storage": storage_number,
        "item_source": node.id,
        "file_source": node.id,
        "file_parent": file_parent,
        "file_target": share.file_target_for(uid),
        "item_size": world.storage.size(node),
        "item_mtime": node.mtime,
        "share_with": share.share_with,
        "mail_send": 0,
        "hide_download": u8::from(share.hide_download),
        // files_sharing answers the attributes as the JSON text it stores.
        "attributes": share.attributes.as_ref().map(links::attributes_text),
    });
    match share.share_type {
        ShareType::User => {
            let recipient = world.user(&share.share_with);
            formatted["share_with_displayname"] = json!(display_name(&share.share_with));
            formatted["share_with_displayname_unique"] = json!(
                recipient.and_then(|user| user.email.clone()).unwrap_or(share.share_with.clone())
            );
            formatted["status"] = json!([]);
        }
        ShareType::Group => {
            formatted["share_with_displayname"] = json!(
                world.groups.get(&share.share_with).cloned().unwrap_or(share.share_with.clone())
            );
        }
        ShareType::Link => {
            let link = share.link.as_ref()?;
            formatted["share_with"] = json!(link.password);
            formatted["password"] = json!(link.password);
            formatted["share_with_displayname"] = json!("(Shared link)");
            formatted["token"] = json!(link.token);
            formatted["url"] = json!(link.url);
            formatted["send_password_by_talk"] = json!(false);
        }
        // `formatShare` for a mail share: the address (the address book
        // names nobody), its password, its token, no url.
        ShareType::Email => {
            let link = share.link.as_ref()?;
            formatted["share_with"] = json!(share.share_with);
            formatted["share_with_displayname"] = json!(share.share_with);
            formatted["password"] = json!(link.password);
            formatted["password_expiration_time"] = Value::Null;
            formatted["send_password_by_talk"] = json!(false);
            formatted["token"] = json!(link.token);
        }
    }
    Some(formatted)
}
