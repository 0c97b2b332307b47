//! RFC 9068 JWT access tokens, signed and checked with RS256 only.
//!
//! One crate mints tokens (the fake OIDC provider) and every service that
//! accepts a bearer checks them here, so the rules live in one place. The
//! key design choice is a closed algorithm set: the header's `alg` must be
//! `RS256` and the key must be an RSA key from the issuer's JWKS, which makes
//! `alg: none` and RS/HS confusion impossible by construction rather than by
//! a check somebody may forget. We rejected general JWT libraries because
//! their flexibility (many algorithms, keys of any kind) is exactly the attack
//! surface this crate exists to remove.
//!
//! [`Validation`] describes what a service expects (issuer, audience, type,
//! leeway); [`validate`] returns the claims or a [`TokenError`] naming the
//! first rule that failed, for logs only: clients see a bare 401.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rsa::pkcs1v15::{Signature, SigningKey, VerifyingKey};
use rsa::signature::{SignatureEncoding as _, Signer as _, Verifier as _};
use rsa::traits::PublicKeyParts as _;
use rsa::{BigUint, RsaPrivateKey, RsaPublicKey};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// The largest token we parse; anything longer is refused before decoding.
pub const TOKEN_LENGTH_MAX: usize = 16 * 1024;

/// The claims of an RFC 9068 access token as Nextcloud's `oidc` app issues them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    pub iss: String,
    pub sub: String,
    pub aud: Audience,
    pub exp: i64,
    pub iat: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nbf: Option<i64>,
    pub jti: String,
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub azp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_username: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// `aud` may be one string or a list of strings (RFC 7519 §4.1.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Audience {
    One(String),
    Many(Vec<String>),
}

impl Audience {
    pub fn contains(&self, audience: &str) -> bool {
        match self {
            Audience::One(one) => one == audience,
            Audience::Many(many) => many.iter().any(|one| one == audience),
        }
    }
}

/// An RSA signing key with its key id.
#[derive(Clone)]
pub struct Signer {
    kid: String,
    signing_key: SigningKey<Sha256>,
    public_key: RsaPublicKey,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer").field("kid", &self.kid).finish_non_exhaustive()
    }
}

impl Signer {
    /// Generates a fresh 2048-bit key.
    pub fn generate(kid: impl Into<String>) -> Signer {
        let mut rng = rand::thread_rng();
        let private_key = RsaPrivateKey::new(&mut rng, 2048).expect("RSA key generation");
        Signer::from_private_key(kid, private_key)
    }

    pub fn from_private_key(kid: impl Into<String>, private_key: RsaPrivateKey) -> Signer {
        let public_key = private_key.to_public_key();
        Signer { kid: kid.into(), signing_key: SigningKey::<Sha256>::new(private_key), public_key }
    }

    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The public half as a JWK, as a JWKS endpoint serves it.
    pub fn jwk(&self) -> Jwk {
        Jwk::from_public_key(&self.kid, &self.public_key)
    }

    /// Signs `claims` as an `at+JWT` (RFC 9068 §2.1).
    pub fn sign_access_token(&self, claims: &Claims) -> String {
        self.sign("at+JWT", claims)
    }

    /// Signs any JSON payload with the given `typ` (the ID token uses `JWT`).
    pub fn sign<T: Serialize>(&self, typ: &str, payload: &T) -> String {
        let header = serde_json::json!({ "typ": typ, "alg": "RS256", "kid": self.kid });
        let header = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&header).expect("header"));
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(payload).expect("payload"));
        let signing_input = format!("{header}.{payload}");
        let signature: Signature = self.signing_key.sign(signing_input.as_bytes());
        format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
    }
}

/// A JSON Web Key (RSA public key only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Jwk {
    pub kty: String,
    #[serde(rename = "use", default, skip_serializing_if = "Option::is_none")]
    pub use_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alg: Option<String>,
    #[serde(default)]
    pub kid: Option<String>,
    #[serde(default)]
    pub n: String,
    #[serde(default)]
    pub e: String,
}

impl Jwk {
    pub fn from_public_key(kid: &str, public_key: &RsaPublicKey) -> Jwk {
        Jwk {
            kty: "RSA".to_string(),
            use_: Some("sig".to_string()),
            alg: Some("RS256".to_string()),
            kid: Some(kid.to_string()),
            n: URL_SAFE_NO_PAD.encode(public_key.n().to_bytes_be()),
            e: URL_SAFE_NO_PAD.encode(public_key.e().to_bytes_be()),
        }
    }

    fn public_key(&self) -> Option<RsaPublicKey> {
        if self.kty != "RSA" {
            return None;
        }
        let n = URL_SAFE_NO_PAD.decode(&self.n).ok()?;
        let e = URL_SAFE_NO_PAD.decode(&self.e).ok()?;
        RsaPublicKey::new(BigUint::from_bytes_be(&n), BigUint::from_bytes_be(&e)).ok()
    }
}

/// A JWK set, as served at `jwks_uri`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JwkSet {
    pub keys: Vec<Jwk>,
}

impl JwkSet {
    pub fn find(&self, kid: &str) -> Option<&Jwk> {
        self.keys.iter().find(|jwk| jwk.kid.as_deref() == Some(kid))
    }
}

/// What a service expects of a token.
#[derive(Debug, Clone)]
pub struct Validation {
    /// Compared to `iss` as an exact string, as user_oidc does.
    pub issuer: String,
    /// `aud` must equal or contain this; `None` skips the audience check
    /// (user_oidc with `selfencoded_bearer_validation_audience_check` off).
    pub audience: Option<String>,
    /// Require header `typ` to be `at+jwt` (case-insensitive, RFC 9068 §4).
    pub require_at_jwt: bool,
    /// Seconds of clock skew tolerated on `exp`, `iat` and `nbf`.
    pub leeway_seconds: i64,
}

/// Why a token was refused. For logs: never shown to a client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("token is not a compact JWS")]
    Malformed,
    #[error("token is longer than {TOKEN_LENGTH_MAX} bytes")]
    TooLong,
    #[error("algorithm {0:?} is not accepted (only RS256)")]
    Algorithm(String),
    #[error("header typ {0:?} is not at+jwt")]
    Type(Option<String>),
    #[error("no key {0:?} in the issuer's JWKS")]
    UnknownKey(Option<String>),
    #[error("signature does not verify")]
    Signature,
    #[error("issuer {0:?} is not the expected issuer")]
    Issuer(String),
    #[error("audience does not include the expected audience")]
    Audience,
    #[error("token expired")]
    Expired,
    #[error("token issued in the future")]
    IssuedInFuture,
    #[error("token not valid yet")]
    NotYetValid,
}

#[derive(Deserialize)]
struct Header {
    alg: String,
    #[serde(default)]
    typ: Option<String>,
    #[serde(default)]
    kid: Option<String>,
}

/// The header fields a caller may need before validation (to pick a JWKS).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unverified {
    pub kid: Option<String>,
    pub issuer: Option<String>,
}

/// Reads the key id and issuer without trusting them, to choose which JWKS
/// to fetch. Never use the result for anything but that choice.
pub fn peek(token: &str) -> Result<Unverified, TokenError> {
    let parts = split(token)?;
    let header: Header = decode_json(parts.0)?;
    let payload: serde_json::Value = decode_json(parts.1)?;
    Ok(Unverified {
        kid: header.kid,
        issuer: payload.get("iss").and_then(|iss| iss.as_str()).map(str::to_string),
    })
}

/// Checks `token` against `jwks` and `validation` at time `now` (Unix seconds).
pub fn validate(
    token: &str,
    jwks: &JwkSet,
    validation: &Validation,
    now: i64,
) -> Result<Claims, TokenError> {
    let (header_b64, payload_b64, signature_b64) = split(token)?;
    let header: Header = decode_json(header_b64)?;
    if header.alg != "RS256" {
        return Err(TokenError::Algorithm(header.alg));
    }
    if validation.require_at_jwt {
        let typ = header.typ.as_deref().map(str::to_ascii_lowercase);
        if typ.as_deref() != Some("at+jwt") && typ.as_deref() != Some("application/at+jwt") {
            return Err(TokenError::Type(header.typ));
        }
    }
    let jwk = match &header.kid {
        Some(kid) => jwks.find(kid),
        // A JWKS with a single key may be used without a kid.
        None if jwks.keys.len() == 1 => jwks.keys.first(),
        None => None,
    };
    let public_key =
        jwk.and_then(Jwk::public_key).ok_or_else(|| TokenError::UnknownKey(header.kid.clone()))?;
    let signature_bytes =
        URL_SAFE_NO_PAD.decode(signature_b64).map_err(|_| TokenError::Malformed)?;
    let signature =
        Signature::try_from(signature_bytes.as_slice()).map_err(|_| TokenError::Signature)?;
    let signing_input = &token[..header_b64.len() + 1 + payload_b64.len()];
    VerifyingKey::<Sha256>::new(public_key)
        .verify(signing_input.as_bytes(), &signature)
        .map_err(|_| TokenError::Signature)?;

    let claims: Claims = decode_json(payload_b64)?;
    if claims.iss != validation.issuer {
        return Err(TokenError::Issuer(claims.iss));
    }
    if let Some(audience) = &validation.audience
        && !claims.aud.contains(audience)
    {
        return Err(TokenError::Audience);
    }
    if claims.exp + validation.leeway_seconds < now {
        return Err(TokenError::Expired);
    }
    if claims.iat - validation.leeway_seconds > now {
        return Err(TokenError::IssuedInFuture);
    }
    if let Some(nbf) = claims.nbf
        && nbf - validation.leeway_seconds > now
    {
        return Err(TokenError::NotYetValid);
    }
    Ok(claims)
}

fn split(token: &str) -> Result<(&str, &str, &str), TokenError> {
    if token.len() > TOKEN_LENGTH_MAX {
        return Err(TokenError::TooLong);
    }
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenError::Malformed);
    };
    Ok((header, payload, signature))
}

fn decode_json<T: serde::de::DeserializeOwned>(part: &str) -> Result<T, TokenError> {
    let bytes = URL_SAFE_NO_PAD.decode(part).map_err(|_| TokenError::Malformed)?;
    serde_json::from_slice(&bytes).map_err(|_| TokenError::Malformed)
}

#[cfg(test)]
mod tests;
