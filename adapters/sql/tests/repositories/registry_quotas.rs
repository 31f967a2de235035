//! The registry's publish quota on every backend: of publishes racing at a package's version cap
//! or at a publisher's stored bytes, exactly as many are stored as there is room for, each of the
//! others told why; another package's or publisher's room is its own.

use std::sync::Arc;

use crate::support;

use chrono::{TimeZone, Utc};
use sea_orm::DatabaseConnection;
use serde_json::json;
use svc_application::ports::registry::{ArtifactRepository, PublishOutcome, PublishQuota};
use svc_domain::artifact::{
    ArtifactIdentity, ArtifactKind, ArtifactName, ArtifactScope, ArtifactVersion, BundleDigest, PublishArtifact,
    SignatureAlgorithm, StoredSignature, Visibility,
};
use svc_sql::registry::SeaOrmArtifactRepository;
use tokio::sync::Barrier;

support::backend_tests!(
    racing_publishes_never_pass_the_version_cap,
    racing_publishes_never_pass_the_publishers_bytes
);

const RACERS: usize = 12;
/// What each version costs its publisher in these tests.
const COST: u64 = 100;

fn version(publisher: &str, name: &str, semver: &str) -> ArtifactVersion {
    ArtifactVersion::publish(
        PublishArtifact {
            identity: ArtifactIdentity::parse("@acme", name, semver).unwrap(),
            kind: ArtifactKind::Gadget,
            visibility: Visibility::Public,
            publisher: publisher.into(),
            manifest: json!({ "kind": "gadget", "description": name }),
            author_public_key: None,
            signature: StoredSignature {
                algorithm: SignatureAlgorithm::Sigstore,
                public_key_id: None,
                value: None,
                sigstore_bundle: Some(json!({ "mediaType": "bundle" })),
            },
            bundle_sri: BundleDigest::of(semver.as_bytes()).sri(),
        },
        Utc.with_ymd_and_hms(2026, 12, 26, 0, 0, 0).unwrap(),
    )
    .unwrap()
}

/// Publishes `versions` at once, released together; their outcomes in order.
async fn race(
    repo: &Arc<SeaOrmArtifactRepository>,
    versions: Vec<ArtifactVersion>,
    quota: PublishQuota,
) -> Vec<PublishOutcome> {
    let start = Arc::new(Barrier::new(versions.len()));
    let tasks: Vec<_> = versions
        .into_iter()
        .map(|version| {
            let (repo, start) = (repo.clone(), start.clone());
            tokio::spawn(async move {
                start.wait().await;
                repo.publish(&version, COST, quota).await.unwrap()
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.unwrap());
    }
    outcomes
}

fn published(outcomes: &[PublishOutcome]) -> usize {
    outcomes.iter().filter(|o| **o == PublishOutcome::Published).count()
}

async fn stored_versions(repo: &SeaOrmArtifactRepository, name: &str) -> u64 {
    let (scope, name) = (
        ArtifactScope::parse("@acme").unwrap(),
        ArtifactName::parse(name).unwrap(),
    );
    repo.count_versions(&scope, &name).await.unwrap()
}

async fn racing_publishes_never_pass_the_version_cap(db: DatabaseConnection) {
    let repo = Arc::new(SeaOrmArtifactRepository::new(db));
    let quota = PublishQuota {
        versions_per_package: 5,
        bytes_per_publisher: u64::MAX / 2,
    };
    for patch in 0..2 {
        let outcome = repo
            .publish(&version("acme", "chart", &format!("1.0.{patch}")), COST, quota)
            .await;
        assert_eq!(outcome.unwrap(), PublishOutcome::Published);
    }
    let racers = (0..RACERS)
        .map(|i| version("acme", "chart", &format!("2.0.{i}")))
        .collect();
    let outcomes = race(&repo, racers, quota).await;
    assert_eq!(published(&outcomes), 3, "{outcomes:?}");
    for outcome in &outcomes {
        assert!(
            matches!(
                outcome,
                PublishOutcome::Published | PublishOutcome::PackageFull { stored: 5 }
            ),
            "{outcome:?}"
        );
    }
    assert_eq!(stored_versions(&repo, "chart").await, 5);
    // Another package has room of its own.
    let outcome = repo.publish(&version("acme", "table", "1.0.0"), COST, quota).await;
    assert_eq!(outcome.unwrap(), PublishOutcome::Published);
}

async fn racing_publishes_never_pass_the_publishers_bytes(db: DatabaseConnection) {
    let repo = Arc::new(SeaOrmArtifactRepository::new(db));
    let quota = PublishQuota {
        versions_per_package: 1000,
        bytes_per_publisher: 4 * COST + COST / 2,
    };
    let outcome = repo.publish(&version("acme", "first", "1.0.0"), COST, quota).await;
    assert_eq!(outcome.unwrap(), PublishOutcome::Published);
    // One package each, so only the publisher's bytes hold them back.
    let racers = (0..RACERS)
        .map(|i| version("acme", &format!("p{i}"), "1.0.0"))
        .collect();
    let outcomes = race(&repo, racers, quota).await;
    assert_eq!(published(&outcomes), 3, "{outcomes:?}");
    for outcome in &outcomes {
        assert!(
            matches!(
                outcome,
                PublishOutcome::Published | PublishOutcome::PublisherFull { stored_bytes: 400 }
            ),
            "{outcome:?}"
        );
    }
    assert_eq!(repo.publisher_stored_bytes("acme").await.unwrap(), 4 * COST);
    // An admin publishing into the same scope is charged on its own account.
    let outcome = repo.publish(&version("root", "by-root", "1.0.0"), COST, quota).await;
    assert_eq!(outcome.unwrap(), PublishOutcome::Published);
    assert_eq!(repo.publisher_stored_bytes("root").await.unwrap(), COST);
    assert_eq!(repo.publisher_stored_bytes("nobody").await.unwrap(), 0);
    // A refused publish stores nothing.
    let refused = repo.publish(&version("acme", "late", "1.0.0"), COST, quota).await;
    assert_eq!(refused.unwrap(), PublishOutcome::PublisherFull { stored_bytes: 400 });
    assert_eq!(stored_versions(&repo, "late").await, 0);
}
