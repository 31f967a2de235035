//! `svc.ui.json`: one blueprint the manifest includes.

use serde::Deserialize;
use serde_json::Value;
use svc_domain::session::SessionVariant;

use crate::ManifestError;
use crate::checked_json::{UI_VALIDATOR, checked, typed};

/// A checked `svc.ui.json`, its defaults filled in; `entry_point` is relative to its directory.
#[derive(Debug, Clone, PartialEq)]
pub struct UiManifest {
    pub id: String,
    pub name: String,
    pub description: String,
    pub category: String,
    pub contract: Value,
    pub entry_point: String,
    pub fixture_props: Option<Value>,
    pub featured: bool,
    pub mount: SessionVariant,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawUi {
    id: String,
    name: Option<String>,
    #[serde(default)]
    description: String,
    category: Option<String>,
    contract: Option<Value>,
    entry_point: String,
    fixture_props: Option<Value>,
    #[serde(default)]
    featured: bool,
    /// `render` (default) or `mcpApps`; the schema admits no other value.
    mount: Option<String>,
}

/// The bytes of a `svc.ui.json`, checked against its schema.
pub fn parse_ui(bytes: &[u8]) -> Result<UiManifest, ManifestError> {
    let raw: RawUi = typed(checked(bytes, &UI_VALIDATOR)?)?;
    Ok(UiManifest {
        name: raw.name.unwrap_or_else(|| raw.id.clone()),
        id: raw.id,
        description: raw.description,
        category: raw.category.unwrap_or_else(|| "manifest".to_owned()),
        contract: raw.contract.unwrap_or_else(|| Value::Object(Default::default())),
        entry_point: raw.entry_point,
        fixture_props: raw.fixture_props,
        featured: raw.featured,
        mount: match raw.mount.as_deref() {
            Some("mcpApps") => SessionVariant::McpApps,
            _ => SessionVariant::Render,
        },
    })
}
