//! The project an install writes into: its `svc.json` (edited as JSON, keeping every other field
//! and the key order) and `.svc/installed-blueprints/`. Every write goes to a temporary file or
//! directory first and is renamed into place, so a failure leaves the project as it was.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::manifest::DEFAULT_MANIFEST;

/// Where installed blueprints live, relative to the project directory.
pub const INSTALLED_BLUEPRINTS: &str = ".svc/installed-blueprints";
/// The glob install adds to `svc.json#blueprints.include`.
pub const INSTALLED_BLUEPRINTS_GLOB: &str = ".svc/installed-blueprints/*/svc.ui.json";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProjectError {
    #[error("cannot read {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("{path} is not valid JSON: {reason}")]
    NotJson { path: String, reason: String },
    #[error("{path}: `{field}` must be {expected}")]
    Shape {
        path: String,
        field: &'static str,
        expected: &'static str,
    },
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
}

/// A project directory and its `svc.json` as read.
#[derive(Debug, Clone)]
pub struct Project {
    dir: PathBuf,
    /// `None` when the project has no svc.json yet.
    manifest: Option<Value>,
}

impl Project {
    pub fn open(dir: &Path) -> Result<Self, ProjectError> {
        let path = dir.join(DEFAULT_MANIFEST);
        let manifest: Option<Value> = match std::fs::read(&path) {
            Ok(bytes) => Some(serde_json::from_slice(&bytes).map_err(|e| ProjectError::NotJson {
                path: path.display().to_string(),
                reason: e.to_string(),
            })?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(ProjectError::Read {
                    path: path.display().to_string(),
                    reason: e.to_string(),
                });
            }
        };
        if manifest.as_ref().is_some_and(|m| !m.is_object()) {
            return Err(ProjectError::Shape {
                path: path.display().to_string(),
                field: "(root)",
                expected: "an object",
            });
        }
        Ok(Self {
            dir: dir.to_owned(),
            manifest,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn manifest_path(&self) -> PathBuf {
        self.dir.join(DEFAULT_MANIFEST)
    }

    /// `svc.json#registry`.
    pub fn registry(&self) -> Option<&str> {
        self.manifest.as_ref()?.get("registry")?.as_str()
    }

    /// svc.json with `gadget` in `app.gadgets[]`, replacing an entry of the same package.
    pub fn with_gadget(&self, gadget: Value) -> Result<Value, ProjectError> {
        let mut manifest = self.manifest.clone().unwrap_or_else(|| json!({}));
        let package = gadget.get("package").cloned();
        let app = object_field(&mut manifest, "app", "app", &self.manifest_path())?;
        let gadgets = array_field(app, "gadgets", "app.gadgets", &self.manifest_path())?;
        match gadgets.iter().position(|g| g.get("package") == package.as_ref()) {
            Some(i) => gadgets[i] = gadget,
            None => gadgets.push(gadget),
        }
        Ok(manifest)
    }

    /// svc.json with the installed-blueprints glob in `blueprints.include` (once).
    pub fn with_blueprints_glob(&self) -> Result<Value, ProjectError> {
        let mut manifest = self.manifest.clone().unwrap_or_else(|| json!({}));
        let blueprints = object_field(&mut manifest, "blueprints", "blueprints", &self.manifest_path())?;
        let include = array_field(blueprints, "include", "blueprints.include", &self.manifest_path())?;
        if !include.iter().any(|g| g.as_str() == Some(INSTALLED_BLUEPRINTS_GLOB)) {
            include.push(Value::String(INSTALLED_BLUEPRINTS_GLOB.to_owned()));
        }
        Ok(manifest)
    }

    /// Writes `manifest` as svc.json through a temporary file renamed into place.
    pub fn write_manifest(&self, manifest: &Value) -> Result<(), ProjectError> {
        let path = self.manifest_path();
        let mut text = serde_json::to_string_pretty(manifest).expect("JSON values serialize");
        text.push('\n');
        write_atomically(&path, text.as_bytes())
    }
}

/// Writes `bytes` to `path` through a temporary sibling renamed over it.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ProjectError> {
    use std::io::Write as _;
    let err = |e: &dyn std::fmt::Display| ProjectError::Write {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut temp = tempfile::Builder::new()
        .prefix(".svc-install-")
        .tempfile_in(dir)
        .map_err(|e| err(&e))?;
    temp.write_all(bytes).map_err(|e| err(&e))?;
    temp.as_file().sync_all().map_err(|e| err(&e))?;
    temp.persist(path).map_err(|e| err(&e.error))?;
    Ok(())
}

fn object_field<'a>(
    parent: &'a mut Value,
    key: &str,
    field: &'static str,
    path: &Path,
) -> Result<&'a mut Map<String, Value>, ProjectError> {
    let shape = || ProjectError::Shape {
        path: path.display().to_string(),
        field,
        expected: "an object",
    };
    let parent = parent.as_object_mut().ok_or_else(shape)?;
    parent
        .entry(key)
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(shape)
}

fn array_field<'a>(
    parent: &'a mut Map<String, Value>,
    key: &str,
    field: &'static str,
    path: &Path,
) -> Result<&'a mut Vec<Value>, ProjectError> {
    parent
        .entry(key)
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or_else(|| ProjectError::Shape {
            path: path.display().to_string(),
            field,
            expected: "an array",
        })
}
