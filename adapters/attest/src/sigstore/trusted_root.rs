//! The Sigstore trusted root a bundle is verified against: the public-good (production) root
//! shipped with sigstore-trust-root by default, or a `trusted_root.json` the caller names
//! (`--trusted-root`, e.g. the staging root). Read from a file, never fetched: verification stays
//! offline.

use sigstore_verify::trust_root::{SIGSTORE_PRODUCTION_TRUSTED_ROOT, TrustedRoot as Root};

/// Key material of one trusted root.
#[derive(Debug, Clone)]
pub struct TrustedRoot(pub(crate) Root);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid trusted root: {0}")]
pub struct TrustedRootError(pub String);

impl TrustedRoot {
    /// The Sigstore public-good trusted root built into the binary.
    pub fn production() -> Self {
        Self::from_json(SIGSTORE_PRODUCTION_TRUSTED_ROOT).expect("the built-in production trusted root parses")
    }

    /// Parses a `trusted_root.json`.
    pub fn from_json(json: &str) -> Result<Self, TrustedRootError> {
        Root::from_json(json)
            .map(Self)
            .map_err(|e| TrustedRootError(e.to_string()))
    }
}
