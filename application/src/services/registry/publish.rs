//! `POST /publish`: the checks of docs/registry.md in their documented order, then the bundle
//! and the version are stored.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use svc_domain::artifact::{
    ArtifactError, ArtifactKind, ArtifactManifest, ArtifactVersion, BundleDigest, ManifestError, PublishArtifact,
    SignatureAlgorithm, StoredSignature, check_signature_scheme,
};

use svc_domain::text::json_len;

use super::credentials::require_owner;
use super::manifest_limits::{excerpted, oversized_parts};
use super::{RegistryError, RegistryService};
use crate::ports::registry::{
    BundleWrite, PublishOutcome, PublishQuota, Publisher, SigstoreVerification, TransitionError,
};

/// Most versions one package holds; the version listing shows as many
/// ([`super::VERSION_LISTING_LIMIT`]). A registry may hold packages to fewer
/// (`[registry] max_versions_per_package`), never to more.
pub const MAX_VERSIONS_PER_PACKAGE: u64 = super::VERSION_LISTING_LIMIT;

/// The bounds of a registry that sets none: 1000 versions per package, 1 GiB per publisher.
pub const DEFAULT_PUBLISH_QUOTA: PublishQuota = PublishQuota {
    versions_per_package: MAX_VERSIONS_PER_PACKAGE,
    bytes_per_publisher: 1 << 30,
};

#[derive(Debug, Clone, PartialEq)]
pub struct PublishSignature {
    pub algorithm: String,
    pub public_key_id: Option<String>,
    /// The raw 64-byte Ed25519 signature.
    pub value: Option<Vec<u8>>,
    pub sigstore_bundle: Option<Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PublishRequest {
    pub manifest: Value,
    pub bundle: Option<Vec<u8>>,
    pub bundle_sha384: Option<String>,
    pub signature: PublishSignature,
}

#[derive(Debug, Clone)]
pub struct Published {
    pub version: ArtifactVersion,
    pub digest: BundleDigest,
    /// For a Sigstore artifact, what the registry could check of its bundle.
    pub sigstore: Option<SigstoreVerification>,
}

/// A verified signature, ready to be kept with its version.
struct Signed {
    signature: StoredSignature,
    author_public_key: Option<String>,
    sigstore: Option<SigstoreVerification>,
}

impl RegistryService {
    pub async fn publish(
        &self,
        caller: Option<&Publisher>,
        request: PublishRequest,
    ) -> Result<Published, RegistryError> {
        let publisher = caller.ok_or(RegistryError::Unauthorized)?;
        let oversized = oversized_parts(&request.manifest);
        if !oversized.is_empty() {
            return Err(RegistryError::InvalidManifest(oversized));
        }
        let manifest = ArtifactManifest::parse(&request.manifest).map_err(|error| match error {
            ManifestError::Version(error) => RegistryError::InvalidVersion(error),
            ManifestError::Schema(failures) => RegistryError::InvalidManifest(excerpted(failures)),
        })?;
        require_owner(publisher, &manifest.identity.scope)?;
        let bundle = request
            .bundle
            .as_deref()
            .ok_or_else(|| RegistryError::BundleMismatch("a bundle is required".into()))?;
        let digest = check_digest(&manifest, bundle, request.bundle_sha384.as_deref())?;
        let signed = self.verify_signature(&manifest, &digest, request.signature).await?;
        self.refuse_existing_version(&manifest).await?;
        let stored_bytes = stored_bytes(&manifest, bundle);
        self.refuse_over_quota(&manifest, publisher, stored_bytes).await?;
        let failures = self.gate.check_bundle(&manifest, Some(bundle)).await?;
        if !failures.is_empty() {
            return Err(RegistryError::ConformanceFailed(failures));
        }
        let version = ArtifactVersion::publish(
            PublishArtifact {
                identity: manifest.identity.clone(),
                kind: manifest.kind,
                visibility: manifest.visibility,
                publisher: publisher.name.clone(),
                manifest: manifest.raw.clone(),
                signature: signed.signature,
                author_public_key: signed.author_public_key,
                bundle_sri: digest.sri(),
            },
            self.ports.clock.now(),
        )
        .map_err(|error| RegistryError::BadSignature(error.to_string()))?;
        // The bundle first: a version row never points at a missing payload.
        let write = self.ports.bundles.put(&digest, manifest.kind, bundle).await?;
        let outcome = self.ports.artifacts.publish(&version, stored_bytes, self.quota).await;
        let refused = matches!(
            outcome,
            Ok(PublishOutcome::PackageFull { .. } | PublishOutcome::PublisherFull { .. })
                | Err(TransitionError::Rejected(ArtifactError::VersionExists))
        );
        if refused && write == BundleWrite::Written {
            self.take_back_bundle(&digest, manifest.kind, bundle).await;
        }
        match outcome {
            Ok(PublishOutcome::Published) => {
                // A refused publish of the same bytes may have taken the file back between its
                // look for versions holding it and this insert: put it back (a no-op otherwise).
                // The version is stored either way: a failure here is logged, not answered.
                if let Err(error) = self.ports.bundles.put(&digest, manifest.kind, bundle).await {
                    tracing::error!(bundle = %digest.sri(), error = format!("{error:#}"), "a stored version's bundle could not be put back");
                }
            }
            // Publishes at the same moment passed the check above together; the store let in
            // only as many as the quota holds.
            Ok(PublishOutcome::PackageFull { stored }) => return Err(package_full(&manifest, stored)),
            Ok(PublishOutcome::PublisherFull { stored_bytes: held }) => {
                return Err(self.publisher_full(publisher, held, stored_bytes));
            }
            Err(TransitionError::Rejected(ArtifactError::VersionExists)) => {
                // Another publish of this version, or of its release, passed the check above at
                // the same moment and was stored first: say which, as the check would have.
                self.refuse_existing_version(&manifest).await?;
                return Err(RegistryError::VersionExists(manifest.identity.to_string()));
            }
            Err(other) => return Err(other.into()),
        }
        Ok(Published {
            version,
            digest,
            sigstore: signed.sigstore,
        })
    }

    /// A package holds at most `quota.versions_per_package` versions (yanked ones included:
    /// versions are never deleted), so no publisher can grow the registry without bound under one
    /// name, and a version listing shows every version; a publisher's versions hold at most
    /// `quota.bytes_per_publisher` bytes, so none grows it without bound under many names
    /// (docs/registry.md, "Limits"). Checked here, before the conformance gate and the bundle's
    /// write, and again by the store as it inserts.
    async fn refuse_over_quota(
        &self,
        manifest: &ArtifactManifest,
        publisher: &Publisher,
        stored_bytes: u64,
    ) -> Result<(), RegistryError> {
        let identity = &manifest.identity;
        let artifacts = &self.ports.artifacts;
        let held = artifacts.count_versions(&identity.scope, &identity.name).await?;
        if held >= self.quota.versions_per_package {
            return Err(package_full(manifest, held));
        }
        let held = artifacts.publisher_stored_bytes(&publisher.name).await?;
        if held.saturating_add(stored_bytes) > self.quota.bytes_per_publisher {
            return Err(self.publisher_full(publisher, held, stored_bytes));
        }
        Ok(())
    }

    /// Removes the bundle a refused publish wrote, unless a stored version has it: bundles are
    /// content-addressed, so another version may share it. A version of the same bytes stored
    /// between the look and the removal is seen by the second look, which puts the bundle back
    /// (and such a publish puts it back itself once stored: `publish`). A failure here leaves
    /// an unreferenced file, as before: it is logged, and the refusal is answered.
    async fn take_back_bundle(&self, digest: &BundleDigest, kind: ArtifactKind, bundle: &[u8]) {
        let (artifacts, bundles) = (&self.ports.artifacts, &self.ports.bundles);
        let sri = digest.sri();
        let taken_back = async {
            if artifacts.references_bundle(&sri).await? {
                return Ok(());
            }
            bundles.remove(digest, kind).await?;
            if artifacts.references_bundle(&sri).await? {
                bundles.put(digest, kind, bundle).await?;
            }
            Ok::<(), anyhow::Error>(())
        };
        if let Err(error) = taken_back.await {
            tracing::warn!(bundle = %sri, error = format!("{error:#}"), "cannot take back the bundle of a refused publish");
        }
    }

    fn publisher_full(&self, publisher: &Publisher, held: u64, stored_bytes: u64) -> RegistryError {
        RegistryError::QuotaExceeded(format!(
            "publisher {} stores {held} bytes, and this version's {stored_bytes} would take it past the {} \
             a publisher may store",
            publisher.name, self.quota.bytes_per_publisher
        ))
    }

    async fn verify_signature(
        &self,
        manifest: &ArtifactManifest,
        digest: &BundleDigest,
        signature: PublishSignature,
    ) -> Result<Signed, RegistryError> {
        let algorithm = SignatureAlgorithm::parse(&signature.algorithm)
            .filter(|algorithm| *algorithm == manifest.signature.algorithm)
            .ok_or_else(|| {
                RegistryError::BadSignature(format!(
                    "`signature.algorithm` {:?} differs from the manifest's `{}`",
                    signature.algorithm,
                    manifest.signature.algorithm.as_str()
                ))
            })?;
        let stored = StoredSignature {
            algorithm,
            public_key_id: signature.public_key_id.clone(),
            value: signature.value.as_ref().map(|v| STANDARD.encode(v)),
            sigstore_bundle: signature.sigstore_bundle.clone(),
        };
        // The trust model first, with a stand-in key: whether the key is known comes next.
        check_signature_scheme(manifest.visibility, &stored, Some("")).map_err(bad_scheme)?;
        match algorithm {
            SignatureAlgorithm::Ed25519 => {
                let author_public_key = self.verify_ed25519(manifest, digest, &signature).await?;
                Ok(Signed {
                    signature: stored,
                    author_public_key: Some(author_public_key),
                    sigstore: None,
                })
            }
            SignatureAlgorithm::Sigstore => {
                let sigstore_bundle = signature.sigstore_bundle.as_ref().expect("checked by the trust model");
                // The payload `svc publish --print-payload` prints and `svc install` checks, as
                // for Ed25519: sha384 of a gadget's bundle, a blueprint's canonical manifest.
                let payload = manifest.signed_payload(digest);
                let verification = self.ports.sigstore.verify(sigstore_bundle, &payload);
                if let SigstoreVerification::Rejected(why) = &verification {
                    return Err(RegistryError::BadSignature(format!(
                        "the Sigstore bundle does not verify: {why}"
                    )));
                }
                Ok(Signed {
                    signature: stored,
                    author_public_key: None,
                    sigstore: Some(verification),
                })
            }
        }
    }

    /// The key must be registered by the scope's publisher, match the manifest, and verify the
    /// signature over the payload. Returns the key kept with the version.
    async fn verify_ed25519(
        &self,
        manifest: &ArtifactManifest,
        digest: &BundleDigest,
        signature: &PublishSignature,
    ) -> Result<String, RegistryError> {
        let key_id = signature.public_key_id.as_deref().unwrap_or_default();
        if manifest.signature.public_key_id.as_deref() != Some(key_id) {
            return Err(RegistryError::UnknownKey(format!(
                "`signature.publicKeyId` {key_id:?} differs from the manifest's"
            )));
        }
        let key = self
            .ports
            .author_keys
            .get(key_id)
            .await?
            .filter(|key| key.publisher == manifest.identity.scope.publisher())
            .ok_or_else(|| {
                RegistryError::UnknownKey(format!(
                    "no author key {key_id:?} is registered for `{}`",
                    manifest.identity.scope.as_str()
                ))
            })?;
        // The manifest's schema requires `authorPublicKey` beside an Ed25519 signature.
        if manifest.author_public_key.as_deref() != Some(key.public_key.as_str()) {
            return Err(RegistryError::UnknownKey(format!(
                "`authorPublicKey` is not the key registered as {key_id:?}"
            )));
        }
        let public_key = STANDARD
            .decode(&key.public_key)
            .map_err(|e| RegistryError::Internal(e.into()))?;
        let value = signature.value.as_deref().unwrap_or_default();
        self.ports
            .ed25519
            .verify(&public_key, &manifest.signed_payload(digest), value)
            .map_err(|why| RegistryError::BadSignature(format!("the Ed25519 signature does not verify: {why}")))?;
        Ok(key.public_key)
    }
}

/// The registry's own sha384 must equal both hashes the publisher stated.
fn check_digest(
    manifest: &ArtifactManifest,
    bundle: &[u8],
    stated: Option<&str>,
) -> Result<BundleDigest, RegistryError> {
    let digest = BundleDigest::of(bundle);
    let sri = digest.sri();
    if let Some(stated) = stated
        && stated != sri
    {
        return Err(RegistryError::BundleMismatch(format!(
            "`bundleSha384` is {stated} but the bundle hashes to {sri}"
        )));
    }
    if manifest.signature.bundle_sha384 != sri {
        return Err(RegistryError::BundleMismatch(format!(
            "`manifest.signature.bundleSha384` is {} but the bundle hashes to {sri}",
            manifest.signature.bundle_sha384
        )));
    }
    Ok(digest)
}

fn bad_scheme(error: ArtifactError) -> RegistryError {
    RegistryError::BadSignature(error.to_string())
}

fn package_full(manifest: &ArtifactManifest, held: u64) -> RegistryError {
    let identity = &manifest.identity;
    RegistryError::QuotaExceeded(format!(
        "{}/{} holds {held} versions, the most a package may hold; publish under another name",
        identity.scope.as_str(),
        identity.name.as_str()
    ))
}

/// What a version costs its publisher: its bundle and its manifest as compact JSON, the two
/// things the registry keeps of it that the publisher chose.
fn stored_bytes(manifest: &ArtifactManifest, bundle: &[u8]) -> u64 {
    (bundle.len() + json_len(&manifest.raw)) as u64
}
