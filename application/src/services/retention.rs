//! Retention of sessions and their events, handshakes, org invites and their links: the sweep
//! every replica runs.
//!
//! - A session (a failed render's error session too) past its expiry by the grace period is
//!   deleted with everything stored under it. Until then it answers as expired (`svc_consume`'s
//!   `status: "expired"`, its undrained gestures still drained); after, as a session that never
//!   existed (-32002), which Document 1's "session expired or deleted" already covers. The store
//!   walks its index of expiries, so a sweep reads the sessions that expired, not every old one.
//! - A session the walk finds too early (indexed before its expiry: stored before the index
//!   existed, or written by an older server beside a newer one) is kept by the expiry rule and
//!   indexed anew by it, a page a statement: the walk reads it once, not on every sweep, and
//!   however many there are the walk goes past them to the sessions that did expire.
//! - A session's deliveries and drained gestures older than what a replay can serve (the newest
//!   `live.replay_buffer` of each, and of those the newest that fit in the replay's 8 MiB) are
//!   deleted. A replay from an older cursor reports the gap exactly as before: the oldest it
//!   carries is newer than the cursor. A gesture nobody drained is never trimmed.
//! - A handshake past its 10-minute lifetime by the grace period is deleted
//!   (`svc_domain::handshake::rows_may_go_if_created_by`): consumed or not, no render can use it.
//! - An org invite accepted, revoked or expired the grace period ago is deleted with its mailed
//!   links: until then the org's invite list shows it and following a link says which, after it
//!   the invite is unknown (as a missing one) and so is the link.
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

/// Sessions read (and deleted or indexed anew) per page of the walk; fewer when `batch_rows` is
/// smaller.
const SESSION_PAGE: u64 = 100;

/// A gesture or a delivery is stamped before its transaction commits: one that commits up to this
/// long after its stamp is still found by the sweep that follows.
const COMMIT_MARGIN: Duration = Duration::minutes(5);

/// What the sweep keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionPolicy {
    /// How long an expired session, handshake, org invite or invite link keeps answering as
    /// expired (or used, accepted, revoked) before its rows go.
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
    /// Sessions found indexed before their expiry (an older server's rows), indexed anew.
    pub sessions_reindexed: u64,
    pub deliveries_trimmed: u64,
    pub gestures_trimmed: u64,
    pub handshakes_deleted: u64,
    pub invite_links_deleted: u64,
    pub invites_deleted: u64,
}

impl RetentionSweep {
    pub fn deleted_anything(&self) -> bool {
        self.sessions_deleted
            + self.deliveries_trimmed
            + self.gestures_trimmed
            + self.handshakes_deleted
            + self.invite_links_deleted
            + self.invites_deleted
            > 0
    }
}

/// Rows deleted once they have been unusable for the grace.
#[derive(Debug, Clone, Copy)]
enum Unusable {
    Handshakes,
    InviteLinks,
    Invites,
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
    /// the handshakes, invite links and invites past their grace. A sweep that fails is logged
    /// by its caller and the next one starts over from the same point (what it deleted or
    /// indexed anew stays done).
    pub async fn sweep(&self) -> Result<RetentionSweep, RepositoryError> {
        let started = self.clock.now();
        let (sessions_deleted, sessions_reindexed) = self.walk_expired_sessions(started).await?;
        let since = self.last_swept().map(|at| at - COMMIT_MARGIN);
        let mut sweep = self.trim_sessions_written_since(since).await?;
        sweep.sessions_deleted = sessions_deleted;
        sweep.sessions_reindexed = sessions_reindexed;
        sweep.handshakes_deleted = self.delete_unusable(Unusable::Handshakes, started).await?;
        // The links first: each says what became of its invite until both go.
        sweep.invite_links_deleted = self.delete_unusable(Unusable::InviteLinks, started).await?;
        sweep.invites_deleted = self.delete_unusable(Unusable::Invites, started).await?;
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

    /// Deletes the sessions past their grace and indexes anew those found too early; how many
    /// of each.
    async fn walk_expired_sessions(&self, now: DateTime<Utc>) -> Result<(u64, u64), RepositoryError> {
        let grace = self.policy.expired_grace;
        let Some(cutoff) = now.checked_sub_signed(grace) else {
            return Ok((0, 0));
        };
        let mut after: Option<SessionAge> = None;
        let (mut deleted, mut reindexed) = (0, 0);
        loop {
            let page = self.store.expired_sessions(cutoff, after.as_ref(), self.page()).await?;
            // The index finds sessions up to ten seconds early, and an older server's rows (indexed
            // before their expiry) any time: the expiry rule decides.
            let (going, kept): (Vec<&SessionAge>, Vec<&SessionAge>) = page
                .iter()
                .partition(|s| rows_may_go(expires_at(s.last_activity_at, s.ttl_seconds), grace, now));
            let going: Vec<String> = going.iter().map(|s| s.session_id.clone()).collect();
            if !going.is_empty() {
                deleted += self.store.delete_sessions(&going, self.batch()).await?;
            }
            let early: Vec<SessionAge> = kept
                .into_iter()
                .filter(|s| s.indexed_expiry < expires_at(s.last_activity_at, s.ttl_seconds))
                .cloned()
                .collect();
            if !early.is_empty() {
                reindexed += self.store.reindex_sessions(&early).await?;
            }
            if (page.len() as u64) < self.page() {
                return Ok((deleted, reindexed));
            }
            after = page.last().cloned();
            tokio::task::yield_now().await;
        }
    }

    /// Deletes the `rows` that have been unusable for the grace, `batch_rows` a statement.
    async fn delete_unusable(&self, rows: Unusable, now: DateTime<Utc>) -> Result<u64, RepositoryError> {
        let grace = self.policy.expired_grace;
        let cutoff = match rows {
            Unusable::Handshakes => rows_may_go_if_created_by(grace, now),
            Unusable::InviteLinks | Unusable::Invites => now.checked_sub_signed(grace),
        };
        let Some(cutoff) = cutoff else {
            return Ok(0);
        };
        let mut deleted = 0;
        loop {
            let batch = match rows {
                Unusable::Handshakes => self.store.delete_handshakes_created_by(cutoff, self.batch()).await?,
                Unusable::InviteLinks => self.store.delete_invite_links_ended_by(cutoff, self.batch()).await?,
                Unusable::Invites => self.store.delete_invites_ended_by(cutoff, self.batch()).await?,
            };
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
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    use chrono::TimeDelta;

    use super::*;
    use crate::ports::retention::Trimmed;
    use crate::testing::ManualClock;

    /// Sessions as rows, and every call the sweep made.
    #[derive(Default)]
    struct Store {
        sessions: Mutex<Vec<SessionAge>>,
        /// How many sessions the walk has read.
        sessions_read: AtomicU64,
        written_since: Mutex<Vec<Option<DateTime<Utc>>>>,
        trimmed: Mutex<Vec<(String, ReplayWindow)>>,
        fail_trims: AtomicBool,
        /// When each handshake was created.
        handshakes: Mutex<Vec<DateTime<Utc>>>,
        /// When each link's invite ended.
        invite_links: Mutex<Vec<DateTime<Utc>>>,
        /// When each invite ended.
        invites: Mutex<Vec<DateTime<Utc>>>,
    }

    impl Store {
        fn unusable(&self, rows: Unusable) -> &Mutex<Vec<DateTime<Utc>>> {
            match rows {
                Unusable::Handshakes => &self.handshakes,
                Unusable::InviteLinks => &self.invite_links,
                Unusable::Invites => &self.invites,
            }
        }

        fn session_ids(&self) -> Vec<String> {
            let sessions = self.sessions.lock().unwrap();
            sessions.iter().map(|s| s.session_id.clone()).collect()
        }
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
            self.sessions_read.fetch_add(rows.len() as u64, Ordering::SeqCst);
            Ok(rows)
        }

        async fn reindex_sessions(&self, sessions: &[SessionAge]) -> Result<u64, RepositoryError> {
            let mut reindexed = 0;
            for stored in self.sessions.lock().unwrap().iter_mut() {
                if let Some(read) = sessions.iter().find(|s| s.session_id == stored.session_id) {
                    let indexed = session(&read.session_id, read.last_activity_at, read.ttl_seconds).indexed_expiry;
                    if stored.indexed_expiry < indexed {
                        stored.indexed_expiry = indexed;
                        reindexed += 1;
                    }
                }
            }
            Ok(reindexed)
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
            if self.fail_trims.load(Ordering::SeqCst) {
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
            Ok(take(&self.handshakes, created_by, limit))
        }

        async fn delete_invite_links_ended_by(
            &self,
            ended_by: DateTime<Utc>,
            limit: u64,
        ) -> Result<u64, RepositoryError> {
            Ok(take(&self.invite_links, ended_by, limit))
        }

        async fn delete_invites_ended_by(&self, ended_by: DateTime<Utc>, limit: u64) -> Result<u64, RepositoryError> {
            Ok(take(&self.invites, ended_by, limit))
        }
    }

    /// Removes up to `limit` of `rows` dated at or before `by`; how many it removed.
    fn take(rows: &Mutex<Vec<DateTime<Utc>>>, by: DateTime<Utc>, limit: u64) -> u64 {
        let mut taken = 0;
        rows.lock().unwrap().retain(|at| {
            let goes = taken < limit && *at <= by;
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

    /// Two rows a statement, so every loop takes several.
    fn small_batches() -> RetentionPolicy {
        RetentionPolicy {
            batch_rows: 2,
            ..policy()
        }
    }

    const DAY: u64 = 86_400;

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

    /// A session living a day, as a server before the index stored it: at the column's default.
    fn never_indexed(id: &str, last_activity_at: DateTime<Utc>) -> SessionAge {
        SessionAge {
            indexed_expiry: DateTime::UNIX_EPOCH,
            ..session(id, last_activity_at, DAY)
        }
    }

    #[tokio::test]
    async fn the_expiry_rule_decides_which_sessions_go_whatever_the_index_says() {
        let (store, clock, service) = world(small_batches());
        let now = clock.now();
        let (hour, days) = (TimeDelta::hours(1), TimeDelta::days);
        // (session, whether the first sweep deletes it, how much later a sweep does if not)
        let sessions = [
            (session("expired-8-days-ago", now - days(9), DAY), true, None),
            (session("expired-6-days-ago", now - days(7), DAY), false, Some(days(2))),
            (session("active", now - hour, DAY), false, None),
            (session("idle-long-but-alive", now - days(20), 30 * DAY), false, None),
            (session("never-expires", now - days(400), u64::MAX), false, None),
            // Rows an older server wrote: found first, kept while alive.
            (never_indexed("old-server-active", now - hour), false, None),
            (
                never_indexed("old-server-within-grace", now - days(3)),
                false,
                Some(days(5) + TimeDelta::minutes(1)),
            ),
            (never_indexed("old-server-past-grace", now - days(9)), true, None),
            (session("past-grace", now - days(8) - hour, DAY), true, None),
            // Indexed up to ten seconds late: found up to ten seconds after its grace ended.
            (
                session("just-past-grace", now - days(8) - TimeDelta::seconds(1), DAY),
                false,
                Some(TimeDelta::minutes(1)),
            ),
        ];
        *store.sessions.lock().unwrap() = sessions.iter().map(|(s, _, _)| s.clone()).collect();
        let going = sessions.iter().filter(|(_, goes, _)| *goes).count() as u64;
        assert_eq!(service.sweep().await.unwrap().sessions_deleted, going);
        let kept: Vec<&str> = sessions
            .iter()
            .filter(|(_, goes, _)| !goes)
            .map(|(s, _, _)| s.session_id.as_str())
            .collect();
        assert_eq!(store.session_ids(), kept);

        let mut later: Vec<_> = sessions
            .iter()
            .filter_map(|(s, _, after)| Some((after.as_ref()?, s)))
            .collect();
        later.sort_by_key(|(after, _)| **after);
        for (after, s) in later {
            clock.set(now + *after);
            assert_eq!(
                service.sweep().await.unwrap().sessions_deleted,
                1,
                "{} goes {after} later",
                s.session_id
            );
            assert!(!store.session_ids().contains(&s.session_id));
        }
        assert_eq!(
            store.session_ids(),
            ["active", "idle-long-but-alive", "never-expires", "old-server-active"]
        );
    }

    #[tokio::test]
    async fn sessions_an_older_server_wrote_are_read_once_and_kept_while_alive() {
        let (store, clock, service) = world(small_batches());
        let now = clock.now();
        // Many live sessions at the column's default, and one past its grace indexed behind them.
        let mut sessions: Vec<SessionAge> = (0..1000)
            .map(|n| never_indexed(&format!("old-server-{n:04}"), now - TimeDelta::minutes(n)))
            .collect();
        sessions.push(session("past-grace", now - TimeDelta::days(9), DAY));
        *store.sessions.lock().unwrap() = sessions;

        let first = service.sweep().await.unwrap();
        assert_eq!((first.sessions_deleted, first.sessions_reindexed), (1, 1000));
        assert_eq!(store.sessions.lock().unwrap().len(), 1000, "every live one is kept");
        assert!(
            store.sessions.lock().unwrap().iter().all(|s| s.indexed_expiry > now),
            "each indexed by its expiry"
        );

        // Past the grace of another session, the next sweeps read that one alone.
        store.sessions.lock().unwrap().push(session(
            "also-past-grace",
            now - TimeDelta::days(8) - TimeDelta::hours(1),
            DAY,
        ));
        store.sessions_read.store(0, Ordering::SeqCst);
        clock.advance(TimeDelta::minutes(10));
        let second = service.sweep().await.unwrap();
        assert_eq!((second.sessions_deleted, second.sessions_reindexed), (1, 0));
        assert_eq!(store.sessions_read.load(Ordering::SeqCst), 1, "not the live ones again");
        assert_eq!(store.sessions.lock().unwrap().len(), 1000);
    }

    #[tokio::test]
    async fn unusable_rows_go_once_unusable_for_the_grace_in_batches() {
        for rows in [Unusable::Handshakes, Unusable::InviteLinks, Unusable::Invites] {
            let (store, clock, service) = world(small_batches());
            let now = clock.now();
            // A handshake is unusable 10 minutes after its creation; a link or invite once ended.
            let unusable_for_the_grace = match rows {
                Unusable::Handshakes => now - TimeDelta::days(7) - TimeDelta::minutes(10),
                Unusable::InviteLinks | Unusable::Invites => now - TimeDelta::days(7),
            };
            let mut dated: Vec<DateTime<Utc>> = (0..5).map(|n| unusable_for_the_grace - TimeDelta::hours(n)).collect();
            dated.push(unusable_for_the_grace + TimeDelta::seconds(1));
            dated.push(now - TimeDelta::minutes(1));
            *store.unusable(rows).lock().unwrap() = dated.clone();

            let sweep = service.sweep().await.unwrap();
            let deleted = match rows {
                Unusable::Handshakes => sweep.handshakes_deleted,
                Unusable::InviteLinks => sweep.invite_links_deleted,
                Unusable::Invites => sweep.invites_deleted,
            };
            assert_eq!(deleted, 5, "{rows:?}: in batches of two");
            assert_eq!(*store.unusable(rows).lock().unwrap(), dated[5..], "{rows:?}");
            assert!(sweep.deleted_anything(), "{rows:?}");
        }
    }

    #[tokio::test]
    async fn the_walk_pages_through_every_idle_session() {
        let (store, clock, service) = world(small_batches());
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
        store.fail_trims.store(true, Ordering::SeqCst);
        assert!(service.sweep().await.is_err());
        store.fail_trims.store(false, Ordering::SeqCst);
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
