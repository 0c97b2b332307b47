//! The `oidc` app (H2CK/oidc) as identity provider and `user_oidc`'s
//! self-encoded bearer validation on DAV and OCS.
//!
//! Sources: the oidc app's `DiscoveryGenerator` (issuer from the request's
//! protocol, host and webroot; endpoints under `/index.php/apps/oidc/`;
//! grant types `authorization_code` and `implicit`), its JWT access tokens
//! (RFC 9068, `expire_time` 900 s by default, `aud` = the client's resource
//! URL), and user_oidc's `SelfEncodedValidator` (signature via the
//! provider's JWKS, `iss`, `exp`, `aud` when the audience check is on).

use nextcloud_contract::{ClientAuth, Target, form_encode};
use serde_json::Value;

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().map(|list| list.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

#[tokio::test]
async fn discovery_names_the_issuer_and_the_oidc_endpoints() {
    let target = Target::get().await;
    let discovery = target.discovery().await;
    let issuer = discovery["issuer"].as_str().expect("issuer is a string");
    assert_eq!(
        issuer, target.base_url,
        "the issuer is the server's own URL (protocol://host/webroot)"
    );
    // Endpoints are the host plus the app's route: `/index.php/apps/oidc/…`,
    // or `/apps/oidc/…` where the front controller is active (pretty URLs).
    for (field, route) in [
        ("authorization_endpoint", "authorize"),
        ("token_endpoint", "token"),
        ("userinfo_endpoint", "userinfo"),
        ("jwks_uri", "jwks"),
    ] {
        let endpoint = discovery[field].as_str().unwrap_or_default();
        assert!(
            endpoint == format!("{issuer}/index.php/apps/oidc/{route}")
                || endpoint == format!("{issuer}/apps/oidc/{route}"),
            "{field} is the oidc app's {route} route: {endpoint:?}"
        );
    }
    let grants = strings(&discovery["grant_types_supported"]);
    assert!(grants.contains(&"authorization_code"), "grant types: {grants:?}");
    assert!(!grants.contains(&"refresh_token"), "no refresh_token grant: {grants:?}");
    // Only what the oidc app implements (its DiscoveryGenerator): no
    // implicit `token` response types, no fragment response mode.
    let response_types = strings(&discovery["response_types_supported"]);
    assert!(response_types.contains(&"code"), "response types: {response_types:?}");
    for response_type in &response_types {
        assert!(
            ["code", "code id_token", "id_token"].contains(response_type),
            "the oidc app issues no access token from the authorization endpoint: \
             {response_type:?} advertised"
        );
    }
    assert_eq!(strings(&discovery["response_modes_supported"]), ["query"]);
    assert!(strings(&discovery["id_token_signing_alg_values_supported"]).contains(&"RS256"));
    assert!(strings(&discovery["subject_types_supported"]).contains(&"public"));
    let auth_methods = strings(&discovery["token_endpoint_auth_methods_supported"]);
    assert!(
        auth_methods.contains(&"client_secret_post")
            && auth_methods.contains(&"client_secret_basic"),
        "token endpoint auth methods: {auth_methods:?}"
    );
}

#[tokio::test]
async fn the_code_flow_with_pkce_yields_an_rfc_9068_access_token_the_jwks_verifies() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let client = target.resource_client.clone();
    let (status, answer) = target.token_answer(&alice, &client).await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer["token_type"].as_str().is_some_and(|kind| kind.eq_ignore_ascii_case("bearer")));
    assert_eq!(answer["expires_in"].as_i64(), Some(900), "{answer}");
    assert!(answer["id_token"].is_string(), "scope openid yields an ID token: {answer}");
    let token = answer["access_token"].as_str().expect("access_token");

    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 3, "the access token is a compact JWS");
    use base64::Engine as _;
    let decode = |part: &str| -> Value {
        serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(part).unwrap(),
        )
        .unwrap()
    };
    let header = decode(parts[0]);
    assert!(
        header["typ"].as_str().is_some_and(|typ| typ.eq_ignore_ascii_case("at+jwt")),
        "RFC 9068 §2.1: typ at+jwt, got {header}"
    );
    assert_eq!(header["alg"], "RS256");
    let claims = decode(parts[1]);
    assert_eq!(claims["iss"].as_str(), Some(target.base_url.as_str()));
    assert_eq!(claims["sub"].as_str(), Some(alice.uid.as_str()), "sub is the uid");
    let audience_ok = match &claims["aud"] {
        Value::String(one) => one == &client.audience,
        Value::Array(many) => many.iter().any(|one| one.as_str() == Some(&client.audience)),
        _ => false,
    };
    assert!(audience_ok, "aud is the client's resource URL {}: {claims}", client.audience);
    assert_eq!(claims["client_id"].as_str(), Some(client.client_id.as_str()));
    let (exp, iat) = (claims["exp"].as_i64().unwrap(), claims["iat"].as_i64().unwrap());
    assert_eq!(exp - iat, 900, "a 15-minute lifetime");
    assert!((iat - now()).abs() < 120, "iat is now");
    assert!(claims["jti"].is_string(), "RFC 9068 requires jti");

    let jwks = target.jwks().await;
    let validation = access_token::Validation {
        issuer: target.base_url.clone(),
        audience: Some(client.audience.clone()),
        require_at_jwt: true,
        leeway_seconds: 60,
    };
    let verified = access_token::validate(token, &jwks, &validation, now())
        .expect("the JWKS at jwks_uri verifies the token");
    assert_eq!(verified.sub, alice.uid);
}

#[tokio::test]
async fn a_code_is_spent_once_and_only_with_its_verifier() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let client = target.resource_client.clone();

    // A wrong verifier is refused (RFC 7636 §4.6).
    let mut grant = target.authorize(&alice, &client).await;
    grant.verifier = "another-verifier-0123456789-0123456789-0123456789-abc".to_string();
    let (status, body) = target.exchange(&client, &grant, ClientAuth::Post).await;
    assert_eq!(status, 400, "a wrong code_verifier is a 400: {body}");
    assert!(body["error"].is_string(), "an OAuth error object: {body}");

    // A code is spent once (RFC 6749 §4.1.2).
    let grant = target.authorize(&alice, &client).await;
    let (status, body) = target.exchange(&client, &grant, ClientAuth::Post).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = target.exchange(&client, &grant, ClientAuth::Post).await;
    assert_eq!(status, 400, "a code used twice is refused: {body}");
}

#[tokio::test]
async fn authorize_without_a_session_sends_the_browser_to_the_login_page() {
    let target = Target::get().await;
    let discovery = target.discovery().await;
    let client = &target.resource_client;
    let query = form_encode(&[
        ("response_type", "code".to_string()),
        ("client_id", client.client_id.clone()),
        ("redirect_uri", client.redirect_uri.clone()),
        ("scope", "openid".to_string()),
        ("state", "s".to_string()),
    ]);
    let response = target
        .http
        .get(format!("{}?{query}", discovery["authorization_endpoint"].as_str().unwrap()))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_redirection(), "{}", response.status());
    let location = nextcloud_contract::header(&response, "location");
    assert!(location.contains("/login"), "to the login page, got {location:?}");
    assert!(!location.starts_with(&client.redirect_uri), "no code without a session");
}

async fn dav_status(target: &Target, uid: &str, token: &str) -> u16 {
    target
        .anonymous("PROPFIND", &format!("/remote.php/dav/files/{uid}/"))
        .bearer_auth(token)
        .header("Depth", "0")
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn ocs_user(target: &Target, token: &str) -> (u16, Value) {
    let response = target
        .anonymous("GET", "/ocs/v2.php/cloud/user?format=json")
        .bearer_auth(token)
        .header("OCS-APIRequest", "true")
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_bearer_minted_for_nextcloud_is_accepted_on_dav_and_ocs() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let token = target.access_token(&alice, &target.nextcloud_client.clone()).await;
    assert_eq!(
        dav_status(&target, &alice.uid, &token).await,
        207,
        "user_oidc must accept the oidc app's tokens on DAV: enable the `user_oidc` app with \
         bearer validation (docs/fake-vs-real.md)"
    );
    let (status, body) = ocs_user(&target, &token).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["ocs"]["data"]["id"].as_str(), Some(alice.uid.as_str()));
}

#[tokio::test]
async fn a_bearer_for_another_audience_is_refused_when_the_audience_check_is_on() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let token = target.access_token(&alice, &target.resource_client.clone()).await;
    let expected = if target.audience_check { 401 } else { 207 };
    assert_eq!(
        dav_status(&target, &alice.uid, &token).await,
        expected,
        "a token minted for {} on DAV with the audience check {}",
        target.resource_client.audience,
        if target.audience_check { "on" } else { "off" }
    );
    let (status, _) = ocs_user(&target, &token).await;
    assert_eq!(status, if target.audience_check { 401 } else { 200 });
}

#[tokio::test]
async fn a_forged_or_garbage_bearer_is_a_401() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let token = target.access_token(&alice, &target.nextcloud_client.clone()).await;
    // Same header and claims, signature of another token: must not verify.
    let mut parts: Vec<String> = token.split('.').map(str::to_string).collect();
    let other = target.access_token(&alice, &target.resource_client.clone()).await;
    parts[2] = other.rsplit('.').next().unwrap().to_string();
    let forged = parts.join(".");
    assert_eq!(dav_status(&target, &alice.uid, &forged).await, 401, "a bad signature");
    assert_eq!(dav_status(&target, &alice.uid, "not-a-token").await, 401, "garbage");
}

#[tokio::test]
async fn the_token_endpoint_takes_client_secret_basic_too() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let client = target.nextcloud_client.clone();
    let grant = target.authorize(&alice, &client).await;
    let (status, answer) = target.exchange(&client, &grant, ClientAuth::Basic).await;
    assert_eq!(status, 200, "client_secret_basic is advertised: {answer}");
    assert!(answer["access_token"].is_string());

    let mut wrong = client.clone();
    wrong.client_secret = "not-the-secret".to_string();
    let grant = target.authorize(&alice, &client).await;
    let (status, answer) = target.exchange(&wrong, &grant, ClientAuth::Post).await;
    assert!(status == 400 || status == 401, "a wrong client secret: {status} {answer}");
    assert!(answer["error"].is_string(), "an OAuth error object: {answer}");
}

#[tokio::test]
async fn userinfo_names_the_tokens_user() {
    let target = Target::get().await;
    let alice = target.alice().clone();
    let token = target.access_token(&alice, &target.nextcloud_client.clone()).await;
    let discovery = target.discovery().await;
    let userinfo = discovery["userinfo_endpoint"].as_str().unwrap();
    let response = target.http.get(userinfo).bearer_auth(&token).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let info: Value = response.json().await.unwrap();
    assert_eq!(info["sub"].as_str(), Some(alice.uid.as_str()), "{info}");
    let anonymous = target.http.get(userinfo).send().await.unwrap();
    assert!(anonymous.status().is_client_error(), "userinfo needs a token");
}
