//! Ed25519 with pinned per-publisher keys (Document 3). Same names as
//! `svc_attest::ed25519::{public_key_id, verify}` so the two can be swapped when merged.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::{Signature, VerifyingKey};
use sha2::{Digest, Sha256};
use svc_application::ports::registry::{Ed25519Verifier, SignatureRejected};

/// The first 16 characters of base64(sha256(raw public key)).
pub fn public_key_id(public_key: &[u8]) -> String {
    let mut id = STANDARD.encode(Sha256::digest(public_key));
    id.truncate(16);
    id
}

/// Strict verification (no small-order keys, canonical signatures only).
pub fn verify(public_key: &[u8], payload: &[u8], signature: &[u8]) -> Result<(), SignatureRejected> {
    let key_bytes: [u8; 32] = public_key
        .try_into()
        .map_err(|_| SignatureRejected("the public key is not 32 bytes".into()))?;
    let key = VerifyingKey::from_bytes(&key_bytes)
        .map_err(|_| SignatureRejected("the public key is not a valid Ed25519 point".into()))?;
    let signature_bytes: [u8; 64] = signature
        .try_into()
        .map_err(|_| SignatureRejected("the signature is not 64 bytes".into()))?;
    key.verify_strict(payload, &Signature::from_bytes(&signature_bytes))
        .map_err(|_| SignatureRejected("the signature does not match the payload and key".into()))
}

/// The `Ed25519Verifier` port over the two functions above.
#[derive(Debug, Clone, Copy, Default)]
pub struct DalekEd25519Verifier;

impl Ed25519Verifier for DalekEd25519Verifier {
    fn public_key_id(&self, public_key: &[u8]) -> String {
        public_key_id(public_key)
    }

    fn verify(&self, public_key: &[u8], payload: &[u8], signature: &[u8]) -> Result<(), SignatureRejected> {
        verify(public_key, payload, signature)
    }
}

#[cfg(test)]
mod tests {
    use ed25519_dalek::{Signer, SigningKey};

    use super::*;

    #[test]
    fn verifies_only_the_signed_payload_with_its_key() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let public = key.verifying_key().to_bytes();
        let signature = key.sign(b"payload").to_bytes();
        assert_eq!(verify(&public, b"payload", &signature), Ok(()));
        assert!(verify(&public, b"tampered", &signature).is_err());
        let other = SigningKey::from_bytes(&[8; 32]).verifying_key().to_bytes();
        assert!(verify(&other, b"payload", &signature).is_err());
        assert!(verify(&public[..31], b"payload", &signature).is_err());
        assert!(verify(&public, b"payload", &signature[..63]).is_err());
    }

    #[test]
    fn the_key_id_is_16_characters_of_the_sha256() {
        let id = public_key_id(&[0; 32]);
        assert_eq!(id.len(), 16);
        // base64(sha256(32 zero bytes)) starts with these characters.
        assert_eq!(id, &STANDARD.encode(Sha256::digest([0u8; 32]))[..16]);
        assert_ne!(id, public_key_id(&[1; 32]));
    }
}
