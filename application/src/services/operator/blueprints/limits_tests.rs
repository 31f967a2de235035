//! What bounds an operator's blueprints: the texts' caps, the app's room, and the listing's
//! pages (across the batches a semantic filter reads).

use chrono::TimeDelta;
use serde_json::json;
use svc_domain::blueprint::app_capacity::APP_BLUEPRINTS_MAX;
use svc_domain::blueprint::operator_texts::OperatorText;

use super::register_tests::service;
use super::*;
use crate::testing::AgentFakes;

const CODE: &str = "export default function Card() { return null; }";

/// Registers a blueprint a second after the previous one; its id.
async fn register(fakes: &AgentFakes, app_id: &str, options: BlueprintOptions) -> String {
    fakes.clock.advance(TimeDelta::seconds(1));
    service(fakes)
        .register(app_id, json!({}), CODE.to_owned(), options)
        .await
        .unwrap()
        .record
        .blueprint_id
}

/// Registers `count` blueprints in `app-1`, those `ops_lead` picks with the persona "Ops Lead";
/// their ids, in order.
async fn register_ops_leads(fakes: &AgentFakes, count: u64, ops_lead: impl Fn(u64) -> bool) -> Vec<String> {
    let mut leads = Vec::new();
    for i in 0..count {
        let persona = ops_lead(i).then(|| "Ops Lead".to_owned());
        let options = BlueprintOptions {
            persona,
            ..BlueprintOptions::default()
        };
        let is_lead = options.persona.is_some();
        let id = register(fakes, "app-1", options).await;
        if is_lead {
            leads.push(id);
        }
    }
    leads
}

/// Every page from the first, following `nextCursor`.
async fn pages(fakes: &AgentFakes, query: ListBlueprints) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut cursor = None;
    loop {
        let page = service(fakes)
            .list(
                "app-1",
                ListBlueprints {
                    cursor: cursor.take(),
                    ..query.clone()
                },
            )
            .await
            .unwrap();
        pages.push(page.blueprints.iter().map(|b| b.blueprint_id.clone()).collect());
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return pages,
        }
    }
}

#[tokio::test]
async fn each_text_over_its_cap_is_refused_before_anything_is_stored_or_generated() {
    let fakes = AgentFakes::default();
    let options = |field: OperatorText, chars: usize| {
        let text = Some("é".repeat(chars));
        match field {
            OperatorText::Persona => BlueprintOptions {
                persona: text,
                ..BlueprintOptions::default()
            },
            OperatorText::Aesthetic => BlueprintOptions {
                aesthetic: text,
                ..BlueprintOptions::default()
            },
            OperatorText::Context => BlueprintOptions {
                context: text,
                ..BlueprintOptions::default()
            },
            OperatorText::SeedPrompt => BlueprintOptions {
                seed_prompt: text,
                ..BlueprintOptions::default()
            },
        }
    };
    let fields = [
        OperatorText::Persona,
        OperatorText::Aesthetic,
        OperatorText::Context,
        OperatorText::SeedPrompt,
    ];
    for field in fields {
        let too_long = options(field, field.max_chars() + 1);
        let registered = service(&fakes)
            .register("app-1", json!({}), CODE.to_owned(), too_long.clone())
            .await;
        let generated = service(&fakes).generate("app-1", json!({}), too_long).await;
        for refused in [registered.map(|_| ()), generated.map(|_| ())] {
            match refused {
                Err(OpsBlueprintError::TextTooLong(e)) => {
                    assert_eq!((e.field, e.chars), (field, field.max_chars() + 1));
                }
                other => panic!("{field:?}: {other:?}"),
            }
        }
    }
    assert!(fakes.store.blueprints().is_empty(), "nothing stored");
    assert!(fakes.generator.requests().is_empty(), "nothing generated");
    for field in fields {
        register(&fakes, "app-1", options(field, field.max_chars())).await;
    }
    assert_eq!(fakes.store.blueprints().len(), 4, "each cap itself is accepted");
}

#[tokio::test]
async fn an_app_at_its_cap_takes_no_more_blueprints_from_the_operator() {
    let fakes = AgentFakes::default();
    let now = fakes.clock.now();
    for i in 0..APP_BLUEPRINTS_MAX - 1 {
        let record = BlueprintRecord {
            blueprint_id: format!("seeded-{i}"),
            app_id: "app-1".into(),
            ..BlueprintRecord::blank(now)
        };
        BlueprintRepository::insert(fakes.store.as_ref(), &record)
            .await
            .unwrap();
    }
    let last = register(&fakes, "app-1", BlueprintOptions::default()).await;
    let refused = service(&fakes)
        .register("app-1", json!({}), CODE.to_owned(), BlueprintOptions::default())
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "blueprint_limit_reached");
    assert!(matches!(
        service(&fakes)
            .generate("app-1", json!({}), BlueprintOptions::default())
            .await,
        Err(OpsBlueprintError::AppFull(_))
    ));
    register(&fakes, "app-2", BlueprintOptions::default()).await;
    service(&fakes).delete("app-1", &last).await.unwrap();
    register(&fakes, "app-1", BlueprintOptions::default()).await;
}

#[tokio::test]
async fn pages_follow_each_other_without_gaps_or_repeats() {
    let fakes = AgentFakes::default();
    let mut all = Vec::new();
    for _ in 0..45 {
        all.push(register(&fakes, "app-1", BlueprintOptions::default()).await);
    }
    register(&fakes, "app-2", BlueprintOptions::default()).await;
    let got = pages(&fakes, ListBlueprints::default()).await;
    assert_eq!(
        got.iter().map(Vec::len).collect::<Vec<_>>(),
        [20, 20, 5],
        "20 a page by default"
    );
    assert_eq!(got.concat(), all, "oldest first, each once, only the app's");
    let exact = pages(
        &fakes,
        ListBlueprints {
            limit: Some(15),
            ..ListBlueprints::default()
        },
    )
    .await;
    assert_eq!(
        exact.iter().map(Vec::len).collect::<Vec<_>>(),
        [15, 15, 15],
        "a last page that is full says no more follow"
    );
}

#[tokio::test]
async fn a_semantic_filter_fills_its_pages_across_batches() {
    let fakes = AgentFakes::default();
    // One in three has a persona; the others never match a persona filter.
    let with_persona = register_ops_leads(&fakes, 450, |i| i % 3 == 0).await;
    let got = pages(
        &fakes,
        ListBlueprints {
            persona: Some("ops lead".into()),
            limit: Some(100),
            ..ListBlueprints::default()
        },
    )
    .await;
    assert_eq!(got.iter().map(Vec::len).collect::<Vec<_>>(), [100, 50]);
    assert_eq!(got.concat(), with_persona);
}

/// A filter that matches little reads at most `MOST_ROWS_SCANNED` rows a call: a short page
/// with a cursor, then the rest.
#[tokio::test]
async fn a_sparse_filter_reads_a_bounded_number_of_rows_per_page() {
    let fakes = AgentFakes::default();
    let rows = listing::MOST_ROWS_SCANNED + 100;
    let matching = register_ops_leads(&fakes, rows, |i| i + 5 >= rows).await;
    let got = pages(
        &fakes,
        ListBlueprints {
            persona: Some("ops lead".into()),
            ..ListBlueprints::default()
        },
    )
    .await;
    assert_eq!(got.iter().map(Vec::len).collect::<Vec<_>>(), [0, 5]);
    assert_eq!(got.concat(), matching);
}

#[tokio::test]
async fn a_limit_or_cursor_we_did_not_hand_out_is_refused() {
    let fakes = AgentFakes::default();
    for (limit, cursor) in [(Some(0), None), (Some(101), None), (None, Some("page-2".to_owned()))] {
        let refused = service(&fakes)
            .list(
                "app-1",
                ListBlueprints {
                    limit,
                    cursor,
                    ..ListBlueprints::default()
                },
            )
            .await
            .unwrap_err();
        assert!(
            matches!(
                refused,
                OpsBlueprintError::InvalidLimit(_) | OpsBlueprintError::InvalidCursor
            ),
            "{refused:?}"
        );
    }
}

/// A patch is capped by the schema; patches add up, so the merged variance is capped too: a
/// patch that would take it past 32 fields is refused and changes nothing.
#[tokio::test]
async fn patches_never_grow_a_variance_past_its_field_cap() {
    use svc_domain::blueprint::variance_patch::VARIANCE_MAX_FIELDS;
    let fakes = AgentFakes::default();
    let id = register(&fakes, "app-1", BlueprintOptions::default()).await;
    let patch = |from: usize, to: usize| -> Map<String, Value> {
        (from..to).map(|i| (format!("axis{i}"), json!("on"))).collect()
    };
    let update = |variance: Map<String, Value>| UpdateBlueprint {
        blueprint_id: id.clone(),
        make_operator_default: false,
        variance: Some(variance),
    };
    service(&fakes).update("app-1", update(patch(0, 20))).await.unwrap();
    service(&fakes)
        .update("app-1", update(patch(20, VARIANCE_MAX_FIELDS)))
        .await
        .unwrap();
    let refused = service(&fakes)
        .update("app-1", update(patch(VARIANCE_MAX_FIELDS, VARIANCE_MAX_FIELDS + 1)))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "variance_too_large");
    assert_eq!(
        refused.to_string(),
        "the merged variance would hold 33 fields, the most it may hold is 32: clear some with an empty string"
    );
    let stored = service(&fakes).get("app-1", &id).await.unwrap();
    assert_eq!(
        stored.variance.as_object().unwrap().len(),
        VARIANCE_MAX_FIELDS,
        "nothing changed"
    );
    // Clearing a field makes room for another in the same patch.
    let mut swap = patch(VARIANCE_MAX_FIELDS, VARIANCE_MAX_FIELDS + 1);
    swap.insert("axis0".into(), json!(""));
    service(&fakes).update("app-1", update(swap)).await.unwrap();
    let stored = service(&fakes).get("app-1", &id).await.unwrap();
    assert_eq!(stored.variance.as_object().unwrap().len(), VARIANCE_MAX_FIELDS);
    assert_eq!(stored.variance["axis32"], json!("on"));
}
