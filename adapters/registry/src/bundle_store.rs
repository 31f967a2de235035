//! `FsBundleStore`: payloads on the filesystem, one file per content hash:
//! `<root>/sha384/<hex>.js` for gadgets, `<root>/sha384/<hex>.tsx` for blueprint sources.
//! Files are written to a temporary name and renamed, so a reader never sees half a bundle.
//! Each write has a temporary name of its own: two publishes of the same bytes at once (one
//! process or several sharing the directory) never write into one file.
//!
//! A bundle some answer still holds is shared with the next download of it: many downloads of
//! one bundle, however many of them a slow or stalled client holds open, hold one copy in memory
//! instead of one read of up to 6 MiB per request. Nothing is kept once no answer holds it, so a
//! later download reads the file again.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};

use svc_application::ports::registry::{BundleStore, BundleStoreError, BundleWrite, StoredBundle};
use svc_domain::artifact::{ArtifactKind, BundleDigest};

pub struct FsBundleStore {
    root: PathBuf,
    /// Bundles answers still hold, by digest.
    held: Mutex<HashMap<[u8; 48], HeldRead>>,
}

/// A read some answer may still hold: its kind and its bytes, if an answer holds them.
type HeldRead = (ArtifactKind, Weak<Vec<u8>>);

/// The bytes of one read, shared by every answer that holds them.
struct SharedRead(Arc<Vec<u8>>);

impl AsRef<[u8]> for SharedRead {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

fn stored(kind: ArtifactKind, read: Arc<Vec<u8>>) -> StoredBundle {
    StoredBundle {
        kind,
        bytes: bytes::Bytes::from_owner(SharedRead(read)),
    }
}

impl FsBundleStore {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            held: Mutex::default(),
        }
    }

    /// The bundle an answer still holds, if one does.
    fn still_held(&self, digest: &BundleDigest) -> Option<StoredBundle> {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let (kind, read) = held.get(digest.bytes())?;
        Some(stored(*kind, read.upgrade()?))
    }

    /// Shares `read` with later downloads while answers hold it; a read that raced it to the
    /// file gives way to the one already shared.
    fn share(&self, digest: &BundleDigest, kind: ArtifactKind, read: Vec<u8>) -> StoredBundle {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((kind, earlier)) = held.get(digest.bytes())
            && let Some(earlier) = earlier.upgrade()
        {
            return stored(*kind, earlier);
        }
        held.retain(|_, (_, read)| read.strong_count() > 0);
        let read = Arc::new(read);
        held.insert(*digest.bytes(), (kind, Arc::downgrade(&read)));
        stored(kind, read)
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
    async fn put(
        &self,
        digest: &BundleDigest,
        kind: ArtifactKind,
        bytes: &[u8],
    ) -> Result<BundleWrite, BundleStoreError> {
        let path = self.path(digest, kind);
        if tokio::fs::try_exists(&path).await.map_err(store_error)? {
            return Ok(BundleWrite::AlreadyStored);
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
            Ok(()) => Ok(BundleWrite::Written),
            Err(error) => {
                let _ = tokio::fs::remove_file(&partial).await;
                match tokio::fs::try_exists(&path).await {
                    Ok(true) => Ok(BundleWrite::AlreadyStored),
                    _ => Err(store_error(error)),
                }
            }
        }
    }

    async fn remove(&self, digest: &BundleDigest, kind: ArtifactKind) -> Result<(), BundleStoreError> {
        match tokio::fs::remove_file(self.path(digest, kind)).await {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(store_error(error)),
            _ => Ok(()),
        }
    }

    async fn stored_len(&self, digest: &BundleDigest) -> Result<Option<u64>, BundleStoreError> {
        for kind in [ArtifactKind::Gadget, ArtifactKind::Blueprint] {
            match tokio::fs::metadata(self.path(digest, kind)).await {
                Ok(metadata) => return Ok(Some(metadata.len())),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => return Err(store_error(error)),
            }
        }
        Ok(None)
    }

    async fn get(&self, digest: &BundleDigest) -> Result<Option<StoredBundle>, BundleStoreError> {
        if let Some(held) = self.still_held(digest) {
            return Ok(Some(held));
        }
        for kind in [ArtifactKind::Gadget, ArtifactKind::Blueprint] {
            if let Some(read) = read_if_exists(&self.path(digest, kind)).await? {
                return Ok(Some(self.share(digest, kind, read)));
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
        let mut writes = Vec::new();
        for _ in 0..2 {
            writes.push(
                store
                    .put(&digest, ArtifactKind::Gadget, b"export const useA = 1;")
                    .await
                    .unwrap(),
            );
        }
        assert_eq!(writes, [BundleWrite::Written, BundleWrite::AlreadyStored]);
        let stored = store.get(&digest).await.unwrap().unwrap();
        assert_eq!(
            (stored.kind, &stored.bytes[..]),
            (ArtifactKind::Gadget, &b"export const useA = 1;"[..])
        );
        assert_eq!(store.stored_len(&digest).await.unwrap(), Some(22));
        drop(stored);
        store.remove(&digest, ArtifactKind::Gadget).await.unwrap();
        store.remove(&digest, ArtifactKind::Gadget).await.unwrap();
        assert_eq!(store.get(&digest).await.unwrap(), None, "removed");
        assert_eq!(store.stored_len(&digest).await.unwrap(), None);
        let _ = std::fs::remove_dir_all(root);
    }

    /// Downloads of one bundle in flight together hold one copy of it (racing first reads too);
    /// once none holds it, the file is read again.
    #[tokio::test]
    async fn downloads_of_one_bundle_share_its_bytes() {
        let root = std::env::temp_dir().join(format!("svc-bundles-shared-{}", std::process::id()));
        let store = std::sync::Arc::new(FsBundleStore::new(&root));
        let body = vec![b'x'; 1 << 20];
        let digest = BundleDigest::of(&body);
        store.put(&digest, ArtifactKind::Gadget, &body).await.unwrap();
        let racing: Vec<_> = (0..4)
            .map(|_| {
                let (store, digest) = (store.clone(), digest.clone());
                tokio::spawn(async move { store.get(&digest).await.unwrap().unwrap() })
            })
            .collect();
        let mut answers = Vec::new();
        for answer in racing {
            answers.push(answer.await.unwrap());
        }
        answers.push(store.get(&digest).await.unwrap().unwrap());
        assert!(answers.iter().all(|a| a.bytes == body));
        let first = answers[0].bytes.as_ptr();
        assert!(
            answers.iter().all(|a| a.bytes.as_ptr() == first),
            "one copy for every answer"
        );
        drop(answers);
        let path = store.path(&digest, ArtifactKind::Gadget);
        std::fs::write(&path, b"changed on disk").unwrap();
        let later = store.get(&digest).await.unwrap().unwrap();
        assert_eq!(
            &later.bytes[..],
            b"changed on disk",
            "nothing is kept once no answer holds it"
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
