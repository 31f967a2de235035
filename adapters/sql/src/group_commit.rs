//! Group commit on SQLite: one writer task runs the write transactions of concurrent requests
//! together, inside one database transaction that ends in one commit (one fsync under
//! `synchronous=FULL`) instead of one each.
//!
//! Each request's work runs under its own SAVEPOINT, so a failing request rolls back only its own
//! part (a request alone in its batch runs in the transaction itself); a request learns its outcome only after the batch's COMMIT returned, so nothing is
//! acknowledged before it is on disk. SQLite has one writer anyway: batching adds no waiting, it
//! shares the fsync. PostgreSQL and MySQL do not use it (their repositories write directly).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use sea_orm::{DatabaseConnection, DatabaseTransaction, DbBackend, DbErr, TransactionTrait};
use tokio::sync::{mpsc, oneshot};

use crate::errors::begin_write;

/// Most requests one commit carries: bounds how long the first of them waits for the rest.
const MAX_BATCH: usize = 128;
/// Requests waiting for the writer before `write` itself waits (backpressure, not a refusal).
const QUEUE_DEPTH: usize = 1024;

/// The work a request hands the writer: statements on the savepoint it is given, nothing else
/// (the batch holds the only write lock; another connection would wait for it forever).
type Work = Box<dyn for<'t> FnOnce(&'t DatabaseTransaction) -> BoxFuture<'t, Ran> + Send>;

/// A request's work has run: whether it succeeded (its savepoint is released, else rolled back)
/// and how to answer it once the batch's fate is known.
struct Ran {
    succeeded: bool,
    answer: Box<dyn FnOnce(Result<(), String>) + Send>,
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
        self.write_then(work, || {}).await
    }

    /// [`Writer::write`], and `settled` runs on the writer once the batch's fate is known, before
    /// the answer is sent, whether or not anyone still waits for it (a cancelled request's write
    /// still commits: what must follow every commit, such as forgetting a cached row, goes here).
    pub async fn write_then<T, F, S>(&self, work: F, settled: S) -> Result<T, DbErr>
    where
        T: Send + 'static,
        F: for<'t> FnOnce(&'t DatabaseTransaction) -> BoxFuture<'t, Result<T, DbErr>> + Send + 'static,
        S: FnOnce() + Send + 'static,
    {
        let (reply, outcome) = oneshot::channel::<Result<T, DbErr>>();
        let job: Work = Box::new(move |txn| {
            Box::pin(async move {
                let result = work(txn).await;
                Ran {
                    succeeded: result.is_ok(),
                    answer: Box::new(move |batch: Result<(), String>| {
                        settled();
                        let answer = match batch {
                            Ok(()) => result,
                            Err(reason) => result.and(Err(DbErr::Custom(reason))),
                        };
                        let _ = reply.send(answer);
                    }),
                }
            })
        });
        self.jobs.send(job).await.map_err(|_| stopped())?;
        outcome.await.map_err(|_| stopped())?
    }
}

/// Runs `work` through `writer` when there is one (SQLite), else in a transaction of its own
/// on `db`; `settled` follows the commit either way (on the writer: see [`Writer::write_then`]).
pub(crate) async fn write_settled<T, F, S>(
    writer: Option<&Writer>,
    db: &DatabaseConnection,
    work: F,
    settled: S,
) -> Result<T, DbErr>
where
    T: Send + 'static,
    F: for<'t> FnOnce(&'t DatabaseTransaction) -> BoxFuture<'t, Result<T, DbErr>> + Send + 'static,
    S: FnOnce() + Send + 'static,
{
    if let Some(writer) = writer {
        return writer.write_then(work, settled).await;
    }
    let written = async {
        let txn = begin_write(db).await?;
        let value = work(&txn).await?;
        txn.commit().await?;
        Ok(value)
    }
    .await;
    settled();
    written
}

fn stopped() -> DbErr {
    DbErr::Custom("the group-commit batch did not complete (see the log)".to_owned())
}

async fn run(db: DatabaseConnection, mut queue: mpsc::Receiver<Work>, committed: Arc<AtomicU64>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while queue.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let done = if batch.len() == 1 {
            commit_alone(&db, batch.pop().expect("one job")).await
        } else {
            commit_batch(&db, batch.drain(..)).await
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
    let ran = match AssertUnwindSafe(job(&txn)).catch_unwind().await {
        Ok(ran) => ran,
        Err(_) => {
            tracing::error!("group commit: a request's work panicked; its statements are rolled back");
            return false;
        }
    };
    if !ran.succeeded {
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

/// One transaction for the whole batch; a request whose job could not run (the batch failed to
/// begin) is dropped, which its caller reads as [`stopped`]. Answers whether the batch committed.
async fn commit_batch(db: &DatabaseConnection, jobs: impl Iterator<Item = Work>) -> bool {
    let txn = match begin_write(db).await {
        Ok(txn) => txn,
        Err(error) => {
            tracing::error!(%error, "group commit: cannot begin a batch");
            return false;
        }
    };
    let mut answers = Vec::new();
    for job in jobs {
        match run_savepointed(&txn, job).await {
            Ok(answer) => answers.push(answer),
            Err(error) => {
                // The transaction itself is broken: nothing of this batch will commit.
                tracing::error!(%error, "group commit: a savepoint failed; the batch is abandoned");
                drop(answers);
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

/// Runs one request's work under its own savepoint and keeps or undoes it.
async fn run_savepointed(
    txn: &DatabaseTransaction,
    job: Work,
) -> Result<Box<dyn FnOnce(Result<(), String>) + Send>, DbErr> {
    let savepoint = txn.begin().await?;
    match AssertUnwindSafe(job(&savepoint)).catch_unwind().await {
        Ok(ran) if ran.succeeded => {
            savepoint.commit().await?;
            Ok(ran.answer)
        }
        Ok(ran) => {
            savepoint.rollback().await?;
            Ok(ran.answer)
        }
        Err(_) => {
            // A panicking request answers nothing (its caller sees `stopped`); the others go on.
            tracing::error!("group commit: a request's work panicked; its statements are rolled back");
            savepoint.rollback().await?;
            Ok(Box::new(|_| {}))
        }
    }
}
