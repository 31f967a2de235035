//! The Sigstore call site. Keyless verification is `svc_attest`'s (another crate, not wired
//! here yet): until it is, the registry stores the bundle and records it as unverified.

use serde_json::Value;
use svc_application::ports::registry::{SigstoreVerification, SigstoreVerifier};

/// Answers `Unverified` for every bundle. Replace with the `svc_attest` verifier when wiring.
#[derive(Debug, Clone, Copy, Default)]
pub struct UnwiredSigstoreVerifier;

impl SigstoreVerifier for UnwiredSigstoreVerifier {
    fn verify(&self, _bundle: &Value, _payload: &[u8]) -> SigstoreVerification {
        SigstoreVerification::Unverified
    }
}
