//! Retention of sessions and their events, handshakes and invite links: the sweep every replica
//! runs.
//!
//! - A session (a failed render's error session too) past its expiry by the grace period is
//!   deleted with everything stored under it. Until then it answers as expired (`svc_consume`'s
//!   `status: "expired"`, its undrained gestures still drained); after, as a session that never
//!   existed (-32002), which Document 1's "session expired or deleted" already covers. The store
//!   walks its index of expiries, so a sweep reads the sessions that expired, not every old one.
//! - A session's deliveries and drained gestures older than what a replay can serve (the newest
//!   `live.replay_buffer` of each, and of those the newest that fit in the replay's 8 MiB) are
//!   deleted. A replay from an older cursor reports the gap exactly as before: the oldest it
//!   carries is newer than the cursor. A gesture nobody drained is never trimmed.
//! - A handshake past its 10-minute lifetime by the grace period is deleted
//!   (`svc_domain::handshake::rows_may_go_if_created_by`): consumed or not, no render can use it.
//! - An org invite's mailed link whose invite was accepted, revoked or expired the grace period
//!   ago is deleted: until then following it says which, after it the link is unknown.
//!
//! Only the sessions written since a little before the last finished sweep are trimmed (every
//! session holding any, on a process's first sweep), so a sweep costs what was written, not what
//! is stored. Deletes are bounded (`batch_rows` rows a statement) and idempotent: replicas racing
//! delete each row once between them.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};
use svc_domain::handshake::rows_may_go_if_created_by;
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
    /// How long an expired session, handshake or invite link keeps answering as expired (or
    /// used) before its rows go.
    pub expired_grace: Duration,
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
    pub handshakes_deleted: u64,
    pub invite_links_deleted: u64,
}

impl RetentionSweep {
    pub fn deleted_anything(&self) -> bool {
        self.sessions_deleted
            + self.deliveries_trimmed
            + self.gestures_trimmed
            + self.handshakes_deleted
            + self.invite_links_deleted
            > 0
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

    /// Deletes the sessions past their grace, trims the sessions written lately, then deletes
    /// the handshakes and invite links past their grace. A sweep that fails is logged by its
    /// caller and the next one starts over from the same point.
    pub async fn sweep(&self) -> Result<RetentionSweep, RepositoryError> {
        let started = self.clock.now();
        let sessions_deleted = self.delete_sessions_past_grace(started).await?;
        let since = self.last_swept().map(|at| at - COMMIT_MARGIN);
        let mut sweep = self.trim_sessions_written_since(since).await?;
        sweep.sessions_deleted = sessions_deleted;
        sweep.handshakes_deleted = self.delete_handshakes_past_grace(started).await?;
        sweep.invite_links_deleted = self.delete_invite_links_past_grace(started).await?;
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
        let grace = self.policy.expired_grace;
        let Some(cutoff) = now.checked_sub_signed(grace) else {
            return Ok(0);
        };
        let mut after: Option<SessionAge> = None;
        let mut deleted = 0;
        loop {
            let page = self.store.expired_sessions(cutoff, after.as_ref(), self.page()).await?;
            // The index finds sessions up to ten seconds early (and rows it could not index): the
            // expiry rule decides.
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

    async fn delete_handshakes_past_grace(&self, now: DateTime<Utc>) -> Result<u64, RepositoryError> {
        let Some(created_by) = rows_may_go_if_created_by(self.policy.expired_grace, now) else {
            return Ok(0);
        };
        let mut deleted = 0;
        loop {
            let batch = self
                .store
                .delete_handshakes_created_by(created_by, self.batch())
                .await?;
            deleted += batch;
            if batch < self.batch() {
                return Ok(deleted);
            }
            tokio::task::yield_now().await;
        }
    }

    async fn delete_invite_links_past_grace(&self, now: DateTime<Utc>) -> Result<u64, RepositoryError> {
        let Some(ended_by) = now.checked_sub_signed(self.policy.expired_grace) else {
            return Ok(0);
        };
        let mut deleted = 0;
        loop {
            let batch = self.store.delete_invite_links_ended_by(ended_by, self.batch()).await?;
            deleted += batch;
            if batch < self.batch() {
                return Ok(deleted);
            }
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
        /// When each handshake was created.
        handshakes: Mutex<Vec<DateTime<Utc>>>,
        /// When each link's invite ended.
        invite_links: Mutex<Vec<DateTime<Utc>>>,
    }

    #[async_trait::async_trait]
    impl RetentionRepository for Store {
        async fn expired_sessions(
            &self,
            expired_by: DateTime<Utc>,
            after: Option<&SessionAge>,
            limit: u64,
        ) -> Result<Vec<SessionAge>, RepositoryError> {
            let key = |s: &SessionAge| (s.indexed_expiry, s.session_id.clone());
            let mut rows: Vec<SessionAge> = self
                .sessions
                .lock()
                .unwrap()
                .iter()
                .filter(|s| s.indexed_expiry <= expired_by)
                .filter(|s| after.is_none_or(|a| key(s) > key(a)))
                .cloned()
                .collect();
            rows.sort_by_key(key);
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

        async fn delete_handshakes_created_by(
            &self,
            created_by: DateTime<Utc>,
            limit: u64,
        ) -> Result<u64, RepositoryError> {
            Ok(take(
                &mut self.handshakes.lock().unwrap(),
                |at| *at <= created_by,
                limit,
            ))
        }

        async fn delete_invite_links_ended_by(
            &self,
            ended_by: DateTime<Utc>,
            limit: u64,
        ) -> Result<u64, RepositoryError> {
            Ok(take(
                &mut self.invite_links.lock().unwrap(),
                |at| *at <= ended_by,
                limit,
            ))
        }
    }

    /// Removes up to `limit` of `rows` that `going` picks; how many it removed.
    fn take(rows: &mut Vec<DateTime<Utc>>, going: impl Fn(&DateTime<Utc>) -> bool, limit: u64) -> u64 {
        let mut taken = 0;
        rows.retain(|at| {
            let goes = taken < limit && going(at);
            taken += u64::from(goes);
            !goes
        });
        taken
    }

    fn world(policy: RetentionPolicy) -> (Arc<Store>, Arc<ManualClock>, RetentionService) {
        let store = Arc::new(Store::default());
        let clock = Arc::new(ManualClock::default());
        let service = RetentionService::new(store.clone(), clock.clone(), policy);
        (store, clock, service)
    }

    fn policy() -> RetentionPolicy {
        RetentionPolicy {
            expired_grace: TimeDelta::days(7),
            replay_buffer: 1000,
            batch_rows: 500,
        }
    }

    /// A session indexed ten seconds after its expiry, as late as the store indexes them.
    fn session(id: &str, last_activity_at: DateTime<Utc>, ttl_seconds: u64) -> SessionAge {
        SessionAge {
            session_id: id.into(),
            indexed_expiry: expires_at(last_activity_at, ttl_seconds)
                .checked_add_signed(TimeDelta::seconds(10))
                .unwrap_or(DateTime::<Utc>::MAX_UTC),
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
    async fn the_expiry_rule_decides_whatever_the_index_says() {
        let (store, clock, service) = world(RetentionPolicy {
            batch_rows: 2,
            ..policy()
        });
        let now = clock.now();
        let never_indexed = |id: &str, last_activity_at| SessionAge {
            indexed_expiry: DateTime::UNIX_EPOCH,
            ..session(id, last_activity_at, 86_400)
        };
        *store.sessions.lock().unwrap() = vec![
            // Rows an older server wrote: found first, kept while alive.
            never_indexed("old-server-active", now - TimeDelta::hours(1)),
            never_indexed("old-server-within-grace", now - TimeDelta::days(3)),
            never_indexed("old-server-past-grace", now - TimeDelta::days(9)),
            session("past-grace", now - TimeDelta::days(8) - TimeDelta::hours(1), 86_400),
            // Indexed up to ten seconds late: found up to ten seconds after its grace ended.
            session(
                "just-past-grace",
                now - TimeDelta::days(8) - TimeDelta::seconds(1),
                86_400,
            ),
        ];
        assert_eq!(service.sweep().await.unwrap().sessions_deleted, 2);
        let kept: Vec<String> = store
            .sessions
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.session_id.clone())
            .collect();
        assert_eq!(
            kept,
            ["old-server-active", "old-server-within-grace", "just-past-grace"]
        );
        clock.advance(TimeDelta::minutes(1));
        assert_eq!(service.sweep().await.unwrap().sessions_deleted, 1);
    }

    #[tokio::test]
    async fn handshakes_go_once_past_their_lifetime_by_the_grace() {
        let (store, clock, service) = world(RetentionPolicy {
            batch_rows: 2,
            ..policy()
        });
        let now = clock.now();
        let unusable_for_the_grace = now - TimeDelta::days(7) - TimeDelta::minutes(10);
        let mut created: Vec<DateTime<Utc>> = (0..5).map(|n| unusable_for_the_grace - TimeDelta::hours(n)).collect();
        created.push(unusable_for_the_grace + TimeDelta::seconds(1));
        created.push(now - TimeDelta::minutes(1));
        *store.handshakes.lock().unwrap() = created.clone();
        assert_eq!(
            service.sweep().await.unwrap().handshakes_deleted,
            5,
            "in batches of two"
        );
        assert_eq!(*store.handshakes.lock().unwrap(), created[5..]);
    }

    #[tokio::test]
    async fn invite_links_go_once_their_invite_ended_the_grace_ago() {
        let (store, clock, service) = world(RetentionPolicy {
            batch_rows: 2,
            ..policy()
        });
        let grace_ago = clock.now() - TimeDelta::days(7);
        let ended = vec![
            grace_ago,
            grace_ago - TimeDelta::days(1),
            grace_ago + TimeDelta::seconds(1),
        ];
        *store.invite_links.lock().unwrap() = ended.clone();
        assert_eq!(service.sweep().await.unwrap().invite_links_deleted, 2);
        assert_eq!(*store.invite_links.lock().unwrap(), ended[2..]);
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
