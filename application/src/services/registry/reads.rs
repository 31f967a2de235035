//! Version listing, one version, and bundles by hash.

use chrono::{DateTime, Utc};
use svc_domain::artifact::{
    ArtifactIdentity, ArtifactName, ArtifactScope, ArtifactVersion, BundleDigest, SemanticVersion, Visibility,
};

use super::{RegistryError, RegistryService};
use crate::ports::registry::{Publisher, StoredBundle};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionSummary {
    pub version: SemanticVersion,
    pub published_at: DateTime<Utc>,
    pub yanked: bool,
}

impl RegistryService {
    /// Every version of a package, ascending by SemVer precedence. A package with a private
    /// version needs a credential.
    pub async fn versions(
        &self,
        caller: Option<&Publisher>,
        scope: &str,
        name: &str,
    ) -> Result<(ArtifactScope, ArtifactName, Vec<VersionSummary>), RegistryError> {
        let scope = ArtifactScope::parse(scope).map_err(RegistryError::from_identity)?;
        let name = ArtifactName::parse(name).map_err(RegistryError::from_identity)?;
        let mut versions = self.ports.artifacts.versions(&scope, &name).await?;
        if versions.is_empty() {
            return Err(not_found(&format!("{}/{}", scope.as_str(), name.as_str())));
        }
        if caller.is_none() && versions.iter().any(|v| v.visibility == Visibility::Private) {
            return Err(RegistryError::Unauthorized);
        }
        versions.sort_by(|a, b| a.identity.version.precedence(&b.identity.version));
        let summaries = versions
            .into_iter()
            .map(|v| VersionSummary {
                yanked: v.is_yanked(),
                version: v.identity.version,
                published_at: v.published_at,
            })
            .collect();
        Ok((scope, name, summaries))
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
