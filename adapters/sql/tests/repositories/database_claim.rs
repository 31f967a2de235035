//! Claims on a PostgreSQL database (`svc_sql::DatabaseClaim`): replicas share it, a sole server
//! holds it alone, and a claim whose connection breaks is taken again or reported lost. Each
//! "server" here is a pool of its own on one scratch database. PostgreSQL only: skipped without
//! `SVC_TEST_DATABASE_URL`, like the other PostgreSQL variants.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use svc_sql::testing::{Backend, ScratchDatabase};
use svc_sql::{CLAIM_KEY, ClaimMode, ConnectError, DatabaseClaim};

const NOW: Duration = Duration::ZERO;

async fn scratch(test: &str) -> Option<ScratchDatabase> {
    ScratchDatabase::create(test, Backend::Postgres, &std::env::temp_dir()).await
}

async fn server(database: &ScratchDatabase) -> DatabaseConnection {
    database.connect_and_migrate().await.unwrap()
}

/// The backends holding the claim key in this database, granted or waiting.
async fn claim_holders(db: &DatabaseConnection, granted: bool) -> Vec<i32> {
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted = $1 \
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            [granted.into()],
        ))
        .await
        .unwrap();
    rows.iter().map(|row| row.try_get::<i32>("", "pid").unwrap()).collect()
}

async fn end_backends(db: &DatabaseConnection, pids: &[i32]) {
    for pid in pids {
        db.execute_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            "SELECT pg_terminate_backend($1)",
            [(*pid).into()],
        ))
        .await
        .unwrap();
    }
}

async fn wait_until<F: Fn() -> bool>(what: &str, within: Duration, done: F) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "{what} within {within:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_share_the_claim_and_a_sole_server_holds_it_alone() {
    let Some(database) = scratch("replicas_share_the_claim").await else {
        return;
    };
    let (a, b, c) = (
        server(&database).await,
        server(&database).await,
        server(&database).await,
    );

    let first = DatabaseClaim::take(&a, ClaimMode::Shared, NOW).await.unwrap().unwrap();
    let second = DatabaseClaim::take(&b, ClaimMode::Shared, NOW).await.unwrap().unwrap();
    let refused = DatabaseClaim::take(&c, ClaimMode::Sole, Duration::from_millis(150))
        .await
        .err()
        .expect("a sole server beside replicas is refused");
    assert!(matches!(refused, ConnectError::Claimed { sole: true }), "{refused}");
    assert!(refused.to_string().contains("server.database_sole_server"), "{refused}");

    drop((first, second));
    // Waits for the replicas' connections to close, as a successor waits for a server stopping.
    let sole = DatabaseClaim::take(&c, ClaimMode::Sole, Duration::from_secs(5))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(sole.mode(), ClaimMode::Sole);
    let refused = DatabaseClaim::take(&a, ClaimMode::Shared, Duration::from_millis(150))
        .await
        .err()
        .expect("a replica beside a sole server is refused");
    assert!(matches!(refused, ConnectError::Claimed { sole: false }), "{refused}");
    let refused = DatabaseClaim::take(&b, ClaimMode::Sole, NOW)
        .await
        .err()
        .expect("one sole server");
    assert!(matches!(refused, ConnectError::Claimed { sole: true }), "{refused}");
    assert_eq!(
        claim_holders(&a, true).await.len(),
        1,
        "only the sole server's connection holds it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_claim_whose_connection_ends_is_taken_again_and_kept_rows_forgotten() {
    let Some(database) = scratch("a_claim_whose_connection_ends").await else {
        return;
    };
    let (a, b) = (server(&database).await, server(&database).await);
    let claim = DatabaseClaim::take(&a, ClaimMode::Sole, NOW).await.unwrap().unwrap();
    let forgotten = Arc::new(AtomicUsize::new(0));
    let counted = forgotten.clone();
    claim.when_retaken(move || {
        counted.fetch_add(1, Ordering::SeqCst);
    });
    let lost = claim.lost();
    tokio::pin!(lost);

    let holders = claim_holders(&b, true).await;
    assert_eq!(holders.len(), 1);
    end_backends(&b, &holders).await;
    wait_until("the claim taken again", Duration::from_secs(5), || {
        forgotten.load(Ordering::SeqCst) == 1
    })
    .await;
    let now_held_by = claim_holders(&b, true).await;
    assert_eq!(now_held_by.len(), 1);
    assert_ne!(now_held_by, holders, "held on a new connection");
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut lost)
            .await
            .is_err(),
        "a claim taken again is not lost"
    );
    let refused = DatabaseClaim::take(&b, ClaimMode::Sole, NOW).await.err();
    assert!(matches!(refused, Some(ConnectError::Claimed { sole: true })));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_claim_another_server_took_while_its_connection_was_down_is_lost() {
    let Some(database) = scratch("a_claim_another_server_took").await else {
        return;
    };
    let (a, b) = (server(&database).await, server(&database).await);
    let claim = DatabaseClaim::take(&a, ClaimMode::Sole, NOW).await.unwrap().unwrap();
    let holders = claim_holders(&b, true).await;

    // Another server asks for the key and waits in PostgreSQL's queue: it gets the lock the
    // moment the holder's backend ends, before the watchdog can notice.
    let rival = b.clone();
    let waiting = tokio::spawn(async move {
        rival
            .execute_raw(Statement::from_sql_and_values(
                rival.get_database_backend(),
                "SELECT pg_advisory_lock($1)",
                [CLAIM_KEY.into()],
            ))
            .await
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    while claim_holders(&b, false).await.is_empty() {
        assert!(Instant::now() < deadline, "the rival never queued");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    end_backends(&b, &holders).await;
    waiting.await.unwrap().unwrap();

    tokio::time::timeout(Duration::from_secs(15), claim.lost())
        .await
        .expect("the claim is reported lost");
}
