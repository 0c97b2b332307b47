//! WebDAV files as sabre/dav answers them in Nextcloud: RFC 4918 multistatus,
//! Nextcloud's `oc:`/`nc:` properties, the `OC-FileId`/`OC-ETag` headers on
//! PUT, RFC 7233 ranges, RFC 5323 SEARCH (basicsearch) as
//! mcp-nextcloud sends it (`index/visible.rs`, `tools/files_read.rs`).

use nextcloud_contract::{Account, Multistatus, Target, header};
use xml_tree::{DAV, OC};

/// The properties mcp-nextcloud asks for (`nextcloud/dav.rs`).
const FILE_PROPERTIES: &str = concat!(
    "<d:resourcetype/><d:getlastmodified/><d:getcontentlength/><d:getcontenttype/>",
    "<d:getetag/><oc:fileid/><oc:size/><oc:permissions/><oc:owner-id/>"
);

pub(super) fn propfind_body(extra: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns"><d:prop>{FILE_PROPERTIES}<oc:id/>{extra}</d:prop></d:propfind>"#
    )
}

/// The numeric file id inside an `OC-FileId` header (`%08d` + instance id).
pub(super) fn fileid_of(oc_fileid: &str) -> u64 {
    let digits: String = oc_fileid.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap_or_else(|_| panic!("OC-FileId {oc_fileid:?} starts with the file id"))
}

struct Scratch<'a> {
    target: &'a Target,
    account: Account,
    folder: String,
}

impl<'a> Scratch<'a> {
    async fn new(target: &'a Target, stem: &str) -> Scratch<'a> {
        let account = target.alice().clone();
        let folder = target.unique(stem);
        assert_eq!(target.mkcol(&account, &folder).await, 201, "MKCOL of a new folder is 201");
        Scratch { target, account, folder }
    }

    fn path(&self, name: &str) -> String {
        format!("{}/{name}", self.folder)
    }

    fn dav(&self, name: &str) -> String {
        self.target.files_path(&self.account, &self.path(name))
    }

    /// `method` on the scratch file `name` with `headers` (and a body).
    async fn send(
        &self,
        method: &str,
        name: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> reqwest::Response {
        let mut request = self.target.as_account(&self.account, method, &self.dav(name));
        for (header, value) in headers {
            request = request.header(*header, *value);
        }
        if let Some(body) = body {
            request = request.body(body.to_string());
        }
        request.send().await.unwrap_or_else(|error| panic!("{method} {name}: {error}"))
    }

    /// A depth-0 PROPFIND of the scratch file `name` for mcp-nextcloud's
    /// properties and `extra`: the status and the multistatus.
    async fn props(&self, name: &str, extra: &str) -> (u16, Option<Multistatus>) {
        self.target.propfind(&self.account, &self.dav(name), "0", &propfind_body(extra)).await
    }

    async fn done(self) {
        self.target.cleanup(&self.account, &self.folder).await;
    }
}

#[tokio::test]
async fn propfind_depth_0_and_1_answer_nextclouds_properties() {
    let target = Target::get().await;
    let scratch = Scratch::new(&target, "propfind").await;
    let content = "Contract: PROPFIND.\n";
    let put = target.put_file(&scratch.account, &scratch.path("note.txt"), content).await;
    assert_eq!(put.status(), 201);
    let oc_fileid = header(&put, "oc-fileid");

    let folder = target.files_path(&scratch.account, &scratch.folder);
    let (status, multistatus) = target
        .propfind(&scratch.account, &folder, "0", &propfind_body("<oc:no-such-property/>"))
        .await;
    assert_eq!(status, 207);
    let multistatus = multistatus.unwrap();
    assert_eq!(multistatus.responses.len(), 1, "depth 0: the folder only");
    let own = &multistatus.responses[0];
    assert!(own.href.ends_with('/'), "a collection's href ends with a slash: {}", own.href);
    assert!(own.href.starts_with('/'), "hrefs are absolute paths: {}", own.href);
    let resourcetype = own.prop(DAV, "resourcetype").expect("resourcetype");
    assert!(resourcetype.child(DAV, "collection").is_some());
    assert!(
        own.not_found.iter().any(|property| property.is(OC, "no-such-property")),
        "an unknown property is reported in a 404 propstat"
    );
    let permissions = own.text(OC, "permissions").expect("oc:permissions");
    for letter in ['G', 'D', 'N', 'V', 'C', 'K'] {
        assert!(
            permissions.contains(letter),
            "own folder permissions {permissions:?} lack {letter}"
        );
    }
    assert_eq!(own.text(OC, "owner-id").as_deref(), Some(scratch.account.uid.as_str()));

    let (status, multistatus) =
        target.propfind(&scratch.account, &folder, "1", &propfind_body("")).await;
    assert_eq!(status, 207);
    let multistatus = multistatus.unwrap();
    assert_eq!(multistatus.responses.len(), 2, "depth 1: the folder and its child");
    let file = multistatus.find("/note.txt").expect("the file's response");
    let resourcetype = file.prop(DAV, "resourcetype").expect("resourcetype (empty for a file)");
    assert!(resourcetype.children().next().is_none());
    let fileid: u64 = file.text(OC, "fileid").expect("oc:fileid").parse().expect("numeric fileid");
    assert_eq!(fileid, fileid_of(&oc_fileid), "oc:fileid is the PUT's OC-FileId");
    assert_eq!(file.text(OC, "id").as_deref(), Some(oc_fileid.as_str()), "oc:id is OC-FileId");
    let etag = file.text(DAV, "getetag").expect("getetag");
    assert!(etag.len() > 2 && etag.starts_with('"') && etag.ends_with('"'), "quoted: {etag}");
    let modified = file.text(DAV, "getlastmodified").expect("getlastmodified");
    assert!(
        httpdate::parse_http_date(&modified).is_ok() && modified.ends_with(" GMT"),
        "getlastmodified is an RFC 1123 date: {modified:?}"
    );
    assert_eq!(file.text(DAV, "getcontentlength"), Some(content.len().to_string()));
    assert_eq!(file.text(OC, "size"), Some(content.len().to_string()));
    assert!(file.text(DAV, "getcontenttype").is_some_and(|kind| kind.starts_with("text/plain")));
    let permissions = file.text(OC, "permissions").expect("oc:permissions");
    for letter in ['G', 'D', 'N', 'V', 'W'] {
        assert!(permissions.contains(letter), "own file permissions {permissions:?} lack {letter}");
    }
    assert!(!permissions.contains('C'), "a file has no create permission: {permissions:?}");
    scratch.done().await;
}

#[tokio::test]
async fn missing_paths_and_parents_are_404_and_409() {
    let target = Target::get().await;
    let scratch = Scratch::new(&target, "missing").await;
    let account = scratch.account.clone();
    let missing = scratch.dav("no-such-file.txt");
    let (status, _) = target.propfind(&account, &missing, "0", &propfind_body("")).await;
    assert_eq!(status, 404, "PROPFIND of a missing path");
    let get = target.as_account(&account, "GET", &missing).send().await.unwrap();
    assert_eq!(get.status(), 404, "GET of a missing path");
    let put = target.put_file(&account, &scratch.path("no/such/parent.txt"), "x").await;
    assert_eq!(put.status(), 409, "PUT under a missing parent is a conflict (RFC 4918 §9.7.1)");
    let mkcol = target.mkcol(&account, &scratch.path("no/such")).await;
    assert_eq!(mkcol, 409, "MKCOL under a missing parent is a conflict (RFC 4918 §9.3.1)");
    assert_eq!(target.mkcol(&account, &scratch.folder).await, 405, "MKCOL of an existing folder");
    let delete = target.as_account(&account, "DELETE", &missing).send().await.unwrap();
    assert_eq!(delete.status(), 404, "DELETE of a missing path");
    scratch.done().await;
}

#[tokio::test]
async fn put_answers_file_id_and_etag_and_honours_preconditions() {
    let target = Target::get().await;
    let scratch = Scratch::new(&target, "put").await;
    let account = scratch.account.clone();
    let created = target.put_file(&account, &scratch.path("a.txt"), "one").await;
    assert_eq!(created.status(), 201, "a new file is 201 Created");
    let oc_fileid = header(&created, "oc-fileid");
    let oc_etag = header(&created, "oc-etag");
    let etag = header(&created, "etag");
    assert!(!oc_fileid.is_empty(), "PUT answers OC-FileId (nc-py-api needs it)");
    assert!(!oc_etag.is_empty() && etag.starts_with('"'), "PUT answers OC-ETag and a quoted ETag");
    assert_eq!(etag.trim_matches('"'), oc_etag.trim_matches('"'), "OC-ETag is the ETag");

    let replaced = target.put_file(&account, &scratch.path("a.txt"), "two").await;
    assert_eq!(replaced.status(), 204, "replacing a file is 204 No Content");
    assert_eq!(header(&replaced, "oc-fileid"), oc_fileid, "a file keeps its id when replaced");
    let new_etag = header(&replaced, "etag");
    assert_ne!(new_etag, etag, "the ETag changes with the content");

    let stale = scratch.send("PUT", "a.txt", &[("If-Match", etag.as_str())], Some("three")).await;
    assert_eq!(stale.status(), 412, "If-Match with a stale ETag");
    let exists = scratch.send("PUT", "a.txt", &[("If-None-Match", "*")], Some("three")).await;
    assert_eq!(exists.status(), 412, "If-None-Match: * on an existing file");
    let current =
        scratch.send("PUT", "a.txt", &[("If-Match", new_etag.as_str())], Some("three")).await;
    assert_eq!(current.status(), 204, "If-Match with the current ETag");

    // X-OC-MTime sets the modification time (Nextcloud's clients use it).
    let dated =
        scratch.send("PUT", "dated.txt", &[("X-OC-MTime", "1700000000")], Some("dated")).await;
    assert_eq!(dated.status(), 201);
    assert_eq!(header(&dated, "x-oc-mtime"), "accepted");
    let (_, multistatus) = scratch.props("dated.txt", "").await;
    let modified = multistatus.unwrap().responses[0].text(DAV, "getlastmodified").unwrap();
    assert_eq!(modified, "Tue, 14 Nov 2023 22:13:20 GMT");
    scratch.done().await;
}

#[tokio::test]
async fn get_serves_etag_ranges_and_conditional_requests() {
    let target = Target::get().await;
    let scratch = Scratch::new(&target, "get").await;
    let account = scratch.account.clone();
    let content = "0123456789abcdef";
    let put = target.put_file(&account, &scratch.path("r.txt"), content).await;
    let etag = header(&put, "etag");

    let get = target.as_account(&account, "GET", &scratch.dav("r.txt")).send().await.unwrap();
    assert_eq!(get.status(), 200);
    assert_eq!(header(&get, "etag"), etag, "GET's ETag is the PUT's");
    assert!(header(&get, "content-type").starts_with("text/plain"));
    assert!(httpdate::parse_http_date(&header(&get, "last-modified")).is_ok());
    assert_eq!(get.text().await.unwrap(), content);

    let range = scratch.send("GET", "r.txt", &[("Range", "bytes=2-5")], None).await;
    assert_eq!(range.status(), 206);
    assert_eq!(header(&range, "content-range"), format!("bytes 2-5/{}", content.len()));
    assert_eq!(range.text().await.unwrap(), "2345");

    let suffix = scratch.send("GET", "r.txt", &[("Range", "bytes=-3")], None).await;
    assert_eq!(suffix.status(), 206);
    assert_eq!(suffix.text().await.unwrap(), "def");

    let unsatisfiable = scratch.send("GET", "r.txt", &[("Range", "bytes=100-200")], None).await;
    assert_eq!(unsatisfiable.status(), 416);

    let not_modified =
        scratch.send("GET", "r.txt", &[("If-None-Match", etag.as_str())], None).await;
    assert_eq!(not_modified.status(), 304, "If-None-Match with the current ETag");
    scratch.done().await;
}

#[tokio::test]
async fn move_and_delete() {
    let target = Target::get().await;
    let scratch = Scratch::new(&target, "move").await;
    let account = scratch.account.clone();
    let put = target.put_file(&account, &scratch.path("from.txt"), "moving").await;
    let oc_fileid = header(&put, "oc-fileid");
    target.put_file(&account, &scratch.path("taken.txt"), "taken").await;

    let destination = target.url(&scratch.dav("to.txt"));
    let moved =
        scratch.send("MOVE", "from.txt", &[("Destination", destination.as_str())], None).await;
    assert_eq!(moved.status(), 201, "MOVE to a new name is 201");
    let gone = target.as_account(&account, "GET", &scratch.dav("from.txt")).send().await.unwrap();
    assert_eq!(gone.status(), 404, "the source is gone");
    let (_, multistatus) = scratch.props("to.txt", "").await;
    let fileid = multistatus.unwrap().responses[0].text(OC, "fileid").unwrap();
    assert_eq!(fileid.parse::<u64>().unwrap(), fileid_of(&oc_fileid), "a move keeps the id");

    let onto = scratch
        .send(
            "MOVE",
            "to.txt",
            &[("Destination", target.url(&scratch.dav("taken.txt")).as_str()), ("Overwrite", "F")],
            None,
        )
        .await;
    assert_eq!(onto.status(), 412, "MOVE onto an existing file with Overwrite: F");

    let deleted =
        target.as_account(&account, "DELETE", &scratch.dav("to.txt")).send().await.unwrap();
    assert_eq!(deleted.status(), 204);
    let gone = target.as_account(&account, "GET", &scratch.dav("to.txt")).send().await.unwrap();
    assert_eq!(gone.status(), 404);
    scratch.done().await;
}

/// Nextcloud's integration suite (`dav_features/webdav-related.feature`):
/// a folder moved onto its own parent is 403 ("Moving and overwriting
/// it's parent"), and the folder stays where it was.
#[tokio::test]
async fn a_folder_moved_onto_its_own_parent_is_403() {
    let target = Target::get().await;
    let scratch = Scratch::new(&target, "onto-parent").await;
    let account = scratch.account.clone();
    assert_eq!(target.mkcol(&account, &scratch.path("test")).await, 201);
    assert_eq!(target.mkcol(&account, &scratch.path("test/test")).await, 201);
    let parent = target.url(&scratch.dav("test"));
    let answer = scratch.send("MOVE", "test/test", &[("Destination", parent.as_str())], None).await;
    assert_eq!(answer.status(), 403, "MOVE of a folder onto its own parent");
    let (status, _) = scratch.props("test/test", "").await;
    assert_eq!(status, 207, "the folder is still where it was");
    scratch.done().await;
}

/// Nextcloud's integration suite (`dav_features/webdav-related.feature`):
/// a name with a control character ("Creating a folder with invalid
/// characters") and a move to a name with a backslash are 400, and
/// nothing is created or moved.
#[tokio::test]
async fn names_with_control_characters_or_backslashes_are_400() {
    let target = Target::get().await;
    let scratch = Scratch::new(&target, "invalid-names").await;
    let account = scratch.account.clone();
    for name in ["testshare\t", "tab\there", "line\nbreak"] {
        let created = target.mkcol(&account, &scratch.path(name)).await;
        assert_eq!(created, 400, "MKCOL of {name:?}");
    }
    assert_eq!(target.mkcol(&account, &scratch.path("testshare")).await, 201);
    for name in ["\\", "\\testshare", "hola\\hola"] {
        let destination = target.url(&scratch.dav(name));
        let headers = [("Destination", destination.as_str())];
        let moved = scratch.send("MOVE", "testshare", &headers, None).await;
        assert_eq!(moved.status(), 400, "MOVE to {name:?}");
    }
    let (status, multistatus) = target
        .propfind(&account, &target.files_path(&account, &scratch.folder), "1", &propfind_body(""))
        .await;
    assert_eq!(status, 207);
    let names: Vec<String> =
        multistatus.unwrap().responses.iter().map(|response| response.decoded_href()).collect();
    assert_eq!(names.len(), 2, "the scratch folder and testshare only: {names:?}");
    assert!(
        names.iter().any(|href| href.trim_end_matches('/').ends_with("/testshare")),
        "{names:?}"
    );
    scratch.done().await;
}

/// Nextcloud turns sabre's `enablePropfindDepthInfinity` on
/// (`apps/dav/lib/Connector/Sabre/Server.php`), so a PROPFIND's `Depth` is
/// honoured past 1: `3` lists three levels below the folder, `infinity`
/// every level.
#[tokio::test]
async fn propfind_depth_3_and_infinity_reach_that_deep() {
    let target = Target::get().await;
    let scratch = Scratch::new(&target, "depth").await;
    let account = scratch.account.clone();
    for folder in ["one", "one/two", "one/two/three", "one/two/three/four"] {
        assert_eq!(target.mkcol(&account, &scratch.path(folder)).await, 201, "MKCOL {folder}");
    }
    let root = target.files_path(&account, &scratch.folder);
    let listed = |depth: &'static str| {
        let root = root.clone();
        let target = &target;
        let account = account.clone();
        async move {
            let (status, multistatus) =
                target.propfind(&account, &root, depth, &propfind_body("")).await;
            assert_eq!(status, 207, "PROPFIND Depth: {depth}");
            let mut levels: Vec<usize> = multistatus
                .unwrap()
                .responses
                .iter()
                .map(|response| response.decoded_href().trim_end_matches('/').matches('/').count())
                .collect();
            levels.sort_unstable();
            let top = levels[0];
            levels.iter().map(|level| level - top).collect::<Vec<_>>()
        }
    };
    assert_eq!(listed("1").await, [0, 1], "Depth: 1");
    assert_eq!(listed("3").await, [0, 1, 2, 3], "Depth: 3 lists three levels below");
    assert_eq!(listed("infinity").await, [0, 1, 2, 3, 4], "Depth: infinity lists them all");
    scratch.done().await;
}

/// Nextcloud's integration suite (`webdav-related.feature` and
/// `dav-v2.feature`, "Doing a GET with a web login should work without CSRF
/// token" and "Doing a PROPFIND with a web login should (not) work
/// with(out) CSRF token", on the old and the new backend): on a browser
/// session, a GET needs no request token, a PROPFIND does (401 without, 207
/// with the one `/index.php/csrftoken` gives), on both endpoints.
#[tokio::test]
async fn a_web_session_needs_its_request_token_for_anything_but_get() {
    let target = Target::get().await;
    let scratch = Scratch::new(&target, "csrf").await;
    let account = scratch.account.clone();
    let put = target.put_file(&account, &scratch.path("note.txt"), "Welcome").await;
    assert!(put.status().is_success(), "{}", put.status());
    let cookies = target.login(&account).await.header();
    let legacy = format!("/remote.php/webdav/{}", scratch.path("note.txt"));
    for file in [target.url(&scratch.dav("note.txt")), target.url(&legacy)] {
        let got = target.http.get(&file).header("Cookie", &cookies).send().await.unwrap();
        assert_eq!(got.status(), 200, "GET {file} on a web session without a request token");
        assert_eq!(got.text().await.unwrap(), "Welcome");
        let propfind = |token: Option<String>| {
            let mut request = target
                .http
                .request(reqwest::Method::from_bytes(b"PROPFIND").unwrap(), &file)
                .header("Cookie", &cookies)
                .header("Depth", "0");
            if let Some(token) = token {
                request = request.header("requesttoken", token);
            }
            request.send()
        };
        let refused = propfind(None).await.unwrap();
        assert_eq!(refused.status(), 401, "PROPFIND {file} on a web session without a token");
        let token = target.http.get(target.url("/index.php/csrftoken")).header("Cookie", &cookies);
        let token: serde_json::Value = token.send().await.unwrap().json().await.unwrap();
        let token = token["token"].as_str().expect("the session's request token").to_string();
        let allowed = propfind(Some(token)).await.unwrap();
        assert_eq!(allowed.status(), 207, "PROPFIND {file} with the request token");
    }
    scratch.done().await;
}

#[tokio::test]
async fn another_users_private_file_is_not_visible() {
    let target = Target::get().await;
    let scratch = Scratch::new(&target, "private").await;
    let bob = target.bob().clone();
    let put = target.put_file(&scratch.account, &scratch.path("secret.txt"), "alice only").await;
    let fileid = fileid_of(&header(&put, "oc-fileid"));
    // Bob's own tree has no such path.
    let in_bobs_tree = target.files_path(&bob, &scratch.path("secret.txt"));
    let (status, _) = target.propfind(&bob, &in_bobs_tree, "0", &propfind_body("")).await;
    assert_eq!(status, 404);
    // And a SEARCH for its id in Bob's files finds nothing.
    let (status, multistatus) = search(&target, &bob, "", &eq_fileid(fileid), "", None).await;
    assert_eq!(status, 207);
    assert!(multistatus.unwrap().responses.is_empty(), "alice's file id is not in bob's search");
    scratch.done().await;
}

pub(super) fn eq_fileid(fileid: u64) -> String {
    format!("<d:eq><d:prop><oc:fileid/></d:prop><d:literal>{fileid}</d:literal></d:eq>")
}

/// A SEARCH as mcp-nextcloud builds it (`index/visible.rs`).
pub(super) async fn search(
    target: &Target,
    account: &Account,
    folder: &str,
    condition: &str,
    order: &str,
    limit: Option<(usize, usize)>,
) -> (u16, Option<nextcloud_contract::Multistatus>) {
    let limit = limit
        .map(|(count, skip)| {
            format!("<d:limit><d:nresults>{count}</d:nresults><ns:firstresult>{skip}</ns:firstresult></d:limit>")
        })
        .unwrap_or_default();
    let folder = match folder {
        "" => String::new(),
        folder => format!("/{}", xml_tree::escape(folder)),
    };
    let body = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns" xmlns:ns="https://github.com/icewind1991/SearchDAV/ns">
<d:basicsearch>
<d:select><d:prop>{FILE_PROPERTIES}</d:prop></d:select>
<d:from><d:scope><d:href>/files/{uid}{folder}</d:href><d:depth>infinity</d:depth></d:scope></d:from>
<d:where>{condition}</d:where>
<d:orderby>{order}</d:orderby>
{limit}
</d:basicsearch>
</d:searchrequest>"#,
        uid = account.uid,
    );
    let response = target
        .as_account(account, "SEARCH", "/remote.php/dav/")
        .header("Content-Type", "text/xml; charset=utf-8")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let bytes = response.bytes().await.unwrap();
    (status, (status == 207).then(|| nextcloud_contract::Multistatus::parse(&bytes)))
}

#[tokio::test]
async fn search_finds_files_by_fileid_and_by_modification_time() {
    let target = Target::get().await;
    let scratch = Scratch::new(&target, "search").await;
    let account = scratch.account.clone();
    let mut ids = Vec::new();
    for (name, mtime) in [("old.txt", "1700000000"), ("new.txt", "1800000000")] {
        let put = scratch
            .send("PUT", name, &[("X-OC-MTime", mtime)], Some(format!("{name}\n").as_str()))
            .await;
        assert_eq!(put.status(), 201);
        ids.push(fileid_of(&header(&put, "oc-fileid")));
    }
    target.mkcol(&account, &scratch.path("sub")).await;

    // By file id, in the whole of the user's files (files_read's lookup).
    let (status, found) = search(&target, &account, "", &eq_fileid(ids[0]), "", None).await;
    assert_eq!(status, 207);
    let found = found.unwrap();
    assert_eq!(found.responses.len(), 1, "one file has that id");
    let response = &found.responses[0];
    assert!(response.decoded_href().ends_with(&format!("{}/old.txt", scratch.folder)));
    assert!(
        response.decoded_href().starts_with(&format!("/remote.php/dav/files/{}/", account.uid)),
        "SEARCH hrefs are file paths under /remote.php/dav/files/{{uid}}/: {}",
        response.href
    );
    assert_eq!(response.text(OC, "fileid"), Some(ids[0].to_string()));
    assert!(response.text(DAV, "getetag").is_some_and(|etag| etag.starts_with('"')));

    // An `or` of ids (the batched visibility check).
    let both = format!("<d:or>{}{}</d:or>", eq_fileid(ids[0]), eq_fileid(ids[1]));
    let (_, found) = search(&target, &account, &scratch.folder, &both, "", Some((100, 0))).await;
    assert_eq!(found.unwrap().responses.len(), 2);

    // Changed since, oldest first, files only (discovery's paging).
    let condition = "<d:and><d:gte><d:prop><d:getlastmodified/></d:prop>\
<d:literal>2023-11-14T00:00:00Z</d:literal></d:gte><d:not><d:is-collection/></d:not></d:and>";
    let order = "<d:order><d:prop><d:getlastmodified/></d:prop><d:ascending/></d:order>";
    let (status, found) =
        search(&target, &account, &scratch.folder, condition, order, Some((10, 0))).await;
    assert_eq!(status, 207);
    let names: Vec<String> = found
        .unwrap()
        .responses
        .iter()
        .map(|response| response.decoded_href().rsplit('/').next().unwrap().to_string())
        .collect();
    assert_eq!(names, ["old.txt", "new.txt"], "files only, ascending by mtime");

    let newer = "<d:gte><d:prop><d:getlastmodified/></d:prop>\
<d:literal>2027-01-01T00:00:00Z</d:literal></d:gte>";
    let (_, found) = search(&target, &account, &scratch.folder, newer, order, Some((10, 0))).await;
    let found = found.unwrap();
    assert_eq!(found.responses.len(), 1, "only the file modified after 2027");
    assert!(found.responses[0].decoded_href().ends_with("/new.txt"));

    // Paging: the second page of one.
    let (_, page) =
        search(&target, &account, &scratch.folder, condition, order, Some((1, 1))).await;
    let page = page.unwrap();
    assert_eq!(page.responses.len(), 1);
    assert!(page.responses[0].decoded_href().ends_with("/new.txt"));
    scratch.done().await;
}

#[tokio::test]
async fn copy_head_and_favorites() {
    let target = Target::get().await;
    let scratch = Scratch::new(&target, "copy").await;
    let account = scratch.account.clone();
    let content = "copy me\n";
    let put = target.put_file(&account, &scratch.path("a.txt"), content).await;
    let original = fileid_of(&header(&put, "oc-fileid"));

    let head = target.as_account(&account, "HEAD", &scratch.dav("a.txt")).send().await.unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(header(&head, "content-length"), content.len().to_string());
    assert_eq!(header(&head, "etag"), header(&put, "etag"));

    let copied = scratch
        .send("COPY", "a.txt", &[("Destination", target.url(&scratch.dav("b.txt")).as_str())], None)
        .await;
    assert_eq!(copied.status(), 201, "COPY to a new name is 201");
    let (_, multistatus) = scratch.props("b.txt", "").await;
    let copy = &multistatus.unwrap().responses[0];
    let copy_id: u64 = copy.text(OC, "fileid").unwrap().parse().unwrap();
    assert_ne!(copy_id, original, "a copy is a new file with its own id");
    let body = target.as_account(&account, "GET", &scratch.dav("b.txt")).send().await.unwrap();
    assert_eq!(body.text().await.unwrap(), content);

    // oc:favorite through PROPPATCH, as Nextcloud's clients set it.
    let proppatch = r#"<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:set><d:prop><oc:favorite>1</oc:favorite></d:prop></d:set></d:propertyupdate>"#;
    let response =
        target.send_xml(&account, "PROPPATCH", &scratch.dav("a.txt"), None, proppatch).await;
    assert_eq!(response.status(), 207);
    let answer = nextcloud_contract::Multistatus::parse(&response.bytes().await.unwrap());
    assert!(answer.responses[0].prop(OC, "favorite").is_some(), "a 200 propstat for oc:favorite");
    let (_, multistatus) = scratch.props("a.txt", "<oc:favorite/>").await;
    assert_eq!(multistatus.unwrap().responses[0].text(OC, "favorite").as_deref(), Some("1"));
    scratch.done().await;
}

#[tokio::test]
async fn without_valid_credentials_dav_is_a_401_asking_for_basic() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let root = format!("/remote.php/dav/files/{}/", alice.uid);
    let anonymous = target.anonymous("PROPFIND", &root).header("Depth", "0").send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
    let challenge = header(&anonymous, "www-authenticate");
    assert!(challenge.starts_with("Basic"), "a Basic challenge: {challenge:?}");
    let wrong = target
        .anonymous("PROPFIND", &root)
        .basic_auth(&alice.uid, Some("not-the-password"))
        .header("Depth", "0")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401, "a wrong password");
    // Another user's files root with valid credentials is not served.
    let bob = target.bob().clone();
    let (status, _) = target.propfind(&bob, &root, "0", &propfind_body("")).await;
    assert!(status == 401 || status == 403 || status == 404, "bob in alice's DAV root: {status}");
}

/// Nextcloud's integration suite (`dav_features/webdav-related.feature`):
/// "Moving and overwriting a file" and "Copying and overwriting a file"
/// are 204 and leave the source's content at the destination; "Creating a
/// folder with special chars" (`:` is allowed); "Removing everything of a
/// folder" leaves it empty.
#[tokio::test]
async fn overwriting_moves_and_copies_are_204_and_a_folder_can_be_emptied() {
    let target = Target::get().await;
    let scratch = Scratch::new(&target, "overwrite").await;
    let account = scratch.account.clone();
    for (name, content) in
        [("welcome.txt", "Welcome"), ("textfile0.txt", "zero"), ("textfile1.txt", "one")]
    {
        target.put_file(&account, &scratch.path(name), content).await;
    }
    let get = |name: &'static str| {
        let path = scratch.dav(name);
        let request = target.as_account(&account, "GET", &path);
        async move { request.send().await.unwrap().text().await.unwrap() }
    };

    let destination = target.url(&scratch.dav("textfile0.txt"));
    let moved =
        scratch.send("MOVE", "welcome.txt", &[("Destination", destination.as_str())], None).await;
    assert_eq!(moved.status(), 204, "MOVE onto an existing file");
    assert_eq!(get("textfile0.txt").await, "Welcome");
    let destination = target.url(&scratch.dav("textfile1.txt"));
    let copied =
        scratch.send("COPY", "textfile0.txt", &[("Destination", destination.as_str())], None).await;
    assert_eq!(copied.status(), 204, "COPY onto an existing file");
    assert_eq!(get("textfile1.txt").await, "Welcome");

    let special = scratch.send("MKCOL", "test_folder:5", &[], None).await;
    assert_eq!(special.status(), 201, "a folder named with a colon");

    for name in ["textfile0.txt", "textfile1.txt", "test_folder:5"] {
        let deleted = scratch.send("DELETE", name, &[], None).await;
        assert_eq!(deleted.status(), 204, "DELETE {name}");
    }
    let (status, listing) =
        target.propfind(&account, &scratch.dav(""), "1", &propfind_body("")).await;
    assert_eq!(status, 207);
    assert_eq!(listing.unwrap().responses.len(), 1, "only the folder itself is left");
    scratch.done().await;
}

/// `webdav-related.feature` and `dav-v2.feature`: "Doing a GET with a web
/// login should work with CSRF token", on the old and the new endpoint.
#[tokio::test]
async fn a_get_on_a_web_session_works_with_its_request_token_on_both_endpoints() {
    let target = Target::get().await;
    let account = target.alice().clone();
    let name = format!("{}.txt", target.unique("csrf-get"));
    target.put_file(&account, &name, "Welcome").await;
    let cookies = target.login(&account).await.header();
    let token = target.http.get(target.url("/index.php/csrftoken")).header("Cookie", &cookies);
    let token: serde_json::Value = token.send().await.unwrap().json().await.unwrap();
    let token = token["token"].as_str().expect("the session's request token").to_string();
    for path in [target.files_path(&account, &name), format!("/remote.php/webdav/{name}")] {
        let got = target
            .http
            .get(target.url(&path))
            .header("Cookie", &cookies)
            .header("requesttoken", &token)
            .send()
            .await
            .unwrap();
        assert_eq!(got.status(), 200, "{path}");
        assert_eq!(got.text().await.unwrap(), "Welcome");
    }
    target.cleanup(&account, &name).await;
}

/// Nextcloud's integration suite (`webdav-related.feature`, the scenarios
/// "using old dav path"): "Moving a file" (201), "Moving and overwriting a
/// file old way" (204), "Moving and overwriting it's parent" (403),
/// "Copying a file" (201), "Copying and overwriting a file" (204),
/// "download a file with range" and "Renaming a folder to / beginning with
/// / including a backslash encoded should return an error using old
/// endpoint" (400): the same answers through `/remote.php/webdav/`, with
/// `Destination` on that root too.
#[tokio::test]
async fn the_legacy_root_moves_copies_and_serves_ranges() {
    let target = Target::get().await;
    let scratch = Scratch::new(&target, "legacy").await;
    let account = scratch.account.clone();
    let legacy = |name: &str| format!("/remote.php/webdav/{}", scratch.path(name));
    let send = |method: &'static str, from: String, to: String| {
        let (target, account) = (&target, account.clone());
        async move {
            let destination = target.url(&to);
            let request = target.as_account(&account, method, &from);
            request.header("Destination", destination).send().await.unwrap().status().as_u16()
        }
    };
    let range = |name: String| {
        let (target, account) = (&target, account.clone());
        async move {
            let request = target.as_account(&account, "GET", &name).header("Range", "bytes=0-6");
            let answer = request.send().await.unwrap();
            (answer.status().as_u16(), answer.text().await.unwrap())
        }
    };
    target.put_file(&account, &scratch.path("welcome.txt"), "Welcome to the old root").await;
    target.put_file(&account, &scratch.path("textfile0.txt"), "a text file").await;
    assert_eq!(target.mkcol(&account, &scratch.path("FOLDER")).await, 201);

    let moved = send("MOVE", legacy("welcome.txt"), legacy("FOLDER/welcome.txt")).await;
    assert_eq!(moved, 201, "MOVE to a new name through the old root");
    assert_eq!(range(legacy("FOLDER/welcome.txt")).await, (206, "Welcome".to_string()));
    let onto = send("MOVE", legacy("FOLDER/welcome.txt"), legacy("textfile0.txt")).await;
    assert_eq!(onto, 204, "MOVE over an existing file through the old root");
    assert_eq!(range(legacy("textfile0.txt")).await, (206, "Welcome".to_string()));

    let copied = send("COPY", legacy("textfile0.txt"), legacy("FOLDER/welcome.txt")).await;
    assert_eq!(copied, 201, "COPY to a new name through the old root");
    target.put_file(&account, &scratch.path("textfile1.txt"), "another file").await;
    let over = send("COPY", legacy("textfile0.txt"), legacy("textfile1.txt")).await;
    assert_eq!(over, 204, "COPY over an existing file through the old root");
    assert_eq!(range(legacy("textfile1.txt")).await, (206, "Welcome".to_string()));

    assert_eq!(target.mkcol(&account, &scratch.path("test")).await, 201);
    assert_eq!(target.mkcol(&account, &scratch.path("test/test")).await, 201);
    let parent = send("MOVE", legacy("test/test"), legacy("test")).await;
    assert_eq!(parent, 403, "MOVE of a folder onto its own parent through the old root");

    assert_eq!(target.mkcol(&account, &scratch.path("testshare")).await, 201);
    for name in ["%5C", "%5Ctestshare", "hola%5Chola"] {
        let renamed = send("MOVE", legacy("testshare"), legacy(name)).await;
        assert_eq!(renamed, 400, "MOVE to {name} through the old root");
    }
    let (status, _) = scratch.props("testshare", "").await;
    assert_eq!(status, 207, "the folder was not renamed");
    scratch.done().await;
}

/// Nextcloud's integration suite (`dav-v2.feature`, "Create a search query
/// on image" and "Create a search query on favorite"; the steps in
/// `features/bootstrap/WebDav.php` search by `getcontenttype` like
/// `image/%` and by `oc:favorite`): nothing matches until an image is
/// uploaded, or a file is made a favourite, and then exactly that file.
#[tokio::test]
async fn search_finds_images_by_type_and_favorites() {
    let target = Target::get().await;
    let scratch = Scratch::new(&target, "search-kinds").await;
    let account = scratch.account.clone();
    let images =
        "<d:like><d:prop><d:getcontenttype/></d:prop><d:literal>image/%</d:literal></d:like>";
    let favorites = "<d:eq><d:prop><oc:favorite/></d:prop><d:literal>1</d:literal></d:eq>";
    let found = |condition: &'static str| {
        let (target, account, folder) = (&target, account.clone(), scratch.folder.clone());
        async move {
            let (status, answer) = search(target, &account, &folder, condition, "", None).await;
            assert_eq!(status, 207, "SEARCH {condition}");
            answer.unwrap().responses
        }
    };
    target.put_file(&account, &scratch.path("asdf.txt"), "not an image").await;
    assert!(found(images).await.is_empty(), "no image yet");
    let png = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];
    let put = target
        .as_account(&account, "PUT", &scratch.dav("image.png"))
        .body(png.to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 201);
    let hits = found(images).await;
    assert_eq!(hits.len(), 1, "the image only");
    assert_eq!(hits[0].text(DAV, "getcontenttype").as_deref(), Some("image/png"));

    assert!(found(favorites).await.is_empty(), "no favourite yet");
    let proppatch = r#"<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:set><d:prop><oc:favorite>1</oc:favorite></d:prop></d:set></d:propertyupdate>"#;
    let marked =
        target.send_xml(&account, "PROPPATCH", &scratch.dav("image.png"), None, proppatch).await;
    assert_eq!(marked.status(), 207);
    let hits = found(favorites).await;
    assert_eq!(hits.len(), 1, "the favourite only");
    assert!(hits[0].decoded_href().ends_with("/image.png"), "{}", hits[0].href);
    scratch.done().await;
}
