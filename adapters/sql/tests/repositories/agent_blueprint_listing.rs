//! The operator's blueprint listing on every backend: pages after a position (ties on the
//! creation time broken by id), filters on every page, whether a module is stored without reading
//! it, the app's count, and the index's summaries reading a bounded part of long texts.

use crate::support;

use chrono::{DateTime, Utc};
use sea_orm::{DatabaseConnection, DbBackend};
use serde_json::json;
use svc_application::ports::blueprints::{
    BlueprintFilter, BlueprintListing, BlueprintRecord, BlueprintRepository, ListingPosition, SUMMARY_TEXT_MAX_CHARS,
};
use svc_sql::agent::SeaOrmBlueprintRepository;

support::backend_tests!(
    pages_follow_a_position_and_keep_the_filters,
    the_count_is_the_apps_own,
    summaries_read_a_bounded_part_of_each_text,
);

fn t(second: i64) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-26T10:00:00.123456Z")
        .unwrap()
        .to_utc()
        + chrono::TimeDelta::seconds(second)
}

fn bp(id: &str, app: &str, hash: &str, at: DateTime<Utc>) -> BlueprintRecord {
    BlueprintRecord {
        blueprint_id: id.into(),
        app_id: app.into(),
        intent: format!("intent of {id}"),
        contract_hash: hash.into(),
        variant_key: "variant-0".into(),
        contract: json!({ "propsSpec": { "type": "object" } }).try_into().unwrap(),
        variance: json!({ "density": "compact" }),
        source: "export default function C() { return null }".into(),
        code: "export default function C() { return null; }".into(),
        code_hash: "c0de".into(),
        generator: "user".into(),
        description: Some(format!("description of {id}")),
        persona: Some("clerk".into()),
        ..BlueprintRecord::blank(at)
    }
}

fn ids(rows: &[BlueprintListing]) -> Vec<&str> {
    rows.iter().map(|r| r.blueprint_id.as_str()).collect()
}

async fn pages_follow_a_position_and_keep_the_filters(db: DatabaseConnection) {
    let repo = SeaOrmBlueprintRepository::new(db);
    // b and c share a creation time: the id orders them.
    for (id, app, hash, at) in [
        ("a", "app1", "h1", t(1)),
        ("c", "app1", "h2", t(2)),
        ("b", "app1", "h1", t(2)),
        ("d", "app1", "h1", t(3)),
        ("x", "app2", "h1", t(0)),
    ] {
        repo.insert(&bp(id, app, hash, at)).await.unwrap();
    }
    let unservable = BlueprintRecord {
        code: String::new(),
        ..bp("e", "app1", "h2", t(4))
    };
    repo.insert(&unservable).await.unwrap();
    let app1 = BlueprintFilter {
        app_ids: Some(vec!["app1".into()]),
        ..BlueprintFilter::default()
    };
    let first = repo.list_page(&app1, None, 2).await.unwrap();
    assert_eq!(ids(&first), ["a", "b"]);
    let second = repo.list_page(&app1, Some(&first[1].position()), 2).await.unwrap();
    assert_eq!(ids(&second), ["c", "d"], "the tie on b's time goes on with c");
    let last = repo.list_page(&app1, Some(&second[1].position()), 2).await.unwrap();
    assert_eq!(ids(&last), ["e"]);
    assert!(
        repo.list_page(&app1, Some(&last[0].position()), 2)
            .await
            .unwrap()
            .is_empty()
    );

    // A row as listed: every shown field, and whether a module is stored.
    let full = repo.get("b").await.unwrap().unwrap();
    assert_eq!(first[1], full.listing());
    assert!(first[1].servable);
    assert!(!last[0].servable, "no module stored");

    let h1 = BlueprintFilter {
        contract_hash: Some("h1".into()),
        ..app1.clone()
    };
    let one = repo.list_page(&h1, None, 1).await.unwrap();
    assert_eq!(ids(&one), ["a"]);
    let rest = repo.list_page(&h1, Some(&one[0].position()), 10).await.unwrap();
    assert_eq!(ids(&rest), ["b", "d"]);
    let before_everything = ListingPosition {
        created_at: t(-10),
        blueprint_id: String::new(),
    };
    assert_eq!(
        ids(&repo.list_page(&h1, Some(&before_everything), 10).await.unwrap()),
        ["a", "b", "d"]
    );
}

async fn the_count_is_the_apps_own(db: DatabaseConnection) {
    let repo = SeaOrmBlueprintRepository::new(db);
    assert_eq!(repo.count_in_app("app1").await.unwrap(), 0);
    for (id, app) in [("a", "app1"), ("b", "app1"), ("p", "_pool"), ("x", "app2")] {
        repo.insert(&bp(id, app, "h1", t(1))).await.unwrap();
    }
    assert_eq!(repo.count_in_app("app1").await.unwrap(), 2);
    assert_eq!(repo.count_in_app("app2").await.unwrap(), 1);
    repo.delete("app1", "a").await.unwrap();
    assert_eq!(repo.count_in_app("app1").await.unwrap(), 1);
}

async fn summaries_read_a_bounded_part_of_each_text(db: DatabaseConnection) {
    // MySQL's persona column is a VARCHAR(255): no persona there ever reaches the bound.
    let long_personas = db.get_database_backend() != DbBackend::MySql;
    let repo = SeaOrmBlueprintRepository::new(db);
    let long = |c: &str| c.repeat(SUMMARY_TEXT_MAX_CHARS + 1_000);
    let stored = BlueprintRecord {
        intent: long("i"),
        name: Some(long("n")),
        description: Some(long("é")),
        persona: Some(if long_personas { long("p") } else { "p".repeat(255) }),
        ..bp("long", "app1", "h1", t(1))
    };
    repo.insert(&stored).await.unwrap();
    repo.insert(&bp("short", "app1", "h1", t(2))).await.unwrap();
    let summaries = repo.summaries(None).await.unwrap();
    let cut = |c: &str| c.repeat(SUMMARY_TEXT_MAX_CHARS);
    let summary = &summaries[0];
    assert_eq!(summary.blueprint_id, "long");
    assert_eq!(summary.intent, cut("i"));
    assert_eq!(summary.name.as_deref(), Some(cut("n").as_str()));
    assert_eq!(
        summary.description.as_deref(),
        Some(cut("é").as_str()),
        "cut in characters"
    );
    if long_personas {
        assert_eq!(summary.persona.as_deref(), Some(cut("p").as_str()));
    }
    let short = &summaries[1];
    assert_eq!(
        (
            short.intent.as_str(),
            short.description.as_deref(),
            short.name.as_deref()
        ),
        ("intent of short", Some("description of short"), None),
        "short texts whole, none still none"
    );
    // The stored row itself is untouched.
    assert_eq!(repo.get("long").await.unwrap().unwrap().intent, long("i"));
}
