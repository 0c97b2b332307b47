//! The OIDC provider and user_oidc-style bearer validation over real
//! sockets: discovery, the authorization-code flow with PKCE, RFC 9068
//! access tokens, the Host-derived issuer, audience checks, and the
//! iss-mismatch bug.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::{Running, form};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

const REDIRECT: &str = "http://127.0.0.1:8080/index.php/apps/tamebi/oauth/callback";
const MCP_AUDIENCE: &str = "http://127.0.0.1:9101/mcp";

fn fixture(overwritehost_self: bool, extra: &str) -> String {
    let server = if overwritehost_self { "[server]\noverwritehost = \"self\"\n" } else { "" };
    format!(
        r#"{server}
{extra}

[[users]]
uid = "alice"
display_name = "Alice Martin"
password = "alice-pw"
email = "alice@example.com"

[[oidc_clients]]
client_id = "tamebi-mcp-nextcloud"
client_secret = "mcp-secret"
redirect_uris = ["{REDIRECT}"]
resource_url = "{MCP_AUDIENCE}"

[[oidc_clients]]
client_id = "nextcloud"
client_secret = "nc-secret"
redirect_uris = ["{REDIRECT}"]
"#
    )
}

/// Logs alice in through the login form; returns the Cookie header value.
async fn login(running: &Running, host: Option<&str>) -> String {
    let response = running.login("alice", "alice-pw", host).await;
    assert_eq!(response.status(), 303);
    common::cookies(&response)
}

struct Pkce {
    verifier: String,
    challenge: String,
}

fn pkce() -> Pkce {
    let verifier =
        "a-verifier-that-is-long-enough-to-satisfy-rfc-7636-rules-0123456789".to_string();
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    Pkce { verifier, challenge }
}

/// GET authorize as the logged-in browser; returns the code.
async fn authorize(
    running: &Running,
    cookies: &str,
    client_id: &str,
    pkce: &Pkce,
    host: Option<&str>,
) -> String {
    let query = form(&[
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", REDIRECT),
        ("scope", "openid profile"),
        ("state", "the-state"),
        ("code_challenge", &pkce.challenge),
        ("code_challenge_method", "S256"),
    ]);
    let mut request = running
        .http
        .get(running.url(&format!("/index.php/apps/oidc/authorize?{query}")))
        .header("Cookie", cookies);
    if let Some(host) = host {
        request = request.header("Host", host);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 303);
    let location = url::Url::parse(response.headers()["location"].to_str().unwrap()).unwrap();
    assert!(location.as_str().starts_with(REDIRECT));
    let pairs: std::collections::HashMap<String, String> =
        location.query_pairs().into_owned().collect();
    assert_eq!(pairs["state"], "the-state");
    pairs["code"].clone()
}

async fn token(
    running: &Running,
    client_id: &str,
    secret: &str,
    code: &str,
    verifier: &str,
    host: Option<&str>,
) -> (u16, Value) {
    let mut request = running
        .http
        .post(running.url("/index.php/apps/oidc/token"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("client_id", client_id),
            ("client_secret", secret),
            ("code_verifier", verifier),
        ]));
    if let Some(host) = host {
        request = request.header("Host", host);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// The whole flow for one client; returns the access token.
async fn access_token_for(
    running: &Running,
    client_id: &str,
    secret: &str,
    host: Option<&str>,
) -> String {
    let cookies = login(running, host).await;
    let pkce = pkce();
    let code = authorize(running, &cookies, client_id, &pkce, host).await;
    let (status, body) = token(running, client_id, secret, &code, &pkce.verifier, host).await;
    assert_eq!(status, 200, "{body}");
    body["access_token"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn discovery_is_served_at_both_paths() {
    let running = common::start(&fixture(true, "")).await;
    for path in ["/.well-known/openid-configuration", "/index.php/.well-known/openid-configuration"]
    {
        let discovery: Value =
            running.http.get(running.url(path)).send().await.unwrap().json().await.unwrap();
        let base = running.fake.base_url();
        assert_eq!(discovery["issuer"], base, "{path}");
        assert_eq!(
            discovery["authorization_endpoint"],
            format!("{base}/index.php/apps/oidc/authorize")
        );
        assert_eq!(discovery["token_endpoint"], format!("{base}/index.php/apps/oidc/token"));
        assert_eq!(discovery["jwks_uri"], format!("{base}/index.php/apps/oidc/jwks"));
        assert_eq!(discovery["code_challenge_methods_supported"], json!(["S256"]));
        // As the oidc app advertises them: no implicit `token` types, no fragment mode.
        assert_eq!(
            discovery["response_types_supported"],
            json!(["code", "code id_token", "id_token"])
        );
        assert_eq!(discovery["response_modes_supported"], json!(["query"]));
    }
}

#[tokio::test]
async fn the_code_flow_yields_an_rfc_9068_access_token_and_no_refresh_token() {
    let running = common::start(&fixture(true, "")).await;
    let cookies = login(&running, None).await;
    let pkce = pkce();
    let code = authorize(&running, &cookies, "tamebi-mcp-nextcloud", &pkce, None).await;
    let (status, body) =
        token(&running, "tamebi-mcp-nextcloud", "mcp-secret", &code, &pkce.verifier, None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 900);
    assert!(body["id_token"].is_string());
    assert!(body.get("refresh_token").is_none(), "the oidc app issues no refresh token");

    let validation = access_token::Validation {
        issuer: running.fake.base_url().to_string(),
        audience: Some(MCP_AUDIENCE.to_string()),
        require_at_jwt: true,
        leeway_seconds: 0,
    };
    let claims = access_token::validate(
        body["access_token"].as_str().unwrap(),
        &common::jwks(&running.fake).await,
        &validation,
        running.fake.shared.now(),
    )
    .expect("the access token validates against the JWKS");
    assert_eq!(claims.sub, "alice");
    assert_eq!(claims.client_id, "tamebi-mcp-nextcloud");
    assert_eq!(claims.exp - claims.iat, 900);
    let wrong_audience = access_token::Validation {
        audience: Some("http://127.0.0.1:9102/mcp".into()),
        ..validation
    };
    assert_eq!(
        access_token::validate(
            body["access_token"].as_str().unwrap(),
            &common::jwks(&running.fake).await,
            &wrong_audience,
            running.fake.shared.now()
        ),
        Err(access_token::TokenError::Audience)
    );
}

#[tokio::test]
async fn a_wrong_verifier_and_a_reused_code_are_invalid_grants() {
    let running = common::start(&fixture(true, "")).await;
    let cookies = login(&running, None).await;
    let pkce = pkce();
    let code = authorize(&running, &cookies, "nextcloud", &pkce, None).await;
    let (status, body) =
        token(&running, "nextcloud", "nc-secret", &code, "not-the-verifier", None).await;
    assert_eq!((status, body["error"].clone()), (400, json!("invalid_grant")));
    // A failed exchange spends the code too.
    let (status, body) =
        token(&running, "nextcloud", "nc-secret", &code, &pkce.verifier, None).await;
    assert_eq!((status, body["error"].clone()), (400, json!("invalid_grant")));

    let code = authorize(&running, &cookies, "nextcloud", &pkce, None).await;
    let (status, _) = token(&running, "nextcloud", "nc-secret", &code, &pkce.verifier, None).await;
    assert_eq!(status, 200);
    let (status, body) =
        token(&running, "nextcloud", "nc-secret", &code, &pkce.verifier, None).await;
    assert_eq!(
        (status, body["error"].clone()),
        (400, json!("invalid_grant")),
        "codes are single use"
    );

    let code = authorize(&running, &cookies, "nextcloud", &pkce, None).await;
    let (status, body) =
        token(&running, "nextcloud", "wrong-secret", &code, &pkce.verifier, None).await;
    assert_eq!((status, body["error"].clone()), (401, json!("invalid_client")));
}

#[tokio::test]
async fn authorize_without_a_session_goes_to_the_login_page() {
    let running = common::start(&fixture(true, "")).await;
    // The same request but for the redirect URI, without a session.
    let authorize_anonymously = |redirect_uri: &str| {
        let query = form(&[
            ("response_type", "code"),
            ("client_id", "nextcloud"),
            ("redirect_uri", redirect_uri),
        ]);
        running.http.get(running.url(&format!("/index.php/apps/oidc/authorize?{query}"))).send()
    };
    let response = authorize_anonymously(REDIRECT).await.unwrap();
    assert_eq!(response.status(), 303);
    assert!(
        response.headers()["location"]
            .to_str()
            .unwrap()
            .starts_with("/index.php/login?redirect_url=")
    );
    let response = authorize_anonymously("http://evil/").await.unwrap();
    assert_eq!(response.status(), 400, "unregistered redirect URIs are refused");
}

#[tokio::test]
async fn without_overwritehost_the_issuer_follows_the_host_header() {
    let running = common::start(&fixture(false, "")).await;
    assert_eq!(running.issuer("nextcloud.internal").await, "http://nextcloud.internal");
    assert_eq!(running.issuer("localhost:8080").await, "http://localhost:8080");
}

const OCS_USER: &str = "/ocs/v2.php/cloud/user?format=json";

async fn ocs_user_status(running: &Running, token: &str) -> u16 {
    running.get_with_bearer(OCS_USER, token).send().await.unwrap().status().as_u16()
}

async fn dav_status(running: &Running, token: &str) -> u16 {
    running.propfind_status_with_bearer("/remote.php/dav/files/alice/", token).await.as_u16()
}

#[tokio::test]
async fn only_the_nextcloud_audience_token_is_accepted_with_the_audience_check() {
    let running = common::start(&fixture(true, "")).await;
    let nextcloud_token = access_token_for(&running, "nextcloud", "nc-secret", None).await;
    let mcp_token = access_token_for(&running, "tamebi-mcp-nextcloud", "mcp-secret", None).await;
    assert_eq!(ocs_user_status(&running, &nextcloud_token).await, 200);
    assert_ne!(
        dav_status(&running, &nextcloud_token).await,
        401,
        "DAV authenticates the Nextcloud token"
    );
    assert_eq!(
        ocs_user_status(&running, &mcp_token).await,
        401,
        "an MCP token must not be passed through"
    );
    assert_eq!(dav_status(&running, &mcp_token).await, 401);
    assert_eq!(ocs_user_status(&running, "garbage").await, 401);

    running.fake.shared.world().user_oidc.audience_check = false;
    assert_eq!(
        ocs_user_status(&running, &mcp_token).await,
        200,
        "with the check off any audience passes"
    );
    assert_ne!(dav_status(&running, &mcp_token).await, 401);
}

#[tokio::test]
async fn provider_bearer_validation_looks_tokens_up_instead() {
    let running =
        common::start(&fixture(false, "[user_oidc]\noidc_provider_bearer_validation = true\n"))
            .await;
    // Minted via a Host that makes iss differ from anything user_oidc would
    // expect: the provider's own store does not care.
    let token =
        access_token_for(&running, "tamebi-mcp-nextcloud", "mcp-secret", Some("other-host:1"))
            .await;
    assert_eq!(ocs_user_status(&running, &token).await, 200);
    assert_eq!(ocs_user_status(&running, "never-issued").await, 401);
    running.fake.shared.clock.advance(901 + 60);
    assert_eq!(
        ocs_user_status(&running, &token).await,
        401,
        "expired tokens are gone from the store"
    );
}

#[tokio::test]
async fn an_issuer_mismatch_is_a_bare_401() {
    let running = common::start(&fixture(false, "")).await;
    let port = running.fake.base_url().rsplit(':').next().unwrap().to_string();
    running.fake.shared.world().user_oidc.discovery_url = Some(format!("http://localhost:{port}"));
    // Minted through 127.0.0.1 (the client's Host), validated against the
    // issuer user_oidc discovers through localhost: the documented bug.
    let token = access_token_for(&running, "nextcloud", "nc-secret", None).await;
    let response = running.get_with_bearer(OCS_USER, &token).send().await.unwrap();
    assert_eq!(response.status(), 401);
    assert!(!response.text().await.unwrap().contains("iss"), "the client learns nothing about why");
    assert_eq!(dav_status(&running, &token).await, 401);

    let host = format!("localhost:{port}");
    let token = access_token_for(&running, "nextcloud", "nc-secret", Some(&host)).await;
    assert_eq!(
        ocs_user_status(&running, &token).await,
        200,
        "minted via the same host it validates"
    );
}

#[tokio::test]
async fn expired_tokens_are_refused_after_the_leeway() {
    let running = common::start(&fixture(true, "")).await;
    let token = access_token_for(&running, "nextcloud", "nc-secret", None).await;
    running.fake.shared.clock.advance(900 + 30);
    assert_eq!(ocs_user_status(&running, &token).await, 200, "60 s of leeway");
    running.fake.shared.clock.advance(60);
    assert_eq!(ocs_user_status(&running, &token).await, 401);
}
