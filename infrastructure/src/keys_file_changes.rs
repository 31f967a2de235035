//! The changes of the data directory that can concern the keys file, delivered to a callback.
//!
//! On Linux the kernel is asked only for what can replace or rewrite the file: a rename into the
//! directory (`svc keys mint` and `revoke` write a temporary file and rename it), a file written and
//! closed, a creation or a deletion. The SQLite database beside it appends to its `-wal` file on
//! every commit; a watch of every modification (notify's inotify watcher has no mask to narrow it)
//! woke a thread for each write, 4% of the CPU under a write-heavy load. Elsewhere notify's
//! recommended watcher, whose events are filtered after the fact.

use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;

/// Stops watching when dropped.
pub struct Watch {
    #[cfg(target_os = "linux")]
    task: tokio::task::JoinHandle<()>,
    #[cfg(not(target_os = "linux"))]
    _watcher: notify::RecommendedWatcher,
}

#[cfg(target_os = "linux")]
impl Drop for Watch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Runs `changed` (on a blocking thread) after each change that may concern `file_name` in `dir`.
/// Linux: needs a Tokio runtime (the events are read by a task).
#[cfg(target_os = "linux")]
pub fn watch(dir: &Path, file_name: OsString, changed: Arc<dyn Fn() + Send + Sync>) -> std::io::Result<Watch> {
    use futures_util::StreamExt;
    use inotify::{EventMask, Inotify, WatchMask};

    let inotify = Inotify::init()?;
    inotify.watches().add(
        dir,
        WatchMask::MOVED_TO | WatchMask::CLOSE_WRITE | WatchMask::CREATE | WatchMask::DELETE | WatchMask::MOVED_FROM,
    )?;
    let mut events = inotify.into_event_stream(vec![0u8; 4096])?;
    let task = tokio::spawn(async move {
        while let Some(event) = events.next().await {
            let event = match event {
                Ok(event) => event,
                Err(error) => {
                    // The file is still re-read when a bearer misses the snapshot (a minted key
                    // works); a revocation then waits for the next change seen on a miss.
                    tracing::warn!(error = %error, "the keys file watch stopped");
                    return;
                }
            };
            // An overflowed queue lost events: any of them may have been the file's.
            let concerned =
                event.mask.contains(EventMask::Q_OVERFLOW) || event.name.as_deref() == Some(file_name.as_os_str());
            if concerned {
                let changed = Arc::clone(&changed);
                // A blocking read of the file; awaited, so reads of the file never overlap.
                let _ = tokio::task::spawn_blocking(move || changed()).await;
            }
        }
    });
    Ok(Watch { task })
}

/// Runs `changed` (on notify's thread) after each change of `file_name` in `dir`.
#[cfg(not(target_os = "linux"))]
pub fn watch(dir: &Path, file_name: OsString, changed: Arc<dyn Fn() + Send + Sync>) -> std::io::Result<Watch> {
    use notify::{RecursiveMode, Watcher};

    let watched = dir.join(&file_name);
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if event.is_ok_and(|event| event.paths.iter().any(|p| p == &watched)) {
            changed();
        }
    })
    .map_err(std::io::Error::other)?;
    watcher
        .watch(dir, RecursiveMode::NonRecursive)
        .map_err(std::io::Error::other)?;
    Ok(Watch { _watcher: watcher })
}
