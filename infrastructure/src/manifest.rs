//! The app manifest `svc.json` and the `svc.ui.json` files its `blueprints.include` globs name:
//! read from disk, checked by `svc-manifest` (schemas in `docs/schemas/`, gadget transports, theme
//! ids, glob syntax), the globs matched, and turned into what the application wires (declared
//! gadgets, theme settings, manifest UI drafts). Every failure is one message naming the file, the
//! path inside it and the rule.

use std::path::{Path, PathBuf};

use svc_application::services::blueprints::ManifestUiDraft;
use svc_domain::gadgets::GadgetDescriptor;
pub use svc_manifest::{MANIFEST_SCHEMA, ManifestError, UI_SCHEMA};

/// The manifest read from the working directory when `--manifest` is not given.
pub const DEFAULT_MANIFEST: &str = "svc.json";

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

/// The text of `file`, or why it cannot be read.
fn read(file: &Path) -> Result<String, ManifestError> {
    std::fs::read_to_string(file).map_err(|e| ManifestError(format!("{}: cannot read: {e}", file.display())))
}

/// `error` as said about `file`.
fn in_file(file: &Path, error: ManifestError) -> ManifestError {
    ManifestError(format!("{}: {error}", file.display()))
}

/// Loads and checks `file` and every `svc.ui.json` it includes.
pub fn load(file: &Path) -> Result<Manifest, ManifestError> {
    let parsed = svc_manifest::parse_manifest(read(file)?.as_bytes()).map_err(|e| in_file(file, e))?;
    let base = file.parent().map(Path::to_path_buf).unwrap_or_default();
    let uis = parsed
        .blueprint_includes
        .map(|patterns| load_uis(file, &base, &patterns))
        .transpose()?;
    Ok(Manifest {
        file: file.to_path_buf(),
        gadgets: parsed.gadgets,
        default_theme_id: parsed.default_theme_id,
        available_theme_ids: parsed.available_theme_ids,
        uis,
        registry: parsed.registry,
    })
}

fn load_uis(file: &Path, base: &Path, patterns: &[String]) -> Result<Vec<ManifestUiDraft>, ManifestError> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for (i, pattern) in patterns.iter().enumerate() {
        let full = base.join(pattern);
        // The pattern itself is checked already; the manifest's directory may still hold `[`.
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
    let ui = svc_manifest::parse_ui(read(file)?.as_bytes()).map_err(|e| in_file(file, e))?;
    let entry = file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
        .join(&ui.entry_point);
    let source = std::fs::read_to_string(&entry).map_err(|e| {
        ManifestError(format!(
            "{}: at /entryPoint: cannot read {}: {e}",
            file.display(),
            entry.display()
        ))
    })?;
    Ok(ManifestUiDraft {
        file: file.display().to_string(),
        id: ui.id,
        name: ui.name,
        description: ui.description,
        category: ui.category,
        contract: ui.contract,
        source,
        fixture_props: ui.fixture_props,
        featured: ui.featured,
        mount: ui.mount,
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
