//! Runs a repository test on every backend: SQLite always, PostgreSQL and MariaDB when asked.
//!
//! Write the test as a plain `async fn name(db: DatabaseConnection)` and list it in
//! `support::backend_tests!`:
//!
//! ```ignore
//! mod support;
//! use sea_orm::DatabaseConnection;
//!
//! support::backend_tests!(creating_an_org_writes_three_rows, two_redemptions_credit_once);
//!
//! async fn creating_an_org_writes_three_rows(db: DatabaseConnection) { /* ... */ }
//! ```
//!
//! Each listed test becomes a module with three `#[tokio::test]`s, `<name>::sqlite`,
//! `<name>::postgres` and `<name>::mariadb` (filter with `cargo test -p svc-sql mariadb`). Each
//! gets a fresh, migrated database of its own from `svc_sql::testing::ScratchDatabase` (which
//! says when the server backends run or skip) and runs on a multi-threaded runtime, so
//! concurrent tasks really race. A test that panics still gets its database removed, and then
//! fails with its own panic.

#![allow(dead_code)]

use std::future::Future;
use std::path::PathBuf;

use chrono::Utc;
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use svc_application::ports::agent::{HandshakeRecord, HostSession, NewActionEvent, SessionRecord};
use svc_domain::contract::Contract;
use svc_domain::handshake::{HandshakeAction, HandshakeLifecycle, Origin};
use svc_domain::session::SessionHead;
pub use svc_sql::testing::Backend;
use svc_sql::testing::ScratchDatabase;

macro_rules! backend_tests {
    ($($test:ident),+ $(,)?) => {
        $(
            mod $test {
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn sqlite() {
                    $crate::support::run_on(stringify!($test), $crate::support::Backend::Sqlite, super::$test).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn postgres() {
                    $crate::support::run_on(stringify!($test), $crate::support::Backend::Postgres, super::$test).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn mariadb() {
                    $crate::support::run_on(stringify!($test), $crate::support::Backend::Mariadb, super::$test).await;
                }
            }
        )+
    };
}
pub(crate) use backend_tests;

/// Runs `test` against a fresh database on `backend`, or skips when its server is not configured.
pub async fn run_on<F, Fut>(name: &str, backend: Backend, test: F)
where
    F: FnOnce(DatabaseConnection) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let dir = TempDir::new(name);
    let Some(database) = ScratchDatabase::create(name, backend, &dir.0).await else {
        return;
    };
    let db = database
        .connect_and_migrate()
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let outcome = tokio::spawn(test(db.clone())).await;
    let _ = db.close().await;
    drop(database);
    drop(dir);
    if let Err(error) = outcome {
        std::panic::resume_unwind(error.into_panic());
    }
}

/// `SELECT COUNT(*)` of a table, to check that nothing (or exactly so much) was written.
pub async fn count_rows(db: &DatabaseConnection, table: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) AS n FROM {table}");
    let row = db
        .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
        .await
        .unwrap_or_else(|e| panic!("count {table}: {e}"))
        .expect("COUNT(*) returns a row");
    row.try_get::<i64>("", "n")
        .unwrap_or_else(|e| panic!("count {table}: {e}"))
}

/// A directory removed on drop, even when the test panicked.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("svc-sql-test-{name}-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Rolls back the migration `name` and every later one, so a test can write the rows that
/// migration meets and then migrate up again.
pub async fn roll_back_through(db: &DatabaseConnection, name: &str) {
    use sea_orm_migration::MigratorTrait;
    let migrations = svc_sql::Migrator::migrations();
    let from_the_end = migrations
        .iter()
        .rev()
        .position(|m| m.name() == name)
        .unwrap_or_else(|| panic!("no migration named {name}"));
    svc_sql::Migrator::down(db, Some(from_the_end as u32 + 1))
        .await
        .unwrap();
}

/// A pending handshake of app `app` with an empty contract, as `svc_handshake` would store it.
pub fn handshake(id: &str) -> HandshakeRecord {
    HandshakeRecord {
        handshake_id: id.to_owned(),
        app_id: "app".to_owned(),
        intent: "show a chart".to_owned(),
        contract: Contract::try_from(serde_json::json!({})).unwrap(),
        variance: serde_json::json!({}),
        generator: None,
        origin: Origin::Agent,
        action: HandshakeAction::parse("create").unwrap(),
        blueprint_id: "bp_1".to_owned(),
        cache: None,
        lifecycle: HandshakeLifecycle {
            created_at: Utc::now(),
            consumed_at: None,
        },
    }
}

/// A rendered session of app `app_1`, as a render would store it.
pub fn session(id: &str) -> SessionRecord {
    let now = Utc::now();
    SessionRecord {
        session_id: id.into(),
        app_id: "app_1".into(),
        intent: "card".into(),
        blueprint_id: None,
        contract: Contract::default(),
        theme_id: None,
        head: SessionHead::rendered(serde_json::json!({ "title": "first" }), 3600, now),
        failure: None,
        host: HostSession::default(),
        context_snapshot: serde_json::json!({}),
        event_sequence: 0,
        created_at: now,
        revision: 0,
    }
}

/// A session with every optional column set and every other one away from its default.
pub fn full_session(id: &str) -> SessionRecord {
    let mut full = session(id);
    full.blueprint_id = Some("bp_7".into());
    full.contract =
        Contract::try_from(serde_json::json!({ "propsSpec": { "type": "object" }, "title": "full" })).unwrap();
    full.theme_id = Some("midnight".into());
    full.head.status = svc_domain::session::SessionStatus::Failed;
    full.head.epoch = 4;
    full.head.ttl_seconds = 7_200;
    full.failure = Some(svc_application::ports::agent::RenderFailure {
        code: "GENERATION_FAILED".into(),
        message: "the model gave up".into(),
    });
    full.host = HostSession {
        host_name: Some("claude".into()),
        host_session_id: Some("conversation-9".into()),
    };
    full.context_snapshot = serde_json::json!({ "slot": ["a", 1, null] });
    full.event_sequence = 12;
    full.revision = 3;
    full.created_at = Utc::now() - chrono::Duration::days(2);
    full
}

/// Panics unless `read` is `written` as a database gives it back: every column equal, times to
/// the microsecond (SQLite keeps more, PostgreSQL and MariaDB exactly that).
pub fn assert_stored_as_written(read: &SessionRecord, written: &SessionRecord) {
    let micros = |t: chrono::DateTime<Utc>| t.timestamp_micros();
    assert_eq!(micros(read.created_at), micros(written.created_at));
    assert_eq!(
        micros(read.head.last_activity_at),
        micros(written.head.last_activity_at)
    );
    let mut expected = written.clone();
    expected.created_at = read.created_at;
    expected.head.last_activity_at = read.head.last_activity_at;
    assert_eq!(read, &expected, "{} reads back as written", written.session_id);
}

/// An `approve` gesture of a session, stored now.
pub fn gesture(session_id: &str) -> NewActionEvent {
    NewActionEvent {
        session_id: session_id.into(),
        client_seq: None,
        intent: "approve".into(),
        action_data: serde_json::json!({}),
        ui_context: serde_json::json!({}),
        fired_at: Utc::now(),
    }
}

/// Takes `gate`'s one slot until the returned sender is dropped or sent to.
pub async fn hold_the_slot(gate: &svc_application::services::cpu_gate::CpuGate) -> std::sync::mpsc::Sender<()> {
    let (release, released) = std::sync::mpsc::channel::<()>();
    let (taken, slot_taken) = tokio::sync::oneshot::channel();
    let holder = gate.clone();
    tokio::spawn(async move {
        holder
            .run(move || {
                let _ = taken.send(());
                let _ = released.recv_timeout(std::time::Duration::from_secs(30));
            })
            .await
    });
    slot_taken.await.expect("the slot is taken");
    release
}
