//! Chunked uploads (`/remote.php/dav/uploads/{uid}/`) as ordinary writes:
//! into a share they need the share's create permission, they fire the
//! webhook events a PUT fires, and what a user may keep unfinished is
//! bounded. (What a real Nextcloud must do too is in the contract suite,
//! `nextcloud-contract/tests/contract/chunked_upload.rs`.)

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::{Running, small_people, start};
use reqwest::Method;
use serde_json::Value;

const CREATED: &str = "OCP\\Files\\Events\\Node\\NodeCreatedEvent";
const WRITTEN: &str = "OCP\\Files\\Events\\Node\\NodeWrittenEvent";

/// Alice shares "Drop" with bob to write in (read + create), and "Look" to
/// read only.
const SHARED: &str = concat!(
    small_people!(),
    r##"
[[folders]]
owner = "alice"
path = "Drop"

[[files]]
owner = "alice"
path = "Look/readme.txt"
content = "read only\n"

[[shares]]
owner = "alice"
path = "Drop"
share_with = "bob"
permissions = 5

[[shares]]
owner = "alice"
path = "Look"
share_with = "bob"
permissions = 1
"##
);

fn upload_folder(uid: &str, id: &str) -> String {
    format!("/remote.php/dav/uploads/{uid}/{id}")
}

/// Alice's upload folder `id`, made and holding one chunk, each step
/// checked to be a 201.
async fn alices_upload_with_one_chunk(running: &Running, id: &str) -> String {
    let folder = upload_folder("alice", id);
    assert_eq!(running.as_user("MKCOL", "alice", &folder).send().await.unwrap().status(), 201);
    let put = running.as_user("PUT", "alice", &format!("{folder}/1")).body("x").send().await;
    assert_eq!(put.unwrap().status(), 201);
    folder
}

/// MKCOL, the chunks in the order given, and the MOVE of `.file` to
/// `destination` (a path in `uid`'s files); the MOVE's answer.
async fn chunked_upload(
    running: &Running,
    uid: &str,
    id: &str,
    chunks: &[(&str, &str)],
    destination: &str,
) -> reqwest::Response {
    let folder = upload_folder(uid, id);
    let created = running.as_user("MKCOL", uid, &folder).send().await.unwrap();
    assert_eq!(created.status(), 201, "MKCOL {folder}");
    for (name, content) in chunks {
        let put = running
            .as_user("PUT", uid, &format!("{folder}/{name}"))
            .body(content.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(put.status(), 201, "PUT of chunk {name}");
    }
    let url = running.url(&format!("/remote.php/dav/files/{uid}/{destination}"));
    let moved = running.as_user("MOVE", uid, &format!("{folder}/.file")).header("Destination", url);
    moved.send().await.unwrap()
}

async fn get(running: &Running, uid: &str, path: &str) -> (u16, String) {
    let url = format!("/remote.php/dav/files/{uid}/{path}");
    let response = running.as_user("GET", uid, &url).send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

async fn folder_status(running: &Running, uid: &str, id: &str) -> u16 {
    let propfind = running.as_user("PROPFIND", uid, &upload_folder(uid, id)).header("Depth", "1");
    propfind.send().await.unwrap().status().as_u16()
}

#[tokio::test]
async fn into_a_share_the_assembled_file_needs_the_shares_create_permission() {
    let running = start(SHARED).await;
    let moved =
        chunked_upload(&running, "bob", "drop", &[("1", "from "), ("2", "bob")], "Drop/big.txt")
            .await;
    assert_eq!(moved.status(), 201, "bob may create in a folder shared with create permission");
    assert_eq!(get(&running, "alice", "Drop/big.txt").await, (200, "from bob".to_string()));

    let refused = chunked_upload(&running, "bob", "look", &[("1", "nope")], "Look/big.txt").await;
    assert_eq!(refused.status(), 403, "a read-only share takes no new file");
    assert_eq!(get(&running, "alice", "Look/big.txt").await.0, 404);
    assert_eq!(folder_status(&running, "bob", "look").await, 207, "the refused upload is kept");
}

#[tokio::test]
async fn the_destination_must_be_in_the_callers_own_files() {
    let running = start(SHARED).await;
    let folder = alices_upload_with_one_chunk(&running, "where").await;
    let move_to = |destination: String| {
        let request = running.as_user("MOVE", "alice", &format!("{folder}/.file"));
        request.header("Destination", destination).send()
    };
    let legacy = move_to(running.url("/remote.php/webdav/x.txt")).await.unwrap();
    assert_eq!(legacy.status(), 403, "outside /remote.php/dav/ is out of sabre's base");
    let bobs = move_to(running.url("/remote.php/dav/files/bob/x.txt")).await.unwrap();
    assert_eq!(bobs.status(), 409, "bob's files are no folder alice can write to");
    let missing_parent =
        move_to(running.url("/remote.php/dav/files/alice/no/x.txt")).await.unwrap();
    assert_eq!(missing_parent.status(), 409);
    let without = running.as_user("MOVE", "alice", &format!("{folder}/.file")).send().await;
    assert_eq!(without.unwrap().status(), 400, "no Destination header");
    assert_eq!(folder_status(&running, "alice", "where").await, 207, "nothing was assembled");
}

/// A receiver that answers 200 to anything.
async fn receiver() -> String {
    let app = axum::Router::new().fallback(|| async { http::StatusCode::OK });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// `(event class, node path)` of every call the flush delivered.
async fn flushed(running: &Running) -> Vec<(String, String)> {
    let flushed: Value = running.admin_json(Method::POST, "/__fake/webhooks/flush", None).await;
    flushed["delivered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|record| {
            let class = record["event"].as_str().unwrap().to_string();
            let path = record["payload"]["event"]["node"]["path"].as_str().unwrap().to_string();
            (class, path)
        })
        .collect()
}

#[tokio::test]
async fn the_assembly_fires_the_events_of_a_put() {
    let hook = receiver().await;
    let fixture = format!(
        "{SHARED}\n[webhooks]\ndelivery = \"on_demand\"\n\
         [[webhooks.registrations]]\nevent = '{CREATED}'\nuri = \"{hook}\"\n\
         [[webhooks.registrations]]\nevent = '{WRITTEN}'\nuri = \"{hook}\"\n"
    );
    let running = start(&fixture).await;
    let put = running.as_user("PUT", "alice", "/remote.php/dav/files/alice/put.txt").body("x");
    assert_eq!(put.send().await.unwrap().status(), 201);
    let by_put = flushed(&running).await;
    assert_eq!(
        by_put,
        [
            (CREATED.to_string(), "/alice/files/put.txt".to_string()),
            (WRITTEN.to_string(), "/alice/files/put.txt".to_string()),
        ]
    );

    let moved =
        chunked_upload(&running, "alice", "hooks", &[("1", "a"), ("2", "b")], "chunked.txt").await;
    assert_eq!(moved.status(), 201);
    let by_upload = flushed(&running).await;
    let renamed: Vec<(String, String)> = by_put
        .iter()
        .map(|(class, path)| (class.clone(), path.replace("put.txt", "chunked.txt")))
        .collect();
    assert_eq!(by_upload, renamed, "the same events as a PUT of a new file, nothing for chunks");

    let again = chunked_upload(&running, "alice", "again", &[("1", "c")], "chunked.txt").await;
    assert_eq!(again.status(), 204);
    assert_eq!(
        flushed(&running).await,
        [(WRITTEN.to_string(), "/alice/files/chunked.txt".to_string())],
        "replacing a file is a write, as a PUT over it"
    );
}

#[tokio::test]
async fn unfinished_uploads_are_bounded_per_user() {
    let running = start(SHARED).await;
    let folder = upload_folder("alice", "huge");
    assert_eq!(running.as_user("MKCOL", "alice", &folder).send().await.unwrap().status(), 201);
    let announced = (fake_nextcloud::files::uploads::PENDING_BYTES_MAX + 1).to_string();
    let put = running
        .as_user("PUT", "alice", &format!("{folder}/1"))
        .header("OC-Total-Length", announced)
        .body("first chunk of a file too large to keep")
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 507, "an announced total past the bound is refused up front");
    let body = put.text().await.unwrap();
    assert!(body.contains("InsufficientStorage") && body.contains("512 MiB"), "{body}");
    let chunk = running.as_user("GET", "alice", &format!("{folder}/1")).send().await.unwrap();
    assert_eq!(chunk.status(), 404, "the refused chunk was not kept");
}

/// The hrefs of a PROPFIND's answer.
async fn hrefs(running: &Running, uid: &str, path: &str, depth: &str) -> Vec<String> {
    let propfind = running.as_user("PROPFIND", uid, path).header("Depth", depth);
    let response = propfind.send().await.unwrap();
    assert_eq!(response.status(), 207, "PROPFIND {path}");
    let body = response.text().await.unwrap();
    body.split("<d:href>")
        .skip(1)
        .map(|rest| rest.split("</d:href>").next().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn the_upload_home_lists_the_callers_uploads_level_by_level() {
    let running = start(SHARED).await;
    alices_upload_with_one_chunk(&running, "listed").await;
    let bobs = upload_folder("bob", "his");
    assert_eq!(running.as_user("MKCOL", "bob", &bobs).send().await.unwrap().status(), 201);

    let home = "/remote.php/dav/uploads/alice/";
    assert_eq!(hrefs(&running, "alice", home, "0").await, [home]);
    assert_eq!(
        hrefs(&running, "alice", home, "1").await,
        [home, "/remote.php/dav/uploads/alice/listed/"]
    );
    assert_eq!(
        hrefs(&running, "alice", home, "2").await,
        [
            home,
            "/remote.php/dav/uploads/alice/listed/",
            "/remote.php/dav/uploads/alice/listed/.file",
            "/remote.php/dav/uploads/alice/listed/1",
        ]
    );
    let root = "/remote.php/dav/uploads/";
    assert_eq!(hrefs(&running, "alice", root, "1").await, [root, home], "only her own home");
}
