//! Version listing, one version, and bundles by hash.

use chrono::{DateTime, Utc};
use svc_domain::artifact::{
    ArtifactIdentity, ArtifactName, ArtifactScope, ArtifactStatus, ArtifactVersion, BundleDigest, SemanticVersion,
    Visibility,
};

use super::{RegistryError, RegistryService};
use crate::ports::registry::{Publisher, StoredBundle};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionSummary {
    pub version: SemanticVersion,
    pub published_at: DateTime<Utc>,
    pub yanked: bool,
}

/// Most versions one listing answers: the highest by SemVer precedence. Publish refuses a
/// package's version past `MAX_VERSIONS_PER_PACKAGE` (the same 1000), so a listing is whole unless
/// publishes racing at the cap stored a few more.
pub const VERSION_LISTING_LIMIT: u64 = 1000;

/// A package's versions as `GET /pkg/{scope}/{name}` answers them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageVersions {
    pub scope: ArtifactScope,
    pub name: ArtifactName,
    /// Ascending by SemVer precedence: the highest [`VERSION_LISTING_LIMIT`] versions.
    pub versions: Vec<VersionSummary>,
    /// More versions are stored than the listing shows (the lowest are left out).
    pub truncated: bool,
}

impl RegistryService {
    /// A package's versions, ascending by SemVer precedence, at most [`VERSION_LISTING_LIMIT`] (the
    /// highest). A package with a private version needs a credential: that is asked of the store
    /// first, so a refused read loads no version. No manifest is read.
    pub async fn versions(
        &self,
        caller: Option<&Publisher>,
        scope: &str,
        name: &str,
    ) -> Result<PackageVersions, RegistryError> {
        let scope = ArtifactScope::parse(scope).map_err(RegistryError::from_identity)?;
        let name = ArtifactName::parse(name).map_err(RegistryError::from_identity)?;
        let artifacts = &self.ports.artifacts;
        if caller.is_none() && artifacts.has_private_version(&scope, &name).await? {
            return Err(RegistryError::Unauthorized);
        }
        let mut rows = artifacts
            .version_rows(&scope, &name, Some(VERSION_LISTING_LIMIT + 1))
            .await?;
        if rows.is_empty() {
            return Err(not_found(&format!("{}/{}", scope.as_str(), name.as_str())));
        }
        let truncated = rows.len() as u64 > VERSION_LISTING_LIMIT;
        rows.truncate(VERSION_LISTING_LIMIT as usize);
        rows.sort_by(|a, b| a.identity.version.precedence(&b.identity.version));
        let versions = rows
            .into_iter()
            .map(|row| VersionSummary {
                yanked: row.status == ArtifactStatus::Yanked,
                version: row.identity.version,
                published_at: row.published_at,
            })
            .collect();
        Ok(PackageVersions {
            scope,
            name,
            versions,
            truncated,
        })
    }

    /// One version; private ones need a credential; a yanked one is `Yanked` with its manifest.
    pub async fn version(
        &self,
        caller: Option<&Publisher>,
        scope: &str,
        name: &str,
        version: &str,
    ) -> Result<ArtifactVersion, RegistryError> {
        let identity = ArtifactIdentity::parse(scope, name, version).map_err(RegistryError::from_identity)?;
        let found = self
            .ports
            .artifacts
            .get(&identity)
            .await?
            .ok_or_else(|| not_found(&identity.to_string()))?;
        if caller.is_none() && found.visibility == Visibility::Private {
            return Err(RegistryError::Unauthorized);
        }
        if found.is_yanked() {
            return Err(RegistryError::Yanked(Box::new(found)));
        }
        Ok(found)
    }

    /// A payload by the lowercase hex of its sha384.
    pub async fn bundle(&self, hex_digest: &str) -> Result<(BundleDigest, StoredBundle), RegistryError> {
        let missing = || RegistryError::NotFound(format!("no bundle with sha384 {hex_digest:?}"));
        let digest = BundleDigest::from_hex(hex_digest).ok_or_else(missing)?;
        let bundle = self.ports.bundles.get(&digest).await?.ok_or_else(missing)?;
        Ok((digest, bundle))
    }
}

fn not_found(what: &str) -> RegistryError {
    RegistryError::NotFound(format!("{what} is not in this registry"))
}
