//! A stored column the domain cannot read (written by hand, by another tool, by an older build)
//! is `RepositoryError::Corrupt` naming `table.column`, on every backend: never a storage outage,
//! and never silently read as some default. (A contract that is not an object: agent_blueprints.)

use crate::support;

use chrono::{DateTime, TimeZone, Utc};
use sea_orm::{ConnectionTrait, DatabaseConnection};
use serde_json::json;
use svc_application::ports::RepositoryError;
use svc_application::ports::blueprints::{BlueprintRecord, BlueprintRepository};
use svc_application::ports::operator::ConnectorKeyRepository;
use svc_domain::connector_key::{ConnectorKey, ConnectorKeyDraft};
use svc_sql::ReadLane;
use svc_sql::agent::SeaOrmBlueprintRepository;
use svc_sql::operator::SeaOrmConnectorKeyRepository;

support::backend_tests!(
    an_unknown_blueprint_source_kind_is_corrupt_not_llm,
    a_json_column_that_is_not_json_is_corrupt,
    an_unknown_connector_key_status_is_corrupt,
);

fn at() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap()
}

fn blueprint(id: &str) -> BlueprintRecord {
    BlueprintRecord {
        blueprint_id: id.into(),
        app_id: "app1".into(),
        intent: "task card".into(),
        contract_hash: "h1".into(),
        variant_key: "variant-0".into(),
        contract: json!({ "propsSpec": { "type": "object" } }).try_into().unwrap(),
        variance: json!({}),
        source: "export default function C() { return null }".into(),
        code: "export default function C() { return null; }".into(),
        code_hash: "c0de".into(),
        generator: "builtin".into(),
        ..BlueprintRecord::blank(at())
    }
}

/// Writes `value` into `table.column` of the row `key_column = id`, behind the repository's back.
async fn overwrite(db: &DatabaseConnection, table: &str, column: &str, value: &str, key_column: &str, id: &str) {
    let sql = format!("UPDATE {table} SET {column} = '{value}' WHERE {key_column} = '{id}'");
    let done = db.execute_unprepared(&sql).await.unwrap();
    assert_eq!(done.rows_affected(), 1);
}

fn assert_corrupt<T: std::fmt::Debug>(read: Result<T, RepositoryError>, expected: &str) {
    match read {
        Err(RepositoryError::Corrupt { column, reason }) => {
            assert_eq!(column, expected, "{reason}");
            assert!(!reason.is_empty());
        }
        other => panic!("{expected} should read as Corrupt, got {other:?}"),
    }
}

async fn an_unknown_blueprint_source_kind_is_corrupt_not_llm(db: DatabaseConnection) {
    let repo = SeaOrmBlueprintRepository::new(db.clone()).with_read_lane(ReadLane::for_database(&db));
    repo.insert(&blueprint("bp1")).await.unwrap();
    assert!(repo.get("bp1").await.unwrap().is_some(), "readable as written");
    overwrite(&db, "blueprints", "source_kind", "alien", "blueprint_id", "bp1").await;
    assert_corrupt(repo.get("bp1").await, "blueprints.source_kind");
}

async fn a_json_column_that_is_not_json_is_corrupt(db: DatabaseConnection) {
    let repo = SeaOrmBlueprintRepository::new(db.clone()).with_read_lane(ReadLane::for_database(&db));
    repo.insert(&blueprint("bp1")).await.unwrap();
    overwrite(&db, "blueprints", "variance", "{not json", "blueprint_id", "bp1").await;
    assert_corrupt(repo.get("bp1").await, "blueprints.variance");
}

async fn an_unknown_connector_key_status_is_corrupt(db: DatabaseConnection) {
    let keys = SeaOrmConnectorKeyRepository::new(db.clone());
    let draft = ConnectorKeyDraft {
        id: "k1".into(),
        owner_user_id: "u1".into(),
        app_id: None,
        name: Some("laptop".into()),
        expires_at: None,
        secret: "s".repeat(40),
    };
    let (key, _): (ConnectorKey, _) = ConnectorKey::issue(draft, at()).unwrap();
    keys.insert(&key).await.unwrap();
    overwrite(&db, "connector_keys", "status", "suspended", "id", "k1").await;
    assert_corrupt(keys.get("k1").await, "connector_keys.status");
}
