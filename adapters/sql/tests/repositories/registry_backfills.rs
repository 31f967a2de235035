//! What a registry does at its start for versions a registry of an earlier release stored
//! (`svc_sql::registry::backfill_earlier_release_versions`), on every backend: such a version is
//! keyed, described and sized once, its size charged to its publisher unless it was charged
//! when stored; a second start finds nothing to do, and never looks at a version this release
//! stored.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::support;

use chrono::{DateTime, TimeZone, Utc};
use sea_orm::sea_query::{Alias, Expr, ExprTrait, Query};
use sea_orm::{ConnectionTrait, DatabaseConnection};
use sea_orm_migration::MigratorTrait;
use serde_json::{Value, json};
use svc_application::ports::registry::{
    ArtifactRepository, BundleStore, BundleStoreError, BundleWrite, PublishOutcome, PublishQuota, StoredBundle,
};
use svc_application::services::registry::DEFAULT_PUBLISH_QUOTA;
use svc_domain::artifact::{
    ArtifactIdentity, ArtifactKind, ArtifactVersion, BundleDigest, PublishArtifact, SignatureAlgorithm,
    StoredSignature, Visibility,
};
use svc_sql::Migrator;
use svc_sql::registry::{EarlierReleaseBackfill, SeaOrmArtifactRepository, backfill_earlier_release_versions};

support::backend_tests!(
    versions_an_earlier_release_stored_are_described_once,
    versions_stored_before_the_byte_quota_count_their_size
);

/// Bundles in memory, by digest.
#[derive(Default)]
struct Bundles(Mutex<HashMap<[u8; 48], Vec<u8>>>);

impl Bundles {
    fn holding(bundles: &[&[u8]]) -> Self {
        let held = bundles
            .iter()
            .map(|bytes| (*BundleDigest::of(bytes).bytes(), bytes.to_vec()))
            .collect();
        Self(Mutex::new(held))
    }
}

#[async_trait::async_trait]
impl BundleStore for Bundles {
    async fn put(&self, digest: &BundleDigest, _: ArtifactKind, bytes: &[u8]) -> Result<BundleWrite, BundleStoreError> {
        self.0.lock().unwrap().insert(*digest.bytes(), bytes.to_vec());
        Ok(BundleWrite::Written)
    }

    /// Never read here: the backfill asks sizes only.
    async fn get(&self, _: &BundleDigest) -> Result<Option<StoredBundle>, BundleStoreError> {
        Ok(None)
    }

    async fn remove(&self, digest: &BundleDigest, _: ArtifactKind) -> Result<(), BundleStoreError> {
        self.0.lock().unwrap().remove(digest.bytes());
        Ok(())
    }

    async fn stored_len(&self, digest: &BundleDigest) -> Result<Option<u64>, BundleStoreError> {
        Ok(self.0.lock().unwrap().get(digest.bytes()).map(|b| b.len() as u64))
    }
}

fn gadget(semver: &str, manifest: Value, bundle: &[u8], published_at: DateTime<Utc>) -> ArtifactVersion {
    ArtifactVersion::publish(
        PublishArtifact {
            identity: ArtifactIdentity::parse("@acme", "chart", semver).unwrap(),
            kind: ArtifactKind::Gadget,
            visibility: Visibility::Public,
            publisher: "acme".into(),
            manifest,
            author_public_key: None,
            signature: StoredSignature {
                algorithm: SignatureAlgorithm::Sigstore,
                public_key_id: None,
                value: None,
                sigstore_bundle: Some(json!({ "mediaType": "bundle" })),
            },
            bundle_sri: BundleDigest::of(bundle).sri(),
        },
        published_at,
    )
    .unwrap()
}

/// What a version costs its publisher: its bundle and its manifest as compact JSON.
fn cost(version: &ArtifactVersion, bundle_len: usize) -> u64 {
    (bundle_len + serde_json::to_vec(&version.manifest).unwrap().len()) as u64
}

/// Inserts `version` as a registry of an earlier release writes it: none of the columns a later
/// release added (search keys, release key, description, size).
async fn insert_as_an_earlier_release(db: &DatabaseConnection, version: &ArtifactVersion) {
    let insert = Query::insert()
        .into_table(Alias::new("registry_artifact_versions"))
        .columns(
            [
                "scope",
                "name",
                "version",
                "kind",
                "visibility",
                "publisher",
                "manifest",
                "signature_algorithm",
                "bundle_sri",
                "status",
                "published_at",
            ]
            .map(Alias::new),
        )
        .values_panic([
            version.identity.scope.as_str().into(),
            version.identity.name.as_str().into(),
            version.identity.version.as_str().into(),
            version.kind.as_str().into(),
            version.visibility.as_str().into(),
            version.publisher.clone().into(),
            version.manifest.clone().into(),
            version.signature.algorithm.as_str().into(),
            version.bundle_sri.clone().into(),
            version.status.as_str().into(),
            version.published_at.into(),
        ])
        .to_owned();
    db.execute(&insert).await.unwrap();
}

/// Each version's description column, by version.
async fn descriptions(db: &DatabaseConnection) -> Vec<(String, Option<String>)> {
    let select = Query::select()
        .columns([Alias::new("version"), Alias::new("description")])
        .from(Alias::new("registry_artifact_versions"))
        .order_by(Alias::new("version"), sea_orm::Order::Asc)
        .to_owned();
    db.query_all(&select)
        .await
        .unwrap()
        .iter()
        .map(|row| {
            (
                row.try_get("", "version").unwrap(),
                row.try_get("", "description").unwrap(),
            )
        })
        .collect()
}

const NOTHING: EarlierReleaseBackfill = EarlierReleaseBackfill {
    keyed: 0,
    released: 0,
    described: 0,
    sized: 0,
};

async fn versions_an_earlier_release_stored_are_described_once(db: DatabaseConnection) {
    let bundle: &[u8] = b"export function useChart() {}";
    let bundles = Bundles::holding(&[bundle]);
    let at = Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap();
    let repo = SeaOrmArtifactRepository::new(db.clone());
    let ours = gadget("2.0.0", json!({ "kind": "gadget", "description": "Ours" }), bundle, at);
    assert_eq!(
        repo.publish(&ours, cost(&ours, bundle.len()), DEFAULT_PUBLISH_QUOTA)
            .await
            .unwrap(),
        PublishOutcome::Published
    );
    assert_eq!(
        backfill_earlier_release_versions(&db, Some(&bundles)).await.unwrap(),
        NOTHING,
        "a version this release stored needs nothing"
    );
    for (semver, manifest) in [
        ("1.0.0", json!({ "kind": "gadget", "description": "Sparkline" })),
        ("1.1.0", json!({ "kind": "gadget" })),
    ] {
        insert_as_an_earlier_release(&db, &gadget(semver, manifest, bundle, at)).await;
    }

    // A command without the bundles (`svc registry token mint`) completes all but the sizes ...
    let done = backfill_earlier_release_versions(&db, None).await.unwrap();
    assert_eq!(
        done,
        EarlierReleaseBackfill {
            keyed: 2,
            released: 2,
            described: 2,
            sized: 0
        }
    );
    // ... which the next start with them (`svc registry serve`) fills in.
    let done = backfill_earlier_release_versions(&db, Some(&bundles)).await.unwrap();
    assert_eq!(done, EarlierReleaseBackfill { sized: 2, ..NOTHING });
    let described = [
        ("1.0.0".to_owned(), Some("Sparkline".to_owned())),
        ("1.1.0".to_owned(), Some(String::new())),
        // As its publish wrote it (a manifest this short does not parse: no description).
        ("2.0.0".to_owned(), Some(String::new())),
    ];
    assert_eq!(descriptions(&db).await, described);
    assert_eq!(
        backfill_earlier_release_versions(&db, Some(&bundles)).await.unwrap(),
        NOTHING,
        "a second start changes nothing"
    );
    assert_eq!(descriptions(&db).await, described);
}

async fn versions_stored_before_the_byte_quota_count_their_size(db: DatabaseConnection) {
    support::roll_back_through(&db, "m20261226_000002_registry_publisher_usage").await;
    let (first, second): (&[u8], &[u8]) = (b"export function useChart() {}", b"export function useChart() { }");
    let long_ago = Utc.with_ymd_and_hms(2020, 1, 1, 0, 0, 0).unwrap();
    let before_the_quota = [
        gadget(
            "1.0.0",
            json!({ "kind": "gadget", "description": "a" }),
            first,
            long_ago,
        ),
        gadget(
            "1.1.0",
            json!({ "kind": "gadget", "description": "bb" }),
            second,
            long_ago,
        ),
        // Its bundle is gone: it costs its manifest.
        gadget("1.2.0", json!({ "kind": "gadget" }), b"lost", long_ago),
    ];
    for version in &before_the_quota {
        insert_as_an_earlier_release(&db, version).await;
    }
    Migrator::up(&db, None).await.unwrap();
    let repo = SeaOrmArtifactRepository::new(db.clone());
    assert_eq!(repo.publisher_stored_bytes("acme").await.unwrap(), 0);

    // Stored after the quota by a registry that charged it but did not record its size.
    let charged = gadget("2.0.0", json!({ "kind": "gadget" }), first, Utc::now());
    let charged_cost = cost(&charged, first.len());
    repo.publish(&charged, charged_cost, DEFAULT_PUBLISH_QUOTA)
        .await
        .unwrap();
    let cleared = Query::update()
        .table(Alias::new("registry_artifact_versions"))
        .value(Alias::new("stored_bytes"), Expr::val(None::<i64>))
        .and_where(Expr::col(Alias::new("version")).eq("2.0.0"))
        .to_owned();
    db.execute(&cleared).await.unwrap();

    let bundles = Bundles::holding(&[first, second]);
    let done = backfill_earlier_release_versions(&db, Some(&bundles)).await.unwrap();
    assert_eq!(done.sized, 4);
    let held = charged_cost
        + cost(&before_the_quota[0], first.len())
        + cost(&before_the_quota[1], second.len())
        + cost(&before_the_quota[2], 0);
    assert_eq!(repo.publisher_stored_bytes("acme").await.unwrap(), held);
    assert_eq!(
        backfill_earlier_release_versions(&db, Some(&bundles)).await.unwrap(),
        NOTHING
    );
    assert_eq!(
        repo.publisher_stored_bytes("acme").await.unwrap(),
        held,
        "a second start charges nothing"
    );

    // The quota now counts them.
    let next = gadget("3.0.0", json!({ "kind": "gadget" }), first, Utc::now());
    let quota = PublishQuota {
        bytes_per_publisher: held,
        ..DEFAULT_PUBLISH_QUOTA
    };
    assert_eq!(
        repo.publish(&next, 1, quota).await.unwrap(),
        PublishOutcome::PublisherFull { stored_bytes: held }
    );
}
