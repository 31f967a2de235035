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
    let (mut found, mut failures) = (Vec::new(), Vec::new());
    for (package, version) in listed {
        let path = format!(
            "/manifest/blueprint/contract/clientCapabilities/gadgets/{}",
            package.replace('~', "~0").replace('/', "~1")
        );
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
