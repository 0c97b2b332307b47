//! Bulk upload on `POST /remote.php/dav/bulk`, what the desktop client
//! sends many small files with: one `multipart/related` body, each part
//! naming its file (`X-File-Path`), its bytes' MD5 (`X-File-MD5`), its
//! length and optionally its mtime (`X-OC-Mtime`). The answer is JSON, one
//! entry per path: the new ETag, file id and permissions, or an error.
//!
//! From `dav_features/dav-v2.feature` ("Upload bulked files") and the dav
//! app's BulkUploadPlugin and MultipartRequestParser.

use md5::{Digest, Md5};
use nextcloud_contract::{Account, Target};
use serde_json::Value;
use xml_tree::DAV;

const BOUNDARY: &str = "boundary_azertyuiop";

/// One part: the path, the bytes, the mtime (if any), and the digest it
/// claims (the true one unless a test says otherwise).
struct Part<'a> {
    path: String,
    content: &'a str,
    mtime: Option<i64>,
    md5: Option<&'a str>,
}

fn part(path: String, content: &str, mtime: Option<i64>) -> Part<'_> {
    Part { path, content, mtime, md5: None }
}

fn body(parts: &[Part<'_>]) -> String {
    let mut body = String::new();
    for part in parts {
        let digest: String =
            Md5::digest(part.content.as_bytes()).iter().map(|byte| format!("{byte:02x}")).collect();
        body.push_str(&format!("--{BOUNDARY}\r\nX-File-Path: {}\r\n", part.path));
        body.push_str(&format!("X-File-MD5: {}\r\n", part.md5.unwrap_or(&digest)));
        if let Some(mtime) = part.mtime {
            body.push_str(&format!("X-OC-Mtime: {mtime}\r\n"));
        }
        body.push_str(&format!(
            "Content-Length: {}\r\n\r\n{}\r\n",
            part.content.len(),
            part.content
        ));
    }
    body.push_str(&format!("--{BOUNDARY}--\r\n"));
    body
}

/// The bulk POST as `account`: the status and the JSON answer.
async fn bulk(target: &Target, account: &Account, parts: &[Part<'_>]) -> (u16, Value) {
    let response = target
        .as_account(account, "POST", "/remote.php/dav/bulk")
        .header("content-type", format!("multipart/related; boundary={BOUNDARY}"))
        .body(body(parts))
        .send()
        .await
        .expect("bulk upload");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or_else(|_| panic!("JSON answer: {text}")))
}

async fn content(target: &Target, account: &Account, path: &str) -> (u16, String) {
    target.get_text(account, &target.files_path(account, path)).await
}

/// "Upload bulked files": three files in one request, each with its own
/// mtime, each readable afterwards with the mtime it was given.
#[tokio::test]
async fn bulked_files_are_written_with_their_mtimes() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let folder = target.scratch_folder(&alice, "bulk").await;
    let files = [
        ("A.txt", "AAAAA", 1_111_111_111, "Fri, 18 Mar 2005 01:58:31 GMT"),
        ("B.txt", "BBBBB", 2_222_222_222, "Sat, 02 Jun 2040 03:57:02 GMT"),
        ("C.txt", "CCCCC", 3_333_333_333, "Sun, 18 Aug 2075 05:55:33 GMT"),
    ];
    let parts: Vec<Part<'_>> = files
        .iter()
        .map(|(name, content, mtime, _)| part(format!("/{folder}/{name}"), content, Some(*mtime)))
        .collect();
    let (status, answer) = bulk(&target, &alice, &parts).await;
    assert_eq!(status, 200, "{answer}");

    for (name, written, _, modified) in files {
        let path = format!("{folder}/{name}");
        let entry = &answer[format!("/{path}")];
        assert_eq!(entry["error"], false, "{answer}");
        assert!(entry["etag"].as_str().is_some_and(|etag| !etag.is_empty()), "{entry}");
        assert!(entry["fileid"].as_str().is_some_and(|id| id.len() > 8), "{entry}");
        assert!(entry["permissions"].as_str().is_some_and(|letters| letters.contains('G')));
        assert_eq!(content(&target, &alice, &path).await, (200, written.to_string()));
        let (_, found) = target.propfind(&alice, &target.files_path(&alice, &path), "0", "").await;
        let found = found.expect("multistatus");
        assert_eq!(found.responses[0].text(DAV, "getlastmodified").as_deref(), Some(modified));
    }
    target.cleanup(&alice, &folder).await;
}

/// A part that cannot be written (its folder does not exist) is an error
/// entry; the parts around it are written.
#[tokio::test]
async fn a_part_that_cannot_be_written_is_reported_and_the_rest_are_written() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let folder = target.scratch_folder(&alice, "bulk-partial").await;
    let missing = format!("/{folder}/no-such-folder/lost.txt");
    let parts = [
        part(format!("/{folder}/first.txt"), "one", None),
        part(missing.clone(), "lost", None),
        part(format!("/{folder}/third.txt"), "three", None),
    ];
    let (status, answer) = bulk(&target, &alice, &parts).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer[&missing]["error"], true, "{answer}");
    assert!(answer[&missing]["message"].as_str().is_some_and(|text| !text.is_empty()));
    assert_eq!(content(&target, &alice, &format!("{folder}/first.txt")).await.1, "one");
    assert_eq!(content(&target, &alice, &format!("{folder}/third.txt")).await.1, "three");
    target.cleanup(&alice, &folder).await;
}

/// A part whose bytes do not match their MD5 stops the request with 400:
/// what came before it is written and answered, nothing after it is.
#[tokio::test]
async fn a_wrong_digest_stops_the_upload_with_400() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let folder = target.scratch_folder(&alice, "bulk-digest").await;
    let (first, second, third) = (
        format!("/{folder}/first.txt"),
        format!("/{folder}/tampered.txt"),
        format!("/{folder}/after.txt"),
    );
    let parts = [
        part(first.clone(), "fine", None),
        Part { md5: Some("00000000000000000000000000000000"), ..part(second.clone(), "bad", None) },
        part(third.clone(), "never", None),
    ];
    let (status, answer) = bulk(&target, &alice, &parts).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer[&first]["error"], false, "{answer}");
    assert!(answer.get(&second).is_none() && answer.get(&third).is_none(), "{answer}");
    assert_eq!(content(&target, &alice, first.trim_start_matches('/')).await.1, "fine");
    for path in [&second, &third] {
        assert_eq!(content(&target, &alice, path.trim_start_matches('/')).await.0, 404);
    }
    target.cleanup(&alice, &folder).await;
}

/// The bulk upload writes as the caller: into a folder shared read-only
/// with bob, his part is refused, and nothing of alice's is touched.
#[tokio::test]
async fn a_read_only_share_refuses_bulked_files() {
    let target = Target::get().await;
    let (alice, bob) = (target.alice().clone(), target.bob().clone());
    let folder = target.scratch_folder(&alice, "bulk-shared").await;
    let (status, shared) =
        super::shares::share_with(&target, &alice, &folder, &bob, Some("1")).await;
    assert_eq!(status, 200, "{shared}");
    let mount =
        shared["ocs"]["data"]["file_target"].as_str().unwrap().trim_start_matches('/').to_string();
    let path = format!("/{mount}/from-bob.txt");
    let (status, answer) = bulk(&target, &bob, &[part(path.clone(), "bob was here", None)]).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer[&path]["error"], true, "{answer}");
    assert_eq!(content(&target, &alice, &format!("{folder}/from-bob.txt")).await.0, 404);
    target.cleanup(&alice, &folder).await;
}
