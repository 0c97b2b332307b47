//! Public link shares (share type 3) as Nextcloud's suite checks them
//! (`sharing-v1.feature`, `sharing-v1-part2b/part4.feature`,
//! `webdav-related.feature`, `dav-v2-public.feature`): what the OCS API
//! answers when a link is made and edited, and what whoever holds the link
//! reaches through `/index.php/s/{token}/download`, `/public.php/dav/files/`
//! and the legacy `/public.php/webdav/`.

use super::dav::share_types;
use super::shares::{
    SHARES_V1, create_share, create_share_at, day_in, list_shares, owned, share_info, shared_with,
    shared_with_group, text, update_share,
};
use super::throwaway::Throwaway;
use nextcloud_contract::{Account, Target};
use serde_json::Value;
use xml_tree::{DAV, NC};

/// A link share of `path` with `fields` (v2): the status and the share.
async fn create_link(
    target: &Target,
    owner: &Account,
    path: &str,
    fields: &[(&str, &str)],
) -> (u16, Value) {
    let mut all = vec![("path", format!("/{path}")), ("shareType", "3".to_string())];
    all.extend(owned(fields));
    let (status, answer) = create_share(target, owner, &all).await;
    (status, answer["ocs"]["data"].clone())
}

/// `owner` updates share `id` with `fields` (v2): the status and the share.
pub(super) async fn update(
    target: &Target,
    owner: &Account,
    id: &str,
    fields: &[(&str, &str)],
) -> (u16, Value) {
    let (status, answer) = update_share(target, owner, id, &owned(fields)).await;
    (status, answer["ocs"]["data"].clone())
}

/// Share `id` as its owner sees it, which must be there.
async fn info(target: &Target, owner: &Account, id: &str) -> Value {
    let (status, share) = share_info(target, owner, id).await;
    assert_eq!(status, 200, "{share}");
    share
}

/// A request as whoever holds the link `token` for what is `below` its
/// root on the public DAV endpoint, with a password when given.
fn public_request(
    target: &Target,
    method: &str,
    token: &str,
    below: &str,
    password: Option<&str>,
) -> reqwest::RequestBuilder {
    let request = target.anonymous(method, &format!("/public.php/dav/files/{token}{below}"));
    match password {
        Some(password) => request.basic_auth("anonymous", Some(password)),
        None => request,
    }
}

/// The status and the body as text.
async fn status_and_text(response: reqwest::Response) -> (u16, String) {
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// A GET through the public DAV endpoint, with a password when given.
async fn public_get(
    target: &Target,
    token: &str,
    below: &str,
    password: Option<&str>,
    range: Option<&str>,
) -> (u16, String) {
    let mut request = public_request(target, "GET", token, below, password);
    if let Some(range) = range {
        request = request.header("Range", range);
    }
    status_and_text(request.send().await.unwrap()).await
}

/// A GET of what is `below` a share's root on the legacy public endpoint,
/// `/public.php/webdav`, with the token as user name and `password`.
pub(super) async fn legacy_get(
    target: &Target,
    token: &str,
    below: &str,
    password: &str,
) -> (u16, String) {
    let request = target.anonymous("GET", &format!("/public.php/webdav{below}"));
    status_and_text(request.basic_auth(token, Some(password)).send().await.unwrap()).await
}

/// "Creating a new public share" (v1: 100) and "download a public shared
/// file with range": a file's link has a 15-character token, a URL on
/// `/index.php/s/`, read and share permissions and no password; the file
/// downloads from the link's page and, by range, over public DAV.
#[tokio::test]
async fn a_files_link_downloads_by_its_token() {
    let target = Target::get().await;
    let (_, capabilities) =
        target.ocs_call(target.alice(), "GET", "/ocs/v2.php/cloud/capabilities?format=json").await;
    let public = &capabilities["ocs"]["data"]["capabilities"]["files_sharing"]["public"];
    assert_eq!((public["enabled"].clone(), public["upload"].clone()), (true.into(), true.into()));
    let (people, [owner]) = Throwaway::accounts(&target).await;
    let content = "Welcome to your Nextcloud account! This is an example file for developers.";
    assert!(target.put_file(&owner, "welcome.txt", content).await.status().is_success());
    let fields = [("path", "/welcome.txt".to_string()), ("shareType", "3".to_string())];
    let (status, answer) = create_share_at(&target, &owner, SHARES_V1, &fields).await;
    assert_eq!(
        (status, answer["ocs"]["meta"]["statuscode"].clone()),
        (200, 100.into()),
        "{answer}"
    );
    let share = &answer["ocs"]["data"];
    let token = text(share, "token");
    assert_eq!(token.len(), 15, "{share}");
    assert!(token.chars().all(|ch| ch.is_ascii_alphanumeric()), "{token}");
    assert!(text(share, "url").ends_with(&format!("/index.php/s/{token}")), "{share}");
    assert_eq!((share["share_type"].clone(), share["permissions"].clone()), (3.into(), 17.into()));
    assert_eq!(share["share_with"], Value::Null, "no password: {share}");

    let download = target.anonymous("GET", &format!("/index.php/s/{token}/download")).send().await;
    let download = download.unwrap();
    assert_eq!(download.status(), 200);
    assert!(download.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
    assert_eq!(download.text().await.unwrap(), content);
    let start = content.find("example").unwrap();
    let range = format!("bytes={start}-{}", start + 26);
    let (status, part) = public_get(&target, &token, "", None, Some(&range)).await;
    assert_eq!((status, part.as_str()), (206, "example file for developers"));
    people.remove().await;
}

/// "Creating a new public share with password", "… and adding an
/// expiration date" and "… updating its password and getting its info": a
/// password-protected link is 401 without it and opens with it, on both
/// public DAV endpoints (the legacy one takes the token as user name); the
/// OCS answer shows a digest, never the password; a new password replaces
/// the old one; an expiry day reads back as `Y-m-d 00:00:00`.
#[tokio::test]
async fn a_password_guards_a_link() {
    let target = Target::get().await;
    let (people, [owner]) = Throwaway::accounts(&target).await;
    assert!(target.put_file(&owner, "welcome.txt", "guarded").await.status().is_success());
    let (status, share) =
        create_link(&target, &owner, "welcome.txt", &[("password", "publicpw")]).await;
    assert_eq!(status, 200, "{share}");
    let (id, token) = (text(&share, "id"), text(&share, "token"));
    let digest = text(&share, "share_with");
    assert!(!digest.is_empty() && !digest.contains("publicpw"), "a digest: {share}");

    assert_eq!(public_get(&target, &token, "", None, None).await.0, 401);
    assert_eq!(public_get(&target, &token, "", Some("wrong"), None).await.0, 401);
    assert_eq!(
        public_get(&target, &token, "", Some("publicpw"), None).await,
        (200, "guarded".into())
    );
    let (status, legacy) = legacy_get(&target, &token, "/", "publicpw").await;
    assert_eq!((status, legacy.as_str()), (200, "guarded"));

    let in_three_days = day_in(3);
    let (status, updated) = update(&target, &owner, &id, &[("expireDate", &in_three_days)]).await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!(
        text(&info(&target, &owner, &id).await, "expiration"),
        format!("{in_three_days} 00:00:00")
    );
    assert_eq!(public_get(&target, &token, "", Some("publicpw"), None).await.0, 200);

    let (status, updated) = update(&target, &owner, &id, &[("password", "another publicpw")]).await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!(public_get(&target, &token, "", Some("publicpw"), None).await.0, 401);
    assert_eq!(public_get(&target, &token, "", Some("another publicpw"), None).await.0, 200);
    people.remove().await;
}

/// "Creating a new public share of a folder" and "download a public shared
/// file inside a folder with range", "See note to recipient in public
/// shares" and "Downloading a file from public share with Ajax header": a
/// folder link with `publicUpload` has every permission (31), lists the
/// folder, serves its files by range, shows its note on its root and takes
/// uploads into the owner's folder; a read-only link refuses them.
#[tokio::test]
async fn a_folder_link_serves_the_folder_and_takes_uploads_if_allowed() {
    let target = Target::get().await;
    let (people, [owner]) = Throwaway::accounts(&target).await;
    assert_eq!(target.mkcol(&owner, "PARENT").await, 201);
    let parent = "PARENT/parent.txt";
    assert!(
        target
            .put_file(&owner, parent, "Nextcloud test text file parent")
            .await
            .status()
            .is_success()
    );
    let in_three_days = day_in(3);
    let (status, share) = create_link(
        &target,
        &owner,
        "PARENT",
        &[
            ("password", "publicpw"),
            ("expireDate", &in_three_days),
            ("publicUpload", "true"),
            ("permissions", "7"),
            ("note", "Hello"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{share}");
    assert_eq!(share["permissions"], 31, "{share}");
    assert_eq!(share["mimetype"], "httpd/unix-directory");
    assert_eq!(text(&share, "expiration"), format!("{in_three_days} 00:00:00"));
    let token = text(&share, "token");

    let (status, part) =
        public_get(&target, &token, "/parent.txt", Some("publicpw"), Some("bytes=1-8")).await;
    assert_eq!((status, part.as_str()), (206, "extcloud"));
    let ajax = public_request(&target, "GET", &token, "/parent.txt", Some("publicpw"))
        .header("X-Requested-With", "XMLHttpRequest")
        .send()
        .await
        .unwrap();
    assert_eq!(ajax.text().await.unwrap(), "Nextcloud test text file parent");

    let body = r#"<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:nc="http://nextcloud.org/ns"><d:prop><nc:note/><d:resourcetype/></d:prop></d:propfind>"#;
    let listing = public_request(&target, "PROPFIND", &token, "/", Some("publicpw"))
        .header("Depth", "1")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(listing.status(), 207);
    let multistatus = nextcloud_contract::Multistatus::parse(&listing.bytes().await.unwrap());
    let root =
        multistatus.find(&format!("/public.php/dav/files/{token}/")).expect("the link's root");
    assert_eq!(root.text(NC, "note").as_deref(), Some("Hello"));
    assert!(root.prop(DAV, "resourcetype").is_some());
    assert!(multistatus.find("/parent.txt").is_some(), "the folder is listed");

    let upload = public_request(&target, "PUT", &token, "/test.txt", Some("publicpw"))
        .body("test")
        .send()
        .await
        .unwrap();
    assert_eq!(upload.status(), 201);
    let (status, uploaded) =
        target.get_text(&owner, &target.files_path(&owner, "PARENT/test.txt")).await;
    assert_eq!((status, uploaded.as_str()), (200, "test"), "the upload is the owner's");

    let (status, read_only) = create_link(&target, &owner, "PARENT", &[]).await;
    assert_eq!((status, read_only["permissions"].clone()), (200, 17.into()), "{read_only}");
    let refused = public_request(&target, "PUT", &text(&read_only, "token"), "/nope.txt", None)
        .body("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    people.remove().await;
}

/// "Creating a new public share, updating its expiration date and getting
/// its info", "… updating its permissions …", "… for \"hide file list\""
/// and "… updating publicUpload option …": a folder's link starts at 17,
/// takes an expiry day (not one in the past);
/// `publicUpload` (with or without `permissions`) makes it 31; create alone
/// (4) stays 4; the info names the link as upstream does.
#[tokio::test]
async fn a_links_permissions_and_info_follow_its_updates() {
    let target = Target::get().await;
    let (people, [owner]) = Throwaway::accounts(&target).await;
    assert_eq!(target.mkcol(&owner, "FOLDER").await, 201);
    let (status, share) = create_link(&target, &owner, "FOLDER", &[]).await;
    assert_eq!(status, 200, "{share}");
    let id = text(&share, "id");
    let shown = info(&target, &owner, &id).await;
    for (field, value) in [
        ("item_type", Value::from("folder")),
        ("share_type", 3.into()),
        ("file_target", "/FOLDER".into()),
        ("permissions", 17.into()),
        ("mail_send", 0.into()),
        ("uid_owner", owner.uid.as_str().into()),
        ("storage_id", format!("home::{}", owner.uid).into()),
        ("mimetype", "httpd/unix-directory".into()),
    ] {
        assert_eq!(shown[field], value, "{field}: {shown}");
    }
    let in_three_days = day_in(3);
    let (status, updated) = update(&target, &owner, &id, &[("expireDate", &in_three_days)]).await;
    assert_eq!(status, 200, "{updated}");
    let shown = info(&target, &owner, &id).await;
    assert_eq!(text(&shown, "expiration"), format!("{in_three_days} 00:00:00"));
    assert_eq!((shown["permissions"].clone(), shown["token"].is_string()), (17.into(), true));
    let (status, refused) = update(&target, &owner, &id, &[("expireDate", "2000-01-01")]).await;
    assert_eq!(status, 404, "a day in the past: {refused}");
    for (fields, expected) in [
        (vec![("permissions", "7"), ("publicUpload", "true")], 31),
        (vec![("permissions", "4")], 4),
        (vec![("publicUpload", "true")], 31),
        (vec![("publicUpload", "false")], 17),
    ] {
        let (status, updated) = update(&target, &owner, &id, &fields).await;
        assert_eq!(status, 200, "{fields:?}: {updated}");
        assert_eq!(info(&target, &owner, &id).await["permissions"], expected, "{fields:?}");
    }
    assert!(!text(&info(&target, &owner, &id).await, "url").is_empty());
    // A link's hidden download is its download attribute as well.
    let (status, hidden) = update(&target, &owner, &id, &[("hideDownload", "true")]).await;
    assert_eq!(status, 200, "{hidden}");
    let shown = info(&target, &owner, &id).await;
    assert_eq!(shown["hide_download"], 1, "{shown}");
    assert_eq!(shown["attributes"], r#"[{"scope":"permissions","key":"download","value":false}]"#);
    let file_upload = target.put_file(&owner, "file.txt", "x").await;
    assert!(file_upload.status().is_success());
    let (status, refused) =
        create_link(&target, &owner, "file.txt", &[("publicUpload", "true")]).await;
    assert_eq!(status, 404, "no public upload to a file: {refused}");
    people.remove().await;
}

/// "A file that is shared by link has a share-types property", "… by
/// user,group and link …" (webdav-related) and "Don't allow sharing of the
/// root" (part2b): `oc:share-types` lists 3 for a link; the root cannot be
/// shared at all (403).
#[tokio::test]
async fn share_types_name_links_and_the_root_is_never_shared() {
    let target = Target::get().await;
    let (people, [owner, other]) = Throwaway::accounts(&target).await;
    assert_eq!(target.mkcol(&owner, "test").await, 201);
    let (status, _) = create_link(&target, &owner, "test", &[("permissions", "31")]).await;
    assert_eq!(status, 200);
    let types = || share_types(&target, &owner, "test");
    assert_eq!(types().await, vec!["3"]);
    shared_with(&target, &owner, "test", &other, Some("31")).await;
    assert_eq!(types().await, vec!["0", "3"]);
    // The administrators' group is there on every Nextcloud.
    shared_with_group(&target, &owner, "test", "admin", None).await;
    assert_eq!(types().await, vec!["0", "1", "3"]);

    let (status, root) = create_link(&target, &owner, "", &[]).await;
    assert_eq!(status, 403, "{root}");
    people.remove().await;
}

/// "do not allow to increase link share permissions on reshare" and "… on
/// sub reshare" (part4), and "Accepting a share that is not a user share"
/// (sharing-accept): a recipient who may reshare read-only makes a link,
/// but cannot open it to uploads (404); a link has no accept page.
#[tokio::test]
async fn a_reshared_link_cannot_exceed_the_received_share() {
    let target = Target::get().await;
    let (people, [owner, resharer]) = Throwaway::accounts(&target).await;
    assert_eq!(target.mkcol(&owner, "TMP").await, 201);
    assert_eq!(target.mkcol(&owner, "TMP/SUB").await, 201);
    shared_with(&target, &owner, "TMP", &resharer, Some("17")).await;
    for path in ["TMP", "TMP/SUB"] {
        let (status, link) = create_link(&target, &resharer, path, &[]).await;
        assert_eq!(status, 200, "{path}: {link}");
        let (status, refused) =
            update(&target, &resharer, &text(&link, "id"), &[("publicUpload", "true")]).await;
        assert_eq!(status, 404, "{path}: {refused}");
        let accept =
            format!("/index.php/apps/files_sharing/accept/ocinternal:{}", text(&link, "id"));
        let page = target.as_account(&resharer, "GET", &accept).send().await.unwrap();
        assert_eq!(page.status(), 404, "a link has no accept page");
    }
    people.remove().await;
}

/// "Download a folder" (dav-v2-public): a folder under a link, asked for
/// as `application/zip`, arrives as an archive that holds the folder and
/// its files under the folder's name; the link's own download is the
/// same archive of the shared folder.
#[tokio::test]
async fn a_folder_downloads_as_a_zip() {
    use std::io::Read as _;
    let target = Target::get().await;
    let (people, [owner]) = Throwaway::accounts(&target).await;
    assert_eq!(target.mkcol(&owner, "testshare").await, 201);
    assert_eq!(target.mkcol(&owner, "testshare/testFolder").await, 201);
    let files = [
        ("testshare/testFolder/text.txt", "This is a testfile."),
        ("testshare/testFolder/image.png", "\u{89}PNG not really"),
    ];
    for (path, content) in files {
        assert!(target.put_file(&owner, path, content).await.status().is_success());
    }
    let (status, link) = create_link(&target, &owner, "testshare", &[("permissions", "1")]).await;
    assert_eq!(status, 200, "{link}");
    let token = text(&link, "token");
    let response = target
        .anonymous("GET", &format!("/public.php/dav/files/{token}/testFolder"))
        .header("Accept", "application/zip")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("application/zip"));
    let bytes = response.bytes().await.unwrap();
    let mut archive =
        zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).expect("a zip file");
    let names: Vec<String> =
        archive.file_names().map(|name| name.expect("an entry name").to_string()).collect();
    assert!(names.contains(&"testFolder/".to_string()), "{names:?}");
    for (path, content) in files {
        let name = path.trim_start_matches("testshare/");
        let mut inside = String::new();
        archive
            .by_name(name)
            .unwrap_or_else(|_| panic!("{name} in {names:?}"))
            .read_to_string(&mut inside)
            .unwrap();
        assert_eq!(inside, content, "{name}");
    }
    let whole =
        target.anonymous("GET", &format!("/index.php/s/{token}/download")).send().await.unwrap();
    assert_eq!(whole.status(), 200);
    let bytes = whole.bytes().await.unwrap();
    let archive = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).expect("a zip file");
    let names: Vec<String> =
        archive.file_names().map(|name| name.expect("an entry name").to_string()).collect();
    assert!(names.contains(&"testshare/testFolder/text.txt".to_string()), "{names:?}");
    people.remove().await;
}

/// "Only allow 1 link share per file/folder" (sharing-v1, part2): the
/// title dates from before files_sharing allowed several links of one
/// node; its check ("the share ids should match") compares two values the
/// step never fills (it reads the SimpleXML answer as an array, which
/// yields nothing), so it holds on any server. What Nextcloud does since
/// `multiple_links` is checked here: a second link of the same file is a
/// link of its own, with its own id and token, both listed and both open.
#[tokio::test]
async fn a_second_link_of_a_file_is_a_link_of_its_own() {
    let target = Target::get().await;
    let (_, capabilities) =
        target.ocs_call(target.alice(), "GET", "/ocs/v2.php/cloud/capabilities?format=json").await;
    let public = &capabilities["ocs"]["data"]["capabilities"]["files_sharing"]["public"];
    assert_eq!(public["multiple_links"], true, "{public}");
    let (people, [owner]) = Throwaway::accounts(&target).await;
    assert!(target.put_file(&owner, "welcome.txt", "welcome").await.status().is_success());
    let (status, first) = create_link(&target, &owner, "welcome.txt", &[]).await;
    assert_eq!(status, 200, "{first}");
    let (status, second) = create_link(&target, &owner, "welcome.txt", &[]).await;
    assert_eq!(status, 200, "{second}");
    assert_ne!(text(&first, "id"), text(&second, "id"));
    assert_ne!(text(&first, "token"), text(&second, "token"));

    let (status, listed) = list_shares(&target, &owner, "path=/welcome.txt").await;
    assert_eq!(status, 200, "{listed}");
    let mut ids: Vec<String> =
        listed["ocs"]["data"].as_array().unwrap().iter().map(|share| text(share, "id")).collect();
    ids.sort();
    let mut expected = vec![text(&first, "id"), text(&second, "id")];
    expected.sort();
    assert_eq!(ids, expected);
    for link in [&first, &second] {
        let (status, body) = public_get(&target, &text(link, "token"), "", None, None).await;
        assert_eq!((status, body.as_str()), (200, "welcome"));
    }
    people.remove().await;
}
