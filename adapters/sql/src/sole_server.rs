//! One `svc serve` per SQLite file. The server keeps rows of its database in memory (the read
//! caches), which is right only while no other server writes the file, so it claims the file
//! first: an advisory lock (`flock`) on `<database>.lock` beside it, held for the process's life.
//! The kernel releases it however the process ends, a SIGKILL included, so a crash never leaves
//! a stale claim. Commands that write the file briefly (`svc keys`, `svc apps configure`, the
//! registry CLI) do not claim it.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::backend::sqlite;
use crate::connect::ConnectError;

/// How often a claim held by a server still shutting down is tried again.
const RETRY_EVERY: Duration = Duration::from_millis(50);

/// This process's claim on its SQLite file; released when dropped.
#[derive(Debug)]
pub struct SoleServer {
    _lock: File,
}

impl SoleServer {
    /// Claims the SQLite file of `url`, waiting up to `patience` for a server that still holds it
    /// (one shutting down while its successor starts). `None` for an in-memory database and the
    /// server backends, which replicas share by design.
    pub async fn claim(url: &str, patience: Duration) -> Result<Option<Self>, ConnectError> {
        let Some(database) = sqlite::file_path(url) else {
            return Ok(None);
        };
        let path = PathBuf::from(format!("{database}.lock"));
        let cannot_open = |reason: String| ConnectError::Unreachable {
            url: url.to_owned(),
            reason,
        };
        let mut options = OpenOptions::new();
        options.create(true).truncate(false).write(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let lock = options
            .open(&path)
            .map_err(|e| cannot_open(format!("cannot open {}: {e}", path.display())))?;
        let deadline = Instant::now() + patience;
        loop {
            match lock.try_lock() {
                Ok(()) => return Ok(Some(Self { _lock: lock })),
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                    tokio::time::sleep(RETRY_EVERY).await;
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(ConnectError::InUse {
                        database: database.to_owned(),
                        lock: path.display().to_string(),
                    });
                }
                Err(TryLockError::Error(e)) => {
                    return Err(cannot_open(format!("cannot lock {}: {e}", path.display())));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url_in(dir: &std::path::Path) -> String {
        format!("sqlite://{}?mode=rwc", dir.join("svc.db").display())
    }

    #[tokio::test]
    async fn a_second_claim_waits_then_is_refused_and_a_released_claim_is_taken_again() {
        let dir = std::env::temp_dir().join(format!("svc-sole-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = url_in(&dir);
        let first = SoleServer::claim(&url, Duration::ZERO).await.unwrap();
        assert!(first.is_some());
        let refused = SoleServer::claim(&url, Duration::from_millis(120)).await.unwrap_err();
        assert!(
            matches!(&refused, ConnectError::InUse { lock, .. } if lock.ends_with("svc.db.lock")),
            "{refused}"
        );
        assert!(refused.to_string().contains("another `svc serve`"), "{refused}");
        drop(first);
        assert!(SoleServer::claim(&url, Duration::ZERO).await.unwrap().is_some());
        std::fs::remove_dir_all(&dir).ok();
    }

    #[tokio::test]
    async fn in_memory_databases_and_server_backends_claim_nothing() {
        for url in [
            "sqlite::memory:",
            "postgres://postgres@127.0.0.1/test",
            "mysql://root@127.0.0.1/test",
        ] {
            assert!(SoleServer::claim(url, Duration::ZERO).await.unwrap().is_none(), "{url}");
        }
    }
}
