//! The conformance gate: what an artifact must satisfy before it is published (and what
//! `POST /conformance/check` reports as a dry run). Each failure names its rule and the JSON
//! pointer of the request body it is about.
//!
//! The compile and render of a check run through the CPU gate, one per slot. Behind the slots at
//! most [`WAITING_PER_SLOT`] checks per slot wait their turn, each holding its decoded bundle
//! (up to 6 MiB) and manifest; one more is refused at once with [`RegistryError::Busy`] (503
//! `overloaded` with `Retry-After`), so a burst of publishes neither queues without end nor holds
//! memory for every check it queued.

use crate::services::cpu_gate::{CpuBusy, CpuGate};
use std::sync::Arc;

use tokio::sync::Semaphore;

use serde_json::{Value, json};
use svc_domain::artifact::{ArtifactManifest, GateFailure, ManifestBody, ManifestError, compare_exports};
use svc_domain::contract::negotiate;

use super::{RegistryError, blueprint_gadgets};
use crate::ports::generation::{CompileFailure, Compiler, RenderCheck, RenderCheckFailure, RenderCheckInput};
use crate::ports::registry::{ArtifactRepository, ModuleInspector};
use svc_domain::gadgets::GadgetDescriptor;

/// The package every blueprint may import beside React and its contract's gadget packages.
const STANDARD_PACKAGE: &str = "@svc/gadgets";

/// Checks waiting per slot of the CPU gate: a check takes up to a few seconds (a compile and a
/// render within its time budget), so the last of them waits seconds, not minutes.
const WAITING_PER_SLOT: usize = 4;
/// What a refused check is told: about when the queue ahead of it has moved on.
const RETRY_AFTER_SECONDS: u64 = 5;

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
    /// Places for checks running or waiting: the gate's slots and the queue behind them.
    places: Arc<Semaphore>,
}

impl ConformanceGate {
    pub fn new(
        modules: Arc<dyn ModuleInspector>,
        compiler: Arc<dyn Compiler>,
        render_check: Arc<dyn RenderCheck>,
        artifacts: Arc<dyn ArtifactRepository>,
        cpu: CpuGate,
    ) -> Self {
        let places = cpu
            .slot_count()
            .saturating_mul(1 + WAITING_PER_SLOT)
            .min(Semaphore::MAX_PERMITS);
        Self {
            modules,
            compiler,
            render_check,
            artifacts,
            cpu,
            places: Arc::new(Semaphore::new(places)),
        }
    }

    /// The whole gate over a raw manifest: version and schema first, then the bundle.
    pub async fn check(&self, manifest: &Value, bundle: Option<&[u8]>) -> Result<Vec<GateFailure>, RegistryError> {
        let oversized = super::manifest_limits::oversized_parts(manifest);
        if !oversized.is_empty() {
            return Ok(oversized);
        }
        match ArtifactManifest::parse(manifest) {
            Ok(manifest) => self.check_bundle(&manifest, bundle).await,
            Err(ManifestError::Schema(failures)) => Ok(super::manifest_limits::excerpted(failures)),
            Err(ManifestError::Version(error)) => Ok(vec![GateFailure::new(
                "version_format",
                "/manifest/version",
                error.to_string(),
            )]),
        }
    }

    /// The bundle rules for a manifest that passed its schema. Compiling and rendering are CPU
    /// work: they run on the blocking pool, through the gate; [`RegistryError::Busy`] when the
    /// slots and the queue behind them are full.
    pub async fn check_bundle(
        &self,
        manifest: &ArtifactManifest,
        bundle: Option<&[u8]>,
    ) -> Result<Vec<GateFailure>, RegistryError> {
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
        // Held by the check until it ends (even when its caller stopped waiting), given back when
        // it is dropped before it runs.
        let place = self.places.clone().try_acquire_owned().map_err(|_| {
            RegistryError::Busy(CpuBusy {
                retry_after_seconds: RETRY_AFTER_SECONDS,
            })
        })?;
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
        // A check with a place waits for a CPU slot rather than fail.
        Ok(self
            .cpu
            .run_admitted(move || {
                let _held_until_the_check_ends = place;
                match body {
                    ManifestBody::Gadget { hooks } => gate.check_gadget(&source, &hooks),
                    ManifestBody::Blueprint {
                        contract,
                        fixture_props,
                        ..
                    } => gate.check_blueprint(&source, &contract, fixture_props.as_ref(), &gadgets),
                }
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

#[cfg(test)]
mod tests {
    use std::pin::pin;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Condvar, Mutex};
    use std::task::{Context, Poll, Waker};
    use std::time::Duration;

    use svc_domain::artifact::BundleDigest;

    use super::super::test_ports::MemoryArtifacts;
    use super::*;
    use crate::ports::generation::{RenderCheckFailure, RenderCheckInput};
    use crate::ports::registry::EsModuleShape;
    use crate::testing::StubCompiler;

    const GADGET_JS: &[u8] = b"export function useChart() { return 1; }\n";

    /// Shut until the test opens it; then open for good.
    #[derive(Default)]
    struct Latch {
        open: Mutex<bool>,
        opened: Condvar,
    }

    impl Latch {
        fn open(&self) {
            *self.open.lock().unwrap() = true;
            self.opened.notify_all();
        }

        fn wait(&self) {
            let open = self.open.lock().unwrap();
            drop(self.opened.wait_while(open, |open| !*open).unwrap());
        }
    }

    /// A gadget's module, read only once the test opens `latch`.
    struct HeldModule {
        latch: Arc<Latch>,
    }

    impl ModuleInspector for HeldModule {
        fn inspect(&self, _javascript: &str) -> Result<EsModuleShape, CompileFailure> {
            self.latch.wait();
            Ok(EsModuleShape {
                exports: vec!["useChart".into()],
                imports: Vec::new(),
            })
        }
    }

    struct NoRender;

    impl RenderCheck for NoRender {
        fn render(&self, _input: &RenderCheckInput<'_>) -> Result<(), RenderCheckFailure> {
            Ok(())
        }
    }

    fn gadget() -> ArtifactManifest {
        ArtifactManifest::parse(&json!({
            "kind": "gadget", "scope": "@acme", "name": "chart", "version": "1.0.0", "visibility": "public",
            "signature": { "algorithm": "sigstore", "bundleSha384": BundleDigest::of(GADGET_JS).sri() },
            "gadget": { "exports": [{ "hook": "useChart", "description": "d", "usage": "u", "example": "e" }] }
        }))
        .expect("a valid gadget manifest")
    }

    #[tokio::test]
    async fn a_check_past_the_queue_behind_the_cpu_slots_is_refused_at_once_with_a_retry_time() {
        let latch = Arc::new(Latch::default());
        let gate = ConformanceGate::new(
            Arc::new(HeldModule { latch: latch.clone() }),
            Arc::new(StubCompiler::default()),
            Arc::new(NoRender),
            Arc::new(MemoryArtifacts::default()),
            CpuGate::new(1, Duration::ZERO),
        );
        let manifest = gadget();
        // One check runs (held by the latch), four wait for the one slot.
        let asked = Arc::new(AtomicUsize::new(0));
        let checks: Vec<_> = (0..1 + WAITING_PER_SLOT)
            .map(|_| {
                let (gate, manifest, asked) = (gate.clone(), manifest.clone(), asked.clone());
                tokio::spawn(async move {
                    asked.fetch_add(1, Ordering::SeqCst);
                    gate.check_bundle(&manifest, Some(GADGET_JS)).await
                })
            })
            .collect();
        while asked.load(Ordering::SeqCst) < checks.len() {
            tokio::task::yield_now().await;
        }
        let one_more = pin!(gate.check_bundle(&manifest, Some(GADGET_JS)));
        let answer = one_more.poll(&mut Context::from_waker(Waker::noop()));
        let Poll::Ready(Err(refused)) = answer else {
            panic!("not refused at once: {answer:?}");
        };
        assert!(
            matches!(refused, RegistryError::Busy(CpuBusy { retry_after_seconds: 5 })),
            "{refused:?}"
        );
        assert_eq!(refused.code(), "overloaded");

        latch.open();
        for check in checks {
            assert_eq!(check.await.unwrap().unwrap(), Vec::new(), "the queued checks ran");
        }
        assert_eq!(
            gate.check_bundle(&manifest, Some(GADGET_JS)).await.unwrap(),
            Vec::new(),
            "their places are free again"
        );
    }
}
