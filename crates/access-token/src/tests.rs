//! Each rule of [`validate`] has a test that breaks exactly that rule.

use super::*;
use std::sync::LazyLock;

static SIGNER: LazyLock<Signer> = LazyLock::new(|| Signer::generate("key-1"));
static OTHER: LazyLock<Signer> = LazyLock::new(|| Signer::generate("key-1"));
static UNKNOWN: LazyLock<Signer> = LazyLock::new(|| Signer::generate("key-2"));

const NOW: i64 = 1_800_000_000;

fn claims() -> Claims {
    Claims {
        iss: "http://nc.test".to_string(),
        sub: "alice".to_string(),
        aud: Audience::One("http://mcp.test/mcp".to_string()),
        exp: NOW + 900,
        iat: NOW,
        nbf: None,
        jti: "jti-1".to_string(),
        client_id: "tamebi".to_string(),
        azp: Some("tamebi".to_string()),
        preferred_username: Some("alice".to_string()),
        scope: Some("openid profile".to_string()),
    }
}

fn validation() -> Validation {
    Validation {
        issuer: "http://nc.test".to_string(),
        audience: Some("http://mcp.test/mcp".to_string()),
        require_at_jwt: true,
        leeway_seconds: 60,
    }
}

fn jwks() -> JwkSet {
    JwkSet { keys: vec![SIGNER.jwk()] }
}

fn check(token: &str) -> Result<Claims, TokenError> {
    validate(token, &jwks(), &validation(), NOW)
}

fn forge(header: serde_json::Value, claims: &Claims, signature: &[u8]) -> String {
    format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&header).unwrap()),
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).unwrap()),
        URL_SAFE_NO_PAD.encode(signature)
    )
}

#[test]
fn valid_token_round_trips() {
    let token = SIGNER.sign_access_token(&claims());
    assert_eq!(check(&token), Ok(claims()));
}

#[test]
fn audience_list_is_accepted_when_it_contains_ours() {
    let mut claims = claims();
    claims.aud = Audience::Many(vec!["other".into(), "http://mcp.test/mcp".into()]);
    assert!(check(&SIGNER.sign_access_token(&claims)).is_ok());
}

#[test]
fn alg_none_is_refused() {
    let token = forge(serde_json::json!({"alg": "none", "typ": "at+jwt"}), &claims(), b"");
    assert_eq!(check(&token), Err(TokenError::Algorithm("none".into())));
}

#[test]
fn hs256_signed_with_the_public_key_is_refused() {
    // The classic RS/HS confusion: an HMAC keyed with the public modulus.
    let token = forge(
        serde_json::json!({"alg": "HS256", "typ": "at+jwt", "kid": "key-1"}),
        &claims(),
        SIGNER.jwk().n.as_bytes(),
    );
    assert_eq!(check(&token), Err(TokenError::Algorithm("HS256".into())));
}

#[test]
fn wrong_issuer_is_refused_even_when_only_the_host_differs() {
    let mut claims = claims();
    claims.iss = "http://nc.test:8080".into();
    let token = SIGNER.sign_access_token(&claims);
    assert_eq!(check(&token), Err(TokenError::Issuer("http://nc.test:8080".into())));
}

#[test]
fn wrong_audience_is_refused() {
    let mut claims = claims();
    claims.aud = Audience::One("http://mcp-mail.test/mcp".into());
    assert_eq!(check(&SIGNER.sign_access_token(&claims)), Err(TokenError::Audience));
}

#[test]
fn audience_check_can_be_switched_off() {
    let mut claims = claims();
    claims.aud = Audience::One("elsewhere".into());
    let validation = Validation { audience: None, ..validation() };
    assert!(validate(&SIGNER.sign_access_token(&claims), &jwks(), &validation, NOW).is_ok());
}

#[test]
fn id_token_type_is_refused_as_an_access_token() {
    let token = SIGNER.sign("JWT", &claims());
    assert_eq!(check(&token), Err(TokenError::Type(Some("JWT".into()))));
}

#[test]
fn expiry_honours_the_leeway() {
    let mut claims = claims();
    claims.exp = NOW - 59;
    assert!(check(&SIGNER.sign_access_token(&claims)).is_ok());
    claims.exp = NOW - 61;
    assert_eq!(check(&SIGNER.sign_access_token(&claims)), Err(TokenError::Expired));
}

#[test]
fn future_iat_and_nbf_are_refused() {
    let mut claims = claims();
    claims.iat = NOW + 120;
    assert_eq!(check(&SIGNER.sign_access_token(&claims)), Err(TokenError::IssuedInFuture));
    let mut claims = super::tests::claims();
    claims.nbf = Some(NOW + 120);
    assert_eq!(check(&SIGNER.sign_access_token(&claims)), Err(TokenError::NotYetValid));
}

#[test]
fn unknown_kid_is_refused() {
    let token = UNKNOWN.sign_access_token(&claims());
    assert_eq!(check(&token), Err(TokenError::UnknownKey(Some("key-2".into()))));
}

#[test]
fn same_kid_other_key_fails_the_signature() {
    let token = OTHER.sign_access_token(&claims());
    assert_eq!(check(&token), Err(TokenError::Signature));
}

#[test]
fn tampered_payload_fails_the_signature() {
    let token = SIGNER.sign_access_token(&claims());
    let mut forged = claims();
    forged.sub = "bob".into();
    let parts: Vec<&str> = token.split('.').collect();
    let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&forged).unwrap());
    let token = format!("{}.{}.{}", parts[0], payload, parts[2]);
    assert_eq!(check(&token), Err(TokenError::Signature));
}

#[test]
fn garbage_and_oversized_tokens_are_refused() {
    assert_eq!(check(""), Err(TokenError::Malformed));
    assert_eq!(check("a.b"), Err(TokenError::Malformed));
    assert_eq!(check("a.b.c.d"), Err(TokenError::Malformed));
    assert_eq!(check("!!.??.**"), Err(TokenError::Malformed));
    assert_eq!(check(&"a".repeat(TOKEN_LENGTH_MAX + 1)), Err(TokenError::TooLong));
}

#[test]
fn peek_reads_kid_and_issuer_without_verifying() {
    let token = SIGNER.sign_access_token(&claims());
    let unverified = peek(&token).unwrap();
    assert_eq!(unverified.kid.as_deref(), Some("key-1"));
    assert_eq!(unverified.issuer.as_deref(), Some("http://nc.test"));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    #[test]
    fn arbitrary_strings_never_validate(token in ".{0,300}") {
        proptest::prop_assert!(check(&token).is_err());
    }
}
