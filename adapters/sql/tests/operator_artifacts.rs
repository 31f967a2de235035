//! SeaOrmArtifactRepository on every backend: versions are immutable, yanked rather than
//! deleted, and a yanked version still reads back with its manifest.

mod support;

use chrono::{DateTime, TimeZone, Utc};
use sea_orm::DatabaseConnection;
use svc_application::ports::operator::{ArtifactRepository, TransitionError};
use svc_domain::artifact::{
    ArtifactError, ArtifactIdentity, ArtifactKind, ArtifactSignature, ArtifactStatus, ArtifactVersion, PublishArtifact,
    Visibility, YankOutcome,
};
use svc_sql::operator::SeaOrmArtifactRepository;

support::backend_tests!(
    a_published_version_reads_back_whole,
    republishing_is_refused,
    yanking_keeps_the_version
);

fn at(second: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, second).unwrap()
}

fn identity(version: &str) -> ArtifactIdentity {
    ArtifactIdentity::parse("acme", "date-picker", version).unwrap()
}

fn gadget(version: &str) -> ArtifactVersion {
    let command = PublishArtifact {
        identity: identity(version),
        kind: ArtifactKind::Gadget,
        visibility: Visibility::Private,
        manifest: serde_json::json!({ "kind": "gadget", "exports": [{ "hook": "useDatePicker" }] }),
        signature: ArtifactSignature {
            algorithm: "ed25519".into(),
            public_key_id: "abcdefghijklmnop".into(),
            bundle_sha384: "digest".into(),
        },
        author_public_key: "cHVibGljLWtleQ==".into(),
        bundle_sri: Some(format!("sha384-{}", "A".repeat(64))),
    };
    ArtifactVersion::publish(command, at(1)).unwrap()
}

async fn a_published_version_reads_back_whole(db: DatabaseConnection) {
    let artifacts = SeaOrmArtifactRepository::new(db.clone());
    let version = gadget("1.2.3-alpha.1+build.42");
    artifacts.publish(&version).await.unwrap();
    assert_eq!(artifacts.get(&version.identity).await.unwrap(), Some(version));
    assert_eq!(artifacts.get(&identity("9.9.9")).await.unwrap(), None);
}

async fn republishing_is_refused(db: DatabaseConnection) {
    let artifacts = SeaOrmArtifactRepository::new(db.clone());
    artifacts.publish(&gadget("1.0.0")).await.unwrap();
    artifacts.publish(&gadget("1.0.1")).await.unwrap();
    let again = artifacts.publish(&gadget("1.0.0")).await.unwrap_err();
    assert!(
        matches!(again, TransitionError::Rejected(ArtifactError::VersionExists)),
        "{again:?}"
    );
}

async fn yanking_keeps_the_version(db: DatabaseConnection) {
    let artifacts = SeaOrmArtifactRepository::new(db.clone());
    let version = gadget("2.0.0");
    artifacts.publish(&version).await.unwrap();

    let (yanked, outcome) = artifacts.yank(&version.identity, at(5)).await.unwrap();
    assert_eq!((yanked.status, outcome), (ArtifactStatus::Yanked, YankOutcome::Yanked));
    let (again, outcome) = artifacts.yank(&version.identity, at(6)).await.unwrap();
    assert_eq!((again.yanked_at, outcome), (Some(at(5)), YankOutcome::AlreadyYanked));

    let stored = artifacts.get(&version.identity).await.unwrap().unwrap();
    assert!(stored.is_yanked());
    assert_eq!(
        stored.manifest, version.manifest,
        "a yanked version still answers with its manifest"
    );
    let republish = artifacts.publish(&version).await.unwrap_err();
    assert!(matches!(
        republish,
        TransitionError::Rejected(ArtifactError::VersionExists)
    ));
    let missing = artifacts.yank(&identity("3.0.0"), at(7)).await.unwrap_err();
    assert!(matches!(missing, TransitionError::Rejected(ArtifactError::NotFound)));
}
