//! webhook_listeners over real sockets: registration through OCS (admins
//! only), delivery to a real receiver with Nextcloud's payload and the
//! registered auth header, filters, on-demand flushing and bounded retries.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::{Running, SMALL, start};
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

const CREATED: &str = "OCP\\Files\\Events\\Node\\NodeCreatedEvent";
const RENAMED: &str = "OCP\\Files\\Events\\Node\\NodeRenamedEvent";
const WEBHOOKS: &str = "/ocs/v2.php/apps/webhook_listeners/api/v1/webhooks";

fn with_admin(fixture: &str) -> String {
    format!(
        "{fixture}\n[[users]]\nuid = \"admin\"\npassword = \"admin-pw\"\ngroups = [\"admin\"]\n"
    )
}

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Received {
    method: String,
    headers: http::HeaderMap,
    body: Value,
}

/// A webhook receiver on loopback that answers `status` and records calls.
struct Receiver {
    url: String,
    received: Arc<Mutex<Vec<Received>>>,
}

async fn receiver(status: u16) -> Receiver {
    let received: Arc<Mutex<Vec<Received>>> = Arc::default();
    let sink = received.clone();
    let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
        let sink = sink.clone();
        async move {
            let (parts, body) = request.into_parts();
            let body = axum::body::to_bytes(body, 1 << 20).await.unwrap();
            sink.lock().unwrap().push(Received {
                method: parts.method.to_string(),
                headers: parts.headers,
                body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            });
            http::StatusCode::from_u16(status).unwrap()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Receiver { url, received }
}

impl Receiver {
    /// Waits (bounded) until `count` calls arrived; returns them.
    async fn wait_for(&self, count: usize) -> Vec<Received> {
        for _ in 0..100 {
            if self.received.lock().unwrap().len() >= count {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        self.received.lock().unwrap().clone()
    }
}

/// Writes a file as `uid` through the storage and hands the events to the
/// webhook queue exactly as the DAV layer does after each request.
fn write_file(running: &Running, uid: &str, path: &str) {
    let shared = &running.fake.shared;
    let now = shared.now();
    let mut world = shared.world();
    let user = world.user(uid).unwrap().clone();
    world.storage.put(user.viewer(), path, b"hello".to_vec(), now).unwrap();
    world.flush_file_events();
    if world.webhooks.has_pending() {
        shared.webhook_wakeup.notify_one();
    }
}

fn rename_file(running: &Running, uid: &str, from: &str, to: &str) {
    let shared = &running.fake.shared;
    let now = shared.now();
    let mut world = shared.world();
    let user = world.user(uid).unwrap().clone();
    world.storage.rename(user.viewer(), from, to, false, now).unwrap();
    world.flush_file_events();
    shared.webhook_wakeup.notify_one();
}

async fn register(running: &Running, uid: &str, body: Value) -> (u16, Value) {
    let response = running
        .ocs("POST", uid, &format!("{WEBHOOKS}?format=json"))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

#[tokio::test]
async fn only_admins_register_and_the_api_lists_shows_and_deletes() {
    let running = start(&with_admin(SMALL)).await;
    let body = json!({"httpMethod": "POST", "uri": "http://127.0.0.1:9/hook", "event": CREATED});
    let (status, answer) = register(&running, "alice", body.clone()).await;
    assert_eq!(status, 403);
    assert_eq!(answer["ocs"]["meta"]["message"], "Logged in account must be an admin");

    let (status, answer) = register(&running, "admin", body).await;
    assert_eq!(status, 200, "{answer}");
    let registration = &answer["ocs"]["data"];
    assert_eq!(registration["userId"], "admin");
    assert_eq!(registration["event"], CREATED);
    assert_eq!(registration["authMethod"], "none");
    assert_eq!(registration["eventFilter"], json!([]));
    let id = registration["id"].as_u64().unwrap();

    let get = |path: String| running.ocs("GET", "admin", &path).send();
    let list: Value = get(format!("{WEBHOOKS}?format=json")).await.unwrap().json().await.unwrap();
    assert_eq!(list["ocs"]["data"].as_array().unwrap().len(), 1);
    let list: Value = get(format!("{WEBHOOKS}?format=json&uri=http://elsewhere/"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["ocs"]["data"], json!([]));
    let one = get(format!("{WEBHOOKS}/{id}?format=json")).await.unwrap();
    assert_eq!(one.status(), 200);
    assert_eq!(get(format!("{WEBHOOKS}/999?format=json")).await.unwrap().status(), 404);

    let delete =
        |id: u64| running.ocs("DELETE", "admin", &format!("{WEBHOOKS}/{id}?format=json")).send();
    let deleted: Value = delete(id).await.unwrap().json().await.unwrap();
    assert_eq!(deleted["ocs"]["data"], true);
    let deleted: Value = delete(id).await.unwrap().json().await.unwrap();
    assert_eq!(deleted["ocs"]["data"], false);
}

#[tokio::test]
async fn registration_errors_are_400() {
    let running = start(&with_admin(SMALL)).await;
    let cases = [
        (
            json!({"httpMethod": "POST", "uri": "http://x/", "event": "OCP\\Nope"}),
            "OCP\\Nope is not an event class compatible with webhooks",
        ),
        (
            json!({"httpMethod": "POST", "uri": "http://x/", "event": CREATED, "authMethod": "magic"}),
            "This auth method does not exist",
        ),
        (
            json!({"httpMethod": "POST", "uri": "http://x/", "event": CREATED, "authMethod": "header"}),
            "Header auth method needs an associative array of headers as auth data",
        ),
        (json!({"uri": "http://x/", "event": CREATED}), "Missing parameter httpMethod"),
        (
            json!({"httpMethod": "POST", "uri": "ftp://x/", "event": CREATED}),
            "The URI must be an absolute http or https URL",
        ),
    ];
    for (body, message) in cases {
        let (status, answer) = register(&running, "admin", body.clone()).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(answer["ocs"]["meta"]["message"], message, "{body}");
    }
    let response =
        running.as_user("POST", "admin", WEBHOOKS).json(&json!({})).send().await.unwrap();
    assert_eq!(response.status(), 412, "no OCS-APIRequest header");
}

#[tokio::test]
async fn file_events_are_delivered_with_nextcloud_payload_and_auth_header() {
    let running = start(&with_admin(SMALL)).await;
    let hook = receiver(200).await;
    let (status, answer) = register(
        &running,
        "admin",
        json!({
            "httpMethod": "POST",
            "uri": hook.url,
            "event": CREATED,
            "headers": {"X-Extra": "yes"},
            "authMethod": "header",
            "authData": {"Authorization": "Bearer hook-secret"},
        }),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["ocs"]["data"]["authData"], Value::Null, "auth data is never echoed");

    write_file(&running, "alice", "Documents/new.md");
    let received = hook.wait_for(1).await;
    assert_eq!(received.len(), 1);
    let call = &received[0];
    assert_eq!(call.method, "POST");
    assert_eq!(call.headers["authorization"], "Bearer hook-secret");
    assert_eq!(call.headers["x-extra"], "yes");
    assert!(
        call.headers.get("content-type").is_none(),
        "Guzzle's body option sets no Content-Type"
    );
    assert_eq!(call.body["event"]["class"], CREATED);
    assert_eq!(call.body["event"]["node"]["path"], "/alice/files/Documents/new.md");
    assert!(call.body["event"]["node"]["id"].as_u64().unwrap() > 0);
    assert_eq!(call.body["user"], json!({"uid": "alice", "displayName": "Alice Martin"}));
    assert!(call.body["time"].as_i64().unwrap() > 1_700_000_000);
    assert!(
        !call.body.to_string().to_lowercase().contains("token"),
        "the payload never carries a token"
    );

    write_file(&running, "alice", "Documents/new.md");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(
        hook.received.lock().unwrap().len(),
        1,
        "an overwrite is NodeWrittenEvent, not registered"
    );

    let deliveries: Value =
        running.admin_json(Method::GET, "/__fake/webhooks/deliveries", None).await;
    assert_eq!(deliveries["deliveries"][0]["status"], 200);
    assert_eq!(deliveries["deliveries"][0]["attempts"], 1);
    assert_eq!(deliveries["deliveries"][0]["delivered"], true);
}

#[tokio::test]
async fn renames_carry_source_and_target() {
    let running = start(&with_admin(SMALL)).await;
    let hook = receiver(200).await;
    register(&running, "admin", json!({"httpMethod": "POST", "uri": hook.url, "event": RENAMED}))
        .await;
    rename_file(&running, "alice", "Documents/notes.md", "Documents/renamed.md");
    let received = hook.wait_for(1).await;
    let event = &received[0].body["event"];
    assert_eq!(event["source"]["path"], "/alice/files/Documents/notes.md");
    assert_eq!(event["target"]["path"], "/alice/files/Documents/renamed.md");
    assert_eq!(event["source"]["id"], event["target"]["id"]);
    assert!(event.get("node").is_none());
}

#[tokio::test]
async fn event_and_user_filters_select_events() {
    let running = start(&with_admin(SMALL)).await;
    let documents_only = receiver(200).await;
    let bob_only = receiver(200).await;
    register(
        &running,
        "admin",
        json!({"httpMethod": "POST", "uri": documents_only.url, "event": CREATED,
               "eventFilter": {"event.node.path": "/^\\/alice\\/files\\/Documents\\//"}}),
    )
    .await;
    register(
        &running,
        "admin",
        json!({"httpMethod": "POST", "uri": bob_only.url, "event": CREATED, "userIdFilter": "bob"}),
    )
    .await;
    write_file(&running, "alice", "Elsewhere.md");
    write_file(&running, "alice", "Documents/yes.md");
    write_file(&running, "bob", "Work/bob.md");
    let documents = documents_only.wait_for(1).await;
    let bobs = bob_only.wait_for(1).await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(documents_only.received.lock().unwrap().len(), 1);
    assert_eq!(documents[0].body["event"]["node"]["path"], "/alice/files/Documents/yes.md");
    assert_eq!(bob_only.received.lock().unwrap().len(), 1);
    assert_eq!(bobs[0].body["user"]["uid"], "bob");
}

#[tokio::test]
async fn on_demand_delivery_waits_for_the_flush() {
    let hook = receiver(200).await;
    let fixture = format!(
        "{SMALL}\n[webhooks]\ndelivery = \"on_demand\"\n[[webhooks.registrations]]\nevent = '{CREATED}'\nuri = \"{}\"\nauth_header_name = \"X-Token\"\nauth_header_value = \"fixture-secret\"\n",
        hook.url
    );
    let running = start(&fixture).await;
    write_file(&running, "carol", "a.txt");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(hook.received.lock().unwrap().is_empty(), "nothing before the flush");
    let state: Value = running.admin_json(Method::GET, "/__fake/state", None).await;
    assert_eq!(state["webhook_pending"], 1);

    let flushed: Value = running.admin_json(Method::POST, "/__fake/webhooks/flush", None).await;
    assert_eq!(flushed["delivered"].as_array().unwrap().len(), 1);
    assert_eq!(flushed["delivered"][0]["event"], CREATED);
    let received = hook.wait_for(1).await;
    assert_eq!(received[0].headers["x-token"], "fixture-secret");
    assert_eq!(received[0].body["event"]["node"]["path"], "/carol/files/a.txt");
    let flushed: Value = running.admin_json(Method::POST, "/__fake/webhooks/flush", None).await;
    assert_eq!(flushed["delivered"], json!([]), "a flush delivers each call once");
}

#[tokio::test]
async fn failing_receivers_are_retried_a_bounded_number_of_times() {
    let fixture = format!("{}\n[webhooks]\ndelivery = \"on_demand\"\n", with_admin(SMALL));
    let running = start(&fixture).await;
    let broken = receiver(503).await;
    register(&running, "admin", json!({"httpMethod": "PUT", "uri": broken.url, "event": CREATED}))
        .await;
    // A port nobody listens on (bound and dropped).
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/hook", listener.local_addr().unwrap())
    };
    register(&running, "admin", json!({"httpMethod": "POST", "uri": closed, "event": CREATED}))
        .await;
    write_file(&running, "alice", "x.md");
    let flushed: Value = running.admin_json(Method::POST, "/__fake/webhooks/flush", None).await;
    let records = flushed["delivered"].as_array().unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["attempts"], 3);
    assert_eq!(records[0]["status"], 503);
    assert_eq!(records[0]["delivered"], false);
    assert_eq!(records[0]["http_method"], "PUT");
    assert_eq!(records[1]["attempts"], 3);
    assert_eq!(records[1]["status"], Value::Null);
    assert_eq!(records[1]["error"], "the receiver could not be reached");
    assert_eq!(broken.received.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn fixture_registrations_must_be_consistent() {
    let fixture =
        format!("{SMALL}\n[[webhooks.registrations]]\nevent = 'OCP\\Nope'\nuri = \"http://x/\"\n");
    let fixture = fake_nextcloud::Fixture::parse(&fixture).unwrap();
    let problems = fake_nextcloud::World::from_fixture(&fixture, 0).unwrap_err();
    assert!(
        problems.iter().any(|problem| problem.contains("not an event class compatible")),
        "{problems:?}"
    );
}

#[tokio::test]
async fn the_demo_fixture_has_an_admin_who_can_register() {
    let running = common::start_demo().await;
    let response = running
        .http
        .post(running.url(&format!("{WEBHOOKS}?format=json")))
        .basic_auth("admin", Some("admin-app-Tq4nR-8vL2k-Hx6pW-3mZcJ"))
        .header("OCS-APIRequest", "true")
        .json(&json!({"httpMethod": "POST", "uri": "http://127.0.0.1:9101/webhooks", "event": CREATED}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let response = running
        .http
        .get(running.url(&format!("{WEBHOOKS}?format=json")))
        .basic_auth("alice", Some(common::DEMO_ALICE_PASSWORD))
        .header("OCS-APIRequest", "true")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403, "alice is no admin");
    running.fake.shutdown().await;
}
