//! The keys file as the running server reads it: parsed once into memory, so authenticating a
//! keys-file bearer does no file I/O. A watcher on the data directory re-reads the file when it
//! changes (`svc keys mint` and `svc keys revoke` replace it by a rename), so a revoked key is
//! refused at once; a bearer the snapshot does not know re-reads the file first when its size or
//! time changed (a key minted a moment ago works on its first request).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use svc_application::ports::RepositoryError;
use svc_application::ports::auth::{KeyOwner, KeyStore};
use svc_domain::contract::sha256_hex;

use crate::keys_file::{KEY_PREFIX, KeyEntry, KeysFile, LOCAL_OPERATOR, SECRET_CHARS};

/// What the file held when it was last read.
#[derive(Default)]
struct Snapshot {
    /// sha256 of the secret to its key id.
    by_hash: HashMap<String, String>,
    /// The file's (modification time, length) when read; `None` when it did not exist.
    stamp: Option<(SystemTime, u64)>,
}

impl Snapshot {
    fn of(keys: Vec<KeyEntry>, stamp: Option<(SystemTime, u64)>) -> Self {
        Self {
            by_hash: keys.into_iter().map(|k| (k.sha256, k.id)).collect(),
            stamp,
        }
    }
}

pub struct WatchedKeysFile {
    file: KeysFile,
    snapshot: Arc<RwLock<Arc<Snapshot>>>,
    /// Kept alive for as long as the store: dropping it stops the watch.
    _watch: Option<crate::keys_file_changes::Watch>,
}

fn stamp_of(metadata: &std::fs::Metadata) -> Option<(SystemTime, u64)> {
    Some((metadata.modified().ok()?, metadata.len()))
}

/// Reads the file now (blocking: start-up and the watch's blocking thread only).
fn read_blocking(file: &KeysFile) -> std::io::Result<Snapshot> {
    let stamp = std::fs::metadata(file.path()).ok().as_ref().and_then(stamp_of);
    Ok(Snapshot::of(file.list()?, stamp))
}

impl WatchedKeysFile {
    /// Reads `<data_dir>/keys.json` and watches the directory. A file that cannot be read is an
    /// error at start-up; a watcher that cannot start leaves the snapshot refreshed on misses only
    /// (logged: revocations then wait for the next change of size or time seen on a miss).
    pub fn open(data_dir: &Path) -> std::io::Result<Self> {
        let file = KeysFile::in_data_dir(data_dir);
        let snapshot = Arc::new(RwLock::new(Arc::new(read_blocking(&file)?)));
        let watcher = match watch(&file, data_dir, Arc::clone(&snapshot)) {
            Ok(watcher) => Some(watcher),
            Err(error) => {
                tracing::warn!(error = %error, dir = %data_dir.display(), "cannot watch the keys file");
                None
            }
        };
        Ok(Self {
            file,
            snapshot,
            _watch: watcher,
        })
    }

    fn current(&self) -> Arc<Snapshot> {
        Arc::clone(&self.snapshot.read().expect("keys snapshot lock"))
    }

    /// Re-reads the file without blocking the runtime when its size or time changed since the
    /// snapshot; answers the snapshot to use.
    async fn refreshed(&self) -> Result<Arc<Snapshot>, RepositoryError> {
        let current = self.current();
        let stamp = tokio::fs::metadata(self.file.path())
            .await
            .ok()
            .as_ref()
            .and_then(stamp_of);
        if stamp == current.stamp {
            return Ok(current);
        }
        let file = self.file.clone();
        let fresh = tokio::task::spawn_blocking(move || read_blocking(&file))
            .await
            .map_err(|e| RepositoryError::Unavailable(e.into()))?
            .map_err(|e| RepositoryError::Unavailable(e.into()))?;
        let fresh = Arc::new(fresh);
        *self.snapshot.write().expect("keys snapshot lock") = Arc::clone(&fresh);
        Ok(fresh)
    }
}

/// Re-reads the file on every event in its directory that names it (a rename onto it, a write).
fn watch(
    file: &KeysFile,
    data_dir: &Path,
    snapshot: Arc<RwLock<Arc<Snapshot>>>,
) -> std::io::Result<crate::keys_file_changes::Watch> {
    let name = file
        .path()
        .file_name()
        .map(|name| name.to_owned())
        .ok_or_else(|| std::io::Error::other("the keys file has no name"))?;
    let reader = file.clone();
    let reread = move || match read_blocking(&reader) {
        Ok(fresh) => *snapshot.write().expect("keys snapshot lock") = Arc::new(fresh),
        // A half-written file is never seen (writes go through a rename); keep the last.
        Err(error) => tracing::warn!(error = %error, "cannot re-read the keys file"),
    };
    crate::private_files::create_private_dir(data_dir)?;
    crate::keys_file_changes::watch(data_dir, name, Arc::new(reread))
}

#[async_trait::async_trait]
impl KeyStore for WatchedKeysFile {
    async fn find(&self, bearer: &str) -> Result<Option<KeyOwner>, RepositoryError> {
        // Not the shape of a minted secret (a connector key, say): no need to look at the file.
        if bearer.len() != KEY_PREFIX.len() + SECRET_CHARS || !bearer.starts_with(KEY_PREFIX) {
            return Ok(None);
        }
        let hash = sha256_hex(bearer.as_bytes());
        let mut snapshot = self.current();
        if !snapshot.by_hash.contains_key(&hash) {
            snapshot = self.refreshed().await?;
        }
        Ok(snapshot.by_hash.get(&hash).map(|key_id| KeyOwner {
            key_id: key_id.clone(),
            principal_id: LOCAL_OPERATOR.to_owned(),
            app_id: None,
        }))
    }

    /// A key stays live while its entry is in the file; removing the entry revokes it.
    async fn is_live(&self, key_id: &str) -> Result<Option<bool>, RepositoryError> {
        let live = |s: &Snapshot| s.by_hash.values().any(|id| id == key_id);
        let mut snapshot = self.current();
        if !live(&snapshot) {
            snapshot = self.refreshed().await?;
        }
        Ok(live(&snapshot).then_some(true))
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use chrono::Utc;

    use super::*;

    fn scratch() -> PathBuf {
        std::env::temp_dir().join(format!("svc-keys-watch-{}", uuid::Uuid::new_v4()))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_key_minted_after_start_works_and_a_revoked_one_stops() {
        let dir = scratch();
        let store = WatchedKeysFile::open(&dir).unwrap();
        let file = KeysFile::in_data_dir(&dir);
        let (entry, plaintext) = file.mint(None, Utc::now()).unwrap();
        let owner = store.find(&plaintext).await.unwrap().expect("minted after start");
        assert_eq!(owner.key_id, entry.id);
        assert_eq!(store.is_live(&entry.id).await.unwrap(), Some(true));

        file.revoke(&entry.id).unwrap();
        let mut refused = false;
        for _ in 0..100 {
            if store.find(&plaintext).await.unwrap().is_none() {
                refused = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(refused, "the watcher saw the revocation");
        assert_eq!(store.is_live(&entry.id).await.unwrap(), None);
        std::fs::remove_dir_all(dir).ok();
    }
}
