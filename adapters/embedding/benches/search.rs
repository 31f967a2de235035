//! Search latency of the blueprint catalog over 10,000 and 100,000 cached blueprints, with the
//! built-in embedder: `svc_search_blueprints` (embed the query, scan the index, merge, cut to
//! 10) and the handshake's semantic lookup (embed the intent, scan with the contract filter).
//! Each sample uses a query text not seen before, so the query-vector cache never answers.
//!
//! Run: `cargo bench -p svc-embedding --bench search` (release profile). Figures go to
//! BENCHMARKS.md. The repository is an in-memory fake: this measures the index, not the database.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::json;
use svc_application::ports::Clock;
use svc_application::ports::blueprints::{
    BlueprintChange, BlueprintFilter, BlueprintListing, BlueprintRecord, BlueprintRepository, BlueprintSummary,
    Embedder, ListingPosition, StoredEmbedding,
};
use svc_application::ports::{BoundedInsert, RepositoryError};
use svc_application::services::blueprints::{BlueprintCatalog, CatalogSettings};
use svc_embedding::BuiltinEmbedder;

const SAMPLES: usize = 200;
const APP: &str = "app";

const SUBJECTS: &[&str] = &[
    "order",
    "invoice",
    "flight",
    "hotel",
    "expense",
    "meeting",
    "ticket",
    "recipe",
    "weather",
    "stock",
    "survey",
    "login",
    "cart",
    "playlist",
    "workout",
    "budget",
    "contract",
    "shipment",
    "patient",
    "course",
    "listing",
    "campaign",
    "incident",
    "timesheet",
    "warehouse",
];
const ACTIONS: &[&str] = &[
    "approval",
    "tracker",
    "dashboard",
    "booking",
    "editor",
    "summary",
    "checkout",
    "review",
    "planner",
    "report",
    "calendar",
    "chart",
    "form",
    "triage",
    "comparison",
    "timeline",
    "map",
    "inbox",
    "wizard",
    "gallery",
];
const QUALIFIERS: &[&str] = &[
    "for managers",
    "with filters",
    "by region",
    "this quarter",
    "with comments",
    "for mobile",
    "with totals",
    "per team",
    "with attachments",
    "side by side",
    "with reminders",
    "at a glance",
];

fn intent(i: usize) -> String {
    format!(
        "{} {} {} #{i}",
        SUBJECTS[i % SUBJECTS.len()],
        ACTIONS[(i / SUBJECTS.len()) % ACTIONS.len()],
        QUALIFIERS[(i / 7) % QUALIFIERS.len()]
    )
}

struct Summaries(Mutex<Vec<BlueprintSummary>>);

#[async_trait::async_trait]
impl BlueprintRepository for Summaries {
    async fn insert(&self, _: &BlueprintRecord) -> Result<(), RepositoryError> {
        Ok(())
    }
    async fn insert_bounded(&self, _: &BlueprintRecord, _: u64) -> Result<BoundedInsert, RepositoryError> {
        Ok(BoundedInsert::Inserted)
    }
    async fn insert_if_absent(&self, _: &BlueprintRecord) -> Result<bool, RepositoryError> {
        Ok(true)
    }
    async fn operator_default_id(&self, _: &str, _: &str) -> Result<Option<String>, RepositoryError> {
        Ok(None)
    }
    async fn upsert(&self, _: &BlueprintRecord) -> Result<(), RepositoryError> {
        Ok(())
    }
    async fn ids(&self) -> Result<Vec<String>, RepositoryError> {
        Ok(self.0.lock().unwrap().iter().map(|s| s.blueprint_id.clone()).collect())
    }
    async fn get(&self, id: &str) -> Result<Option<Arc<BlueprintRecord>>, RepositoryError> {
        // Existence check of a semantic hit: answer like a database that has it.
        Ok(Some(Arc::new(BlueprintRecord {
            blueprint_id: id.to_owned(),
            ..BlueprintRecord::blank(Utc::now())
        })))
    }
    async fn find_exact(
        &self,
        _: &str,
        _: &str,
        _: &str,
        _: &str,
    ) -> Result<Option<Arc<BlueprintRecord>>, RepositoryError> {
        Ok(None)
    }
    async fn intent_cached(&self, _: &str, _: &str) -> Result<bool, RepositoryError> {
        Ok(false)
    }
    async fn list(&self, _: &BlueprintFilter) -> Result<Vec<BlueprintRecord>, RepositoryError> {
        Ok(vec![])
    }
    async fn list_page(
        &self,
        _: &BlueprintFilter,
        _: Option<&ListingPosition>,
        _: u64,
    ) -> Result<Vec<BlueprintListing>, RepositoryError> {
        Ok(vec![])
    }
    async fn count_in_app(&self, _: &str) -> Result<u64, RepositoryError> {
        Ok(0)
    }
    async fn summaries(&self, _: Option<DateTime<Utc>>) -> Result<Vec<BlueprintSummary>, RepositoryError> {
        Ok(std::mem::take(&mut *self.0.lock().unwrap()))
    }
    async fn set_embedding(&self, _: &str, _: &StoredEmbedding) -> Result<(), RepositoryError> {
        Ok(())
    }
    async fn update(&self, _: &str, _: &str, _: &BlueprintChange, _: DateTime<Utc>) -> Result<bool, RepositoryError> {
        Ok(false)
    }
    async fn delete(&self, _: &str, _: &str) -> Result<bool, RepositoryError> {
        Ok(false)
    }
}

struct Now;
impl Clock for Now {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

async fn catalog_of(n: usize) -> BlueprintCatalog {
    let embedder = BuiltinEmbedder::new();
    let now = Utc::now();
    let summaries: Vec<BlueprintSummary> = (0..n)
        .map(|i| {
            let intent = intent(i);
            BlueprintSummary {
                blueprint_id: format!("bp-{i}"),
                app_id: APP.into(),
                embedding: Some(StoredEmbedding {
                    model: embedder.model().to_owned(),
                    vector: embedder.vector(&intent),
                }),
                intent,
                name: None,
                description: None,
                category: None,
                // A few hundred distinct contracts, as agents reuse shapes.
                contract_hash: format!("hash-{}", i % 300),
                variant_key: "v".into(),
                contract: json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } } }),
                generator: "builtin".into(),
                featured: false,
                persona: None,
                updated_at: now,
            }
        })
        .collect();
    let catalog = BlueprintCatalog::new(
        Arc::new(Summaries(Mutex::new(summaries))),
        Arc::new(embedder),
        Arc::new(Now),
        CatalogSettings::default(),
    );
    assert_eq!(catalog.rebuild().await.unwrap(), n);
    catalog
}

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let pick = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{name:<44} p50 {:>7.2} ms   p90 {:>7.2} ms   p99 {:>7.2} ms",
        ms(pick(0.5)),
        ms(pick(0.9)),
        ms(pick(0.99))
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    for n in [10_000usize, 100_000] {
        let started = Instant::now();
        let catalog = catalog_of(n).await;
        println!(
            "{n} blueprints indexed in {:.0} ms",
            started.elapsed().as_secs_f64() * 1e3
        );
        let mut search = Vec::with_capacity(SAMPLES);
        let mut lookup = Vec::with_capacity(SAMPLES);
        for s in 0..SAMPLES {
            let query = format!("{} {} {s}", SUBJECTS[s % SUBJECTS.len()], ACTIONS[s % ACTIONS.len()]);
            let t = Instant::now();
            let page = catalog.search(APP, &query, 10).await.unwrap();
            search.push(t.elapsed());
            assert!(page.rows.len() <= 10);
            let intent = format!("{query} handshake");
            let t = Instant::now();
            let _ = catalog.semantic_match(APP, &intent, "hash-7", "v").await.unwrap();
            lookup.push(t.elapsed());
        }
        report(&format!("svc_search_blueprints, {n} blueprints"), search);
        report(&format!("handshake semantic lookup, {n} blueprints"), lookup);
    }
}
