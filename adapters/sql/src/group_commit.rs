//! Group commit on SQLite: one writer task runs the write transactions of concurrent requests
//! together, inside one database transaction that ends in one commit (one fsync under
//! `synchronous=FULL`) instead of one each.
//!
//! A failing request rolls back only its own part: its work runs under its own SAVEPOINT, or, when
//! it writes with one statement ([`Undo::OneStatement`]) or undoes its own earlier writes
//! ([`Undo::Compensated`]), SQLite undoes the refused statement itself and the savepoint's two
//! statements (two thread hand-offs to sqlx's SQLite worker) are saved. A
//! request alone in its batch runs in the transaction itself. A request learns its outcome only
//! after the batch's COMMIT returned, so nothing is acknowledged before it is on disk. SQLite has
//! one writer anyway: batching adds no waiting, it shares the fsync. PostgreSQL and MySQL do not
//! use it (their repositories write directly).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use sea_orm::{DatabaseConnection, DatabaseTransaction, DbBackend, DbErr, SqlErr, TransactionTrait};
use tokio::sync::{mpsc, oneshot};

use crate::errors::begin_write;

/// Most requests one commit carries: bounds how long the first of them waits for the rest.
const MAX_BATCH: usize = 128;
/// Requests waiting for the writer before `write` itself waits (backpressure, not a refusal).
const QUEUE_DEPTH: usize = 1024;

/// What undoes a request's statements when its work fails inside a batch of several.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Undo {
    /// A savepoint around the work: any work, any number of writes.
    Savepoint,
    /// SQLite itself. The work writes with one statement at most, its last one, and fails only
    /// when a statement fails. A statement a constraint refused undoes only itself; any other
    /// failure (a full disk, an I/O error, a work that failed after its write) may have ended or
    /// dirtied the transaction, so the whole batch is abandoned: nothing of it commits, every
    /// request it ran is answered with the failure, and those it had not run yet go on to the
    /// next batch. On another backend a failed statement ends the transaction, so there it is a
    /// savepoint.
    OneStatement,
    /// The work itself. It writes with statements whose every failure is its last statement's,
    /// and when a constraint refuses a statement after an earlier one wrote, it undoes that
    /// earlier write with a statement of its own before answering the refusal: so when it ends,
    /// it has written all of its statements or none. Any other failure abandons the batch, as for
    /// [`Undo::OneStatement`]. Two thread hand-offs fewer than a savepoint on success. Where a
    /// failed statement ends the transaction (not SQLite), it is a savepoint.
    Compensated,
}

/// The work a request hands the writer: statements on the transaction or savepoint it is given,
/// nothing else (the batch holds the only write lock; another connection would wait forever).
struct Work {
    run: RunWork,
    undo: Undo,
}

type RunWork = Box<dyn for<'t> FnOnce(&'t DatabaseTransaction) -> BoxFuture<'t, Ran> + Send>;

/// A request's work has run: how it ended and how to answer it once the batch's fate is known.
struct Ran {
    ended: Ended,
    answer: Answer,
}

type Answer = Box<dyn FnOnce(Result<(), String>) + Send>;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ended {
    Succeeded,
    /// A constraint refused its statement (the statement undid itself; the transaction goes on).
    Refused,
    Failed,
}

/// A handle on the one writer; clones share it.
#[derive(Clone)]
pub struct Writer {
    jobs: mpsc::Sender<Work>,
    committed: Arc<AtomicU64>,
}

impl Writer {
    /// The writer of `db` when it is SQLite; `None` for a server backend, whose repositories keep
    /// writing directly. Spawns the writer task (it ends when every handle is dropped).
    pub fn for_database(db: &DatabaseConnection) -> Option<Self> {
        (db.get_database_backend() == DbBackend::Sqlite).then(|| Self::start(db.clone()))
    }

    /// Spawns a writer over `db` whatever its backend (tests use it directly).
    pub fn start(db: DatabaseConnection) -> Self {
        let (jobs, queue) = mpsc::channel(QUEUE_DEPTH);
        let committed = Arc::new(AtomicU64::new(0));
        tokio::spawn(run(db, queue, committed.clone()));
        Self { jobs, committed }
    }

    /// Batches committed so far (each one commit and one fsync, whatever it carried).
    pub fn committed_batches(&self) -> u64 {
        self.committed.load(Ordering::Relaxed)
    }

    /// Requests queued for the next batch.
    pub fn pending(&self) -> usize {
        self.jobs.max_capacity() - self.jobs.capacity()
    }

    /// Runs `work` in the next batch and answers its result once the batch committed. An error of
    /// `work` rolls back its own statements only; a failed commit fails every request of the batch.
    pub async fn write<T, F>(&self, work: F) -> Result<T, DbErr>
    where
        T: Send + 'static,
        F: for<'t> FnOnce(&'t DatabaseTransaction) -> BoxFuture<'t, Result<T, DbErr>> + Send + 'static,
    {
        self.write_then(work, |_| {}).await
    }

    /// [`Writer::write`] for a `work` that keeps [`Undo::OneStatement`]'s promise.
    pub async fn write_one<T, F>(&self, work: F) -> Result<T, DbErr>
    where
        T: Send + 'static,
        F: for<'t> FnOnce(&'t DatabaseTransaction) -> BoxFuture<'t, Result<T, DbErr>> + Send + 'static,
    {
        self.submit(work, |_| {}, Undo::OneStatement).await
    }

    /// [`Writer::write`], and `settled` runs on the writer with the request's outcome once the
    /// batch's fate is known, before the answer is sent, whether or not anyone still waits for it
    /// (a cancelled request's write still commits: what must follow every commit, such as
    /// forgetting a cached row, goes here). Settlements run in commit order.
    pub async fn write_then<T, F, S>(&self, work: F, settled: S) -> Result<T, DbErr>
    where
        T: Send + 'static,
        F: for<'t> FnOnce(&'t DatabaseTransaction) -> BoxFuture<'t, Result<T, DbErr>> + Send + 'static,
        S: FnOnce(&Result<T, DbErr>) + Send + 'static,
    {
        self.submit(work, settled, Undo::Savepoint).await
    }

    /// Queues `work` for the next batch, undone by `undo` if it fails, and waits for its answer.
    pub(crate) async fn submit<T, F, S>(&self, work: F, settled: S, undo: Undo) -> Result<T, DbErr>
    where
        T: Send + 'static,
        F: for<'t> FnOnce(&'t DatabaseTransaction) -> BoxFuture<'t, Result<T, DbErr>> + Send + 'static,
        S: FnOnce(&Result<T, DbErr>) + Send + 'static,
    {
        let (reply, outcome) = oneshot::channel::<Result<T, DbErr>>();
        let run: RunWork = Box::new(move |txn| {
            Box::pin(async move {
                let result = work(txn).await;
                let ended = match &result {
                    Ok(_) => Ended::Succeeded,
                    Err(error) if refused_by_constraint(error) => Ended::Refused,
                    Err(_) => Ended::Failed,
                };
                Ran {
                    ended,
                    answer: Box::new(move |batch: Result<(), String>| {
                        let answer = match batch {
                            Ok(()) => result,
                            Err(reason) => result.and(Err(DbErr::Custom(reason))),
                        };
                        settled(&answer);
                        let _ = reply.send(answer);
                    }),
                }
            })
        });
        self.jobs.send(Work { run, undo }).await.map_err(|_| stopped())?;
        outcome.await.map_err(|_| stopped())?
    }
}

/// Runs `work` through `writer` when there is one (SQLite; `undo` as in [`Writer::submit`]), else
/// in a transaction of its own on `db`; `settled` follows the commit either way (on the writer:
/// see [`Writer::write_then`]). Without a writer the transaction runs in a task of its own, as
/// the writer runs it: a request that leaves while its `COMMIT` is on the wire cannot skip
/// `settled` (a read cache's forget) while the database still commits.
pub(crate) async fn write_settled<T, F, S>(
    writer: Option<&Writer>,
    db: &DatabaseConnection,
    undo: Undo,
    work: F,
    settled: S,
) -> Result<T, DbErr>
where
    T: Send + 'static,
    F: for<'t> FnOnce(&'t DatabaseTransaction) -> BoxFuture<'t, Result<T, DbErr>> + Send + 'static,
    S: FnOnce(&Result<T, DbErr>) + Send + 'static,
{
    if let Some(writer) = writer {
        return writer.submit(work, settled, undo).await;
    }
    let db = db.clone();
    let written = tokio::spawn(tracing::Instrument::in_current_span(async move {
        let written = async {
            let txn = begin_write(&db).await?;
            let value = work(&txn).await?;
            txn.commit().await?;
            Ok(value)
        }
        .await;
        settled(&written);
        written
    }));
    written
        .await
        .map_err(|e| DbErr::Custom(format!("a write's task ended early: {e}")))?
}

fn stopped() -> DbErr {
    DbErr::Custom("the group-commit batch did not complete (see the log)".to_owned())
}

/// A constraint refused the statement: SQLite undid that statement alone (the default `ABORT`
/// conflict resolution), and the transaction goes on.
pub(crate) fn refused_by_constraint(error: &DbErr) -> bool {
    matches!(
        error.sql_err(),
        Some(SqlErr::UniqueConstraintViolation(_) | SqlErr::ForeignKeyConstraintViolation(_))
    )
}

async fn run(db: DatabaseConnection, mut queue: mpsc::Receiver<Work>, committed: Arc<AtomicU64>) {
    // Only SQLite leaves the transaction usable after a refused statement.
    let statements_undo_themselves = db.get_database_backend() == DbBackend::Sqlite;
    let mut batch = Vec::with_capacity(MAX_BATCH);
    loop {
        // What an abandoned batch had not run yet goes first, in a batch of its own.
        if batch.is_empty() && queue.recv_many(&mut batch, MAX_BATCH).await == 0 {
            return;
        }
        let done = if batch.len() == 1 {
            commit_alone(&db, batch.pop().expect("one job")).await
        } else {
            commit_batch(&db, &mut batch, statements_undo_themselves).await
        };
        if done {
            committed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A request that found the writer idle: its own transaction, no savepoint (two statements
/// fewer). Answers whether it committed.
async fn commit_alone(db: &DatabaseConnection, job: Work) -> bool {
    let txn = match begin_write(db).await {
        Ok(txn) => txn,
        Err(error) => {
            tracing::error!(%error, "group commit: cannot begin a transaction");
            return false;
        }
    };
    let ran = match AssertUnwindSafe((job.run)(&txn)).catch_unwind().await {
        Ok(ran) => ran,
        Err(_) => {
            tracing::error!("group commit: a request's work panicked; its statements are rolled back");
            return false;
        }
    };
    if ran.ended != Ended::Succeeded {
        if let Err(error) = txn.rollback().await {
            tracing::error!(%error, "group commit: a failed request's rollback failed");
        }
        (ran.answer)(Ok(()));
        return false;
    }
    let committed = txn.commit().await.map_err(|error| {
        tracing::error!(%error, "group commit: the commit failed");
        format!("the write could not be committed: {error}")
    });
    let succeeded = committed.is_ok();
    (ran.answer)(committed);
    succeeded
}

/// One transaction for the whole of `batch`, which it empties. When the batch cannot begin, its
/// requests are dropped (their callers read [`stopped`]); when it is abandoned, the requests it
/// had not run yet are left in `batch` for the next one. Answers whether the batch committed.
async fn commit_batch(db: &DatabaseConnection, batch: &mut Vec<Work>, statements_undo_themselves: bool) -> bool {
    let mut jobs = std::mem::take(batch).into_iter();
    let txn = match begin_write(db).await {
        Ok(txn) => txn,
        Err(error) => {
            tracing::error!(%error, "group commit: cannot begin a batch");
            return false;
        }
    };
    let mut answers = Vec::new();
    while let Some(job) = jobs.next() {
        let undoes_itself = matches!(job.undo, Undo::OneStatement | Undo::Compensated);
        let ran = if undoes_itself && statements_undo_themselves {
            run_bare(&txn, job).await
        } else {
            run_savepointed(&txn, job).await
        };
        match ran {
            Ok(answer) => answers.push(answer),
            Err(Abandon { reason, answer }) => {
                // The transaction itself is broken or holds a half-done request: nothing of this
                // batch commits, and everyone who ran is told.
                tracing::error!(%reason, "group commit: the batch is abandoned");
                if let Err(error) = txn.rollback().await {
                    tracing::error!(%error, "group commit: an abandoned batch's rollback failed");
                }
                let failure = format!("the write could not be committed: {reason}");
                for answer in answers.into_iter().chain(answer) {
                    answer(Err(failure.clone()));
                }
                batch.extend(jobs);
                return false;
            }
        }
    }
    let committed = txn.commit().await.map_err(|error| {
        tracing::error!(%error, "group commit: the batch's commit failed");
        format!("the write could not be committed: {error}")
    });
    let succeeded = committed.is_ok();
    for answer in answers {
        answer(committed.clone());
    }
    succeeded
}

/// Why a batch cannot commit, and the answer of the request that found out (if it has one).
struct Abandon {
    reason: String,
    answer: Option<Answer>,
}

/// Runs one request's work under its own savepoint and keeps or undoes it.
async fn run_savepointed(txn: &DatabaseTransaction, job: Work) -> Result<Answer, Abandon> {
    let savepoint = txn.begin().await.map_err(|error| Abandon {
        reason: format!("a savepoint could not begin: {error}"),
        answer: None,
    })?;
    let (keep, answer) = match AssertUnwindSafe((job.run)(&savepoint)).catch_unwind().await {
        Ok(ran) => (ran.ended == Ended::Succeeded, ran.answer),
        Err(_) => {
            // A panicking request answers nothing (its caller sees `stopped`); the others go on.
            tracing::error!("group commit: a request's work panicked; its statements are rolled back");
            (false, Box::new(|_| {}) as Answer)
        }
    };
    let ended = if keep {
        savepoint.commit().await
    } else {
        savepoint.rollback().await
    };
    match ended {
        Ok(()) => Ok(answer),
        Err(error) => Err(Abandon {
            reason: format!("a savepoint could not end: {error}"),
            answer: Some(answer),
        }),
    }
}

/// Runs one request's self-undoing work in the batch's transaction itself
/// ([`Undo::OneStatement`], [`Undo::Compensated`]).
async fn run_bare(txn: &DatabaseTransaction, job: Work) -> Result<Answer, Abandon> {
    match AssertUnwindSafe((job.run)(txn)).catch_unwind().await {
        Ok(Ran {
            ended: Ended::Succeeded | Ended::Refused,
            answer,
        }) => Ok(answer),
        Ok(Ran {
            ended: Ended::Failed,
            answer,
        }) => Err(Abandon {
            reason: "a self-undoing write failed other than by a constraint".to_owned(),
            answer: Some(answer),
        }),
        Err(_) => Err(Abandon {
            reason: "a self-undoing write panicked".to_owned(),
            answer: None,
        }),
    }
}
