//! The `/__fake/` admin endpoint: faults, the clock, sessions, server
//! settings and state counts, each checked by its effect on the fake.

mod common;

use common::{SMALL, start};
use serde_json::{Value, json};

#[tokio::test]
async fn faults_round_trip_and_route_faults_bite() {
    let running = start(SMALL).await;
    let faults: Value =
        running.http.get(running.url("/__fake/faults")).send().await.unwrap().json().await.unwrap();
    assert_eq!(faults["routes"], json!([]));
    assert_eq!(faults["converter_secret_missing"], false);

    let new_faults = json!({
        "routes": [{"prefix": "/ocs/v2.php/cloud/user", "status": 503, "remaining": 1}],
        "converter_secret_missing": true,
    });
    let response =
        running.http.put(running.url("/__fake/faults")).json(&new_faults).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let faults: Value =
        running.http.get(running.url("/__fake/faults")).send().await.unwrap().json().await.unwrap();
    assert_eq!(faults["converter_secret_missing"], true);
    assert_eq!(faults["routes"][0]["status"], 503);

    let user = || {
        running
            .as_user("GET", "alice", "/ocs/v2.php/cloud/user?format=json")
            .header("OCS-APIRequest", "true")
            .send()
    };
    assert_eq!(user().await.unwrap().status(), 503);
    assert_eq!(user().await.unwrap().status(), 200, "remaining ran out");

    let response = running
        .http
        .put(running.url("/__fake/faults"))
        .json(&json!({"no_such_fault": true}))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_client_error(), "unknown faults are refused");
    let response = running
        .http
        .put(running.url("/__fake/faults"))
        .json(&json!({"routes": [{"prefix": "/__fake/", "status": 500}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let response = running.http.get(running.url("/__fake/faults")).send().await.unwrap();
    assert_eq!(response.status(), 200, "route faults never apply to the admin endpoint");
}

#[tokio::test]
async fn the_clock_advances() {
    let running = start(SMALL).await;
    let before: Value =
        running.http.get(running.url("/__fake/clock")).send().await.unwrap().json().await.unwrap();
    assert_eq!(before["offset_seconds"], 0);
    let after: Value = running
        .http
        .post(running.url("/__fake/clock/advance"))
        .json(&json!({"seconds": 901}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(after["offset_seconds"], 901);
    assert!(after["now"].as_i64().unwrap() >= before["now"].as_i64().unwrap() + 901);
    assert!(
        running.fake.shared.now() >= before["now"].as_i64().unwrap() + 901,
        "the fake's own clock moved"
    );
    let response = running
        .http
        .post(running.url("/__fake/clock/advance"))
        .json(&json!({"seconds": i64::MAX / 2}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
}

#[tokio::test]
async fn ending_sessions_logs_the_browser_out() {
    let running = start(SMALL).await;
    let login = running
        .http
        .post(running.url("/index.php/login"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("user=alice&password=alice-pw")
        .send()
        .await
        .unwrap();
    let cookies: Vec<String> = login
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|value| value.to_str().unwrap().split(';').next().unwrap().to_string())
        .collect();
    let me = || {
        running
            .http
            .get(running.url("/ocs/v2.php/cloud/user?format=json"))
            .header("Cookie", cookies.join("; "))
            .header("OCS-APIRequest", "true")
            .send()
    };
    assert_eq!(me().await.unwrap().status(), 200);
    let ended: Value = running
        .http
        .post(running.url("/__fake/sessions/alice/end"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ended["ended"], 1);
    assert_eq!(me().await.unwrap().status(), 401);
    let response =
        running.http.post(running.url("/__fake/sessions/nobody/end")).send().await.unwrap();
    assert_eq!(response.status(), 404);
}

#[tokio::test]
async fn server_settings_change_the_issuer() {
    let running = start(SMALL).await;
    let issuer = |host: &'static str| {
        let request =
            running.http.get(running.url("/.well-known/openid-configuration")).header("Host", host);
        async move { request.send().await.unwrap().json::<Value>().await.unwrap()["issuer"].clone() }
    };
    assert_eq!(issuer("elsewhere:1").await, json!(running.fake.base_url()), "overwritehost = self");
    let answer: Value = running
        .http
        .post(running.url("/__fake/server"))
        .json(&json!({"overwritehost": null}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["overwritehost"], Value::Null);
    assert_eq!(issuer("elsewhere:1").await, "http://elsewhere:1", "now the Host header decides");
    let answer: Value = running
        .http
        .post(running.url("/__fake/server"))
        .json(&json!({"overwritehost": "cloud.example:8080", "converter_secret": "s"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer, json!({"overwritehost": "cloud.example:8080", "converter_secret": "s"}));
    assert_eq!(issuer("elsewhere:1").await, "http://cloud.example:8080");
    let response = running
        .http
        .post(running.url("/__fake/server"))
        .json(&json!({"nope": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
}

#[tokio::test]
async fn state_counts_what_the_world_holds() {
    let running = start(SMALL).await;
    let state: Value =
        running.http.get(running.url("/__fake/state")).send().await.unwrap().json().await.unwrap();
    assert_eq!(state["users"], 3);
    assert_eq!(state["groups"], 1);
    assert_eq!(state["files"], 4);
    assert_eq!(state["folders"], 4, "Documents, Shared, Private, Work");
    assert_eq!(state["shares"], 1);
    assert_eq!(state["sessions"], 0);
    assert_eq!(state["deck_boards"], 0);
    assert_eq!(state["webhook_pending"], 0);
}
