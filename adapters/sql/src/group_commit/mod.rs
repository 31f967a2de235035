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
//!
//! Writes of one statement whose answer is the count of rows it changed ([`Coalescable`]) go
//! further on SQLite: those of a batch that share their statement's text run as one statement
//! list, one round trip for several requests (`together`).

mod together;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use sea_orm::{DatabaseConnection, DatabaseTransaction, DbBackend, DbErr, SqlErr, Statement, TransactionTrait};
use svc_application::ports::telemetry::{NoTelemetry, WriteTelemetry};
use tokio::sync::{mpsc, oneshot};

use self::together::Shape;
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

/// A write that is one statement (or one statement list) returning no rows, whose answer is read
/// from the rows its last statement changed (SQLite's `changes()` right after it). Beside others
/// of the same text in a batch, SQLite runs it in one list with them; alone, or when a statement
/// of the list failed (a refused row), its work runs as if it had been written with
/// [`Writer::write_one`], and is given its statement.
pub struct Coalescable<T> {
    pub statement: Statement,
    /// The answer for that count of rows; `None` when the count says the write went wrong, and
    /// then nothing of its batch commits.
    pub answer: fn(u64) -> Option<T>,
}

/// The work a request hands the writer: statements on the transaction or savepoint it is given,
/// nothing else (the batch holds the only write lock; another connection would wait forever).
struct Work {
    run: RunWork,
    undo: Undo,
    /// Set for a [`Coalescable`] write.
    shape: Option<Shape>,
}

type RunWork = Box<dyn for<'t> FnOnce(Given<'t>) -> BoxFuture<'t, Ran> + Send>;

/// What the writer does with a request's work.
enum Given<'t> {
    /// Run it here; a coalescable write is given its statement back.
    Transaction(&'t DatabaseTransaction, Option<Statement>),
    /// Its statement ran in a list, and its last statement changed this many rows.
    Written(u64),
}

/// A coalescable work given no statement: a bug in this module, answered as a failure.
fn no_statement() -> DbErr {
    DbErr::Custom("group commit: a coalescable write was run without its statement".to_owned())
}

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
    counts: Arc<Counts>,
}

struct Counts {
    committed: AtomicU64,
    together: AtomicU64,
    telemetry: Arc<dyn WriteTelemetry>,
}

impl Counts {
    fn committed(&self, alone: usize, listed: usize) {
        self.committed.fetch_add(1, Ordering::Relaxed);
        self.telemetry.batch_committed(alone, listed);
    }
}

impl Writer {
    /// The writer of `db` when it is SQLite; `None` for a server backend, whose repositories keep
    /// writing directly. Spawns the writer task (it ends when every handle is dropped).
    pub fn for_database(db: &DatabaseConnection) -> Option<Self> {
        Self::for_database_reporting(db, Arc::new(NoTelemetry))
    }

    /// [`Writer::for_database`], reporting each commit to `telemetry`.
    pub fn for_database_reporting(db: &DatabaseConnection, telemetry: Arc<dyn WriteTelemetry>) -> Option<Self> {
        (db.get_database_backend() == DbBackend::Sqlite).then(|| Self::start_with(db.clone(), telemetry))
    }

    /// Spawns a writer over `db` whatever its backend (tests use it directly).
    pub fn start(db: DatabaseConnection) -> Self {
        Self::start_with(db, Arc::new(NoTelemetry))
    }

    fn start_with(db: DatabaseConnection, telemetry: Arc<dyn WriteTelemetry>) -> Self {
        let (jobs, queue) = mpsc::channel(QUEUE_DEPTH);
        let counts = Arc::new(Counts {
            committed: AtomicU64::new(0),
            together: AtomicU64::new(0),
            telemetry,
        });
        tokio::spawn(run(db, queue, counts.clone()));
        Self { jobs, counts }
    }

    /// Batches committed so far (each one commit and one fsync, whatever it carried).
    pub fn committed_batches(&self) -> u64 {
        self.counts.committed.load(Ordering::Relaxed)
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

    /// [`Writer::write_one`] for a [`Coalescable`] write: `work` is given the statement back when
    /// it runs alone.
    pub async fn write_coalescable<T, F>(&self, coalescable: Coalescable<T>, work: F) -> Result<T, DbErr>
    where
        T: Send + 'static,
        F: for<'t> FnOnce(&'t DatabaseTransaction, Statement) -> BoxFuture<'t, Result<T, DbErr>> + Send + 'static,
    {
        self.submit_coalescable(coalescable, work, |_| {}, Undo::OneStatement)
            .await
    }

    /// Requests committed by a statement list they shared with others (see [`Coalescable`]).
    pub fn written_together(&self) -> u64 {
        self.counts.together.load(Ordering::Relaxed)
    }

    /// Queues `work` for the next batch, undone by `undo` if it fails, and waits for its answer.
    pub(crate) async fn submit<T, F, S>(&self, work: F, settled: S, undo: Undo) -> Result<T, DbErr>
    where
        T: Send + 'static,
        F: for<'t> FnOnce(&'t DatabaseTransaction) -> BoxFuture<'t, Result<T, DbErr>> + Send + 'static,
        S: FnOnce(&Result<T, DbErr>) + Send + 'static,
    {
        let run = answered_by(settled, move |given| {
            Box::pin(async move {
                match given {
                    Given::Transaction(txn, _) => work(txn).await,
                    Given::Written(_) => Err(no_statement()),
                }
            })
        });
        self.enqueue(run, undo, None).await
    }

    /// [`Writer::submit`] for a [`Coalescable`] write.
    pub(crate) async fn submit_coalescable<T, F, S>(
        &self,
        coalescable: Coalescable<T>,
        work: F,
        settled: S,
        undo: Undo,
    ) -> Result<T, DbErr>
    where
        T: Send + 'static,
        F: for<'t> FnOnce(&'t DatabaseTransaction, Statement) -> BoxFuture<'t, Result<T, DbErr>> + Send + 'static,
        S: FnOnce(&Result<T, DbErr>) + Send + 'static,
    {
        let Coalescable { statement, answer } = coalescable;
        let run = answered_by(settled, move |given| {
            Box::pin(async move {
                match given {
                    Given::Transaction(txn, Some(statement)) => work(txn, statement).await,
                    Given::Transaction(_, None) => Err(no_statement()),
                    Given::Written(rows) => answer(rows).ok_or_else(|| {
                        DbErr::Custom(format!(
                            "a write sent in a list changed {rows} rows, which it does not expect"
                        ))
                    }),
                }
            })
        });
        self.enqueue(run, undo, Some(Shape::new(statement))).await
    }

    async fn enqueue<T: Send + 'static>(
        &self,
        (run, outcome): (RunWork, oneshot::Receiver<Result<T, DbErr>>),
        undo: Undo,
        shape: Option<Shape>,
    ) -> Result<T, DbErr> {
        self.jobs.send(Work { run, undo, shape }).await.map_err(|_| stopped())?;
        outcome.await.map_err(|_| stopped())?
    }
}

/// `result` wrapped into the writer's work: how it ended, and how to answer it (with `settled`
/// first) once the batch's fate is known; the receiver is where the answer arrives.
fn answered_by<T, R, S>(settled: S, result: R) -> (RunWork, oneshot::Receiver<Result<T, DbErr>>)
where
    T: Send + 'static,
    R: for<'t> FnOnce(Given<'t>) -> BoxFuture<'t, Result<T, DbErr>> + Send + 'static,
    S: FnOnce(&Result<T, DbErr>) + Send + 'static,
{
    let (reply, outcome) = oneshot::channel::<Result<T, DbErr>>();
    let run: RunWork = Box::new(move |given| {
        Box::pin(async move {
            let result = result(given).await;
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
    (run, outcome)
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

async fn run(db: DatabaseConnection, mut queue: mpsc::Receiver<Work>, counts: Arc<Counts>) {
    // Only SQLite leaves the transaction usable after a refused statement.
    let sqlite = db.get_database_backend() == DbBackend::Sqlite;
    let mut batch = Vec::with_capacity(MAX_BATCH);
    loop {
        // What an abandoned batch had not run yet goes first, in a batch of its own.
        if batch.is_empty() && queue.recv_many(&mut batch, MAX_BATCH).await == 0 {
            return;
        }
        if batch.len() == 1 {
            if commit_alone(&db, batch.pop().expect("one job")).await {
                counts.committed(1, 0);
            }
        } else {
            commit_batch(&db, &mut batch, sqlite, &counts).await;
        }
    }
}

/// Runs `job`'s work on `txn`, giving a coalescable write its statement back.
fn run_on<'t>(txn: &'t DatabaseTransaction, job: Work) -> BoxFuture<'t, Ran> {
    (job.run)(Given::Transaction(txn, job.shape.map(Shape::into_statement)))
}

/// A request that found the writer idle: its own transaction, no savepoint (two statements
/// fewer). Answers whether it committed.
async fn commit_alone(db: &DatabaseConnection, job: Work) -> bool {
    let Some(txn) = begin_logged(db).await else {
        return false;
    };
    let ran = match AssertUnwindSafe(run_on(&txn, job)).catch_unwind().await {
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
/// had not run yet are left in `batch` for the next one. A commit is counted in `counts`.
///
/// On SQLite the coalescable writes that share their text go first, in lists. The requests of
/// one batch were all sent before any of them was answered, so none waits on another: any order
/// is one they could have run in. When a statement of a list fails, nothing of the batch has
/// run its work yet: the transaction is rolled back and the whole batch runs again, each write
/// alone, in a new one (no savepoint around the lists, whose page copies cost more than a rare
/// second transaction).
async fn commit_batch(db: &DatabaseConnection, batch: &mut Vec<Work>, sqlite: bool, counts: &Counts) {
    let (lists, mut alone) = together::split(std::mem::take(batch), sqlite);
    let Some(mut txn) = begin_logged(db).await else {
        return;
    };
    let mut answers = Vec::new();
    if !lists.is_empty() {
        match together::run(&txn, lists).await {
            Ok(written) => match answer_written(written).await {
                Ok(theirs) => answers = theirs,
                Err(abandon) => {
                    abandon_batch(txn, Vec::new(), abandon).await;
                    batch.extend(alone);
                    return;
                }
            },
            Err(unlisted) => {
                if let Err(error) = txn.rollback().await {
                    tracing::error!(%error, "group commit: the rollback of a failed list failed");
                }
                alone = unlisted.into_iter().chain(alone).collect();
                let Some(again) = begin_logged(db).await else {
                    return;
                };
                txn = again;
            }
        }
    }
    let listed = answers.len();
    let mut alone = alone.into_iter();
    while let Some(job) = alone.next() {
        match run_alone(&txn, job, sqlite).await {
            Ok(answer) => answers.push(answer),
            Err(abandon) => {
                abandon_batch(txn, answers, abandon).await;
                batch.extend(alone);
                return;
            }
        }
    }
    let committed = txn.commit().await.map_err(|error| {
        tracing::error!(%error, "group commit: the batch's commit failed");
        format!("the write could not be committed: {error}")
    });
    if committed.is_ok() {
        counts.together.fetch_add(listed as u64, Ordering::Relaxed);
        counts.committed(answers.len() - listed, listed);
    }
    for answer in answers {
        answer(committed.clone());
    }
}

/// A write transaction, or `None` with the reason logged.
async fn begin_logged(db: &DatabaseConnection) -> Option<DatabaseTransaction> {
    begin_write(db)
        .await
        .inspect_err(|error| tracing::error!(%error, "group commit: cannot begin a transaction"))
        .ok()
}

/// The transaction itself is broken or holds a half-done request: nothing of this batch commits,
/// and everyone who ran (`answers`, and those who found out) is told.
async fn abandon_batch(txn: DatabaseTransaction, answers: Vec<Answer>, abandon: Abandon) {
    let Abandon {
        reason,
        answers: theirs,
    } = abandon;
    tracing::error!(%reason, "group commit: the batch is abandoned");
    if let Err(error) = txn.rollback().await {
        tracing::error!(%error, "group commit: an abandoned batch's rollback failed");
    }
    let failure = format!("the write could not be committed: {reason}");
    for answer in answers.into_iter().chain(theirs) {
        answer(Err(failure.clone()));
    }
}

/// Runs one request's work in the batch, undone by its savepoint or by itself.
async fn run_alone(txn: &DatabaseTransaction, job: Work, statements_undo_themselves: bool) -> Result<Answer, Abandon> {
    let undoes_itself = matches!(job.undo, Undo::OneStatement | Undo::Compensated);
    if undoes_itself && statements_undo_themselves {
        run_bare(txn, job).await
    } else {
        run_savepointed(txn, job).await
    }
}

/// The answers of writes whose statements ran in a list, each from its count of rows; a count a
/// write does not expect abandons the batch.
async fn answer_written(written: Vec<(Work, u64)>) -> Result<Vec<Answer>, Abandon> {
    let mut answers = Vec::with_capacity(written.len());
    let mut unexpected = false;
    for (job, rows) in written {
        match AssertUnwindSafe((job.run)(Given::Written(rows))).catch_unwind().await {
            Ok(ran) => {
                unexpected |= ran.ended != Ended::Succeeded;
                answers.push(ran.answer);
            }
            // A panicking answer answers nothing (its caller sees `stopped`).
            Err(_) => unexpected = true,
        }
    }
    if unexpected {
        return Err(Abandon {
            reason: "a write sent in a list changed rows it does not expect".to_owned(),
            answers,
        });
    }
    Ok(answers)
}

/// Why a batch cannot commit, and the answers of the requests that found out.
struct Abandon {
    reason: String,
    answers: Vec<Answer>,
}

/// Runs one request's work under its own savepoint and keeps or undoes it.
async fn run_savepointed(txn: &DatabaseTransaction, job: Work) -> Result<Answer, Abandon> {
    let savepoint = txn.begin().await.map_err(|error| Abandon {
        reason: format!("a savepoint could not begin: {error}"),
        answers: Vec::new(),
    })?;
    let (keep, answer) = match AssertUnwindSafe(run_on(&savepoint, job)).catch_unwind().await {
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
            answers: vec![answer],
        }),
    }
}

/// Runs one request's self-undoing work in the batch's transaction itself
/// ([`Undo::OneStatement`], [`Undo::Compensated`]).
async fn run_bare(txn: &DatabaseTransaction, job: Work) -> Result<Answer, Abandon> {
    match AssertUnwindSafe(run_on(txn, job)).catch_unwind().await {
        Ok(Ran {
            ended: Ended::Succeeded | Ended::Refused,
            answer,
        }) => Ok(answer),
        Ok(Ran {
            ended: Ended::Failed,
            answer,
        }) => Err(Abandon {
            reason: "a self-undoing write failed other than by a constraint".to_owned(),
            answers: vec![answer],
        }),
        Err(_) => Err(Abandon {
            reason: "a self-undoing write panicked".to_owned(),
            answers: Vec::new(),
        }),
    }
}
