//! The one-default-app rule in the database: migration 000006 keeps the oldest of duplicate
//! defaults (left by the race it closes), and afterwards a second default cannot be written;
//! deleting the default promotes the oldest remaining app with no moment of "no default" between.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::support;

use chrono::{TimeDelta, Utc};
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use sea_orm_migration::MigratorTrait;
use svc_application::ports::agent::{AppRecord, AppRepository};
use svc_sql::Migrator;
use svc_sql::agent::SeaOrmAppRepository;

support::backend_tests!(
    duplicate_defaults_keep_the_oldest_and_cannot_come_back,
    deleting_the_default_promotes_the_oldest_with_no_moment_of_none
);

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

/// Rounds of the race below: each reader between the delete and the promotion of the old code
/// saw no default and created a fresh "My app"; one round in a few lost it.
const DELETE_ROUNDS: usize = 30;

fn app_record(app_id: &str, owner: &str, age_seconds: i64) -> AppRecord {
    let at = Utc::now() - TimeDelta::seconds(age_seconds);
    AppRecord {
        app_id: app_id.to_owned(),
        owner_id: owner.to_owned(),
        display_name: app_id.to_owned(),
        system_prompt: None,
        created_at: at,
        updated_at: at,
    }
}

async fn deleting_the_default_promotes_the_oldest_with_no_moment_of_none(db: DatabaseConnection) {
    let repo = SeaOrmAppRepository::new(db.clone());
    let minted = || format!("minted-{}", uuid::Uuid::new_v4().simple());
    for round in 0..DELETE_ROUNDS {
        let owner = format!("owner-{round}");
        let [first, second, third] = ["first", "second", "third"].map(|a| format!("{a}-{round}"));
        for (age, id) in [(30, &first), (20, &second), (10, &third)] {
            repo.insert(&app_record(id, &owner, age)).await.unwrap();
        }
        assert!(repo.set_default(&owner, &first).await.unwrap());

        // Readers with caches of their own, so each lookup reads the database.
        let done = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..3)
            .map(|_| {
                let (db, owner, done) = (db.clone(), owner.clone(), Arc::clone(&done));
                tokio::spawn(async move {
                    let mut seen = Vec::new();
                    while !done.load(Ordering::Relaxed) {
                        let reader = SeaOrmAppRepository::new(db.clone());
                        let mint = || format!("minted-{}", uuid::Uuid::new_v4().simple());
                        let found = reader.default_app(&owner, &mint, Utc::now()).await.unwrap();
                        seen.push(found.app_id.clone());
                    }
                    seen
                })
            })
            .collect();
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        repo.delete(&owner, &first).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        done.store(true, Ordering::Relaxed);
        for reader in readers {
            for seen in reader.await.unwrap() {
                assert!(
                    seen == first || seen == second,
                    "round {round}: a lookup saw {seen}, neither the deleted default nor the promoted one"
                );
            }
        }
        let left: Vec<String> = repo
            .list_by_owner(&owner)
            .await
            .unwrap()
            .into_iter()
            .map(|a| a.app_id)
            .collect();
        assert_eq!(
            left,
            [second.clone(), third.clone()],
            "round {round}: no app was created"
        );
        let default = repo.default_app(&owner, &minted, Utc::now()).await.unwrap();
        assert_eq!(
            default.app_id, second,
            "round {round}: the oldest remaining app is the default"
        );
    }
}
