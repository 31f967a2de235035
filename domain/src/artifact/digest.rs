//! Content hashes of artifact payloads: `sha384-<base64>` (subresource integrity) and the
//! lowercase hex that addresses a bundle under `/bundles/sha384/`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256, Sha384};

/// How a registry token is stored: the sha256 hex of its plaintext.
pub fn token_sha256(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// sha384 of a payload, with the two spellings the registry uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleDigest([u8; 48]);

impl BundleDigest {
    pub fn of(payload: &[u8]) -> Self {
        Self(Sha384::digest(payload).into())
    }

    /// Reads `sha384-<base64 of 48 bytes>`; anything else is `None`.
    pub fn from_sri(sri: &str) -> Option<Self> {
        let encoded = sri.strip_prefix("sha384-")?;
        let bytes = STANDARD.decode(encoded).ok()?;
        Some(Self(bytes.try_into().ok()?))
    }

    /// Reads the 96-character lowercase hex of a bundle path.
    pub fn from_hex(hex_digest: &str) -> Option<Self> {
        if hex_digest.len() != 96 || hex_digest.chars().any(|c| c.is_ascii_uppercase()) {
            return None;
        }
        let bytes = hex::decode(hex_digest).ok()?;
        Some(Self(bytes.try_into().ok()?))
    }

    /// The 48 raw bytes: what an Ed25519 signature over a gadget covers.
    pub fn bytes(&self) -> &[u8; 48] {
        &self.0
    }

    pub fn sri(&self) -> String {
        format!("sha384-{}", STANDARD.encode(self.0))
    }

    pub fn hex(&self) -> String {
        hex::encode(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip() {
        // The well-known sha384 of the empty string.
        let empty = BundleDigest::of(b"");
        assert_eq!(
            empty.sri(),
            "sha384-OLBgp1GsljhM2TJ+sbHjaiH9txEUvgdDTAzHv2P24donTt6/529l+9Ua0vFImLlb"
        );
        assert_eq!(BundleDigest::from_sri(&empty.sri()), Some(empty.clone()));
        assert_eq!(BundleDigest::from_hex(&empty.hex()), Some(empty.clone()));
        assert_eq!(BundleDigest::from_hex(&empty.hex().to_uppercase()), None);
        assert_eq!(BundleDigest::from_sri("sha256-abc"), None);
        assert_eq!(BundleDigest::from_sri(&empty.sri()[..70]), None);
    }
}
