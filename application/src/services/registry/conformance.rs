//! The conformance gate: what an artifact must satisfy before it is published (and what
//! `POST /conformance/check` reports as a dry run). Each failure names its rule and the JSON
//! pointer of the request body it is about.

use crate::services::cpu_gate::CpuGate;
use std::sync::Arc;

use serde_json::{Value, json};
use svc_domain::artifact::{ArtifactManifest, GateFailure, ManifestBody, ManifestError, compare_exports};
use svc_domain::contract::negotiate;

use super::blueprint_gadgets;
use crate::ports::RepositoryError;
use crate::ports::generation::{CompileFailure, Compiler, RenderCheck, RenderCheckFailure, RenderCheckInput};
use crate::ports::registry::{ArtifactRepository, ModuleInspector};
use svc_domain::gadgets::GadgetDescriptor;

/// The package every blueprint may import beside React and its contract's gadget packages.
const STANDARD_PACKAGE: &str = "@svc/gadgets";

/// Where a blueprint's contract is in the request body.
const CONTRACT_PATH: &str = "/manifest/blueprint/contract";

#[derive(Clone)]
pub struct ConformanceGate {
    modules: Arc<dyn ModuleInspector>,
    compiler: Arc<dyn Compiler>,
    render_check: Arc<dyn RenderCheck>,
    /// Where a blueprint's `clientCapabilities.gadgets` packages are looked up.
    artifacts: Arc<dyn ArtifactRepository>,
    cpu: CpuGate,
}

impl ConformanceGate {
    pub fn new(
        modules: Arc<dyn ModuleInspector>,
        compiler: Arc<dyn Compiler>,
        render_check: Arc<dyn RenderCheck>,
        artifacts: Arc<dyn ArtifactRepository>,
        cpu: CpuGate,
    ) -> Self {
        Self {
            modules,
            compiler,
            render_check,
            artifacts,
            cpu,
        }
    }

    /// The whole gate over a raw manifest: version and schema first, then the bundle.
    pub async fn check(&self, manifest: &Value, bundle: Option<&[u8]>) -> Result<Vec<GateFailure>, RepositoryError> {
        match ArtifactManifest::parse(manifest) {
            Ok(manifest) => self.check_bundle(&manifest, bundle).await,
            Err(ManifestError::Schema(failures)) => Ok(failures),
            Err(ManifestError::Version(error)) => Ok(vec![GateFailure::new(
                "version_format",
                "/manifest/version",
                error.to_string(),
            )]),
        }
    }

    /// The bundle rules for a manifest that passed its schema. Compiling and rendering are CPU
    /// work: they run on the blocking pool.
    pub async fn check_bundle(
        &self,
        manifest: &ArtifactManifest,
        bundle: Option<&[u8]>,
    ) -> Result<Vec<GateFailure>, RepositoryError> {
        let Some(bundle) = bundle else {
            return Ok(vec![GateFailure::new(
                "bundle_required",
                "/bundle",
                "a bundle is required",
            )]);
        };
        let Ok(source) = std::str::from_utf8(bundle) else {
            let rule = match manifest.body {
                ManifestBody::Gadget { .. } => "gadget_module",
                ManifestBody::Blueprint { .. } => "blueprint_compiles",
            };
            return Ok(vec![GateFailure::new(rule, "/bundle", "the bundle is not UTF-8 text")]);
        };
        let gadgets = match &manifest.body {
            ManifestBody::Blueprint { contract, .. } => {
                match blueprint_gadgets::resolve(self.artifacts.as_ref(), contract).await? {
                    Ok(gadgets) => gadgets,
                    Err(failures) => return Ok(failures),
                }
            }
            ManifestBody::Gadget { .. } => Vec::new(),
        };
        let source = source.to_owned();
        let gate = self.clone();
        let body = manifest.body.clone();
        // A publish is admitted once authenticated: it waits for a CPU slot rather than fail.
        Ok(self
            .cpu
            .run_admitted(move || match body {
                ManifestBody::Gadget { hooks } => gate.check_gadget(&source, &hooks),
                ManifestBody::Blueprint {
                    contract,
                    fixture_props,
                    ..
                } => gate.check_blueprint(&source, &contract, fixture_props.as_ref(), &gadgets),
            })
            .await
            .unwrap_or_else(|error| {
                vec![GateFailure::new(
                    "bundle_required",
                    "/bundle",
                    format!("the check could not run: {error}"),
                )]
            }))
    }

    fn check_gadget(&self, source: &str, hooks: &[String]) -> Vec<GateFailure> {
        let shape = match self.modules.inspect(source) {
            Ok(shape) => shape,
            Err(failure) => return vec![GateFailure::new("gadget_module", "/bundle", findings(&failure))],
        };
        // One module: it may import packages the page provides, never a sibling file.
        if let Some(relative) = shape.imports.iter().find(|s| s.starts_with('.') || s.starts_with('/')) {
            return vec![GateFailure::new(
                "gadget_module",
                "/bundle",
                format!("the bundle imports `{relative}`; a gadget bundle is one self-contained ES module"),
            )];
        }
        compare_exports(hooks, &shape.exports)
    }

    fn check_blueprint(
        &self,
        source: &str,
        contract: &Value,
        fixture_props: Option<&Value>,
        gadgets: &[GadgetDescriptor],
    ) -> Vec<GateFailure> {
        // The servers that install it agree the contract as `svc_handshake` does (and refuse to
        // start on one they cannot): the registry refuses it here instead of handing it out.
        if let Err(declined) = negotiate(contract) {
            return declined
                .findings
                .into_iter()
                .map(|finding| {
                    GateFailure::new(
                        "blueprint_contract",
                        format!("{CONTRACT_PATH}{}", finding.path),
                        finding.message,
                    )
                })
                .collect();
        }
        let packages: Vec<String> = std::iter::once(STANDARD_PACKAGE.to_owned())
            .chain(gadgets.iter().map(|g| g.package.clone()))
            .collect();
        let module = match self.compiler.compile(source, &packages) {
            Ok(module) => module,
            Err(failure) => return vec![GateFailure::new("blueprint_compiles", "/bundle", findings(&failure))],
        };
        let empty = json!({});
        let input = RenderCheckInput {
            code: &module.code,
            props: fixture_props.unwrap_or(&empty),
            contract,
            gadgets,
            theme_id: None,
        };
        match self.render_check.render(&input) {
            Ok(()) => Vec::new(),
            Err(RenderCheckFailure::Findings(found)) => vec![GateFailure::new(
                "blueprint_renders",
                "/manifest/blueprint/fixtureProps",
                found.iter().map(|f| f.message.as_str()).collect::<Vec<_>>().join("; "),
            )],
            Err(RenderCheckFailure::Unavailable(why)) => vec![GateFailure::new(
                "blueprint_renders",
                "/manifest/blueprint/fixtureProps",
                format!("the render check could not run: {why}"),
            )],
        }
    }
}

fn findings(failure: &CompileFailure) -> String {
    failure
        .findings
        .iter()
        .map(|f| match f.line {
            Some(line) => format!("line {line}: {}", f.message),
            None => f.message.clone(),
        })
        .collect::<Vec<_>>()
        .join("; ")
}
