//! `FsBundleStore`: payloads on the filesystem, one file per content hash:
//! `<root>/sha384/<hex>.js` for gadgets, `<root>/sha384/<hex>.tsx` for blueprint sources.
//! Files are written to a temporary name and renamed, so a reader never sees half a bundle.

use std::path::{Path, PathBuf};

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
        let partial = directory.join(format!(".{}.{}.partial", digest.hex(), std::process::id()));
        tokio::fs::write(&partial, bytes).await.map_err(store_error)?;
        tokio::fs::rename(&partial, &path).await.map_err(store_error)
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
}
