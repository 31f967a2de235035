//! Which servers use a PostgreSQL database, claimed with a session advisory lock on one key.
//!
//! Replicas share the claim (`pg_try_advisory_lock_shared`: any number of them). A server
//! configured as the database's only one (`server.database_sole_server`) holds it alone
//! (`pg_try_advisory_lock`) and may then keep the read paths' rows in memory, as a server does
//! on its SQLite file (`sole_server.rs`). So a replica does not start beside a sole server, nor a
//! sole server beside replicas: either would write rows behind the sole server's memory.
//!
//! The lock lives as long as the connection that took it, one held outside the pool. A watchdog
//! asks that connection every [`CHECK_EVERY`]; when it broke (PostgreSQL restarted, the network
//! dropped, an operator ended the backend) the lock is gone, so the watchdog takes it again on a
//! new connection and tells the server to forget what it kept ([`DatabaseClaim::when_retaken`]).
//! When another server holds it by then (for [`HELD_PATIENCE`]), or the database stays out of
//! a sole server's reach for [`RETAKE_PATIENCE`], the claim is lost ([`DatabaseClaim::lost`]) and the server stops; a
//! supervisor that restarts it finds the claim taken and waits, as at any start.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sea_orm::sqlx::postgres::PgConnection;
use sea_orm::sqlx::{self, Connection, PgPool};
use sea_orm::{DatabaseConnection, DbBackend};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::connect::ConnectError;

/// The advisory lock key every `svc serve` on PostgreSQL takes ("svc_serv"; `pg_locks` shows it).
pub const CLAIM_KEY: i64 = 0x7376_635f_7365_7276;
/// How often a claim still held by another server is asked for again at start.
const RETRY_EVERY: Duration = Duration::from_millis(50);
/// How often the watchdog asks the claim's connection whether it still lives.
pub const CHECK_EVERY: Duration = Duration::from_millis(250);
/// A ping unanswered this long counts as a broken connection (a half-open one never answers).
const PING_PATIENCE: Duration = Duration::from_secs(1);
/// How long a database out of reach is asked again for a broken claim before the server gives up.
const RETAKE_PATIENCE: Duration = Duration::from_secs(10);
/// How long a broken claim that another backend holds is asked for again: the broken connection's
/// own backend may take a moment to end on the database's side.
const HELD_PATIENCE: Duration = Duration::from_secs(1);

/// How a server shares its database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimMode {
    /// One of any number of replicas.
    Shared,
    /// The only server: it may keep rows in memory.
    Sole,
}

type Callback = Arc<Mutex<Option<Box<dyn Fn() + Send + Sync>>>>;

/// What the watchdog tells the server.
#[derive(Clone, Default)]
struct Callbacks {
    retaken: Callback,
    lost: Callback,
}

fn run(callback: &Callback) {
    if let Some(callback) = callback.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
        callback();
    }
}

/// This server's claim on its PostgreSQL database; released when dropped.
pub struct DatabaseClaim {
    mode: ClaimMode,
    lost: watch::Receiver<bool>,
    callbacks: Callbacks,
    watchdog: JoinHandle<()>,
}

impl DatabaseClaim {
    /// Claims `db` in `mode`, waiting up to `patience` for a server that holds it otherwise
    /// (one shutting down while its successor starts). `None` unless `db` is PostgreSQL.
    pub async fn take(
        db: &DatabaseConnection,
        mode: ClaimMode,
        patience: Duration,
    ) -> Result<Option<Self>, ConnectError> {
        if db.get_database_backend() != DbBackend::Postgres {
            return Ok(None);
        }
        let pool = db.get_postgres_connection_pool().clone();
        let connection = match try_claim(&pool, mode, patience).await {
            Ok(connection) => connection,
            Err(Refusal::Held) => {
                return Err(ConnectError::Claimed {
                    sole: mode == ClaimMode::Sole,
                });
            }
            Err(Refusal::Unreachable(reason)) => {
                return Err(ConnectError::Unreachable {
                    url: "the PostgreSQL database".into(),
                    reason: format!("cannot claim it: {reason}"),
                });
            }
        };
        let (lose, lost) = watch::channel(false);
        let callbacks = Callbacks::default();
        let watchdog = tokio::spawn(watch_over(connection, pool, mode, callbacks.clone(), lose));
        Ok(Some(Self {
            mode,
            lost,
            callbacks,
            watchdog,
        }))
    }

    pub fn mode(&self) -> ClaimMode {
        self.mode
    }

    /// What to do once a broken claim was taken again: forget every row kept in memory, since
    /// another server may have written meanwhile.
    pub fn when_retaken(&self, forget: impl Fn() + Send + Sync + 'static) {
        *self.callbacks.retaken.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(forget));
    }

    /// What to do at once when the claim is lost, before [`DatabaseClaim::lost`] stops the
    /// server: stop answering from memory, since another server may write meanwhile.
    pub fn when_lost(&self, stop_keeping: impl Fn() + Send + Sync + 'static) {
        *self.callbacks.lost.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(stop_keeping));
    }

    /// Resolves when the claim is lost for good (a watchdog that ended while the claim is held,
    /// by a panic, counts: its connection and the lock went with it); never while it holds.
    pub fn lost(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut lost = self.lost.clone();
        async move {
            let _ = lost.wait_for(|lost| *lost).await;
        }
    }
}

impl Drop for DatabaseClaim {
    fn drop(&mut self) {
        // Its connection closes with the task, which releases the lock.
        self.watchdog.abort();
    }
}

enum Refusal {
    Held,
    Unreachable(String),
}

/// Takes the lock on a connection of its own, asking again until `patience` runs out.
async fn try_claim(pool: &PgPool, mode: ClaimMode, patience: Duration) -> Result<PgConnection, Refusal> {
    let deadline = Instant::now() + patience;
    let mut connection = pool
        .acquire()
        .await
        .map_err(|e| Refusal::Unreachable(e.to_string()))?
        .detach();
    let statement = match mode {
        ClaimMode::Shared => "SELECT pg_try_advisory_lock_shared($1)",
        ClaimMode::Sole => "SELECT pg_try_advisory_lock($1)",
    };
    loop {
        let taken: bool = sqlx::query_scalar(statement)
            .bind(CLAIM_KEY)
            .fetch_one(&mut connection)
            .await
            .map_err(|e| Refusal::Unreachable(e.to_string()))?;
        if taken {
            return Ok(connection);
        }
        if Instant::now() >= deadline {
            let _ = connection.close().await;
            return Err(Refusal::Held);
        }
        tokio::time::sleep(RETRY_EVERY).await;
    }
}

async fn watch_over(
    mut connection: PgConnection,
    pool: PgPool,
    mode: ClaimMode,
    callbacks: Callbacks,
    lose: watch::Sender<bool>,
) {
    let mut every = tokio::time::interval(CHECK_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let broken = match tokio::time::timeout(PING_PATIENCE, connection.ping()).await {
            Ok(Ok(())) => continue,
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer to a ping within {PING_PATIENCE:?}"),
        };
        tracing::warn!(error = %broken, "the connection holding this server's claim on the database broke; claiming it again");
        // Closed first: a backend still alive behind a silent connection would refuse our own
        // claim. Closing its socket lets PostgreSQL end it.
        drop(connection);
        match retake(&pool, mode).await {
            Ok(fresh) => {
                connection = fresh;
                run(&callbacks.retaken);
                tracing::info!("claimed the database again; rows kept in memory were forgotten");
            }
            Err(reason) => {
                run(&callbacks.lost);
                tracing::error!(reason, "this server lost its claim on the database; stopping");
                let _ = lose.send(true);
                return;
            }
        }
    }
}

/// Claims again after a break. A claim held by another backend for [`HELD_PATIENCE`] is another
/// server's. A database out of reach may be restarting: a replica asks again until it answers
/// (what it keeps in memory its session watch keeps right, `session_watch.rs`), a sole server for
/// [`RETAKE_PATIENCE`] (the database might be out of reach from here only, and reachable from a
/// server that takes the claim).
async fn retake(pool: &PgPool, mode: ClaimMode) -> Result<PgConnection, String> {
    let deadline = Instant::now() + RETAKE_PATIENCE;
    loop {
        match try_claim(pool, mode, HELD_PATIENCE).await {
            Ok(connection) => return Ok(connection),
            Err(Refusal::Held) => return Err("another server holds it".into()),
            Err(Refusal::Unreachable(reason)) if mode == ClaimMode::Sole && Instant::now() >= deadline => {
                return Err(reason);
            }
            Err(Refusal::Unreachable(_)) => tokio::time::sleep(RETRY_EVERY).await,
        }
    }
}
