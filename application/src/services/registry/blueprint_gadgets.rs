//! The gadget packages a blueprint may import: the ones its contract lists in
//! `clientCapabilities.gadgets` (`{ "@scope/name": "1.2.3" }`), each a published, not yanked gadget
//! version of this registry. The gate compiles the blueprint with them and renders it with their
//! declared hooks, so a blueprint that uses a registry gadget passes the same checks the server
//! runs at start-up once both are installed.

use serde_json::Value;
use svc_domain::artifact::{
    ArtifactIdentity, ArtifactKind, ArtifactManifest, ArtifactStatus, GateFailure, ManifestBody,
};
use svc_domain::gadgets::{ExportName, GadgetDescriptor, GadgetExport};

use crate::ports::RepositoryError;
use crate::ports::registry::ArtifactRepository;

pub const RULE: &str = "blueprint_gadgets";

/// Most packages a contract may list: each costs a repository read, so an 8 MiB body could
/// otherwise ask for hundreds of thousands (docs/registry.md, "Limits"). Far above any real
/// blueprint, which imports a handful.
pub const MAX_LISTED_GADGETS: usize = 256;

const LISTED_PATH: &str = "/manifest/blueprint/contract/clientCapabilities/gadgets";

/// The descriptors of the listed packages, or the failures naming each package that is not a
/// published gadget version here.
pub async fn resolve(
    artifacts: &dyn ArtifactRepository,
    contract: &Value,
) -> Result<Result<Vec<GadgetDescriptor>, Vec<GateFailure>>, RepositoryError> {
    let Some(listed) = contract
        .pointer("/clientCapabilities/gadgets")
        .and_then(Value::as_object)
    else {
        return Ok(Ok(Vec::new()));
    };
    if listed.len() > MAX_LISTED_GADGETS {
        // Refused before any lookup: the count alone decides.
        return Ok(Err(vec![GateFailure::new(
            RULE,
            LISTED_PATH,
            format!(
                "the contract lists {} gadget packages; at most {MAX_LISTED_GADGETS} are allowed",
                listed.len()
            ),
        )]));
    }
    let (mut found, mut failures) = (Vec::new(), Vec::new());
    for (package, version) in listed {
        let path = format!("{LISTED_PATH}/{}", package.replace('~', "~0").replace('/', "~1"));
        let version = version.as_str().unwrap_or_default();
        let fail = |why: String| GateFailure::new(RULE, path.clone(), format!("{package} {version}: {why}"));
        let Some(identity) = package
            .split_once('/')
            .and_then(|(scope, name)| ArtifactIdentity::parse(scope, name, version).ok())
        else {
            failures.push(fail("not an exact `@scope/name` and version of this registry".into()));
            continue;
        };
        match artifacts.get(&identity).await? {
            Some(stored) if stored.kind == ArtifactKind::Gadget && stored.status == ArtifactStatus::Published => {
                found.push(descriptor(package, version, &stored.manifest));
            }
            Some(stored) if stored.kind != ArtifactKind::Gadget => {
                failures.push(fail("this registry holds it as a blueprint, not a gadget".into()));
            }
            Some(_) => failures.push(fail("this version was yanked".into())),
            None => failures.push(fail("this registry holds no such gadget version".into())),
        }
    }
    Ok(if failures.is_empty() { Ok(found) } else { Err(failures) })
}

/// The stored gadget's declared hooks, as the render check stubs them.
fn descriptor(package: &str, version: &str, manifest: &Value) -> GadgetDescriptor {
    let hooks = match ArtifactManifest::parse(manifest).map(|m| m.body) {
        Ok(ManifestBody::Gadget { hooks }) => hooks,
        _ => Vec::new(),
    };
    let exports = hooks
        .into_iter()
        .map(|hook| GadgetExport {
            name: ExportName::Hook(hook),
            description: None,
            usage: None,
            example: None,
            gotchas: Vec::new(),
            permission: None,
            required: None,
        })
        .collect();
    GadgetDescriptor::new(package, version, exports)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{Map, json};

    use super::super::test_ports::{MemoryArtifacts, RecordingSigstore, service};
    use super::*;

    /// A contract listing `count` packages, none of them published.
    fn listing(count: usize) -> Value {
        let gadgets: Map<String, Value> = (0..count).map(|i| (format!("@acme/g{i}"), json!("1.0.0"))).collect();
        json!({ "clientCapabilities": { "gadgets": gadgets } })
    }

    #[tokio::test]
    async fn a_contract_over_the_cap_is_refused_before_any_lookup() {
        let artifacts = MemoryArtifacts::default();
        let failures = resolve(&artifacts, &listing(MAX_LISTED_GADGETS + 1))
            .await
            .unwrap()
            .unwrap_err();
        assert_eq!(artifacts.reads(), 0, "no package is looked up");
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!((failures[0].rule, failures[0].path.as_str()), (RULE, LISTED_PATH));
        assert_eq!(
            failures[0].message,
            "the contract lists 257 gadget packages; at most 256 are allowed"
        );

        // At the cap each package is looked up (and, here, reported missing).
        let failures = resolve(&artifacts, &listing(MAX_LISTED_GADGETS))
            .await
            .unwrap()
            .unwrap_err();
        assert_eq!(artifacts.reads(), MAX_LISTED_GADGETS);
        assert_eq!(failures.len(), MAX_LISTED_GADGETS);
    }

    /// `POST /conformance/check` reports it as any gate failure: `{ ok: false, failures }`.
    #[tokio::test]
    async fn the_conformance_check_reports_the_cap_as_a_gate_failure() {
        let artifacts = Arc::new(MemoryArtifacts::default());
        let service = service(artifacts.clone(), Arc::new(RecordingSigstore::default()), &[]);
        let source: &[u8] = b"export default function Card() { return null; }";
        let manifest = json!({
            "kind": "blueprint", "scope": "@acme", "name": "card", "version": "1.0.0", "visibility": "public",
            "signature": { "algorithm": "sigstore",
                           "bundleSha384": svc_domain::artifact::BundleDigest::of(source).sri() },
            "blueprint": { "contract": listing(MAX_LISTED_GADGETS + 1), "entryPoint": "index.tsx" }
        });
        let failures = service.check_conformance(&manifest, Some(source)).await.unwrap();
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert_eq!((failures[0].rule, failures[0].path.as_str()), (RULE, LISTED_PATH));
        assert_eq!(artifacts.reads(), 0);
    }
}
