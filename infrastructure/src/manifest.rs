//! The app manifest `svc.json` and the `svc.ui.json` files its `blueprints.include` globs name:
//! read, validated against the JSON Schemas in `docs/schemas/`, and turned into what the
//! application wires (declared gadgets, theme settings, manifest UI drafts). Every failure is one
//! message naming the file, the path inside it and the rule.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::Value;
use svc_application::services::blueprints::ManifestUiDraft;
use svc_domain::gadgets::GadgetDescriptor;
use svc_domain::session::SessionVariant;
use svc_domain::themes;

/// The JSON Schema of `svc.json` (docs/schemas/svc.schema.json).
pub const MANIFEST_SCHEMA: &str = include_str!("../../docs/schemas/svc.schema.json");
/// The JSON Schema of `svc.ui.json` (docs/schemas/svc.ui.schema.json).
pub const UI_SCHEMA: &str = include_str!("../../docs/schemas/svc.ui.schema.json");
/// The manifest read from the working directory when `--manifest` is not given.
pub const DEFAULT_MANIFEST: &str = "svc.json";

static MANIFEST_VALIDATOR: LazyLock<jsonschema::Validator> = LazyLock::new(|| validator(MANIFEST_SCHEMA));
static UI_VALIDATOR: LazyLock<jsonschema::Validator> = LazyLock::new(|| validator(UI_SCHEMA));

fn validator(schema: &str) -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(schema).expect("the committed schema is JSON");
    jsonschema::draft202012::new(&schema).expect("the committed schema compiles")
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ManifestError(pub String);

/// What `svc.json` configures.
#[derive(Debug, Clone, Default)]
pub struct Manifest {
    pub file: PathBuf,
    pub gadgets: Vec<GadgetDescriptor>,
    pub default_theme_id: String,
    /// Empty: the whole catalog.
    pub available_theme_ids: Vec<String>,
    /// `None` without a `blueprints` section: the server then has no UI registry.
    pub uis: Option<Vec<ManifestUiDraft>>,
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
struct RawApp {
    #[serde(default)]
    gadgets: Vec<GadgetDescriptor>,
    default_theme_id: Option<String>,
    #[serde(default)]
    available_theme_ids: Vec<String>,
}

#[derive(Deserialize)]
struct RawBlueprints {
    include: Vec<String>,
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

/// The manifest to load: `explicit` (which must exist), else `svc.json` in the working
/// directory when there is one, else none.
pub fn locate(explicit: Option<&Path>) -> Result<Option<PathBuf>, ManifestError> {
    match explicit {
        Some(path) if path.is_file() => Ok(Some(path.to_path_buf())),
        Some(path) => Err(ManifestError(format!("manifest {} does not exist", path.display()))),
        None => {
            let default = PathBuf::from(DEFAULT_MANIFEST);
            Ok(default.is_file().then_some(default))
        }
    }
}

/// Reads a JSON file and checks it against `schema`.
fn read_checked(file: &Path, schema: &jsonschema::Validator) -> Result<Value, ManifestError> {
    let text =
        std::fs::read_to_string(file).map_err(|e| ManifestError(format!("{}: cannot read: {e}", file.display())))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        ManifestError(format!(
            "{}: not JSON: {e} (line {}, column {})",
            file.display(),
            e.line(),
            e.column()
        ))
    })?;
    let errors: Vec<String> = schema
        .iter_errors(&value)
        .take(3)
        .map(|e| {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() { "/".to_owned() } else { at };
            format!("at {at}: {e} (rule: {})", e.kind().keyword())
        })
        .collect();
    if !errors.is_empty() {
        return Err(ManifestError(format!("{}: {}", file.display(), errors.join("; "))));
    }
    Ok(value)
}

/// Loads and checks `file` and every `svc.ui.json` it includes.
pub fn load(file: &Path) -> Result<Manifest, ManifestError> {
    let value = read_checked(file, &MANIFEST_VALIDATOR)?;
    let raw: RawManifest =
        serde_json::from_value(value).map_err(|e| ManifestError(format!("{}: {e}", file.display())))?;
    for (index, gadget) in raw.app.gadgets.iter().enumerate() {
        gadget
            .check_transport()
            .map_err(|rule| ManifestError(format!("{}: at /app/gadgets/{index}/{rule}", file.display())))?;
    }
    let (default_theme_id, available_theme_ids) = theme_settings(file, &raw.app)?;
    let base = file.parent().map(Path::to_path_buf).unwrap_or_default();
    let uis = raw.blueprints.map(|b| load_uis(file, &base, &b.include)).transpose()?;
    Ok(Manifest {
        file: file.to_path_buf(),
        gadgets: raw.app.gadgets,
        default_theme_id,
        available_theme_ids,
        uis,
        registry: raw.registry,
    })
}

fn theme_settings(file: &Path, app: &RawApp) -> Result<(String, Vec<String>), ManifestError> {
    let fail = |at: &str, rule: String| ManifestError(format!("{}: at {at}: {rule}", file.display()));
    let available = themes::filter_by_allowlist(themes::catalog(), &app.available_theme_ids);
    if !app.available_theme_ids.is_empty() && available.is_empty() {
        return Err(fail(
            "/app/availableThemeIds",
            format!(
                "none of these ids is a registered theme (registered: {})",
                registered_themes()
            ),
        ));
    }
    let default = match &app.default_theme_id {
        Some(id) if !themes::is_registered(id) => {
            return Err(fail(
                "/app/defaultThemeId",
                format!("`{id}` is not a registered theme (registered: {})", registered_themes()),
            ));
        }
        Some(id) if !app.available_theme_ids.is_empty() && !available.iter().any(|t| t.id == *id) => {
            return Err(fail(
                "/app/defaultThemeId",
                format!("`{id}` is not in availableThemeIds"),
            ));
        }
        Some(id) => id.clone(),
        None if app.available_theme_ids.is_empty() => themes::DEFAULT_THEME_ID.to_owned(),
        None => match available.iter().find(|t| t.id == themes::DEFAULT_THEME_ID) {
            Some(t) => t.id.clone(),
            None => available[0].id.clone(),
        },
    };
    Ok((default, app.available_theme_ids.clone()))
}

fn registered_themes() -> String {
    themes::catalog()
        .iter()
        .map(|t| t.id.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn load_uis(file: &Path, base: &Path, patterns: &[String]) -> Result<Vec<ManifestUiDraft>, ManifestError> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for (i, pattern) in patterns.iter().enumerate() {
        let full = base.join(pattern);
        let matches = glob::glob(&full.to_string_lossy()).map_err(|e| {
            ManifestError(format!(
                "{}: at /blueprints/include/{i}: `{pattern}` is not a glob pattern: {e}",
                file.display()
            ))
        })?;
        let mut found = 0;
        for entry in matches {
            let path = entry.map_err(|e| ManifestError(format!("{}: {e}", file.display())))?;
            if path.is_file() {
                found += 1;
                if !paths.contains(&path) {
                    paths.push(path);
                }
            }
        }
        if found == 0 {
            tracing::warn!(manifest = %file.display(), pattern, "blueprints.include matches no file");
        }
    }
    paths.iter().map(|p| load_ui(p)).collect()
}

fn load_ui(file: &Path) -> Result<ManifestUiDraft, ManifestError> {
    let value = read_checked(file, &UI_VALIDATOR)?;
    let raw: RawUi = serde_json::from_value(value).map_err(|e| ManifestError(format!("{}: {e}", file.display())))?;
    let entry = file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
        .join(&raw.entry_point);
    let source = std::fs::read_to_string(&entry).map_err(|e| {
        ManifestError(format!(
            "{}: at /entryPoint: cannot read {}: {e}",
            file.display(),
            entry.display()
        ))
    })?;
    Ok(ManifestUiDraft {
        file: file.display().to_string(),
        name: raw.name.unwrap_or_else(|| raw.id.clone()),
        id: raw.id,
        description: raw.description,
        category: raw.category.unwrap_or_else(|| "manifest".to_owned()),
        contract: raw.contract.unwrap_or_else(|| Value::Object(Default::default())),
        source,
        fixture_props: raw.fixture_props,
        featured: raw.featured,
        mount: match raw.mount.as_deref() {
            Some("mcpApps") => SessionVariant::McpApps,
            _ => SessionVariant::Render,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn temp() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("svc-manifest-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_full_manifest_loads_gadgets_themes_and_uis() {
        let dir = temp();
        write(
            &dir,
            "uis/orders/index.tsx",
            "export default function A() { return null; }",
        );
        write(
            &dir,
            "uis/orders/svc.ui.json",
            r#"{ "id": "order-approval", "name": "Order approval", "entryPoint": "index.tsx", "featured": true,
                 "contract": { "propsSpec": { "type": "object" } }, "fixtureProps": { "title": "x" } }"#,
        );
        let file = write(
            &dir,
            "svc.json",
            r#"{ "app": { "gadgets": [{ "package": "@acme/maps", "version": "1.0.0", "exports": [{ "hook": "useMap" }] }],
                          "availableThemeIds": ["nope", "default"] },
                 "blueprints": { "include": ["uis/**/svc.ui.json"] }, "registry": "https://registry.example" }"#,
        );
        let m = load(&file).unwrap();
        assert_eq!(m.gadgets[0].package, "@acme/maps");
        assert_eq!(m.default_theme_id, "default");
        let uis = m.uis.unwrap();
        assert_eq!(uis.len(), 1);
        assert_eq!(uis[0].id, "order-approval");
        assert!(uis[0].featured);
        assert!(uis[0].source.contains("export default"));
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn errors_name_the_file_the_path_and_the_rule() {
        let dir = temp();
        let cases = [
            (
                r#"{ "app": { "gadgets": [{ "package": "@acme/maps" }] } }"#,
                "at /app/gadgets/0: \"version\" is a required property (rule: required)",
            ),
            (r#"{ "blueprints": { "include": "x" } }"#, "at /blueprints/include"),
            (r#"{ "colour": 1 }"#, "(rule: additionalProperties)"),
            (
                r#"{ "app": { "defaultThemeId": "neon" } }"#,
                "at /app/defaultThemeId: `neon` is not a registered theme",
            ),
            (r#"{ "app": "#, "not JSON"),
            (
                r#"{ "app": { "gadgets": [{ "package": "@acme/maps", "version": "1", "bundleUrl": "/maps.js" }] } }"#,
                "at /app/gadgets/0/bundleUrl",
            ),
            (
                r#"{ "app": { "gadgets": [{ "package": "@acme/maps", "version": "1", "connect": ["tiles.example.com"] }] } }"#,
                "at /app/gadgets/0/connect/0: `tiles.example.com` must be an absolute http/https/ws/wss URL",
            ),
        ];
        for (text, want) in cases {
            let file = write(&dir, "svc.json", text);
            let err = load(&file).unwrap_err().to_string();
            assert!(err.starts_with(&file.display().to_string()), "{err}");
            assert!(err.contains(want), "{err}\nwanted: {want}");
        }
        write(&dir, "bad/svc.ui.json", r#"{ "id": "x", "entryPoint": "missing.tsx" }"#);
        let file = write(&dir, "svc.json", r#"{ "blueprints": { "include": ["bad/*.json"] } }"#);
        let err = load(&file).unwrap_err().to_string();
        assert!(err.contains("bad/svc.ui.json: at /entryPoint: cannot read"), "{err}");
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn registry_installed_blueprints_need_only_id_contract_and_entry_point() {
        // What `install` writes (Document 3): .svc/installed-blueprints/<scope>__<name>__<version>/
        let dir = temp();
        let installed = ".svc/installed-blueprints/acme__invoice__1.2.0";
        write(
            &dir,
            &format!("{installed}/index.tsx"),
            "export default function I() { return null; }",
        );
        write(
            &dir,
            &format!("{installed}/svc.ui.json"),
            r#"{ "id": "@acme/invoice@1.2.0", "contract": {}, "entryPoint": "index.tsx" }"#,
        );
        let file = write(
            &dir,
            "svc.json",
            r#"{ "blueprints": { "include": [".svc/installed-blueprints/*/svc.ui.json"] } }"#,
        );
        let uis = load(&file).unwrap().uis.unwrap();
        assert_eq!(uis.len(), 1);
        assert_eq!(
            (uis[0].id.as_str(), uis[0].name.as_str()),
            ("@acme/invoice@1.2.0", "@acme/invoice@1.2.0")
        );
        assert_eq!(uis[0].category, "manifest");
        assert!(!uis[0].featured);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn an_explicit_manifest_must_exist() {
        let err = locate(Some(Path::new("/nonexistent/svc.json"))).unwrap_err();
        assert_eq!(err.to_string(), "manifest /nonexistent/svc.json does not exist");
    }
}
