//! `svc_sql::ReadLane`: the read paths' PostgreSQL connections held between reads (issue 18).
//! Held connections go back to the pool once reads stop, so writes get them; a held connection
//! the database closed costs no failed read; the pool still closes while the lane holds some;
//! reads that wait together share a statement, and each still gets its own row.
//! PostgreSQL only: skipped without `SVC_TEST_DATABASE_URL`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use sea_orm::DatabaseConnection;
use sea_orm::sqlx::{self, Connection};
use serde_json::json;
use svc_application::ports::agent::{EventRepository, SessionRepository};
use svc_application::ports::blueprints::{BlueprintRecord, BlueprintRepository};
use svc_application::ports::telemetry::DatabasePoolUsage;
use svc_application::services::agent::DRAIN_BOUND;
use svc_sql::agent::{SeaOrmBlueprintRepository, SeaOrmEventRepository, SeaOrmSessionRepository};
use svc_sql::testing::{Backend, ScratchDatabase};
use svc_sql::{PoolSize, ReadLane, SqlxPoolUsage};

use crate::support;

/// A migrated scratch database and a pool of `max` connections on it.
async fn database(test: &str, max: u32) -> Option<(ScratchDatabase, DatabaseConnection)> {
    let database = ScratchDatabase::create(test, Backend::Postgres, &std::env::temp_dir()).await?;
    database.connect_and_migrate().await.unwrap().close().await.unwrap();
    let pool = PoolSize {
        max_connections: Some(max),
        min_connections: None,
    };
    let db = svc_sql::connect(&database.url, pool).await.unwrap();
    Some((database, db))
}

async fn sessions_with_lane(db: &DatabaseConnection, ids: &[&str]) -> (Arc<SeaOrmSessionRepository>, ReadLane) {
    let lane = ReadLane::for_database(db).expect("a lane on PostgreSQL");
    let sessions = SeaOrmSessionRepository::new(db.clone()).with_read_lane(Some(lane.clone()));
    for id in ids {
        sessions.insert(&support::session(id)).await.unwrap();
    }
    (Arc::new(sessions), lane)
}

/// Connections of the pool nobody uses now (neither a statement nor the lane).
fn idle(db: &DatabaseConnection) -> usize {
    db.get_postgres_connection_pool().num_idle()
}

async fn wait_until<F: Fn() -> bool>(what: &str, within: Duration, done: F) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "{what} within {within:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn held_connections_go_back_to_the_pool_once_reads_stop() {
    let Some((_database, db)) = database("held_connections_go_back", 4).await else {
        return;
    };
    let (sessions, lane) = sessions_with_lane(&db, &["s1", "s2"]).await;

    // Concurrent reads take more connections than the lane keeps (half the pool).
    let reads: Vec<_> = (0..8)
        .map(|i| {
            let sessions = sessions.clone();
            tokio::spawn(async move { sessions.get(if i % 2 == 0 { "s1" } else { "s2" }).await })
        })
        .collect();
    for (i, read) in reads.into_iter().enumerate() {
        let record = read.await.unwrap().unwrap().expect("the session");
        assert_eq!(record.session_id, if i % 2 == 0 { "s1" } else { "s2" });
    }
    assert!(
        (1..=2).contains(&lane.held()),
        "the lane keeps some connections, at most half the pool's 4 (held {})",
        lane.held()
    );

    // `/metrics` counts them idle: no statement runs on them. (The reads past the lane's
    // capacity gave theirs back to the pool, which takes a moment to check them.)
    let metrics = SqlxPoolUsage::new(db.clone()).with_read_lane(Some(lane.clone()));
    wait_until(
        "every connection idle, the lane's among them",
        Duration::from_secs(5),
        || {
            let usage = metrics.usage();
            lane.held() > 0 && usage.open > 0 && usage.idle == usage.open
        },
    )
    .await;

    // Writes still have the rest of the pool meanwhile.
    sessions.insert(&support::session("s3")).await.unwrap();

    wait_until(
        "every held connection is back in the pool",
        Duration::from_secs(5),
        || lane.held() == 0,
    )
    .await;
    wait_until("the pool has them idle again", Duration::from_secs(5), || {
        idle(&db) == db.get_postgres_connection_pool().size() as usize
    })
    .await;
    assert_eq!(sessions.get("s3").await.unwrap().unwrap().session_id, "s3");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_held_connection_the_database_closed_costs_no_failed_read() {
    let Some((database, db)) = database("a_held_connection_closed", 4).await else {
        return;
    };
    let (sessions, lane) = sessions_with_lane(&db, &["s1"]).await;
    sessions.get("s1").await.unwrap().expect("the session");
    assert_eq!(lane.held(), 1);

    // End every other backend of this database, as a restart would: the held connection and
    // the pool's idle ones. (One connection of its own, which the query spares.)
    let mut admin = sqlx::PgConnection::connect(&database.url).await.unwrap();
    let ended: Vec<(bool,)> = sqlx::query_as(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    .fetch_all(&mut admin)
    .await
    .unwrap();
    assert!(!ended.is_empty(), "the lane's connection was among the backends ended");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (left,): (i64,) = sqlx::query_as(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        .fetch_one(&mut admin)
        .await
        .unwrap();
        if left == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the ended backends are gone within 5 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let record = sessions
        .get("s1")
        .await
        .expect("the read is asked again on a connection that works")
        .expect("the session");
    assert_eq!(record.session_id, "s1");
    admin.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_pool_closes_while_the_lane_holds_connections() {
    let Some((_database, db)) = database("the_pool_closes_while_held", 4).await else {
        return;
    };
    let (sessions, lane) = sessions_with_lane(&db, &["s1"]).await;
    sessions.get("s1").await.unwrap().expect("the session");
    assert_eq!(lane.held(), 1);

    // sqlx's close waits for every connection it handed out; the lane hands its back at once.
    tokio::time::timeout(Duration::from_millis(900), db.close())
        .await
        .expect("the pool closes without waiting for the lane's idle sweep")
        .unwrap();
    assert_eq!(lane.held(), 0);
}

/// Keys a shared statement carries as JSON text: quotes, backslashes, commas, braces, non-ASCII.
const AWKWARD_IDS: [&str; 6] = ["quote\"id", "back\\slash", "comma,{brace}", "'single'", "é ü 漢", "s-1"];

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reads_that_wait_together_share_a_statement_and_each_gets_its_own_row() {
    let Some((_database, db)) = database("reads_share_a_statement", 4).await else {
        return;
    };
    let lane = ReadLane::for_database(&db).expect("a lane on PostgreSQL");
    let sessions = Arc::new(SeaOrmSessionRepository::new(db.clone()).with_read_lane(Some(lane.clone())));
    let events = SeaOrmEventRepository::new(db.clone()).with_read_lane(Some(lane.clone()));
    let ids: Vec<String> = (2..40)
        .map(|i| format!("s-{i}"))
        .chain(AWKWARD_IDS.iter().map(|id| (*id).to_owned()))
        .collect();
    for (i, id) in ids.iter().enumerate() {
        let mut session = support::session(id);
        session.intent = format!("card of {id}");
        sessions.insert(&session).await.unwrap();
        // Every third session has a gesture nobody drained.
        if i % 3 == 0 {
            events.append_action(&support::gesture(id)).await.unwrap();
        }
    }
    let before = lane.reads();

    // Many more reads at once than statements of a kind may run: plain reads and reads with
    // "a gesture waits", of every session (each several times) and of sessions that do not exist.
    let reads: Vec<_> = (0..600)
        .map(|n| {
            let sessions = sessions.clone();
            let id = if n % 50 == 7 {
                format!("nul\0{n}")
            } else if n % 10 == 9 {
                format!("missing-{n}")
            } else {
                ids[n % ids.len()].clone()
            };
            let undrained_expected = ids.iter().position(|known| *known == id).map(|i| i % 3 == 0);
            tokio::spawn(async move {
                if id.contains('\0') {
                    // PostgreSQL refuses the key; the reads beside it are answered all the same.
                    assert!(sessions.get(&id).await.is_err(), "{id:?}");
                } else if n % 2 == 0 {
                    let read = sessions.get(&id).await.unwrap();
                    assert_eq!(
                        read.map(|s| s.intent),
                        undrained_expected.map(|_| format!("card of {id}"))
                    );
                } else {
                    let read = sessions.get_with_undrained(&id).await.unwrap();
                    let read = read.map(|(s, undrained)| (s.intent.clone(), undrained));
                    assert_eq!(
                        read,
                        undrained_expected.map(|waits| (format!("card of {id}"), Some(waits))),
                        "{id}"
                    );
                }
            })
        })
        .collect();
    for read in reads {
        read.await.expect("every read answers its own key");
    }

    let after = lane.reads();
    let (alone, shared) = (after.alone - before.alone, after.shared - before.shared);
    assert_eq!(alone + shared, 600, "every read counted once");
    assert!(
        shared > alone,
        "most reads shared a statement with others waiting ({shared} shared, {alone} alone)"
    );
}

/// The other kept reads shared the same way: a blueprint by id, a session's last delivery
/// (an aggregate: one row per key, empty or not) and "a gesture waits" before a drain.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn blueprints_deliveries_and_drains_shared_each_answer_their_own_key() {
    let Some((_database, db)) = database("other_reads_share", 4).await else {
        return;
    };
    let lane = ReadLane::for_database(&db).expect("a lane on PostgreSQL");
    let blueprints = Arc::new(SeaOrmBlueprintRepository::new(db.clone()).with_read_lane(Some(lane.clone())));
    let events = Arc::new(SeaOrmEventRepository::new(db.clone()).with_read_lane(Some(lane.clone())));
    let sessions = SeaOrmSessionRepository::new(db.clone()).with_read_lane(Some(lane.clone()));
    for i in 0..20 {
        let id = format!("b-{i}");
        blueprints
            .insert(&BlueprintRecord {
                blueprint_id: id.clone(),
                app_id: "app_1".into(),
                intent: "card".into(),
                variant_key: format!("variant-{i}"),
                code: format!("code of {id}"),
                generator: "builtin".into(),
                ..BlueprintRecord::blank(Utc::now())
            })
            .await
            .unwrap();
    }
    // Session q-i has i % 4 deliveries and no gesture; d-i has one gesture, drained once below.
    for i in 0..20 {
        sessions.insert(&support::session(&format!("q-{i}"))).await.unwrap();
        for _ in 0..i % 4 {
            events
                .append_stream(&format!("q-{i}"), "ticks", "append", &json!({}), false, Utc::now())
                .await
                .unwrap();
        }
        sessions.insert(&support::session(&format!("d-{i}"))).await.unwrap();
        events
            .append_action(&support::gesture(&format!("d-{i}")))
            .await
            .unwrap();
    }
    let before = lane.reads();

    let reads: Vec<_> = (0..300)
        .map(|n| {
            let (blueprints, events) = (blueprints.clone(), events.clone());
            tokio::spawn(async move {
                let i = n % 20;
                match n % 4 {
                    0 | 1 if n < 280 => {
                        let id = if n % 7 == 0 {
                            format!("no-{i}")
                        } else {
                            format!("b-{i}")
                        };
                        let read = blueprints.get(&id).await.unwrap();
                        let expected = id.starts_with("b-").then(|| format!("code of {id}"));
                        assert_eq!(read.map(|b| b.code.clone()), expected, "{id}");
                    }
                    2 => {
                        let seq = events.last_stream_seq(&format!("q-{i}")).await.unwrap();
                        assert_eq!(seq, (i % 4) as i64, "q-{i}");
                    }
                    // Sessions without a gesture: nothing to drain, asked every time.
                    3 => assert!(
                        events
                            .drain(&format!("q-{i}"), Utc::now(), DRAIN_BOUND)
                            .await
                            .unwrap()
                            .is_empty()
                    ),
                    // The last twenty: each d-i drained once, its one gesture found.
                    _ => {
                        let drained = events
                            .drain(&format!("d-{}", n - 280), Utc::now(), DRAIN_BOUND)
                            .await
                            .unwrap();
                        assert_eq!(drained.len(), 1, "d-{}", n - 280);
                    }
                }
            })
        })
        .collect();
    for read in reads {
        read.await.expect("every read answers its own key");
    }

    let after = lane.reads();
    assert!(
        after.shared > before.shared,
        "reads shared statements ({} shared, {} alone)",
        after.shared - before.shared,
        after.alone - before.alone
    );
}
