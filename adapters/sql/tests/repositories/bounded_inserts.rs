//! Inserts bounded by a count (blueprints per app, apps per owner) on every backend: of writers
//! racing at the bound, exactly as many get in as there is room for, whatever their number, and
//! another app's or owner's room is its own; a deleted app's guard row goes with it.

use std::sync::Arc;

use crate::support;

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use serde_json::json;
use svc_application::ports::BoundedInsert;
use svc_application::ports::agent::{AppRecord, AppRepository};
use svc_application::ports::blueprints::{BlueprintRecord, BlueprintRepository};
use svc_sql::agent::{SeaOrmAppRepository, SeaOrmBlueprintRepository};
use tokio::sync::Barrier;

support::backend_tests!(
    racing_blueprint_inserts_never_pass_the_bound,
    racing_app_creations_never_pass_the_bound,
    racing_org_creations_never_pass_the_bound_of_owned_orgs,
    deleting_an_app_deletes_the_guard_of_its_blueprints
);

/// Rows already stored, the bound, and how many writers race for the rest of the room.
const STORED: u64 = 3;
const MAX: u64 = 5;
const RACERS: usize = 16;

fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-23T10:00:00Z").unwrap().to_utc()
}

fn blueprint(id: &str, app: &str) -> BlueprintRecord {
    BlueprintRecord {
        blueprint_id: id.into(),
        app_id: app.into(),
        intent: id.into(),
        contract_hash: "hash-a".into(),
        variant_key: "variant-0".into(),
        contract: json!({}).try_into().unwrap(),
        code: "export default () => null;".into(),
        generator: "user".into(),
        ..BlueprintRecord::blank(t0())
    }
}

fn app(id: &str, owner: &str, minute: i64) -> AppRecord {
    AppRecord::new(id.into(), owner.into(), None, t0() + TimeDelta::minutes(minute)).unwrap()
}

/// Runs `RACERS` copies of `attempt` released together; how many were inserted, and the counts
/// the refused ones saw.
async fn race<F, Fut>(attempt: F) -> (usize, Vec<u64>)
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = BoundedInsert> + Send + 'static,
{
    let start = Arc::new(Barrier::new(RACERS));
    let tasks: Vec<_> = (0..RACERS)
        .map(|i| {
            let start = start.clone();
            let attempt = attempt(i);
            tokio::spawn(async move {
                start.wait().await;
                attempt.await
            })
        })
        .collect();
    let mut inserted = 0;
    let mut refused = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            BoundedInsert::Inserted => inserted += 1,
            BoundedInsert::Full { stored } => refused.push(stored),
        }
    }
    (inserted, refused)
}

async fn racing_blueprint_inserts_never_pass_the_bound(db: DatabaseConnection) {
    let repo = Arc::new(SeaOrmBlueprintRepository::new(db.clone()));
    for i in 0..STORED {
        repo.insert(&blueprint(&format!("stored-{i}"), "app1")).await.unwrap();
    }
    repo.insert(&blueprint("elsewhere", "app2")).await.unwrap();
    let (inserted, refused) = race(|i| {
        let repo = repo.clone();
        async move {
            repo.insert_bounded(&blueprint(&format!("racer-{i}"), "app1"), MAX)
                .await
                .unwrap()
        }
    })
    .await;
    assert_eq!(inserted as u64, MAX - STORED, "exactly the room left is filled");
    assert!(
        refused.iter().all(|stored| *stored == MAX),
        "each refusal saw the full app: {refused:?}"
    );
    assert_eq!(repo.count_in_app("app1").await.unwrap(), MAX);
    // Another app's room is its own.
    let other = repo.insert_bounded(&blueprint("second", "app2"), 2).await.unwrap();
    assert_eq!(other, BoundedInsert::Inserted);
    assert_eq!(
        repo.insert_bounded(&blueprint("third", "app2"), 2).await.unwrap(),
        BoundedInsert::Full { stored: 2 }
    );
}

async fn racing_app_creations_never_pass_the_bound(db: DatabaseConnection) {
    let repo = Arc::new(SeaOrmAppRepository::new(db.clone()));
    for i in 0..STORED {
        repo.insert(&app(&format!("stored{i}"), "owner", i as i64))
            .await
            .unwrap();
    }
    let (inserted, refused) = race(|i| {
        let repo = repo.clone();
        async move {
            repo.insert_bounded(&app(&format!("racer{i}"), "owner", 10 + i as i64), MAX)
                .await
                .unwrap()
        }
    })
    .await;
    assert_eq!(inserted as u64, MAX - STORED, "exactly the room left is filled");
    assert!(
        refused.iter().all(|stored| *stored == MAX),
        "each refusal saw the full owner: {refused:?}"
    );
    assert_eq!(repo.list_by_owner("owner").await.unwrap().len() as u64, MAX);
    assert_eq!(
        repo.insert_bounded(&app("another", "someone else", 0), MAX)
            .await
            .unwrap(),
        BoundedInsert::Inserted
    );
}

/// Orgs an account owns (hosted `orgs_per_account`): memberships of other roles do not count,
/// and another account's room is its own.
async fn racing_org_creations_never_pass_the_bound_of_owned_orgs(db: DatabaseConnection) {
    use svc_application::ports::operator::OrgRepository;
    use svc_domain::org::Org;
    use svc_sql::operator::SeaOrmOrgRepository;

    let repo = Arc::new(SeaOrmOrgRepository::new(db.clone()));
    let org = |id: &str, owner: &str| Org::create(id.into(), "Acme", owner.into(), t0()).unwrap();
    for i in 0..STORED {
        repo.create(&org(&format!("stored{i}"), "owner")).await.unwrap();
    }
    // A membership that is not ownership (the owner joined someone else's org as a member).
    repo.create(&org("theirs", "someone else")).await.unwrap();
    db.execute_unprepared(
        "INSERT INTO org_memberships (org_id, user_id, role, joined_at) \
         SELECT org_id, 'owner', 'member', joined_at FROM org_memberships WHERE org_id = 'theirs'",
    )
    .await
    .unwrap();
    let (inserted, refused) = race(|i| {
        let repo = repo.clone();
        let new_org = org(&format!("racer{i}"), "owner");
        async move { repo.create_bounded(&new_org, MAX).await.unwrap() }
    })
    .await;
    assert_eq!(inserted as u64, MAX - STORED, "exactly the room left is filled");
    assert!(
        refused.iter().all(|stored| *stored == MAX),
        "each refusal saw the full account: {refused:?}"
    );
    assert_eq!(
        repo.list_memberships_of_user("owner").await.unwrap().len() as u64,
        MAX + 1,
        "the member's org is listed but not counted"
    );
    assert_eq!(
        repo.create_bounded(&org("another", "someone else"), 2).await.unwrap(),
        BoundedInsert::Inserted
    );
}

/// The apps holding a blueprints guard row.
async fn guarded_apps(db: &DatabaseConnection) -> Vec<String> {
    let sql = "SELECT holder FROM write_guards WHERE scope = 'blueprints' ORDER BY holder";
    db.query_all_raw(Statement::from_string(db.get_database_backend(), sql.to_owned()))
        .await
        .unwrap()
        .iter()
        .map(|row| row.try_get_by_index::<String>(0).unwrap())
        .collect()
}

async fn deleting_an_app_deletes_the_guard_of_its_blueprints(db: DatabaseConnection) {
    let apps = SeaOrmAppRepository::new(db.clone());
    let blueprints = SeaOrmBlueprintRepository::new(db.clone());
    for (i, id) in ["gone", "kept"].into_iter().enumerate() {
        apps.insert(&app(id, "owner", i as i64)).await.unwrap();
        let inserted = blueprints
            .insert_bounded(&blueprint(&format!("bp-{id}"), id), MAX)
            .await
            .unwrap();
        assert_eq!(inserted, BoundedInsert::Inserted);
    }
    assert_eq!(guarded_apps(&db).await, ["gone", "kept"]);
    // Another owner's delete of the app deletes nothing, its guard included.
    apps.delete("someone else", "gone").await.unwrap();
    assert_eq!(guarded_apps(&db).await, ["gone", "kept"]);
    apps.delete("owner", "gone").await.unwrap();
    assert_eq!(guarded_apps(&db).await, ["kept"], "the deleted app's row went with it");
}
