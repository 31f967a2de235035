//! The reuse path's blueprint reads kept in memory for a moment: a warm handshake asks
//! `find_exact` and its render asks `get`, and both answer whole records (source and compiled
//! code) that change only when a blueprint is stored, edited or deleted. A kept record is
//! answered shared (`Arc`), never copied.
//!
//! Only found records are kept: a miss is asked again. A write through this repository forgets
//! everything at once (writes are rare: a generation, an import, an operator's edit); a write
//! from outside the server (the CLI on the same file) is seen within [`FRESHNESS`]. A read that
//! raced a write here is not kept: every write bumps a generation, and a reader stores its
//! answer only if the generation it noted before the query held.
//!
//! A server that alone writes its database (the SQLite default, a sole PostgreSQL server) needs
//! nothing more. Replicas sharing a database keep reads too when an event bus joins them
//! ([`BlueprintReadCache::shared_by_replicas`]): each write is announced after it commits
//! ([`LiveEvent::BlueprintsChanged`]) and every replica forgets what it kept when it hears it, so
//! another replica's change goes unseen only for the bus's delay (a lost announcement: at most
//! [`FRESHNESS`]). A read that began before the change and ends after the announcement arrives
//! is not kept (the announcement bumps the generation); one that ended before it is forgotten
//! by it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};
use moka::sync::Cache;
use tokio::sync::broadcast::error::RecvError;

use crate::ports::agent::{BLUEPRINT_CHANGES_TOPIC, BlueprintRecord, BlueprintRepository, EventBus, LiveEvent};
use crate::ports::blueprints::{
    BlueprintChange, BlueprintFilter, BlueprintListing, BlueprintSummary, ListingPosition, StoredEmbedding,
};
use crate::ports::{BoundedInsert, RepositoryError};

/// How long another process's change can go unseen here.
const FRESHNESS: Duration = Duration::from_secs(1);
/// Records kept (each holds a component's source and code).
const ENTRIES: u64 = 4096;

type Result<T> = std::result::Result<T, RepositoryError>;
type ExactKey = (String, String, String, String);

pub struct BlueprintReadCache {
    inner: Arc<dyn BlueprintRepository>,
    /// Cleared for good by [`BlueprintReadCache::stop_keeping`].
    keeping: AtomicBool,
    generation: AtomicU64,
    by_id: Cache<String, Arc<BlueprintRecord>>,
    exact: Cache<ExactKey, Arc<BlueprintRecord>>,
    /// Where this replica announces its writes to the others (replicas only).
    replicas: Option<Arc<dyn EventBus>>,
}

impl BlueprintReadCache {
    pub fn new(inner: Arc<dyn BlueprintRepository>) -> Self {
        Self {
            inner,
            keeping: AtomicBool::new(true),
            generation: AtomicU64::new(0),
            by_id: fresh_cache(),
            exact: fresh_cache(),
            replicas: None,
        }
    }

    /// A cache for one of several replicas joined by `bus`: it announces its own writes there
    /// and forgets everything it kept when any replica's write is heard. Needs a Tokio runtime
    /// (the listener is a task; it ends with the cache or the bus).
    pub fn shared_by_replicas(inner: Arc<dyn BlueprintRepository>, bus: Arc<dyn EventBus>) -> Arc<Self> {
        // Subscribed before the first read, so no announcement falls before the listener.
        let mut changes = bus.subscribe(BLUEPRINT_CHANGES_TOPIC);
        let cache = Arc::new(Self {
            replicas: Some(bus),
            ..Self::new(inner)
        });
        let heard_by: Weak<Self> = Arc::downgrade(&cache);
        tokio::spawn(async move {
            loop {
                let heard = changes.recv().await;
                let Some(cache) = heard_by.upgrade() else {
                    return;
                };
                match heard {
                    Ok(published)
                        if matches!(
                            published.event(),
                            LiveEvent::BlueprintsChanged | LiveEvent::MissedEvents
                        ) =>
                    {
                        cache.forget_all()
                    }
                    Ok(_) => {}
                    // Announcements were missed: any of them may have been a change.
                    Err(RecvError::Lagged(_)) => cache.forget_all(),
                    Err(RecvError::Closed) => return,
                }
            }
        });
        cache
    }

    /// Keeps nothing from now on and forgets what it kept (a server that lost its claim on its
    /// database, while another may write to it).
    pub fn stop_keeping(&self) {
        self.keeping.store(false, Ordering::SeqCst);
        self.forget_all();
    }

    /// Called after every write (and by a server whose claim on its database broke): nothing
    /// read before it is answered again.
    pub fn forget_all(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.by_id.invalidate_all();
        self.exact.invalidate_all();
    }

    /// Stores a found record under `key` unless a write happened since `generation` was noted.
    fn keep<K>(
        &self,
        cache: &Cache<K, Arc<BlueprintRecord>>,
        key: K,
        answer: &Option<Arc<BlueprintRecord>>,
        generation: u64,
    ) where
        K: std::hash::Hash + Eq + Send + Sync + Clone + 'static,
    {
        let Some(found) = answer else {
            return;
        };
        if !self.keeping.load(Ordering::SeqCst) {
            return;
        }
        cache.insert(key.clone(), found.clone());
        if self.generation.load(Ordering::SeqCst) != generation {
            cache.invalidate(&key);
        }
    }

    fn noted(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Taken before a write through this cache; see [`Written`].
    fn writing(&self) -> Written<'_> {
        Written {
            cache: self,
            changed: true,
        }
    }
}

/// A write through the cache. Dropped, it makes sure nothing kept here or on another replica is
/// answered again: after the write returned, failed (a commit whose answer was lost is still a
/// change) or was abandoned mid-way (the request left; its commit may have happened), unless
/// the write said it changed nothing.
struct Written<'a> {
    cache: &'a BlueprintReadCache,
    changed: bool,
}

impl Written<'_> {
    /// The write found nothing to change (an id already stored, a blueprint not there).
    fn unchanged(mut self) {
        self.changed = false;
    }
}

impl Drop for Written<'_> {
    fn drop(&mut self) {
        if !self.changed {
            return;
        }
        self.cache.forget_all();
        if let Some(bus) = &self.cache.replicas {
            bus.publish(LiveEvent::BlueprintsChanged);
        }
    }
}

fn fresh_cache<K: std::hash::Hash + Eq + Send + Sync + 'static>() -> Cache<K, Arc<BlueprintRecord>> {
    Cache::builder().max_capacity(ENTRIES).time_to_live(FRESHNESS).build()
}

#[async_trait::async_trait]
impl BlueprintRepository for BlueprintReadCache {
    async fn insert(&self, record: &BlueprintRecord) -> Result<()> {
        let _written = self.writing();
        self.inner.insert(record).await
    }

    async fn insert_bounded(&self, record: &BlueprintRecord, max: u64) -> Result<BoundedInsert> {
        let written = self.writing();
        let inserted = self.inner.insert_bounded(record, max).await;
        if matches!(inserted, Ok(BoundedInsert::Full { .. })) {
            written.unchanged();
        }
        inserted
    }

    async fn insert_if_absent(&self, record: &BlueprintRecord) -> Result<bool> {
        let written = self.writing();
        let inserted = self.inner.insert_if_absent(record).await;
        if matches!(inserted, Ok(false)) {
            written.unchanged();
        }
        inserted
    }

    async fn upsert(&self, record: &BlueprintRecord) -> Result<()> {
        let _written = self.writing();
        self.inner.upsert(record).await
    }

    async fn get(&self, blueprint_id: &str) -> Result<Option<Arc<BlueprintRecord>>> {
        if let Some(cached) = self.by_id.get(blueprint_id) {
            return Ok(Some(cached));
        }
        let generation = self.noted();
        let answer = self.inner.get(blueprint_id).await?;
        self.keep(&self.by_id, blueprint_id.to_owned(), &answer, generation);
        Ok(answer)
    }

    async fn find_exact(
        &self,
        app_id: &str,
        intent: &str,
        contract_hash: &str,
        variant_key: &str,
    ) -> Result<Option<Arc<BlueprintRecord>>> {
        let key = (
            app_id.to_owned(),
            intent.to_owned(),
            contract_hash.to_owned(),
            variant_key.to_owned(),
        );
        if let Some(cached) = self.exact.get(&key) {
            return Ok(Some(cached));
        }
        let generation = self.noted();
        let answer = self
            .inner
            .find_exact(app_id, intent, contract_hash, variant_key)
            .await?;
        self.keep(&self.exact, key, &answer, generation);
        Ok(answer)
    }

    async fn operator_default_id(&self, app_id: &str, contract_hash: &str) -> Result<Option<String>> {
        self.inner.operator_default_id(app_id, contract_hash).await
    }

    async fn intent_cached(&self, app_id: &str, intent: &str) -> Result<bool> {
        self.inner.intent_cached(app_id, intent).await
    }

    async fn list(&self, filter: &BlueprintFilter) -> Result<Vec<BlueprintRecord>> {
        self.inner.list(filter).await
    }

    async fn list_page(
        &self,
        filter: &BlueprintFilter,
        after: Option<&ListingPosition>,
        limit: u64,
    ) -> Result<Vec<BlueprintListing>> {
        self.inner.list_page(filter, after, limit).await
    }

    async fn count_in_app(&self, app_id: &str) -> Result<u64> {
        self.inner.count_in_app(app_id).await
    }

    async fn summaries(&self, since: Option<DateTime<Utc>>) -> Result<Vec<BlueprintSummary>> {
        self.inner.summaries(since).await
    }

    async fn ids(&self) -> Result<Vec<String>> {
        self.inner.ids().await
    }

    async fn set_embedding(&self, blueprint_id: &str, embedding: &StoredEmbedding) -> Result<()> {
        let done = self.inner.set_embedding(blueprint_id, embedding).await;
        // Not announced: another replica's kept record lacking the embedding for a moment only
        // skips it in a similarity search; the row's `updated_at` stays for the same reason.
        self.forget_all();
        done
    }

    async fn update(
        &self,
        app_id: &str,
        blueprint_id: &str,
        change: &BlueprintChange,
        at: DateTime<Utc>,
    ) -> Result<bool> {
        let written = self.writing();
        let updated = self.inner.update(app_id, blueprint_id, change, at).await;
        if matches!(updated, Ok(false)) {
            written.unchanged();
        }
        updated
    }

    async fn delete(&self, app_id: &str, blueprint_id: &str) -> Result<bool> {
        let written = self.writing();
        let deleted = self.inner.delete(app_id, blueprint_id).await;
        if matches!(deleted, Ok(false)) {
            written.unchanged();
        }
        deleted
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests {
    use super::*;
    use crate::testing::{InMemoryAgentStore, LocalBus};
    use chrono::Utc;

    fn record(id: &str, intent: &str) -> BlueprintRecord {
        BlueprintRecord {
            blueprint_id: id.into(),
            app_id: "app".into(),
            intent: intent.into(),
            contract_hash: "h".into(),
            variant_key: "v".into(),
            source: format!("source of {id}"),
            ..BlueprintRecord::blank(Utc::now())
        }
    }

    fn wired() -> (Arc<InMemoryAgentStore>, BlueprintReadCache) {
        let store = Arc::new(InMemoryAgentStore::default());
        let cache = BlueprintReadCache::new(store.clone());
        (store, cache)
    }

    #[tokio::test]
    async fn a_write_here_is_seen_by_the_next_read() {
        let (_, cache) = wired();
        assert!(cache.find_exact("app", "card", "h", "v").await.unwrap().is_none());
        cache.insert(&record("b1", "card")).await.unwrap();
        let found = cache.find_exact("app", "card", "h", "v").await.unwrap();
        assert_eq!(
            found.map(|r| r.blueprint_id.clone()),
            Some("b1".to_owned()),
            "the cached miss is forgotten"
        );
        assert!(cache.get("b1").await.unwrap().is_some());
        assert!(cache.delete("app", "b1").await.unwrap());
        assert!(
            cache.get("b1").await.unwrap().is_none(),
            "the deleted record is not answered"
        );
        assert!(cache.find_exact("app", "card", "h", "v").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_miss_is_asked_again() {
        let (store, cache) = wired();
        assert!(cache.find_exact("app", "card", "h", "v").await.unwrap().is_none());
        assert!(cache.get("b1").await.unwrap().is_none());
        // Another replica generates it: the next lookup here finds it at once.
        store.insert(&record("b1", "card")).await.unwrap();
        assert!(cache.find_exact("app", "card", "h", "v").await.unwrap().is_some());
        assert!(cache.get("b1").await.unwrap().is_some());
    }

    #[tokio::test]
    async fn a_replica_forgets_what_it_kept_when_another_announces_a_change() {
        let store = Arc::new(InMemoryAgentStore::default());
        let bus: Arc<dyn EventBus> = Arc::new(LocalBus::default());
        let here = BlueprintReadCache::shared_by_replicas(store.clone(), bus.clone());
        let there = BlueprintReadCache::shared_by_replicas(store.clone(), bus);
        store.insert(&record("b1", "card")).await.unwrap();
        assert!(here.get("b1").await.unwrap().is_some());
        assert!(here.find_exact("app", "card", "h", "v").await.unwrap().is_some());
        assert!(there.delete("app", "b1").await.unwrap());
        // Well inside FRESHNESS: only the announcement can make this replica forget.
        let deadline = tokio::time::Instant::now() + FRESHNESS / 2;
        while here.get("b1").await.unwrap().is_some() {
            assert!(tokio::time::Instant::now() < deadline, "the change was not heard");
            tokio::task::yield_now().await;
        }
        assert!(here.find_exact("app", "card", "h", "v").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn missed_announcements_forget_everything_kept() {
        let store = Arc::new(InMemoryAgentStore::default());
        let bus: Arc<dyn EventBus> = Arc::new(LocalBus::default());
        let cache = BlueprintReadCache::shared_by_replicas(store.clone(), bus.clone());
        store.insert(&record("b1", "card")).await.unwrap();
        assert!(cache.get("b1").await.unwrap().is_some());
        store.delete("app", "b1").await.unwrap();
        bus.publish(LiveEvent::MissedEvents);
        let deadline = tokio::time::Instant::now() + FRESHNESS / 2;
        while cache.get("b1").await.unwrap().is_some() {
            assert!(tokio::time::Instant::now() < deadline, "still answered from memory");
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn a_replica_announces_its_writes_and_not_its_reads() {
        let store = Arc::new(InMemoryAgentStore::default());
        let bus: Arc<dyn EventBus> = Arc::new(LocalBus::default());
        let mut heard = bus.subscribe(BLUEPRINT_CHANGES_TOPIC);
        let cache = BlueprintReadCache::shared_by_replicas(store, bus);
        cache.insert(&record("b1", "card")).await.unwrap();
        assert!(matches!(
            heard.try_recv().map(|p| p.event().clone()),
            Ok(LiveEvent::BlueprintsChanged)
        ));
        assert!(cache.get("b1").await.unwrap().is_some());
        assert!(heard.try_recv().is_err(), "a read announces nothing");
        assert!(!cache.insert_if_absent(&record("b1", "card")).await.unwrap());
        assert!(
            heard.try_recv().is_err(),
            "an insert that found its id stored changed nothing"
        );
        let change = crate::ports::blueprints::BlueprintChange::default();
        cache.update("app", "b1", &change, Utc::now()).await.unwrap();
        cache.delete("app", "b1").await.unwrap();
        assert_eq!(heard.len(), 2, "an edit and a delete are announced");
        assert!(!cache.delete("app", "b1").await.unwrap());
        assert_eq!(heard.len(), 2, "deleting what is gone changed nothing");
    }

    /// Commits what it is given, then never answers: a write whose caller left after its
    /// commit.
    struct CommitsThenHangs(Arc<InMemoryAgentStore>);

    #[async_trait::async_trait]
    impl BlueprintRepository for CommitsThenHangs {
        async fn insert(&self, record: &BlueprintRecord) -> Result<()> {
            self.0.insert(record).await?;
            std::future::pending().await
        }
        async fn insert_bounded(&self, record: &BlueprintRecord, max: u64) -> Result<BoundedInsert> {
            self.0.insert_bounded(record, max).await
        }
        async fn insert_if_absent(&self, record: &BlueprintRecord) -> Result<bool> {
            self.0.insert_if_absent(record).await
        }
        async fn operator_default_id(&self, app_id: &str, hash: &str) -> Result<Option<String>> {
            self.0.operator_default_id(app_id, hash).await
        }
        async fn upsert(&self, record: &BlueprintRecord) -> Result<()> {
            self.0.upsert(record).await
        }
        async fn get(&self, blueprint_id: &str) -> Result<Option<Arc<BlueprintRecord>>> {
            self.0.get(blueprint_id).await
        }
        async fn find_exact(
            &self,
            app: &str,
            intent: &str,
            hash: &str,
            variant: &str,
        ) -> Result<Option<Arc<BlueprintRecord>>> {
            self.0.find_exact(app, intent, hash, variant).await
        }
        async fn intent_cached(&self, app_id: &str, intent: &str) -> Result<bool> {
            self.0.intent_cached(app_id, intent).await
        }
        async fn list(&self, filter: &BlueprintFilter) -> Result<Vec<BlueprintRecord>> {
            self.0.list(filter).await
        }
        async fn list_page(
            &self,
            filter: &BlueprintFilter,
            after: Option<&ListingPosition>,
            limit: u64,
        ) -> Result<Vec<BlueprintListing>> {
            self.0.list_page(filter, after, limit).await
        }
        async fn count_in_app(&self, app_id: &str) -> Result<u64> {
            self.0.count_in_app(app_id).await
        }
        async fn summaries(&self, since: Option<DateTime<Utc>>) -> Result<Vec<BlueprintSummary>> {
            self.0.summaries(since).await
        }
        async fn ids(&self) -> Result<Vec<String>> {
            self.0.ids().await
        }
        async fn set_embedding(&self, blueprint_id: &str, embedding: &StoredEmbedding) -> Result<()> {
            self.0.set_embedding(blueprint_id, embedding).await
        }
        async fn update(&self, app: &str, id: &str, change: &BlueprintChange, at: DateTime<Utc>) -> Result<bool> {
            self.0.update(app, id, change, at).await
        }
        async fn delete(&self, app_id: &str, blueprint_id: &str) -> Result<bool> {
            self.0.delete(app_id, blueprint_id).await
        }
    }

    #[tokio::test]
    async fn a_write_abandoned_after_its_commit_is_announced() {
        let store = Arc::new(InMemoryAgentStore::default());
        let bus: Arc<dyn EventBus> = Arc::new(LocalBus::default());
        let mut heard = bus.subscribe(BLUEPRINT_CHANGES_TOPIC);
        let cache = BlueprintReadCache::shared_by_replicas(Arc::new(CommitsThenHangs(store.clone())), bus);
        let record = record("b1", "card");
        let left = tokio::time::timeout(Duration::from_millis(20), cache.insert(&record)).await;
        assert!(left.is_err(), "the caller left before an answer");
        assert!(store.get("b1").await.unwrap().is_some(), "the write committed");
        assert!(matches!(
            heard.try_recv().map(|p| p.event().clone()),
            Ok(LiveEvent::BlueprintsChanged)
        ));
    }

    #[tokio::test]
    async fn reads_are_answered_from_memory_until_fresh_runs_out() {
        let (store, cache) = wired();
        store.insert(&record("b1", "card")).await.unwrap();
        assert!(cache.get("b1").await.unwrap().is_some());
        // Another process deletes it: this replica answers from memory for at most FRESHNESS.
        store.delete("app", "b1").await.unwrap();
        assert!(cache.get("b1").await.unwrap().is_some(), "served from memory");
        tokio::time::sleep(FRESHNESS + Duration::from_millis(50)).await;
        assert!(cache.get("b1").await.unwrap().is_none(), "seen once fresh ran out");
    }

    #[tokio::test]
    async fn a_cache_that_stopped_keeping_reads_through() {
        let (store, cache) = wired();
        store.insert(&record("b1", "card")).await.unwrap();
        assert!(cache.get("b1").await.unwrap().is_some());
        cache.stop_keeping();
        // Another server deletes it: this one's next read asks the store, and keeps nothing.
        store.delete("app", "b1").await.unwrap();
        assert!(cache.get("b1").await.unwrap().is_none(), "forgotten at the stop");
        store.insert(&record("b1", "card")).await.unwrap();
        assert!(cache.get("b1").await.unwrap().is_some());
        store.delete("app", "b1").await.unwrap();
        assert!(cache.get("b1").await.unwrap().is_none(), "nothing kept after the stop");
    }

    #[tokio::test]
    async fn a_read_that_raced_a_write_is_not_kept() {
        let (store, cache) = wired();
        store.insert(&record("b1", "card")).await.unwrap();
        let before = cache.noted();
        let stale = store.get("b1").await.unwrap();
        cache
            .update("app", "b1", &BlueprintChange::default(), Utc::now())
            .await
            .unwrap();
        cache.keep(&cache.by_id, "b1".to_owned(), &stale, before);
        assert!(
            cache.by_id.get("b1").is_none(),
            "the answer read before the write is dropped"
        );
    }
}
