//! Bounded fuzzing of what the orchestrator parses before anything else:
//! the identity headers (`identity::verify`) and the chat post
//! (`ui_stream::parse_chat_post`). Complements the unit property tests
//! (`identity/tests.rs`: any changed byte of a signed request is refused;
//! `ui_stream/tests.rs`: arbitrary bytes and JSON posts) with: random
//! header sets that must never be accepted and must map to 400/401 only,
//! signed random JSON bodies checked against an independent oracle of the
//! body-uid rule, and valid posts mutated byte by byte. Cases:
//! `PROPTEST_CASES` (default 256); see docs/reliability.md, "Fuzzing".

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use orchestrator::identity::{self, IdentityError, Route, Signed, Verifier};
use orchestrator::ui_stream::parse_chat_post;
use proptest::prelude::*;
use serde_json::Value;

const SECRET: &[u8] = b"orchestrator-fuzz-secret-0123456789abcdef";
const NOW: u64 = 1_767_225_600;
const ROUTE: Route<'static> = Route { method: "POST", path: "/api/chat" };

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(256);
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

fn verifier() -> Verifier {
    Verifier::new(SECRET.to_vec()).unwrap()
}

const NAMES: [&str; 10] = [
    identity::HEADER_UID,
    identity::HEADER_TIMESTAMP,
    identity::HEADER_NONCE,
    identity::HEADER_SIGNATURE,
    identity::HEADER_REQUEST_ID,
    "x-tamebi-token-mcp-nextcloud",
    "x-tamebi-token-nextcloud",
    "x-tamebi-token-",
    "x-tamebi-token-a_b",
    "x-tamebi-display-name",
];

/// Header values as a proxy might mangle them: the right shapes, near
/// misses, and noise.
fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(b"alice".to_vec()),
        Just(NOW.to_string().into_bytes()),
        Just(b"0123456789abcdef0123".to_vec()),
        Just("0".repeat(64).into_bytes()),
        Just(b"req-1".to_vec()),
        "[ -~]{0,80}".prop_map(String::into_bytes),
        proptest::collection::vec(any::<u8>(), 0..80),
        "[0-9a-f]{60,70}".prop_map(String::into_bytes),
    ]
}

/// An independent statement of the body rule: parse, then look for a key
/// spelled exactly `uid` anywhere.
fn names_uid(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.contains_key("uid") || map.values().any(names_uid),
        Value::Array(items) => items.iter().any(names_uid),
        _ => false,
    }
}

fn arb_json() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("uid".to_string()),
        Just("UID".to_string()),
        Just("Uid".to_string()),
        Just("uid ".to_string()),
        Just("id".to_string()),
        Just("text".to_string()),
        "[a-z]{1,5}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::String),
        Just(Value::String("uid".into())),
    ];
    leaf.prop_recursive(5, 48, 6, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((key.clone(), inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

fn signed_headers(uid: &str, nonce: &str, body: &[u8]) -> HeaderMap {
    let timestamp = NOW.to_string();
    let signature =
        Signed { uid, timestamp: &timestamp, nonce, method: ROUTE.method, path: ROUTE.path, body }
            .sign(SECRET);
    let mut headers = HeaderMap::new();
    for (name, value) in [
        (identity::HEADER_UID, uid.to_string()),
        (identity::HEADER_TIMESTAMP, timestamp),
        (identity::HEADER_NONCE, nonce.to_string()),
        (identity::HEADER_SIGNATURE, signature),
        (identity::HEADER_REQUEST_ID, "req-1".to_string()),
    ] {
        headers.insert(name, HeaderValue::from_str(&value).unwrap());
    }
    headers
}

proptest! {
    #![proptest_config(config())]

    /// Random header sets (names repeated, values mangled): never accepted
    /// without the secret, never a panic, and always a 400 or a 401.
    #[test]
    fn random_identity_headers_are_refused_with_400_or_401(
        pairs in proptest::collection::vec((0..NAMES.len(), value()), 0..14),
        body in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut headers = HeaderMap::new();
        for (name, value) in &pairs {
            let Ok(value) = HeaderValue::from_bytes(value) else { continue };
            headers.append(HeaderName::from_static(NAMES[*name]), value);
        }
        let result = identity::verify(&headers, ROUTE, &body, &verifier(), NOW);
        let Err(error) = result else {
            return Err(TestCaseError::fail("a request without the secret was accepted"));
        };
        prop_assert!(
            matches!(error.status(), StatusCode::BAD_REQUEST | StatusCode::UNAUTHORIZED),
            "{error:?} answered {}", error.status()
        );
    }

    /// A correctly signed body is refused exactly when it is not JSON or
    /// names a `uid` key at any depth, and the signature is then spent.
    #[test]
    fn signed_bodies_follow_the_uid_rule(value in arb_json(), nonce in "[A-Za-z0-9_-]{16,64}") {
        let body = serde_json::to_vec(&value).unwrap();
        let verifier = verifier();
        let headers = signed_headers("alice", &nonce, &body);
        let result = identity::verify(&headers, ROUTE, &body, &verifier, NOW);
        if names_uid(&value) {
            prop_assert!(matches!(result, Err(IdentityError::BodyNamesUid)), "{value}: {result:?}");
        } else {
            prop_assert_eq!(result.map(|identity| identity.uid).ok(), Some("alice".to_string()));
        }
        let again = identity::verify(&headers, ROUTE, &body, &verifier, NOW);
        prop_assert!(matches!(again, Err(IdentityError::Replayed)), "replay: {again:?}");
    }

    /// Signed bytes that are not JSON are a 400, never a panic.
    #[test]
    fn signed_non_json_bodies_are_400(body in proptest::collection::vec(any::<u8>(), 1..256)) {
        prop_assume!(serde_json::from_slice::<Value>(&body).is_err());
        let headers = signed_headers("alice", "0123456789abcdef", &body);
        let result = identity::verify(&headers, ROUTE, &body, &verifier(), NOW);
        prop_assert!(matches!(result, Err(IdentityError::BodyNotJson)), "{result:?}");
    }

    /// A valid chat post damaged byte by byte: parsed or refused, never a
    /// panic, and a refusal's text is a sentence, not a parser's message.
    #[test]
    fn mutated_chat_posts_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in proptest::option::of(any::<prop::sample::Index>()),
        approvals in any::<bool>(),
    ) {
        let post = if approvals {
            r#"{"id":"chat-1","trigger":"submit-message","messageId":"m-2","message":{"id":"m-2","role":"assistant","parts":[{"type":"dynamic-tool","toolName":"files_write","toolCallId":"call-1","state":"approval-responded","input":{"path":"a.md"},"approval":{"id":"appr-1","approved":true,"reason":"ok"}}]}}"#
        } else {
            r#"{"id":"chat-1","trigger":"submit-message","message":{"id":"m-1","role":"user","parts":[{"type":"text","text":"Où est le rapport ?"}]}}"#
        };
        prop_assert!(parse_chat_post(post.as_bytes()).is_ok(), "the sample is valid");
        let mut bytes = post.as_bytes().to_vec();
        for (at, byte) in &edits {
            let at = at.index(bytes.len());
            bytes[at] = *byte;
        }
        if let Some(cut) = cut {
            bytes.truncate(cut.index(bytes.len()));
        }
        if let Err(error) = parse_chat_post(&bytes) {
            let message = error.to_string();
            prop_assert!(!message.is_empty() && message.ends_with('.'), "{message:?}");
        }
    }
}
