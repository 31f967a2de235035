//! `FsBundleStore`: payloads on the filesystem, one file per content hash:
//! `<root>/sha384/<hex>.js` for gadgets, `<root>/sha384/<hex>.tsx` for blueprint sources.
//! Files are written to a temporary name and renamed, so a reader never sees half a bundle.
//! Each write has a temporary name of its own: two publishes of the same bytes at once (one
//! process or several sharing the directory) never write into one file.

use std::hash::{BuildHasher, RandomState};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

use svc_application::ports::registry::{BundleStore, BundleStoreError, StoredBundle};
use svc_domain::artifact::{ArtifactKind, BundleDigest};

pub struct FsBundleStore {
    root: PathBuf,
}

impl FsBundleStore {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    fn path(&self, digest: &BundleDigest, kind: ArtifactKind) -> PathBuf {
        let extension = match kind {
            ArtifactKind::Gadget => "js",
            ArtifactKind::Blueprint => "tsx",
        };
        self.root.join("sha384").join(format!("{}.{extension}", digest.hex()))
    }
}

/// Random per process (std seeds `RandomState` from the OS), so processes sharing the directory,
/// even on hosts whose pids collide, pick different names.
static PROCESS_NONCE: LazyLock<u64> = LazyLock::new(|| RandomState::new().hash_one(std::process::id()));
/// Distinguishes the writes of this process.
static NEXT_WRITE: AtomicU64 = AtomicU64::new(0);

/// A name no other write uses, hidden and beside the final file (a rename within one directory
/// is atomic).
fn partial_path(directory: &Path, digest: &BundleDigest) -> PathBuf {
    let write = NEXT_WRITE.fetch_add(1, Ordering::Relaxed);
    directory.join(format!(".{}.{:016x}-{write}.partial", digest.hex(), *PROCESS_NONCE))
}

fn store_error(error: std::io::Error) -> BundleStoreError {
    BundleStoreError(error.into())
}

async fn read_if_exists(path: &Path) -> Result<Option<Vec<u8>>, BundleStoreError> {
    match tokio::fs::read(path).await {
        Ok(bytes) => Ok(Some(bytes)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(store_error(error)),
    }
}

#[async_trait::async_trait]
impl BundleStore for FsBundleStore {
    async fn put(&self, digest: &BundleDigest, kind: ArtifactKind, bytes: &[u8]) -> Result<(), BundleStoreError> {
        let path = self.path(digest, kind);
        if tokio::fs::try_exists(&path).await.map_err(store_error)? {
            return Ok(());
        }
        let directory = path.parent().expect("bundle paths have a directory");
        tokio::fs::create_dir_all(directory).await.map_err(store_error)?;
        let partial = partial_path(directory, digest);
        if let Err(error) = tokio::fs::write(&partial, bytes).await {
            let _ = tokio::fs::remove_file(&partial).await;
            return Err(store_error(error));
        }
        // Renaming over a file another write put there meanwhile replaces identical bytes (the
        // name is their hash). Where the platform refuses to rename over a file, that file is the
        // whole bundle already: ours is not needed.
        match tokio::fs::rename(&partial, &path).await {
            Ok(()) => Ok(()),
            Err(error) => {
                let _ = tokio::fs::remove_file(&partial).await;
                match tokio::fs::try_exists(&path).await {
                    Ok(true) => Ok(()),
                    _ => Err(store_error(error)),
                }
            }
        }
    }

    async fn get(&self, digest: &BundleDigest) -> Result<Option<StoredBundle>, BundleStoreError> {
        for kind in [ArtifactKind::Gadget, ArtifactKind::Blueprint] {
            if let Some(bytes) = read_if_exists(&self.path(digest, kind)).await? {
                return Ok(Some(StoredBundle { kind, bytes }));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bundles_read_back_by_hash_with_their_kind() {
        let root = std::env::temp_dir().join(format!("svc-bundles-{}", std::process::id()));
        let store = FsBundleStore::new(&root);
        let digest = BundleDigest::of(b"export const useA = 1;");
        assert_eq!(store.get(&digest).await.unwrap(), None);
        store
            .put(&digest, ArtifactKind::Gadget, b"export const useA = 1;")
            .await
            .unwrap();
        store
            .put(&digest, ArtifactKind::Gadget, b"export const useA = 1;")
            .await
            .unwrap();
        let stored = store.get(&digest).await.unwrap().unwrap();
        assert_eq!(
            (stored.kind, stored.bytes.as_slice()),
            (ArtifactKind::Gadget, &b"export const useA = 1;"[..])
        );
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn every_write_has_a_temporary_name_of_its_own() {
        let digest = BundleDigest::of(b"export const useA = 1;");
        let directory = Path::new("/bundles/sha384");
        assert_ne!(partial_path(directory, &digest), partial_path(directory, &digest));
        assert_eq!(partial_path(directory, &digest).parent(), Some(directory));
    }

    /// Publishes of the same bytes at once (two versions sharing a bundle) all succeed, and what
    /// is stored is the whole bundle, with no temporary file left behind.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_puts_of_the_same_bundle_all_succeed_whole() {
        let root = std::env::temp_dir().join(format!("svc-bundles-race-{}", std::process::id()));
        let store = std::sync::Arc::new(FsBundleStore::new(&root));
        for round in 0..8u8 {
            // 1 MiB, so the writes take long enough to overlap.
            let bytes: Vec<u8> = (0..1024 * 1024).map(|i| (i % 251) as u8 ^ round).collect();
            let digest = BundleDigest::of(&bytes);
            let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(8));
            let writes: Vec<_> = (0..8)
                .map(|_| {
                    let (store, bytes, digest, barrier) =
                        (store.clone(), bytes.clone(), digest.clone(), barrier.clone());
                    tokio::spawn(async move {
                        barrier.wait().await;
                        store.put(&digest, ArtifactKind::Gadget, &bytes).await
                    })
                })
                .collect();
            for write in writes {
                write.await.unwrap().unwrap_or_else(|e| panic!("round {round}: {e:#}"));
            }
            let stored = store.get(&digest).await.unwrap().expect("stored");
            assert!(stored.bytes == bytes, "round {round}: the stored bundle is not whole");
        }
        let leftovers: Vec<_> = std::fs::read_dir(root.join("sha384"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .filter(|name| name.to_string_lossy().ends_with(".partial"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        let _ = std::fs::remove_dir_all(root);
    }
}
