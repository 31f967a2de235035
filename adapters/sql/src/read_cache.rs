//! What the read paths (`svc_consume`, `svc_get_session`, `resources/read`) ask of SQLite again
//! and again, kept in memory: session rows, "no gesture waits to be drained", and a session's
//! last delivery `seq`.
//!
//! For a database this process alone writes (SQLite, the one group-commit writer; PostgreSQL
//! claimed by a sole server, `database_claim.rs`): every write to these rows goes through the
//! session and event repositories here, which forget the session after their commit, and the
//! commit and its forget run together even when the request that asked leaves
//! (`group_commit::write_settled`).
//!
//! PostgreSQL replicas sharing a database keep session rows and quiet flags too, behind a
//! [`Fence`]: another replica's write is announced by PostgreSQL and forgotten here
//! (`session_watch.rs`), and a lookup answers only after a fence sent after it began has passed,
//! so every write acknowledged before the read began was forgotten first. They keep no delivery
//! cursors (deliveries are not announced).
//!
//! A reader may fetch a row just before a write commits and store it just after the write forgot
//! it. So every session hashes to a generation that each forget bumps; a reader notes it before
//! the query, stores its answer, then looks again and takes the answer back out if it moved. A
//! stale entry can therefore only live until the reader that stored it looks again.
//!
//! A committed heartbeat moves the kept row on instead of forgetting it ([`settling_head`]): it
//! reads the kept row and writes it back under moka's per-key lock, so a reader takes its
//! answer back out under the same lock (before the move, which then finds nothing, or after it,
//! removing what was moved). And it runs on the writer in commit order, so no other write's
//! forget falls between its read and its write; without a writer it only forgets.
//!
//! [`settling_head`]: ReadCache::settling_head

use std::hash::BuildHasher;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use moka::ops::compute::Op;
use moka::sync::Cache;
use sea_orm::DbErr;
use svc_application::ports::agent::SessionRecord;
use svc_domain::session::SessionHead;

use crate::json_heap::heap_bytes;
use crate::read_fence::Fence;

/// Generations are per stripe of sessions, not per session: a bounded array, no map to grow.
const STRIPES: usize = 256;
/// Session rows kept, by the size of their stored JSON (props, contract, context) and what it
/// holds once parsed.
const SESSION_BYTES: u64 = 32 * 1024 * 1024;
/// Sessions, quiet flags and delivery cursors kept.
const SMALL_ENTRIES: u64 = 100_000;
/// An idle entry leaves; the bound on memory is the capacities above.
const IDLE: Duration = Duration::from_secs(300);
/// What a session row weighs besides its JSON text.
const ROW_OVERHEAD: usize = 512;

/// The read cache of one database (see the module doc for which); clones share it.
#[derive(Clone)]
pub struct ReadCache {
    inner: Arc<Inner>,
}

struct Inner {
    /// Cleared for good by [`ReadCache::stop_keeping`].
    keeping: AtomicBool,
    /// A replica's: lookups wait for it (see the module doc).
    fence: Option<Fence>,
    generations: [AtomicU64; STRIPES],
    hasher: std::collections::hash_map::RandomState,
    sessions: Cache<String, Arc<CachedSession>>,
    /// Sessions known to hold no undrained gesture.
    quiet: Cache<String, ()>,
    /// A session's highest delivery `seq` (0: none).
    last_seq: Cache<String, i64>,
}

struct CachedSession {
    /// Shared with the readers it answers: a read copies nothing of it.
    record: Arc<SessionRecord>,
    /// The row's stored text in bytes, its parsed JSON's heap, and [`ROW_OVERHEAD`].
    weight: u32,
}

/// What a write changed of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Changed {
    /// The `sessions` row (head, heartbeat, context snapshot).
    Row,
    /// Its gestures (stored: the row's sequence moves too).
    Gestures,
    /// Its stream deliveries.
    Deliveries,
}

/// A reader's note of its session's generation, taken before the query.
pub(crate) struct Ticket {
    stripe: usize,
    generation: u64,
}

impl Default for ReadCache {
    fn default() -> Self {
        Self::new()
    }
}

impl ReadCache {
    /// The cache of a database this process alone writes.
    pub fn new() -> Self {
        Self::with_fence(None)
    }

    /// The cache of a PostgreSQL replica, whose lookups wait at `fence` (a `SessionWatch` drives
    /// it and forgets what other replicas change).
    pub(crate) fn fenced(fence: Fence) -> Self {
        Self::with_fence(Some(fence))
    }

    fn with_fence(fence: Option<Fence>) -> Self {
        let sessions = Cache::builder()
            .max_capacity(SESSION_BYTES)
            .weigher(|_: &String, cached: &Arc<CachedSession>| cached.weight)
            .time_to_idle(IDLE)
            .build();
        Self {
            inner: Arc::new(Inner {
                keeping: AtomicBool::new(true),
                fence,
                generations: std::array::from_fn(|_| AtomicU64::new(0)),
                hasher: std::collections::hash_map::RandomState::new(),
                sessions,
                quiet: small_cache(),
                last_seq: small_cache(),
            }),
        }
    }

    fn stripe(&self, session_id: &str) -> usize {
        (self.inner.hasher.hash_one(session_id) as usize) % STRIPES
    }

    /// Whether what is kept may answer now: at once without a fence; on a replica once a fence
    /// sent after this call passed (`false`: read the database). Ask only when something is
    /// kept, and look again after: the fence may have forgotten it.
    async fn admit(&self) -> bool {
        match &self.inner.fence {
            None => true,
            Some(fence) => fence.pass().await,
        }
    }

    /// The kept session, once it may answer (a miss goes to the database without waiting).
    pub(crate) async fn kept_session(&self, session_id: &str) -> Option<Arc<SessionRecord>> {
        self.session(session_id)?;
        if !self.admit().await {
            return None;
        }
        self.session(session_id)
    }

    /// `true` when the session is known to hold no undrained gesture, once that may answer.
    pub(crate) async fn kept_quiet(&self, session_id: &str) -> bool {
        self.is_quiet(session_id) && self.admit().await && self.is_quiet(session_id)
    }

    /// Forgets a session whose row PostgreSQL announced changed (by any replica): its row, and
    /// whether it is quiet (a stored gesture moves the row's `event_sequence`).
    pub(crate) fn forget_announced(&self, session_id: &str) {
        self.forget(session_id, Changed::Gestures);
    }

    /// Notes the session's generation; take it before reading the database.
    pub(crate) fn ticket(&self, session_id: &str) -> Ticket {
        let stripe = self.stripe(session_id);
        Ticket {
            stripe,
            generation: self.inner.generations[stripe].load(Ordering::SeqCst),
        }
    }

    /// Keeps `value` under `key` in `cache` unless a write forgot the session since `ticket`. The
    /// look at the generation and the insert run under the key's lock, which a forget also takes
    /// (after bumping the generation), so a row read before a write can never be seen after that
    /// write's forget, not even for a moment. A look again after the insert takes back what
    /// [`ReadCache::forget_everything`] (not under any key's lock) raced.
    fn keep<V: Clone + Send + Sync + 'static>(&self, cache: &Cache<String, V>, ticket: &Ticket, key: &str, value: V) {
        if !self.inner.keeping.load(Ordering::SeqCst) {
            return;
        }
        let generation = &self.inner.generations[ticket.stripe];
        let current = || generation.load(Ordering::SeqCst) == ticket.generation;
        cache
            .entry(key.to_owned())
            .and_compute_with(|_| if current() { Op::Put(value) } else { Op::Nop });
        if !current() {
            forget_key(cache, key);
        }
    }

    /// Forgets what a committed write changed of a session. Any forget also turns away the
    /// answers of reads of the same stripe still in flight, whatever they read.
    pub(crate) fn forget(&self, session_id: &str, changed: Changed) {
        self.inner.generations[self.stripe(session_id)].fetch_add(1, Ordering::SeqCst);
        match changed {
            Changed::Row => forget_key(&self.inner.sessions, session_id),
            Changed::Gestures => {
                // A gesture also moves the row's `event_sequence`.
                forget_key(&self.inner.sessions, session_id);
                forget_key(&self.inner.quiet, session_id);
            }
            Changed::Deliveries => forget_key(&self.inner.last_seq, session_id),
        }
    }

    /// Keeps nothing from now on and forgets what it kept: this server lost its claim on its
    /// database, and another server may write until this one has stopped.
    pub fn stop_keeping(&self) {
        self.inner.keeping.store(false, Ordering::SeqCst);
        self.forget_everything();
    }

    /// Forgets every kept row, and turns away the answers of reads still in flight: after this
    /// server's claim on a shared database broke, another server may have written anything.
    pub fn forget_everything(&self) {
        for generation in &self.inner.generations {
            generation.fetch_add(1, Ordering::SeqCst);
        }
        self.inner.sessions.invalidate_all();
        self.inner.quiet.invalidate_all();
        self.inner.last_seq.invalidate_all();
    }

    /// What must follow a committed write (`cache` being the repository's, if any): forgetting
    /// what it `changed`. Handed to the writer, it runs there, so a request cancelled while its
    /// write commits still forgets.
    pub(crate) fn forgetting<T>(
        cache: Option<&ReadCache>,
        session_id: &str,
        changed: Changed,
    ) -> impl FnOnce(&Result<T, DbErr>) + Send + 'static {
        let (cache, id) = (cache.cloned(), session_id.to_owned());
        move |_| {
            if let Some(cache) = cache {
                cache.forget(&id, changed);
            }
        }
    }

    /// What must follow a `save_head` from `revision` to `head`: once it committed, a kept row
    /// at `revision` takes the new head if only the heartbeat moved (so `svc_get_session` of a
    /// kept session stays a read from memory); anything else forgets the row. Only `on_writer`
    /// (handed to the group-commit writer, it runs there in commit order, after the forgets of
    /// every write committed before it, a gesture's among them, and never beside another); a
    /// settlement that runs in the request task forgets.
    pub(crate) fn settling_head(
        cache: Option<&ReadCache>,
        session_id: &str,
        revision: i64,
        head: &SessionHead,
        on_writer: bool,
    ) -> impl FnOnce(&Result<bool, DbErr>) + Send + 'static {
        let settled = cache.map(|cache| (cache.clone(), session_id.to_owned(), head.clone()));
        move |outcome| {
            let Some((cache, id, head)) = settled else { return };
            match outcome {
                Ok(true) if on_writer => cache.heartbeat_saved(&id, revision, &head),
                _ => cache.forget(&id, Changed::Row),
            }
        }
    }

    /// After a committed `save_head` from `revision`: the kept row moves on to `head` when it is
    /// the row saved from and only the heartbeat differs; any other kept row is dropped.
    fn heartbeat_saved(&self, session_id: &str, revision: i64, head: &SessionHead) {
        self.inner.generations[self.stripe(session_id)].fetch_add(1, Ordering::SeqCst);
        self.inner
            .sessions
            .entry(session_id.to_owned())
            .and_compute_with(|kept| {
                let Some(entry) = kept else { return Op::Nop };
                let cached = entry.value();
                let mut record = SessionRecord::clone(&cached.record);
                record.head.last_activity_at = head.last_activity_at;
                if record.revision != revision || record.head != *head {
                    return Op::Remove;
                }
                record.revision = revision + 1;
                Op::Put(Arc::new(CachedSession {
                    record: Arc::new(record),
                    weight: cached.weight,
                }))
            });
    }

    fn session(&self, session_id: &str) -> Option<Arc<SessionRecord>> {
        self.inner.sessions.get(session_id).map(|c| Arc::clone(&c.record))
    }

    /// `stored_bytes`: the length of the row's text columns. It weighs that, and what its parsed
    /// JSON holds besides: a row kept by its text alone could hold forty times the bound.
    pub(crate) fn keep_session(&self, ticket: &Ticket, record: &Arc<SessionRecord>, stored_bytes: usize) {
        let id = record.session_id.clone();
        let cache = &self.inner.sessions;
        let parsed = heap_bytes(&record.head.props) + heap_bytes(&record.context_snapshot);
        let weight = stored_bytes.saturating_add(parsed).saturating_add(ROW_OVERHEAD);
        let cached = Arc::new(CachedSession {
            record: Arc::clone(record),
            weight: u32::try_from(weight).unwrap_or(u32::MAX),
        });
        // Under the key's lock, which a heartbeat's move holds too (see the module doc).
        self.keep(cache, ticket, &id, cached);
    }

    /// `true` when the session is known to hold no undrained gesture (for a caller that just
    /// had its session from [`ReadCache::kept_session`]: the same fence answers for both).
    pub(crate) fn is_quiet(&self, session_id: &str) -> bool {
        self.inner.quiet.contains_key(session_id)
    }

    pub(crate) fn keep_quiet(&self, ticket: &Ticket, session_id: &str) {
        self.keep(&self.inner.quiet, ticket, session_id, ());
    }

    /// Never on a replica: deliveries are not announced.
    pub(crate) fn last_seq(&self, session_id: &str) -> Option<i64> {
        if self.inner.fence.is_some() {
            return None;
        }
        self.inner.last_seq.get(session_id)
    }

    pub(crate) fn keep_last_seq(&self, ticket: &Ticket, session_id: &str, seq: i64) {
        if self.inner.fence.is_some() {
            return;
        }
        self.keep(&self.inner.last_seq, ticket, session_id, seq);
    }
}

/// Removes `key` under its lock (see [`ReadCache::keep`]).
fn forget_key<V: Clone + Send + Sync + 'static>(cache: &Cache<String, V>, key: &str) {
    cache.entry(key.to_owned()).and_compute_with(|_| Op::Remove);
}

fn small_cache<V: Clone + Send + Sync + 'static>() -> Cache<String, V> {
    Cache::builder().max_capacity(SMALL_ENTRIES).time_to_idle(IDLE).build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_that_raced_a_write_is_not_kept() {
        let cache = ReadCache::new();
        let ticket = cache.ticket("s1");
        cache.forget("s1", Changed::Row);
        cache.keep_last_seq(&ticket, "s1", 7);
        assert_eq!(cache.last_seq("s1"), None, "the write came after the read's ticket");
        let ticket = cache.ticket("s1");
        cache.keep_last_seq(&ticket, "s1", 7);
        assert_eq!(cache.last_seq("s1"), Some(7));
        cache.forget("s1", Changed::Row);
        assert_eq!(cache.last_seq("s1"), Some(7), "a heartbeat leaves the delivery cursor");
        cache.forget("s1", Changed::Deliveries);
        assert_eq!(cache.last_seq("s1"), None, "a delivery forgets it");
    }

    #[test]
    fn a_cache_that_stopped_keeping_forgets_and_answers_nothing_more() {
        let cache = ReadCache::new();
        cache.keep_session(&cache.ticket("s1"), &record(1), 100);
        cache.keep_quiet(&cache.ticket("s1"), "s1");
        cache.keep_last_seq(&cache.ticket("s1"), "s1", 4);
        cache.stop_keeping();
        assert!(cache.session("s1").is_none() && !cache.is_quiet("s1") && cache.last_seq("s1").is_none());
        cache.keep_session(&cache.ticket("s1"), &record(2), 100);
        cache.keep_quiet(&cache.ticket("s1"), "s1");
        cache.keep_last_seq(&cache.ticket("s1"), "s1", 5);
        assert!(
            cache.session("s1").is_none() && !cache.is_quiet("s1") && cache.last_seq("s1").is_none(),
            "reads after the stop are not kept"
        );
    }

    fn record(revision: i64) -> Arc<SessionRecord> {
        let now = chrono::Utc::now();
        Arc::new(SessionRecord {
            session_id: "s1".into(),
            app_id: "a".into(),
            intent: "card".into(),
            blueprint_id: None,
            contract: Default::default(),
            theme_id: None,
            head: SessionHead::rendered(serde_json::json!({ "n": 1 }), 3600, now),
            failure: None,
            host: Default::default(),
            context_snapshot: serde_json::json!({}),
            event_sequence: 0,
            created_at: now,
            revision,
        })
    }

    /// `record`'s head a second later.
    fn heartbeat_of(record: &SessionRecord) -> SessionHead {
        let mut beat = record.head.clone();
        beat.last_activity_at += chrono::Duration::seconds(1);
        beat
    }

    fn settle(cache: &ReadCache, revision: i64, head: &SessionHead, outcome: Result<bool, DbErr>) {
        ReadCache::settling_head(Some(cache), "s1", revision, head, true)(&outcome);
    }

    #[test]
    fn a_saved_heartbeat_moves_on_only_the_row_it_was_saved_from() {
        let cache = ReadCache::new();
        let kept = record(3);
        cache.keep_session(&cache.ticket("s1"), &kept, 100);
        let beat = heartbeat_of(&kept);
        settle(&cache, 2, &beat, Ok(true));
        assert!(cache.session("s1").is_none(), "the kept row was not the one saved from");

        cache.keep_session(&cache.ticket("s1"), &kept, 100);
        settle(&cache, 3, &beat, Ok(true));
        let now = cache.session("s1").expect("a heartbeat keeps the row");
        assert_eq!((now.revision, now.head.last_activity_at), (4, beat.last_activity_at));

        let mut update = now.head.clone();
        update.props = serde_json::json!({ "n": 2 });
        settle(&cache, 4, &update, Ok(true));
        assert!(cache.session("s1").is_none(), "new props are read again");

        for outcome in [Ok(false), Err(DbErr::Custom("the batch failed".into()))] {
            cache.keep_session(&cache.ticket("s1"), &kept, 100);
            settle(&cache, 3, &beat, outcome);
            assert!(cache.session("s1").is_none(), "a write that did not land forgets");
        }

        cache.keep_session(&cache.ticket("s1"), &kept, 100);
        ReadCache::settling_head(Some(&cache), "s1", 3, &beat, false)(&Ok(true));
        assert!(
            cache.session("s1").is_none(),
            "off the writer, nothing orders it: it forgets"
        );
    }

    #[test]
    fn a_read_in_flight_across_a_saved_heartbeat_is_not_kept() {
        let cache = ReadCache::new();
        let ticket = cache.ticket("s1");
        let kept = record(3);
        let beat = heartbeat_of(&kept);
        settle(&cache, 3, &beat, Ok(true));
        cache.keep_session(&ticket, &kept, 100);
        assert!(
            cache.session("s1").is_none(),
            "the read began before the heartbeat landed"
        );
    }

    #[test]
    fn quiet_is_forgotten_by_a_write() {
        let cache = ReadCache::new();
        let ticket = cache.ticket("s1");
        cache.keep_quiet(&ticket, "s1");
        assert!(cache.is_quiet("s1"));
        cache.forget("s1", Changed::Row);
        assert!(cache.is_quiet("s1"), "a heartbeat stores no gesture");
        cache.forget("s1", Changed::Gestures);
        assert!(!cache.is_quiet("s1"));
    }
}
