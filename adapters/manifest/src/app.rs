//! `svc.json`: gadgets, theme settings, the `blueprints.include` globs and the registry.

use serde::Deserialize;
use svc_domain::gadgets::GadgetDescriptor;

use crate::ManifestError;
use crate::checked_json::{MANIFEST_VALIDATOR, checked, typed};

/// What `svc.json` configures, checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppManifest {
    pub gadgets: Vec<GadgetDescriptor>,
    pub default_theme_id: String,
    /// Empty: the whole catalog.
    pub available_theme_ids: Vec<String>,
    /// The glob patterns of `svc.ui.json` files, relative to the manifest's directory, each a
    /// valid pattern. `None` without a `blueprints` section: the server then has no UI registry.
    pub blueprint_includes: Option<Vec<String>>,
    pub registry: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawManifest {
    #[serde(default)]
    app: RawApp,
    blueprints: Option<RawBlueprints>,
    registry: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RawApp {
    #[serde(default)]
    gadgets: Vec<GadgetDescriptor>,
    pub(crate) default_theme_id: Option<String>,
    #[serde(default)]
    pub(crate) available_theme_ids: Vec<String>,
}

#[derive(Deserialize)]
struct RawBlueprints {
    include: Vec<String>,
}

/// The bytes of a `svc.json`, checked against its schema and the rules the schema cannot say.
pub fn parse_manifest(bytes: &[u8]) -> Result<AppManifest, ManifestError> {
    let raw: RawManifest = typed(checked(bytes, &MANIFEST_VALIDATOR)?)?;
    for (index, gadget) in raw.app.gadgets.iter().enumerate() {
        gadget
            .check_transport()
            .map_err(|rule| ManifestError(format!("at /app/gadgets/{index}/{rule}")))?;
    }
    let (default_theme_id, available_theme_ids) = crate::themes::theme_settings(&raw.app)?;
    let blueprint_includes = raw.blueprints.map(|b| check_globs(b.include)).transpose()?;
    Ok(AppManifest {
        gadgets: raw.app.gadgets,
        default_theme_id,
        available_theme_ids,
        blueprint_includes,
        registry: raw.registry,
    })
}

/// Each include must be a glob pattern (matching it against files is the caller's part).
fn check_globs(patterns: Vec<String>) -> Result<Vec<String>, ManifestError> {
    for (i, pattern) in patterns.iter().enumerate() {
        glob::Pattern::new(pattern).map_err(|e| {
            ManifestError(format!(
                "at /blueprints/include/{i}: `{pattern}` is not a glob pattern: {e}"
            ))
        })?;
    }
    Ok(patterns)
}
