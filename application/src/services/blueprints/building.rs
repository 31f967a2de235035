//! The start-up build of the index in the background: the server answers at once while the
//! index of a large cache is built (about 1 s per 100,000 blueprints, BENCHMARKS.md). Until it is
//! done the handshake's semantic lookup reads the database (`semantic_from_database`), searches
//! and listings wait for it, and readiness reports it.

use std::time::Duration;

use super::BlueprintCatalog;

/// How long a failed build waits before it tries again.
const RETRY_AFTER: Duration = Duration::from_secs(5);

impl BlueprintCatalog {
    /// `false` while the index is being built at start-up.
    pub fn index_ready(&self) -> bool {
        *self.inner.index_ready.borrow()
    }

    /// Resolves once the index is built (at once when it is).
    pub async fn wait_for_index(&self) {
        let mut ready = self.inner.index_ready.subscribe();
        // The sender lives in `self`, so the wait cannot fail.
        let _ = ready.wait_for(|ready| *ready).await;
    }

    /// Marks the index as building and builds it on a task; then starts the refresh every
    /// `refresh_every` (when given). A failed build is logged and retried.
    pub fn spawn_build(&self, refresh_every: Option<Duration>) {
        self.inner.index_ready.send_replace(false);
        let catalog = self.clone();
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            loop {
                match catalog.rebuild().await {
                    Ok(indexed) => {
                        tracing::info!(
                            indexed,
                            embedder = catalog.embedder_model(),
                            millis = started.elapsed().as_millis() as u64,
                            "blueprint index built"
                        );
                        break;
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "cannot build the blueprint index; retrying");
                        tokio::time::sleep(RETRY_AFTER).await;
                    }
                }
            }
            catalog.inner.index_ready.send_replace(true);
            if let Some(every) = refresh_every {
                catalog.spawn_refresh(every);
            }
        });
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::services::blueprints::CatalogSettings;
    use crate::testing::{AgentFakes, FlatEmbedder};

    #[tokio::test]
    async fn the_index_is_not_ready_from_the_spawn_until_the_build_ends() {
        let fakes = AgentFakes::default();
        let catalog = BlueprintCatalog::new(
            fakes.store.clone(),
            Arc::new(FlatEmbedder),
            fakes.clock.clone(),
            CatalogSettings::default(),
        );
        assert!(catalog.index_ready(), "a catalog nobody builds is ready");
        catalog.spawn_build(None);
        assert!(!catalog.index_ready(), "not ready before the task has run");
        catalog.wait_for_index().await;
        assert!(catalog.index_ready());
        assert_eq!(catalog.indexed(), 0);
    }
}
