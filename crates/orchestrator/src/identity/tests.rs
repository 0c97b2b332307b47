//! Tests of the signed identity: the documented vectors, each refusal and its
//! status, and a property that any changed byte is refused.

use http::{HeaderMap, HeaderValue, StatusCode};
use proptest::prelude::*;

use super::*;

const SECRET: &[u8] = b"tamebi-unit-test-secret-0123456789abcdef";
const NOW: u64 = 1_767_225_600;
const ROUTE: Route<'static> = Route { method: "POST", path: "/api/chat" };

/// A request as the Nextcloud app would send it; tests edit it, then sign or not.
#[derive(Clone, Debug)]
struct Request {
    uid: String,
    timestamp: String,
    body: Vec<u8>,
    access_token: Option<String>,
    request_id: String,
    nonce: String,
}

impl Request {
    fn new(body: &str) -> Request {
        Request {
            uid: "alice".to_owned(),
            timestamp: NOW.to_string(),
            body: body.as_bytes().to_vec(),
            access_token: Some("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2ln".to_owned()),
            request_id: "aB3dE5fG7hJ9kL1mN3pQ".to_owned(),
            nonce: "n0nce-0123456789abcdef".to_owned(),
        }
    }

    fn signed(&self) -> Signed<'_> {
        Signed {
            uid: &self.uid,
            timestamp: &self.timestamp,
            nonce: &self.nonce,
            method: ROUTE.method,
            path: ROUTE.path,
            body: &self.body,
        }
    }

    fn signature(&self) -> String {
        self.signed().sign(SECRET)
    }

    fn headers(&self, signature: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let mut put = |name: &'static str, value: &str| {
            headers.insert(name, HeaderValue::from_str(value).unwrap());
        };
        put(HEADER_UID, &self.uid);
        put(HEADER_TIMESTAMP, &self.timestamp);
        put(HEADER_SIGNATURE, signature);
        put(HEADER_REQUEST_ID, &self.request_id);
        put(HEADER_NONCE, &self.nonce);
        if let Some(token) = &self.access_token {
            headers.insert("x-tamebi-token-mcp-nextcloud", HeaderValue::from_str(token).unwrap());
        }
        headers
    }
}

fn verifier() -> Verifier {
    Verifier::new(SECRET).unwrap()
}

/// An access token's shape with `claims` as its payload (unsigned: the
/// orchestrator only reads whose it is; the MCP servers verify it).
fn jwt_with(claims: &serde_json::Value) -> String {
    format!("eyJhbGciOiJSUzI1NiJ9.{}.c2ln", base64url(claims.to_string().as_bytes()))
}

fn jwt(sub: &str) -> String {
    jwt_with(&serde_json::json!({"sub": sub, "aud": "mcp-nextcloud"}))
}

/// Unpadded base64url written out by hand rather than with the `base64`
/// crate the code decodes with, so the round trip below checks the decoder
/// against an independent encoder.
fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut text = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            text.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    text
}

/// Signs `request` and verifies it with a fresh verifier at `NOW`.
fn check(request: &Request) -> Result<Identity, IdentityError> {
    verify(&request.headers(&request.signature()), ROUTE, &request.body, &verifier(), NOW)
}

fn check_refused(request: &Request, status: StatusCode, expected: IdentityError) {
    let error = check(request).unwrap_err();
    assert_eq!(error, expected);
    assert_eq!(error.status(), status, "{error}");
}

#[test]
fn the_documented_vectors_are_what_the_code_computes() {
    let doc_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/identity.md");
    let doc = std::fs::read_to_string(doc_path).unwrap();
    let vectors = documented_vectors(&doc);
    assert_eq!(vectors.len(), 3, "docs/identity.md has three vectors");
    let mut empty_bodies = 0;
    for vector in &vectors {
        let field = |name: &str| vector.get(name).unwrap_or_else(|| panic!("no {name}")).as_str();
        let (secret, uid, timestamp, body) =
            (field("secret"), field("uid"), field("timestamp"), field("body"));
        empty_bodies += usize::from(body.is_empty());
        let signed = Signed {
            uid,
            timestamp,
            nonce: field("nonce"),
            method: field("method"),
            path: field("path"),
            body: body.as_bytes(),
        };
        assert_eq!(hex_lower(&Sha256::digest(body)), field("sha256"), "{uid}");
        assert_eq!(signed.canonical(), field("canonical"), "{uid}");
        assert_eq!(signed.sign(secret.as_bytes()), field("signature"));

        let request = Request {
            uid: uid.to_owned(),
            timestamp: timestamp.to_owned(),
            body: body.as_bytes().to_vec(),
            access_token: None,
            request_id: "vector".to_owned(),
            nonce: field("nonce").to_owned(),
        };
        let now = timestamp.parse().unwrap();
        let verifier = Verifier::new(secret).unwrap();
        let route = Route { method: field("method"), path: field("path") };
        let identity =
            verify(&request.headers(field("signature")), route, &request.body, &verifier, now)
                .unwrap();
        assert_eq!(identity.uid, uid);
    }
    assert_eq!(empty_bodies, 1, "one vector pins the hash of an empty body");
}

/// The `text` blocks of docs/identity.md that hold `name: value` lines.
fn documented_vectors(doc: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut vectors = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        if line != "```text" {
            continue;
        }
        let mut vector = std::collections::BTreeMap::new();
        for line in lines.by_ref().take_while(|line| *line != "```") {
            let Some((name, value)) = line.split_once(':') else { continue };
            let value = value.trim_start_matches(' ');
            let value = if name == "canonical" { value.replace("\\n", "\n") } else { value.into() };
            vector.insert(name.to_owned(), value);
        }
        if vector.contains_key("signature") {
            vectors.push(vector);
        }
    }
    vectors
}

#[test]
fn a_signed_request_yields_the_identity() {
    let identity = check(&Request::new(r#"{"messages":[]}"#)).unwrap();
    assert_eq!(identity.uid, "alice");
    assert_eq!(identity.request_id, "aB3dE5fG7hJ9kL1mN3pQ");
    let token = &identity.tokens["mcp-nextcloud"];
    assert_eq!(token.expose(), "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2ln");
    let debug = format!("{identity:?}");
    assert!(!debug.contains("eyJ"), "the token never reaches a log: {debug}");
    assert!(debug.contains("alice"));
}

#[test]
fn the_access_token_is_optional() {
    let mut request = Request::new("");
    request.access_token = None;
    assert!(check(&request).unwrap().tokens.is_empty());
}

#[test]
fn each_audience_has_its_own_token_header() {
    let request = Request::new("");
    let mut headers = request.headers(&request.signature());
    let nextcloud = jwt_with(&serde_json::json!({"sub": "alice", "aud": "nextcloud"}));
    headers.insert("x-tamebi-token-nextcloud", HeaderValue::from_str(&nextcloud).unwrap());
    let identity = verify(&headers, ROUTE, &request.body, &verifier(), NOW).unwrap();
    assert_eq!(identity.tokens.keys().collect::<Vec<_>>(), ["mcp-nextcloud", "nextcloud"]);
    assert_eq!(identity.tokens["nextcloud"].expose(), nextcloud);

    for (name, value) in [
        ("x-tamebi-token-", "t"),
        ("x-tamebi-token-mcp_nextcloud", "t"),
        ("x-tamebi-token-nextcloud", "Bearer t"),
    ] {
        let mut headers = request.headers(&request.signature());
        headers
            .insert(http::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
        let error = verify(&headers, ROUTE, &request.body, &verifier(), NOW).unwrap_err();
        assert_eq!(error.status(), StatusCode::BAD_REQUEST, "{name}: {error}");
    }
    let mut repeated = request.headers(&request.signature());
    repeated.append("x-tamebi-token-mcp-nextcloud", HeaderValue::from_static("again"));
    assert!(verify(&repeated, ROUTE, &request.body, &verifier(), NOW).is_err());
}

#[test]
fn the_app_password_is_optional_once_and_redacted() {
    let request = Request::new("");
    assert_eq!(check(&request).unwrap().app_password, None);
    let mut headers = request.headers(&request.signature());
    headers.insert(HEADER_APP_PASSWORD, HeaderValue::from_static("alice-app-Zq7mK-2xP9d"));
    let identity = verify(&headers, ROUTE, &request.body, &verifier(), NOW).unwrap();
    assert_eq!(
        identity.app_password.as_ref().map(AccessToken::expose),
        Some("alice-app-Zq7mK-2xP9d")
    );
    assert!(!format!("{identity:?}").contains("Zq7mK"), "never in a log line");

    let long = "a".repeat(APP_PASSWORD_BYTES_MAX + 1);
    for value in ["two words", long.as_str()] {
        let mut headers = request.headers(&request.signature());
        headers.insert(HEADER_APP_PASSWORD, HeaderValue::from_str(value).unwrap());
        let error = verify(&headers, ROUTE, &request.body, &verifier(), NOW).unwrap_err();
        assert_eq!(error.status(), StatusCode::BAD_REQUEST, "{value}: {error}");
    }
    let mut repeated = request.headers(&request.signature());
    repeated.insert(HEADER_APP_PASSWORD, HeaderValue::from_static("one"));
    repeated.append(HEADER_APP_PASSWORD, HeaderValue::from_static("two"));
    assert_eq!(
        verify(&repeated, ROUTE, &request.body, &verifier(), NOW).unwrap_err(),
        IdentityError::MalformedHeader {
            header: HEADER_APP_PASSWORD,
            reason: "sent more than once"
        }
    );
}

#[test]
fn missing_headers_are_unauthenticated() {
    let request = Request::new("");
    for name in [HEADER_UID, HEADER_TIMESTAMP, HEADER_SIGNATURE, HEADER_NONCE, HEADER_REQUEST_ID] {
        let mut headers = request.headers(&request.signature());
        headers.remove(name);
        let error = verify(&headers, ROUTE, &request.body, &verifier(), NOW).unwrap_err();
        assert_eq!(error, IdentityError::MissingHeader(name));
        assert_eq!(error.status(), StatusCode::UNAUTHORIZED);
    }
}

#[test]
fn a_repeated_header_is_malformed() {
    let request = Request::new("");
    let mut headers = request.headers(&request.signature());
    headers.append(HEADER_UID, HeaderValue::from_static("bob"));
    let error = verify(&headers, ROUTE, &request.body, &verifier(), NOW).unwrap_err();
    assert_eq!(error.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        error,
        IdentityError::MalformedHeader { header: HEADER_UID, reason: "sent more than once" }
    );
}

#[test]
fn garbled_headers_are_malformed() {
    type Garble = fn(&mut Request);
    let garble: [(&str, Garble); 8] = [
        (HEADER_TIMESTAMP, |r| r.timestamp = "0".to_owned() + &r.timestamp),
        (HEADER_TIMESTAMP, |r| r.timestamp = "+".to_owned() + &r.timestamp),
        (HEADER_TIMESTAMP, |r| r.timestamp = "1767225600.5".to_owned()),
        (HEADER_TIMESTAMP, |r| r.timestamp = "99999999999999999999999".to_owned()),
        (HEADER_REQUEST_ID, |r| r.request_id = "a b".to_owned()),
        (HEADER_NONCE, |r| r.nonce = "short".to_owned()),
        (HEADER_NONCE, |r| r.nonce = "has a space in it, sixteen+".to_owned()),
        (HEADER_TOKEN_PATTERN, |r| r.access_token = Some("Bearer x".to_owned())),
    ];
    for (header, garble) in garble {
        let mut request = Request::new("");
        garble(&mut request);
        let error = check(&request).unwrap_err();
        assert!(
            matches!(error, IdentityError::MalformedHeader { header: h, .. } if h == header),
            "{header}: {error:?}"
        );
        assert_eq!(error.status(), StatusCode::BAD_REQUEST);
    }
}

#[test]
fn a_signature_must_be_64_lowercase_hex_digits() {
    let request = Request::new("");
    let good = request.signature();
    for signature in
        [good.to_uppercase(), good[..62].to_owned(), format!("{good}00"), "zz".repeat(32)]
    {
        let error = verify(&request.headers(&signature), ROUTE, &request.body, &verifier(), NOW)
            .unwrap_err();
        assert_eq!(
            error,
            IdentityError::MalformedHeader {
                header: HEADER_SIGNATURE,
                reason: "not 64 lowercase hex digits"
            }
        );
    }
}

#[test]
fn uids_follow_nextclouds_rule() {
    for uid in ["alice", "Bob Stone", "jane.o'neil@example.com", "a-b_c", "...", &"x".repeat(64)] {
        let mut request = Request::new("");
        request.uid = uid.to_owned();
        request.access_token = Some(jwt(uid));
        assert!(check(&request).is_ok(), "{uid:?} is a Nextcloud uid");
    }
    let refused = [
        ("", "it is empty"),
        ("   ", "it is empty"),
        (" alice", "it starts or ends with a space"),
        ("alice ", "it starts or ends with a space"),
        (".", "it is a dot path"),
        ("..", "it is a dot path"),
        ("alice/bob", "it has a character other than letters, digits, space and _.@-'"),
        ("alice\tbob", "it has a character other than letters, digits, space and _.@-'"),
        ("alice\"", "it has a character other than letters, digits, space and _.@-'"),
    ];
    for (uid, reason) in refused {
        let mut request = Request::new("");
        request.uid = uid.to_owned();
        check_refused(&request, StatusCode::BAD_REQUEST, IdentityError::InvalidUid { reason });
    }
    let mut request = Request::new("");
    request.uid = "x".repeat(65);
    let reason = "it is longer than 64 bytes";
    check_refused(&request, StatusCode::BAD_REQUEST, IdentityError::InvalidUid { reason });
}

#[test]
fn a_uid_that_is_not_ascii_is_refused() {
    let request = Request::new("");
    let mut headers = request.headers(&request.signature());
    headers.insert(HEADER_UID, HeaderValue::from_bytes("zoë".as_bytes()).unwrap());
    let error = verify(&headers, ROUTE, &request.body, &verifier(), NOW).unwrap_err();
    assert_eq!(error.status(), StatusCode::BAD_REQUEST);
}

#[test]
fn the_timestamp_window_is_sixty_seconds_either_way() {
    assert_eq!(TIMESTAMP_WINDOW_S, 60);
    for (offset, accepted) in [(-61, false), (-60, true), (0, true), (60, true), (61, false)] {
        let mut request = Request::new("");
        request.timestamp = NOW.checked_add_signed(offset).unwrap().to_string();
        match check(&request) {
            Ok(_) => assert!(accepted, "{offset}"),
            Err(error) => {
                assert!(!accepted, "{offset}");
                assert_eq!(error, IdentityError::StaleTimestamp { skew_s: 61 });
                assert_eq!(error.status(), StatusCode::UNAUTHORIZED);
                assert!(error.to_string().contains("61 s away"), "{error}");
            }
        }
    }
}

#[test]
fn a_wrong_signature_is_refused_without_revealing_the_right_one() {
    let request = Request::new(r#"{"a":1}"#);
    let good = request.signature();
    let wrong = request.signed().sign(b"another-secret-of-at-least-32-bytes!!");
    let error =
        verify(&request.headers(&wrong), ROUTE, &request.body, &verifier(), NOW).unwrap_err();
    assert_eq!(error, IdentityError::BadSignature);
    assert_eq!(error.status(), StatusCode::UNAUTHORIZED);
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains(&good), "{shown}");
    assert!(!shown.contains(std::str::from_utf8(SECRET).unwrap()), "{shown}");
}

#[test]
fn the_signature_binds_the_route_and_two_alike_requests_differ_by_nonce() {
    let verifier = verifier();
    let request = Request::new("");
    let headers = request.headers(&request.signature());
    let elsewhere = Route { method: "DELETE", path: "/api/conversations/c1" };
    let moved = verify(&headers, elsewhere, &request.body, &verifier, NOW).unwrap_err();
    assert_eq!(moved, IdentityError::BadSignature, "a signature is for one route");
    assert!(verify(&headers, ROUTE, &request.body, &verifier, NOW).is_ok());
    let mut twin = request.clone();
    twin.nonce = "another-nonce-0123456".to_owned();
    let twin_headers = twin.headers(&twin.signature());
    assert!(
        verify(&twin_headers, ROUTE, &twin.body, &verifier, NOW).is_ok(),
        "the same request in the same second with its own nonce is not a replay"
    );
}

#[test]
fn a_signed_request_is_accepted_once() {
    let verifier = verifier();
    let request = Request::new(r#"{"messages":[]}"#);
    let headers = request.headers(&request.signature());
    assert!(verify(&headers, ROUTE, &request.body, &verifier, NOW).is_ok());
    let again = verify(&headers, ROUTE, &request.body, &verifier, NOW + 30).unwrap_err();
    assert_eq!(again, IdentityError::Replayed);
    assert_eq!(again.status(), StatusCode::UNAUTHORIZED);
    // Past the window the timestamp check refuses it, whatever the replay set remembers.
    let later = verify(&headers, ROUTE, &request.body, &verifier, NOW + 61).unwrap_err();
    assert_eq!(later, IdentityError::StaleTimestamp { skew_s: 61 });
}

#[test]
fn a_refused_request_does_not_use_up_its_signature() {
    let verifier = verifier();
    let request = Request::new("");
    let headers = request.headers(&request.signature());
    assert!(verify(&headers, ROUTE, &request.body, &verifier, NOW + 61).is_err());
    assert!(verify(&headers, ROUTE, &request.body, &verifier, NOW).is_ok());
}

#[test]
fn a_full_replay_set_refuses_with_503() {
    let verifier = Verifier::with_replay_entries_max(SECRET, 1).unwrap();
    let first = Request::new("");
    assert!(verify(&first.headers(&first.signature()), ROUTE, &first.body, &verifier, NOW).is_ok());
    let mut second = Request::new("");
    second.timestamp = (NOW + 1).to_string();
    let headers = second.headers(&second.signature());
    let error = verify(&headers, ROUTE, &second.body, &verifier, NOW).unwrap_err();
    assert_eq!(error, IdentityError::ReplayCapacity);
    assert_eq!(error.status(), StatusCode::SERVICE_UNAVAILABLE);
    // Once the first entry leaves the window the second request gets in.
    assert!(verify(&headers, ROUTE, &second.body, &verifier, NOW + 61).is_ok());
}

#[test]
fn a_body_that_names_a_uid_is_refused_at_any_depth() {
    for body in [
        r#"{"uid":"bob"}"#,
        r#"{"messages":[{"parts":[{"metadata":{"uid":"bob"}}]}]}"#,
        r#"[[[{"x":{"uid":null}}]]]"#,
    ] {
        check_refused(&Request::new(body), StatusCode::BAD_REQUEST, IdentityError::BodyNamesUid);
    }
    for body in [r#"{"text":"uid"}"#, r#"["uid"]"#, r#"{"uids":1,"UID":2}"#, "", "null"] {
        assert!(check(&Request::new(body)).is_ok(), "{body}");
    }
}

#[test]
fn a_body_that_is_not_json_is_refused() {
    for body in ["uid=bob", "{", &format!("{}{}", "[".repeat(200), "]".repeat(200))] {
        check_refused(&Request::new(body), StatusCode::BAD_REQUEST, IdentityError::BodyNotJson);
    }
}

#[test]
fn every_token_must_be_the_signed_users() {
    // Signed as bob, carrying alice's token: the request that ran bob's
    // turn on alice's files.
    let mut request = Request::new(r#"{"messages":[]}"#);
    request.uid = "bob".to_owned();
    request.access_token = Some(jwt("alice"));
    let audience = "mcp-nextcloud".to_owned();
    check_refused(&request, StatusCode::FORBIDDEN, IdentityError::TokenOfAnotherUser { audience });
    request.access_token = Some(jwt("bob"));
    assert_eq!(check(&request).unwrap().uid, "bob");

    // One foreign token among the user's own is enough to refuse; the
    // subject is compared exactly (Alice is not alice).
    for foreign in [jwt("alice"), jwt("Bob"), jwt("bob ")] {
        let mut headers = request.headers(&request.signature());
        headers.insert("x-tamebi-token-nextcloud", HeaderValue::from_str(&foreign).unwrap());
        let error = verify(&headers, ROUTE, &request.body, &verifier(), NOW).unwrap_err();
        let audience = "nextcloud".to_owned();
        assert_eq!(error, IdentityError::TokenOfAnotherUser { audience }, "{foreign}");
        assert_eq!(error.status(), StatusCode::FORBIDDEN);
        assert!(!error.to_string().contains("alice"), "names no one: {error}");
    }
}

#[test]
fn a_token_that_names_no_user_is_refused() {
    let unreadable = [
        "opaque-token".to_owned(),
        "two.parts".to_owned(),
        "a.b.c.d".to_owned(),
        format!(".{}.c2ln", base64url(br#"{"sub":"alice"}"#)),
        format!("eyJhbGciOiJSUzI1NiJ9.{}.", base64url(br#"{"sub":"alice"}"#)),
        format!("eyJhbGciOiJSUzI1NiJ9.{}=.c2ln", base64url(br#"{"sub":"alice"}"#)),
        format!("eyJhbGciOiJSUzI1NiJ9.{}.c2ln", base64url(b"not json")),
        jwt_with(&serde_json::json!({"aud": "mcp-nextcloud"})),
        jwt_with(&serde_json::json!({"sub": ""})),
        jwt_with(&serde_json::json!({"sub": 7})),
        jwt_with(&serde_json::json!(["alice"])),
        // Standard base64 (`+`, `/`) is not base64url.
        format!(
            "eyJhbGciOiJSUzI1NiJ9.{}.c2ln",
            base64url(br#"{"sub":"alice","x":"??>"}"#).replace('_', "/")
        ),
    ];
    for token in unreadable {
        let mut request = Request::new("");
        request.access_token = Some(token.clone());
        let audience = "mcp-nextcloud".to_owned();
        check_refused(
            &request,
            StatusCode::UNAUTHORIZED,
            IdentityError::TokenUnreadable { audience },
        );
    }
    let padded_claims = jwt_with(&serde_json::json!({"sub": "alice", "n": 1}));
    let mut request = Request::new("");
    request.access_token = Some(padded_claims);
    assert!(check(&request).is_ok(), "every payload length decodes");
}

#[test]
fn base64url_decodes_what_it_should_and_nothing_else() {
    for bytes in [&b""[..], b"f", b"fo", b"foo", b"foob", b"fooba", b"foobar", &[0xff, 0xfe, 0xfd]]
    {
        assert_eq!(base64url_decode(&base64url(bytes)).as_deref(), Some(bytes));
    }
    for text in ["Zg=", "Z", "Zh", "Zm9vY", "Zm+v", "Zm/v", "Zm9v\n"] {
        assert_eq!(base64url_decode(text), None, "{text}");
    }
}

#[test]
fn a_short_secret_is_refused() {
    assert!(Verifier::new(vec![7; SECRET_BYTES_MIN]).is_ok());
    assert_eq!(Verifier::new(vec![7; SECRET_BYTES_MIN - 1]).unwrap_err(), SecretTooShort);
    let debug = format!("{:?}", verifier());
    assert!(!debug.contains("tamebi-unit-test"), "{debug}");
}

fn arb_request() -> impl Strategy<Value = Request> {
    let uid = "[a-zA-Z0-9][a-zA-Z0-9 _.@'-]{0,30}[a-zA-Z0-9]";
    let text = "[ -~éàü]{0,40}";
    (uid, -60i64..=60, text).prop_map(|(uid, offset, text)| {
        let body = serde_json::json!({"messages": [{"text": text}]}).to_string();
        let mut request = Request::new(&body);
        request.access_token = Some(jwt(&uid));
        request.uid = uid;
        request.timestamp = NOW.checked_add_signed(offset).unwrap().to_string();
        request
    })
}

const PART_NAMES: [&str; 4] = ["uid", "timestamp", "body", "signature"];

proptest! {
    #[test]
    fn any_changed_byte_is_refused(
        request in arb_request(),
        part in 0..PART_NAMES.len(),
        position in any::<prop::sample::Index>(),
        replacement in any::<u8>(),
    ) {
        let signature = request.signature();
        let headers = request.headers(&signature);
        prop_assert!(
            verify(&headers, ROUTE, &request.body, &verifier(), NOW).is_ok(),
            "the unchanged request is accepted"
        );

        let mut parts = [
            request.uid.clone().into_bytes(),
            request.timestamp.clone().into_bytes(),
            request.body.clone(),
            signature.into_bytes(),
        ];
        let bytes = &mut parts[part];
        let index = position.index(bytes.len());
        prop_assume!(bytes[index] != replacement);
        bytes[index] = replacement;

        let mut headers = headers;
        for (name, value) in [(HEADER_UID, &parts[0]), (HEADER_TIMESTAMP, &parts[1]), (HEADER_SIGNATURE, &parts[3])] {
            // A byte a header cannot carry never reaches `verify`: HTTP refuses it.
            let Ok(value) = HeaderValue::from_bytes(value) else { return Ok(()) };
            headers.insert(name, value);
        }
        let result = verify(&headers, ROUTE, &parts[2], &verifier(), NOW);
        prop_assert!(result.is_err(), "{} changed at byte {index} was accepted", PART_NAMES[part]);
    }
}

/// The vectors the Nextcloud app's PHP tests run too
/// (`docs/vectors/identity.json`): signatures, which bodies name a uid, and
/// which uids Nextcloud accepts.
#[test]
fn the_shared_vectors_hold() {
    let vectors: serde_json::Value =
        serde_json::from_str(include_str!("../../../../docs/vectors/identity.json")).unwrap();
    let secret = vectors["secret"].as_str().unwrap().as_bytes();
    let text = |value: &serde_json::Value, key: &str| value[key].as_str().unwrap().to_owned();
    for vector in vectors["signatures"].as_array().unwrap() {
        let (uid, timestamp, body) =
            (text(vector, "uid"), text(vector, "timestamp"), text(vector, "body"));
        let (nonce, method, path) =
            (text(vector, "nonce"), text(vector, "method"), text(vector, "path"));
        let signed = Signed {
            uid: &uid,
            timestamp: &timestamp,
            nonce: &nonce,
            method: &method,
            path: &path,
            body: body.as_bytes(),
        };
        assert_eq!(signed.canonical(), text(vector, "canonical"));
        assert_eq!(signed.sign(secret), text(vector, "signature"));
    }
    for vector in vectors["bodies"].as_array().unwrap() {
        let body = text(vector, "body");
        let names_uid = vector["namesUid"].as_bool().unwrap();
        assert_eq!(
            check_body(body.as_bytes()) == Err(IdentityError::BodyNamesUid),
            names_uid,
            "{body}"
        );
    }
    for vector in vectors["uids"].as_array().unwrap() {
        let uid = text(vector, "uid");
        assert_eq!(check_uid(&uid).is_ok(), vector["valid"].as_bool().unwrap(), "{uid:?}");
    }
}
