//! File versions (`files_versions`) over WebDAV: overwriting a file keeps
//! its previous content as a version named by the mtime it had;
//! `/remote.php/dav/versions/{uid}/versions/{fileid}/` lists the current
//! content and the kept versions, GET reads one, and a MOVE of one to
//! `/remote.php/dav/versions/{uid}/restore/target` makes it current (201).
//!
//! The tests give each write its own `X-OC-MTime`, so two writes in one
//! second do not share a version name on a real server.

use super::trashbin;
use super::webdav::fileid_of;
use nextcloud_contract::{Account, DavResponse, Multistatus, Target, header};
use xml_tree::DAV;

const VERSION_PROPERTIES: &str = concat!(
    r#"<?xml version="1.0" encoding="UTF-8"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns"><d:prop>"#,
    "<d:getcontentlength/><d:getlastmodified/><d:getetag/><d:resourcetype/>",
    "<nc:version-label/><nc:version-author/>",
    "</d:prop></d:propfind>"
);

const FIRST: (&str, i64) = ("first draft\n", 1_700_000_000);
const SECOND: (&str, i64) = ("second, longer draft\n", 1_700_000_100);

async fn put_at(
    target: &Target,
    account: &Account,
    path: &str,
    (body, mtime): (&str, i64),
) -> reqwest::Response {
    let request = target.as_account(account, "PUT", &target.files_path(account, path));
    let request = request.header("X-OC-MTime", mtime.to_string()).body(body.to_string());
    request.send().await.expect("PUT")
}

fn versions_of(account: &Account, fileid: u64) -> String {
    format!("/remote.php/dav/versions/{}/versions/{fileid}", account.uid)
}

async fn list(target: &Target, account: &Account, fileid: u64) -> Multistatus {
    let path = versions_of(account, fileid);
    let (status, multistatus) = target.propfind(account, &path, "1", VERSION_PROPERTIES).await;
    assert_eq!(status, 207, "PROPFIND of a file's versions");
    multistatus.unwrap()
}

/// The status of a PROPFIND by `caller` of `owner`'s versions of `fileid`.
async fn versions_status(target: &Target, caller: &Account, owner: &Account, fileid: u64) -> u16 {
    let path = versions_of(owner, fileid);
    target.propfind(caller, &path, "1", VERSION_PROPERTIES).await.0
}

/// The version of `fileid` that `write` (its content and mtime) left, as
/// `listing` lists it, with that content's length; `what` names it.
fn listed<'a>(
    listing: &'a Multistatus,
    fileid: u64,
    (content, mtime): (&str, i64),
    what: &str,
) -> &'a DavResponse {
    let version = listing.find(&format!("/{fileid}/{mtime}")).expect(what);
    assert_eq!(version.text(DAV, "getcontentlength"), Some(content.len().to_string()), "{what}");
    version
}

/// A GET of the version of `fileid` that `write` left: its status and body.
async fn get_version(
    target: &Target,
    account: &Account,
    fileid: u64,
    (_, mtime): (&str, i64),
) -> (u16, String) {
    target.get_text(account, &format!("{}/{mtime}", versions_of(account, fileid))).await
}

/// A file written twice: its path and id.
async fn twice_written(target: &Target, account: &Account, folder: &str) -> (String, u64) {
    assert_eq!(target.mkcol(account, folder).await, 201);
    let path = format!("{folder}/draft.txt");
    let created = put_at(target, account, &path, FIRST).await;
    assert_eq!(created.status(), 201);
    let fileid = fileid_of(&header(&created, "oc-fileid"));
    assert_eq!(put_at(target, account, &path, SECOND).await.status(), 204);
    (path, fileid)
}

#[tokio::test]
async fn an_overwrite_keeps_the_previous_content_as_a_version() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let folder = target.unique("versions-list");
    let (_, fileid) = twice_written(&target, &alice, &folder).await;

    let listing = list(&target, &alice, fileid).await;
    let old = listed(&listing, fileid, FIRST, "the old content is a version");
    assert!(old.prop(DAV, "getlastmodified").is_some());
    assert!(old.prop(DAV, "getetag").is_some());
    listed(&listing, fileid, SECOND, "the current one is listed");

    assert_eq!(get_version(&target, &alice, fileid, FIRST).await, (200, FIRST.0.to_string()));
    target.cleanup(&alice, &folder).await;
}

#[tokio::test]
async fn restoring_a_version_makes_it_current_and_keeps_the_replaced_one() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let folder = target.unique("versions-restore");
    let (path, fileid) = twice_written(&target, &alice, &folder).await;

    let old_path = format!("{}/{}", versions_of(&alice, fileid), FIRST.1);
    let destination = target.url(&format!("/remote.php/dav/versions/{}/restore/target", alice.uid));
    let moved = target.as_account(&alice, "MOVE", &old_path).header("Destination", destination);
    assert_eq!(moved.send().await.expect("MOVE").status(), 201);

    let file = target.files_path(&alice, &path);
    assert_eq!(target.get_text(&alice, &file).await, (200, FIRST.0.to_string()));
    let listing = list(&target, &alice, fileid).await;
    listed(&listing, fileid, SECOND, "the replaced content is kept as a version");
    assert_eq!(get_version(&target, &alice, fileid, SECOND).await, (200, SECOND.0.to_string()));
    target.cleanup(&alice, &folder).await;
}

#[tokio::test]
async fn versions_go_to_the_trash_with_their_file_and_come_back() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let folder = target.unique("versions-trash");
    let (path, fileid) = twice_written(&target, &alice, &folder).await;
    assert_eq!(target.delete_file(&alice, &path).await, 204);
    let status = versions_status(&target, &alice, &alice, fileid).await;
    assert_eq!(status, 404, "a trashed file has no versions collection");

    let item = trashbin::item(&target, &alice, &path).await.expect("the file is in the trash");
    assert_eq!(trashbin::restore(&target, &alice, &item.href).await, 201);

    let listing = list(&target, &alice, fileid).await;
    assert!(
        listing.find(&format!("/{fileid}/{}", FIRST.1)).is_some(),
        "the restored file has its version again"
    );
    target.cleanup(&alice, &folder).await;
}

#[tokio::test]
async fn another_users_versions_are_refused() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let bob = target.bob().clone();
    let folder = target.unique("versions-foreign");
    let (_, fileid) = twice_written(&target, &bob, &folder).await;
    let status = versions_status(&target, &alice, &bob, fileid).await;
    assert_eq!(status, 403, "someone else's versions home is refused");
    let status = versions_status(&target, &alice, &alice, fileid).await;
    assert_eq!(status, 404, "a file id the caller cannot see has no versions");
    target.cleanup(&bob, &folder).await;
}
