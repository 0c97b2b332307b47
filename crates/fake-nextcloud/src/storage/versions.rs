//! File versions (Nextcloud's `files_versions`): overwriting a file's
//! content keeps the content it had as a version named by its mtime, kept
//! with the file's id (so a rename or move keeps them, a deletion takes them
//! into the trash); rolling back makes a version current again and keeps
//! the then-current content as a version, as `Storage::rollback` does.

use super::{FileEventKind, FileId, NodeKind, Storage, StorageError, Viewer, permission};

/// Versions one file keeps; past it the oldest go. Nextcloud expires
/// versions by age instead (one a second for the first ten seconds, …,
/// one a week after thirty days), which a test clock cannot reach.
pub const VERSIONS_PER_FILE_MAX: usize = 50;

/// One earlier content of a file.
#[derive(Debug, Clone)]
pub struct Version {
    /// The file's mtime when this was its content: the version's name.
    pub timestamp: i64,
    pub content: bytes::Bytes,
    pub mime: String,
    /// Who wrote this content, when known (`nc:version-author`).
    pub author: Option<String>,
}

impl Storage {
    /// The kept versions of a file, newest first (the current content is
    /// not among them).
    pub fn versions(&self, id: FileId) -> Vec<&Version> {
        let mut list: Vec<&Version> =
            self.versions.get(&id).map(|list| list.iter().collect()).unwrap_or_default();
        list.sort_by_key(|version| std::cmp::Reverse(version.timestamp));
        list
    }

    /// Who last wrote a file's content, when known.
    pub fn author(&self, id: FileId) -> Option<&str> {
        self.writers.get(&id).map(String::as_str)
    }

    /// Keeps the file's current content as a version, before it is
    /// overwritten. Empty content is not kept (upstream's `Storage::store`:
    /// no use making versions of empty files) unless `even_empty`.
    pub(super) fn keep_version(&mut self, id: FileId, even_empty: bool) {
        let Some(node) = self.nodes.get(&id) else { return };
        let NodeKind::File { content, mime } = &node.kind else { return };
        if content.is_empty() && !even_empty {
            return;
        }
        let version = Version {
            timestamp: node.mtime,
            content: content.clone(),
            mime: mime.clone(),
            author: self.writers.get(&id).cloned(),
        };
        let list = self.versions.entry(id).or_default();
        list.retain(|kept| kept.timestamp != version.timestamp);
        list.push(version);
        list.sort_by_key(|kept| kept.timestamp);
        if list.len() > VERSIONS_PER_FILE_MAX {
            let excess = list.len() - VERSIONS_PER_FILE_MAX;
            list.drain(..excess);
        }
    }

    /// Makes the version `revision` of the file `id` current (MOVE of a
    /// version to `restore/`); needs update permission on the file.
    pub fn rollback(
        &mut self,
        viewer: Viewer<'_>,
        id: FileId,
        revision: i64,
        now: i64,
    ) -> Result<(), StorageError> {
        let path = self.path_of(viewer, id).ok_or(StorageError::NotFound)?;
        let entry = self.resolve(viewer, &path)?;
        if entry.node.is_folder() {
            return Err(StorageError::NotFound);
        }
        if !entry.can(permission::UPDATE) {
            return Err(StorageError::Forbidden);
        }
        let current = entry.node.mtime;
        if revision != current {
            let list = self.versions.get_mut(&id).ok_or(StorageError::NotFound)?;
            let index = list
                .iter()
                .position(|version| version.timestamp == revision)
                .ok_or(StorageError::NotFound)?;
            let version = list.remove(index);
            self.keep_version(id, true);
            let node = self.nodes.get_mut(&id).ok_or(StorageError::NotFound)?;
            node.kind = NodeKind::File { content: version.content, mime: version.mime };
            node.mtime = revision;
            match version.author {
                Some(author) => self.writers.insert(id, author),
                None => self.writers.remove(&id),
            };
        }
        self.touch(id, revision);
        self.event(viewer, FileEventKind::Touched, id, &path, now);
        Ok(())
    }
}
