//! The signed identity as the Tamebi app produces it (`docs/identity.md`):
//! the canonical string, its HMAC-SHA256, and the rule that a body naming a
//! `uid` is refused before anything is signed.
//!
//! This is a second implementation of what the orchestrator checks, written
//! from the document rather than shared with it: the fakes must not depend on
//! the services (the crate graph test forbids it), and two implementations
//! that agree on the shared vectors (`docs/vectors/identity.json`) are the
//! evidence that the document is precise enough for the PHP app to follow.

use hmac::Mac as _;
use sha2::{Digest as _, Sha256};

type HmacSha256 = hmac::Hmac<Sha256>;

/// What one request's signature covers.
pub struct Signed<'a> {
    pub uid: &'a str,
    pub timestamp: &'a str,
    /// Fresh per request ([`nonce`]).
    pub nonce: &'a str,
    /// Upper case: `POST`.
    pub method: &'a str,
    /// The orchestrator route's path, no query: `/api/chat`.
    pub path: &'a str,
    pub body: &'a [u8],
}

impl Signed<'_> {
    /// `uid \n timestamp \n nonce \n METHOD \n path \n lowercase_hex(sha256(body))`.
    pub fn canonical(&self) -> String {
        for part in [self.uid, self.timestamp, self.nonce, self.method, self.path] {
            assert!(!part.contains('\n'), "no signed field contains a newline");
        }
        let Signed { uid, timestamp, nonce, method, path, body } = self;
        format!(
            "{uid}\n{timestamp}\n{nonce}\n{method}\n{path}\n{}",
            hex_lower(&Sha256::digest(body))
        )
    }

    /// The `X-Tamebi-Signature` value: lowercase hex HMAC-SHA256 of the
    /// canonical string under the shared secret.
    pub fn signature(&self, secret: &[u8]) -> String {
        let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC takes keys of any length");
        mac.update(self.canonical().as_bytes());
        hex_lower(&mac.finalize().into_bytes())
    }
}

/// A fresh nonce: 16 random bytes as 32 hex digits.
pub fn nonce() -> String {
    let bytes: [u8; 16] = rand::random();
    hex_lower(&bytes)
}

/// Whether a body is JSON with a `uid` key at any depth. A body that is not
/// JSON names nobody: it is forwarded and the orchestrator refuses it.
pub fn body_names_uid(body: &[u8]) -> bool {
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(value) => json_names_uid(&value),
        Err(_) => false,
    }
}

fn json_names_uid(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Object(object) => {
            object.contains_key("uid") || object.values().any(json_names_uid)
        }
        serde_json::Value::Array(items) => items.iter().any(json_names_uid),
        _ => false,
    }
}

pub(crate) fn hex_lower(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vectors() -> serde_json::Value {
        serde_json::from_str(include_str!("../../../../docs/vectors/identity.json")).unwrap()
    }

    fn text(value: &serde_json::Value, key: &str) -> String {
        value[key].as_str().unwrap_or_else(|| panic!("vector field {key}")).to_string()
    }

    #[test]
    fn every_signature_vector_is_what_the_app_computes() {
        let vectors = vectors();
        let secret = text(&vectors, "secret");
        let signatures = vectors["signatures"].as_array().unwrap();
        assert_eq!(signatures.len(), 3, "the shared vectors hold three signatures");
        for vector in signatures {
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
            assert_eq!(hex_lower(&Sha256::digest(body.as_bytes())), text(vector, "sha256"));
            assert_eq!(signed.canonical(), text(vector, "canonical"));
            assert_eq!(
                signed.signature(secret.as_bytes()),
                text(vector, "signature"),
                "{}",
                text(vector, "name")
            );
        }
    }

    #[test]
    fn every_body_vector_is_judged_as_documented() {
        let vectors = vectors();
        let bodies = vectors["bodies"].as_array().unwrap();
        assert!(bodies.iter().any(|vector| vector["namesUid"] == true), "a refused body");
        assert!(bodies.iter().any(|vector| vector["namesUid"] == false), "an accepted body");
        for vector in bodies {
            let body = text(vector, "body");
            assert_eq!(
                body_names_uid(body.as_bytes()),
                vector["namesUid"].as_bool().unwrap(),
                "{body}"
            );
        }
    }

    #[test]
    fn a_body_that_is_not_json_names_nobody() {
        assert!(!body_names_uid(b"uid=bob"));
        assert!(!body_names_uid(b"{\"uid\""));
    }
}
