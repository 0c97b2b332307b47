//! The attack set against the shared bearer validation: every forged,
//! stale or misaddressed token is refused with the exact [`Refusal`] that
//! names its fault, a flood of unknown key ids costs the issuer one JWKS
//! fetch, and random or mutated tokens never validate and never panic.
//!
//! The issuer here is a loopback JWKS server that counts its fetches, so
//! "no side effect" is checked too: a refused token fetches nothing more.
//! `PROPTEST_CASES` raises the number of fuzz cases (docs/reliability.md).

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use access_token::{Audience, Claims, Signer, TokenError};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::HeaderMap;
use mcp_auth::{AuthConfig, Authenticator, NEXTCLOUD_TOKEN_HEADER, Refusal};
use proptest::prelude::*;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

const AUDIENCE: &str = "http://127.0.0.1:9101/mcp";
const NEXTCLOUD: &str = "nextcloud";

static SIGNER: LazyLock<Signer> = LazyLock::new(|| Signer::generate("key-1"));
static STRANGER: LazyLock<Signer> = LazyLock::new(|| Signer::generate("key-1"));

/// A JWKS endpoint on a real socket that counts how often it is asked.
struct Issuer {
    url: String,
    fetches: Arc<AtomicUsize>,
}

async fn issuer() -> Issuer {
    let fetches = Arc::new(AtomicUsize::new(0));
    let counter = fetches.clone();
    let jwks = json!({ "keys": [SIGNER.jwk()] });
    let app = axum::Router::new().route(
        "/jwks",
        axum::routing::get(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            let jwks = jwks.clone();
            async move { axum::Json(jwks) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Issuer { url, fetches }
}

fn authenticator(issuer: &Issuer) -> Authenticator {
    Authenticator::new(
        AuthConfig {
            canonical_url: AUDIENCE.into(),
            issuer: issuer.url.clone(),
            jwks_url: format!("{}/jwks", issuer.url),
            clock: Default::default(),
        },
        reqwest::Client::new(),
    )
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

fn claims(issuer: &Issuer, sub: &str, audience: &str) -> Claims {
    let now = now();
    Claims {
        iss: issuer.url.clone(),
        sub: sub.into(),
        aud: Audience::One(audience.into()),
        exp: now + 900,
        iat: now,
        nbf: None,
        jti: format!("jti-{sub}-{audience}"),
        client_id: "tamebi".into(),
        azp: None,
        preferred_username: None,
        scope: None,
    }
}

fn forge(header: serde_json::Value, claims: &Claims, signature: &[u8]) -> String {
    format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&header).unwrap()),
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).unwrap()),
        URL_SAFE_NO_PAD.encode(signature)
    )
}

fn bearer_headers(token: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("authorization", format!("Bearer {token}").parse().unwrap());
    headers
}

/// The refusal of `token` as this server's bearer.
async fn refusal(authenticator: &Authenticator, token: &str) -> Refusal {
    match authenticator.bearer(&bearer_headers(token)).await {
        Ok(bearer) => panic!("accepted a forged token for {}", bearer.claims.sub),
        Err(refusal) => refusal,
    }
}

fn token_error(refusal: Refusal) -> TokenError {
    match refusal {
        Refusal::Token(error) => error,
        other => panic!("expected a token error, got {other:?}"),
    }
}

#[tokio::test]
async fn every_forged_or_misaddressed_bearer_is_refused_for_its_own_reason() {
    let issuer = issuer().await;
    let authenticator = authenticator(&issuer);
    let good = claims(&issuer, "alice", AUDIENCE);
    // The genuine token first, so the keys are cached and the counter is 1.
    let genuine = SIGNER.sign_access_token(&good);
    assert_eq!(authenticator.bearer(&bearer_headers(&genuine)).await.unwrap().claims.sub, "alice");
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1);

    let variant = |change: &dyn Fn(&mut Claims)| {
        let mut claims = good.clone();
        change(&mut claims);
        SIGNER.sign_access_token(&claims)
    };
    let jwk_n = SIGNER.jwk().n;
    let parts: Vec<&str> = genuine.split('.').collect();
    let cases: Vec<(&str, String, TokenError)> = vec![
        (
            "alg none, empty signature",
            forge(json!({"alg": "none", "typ": "at+jwt", "kid": "key-1"}), &good, b""),
            TokenError::Algorithm("none".into()),
        ),
        (
            "alg None spelled differently",
            forge(json!({"alg": "None", "typ": "at+jwt", "kid": "key-1"}), &good, b""),
            TokenError::Algorithm("None".into()),
        ),
        (
            "HS256 keyed with the public key's bytes",
            forge(
                json!({"alg": "HS256", "typ": "at+jwt", "kid": "key-1"}),
                &good,
                jwk_n.as_bytes(),
            ),
            TokenError::Algorithm("HS256".into()),
        ),
        (
            "RS512 is not RS256",
            forge(json!({"alg": "RS512", "typ": "at+jwt", "kid": "key-1"}), &good, b"sig"),
            TokenError::Algorithm("RS512".into()),
        ),
        ("an ID token (typ JWT)", SIGNER.sign("JWT", &good), TokenError::Type(Some("JWT".into()))),
        (
            "no typ at all",
            forge(json!({"alg": "RS256", "kid": "key-1"}), &good, b"sig"),
            TokenError::Type(None),
        ),
        ("same kid, another key", STRANGER.sign_access_token(&good), TokenError::Signature),
        (
            "payload swapped under a genuine signature",
            format!(
                "{}.{}.{}",
                parts[0],
                URL_SAFE_NO_PAD
                    .encode(serde_json::to_vec(&claims(&issuer, "bob", AUDIENCE)).unwrap()),
                parts[2]
            ),
            TokenError::Signature,
        ),
        (
            "signature truncated",
            format!("{}.{}.{}", parts[0], parts[1], &parts[2][..128]),
            TokenError::Signature,
        ),
        (
            "wrong issuer (trailing slash)",
            variant(&|claims| claims.iss.push('/')),
            TokenError::Issuer(format!("{}/", issuer.url)),
        ),
        (
            "audience of Nextcloud",
            variant(&|claims| claims.aud = Audience::One(NEXTCLOUD.into())),
            TokenError::Audience,
        ),
        (
            "audience of a look-alike URL",
            variant(&|claims| claims.aud = Audience::One(format!("{AUDIENCE}/"))),
            TokenError::Audience,
        ),
        (
            "empty audience list",
            variant(&|claims| claims.aud = Audience::Many(vec![])),
            TokenError::Audience,
        ),
        (
            "expired beyond the leeway",
            variant(&|claims| {
                claims.exp = now() - mcp_auth::LEEWAY_SECONDS - 5;
                claims.iat = claims.exp - 900;
            }),
            TokenError::Expired,
        ),
        (
            "issued in the future",
            variant(&|claims| claims.iat = now() + mcp_auth::LEEWAY_SECONDS + 60),
            TokenError::IssuedInFuture,
        ),
        (
            "nbf in the future",
            variant(&|claims| claims.nbf = Some(now() + mcp_auth::LEEWAY_SECONDS + 60)),
            TokenError::NotYetValid,
        ),
        (
            "one byte over the length limit",
            "a".repeat(access_token::TOKEN_LENGTH_MAX + 1),
            TokenError::TooLong,
        ),
        (
            "a genuine token padded past the limit",
            format!("{genuine}{}", "A".repeat(access_token::TOKEN_LENGTH_MAX)),
            TokenError::TooLong,
        ),
        ("two segments", format!("{}.{}", parts[0], parts[1]), TokenError::Malformed),
        ("four segments", format!("{genuine}.x"), TokenError::Malformed),
        ("empty segments", "..".into(), TokenError::Malformed),
        (
            "standard base64 with padding",
            format!("{}=.{}.{}", parts[0], parts[1], parts[2]),
            TokenError::Malformed,
        ),
        (
            "header not JSON",
            format!("{}.{}.{}", URL_SAFE_NO_PAD.encode(b"{alg"), parts[1], parts[2]),
            TokenError::Malformed,
        ),
        (
            "header a JSON array",
            format!("{}.{}.{}", URL_SAFE_NO_PAD.encode(b"[1]"), parts[1], parts[2]),
            TokenError::Malformed,
        ),
        (
            "signature not base64url",
            format!("{}.{}.{}", parts[0], parts[1], "***"),
            TokenError::Malformed,
        ),
    ];
    for (case, token, expected) in cases {
        let error = token_error(refusal(&authenticator, &token).await);
        assert_eq!(error, expected, "{case}");
    }
    // None of those made us fetch the issuer's keys again.
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1, "no refetch for known kids");
}

#[tokio::test]
async fn a_flood_of_unknown_kids_costs_the_issuer_one_fetch() {
    let issuer = issuer().await;
    let authenticator = authenticator(&issuer);
    let good = claims(&issuer, "alice", AUDIENCE);
    // Genuinely signed by keys the issuer never published (RSA key
    // generation is slow, so three of them)...
    for n in 0..3 {
        let token = Signer::generate(format!("kid-{n}")).sign_access_token(&good);
        let error = token_error(refusal(&authenticator, &token).await);
        assert_eq!(error, TokenError::UnknownKey(Some(format!("kid-{n}"))));
    }
    // ...and forged kids, which cost an attacker nothing: a hundred more.
    for n in 0..100 {
        let token =
            forge(json!({"alg": "RS256", "typ": "at+jwt", "kid": format!("x{n}")}), &good, b"s");
        let error = token_error(refusal(&authenticator, &token).await);
        assert_eq!(error, TokenError::UnknownKey(Some(format!("x{n}"))));
    }
    assert_eq!(
        issuer.fetches.load(Ordering::SeqCst),
        1,
        "unknown kids within the refresh interval are refused from the cache"
    );
}

#[tokio::test]
async fn the_nextcloud_token_must_be_another_valid_token_of_the_same_user() {
    let issuer = issuer().await;
    let authenticator = authenticator(&issuer);
    let bearer_token = SIGNER.sign_access_token(&claims(&issuer, "alice", AUDIENCE));
    let check = async |second: &str| {
        let mut headers = bearer_headers(&bearer_token);
        headers.insert(NEXTCLOUD_TOKEN_HEADER, second.parse().unwrap());
        let bearer = authenticator.bearer(&headers).await.expect("the bearer is genuine");
        authenticator.nextcloud_token(&headers, &bearer, NEXTCLOUD).await.map(str::to_string)
    };
    let alice = SIGNER.sign_access_token(&claims(&issuer, "alice", NEXTCLOUD));
    assert_eq!(check(&alice).await.unwrap(), alice);

    let bob = SIGNER.sign_access_token(&claims(&issuer, "bob", NEXTCLOUD));
    assert!(matches!(check(&bob).await, Err(Refusal::SubjectMismatch)), "another user");
    // A sub that differs only in case or by a space is another user too.
    for sub in ["Alice", "alice ", " alice"] {
        let token = SIGNER.sign_access_token(&claims(&issuer, sub, NEXTCLOUD));
        assert!(matches!(check(&token).await, Err(Refusal::SubjectMismatch)), "{sub:?}");
    }
    let mut other_issuer = claims(&issuer, "alice", NEXTCLOUD);
    other_issuer.iss = "http://evil.test".into();
    assert!(matches!(
        check(&SIGNER.sign_access_token(&other_issuer)).await,
        Err(Refusal::NextcloudToken(TokenError::Issuer(iss))) if iss == "http://evil.test"
    ));
    let forged = forge(
        json!({"alg": "none", "typ": "at+jwt", "kid": "key-1"}),
        &claims(&issuer, "alice", NEXTCLOUD),
        b"",
    );
    assert!(matches!(
        check(&forged).await,
        Err(Refusal::NextcloudToken(TokenError::Algorithm(alg))) if alg == "none"
    ));
    assert!(matches!(
        check(&"a".repeat(access_token::TOKEN_LENGTH_MAX + 1)).await,
        Err(Refusal::NextcloudToken(TokenError::TooLong))
    ));
}

#[tokio::test]
async fn authorization_headers_that_are_not_one_bearer_are_refused() {
    let issuer = issuer().await;
    let authenticator = authenticator(&issuer);
    let genuine = SIGNER.sign_access_token(&claims(&issuer, "alice", AUDIENCE));
    let not_bearer = [
        format!("Basic {genuine}"),
        format!("Token {genuine}"),
        genuine.clone(),
        "Bearer".into(),
        "Bearer    ".into(),
    ];
    for value in not_bearer {
        let mut headers = HeaderMap::new();
        headers.insert("authorization", value.parse().unwrap());
        let refused = authenticator.bearer(&headers).await;
        assert!(matches!(refused, Err(Refusal::NotBearer)), "{value:.20}: {refused:?}");
    }
    // Non-UTF-8 bytes in the header are not a bearer either.
    let mut headers = HeaderMap::new();
    headers.insert("authorization", http::HeaderValue::from_bytes(b"Bearer \xff\xfe").unwrap());
    assert!(matches!(authenticator.bearer(&headers).await, Err(Refusal::NotBearer)));
    // Two tokens in one header, or one and a trailing word, are not a bearer.
    for doubled in
        [format!("{genuine} {genuine}"), format!("{genuine},{genuine}"), format!("{genuine} x")]
    {
        assert!(matches!(refusal(&authenticator, &doubled).await, Refusal::NotBearer));
    }
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 0, "nothing was fetched for these");
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// A genuine token with bytes changed anywhere never validates, and no
    /// input panics: the parser sees every kind of broken segment.
    #[test]
    fn a_mutated_genuine_token_never_validates(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        truncate in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let issuer = issuer_cached().await;
            let authenticator = authenticator(issuer);
            let genuine = SIGNER.sign_access_token(&claims(issuer, "alice", AUDIENCE));
            let mut bytes = genuine.clone().into_bytes();
            for (index, byte) in &edits {
                let at = index.index(bytes.len());
                // Printable ASCII only: the header must be sendable.
                bytes[at] = 0x21 + byte % 0x5e;
            }
            if let Some(cut) = truncate {
                bytes.truncate(cut.index(bytes.len()));
            }
            let token = String::from_utf8(bytes).unwrap();
            if token == genuine || token.trim().is_empty() {
                return Ok(());
            }
            let headers = bearer_headers(&token);
            let accepted = authenticator.bearer(&headers).await.is_ok();
            prop_assert!(!accepted, "a mutated token validated: {token}");
            Ok(())
        })?;
    }
}

/// One issuer for every fuzz case (each case has its own runtime, so the
/// server runs on a thread of its own).
async fn issuer_cached() -> &'static Issuer {
    static ISSUER: std::sync::OnceLock<Issuer> = std::sync::OnceLock::new();
    if let Some(issuer) = ISSUER.get() {
        return issuer;
    }
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let issuer = issuer().await;
            sender.send(issuer).unwrap();
            std::future::pending::<()>().await;
        });
    });
    let issuer = receiver.recv().unwrap();
    ISSUER.get_or_init(|| issuer)
}

/// An issuer answering its JWKS with an endless-looking chunked stream (no
/// `Content-Length`): the read stops at [`mcp_auth::JWKS_BYTES_MAX`] and
/// the token is refused for want of keys, not after buffering it all.
#[tokio::test]
async fn an_oversized_key_set_is_refused_at_its_bound() {
    let chunk = axum::body::Bytes::from(vec![b' '; 64 * 1024]);
    let chunks = mcp_auth::JWKS_BYTES_MAX / chunk.len() * 4;
    let app = axum::Router::new().route(
        "/jwks",
        axum::routing::get(move || {
            let chunk = chunk.clone();
            async move {
                let stream = futures_util::stream::iter(
                    (0..chunks).map(move |_| Ok::<_, std::convert::Infallible>(chunk.clone())),
                );
                axum::body::Body::from_stream(stream)
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let issuer = Issuer { url, fetches: Arc::new(AtomicUsize::new(0)) };
    let authenticator = authenticator(&issuer);
    let token = SIGNER.sign_access_token(&claims(&issuer, "alice", AUDIENCE));
    match refusal(&authenticator, &token).await {
        Refusal::Keys(reason) => assert!(reason.contains("longer than"), "{reason}"),
        other => panic!("expected a key-set refusal, got {other:?}"),
    }
}
