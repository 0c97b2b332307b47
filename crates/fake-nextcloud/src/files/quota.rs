//! Quota as Nextcloud applies it to files: what is free is the owner's
//! quota less the size of the owner's files (what others shared with them
//! does not count), and a write that needs more than is free is refused
//! with sabre's `InsufficientStorage` (507), as the dav app's QuotaPlugin
//! does before a PUT, the MOVE that assembles a chunked upload, and a COPY.
//!
//! Whose quota: a file being overwritten counts against its owner's (a
//! recipient with no space of their own may still edit a file shared with
//! them); a new file against the owner of the folder it lands in.

use crate::dav::DavError;
use crate::storage::{self, Viewer};
use crate::world::World;
use http::StatusCode;

/// `FileInfo::SPACE_UNLIMITED`: what is free under no quota.
pub(crate) const SPACE_UNLIMITED: i64 = -3;

/// The bytes `owner` may still write, or [`SPACE_UNLIMITED`].
pub(crate) fn free_space(world: &World, owner: &str) -> i64 {
    let Some(quota) = world.user(owner).and_then(|user| user.quota_bytes) else {
        return SPACE_UNLIMITED;
    };
    let used = world.storage.node_at(owner, "").map(|root| world.storage.size(root)).unwrap_or(0);
    (quota - used as i64).max(0)
}

/// QuotaPlugin's check before `length` bytes are written at the viewer's
/// `path`. A path that does not resolve passes: the write itself reports
/// what is wrong with it.
pub(crate) fn check(
    world: &World,
    viewer: Viewer<'_>,
    path: &str,
    length: u64,
) -> Result<(), DavError> {
    let owner = match world.storage.resolve(viewer, path) {
        Ok(entry) => entry.node.owner.clone(),
        Err(_) => {
            let (parent, _) = storage::parent_and_name(path);
            match world.storage.resolve(viewer, parent) {
                Ok(entry) => entry.node.owner.clone(),
                Err(_) => return Ok(()),
            }
        }
    };
    let free = free_space(world, &owner);
    if free >= 0 && length > free as u64 {
        return Err(insufficient(path, length, free));
    }
    Ok(())
}

fn insufficient(path: &str, length: u64, free: i64) -> DavError {
    DavError::Condition {
        status: StatusCode::INSUFFICIENT_STORAGE,
        exception: "Sabre\\DAV\\Exception\\InsufficientStorage",
        message: format!("Insufficient space in /{path}, {length} required, {free} available"),
        condition: String::new(),
    }
}
