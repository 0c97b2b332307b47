//! The `/__fake/` admin endpoint: faults, the clock, sessions, server
//! settings and state counts, each checked by its effect on the fake.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::{SMALL, start};
use reqwest::Method;
use serde_json::{Value, json};

#[tokio::test]
async fn faults_round_trip_and_route_faults_bite() {
    let running = start(SMALL).await;
    let faults: Value = running.admin_json(Method::GET, "/__fake/faults", None).await;
    assert_eq!(faults["routes"], json!([]));
    assert_eq!(faults["converter_secret_missing"], false);

    let new_faults = json!({
        "routes": [{"prefix": "/ocs/v2.php/cloud/user", "status": 503, "remaining": 1}],
        "converter_secret_missing": true,
    });
    let response = running.admin_send(Method::PUT, "/__fake/faults", Some(new_faults)).await;
    assert_eq!(response.status(), 200);
    let faults: Value = running.admin_json(Method::GET, "/__fake/faults", None).await;
    assert_eq!(faults["converter_secret_missing"], true);
    assert_eq!(faults["routes"][0]["status"], 503);

    let user = || running.ocs("GET", "alice", "/ocs/v2.php/cloud/user?format=json").send();
    assert_eq!(user().await.unwrap().status(), 503);
    assert_eq!(user().await.unwrap().status(), 200, "remaining ran out");

    let response = running
        .admin_send(Method::PUT, "/__fake/faults", Some(json!({"no_such_fault": true})))
        .await;
    assert!(response.status().is_client_error(), "unknown faults are refused");
    let response = running
        .admin_send(
            Method::PUT,
            "/__fake/faults",
            Some(json!({"routes": [{"prefix": "/__fake/", "status": 500}]})),
        )
        .await;
    assert_eq!(response.status(), 200);
    let response = running.admin_send(Method::GET, "/__fake/faults", None).await;
    assert_eq!(response.status(), 200, "route faults never apply to the admin endpoint");
}

#[tokio::test]
async fn the_clock_advances() {
    let running = start(SMALL).await;
    let before: Value = running.admin_json(Method::GET, "/__fake/clock", None).await;
    assert_eq!(before["offset_seconds"], 0);
    let after: Value = running
        .admin_json(Method::POST, "/__fake/clock/advance", Some(json!({"seconds": 901})))
        .await;
    assert_eq!(after["offset_seconds"], 901);
    assert!(after["now"].as_i64().unwrap() >= before["now"].as_i64().unwrap() + 901);
    assert!(
        running.fake.shared.now() >= before["now"].as_i64().unwrap() + 901,
        "the fake's own clock moved"
    );
    let response = running
        .admin_send(Method::POST, "/__fake/clock/advance", Some(json!({"seconds": i64::MAX / 2})))
        .await;
    assert_eq!(response.status(), 400);
}

#[tokio::test]
async fn ending_sessions_logs_the_browser_out() {
    let running = start(SMALL).await;
    let cookies = common::cookies(&running.login("alice", "alice-pw", None).await);
    let me = || {
        running
            .http
            .get(running.url("/ocs/v2.php/cloud/user?format=json"))
            .header("Cookie", &cookies)
            .header("OCS-APIRequest", "true")
            .send()
    };
    assert_eq!(me().await.unwrap().status(), 200);
    let ended: Value = running.admin_json(Method::POST, "/__fake/sessions/alice/end", None).await;
    assert_eq!(ended["ended"], 1);
    assert_eq!(me().await.unwrap().status(), 401);
    let response = running.admin_send(Method::POST, "/__fake/sessions/nobody/end", None).await;
    assert_eq!(response.status(), 404);
}

#[tokio::test]
async fn server_settings_change_the_issuer() {
    let running = start(SMALL).await;
    assert_eq!(
        running.issuer("elsewhere:1").await,
        json!(running.fake.base_url()),
        "overwritehost = self"
    );
    let answer: Value = running
        .admin_json(Method::POST, "/__fake/server", Some(json!({"overwritehost": null})))
        .await;
    assert_eq!(answer["overwritehost"], Value::Null);
    assert_eq!(
        running.issuer("elsewhere:1").await,
        "http://elsewhere:1",
        "now the Host header decides"
    );
    let answer: Value = running
        .admin_json(
            Method::POST,
            "/__fake/server",
            Some(json!({"overwritehost": "cloud.example:8080", "converter_secret": "s"})),
        )
        .await;
    assert_eq!(answer, json!({"overwritehost": "cloud.example:8080", "converter_secret": "s"}));
    assert_eq!(running.issuer("elsewhere:1").await, "http://cloud.example:8080");
    let response =
        running.admin_send(Method::POST, "/__fake/server", Some(json!({"nope": "x"}))).await;
    assert_eq!(response.status(), 400);
}

#[tokio::test]
async fn state_counts_what_the_world_holds() {
    let running = start(SMALL).await;
    let state: Value = running.admin_json(Method::GET, "/__fake/state", None).await;
    assert_eq!(state["users"], 3);
    assert_eq!(state["groups"], 1);
    assert_eq!(state["files"], 4);
    assert_eq!(state["folders"], 4, "Documents, Shared, Private, Work");
    assert_eq!(state["shares"], 1);
    assert_eq!(state["sessions"], 0);
    assert_eq!(state["deck_boards"], 0);
    assert_eq!(state["webhook_pending"], 0);
}

/// Issue 14: any local process could steer the demo through `/__fake/`
/// (point alice's chat, with her tokens, at a listener of its own). Without
/// the token every admin route is refused and nothing changes; with the
/// routes off they do not exist.
#[tokio::test]
async fn the_admin_routes_need_the_token_and_can_be_off() {
    let running = start(SMALL).await;
    let token = running.fake.admin_token().unwrap().to_string();
    assert_eq!(token.len(), 64, "32 random bytes, hex");
    let routes = [
        (Method::GET, "/__fake/faults"),
        (Method::PUT, "/__fake/faults"),
        (Method::POST, "/__fake/app"),
        (Method::GET, "/__fake/state"),
        (Method::POST, "/__fake/clock/advance"),
        (Method::POST, "/__fake/sessions/alice/end"),
    ];
    for (method, path) in routes {
        for wrong in [None, Some("not-the-token"), Some(&token[..63])] {
            let mut request = running
                .http
                .request(method.clone(), running.url(path))
                .json(&json!({"orchestrator_url": "http://127.0.0.1:1", "seconds": 1000}));
            if let Some(wrong) = wrong {
                request = request.header(fake_nextcloud::admin::TOKEN_HEADER, wrong);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), 401, "{method} {path} with {wrong:?}");
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["error"], "admin_token_required");
        }
    }
    // Nothing moved: the clock, the app's orchestrator.
    let clock: Value = running.admin_json(Method::GET, "/__fake/clock", None).await;
    assert_eq!(clock["offset_seconds"], 0);
    let app: Value = running.admin_json(Method::GET, "/__fake/app", None).await;
    assert_ne!(app["orchestrator_url"], "http://127.0.0.1:1");

    let fixture = fake_nextcloud::Fixture::parse(SMALL).unwrap();
    let config = fake_nextcloud::Config { admin: fake_nextcloud::Admin::Off, ..Default::default() };
    let off = fake_nextcloud::FakeNextcloud::start(&fixture, config).await.unwrap();
    assert_eq!(off.admin_token(), None);
    let response = running
        .http
        .get(format!("{}/__fake/faults", off.base_url()))
        .header(fake_nextcloud::admin::TOKEN_HEADER, &token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    off.shutdown().await;
}
