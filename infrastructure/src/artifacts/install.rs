//! Writing a verified artifact into a project: a gadget into `svc.json#app.gadgets[]`, a blueprint
//! into `.svc/installed-blueprints/<scope>__<name>__<version>/` with the glob in
//! `svc.json#blueprints.include`. Everything is staged first and renamed into place; a failure at
//! any step undoes the earlier ones, so the project is left exactly as it was.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::project::{INSTALLED_BLUEPRINTS, Project, ProjectError};
use super::verify::{Fetched, VerifyError, view};
use crate::registry_client::wire::GadgetExport;

/// The file name of an installed blueprint's source.
const ENTRY_POINT: &str = "index.tsx";

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum InstallError {
    #[error(transparent)]
    Verify(#[from] VerifyError),
    #[error(transparent)]
    Project(#[from] ProjectError),
    #[error("the manifest of a {kind} has no `{kind}` section")]
    MissingSection { kind: String },
    #[error("a blueprint's source must be UTF-8 text")]
    SourceNotText,
}

/// What install wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installed {
    Gadget { package: String },
    Blueprint { dir: PathBuf },
}

/// Writes an already verified artifact into the project at `project_dir`.
pub fn write(project_dir: &Path, fetched: &Fetched) -> Result<Installed, InstallError> {
    let project = Project::open(project_dir)?;
    let manifest = view(fetched)?;
    match manifest.kind.as_str() {
        "gadget" => {
            let section = manifest
                .gadget
                .ok_or_else(|| InstallError::MissingSection { kind: "gadget".into() })?;
            let package = format!("{}/{}", manifest.scope, manifest.name);
            let entry = gadget_entry(&package, &manifest.version, fetched, &section.exports);
            let updated = project.with_gadget(entry)?;
            project.write_manifest(&updated)?;
            Ok(Installed::Gadget { package })
        }
        "blueprint" => {
            let section = manifest.blueprint.ok_or_else(|| InstallError::MissingSection {
                kind: "blueprint".into(),
            })?;
            let source = std::str::from_utf8(&fetched.bundle).map_err(|_| InstallError::SourceNotText)?;
            let ui = json!({
                "id": blueprint_id(&manifest.scope, &manifest.name, &manifest.version),
                "contract": section.contract.unwrap_or_else(|| json!({})),
                "entryPoint": ENTRY_POINT,
            });
            let dir_name = format!("{}__{}__{}", manifest.scope, manifest.name, manifest.version);
            let updated = project.with_blueprints_glob()?;
            let dir = place_blueprint(&project, &dir_name, source, &ui, || project.write_manifest(&updated))?;
            Ok(Installed::Blueprint { dir })
        }
        other => Err(VerifyError::Manifest(format!("unknown kind `{other}`")).into()),
    }
}

fn gadget_entry(package: &str, version: &str, fetched: &Fetched, exports: &[GadgetExport]) -> Value {
    json!({
        "package": package,
        "version": version,
        "bundleUrl": fetched.version.bundle_url,
        "bundleSri": fetched.version.bundle_sri,
        "exports": exports,
    })
}

/// `@acme/chart@1.2.3`; build metadata (`+...`) is left out, as semver precedence ignores it and
/// the id pattern of svc.ui.json has no `+`.
pub fn blueprint_id(scope: &str, name: &str, version: &str) -> String {
    let version = version.split('+').next().unwrap_or(version);
    format!("{scope}/{name}@{version}")
}

/// Stages the blueprint directory, renames it into place, then runs `commit` (the svc.json
/// write); undoes the directory (and any parent it created) when the commit fails.
pub(super) fn place_blueprint(
    project: &Project,
    dir_name: &str,
    source: &str,
    ui: &Value,
    commit: impl FnOnce() -> Result<(), ProjectError>,
) -> Result<PathBuf, InstallError> {
    let root = project.dir().join(INSTALLED_BLUEPRINTS);
    let write_err = |path: &Path, e: &dyn std::fmt::Display| ProjectError::Write {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let created = create_missing_dirs(&root).map_err(|e| write_err(&root, &e))?;
    let undo_created = || {
        if let Some(first) = &created {
            let _ = std::fs::remove_dir_all(first);
        }
    };
    let staged = (|| -> Result<tempfile::TempDir, ProjectError> {
        let staged = tempfile::Builder::new()
            .prefix(".staging-")
            .tempdir_in(&root)
            .map_err(|e| write_err(&root, &e))?;
        let index = staged.path().join(ENTRY_POINT);
        std::fs::write(&index, source).map_err(|e| write_err(&index, &e))?;
        let ui_path = staged.path().join("svc.ui.json");
        let ui_text = serde_json::to_string_pretty(ui).expect("JSON values serialize") + "\n";
        std::fs::write(&ui_path, ui_text).map_err(|e| write_err(&ui_path, &e))?;
        Ok(staged)
    })();
    let staged = match staged {
        Ok(s) => s,
        Err(e) => {
            undo_created();
            return Err(e.into());
        }
    };
    let target = root.join(dir_name);
    // A reinstall of the same version replaces the directory; the old one is kept until the end.
    let backup = root.join(format!(".previous-{dir_name}"));
    let had_previous = target.exists();
    let swap = (|| -> Result<(), ProjectError> {
        if had_previous {
            std::fs::rename(&target, &backup).map_err(|e| write_err(&target, &e))?;
        }
        std::fs::rename(staged.path(), &target).map_err(|e| write_err(&target, &e))
    })();
    if let Err(e) = swap {
        if had_previous && !target.exists() {
            let _ = std::fs::rename(&backup, &target);
        }
        undo_created();
        return Err(e.into());
    }
    if let Err(e) = commit() {
        let _ = std::fs::remove_dir_all(&target);
        if had_previous {
            let _ = std::fs::rename(&backup, &target);
        }
        undo_created();
        return Err(e.into());
    }
    if had_previous {
        let _ = std::fs::remove_dir_all(&backup);
    }
    // The staged path was renamed away; nothing is left for the TempDir to delete.
    let _ = staged.keep();
    Ok(target)
}

/// Creates `dir` and its missing parents; the topmost directory it created, to remove on undo.
fn create_missing_dirs(dir: &Path) -> std::io::Result<Option<PathBuf>> {
    let mut first_missing = None;
    let mut probe = Some(dir);
    while let Some(p) = probe {
        if p.exists() {
            break;
        }
        first_missing = Some(p.to_owned());
        probe = p.parent();
    }
    std::fs::create_dir_all(dir)?;
    Ok(first_missing)
}
