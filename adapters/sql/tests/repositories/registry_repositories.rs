//! The registry repositories on every backend: versions are immutable, yanked rather than
//! deleted (first reason kept), each package's latest version found by kind, scope, visibility, text,
//! tag and hook; author keys and tokens
//! read back.

use crate::support;

use chrono::{DateTime, TimeZone, Utc};
use sea_orm::sea_query::{Alias, InsertStatement, Query};
use sea_orm::{ConnectionTrait, DatabaseConnection};
use sea_orm_migration::MigratorTrait;
use serde_json::json;
use svc_application::ports::registry::{
    ArtifactQuery, ArtifactRepository, AuthorKey, AuthorKeyRepository, KeyRegistration, PackageKey, PublishOutcome,
    Publisher, RegistryTokenRepository, ResultPage, TransitionError,
};
use svc_application::services::registry::DEFAULT_PUBLISH_QUOTA;
use svc_domain::artifact::{
    ArtifactError, ArtifactIdentity, ArtifactKind, ArtifactManifest, ArtifactName, ArtifactScope, ArtifactVersion,
    BundleDigest, PublishArtifact, SignatureAlgorithm, StoredSignature, Visibility, YankOutcome,
};
use svc_sql::Migrator;
use svc_sql::registry::{
    SeaOrmArtifactRepository, SeaOrmAuthorKeyRepository, SeaOrmRegistryTokenRepository, describe_undescribed_versions,
    key_unkeyed_versions, key_unreleased_versions,
};

support::backend_tests!(
    versions_read_back_whole_and_are_immutable,
    yanking_keeps_the_version_and_its_first_reason,
    each_package_answers_its_latest_version_in_byte_order,
    text_tags_and_hooks_narrow_the_latest_versions,
    versions_stored_before_the_search_columns_are_found,
    a_release_is_stored_once_whatever_its_build_metadata,
    twins_stored_before_the_release_key_keep_their_rows,
    registries_keying_at_once_leave_one_holder_per_release,
    author_keys_and_tokens_read_back,
    listings_read_the_listing_columns_not_the_manifest
);

/// Publishes `version` under the default quota, which these tests never reach.
async fn store(
    repo: &SeaOrmArtifactRepository,
    version: &ArtifactVersion,
) -> Result<(), TransitionError<ArtifactError>> {
    let outcome = repo.publish(version, 1, DEFAULT_PUBLISH_QUOTA).await?;
    assert_eq!(outcome, PublishOutcome::Published);
    Ok(())
}

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
        store(&repo, &published).await.unwrap();
        assert_eq!(repo.get(&published.identity).await.unwrap(), Some(published.clone()));
        let again = store(&repo, &published).await;
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
    store(&repo, &published).await.unwrap();
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

/// The identities `latest_versions` answers for `query` (the first 50).
async fn latest(repo: &SeaOrmArtifactRepository, query: ArtifactQuery) -> Vec<String> {
    latest_page(repo, query, ResultPage { after: None, limit: 50 }).await
}

async fn latest_page(repo: &SeaOrmArtifactRepository, query: ArtifactQuery, page: ResultPage) -> Vec<String> {
    repo.latest_versions(&query, page)
        .await
        .unwrap()
        .into_iter()
        .map(|v| v.identity.to_string())
        .collect()
}

async fn each_package_answers_its_latest_version_in_byte_order(db: DatabaseConnection) {
    use ArtifactKind::{Blueprint, Gadget};
    use Visibility::{Private, Public};
    let repo = SeaOrmArtifactRepository::new(db.clone());
    let rows = [
        version("@acme", "chart", "1.9.0", Gadget, Public),
        version("@acme", "chart", "1.10.0", Gadget, Public),
        version("@acme", "chart", "1.10.0-rc.1", Gadget, Public),
        version("@acme", "chart", "2.0.0", Gadget, Public),
        version("@acme", "chart", "3.0.0-beta", Gadget, Private),
        version("@acme", "ab", "1.0.0", Gadget, Public),
        version("@acme", "a-c", "1.0.0", Gadget, Public),
        version("@acme", "board", "1.0.0", Blueprint, Private),
    ];
    for row in &rows {
        store(&repo, row).await.unwrap();
    }
    // Twins of one release (no longer stored side by side, but kept from before the release key):
    // build metadata orders them.
    let twins =
        ["1.0.0", "1.0.0+build.2", "1.0.0+build.10"].map(|semver| version("@other", "chart", semver, Gadget, Public));
    insert_unkeyed(&db, &twins).await;
    key_unkeyed_versions(&db).await.unwrap();
    key_unreleased_versions(&db).await.unwrap();
    // The highest version is yanked: the next one answers.
    repo.yank(&rows[3].identity, "broken", at(2)).await.unwrap();
    let anonymous = [
        "@acme/a-c@1.0.0",
        "@acme/ab@1.0.0",
        "@acme/chart@1.10.0",
        "@other/chart@1.0.0+build.10",
    ];
    assert_eq!(latest(&repo, ArtifactQuery::default()).await, anonymous);
    assert_eq!(
        latest(
            &repo,
            ArtifactQuery {
                include_private: true,
                scope: Some(ArtifactScope::parse("@acme").unwrap()),
                ..ArtifactQuery::default()
            }
        )
        .await,
        [
            "@acme/a-c@1.0.0",
            "@acme/ab@1.0.0",
            "@acme/board@1.0.0",
            "@acme/chart@3.0.0-beta"
        ]
    );
    assert_eq!(
        latest(
            &repo,
            ArtifactQuery {
                include_private: true,
                kind: Some(Blueprint),
                ..ArtifactQuery::default()
            }
        )
        .await,
        ["@acme/board@1.0.0"]
    );
    // Keyset pages: after a package, in the same order.
    let after = |scope: &str, name: &str| {
        Some(PackageKey {
            scope: scope.into(),
            name: name.into(),
        })
    };
    let pages = [
        (None, 2, &anonymous[..2]),
        (after("@acme", "a-c"), 2, &anonymous[1..3]),
        (after("@acme", "ab"), 5, &anonymous[2..]),
        // A package that is not there still places the page: after "@acme/b", before "@acme/chart".
        (after("@acme", "b"), 1, &anonymous[2..3]),
        (after("@acme", "zzz"), 5, &anonymous[3..]),
        (after("@other", "chart"), 5, &[][..]),
    ];
    for (after, limit, expected) in pages {
        let page = latest_page(
            &repo,
            ArtifactQuery::default(),
            ResultPage {
                after: after.clone(),
                limit,
            },
        )
        .await;
        assert_eq!(page, expected, "after {after:?}, limit {limit}");
    }
    let text = |needle: &str| ArtifactQuery {
        text: Some(needle.into()),
        ..ArtifactQuery::default()
    };
    assert_eq!(latest(&repo, text("a-")).await, ["@acme/a-c@1.0.0"]);
    // `LIKE`'s wildcards are literal text.
    assert_eq!(latest(&repo, text("a_c")).await, Vec::<String>::new());
    assert_eq!(latest(&repo, text("%")).await, Vec::<String>::new());
    let (acme, chart) = (
        ArtifactScope::parse("@acme").unwrap(),
        ArtifactName::parse("chart").unwrap(),
    );
    let all = repo.version_rows(&acme, &chart, None).await.unwrap();
    assert_eq!(all.len(), 5, "yanked versions are listed too");
    assert_eq!(repo.count_versions(&acme, &chart).await.unwrap(), 5);
}

/// A version whose manifest parses, so its description, tags and hooks are searchable.
fn described(semver: &str, description: &str, tags: &[&str], hook: &str) -> ArtifactVersion {
    let mut published = version("@acme", "sparkline", semver, ArtifactKind::Gadget, Visibility::Private);
    published.manifest = json!({
        "kind": "gadget", "scope": "@acme", "name": "sparkline", "version": semver,
        "visibility": "private", "description": description, "tags": tags,
        "signature": {
            "algorithm": "ed25519", "publicKeyId": "abcdefghijklmnop",
            "bundleSha384": "sha384-OLBgp1GsljhM2TJ+sbHjaiH9txEUvgdDTAzHv2P24donTt6/529l+9Ua0vFImLlb"
        },
        "authorPublicKey": "A".repeat(43) + "=",
        "gadget": { "exports": [{ "hook": hook, "description": "d", "usage": "u", "example": "e" }] }
    });
    ArtifactManifest::parse(&published.manifest).expect("the test's manifest parses");
    published
}

async fn text_tags_and_hooks_narrow_the_latest_versions(db: DatabaseConnection) {
    let repo = SeaOrmArtifactRepository::new(db);
    store(&repo, &described("0.9.0", "Old sparkline", &["old"], "useOldSparkline"))
        .await
        .unwrap();
    store(
        &repo,
        &described("1.0.0", "Sparkline, 50% Faster", &["chart", "svg"], "useSparkline"),
    )
    .await
    .unwrap();
    store(
        &repo,
        &version("@acme", "other", "1.0.0", ArtifactKind::Gadget, Visibility::Private),
    )
    .await
    .unwrap();
    let query = |text: Option<&str>, tag: Option<&str>, hook: Option<&str>| ArtifactQuery {
        include_private: true,
        text: text.map(str::to_owned),
        tag: tag.map(str::to_owned),
        hook: hook.map(str::to_owned),
        ..ArtifactQuery::default()
    };
    let found = ["@acme/sparkline@1.0.0"];
    let none: [&str; 0] = [];
    let rows: [(ArtifactQuery, &[&str]); 10] = [
        (query(Some("50% faster"), None, None), &found),
        (query(Some("50_"), None, None), &none),
        (query(Some("svg"), None, None), &found),
        (query(None, Some("chart"), None), &found),
        (query(None, Some("char"), None), &none),
        (query(None, None, Some("useSparkline")), &found),
        (query(None, None, Some("useSpark")), &none),
        (query(Some("sparkline"), Some("svg"), Some("useSparkline")), &found),
        // The narrowing applies to each package's latest version, not to older ones.
        (query(None, Some("old"), None), &none),
        (query(Some("old sparkline"), None, None), &none),
    ];
    for (query, expected) in rows {
        assert_eq!(latest(&repo, query.clone()).await, expected, "{query:?}");
    }
}

/// A version as the table held it before m20261217_000001 (no search columns).
fn insert_before_the_search_columns(version: &ArtifactVersion) -> InsertStatement {
    let column = |name: &str| Alias::new(name);
    Query::insert()
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
            .map(column),
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
        .to_owned()
}

/// Inserts `versions` as a registry of an earlier release writes them: no search columns.
async fn insert_unkeyed(db: &DatabaseConnection, versions: &[ArtifactVersion]) {
    let backend = db.get_database_backend();
    for version in versions {
        db.execute_raw(backend.build(&insert_before_the_search_columns(version)))
            .await
            .unwrap();
    }
}

async fn versions_stored_before_the_search_columns_are_found(db: DatabaseConnection) {
    support::roll_back_through(&db, "m20261217_000001_registry_search_columns").await;
    // More than one page of the keying (500), so its paging is crossed.
    let many: Vec<ArtifactVersion> = (0..=520)
        .map(|patch| {
            version(
                "@acme",
                "many",
                &format!("1.0.{patch}"),
                ArtifactKind::Gadget,
                Visibility::Public,
            )
        })
        .collect();
    insert_unkeyed(&db, &many).await;
    insert_unkeyed(
        &db,
        &[
            described("1.9.0", "Sparkline", &["old"], "useSparkline"),
            described("1.10.0", "Sparkline", &["chart"], "useSparkline"),
            version("@acme", "board", "1.0.0", ArtifactKind::Blueprint, Visibility::Public),
        ],
    )
    .await;

    Migrator::up(&db, None).await.unwrap();

    let repo = SeaOrmArtifactRepository::new(db.clone());
    let query = |text: Option<&str>, tag: Option<&str>| ArtifactQuery {
        include_private: true,
        text: text.map(str::to_owned),
        tag: tag.map(str::to_owned),
        ..ArtifactQuery::default()
    };
    assert_eq!(
        latest(&repo, query(None, None)).await,
        ["@acme/board@1.0.0", "@acme/many@1.0.520", "@acme/sparkline@1.10.0"]
    );
    assert_eq!(
        latest(&repo, query(None, Some("chart"))).await,
        ["@acme/sparkline@1.10.0"]
    );
    assert_eq!(
        latest(&repo, query(Some("sparkl"), None)).await,
        ["@acme/sparkline@1.10.0"]
    );
    let page = ResultPage { after: None, limit: 50 };
    let hits = repo.latest_versions(&query(None, None), page.clone()).await.unwrap();
    let descriptions: Vec<&str> = hits.iter().map(|hit| hit.description.as_str()).collect();
    assert_eq!(
        descriptions,
        ["", "", "Sparkline"],
        "the migration described the stored versions"
    );

    // A version an earlier release publishes after the migration is not found until keyed, as a
    // registry of this release does when it starts.
    insert_unkeyed(
        &db,
        &[version(
            "@acme",
            "many",
            "2.0.0",
            ArtifactKind::Gadget,
            Visibility::Public,
        )],
    )
    .await;
    let many = || async { latest(&repo, query(Some("many"), None)).await };
    assert_eq!(many().await, ["@acme/many@1.0.520"]);
    assert_eq!(
        latest(&repo, query(None, None)).await,
        ["@acme/board@1.0.0", "@acme/many@1.0.520", "@acme/sparkline@1.10.0"],
        "with no filter either: one answer per package"
    );
    assert_eq!(key_unkeyed_versions(&db).await.unwrap(), 1);
    assert_eq!(many().await, ["@acme/many@2.0.0"]);
    assert_eq!(key_unkeyed_versions(&db).await.unwrap(), 0);
    // ... and described as it starts, too.
    assert_eq!(describe_undescribed_versions(&db).await.unwrap(), 1);
    assert_eq!(describe_undescribed_versions(&db).await.unwrap(), 0);
    let hits = repo.latest_versions(&query(None, None), page).await.unwrap();
    let descriptions: Vec<&str> = hits.iter().map(|hit| hit.description.as_str()).collect();
    assert_eq!(descriptions, ["", "", "Sparkline"]);
}

fn gadget(semver: &str, published: u32) -> ArtifactVersion {
    ArtifactVersion {
        published_at: at(published),
        ..version("@acme", "chart", semver, ArtifactKind::Gadget, Visibility::Public)
    }
}

fn refused(outcome: Result<(), TransitionError<ArtifactError>>) -> bool {
    matches!(outcome, Err(TransitionError::Rejected(ArtifactError::VersionExists)))
}

/// The store refuses a version whose release (the version without build metadata) the package
/// holds, whichever of the two carries build metadata: two publishes that both passed the
/// service's read cannot both be stored. Another release, another package, a pre-release can.
async fn a_release_is_stored_once_whatever_its_build_metadata(db: DatabaseConnection) {
    let repo = SeaOrmArtifactRepository::new(db);
    store(&repo, &gadget("1.2.3", 1)).await.unwrap();
    for twin in ["1.2.3+fix", "1.2.3+build.2"] {
        assert!(refused(store(&repo, &gadget(twin, 2)).await), "{twin}");
    }
    store(&repo, &gadget("2.0.0+first", 3)).await.unwrap();
    assert!(refused(store(&repo, &gadget("2.0.0", 4)).await));
    for other in ["1.2.4", "1.2.3-rc.1"] {
        store(&repo, &gadget(other, 5)).await.unwrap();
    }
    let elsewhere = version("@acme", "board", "1.2.3+fix", ArtifactKind::Gadget, Visibility::Public);
    store(&repo, &elsewhere).await.unwrap();
    let stored = repo
        .version_rows(
            &ArtifactScope::parse("@acme").unwrap(),
            &ArtifactName::parse("chart").unwrap(),
            None,
        )
        .await
        .unwrap();
    let mut names: Vec<&str> = stored.iter().map(|v| v.identity.version.as_str()).collect();
    names.sort();
    assert_eq!(names, ["1.2.3", "1.2.3-rc.1", "1.2.4", "2.0.0+first"]);
}

/// The release keys of the stored versions, by version. Read by several pooled connections at
/// once, which must agree: while this test was written, one SQLite connection of the pool went on
/// answering the rows as they were before `Migrator::up` (after a rollback through the
/// migration), which a single read would have caught only some of the time.
async fn release_keys(db: &DatabaseConnection) -> Vec<(String, Option<String>)> {
    let select = Query::select()
        .columns([Alias::new("version"), Alias::new("release_key")])
        .from(Alias::new("registry_artifact_versions"))
        .to_owned();
    let backend = db.get_database_backend();
    let read = || async {
        let mut keys: Vec<(String, Option<String>)> = db
            .query_all_raw(backend.build(&select))
            .await
            .unwrap()
            .iter()
            .map(|row| {
                (
                    row.try_get("", "version").unwrap(),
                    row.try_get("", "release_key").unwrap(),
                )
            })
            .collect();
        keys.sort();
        keys
    };
    let reads = futures_util::future::join_all((0..4).map(|_| read())).await;
    assert!(reads.windows(2).all(|pair| pair[0] == pair[1]), "{reads:?}");
    reads.into_iter().next().unwrap()
}

/// Twins stored before the release key (the race it closes) stay readable after the migration,
/// and a third publish of their release is refused; so are twins a registry of an earlier
/// release stores later, keyed at a registry's start. Of each pair the one published first
/// holds the release and the later one a key of its own, whichever carries build metadata.
async fn twins_stored_before_the_release_key_keep_their_rows(db: DatabaseConnection) {
    support::roll_back_through(&db, "m20261219_000001_registry_release_keys").await;
    let before = [
        gadget("1.2.3", 1),
        gadget("1.2.3+fix", 2),
        gadget("2.0.0", 4),
        gadget("2.0.0+first", 3),
    ];
    insert_unkeyed(&db, &before).await;
    Migrator::up(&db, None).await.unwrap();
    let repo = SeaOrmArtifactRepository::new(db.clone());
    for version in &before {
        assert!(
            repo.get(&version.identity).await.unwrap().is_some(),
            "{}",
            version.identity
        );
    }
    assert!(refused(store(&repo, &gadget("1.2.3+again", 5)).await));
    assert!(refused(store(&repo, &gadget("2.0.0+again", 5)).await));

    let later = [gadget("3.0.0", 6), gadget("4.0.0", 9), gadget("4.0.0+first", 8)];
    insert_unkeyed(&db, &later).await;
    assert_eq!(key_unreleased_versions(&db).await.unwrap(), 3);
    assert_eq!(key_unreleased_versions(&db).await.unwrap(), 0);
    let held = |version: &str, key: &str| (version.to_owned(), Some(key.to_owned()));
    assert_eq!(
        release_keys(&db).await,
        [
            held("1.2.3", "1.2.3"),
            held("1.2.3+fix", "1.2.3+fix"),
            held("2.0.0", "2.0.0+"),
            held("2.0.0+first", "2.0.0"),
            held("3.0.0", "3.0.0"),
            held("4.0.0", "4.0.0+"),
            held("4.0.0+first", "4.0.0"),
        ]
    );
    for twin in ["3.0.0+late", "4.0.0+late"] {
        assert!(refused(store(&repo, &gadget(twin, 10)).await), "{twin}");
    }
}

/// Two registries starting at once key the same versions an earlier release stored: both finish,
/// and each release has exactly one holder (none keyed twice, none left unguarded).
async fn registries_keying_at_once_leave_one_holder_per_release(db: DatabaseConnection) {
    const RELEASES: usize = 40;
    let twins: Vec<ArtifactVersion> = (0..RELEASES)
        .flat_map(|patch| [gadget(&format!("1.0.{patch}"), 1), gadget(&format!("1.0.{patch}+b"), 2)])
        .collect();
    insert_unkeyed(&db, &twins).await;
    let (first, second) = tokio::join!(key_unreleased_versions(&db), key_unreleased_versions(&db));
    assert!(first.unwrap() + second.unwrap() >= twins.len() as u64);
    let keys = release_keys(&db).await;
    assert!(keys.iter().all(|(_, key)| key.is_some()), "{keys:?}");
    for patch in 0..RELEASES {
        let release = format!("1.0.{patch}");
        let holders = keys
            .iter()
            .filter(|(_, key)| key.as_deref() == Some(release.as_str()))
            .count();
        assert_eq!(holders, 1, "{release}: {keys:?}");
    }
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

/// A search answers description, tags and hooks, and a version listing its versions highest
/// first, bounded, from the listing columns: a manifest that no longer holds them (here replaced
/// behind the store's back by a large blob) is never read.
async fn listings_read_the_listing_columns_not_the_manifest(db: DatabaseConnection) {
    let repo = SeaOrmArtifactRepository::new(db.clone());
    for semver in ["1.0.0", "1.10.0", "1.2.0", "2.0.0-rc.1"] {
        store(
            &repo,
            &described(semver, "Sparkline, \"quoted\" é", &["chart", "svg"], "useSparkline"),
        )
        .await
        .unwrap();
    }
    let (acme, sparkline) = (
        ArtifactScope::parse("@acme").unwrap(),
        ArtifactName::parse("sparkline").unwrap(),
    );
    let page = ResultPage { after: None, limit: 10 };
    let query = ArtifactQuery {
        include_private: true,
        ..ArtifactQuery::default()
    };
    let listed = repo.latest_versions(&query, page.clone()).await.unwrap();
    assert_eq!(listed.len(), 1);
    let latest = &listed[0];
    assert_eq!(latest.identity.to_string(), "@acme/sparkline@2.0.0-rc.1");
    assert_eq!(
        (
            latest.description.as_str(),
            latest.tags.as_slice(),
            latest.hooks.as_slice()
        ),
        (
            "Sparkline, \"quoted\" é",
            &["chart".to_owned(), "svg".to_owned()][..],
            &["useSparkline".to_owned()][..]
        )
    );
    assert_eq!(
        (latest.kind, latest.visibility, latest.publisher.as_str()),
        (ArtifactKind::Gadget, Visibility::Private, "acme")
    );

    let rows = repo.version_rows(&acme, &sparkline, Some(3)).await.unwrap();
    let versions: Vec<&str> = rows.iter().map(|r| r.identity.version.as_str()).collect();
    assert_eq!(
        versions,
        ["2.0.0-rc.1", "1.10.0", "1.2.0"],
        "highest first, at most the limit"
    );
    assert!(
        rows.iter()
            .all(|r| r.visibility == Visibility::Private && r.published_at == at(1))
    );
    assert!(repo.has_private_version(&acme, &sparkline).await.unwrap());
    let other = ArtifactName::parse("other").unwrap();
    assert!(!repo.has_private_version(&acme, &other).await.unwrap());
    assert!(repo.version_rows(&acme, &other, None).await.unwrap().is_empty());
    store(
        &repo,
        &version("@acme", "public", "1.0.0", ArtifactKind::Gadget, Visibility::Public),
    )
    .await
    .unwrap();
    let public = ArtifactName::parse("public").unwrap();
    assert!(!repo.has_private_version(&acme, &public).await.unwrap());

    // The manifests replaced by JSON that is no manifest at all: the listings still answer.
    let blob = json!({ "description": "replaced", "fixtureProps": "x".repeat(64 * 1024) });
    let update = Query::update()
        .table(Alias::new("registry_artifact_versions"))
        .value(Alias::new("manifest"), blob)
        .to_owned();
    db.execute_raw(db.get_database_backend().build(&update)).await.unwrap();
    let listed = repo.latest_versions(&query, page).await.unwrap();
    let names: Vec<&str> = listed.iter().map(|l| l.identity.name.as_str()).collect();
    assert_eq!(names, ["public", "sparkline"]);
    assert_eq!(
        listed[1].description, "Sparkline, \"quoted\" é",
        "the description is read from its column, never from the manifest"
    );
    assert_eq!(listed[1].tags, ["chart", "svg"], "tags come from the facets column");
    assert_eq!(listed[1].hooks, ["useSparkline"], "hooks come from the facets column");
    assert_eq!(repo.version_rows(&acme, &sparkline, None).await.unwrap().len(), 4);
}
