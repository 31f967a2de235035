//! Versions are immutable (Document 3): a publish is refused when its (scope, name, version)
//! exists, yanked or not, and also when a version that differs from it only in build metadata
//! does. SemVer 2.0.0 §10 gives `1.2.3` and `1.2.3+fix` the same precedence, so accepting the
//! second would let a publisher swap what "1.2.3" resolves to under installers.

use svc_domain::artifact::ArtifactManifest;

use super::{RegistryError, RegistryService};

impl RegistryService {
    /// `VersionExists` for the exact triple, `SamePrecedenceExists` for a build-metadata twin.
    pub(super) async fn refuse_existing_version(&self, manifest: &ArtifactManifest) -> Result<(), RegistryError> {
        let identity = &manifest.identity;
        let versions = self
            .ports
            .artifacts
            .version_rows(&identity.scope, &identity.name, None)
            .await?;
        let Some(existing) = versions
            .iter()
            .find(|stored| stored.identity.version.equals_ignoring_build(&identity.version))
        else {
            return Ok(());
        };
        if existing.identity.version == identity.version {
            return Err(RegistryError::VersionExists(identity.to_string()));
        }
        Err(RegistryError::SamePrecedenceExists {
            publishing: identity.to_string(),
            existing: existing.identity.to_string(),
        })
    }
}
