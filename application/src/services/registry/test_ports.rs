//! Stand-ins for the registry's ports, for this module's unit tests: an artifact store that counts
//! its reads, a Sigstore verifier that records the payload it is asked about, and checks that
//! accept everything else, so a test sees exactly the one port it is about.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use serde_json::Value;
use svc_domain::artifact::{
    ArtifactError, ArtifactIdentity, ArtifactKind, ArtifactManifest, ArtifactName, ArtifactScope, ArtifactVersion,
    BundleDigest, Visibility, YankOutcome,
};

use super::{RegistryPorts, RegistryService};
use crate::ports::RepositoryError;
use crate::ports::generation::{CompileFailure, RenderCheck, RenderCheckFailure, RenderCheckInput};
use crate::ports::registry::{
    ArtifactQuery, ArtifactRepository, AuthorKey, AuthorKeyRepository, BundleStore, BundleStoreError, BundleWrite,
    Ed25519Verifier, EsModuleShape, KeyRegistration, ListedVersion, ModuleInspector, PublishOutcome, PublishQuota,
    Publisher, RegistryTokenRepository, ResultPage, SignatureRejected, SigstoreVerification, SigstoreVerifier,
    StoredBundle, TransitionError, VersionRow,
};
use crate::services::cpu_gate::CpuGate;
use crate::testing::{ManualClock, SequentialIds, StubCompiler};

/// Versions in a vector; `reads` counts every read of a whole version (`get`): the listings
/// (`version_rows`, `latest_versions`) answer without manifests.
#[derive(Default)]
pub(super) struct MemoryArtifacts {
    versions: Mutex<Vec<ArtifactVersion>>,
    reads: AtomicUsize,
    /// The next `version_rows` answers none: a read taken before another publish stored its version.
    miss_next_read: AtomicBool,
    /// Bytes charged per publisher.
    stored_bytes: Mutex<HashMap<String, u64>>,
}

impl MemoryArtifacts {
    pub(super) fn reads(&self) -> usize {
        self.reads.load(Ordering::SeqCst)
    }

    /// The next `version_rows` read misses every stored version, as a publish at the same moment as
    /// another one reads before the other is stored.
    pub(super) fn miss_next_read(&self) {
        self.miss_next_read.store(true, Ordering::SeqCst);
    }

    fn all(&self) -> Vec<ArtifactVersion> {
        self.versions.lock().unwrap().clone()
    }

    fn package(&self, scope: &ArtifactScope, name: &ArtifactName) -> Vec<ArtifactVersion> {
        self.all()
            .into_iter()
            .filter(|v| &v.identity.scope == scope && &v.identity.name == name)
            .collect()
    }
}

#[async_trait::async_trait]
impl ArtifactRepository for MemoryArtifacts {
    async fn publish(
        &self,
        version: &ArtifactVersion,
        stored_bytes: u64,
        quota: PublishQuota,
    ) -> Result<PublishOutcome, TransitionError<ArtifactError>> {
        let mut versions = self.versions.lock().unwrap();
        let same_release = |stored: &ArtifactVersion| {
            stored.identity.scope == version.identity.scope
                && stored.identity.name == version.identity.name
                && stored.identity.version.equals_ignoring_build(&version.identity.version)
        };
        if versions.iter().any(same_release) {
            return Err(TransitionError::Rejected(ArtifactError::VersionExists));
        }
        let package = |stored: &&ArtifactVersion| {
            stored.identity.scope == version.identity.scope && stored.identity.name == version.identity.name
        };
        let stored = versions.iter().filter(package).count() as u64;
        if stored >= quota.versions_per_package {
            return Ok(PublishOutcome::PackageFull { stored });
        }
        let mut charged = self.stored_bytes.lock().unwrap();
        let held = charged.get(&version.publisher).copied().unwrap_or_default();
        if held + stored_bytes > quota.bytes_per_publisher {
            return Ok(PublishOutcome::PublisherFull { stored_bytes: held });
        }
        charged.insert(version.publisher.clone(), held + stored_bytes);
        versions.push(version.clone());
        Ok(PublishOutcome::Published)
    }

    async fn publisher_stored_bytes(&self, publisher: &str) -> Result<u64, RepositoryError> {
        Ok(self
            .stored_bytes
            .lock()
            .unwrap()
            .get(publisher)
            .copied()
            .unwrap_or_default())
    }

    async fn references_bundle(&self, bundle_sri: &str) -> Result<bool, RepositoryError> {
        Ok(self.all().iter().any(|v| v.bundle_sri == bundle_sri))
    }

    async fn get(&self, identity: &ArtifactIdentity) -> Result<Option<ArtifactVersion>, RepositoryError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        Ok(self.all().into_iter().find(|v| &v.identity == identity))
    }

    async fn version_rows(
        &self,
        scope: &ArtifactScope,
        name: &ArtifactName,
        limit: Option<u64>,
    ) -> Result<Vec<VersionRow>, RepositoryError> {
        if self.miss_next_read.swap(false, Ordering::SeqCst) {
            return Ok(Vec::new());
        }
        let mut rows: Vec<VersionRow> = self
            .package(scope, name)
            .into_iter()
            .map(|v| VersionRow {
                identity: v.identity,
                visibility: v.visibility,
                status: v.status,
                published_at: v.published_at,
            })
            .collect();
        rows.sort_by(|a, b| b.identity.version.precedence(&a.identity.version));
        rows.truncate(limit.map_or(usize::MAX, |l| l as usize));
        Ok(rows)
    }

    async fn has_private_version(&self, scope: &ArtifactScope, name: &ArtifactName) -> Result<bool, RepositoryError> {
        Ok(self
            .package(scope, name)
            .iter()
            .any(|v| v.visibility == Visibility::Private))
    }

    async fn count_versions(&self, scope: &ArtifactScope, name: &ArtifactName) -> Result<u64, RepositoryError> {
        Ok(self.package(scope, name).len() as u64)
    }

    /// Every stored version on the first page, as the store's listing columns hold it (the
    /// service checks the filters exactly; a real store narrows by them too).
    async fn latest_versions(
        &self,
        _query: &ArtifactQuery,
        page: ResultPage,
    ) -> Result<Vec<ListedVersion>, RepositoryError> {
        let listed = self
            .all()
            .into_iter()
            .filter(|_| page.after.is_none())
            .map(|v| {
                let manifest = ArtifactManifest::parse(&v.manifest).expect("the fake stores parsable manifests");
                ListedVersion {
                    hooks: manifest.hooks().to_vec(),
                    description: manifest.description,
                    tags: manifest.tags,
                    identity: v.identity,
                    kind: v.kind,
                    visibility: v.visibility,
                    publisher: v.publisher,
                }
            })
            .collect();
        Ok(listed)
    }

    async fn yank(
        &self,
        _identity: &ArtifactIdentity,
        _reason: &str,
        _now: DateTime<Utc>,
    ) -> Result<(ArtifactVersion, YankOutcome), TransitionError<ArtifactError>> {
        Err(TransitionError::Rejected(ArtifactError::NotFound))
    }
}

/// Records each payload it is asked to verify, and verifies it.
#[derive(Default)]
pub(super) struct RecordingSigstore {
    payloads: Mutex<Vec<Vec<u8>>>,
}

impl RecordingSigstore {
    pub(super) fn payloads(&self) -> Vec<Vec<u8>> {
        self.payloads.lock().unwrap().clone()
    }
}

impl SigstoreVerifier for RecordingSigstore {
    fn verify(&self, _bundle: &Value, payload: &[u8]) -> SigstoreVerification {
        self.payloads.lock().unwrap().push(payload.to_vec());
        SigstoreVerification::Verified
    }
}

/// A module that exports exactly `exports` and imports nothing.
pub(super) struct FixedModule {
    pub(super) exports: Vec<String>,
}

impl ModuleInspector for FixedModule {
    fn inspect(&self, _javascript: &str) -> Result<EsModuleShape, CompileFailure> {
        Ok(EsModuleShape {
            exports: self.exports.clone(),
            imports: Vec::new(),
        })
    }
}

struct RendersAll;

impl RenderCheck for RendersAll {
    fn render(&self, _input: &RenderCheckInput<'_>) -> Result<(), RenderCheckFailure> {
        Ok(())
    }
}

/// Bundles by digest, as the filesystem store keeps them: one per content hash.
#[derive(Default)]
pub(super) struct MemoryBundles(Mutex<HashMap<[u8; 48], StoredBundle>>);

impl MemoryBundles {
    pub(super) fn holds(&self, bundle: &[u8]) -> bool {
        self.0.lock().unwrap().contains_key(BundleDigest::of(bundle).bytes())
    }
}

#[async_trait::async_trait]
impl BundleStore for MemoryBundles {
    async fn put(
        &self,
        digest: &BundleDigest,
        kind: ArtifactKind,
        bytes: &[u8],
    ) -> Result<BundleWrite, BundleStoreError> {
        let mut bundles = self.0.lock().unwrap();
        if bundles.contains_key(digest.bytes()) {
            return Ok(BundleWrite::AlreadyStored);
        }
        let bundle = StoredBundle {
            kind,
            bytes: bytes::Bytes::copy_from_slice(bytes),
        };
        bundles.insert(*digest.bytes(), bundle);
        Ok(BundleWrite::Written)
    }

    async fn get(&self, digest: &BundleDigest) -> Result<Option<StoredBundle>, BundleStoreError> {
        Ok(self.0.lock().unwrap().get(digest.bytes()).cloned())
    }

    async fn remove(&self, digest: &BundleDigest, _kind: ArtifactKind) -> Result<(), BundleStoreError> {
        self.0.lock().unwrap().remove(digest.bytes());
        Ok(())
    }

    async fn stored_len(&self, digest: &BundleDigest) -> Result<Option<u64>, BundleStoreError> {
        Ok(self.0.lock().unwrap().get(digest.bytes()).map(|b| b.bytes.len() as u64))
    }
}

/// No author keys, no tokens, and an Ed25519 check that never passes: the tests here publish
/// keyless (Sigstore) artifacts only.
struct NoKeys;

#[async_trait::async_trait]
impl AuthorKeyRepository for NoKeys {
    async fn register(&self, _key: &AuthorKey) -> Result<KeyRegistration, RepositoryError> {
        Ok(KeyRegistration::OwnedByAnother)
    }

    async fn get(&self, _public_key_id: &str) -> Result<Option<AuthorKey>, RepositoryError> {
        Ok(None)
    }
}

#[async_trait::async_trait]
impl RegistryTokenRepository for NoKeys {
    async fn insert(
        &self,
        _token_sha256: &str,
        _publisher: &Publisher,
        _created_at: DateTime<Utc>,
    ) -> Result<(), RepositoryError> {
        Ok(())
    }

    async fn find(&self, _token_sha256: &str) -> Result<Option<Publisher>, RepositoryError> {
        Ok(None)
    }
}

impl Ed25519Verifier for NoKeys {
    fn public_key_id(&self, _public_key: &[u8]) -> String {
        String::new()
    }

    fn verify(&self, _public_key: &[u8], _payload: &[u8], _signature: &[u8]) -> Result<(), SignatureRejected> {
        Err(SignatureRejected("no Ed25519 keys in these tests".into()))
    }
}

/// A service over `artifacts`, `sigstore` and a module exporting `exports`.
pub(super) fn service(
    artifacts: Arc<MemoryArtifacts>,
    sigstore: Arc<RecordingSigstore>,
    exports: &[&str],
) -> RegistryService {
    service_over(artifacts, Arc::new(MemoryBundles::default()), sigstore, exports)
}

/// [`service`] over `bundles` too.
pub(super) fn service_over(
    artifacts: Arc<MemoryArtifacts>,
    bundles: Arc<MemoryBundles>,
    sigstore: Arc<RecordingSigstore>,
    exports: &[&str],
) -> RegistryService {
    RegistryService::new(RegistryPorts {
        artifacts,
        author_keys: Arc::new(NoKeys),
        tokens: Arc::new(NoKeys),
        bundles,
        ed25519: Arc::new(NoKeys),
        sigstore,
        modules: Arc::new(FixedModule {
            exports: exports.iter().map(|e| (*e).to_owned()).collect(),
        }),
        compiler: Arc::new(StubCompiler::default()),
        render_check: Arc::new(RendersAll),
        cpu: CpuGate::unbounded(),
        clock: Arc::new(ManualClock::default()),
        ids: Arc::new(SequentialIds::default()),
    })
}
