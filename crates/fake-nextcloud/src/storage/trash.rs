//! The trash bin (Nextcloud's `files_trashbin`): a deleted node and its
//! subtree leave the tree for their owner's trash, named
//! `name.d<deletion time>`, with the versions of every file in it; a
//! recipient of a share who deletes something inside it also gets a copy in
//! their own trash (new file ids), as `Trashbin::move2trash` does.
//!
//! Restoring puts an item back where it was (the root when that folder is
//! gone or not writable), as "name (restored).ext" when the name is taken;
//! an item inside a deleted folder restores to the root, as upstream's
//! `restoreItem` passes no deletion time for it. Nothing in the trash is
//! seen by `resolve`, SEARCH or OCS: it is not in the tree.

use super::{
    FileEventKind, FileId, Node, Storage, StorageError, Version, Viewer, join, parent_and_name,
    permission, strip_under,
};

/// Bytes of trashed content (files and their versions) one user's trash
/// keeps; past it the oldest items expire, as Nextcloud's trash expiry
/// deletes the oldest to stay within its share of the quota.
pub const TRASH_BYTES_MAX: u64 = 256 * 1024 * 1024;

/// One deleted file or folder in a user's trash.
#[derive(Debug, Clone)]
pub struct TrashItem {
    /// The name it had.
    pub name: String,
    /// Unix seconds; the `.d` suffix of its trash name.
    pub deleted_at: i64,
    /// The folder it was in, in the trash owner's files ("" = the root).
    pub location: String,
    /// Who deleted it.
    pub deleted_by: String,
    /// The deleted node first, then its subtree; each `path` is relative to
    /// the item ("" for the node itself).
    pub nodes: Vec<Node>,
    /// The versions of the files in it, by file id.
    pub versions: Vec<(FileId, Vec<Version>)>,
}

impl TrashItem {
    /// `name.d<deletion time>`, its name in the trash.
    pub fn trash_name(&self) -> String {
        format!("{}.d{}", self.name, self.deleted_at)
    }

    /// Where it was: `Documents/report.md`, or `report.md` at the root.
    pub fn original_location(&self) -> String {
        join(&self.location, &self.name)
    }

    fn bytes(&self) -> u64 {
        let content: u64 =
            self.nodes.iter().filter_map(|node| node.content()).map(|c| c.len() as u64).sum();
        let versions: u64 = self
            .versions
            .iter()
            .flat_map(|(_, list)| list.iter())
            .map(|version| version.content.len() as u64)
            .sum();
        content + versions
    }
}

/// A node inside the trash as its DAV layer shows it.
#[derive(Debug, Clone)]
pub struct TrashEntry<'s> {
    pub item: &'s TrashItem,
    pub node: &'s Node,
    /// Path inside the item ("" for the item itself).
    pub rest: String,
}

impl TrashEntry<'_> {
    /// The name it had (`trashbin-filename`).
    pub fn filename(&self) -> &str {
        if self.rest.is_empty() { &self.item.name } else { parent_and_name(&self.rest).1 }
    }

    /// `trashbin-original-location`.
    pub fn original_location(&self) -> String {
        below(&self.item.original_location(), &self.rest)
    }

    /// Its name in the trash listing: the item carries the `.d` suffix,
    /// what is inside a deleted folder keeps its own name.
    pub fn trash_name(&self) -> String {
        if self.rest.is_empty() { self.item.trash_name() } else { self.filename().to_string() }
    }

    /// Bytes at or below it.
    pub fn size(&self) -> u64 {
        self.item
            .nodes
            .iter()
            .filter(|node| strip_under(&node.path, &self.rest).is_some())
            .filter_map(|node| node.content())
            .map(|content| content.len() as u64)
            .sum()
    }
}

/// `base/rest`, or `base` itself when `rest` is empty.
fn below(base: &str, rest: &str) -> String {
    if rest.is_empty() { base.to_string() } else { join(base, rest) }
}

/// "name (restored).ext", then "name (restored 2).ext", …: the extension
/// is what follows the last dot, as PHP's `pathinfo` splits it.
pub fn restored_name(name: &str, attempt: u32) -> String {
    let (stem, extension) = match name.rsplit_once('.') {
        Some((stem, extension)) => (stem, format!(".{extension}")),
        None => (name, String::new()),
    };
    if attempt < 2 {
        format!("{stem} (restored){extension}")
    } else {
        format!("{stem} (restored {attempt}){extension}")
    }
}

impl Storage {
    /// The viewer's trash, oldest first.
    pub fn trash(&self, uid: &str) -> &[TrashItem] {
        self.trash.get(uid).map(Vec::as_slice).unwrap_or_default()
    }

    /// What `path` (`name.d123/sub/file`) is in `uid`'s trash.
    pub fn trash_entry(&self, uid: &str, path: &str) -> Option<TrashEntry<'_>> {
        let (first, rest) = path.split_once('/').unwrap_or((path, ""));
        let item = self.trash(uid).iter().find(|item| item.trash_name() == first)?;
        let node = item.nodes.iter().find(|node| node.path == rest)?;
        Some(TrashEntry { item, node, rest: rest.to_string() })
    }

    /// The items of `uid`'s trash, or the children of a deleted folder.
    pub fn trash_children(&self, uid: &str, path: &str) -> Vec<TrashEntry<'_>> {
        if path.is_empty() {
            return self
                .trash(uid)
                .iter()
                .filter_map(|item| {
                    let node = item.nodes.first()?;
                    Some(TrashEntry { item, node, rest: String::new() })
                })
                .collect();
        }
        let Some(folder) = self.trash_entry(uid, path) else { return Vec::new() };
        let item = folder.item;
        let mut children: Vec<TrashEntry<'_>> = item
            .nodes
            .iter()
            .filter(|node| {
                strip_under(&node.path, &folder.rest)
                    .is_some_and(|below| !below.is_empty() && !below.contains('/'))
            })
            .map(|node| TrashEntry { item, node, rest: node.path.clone() })
            .collect();
        children.sort_by(|a, b| a.rest.cmp(&b.rest));
        children
    }

    /// Takes `id` and its subtree out of the tree into the trash (called by
    /// `delete` once its checks passed).
    pub(super) fn move_to_trash(
        &mut self,
        viewer: Viewer<'_>,
        id: FileId,
        visible_path: &str,
        now: i64,
    ) {
        let Some(root) = self.nodes.get(&id) else { return };
        let owner = root.owner.clone();
        let owner_path = root.path.clone();
        let mut nodes = Vec::new();
        let mut versions = Vec::new();
        for node_id in self.subtree_ids(id) {
            if let Some(mut node) = self.nodes.remove(&node_id) {
                self.by_path.remove(&(node.owner.clone(), node.path.clone()));
                node.path = strip_under(&node.path, &owner_path).unwrap_or("").to_string();
                if let Some(list) = self.versions.remove(&node_id) {
                    versions.push((node_id, list));
                }
                nodes.push(node);
            }
            self.shares.retain(|_, share| share.node != node_id);
        }
        nodes.sort_by_key(|node| !node.path.is_empty());
        if viewer.uid != owner {
            // The recipient's own copy, with ids of its own.
            let mut renumbered = std::collections::HashMap::new();
            let copy_nodes: Vec<Node> = nodes
                .iter()
                .map(|node| {
                    let mut copy = node.clone();
                    copy.id = self.next_fileid;
                    self.next_fileid += 1;
                    copy.owner = viewer.uid.to_string();
                    renumbered.insert(node.id, copy.id);
                    copy
                })
                .collect();
            let copy_versions = versions
                .iter()
                .filter_map(|(old, list)| Some((*renumbered.get(old)?, list.clone())))
                .collect();
            let (location, name) = parent_and_name(visible_path);
            let item = TrashItem {
                name: name.to_string(),
                deleted_at: now,
                location: location.to_string(),
                deleted_by: viewer.uid.to_string(),
                nodes: copy_nodes,
                versions: copy_versions,
            };
            self.add_to_trash(viewer.uid, item);
        }
        let (location, name) = parent_and_name(&owner_path);
        let item = TrashItem {
            name: name.to_string(),
            deleted_at: now,
            location: location.to_string(),
            deleted_by: viewer.uid.to_string(),
            nodes,
            versions,
        };
        self.add_to_trash(&owner, item);
    }

    fn add_to_trash(&mut self, uid: &str, mut item: TrashItem) {
        let list = self.trash.entry(uid.to_string()).or_default();
        // Two deletions of one name in one second: the later one moves a
        // second on, as upstream does when the first still holds the lock.
        while list.iter().any(|other| other.trash_name() == item.trash_name()) {
            item.deleted_at += 1;
        }
        list.push(item);
        let mut total: u64 = list.iter().map(TrashItem::bytes).sum();
        while total > TRASH_BYTES_MAX && !list.is_empty() {
            let oldest = list
                .iter()
                .enumerate()
                .min_by_key(|(_, item)| item.deleted_at)
                .map(|(index, _)| index)
                .unwrap_or(0);
            total -= list.remove(oldest).bytes();
        }
    }

    /// Restores `path` of the viewer's trash (MOVE to `restore/`). Returns
    /// the restored node's id and its path in the viewer's files.
    pub fn restore_from_trash(
        &mut self,
        viewer: Viewer<'_>,
        path: &str,
        now: i64,
    ) -> Result<(FileId, String), StorageError> {
        let entry = self.trash_entry(viewer.uid, path).ok_or(StorageError::NotFound)?;
        let trash_name = entry.item.trash_name();
        let rest = entry.rest.clone();
        let (wanted_location, name) = if rest.is_empty() {
            (entry.item.location.clone(), entry.item.name.clone())
        } else {
            (String::new(), entry.filename().to_string())
        };
        let location = match self.resolve(viewer, &wanted_location) {
            Ok(folder) if folder.node.is_folder() && folder.can(permission::CREATE) => {
                wanted_location
            }
            _ => String::new(),
        };
        let mut unique = name.clone();
        let mut attempt = 1;
        while self.resolve(viewer, &join(&location, &unique)).is_ok() {
            unique = restored_name(&name, attempt);
            attempt += 1;
        }
        let (owner, parent_owner_path) = self.writable_folder(viewer, &location)?;
        let list = self.trash.get_mut(viewer.uid).ok_or(StorageError::NotFound)?;
        let index = list
            .iter()
            .position(|item| item.trash_name() == trash_name)
            .ok_or(StorageError::NotFound)?;
        let (taken, taken_versions) = if rest.is_empty() {
            let item = list.remove(index);
            (item.nodes, item.versions)
        } else {
            let item = &mut list[index];
            let (taken, kept): (Vec<Node>, Vec<Node>) = std::mem::take(&mut item.nodes)
                .into_iter()
                .partition(|node| strip_under(&node.path, &rest).is_some());
            item.nodes = kept;
            let ids: std::collections::BTreeSet<FileId> = taken.iter().map(|n| n.id).collect();
            let (versions, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut item.versions)
                .into_iter()
                .partition(|(id, _)| ids.contains(id));
            item.versions = kept;
            (taken, versions)
        };
        let destination = join(&parent_owner_path, &unique);
        let mut root = None;
        for mut node in taken {
            let rest_below = strip_under(&node.path, &rest).unwrap_or("").to_string();
            if rest_below.is_empty() {
                root = Some((node.id, node.mtime, node.is_folder()));
            }
            node.owner = owner.clone();
            node.path = below(&destination, &rest_below);
            self.by_path.insert((node.owner.clone(), node.path.clone()), node.id);
            self.nodes.insert(node.id, node);
        }
        for (id, list) in taken_versions {
            self.versions.insert(id, list);
        }
        let (root_id, mtime, is_folder) = root.ok_or(StorageError::NotFound)?;
        self.retype_by_name(root_id);
        self.touch(root_id, mtime);
        let visible = join(&location, &unique);
        let source_path = format!("/{}/files_trashbin/files/{path}", viewer.uid);
        self.event_full(
            viewer,
            FileEventKind::Restored { source_path },
            root_id,
            &visible,
            now,
            is_folder,
        );
        self.event_full(viewer, FileEventKind::Touched, root_id, &visible, now, is_folder);
        Ok((root_id, visible))
    }

    /// Deletes `path` of `uid`'s trash for good.
    pub fn purge_from_trash(&mut self, uid: &str, path: &str) -> Result<(), StorageError> {
        let entry = self.trash_entry(uid, path).ok_or(StorageError::NotFound)?;
        let trash_name = entry.item.trash_name();
        let rest = entry.rest.clone();
        let list = self.trash.get_mut(uid).ok_or(StorageError::NotFound)?;
        let index = list
            .iter()
            .position(|item| item.trash_name() == trash_name)
            .ok_or(StorageError::NotFound)?;
        if rest.is_empty() {
            list.remove(index);
            return Ok(());
        }
        let item = &mut list[index];
        let mut removed = std::collections::BTreeSet::new();
        item.nodes.retain(|node| {
            let inside = strip_under(&node.path, &rest).is_some();
            if inside {
                removed.insert(node.id);
            }
            !inside
        });
        item.versions.retain(|(id, _)| !removed.contains(id));
        Ok(())
    }

    /// Empties `uid`'s trash (DELETE of the trash folder).
    pub fn empty_trash(&mut self, uid: &str) {
        self.trash.remove(uid);
    }
}

#[cfg(test)]
mod tests {
    use super::restored_name;

    #[test]
    fn restored_names_put_the_suffix_before_the_extension() {
        assert_eq!(restored_name("report.md", 1), "report (restored).md");
        assert_eq!(restored_name("report.md", 2), "report (restored 2).md");
        assert_eq!(restored_name("Projects", 1), "Projects (restored)");
        assert_eq!(restored_name("a.tar.gz", 1), "a.tar (restored).gz");
    }
}
