//! One `svc serve` per SQLite file: a second server on the same file refuses to start (it would
//! write rows the first one keeps in memory), and a killed server leaves no claim behind. The
//! same on PostgreSQL for a server configured as its database's only one.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sea_orm::{ConnectionTrait, DbBackend, Statement};
use serde_json::json;
use svc_tests::process::ServerProcess;
use svc_tests::{Auth, Backend, ScratchDatabase, TestApp, temp_dir};

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_on_the_same_sqlite_file_is_refused_and_the_first_serves_on() {
    let dir = temp_dir("svc-sole-server");
    let first = ServerProcess::start(BINARY, &dir, &["--dev-allow-all"]);

    let mut second = Command::new(BINARY)
        .args(["serve", "--port", "0", "--dev-allow-all", "--data-dir"])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the second server");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = second.try_wait().expect("try_wait") {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the second server neither started nor gave up"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    second.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(!status.success(), "the second server must not run: {stderr}");
    assert!(stderr.contains("another `svc serve`"), "{stderr}");
    assert!(
        stderr.contains("svc.db.lock"),
        "the error names the lock file: {stderr}"
    );

    let health = reqwest::get(format!("{}/healthz", first.base)).await.unwrap();
    assert_eq!(health.status(), 200, "the first server serves on");
    drop(first);
    std::fs::remove_dir_all(dir).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_with_sigkill_leaves_the_file_to_the_next() {
    let dir = temp_dir("svc-sole-server-kill");
    let first = ServerProcess::start(BINARY, &dir, &["--dev-allow-all"]);
    first.kill();
    // A claim that outlived its server would refuse this start (no banner).
    let next = ServerProcess::start(BINARY, &dir, &["--dev-allow-all"]);
    let health = reqwest::get(format!("{}/healthz", next.base)).await.unwrap();
    assert_eq!(health.status(), 200);
    drop(next);
    std::fs::remove_dir_all(dir).ok();
}

/// PostgreSQL with `server.database_sole_server`: the server claims the database alone, so a
/// replica (which would write rows behind its memory) does not start beside it; the sole server
/// answers its own writes in its reads as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_beside_a_sole_server_on_postgres_is_refused_and_the_sole_server_serves_on() {
    let sole = |settings: &mut svc_tests::Settings| settings.server.database_sole_server = true;
    let test = "a_replica_beside_a_sole_server";
    let Some(app) = TestApp::spawn_configured(test, Backend::Postgres, Auth::DevAllowAll, sole).await else {
        return;
    };
    let mut replica = app.settings.clone();
    replica.server.database_sole_server = false;
    replica.server.data_dir = temp_dir("svc-sole-replica");
    let refused = svc::Application::build(&replica)
        .await
        .err()
        .expect("a replica beside a sole server must not start");
    let refused = refused.to_string();
    assert!(
        refused.contains("started with `server.database_sole_server`"),
        "{refused}"
    );
    std::fs::remove_dir_all(&replica.server.data_dir).ok();

    let rendered = app
        .render(
            "show an order",
            json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } } }),
            json!({ "title": "first" }),
        )
        .await;
    let session_id = rendered["sessionId"].as_str().expect("sessionId").to_owned();
    app.tool_ok("svc_get_session", json!({ "sessionId": session_id })).await;
    let update = json!({ "sessionId": session_id, "kind": "replace", "props": { "title": "second" } });
    let moved = app.tool_ok("svc_update", update.clone()).await;
    assert_eq!(
        (moved["updated"].as_bool(), moved["epoch"].as_i64()),
        (Some(true), Some(2))
    );
    let again = app.tool_ok("svc_update", update).await;
    assert_eq!(
        (again["updated"].as_bool(), again["epoch"].as_i64()),
        (Some(false), Some(2)),
        "the session read after the update is the updated one: {again}"
    );
}

/// A sole server answers session reads from memory (a change written behind its back is not
/// seen), and after its claim's connection breaks it claims the database again and forgets what
/// it kept (the change is then seen).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sole_server_reads_from_memory_and_forgets_it_when_its_claim_is_taken_again() {
    let sole = |settings: &mut svc_tests::Settings| settings.server.database_sole_server = true;
    let test = "a_sole_server_reads_from_memory";
    let Some(app) = TestApp::spawn_configured(test, Backend::Postgres, Auth::DevAllowAll, sole).await else {
        return;
    };
    let rendered = app
        .render("show a note", json!({ "propsSpec": { "type": "object" } }), json!({}))
        .await;
    let session = rendered["sessionId"].as_str().expect("sessionId").to_owned();
    let consume = json!({ "sessionId": session });
    let first = app.tool_ok("svc_consume", consume.clone()).await;
    assert!(first["client"].is_null(), "{first}");

    let admin = sea_orm::Database::connect(app.settings.server.database_url.as_str())
        .await
        .unwrap();
    admin
        .execute_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            "UPDATE sessions SET context_snapshot = $1 WHERE session_id = $2",
            [r#"{"_host":{"marker":1}}"#.into(), session.clone().into()],
        ))
        .await
        .unwrap();
    let kept = app.tool_ok("svc_consume", consume.clone()).await;
    assert!(kept["client"].is_null(), "the row kept in memory answers: {kept}");

    let holders = advisory_holders(&admin, true).await;
    assert_eq!(holders.len(), 1, "the sole server holds the claim");
    for pid in &holders {
        admin
            .execute_raw(Statement::from_sql_and_values(
                DbBackend::Postgres,
                "SELECT pg_terminate_backend($1)",
                [(*pid).into()],
            ))
            .await
            .unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let read = app.tool_ok("svc_consume", consume.clone()).await;
        if read["client"]["marker"] == 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still answered from memory after the claim was taken again: {read}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let retaken = advisory_holders(&admin, true).await;
    assert_eq!(retaken.len(), 1, "claimed again");
    assert_ne!(retaken, holders, "on a new connection");
    let _ = admin.close().await;
}

/// A sole server whose claim passes to another server while its lock connection is down (here an
/// operator ends that backend while another session waits for the key) stops with an error, so
/// it does not serve rows from memory beside a server that now writes them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sole_server_that_loses_its_postgres_claim_stops_with_an_error() {
    let dir = temp_dir("svc-sole-server-lost");
    let Some(database) = ScratchDatabase::create("a_sole_server_that_loses", Backend::Postgres, &dir).await else {
        return;
    };
    let config = dir.join("sole.toml");
    std::fs::write(&config, "[server]\ndatabase_sole_server = true\n").unwrap();
    let log = dir.join("server.log");
    let server = ServerProcess::start_logging(
        BINARY,
        &dir,
        &[
            "--dev-allow-all",
            "--database-url",
            &database.url,
            "--config",
            config.to_str().unwrap(),
        ],
        "info",
        &log,
    );

    let admin = sea_orm::Database::connect(database.url.as_str()).await.unwrap();
    let holders = advisory_holders(&admin, true).await;
    assert_eq!(holders.len(), 1, "the sole server holds the claim");
    let rival = admin.clone();
    let waiting = tokio::spawn(async move {
        rival
            .execute_raw(Statement::from_sql_and_values(
                DbBackend::Postgres,
                "SELECT pg_advisory_lock($1)",
                [svc_sql::CLAIM_KEY.into()],
            ))
            .await
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while advisory_holders(&admin, false).await.is_empty() {
        assert!(Instant::now() < deadline, "the rival never queued for the claim");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for pid in holders {
        admin
            .execute_raw(Statement::from_sql_and_values(
                DbBackend::Postgres,
                "SELECT pg_terminate_backend($1)",
                [pid.into()],
            ))
            .await
            .unwrap();
    }
    waiting.await.unwrap().unwrap();

    let status = tokio::task::spawn_blocking(move || server.exit_within(Duration::from_secs(30)))
        .await
        .unwrap()
        .expect("the server stops once its claim is lost");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(!status.success(), "a lost claim is an error exit: {logged}");
    assert!(logged.contains("lost its claim on the database"), "{logged}");
    let _ = admin.close().await;
    drop(database);
    std::fs::remove_dir_all(dir).ok();
}

/// Backends of this database holding (granted) or waiting for an advisory lock.
async fn advisory_holders(db: &sea_orm::DatabaseConnection, granted: bool) -> Vec<i32> {
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted = $1 \
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            [granted.into()],
        ))
        .await
        .unwrap();
    rows.iter().map(|row| row.try_get::<i32>("", "pid").unwrap()).collect()
}

/// MariaDB has no shared advisory lock for replicas to hold, so the setting is refused there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sole_server_setting_is_refused_on_mariadb() {
    let dir = temp_dir("svc-sole-mariadb");
    let Some(database) = ScratchDatabase::create("sole_on_mariadb", Backend::Mariadb, &dir).await else {
        return;
    };
    let mut settings = svc_tests::Settings::load(None).expect("default settings");
    settings.server.port = 0;
    settings.server.data_dir = dir.clone();
    settings.server.database_url = database.url.clone();
    settings.server.database_sole_server = true;
    let refused = svc::Application::build(&settings)
        .await
        .err()
        .expect("the setting is refused on MariaDB")
        .to_string();
    assert!(
        refused.contains("server.database_sole_server is for PostgreSQL"),
        "{refused}"
    );
    drop(database);
    std::fs::remove_dir_all(dir).ok();
}
