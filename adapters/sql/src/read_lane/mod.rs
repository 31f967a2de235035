//! PostgreSQL single-row reads on connections held between reads.
//!
//! sqlx's pool pings every connection it takes back (a `Sync` and its `ReadyForQuery`: one more
//! round trip, TLS record and backend wake-up per statement; `PoolConnection::return_to_pool`).
//! For the read paths (`svc_consume`, `svc_get_session`, `resources/read`: one short statement
//! each) that doubled PostgreSQL's work and cost replicas about a quarter of their read
//! throughput (issue 18, BENCHMARKS.md). The lane takes connections from the pool and keeps up to
//! half the pool's size between reads, so a read that finds one held pays one round trip. A
//! connection goes back to the pool, pinged there, when a read on it failed or did not finish (its
//! caller left mid-statement: the rest of the answer may still be on the wire, and the ping is
//! what reads it off), and when it sat unused for [`HOLD_IDLE`], so writes are never short of
//! connections for longer than that once reads stop, and a connection the server or a proxy may
//! drop while idle is never kept.
//!
//! Reads of one kind that arrive while others of it are on the wire wait and share the next
//! statement ([`batches`]).

mod batches;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use sea_orm::sqlx::pool::PoolConnection;
use sea_orm::sqlx::postgres::PgRow;
use sea_orm::sqlx::{self, Connection, PgPool, Postgres};
use sea_orm::{ConnAcquireErr, DatabaseConnection, DbBackend, DbErr, RuntimeErr, Statement, Values};
use sea_query_sqlx::SqlxValues;
use tokio::time::Instant;

use crate::batched_read::BatchedRead;
use batches::{Batches, Turn};

/// How long a held connection may sit unused before it goes back to the pool.
const HOLD_IDLE: Duration = Duration::from_secs(1);

/// Connections kept for the read paths of one PostgreSQL pool. Cheap to clone (shared).
#[derive(Clone)]
pub struct ReadLane {
    inner: Arc<Lane>,
}

struct Lane {
    pool: PgPool,
    /// Most recently used last: reads take from the end, the sweep returns from the front.
    held: Mutex<Vec<Held>>,
    capacity: usize,
    batches: Batches,
    alone: AtomicU64,
    shared: AtomicU64,
}

/// How the lane's keyed reads were asked, since it started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LaneReads {
    /// In a statement of their own.
    pub alone: u64,
    /// In one statement with other reads of their kind that waited at the same time.
    pub shared: u64,
}

struct Held {
    connection: PoolConnection<Postgres>,
    used: Instant,
}

impl ReadLane {
    /// A lane for `db`'s pool when it is PostgreSQL's, the replicas' backend. (SQLite's reads
    /// are kept in memory; MariaDB's pool pings too, and its reads have no lane yet.) Spawns the
    /// sweep that returns idle connections; it ends with the lane or the pool.
    pub fn for_database(db: &DatabaseConnection) -> Option<Self> {
        (db.get_database_backend() == DbBackend::Postgres).then(|| Self::new(db.get_postgres_connection_pool().clone()))
    }

    fn new(pool: PgPool) -> Self {
        let capacity = (pool.options().get_max_connections() as usize / 2).max(1);
        let lane = Arc::new(Lane {
            pool,
            held: Mutex::new(Vec::with_capacity(capacity)),
            capacity,
            batches: Batches::default(),
            alone: AtomicU64::new(0),
            shared: AtomicU64::new(0),
        });
        tokio::spawn(sweep(Arc::downgrade(&lane), lane.pool.close_event()));
        Self { inner: lane }
    }

    /// The row `statement` answers for `key`: alone, or beside other reads of its kind in
    /// `batched`'s statement when those of its kind on the wire are as many as may be.
    pub(crate) async fn one_keyed(
        &self,
        statement: &Statement,
        batched: Option<Arc<BatchedRead>>,
        key: &str,
    ) -> Result<Option<PgRow>, DbErr> {
        // A key PostgreSQL cannot hold as text fails whatever statement carries it: it asks
        // alone, so the reads beside it are not sent twice.
        let batched = batched.filter(|_| !key.contains('\0'));
        let _running = match batched.map(|batched| self.inner.batches.turn(self, &batched, key)) {
            Some(Turn::Wait(answer)) => {
                if let Ok(Ok(row)) = tokio::time::timeout(batches::LONGEST_WAIT, answer).await {
                    self.inner.shared.fetch_add(1, Ordering::Relaxed);
                    return Ok(row);
                }
                None
            }
            Some(Turn::Now(running)) => Some(running),
            None => None,
        };
        self.inner.alone.fetch_add(1, Ordering::Relaxed);
        self.one(statement).await
    }

    /// The first row `statement` answers.
    async fn one(&self, statement: &Statement) -> Result<Option<PgRow>, DbErr> {
        Ok(self.rows(statement).await?.into_iter().next())
    }

    /// Every row `statement` answers.
    async fn rows(&self, statement: &Statement) -> Result<Vec<PgRow>, DbErr> {
        let connection = match self.inner.take_held() {
            Some(held) => match self.run(held, statement).await {
                Ok(row) => return Ok(row),
                // A held connection the database or a proxy closed since fails its next
                // statement, and the pool's idle ones may have gone with it (a restarted
                // database): a read can be asked again, on a connection seen to answer.
                Err(_) => Box::pin(self.inner.answering_connection()).await?,
            },
            None => Box::pin(self.inner.pool.acquire()).await.map_err(acquire_error)?,
        };
        self.run(connection, statement)
            .await
            .map_err(|e| DbErr::Query(RuntimeErr::SqlxError(e.into())))
    }

    async fn run(
        &self,
        mut connection: PoolConnection<Postgres>,
        statement: &Statement,
    ) -> Result<Vec<PgRow>, sqlx::Error> {
        let values = SqlxValues(statement.values.clone().unwrap_or(Values(Vec::new())));
        // A failed statement's connection, or one whose caller left mid-statement (this future
        // dropped), goes back to the pool, which reads the rest of the answer off the wire or
        // closes it before anyone else uses it.
        let rows = sqlx::query_with(sqlx::AssertSqlSafe(statement.sql.as_str()), values)
            .fetch_all(&mut *connection)
            .await?;
        self.inner.keep(connection);
        Ok(rows)
    }

    /// How the keyed reads were asked so far.
    pub fn reads(&self) -> LaneReads {
        LaneReads {
            alone: self.inner.alone.load(Ordering::Relaxed),
            shared: self.inner.shared.load(Ordering::Relaxed),
        }
    }

    /// How many connections the lane holds between reads now.
    pub fn held(&self) -> usize {
        self.inner.held.lock().expect("read lane lock").len()
    }
}

impl Lane {
    /// The connection used last, unless it sat longer than [`HOLD_IDLE`] (then the pool has it
    /// back, and checks it before handing it out again).
    fn take_held(&self) -> Option<PoolConnection<Postgres>> {
        let recent = self.held.lock().expect("read lane lock").pop()?;
        (recent.used.elapsed() < HOLD_IDLE && !self.pool.is_closed()).then_some(recent.connection)
    }

    /// A connection from the pool that answers a ping, after as many broken ones as the pool
    /// can hold (each dropped: the pool closes it and opens another).
    async fn answering_connection(&self) -> Result<PoolConnection<Postgres>, DbErr> {
        for _ in 0..self.pool.options().get_max_connections() {
            let mut connection = self.pool.acquire().await.map_err(acquire_error)?;
            if connection.ping().await.is_ok() {
                return Ok(connection);
            }
        }
        self.pool.acquire().await.map_err(acquire_error)
    }

    fn keep(&self, connection: PoolConnection<Postgres>) {
        let mut held = self.held.lock().expect("read lane lock");
        if held.len() < self.capacity && !self.pool.is_closed() {
            held.push(Held {
                connection,
                used: Instant::now(),
            });
            return;
        }
        drop(held);
        // Back to the pool (outside the lock: its return is a task of its own).
        drop(connection);
    }

    /// Hands back every connection unused for [`HOLD_IDLE`] (all of them once the pool closes).
    fn release_idle(&self, everything: bool) {
        let released: Vec<Held> = {
            let mut held = self.held.lock().expect("read lane lock");
            let idle = if everything {
                held.len()
            } else {
                held.iter().take_while(|h| h.used.elapsed() >= HOLD_IDLE).count()
            };
            held.drain(..idle).collect()
        };
        // Dropped outside the lock: each spawns its return to the pool.
        drop(released);
    }
}

/// As sea-orm reports a pool's refusal.
fn acquire_error(error: sqlx::Error) -> DbErr {
    match error {
        sqlx::Error::PoolTimedOut => DbErr::ConnectionAcquire(ConnAcquireErr::Timeout),
        sqlx::Error::PoolClosed => DbErr::ConnectionAcquire(ConnAcquireErr::ConnectionClosed),
        other => DbErr::Conn(RuntimeErr::SqlxError(other.into())),
    }
}

async fn sweep(lane: Weak<Lane>, closed: sqlx::pool::CloseEvent) {
    tokio::pin!(closed);
    loop {
        let everything = tokio::select! {
            () = tokio::time::sleep(HOLD_IDLE / 2) => false,
            () = &mut closed => true,
        };
        let Some(lane) = lane.upgrade() else { return };
        lane.release_idle(everything);
        if everything {
            return;
        }
    }
}
