//! Files, folders and shares, and what each user sees of them.
//!
//! Every node has one owner and a path inside that owner's files. A user's
//! view is their own tree plus the shares mounted into it; [`Storage::resolve`]
//! is the single place that decides what a path means to a user, so every
//! protocol (WebDAV, SEARCH, OCS shares, the converter) gets the same answer.
//! A path that exists only for somebody else resolves to `NotFound`, never to
//! `Forbidden`: a user cannot even learn that it exists.

use std::collections::{BTreeMap, BTreeSet, HashMap};

mod trash;
mod versions;

pub use trash::{TRASH_BYTES_MAX, TrashEntry, TrashItem, restored_name};
pub use versions::{VERSIONS_PER_FILE_MAX, Version};

pub type FileId = u64;
pub type ShareId = u64;

/// OCS share permission bits.
pub mod permission {
    pub const READ: u8 = 1;
    pub const UPDATE: u8 = 2;
    pub const CREATE: u8 = 4;
    pub const DELETE: u8 = 8;
    pub const SHARE: u8 = 16;
    pub const ALL: u8 = 31;
    /// A shared file cannot grant create or delete (Nextcloud masks them).
    pub const FILE_MASK: u8 = READ | UPDATE | SHARE;
    /// No file can be created in; a file inside a shared folder keeps the
    /// folder share's delete bit.
    pub const FILE_IN_FOLDER_MASK: u8 = READ | UPDATE | DELETE | SHARE;
}

/// A namespaced property name, as stored for PROPPATCH.
pub type PropertyName = (String, String);

#[derive(Debug, Clone)]
pub struct Node {
    pub id: FileId,
    pub owner: String,
    /// Path inside the owner's files without leading or trailing slash; "" is
    /// the root folder.
    pub path: String,
    pub kind: NodeKind,
    pub mtime: i64,
    pub ctime: i64,
    pub etag: String,
    /// Users who marked this node as a favorite: favorites are per user in
    /// Nextcloud (a tag of the user), not a property of the file.
    pub favorited_by: BTreeSet<String>,
    /// Dead properties set by PROPPATCH, value as raw XML.
    pub dead_properties: BTreeMap<PropertyName, String>,
}

#[derive(Debug, Clone)]
pub enum NodeKind {
    Folder,
    File { content: bytes::Bytes, mime: String },
}

impl Node {
    pub fn is_folder(&self) -> bool {
        matches!(self.kind, NodeKind::Folder)
    }

    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or("")
    }

    pub fn mime(&self) -> &str {
        match &self.kind {
            NodeKind::Folder => "httpd/unix-directory",
            NodeKind::File { mime, .. } => mime,
        }
    }

    pub fn content(&self) -> Option<&bytes::Bytes> {
        match &self.kind {
            NodeKind::Folder => None,
            NodeKind::File { content, .. } => Some(content),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShareType {
    User = 0,
    Group = 1,
    /// A public link: nobody's mount; whoever has the token reaches the
    /// node ([`Share::link`]).
    Link = 3,
    /// A link for one email address (the sharebymail app): like a link,
    /// nobody's mount, reached by its token; `share_with` is the address.
    Email = 4,
}

#[derive(Debug, Clone)]
pub struct Share {
    pub id: ShareId,
    /// Owner of the shared node.
    pub owner: String,
    /// Who created the share (the owner, or a resharer).
    pub initiator: String,
    pub node: FileId,
    pub share_type: ShareType,
    /// uid or gid.
    pub share_with: String,
    pub permissions: u8,
    /// Mount path in each recipient's files.
    pub target: String,
    /// The `file_target` the share was made with (`/` and the node's name
    /// then), what its owner's side answers: a recipient's renamed mount
    /// ("textfile0 (2).txt") is theirs alone.
    pub file_target: String,
    pub stime: i64,
    /// Group members who declined (deleted the mount).
    pub declined: BTreeSet<String>,
    /// Whether recipients must accept the share before it is mounted
    /// (`sharing.force_share_accept`); `false`: accepted at once.
    pub needs_accept: bool,
    /// Recipients who accepted a share that [`Share::needs_accept`].
    pub accepted_by: BTreeSet<String>,
    /// Recipients whose files have mounted the share since it was made
    /// (any request of theirs to their files or to files_sharing sets
    /// their filesystem up, as Nextcloud's MountProvider does): from then
    /// on its `file_target` is their mount name, for everyone.
    pub mounted_by: BTreeSet<String>,
    /// A group share's mount name for the members whose own differs from
    /// [`Share::target`]: a name they already had when it arrived, or where
    /// they moved it (Nextcloud keeps such a per-member row).
    pub member_targets: BTreeMap<String, String>,
    /// What a public link has besides: its token and password.
    pub link: Option<Link>,
    /// The day the share ends (`Y-m-d`), if it does.
    pub expiration: Option<String>,
    /// The note to the recipient, the label (links), "hide download".
    pub note: String,
    pub label: String,
    pub hide_download: bool,
    /// The share's attributes as files_sharing stores them (a JSON array
    /// of `{scope, key, value}`), e.g. the view-only
    /// `[{"scope":"permissions","key":"download","value":false}]`.
    pub attributes: Option<serde_json::Value>,
}

/// A public link's own fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// 15 letters and digits, as Nextcloud's tokens.
    pub token: String,
    /// The password's digest ([`Link::password_digest`]); `None`: open.
    pub password: Option<String>,
    /// `{base}/index.php/s/{token}`, for the base it was made through.
    pub url: String,
}

impl Link {
    /// What is stored and shown for a password: Nextcloud shows its hash
    /// (`share_with` and `password` of a link share) and never the password.
    pub fn password_digest(password: &str) -> String {
        use sha2::Digest as _;
        let digest = sha2::Sha256::digest(password.as_bytes());
        let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
        format!("$fake-sha256${hex}")
    }

    pub fn accepts(&self, password: &str) -> bool {
        self.password.as_deref().is_none_or(|digest| digest == Self::password_digest(password))
    }
}

impl Share {
    /// Where the share is mounted in `uid`'s files.
    pub fn target_for(&self, uid: &str) -> &str {
        self.member_targets.get(uid).map_or(self.target.as_str(), String::as_str)
    }

    /// The `file_target` OCS answers to `uid`: the name the share was made
    /// under until its recipient's files mount it, then their mount name —
    /// the one row of a user share, a group member's own row for them.
    pub fn file_target_for(&self, uid: &str) -> String {
        let mounted = match self.share_type {
            ShareType::User => Some(self.share_with.as_str()),
            ShareType::Group => Some(uid),
            ShareType::Link | ShareType::Email => None,
        };
        match mounted {
            Some(recipient) if self.mounted_by.contains(recipient) => {
                format!("/{}", self.target_for(recipient))
            }
            _ => self.file_target.clone(),
        }
    }

    /// Whether what comes through this share may be downloaded (and
    /// copied): not when its attributes say `download` is false.
    pub fn allows_download(&self) -> bool {
        let Some(attributes) = self.attributes.as_ref().and_then(|value| value.as_array()) else {
            return true;
        };
        !attributes.iter().any(|attribute| {
            attribute["scope"] == "permissions"
                && attribute["key"] == "download"
                && attribute["value"] == false
        })
    }

    /// Whether the share waits for `uid` to accept it (it is not mounted
    /// in their files until then).
    pub fn is_pending_for(&self, uid: &str) -> bool {
        self.needs_accept && !self.accepted_by.contains(uid) && !self.declined.contains(uid)
    }
}

/// Who is looking: a uid and the groups it belongs to.
#[derive(Debug, Clone, Copy)]
pub struct Viewer<'a> {
    pub uid: &'a str,
    pub groups: &'a BTreeSet<String>,
}

/// A node as one user sees it.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// Path in the viewer's files.
    pub path: String,
    pub node: &'a Node,
    pub permissions: u8,
    /// The share it is seen through, if not the viewer's own.
    pub share: Option<&'a Share>,
    pub is_mount_root: bool,
}

impl Entry<'_> {
    pub fn can(&self, bit: u8) -> bool {
        self.permissions & bit == bit
    }

    /// Whether `uid` marked this node as a favorite.
    pub fn is_favorite_of(&self, uid: &str) -> bool {
        self.node.favorited_by.contains(uid)
    }

    /// Nextcloud's `oc:permissions` letters (DavUtil::getDavPermissions).
    ///
    /// `M` (mounted) is for external storages and group folders only:
    /// `FileInfo::isMounted` is false for the home and for shares, so no
    /// node of this model ever carries it.
    pub fn dav_permissions(&self) -> String {
        let mut letters = String::new();
        if self.share.is_some() {
            letters.push('S');
        }
        if self.can(permission::SHARE) {
            letters.push('R');
        }
        if self.can(permission::READ) {
            letters.push('G');
        }
        if self.can(permission::DELETE) || self.is_mount_root {
            letters.push('D');
        }
        if self.can(permission::UPDATE) || self.is_mount_root {
            letters.push_str("NV");
        }
        if self.node.is_folder() {
            if self.can(permission::CREATE) {
                letters.push_str("CK");
            }
        } else if self.can(permission::UPDATE) {
            letters.push('W');
        }
        letters
    }
}

/// What a folder looks like to one viewer once the shares mounted below it
/// are counted in (Nextcloud's `FileInfo` with its sub-mounts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Unquoted etag. A folder with mounts below it combines its own etag
    /// with theirs, so a change inside a share changes the recipient's
    /// ancestors' etags too (what sync clients poll for).
    pub etag: String,
    /// Bytes, mounts below included.
    pub size: u64,
    /// Unix seconds, the newest of the folder and the mounts below it.
    pub mtime: i64,
}

/// What a storage operation refused, mapped to HTTP statuses by the DAV layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StorageError {
    #[error("not found")]
    NotFound,
    #[error("the parent folder does not exist")]
    ParentMissing,
    #[error("permission denied")]
    Forbidden,
    #[error("already exists")]
    AlreadyExists,
    #[error("destination exists and overwrite is off")]
    DestinationExists,
    #[error("invalid path")]
    BadPath,
    #[error("not a file")]
    NotAFile,
    #[error("source and destination are the same")]
    SameSourceAndDestination,
    #[error("cannot move a folder into itself")]
    IntoItself,
    /// The destination is a folder the source lies in: replacing it would
    /// delete the source with it (Nextcloud answers 403).
    #[error("cannot move or copy onto a folder the source is in")]
    OntoItsParent,
}

/// A change a webhook may report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEvent {
    pub kind: FileEventKind,
    pub fileid: FileId,
    /// Actor's view: `/{uid}/files/{path}`.
    pub path: String,
    pub uid: String,
    pub time: i64,
    pub is_folder: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileEventKind {
    Created,
    Written,
    Deleted,
    /// The path before the rename, in the same form as `path`.
    Renamed {
        source_path: String,
    },
    /// Touched (a restore or a version rollback sets the mtime).
    Touched,
    /// Back from the trash; `source_path` is its trash path,
    /// `/{uid}/files_trashbin/files/name.d123`.
    Restored {
        source_path: String,
    },
}

#[derive(Debug, Default)]
pub struct Storage {
    nodes: HashMap<FileId, Node>,
    by_path: BTreeMap<(String, String), FileId>,
    shares: BTreeMap<ShareId, Share>,
    next_fileid: FileId,
    next_share_id: ShareId,
    etag_counter: u64,
    events: Vec<FileEvent>,
    /// Each user's trash bin (`trash.rs`), oldest first.
    trash: BTreeMap<String, Vec<TrashItem>>,
    /// Earlier contents of files by file id (`versions.rs`), oldest first.
    versions: HashMap<FileId, Vec<Version>>,
    /// Who last wrote each file's content (`nc:version-author`).
    writers: HashMap<FileId, String>,
}

/// Splits a percent-encoded DAV path suffix into a clean relative path.
/// Refuses `.` and `..` segments and encoded slashes, so no request can climb
/// out of the tree it names, and names with a control character (U+0000 to
/// U+001F), which Nextcloud's path check refuses with 400 (its integration
/// suite: "Creating a folder with invalid characters").
pub fn parse_dav_path(raw: &str) -> Result<String, StorageError> {
    let mut segments = Vec::new();
    for raw_segment in raw.split('/') {
        if raw_segment.is_empty() {
            continue;
        }
        let segment = percent_encoding::percent_decode_str(raw_segment)
            .decode_utf8()
            .map_err(|_| StorageError::BadPath)?;
        let control = segment.chars().any(|character| character < ' ');
        if segment == "." || segment == ".." || segment.contains(['/', '\\']) || control {
            return Err(StorageError::BadPath);
        }
        segments.push(segment.into_owned());
    }
    Ok(segments.join("/"))
}

/// Checks an already-decoded path (from a fixture or an OCS `path=`).
pub fn clean_path(path: &str) -> Result<String, StorageError> {
    let mut segments = Vec::new();
    for segment in path.split('/') {
        if segment.is_empty() {
            continue;
        }
        if segment == "." || segment == ".." || segment.contains(['\\', '\0']) {
            return Err(StorageError::BadPath);
        }
        segments.push(segment);
    }
    Ok(segments.join("/"))
}

pub fn parent_and_name(path: &str) -> (&str, &str) {
    match path.rsplit_once('/') {
        Some((parent, name)) => (parent, name),
        None => ("", path),
    }
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() { name.to_string() } else { format!("{parent}/{name}") }
}

/// `path` equals `prefix` or lies below it; returns the rest.
fn strip_under<'p>(path: &'p str, prefix: &str) -> Option<&'p str> {
    if prefix.is_empty() {
        return Some(path);
    }
    let rest = path.strip_prefix(prefix)?;
    if rest.is_empty() { Some("") } else { rest.strip_prefix('/') }
}

/// Nextcloud's mimetype for a file name, by extension.
pub fn mime_for(name: &str) -> &'static str {
    let extension = name.rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase());
    match extension.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("txt") => "text/plain",
        Some("csv") => "text/csv",
        Some("html" | "htm") => "text/html",
        Some("json") => "application/json",
        Some("xml") => "application/xml",
        Some("pdf") => "application/pdf",
        Some("docx") => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        Some("xlsx") => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        Some("pptx") => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        Some("odt") => "application/vnd.oasis.opendocument.text",
        Some("ods") => "application/vnd.oasis.opendocument.spreadsheet",
        Some("odp") => "application/vnd.oasis.opendocument.presentation",
        Some("rtf") => "text/rtf",
        Some("doc") => "application/msword",
        Some("ics") => "text/calendar",
        Some("vcf") => "text/vcard",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("zip") => "application/zip",
        _ => "application/octet-stream",
    }
}

impl Storage {
    pub fn new() -> Storage {
        Storage { next_fileid: 100, next_share_id: 1, ..Storage::default() }
    }

    // ---- set-up -------------------------------------------------------

    /// Creates a user's root folder (idempotent).
    pub fn add_user_root(&mut self, uid: &str, now: i64) -> FileId {
        if let Some(&id) = self.by_path.get(&(uid.to_string(), String::new())) {
            return id;
        }
        self.insert_node(uid, "", NodeKind::Folder, now)
    }

    /// Creates a folder and its missing ancestors in `owner`'s tree.
    pub fn ensure_folder(&mut self, owner: &str, path: &str, mtime: i64) -> FileId {
        if let Some(&id) = self.by_path.get(&(owner.to_string(), path.to_string())) {
            return id;
        }
        let (parent, _) = parent_and_name(path);
        if !path.is_empty() {
            self.ensure_folder(owner, parent, mtime);
        }
        self.insert_node(owner, path, NodeKind::Folder, mtime)
    }

    /// Writes a file into `owner`'s tree directly, for fixtures.
    pub fn seed_file(
        &mut self,
        owner: &str,
        path: &str,
        content: Vec<u8>,
        mime: Option<&str>,
        mtime: i64,
    ) -> FileId {
        let (parent, name) = parent_and_name(path);
        self.ensure_folder(owner, parent, mtime);
        let mime = mime.unwrap_or_else(|| mime_for(name)).to_string();
        let id =
            self.insert_node(owner, path, NodeKind::File { content: content.into(), mime }, mtime);
        self.events.clear();
        id
    }

    /// Marks a node as a favorite of its owner (fixtures).
    pub fn set_favorite(&mut self, id: FileId, favorite: bool) {
        let Some(owner) = self.nodes.get(&id).map(|node| node.owner.clone()) else { return };
        self.set_favorite_for(&owner, id, favorite);
    }

    /// Marks or unmarks a node as one user's favorite.
    pub fn set_favorite_for(&mut self, uid: &str, id: FileId, favorite: bool) {
        if let Some(node) = self.nodes.get_mut(&id) {
            if favorite {
                node.favorited_by.insert(uid.to_string());
            } else {
                node.favorited_by.remove(uid);
            }
        }
    }

    // ---- reading ------------------------------------------------------

    pub fn node(&self, id: FileId) -> Option<&Node> {
        self.nodes.get(&id)
    }

    pub fn node_at(&self, owner: &str, path: &str) -> Option<&Node> {
        self.by_path.get(&(owner.to_string(), path.to_string())).map(|id| &self.nodes[id])
    }

    pub fn shares(&self) -> impl Iterator<Item = &Share> {
        self.shares.values()
    }

    /// Forgets a share at once (a create that failed half way).
    pub fn remove_share(&mut self, id: ShareId) {
        self.shares.remove(&id);
    }

    pub fn share_mut(&mut self, id: ShareId) -> Option<&mut Share> {
        self.shares.get_mut(&id)
    }

    /// The public link with this token.
    pub fn link_share(&self, token: &str) -> Option<&Share> {
        self.shares
            .values()
            .find(|share| share.link.as_ref().is_some_and(|link| link.token == token))
    }

    pub fn share(&self, id: ShareId) -> Option<&Share> {
        self.shares.get(&id)
    }

    /// The shares mounted into the viewer's files: one mount per node, as
    /// Nextcloud merges the shares of one node a recipient gets by several
    /// channels (a user share and group shares); the first made is the
    /// mount, and its permissions are theirs together
    /// ([`Storage::received_permissions`]).
    pub fn mounts<'s>(&'s self, viewer: Viewer<'_>) -> Vec<&'s Share> {
        let mut nodes = BTreeSet::new();
        self.shares
            .values()
            .filter(|share| share.owner != viewer.uid && Self::receives(share, viewer))
            .filter(|share| nodes.insert(share.node))
            .collect()
    }

    /// Every share the viewer receives, each one even when several are
    /// merged into one mount (as `shared_with_me` lists them).
    pub fn received_shares<'s>(&'s self, viewer: Viewer<'_>) -> Vec<&'s Share> {
        self.shares
            .values()
            .filter(|share| share.owner != viewer.uid && Self::receives(share, viewer))
            .collect()
    }

    /// The ids of every share of `node` the viewer receives, merged or not.
    fn received(&self, viewer: Viewer<'_>, node: FileId) -> Vec<ShareId> {
        let shares = self.received_shares(viewer).into_iter();
        shares.filter(|share| share.node == node).map(|share| share.id).collect()
    }

    /// What the viewer may do with a node they receive: the union of the
    /// shares of it they receive.
    pub fn received_permissions(&self, viewer: Viewer<'_>, node: FileId) -> u8 {
        let shares = self.received_shares(viewer).into_iter();
        shares.filter(|share| share.node == node).fold(0, |held, share| held | share.permissions)
    }

    fn receives(share: &Share, viewer: Viewer<'_>) -> bool {
        Self::addressed_to(share, viewer) && !share.is_pending_for(viewer.uid)
    }

    /// Whether the viewer is among the share's recipients, accepted or not.
    pub fn addressed_to(share: &Share, viewer: Viewer<'_>) -> bool {
        match share.share_type {
            ShareType::User => share.share_with == viewer.uid,
            ShareType::Group => {
                viewer.groups.contains(&share.share_with) && !share.declined.contains(viewer.uid)
            }
            ShareType::Link | ShareType::Email => false,
        }
    }

    /// What `path` (clean, relative) means to the viewer.
    pub fn resolve<'s>(
        &'s self,
        viewer: Viewer<'_>,
        path: &str,
    ) -> Result<Entry<'s>, StorageError> {
        for share in self.mounts(viewer) {
            let Some(rest) = strip_under(path, share.target_for(viewer.uid)) else { continue };
            let Some(root) = self.nodes.get(&share.node) else { continue };
            let owner_path =
                if rest.is_empty() { root.path.clone() } else { join(&root.path, rest) };
            let node = self.node_at(&root.owner, &owner_path).ok_or(StorageError::NotFound)?;
            return Ok(Entry {
                path: path.to_string(),
                node,
                permissions: Self::share_permissions(
                    self.received_permissions(viewer, share.node),
                    share.node,
                    node,
                ),
                share: Some(share),
                is_mount_root: rest.is_empty(),
            });
        }
        let node = self.node_at(viewer.uid, path).ok_or(StorageError::NotFound)?;
        Ok(Entry {
            path: path.to_string(),
            node,
            permissions: permission::ALL,
            share: None,
            is_mount_root: false,
        })
    }

    /// A share's `permissions` as they apply to `node`, at or below the
    /// shared node `shared`.
    fn share_permissions(permissions: u8, shared: FileId, node: &Node) -> u8 {
        if node.is_folder() {
            permissions
        } else if node.id == shared {
            permissions & permission::FILE_MASK
        } else {
            permissions & permission::FILE_IN_FOLDER_MASK
        }
    }

    /// The viewer's path of a file id, if they can see it.
    pub fn path_of(&self, viewer: Viewer<'_>, id: FileId) -> Option<String> {
        let node = self.nodes.get(&id)?;
        if node.owner == viewer.uid {
            return Some(node.path.clone());
        }
        for share in self.mounts(viewer) {
            let Some(root) = self.nodes.get(&share.node) else { continue };
            if root.owner != node.owner {
                continue;
            }
            if let Some(rest) = strip_under(&node.path, &root.path) {
                let mount = share.target_for(viewer.uid);
                return Some(if rest.is_empty() { mount.to_string() } else { join(mount, rest) });
            }
        }
        None
    }

    /// Direct children of a folder the viewer sees at `path`.
    pub fn children<'s>(
        &'s self,
        viewer: Viewer<'_>,
        path: &str,
    ) -> Result<Vec<Entry<'s>>, StorageError> {
        let folder = self.resolve(viewer, path)?;
        if !folder.node.is_folder() {
            return Ok(Vec::new());
        }
        let mut entries = Vec::new();
        for (rest, id) in self.under(&folder.node.owner, &folder.node.path) {
            if rest.is_empty() || rest.contains('/') {
                continue;
            }
            let node = &self.nodes[&id];
            let visible_path = join(path, rest);
            entries.push(Entry {
                path: visible_path,
                node,
                permissions: match folder.share {
                    Some(share) => Self::share_permissions(
                        self.received_permissions(viewer, share.node),
                        share.node,
                        node,
                    ),
                    None => permission::ALL,
                },
                share: folder.share,
                is_mount_root: false,
            });
        }
        if folder.share.is_none() {
            for share in self.mounts(viewer) {
                let mount = share.target_for(viewer.uid);
                let (parent, _) = parent_and_name(mount);
                if parent == path
                    && let Ok(entry) = self.resolve(viewer, mount)
                {
                    // A mount shadows an own node at the same path, as
                    // `resolve` does: one path, one meaning.
                    entries.retain(|existing| existing.path != entry.path);
                    entries.push(entry);
                }
            }
        }
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        entries.dedup_by(|a, b| a.path == b.path);
        Ok(entries)
    }

    /// Every entry at or below `path`, breadth first, the folder itself first.
    pub fn walk<'s>(
        &'s self,
        viewer: Viewer<'_>,
        path: &str,
    ) -> Result<Vec<Entry<'s>>, StorageError> {
        self.walk_levels(viewer, path, u32::MAX)
    }

    /// [`Storage::walk`] down to `levels` below `path` (1: its children).
    pub fn walk_levels<'s>(
        &'s self,
        viewer: Viewer<'_>,
        path: &str,
        levels: u32,
    ) -> Result<Vec<Entry<'s>>, StorageError> {
        let root = self.resolve(viewer, path)?;
        let mut out = vec![(root, 0)];
        let mut index = 0;
        while index < out.len() {
            let (entry, level) = &out[index];
            if entry.node.is_folder() && *level < levels {
                let level = level + 1;
                let children = self.children(viewer, &entry.path.clone())?;
                out.extend(children.into_iter().map(|child| (child, level)));
            }
            index += 1;
        }
        Ok(out.into_iter().map(|(entry, _)| entry).collect())
    }

    /// Total size of the files at or below an owner path.
    pub fn size(&self, node: &Node) -> u64 {
        match &node.kind {
            NodeKind::File { content, .. } => content.len() as u64,
            NodeKind::Folder => self
                .under(&node.owner, &node.path)
                .filter_map(|(_, id)| self.nodes[&id].content().map(|content| content.len() as u64))
                .sum(),
        }
    }

    /// Etag, size and mtime of an entry as its viewer sees them.
    pub fn summary(&self, viewer: Viewer<'_>, entry: &Entry<'_>) -> Summary {
        let node = entry.node;
        let mut summary =
            Summary { etag: node.etag.clone(), size: self.size(node), mtime: node.mtime };
        // Only the viewer's own folders have mounts below them: nothing is
        // ever mounted inside a share.
        if !node.is_folder() || entry.share.is_some() {
            return summary;
        }
        let mut child_etags = Vec::new();
        for share in self.mounts(viewer) {
            let Some(rest) = strip_under(share.target_for(viewer.uid), &entry.path) else {
                continue;
            };
            if rest.is_empty() {
                continue;
            }
            let Some(root) = self.nodes.get(&share.node) else { continue };
            summary.size += self.size(root);
            summary.mtime = summary.mtime.max(root.mtime);
            child_etags.push(format!(
                "{rest}/{}{}",
                root.etag,
                Self::share_permissions(
                    self.received_permissions(viewer, share.node),
                    share.node,
                    root
                )
            ));
        }
        if !child_etags.is_empty() {
            use sha2::Digest as _;
            let combined = format!("{}::{}", node.etag, child_etags.join("::"));
            let digest = sha2::Sha256::digest(combined.as_bytes());
            summary.etag = digest.iter().take(16).map(|byte| format!("{byte:02x}")).collect();
        }
        summary
    }

    /// Share types the owner has created on this node (for `oc:share-types`).
    pub fn share_types_of(&self, viewer: Viewer<'_>, id: FileId) -> Vec<u8> {
        let mut types: Vec<u8> = self
            .shares
            .values()
            .filter(|share| share.node == id && share.initiator == viewer.uid)
            .map(|share| share.share_type as u8)
            .collect();
        types.sort_unstable();
        types.dedup();
        types
    }

    /// Drains the events produced since the last call.
    pub fn take_events(&mut self) -> Vec<FileEvent> {
        std::mem::take(&mut self.events)
    }

    // ---- writing ------------------------------------------------------

    /// PUT: creates or overwrites a file. Returns the entry's file id and
    /// whether it was created.
    pub fn put(
        &mut self,
        viewer: Viewer<'_>,
        path: &str,
        content: Vec<u8>,
        mtime: i64,
    ) -> Result<(FileId, bool), StorageError> {
        if path.is_empty() {
            return Err(StorageError::NotAFile);
        }
        match self.resolve(viewer, path) {
            Ok(entry) => {
                if entry.node.is_folder() {
                    return Err(StorageError::NotAFile);
                }
                if !entry.can(permission::UPDATE) {
                    return Err(StorageError::Forbidden);
                }
                let id = entry.node.id;
                self.keep_version(id, false);
                self.writers.insert(id, viewer.uid.to_string());
                let node = self.nodes.get_mut(&id).expect("resolved node");
                let NodeKind::File { mime, .. } = &node.kind else { unreachable!() };
                node.kind = NodeKind::File { content: content.into(), mime: mime.clone() };
                node.mtime = mtime;
                self.touch(id, mtime);
                self.event(viewer, FileEventKind::Written, id, path, mtime);
                Ok((id, false))
            }
            Err(StorageError::NotFound) => {
                let (parent_path, name) = parent_and_name(path);
                let parent = self.writable_folder(viewer, parent_path)?;
                let owner_path = join(&parent.1, name);
                let mime = mime_for(name).to_string();
                let id = self.insert_node(
                    &parent.0,
                    &owner_path,
                    NodeKind::File { content: content.into(), mime },
                    mtime,
                );
                self.writers.insert(id, viewer.uid.to_string());
                // Like `OC\Files\View::emit_file_hooks_post`: a new file's
                // content fires post_create and then post_write.
                self.event(viewer, FileEventKind::Created, id, path, mtime);
                self.event(viewer, FileEventKind::Written, id, path, mtime);
                Ok((id, true))
            }
            Err(other) => Err(other),
        }
    }

    /// MKCOL.
    pub fn mkcol(
        &mut self,
        viewer: Viewer<'_>,
        path: &str,
        now: i64,
    ) -> Result<FileId, StorageError> {
        if path.is_empty() || self.resolve(viewer, path).is_ok() {
            return Err(StorageError::AlreadyExists);
        }
        let (parent_path, name) = parent_and_name(path);
        let parent = self.writable_folder(viewer, parent_path)?;
        let id = self.insert_node(&parent.0, &join(&parent.1, name), NodeKind::Folder, now);
        self.event(viewer, FileEventKind::Created, id, path, now);
        Ok(id)
    }

    /// DELETE: into the trash (`trash.rs`). Deleting a mount root declines
    /// the share for this viewer.
    pub fn delete(&mut self, viewer: Viewer<'_>, path: &str, now: i64) -> Result<(), StorageError> {
        if path.is_empty() {
            return Err(StorageError::Forbidden);
        }
        let entry = self.resolve(viewer, path)?;
        if entry.is_mount_root {
            // Leaving a merged mount leaves every share of it.
            for share_id in self.received(viewer, entry.node.id) {
                let share = self.shares.get_mut(&share_id).expect("share");
                match share.share_type {
                    ShareType::User | ShareType::Link | ShareType::Email => {
                        self.shares.remove(&share_id);
                    }
                    ShareType::Group => {
                        share.declined.insert(viewer.uid.to_string());
                    }
                }
            }
            return Ok(());
        }
        if !entry.can(permission::DELETE) {
            return Err(StorageError::Forbidden);
        }
        let id = entry.node.id;
        let is_folder = entry.node.is_folder();
        self.event_full(viewer, FileEventKind::Deleted, id, path, now, is_folder);
        self.move_to_trash(viewer, id, path, now);
        let (parent_path, _) = parent_and_name(path);
        if let Ok(parent) = self.resolve(viewer, parent_path) {
            let parent_id = parent.node.id;
            self.touch(parent_id, now);
        }
        Ok(())
    }

    /// MOVE. A moved node keeps its file id.
    pub fn rename(
        &mut self,
        viewer: Viewer<'_>,
        source: &str,
        destination: &str,
        overwrite: bool,
        now: i64,
    ) -> Result<(FileId, bool), StorageError> {
        let entry = self.transfer_source(viewer, source, destination)?;
        let id = entry.node.id;
        if entry.is_mount_root {
            // Renaming a received share moves its mount point.
            let share_id = entry.share.expect("mount root has a share").id;
            let (parent_path, _) = parent_and_name(destination);
            let parent =
                self.resolve(viewer, parent_path).map_err(|_| StorageError::ParentMissing)?;
            if parent.share.is_some() || !parent.node.is_folder() {
                return Err(StorageError::Forbidden);
            }
            let existed = self.prepare_destination(viewer, destination, overwrite, now)?;
            let share = self.shares.get_mut(&share_id).expect("share");
            match share.share_type {
                // A member's move is theirs alone.
                ShareType::Group => {
                    share.member_targets.insert(viewer.uid.to_string(), destination.to_string());
                }
                ShareType::User | ShareType::Link | ShareType::Email => {
                    share.target = destination.to_string()
                }
            }
            return Ok((id, !existed));
        }
        // As FilesPlugin::checkMove: a rename in place needs update, a move
        // to another folder needs delete on the source.
        let same_folder = parent_and_name(source).0 == parent_and_name(destination).0;
        let allowed =
            if same_folder { entry.can(permission::UPDATE) } else { entry.can(permission::DELETE) };
        if !allowed {
            return Err(StorageError::Forbidden);
        }
        let is_folder = entry.node.is_folder();
        let (dest_owner, dest_owner_path, existed) =
            self.landing(viewer, destination, overwrite, now)?;
        let old_parent = parent_and_name(source).0.to_string();
        self.relocate_subtree(id, &dest_owner, &dest_owner_path);
        // Nextcloud derives the mimetype from the name again on rename.
        self.retype_by_name(id);
        self.touch(id, now);
        if let Ok(parent) = self.resolve(viewer, &old_parent) {
            let parent_id = parent.node.id;
            self.touch(parent_id, now);
        }
        let source_path = format!("/{}/files/{}", viewer.uid, source);
        self.event_full(
            viewer,
            FileEventKind::Renamed { source_path },
            id,
            destination,
            now,
            is_folder,
        );
        Ok((id, !existed))
    }

    /// COPY. `recursive` is false for `Depth: 0` on a folder.
    pub fn copy(
        &mut self,
        viewer: Viewer<'_>,
        source: &str,
        destination: &str,
        overwrite: bool,
        recursive: bool,
        now: i64,
    ) -> Result<(FileId, bool), StorageError> {
        let entry = self.transfer_source(viewer, source, destination)?;
        if !entry.can(permission::READ) {
            return Err(StorageError::Forbidden);
        }
        let source_entries: Vec<(String, Node)> = if recursive {
            self.walk(viewer, source)?
                .into_iter()
                .map(|entry| {
                    let rest = strip_under(&entry.path, source).unwrap_or("").to_string();
                    (rest, entry.node.clone())
                })
                .collect()
        } else {
            vec![(String::new(), entry.node.clone())]
        };
        let (dest_owner, dest_root, existed) = self.landing(viewer, destination, overwrite, now)?;
        let mut root_id = 0;
        for (rest, node) in source_entries {
            let owner_path =
                if rest.is_empty() { dest_root.clone() } else { join(&dest_root, &rest) };
            let id = self.insert_node(&dest_owner, &owner_path, node.kind.clone(), node.mtime);
            let copy = self.nodes.get_mut(&id).expect("inserted");
            copy.dead_properties = node.dead_properties.clone();
            let visible =
                if rest.is_empty() { destination.to_string() } else { join(destination, &rest) };
            if rest.is_empty() {
                root_id = id;
                self.retype_by_name(id);
            }
            self.event_full(viewer, FileEventKind::Created, id, &visible, now, node.is_folder());
        }
        Ok((root_id, !existed))
    }

    /// Sets or removes dead properties (PROPPATCH); needs update permission.
    pub fn patch_properties(
        &mut self,
        viewer: Viewer<'_>,
        path: &str,
        set: Vec<(PropertyName, String)>,
        remove: Vec<PropertyName>,
    ) -> Result<(), StorageError> {
        let entry = self.resolve(viewer, path)?;
        if !entry.can(permission::UPDATE) && !entry.is_mount_root && entry.share.is_some() {
            return Err(StorageError::Forbidden);
        }
        let id = entry.node.id;
        let node = self.nodes.get_mut(&id).expect("resolved");
        for (name, value) in set {
            node.dead_properties.insert(name, value);
        }
        for name in remove {
            node.dead_properties.remove(&name);
        }
        Ok(())
    }

    /// Sets the mtime of what the viewer sees at `path` (`X-OC-MTime`,
    /// PROPPATCH `{DAV:}lastmodified`); needs update permission.
    pub fn set_mtime(
        &mut self,
        viewer: Viewer<'_>,
        path: &str,
        mtime: i64,
    ) -> Result<(), StorageError> {
        let id = self.updatable(viewer, path)?.id;
        let etag = self.next_etag();
        let node = self.nodes.get_mut(&id).expect("resolved");
        node.mtime = mtime;
        node.etag = etag;
        Ok(())
    }

    /// Sets the creation time (PROPPATCH `{DAV:}creationdate`).
    pub fn set_creation_time(
        &mut self,
        viewer: Viewer<'_>,
        path: &str,
        ctime: i64,
    ) -> Result<(), StorageError> {
        self.updatable(viewer, path)?.ctime = ctime;
        Ok(())
    }

    /// Sets the etag (PROPPATCH `{DAV:}getetag`, which Nextcloud allows).
    pub fn set_etag(
        &mut self,
        viewer: Viewer<'_>,
        path: &str,
        etag: &str,
    ) -> Result<(), StorageError> {
        self.updatable(viewer, path)?.etag = etag.to_string();
        Ok(())
    }

    /// The node the viewer sees at `path`, to change in place; refused
    /// without update permission.
    fn updatable(&mut self, viewer: Viewer<'_>, path: &str) -> Result<&mut Node, StorageError> {
        let entry = self.resolve(viewer, path)?;
        if !entry.can(permission::UPDATE) {
            return Err(StorageError::Forbidden);
        }
        let id = entry.node.id;
        Ok(self.nodes.get_mut(&id).expect("resolved"))
    }

    /// Creates a share of the viewer's `path` (the OCS shares API).
    // The arguments are the OCS request's fields; a struct would only rename them.
    #[allow(clippy::too_many_arguments)]
    pub fn create_share(
        &mut self,
        viewer: Viewer<'_>,
        path: &str,
        share_type: ShareType,
        share_with: &str,
        permissions: u8,
        target: Option<&str>,
        now: i64,
    ) -> Result<ShareId, StorageError> {
        if path.is_empty() {
            return Err(StorageError::Forbidden);
        }
        let entry = self.resolve(viewer, path)?;
        if !entry.can(permission::SHARE) {
            return Err(StorageError::Forbidden);
        }
        let permissions = permissions & entry.permissions;
        let node_id = entry.node.id;
        let owner = entry.node.owner.clone();
        // `Manager::createShare` names the target after the node as the
        // sharer sees it: a received "textfile0 (2).txt" reshares as that.
        let name = parent_and_name(&entry.path).1.to_string();
        let file_target = format!("/{name}");
        let target = match target {
            Some(target) => clean_path(target)?,
            None => name,
        };
        let id = self.next_share_id;
        self.next_share_id += 1;
        self.shares.insert(
            id,
            Share {
                id,
                owner,
                initiator: viewer.uid.to_string(),
                node: node_id,
                share_type,
                share_with: share_with.to_string(),
                permissions,
                target,
                file_target,
                stime: now,
                declined: BTreeSet::new(),
                needs_accept: false,
                accepted_by: BTreeSet::new(),
                mounted_by: BTreeSet::new(),
                member_targets: BTreeMap::new(),
                link: None,
                expiration: None,
                note: String::new(),
                label: String::new(),
                hide_download: false,
                attributes: None,
            },
        );
        Ok(id)
    }

    /// The viewer's files are set up: every share they receive is mounted
    /// for them ([`Share::mounted_by`]).
    pub fn mount_received(&mut self, viewer: Viewer<'_>) {
        for share in self.shares.values_mut() {
            if share.owner != viewer.uid && Self::receives(share, viewer) {
                share.mounted_by.insert(viewer.uid.to_string());
            }
        }
    }

    /// Chooses a mount target that does not collide with what `uid` has:
    /// "Projects", then "Projects (2)"; "textfile0.txt", then
    /// "textfile0 (2).txt": the number goes before the extension, as
    /// Nextcloud's `SharedMount` splits the name with PHP's `pathinfo`.
    pub fn free_target(&self, viewer: Viewer<'_>, wanted: &str) -> String {
        if self.resolve(viewer, wanted).is_err() {
            return wanted.to_string();
        }
        let (folder, name) = match wanted.rsplit_once('/') {
            Some((folder, name)) => (format!("{folder}/"), name),
            None => (String::new(), wanted),
        };
        let (stem, extension) = match name.rsplit_once('.') {
            Some((stem, extension)) => (stem, format!(".{extension}")),
            None => (name, String::new()),
        };
        (2..)
            .map(|n| format!("{folder}{stem} ({n}){extension}"))
            .find(|candidate| self.resolve(viewer, candidate).is_err())
            .expect("some free name")
    }

    /// Deletes a share; only its initiator or the node's owner may.
    pub fn delete_share(&mut self, uid: &str, id: ShareId) -> Result<(), StorageError> {
        let share = self.shares.get(&id).ok_or(StorageError::NotFound)?;
        if share.initiator != uid && share.owner != uid {
            return Err(StorageError::NotFound);
        }
        self.shares.remove(&id);
        Ok(())
    }

    /// Makes a new share wait for its recipients to accept it.
    pub fn require_acceptance(&mut self, id: ShareId) {
        if let Some(share) = self.shares.get_mut(&id) {
            share.needs_accept = true;
        }
    }

    /// The shares waiting for the viewer to accept them.
    pub fn pending_for<'s>(&'s self, viewer: Viewer<'_>) -> Vec<&'s Share> {
        self.shares
            .values()
            .filter(|share| share.owner != viewer.uid && Self::addressed_to(share, viewer))
            .filter(|share| share.is_pending_for(viewer.uid))
            .collect()
    }

    /// Accepts a pending share: it is mounted in the viewer's files, a
    /// user share at a target that is free by now.
    pub fn accept(&mut self, viewer: Viewer<'_>, id: ShareId) -> Result<(), StorageError> {
        let share = self.shares.get(&id).ok_or(StorageError::NotFound)?;
        if !Self::addressed_to(share, viewer) {
            return Err(StorageError::Forbidden);
        }
        if !share.is_pending_for(viewer.uid) {
            return Ok(());
        }
        let free = self.free_target(viewer, &share.target.clone());
        let share = self.shares.get_mut(&id).expect("share looked up above");
        share.accepted_by.insert(viewer.uid.to_string());
        match share.share_type {
            ShareType::User => share.target = free,
            // A member's name when the group's is taken in their files.
            ShareType::Group if free != share.target => {
                share.member_targets.insert(viewer.uid.to_string(), free);
            }
            ShareType::Group | ShareType::Link | ShareType::Email => {}
        }
        Ok(())
    }

    /// Declines a pending share: a user share ends, a group share stays
    /// away for this member only.
    pub fn decline(&mut self, viewer: Viewer<'_>, id: ShareId) -> Result<(), StorageError> {
        let share = self.shares.get_mut(&id).ok_or(StorageError::NotFound)?;
        if !share.is_pending_for(viewer.uid) {
            return Err(StorageError::NotFound);
        }
        match share.share_type {
            ShareType::User | ShareType::Link | ShareType::Email => {
                self.shares.remove(&id);
            }
            ShareType::Group => {
                share.declined.insert(viewer.uid.to_string());
            }
        }
        Ok(())
    }

    /// Forgets a deleted account's files and every share from or to it.
    pub fn remove_user(&mut self, uid: &str) {
        let ids: Vec<FileId> = self.under(uid, "").map(|(_, id)| id).collect();
        for id in ids {
            if let Some(node) = self.nodes.remove(&id) {
                self.by_path.remove(&(node.owner, node.path));
            }
        }
        self.shares.retain(|_, share| {
            share.owner != uid
                && share.initiator != uid
                && !(share.share_type == ShareType::User && share.share_with == uid)
        });
        for share in self.shares.values_mut() {
            share.declined.remove(uid);
        }
    }

    /// Ends every share with a deleted group.
    pub fn remove_group_shares(&mut self, gid: &str) {
        self.shares
            .retain(|_, share| !(share.share_type == ShareType::Group && share.share_with == gid));
    }

    pub fn update_share_permissions(
        &mut self,
        uid: &str,
        id: ShareId,
        permissions: u8,
    ) -> Result<(), StorageError> {
        let share = self.shares.get_mut(&id).ok_or(StorageError::NotFound)?;
        if share.initiator != uid && share.owner != uid {
            return Err(StorageError::NotFound);
        }
        share.permissions = permissions;
        Ok(())
    }

    // ---- internals ----------------------------------------------------

    fn insert_node(&mut self, owner: &str, path: &str, kind: NodeKind, mtime: i64) -> FileId {
        let id = self.next_fileid;
        self.next_fileid += 1;
        let etag = self.next_etag();
        self.nodes.insert(
            id,
            Node {
                id,
                owner: owner.to_string(),
                path: path.to_string(),
                kind,
                mtime,
                ctime: mtime,
                etag,
                favorited_by: BTreeSet::new(),
                dead_properties: BTreeMap::new(),
            },
        );
        self.by_path.insert((owner.to_string(), path.to_string()), id);
        if !path.is_empty() {
            let (parent, _) = parent_and_name(path);
            if let Some(&parent_id) = self.by_path.get(&(owner.to_string(), parent.to_string())) {
                self.touch(parent_id, mtime);
            }
        }
        id
    }

    fn next_etag(&mut self) -> String {
        self.etag_counter += 1;
        format!("{:013x}", 0x6565_0000_0000u64 + self.etag_counter * 0x9e37)
    }

    /// New etag for a node and its ancestors; mtime propagates up too.
    fn touch(&mut self, id: FileId, mtime: i64) {
        let Some(node) = self.nodes.get(&id) else { return };
        let owner = node.owner.clone();
        let mut path = Some(node.path.clone());
        while let Some(current) = path {
            let etag = self.next_etag();
            if let Some(&node_id) = self.by_path.get(&(owner.clone(), current.clone())) {
                let node = self.nodes.get_mut(&node_id).expect("indexed node");
                node.etag = etag;
                if node.is_folder() && node.mtime < mtime {
                    node.mtime = mtime;
                }
            }
            path = if current.is_empty() {
                None
            } else {
                Some(parent_and_name(&current).0.to_string())
            };
        }
    }

    /// A folder the viewer may create in: `(owner, owner_path)`.
    fn writable_folder(
        &self,
        viewer: Viewer<'_>,
        path: &str,
    ) -> Result<(String, String), StorageError> {
        let parent = self.resolve(viewer, path).map_err(|_| StorageError::ParentMissing)?;
        if !parent.node.is_folder() {
            return Err(StorageError::ParentMissing);
        }
        if !parent.can(permission::CREATE) {
            return Err(StorageError::Forbidden);
        }
        Ok((parent.node.owner.clone(), parent.node.path.clone()))
    }

    /// The source of a MOVE or COPY, refused when it is the destination or
    /// would land inside itself.
    fn transfer_source<'s>(
        &'s self,
        viewer: Viewer<'_>,
        source: &str,
        destination: &str,
    ) -> Result<Entry<'s>, StorageError> {
        let entry = self.resolve(viewer, source)?;
        if source == destination {
            return Err(StorageError::SameSourceAndDestination);
        }
        if strip_under(destination, source).is_some() {
            return Err(StorageError::IntoItself);
        }
        if strip_under(source, destination).is_some() {
            return Err(StorageError::OntoItsParent);
        }
        Ok(entry)
    }

    /// Where a MOVE or COPY lands: `(owner, owner_path, existed)`. The
    /// destination's parent is checked before anything is touched (so a
    /// refused transfer deletes nothing), then an existing destination is
    /// handled, then the parent's owner and path are read.
    fn landing(
        &mut self,
        viewer: Viewer<'_>,
        destination: &str,
        overwrite: bool,
        now: i64,
    ) -> Result<(String, String, bool), StorageError> {
        let (parent_path, name) = parent_and_name(destination);
        self.writable_folder(viewer, parent_path)?;
        let existed = self.prepare_destination(viewer, destination, overwrite, now)?;
        let (owner, parent_owner_path) = self.writable_folder(viewer, parent_path)?;
        Ok((owner, join(&parent_owner_path, name), existed))
    }

    /// Handles an existing destination for MOVE/COPY; returns whether one existed.
    fn prepare_destination(
        &mut self,
        viewer: Viewer<'_>,
        destination: &str,
        overwrite: bool,
        now: i64,
    ) -> Result<bool, StorageError> {
        match self.resolve(viewer, destination) {
            Ok(_) if !overwrite => Err(StorageError::DestinationExists),
            Ok(_) => {
                self.delete(viewer, destination, now)?;
                Ok(true)
            }
            Err(_) => Ok(false),
        }
    }

    fn subtree_ids(&self, id: FileId) -> Vec<FileId> {
        let Some(node) = self.nodes.get(&id) else { return Vec::new() };
        self.under(&node.owner, &node.path).map(|(_, id)| id).collect()
    }

    /// The nodes at or below `path` in `owner`'s tree, each with the rest
    /// of its path below `path` ("" for the node at `path` itself).
    fn under<'s>(
        &'s self,
        owner: &'s str,
        path: &'s str,
    ) -> impl Iterator<Item = (&'s str, FileId)> + 's {
        // Strings sharing a prefix are contiguous in sort order.
        self.by_path
            .range((owner.to_string(), path.to_string())..)
            .take_while(move |((node_owner, node_path), _)| {
                node_owner == owner && node_path.starts_with(path)
            })
            .filter_map(move |((_, node_path), id)| Some((strip_under(node_path, path)?, *id)))
    }

    fn relocate_subtree(&mut self, id: FileId, new_owner: &str, new_path: &str) {
        let old_path = self.nodes[&id].path.clone();
        let moved = self.subtree_ids(id);
        for &node_id in &moved {
            let node = self.nodes.get_mut(&node_id).expect("subtree node");
            self.by_path.remove(&(node.owner.clone(), node.path.clone()));
            let rest = strip_under(&node.path, &old_path).unwrap_or("").to_string();
            node.path = if rest.is_empty() { new_path.to_string() } else { join(new_path, &rest) };
            node.owner = new_owner.to_string();
            self.by_path.insert((node.owner.clone(), node.path.clone()), node_id);
        }
        // Shares of any moved node (not only the top one) follow the new owner.
        let moved: BTreeSet<FileId> = moved.into_iter().collect();
        for share in self.shares.values_mut() {
            if moved.contains(&share.node) {
                share.owner = new_owner.to_string();
            }
        }
    }

    /// Sets a file's mimetype from its (new) name.
    fn retype_by_name(&mut self, id: FileId) {
        let Some(node) = self.nodes.get_mut(&id) else { return };
        let mime_by_name = mime_for(node.name()).to_string();
        if let NodeKind::File { mime, .. } = &mut node.kind {
            *mime = mime_by_name;
        }
    }

    fn event(
        &mut self,
        viewer: Viewer<'_>,
        kind: FileEventKind,
        id: FileId,
        path: &str,
        time: i64,
    ) {
        let is_folder = self.nodes.get(&id).is_some_and(Node::is_folder);
        self.event_full(viewer, kind, id, path, time, is_folder);
    }

    fn event_full(
        &mut self,
        viewer: Viewer<'_>,
        kind: FileEventKind,
        id: FileId,
        path: &str,
        time: i64,
        is_folder: bool,
    ) {
        self.events.push(FileEvent {
            kind,
            fileid: id,
            path: format!("/{}/files/{}", viewer.uid, path),
            uid: viewer.uid.to_string(),
            time,
            is_folder,
        });
    }
}

#[cfg(test)]
mod tests;
