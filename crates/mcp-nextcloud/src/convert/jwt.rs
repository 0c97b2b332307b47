//! HS256 JWTs as OnlyOffice's document server checks them: the conversion
//! request's fields, signed with the shared secret and sent in the body's
//! `token` field.
//!
//! Only signing lives here: the document server checks the token, we never
//! receive one. No `exp` is added, because OnlyOffice does not require one
//! and the token dies with its request anyway (the URL inside it is a
//! one-shot loan). The header is fixed (`{"alg":"HS256","typ":"JWT"}`), so
//! there is no algorithm choice to get wrong.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::Mac as _;
use serde_json::Value;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The JOSE header of every token we sign.
const HEADER: &[u8] = br#"{"alg":"HS256","typ":"JWT"}"#;

/// Signs `payload` as an HS256 JWT (base64url without padding).
pub(super) fn sign_hs256(secret: &str, payload: &Value) -> String {
    let header = URL_SAFE_NO_PAD.encode(HEADER);
    let payload =
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(payload).expect("JSON values serialise"));
    let signing_input = format!("{header}.{payload}");
    let mut mac =
        HmacSha256::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(signing_input.as_bytes());
    let signature = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    format!("{signing_input}.{signature}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matches_a_known_vector() {
        // The vector the fake converter's own test pins, computed
        // independently with Python's hmac and base64 modules.
        let token = sign_hs256("demo-converter-secret", &json!({"a": 1}));
        assert_eq!(
            token,
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJhIjoxfQ.21KfL29VVZnh-dSpbhxyueezDozbXv862MSU1kYBs4A"
        );
    }

    #[test]
    fn the_fake_converter_accepts_it_and_only_with_the_same_secret() {
        let payload =
            json!({"async": false, "filetype": "txt", "key": "k", "url": "http://x/lend/t"});
        let token = sign_hs256("secret", &payload);
        let verified = fake_nextcloud::converter::verify_hs256("secret", &token, 0);
        assert_eq!(verified.map(Value::Object), Some(payload));
        assert!(fake_nextcloud::converter::verify_hs256("other", &token, 0).is_none());
        assert!(!token.contains('='), "no padding");
    }
}
