//! The two legs install runs before writing anything (Document 3): (1) sha384 of the payload
//! against the manifest's `signature.bundleSha384`; (2) the signature, by the scheme the
//! manifest's visibility names: Ed25519 with the key the registry pinned for this version (its id
//! derived and compared first) for a private artifact, a Sigstore bundle for a public one.

use serde_json::Value;
use svc_attest::ed25519::{self, Ed25519Error};
use svc_attest::payload::{self, PayloadError};
use svc_attest::sigstore::{self, IdentityPin, SigstoreError, TrustedRoot};
use svc_domain::artifact::{SignatureAlgorithm, Visibility};

use crate::registry_client::wire::{ManifestView, PackageVersion};

/// How strict the second leg is.
#[derive(Debug, Clone)]
pub struct TrustPolicy {
    /// Refuse (exit 1) instead of warning when the registry pinned no author key.
    pub strict: bool,
    pub trusted_root: TrustedRoot,
    pub identity: Option<IdentityPin>,
}

/// A version and its bundle bytes, as fetched.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub version: PackageVersion,
    pub bundle: Vec<u8>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum VerifyError {
    #[error("the registry's manifest is not usable: {0}")]
    Manifest(String),
    #[error("the registry served {served}, not the requested {requested}")]
    WrongArtifact { requested: String, served: String },
    #[error("the bundle's sha384 is {actual}, but the manifest's signature.bundleSha384 is {expected}")]
    DigestMismatch { expected: String, actual: String },
    #[error("the registry's bundleSri {sri} differs from the manifest's signature.bundleSha384 {expected}")]
    SriMismatch { sri: String, expected: String },
    #[error("the manifest's bundleSri {stated} is not the bundle's {actual}")]
    ManifestSriMismatch { stated: String, actual: String },
    #[error("the manifest's `visibility` must be public or private, not {0}")]
    Visibility(String),
    #[error("a {visibility} artifact must be signed with {required}, but this one is signed with {algorithm}")]
    SchemeMismatch {
        visibility: &'static str,
        required: &'static str,
        algorithm: String,
    },
    #[error(
        "an identity pin (--certificate-identity) needs a {keyless} signature, but this artifact is signed with {algorithm}",
        keyless = sigstore::ALGORITHM
    )]
    IdentityPinNotKeyless { algorithm: String },
    #[error("the signature has no {0}")]
    Missing(&'static str),
    #[error("the registry pinned no author public key for this version (refused by --strict)")]
    UnpinnedKey,
    #[error("unknown signature algorithm `{0}` (expected ed25519 or sigstore)")]
    UnknownAlgorithm(String),
    #[error("{0}")]
    Payload(#[from] PayloadError),
    #[error("{0}")]
    Ed25519(#[from] Ed25519Error),
    #[error("the Sigstore bundle does not verify: {0}")]
    Sigstore(#[from] SigstoreError),
}

/// What verification established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    Ed25519 {
        public_key_id: String,
    },
    /// Leg two skipped: the registry pinned no key (a warning; `--strict` refuses instead).
    Unpinned,
    Sigstore,
}

/// The manifest fields install acts on.
pub fn view(fetched: &Fetched) -> Result<ManifestView, VerifyError> {
    serde_json::from_value(fetched.version.manifest.clone()).map_err(|e| VerifyError::Manifest(e.to_string()))
}

/// Runs both legs for the requested `scope/name@version`.
pub fn verify(fetched: &Fetched, requested: &Requested, policy: &TrustPolicy) -> Result<Trust, VerifyError> {
    let manifest = view(fetched)?;
    let served = Requested {
        scope: manifest.scope.clone(),
        name: manifest.name.clone(),
        version: manifest.version.clone(),
    };
    if &served != requested {
        return Err(VerifyError::WrongArtifact {
            requested: requested.to_string(),
            served: served.to_string(),
        });
    }
    // Leg one: the bytes are the ones the manifest names.
    let expected = &manifest.signature.bundle_sha384;
    if !payload::matches_bundle_sha384(&fetched.bundle, expected) {
        return Err(VerifyError::DigestMismatch {
            expected: expected.clone(),
            actual: payload::bundle_sha384(&fetched.bundle),
        });
    }
    if &fetched.version.bundle_sri != expected {
        return Err(VerifyError::SriMismatch {
            sri: fetched.version.bundle_sri.clone(),
            expected: expected.clone(),
        });
    }
    if let Some(stated) = fetched.version.manifest.get("bundleSri").and_then(Value::as_str)
        && stated != expected
    {
        return Err(VerifyError::ManifestSriMismatch {
            stated: stated.to_owned(),
            actual: expected.clone(),
        });
    }
    // Leg two: someone trusted signed exactly this, by the scheme the visibility names.
    check_scheme(&fetched.version.manifest, &manifest.signature.algorithm, policy)?;
    let signed = payload::signed_payload(&manifest.kind, &fetched.version.manifest, &fetched.bundle)?;
    let signature = &fetched.version.signature;
    match manifest.signature.algorithm.as_str() {
        ed25519::ALGORITHM => {
            let key_id = manifest
                .signature
                .public_key_id
                .as_deref()
                .ok_or(VerifyError::Missing("publicKeyId"))?;
            let Some(public_key) = fetched.version.author_public_key.as_deref() else {
                return if policy.strict {
                    Err(VerifyError::UnpinnedKey)
                } else {
                    Ok(Trust::Unpinned)
                };
            };
            let value = signature.value.as_deref().ok_or(VerifyError::Missing("value"))?;
            let key = ed25519::decode_public_key(public_key)?;
            ed25519::verify_with_key_id(&key, key_id, &signed, value)?;
            Ok(Trust::Ed25519 {
                public_key_id: key_id.to_owned(),
            })
        }
        sigstore::ALGORITHM => {
            let bundle = signature
                .sigstore_bundle
                .as_ref()
                .ok_or(VerifyError::Missing("sigstoreBundle"))?;
            sigstore::verify(
                &signed,
                &bundle.to_string(),
                &policy.trusted_root,
                policy.identity.as_ref(),
            )?;
            Ok(Trust::Sigstore)
        }
        other => Err(VerifyError::UnknownAlgorithm(other.to_owned())),
    }
}

/// Document 3's trust model, held against what the registry served rather than taken from it: a
/// public artifact is signed keyless (Sigstore), a private one with its publisher's Ed25519 key.
/// Otherwise a registry could serve a public artifact signed with a key of its own choosing. An
/// identity pin asks for a keyless signature by that signer, so an Ed25519 one does not do.
fn check_scheme(manifest: &Value, algorithm: &str, policy: &TrustPolicy) -> Result<(), VerifyError> {
    let visibility = match manifest.get("visibility") {
        Some(Value::String(raw)) => Visibility::parse(raw),
        _ => None,
    }
    .ok_or_else(|| {
        VerifyError::Visibility(
            manifest
                .get("visibility")
                .map_or_else(|| "missing".to_owned(), Value::to_string),
        )
    })?;
    let required = SignatureAlgorithm::required_for(visibility);
    if algorithm != required.as_str() {
        return Err(VerifyError::SchemeMismatch {
            visibility: visibility.as_str(),
            required: required.as_str(),
            algorithm: algorithm.to_owned(),
        });
    }
    if policy.identity.is_some() && algorithm != sigstore::ALGORITHM {
        return Err(VerifyError::IdentityPinNotKeyless {
            algorithm: algorithm.to_owned(),
        });
    }
    Ok(())
}

/// `scope/name@version` as typed on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requested {
    pub scope: String,
    pub name: String,
    pub version: String,
}

impl std::fmt::Display for Requested {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}@{}", self.scope, self.name, self.version)
    }
}

impl std::str::FromStr for Requested {
    type Err = String;

    /// `@acme/chart@1.2.3` (the scope's `@` may be left out: `acme/chart@1.2.3`).
    fn from_str(raw: &str) -> Result<Self, String> {
        let bad = || format!("`{raw}` is not scope/name@version (e.g. @acme/chart@1.2.3)");
        let (package, version) = raw.rsplit_once('@').ok_or_else(bad)?;
        let (scope, name) = package.split_once('/').ok_or_else(bad)?;
        let scope = scope.strip_prefix('@').unwrap_or(scope);
        if scope.is_empty() || name.is_empty() || version.is_empty() || name.contains('/') || scope.contains('@') {
            return Err(bad());
        }
        Ok(Self {
            scope: format!("@{scope}"),
            name: name.to_owned(),
            version: version.to_owned(),
        })
    }
}
