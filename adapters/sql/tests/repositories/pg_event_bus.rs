//! `svc_sql::PgEventBus`: a replica whose listener lost its connection LISTENs again and tells
//! this replica's caches that announcements were missed (`LiveEvent::MissedEvents`), then hears
//! the other replicas again. PostgreSQL only: skipped without `SVC_TEST_DATABASE_URL`.

use std::sync::Arc;
use std::time::Duration;

use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use svc_application::ports::agent::{BLUEPRINT_CHANGES_TOPIC, EventBus, KEY_REVOCATIONS_TOPIC, LiveEvent, Published};
use svc_application::testing::{LocalBus, ManualClock};
use svc_sql::testing::{Backend, ScratchDatabase};
use svc_sql::{PgEventBus, PoolSize};
use tokio::sync::broadcast;

async fn replica(db: &DatabaseConnection, origin: &str) -> (PgEventBus, Arc<LocalBus>, svc_sql::PgBusTasks) {
    let local = Arc::new(LocalBus::default());
    let (bus, tasks) = PgEventBus::start(db, local.clone(), origin.to_owned(), Arc::new(ManualClock::default()))
        .await
        .unwrap();
    (bus, local, tasks)
}

async fn next(heard: &mut broadcast::Receiver<Published>, what: &str) -> LiveEvent {
    match tokio::time::timeout(Duration::from_secs(10), heard.recv()).await {
        Ok(Ok(published)) => published.event().clone(),
        other => panic!("{what}: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_that_lost_its_connection_says_so_and_hears_again() {
    let Some(database) = ScratchDatabase::create("pg_bus_reconnect", Backend::Postgres, &std::env::temp_dir()).await
    else {
        return;
    };
    database.connect_and_migrate().await.unwrap().close().await.unwrap();
    let db = svc_sql::connect(&database.url, PoolSize::default()).await.unwrap();
    let (a, _, a_tasks) = replica(&db, "a").await;
    let (_b, b_local, b_tasks) = replica(&db, "b").await;
    let mut b_blueprints = b_local.subscribe(BLUEPRINT_CHANGES_TOPIC);
    let mut b_keys = b_local.subscribe(KEY_REVOCATIONS_TOPIC);

    a.publish(LiveEvent::BlueprintsChanged);
    assert_eq!(next(&mut b_blueprints, "B hears A").await, LiveEvent::BlueprintsChanged);

    // Both listeners of this scratch database lose their connections (as in a database
    // restart or a proxy's idle cut); each reconnects by itself.
    let cut = db
        .query_all_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND query ILIKE 'LISTEN %' AND pid <> pg_backend_pid()",
        ))
        .await
        .unwrap();
    assert_eq!(cut.len(), 2, "two listeners were cut");
    assert_eq!(
        next(&mut b_blueprints, "B says it missed events").await,
        LiveEvent::MissedEvents
    );
    assert_eq!(
        next(&mut b_keys, "the authentication cache hears it too").await,
        LiveEvent::MissedEvents
    );

    // B LISTENs again: A's next announcement arrives.
    a.publish(LiveEvent::KeyRevoked { key_id: "k1".into() });
    assert_eq!(
        next(&mut b_keys, "B hears A after the reconnect").await,
        LiveEvent::KeyRevoked { key_id: "k1".into() }
    );
    a_tasks.stop().await;
    b_tasks.stop().await;
    db.close().await.unwrap();
}
