//! The registry's signature ports (`svc_application::ports::registry`) over this crate: the
//! registry's publish check runs the same code as `svc verify` and `svc install`.

use serde_json::Value;
use svc_application::ports::registry::{Ed25519Verifier, SignatureRejected, SigstoreVerification, SigstoreVerifier};

use crate::{ed25519, sigstore};

/// Pinned Ed25519 author keys.
#[derive(Debug, Clone, Copy, Default)]
pub struct AttestEd25519Verifier;

impl Ed25519Verifier for AttestEd25519Verifier {
    fn public_key_id(&self, public_key: &[u8]) -> String {
        ed25519::key_id_of_bytes(public_key)
    }

    fn verify(&self, public_key: &[u8], payload: &[u8], signature: &[u8]) -> Result<(), SignatureRejected> {
        let raw: [u8; 32] = public_key
            .try_into()
            .map_err(|_| SignatureRejected("the public key is not 32 bytes".into()))?;
        let key = ed25519_dalek::VerifyingKey::from_bytes(&raw)
            .map_err(|_| SignatureRejected("the public key is not a valid Ed25519 point".into()))?;
        ed25519::verify_bytes(&key, payload, signature).map_err(|e| SignatureRejected(e.to_string()))
    }
}

/// Keyless Sigstore bundles, offline against `root`. With `accept_unverified` (a development
/// registry only) a bundle that fails is stored and reported `unverified` instead of refused.
pub struct AttestSigstoreVerifier {
    root: sigstore::TrustedRoot,
    accept_unverified: bool,
}

impl AttestSigstoreVerifier {
    pub fn new(root: sigstore::TrustedRoot, accept_unverified: bool) -> Self {
        Self {
            root,
            accept_unverified,
        }
    }
}

impl SigstoreVerifier for AttestSigstoreVerifier {
    fn verify(&self, bundle: &Value, payload: &[u8]) -> SigstoreVerification {
        match sigstore::verify(payload, &bundle.to_string(), &self.root, None) {
            Ok(()) => SigstoreVerification::Verified,
            Err(_) if self.accept_unverified => SigstoreVerification::Unverified,
            Err(e) => SigstoreVerification::Rejected(e.to_string()),
        }
    }
}
