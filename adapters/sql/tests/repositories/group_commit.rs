//! The group-commit writer: requests that arrive while a batch is running share the next commit;
//! a request that fails rolls back its own statements only; two renders racing for one
//! handshake in one batch still consume it once; on SQLite, writes of one statement text in one
//! batch share a statement list, a refused row sends each back to run alone, and a count a write
//! does not expect commits nothing of its batch. (The server uses the writer on SQLite; it is plain transactions and savepoints, so it
//! runs on every backend here.)

use crate::support;

use std::sync::Arc;

use chrono::Utc;
use sea_orm::sea_query::{Alias, Query};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, DbErr, Statement};
use svc_application::ports::agent::{HandshakeRepository, SessionRecord, SessionRepository};
use svc_sql::agent::{SeaOrmHandshakeRepository, SeaOrmSessionRepository};
use svc_sql::{Coalescable, Writer};
use tokio::sync::oneshot;

support::backend_tests!(
    requests_queued_behind_a_batch_share_one_commit,
    a_failing_request_rolls_back_only_its_own_statements,
    a_failing_request_alone_in_its_batch_leaves_nothing,
    racing_consumes_in_one_batch_take_the_handshake_once,
    racing_cached_renders_in_one_batch_store_one_session,
    a_cached_render_refused_inside_a_batch_leaves_its_handshake_usable,
    a_cancelled_request_still_commits_and_settles,
    a_one_statement_request_refused_by_a_constraint_fails_alone,
    a_one_statement_request_failing_after_its_write_leaves_nothing_half_done,
    coalescable_writes_queued_together_share_lists,
    a_refused_row_sends_its_list_back_to_run_one_by_one,
    a_list_failing_after_another_was_written_runs_the_whole_batch_again,
    a_count_a_write_does_not_expect_commits_nothing_of_its_batch,
    queued_handshakes_and_cached_renders_are_written_together
);

async fn probe_table(db: &DatabaseConnection) {
    db.execute_unprepared("CREATE TABLE gc_probe (id BIGINT PRIMARY KEY, note VARCHAR(40) NOT NULL)")
        .await
        .unwrap();
}

async fn notes(db: &DatabaseConnection) -> Vec<i64> {
    let rows = db
        .query_all_raw(sea_orm::Statement::from_string(
            db.get_database_backend(),
            "SELECT id FROM gc_probe ORDER BY id",
        ))
        .await
        .unwrap();
    rows.iter().map(|r| r.try_get::<i64>("", "id").unwrap()).collect()
}

fn insert(id: i64) -> String {
    format!("INSERT INTO gc_probe (id, note) VALUES ({id}, 'n{id}')")
}

/// Holds the writer inside a batch until the returned sender fires, so what is sent meanwhile
/// queues for the next batch.
async fn hold_the_writer(writer: &Writer) -> (oneshot::Sender<()>, tokio::task::JoinHandle<Result<(), DbErr>>) {
    let (release, held) = oneshot::channel::<()>();
    let (started, running) = oneshot::channel::<()>();
    let blocker = writer.clone();
    let task = tokio::spawn(async move {
        blocker
            .write(move |_txn| {
                Box::pin(async move {
                    let _ = started.send(());
                    let _ = held.await;
                    Ok(())
                })
            })
            .await
    });
    running.await.unwrap();
    (release, task)
}

/// What each queued request was answered, in the order they were queued.
async fn answers<T>(queued: Vec<tokio::task::JoinHandle<Result<T, DbErr>>>) -> Vec<Result<T, DbErr>> {
    futures_util::future::join_all(queued)
        .await
        .into_iter()
        .map(|joined| joined.expect("the request's task ran to its end"))
        .collect()
}

async fn wait_until_queued(writer: &Writer, count: usize) {
    while writer.pending() < count {
        tokio::task::yield_now().await;
    }
}

async fn requests_queued_behind_a_batch_share_one_commit(db: DatabaseConnection) {
    probe_table(&db).await;
    let writer = Writer::start(db.clone());
    let (release, blocker) = hold_the_writer(&writer).await;
    let requests: Vec<_> = (1..=40)
        .map(|id| {
            let writer = writer.clone();
            tokio::spawn(async move {
                writer
                    .write(move |txn| Box::pin(async move { txn.execute_unprepared(&insert(id)).await.map(|_| id) }))
                    .await
            })
        })
        .collect();
    wait_until_queued(&writer, 40).await;
    assert!(
        notes(&db).await.is_empty(),
        "nothing is visible before its batch commits"
    );
    release.send(()).unwrap();
    blocker.await.unwrap().unwrap();
    for (index, request) in requests.into_iter().enumerate() {
        assert_eq!(request.await.unwrap().unwrap(), index as i64 + 1);
    }
    assert_eq!(notes(&db).await, (1..=40).collect::<Vec<_>>());
    assert_eq!(
        writer.committed_batches(),
        2,
        "the held batch, then one commit for the 40 queued requests"
    );
}

async fn a_failing_request_rolls_back_only_its_own_statements(db: DatabaseConnection) {
    probe_table(&db).await;
    let writer = Writer::start(db.clone());
    let (release, blocker) = hold_the_writer(&writer).await;
    let spawn_write = |statements: Vec<String>| {
        let writer = writer.clone();
        tokio::spawn(async move {
            writer
                .write(move |txn| {
                    Box::pin(async move {
                        for statement in statements {
                            txn.execute_unprepared(&statement).await?;
                        }
                        Ok(())
                    })
                })
                .await
        })
    };
    // Queued one by one, so the batch runs them in this order whatever the scheduler does.
    let before = spawn_write(vec![insert(1)]);
    wait_until_queued(&writer, 1).await;
    // Writes 2, then fails on a duplicate of 1: its 2 must not survive.
    let failing = spawn_write(vec![insert(2), insert(1)]);
    wait_until_queued(&writer, 2).await;
    let after = spawn_write(vec![insert(3)]);
    wait_until_queued(&writer, 3).await;
    release.send(()).unwrap();
    blocker.await.unwrap().unwrap();
    before.await.unwrap().unwrap();
    let refused = failing.await.unwrap().expect_err("a duplicate key fails its request");
    assert!(
        refused.to_string().to_lowercase().contains("unique") || refused.to_string().contains("Duplicate"),
        "the request sees its own error: {refused}"
    );
    after.await.unwrap().unwrap();
    assert_eq!(
        notes(&db).await,
        vec![1, 3],
        "only the failing request's statements are gone"
    );
    assert_eq!(writer.committed_batches(), 2);
}

async fn a_failing_request_alone_in_its_batch_leaves_nothing(db: DatabaseConnection) {
    probe_table(&db).await;
    let writer = Writer::start(db.clone());
    let refused = writer
        .write(|txn| {
            Box::pin(async move {
                txn.execute_unprepared(&insert(7)).await?;
                txn.execute_unprepared(&insert(7)).await.map(drop)
            })
        })
        .await;
    assert!(refused.is_err(), "the duplicate fails the request");
    assert!(notes(&db).await.is_empty(), "its first statement is rolled back too");
    writer
        .write(|txn| Box::pin(async move { txn.execute_unprepared(&insert(8)).await.map(drop) }))
        .await
        .unwrap();
    assert_eq!(notes(&db).await, vec![8], "the writer goes on");
}

/// Eight renders of handshake `hs_1` queued behind a held writer, so they share one batch: how
/// many of them `render` says won.
async fn wins_in_one_batch<F>(db: &DatabaseConnection, render: F) -> (Arc<SeaOrmHandshakeRepository>, usize, Writer)
where
    F: Fn(Arc<SeaOrmHandshakeRepository>, usize) -> futures_util::future::BoxFuture<'static, bool>,
{
    let writer = Writer::start(db.clone());
    let repository = Arc::new(SeaOrmHandshakeRepository::new(db.clone()).with_writer(Some(writer.clone())));
    repository.insert(&support::handshake("hs_1")).await.unwrap();
    let (release, blocker) = hold_the_writer(&writer).await;
    let renders: Vec<_> = (0..8).map(|n| tokio::spawn(render(repository.clone(), n))).collect();
    wait_until_queued(&writer, 8).await;
    release.send(()).unwrap();
    blocker.await.unwrap().unwrap();
    let mut won = 0;
    for render in renders {
        won += usize::from(render.await.unwrap());
    }
    (repository, won, writer)
}

async fn racing_consumes_in_one_batch_take_the_handshake_once(db: DatabaseConnection) {
    let (repository, won, _) = wins_in_one_batch(&db, |repository, _| {
        Box::pin(async move { repository.consume("hs_1", Utc::now()).await.unwrap() })
    })
    .await;
    assert_eq!(won, 1, "one render of a handshake, even inside one batch");
    let stored = repository.get("hs_1").await.unwrap().unwrap();
    assert!(stored.lifecycle.consumed_at.is_some());
}

/// Eight cache-hit renders of one handshake queued into one batch: one consumes it and stores
/// its session; the other seven store nothing (their savepoints hold only a lost consume).
async fn racing_cached_renders_in_one_batch_store_one_session(db: DatabaseConnection) {
    let (_, won, writer) = wins_in_one_batch(&db, |repository, n| {
        let session = support::session(&format!("s{n}"));
        Box::pin(async move {
            repository
                .consume_for_session("hs_1", Utc::now(), &session)
                .await
                .unwrap()
        })
    })
    .await;
    assert_eq!(won, 1, "one render of a handshake, even inside one batch");
    assert_eq!(support::count_rows(&db, "sessions").await, 1, "one session");
    assert_eq!(
        writer.written_together(),
        on_sqlite(&db, 8),
        "on SQLite the eight went in one list, the seven lost races answered by their counts"
    );
}

/// Two cache-hit renders share one batch; the session of the first is refused (its id is taken):
/// its consume is undone with it, and the second render's consume and session commit.
async fn a_cached_render_refused_inside_a_batch_leaves_its_handshake_usable(db: DatabaseConnection) {
    let writer = Writer::start(db.clone());
    let repository = Arc::new(SeaOrmHandshakeRepository::new(db.clone()).with_writer(Some(writer.clone())));
    repository.insert(&support::handshake("hs_1")).await.unwrap();
    repository.insert(&support::handshake("hs_2")).await.unwrap();
    let taken = support::session("s_taken");
    SeaOrmSessionRepository::new(db.clone()).insert(&taken).await.unwrap();
    let (release, blocker) = hold_the_writer(&writer).await;
    let render = |id: &'static str, session: SessionRecord| {
        let repository = repository.clone();
        tokio::spawn(async move { repository.consume_for_session(id, Utc::now(), &session).await })
    };
    let refused = render("hs_1", taken);
    let stored = render("hs_2", support::session("s_new"));
    wait_until_queued(&writer, 2).await;
    release.send(()).unwrap();
    blocker.await.unwrap().unwrap();
    let refused = refused.await.unwrap();
    assert!(refused.is_err(), "{refused:?}");
    assert!(
        stored.await.unwrap().unwrap(),
        "the other render of the batch won its handshake"
    );
    let usable = repository.get("hs_1").await.unwrap().unwrap();
    assert_eq!(
        usable.lifecycle.consumed_at, None,
        "the refused render's consume was undone"
    );
    assert!(
        repository
            .get("hs_2")
            .await
            .unwrap()
            .unwrap()
            .lifecycle
            .consumed_at
            .is_some()
    );
    assert_eq!(support::count_rows(&db, "sessions").await, 2, "s_taken and s_new");
}

/// A request dropped while its write waits in the queue (a cancelled tool call) still commits,
/// and what follows the commit (`settled`: forgetting a cached row) still runs, on the writer.
async fn a_cancelled_request_still_commits_and_settles(db: DatabaseConnection) {
    probe_table(&db).await;
    let writer = Writer::start(db.clone());
    let (release, blocker) = hold_the_writer(&writer).await;
    let (settled, after) = oneshot::channel::<()>();
    let queued = writer.clone();
    let request = tokio::spawn(async move {
        queued
            .write_then(
                move |txn| Box::pin(async move { txn.execute_unprepared(&insert(7)).await.map(drop) }),
                move |_| {
                    let _ = settled.send(());
                },
            )
            .await
    });
    wait_until_queued(&writer, 1).await;
    request.abort();
    assert!(request.await.unwrap_err().is_cancelled());
    release.send(()).unwrap();
    blocker.await.unwrap().unwrap();
    after.await.expect("settled ran although nobody waited");
    assert_eq!(notes(&db).await, vec![7], "the cancelled request's write committed");
}

/// Queues one write per entry of `requests` in this order behind the held writer, each a single
/// statement (`Undo::OneStatement`, through `Writer::write_one`) that then answers `Err` when its
/// flag says so.
async fn queue_one_statement_writes(
    writer: &Writer,
    requests: Vec<(i64, bool)>,
) -> Vec<tokio::task::JoinHandle<Result<i64, DbErr>>> {
    let mut queued = Vec::new();
    for (index, (id, fail_after)) in requests.into_iter().enumerate() {
        let queuing = writer.clone();
        queued.push(tokio::spawn(async move {
            queuing
                .write_one(move |txn| {
                    Box::pin(async move {
                        txn.execute_unprepared(&insert(id)).await?;
                        if fail_after {
                            return Err(DbErr::Custom("the work failed after its write".to_owned()));
                        }
                        Ok(id)
                    })
                })
                .await
        }));
        wait_until_queued(writer, index + 1).await;
    }
    queued
}

/// Without a savepoint (SQLite), a statement a unique index refused undoes itself: the request
/// sees its own error and the rest of the batch commits.
async fn a_one_statement_request_refused_by_a_constraint_fails_alone(db: DatabaseConnection) {
    probe_table(&db).await;
    let writer = Writer::start(db.clone());
    let (release, blocker) = hold_the_writer(&writer).await;
    let queued = queue_one_statement_writes(&writer, vec![(1, false), (1, false), (3, false)]).await;
    release.send(()).unwrap();
    blocker.await.unwrap().unwrap();
    let answers: Vec<_> = answers(queued).await;
    assert_eq!(answers[0].as_ref().unwrap(), &1);
    let refused = answers[1].as_ref().expect_err("the duplicate fails its request");
    assert!(
        refused.to_string().to_lowercase().contains("unique") || refused.to_string().contains("Duplicate"),
        "the request sees its own error: {refused}"
    );
    assert_eq!(answers[2].as_ref().unwrap(), &3);
    assert_eq!(notes(&db).await, vec![1, 3]);
    assert_eq!(writer.committed_batches(), 2);
}

/// A single-statement work that fails after its statement wrote broke its promise: its row must
/// not commit. On SQLite the batch is abandoned (the requests it ran are told, nothing of it
/// commits, the one it had not run yet commits in the next batch); elsewhere a savepoint undoes
/// that request alone. Either way a request answered `Ok` is stored and a request answered
/// `Err` is not, and the writer goes on.
async fn a_one_statement_request_failing_after_its_write_leaves_nothing_half_done(db: DatabaseConnection) {
    probe_table(&db).await;
    let writer = Writer::start(db.clone());
    let (release, blocker) = hold_the_writer(&writer).await;
    let queued = queue_one_statement_writes(&writer, vec![(1, false), (2, true), (3, false)]).await;
    release.send(()).unwrap();
    blocker.await.unwrap().unwrap();
    let mut acknowledged = Vec::new();
    for (id, request) in [1, 2, 3].into_iter().zip(queued) {
        match request.await.unwrap() {
            Ok(answered) => acknowledged.push(answered),
            Err(error) if id == 2 => assert!(
                error.to_string().contains("failed after its write"),
                "the failing request sees its own error: {error}"
            ),
            Err(error) => assert!(
                error.to_string().contains("could not be committed"),
                "a request of an abandoned batch is told why: {error}"
            ),
        }
    }
    assert_eq!(
        notes(&db).await,
        acknowledged,
        "exactly the acknowledged writes are stored"
    );
    let expected: Vec<i64> = if db.get_database_backend() == sea_orm::DbBackend::Sqlite {
        vec![3]
    } else {
        vec![1, 3]
    };
    assert_eq!(acknowledged, expected);
    writer
        .write_one(|txn| Box::pin(async move { txn.execute_unprepared(&insert(8)).await.map(drop) }))
        .await
        .unwrap();
    assert!(notes(&db).await.contains(&8), "the writer goes on");
}

/// `INSERT INTO gc_probe` of `id` with bound values, as the backend writes it.
fn bound_insert(backend: DbBackend, id: i64) -> Statement {
    let insert = Query::insert()
        .into_table(Alias::new("gc_probe"))
        .columns([Alias::new("id"), Alias::new("note")])
        .values_panic([id.into(), format!("n{id}").into()])
        .to_owned();
    backend.build(&insert)
}

/// Queues one coalescable insert per id, in this order, behind the held writer; each answers
/// `answer` of the rows it changed.
async fn queue_coalescable_inserts(
    writer: &Writer,
    backend: DbBackend,
    ids: &[i64],
    answer: fn(u64) -> Option<u64>,
) -> Vec<tokio::task::JoinHandle<Result<u64, DbErr>>> {
    let mut queued = Vec::new();
    for (index, id) in ids.iter().copied().enumerate() {
        let queuing = writer.clone();
        let insert = Coalescable {
            statement: bound_insert(backend, id),
            answer,
        };
        queued.push(tokio::spawn(async move {
            queuing
                .write_coalescable(insert, move |txn, statement| {
                    Box::pin(async move {
                        let rows = txn.execute_raw(statement).await?.rows_affected();
                        answer(rows).ok_or_else(|| DbErr::Custom(format!("{rows} rows")))
                    })
                })
                .await
        }));
        wait_until_queued(writer, index + 1).await;
    }
    queued
}

fn on_sqlite(db: &DatabaseConnection, count: u64) -> u64 {
    if db.get_database_backend() == DbBackend::Sqlite {
        count
    } else {
        0
    }
}

/// Twenty-three inserts of one text in one batch: on SQLite two lists of eight (the most one list
/// carries) and a list of the seven left; every request answered with its own value and every
/// row stored.
async fn coalescable_writes_queued_together_share_lists(db: DatabaseConnection) {
    probe_table(&db).await;
    let writer = Writer::start(db.clone());
    let (release, blocker) = hold_the_writer(&writer).await;
    let ids: Vec<i64> = (1..=23).collect();
    let queued = queue_coalescable_inserts(&writer, db.get_database_backend(), &ids, Some).await;
    release.send(()).unwrap();
    blocker.await.unwrap().unwrap();
    let answers: Vec<u64> = answers(queued).await.into_iter().map(Result::unwrap).collect();
    assert_eq!(answers, vec![1; 23], "each request is answered from its own count");
    assert_eq!(notes(&db).await, ids);
    assert_eq!(writer.committed_batches(), 2, "the held batch, then the twenty-three");
    assert_eq!(
        writer.written_together(),
        on_sqlite(&db, 23),
        "eight, eight and seven in lists"
    );
}

/// A duplicate among four inserts of one list: the list is undone and each runs alone, so the
/// duplicate fails with its own error and the three others are stored.
async fn a_refused_row_sends_its_list_back_to_run_one_by_one(db: DatabaseConnection) {
    probe_table(&db).await;
    let writer = Writer::start(db.clone());
    let (release, blocker) = hold_the_writer(&writer).await;
    let queued = queue_coalescable_inserts(&writer, db.get_database_backend(), &[1, 2, 2, 4], Some).await;
    release.send(()).unwrap();
    blocker.await.unwrap().unwrap();
    let answers: Vec<_> = answers(queued).await;
    let refused: Vec<_> = answers.iter().filter(|answer| answer.is_err()).collect();
    assert_eq!(refused.len(), 1, "only the duplicate fails: {answers:?}");
    let error = refused[0].as_ref().unwrap_err().to_string();
    assert!(
        error.to_lowercase().contains("unique") || error.contains("Duplicate"),
        "the duplicate sees its own error: {error}"
    );
    assert_eq!(notes(&db).await, vec![1, 2, 4]);
    assert_eq!(
        writer.written_together(),
        0,
        "nothing was answered from the undone list"
    );
    assert_eq!(writer.committed_batches(), 2);
}

/// Eighteen inserts of one text, the last two one id: two lists of eight that are written, then a
/// list of two that fails. The written lists' rows must not commit twice nor be lost: the batch
/// rolls back and runs again one by one, so ids 1 to 17 are stored once and the duplicate fails
/// alone.
async fn a_list_failing_after_another_was_written_runs_the_whole_batch_again(db: DatabaseConnection) {
    probe_table(&db).await;
    let writer = Writer::start(db.clone());
    let (release, blocker) = hold_the_writer(&writer).await;
    let ids: Vec<i64> = (1..=17).chain([17]).collect();
    let queued = queue_coalescable_inserts(&writer, db.get_database_backend(), &ids, Some).await;
    release.send(()).unwrap();
    blocker.await.unwrap().unwrap();
    let answers: Vec<_> = answers(queued).await;
    assert_eq!(
        answers.iter().filter(|answer| answer.is_err()).count(),
        1,
        "{answers:?}"
    );
    assert!(
        answers[..16]
            .iter()
            .all(|answer| answer.as_ref().is_ok_and(|rows| *rows == 1))
    );
    assert_eq!(notes(&db).await, (1..=17).collect::<Vec<i64>>());
    assert_eq!(writer.written_together(), 0, "nothing committed from a list");
    assert_eq!(writer.committed_batches(), 2);
}

/// A plain write, then two inserts sent in a list whose counts they refuse: on SQLite the list
/// ran first and cannot be undone alone, so the batch is abandoned (its two rows do not commit,
/// both are told) and the plain write, not run yet, commits in the next batch; elsewhere each
/// write runs alone and the two refusing ones fail by their own work. Either way only the plain
/// write is stored, and the writer goes on.
async fn a_count_a_write_does_not_expect_commits_nothing_of_its_batch(db: DatabaseConnection) {
    probe_table(&db).await;
    let writer = Writer::start(db.clone());
    let (release, blocker) = hold_the_writer(&writer).await;
    let plain_writer = writer.clone();
    let plain = tokio::spawn(async move {
        plain_writer
            .write(|txn| Box::pin(async move { txn.execute_unprepared(&insert(1)).await.map(drop) }))
            .await
    });
    wait_until_queued(&writer, 1).await;
    let refusing = queue_coalescable_inserts(&writer, db.get_database_backend(), &[2, 3], |_| None).await;
    release.send(()).unwrap();
    blocker.await.unwrap().unwrap();
    let plain = plain.await.unwrap();
    for answer in answers(refusing).await {
        let error = answer.expect_err("a write refusing its count is not acknowledged");
        if db.get_database_backend() == DbBackend::Sqlite {
            let error = error.to_string();
            assert!(error.contains("changed 1 rows"), "the write is told its count: {error}");
        }
    }
    plain.expect("the plain write commits");
    assert_eq!(notes(&db).await, vec![1], "the refused counts' rows are not stored");
    writer
        .write(|txn| Box::pin(async move { txn.execute_unprepared(&insert(9)).await.map(drop) }))
        .await
        .expect("the writer goes on");
}

/// Eight handshakes, then a cached render of each, queued into one batch apiece: every render wins
/// its handshake and stores its session, and on SQLite both batches went in lists.
async fn queued_handshakes_and_cached_renders_are_written_together(db: DatabaseConnection) {
    let writer = Writer::start(db.clone());
    let repository = Arc::new(SeaOrmHandshakeRepository::new(db.clone()).with_writer(Some(writer.clone())));
    let (release, blocker) = hold_the_writer(&writer).await;
    let inserts: Vec<_> = (0..8)
        .map(|n| {
            let repository = repository.clone();
            tokio::spawn(async move { repository.insert(&support::handshake(&format!("hs_{n}"))).await })
        })
        .collect();
    wait_until_queued(&writer, 8).await;
    release.send(()).unwrap();
    blocker.await.unwrap().unwrap();
    for insert in inserts {
        insert.await.unwrap().unwrap();
    }
    assert_eq!(writer.written_together(), on_sqlite(&db, 8));

    let (release, blocker) = hold_the_writer(&writer).await;
    let renders: Vec<_> = (0..8)
        .map(|n| {
            let repository = repository.clone();
            let session = support::session(&format!("s{n}"));
            tokio::spawn(async move {
                repository
                    .consume_for_session(&format!("hs_{n}"), Utc::now(), &session)
                    .await
            })
        })
        .collect();
    wait_until_queued(&writer, 8).await;
    release.send(()).unwrap();
    blocker.await.unwrap().unwrap();
    for render in renders {
        assert!(render.await.unwrap().unwrap(), "each render wins its own handshake");
    }
    assert_eq!(writer.written_together(), on_sqlite(&db, 16));
    assert_eq!(support::count_rows(&db, "sessions").await, 8);
    for n in 0..8 {
        let handshake = repository.get(&format!("hs_{n}")).await.unwrap().unwrap();
        assert!(handshake.lifecycle.consumed_at.is_some(), "hs_{n} is consumed");
    }
}
