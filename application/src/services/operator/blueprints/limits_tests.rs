//! What bounds an operator's blueprints: the texts' caps, the app's room, and the listing's
//! pages (across the batches a semantic filter reads).

use std::sync::Arc;
use std::time::Duration;

use chrono::TimeDelta;
use serde_json::json;
use svc_domain::blueprint::app_capacity::APP_BLUEPRINTS_MAX;
use svc_domain::blueprint::operator_texts::OperatorText;

use super::*;
use crate::services::blueprints::CatalogSettings;
use crate::testing::{AgentFakes, FlatEmbedder};

const CODE: &str = "export default function Card() { return null; }";

fn service(fakes: &AgentFakes) -> OpsBlueprintService {
    OpsBlueprintService::new(OpsBlueprintPorts {
        catalog: BlueprintCatalog::new(
            fakes.store.clone(),
            Arc::new(FlatEmbedder),
            fakes.clock.clone(),
            CatalogSettings::default(),
        ),
        repository: fakes.store.clone(),
        generator: fakes.generator.clone(),
        queue: GenerationQueue::new(1, 1, Duration::from_secs(1)),
        compiler: fakes.compiler.clone(),
        cpu: CpuGate::unbounded(),
        clock: fakes.clock.clone(),
        ids: fakes.ids.clone(),
    })
}

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
    let mut with_persona = Vec::new();
    for i in 0..450 {
        // One in three has a persona; the others never match a persona filter.
        let persona = (i % 3 == 0).then(|| "Ops Lead".to_owned());
        let id = register(
            &fakes,
            "app-1",
            BlueprintOptions {
                persona: persona.clone(),
                ..BlueprintOptions::default()
            },
        )
        .await;
        if persona.is_some() {
            with_persona.push(id);
        }
    }
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
    let mut matching = Vec::new();
    for i in 0..rows {
        let persona = (i + 5 >= rows).then(|| "Ops Lead".to_owned());
        let id = register(
            &fakes,
            "app-1",
            BlueprintOptions {
                persona: persona.clone(),
                ..BlueprintOptions::default()
            },
        )
        .await;
        if persona.is_some() {
            matching.push(id);
        }
    }
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
