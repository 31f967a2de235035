//! Ports of the artifact registry: its metadata (versions, author keys, publisher tokens), the
//! bundle store, the signature verifiers and the module inspector of the conformance gate.

use chrono::{DateTime, Utc};
use serde_json::Value;
use svc_domain::artifact::{
    ArtifactError, ArtifactIdentity, ArtifactKind, ArtifactName, ArtifactScope, ArtifactStatus, ArtifactVersion,
    BundleDigest, Visibility, YankOutcome,
};

use super::RepositoryError;
use super::generation::CompileFailure;
pub use super::operator::TransitionError;

/// Who a registry token acts for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publisher {
    pub name: String,
    /// May yank and publish into any scope.
    pub admin: bool,
}

#[async_trait::async_trait]
pub trait RegistryTokenRepository: Send + Sync {
    /// Stores a token by its sha256 hex; the plaintext is never stored.
    async fn insert(
        &self,
        token_sha256: &str,
        publisher: &Publisher,
        created_at: DateTime<Utc>,
    ) -> Result<(), RepositoryError>;
    async fn find(&self, token_sha256: &str) -> Result<Option<Publisher>, RepositoryError>;
}

/// A publisher's registered Ed25519 public key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorKey {
    pub public_key_id: String,
    /// Base64 of the raw 32-byte key.
    pub public_key: String,
    pub publisher: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyRegistration {
    Created(AuthorKey),
    /// The same publisher registered this key before: the stored row.
    Existing(AuthorKey),
    /// Another publisher registered this key.
    OwnedByAnother,
}

#[async_trait::async_trait]
pub trait AuthorKeyRepository: Send + Sync {
    async fn register(&self, key: &AuthorKey) -> Result<KeyRegistration, RepositoryError>;
    async fn get(&self, public_key_id: &str) -> Result<Option<AuthorKey>, RepositoryError>;
}

/// A search of the store. `kind`, `scope` and `include_private` choose the versions a package's
/// latest is taken from; `text`, `tag` and `hook` then narrow the latest versions returned, and
/// the store may apply them loosely (a superset): the service checks them exactly.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArtifactQuery {
    pub kind: Option<ArtifactKind>,
    pub scope: Option<ArtifactScope>,
    pub include_private: bool,
    /// Lowercase text found in the lowercased scope, name, description or a tag.
    pub text: Option<String>,
    /// A tag of the manifest, exactly.
    pub tag: Option<String>,
    /// A hook of a gadget's manifest, exactly.
    pub hook: Option<String>,
}

/// Which slice of a search's results to read: at most `limit` packages after `after` in the
/// results' order (keyset paging: a version published or yanked meanwhile neither repeats nor
/// skips another package).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultPage {
    pub after: Option<PackageKey>,
    pub limit: u64,
}

/// A package: its scope and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageKey {
    pub scope: String,
    pub name: String,
}

impl PackageKey {
    pub fn of(identity: &ArtifactIdentity) -> Self {
        Self {
            scope: identity.scope.as_str().to_owned(),
            name: identity.name.as_str().to_owned(),
        }
    }
}

/// A package's latest version as a search answers it: read from the listing columns, never from
/// the manifest (a blueprint's manifest may be large; a search reads a page of packages at once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedVersion {
    pub identity: ArtifactIdentity,
    pub kind: ArtifactKind,
    pub visibility: Visibility,
    pub publisher: String,
    /// The manifest's `description` (empty when it has none).
    pub description: String,
    /// The manifest's tags, in manifest order.
    pub tags: Vec<String>,
    /// A gadget's declared hooks, in manifest order; none for a blueprint.
    pub hooks: Vec<String>,
}

/// One version as a package's version listing shows it: no manifest, no signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRow {
    pub identity: ArtifactIdentity,
    pub visibility: Visibility,
    pub status: ArtifactStatus,
    pub published_at: DateTime<Utc>,
}

/// The bounds a publish is stored under (docs/registry.md, "Limits"); the store checks them as it
/// writes, in one step with the insert, so publishes at the same moment never pass them together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublishQuota {
    /// Most versions one package holds, yanked ones included.
    pub versions_per_package: u64,
    /// Most bytes the versions one publisher published hold (`stored_bytes` of each), yanked
    /// ones included.
    pub bytes_per_publisher: u64,
}

/// What a publish bounded by a [`PublishQuota`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublishOutcome {
    Published,
    /// Nothing was written: the package holds `stored` versions, as many as it may or more.
    PackageFull {
        stored: u64,
    },
    /// Nothing was written: the publisher's versions hold `stored_bytes`, and this one would
    /// take them past the bound.
    PublisherFull {
        stored_bytes: u64,
    },
}

#[async_trait::async_trait]
pub trait ArtifactRepository: Send + Sync {
    /// Stores `version`, which costs its publisher `stored_bytes`, unless that breaks `quota`.
    /// `Rejected(VersionExists)` when the (scope, name, version) triple is taken, yanked or not,
    /// or a version of the package that differs only in build metadata is stored (checked by
    /// the store as it writes, so two publishes at the same moment cannot both pass).
    async fn publish(
        &self,
        version: &ArtifactVersion,
        stored_bytes: u64,
        quota: PublishQuota,
    ) -> Result<PublishOutcome, TransitionError<ArtifactError>>;
    /// The bytes the versions `publisher` published hold (what [`Self::publish`] charged it).
    async fn publisher_stored_bytes(&self, publisher: &str) -> Result<u64, RepositoryError>;
    /// Whether any stored version, yanked or not, has this bundle (`bundle_sri`): bundles are
    /// content-addressed, so versions may share one.
    async fn references_bundle(&self, bundle_sri: &str) -> Result<bool, RepositoryError>;
    async fn get(&self, identity: &ArtifactIdentity) -> Result<Option<ArtifactVersion>, RepositoryError>;
    /// Versions of one package, yanked ones included, without their manifests: the `limit` of
    /// highest SemVer precedence (all of them when `None`), highest first. A version not keyed
    /// for search yet (`svc_sql::registry::key_unkeyed_versions`) comes last.
    async fn version_rows(
        &self,
        scope: &ArtifactScope,
        name: &ArtifactName,
        limit: Option<u64>,
    ) -> Result<Vec<VersionRow>, RepositoryError>;
    /// Whether any version of the package, yanked or not, is private (one indexed probe).
    async fn has_private_version(&self, scope: &ArtifactScope, name: &ArtifactName) -> Result<bool, RepositoryError>;
    /// How many versions of the package are stored, yanked ones included.
    async fn count_versions(&self, scope: &ArtifactScope, name: &ArtifactName) -> Result<u64, RepositoryError>;
    /// Each package's highest published (not yanked) version by SemVer precedence among the
    /// versions the query's kind, scope and visibility admit, narrowed by its text, tag and
    /// hook; ordered by scope, then name (byte-wise); the `page` of them. A version not keyed for
    /// search yet (`svc_sql::registry::key_unkeyed_versions`) is not found.
    async fn latest_versions(
        &self,
        query: &ArtifactQuery,
        page: ResultPage,
    ) -> Result<Vec<ListedVersion>, RepositoryError>;
    /// Atomic `ArtifactVersion::yank`; `Rejected(NotFound)` for an unknown triple.
    async fn yank(
        &self,
        identity: &ArtifactIdentity,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<(ArtifactVersion, YankOutcome), TransitionError<ArtifactError>>;
}

#[derive(Debug, thiserror::Error)]
#[error("the bundle store failed")]
pub struct BundleStoreError(#[source] pub anyhow::Error);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredBundle {
    pub kind: ArtifactKind,
    /// Shared, not copied: every answer of one bundle points at the same bytes.
    pub bytes: bytes::Bytes,
}

/// What [`BundleStore::put`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BundleWrite {
    /// This put wrote the bundle.
    Written,
    /// The bundle was stored already (by a version sharing it, or a publish in flight): untouched.
    AlreadyStored,
}

/// Payloads by content hash. Writing the same hash twice is a no-op.
#[async_trait::async_trait]
pub trait BundleStore: Send + Sync {
    async fn put(
        &self,
        digest: &BundleDigest,
        kind: ArtifactKind,
        bytes: &[u8],
    ) -> Result<BundleWrite, BundleStoreError>;
    async fn get(&self, digest: &BundleDigest) -> Result<Option<StoredBundle>, BundleStoreError>;
    /// Removes the bundle (of `kind`) if it is stored; a missing one is no error.
    async fn remove(&self, digest: &BundleDigest, kind: ArtifactKind) -> Result<(), BundleStoreError>;
    /// The bundle's size in bytes, or `None` when it is not stored.
    async fn stored_len(&self, digest: &BundleDigest) -> Result<Option<u64>, BundleStoreError>;
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SignatureRejected(pub String);

/// Ed25519 with pinned keys.
pub trait Ed25519Verifier: Send + Sync {
    /// First 16 characters of base64(sha256(public key)).
    fn public_key_id(&self, public_key: &[u8]) -> String;
    fn verify(&self, public_key: &[u8], payload: &[u8], signature: &[u8]) -> Result<(), SignatureRejected>;
}

/// What the registry knows about a Sigstore bundle after publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SigstoreVerification {
    Verified,
    /// No verifier is wired: the bundle is stored as sent; the installer's check is the gate.
    Unverified,
    Rejected(String),
}

impl SigstoreVerification {
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Verified => "verified",
            Self::Unverified => "unverified",
            Self::Rejected(_) => "rejected",
        }
    }
}

/// Keyless Sigstore verification of a bundle over the signed payload
/// (`ArtifactManifest::signed_payload`: sha384 of a gadget's bundle, a blueprint's canonical
/// manifest), never over the bundle bytes themselves.
pub trait SigstoreVerifier: Send + Sync {
    fn verify(&self, bundle: &Value, payload: &[u8]) -> SigstoreVerification;
}

/// The shape of a plain ES module (a gadget bundle).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EsModuleShape {
    /// Exported names (`default` included when there is one).
    pub exports: Vec<String>,
    /// Module specifiers it imports or re-exports from.
    pub imports: Vec<String>,
}

/// Parses JavaScript as one ES module.
pub trait ModuleInspector: Send + Sync {
    fn inspect(&self, javascript: &str) -> Result<EsModuleShape, CompileFailure>;
}
