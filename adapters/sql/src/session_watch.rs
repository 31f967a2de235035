//! A PostgreSQL replica's watch over the `sessions` rows it keeps in memory.
//!
//! PostgreSQL announces every change of a session row on [`CHANNEL`] from the writing
//! transaction (a trigger, migration `m20261216_000001_session_row_announcements`), whichever
//! replica wrote it. This task listens on one connection of its own and, whenever a read wants it
//! (`read_fence.rs`), sends an empty statement there: its answer comes after every announcement
//! queued before it, which are forgotten from the read cache before the fence is passed. With no
//! read waiting it does the same every [`IDLE`], so announcements never pile up unread and a
//! dead connection is noticed.
//!
//! A failed or stalled fence closes the fence (reads go to the database), forgets everything,
//! and listens again on a new connection; once that one listens the cache is forgotten again
//! (announcements sent in between were never heard), and the fence opens when the first fence
//! on it passed (rows read from the database meanwhile may predate a write announced since).
//!
//! The watch needs its statements and its LISTEN on one PostgreSQL backend: connect directly or
//! through a pooler in session mode (a transaction-mode pooler breaks the claim too, README).
//! A fence that stalls on a half-open connection is given up after [`FENCE_TIMEOUT`]; sqlx then
//! sends that connection's `UNLISTEN` from a task of its own, which ends when the kernel gives
//! the socket up.

use std::str::FromStr;
use std::time::{Duration, Instant};

use sea_orm::sqlx;
use sea_orm::sqlx::postgres::{PgConnectOptions, PgListener, PgPoolOptions};
use sea_orm::{DatabaseConnection, DbBackend};

use crate::read_cache::ReadCache;
use crate::read_fence::Fence;

/// The channel the `sessions` trigger announces on; the payload is the session id.
pub(crate) const CHANNEL: &str = "svc_session_rows";
/// Turns the trigger's announcements off for a connection (a PostgreSQL placeholder setting): a
/// sole server's pool (`connect::connect_sole`).
pub(crate) const ANNOUNCEMENTS_OFF: &str = "SET svc.session_announcements = 'off'";
/// The watch's connection's `application_name`.
pub(crate) const APPLICATION_NAME: &str = "svc session watch";
/// With no read waiting, a fence this often.
const IDLE: Duration = Duration::from_millis(500);
/// A fence not answered within this is taken for a lost connection.
const FENCE_TIMEOUT: Duration = Duration::from_secs(2);
/// Between attempts to listen again: at first, then doubling up to [`RETRY_AT_MOST`].
const RETRY: Duration = Duration::from_millis(500);
const RETRY_AT_MOST: Duration = Duration::from_secs(10);
/// How long the watch waits for its connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How often a fence also looks that the trigger is still enabled.
const RECHECK: Duration = Duration::from_secs(5);

/// The running watch; [`SessionWatch::stop`] it at shutdown (it holds a connection of its own).
pub struct SessionWatch {
    task: tokio::task::JoinHandle<()>,
    fence: Fence,
}

impl SessionWatch {
    /// A replica's read cache and the watch that keeps it right, on PostgreSQL (`None` on any
    /// other backend: replicas there read through). The watch listens on a connection of its
    /// own to `url` (the pool's connections stay the requests'). Returns at once: the cache
    /// answers nothing until the watch listens.
    pub fn start_for(db: &DatabaseConnection, url: &str) -> Option<(ReadCache, Self)> {
        if db.get_database_backend() != DbBackend::Postgres {
            return None;
        }
        let fence = Fence::new();
        let cache = ReadCache::fenced(fence.clone());
        let task = tokio::spawn(watch(url.to_owned(), cache.clone(), fence.clone()));
        Some((cache, Self { task, fence }))
    }

    pub async fn stop(self) {
        // The task first: a fence it passed after the close would open it again.
        self.task.abort();
        let _ = self.task.await;
        self.fence.close();
    }
}

async fn watch(url: String, cache: ReadCache, fence: Fence) {
    let mut retry = RETRY;
    let mut failing_since_said = false;
    loop {
        let mut listener = match listen(&url).await {
            Ok(listener) => listener,
            Err(why) => {
                // Said once per streak of failures: reads go to the database meanwhile.
                if !failing_since_said {
                    tracing::warn!(%why, "session watch cannot listen; replica reads go to the database until it can");
                    failing_since_said = true;
                }
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(RETRY_AT_MOST);
                continue;
            }
        };
        failing_since_said = false;
        retry = RETRY;
        // Whatever changed before this listener listened was never announced to it. The fence
        // opens with the first that passes: rows read back while it was closed may predate a
        // write announced since, which that fence forgets.
        cache.forget_everything();
        let why = serve_fences(&mut listener, &cache, &fence).await;
        fence.close();
        cache.forget_everything();
        tracing::warn!(%why, "session row announcements lost; replica reads go to the database until the watch listens again");
        tokio::time::sleep(RETRY).await;
    }
}

/// Whether PostgreSQL announces session rows: the trigger is there and enabled (a migration not
/// run, or an operator's `DISABLE TRIGGER`, would let every kept row go stale).
const ANNOUNCING: &str = "SELECT 1 FROM pg_trigger WHERE tgrelid = 'sessions'::regclass \
                          AND tgname = 'svc_session_row_changed' AND tgenabled IN ('O', 'A')";
const NOT_ANNOUNCING: &str = "the trigger svc_session_row_changed on sessions is missing or disabled";

/// A listener on [`CHANNEL`], once PostgreSQL announces on it ([`ANNOUNCING`]).
async fn listen(url: &str) -> Result<PgListener, String> {
    // Named, so an operator can tell it apart in `pg_stat_activity`.
    let options = PgConnectOptions::from_str(url)
        .map_err(|e| e.to_string())?
        .application_name(APPLICATION_NAME);
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(CONNECT_TIMEOUT)
        .max_lifetime(None)
        .idle_timeout(None)
        .connect_with(options)
        .await
        .map_err(|e| e.to_string())?;
    let mut listener = PgListener::connect_with(&pool).await.map_err(|e| e.to_string())?;
    listener.listen(CHANNEL).await.map_err(|e| e.to_string())?;
    let announcing: Option<i32> = sqlx::query_scalar(ANNOUNCING)
        .fetch_optional(&mut listener)
        .await
        .map_err(|e| e.to_string())?;
    match announcing {
        Some(_) => Ok(listener),
        None => Err(NOT_ANNOUNCING.into()),
    }
}

/// Sends fences, one at once and then one whenever a read wants it, until one fails or stalls
/// (its answer says why). Every [`RECHECK`] a fence is the look at the trigger ([`ANNOUNCING`]):
/// any statement is a fence, and one disabled meanwhile ends the watch like a lost connection.
async fn serve_fences(listener: &mut PgListener, cache: &ReadCache, fence: &Fence) -> String {
    let mut checked = Instant::now();
    loop {
        let number = fence.sending();
        let recheck = checked.elapsed() >= RECHECK;
        let sent = async {
            if recheck {
                let announcing: Option<i32> = sqlx::query_scalar(ANNOUNCING).fetch_optional(&mut *listener).await?;
                Ok(announcing.is_some())
            } else {
                sqlx::raw_sql("").execute(&mut *listener).await.map(|_| true)
            }
        };
        match tokio::time::timeout(FENCE_TIMEOUT, sent).await {
            Ok(Ok(true)) => {}
            Ok(Ok(false)) => return NOT_ANNOUNCING.into(),
            Ok(Err(e)) => return format!("a fence failed: {e}"),
            Err(_) => return format!("a fence was not answered within {FENCE_TIMEOUT:?}"),
        }
        if recheck {
            checked = Instant::now();
        }
        while let Some(announcement) = listener.next_buffered() {
            cache.forget_announced(announcement.payload());
        }
        fence.passed(number);
        fence.wanted(IDLE).await;
    }
}
