//! Retention of sessions and their events: the sweep every replica runs.
//!
//! - A session (a failed render's error session too) past its expiry by the grace period is
//!   deleted with everything stored under it. Until then it answers as expired (`svc_consume`'s
//!   `status: "expired"`, its undrained gestures still drained); after, as a session that never
//!   existed (-32002), which Document 1's "session expired or deleted" already covers.
//! - A session's deliveries and drained gestures older than what a replay can serve (the newest
//!   `live.replay_buffer` of each, and of those the newest that fit in the replay's 8 MiB) are
//!   deleted. A replay from an older cursor reports the gap exactly as before: the oldest it
//!   carries is newer than the cursor. A gesture nobody drained is never trimmed.
//!
//! Only the sessions written since a little before the last finished sweep are trimmed (every
//! session holding any, on a process's first sweep), so a sweep costs what was written, not what
//! is stored. Deletes are bounded (`batch_rows` rows a statement) and idempotent: replicas racing
//! delete each row once between them.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};
use svc_domain::session::{expires_at, rows_may_go};

use super::agent::REPLAY_MAX_PAYLOAD_BYTES;
use crate::ports::retention::{ReplayWindow, RetentionRepository, SessionAge};
use crate::ports::{Clock, RepositoryError};

/// Sessions read (and deleted) per page of the walk; fewer when `batch_rows` is smaller.
const SESSION_PAGE: u64 = 100;

/// A gesture or a delivery is stamped before its transaction commits: one that commits up to this
/// long after its stamp is still found by the sweep that follows.
const COMMIT_MARGIN: Duration = Duration::minutes(5);

/// What the sweep keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionPolicy {
    /// How long an expired session keeps answering as expired before its rows go.
    pub expired_session_grace: Duration,
    /// Deliveries and gestures a replay serves per session (`live.replay_buffer`).
    pub replay_buffer: u64,
    /// Most rows one statement deletes.
    pub batch_rows: u64,
}

/// What one sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetentionSweep {
    pub sessions_deleted: u64,
    pub deliveries_trimmed: u64,
    pub gestures_trimmed: u64,
}

impl RetentionSweep {
    pub fn deleted_anything(&self) -> bool {
        self.sessions_deleted + self.deliveries_trimmed + self.gestures_trimmed > 0
    }
}

#[derive(Clone)]
pub struct RetentionService {
    store: Arc<dyn RetentionRepository>,
    clock: Arc<dyn Clock>,
    policy: RetentionPolicy,
    /// When the last sweep that finished began; `None` before the first.
    last_swept: Arc<Mutex<Option<DateTime<Utc>>>>,
}

impl RetentionService {
    pub fn new(store: Arc<dyn RetentionRepository>, clock: Arc<dyn Clock>, policy: RetentionPolicy) -> Self {
        Self {
            store,
            clock,
            policy,
            last_swept: Arc::default(),
        }
    }

    /// Deletes the sessions past their grace, then trims the sessions written lately. A sweep that
    /// fails is logged by its caller and the next one starts over from the same point.
    pub async fn sweep(&self) -> Result<RetentionSweep, RepositoryError> {
        let started = self.clock.now();
        let sessions_deleted = self.delete_sessions_past_grace(started).await?;
        let since = self.last_swept().map(|at| at - COMMIT_MARGIN);
        let mut sweep = self.trim_sessions_written_since(since).await?;
        sweep.sessions_deleted = sessions_deleted;
        *self.last_swept.lock().unwrap_or_else(|e| e.into_inner()) = Some(started);
        Ok(sweep)
    }

    fn last_swept(&self) -> Option<DateTime<Utc>> {
        *self.last_swept.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn page(&self) -> u64 {
        SESSION_PAGE.min(self.batch())
    }

    fn batch(&self) -> u64 {
        self.policy.batch_rows.max(1)
    }

    async fn delete_sessions_past_grace(&self, now: DateTime<Utc>) -> Result<u64, RepositoryError> {
        let grace = self.policy.expired_session_grace;
        let Some(cutoff) = now.checked_sub_signed(grace) else {
            return Ok(0);
        };
        // Expiry is last activity + TTL, so a session whose rows may go was last active by the
        // cutoff and has a TTL no longer than the time from the epoch to it.
        let max_ttl = u64::try_from((cutoff - DateTime::UNIX_EPOCH).num_seconds()).unwrap_or(0);
        let mut after: Option<SessionAge> = None;
        let mut deleted = 0;
        loop {
            let page = self
                .store
                .idle_sessions(cutoff, max_ttl, after.as_ref(), self.page())
                .await?;
            let going: Vec<String> = page
                .iter()
                .filter(|s| rows_may_go(expires_at(s.last_activity_at, s.ttl_seconds), grace, now))
                .map(|s| s.session_id.clone())
                .collect();
            if !going.is_empty() {
                deleted += self.store.delete_sessions(&going, self.batch()).await?;
            }
            if (page.len() as u64) < self.page() {
                return Ok(deleted);
            }
            after = page.last().cloned();
            tokio::task::yield_now().await;
        }
    }

    async fn trim_sessions_written_since(
        &self,
        since: Option<DateTime<Utc>>,
    ) -> Result<RetentionSweep, RepositoryError> {
        // The newest delivery and gesture always stay: the next ones are numbered after them.
        let window = ReplayWindow {
            count: self.policy.replay_buffer.max(1),
            bytes: REPLAY_MAX_PAYLOAD_BYTES,
        };
        let mut sweep = RetentionSweep::default();
        let mut after: Option<String> = None;
        loop {
            let written = self
                .store
                .sessions_written_since(since, after.as_deref(), self.page())
                .await?;
            for session_id in &written {
                let trimmed = self.store.trim(session_id, window, self.batch()).await?;
                sweep.deliveries_trimmed += trimmed.deliveries;
                sweep.gestures_trimmed += trimmed.gestures;
                tokio::task::yield_now().await;
            }
            if (written.len() as u64) < self.page() {
                return Ok(sweep);
            }
            after = written.last().cloned();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use chrono::TimeDelta;

    use super::*;
    use crate::ports::retention::Trimmed;
    use crate::testing::ManualClock;

    /// Sessions as rows, and every call the sweep made.
    #[derive(Default)]
    struct Store {
        sessions: Mutex<Vec<SessionAge>>,
        written_since: Mutex<Vec<Option<DateTime<Utc>>>>,
        trimmed: Mutex<Vec<(String, ReplayWindow)>>,
        fail_trims: std::sync::atomic::AtomicBool,
    }

    #[async_trait::async_trait]
    impl RetentionRepository for Store {
        async fn idle_sessions(
            &self,
            before: DateTime<Utc>,
            max_ttl_seconds: u64,
            after: Option<&SessionAge>,
            limit: u64,
        ) -> Result<Vec<SessionAge>, RepositoryError> {
            let mut rows: Vec<SessionAge> = self
                .sessions
                .lock()
                .unwrap()
                .iter()
                .filter(|s| s.created_at <= before && s.last_activity_at <= before && s.ttl_seconds <= max_ttl_seconds)
                .filter(|s| after.is_none_or(|a| (&s.created_at, &s.session_id) > (&a.created_at, &a.session_id)))
                .cloned()
                .collect();
            rows.sort_by(|a, b| (a.created_at, &a.session_id).cmp(&(b.created_at, &b.session_id)));
            rows.truncate(limit as usize);
            Ok(rows)
        }

        async fn delete_sessions(&self, session_ids: &[String], _batch: u64) -> Result<u64, RepositoryError> {
            let mut sessions = self.sessions.lock().unwrap();
            let before = sessions.len();
            sessions.retain(|s| !session_ids.contains(&s.session_id));
            Ok((before - sessions.len()) as u64)
        }

        async fn sessions_written_since(
            &self,
            since: Option<DateTime<Utc>>,
            after: Option<&str>,
            _limit: u64,
        ) -> Result<Vec<String>, RepositoryError> {
            self.written_since.lock().unwrap().push(since);
            Ok(if after.is_none() { vec!["s1".into()] } else { vec![] })
        }

        async fn trim(&self, session_id: &str, window: ReplayWindow, _batch: u64) -> Result<Trimmed, RepositoryError> {
            if self.fail_trims.load(std::sync::atomic::Ordering::SeqCst) {
                return Err(RepositoryError::Unavailable(anyhow::anyhow!("the disk is gone")));
            }
            self.trimmed.lock().unwrap().push((session_id.to_owned(), window));
            Ok(Trimmed {
                deliveries: 2,
                gestures: 1,
            })
        }
    }

    fn world(policy: RetentionPolicy) -> (Arc<Store>, Arc<ManualClock>, RetentionService) {
        let store = Arc::new(Store::default());
        let clock = Arc::new(ManualClock::default());
        let service = RetentionService::new(store.clone(), clock.clone(), policy);
        (store, clock, service)
    }

    fn policy() -> RetentionPolicy {
        RetentionPolicy {
            expired_session_grace: TimeDelta::days(7),
            replay_buffer: 1000,
            batch_rows: 500,
        }
    }

    fn session(id: &str, last_activity_at: DateTime<Utc>, ttl_seconds: u64) -> SessionAge {
        SessionAge {
            session_id: id.into(),
            created_at: last_activity_at - TimeDelta::hours(1),
            last_activity_at,
            ttl_seconds,
        }
    }

    #[tokio::test]
    async fn a_session_goes_once_expired_for_the_grace_and_not_before() {
        let (store, clock, service) = world(policy());
        let now = clock.now();
        let day = 86_400;
        *store.sessions.lock().unwrap() = vec![
            session("expired-8-days-ago", now - TimeDelta::days(9), day),
            session("expired-6-days-ago", now - TimeDelta::days(7), day),
            session("active", now - TimeDelta::hours(1), day),
            session("idle-long-but-alive", now - TimeDelta::days(20), 30 * day),
            session("never-expires", now - TimeDelta::days(400), u64::MAX),
        ];
        let sweep = service.sweep().await.unwrap();
        assert_eq!(sweep.sessions_deleted, 1);
        let kept: Vec<String> = store
            .sessions
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.session_id.clone())
            .collect();
        assert_eq!(
            kept,
            ["expired-6-days-ago", "active", "idle-long-but-alive", "never-expires"]
        );

        clock.advance(TimeDelta::days(2));
        assert_eq!(
            service.sweep().await.unwrap().sessions_deleted,
            1,
            "its grace has passed now"
        );
    }

    #[tokio::test]
    async fn the_walk_pages_through_every_idle_session() {
        let (store, clock, service) = world(RetentionPolicy {
            batch_rows: 2,
            ..policy()
        });
        let old = clock.now() - TimeDelta::days(30);
        *store.sessions.lock().unwrap() = (0..7).map(|n| session(&format!("s{n}"), old, 60)).collect();
        assert_eq!(service.sweep().await.unwrap().sessions_deleted, 7);
        assert!(store.sessions.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn trimming_follows_the_writes_since_the_last_finished_sweep() {
        let (store, clock, service) = world(RetentionPolicy {
            replay_buffer: 3,
            ..policy()
        });
        let first = clock.now();
        let sweep = service.sweep().await.unwrap();
        assert_eq!((sweep.deliveries_trimmed, sweep.gestures_trimmed), (2, 1));
        assert_eq!(
            store.trimmed.lock().unwrap()[0].1,
            ReplayWindow {
                count: 3,
                bytes: REPLAY_MAX_PAYLOAD_BYTES
            },
            "what a replay serves"
        );
        clock.advance(TimeDelta::minutes(10));
        store.fail_trims.store(true, std::sync::atomic::Ordering::SeqCst);
        assert!(service.sweep().await.is_err());
        store.fail_trims.store(false, std::sync::atomic::Ordering::SeqCst);
        clock.advance(TimeDelta::minutes(10));
        service.sweep().await.unwrap();
        let margin = first - COMMIT_MARGIN;
        assert_eq!(
            *store.written_since.lock().unwrap(),
            [None, Some(margin), Some(margin)],
            "every session on the first sweep; after a failed one, from where the last finished one began"
        );
    }

    #[tokio::test]
    async fn a_replay_buffer_of_nothing_still_keeps_the_newest() {
        let (store, _, service) = world(RetentionPolicy {
            replay_buffer: 0,
            ..policy()
        });
        service.sweep().await.unwrap();
        assert_eq!(store.trimmed.lock().unwrap()[0].1.count, 1);
    }
}
