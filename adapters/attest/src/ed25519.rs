//! Ed25519 author keys: the pinned per-publisher scheme of private artifacts.
//!
//! A key's id is the first 16 characters of base64(sha256(raw 32-byte public key)); install checks
//! that the key the registry pinned derives the id the signature names before verifying with it.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::{Signer as _, SigningKey, VerifyingKey};
use rand::TryRngCore as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use ed25519_dalek::{SigningKey as AuthorSigningKey, VerifyingKey as AuthorPublicKey};

/// The `algorithm` value of an Ed25519 signature.
pub const ALGORITHM: &str = "ed25519";
/// Length of a public key id.
const KEY_ID_LEN: usize = 16;

/// A fresh signing key from the operating system's random source.
pub fn generate() -> SigningKey {
    // Seeded through the workspace's rand (0.9) so ed25519-dalek needs no rand_core of its own.
    let mut seed = [0u8; 32];
    rand::rngs::OsRng
        .try_fill_bytes(&mut seed)
        .expect("the OS random source is available");
    SigningKey::from_bytes(&seed)
}

/// First 16 characters of base64(sha256(public key bytes)).
pub fn public_key_id(key: &VerifyingKey) -> String {
    key_id_of_bytes(key.as_bytes())
}

/// The key id of raw public-key bytes, whatever they hold (the registry derives it before it
/// knows whether the bytes are a valid key).
pub fn key_id_of_bytes(public_key: &[u8]) -> String {
    let encoded = STANDARD.encode(Sha256::digest(public_key));
    encoded[..KEY_ID_LEN].to_owned()
}

/// The base64 of the raw 32-byte public key (the wire's `publicKey` / `authorPublicKey`).
pub fn encode_public_key(key: &VerifyingKey) -> String {
    STANDARD.encode(key.as_bytes())
}

/// Parses a base64 raw 32-byte public key.
pub fn decode_public_key(base64: &str) -> Result<VerifyingKey, Ed25519Error> {
    let bytes = STANDARD
        .decode(base64.trim())
        .map_err(|_| Ed25519Error::PublicKeyEncoding)?;
    let raw: [u8; 32] = bytes.try_into().map_err(|_| Ed25519Error::PublicKeyLength)?;
    VerifyingKey::from_bytes(&raw).map_err(|_| Ed25519Error::PublicKeyInvalid)
}

/// Signs `payload`; the base64 of the 64-byte signature (the wire's `signature.value`).
pub fn sign(key: &SigningKey, payload: &[u8]) -> String {
    STANDARD.encode(key.sign(payload).to_bytes())
}

/// Verifies a base64 signature over `payload` (strict: no malleable or small-order forms).
pub fn verify(public_key: &VerifyingKey, payload: &[u8], signature: &str) -> Result<(), Ed25519Error> {
    let bytes = STANDARD
        .decode(signature.trim())
        .map_err(|_| Ed25519Error::SignatureEncoding)?;
    verify_bytes(public_key, payload, &bytes)
}

/// Verifies a raw 64-byte signature over `payload`.
pub fn verify_bytes(public_key: &VerifyingKey, payload: &[u8], signature: &[u8]) -> Result<(), Ed25519Error> {
    let signature = ed25519_dalek::Signature::from_slice(signature).map_err(|_| Ed25519Error::SignatureLength)?;
    public_key
        .verify_strict(payload, &signature)
        .map_err(|_| Ed25519Error::BadSignature)
}

/// Verifies as install does: the pinned key must derive `expected_key_id`, then the signature.
pub fn verify_with_key_id(
    public_key: &VerifyingKey,
    expected_key_id: &str,
    payload: &[u8],
    signature: &str,
) -> Result<(), Ed25519Error> {
    let derived = public_key_id(public_key);
    if derived != expected_key_id {
        return Err(Ed25519Error::KeyIdMismatch {
            derived,
            expected: expected_key_id.to_owned(),
        });
    }
    verify(public_key, payload, signature)
}

/// The private key file written by `svc author-key generate` (JSON, mode 0600).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct KeyFile {
    pub algorithm: String,
    /// base64 of the 32-byte secret seed.
    pub private_key: String,
    pub public_key: String,
    pub public_key_id: String,
}

impl KeyFile {
    pub fn from_signing_key(key: &SigningKey) -> Self {
        let public = key.verifying_key();
        Self {
            algorithm: ALGORITHM.to_owned(),
            private_key: STANDARD.encode(key.to_bytes()),
            public_key: encode_public_key(&public),
            public_key_id: public_key_id(&public),
        }
    }

    /// The signing key, checked against the public half the file records.
    pub fn signing_key(&self) -> Result<SigningKey, Ed25519Error> {
        if self.algorithm != ALGORITHM {
            return Err(Ed25519Error::KeyFile(format!(
                "algorithm `{}` is not ed25519",
                self.algorithm
            )));
        }
        let bytes = STANDARD
            .decode(self.private_key.trim())
            .map_err(|_| Ed25519Error::KeyFile("privateKey is not base64".into()))?;
        let seed: [u8; 32] = bytes
            .try_into()
            .map_err(|_| Ed25519Error::KeyFile("privateKey is not 32 bytes".into()))?;
        let key = SigningKey::from_bytes(&seed);
        if encode_public_key(&key.verifying_key()) != self.public_key {
            return Err(Ed25519Error::KeyFile("publicKey does not belong to privateKey".into()));
        }
        Ok(key)
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Ed25519Error {
    #[error("the public key is not base64")]
    PublicKeyEncoding,
    #[error("the public key is not 32 bytes")]
    PublicKeyLength,
    #[error("the public key is not a valid Ed25519 point")]
    PublicKeyInvalid,
    #[error("the signature is not base64")]
    SignatureEncoding,
    #[error("the signature is not 64 bytes")]
    SignatureLength,
    #[error("the Ed25519 signature does not match the payload and the public key")]
    BadSignature,
    #[error("the pinned public key derives key id {derived}, but the signature names {expected}")]
    KeyIdMismatch { derived: String, expected: String },
    #[error("invalid key file: {0}")]
    KeyFile(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_id_is_16_characters_of_base64_sha256() {
        // RFC 8032 test 1's public key; the id computed independently (Python hashlib + base64).
        let raw = hex_literal("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
        let key = VerifyingKey::from_bytes(&raw).unwrap();
        assert_eq!(public_key_id(&key), "If4x36FUomFia/hU");
    }

    #[test]
    fn a_signature_verifies_and_a_changed_byte_does_not() {
        let key = generate();
        let signature = sign(&key, b"payload");
        verify(&key.verifying_key(), b"payload", &signature).unwrap();
        assert_eq!(
            verify(&key.verifying_key(), b"payloae", &signature),
            Err(Ed25519Error::BadSignature)
        );
        let other = generate();
        assert_eq!(
            verify(&other.verifying_key(), b"payload", &signature),
            Err(Ed25519Error::BadSignature)
        );
    }

    #[test]
    fn malformed_signatures_and_keys_are_named() {
        let key = generate();
        assert_eq!(
            verify(&key.verifying_key(), b"p", "***"),
            Err(Ed25519Error::SignatureEncoding)
        );
        assert_eq!(
            verify(&key.verifying_key(), b"p", &STANDARD.encode([0u8; 10])),
            Err(Ed25519Error::SignatureLength)
        );
        assert_eq!(decode_public_key("***").unwrap_err(), Ed25519Error::PublicKeyEncoding);
        assert_eq!(
            decode_public_key(&STANDARD.encode([1u8; 31])).unwrap_err(),
            Ed25519Error::PublicKeyLength
        );
    }

    #[test]
    fn a_key_id_that_the_pinned_key_does_not_derive_is_refused_before_verifying() {
        let key = generate();
        let signature = sign(&key, b"p");
        let err = verify_with_key_id(&key.verifying_key(), "AAAAAAAAAAAAAAAA", b"p", &signature).unwrap_err();
        assert!(matches!(err, Ed25519Error::KeyIdMismatch { .. }), "{err:?}");
        verify_with_key_id(
            &key.verifying_key(),
            &public_key_id(&key.verifying_key()),
            b"p",
            &signature,
        )
        .unwrap();
    }

    #[test]
    fn a_key_file_round_trips_and_refuses_a_foreign_public_half() {
        let key = generate();
        let file = KeyFile::from_signing_key(&key);
        assert_eq!(file.signing_key().unwrap().to_bytes(), key.to_bytes());
        assert_eq!(decode_public_key(&file.public_key).unwrap(), key.verifying_key());
        let mut forged = file.clone();
        forged.public_key = encode_public_key(&generate().verifying_key());
        assert_eq!(
            forged.signing_key().unwrap_err(),
            Ed25519Error::KeyFile("publicKey does not belong to privateKey".into())
        );
    }

    fn hex_literal(hex: &str) -> [u8; 32] {
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        bytes.try_into().unwrap()
    }
}
