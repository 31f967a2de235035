//! The one-default-app rule in the database: migration 000006 keeps the oldest of duplicate
//! defaults (left by the race it closes), and afterwards a second default cannot be written.

use crate::support;

use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use sea_orm_migration::MigratorTrait;
use svc_sql::Migrator;

support::backend_tests!(duplicate_defaults_keep_the_oldest_and_cannot_come_back);

async fn exec(db: &DatabaseConnection, sql: &str) -> Result<(), sea_orm::DbErr> {
    db.execute_raw(Statement::from_string(db.get_database_backend(), sql.to_owned()))
        .await
        .map(drop)
}

fn insert_app(app_id: &str, owner: &str, is_default: bool, created_at: &str) -> String {
    format!(
        "INSERT INTO apps (app_id, owner_id, display_name, is_default, created_at, updated_at) \
         VALUES ('{app_id}', '{owner}', 'My app', {is_default}, '{created_at}', '{created_at}')"
    )
}

async fn defaults_of(db: &DatabaseConnection, owner: &str) -> Vec<String> {
    let sql = format!("SELECT app_id FROM apps WHERE owner_id = '{owner}' AND is_default ORDER BY app_id");
    db.query_all_raw(Statement::from_string(db.get_database_backend(), sql))
        .await
        .unwrap()
        .iter()
        .map(|row| row.try_get_by_index::<String>(0).unwrap())
        .collect()
}

async fn duplicate_defaults_keep_the_oldest_and_cannot_come_back(db: DatabaseConnection) {
    support::roll_back_through(&db, "m20261126_000006_one_default_app").await;
    for (app, owner, created) in [
        ("later", "racer", "2026-01-01 00:00:02"),
        ("oldest", "racer", "2026-01-01 00:00:01"),
        ("tie-b", "racer", "2026-01-01 00:00:02"),
        ("alone", "calm", "2026-01-01 00:00:05"),
    ] {
        exec(&db, &insert_app(app, owner, true, created)).await.unwrap();
    }
    Migrator::up(&db, None).await.unwrap();
    assert_eq!(defaults_of(&db, "racer").await, ["oldest"]);
    assert_eq!(defaults_of(&db, "calm").await, ["alone"]);
    assert_eq!(
        support::count_rows(&db, "apps").await,
        4,
        "no app is lost, only demoted"
    );

    let second = exec(&db, &insert_app("another", "calm", true, "2026-01-02 00:00:00")).await;
    assert!(second.is_err(), "a second default of one owner is refused");
    exec(&db, &insert_app("plain", "calm", false, "2026-01-02 00:00:00"))
        .await
        .unwrap();
}
