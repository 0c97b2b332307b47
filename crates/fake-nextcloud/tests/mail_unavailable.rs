//! The Tamebi app's mail routes when Nextcloud Mail is missing (disabled, or
//! its contracts moved): the status route and every mail route answer 503
//! with the machine-readable code `mail_unavailable`, after the caller's
//! authentication, so mcp-mail can tell "no mail here" from an outage and
//! list no tools (docs/app-contract.md, "Mail").

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod app_support;
mod common;

use app_support::{Browser, demo_fixture, http_client, start_fake};
use serde_json::Value;

async fn answer(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn the_status_route_says_whether_mail_is_there() {
    let mut fixture = demo_fixture();
    let fake = start_fake(&fixture, None).await;
    let token = fake.shared.mint_access_token("alice", "nextcloud");
    let status = |token: Option<String>| {
        let mut request =
            http_client().get(format!("{}/apps/tamebi/api/mail/status", fake.base_url()));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    let (code, body) = answer(status(Some(token.clone())).await.unwrap()).await;
    assert_eq!((code, body), (200, serde_json::json!({ "available": true })));
    // Without a bearer it says nothing about mail.
    let (code, body) = answer(status(None).await.unwrap()).await;
    assert_eq!(code, 401);
    assert!(body["error"].get("code").is_none(), "{body}");
    fake.shutdown().await;

    fixture.faults.mail_unavailable = true;
    let fake = start_fake(&fixture, None).await;
    let token = fake.shared.mint_access_token("alice", "nextcloud");
    let response = http_client()
        .get(format!("{}/index.php/apps/tamebi/api/mail/status", fake.base_url()))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    let (code, body) = answer(response).await;
    assert_eq!(code, 503, "{body}");
    assert_eq!(body["error"]["code"], "mail_unavailable");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("Nextcloud Mail is not available"), "{message}");
    assert!(!message.contains("127.0.0.1"), "{message}");
    fake.shutdown().await;
}

#[tokio::test]
async fn every_mail_route_answers_mail_unavailable_while_mail_is_missing() {
    let mut fixture = demo_fixture();
    fixture.faults.mail_unavailable = true;
    let fake = start_fake(&fixture, None).await;
    let token = fake.shared.mint_access_token("alice", "nextcloud");
    let base = fake.base_url().to_string();
    let bearer_routes = [
        http_client().get(format!("{base}/apps/tamebi/api/mail/search?query=budget")),
        http_client().get(format!("{base}/apps/tamebi/api/mail/messages/1")),
        http_client()
            .post(format!("{base}/apps/tamebi/api/mail/compose"))
            .json(&serde_json::json!({ "to": ["bob@example.com"], "subject": "s", "body": "b" })),
    ];
    for request in bearer_routes {
        let (code, body) = answer(request.bearer_auth(&token).send().await.unwrap()).await;
        assert_eq!((code, body["error"]["code"].as_str()), (503, Some("mail_unavailable")));
    }
    let alice = Browser::alice(&fake).await;
    for (method, path) in [
        ("GET", "/apps/tamebi/api/mail/previews/x"),
        ("POST", "/apps/tamebi/api/mail/previews/x/send"),
        ("POST", "/apps/tamebi/api/mail/previews/x/save"),
    ] {
        let (code, body) = answer(alice.request(method, path).send().await.unwrap()).await;
        assert_eq!((code, body["error"]["code"].as_str()), (503, Some("mail_unavailable")));
    }
    // A bearer on send is still refused as a bearer first: no click, no mail.
    let response = http_client()
        .post(format!("{base}/apps/tamebi/api/mail/previews/x/send"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 403);
    fake.shutdown().await;
}
