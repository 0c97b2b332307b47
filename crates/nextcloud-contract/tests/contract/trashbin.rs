//! The trash bin (`files_trashbin`) over WebDAV, as Nextcloud's integration
//! suite drives it (`build/integration/features/bootstrap/Trashbin.php`):
//! a deleted file or folder is listed in `/remote.php/dav/trashbin/{uid}/trash/`
//! as `name.d<deletion time>` with the `nc:trashbin-*` properties, a MOVE to
//! `restore/` brings it back (201), a DELETE removes it for good.
//!
//! A real server's trash is shared by every test of the run, so each test
//! finds its own items by their original location (a unique folder).

use super::shares::share_with;
use super::throwaway::Throwaway;
use super::webdav::{eq_fileid, fileid_of, search};
use nextcloud_contract::{Account, DavResponse, Multistatus, Target, header};
use xml_tree::{DAV, NC, OC};

const TRASH_PROPERTIES: &str = concat!(
    r#"<?xml version="1.0" encoding="UTF-8"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns"><d:prop>"#,
    "<nc:trashbin-filename/><nc:trashbin-original-location/><nc:trashbin-deletion-time/>",
    "<d:getcontentlength/><d:resourcetype/><oc:fileid/><oc:size/>",
    "</d:prop></d:propfind>"
);

fn trash_root(account: &Account) -> String {
    format!("/remote.php/dav/trashbin/{}/trash/", account.uid)
}

/// The trash (or a deleted folder in it, `below` = `name.d123/`) at depth 1.
async fn listing(target: &Target, account: &Account, below: &str) -> Multistatus {
    let path = format!("{}{below}", trash_root(account));
    let (status, multistatus) = target.propfind(account, &path, "1", TRASH_PROPERTIES).await;
    assert_eq!(status, 207, "PROPFIND {path} is a multistatus");
    multistatus.unwrap()
}

/// The trash item that was at `original_location`, if listed.
pub(super) async fn item(
    target: &Target,
    account: &Account,
    original_location: &str,
) -> Option<DavResponse> {
    let listing = listing(target, account, "").await;
    listing.responses.into_iter().find(|response| {
        response.text(NC, "trashbin-original-location").as_deref() == Some(original_location)
    })
}

/// MOVE of a trash item to `restore/`, as the suite restores.
pub(super) async fn restore(target: &Target, account: &Account, href: &str) -> u16 {
    let name = href.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    let destination =
        target.url(&format!("/remote.php/dav/trashbin/{}/restore/{name}", account.uid));
    let moved = target.as_account(account, "MOVE", href).header("Destination", destination);
    moved.send().await.expect("MOVE").status().as_u16()
}

/// The file in the trashed folder `trashed` whose name was `filename`, if
/// its listing holds it.
async fn trashed_child(
    target: &Target,
    account: &Account,
    trashed: &DavResponse,
    filename: &str,
) -> Option<DavResponse> {
    let inside = listing(target, account, &format!("{}/", item_name(trashed))).await;
    inside
        .responses
        .into_iter()
        .find(|response| response.text(NC, "trashbin-filename").as_deref() == Some(filename))
}

/// A trash item's name, `name.d<deletion time>`.
fn item_name(trashed: &DavResponse) -> String {
    trashed.href.trim_end_matches('/').rsplit('/').next().unwrap().to_string()
}

/// `account` writes `path` (a new file: 201) and deletes it (204).
async fn put_and_delete(target: &Target, account: &Account, path: &str, content: &str) {
    assert_eq!(target.put_file(account, path, content).await.status(), 201, "PUT {path}");
    assert_eq!(target.delete_file(account, path).await, 204, "DELETE {path}");
}

#[tokio::test]
async fn a_deleted_file_is_listed_in_the_trash_readable_and_restored_in_place() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let folder = target.scratch_folder(&alice, "trash-file").await;
    let path = format!("{folder}/note.txt");
    let content = "Contract: trash bin.\n";
    let put = target.put_file(&alice, &path, content).await;
    assert_eq!(put.status(), 201);
    let fileid = fileid_of(&header(&put, "oc-fileid"));
    assert_eq!(target.delete_file(&alice, &path).await, 204);
    let (status, _) =
        target.propfind(&alice, &target.files_path(&alice, &path), "0", TRASH_PROPERTIES).await;
    assert_eq!(status, 404, "a deleted file is gone from the files");

    let trashed = item(&target, &alice, &path).await.expect("the deleted file is in the trash");
    assert_eq!(trashed.text(NC, "trashbin-filename").as_deref(), Some("note.txt"));
    let deleted_at: i64 = trashed.text(NC, "trashbin-deletion-time").unwrap().parse().unwrap();
    assert!(deleted_at > 1_600_000_000, "the deletion time is unix seconds");
    assert!(
        trashed.decoded_href().ends_with(&format!("/trash/note.txt.d{deleted_at}")),
        "the item is named name.d<deletion time>: {}",
        trashed.href
    );
    assert_eq!(trashed.text(DAV, "getcontentlength"), Some(content.len().to_string()));
    assert_eq!(trashed.text(OC, "fileid"), Some(fileid.to_string()), "the file keeps its id");
    let resourcetype = trashed.prop(DAV, "resourcetype").expect("resourcetype");
    assert!(resourcetype.child(DAV, "collection").is_none(), "a file is no collection");

    assert_eq!(target.get_text(&alice, &trashed.href).await, (200, content.to_string()));

    assert_eq!(restore(&target, &alice, &trashed.href).await, 201);
    assert_eq!(
        target.get_text(&alice, &target.files_path(&alice, &path)).await,
        (200, content.to_string())
    );
    assert!(item(&target, &alice, &path).await.is_none(), "a restored item leaves the trash");
    target.cleanup(&alice, &folder).await;
}

#[tokio::test]
async fn restoring_onto_a_taken_name_adds_restored_before_the_extension() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let folder = target.scratch_folder(&alice, "trash-taken").await;
    let path = format!("{folder}/plan.md");
    put_and_delete(&target, &alice, &path, "old plan\n").await;
    assert_eq!(target.put_file(&alice, &path, "new plan\n").await.status(), 201);

    let trashed = item(&target, &alice, &path).await.expect("in the trash");
    assert_eq!(restore(&target, &alice, &trashed.href).await, 201);
    let restored = target.files_path(&alice, &format!("{folder}/plan (restored).md"));
    assert_eq!(target.get_text(&alice, &restored).await, (200, "old plan\n".to_string()));
    let current = target.files_path(&alice, &path);
    assert_eq!(target.get_text(&alice, &current).await, (200, "new plan\n".to_string()));
    target.cleanup(&alice, &folder).await;
}

#[tokio::test]
async fn an_item_whose_folder_is_gone_restores_to_the_root() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let folder = target.scratch_folder(&alice, "trash-orphan").await;
    let name = format!("{}.txt", target.unique("orphan"));
    let path = format!("{folder}/{name}");
    put_and_delete(&target, &alice, &path, "orphan\n").await;
    assert_eq!(target.delete_file(&alice, &folder).await, 204);

    let trashed = item(&target, &alice, &path).await.expect("in the trash");
    assert_eq!(restore(&target, &alice, &trashed.href).await, 201);
    let at_root = target.files_path(&alice, &name);
    assert_eq!(target.get_text(&alice, &at_root).await, (200, "orphan\n".to_string()));
    let (status, _) =
        target.propfind(&alice, &target.files_path(&alice, &folder), "0", TRASH_PROPERTIES).await;
    assert_eq!(status, 404, "restoring a file does not bring its folder back");
    target.cleanup(&alice, &name).await;
}

#[tokio::test]
async fn a_deleted_folder_lists_its_content_and_restores_whole() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let folder = target.scratch_folder(&alice, "trash-folder").await;
    let boxed = format!("{folder}/Box");
    assert_eq!(target.mkcol(&alice, &boxed).await, 201);
    assert_eq!(target.put_file(&alice, &format!("{boxed}/in.txt"), "inside\n").await.status(), 201);
    assert_eq!(target.delete_file(&alice, &boxed).await, 204);

    let trashed = item(&target, &alice, &boxed).await.expect("the folder is in the trash");
    assert!(trashed.prop(DAV, "resourcetype").unwrap().child(DAV, "collection").is_some());
    let child = trashed_child(&target, &alice, &trashed, "in.txt").await;
    let child = child.expect("the deleted folder lists its file");
    assert_eq!(child.text(NC, "trashbin-original-location"), Some(format!("{boxed}/in.txt")));
    assert_eq!(target.get_text(&alice, &child.href).await, (200, "inside\n".to_string()));

    assert_eq!(restore(&target, &alice, &trashed.href).await, 201);
    let back = target.files_path(&alice, &format!("{boxed}/in.txt"));
    assert_eq!(target.get_text(&alice, &back).await, (200, "inside\n".to_string()));
    target.cleanup(&alice, &folder).await;
}

#[tokio::test]
async fn deleting_a_trash_item_removes_it_for_good() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let folder = target.scratch_folder(&alice, "trash-purge").await;
    let path = format!("{folder}/gone.txt");
    put_and_delete(&target, &alice, &path, "gone\n").await;
    let trashed = item(&target, &alice, &path).await.expect("in the trash");
    assert_eq!(target.send(&alice, "DELETE", &trashed.href).await.status(), 204);
    assert!(item(&target, &alice, &path).await.is_none(), "a purged item is not listed");
    assert_eq!(target.send(&alice, "GET", &trashed.href).await.status(), 404);
    target.cleanup(&alice, &folder).await;
}

/// One test owns Bob's trash (it empties it): a share recipient's deletion
/// lands in the owner's trash, where the owner restores it, and in the
/// recipient's own trash too (upstream copies it there).
#[tokio::test]
async fn a_recipients_deletion_goes_to_both_trashes_and_emptying_clears_one() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let bob = target.bob().clone();
    let folder = target.scratch_folder(&alice, "trash-shared").await;
    let path = format!("{folder}/doc.txt");
    assert_eq!(target.put_file(&alice, &path, "shared doc\n").await.status(), 201);
    let (status, share) = share_with(&target, &alice, &folder, &bob, Some("31")).await;
    assert_eq!(status, 200, "{share}");
    let mount = share["ocs"]["data"]["file_target"].as_str().unwrap().trim_start_matches('/');
    let bobs_path = format!("{mount}/doc.txt");
    assert_eq!(target.delete_file(&bob, &bobs_path).await, 204);

    let owners = item(&target, &alice, &path).await.expect("the owner's trash has it");
    assert!(item(&target, &bob, &bobs_path).await.is_some(), "the recipient's trash has a copy");
    assert_eq!(restore(&target, &alice, &owners.href).await, 201);
    let back = target.files_path(&alice, &path);
    assert_eq!(target.get_text(&alice, &back).await, (200, "shared doc\n".to_string()));

    assert_eq!(target.send(&bob, "DELETE", &trash_root(&bob)).await.status(), 204);
    let emptied = listing(&target, &bob, "").await;
    assert_eq!(emptied.responses.len(), 1, "an emptied trash lists only itself");
    target.cleanup(&alice, &folder).await;
}

#[tokio::test]
async fn another_users_trash_is_refused() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let bob = target.bob().clone();
    let (status, _) = target.propfind(&alice, &trash_root(&bob), "1", TRASH_PROPERTIES).await;
    assert_eq!(status, 403, "the principal collection refuses someone else's trash");
    assert_eq!(target.send(&alice, "DELETE", &trash_root(&bob)).await.status(), 403);
    let nobody = format!("/remote.php/dav/trashbin/{}/trash/", target.unique("nobody"));
    let (status, _) = target.propfind(&alice, &nobody, "1", TRASH_PROPERTIES).await;
    assert_eq!(status, 404, "nobody's trash does not exist");
}

#[tokio::test]
async fn search_does_not_find_trashed_files_and_finds_restored_ones() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let folder = target.scratch_folder(&alice, "trash-search").await;
    let path = format!("{folder}/findme.txt");
    let put = target.put_file(&alice, &path, "find me\n").await;
    let fileid = fileid_of(&header(&put, "oc-fileid"));
    let found = |multistatus: Option<Multistatus>| multistatus.unwrap().responses.len();
    let (_, before) = search(&target, &alice, "", &eq_fileid(fileid), "", None).await;
    assert_eq!(found(before), 1, "SEARCH finds the file");
    assert_eq!(target.delete_file(&alice, &path).await, 204);
    let (_, trashed) = search(&target, &alice, "", &eq_fileid(fileid), "", None).await;
    assert_eq!(found(trashed), 0, "SEARCH does not find a trashed file");
    let item = item(&target, &alice, &path).await.expect("in the trash");
    assert_eq!(restore(&target, &alice, &item.href).await, 201);
    let (_, restored) = search(&target, &alice, "", &eq_fileid(fileid), "", None).await;
    assert_eq!(found(restored), 1, "SEARCH finds the restored file by its id");
    target.cleanup(&alice, &folder).await;
}

/// "deleting and a folder and restoring a file inside it"
/// (trashbin.feature): a file restored from inside a deleted folder comes
/// back to the root (its folder is still gone), and the folder stays in
/// the trash, empty.
#[tokio::test]
async fn a_file_restored_from_a_deleted_folder_lands_at_the_root() {
    let target = Target::get().await;
    let (people, [owner]) = Throwaway::accounts(&target).await;
    assert_eq!(target.mkcol(&owner, "testfolder").await, 201);
    assert_eq!(
        target.put_file(&owner, "testfolder/textfile0.txt", "restore me\n").await.status(),
        201
    );
    assert_eq!(target.delete_file(&owner, "testfolder").await, 204);
    let trashed = item(&target, &owner, "testfolder").await.expect("the folder is in the trash");
    let child = trashed_child(&target, &owner, &trashed, "textfile0.txt").await;
    let child = child.expect("the deleted folder lists its file");
    assert_eq!(restore(&target, &owner, &child.href).await, 201);
    let back = target.files_path(&owner, "textfile0.txt");
    assert_eq!(target.get_text(&owner, &back).await, (200, "restore me\n".to_string()));
    assert!(item(&target, &owner, "testfolder").await.is_some(), "the folder stays in the trash");
    let left = listing(&target, &owner, &format!("{}/", item_name(&trashed))).await;
    assert_eq!(left.responses.len(), 1, "and holds nothing more: {:?}", left.responses.len());
    people.remove().await;
}

/// "deleting folder out of a share as recipient creates a backup for the
/// owner" (sharing-v1-part3): a sub-folder a recipient deletes from a
/// share is in the owner's trash and in the recipient's, with its file.
#[tokio::test]
async fn a_folder_a_recipient_deletes_from_a_share_is_in_both_trashes() {
    let target = Target::get().await;
    let (people, [owner, recipient]) = Throwaway::accounts(&target).await;
    assert_eq!(target.mkcol(&owner, "shared").await, 201);
    assert_eq!(target.mkcol(&owner, "shared/sub").await, 201);
    assert_eq!(target.put_file(&owner, "shared/sub/shared_file.txt", "kept\n").await.status(), 201);
    let (status, answer) = share_with(&target, &owner, "shared", &recipient, Some("31")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(target.delete_file(&recipient, "shared/sub").await, 204);
    let gone = target.files_path(&owner, "shared/sub");
    assert_eq!(target.get_text(&owner, &gone).await.0, 404, "gone for the owner too");
    for (account, location) in [(&owner, "shared/sub"), (&recipient, "shared/sub")] {
        let trashed = item(&target, account, location).await;
        let trashed = trashed.unwrap_or_else(|| panic!("{}'s trash has the folder", account.uid));
        assert!(
            trashed_child(&target, account, &trashed, "shared_file.txt").await.is_some(),
            "{}'s trashed folder holds its file",
            account.uid
        );
    }
    people.remove().await;
}
