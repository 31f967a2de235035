//! The registry's manifest loader: what `svc_registry_publish` and the conformance gate read from
//! a publisher (Document 3), the one manifest strangers write.

use svc_domain::artifact::{ArtifactManifest, ManifestBody};

/// The input is an artifact manifest (JSON).
pub fn manifest(data: &[u8]) {
    let Some(raw) = crate::json(data) else { return };
    let Ok(manifest) = ArtifactManifest::parse(&raw) else {
        return;
    };
    assert_eq!(manifest.raw, raw, "the manifest is kept exactly as sent");
    if let ManifestBody::Gadget { hooks } = &manifest.body {
        assert_eq!(manifest.hooks(), hooks.as_slice());
    }
}
