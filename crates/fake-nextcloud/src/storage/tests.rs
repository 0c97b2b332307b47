//! Storage tests: what each user sees of the shared tree, and how writes
//! move through shares. Every protocol relies on these answers.

use super::*;

const NOW: i64 = 1_770_000_000;

/// Three users; alice and bob are in "staff", carol in "other".
struct People {
    groups: BTreeMap<&'static str, BTreeSet<String>>,
}

impl People {
    fn new() -> People {
        let mut groups = BTreeMap::new();
        groups.insert("alice", ["staff".to_string()].into());
        groups.insert("bob", ["staff".to_string()].into());
        groups.insert("carol", ["other".to_string()].into());
        People { groups }
    }

    fn viewer<'a>(&'a self, uid: &'a str) -> Viewer<'a> {
        Viewer { uid, groups: &self.groups[uid] }
    }
}

/// alice: Documents/notes.md, Shared/plan.txt, Shared/sub/deep.txt,
/// Private/secret.txt; bob: Work/todo.md; carol: empty.
fn storage() -> Storage {
    let mut storage = Storage::new();
    for uid in ["alice", "bob", "carol"] {
        storage.add_user_root(uid, NOW);
    }
    storage.seed_file("alice", "Documents/notes.md", b"# Notes\n".to_vec(), None, NOW);
    storage.seed_file("alice", "Shared/plan.txt", b"The plan.\n".to_vec(), None, NOW);
    storage.seed_file("alice", "Shared/sub/deep.txt", b"deep\n".to_vec(), None, NOW);
    storage.seed_file("alice", "Private/secret.txt", b"alice only\n".to_vec(), None, NOW);
    storage.seed_file("bob", "Work/todo.md", b"- ship it\n".to_vec(), None, NOW);
    storage
}

fn share(
    storage: &mut Storage,
    people: &People,
    owner: &str,
    path: &str,
    with: (ShareType, &str),
    permissions: u8,
) -> ShareId {
    storage
        .create_share(people.viewer(owner), path, with.0, with.1, permissions, None, NOW)
        .expect("share created")
}

/// The usual tree with alice's Shared shared with bob at `permissions`.
fn shared_with_bob(permissions: u8) -> (People, Storage, ShareId) {
    let people = People::new();
    let mut storage = storage();
    let id = share(&mut storage, &people, "alice", "Shared", (ShareType::User, "bob"), permissions);
    (people, storage, id)
}

/// The usual tree plus carol's Team/roster.txt, Team shared read-only with
/// the group "staff" (alice and bob).
fn team_shared_with_staff() -> (People, Storage) {
    let people = People::new();
    let mut storage = storage();
    storage.seed_file("carol", "Team/roster.txt", b"x".to_vec(), None, NOW);
    share(&mut storage, &people, "carol", "Team", (ShareType::Group, "staff"), 1);
    (people, storage)
}

fn paths(entries: &[Entry<'_>]) -> Vec<String> {
    entries.iter().map(|entry| entry.path.clone()).collect()
}

fn letters(storage: &Storage, viewer: Viewer<'_>, path: &str) -> String {
    storage.resolve(viewer, path).expect("resolves").dav_permissions()
}

// ---- parse_dav_path ---------------------------------------------------------

#[test]
fn dav_paths_decode_and_clean() {
    let cases = [
        ("alice/a%20b.md", "alice/a b.md"),
        ("alice//Documents/", "alice/Documents"),
        ("", ""),
        ("alice/%E2%82%AC", "alice/\u{20ac}"),
        ("alice/50%25", "alice/50%"),
    ];
    for (raw, clean) in cases {
        assert_eq!(parse_dav_path(raw).as_deref(), Ok(clean), "{raw}");
    }
}

#[test]
fn dav_paths_refuse_traversal_and_smuggled_separators() {
    for raw in [
        "alice/..",
        "alice/../bob",
        "alice/%2e%2e/bob",
        "alice/%2E%2E",
        "alice/.",
        "alice/a%2Fb",
        "alice/a%5Cb",
        "alice/a%00b",
        "alice/testshare%09",
        "alice/a%0Ab",
        "alice/a%1Fb",
        "alice/%ff",
    ] {
        assert_eq!(parse_dav_path(raw), Err(StorageError::BadPath), "{raw}");
    }
}

#[test]
fn clean_paths_refuse_traversal() {
    assert_eq!(clean_path("/Documents//a/"), Ok("Documents/a".to_string()));
    assert_eq!(clean_path("Documents/../x"), Err(StorageError::BadPath));
}

// ---- resolution ---------------------------------------------------------------

#[test]
fn a_user_resolves_only_their_own_tree() {
    let people = People::new();
    let storage = storage();
    let entry = storage.resolve(people.viewer("alice"), "Documents/notes.md").unwrap();
    assert_eq!(entry.node.owner, "alice");
    assert!(entry.share.is_none());
    assert_eq!(entry.permissions, permission::ALL);
    // The same path means nothing to bob, and alice's private file is not
    // reachable under any path of his.
    assert_eq!(
        storage.resolve(people.viewer("bob"), "Documents/notes.md").err(),
        Some(StorageError::NotFound)
    );
    let secret = storage.node_at("alice", "Private/secret.txt").unwrap().id;
    assert_eq!(storage.path_of(people.viewer("bob"), secret), None);
    assert_eq!(
        storage.path_of(people.viewer("alice"), secret).as_deref(),
        Some("Private/secret.txt")
    );
}

#[test]
fn a_user_share_mounts_at_its_target() {
    let (people, storage, _) = shared_with_bob(7);
    let bob = people.viewer("bob");
    let root = storage.resolve(bob, "Shared").unwrap();
    assert!(root.is_mount_root);
    assert_eq!(root.node.owner, "alice");
    let deep = storage.resolve(bob, "Shared/sub/deep.txt").unwrap();
    assert_eq!(deep.node.path, "Shared/sub/deep.txt");
    assert!(!deep.is_mount_root);
    assert_eq!(storage.resolve(bob, "Shared/missing.txt").err(), Some(StorageError::NotFound));
    assert_eq!(paths(&storage.children(bob, "").unwrap()), ["Shared", "Work"]);
    assert_eq!(
        paths(&storage.walk(bob, "Shared").unwrap()),
        ["Shared", "Shared/plan.txt", "Shared/sub", "Shared/sub/deep.txt"]
    );
    let deep_id = deep.node.id;
    assert_eq!(storage.path_of(bob, deep_id).as_deref(), Some("Shared/sub/deep.txt"));
    // carol received nothing.
    assert_eq!(
        storage.resolve(people.viewer("carol"), "Shared").err(),
        Some(StorageError::NotFound)
    );
}

#[test]
fn a_mount_shadows_an_own_node_at_the_same_path() {
    let people = People::new();
    let mut storage = storage();
    storage.ensure_folder("bob", "Shared", NOW);
    share(&mut storage, &people, "alice", "Shared", (ShareType::User, "bob"), 1);
    let bob = people.viewer("bob");
    let children = storage.children(bob, "").unwrap();
    assert_eq!(paths(&children), ["Shared", "Work"], "one entry per path");
    let shared = children.iter().find(|entry| entry.path == "Shared").unwrap();
    assert_eq!(shared.node.owner, "alice", "the mount wins, as in resolve");
    assert_eq!(storage.resolve(bob, "Shared").unwrap().node.owner, "alice");
}

#[test]
fn group_shares_reach_members_only_and_not_the_owner() {
    // carol shares with "staff": alice and bob see it; carol (the owner) sees
    // her own folder, not a mount of it.
    let (people, mut storage) = team_shared_with_staff();
    for member in ["alice", "bob"] {
        let entry = storage.resolve(people.viewer(member), "Team/roster.txt").unwrap();
        assert_eq!(entry.node.owner, "carol", "{member}");
        assert!(entry.share.is_some());
    }
    assert!(storage.mounts(people.viewer("carol")).is_empty());
    // alice shares with her own group: bob gets it, alice does not get a
    // second copy of her own folder.
    share(&mut storage, &people, "alice", "Documents", (ShareType::Group, "staff"), 1);
    assert!(storage.resolve(people.viewer("bob"), "Documents/notes.md").is_ok());
    assert_eq!(storage.mounts(people.viewer("alice")).len(), 1, "only carol's Team");
}

#[test]
fn declining_a_group_share_hides_it_from_that_member_only() {
    let (people, mut storage) = team_shared_with_staff();
    storage.delete(people.viewer("bob"), "Team", NOW).unwrap();
    assert_eq!(storage.resolve(people.viewer("bob"), "Team").err(), Some(StorageError::NotFound));
    assert!(storage.resolve(people.viewer("alice"), "Team/roster.txt").is_ok());
    assert!(storage.node_at("carol", "Team/roster.txt").is_some(), "nothing deleted");
}

// ---- permissions ----------------------------------------------------------------

#[test]
fn own_nodes_have_every_letter() {
    let people = People::new();
    let storage = storage();
    let alice = people.viewer("alice");
    assert_eq!(letters(&storage, alice, "Documents/notes.md"), "RGDNVW");
    assert_eq!(letters(&storage, alice, "Documents"), "RGDNVCK");
}

#[test]
fn shared_nodes_carry_the_share_permissions() {
    let (people, mut storage, _) = shared_with_bob(7);
    share(&mut storage, &people, "alice", "Documents", (ShareType::User, "carol"), 31);
    share(&mut storage, &people, "alice", "Private/secret.txt", (ShareType::User, "bob"), 31);
    let bob = people.viewer("bob");
    let carol = people.viewer("carol");
    let cases = [
        // Read + update + create: the mount root can always be removed
        // and renamed (D, NV) by its recipient.
        (bob, "Shared", "SGDNVCK"),
        (bob, "Shared/sub", "SGNVCK"),
        (bob, "Shared/plan.txt", "SGNVW"),
        // Everything: files inside keep delete, never create.
        (carol, "Documents", "SRGDNVCK"),
        (carol, "Documents/notes.md", "SRGDNVW"),
        // A shared file never grants delete or create, but its mount root can
        // be removed.
        (bob, "secret.txt", "SRGDNVW"),
    ];
    for (viewer, path, expected) in cases {
        assert_eq!(letters(&storage, viewer, path), expected, "{} {path}", viewer.uid);
    }
    let secret = storage.resolve(bob, "secret.txt").unwrap();
    assert!(!secret.can(permission::DELETE));
    assert!(!secret.can(permission::CREATE));
}

#[test]
fn read_only_shares_refuse_writes() {
    let (people, mut storage, _) = shared_with_bob(permission::READ);
    let bob = people.viewer("bob");
    assert_eq!(
        storage.put(bob, "Shared/plan.txt", b"x".to_vec(), NOW),
        Err(StorageError::Forbidden)
    );
    assert_eq!(
        storage.put(bob, "Shared/new.txt", b"x".to_vec(), NOW),
        Err(StorageError::Forbidden)
    );
    assert_eq!(storage.mkcol(bob, "Shared/new", NOW), Err(StorageError::Forbidden));
    assert_eq!(storage.delete(bob, "Shared/plan.txt", NOW), Err(StorageError::Forbidden));
    assert_eq!(storage.set_mtime(bob, "Shared/plan.txt", 5), Err(StorageError::Forbidden));
    let original = storage.node_at("alice", "Shared/plan.txt").unwrap().content().unwrap().clone();
    assert_eq!(&original[..], b"The plan.\n");
}

// ---- share lifecycle --------------------------------------------------------------

#[test]
fn a_revoked_share_disappears_at_once() {
    let (people, mut storage, id) = shared_with_bob(31);
    let bob = people.viewer("bob");
    let plan = storage.resolve(bob, "Shared/plan.txt").unwrap().node.id;
    storage.delete_share("alice", id).unwrap();
    assert_eq!(storage.resolve(bob, "Shared/plan.txt").err(), Some(StorageError::NotFound));
    assert_eq!(storage.path_of(bob, plan), None);
    assert_eq!(paths(&storage.walk(bob, "").unwrap()), ["", "Work", "Work/todo.md"]);
    // The owner keeps everything.
    assert!(storage.resolve(people.viewer("alice"), "Shared/plan.txt").is_ok());
}

#[test]
fn only_the_owner_or_initiator_can_revoke() {
    let (people, mut storage, id) = shared_with_bob(31);
    assert_eq!(storage.delete_share("carol", id), Err(StorageError::NotFound));
    assert_eq!(storage.update_share_permissions("carol", id, 1), Err(StorageError::NotFound));
    assert!(storage.resolve(people.viewer("bob"), "Shared").is_ok());
}

#[test]
fn deleting_a_mount_root_unshares_for_that_recipient_only() {
    let (people, mut storage, _) = shared_with_bob(1);
    share(&mut storage, &people, "alice", "Shared", (ShareType::User, "carol"), 1);
    // A read-only recipient may still remove the share from their files.
    storage.delete(people.viewer("bob"), "Shared", NOW).unwrap();
    assert_eq!(storage.resolve(people.viewer("bob"), "Shared").err(), Some(StorageError::NotFound));
    assert!(storage.resolve(people.viewer("carol"), "Shared/plan.txt").is_ok());
    assert!(storage.node_at("alice", "Shared/plan.txt").is_some(), "the owner's files stay");
    assert_eq!(storage.shares().count(), 1);
}

// ---- moves and copies -------------------------------------------------------------

#[test]
fn moving_into_a_share_hands_the_node_to_the_owner() {
    let (people, mut storage, _) = shared_with_bob(31);
    let bob = people.viewer("bob");
    let (id, created) = storage.rename(bob, "Work/todo.md", "Shared/todo.md", false, NOW).unwrap();
    assert!(created);
    let node = storage.node(id).unwrap();
    assert_eq!((node.owner.as_str(), node.path.as_str()), ("alice", "Shared/todo.md"));
    assert!(storage.resolve(people.viewer("alice"), "Shared/todo.md").is_ok());
    assert_eq!(storage.resolve(bob, "Work/todo.md").err(), Some(StorageError::NotFound));
    assert_eq!(storage.path_of(bob, id).as_deref(), Some("Shared/todo.md"), "same file id");
}

#[test]
fn moving_out_of_a_share_needs_delete_permission() {
    let (people, mut storage, id) = shared_with_bob(7);
    let bob = people.viewer("bob");
    assert_eq!(
        storage.rename(bob, "Shared/plan.txt", "plan.txt", false, NOW),
        Err(StorageError::Forbidden)
    );
    // Renaming in place needs update only.
    storage.rename(bob, "Shared/plan.txt", "Shared/plan-v2.txt", false, NOW).unwrap();
    storage.update_share_permissions("alice", id, 15).unwrap();
    let bob = people.viewer("bob");
    let (moved, _) = storage.rename(bob, "Shared/plan-v2.txt", "plan.txt", false, NOW).unwrap();
    assert_eq!(storage.node(moved).unwrap().owner, "bob");
    assert_eq!(storage.path_of(people.viewer("alice"), moved), None, "alice no longer has it");
}

#[test]
fn shares_below_a_moved_folder_follow_the_new_owner() {
    let people = People::new();
    let mut storage = storage();
    // carol receives alice's Shared/sub; bob gives alice a writable folder.
    share(&mut storage, &people, "alice", "Shared/sub", (ShareType::User, "carol"), 1);
    storage.ensure_folder("bob", "Inbox", NOW);
    share(&mut storage, &people, "bob", "Inbox", (ShareType::User, "alice"), 31);
    // alice moves Shared (with the shared sub folder) into bob's folder.
    storage.rename(people.viewer("alice"), "Shared", "Inbox/Shared", false, NOW).unwrap();
    assert_eq!(storage.node_at("bob", "Inbox/Shared/sub/deep.txt").unwrap().owner, "bob");
    let carol = people.viewer("carol");
    let deep = storage.resolve(carol, "sub/deep.txt").expect("carol still sees the share");
    assert_eq!(deep.node.owner, "bob");
    assert!(storage.shares().all(|share| storage.node(share.node).unwrap().owner == share.owner));
}

#[test]
fn renaming_retypes_and_copies_keep_content() {
    let people = People::new();
    let mut storage = storage();
    let alice = people.viewer("alice");
    storage.rename(alice, "Documents/notes.md", "Documents/notes.txt", false, NOW).unwrap();
    assert_eq!(storage.resolve(alice, "Documents/notes.txt").unwrap().node.mime(), "text/plain");
    let (copy, created) =
        storage.copy(alice, "Documents/notes.txt", "Documents/copy.md", false, true, NOW).unwrap();
    assert!(created);
    let copied = storage.node(copy).unwrap();
    assert_eq!(copied.mime(), "text/markdown");
    assert_eq!(&copied.content().unwrap()[..], b"# Notes\n");
}

#[test]
fn a_shallow_copy_copies_the_folder_alone() {
    let people = People::new();
    let mut storage = storage();
    let alice = people.viewer("alice");
    storage.copy(alice, "Shared", "Shallow", false, false, NOW).unwrap();
    storage.copy(alice, "Shared", "Deep", false, true, NOW).unwrap();
    assert!(storage.children(alice, "Shallow").unwrap().is_empty());
    assert_eq!(
        paths(&storage.walk(alice, "Deep").unwrap()),
        ["Deep", "Deep/plan.txt", "Deep/sub", "Deep/sub/deep.txt"]
    );
}

#[test]
fn moves_refuse_existing_destinations_without_overwrite_and_into_themselves() {
    let people = People::new();
    let mut storage = storage();
    let alice = people.viewer("alice");
    assert_eq!(
        storage.rename(alice, "Documents/notes.md", "Shared/plan.txt", false, NOW),
        Err(StorageError::DestinationExists)
    );
    assert_eq!(
        storage.rename(alice, "Shared", "Shared/sub/x", true, NOW),
        Err(StorageError::IntoItself)
    );
    assert_eq!(
        storage.rename(alice, "Shared", "Missing/x", true, NOW),
        Err(StorageError::ParentMissing)
    );
    let (_, created) =
        storage.rename(alice, "Documents/notes.md", "Shared/plan.txt", true, NOW).unwrap();
    assert!(!created, "overwrote");
}

// ---- etags, sizes, favorites ----------------------------------------------------

#[test]
fn a_write_changes_the_etags_of_the_file_and_its_ancestors_only() {
    let people = People::new();
    let mut storage = storage();
    let etag = |storage: &Storage, path: &str| storage.node_at("alice", path).unwrap().etag.clone();
    let before: Vec<String> =
        ["", "Shared", "Shared/sub", "Shared/sub/deep.txt", "Documents", "Shared/plan.txt"]
            .iter()
            .map(|path| etag(&storage, path))
            .collect();
    storage.put(people.viewer("alice"), "Shared/sub/deep.txt", b"new".to_vec(), NOW + 60).unwrap();
    let after: Vec<String> =
        ["", "Shared", "Shared/sub", "Shared/sub/deep.txt", "Documents", "Shared/plan.txt"]
            .iter()
            .map(|path| etag(&storage, path))
            .collect();
    for index in 0..4 {
        assert_ne!(before[index], after[index], "ancestor {index} changed");
    }
    assert_eq!(before[4..], after[4..], "siblings did not change");
    assert_eq!(storage.node_at("alice", "Shared").unwrap().mtime, NOW + 60);
}

#[test]
fn a_change_inside_a_share_changes_the_recipients_folders() {
    let (people, mut storage, id) = shared_with_bob(7);
    let summary = |storage: &Storage| {
        let bob = people.viewer("bob");
        let root = storage.resolve(bob, "").unwrap();
        storage.summary(bob, &root)
    };
    let first = summary(&storage);
    let own = storage.node_at("bob", "").unwrap();
    assert_ne!(first.etag, own.etag, "the mount is part of bob's root etag");
    assert_eq!(
        first.size,
        storage.size(own) + storage.size(storage.node_at("alice", "Shared").unwrap())
    );

    storage
        .put(people.viewer("alice"), "Shared/plan.txt", b"changed plan".to_vec(), NOW + 10)
        .unwrap();
    let second = summary(&storage);
    assert_ne!(first.etag, second.etag, "content change propagates to the recipient");
    assert_eq!(second.mtime, NOW + 10);

    storage.update_share_permissions("alice", id, 1).unwrap();
    assert_ne!(second.etag, summary(&storage).etag, "permission change propagates too");

    // Carol's root does not change: nothing of hers is involved.
    let carol_root = storage.node_at("carol", "").unwrap().etag.clone();
    storage.put(people.viewer("alice"), "Shared/plan.txt", b"again".to_vec(), NOW + 20).unwrap();
    let carol = people.viewer("carol");
    let carol_entry = storage.resolve(carol, "").unwrap();
    assert_eq!(storage.summary(carol, &carol_entry).etag, carol_root);
}

#[test]
fn favorites_belong_to_one_user() {
    let (people, mut storage, _) = shared_with_bob(1);
    let plan = storage.node_at("alice", "Shared/plan.txt").unwrap().id;
    storage.set_favorite_for("bob", plan, true);
    assert!(
        storage.resolve(people.viewer("bob"), "Shared/plan.txt").unwrap().is_favorite_of("bob")
    );
    assert!(
        !storage
            .resolve(people.viewer("alice"), "Shared/plan.txt")
            .unwrap()
            .is_favorite_of("alice")
    );
    storage.set_favorite(plan, true);
    assert!(
        storage.node(plan).unwrap().favorited_by.contains("alice"),
        "set_favorite is the owner's"
    );
}

#[test]
fn share_types_are_those_the_viewer_created() {
    let (people, mut storage, _) = shared_with_bob(1);
    share(&mut storage, &people, "alice", "Shared", (ShareType::Group, "other"), 1);
    let shared = storage.node_at("alice", "Shared").unwrap().id;
    assert_eq!(storage.share_types_of(people.viewer("alice"), shared), vec![0, 1]);
    assert!(storage.share_types_of(people.viewer("bob"), shared).is_empty());
}

#[test]
fn writes_emit_events_in_the_actors_view() {
    let (people, mut storage, _) = shared_with_bob(31);
    let bob = people.viewer("bob");
    let (id, _) = storage.put(bob, "Shared/new.txt", b"x".to_vec(), NOW).unwrap();
    storage.rename(bob, "Shared/new.txt", "Shared/renamed.txt", false, NOW).unwrap();
    storage.delete(bob, "Shared/renamed.txt", NOW).unwrap();
    let events = storage.take_events();
    let kinds: Vec<(&FileEventKind, &str)> =
        events.iter().map(|event| (&event.kind, event.path.as_str())).collect();
    assert_eq!(
        kinds,
        [
            (&FileEventKind::Created, "/bob/files/Shared/new.txt"),
            (&FileEventKind::Written, "/bob/files/Shared/new.txt"),
            (
                &FileEventKind::Renamed { source_path: "/bob/files/Shared/new.txt".to_string() },
                "/bob/files/Shared/renamed.txt"
            ),
            (&FileEventKind::Deleted, "/bob/files/Shared/renamed.txt"),
        ]
    );
    assert!(events.iter().all(|event| event.fileid == id && event.uid == "bob"));
    assert!(storage.take_events().is_empty(), "drained");
}

// ---- trash bin and versions ------------------------------------------------

#[test]
fn a_deletion_goes_to_the_trash_and_restores_with_its_id() {
    let people = People::new();
    let mut storage = storage();
    let alice = people.viewer("alice");
    let id = storage.resolve(alice, "Documents/notes.md").unwrap().node.id;
    storage.delete(alice, "Documents/notes.md", NOW + 5).unwrap();
    assert_eq!(storage.resolve(alice, "Documents/notes.md").unwrap_err(), StorageError::NotFound);
    let item = &storage.trash("alice")[0];
    assert_eq!(item.trash_name(), format!("notes.md.d{}", NOW + 5));
    assert_eq!(item.original_location(), "Documents/notes.md");
    storage.take_events();
    let (restored, path) =
        storage.restore_from_trash(alice, &format!("notes.md.d{}", NOW + 5), NOW + 9).unwrap();
    assert_eq!((restored, path.as_str()), (id, "Documents/notes.md"));
    assert!(storage.trash("alice").is_empty());
    let kinds: Vec<FileEventKind> =
        storage.take_events().into_iter().map(|event| event.kind).collect();
    assert_eq!(
        kinds,
        vec![
            FileEventKind::Restored {
                source_path: format!("/alice/files_trashbin/files/notes.md.d{}", NOW + 5)
            },
            FileEventKind::Touched,
        ]
    );
}

#[test]
fn a_restore_onto_a_taken_name_or_a_missing_folder_finds_another_place() {
    let people = People::new();
    let mut storage = storage();
    let alice = people.viewer("alice");
    storage.delete(alice, "Documents/notes.md", NOW).unwrap();
    storage.put(alice, "Documents/notes.md", b"new".to_vec(), NOW).unwrap();
    let (_, path) = storage.restore_from_trash(alice, &format!("notes.md.d{NOW}"), NOW).unwrap();
    assert_eq!(path, "Documents/notes (restored).md");
    storage.delete(alice, "Shared/sub/deep.txt", NOW).unwrap();
    storage.delete(alice, "Shared/sub", NOW).unwrap();
    let (_, path) = storage.restore_from_trash(alice, &format!("deep.txt.d{NOW}"), NOW).unwrap();
    assert_eq!(path, "deep.txt", "the folder is gone: the root");
}

#[test]
fn a_recipients_deletion_reaches_both_trashes() {
    let (people, mut storage, _) = shared_with_bob(permission::ALL);
    let bob = people.viewer("bob");
    storage.delete(bob, "Shared/plan.txt", NOW).unwrap();
    let owners = &storage.trash("alice")[0];
    assert_eq!(
        (owners.original_location().as_str(), owners.deleted_by.as_str()),
        ("Shared/plan.txt", "bob")
    );
    let copy = &storage.trash("bob")[0];
    assert_eq!(copy.original_location(), "Shared/plan.txt");
    assert_ne!(copy.nodes[0].id, owners.nodes[0].id, "the recipient's copy has its own id");
    let alice = people.viewer("alice");
    storage.restore_from_trash(alice, &format!("plan.txt.d{NOW}"), NOW).unwrap();
    assert_eq!(
        storage.resolve(bob, "Shared/plan.txt").unwrap().node.content().unwrap().as_ref(),
        b"The plan.\n"
    );
}

#[test]
fn the_trash_lists_deleted_folders_and_purges_for_good() {
    let people = People::new();
    let mut storage = storage();
    let alice = people.viewer("alice");
    storage.delete(alice, "Shared", NOW).unwrap();
    let root = format!("Shared.d{NOW}");
    let names: Vec<String> =
        storage.trash_children("alice", &root).iter().map(|entry| entry.rest.clone()).collect();
    assert_eq!(names, ["plan.txt", "sub"]);
    let deep = storage.trash_entry("alice", &format!("{root}/sub/deep.txt")).unwrap();
    assert_eq!(deep.original_location(), "Shared/sub/deep.txt");
    storage.purge_from_trash("alice", &format!("{root}/sub")).unwrap();
    assert!(storage.trash_entry("alice", &format!("{root}/sub/deep.txt")).is_none());
    storage.empty_trash("alice");
    assert!(storage.trash("alice").is_empty());
}

#[test]
fn overwrites_keep_bounded_versions_and_a_rollback_swaps_them() {
    let people = People::new();
    let mut storage = storage();
    let alice = people.viewer("alice");
    let id = storage.resolve(alice, "Documents/notes.md").unwrap().node.id;
    for n in 1..=(VERSIONS_PER_FILE_MAX as i64 + 3) {
        storage.put(alice, "Documents/notes.md", format!("v{n}").into_bytes(), NOW + n).unwrap();
    }
    let versions = storage.versions(id);
    assert_eq!(versions.len(), VERSIONS_PER_FILE_MAX, "the oldest versions go");
    assert_eq!(versions[0].timestamp, NOW + VERSIONS_PER_FILE_MAX as i64 + 2);
    let current_mtime = storage.resolve(alice, "Documents/notes.md").unwrap().node.mtime;
    let target = versions[1].timestamp;
    storage.rollback(alice, id, target, NOW + 100).unwrap();
    let entry = storage.resolve(alice, "Documents/notes.md").unwrap();
    assert_eq!(entry.node.mtime, target);
    assert!(storage.versions(id).iter().any(|version| version.timestamp == current_mtime));
    assert!(storage.versions(id).iter().all(|version| version.timestamp != target));
    assert_eq!(storage.rollback(alice, id, 12, NOW), Err(StorageError::NotFound));
}
