//! webhook_listeners: registration through OCS (admin only) and the payload
//! delivered for a file write, as Nextcloud's admin manual documents it:
//! `{"user": {"uid", "displayName"}, "time", "event": {"class", "node":
//! {"id", "path": "/{uid}/files/…"}}}`. The suite starts its own receiver
//! and registers it, on the fake and on a real server alike.

use nextcloud_contract::{Target, ocs_json, require_app};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const ROUTE: &str = "/ocs/v2.php/apps/webhook_listeners/api/v1/webhooks";
const NODE_WRITTEN: &str = "OCP\\Files\\Events\\Node\\NodeWrittenEvent";

/// The header mcp-nextcloud registers its secret in (`authMethod: header`).
const SECRET_HEADER: &str = "X-Tamebi-Contract-Secret";

type Delivery = (Option<String>, Value);

/// A local HTTP receiver; every body posted to it arrives on the channel
/// with the secret header's value.
async fn receiver(target: &Target) -> (String, tokio::sync::mpsc::UnboundedReceiver<Delivery>) {
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
            let sender = sender.clone();
            async move {
                let value = serde_json::from_slice(&body)
                    .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
                let secret = headers
                    .get(SECRET_HEADER)
                    .and_then(|value| value.to_str().ok())
                    .map(str::to_string);
                let _ = sender.send((secret, value));
                axum::http::StatusCode::OK
            }
        }),
    );
    let bind = if target.receiver_host == "127.0.0.1" { "127.0.0.1:0" } else { "0.0.0.0:0" };
    let listener = tokio::net::TcpListener::bind(bind).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{}:{port}/hook", target.receiver_host), receiver)
}

#[tokio::test]
async fn registration_is_admin_only_and_a_file_write_is_delivered() {
    let target = Target::get().await;
    let (admin, alice) = (target.admin.clone(), target.alice().clone());
    let (uri, mut deliveries) = receiver(&target).await;

    // Not an admin: refused.
    let secret = format!("{:032x}", rand::random::<u128>());
    let body = json!({
        "httpMethod": "POST",
        "uri": uri,
        "event": NODE_WRITTEN,
        "eventFilter": {"user.uid": alice.uid},
        "authMethod": "header",
        "authData": {SECRET_HEADER: secret},
    });
    let response = target.ocs_post_json(&alice, &format!("{ROUTE}?format=json"), &body).await;
    let status = response.status().as_u16();
    require_app(status, "webhook_listeners", ROUTE);
    assert_eq!(status, 403, "registration needs an administrator");

    let response = target.ocs_post_json(&admin, &format!("{ROUTE}?format=json"), &body).await;
    let (status, registered) = ocs_json(response).await;
    assert_eq!(status, 200, "{registered}");
    let registration = &registered["ocs"]["data"];
    let id = registration["id"].as_u64().expect("a numeric registration id");
    assert_eq!(registration["uri"].as_str(), Some(uri.as_str()));
    assert_eq!(registration["event"], NODE_WRITTEN);
    assert_eq!(registration["httpMethod"], "POST");

    let (status, listed) = target.ocs_call(&admin, "GET", &format!("{ROUTE}?format=json")).await;
    assert_eq!(status, 200);
    assert!(
        listed["ocs"]["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|item| item["id"].as_u64() == Some(id)),
        "the registration is listed"
    );
    // Listing by uri, as `tamebi webhooks register` does before updating.
    let by_uri = url::form_urlencoded::byte_serialize(uri.as_bytes()).collect::<String>();
    let (status, listed) =
        target.ocs_call(&admin, "GET", &format!("{ROUTE}?format=json&uri={by_uri}")).await;
    assert_eq!(status, 200);
    let ids: Vec<u64> = listed["ocs"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|item| item["id"].as_u64())
        .collect();
    assert_eq!(ids, [id], "only the registrations for that uri");
    // Updating is a POST to the registration (WebhooksController::update).
    let response = target.ocs_post_json(&admin, &format!("{ROUTE}/{id}?format=json"), &body).await;
    let (status, updated) = ocs_json(response).await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!(updated["ocs"]["data"]["id"].as_u64(), Some(id), "an update keeps the id");

    let folder = target.unique("hook");
    assert_eq!(target.mkcol(&alice, &folder).await, 201);
    let path = format!("{folder}/written.txt");
    let put = target.put_file(&alice, &path, "webhook me").await;
    assert_eq!(put.status(), 201);
    let oc_fileid = nextcloud_contract::header(&put, "oc-fileid");
    let fileid: u64 =
        oc_fileid.chars().take_while(char::is_ascii_digit).collect::<String>().parse().unwrap();

    let expected_path = format!("/{}/files/{path}", alice.uid);
    let deadline = Instant::now() + target.webhook_wait;
    let mut seen = Vec::new();
    let payload = loop {
        if !target.is_fake() {
            // Nextcloud dispatches webhooks from background jobs; nudge them
            // (this works in the "webcron" and "ajax" modes; with system cron
            // the jobs run on their own).
            let _ = target.anonymous("GET", "/cron.php").send().await;
        }
        match tokio::time::timeout(Duration::from_secs(2), deliveries.recv()).await {
            Ok(Some((header, payload))) => {
                if payload["event"]["node"]["path"].as_str() == Some(expected_path.as_str()) {
                    assert_eq!(header.as_deref(), Some(secret.as_str()), "authData as a header");
                    break payload;
                }
                seen.push(payload);
            }
            Ok(None) => panic!("the receiver stopped"),
            Err(_) if Instant::now() > deadline => panic!(
                "no NodeWrittenEvent for {expected_path} within {:?} (background jobs must run); \
                 other deliveries: {seen:?}",
                target.webhook_wait
            ),
            Err(_) => {}
        }
    };
    assert_eq!(payload["event"]["class"], NODE_WRITTEN);
    let node_id = match &payload["event"]["node"]["id"] {
        Value::Number(id) => id.as_u64(),
        Value::String(id) => id.parse().ok(),
        _ => None,
    };
    assert_eq!(node_id, Some(fileid), "the node id is the file id: {payload}");
    assert_eq!(payload["user"]["uid"].as_str(), Some(alice.uid.as_str()));
    assert!(payload["user"]["displayName"].is_string(), "{payload}");
    assert!(payload["time"].as_i64().is_some_and(|time| time > 1_700_000_000), "{payload}");
    let text = payload.to_string();
    assert!(!text.contains(alice.basic_secret()), "no credential in the payload");
    assert!(!text.contains(&secret), "the secret travels as a header only");

    let (status, deleted) =
        target.ocs_call(&admin, "DELETE", &format!("{ROUTE}/{id}?format=json")).await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(deleted["ocs"]["data"], true);
    target.cleanup(&alice, &folder).await;
}
