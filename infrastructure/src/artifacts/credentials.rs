//! Registry tokens stored by `svc login`: one per registry URL in `<config dir>/svc/credentials.json`
//! (0600, its directory 0700), where the config dir is `$XDG_CONFIG_HOME` or `~/.config`.
//!
//! Which token a command sends, a stored one or an explicit one, is `token_choice`'s rule.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::private_files::{create_private_dir, write_private};

/// The environment variable holding a registry token (self-hosted and development registries).
pub const REGISTRY_TOKEN_ENV: &str = "SVC_REGISTRY_TOKEN";

/// The credentials file.
#[derive(Debug, Clone)]
pub struct CredentialStore {
    path: PathBuf,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
struct Stored {
    #[serde(default)]
    registries: BTreeMap<String, StoredToken>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct StoredToken {
    pub token: String,
    pub publisher: String,
}

#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    #[error("no config directory: set XDG_CONFIG_HOME or HOME")]
    NoConfigDir,
    #[error("cannot read {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
}

impl CredentialStore {
    /// The user's store, from the environment.
    pub fn for_user() -> Result<Self, CredentialError> {
        let config = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
            .ok_or(CredentialError::NoConfigDir)?;
        Ok(Self::at(config.join("svc").join("credentials.json")))
    }

    pub fn at(path: PathBuf) -> Self {
        Self { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The token stored for `registry`.
    pub fn get(&self, registry: &str) -> Result<Option<StoredToken>, CredentialError> {
        Ok(self.load()?.registries.remove(&key(registry)))
    }

    /// Stores (or replaces) the token of `registry`.
    pub fn put(&self, registry: &str, token: StoredToken) -> Result<(), CredentialError> {
        let mut stored = self.load()?;
        stored.registries.insert(key(registry), token);
        let write_err = |e: std::io::Error| CredentialError::Write {
            path: self.path.display().to_string(),
            reason: e.to_string(),
        };
        if let Some(dir) = self.path.parent() {
            create_private_dir(dir).map_err(write_err)?;
        }
        let json = serde_json::to_vec_pretty(&stored).expect("credentials serialize");
        write_private(&self.path, &json).map_err(write_err)
    }

    fn load(&self) -> Result<Stored, CredentialError> {
        let read_err = |reason: String| CredentialError::Read {
            path: self.path.display().to_string(),
            reason,
        };
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| read_err(e.to_string())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Stored::default()),
            Err(e) => Err(read_err(e.to_string())),
        }
    }
}

/// `https://Reg.example/` and `https://reg.example` are one registry.
fn key(registry: &str) -> String {
    super::registry_url::normalized(registry)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, CredentialStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = CredentialStore::at(dir.path().join("svc").join("credentials.json"));
        (dir, store)
    }

    fn token(t: &str) -> StoredToken {
        StoredToken {
            token: t.into(),
            publisher: "acme".into(),
        }
    }

    #[test]
    fn a_token_is_stored_per_registry_in_a_private_file() {
        let (_dir, store) = store();
        store.put("https://Reg.example/", token("a")).unwrap();
        store.put("http://127.0.0.1:7000", token("b")).unwrap();
        assert_eq!(store.get("https://reg.example").unwrap().unwrap().token, "a");
        assert_eq!(store.get("http://127.0.0.1:7000/").unwrap().unwrap().token, "b");
        assert_eq!(store.get("https://other.example").unwrap(), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(store.path()).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
            let dir_mode = std::fs::metadata(store.path().parent().unwrap())
                .unwrap()
                .permissions()
                .mode()
                & 0o777;
            assert_eq!(dir_mode, 0o700);
        }
    }

    #[test]
    fn a_corrupt_file_is_named() {
        let (_dir, store) = store();
        std::fs::create_dir_all(store.path().parent().unwrap()).unwrap();
        std::fs::write(store.path(), "not json").unwrap();
        let err = store.get("https://reg.example").unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("cannot read {}", store.path().display())),
            "{err}"
        );
    }
}
