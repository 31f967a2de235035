use svc_domain::artifact::{ArtifactError, ArtifactVersion, GateFailure};

use crate::ports::RepositoryError;
use crate::ports::registry::{BundleStoreError, TransitionError};
use crate::services::cpu_gate::CpuBusy;

/// Every refusal of the registry; the HTTP adapter gives each its status and `error` code
/// (docs/registry.md, "Errors").
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("a valid bearer token is required")]
    Unauthorized,
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    InvalidRequest(String),
    #[error("{0}")]
    InvalidVersion(ArtifactError),
    #[error("the manifest does not match its schema: {}", first_message(.0))]
    InvalidManifest(Vec<GateFailure>),
    #[error("the conformance gate refused the artifact: {}", first_message(.0))]
    ConformanceFailed(Vec<GateFailure>),
    #[error("{0}")]
    BundleMismatch(String),
    #[error("{0}")]
    UnknownKey(String),
    #[error("{0}")]
    BadSignature(String),
    #[error("{0} already exists; versions are immutable")]
    VersionExists(String),
    /// A version equal to an existing one but for build metadata (SemVer 2.0.0 §10).
    #[error(
        "{existing} already exists and {publishing} differs from it only in build metadata, which does not \
         change precedence; versions are immutable"
    )]
    SamePrecedenceExists { publishing: String, existing: String },
    #[error("this public key is registered by another publisher")]
    KeyExists,
    /// A package holds as many versions as it may (`MAX_VERSIONS_PER_PACKAGE`).
    #[error("{0}")]
    QuotaExceeded(String),
    #[error("{} was yanked: {}", .0.identity, .0.yank_reason.as_deref().unwrap_or("no reason given"))]
    Yanked(Box<ArtifactVersion>),
    /// The conformance checks running and queued fill their places (conformance.rs).
    #[error(
        "the registry is checking as many artifacts as it queues at once; retry in {} s",
        .0.retry_after_seconds
    )]
    Busy(CpuBusy),
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

fn first_message(failures: &[GateFailure]) -> String {
    failures
        .first()
        .map(|f| format!("{} at {}: {}", f.rule, f.path, f.message))
        .unwrap_or_default()
}

impl RegistryError {
    /// The snake_case `error` code of the wire.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unauthorized => "unauthorized",
            Self::Forbidden(_) => "forbidden",
            Self::NotFound(_) => "not_found",
            Self::InvalidRequest(_) => "invalid_request",
            Self::InvalidVersion(_) => "invalid_version",
            Self::InvalidManifest(_) => "invalid_manifest",
            Self::ConformanceFailed(_) => "conformance_failed",
            Self::BundleMismatch(_) => "bundle_mismatch",
            Self::UnknownKey(_) => "unknown_key",
            Self::BadSignature(_) => "bad_signature",
            Self::VersionExists(_) | Self::SamePrecedenceExists { .. } => "version_exists",
            Self::KeyExists => "key_exists",
            Self::QuotaExceeded(_) => "quota_exceeded",
            Self::Yanked(_) => "version_yanked",
            Self::Busy(_) => "overloaded",
            Self::Internal(_) => "internal",
        }
    }

    /// The gate failures behind `invalid_manifest` and `conformance_failed`.
    pub fn failures(&self) -> &[GateFailure] {
        match self {
            Self::InvalidManifest(failures) | Self::ConformanceFailed(failures) => failures,
            _ => &[],
        }
    }

    /// An identity read from a path or body that does not parse.
    pub(crate) fn from_identity(error: ArtifactError) -> Self {
        match error {
            ArtifactError::InvalidVersion { .. } => Self::InvalidVersion(error),
            other => Self::InvalidRequest(other.to_string()),
        }
    }
}

impl From<RepositoryError> for RegistryError {
    fn from(error: RepositoryError) -> Self {
        Self::Internal(error.into())
    }
}

impl From<BundleStoreError> for RegistryError {
    fn from(error: BundleStoreError) -> Self {
        Self::Internal(error.into())
    }
}

impl From<TransitionError<ArtifactError>> for RegistryError {
    fn from(error: TransitionError<ArtifactError>) -> Self {
        match error {
            TransitionError::Rejected(ArtifactError::NotFound) => Self::NotFound("no such artifact version".into()),
            TransitionError::Rejected(other) => Self::InvalidRequest(other.to_string()),
            TransitionError::Repository(error) => error.into(),
        }
    }
}
