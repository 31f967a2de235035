//! Migration 000007 re-hashes stored blueprints by the current contractHash rule: a blueprint
//! hashed by the first rule (which dropped a property named `title`) is found again by the hash
//! a handshake computes now; a blueprint already hashed right is left alone.

use crate::support;

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use sea_orm_migration::MigratorTrait;
use serde_json::{Value, json};
use svc_application::ports::RepositoryError;
use svc_application::ports::blueprints::{BlueprintRecord, BlueprintRepository};
use svc_domain::contract::{Contract, contract_hash};
use svc_sql::Migrator;
use svc_sql::agent::SeaOrmBlueprintRepository;

support::backend_tests!(stale_contract_hashes_are_recomputed_once);

fn hash_of(contract: &Value) -> String {
    contract_hash(&Contract::from_agreed(contract.as_object().unwrap().clone()))
}

fn blueprint(id: &str, contract: Value, contract_hash: &str) -> BlueprintRecord {
    let at: DateTime<Utc> = DateTime::parse_from_rfc3339("2026-11-26T10:00:00Z").unwrap().to_utc();
    BlueprintRecord {
        blueprint_id: id.into(),
        app_id: "app1".into(),
        intent: "task card".into(),
        contract_hash: contract_hash.into(),
        variant_key: "variant-0".into(),
        contract: contract.try_into().unwrap(),
        variance: json!({}),
        source: "export default function C() { return null }".into(),
        code: "export default function C() { return null; }".into(),
        code_hash: "c0de".into(),
        generator: "builtin".into(),
        ..BlueprintRecord::blank(at)
    }
}

async fn stale_contract_hashes_are_recomputed_once(db: DatabaseConnection) {
    support::roll_back_through(&db, "m20261127_000007_rehash_contracts").await;
    let repo = SeaOrmBlueprintRepository::new(db.clone());
    let titled = json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } } });
    // What the first rule gave it: the property named `title` was dropped.
    let old_rule_hash = hash_of(&json!({ "propsSpec": { "type": "object", "properties": {} } }));
    assert_ne!(old_rule_hash, hash_of(&titled));
    repo.insert(&blueprint("stale", titled.clone(), &old_rule_hash))
        .await
        .unwrap();
    let plain = json!({ "propsSpec": { "type": "object", "description": "no names to confuse" } });
    repo.insert(&BlueprintRecord {
        intent: "plain card".into(),
        ..blueprint("fresh", plain.clone(), &hash_of(&plain))
    })
    .await
    .unwrap();
    repo.insert(&BlueprintRecord {
        intent: "odd card".into(),
        ..blueprint("not-an-object", json!({}), "kept-as-is")
    })
    .await
    .unwrap();
    // A row no repository writes any more: a stored contract that is not an object.
    db.execute_unprepared(r#"UPDATE blueprints SET contract = '["odd"]' WHERE blueprint_id = 'not-an-object'"#)
        .await
        .unwrap();

    Migrator::up(&db, None).await.unwrap();

    let stale = repo.get("stale").await.unwrap().unwrap();
    assert_eq!(stale.contract_hash, hash_of(&titled), "re-hashed by the current rule");
    let found = repo
        .find_exact("app1", "task card", &hash_of(&titled), "variant-0")
        .await
        .unwrap();
    assert_eq!(found.map(|b| b.blueprint_id.clone()).as_deref(), Some("stale"));
    assert_eq!(repo.get("fresh").await.unwrap().unwrap().contract_hash, hash_of(&plain));
    let odd = db
        .query_one_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT contract_hash FROM blueprints WHERE blueprint_id = 'not-an-object'",
        ))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        odd.try_get::<String>("", "contract_hash").unwrap(),
        "kept-as-is",
        "a contract that cannot be hashed keeps its stored hash"
    );
    assert!(
        matches!(
            repo.get("not-an-object").await,
            Err(RepositoryError::Corrupt {
                column: "blueprints.contract",
                ..
            })
        ),
        "and the repository refuses to read it as a contract"
    );
}
