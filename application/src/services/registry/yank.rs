//! Yanking: admin tooling only (`POST /admin/yank`, `svc registry yank`).

use svc_domain::artifact::{ArtifactIdentity, ArtifactVersion, YankOutcome};

use super::{RegistryError, RegistryService};
use crate::ports::registry::Publisher;

#[derive(Debug, Clone)]
pub struct Yanked {
    pub version: ArtifactVersion,
    pub already_yanked: bool,
}

impl RegistryService {
    /// `POST /admin/yank`: needs an admin token.
    pub async fn yank_as(
        &self,
        caller: Option<&Publisher>,
        scope: &str,
        name: &str,
        version: &str,
        reason: &str,
    ) -> Result<Yanked, RegistryError> {
        let caller = caller.ok_or(RegistryError::Unauthorized)?;
        if !caller.admin {
            return Err(RegistryError::Forbidden("yanking needs an admin token".into()));
        }
        self.yank(scope, name, version, reason).await
    }

    /// The registry host's own tooling (`svc registry yank`), which reaches the database directly.
    pub async fn yank(&self, scope: &str, name: &str, version: &str, reason: &str) -> Result<Yanked, RegistryError> {
        let identity = ArtifactIdentity::parse(scope, name, version).map_err(RegistryError::from_identity)?;
        let reason = reason.trim();
        if reason.is_empty() {
            return Err(RegistryError::InvalidRequest("a yank needs a reason".into()));
        }
        let (version, outcome) = self
            .ports
            .artifacts
            .yank(&identity, reason, self.ports.clock.now())
            .await?;
        Ok(Yanked {
            version,
            already_yanked: outcome == YankOutcome::AlreadyYanked,
        })
    }
}
