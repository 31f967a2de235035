//! Versions of registry artifacts (gadgets and blueprints).
//!
//! A version is identified by (scope, name, version), is immutable once published, and is yanked,
//! never deleted: a yanked version still answers reads (HTTP 410 with its manifest) so an install
//! can say why it refuses. Yanking twice is idempotent and keeps the first reason.
//! Each version keeps the signature and the key it was published with, so rotating a
//! publisher's key later never invalidates it.

mod digest;
mod identity;
mod manifest;
mod precedence_key;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use digest::{BundleDigest, token_sha256};
pub use identity::{ARTIFACT_SEGMENT_MAX_CHARS, ArtifactIdentity, ArtifactName, ArtifactScope, SemanticVersion};
pub use manifest::{
    ArtifactManifest, GateFailure, MANIFEST_SCHEMA, ManifestBody, ManifestError, ManifestSignature, compare_exports,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArtifactKind {
    Gadget,
    Blueprint,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    Public,
    Private,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArtifactStatus {
    Published,
    Yanked,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SignatureAlgorithm {
    Ed25519,
    Sigstore,
}

macro_rules! wire_names {
    ($type:ty { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $type {
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $name),+ }
            }

            pub fn parse(value: &str) -> Option<Self> {
                match value { $($name => Some(Self::$variant),)+ _ => None }
            }
        }
    };
}

wire_names!(ArtifactKind { Gadget => "gadget", Blueprint => "blueprint" });
wire_names!(Visibility { Public => "public", Private => "private" });
wire_names!(ArtifactStatus { Published => "published", Yanked => "yanked" });
wire_names!(SignatureAlgorithm { Ed25519 => "ed25519", Sigstore => "sigstore" });

impl SignatureAlgorithm {
    /// Document 3's trust model: public artifacts are signed keyless (Sigstore), private ones
    /// with the publisher's pinned Ed25519 key.
    pub fn required_for(visibility: Visibility) -> Self {
        match visibility {
            Visibility::Public => Self::Sigstore,
            Visibility::Private => Self::Ed25519,
        }
    }
}

impl ArtifactKind {
    /// The media type a bundle of this kind is served with.
    pub fn bundle_media_type(self) -> &'static str {
        match self {
            Self::Gadget => "text/javascript",
            Self::Blueprint => "text/plain; charset=utf-8",
        }
    }
}

/// The signature as published, kept with its version forever.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredSignature {
    pub algorithm: SignatureAlgorithm,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_key_id: Option<String>,
    /// Base64 Ed25519 signature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sigstore_bundle: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactVersion {
    pub identity: ArtifactIdentity,
    pub kind: ArtifactKind,
    pub visibility: Visibility,
    /// The publisher that published it (the scope's owner, or an admin).
    pub publisher: String,
    /// The manifest as published.
    pub manifest: Value,
    pub signature: StoredSignature,
    /// Base64 raw Ed25519 public key that signed this version (Ed25519 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author_public_key: Option<String>,
    /// `sha384-<base64>` of the payload, computed by the registry.
    pub bundle_sri: String,
    pub status: ArtifactStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yank_reason: Option<String>,
    pub published_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yanked_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishArtifact {
    pub identity: ArtifactIdentity,
    pub kind: ArtifactKind,
    pub visibility: Visibility,
    pub publisher: String,
    pub manifest: Value,
    pub signature: StoredSignature,
    pub author_public_key: Option<String>,
    pub bundle_sri: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YankOutcome {
    Yanked,
    AlreadyYanked,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArtifactError {
    #[error("invalid version {raw:?}: {reason}")]
    InvalidVersion { raw: String, reason: String },
    #[error("invalid artifact scope {0:?}: `@` and 1-64 of a-z 0-9 - _ . starting with a letter or digit")]
    InvalidScope(String),
    #[error("invalid artifact name {0:?}: 1-64 of a-z 0-9 - _ . starting with a letter or digit")]
    InvalidName(String),
    /// The payload hash is not `sha384-<base64 of 48 bytes>`.
    #[error("invalid bundle integrity value")]
    InvalidBundleSri,
    /// The signature does not fit the visibility's trust model, or lacks what its algorithm needs.
    #[error("{0}")]
    SignatureScheme(String),
    /// Republishing an existing (scope, name, version); versions are immutable.
    #[error("this version already exists")]
    VersionExists,
    #[error("no such artifact version")]
    NotFound,
}

impl ArtifactError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidVersion { .. } => "invalid_version",
            Self::InvalidScope(_) => "invalid_scope",
            Self::InvalidName(_) => "invalid_name",
            Self::InvalidBundleSri => "invalid_bundle_sri",
            Self::SignatureScheme(_) => "bad_signature",
            Self::VersionExists => "version_exists",
            Self::NotFound => "not_found",
        }
    }
}

impl ArtifactVersion {
    /// (none) -> published.
    pub fn publish(command: PublishArtifact, now: DateTime<Utc>) -> Result<ArtifactVersion, ArtifactError> {
        if BundleDigest::from_sri(&command.bundle_sri).is_none() {
            return Err(ArtifactError::InvalidBundleSri);
        }
        check_signature_scheme(
            command.visibility,
            &command.signature,
            command.author_public_key.as_deref(),
        )?;
        Ok(ArtifactVersion {
            identity: command.identity,
            kind: command.kind,
            visibility: command.visibility,
            publisher: command.publisher,
            manifest: command.manifest,
            signature: command.signature,
            author_public_key: command.author_public_key,
            bundle_sri: command.bundle_sri,
            status: ArtifactStatus::Published,
            yank_reason: None,
            published_at: now,
            yanked_at: None,
        })
    }

    /// published -> yanked; yanked -> yanked (idempotent, keeps the first time and reason).
    pub fn yank(&self, reason: &str, now: DateTime<Utc>) -> (ArtifactVersion, YankOutcome) {
        match self.status {
            ArtifactStatus::Published => (
                ArtifactVersion {
                    status: ArtifactStatus::Yanked,
                    yank_reason: Some(reason.to_owned()),
                    yanked_at: Some(now),
                    ..self.clone()
                },
                YankOutcome::Yanked,
            ),
            ArtifactStatus::Yanked => (self.clone(), YankOutcome::AlreadyYanked),
        }
    }

    pub fn is_yanked(&self) -> bool {
        self.status == ArtifactStatus::Yanked
    }

    /// The content address of the payload (always valid: checked at publish).
    pub fn digest(&self) -> Option<BundleDigest> {
        BundleDigest::from_sri(&self.bundle_sri)
    }
}

/// Private: Ed25519 with a key id, a signature value and the signing key kept. Public: a
/// Sigstore bundle.
pub fn check_signature_scheme(
    visibility: Visibility,
    signature: &StoredSignature,
    author_public_key: Option<&str>,
) -> Result<(), ArtifactError> {
    let required = SignatureAlgorithm::required_for(visibility);
    if signature.algorithm != required {
        return Err(ArtifactError::SignatureScheme(format!(
            "a {} artifact is signed with {}, not {}",
            visibility.as_str(),
            required.as_str(),
            signature.algorithm.as_str()
        )));
    }
    let complete = match signature.algorithm {
        SignatureAlgorithm::Ed25519 => {
            signature.public_key_id.is_some() && signature.value.is_some() && author_public_key.is_some()
        }
        SignatureAlgorithm::Sigstore => signature.sigstore_bundle.is_some(),
    };
    if !complete {
        let needs = match signature.algorithm {
            SignatureAlgorithm::Ed25519 => "`publicKeyId` and `value`",
            SignatureAlgorithm::Sigstore => "`sigstoreBundle`",
        };
        return Err(ArtifactError::SignatureScheme(format!(
            "an {} signature needs {needs}",
            signature.algorithm.as_str()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, TimeZone};
    use serde_json::json;

    use super::*;

    const SRI: &str = "sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC";

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 5, 1, 0, 0, 0).unwrap()
    }

    fn ed25519() -> StoredSignature {
        StoredSignature {
            algorithm: SignatureAlgorithm::Ed25519,
            public_key_id: Some("abcdefghijklmnop".into()),
            value: Some("sig".into()),
            sigstore_bundle: None,
        }
    }

    fn sigstore() -> StoredSignature {
        StoredSignature {
            algorithm: SignatureAlgorithm::Sigstore,
            public_key_id: None,
            value: None,
            sigstore_bundle: Some(json!({ "mediaType": "application/vnd.dev.sigstore.bundle+json;version=0.3" })),
        }
    }

    fn command(visibility: Visibility, signature: StoredSignature, sri: &str) -> PublishArtifact {
        PublishArtifact {
            identity: ArtifactIdentity::parse("@acme", "date-picker", "1.2.3").unwrap(),
            kind: ArtifactKind::Gadget,
            visibility,
            publisher: "acme".into(),
            manifest: json!({ "kind": "gadget" }),
            author_public_key: (signature.algorithm == SignatureAlgorithm::Ed25519).then(|| "key".into()),
            signature,
            bundle_sri: sri.into(),
        }
    }

    fn published() -> ArtifactVersion {
        ArtifactVersion::publish(command(Visibility::Private, ed25519(), SRI), now()).unwrap()
    }

    #[test]
    fn publishing_checks_integrity_and_the_trust_model() {
        let no_value = StoredSignature {
            value: None,
            ..ed25519()
        };
        let rows = [
            (Visibility::Private, ed25519(), SRI, Ok(())),
            (Visibility::Public, sigstore(), SRI, Ok(())),
            (Visibility::Private, ed25519(), "sha256-abc", Err("invalid_bundle_sri")),
            (
                Visibility::Private,
                ed25519(),
                &SRI[..SRI.len() - 4],
                Err("invalid_bundle_sri"),
            ),
            (Visibility::Public, ed25519(), SRI, Err("bad_signature")),
            (Visibility::Private, sigstore(), SRI, Err("bad_signature")),
            (Visibility::Private, no_value, SRI, Err("bad_signature")),
        ];
        for (visibility, signature, sri, expected) in rows {
            let result = ArtifactVersion::publish(command(visibility, signature, sri), now());
            assert_eq!(
                result.as_ref().map(|_| ()).map_err(|e| e.code()),
                expected,
                "{visibility:?} {sri}"
            );
            if let Ok(version) = result {
                assert_eq!(version.status, ArtifactStatus::Published);
            }
        }
    }

    #[test]
    fn yanking_follows_the_table() {
        let later = now() + TimeDelta::days(1);
        let (yanked, outcome) = published().yank("broken", later);
        assert_eq!((yanked.status, outcome), (ArtifactStatus::Yanked, YankOutcome::Yanked));
        assert_eq!(
            (yanked.yanked_at, yanked.yank_reason.as_deref()),
            (Some(later), Some("broken"))
        );
        assert!(yanked.is_yanked());
        assert_eq!(yanked.manifest, published().manifest, "the manifest stays readable");
        let (again, outcome) = yanked.yank("other", later + TimeDelta::days(1));
        assert_eq!(
            (again.status, outcome),
            (ArtifactStatus::Yanked, YankOutcome::AlreadyYanked)
        );
        assert_eq!(
            (again.yanked_at, again.yank_reason.as_deref()),
            (Some(later), Some("broken"))
        );
    }

    #[test]
    fn wire_names_are_lowercase() {
        assert_eq!(ArtifactKind::parse("blueprint"), Some(ArtifactKind::Blueprint));
        assert_eq!(Visibility::Private.as_str(), "private");
        assert_eq!(ArtifactStatus::parse("deleted"), None);
        assert_eq!(
            SignatureAlgorithm::parse("sigstore"),
            Some(SignatureAlgorithm::Sigstore)
        );
        let wire = serde_json::to_value(published()).unwrap();
        assert_eq!(wire["identity"]["version"], "1.2.3");
        assert_eq!(wire["identity"]["scope"], "@acme");
        assert_eq!(wire["signature"]["publicKeyId"], "abcdefghijklmnop");
        assert_eq!(wire["bundleSri"], SRI);
    }
}
