//! Versions of registry artifacts (gadgets and blueprints).
//!
//! A version is identified by (scope, name, version), is immutable once published, and is yanked,
//! never deleted: a yanked version still answers reads (HTTP 410 with its manifest) so an install
//! can say why it refuses. Yanking twice is idempotent.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Longest scope or name, in characters.
pub const ARTIFACT_SEGMENT_MAX_CHARS: usize = 64;

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

/// An exact semantic version such as `1.2.3-alpha.1+build.42`. Ranges (`^1.2`, `>=1`), the word
/// `latest`, a leading `v` and leading zeros (`01.2.3`, `1.2.3-01`) are rejected.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct SemanticVersion(String);

impl SemanticVersion {
    pub fn parse(raw: &str) -> Result<Self, ArtifactError> {
        // The semver crate implements exactly SemVer 2.0.0's grammar, leading-zero rule included.
        semver::Version::parse(raw).map_err(|_| ArtifactError::InvalidVersion(raw.to_owned()))?;
        Ok(Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// (scope, name, version). Scope and name are 1 to 64 characters of lowercase ASCII letters,
/// digits, `-`, `_` and `.`, starting with a letter or digit, so they are safe in URL paths
/// and in the `<scope>__<name>__<version>` install directory names.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct ArtifactIdentity {
    pub scope: String,
    pub name: String,
    pub version: SemanticVersion,
}

impl ArtifactIdentity {
    pub fn parse(scope: &str, name: &str, version: &str) -> Result<Self, ArtifactError> {
        if !is_segment(scope) {
            return Err(ArtifactError::InvalidScope(scope.to_owned()));
        }
        if !is_segment(name) {
            return Err(ArtifactError::InvalidName(name.to_owned()));
        }
        Ok(Self {
            scope: scope.to_owned(),
            name: name.to_owned(),
            version: SemanticVersion::parse(version)?,
        })
    }
}

fn is_segment(value: &str) -> bool {
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c);
    value.len() <= ARTIFACT_SEGMENT_MAX_CHARS
        && value.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && value.chars().all(allowed)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactSignature {
    pub algorithm: String,
    pub public_key_id: String,
    pub bundle_sha384: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactVersion {
    pub identity: ArtifactIdentity,
    pub kind: ArtifactKind,
    pub visibility: Visibility,
    /// The manifest as published; its fields beyond the ones modelled here belong to the registry.
    pub manifest: serde_json::Value,
    pub signature: ArtifactSignature,
    /// Base64 raw Ed25519 public key that signed this version; kept per version so later key
    /// rotation does not invalidate it.
    pub author_public_key: String,
    /// `sha384-<base64>` of the gadget bundle; blueprints have none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bundle_sri: Option<String>,
    pub status: ArtifactStatus,
    pub published_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yanked_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishArtifact {
    pub identity: ArtifactIdentity,
    pub kind: ArtifactKind,
    pub visibility: Visibility,
    pub manifest: serde_json::Value,
    pub signature: ArtifactSignature,
    pub author_public_key: String,
    pub bundle_sri: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YankOutcome {
    Yanked,
    AlreadyYanked,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArtifactError {
    #[error("not an exact semantic version: {0:?}")]
    InvalidVersion(String),
    #[error("invalid artifact scope: {0:?}")]
    InvalidScope(String),
    #[error("invalid artifact name: {0:?}")]
    InvalidName(String),
    /// A gadget needs `sha384-<base64 of 48 bytes>`; a blueprint has no bundle.
    #[error("invalid bundle integrity value")]
    InvalidBundleSri,
    /// Republishing an existing (scope, name, version); versions are immutable.
    #[error("this version already exists")]
    VersionExists,
    #[error("no such artifact version")]
    NotFound,
}

impl ArtifactError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidVersion(_) => "invalid_version",
            Self::InvalidScope(_) => "invalid_scope",
            Self::InvalidName(_) => "invalid_name",
            Self::InvalidBundleSri => "invalid_bundle_sri",
            Self::VersionExists => "version_exists",
            Self::NotFound => "artifact_not_found",
        }
    }
}

/// `sha384-` followed by the unpadded-length base64 of a 48-byte digest (exactly 64 characters).
fn is_sha384_sri(value: &str) -> bool {
    value.strip_prefix("sha384-").is_some_and(|digest| {
        digest.len() == 64
            && digest
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '/')
    })
}

impl ArtifactVersion {
    /// (none) -> published.
    pub fn publish(command: PublishArtifact, now: DateTime<Utc>) -> Result<ArtifactVersion, ArtifactError> {
        let sri_ok = match (command.kind, command.bundle_sri.as_deref()) {
            (ArtifactKind::Gadget, Some(sri)) => is_sha384_sri(sri),
            (ArtifactKind::Blueprint, None) => true,
            _ => false,
        };
        if !sri_ok {
            return Err(ArtifactError::InvalidBundleSri);
        }
        Ok(ArtifactVersion {
            identity: command.identity,
            kind: command.kind,
            visibility: command.visibility,
            manifest: command.manifest,
            signature: command.signature,
            author_public_key: command.author_public_key,
            bundle_sri: command.bundle_sri,
            status: ArtifactStatus::Published,
            published_at: now,
            yanked_at: None,
        })
    }

    /// published -> yanked; yanked -> yanked (idempotent, keeps the first `yanked_at`).
    pub fn yank(&self, now: DateTime<Utc>) -> (ArtifactVersion, YankOutcome) {
        match self.status {
            ArtifactStatus::Published => (
                ArtifactVersion {
                    status: ArtifactStatus::Yanked,
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
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, TimeZone};

    use super::*;

    const SRI: &str = "sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC";

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 5, 1, 0, 0, 0).unwrap()
    }

    fn command(kind: ArtifactKind, bundle_sri: Option<&str>) -> PublishArtifact {
        PublishArtifact {
            identity: ArtifactIdentity::parse("acme", "date-picker", "1.2.3").unwrap(),
            kind,
            visibility: Visibility::Public,
            manifest: serde_json::json!({ "kind": "gadget" }),
            signature: ArtifactSignature {
                algorithm: "ed25519".into(),
                public_key_id: "abcdefghijklmnop".into(),
                bundle_sha384: "digest".into(),
            },
            author_public_key: "key".into(),
            bundle_sri: bundle_sri.map(str::to_owned),
        }
    }

    fn published() -> ArtifactVersion {
        ArtifactVersion::publish(command(ArtifactKind::Gadget, Some(SRI)), now()).unwrap()
    }

    #[test]
    fn versions_are_exact_semantic_versions() {
        let rows = [
            ("1.2.3", true),
            ("0.0.0", true),
            ("1.2.3-alpha.1+build.42", true),
            ("10.20.30-rc.0", true),
            ("latest", false),
            ("^1.2.3", false),
            ("~1.2", false),
            (">=1.0.0", false),
            ("1.x", false),
            ("1.2", false),
            ("1.2.3 - 2.0.0", false),
            ("01.2.3", false),
            ("1.02.3", false),
            ("1.2.03", false),
            ("1.2.3-01", false),
            ("v1.2.3", false),
            (" 1.2.3", false),
            ("", false),
        ];
        for (raw, valid) in rows {
            let result = SemanticVersion::parse(raw);
            assert_eq!(result.is_ok(), valid, "{raw:?}");
            if let Err(error) = result {
                assert_eq!(error.code(), "invalid_version");
            }
        }
    }

    #[test]
    fn scopes_and_names_are_path_safe() {
        let long = "a".repeat(65);
        let rows = [
            ("acme", "date-picker", Ok(())),
            ("acme.io", "x_1", Ok(())),
            ("Acme", "x", Err("invalid_scope")),
            ("", "x", Err("invalid_scope")),
            ("-acme", "x", Err("invalid_scope")),
            ("acme", "../x", Err("invalid_name")),
            ("acme", "a/b", Err("invalid_name")),
            ("acme", long.as_str(), Err("invalid_name")),
        ];
        for (scope, name, expected) in rows {
            let result = ArtifactIdentity::parse(scope, name, "1.0.0").map(|_| ());
            assert_eq!(result.map_err(|e| e.code()), expected, "{scope}/{name}");
        }
    }

    #[test]
    fn publishing_checks_the_bundle_integrity_value() {
        let rows = [
            (ArtifactKind::Gadget, Some(SRI), true),
            (ArtifactKind::Gadget, None, false),
            (ArtifactKind::Gadget, Some("sha256-abc"), false),
            (ArtifactKind::Gadget, Some(&SRI[..SRI.len() - 1]), false),
            (ArtifactKind::Blueprint, None, true),
            (ArtifactKind::Blueprint, Some(SRI), false),
        ];
        for (kind, sri, valid) in rows {
            let result = ArtifactVersion::publish(command(kind, sri), now());
            assert_eq!(result.is_ok(), valid, "{kind:?} {sri:?}");
            match result {
                Ok(version) => assert_eq!(version.status, ArtifactStatus::Published),
                Err(error) => assert_eq!(error.code(), "invalid_bundle_sri"),
            }
        }
    }

    #[test]
    fn yanking_follows_the_table() {
        let later = now() + TimeDelta::days(1);
        let (yanked, outcome) = published().yank(later);
        assert_eq!((yanked.status, outcome), (ArtifactStatus::Yanked, YankOutcome::Yanked));
        assert_eq!(yanked.yanked_at, Some(later));
        assert!(yanked.is_yanked());
        assert_eq!(yanked.manifest, published().manifest, "the manifest stays readable");
        let (again, outcome) = yanked.yank(later + TimeDelta::days(1));
        assert_eq!(
            (again.status, outcome),
            (ArtifactStatus::Yanked, YankOutcome::AlreadyYanked)
        );
        assert_eq!(again.yanked_at, Some(later));
    }

    #[test]
    fn wire_names_are_lowercase() {
        assert_eq!(ArtifactKind::parse("blueprint"), Some(ArtifactKind::Blueprint));
        assert_eq!(Visibility::Private.as_str(), "private");
        assert_eq!(ArtifactStatus::parse("deleted"), None);
        let wire = serde_json::to_value(published()).unwrap();
        assert_eq!(wire["identity"]["version"], "1.2.3");
        assert_eq!(wire["signature"]["publicKeyId"], "abcdefghijklmnop");
        assert_eq!(wire["bundleSri"], SRI);
    }
}
