//! The artifact registry (Document 3, docs/registry.md): publishers and their tokens, author
//! keys, publishing through the conformance gate and the signature checks, reads with the
//! visibility and yank rules, search, and yanking.

mod blueprint_gadgets;
mod conformance;
mod credentials;
mod error;
mod existing_version;
mod manifest_limits;
mod publish;
mod reads;
mod search;
mod yank;

#[cfg(test)]
mod publish_tests;
#[cfg(test)]
mod read_tests;
#[cfg(test)]
mod test_ports;

use crate::services::cpu_gate::CpuGate;
use std::sync::Arc;

use crate::ports::generation::{Compiler, RenderCheck};
use crate::ports::registry::{
    ArtifactRepository, AuthorKeyRepository, BundleStore, Ed25519Verifier, ModuleInspector, PublishQuota,
    RegistryTokenRepository, SigstoreVerifier,
};
use crate::ports::{Clock, Ids};

pub use conformance::ConformanceGate;
pub use error::RegistryError;
pub use manifest_limits::{CONTRACT_MAX_BYTES, FIXTURE_PROPS_MAX_BYTES};
pub use publish::{DEFAULT_PUBLISH_QUOTA, MAX_VERSIONS_PER_PACKAGE, PublishRequest, PublishSignature, Published};
pub use reads::{PackageVersions, VERSION_LISTING_LIMIT, VersionSummary};
pub use search::{SearchHit, SearchQuery};
pub use yank::Yanked;

/// Everything the registry needs from the outside world.
#[derive(Clone)]
pub struct RegistryPorts {
    pub artifacts: Arc<dyn ArtifactRepository>,
    pub author_keys: Arc<dyn AuthorKeyRepository>,
    pub tokens: Arc<dyn RegistryTokenRepository>,
    pub bundles: Arc<dyn BundleStore>,
    pub ed25519: Arc<dyn Ed25519Verifier>,
    pub sigstore: Arc<dyn SigstoreVerifier>,
    pub modules: Arc<dyn ModuleInspector>,
    pub compiler: Arc<dyn Compiler>,
    pub render_check: Arc<dyn RenderCheck>,
    /// Bounds how many conformance checks (compile and render) run at once.
    pub cpu: CpuGate,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn Ids>,
}

#[derive(Clone)]
pub struct RegistryService {
    ports: RegistryPorts,
    gate: ConformanceGate,
    quota: PublishQuota,
}

impl RegistryService {
    pub fn new(ports: RegistryPorts) -> Self {
        let gate = ConformanceGate::new(
            ports.modules.clone(),
            ports.compiler.clone(),
            ports.render_check.clone(),
            ports.artifacts.clone(),
            ports.cpu.clone(),
        );
        Self {
            ports,
            gate,
            quota: DEFAULT_PUBLISH_QUOTA,
        }
    }

    /// The service with `quota` instead of [`DEFAULT_PUBLISH_QUOTA`] (`[registry]` settings).
    pub fn with_quota(self, quota: PublishQuota) -> Self {
        Self { quota, ..self }
    }
}

impl RegistryService {
    /// `POST /conformance/check`: the gate as a dry run, every failure listed.
    pub async fn check_conformance(
        &self,
        manifest: &serde_json::Value,
        bundle: Option<&[u8]>,
    ) -> Result<Vec<svc_domain::artifact::GateFailure>, RegistryError> {
        self.gate.check(manifest, bundle).await
    }
}
