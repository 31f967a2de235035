//! The registry repositories on every backend: versions are immutable, yanked rather than
//! deleted (first reason kept), searchable by kind, scope and visibility; author keys and tokens
//! read back.

use crate::support;

use chrono::{DateTime, TimeZone, Utc};
use sea_orm::DatabaseConnection;
use serde_json::json;
use svc_application::ports::registry::{
    ArtifactQuery, ArtifactRepository, AuthorKey, AuthorKeyRepository, KeyRegistration, Publisher,
    RegistryTokenRepository, TransitionError,
};
use svc_domain::artifact::{
    ArtifactError, ArtifactIdentity, ArtifactKind, ArtifactName, ArtifactScope, ArtifactVersion, BundleDigest,
    PublishArtifact, SignatureAlgorithm, StoredSignature, Visibility, YankOutcome,
};
use svc_sql::registry::{SeaOrmArtifactRepository, SeaOrmAuthorKeyRepository, SeaOrmRegistryTokenRepository};

support::backend_tests!(
    versions_read_back_whole_and_are_immutable,
    yanking_keeps_the_version_and_its_first_reason,
    search_narrows_by_kind_scope_and_visibility,
    author_keys_and_tokens_read_back
);

fn at(second: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, second).unwrap()
}

fn version(scope: &str, name: &str, semver: &str, kind: ArtifactKind, visibility: Visibility) -> ArtifactVersion {
    let signature = match visibility {
        Visibility::Private => StoredSignature {
            algorithm: SignatureAlgorithm::Ed25519,
            public_key_id: Some("abcdefghijklmnop".into()),
            value: Some("c2ln".into()),
            sigstore_bundle: None,
        },
        Visibility::Public => StoredSignature {
            algorithm: SignatureAlgorithm::Sigstore,
            public_key_id: None,
            value: None,
            sigstore_bundle: Some(json!({ "mediaType": "bundle" })),
        },
    };
    ArtifactVersion::publish(
        PublishArtifact {
            identity: ArtifactIdentity::parse(scope, name, semver).unwrap(),
            kind,
            visibility,
            publisher: scope.trim_start_matches('@').into(),
            manifest: json!({ "kind": kind.as_str(), "tags": ["a", "b"] }),
            author_public_key: (visibility == Visibility::Private).then(|| "cHVibGljLWtleQ==".into()),
            signature,
            bundle_sri: BundleDigest::of(semver.as_bytes()).sri(),
        },
        at(1),
    )
    .unwrap()
}

async fn versions_read_back_whole_and_are_immutable(db: DatabaseConnection) {
    let repo = SeaOrmArtifactRepository::new(db);
    for visibility in [Visibility::Private, Visibility::Public] {
        let name = visibility.as_str();
        let published = version("@acme", name, "1.2.3", ArtifactKind::Gadget, visibility);
        repo.publish(&published).await.unwrap();
        assert_eq!(repo.get(&published.identity).await.unwrap(), Some(published.clone()));
        let again = repo.publish(&published).await;
        assert!(matches!(
            again,
            Err(TransitionError::Rejected(ArtifactError::VersionExists))
        ));
    }
    let missing = ArtifactIdentity::parse("@acme", "private", "9.9.9").unwrap();
    assert_eq!(repo.get(&missing).await.unwrap(), None);
}

async fn yanking_keeps_the_version_and_its_first_reason(db: DatabaseConnection) {
    let repo = SeaOrmArtifactRepository::new(db);
    let published = version("@acme", "chart", "1.0.0", ArtifactKind::Gadget, Visibility::Private);
    repo.publish(&published).await.unwrap();
    let (yanked, outcome) = repo.yank(&published.identity, "broken", at(2)).await.unwrap();
    assert_eq!(outcome, YankOutcome::Yanked);
    let (again, outcome) = repo.yank(&published.identity, "other", at(3)).await.unwrap();
    assert_eq!(outcome, YankOutcome::AlreadyYanked);
    assert_eq!(again.yank_reason.as_deref(), Some("broken"));
    let stored = repo.get(&published.identity).await.unwrap().unwrap();
    assert_eq!(stored, yanked);
    assert_eq!(stored.manifest, published.manifest);
    let missing = ArtifactIdentity::parse("@acme", "chart", "2.0.0").unwrap();
    assert!(matches!(
        repo.yank(&missing, "x", at(4)).await,
        Err(TransitionError::Rejected(ArtifactError::NotFound))
    ));
}

async fn search_narrows_by_kind_scope_and_visibility(db: DatabaseConnection) {
    let repo = SeaOrmArtifactRepository::new(db);
    let rows = [
        version("@acme", "chart", "1.0.0", ArtifactKind::Gadget, Visibility::Public),
        version("@acme", "board", "1.0.0", ArtifactKind::Blueprint, Visibility::Private),
        version("@other", "chart", "1.0.0", ArtifactKind::Gadget, Visibility::Public),
        version("@acme", "chart", "0.9.0", ArtifactKind::Gadget, Visibility::Public),
    ];
    for row in &rows {
        repo.publish(row).await.unwrap();
    }
    repo.yank(&rows[3].identity, "old", at(2)).await.unwrap();
    let found = |query: ArtifactQuery| {
        let repo = &repo;
        async move {
            let mut ids: Vec<String> = repo
                .search(&query)
                .await
                .unwrap()
                .into_iter()
                .map(|v| v.identity.to_string())
                .collect();
            ids.sort();
            ids
        }
    };
    assert_eq!(
        found(ArtifactQuery::default()).await,
        ["@acme/chart@1.0.0", "@other/chart@1.0.0"]
    );
    assert_eq!(
        found(ArtifactQuery {
            include_private: true,
            scope: Some(ArtifactScope::parse("@acme").unwrap()),
            ..ArtifactQuery::default()
        })
        .await,
        ["@acme/board@1.0.0", "@acme/chart@1.0.0"]
    );
    assert_eq!(
        found(ArtifactQuery {
            include_private: true,
            kind: Some(ArtifactKind::Blueprint),
            ..ArtifactQuery::default()
        })
        .await,
        ["@acme/board@1.0.0"]
    );
    let all = repo
        .versions(
            &ArtifactScope::parse("@acme").unwrap(),
            &ArtifactName::parse("chart").unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(all.len(), 2, "yanked versions are listed too");
}

async fn author_keys_and_tokens_read_back(db: DatabaseConnection) {
    let keys = SeaOrmAuthorKeyRepository::new(db.clone());
    let key = AuthorKey {
        public_key_id: "abcdefghijklmnop".into(),
        public_key: "cHVibGljLWtleQ==".into(),
        publisher: "acme".into(),
        created_at: at(1),
    };
    assert_eq!(
        keys.register(&key).await.unwrap(),
        KeyRegistration::Created(key.clone())
    );
    let again = AuthorKey {
        created_at: at(2),
        ..key.clone()
    };
    assert_eq!(
        keys.register(&again).await.unwrap(),
        KeyRegistration::Existing(key.clone())
    );
    let stolen = AuthorKey {
        publisher: "mallory".into(),
        ..key.clone()
    };
    assert_eq!(keys.register(&stolen).await.unwrap(), KeyRegistration::OwnedByAnother);
    assert_eq!(keys.get("abcdefghijklmnop").await.unwrap(), Some(key));
    assert_eq!(keys.get("unknown").await.unwrap(), None);

    let tokens = SeaOrmRegistryTokenRepository::new(db);
    let admin = Publisher {
        name: "root".into(),
        admin: true,
    };
    tokens.insert("hash", &admin, at(1)).await.unwrap();
    assert_eq!(tokens.find("hash").await.unwrap(), Some(admin));
    assert_eq!(tokens.find("other").await.unwrap(), None);
}
