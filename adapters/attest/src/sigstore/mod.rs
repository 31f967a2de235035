//! Offline verification of Sigstore bundles (v0.1, v0.2, v0.3) over an artifact's payload: the
//! same code path for `svc verify`, `svc install` and the registry's publish check.
//!
//! sigstore-verify checks the certificate chain to Fulcio at the signed time, the embedded SCT,
//! the transparency-log entry (inclusion proof and checkpoint, or the signed entry timestamp, and
//! that it describes this bundle), the signature over the payload and the identity pin.

mod trusted_root;

use sigstore_verify::VerificationPolicy;
use sigstore_verify::types::Bundle;

pub use trusted_root::{TrustedRoot, TrustedRootError};

/// The `algorithm` value of a Sigstore signature.
pub const ALGORITHM: &str = "sigstore";

/// Who must have signed: the certificate's subject (email or URI) and the OIDC issuer that
/// vouched for it (`--certificate-identity`, `--certificate-oidc-issuer`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityPin {
    pub identity: String,
    pub issuer: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SigstoreError {
    #[error("not a Sigstore bundle: {0}")]
    Malformed(String),
    #[error("{0}")]
    Rejected(String),
}

/// Verifies `bundle_json` over `payload` against `root`, optionally pinned to an identity.
pub fn verify(
    payload: &[u8],
    bundle_json: &str,
    root: &TrustedRoot,
    pin: Option<&IdentityPin>,
) -> Result<(), SigstoreError> {
    let bundle = Bundle::from_json(bundle_json).map_err(|e| SigstoreError::Malformed(e.to_string()))?;
    let policy = match pin {
        Some(pin) => VerificationPolicy::new(pin.identity.as_str(), pin.issuer.as_str()),
        None => VerificationPolicy::any_identity(),
    };
    sigstore_verify::verify(payload, &bundle, &policy, &root.0)
        .map(|_| ())
        .map_err(|e| SigstoreError::Rejected(e.to_string()))
}
