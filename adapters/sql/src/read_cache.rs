//! What the read paths (`svc_consume`, `svc_get_session`, `resources/read`) ask of SQLite again
//! and again, kept in memory: session rows, "no gesture waits to be drained", and a session's
//! last delivery `seq`.
//!
//! Only for a database this process alone writes (SQLite, the one group-commit writer): every
//! write to these rows goes through the session and event repositories here, which forget the
//! session after their commit. A server backend shared by replicas has no such cache.
//!
//! A reader may fetch a row just before a write commits and store it just after the write forgot
//! it. So every session hashes to a generation that each forget bumps; a reader notes it before
//! the query, stores its answer, then looks again and takes the answer back out if it moved. A
//! stale entry can therefore only live while the write that makes it stale has not returned.

use std::hash::BuildHasher;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use moka::sync::Cache;
use svc_application::ports::agent::SessionRecord;

/// Generations are per stripe of sessions, not per session: a bounded array, no map to grow.
const STRIPES: usize = 256;
/// Session rows kept, by the size of their stored JSON (props, contract, context).
const SESSION_BYTES: u64 = 32 * 1024 * 1024;
/// Sessions, quiet flags and delivery cursors kept.
const SMALL_ENTRIES: u64 = 100_000;
/// An idle entry leaves; the bound on memory is the capacities above.
const IDLE: Duration = Duration::from_secs(300);
/// What a session row weighs besides its JSON text.
const ROW_OVERHEAD: usize = 512;

/// The read cache of one SQLite database; clones share it.
#[derive(Clone)]
pub struct ReadCache {
    inner: Arc<Inner>,
}

struct Inner {
    generations: [AtomicU64; STRIPES],
    hasher: std::collections::hash_map::RandomState,
    sessions: Cache<String, Arc<CachedSession>>,
    /// Sessions known to hold no undrained gesture.
    quiet: Cache<String, ()>,
    /// A session's highest delivery `seq` (0: none).
    last_seq: Cache<String, i64>,
}

struct CachedSession {
    record: SessionRecord,
    /// The row's stored text in bytes, plus [`ROW_OVERHEAD`].
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
    pub fn new() -> Self {
        let sessions = Cache::builder()
            .max_capacity(SESSION_BYTES)
            .weigher(|_: &String, cached: &Arc<CachedSession>| cached.weight)
            .time_to_idle(IDLE)
            .build();
        Self {
            inner: Arc::new(Inner {
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

    /// Notes the session's generation; take it before reading the database.
    pub(crate) fn ticket(&self, session_id: &str) -> Ticket {
        let stripe = self.stripe(session_id);
        Ticket {
            stripe,
            generation: self.inner.generations[stripe].load(Ordering::SeqCst),
        }
    }

    /// Keeps `insert` unless a write forgot the session since `ticket` (then nothing is kept).
    fn keep(&self, ticket: &Ticket, insert: impl FnOnce(), remove: impl FnOnce()) {
        insert();
        if self.inner.generations[ticket.stripe].load(Ordering::SeqCst) != ticket.generation {
            remove();
        }
    }

    /// Forgets what a committed write changed of a session. Any forget also turns away the
    /// answers of reads of the same stripe still in flight, whatever they read.
    pub(crate) fn forget(&self, session_id: &str, changed: Changed) {
        self.inner.generations[self.stripe(session_id)].fetch_add(1, Ordering::SeqCst);
        match changed {
            Changed::Row => self.inner.sessions.invalidate(session_id),
            Changed::Gestures => {
                // A gesture also moves the row's `event_sequence`.
                self.inner.sessions.invalidate(session_id);
                self.inner.quiet.invalidate(session_id);
            }
            Changed::Deliveries => self.inner.last_seq.invalidate(session_id),
        }
    }

    /// What must follow a committed write (`cache` being the repository's, if any): forgetting
    /// what it `changed`. Handed to the writer, it runs there, so a request cancelled while its
    /// write commits still forgets.
    pub(crate) fn forgetting(
        cache: Option<&ReadCache>,
        session_id: &str,
        changed: Changed,
    ) -> impl FnOnce() + Send + 'static {
        let (cache, id) = (cache.cloned(), session_id.to_owned());
        move || {
            if let Some(cache) = cache {
                cache.forget(&id, changed);
            }
        }
    }

    pub(crate) fn session(&self, session_id: &str) -> Option<SessionRecord> {
        self.inner.sessions.get(session_id).map(|c| c.record.clone())
    }

    /// `stored_bytes`: the length of the row's text columns, what it weighs against the bound.
    pub(crate) fn keep_session(&self, ticket: &Ticket, record: &SessionRecord, stored_bytes: usize) {
        let id = record.session_id.clone();
        let cache = &self.inner.sessions;
        let cached = Arc::new(CachedSession {
            record: record.clone(),
            weight: u32::try_from(stored_bytes + ROW_OVERHEAD).unwrap_or(u32::MAX),
        });
        self.keep(ticket, || cache.insert(id.clone(), cached), || cache.invalidate(&id));
    }

    /// `true` when the session is known to hold no undrained gesture.
    pub(crate) fn is_quiet(&self, session_id: &str) -> bool {
        self.inner.quiet.contains_key(session_id)
    }

    pub(crate) fn keep_quiet(&self, ticket: &Ticket, session_id: &str) {
        let cache = &self.inner.quiet;
        self.keep(
            ticket,
            || cache.insert(session_id.to_owned(), ()),
            || cache.invalidate(session_id),
        );
    }

    pub(crate) fn last_seq(&self, session_id: &str) -> Option<i64> {
        self.inner.last_seq.get(session_id)
    }

    pub(crate) fn keep_last_seq(&self, ticket: &Ticket, session_id: &str, seq: i64) {
        let cache = &self.inner.last_seq;
        self.keep(
            ticket,
            || cache.insert(session_id.to_owned(), seq),
            || cache.invalidate(session_id),
        );
    }
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
