//! The blueprint repository on every backend: the shared pool, idempotent and overwriting
//! writes, filtered listings, the index's summaries and watermark, embeddings, operator updates
//! and deletes.

use crate::support;

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::{ConnectionTrait, DatabaseConnection};
use serde_json::json;
use svc_application::ports::RepositoryError;
use svc_application::ports::blueprints::{
    BlueprintChange, BlueprintFilter, BlueprintRecord, BlueprintRepository, MANIFEST_GENERATOR, SHARED_POOL_APP_ID,
    StoredEmbedding,
};
use svc_domain::blueprint::SourceKind;
use svc_sql::ReadLane;
use svc_sql::agent::SeaOrmBlueprintRepository;

support::backend_tests!(
    every_field_round_trips,
    exact_lookup_prefers_the_app_then_the_shared_pool,
    insert_if_absent_keeps_the_first_and_upsert_overwrites,
    listings_filter_and_summaries_follow_the_watermark,
    operator_updates_and_deletes_are_scoped_to_the_app,
    a_stored_contract_that_is_not_an_object_is_refused,
    the_operator_default_is_chosen_by_its_flags_alone,
);

fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-26T10:00:00.123456Z")
        .unwrap()
        .to_utc()
}

fn bp(id: &str, app: &str, intent: &str, at: DateTime<Utc>) -> BlueprintRecord {
    BlueprintRecord {
        blueprint_id: id.into(),
        app_id: app.into(),
        intent: intent.into(),
        contract_hash: "hash-a".into(),
        variant_key: "variant-0".into(),
        contract: json!({ "propsSpec": { "type": "object" } }).try_into().unwrap(),
        variance: json!({}),
        source: "export default function C() { return null }".into(),
        code: "export default function C() { return null; }".into(),
        code_hash: "c0de".into(),
        generator: "builtin".into(),
        ..BlueprintRecord::blank(at)
    }
}

async fn a_stored_contract_that_is_not_an_object_is_refused(db: DatabaseConnection) {
    let repo = SeaOrmBlueprintRepository::new(db.clone()).with_read_lane(ReadLane::for_database(&db));
    repo.insert(&bp("b1", "app1", "one", t0())).await.unwrap();
    db.execute_unprepared("UPDATE blueprints SET contract = '[1, 2]' WHERE blueprint_id = 'b1'")
        .await
        .unwrap();
    match repo.get("b1").await {
        Err(RepositoryError::Corrupt { column, reason }) => {
            assert_eq!(column, "blueprints.contract");
            assert_eq!(reason, "must be a JSON object");
        }
        other => panic!("a non-object contract was read as {other:?}"),
    }
}

async fn every_field_round_trips(db: DatabaseConnection) {
    let repo = SeaOrmBlueprintRepository::new(db);
    let full = BlueprintRecord {
        name: Some("Order approval".into()),
        description: Some("Approve or reject an order".into()),
        category: Some("commerce".into()),
        fixture_props: Some(json!({ "title": "Order 42" })),
        embedding: Some(StoredEmbedding {
            model: "builtin-ngram-v1".into(),
            vector: vec![0.5, -0.25, 1.0e-7, f32::MAX],
        }),
        featured: true,
        persona: Some("finance analyst".into()),
        aesthetic: Some("dense".into()),
        is_operator_default: true,
        source_kind: SourceKind::User,
        model: Some("openai:gpt-4o".into()),
        updated_at: t0() + TimeDelta::seconds(5),
        ..bp("b1", "app1", "order approval", t0())
    };
    repo.insert(&full).await.unwrap();
    let got = repo.get("b1").await.unwrap().unwrap();
    assert_eq!(got.embedding, full.embedding, "f32s survive bit for bit");
    assert_eq!(got.created_at.timestamp_micros(), full.created_at.timestamp_micros());
    assert_eq!(got.updated_at.timestamp_micros(), full.updated_at.timestamp_micros());
    let normalise = |mut r: BlueprintRecord| {
        r.created_at = t0();
        r.updated_at = t0();
        r
    };
    assert_eq!(normalise(std::sync::Arc::unwrap_or_clone(got)), normalise(full));
    assert!(repo.get("missing").await.unwrap().is_none());
}

async fn exact_lookup_prefers_the_app_then_the_shared_pool(db: DatabaseConnection) {
    let repo = SeaOrmBlueprintRepository::new(db);
    repo.insert(&bp("pooled", SHARED_POOL_APP_ID, "order approval", t0()))
        .await
        .unwrap();
    let found = repo
        .find_exact("app1", "order approval", "hash-a", "variant-0")
        .await
        .unwrap();
    assert_eq!(found.unwrap().blueprint_id, "pooled", "the pool serves every app");
    assert!(repo.intent_cached("app2", "order approval").await.unwrap());
    repo.insert(&bp("own", "app1", "order approval", t0() - TimeDelta::hours(1)))
        .await
        .unwrap();
    let found = repo
        .find_exact("app1", "order approval", "hash-a", "variant-0")
        .await
        .unwrap();
    assert_eq!(
        found.unwrap().blueprint_id,
        "own",
        "the app's own component first, even if older"
    );
    repo.insert(&bp("foreign", "app2", "invoice", t0())).await.unwrap();
    assert!(
        repo.find_exact("app1", "invoice", "hash-a", "variant-0")
            .await
            .unwrap()
            .is_none()
    );
    assert!(!repo.intent_cached("app1", "invoice").await.unwrap());
}

async fn insert_if_absent_keeps_the_first_and_upsert_overwrites(db: DatabaseConnection) {
    let repo = SeaOrmBlueprintRepository::new(db);
    let first = bp("b1", SHARED_POOL_APP_ID, "first", t0());
    assert!(repo.insert_if_absent(&first).await.unwrap());
    assert!(!repo.insert_if_absent(&bp("b1", "app1", "second", t0())).await.unwrap());
    assert_eq!(repo.get("b1").await.unwrap().unwrap().intent, "first");
    let changed = BlueprintRecord {
        code: "export default () => 1;".into(),
        name: Some("Renamed".into()),
        ..bp("b1", SHARED_POOL_APP_ID, "first", t0())
    };
    repo.upsert(&changed).await.unwrap();
    let got = repo.get("b1").await.unwrap().unwrap();
    assert_eq!(
        (got.code.as_str(), got.name.as_deref()),
        ("export default () => 1;", Some("Renamed"))
    );
    repo.upsert(&bp("b2", "app1", "new", t0())).await.unwrap();
    assert!(repo.get("b2").await.unwrap().is_some(), "upsert inserts a new id");
}

async fn listings_filter_and_summaries_follow_the_watermark(db: DatabaseConnection) {
    let repo = SeaOrmBlueprintRepository::new(db);
    let mut other_contract = bp("b2", "app1", "two", t0() + TimeDelta::seconds(1));
    other_contract.contract_hash = "hash-b".into();
    other_contract.persona = Some("support agent".into());
    let mut manifest = bp("ui", SHARED_POOL_APP_ID, "manifest ui", t0() + TimeDelta::seconds(2));
    manifest.generator = MANIFEST_GENERATOR.into();
    manifest.featured = true;
    for r in [
        bp("b1", "app1", "one", t0()),
        other_contract,
        manifest,
        bp("b3", "app2", "three", t0() + TimeDelta::seconds(3)),
    ] {
        repo.insert(&r).await.unwrap();
    }
    let ids = |rows: Vec<BlueprintRecord>| rows.into_iter().map(|r| r.blueprint_id).collect::<Vec<_>>();
    assert_eq!(
        ids(repo.list(&BlueprintFilter::default()).await.unwrap()),
        ["b1", "b2", "ui", "b3"]
    );
    let app1 = BlueprintFilter {
        app_ids: Some(vec!["app1".into()]),
        ..Default::default()
    };
    assert_eq!(ids(repo.list(&app1).await.unwrap()), ["b1", "b2"]);
    let by_hash = BlueprintFilter {
        contract_hash: Some("hash-b".into()),
        ..app1.clone()
    };
    assert_eq!(ids(repo.list(&by_hash).await.unwrap()), ["b2"]);
    let by_persona = BlueprintFilter {
        persona: Some("  Support Agent ".into()),
        ..Default::default()
    };
    assert_eq!(ids(repo.list(&by_persona).await.unwrap()), ["b2"]);
    let by_generator = BlueprintFilter {
        generator: Some(MANIFEST_GENERATOR.into()),
        ..Default::default()
    };
    assert_eq!(ids(repo.list(&by_generator).await.unwrap()), ["ui"]);
    let featured = BlueprintFilter {
        featured_only: true,
        ..Default::default()
    };
    assert_eq!(ids(repo.list(&featured).await.unwrap()), ["ui"]);
    let export = BlueprintFilter {
        exclude_manifest: true,
        ..Default::default()
    };
    assert_eq!(ids(repo.list(&export).await.unwrap()), ["b1", "b2", "b3"]);

    let all = repo.summaries(None).await.unwrap();
    assert_eq!(all.len(), 4);
    assert!(all.iter().all(|s| s.embedding.is_none()));
    let since = repo.summaries(Some(t0() + TimeDelta::seconds(1))).await.unwrap();
    let got: Vec<&str> = since.iter().map(|s| s.blueprint_id.as_str()).collect();
    assert_eq!(got, ["ui", "b3"], "strictly after the watermark, oldest change first");
    let e = StoredEmbedding {
        model: "m".into(),
        vector: vec![1.0, 2.0],
    };
    repo.set_embedding("b1", &e).await.unwrap();
    let b1 = repo
        .summaries(None)
        .await
        .unwrap()
        .into_iter()
        .find(|s| s.blueprint_id == "b1")
        .unwrap();
    assert_eq!(b1.embedding, Some(e));
    assert_eq!(
        b1.updated_at.timestamp_micros(),
        t0().timestamp_micros(),
        "a vector is not a change"
    );
}

async fn operator_updates_and_deletes_are_scoped_to_the_app(db: DatabaseConnection) {
    let repo = SeaOrmBlueprintRepository::new(db);
    let mut a = bp("a", "app1", "one", t0());
    a.is_operator_default = true;
    for r in [a, bp("b", "app1", "two", t0()), bp("c", "app2", "three", t0())] {
        repo.insert(&r).await.unwrap();
    }
    let later = t0() + TimeDelta::minutes(1);
    let make_default = BlueprintChange {
        is_operator_default: Some(true),
        ..Default::default()
    };
    assert!(
        !repo.update("app2", "b", &make_default, later).await.unwrap(),
        "foreign"
    );
    assert!(repo.update("app1", "b", &make_default, later).await.unwrap());
    let (a, b) = (
        repo.get("a").await.unwrap().unwrap(),
        repo.get("b").await.unwrap().unwrap(),
    );
    assert!(
        !a.is_operator_default && b.is_operator_default,
        "one default per contract"
    );
    assert_eq!(b.updated_at.timestamp_micros(), later.timestamp_micros());
    let re_aim = BlueprintChange {
        variance: Some((json!({ "density": "compact" }), "variant-1".into())),
        ..Default::default()
    };
    assert!(repo.update("app1", "b", &re_aim, later).await.unwrap());
    let b = repo.get("b").await.unwrap().unwrap();
    assert_eq!(
        (&b.variance, b.variant_key.as_str()),
        (&json!({ "density": "compact" }), "variant-1")
    );
    assert!(!repo.delete("app1", "c").await.unwrap(), "foreign rows stay");
    assert!(repo.get("c").await.unwrap().is_some());
    assert!(repo.delete("app1", "b").await.unwrap());
    assert!(!repo.delete("app1", "b").await.unwrap());
    assert!(repo.get("b").await.unwrap().is_none());
}

/// The render-time lookup reads flags, not records: a neighbour of the same contract whose
/// stored variance no longer parses does not break it, a default without a compiled module is
/// never chosen, and another app's or contract's default is not this one's.
async fn the_operator_default_is_chosen_by_its_flags_alone(db: DatabaseConnection) {
    let repo = SeaOrmBlueprintRepository::new(db.clone());
    let default_of = |hash: &str, id: &str| BlueprintRecord {
        contract_hash: hash.into(),
        is_operator_default: true,
        ..bp(id, "app1", id, t0())
    };
    repo.insert(&bp("plain", "app1", "plain", t0())).await.unwrap();
    repo.insert(&BlueprintRecord {
        code: String::new(),
        ..default_of("hash-a", "uncompiled")
    })
    .await
    .unwrap();
    repo.insert(&default_of("hash-b", "other-contract")).await.unwrap();
    repo.insert(&BlueprintRecord {
        app_id: "app2".into(),
        ..default_of("hash-a", "other-app")
    })
    .await
    .unwrap();
    repo.insert(&bp("corrupt", "app1", "corrupt", t0())).await.unwrap();
    db.execute_unprepared("UPDATE blueprints SET variance = 'not json' WHERE blueprint_id = 'corrupt'")
        .await
        .unwrap();
    assert_eq!(
        repo.operator_default_id("app1", "hash-a").await.unwrap(),
        None,
        "a default that cannot be served is never chosen"
    );
    repo.insert(&bp("chosen", "app1", "chosen", t0())).await.unwrap();
    let make_default = BlueprintChange {
        is_operator_default: Some(true),
        ..BlueprintChange::default()
    };
    assert!(repo.update("app1", "chosen", &make_default, t0()).await.unwrap());
    assert_eq!(
        repo.operator_default_id("app1", "hash-a").await.unwrap().as_deref(),
        Some("chosen")
    );
    assert_eq!(
        repo.operator_default_id("app1", "hash-b").await.unwrap().as_deref(),
        Some("other-contract")
    );
    assert_eq!(
        repo.operator_default_id("app2", "hash-a").await.unwrap().as_deref(),
        Some("other-app")
    );
    assert_eq!(repo.operator_default_id("app3", "hash-a").await.unwrap(), None);
}
