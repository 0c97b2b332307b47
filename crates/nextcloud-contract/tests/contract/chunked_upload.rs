//! Chunked upload on `/remote.php/dav/uploads/{uid}/{transfer-id}`, as the
//! desktop client and nc-py-api send large files: MKCOL the upload folder
//! (with the `Destination` header chunking v2 adds), PUT numbered chunks,
//! MOVE its `.file` onto the destination, or DELETE the folder to abort.
//!
//! From Nextcloud's `webdav-related.feature` ("Upload chunked file asc /
//! desc / random with new chunking", "Checking file id after a move
//! overwrite using new chunking endpoint", "Upload file via new chunking
//! endpoint with wrong / correct size header") and the dav app's
//! `Upload/` classes: chunks are assembled in the natural order of their
//! names (`AssemblyStream`, `strnatcmp`), `OC-Total-Length` on the MOVE must
//! match their sum (`ChunkingPlugin::verifySize`, 400), an existing
//! destination is replaced in place (204, same file id), chunks cannot be
//! read back (`ChunkingV2Plugin::beforeGet`, 405), and the upload folder is
//! gone once assembled.

use super::webdav::{eq_fileid, fileid_of, propfind_body, search};
use nextcloud_contract::{Account, Target, header};
use xml_tree::DAV;

/// One upload folder of `account`, for a file at `destination` (a path in
/// their files).
struct Upload<'a> {
    target: &'a Target,
    account: Account,
    folder: String,
    destination: String,
}

impl<'a> Upload<'a> {
    /// MKCOL of a new upload folder, with the `Destination` header as
    /// chunking v2 clients send it.
    async fn start(target: &'a Target, account: &Account, destination: &str) -> Upload<'a> {
        let upload = Upload::named(target, account, &target.unique("chunking"), destination);
        let created = upload.send(account, "MKCOL", "", &upload.with_destination(&[]), None).await;
        assert_eq!(created.status(), 201, "MKCOL of an upload folder is 201");
        upload
    }

    fn named(target: &'a Target, account: &Account, id: &str, destination: &str) -> Upload<'a> {
        let folder = format!("/remote.php/dav/uploads/{}/{id}", account.uid);
        Upload { target, account: account.clone(), folder, destination: destination.to_string() }
    }

    /// The absolute URL of the destination, as clients write `Destination`.
    fn destination_url(&self) -> String {
        self.target.url(&self.target.files_path(&self.account, &self.destination))
    }

    fn with_destination(&self, headers: &[(&'static str, String)]) -> Vec<(&'static str, String)> {
        let mut all = vec![("Destination", self.destination_url())];
        all.extend_from_slice(headers);
        all
    }

    /// `method` on `name` inside the upload folder ("" for the folder) as
    /// `account`.
    async fn send(
        &self,
        account: &Account,
        method: &str,
        name: &str,
        headers: &[(&'static str, String)],
        body: Option<&str>,
    ) -> reqwest::Response {
        let path =
            if name.is_empty() { self.folder.clone() } else { format!("{}/{name}", self.folder) };
        let mut request = self.target.as_account(account, method, &path);
        for (header, value) in headers {
            request = request.header(*header, value);
        }
        if let Some(body) = body {
            request = request.body(body.to_string());
        }
        request.send().await.unwrap_or_else(|error| panic!("{method} {path}: {error}"))
    }

    /// PUT of one chunk, with the headers a v2 client sends along.
    async fn chunk(&self, name: &str, content: &str, total: usize) -> u16 {
        let headers = self.with_destination(&[("OC-Total-Length", total.to_string())]);
        self.send(&self.account, "PUT", name, &headers, Some(content)).await.status().as_u16()
    }

    /// MOVE of `.file` onto the destination with `headers` added.
    async fn assemble(&self, headers: &[(&'static str, String)]) -> reqwest::Response {
        self.send(&self.account, "MOVE", ".file", &self.with_destination(headers), None).await
    }

    /// The status of a Depth-1 PROPFIND of the upload folder.
    async fn folder_status(&self, account: &Account) -> u16 {
        let (status, _) =
            self.target.propfind(account, &self.folder, "1", &propfind_body("")).await;
        status
    }
}

/// A scratch folder in alice's files that the test removes afterwards.
async fn scratch(target: &Target, stem: &str) -> (Account, String) {
    let alice = target.alice().clone();
    let folder = target.scratch_folder(&alice, stem).await;
    (alice, folder)
}

async fn download(target: &Target, account: &Account, path: &str) -> (u16, String) {
    target.get_text(account, &target.files_path(account, path)).await
}

/// The etag an assembling MOVE answers, where the desktop client looks for
/// it (`OC-ETag`, else `ETag`).
fn answered_etag(response: &reqwest::Response) -> String {
    let oc_etag = header(response, "oc-etag");
    if oc_etag.is_empty() { header(response, "etag") } else { oc_etag }
}

#[tokio::test]
async fn chunks_sent_in_any_order_assemble_in_the_natural_order_of_their_names() {
    let target = Target::get().await;
    let (alice, folder) = scratch(&target, "chunked").await;
    let destination = format!("{folder}/assembled.txt");
    let upload = Upload::start(&target, &alice, &destination).await;
    // "10" after "2": by number, as strnatcmp orders them, not by text.
    for (name, content) in [("10", "CCCCC"), ("2", "BBBBB"), ("1", "AAAAA")] {
        assert_eq!(upload.chunk(name, content, 15).await, 201, "PUT of chunk {name}");
    }

    let (status, listing) = target.propfind(&alice, &upload.folder, "1", &propfind_body("")).await;
    assert_eq!(status, 207, "the upload folder lists its chunks");
    let listing = listing.unwrap();
    for name in ["/1", "/2", "/10"] {
        let chunk = listing.find(name).unwrap_or_else(|| panic!("chunk {name} is listed"));
        assert_eq!(chunk.text(DAV, "getcontentlength").as_deref(), Some("5"));
    }
    let future = listing.find("/.file").expect("the folder lists the future .file");
    assert_eq!(future.text(DAV, "getcontentlength").as_deref(), Some("15"), "the chunks' sum");

    let read_back = upload.send(&alice, "GET", "1", &[], None).await;
    assert_eq!(read_back.status(), 405, "chunks cannot be downloaded");

    let moved = upload.assemble(&[("OC-Total-Length", "15".to_string())]).await;
    assert_eq!(moved.status(), 201, "assembling a new file is 201 Created");
    let oc_fileid = header(&moved, "oc-fileid");
    assert!(!oc_fileid.is_empty(), "the MOVE answers OC-FileId (the desktop client needs it)");
    let etag = answered_etag(&moved);
    assert!(etag.starts_with('"') && etag.len() > 2, "the MOVE answers a quoted ETag: {etag:?}");

    assert_eq!(
        download(&target, &alice, &destination).await,
        (200, "AAAAABBBBBCCCCC".to_string()),
        "the file is the chunks in the order of their names"
    );
    let (status, file) = target
        .propfind(&alice, &target.files_path(&alice, &destination), "0", &propfind_body(""))
        .await;
    assert_eq!(status, 207);
    let file = &file.unwrap().responses[0];
    let fileid: u64 = file.text(xml_tree::OC, "fileid").unwrap().parse().unwrap();
    assert_eq!(fileid, fileid_of(&oc_fileid), "OC-FileId names the assembled file");
    assert_eq!(file.text(DAV, "getetag"), Some(etag), "the answered ETag is the file's");
    assert!(file.text(DAV, "getcontenttype").is_some_and(|kind| kind.starts_with("text/plain")));
    let (status, found) = search(&target, &alice, &folder, &eq_fileid(fileid), "", None).await;
    assert_eq!(status, 207);
    assert_eq!(found.unwrap().responses.len(), 1, "SEARCH finds the assembled file by its id");

    assert_eq!(upload.folder_status(&alice).await, 404, "the upload folder is gone");
    target.cleanup(&alice, &folder).await;
}

#[tokio::test]
async fn assembling_onto_an_existing_file_replaces_it_in_place() {
    let target = Target::get().await;
    let (alice, folder) = scratch(&target, "chunked-overwrite").await;
    let destination = format!("{folder}/existing.txt");
    let put = target.put_file(&alice, &destination, "the old content").await;
    assert_eq!(put.status(), 201);
    let original_id = header(&put, "oc-fileid");

    let upload = Upload::start(&target, &alice, &destination).await;
    assert_eq!(upload.chunk("1", "new ", 11).await, 201);
    assert_eq!(upload.chunk("2", "content", 11).await, 201);
    let moved = upload.assemble(&[("X-OC-MTime", "1700000000".to_string())]).await;
    assert_eq!(moved.status(), 204, "replacing a file is 204 No Content");
    assert_eq!(header(&moved, "oc-fileid"), original_id, "the file keeps its id");
    assert_eq!(header(&moved, "x-oc-mtime"), "accepted", "X-OC-MTime is honoured as on PUT");

    assert_eq!(download(&target, &alice, &destination).await, (200, "new content".to_string()));
    let (_, file) = target
        .propfind(&alice, &target.files_path(&alice, &destination), "0", &propfind_body(""))
        .await;
    let modified = file.unwrap().responses[0].text(DAV, "getlastmodified").unwrap();
    assert_eq!(modified, "Tue, 14 Nov 2023 22:13:20 GMT");
    target.cleanup(&alice, &folder).await;
}

#[tokio::test]
async fn a_total_length_that_does_not_match_is_400_and_keeps_the_upload() {
    let target = Target::get().await;
    let (alice, folder) = scratch(&target, "chunked-size").await;
    let destination = format!("{folder}/sized.txt");
    let upload = Upload::start(&target, &alice, &destination).await;
    for (name, content) in [("1", "AAAAA"), ("2", "BBBBB"), ("3", "CCCCC")] {
        assert_eq!(upload.chunk(name, content, 15).await, 201);
    }
    let wrong = upload.assemble(&[("OC-Total-Length", "5".to_string())]).await;
    assert_eq!(wrong.status(), 400, "chunks that do not sum up to OC-Total-Length");
    assert_eq!(download(&target, &alice, &destination).await.0, 404, "nothing was written");
    assert_eq!(upload.folder_status(&alice).await, 207, "the upload can still be finished");

    let right = upload.assemble(&[("OC-Total-Length", "15".to_string())]).await;
    assert_eq!(right.status(), 201);
    assert_eq!(download(&target, &alice, &destination).await.1, "AAAAABBBBBCCCCC");
    target.cleanup(&alice, &folder).await;
}

#[tokio::test]
async fn deleting_the_upload_folder_aborts_the_upload() {
    let target = Target::get().await;
    let (alice, folder) = scratch(&target, "chunked-abort").await;
    let destination = format!("{folder}/aborted.txt");
    let upload = Upload::start(&target, &alice, &destination).await;
    assert_eq!(upload.chunk("1", "AAAAA", 10).await, 201);
    let deleted = upload.send(&alice, "DELETE", "", &[], None).await;
    assert_eq!(deleted.status(), 204, "DELETE of the upload folder");
    assert_eq!(upload.folder_status(&alice).await, 404);
    let moved = upload.assemble(&[]).await;
    assert_eq!(moved.status(), 404, "an aborted upload cannot be assembled");
    assert_eq!(download(&target, &alice, &destination).await.0, 404);
    target.cleanup(&alice, &folder).await;
}

#[tokio::test]
async fn another_users_upload_folder_is_out_of_reach() {
    let target = Target::get().await;
    let (alice, folder) = scratch(&target, "chunked-private").await;
    let bob = target.bob().clone();
    let destination = format!("{folder}/alices.txt");
    let upload = Upload::start(&target, &alice, &destination).await;
    assert_eq!(upload.chunk("1", "alice's", 7).await, 201);

    assert_eq!(upload.folder_status(&bob).await, 404, "bob cannot list alice's upload");
    let intruding = upload.send(&bob, "PUT", "2", &[], Some(" and bob's")).await;
    assert!(
        intruding.status().is_client_error(),
        "bob cannot add a chunk to alice's upload: {}",
        intruding.status()
    );
    let bobs_copy = target.unique("stolen");
    let bobs_destination = target.url(&target.files_path(&bob, &bobs_copy));
    let stolen =
        upload.send(&bob, "MOVE", ".file", &[("Destination", bobs_destination)], None).await;
    assert!(
        stolen.status().is_client_error(),
        "bob cannot assemble alice's upload: {}",
        stolen.status()
    );
    assert_eq!(download(&target, &bob, &bobs_copy).await.0, 404, "nothing landed in bob's files");

    assert_eq!(upload.assemble(&[]).await.status(), 201);
    assert_eq!(download(&target, &alice, &destination).await.1, "alice's", "only her chunk");
    target.cleanup(&alice, &folder).await;
}
