//! `svc_sql::SessionWatch`: PostgreSQL replicas keep session rows in memory, and a read on one
//! replica still sees every write another replica acknowledged before the read began (the
//! `sessions` trigger announces it; the read waits for a fence on the listening connection).
//! PostgreSQL only: skipped without `SVC_TEST_DATABASE_URL`.

use std::time::{Duration, Instant};

use chrono::Utc;
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use serde_json::json;
use svc_application::ports::agent::{EventRepository, SessionRepository};
use svc_application::services::agent::DRAIN_BOUND;
use svc_sql::agent::{SeaOrmEventRepository, SeaOrmSessionRepository};
use svc_sql::testing::{Backend, ScratchDatabase};
use svc_sql::{PoolSize, SessionWatch};

use crate::support;

/// One replica: its own pool, read cache and watch, wired as the server wires them.
struct Replica {
    db: DatabaseConnection,
    sessions: SeaOrmSessionRepository,
    events: SeaOrmEventRepository,
    watch: SessionWatch,
}

impl Replica {
    async fn start(url: &str) -> Self {
        let db = svc_sql::connect(url, PoolSize::default()).await.unwrap();
        let (cache, watch) = SessionWatch::start_for(&db, url).expect("PostgreSQL replicas keep session rows");
        Self {
            sessions: SeaOrmSessionRepository::new(db.clone()).with_read_cache(Some(cache.clone())),
            events: SeaOrmEventRepository::new(db.clone()).with_read_cache(Some(cache)),
            db,
            watch,
        }
    }

    async fn stop(self) {
        self.watch.stop().await;
        self.db.close().await.unwrap();
    }

    /// Writes a new head for `s1` with props `{ "title": title }`; the props written.
    async fn write_title(&self, title: &str) -> serde_json::Value {
        let read = self.sessions.get("s1").await.unwrap().unwrap();
        let mut head = read.head.clone();
        head.props = json!({ "title": title });
        assert!(self.sessions.save_head("s1", read.revision, &head, None).await.unwrap());
        head.props
    }
}

/// Replicas A and B on a new database of `name`, with session `s1` that B keeps in memory;
/// `None` without PostgreSQL. Hold the database while the replicas run.
async fn replicas_keeping_s1(name: &str) -> Option<(ScratchDatabase, Replica, Replica)> {
    let database = ScratchDatabase::create(name, Backend::Postgres, &std::env::temp_dir()).await?;
    database.connect_and_migrate().await.unwrap().close().await.unwrap();
    let a = Replica::start(&database.url).await;
    let b = Replica::start(&database.url).await;
    a.sessions.insert(&support::session("s1")).await.unwrap();
    until_kept(&b, &a.db).await;
    Some((database, a, b))
}

async fn execute(db: &DatabaseConnection, sql: &str) {
    db.execute_raw(Statement::from_string(db.get_database_backend(), sql))
        .await
        .unwrap();
}

/// Waits until `replica` answers `s1` from memory: a change made with the announcement turned
/// off is not seen. Leaves the row's intent as `replica` keeps it.
async fn until_kept(replica: &Replica, writer: &DatabaseConnection) {
    let deadline = Instant::now() + Duration::from_secs(10);
    for attempt in 0.. {
        let before = replica.sessions.get("s1").await.unwrap().unwrap().intent;
        execute(writer, "ALTER TABLE sessions DISABLE TRIGGER svc_session_row_changed").await;
        execute(
            writer,
            &format!("UPDATE sessions SET intent = 'unannounced {attempt}' WHERE session_id = 's1'"),
        )
        .await;
        execute(writer, "ALTER TABLE sessions ENABLE TRIGGER svc_session_row_changed").await;
        let after = replica.sessions.get("s1").await.unwrap().unwrap().intent;
        if after == before {
            // Put the stored row back to what is kept, announced, so both agree again.
            execute(
                writer,
                &format!("UPDATE sessions SET intent = '{before}' WHERE session_id = 's1'"),
            )
            .await;
            return;
        }
        assert!(Instant::now() < deadline, "the replica never answered from memory");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_answers_from_memory_and_still_sees_every_write_of_another() {
    let Some((_database, a, b)) = replicas_keeping_s1("session_watch_reads").await else {
        return;
    };

    // Each write acknowledged on A is what B reads next, at once.
    for n in 0..50 {
        let revision = a.sessions.get("s1").await.unwrap().unwrap().revision;
        let props = a.write_title(&format!("write {n}")).await;
        let seen = b.sessions.get("s1").await.unwrap().unwrap();
        assert_eq!(seen.head.props, props, "write {n}");
        assert_eq!(seen.revision, revision + 1);
    }

    // A gesture stored on A: B, which knew the session quiet, drains it.
    assert!(b.events.drain("s1", Utc::now(), DRAIN_BOUND).await.unwrap().is_empty());
    let (_, undrained) = b.sessions.get_with_undrained("s1").await.unwrap().unwrap();
    assert_eq!(undrained, Some(false), "known quiet");
    a.events.append_action(&support::gesture("s1")).await.unwrap();
    let (session, undrained) = b.sessions.get_with_undrained("s1").await.unwrap().unwrap();
    assert_eq!(session.event_sequence, 1);
    assert_ne!(undrained, Some(false), "the gesture is not hidden by the kept quiet");
    assert_eq!(b.events.drain("s1", Utc::now(), DRAIN_BOUND).await.unwrap().len(), 1);

    // Deliveries are not announced: B asks the database for the cursor every time.
    assert_eq!(b.events.last_stream_seq("s1").await.unwrap(), 0);
    let delivered = a
        .events
        .append_stream("s1", "ticks", "append", &json!({ "n": 1 }), false, Utc::now())
        .await
        .unwrap();
    assert_eq!(b.events.last_stream_seq("s1").await.unwrap(), delivered.seq);

    execute(&a.db, "DELETE FROM sessions WHERE session_id = 's1'").await;
    assert!(
        b.sessions.get("s1").await.unwrap().is_none(),
        "a deleted session is gone"
    );

    a.stop().await;
    b.stop().await;
}

/// `SELECT <what> FROM` the session watches' connections to the scratch database: how many
/// answered.
async fn on_watches(db: &DatabaseConnection, what: &str) -> usize {
    let sql = format!(
        "SELECT {what} FROM pg_stat_activity WHERE datname = current_database() \
         AND application_name = 'svc session watch'"
    );
    db.query_all_raw(Statement::from_string(db.get_database_backend(), sql))
        .await
        .unwrap()
        .len()
}

async fn watches(db: &DatabaseConnection) -> usize {
    on_watches(db, "pid").await
}

async fn until_watches(db: &DatabaseConnection, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while watches(db).await != count {
        assert!(Instant::now() < deadline, "{count} session watches never connected");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_whose_watch_lost_its_connection_misses_nothing_and_keeps_again() {
    let Some((_database, a, b)) = replicas_keeping_s1("session_watch_reconnect").await else {
        return;
    };
    until_watches(&a.db, 2).await;

    // Both watches lose their connections, and A writes while they are down: B never hears of
    // it. B reads only once its watch listens again, and must not answer the row it kept.
    let cut = on_watches(&a.db, "pg_terminate_backend(pid)").await;
    assert_eq!(cut, 2, "two watches were cut");
    let props = a.write_title("unheard").await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    until_watches(&a.db, 2).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        b.sessions.get("s1").await.unwrap().unwrap().head.props,
        props,
        "B forgot what it kept before it listened again"
    );

    // Writes and reads go on as before, and B keeps rows again.
    for n in 0..10 {
        let props = a.write_title(&format!("after {n}")).await;
        assert_eq!(
            b.sessions.get("s1").await.unwrap().unwrap().head.props,
            props,
            "write {n}"
        );
    }
    until_kept(&b, &a.db).await;

    a.stop().await;
    b.stop().await;
}

/// A sole server's pool (`svc_sql::connect_sole`) announces nothing: no replica runs beside it,
/// and an announcement serialises its write's commit. Any other connection announces.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sole_servers_writes_are_not_announced() {
    let Some(database) = ScratchDatabase::create("session_watch_sole", Backend::Postgres, &std::env::temp_dir()).await
    else {
        return;
    };
    database.connect_and_migrate().await.unwrap().close().await.unwrap();
    let mut heard = sea_orm::sqlx::postgres::PgListener::connect(&database.url)
        .await
        .unwrap();
    heard.listen("svc_session_rows").await.unwrap();
    let sole = svc_sql::connect_sole(&database.url, PoolSize::default()).await.unwrap();
    let shared = svc_sql::connect(&database.url, PoolSize::default()).await.unwrap();
    SeaOrmSessionRepository::new(shared.clone())
        .insert(&support::session("s1"))
        .await
        .unwrap();

    execute(
        &sole,
        "UPDATE sessions SET intent = 'by the sole server' WHERE session_id = 's1'",
    )
    .await;
    let quiet = tokio::time::timeout(Duration::from_millis(500), heard.recv()).await;
    assert!(quiet.is_err(), "the sole server's write was announced: {quiet:?}");

    execute(
        &shared,
        "UPDATE sessions SET intent = 'by a replica' WHERE session_id = 's1'",
    )
    .await;
    let announced = tokio::time::timeout(Duration::from_secs(5), heard.recv())
        .await
        .expect("a replica's write is announced")
        .unwrap();
    assert_eq!(announced.payload(), "s1");
    sole.close().await.unwrap();
    shared.close().await.unwrap();
}

/// A trigger disabled while a replica listens (an operator's `ALTER TABLE ... DISABLE TRIGGER`)
/// announces nothing more: the watch looks at it every few seconds, and from then on the replica
/// reads the database instead of answering rows it can no longer be told about.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_stops_answering_from_memory_once_the_trigger_is_disabled() {
    let Some((_database, a, b)) = replicas_keeping_s1("session_watch_disabled").await else {
        return;
    };
    b.sessions.get("s1").await.unwrap().unwrap();

    execute(&a.db, "ALTER TABLE sessions DISABLE TRIGGER svc_session_row_changed").await;
    // Past the watch's look at the trigger (every 5 s).
    tokio::time::sleep(Duration::from_millis(6_000)).await;
    let props = a.write_title("unannounced").await;
    assert_eq!(
        b.sessions.get("s1").await.unwrap().unwrap().head.props,
        props,
        "B read the database"
    );
    execute(&a.db, "ALTER TABLE sessions ENABLE TRIGGER svc_session_row_changed").await;
    a.stop().await;
    b.stop().await;
}
