use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Alias, Condition, DynIden, Expr, ExprTrait, IntoIden, LikeExpr, Query, SelectStatement};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, DatabaseConnection, DbBackend, DbErr, EntityTrait, FromQueryResult, IdenStatic,
    Order, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
};
use svc_application::ports::RepositoryError;
use svc_application::ports::registry::{
    ArtifactQuery, ArtifactRepository, ListedVersion, PublishOutcome, PublishQuota, ResultPage, TransitionError,
    VersionRow,
};
use svc_domain::artifact::{
    ArtifactError, ArtifactIdentity, ArtifactKind, ArtifactName, ArtifactScope, ArtifactStatus, ArtifactVersion,
    SignatureAlgorithm, StoredSignature, Visibility, YankOutcome,
};

use super::entities::artifact_versions::{self, Column};
use super::publisher_usage;
use super::search_columns::{LIKE_ESCAPE, SearchColumns, containing, with_facet};
use crate::errors::{RACE_ATTEMPTS, contention, corrupt, repository_error};
use crate::write_guards::WriteGuard;

pub struct SeaOrmArtifactRepository {
    db: DatabaseConnection,
}

impl SeaOrmArtifactRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }

    /// Counts the package's versions, charges the publisher and inserts, in one transaction
    /// that holds the package's write guard: concurrent publishes into one package queue, each
    /// counting what the one before it committed; the publisher's row orders its charges.
    async fn publish_bounded(
        &self,
        version: &ArtifactVersion,
        stored_bytes: u64,
        quota: PublishQuota,
    ) -> Result<PublishOutcome, DbErr> {
        let identity = &version.identity;
        let package = format!("{}/{}", identity.scope.as_str(), identity.name.as_str());
        publisher_usage::ensure_row(&self.db, &version.publisher).await?;
        let txn = WriteGuard::versions_of(&package)
            .begin(&self.db, version.published_at)
            .await?;
        let stored = artifact_versions::Entity::find()
            .filter(Column::Scope.eq(identity.scope.as_str()))
            .filter(Column::Name.eq(identity.name.as_str()))
            .count(&txn)
            .await?;
        // Dropping the transaction rolls it back and lets the next publish in.
        if stored >= quota.versions_per_package {
            return Ok(PublishOutcome::PackageFull { stored });
        }
        if !publisher_usage::charge(&txn, &version.publisher, stored_bytes, quota.bytes_per_publisher).await? {
            // Read after the rollback: inside the transaction MariaDB would answer its snapshot,
            // taken by the count above, not what the publish before this one committed.
            txn.rollback().await?;
            let stored_bytes = publisher_usage::read(&self.db, &version.publisher).await?;
            return Ok(PublishOutcome::PublisherFull { stored_bytes });
        }
        artifact_versions::Entity::insert(version_row(version, stored_bytes))
            .exec_without_returning(&txn)
            .await?;
        txn.commit().await?;
        Ok(PublishOutcome::Published)
    }
}

#[async_trait::async_trait]
impl ArtifactRepository for SeaOrmArtifactRepository {
    async fn publish(
        &self,
        version: &ArtifactVersion,
        stored_bytes: u64,
        quota: PublishQuota,
    ) -> Result<PublishOutcome, TransitionError<ArtifactError>> {
        match self.publish_bounded(version, stored_bytes, quota).await {
            Ok(outcome) => Ok(outcome),
            // The triple, or its release (`release_keys.rs`): the service says which.
            Err(error) => match repository_error(error) {
                RepositoryError::Conflict(_) => Err(TransitionError::Rejected(ArtifactError::VersionExists)),
                other => Err(other.into()),
            },
        }
    }

    async fn publisher_stored_bytes(&self, publisher: &str) -> Result<u64, RepositoryError> {
        publisher_usage::read(&self.db, publisher)
            .await
            .map_err(repository_error)
    }

    async fn references_bundle(&self, bundle_sri: &str) -> Result<bool, RepositoryError> {
        // One probe of `ix_registry_artifact_versions_bundle_sri` (m20261228_000001).
        let found = artifact_versions::Entity::find()
            .select_only()
            .column(Column::Version)
            .filter(Column::BundleSri.eq(bundle_sri))
            .limit(1)
            .into_tuple::<String>()
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(found.is_some())
    }

    async fn get(&self, identity: &ArtifactIdentity) -> Result<Option<ArtifactVersion>, RepositoryError> {
        let row = artifact_versions::Entity::find_by_id(primary_key(identity))
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        row.map(version_from_row).transpose()
    }

    async fn version_rows(
        &self,
        scope: &ArtifactScope,
        name: &ArtifactName,
        limit: Option<u64>,
    ) -> Result<Vec<VersionRow>, RepositoryError> {
        let backend = self.db.get_database_backend();
        let mut select = artifact_versions::Entity::find()
            .select_only()
            .columns([
                Column::Scope,
                Column::Name,
                Column::Version,
                Column::Visibility,
                Column::Status,
                Column::PublishedAt,
            ])
            .filter(Column::Scope.eq(scope.as_str()))
            .filter(Column::Name.eq(name.as_str()))
            // Highest first; an unkeyed version (NULL key) last on every backend.
            .order_by(Expr::col(Column::PrecedenceKey).is_null(), Order::Asc)
            .order_by(byte_wise(Column::PrecedenceKey, backend), Order::Desc);
        if let Some(limit) = limit {
            select = select.limit(limit);
        }
        select
            .into_model::<VersionColumns>()
            .all(&self.db)
            .await
            .map_err(repository_error)?
            .into_iter()
            .map(VersionColumns::into_row)
            .collect()
    }

    async fn has_private_version(&self, scope: &ArtifactScope, name: &ArtifactName) -> Result<bool, RepositoryError> {
        let found = artifact_versions::Entity::find()
            .select_only()
            .column(Column::Version)
            .filter(Column::Scope.eq(scope.as_str()))
            .filter(Column::Name.eq(name.as_str()))
            .filter(Column::Visibility.eq(Visibility::Private.as_str()))
            .limit(1)
            .into_tuple::<String>()
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(found.is_some())
    }

    async fn count_versions(&self, scope: &ArtifactScope, name: &ArtifactName) -> Result<u64, RepositoryError> {
        artifact_versions::Entity::find()
            .filter(Column::Scope.eq(scope.as_str()))
            .filter(Column::Name.eq(name.as_str()))
            .count(&self.db)
            .await
            .map_err(repository_error)
    }

    async fn latest_versions(
        &self,
        query: &ArtifactQuery,
        page: ResultPage,
    ) -> Result<Vec<ListedVersion>, RepositoryError> {
        let backend = self.db.get_database_backend();
        // The listing columns: the manifest (a blueprint's may be megabytes) is never read, by
        // the registry or by the database.
        let mut select = artifact_versions::Entity::find()
            .select_only()
            .columns([
                Column::Scope,
                Column::Name,
                Column::Version,
                Column::Kind,
                Column::Visibility,
                Column::Publisher,
                Column::Facets,
                Column::Description,
            ])
            .filter(admitted(query, artifact_versions::Entity.into_iden()))
            .filter(Expr::not_exists(outranking(query)));
        if let Some(text) = &query.text {
            select = select.filter(Expr::col(Column::SearchText).like(pattern(containing(text))));
        }
        if let Some(tag) = &query.tag {
            select = select.filter(Expr::col(Column::Facets).like(pattern(with_facet("tag", tag))));
        }
        if let Some(hook) = &query.hook {
            select = select.filter(Expr::col(Column::Facets).like(pattern(with_facet("hook", hook))));
        }
        if let Some(after) = &page.after {
            let (scope, name) = (byte_wise(Column::Scope, backend), byte_wise(Column::Name, backend));
            select = select.filter(
                Condition::any()
                    .add(scope.clone().gt(after.scope.as_str()))
                    .add(scope.eq(after.scope.as_str()).and(name.gt(after.name.as_str()))),
            );
        }
        for column in [Column::Scope, Column::Name] {
            select = select.order_by(byte_wise(column, backend), Order::Asc);
        }
        select
            .limit(page.limit)
            .into_model::<ListingColumns>()
            .all(&self.db)
            .await
            .map_err(repository_error)?
            .into_iter()
            .map(ListingColumns::into_listed)
            .collect()
    }

    async fn yank(
        &self,
        identity: &ArtifactIdentity,
        reason: &str,
        now: DateTime<Utc>,
    ) -> Result<(ArtifactVersion, YankOutcome), TransitionError<ArtifactError>> {
        for _ in 0..RACE_ATTEMPTS {
            let current = self
                .get(identity)
                .await?
                .ok_or(TransitionError::Rejected(ArtifactError::NotFound))?;
            let (next, outcome) = current.yank(reason, now);
            if outcome == YankOutcome::AlreadyYanked {
                return Ok((next, outcome));
            }
            // Compare-and-set on the status that was read; the first yank's time and reason stay.
            let (scope, name, version) = primary_key(identity);
            let updated = artifact_versions::Entity::update_many()
                .col_expr(Column::Status, Expr::value(next.status.as_str()))
                .col_expr(Column::YankReason, Expr::value(next.yank_reason.clone()))
                .col_expr(Column::YankedAt, Expr::value(next.yanked_at))
                .filter(Column::Scope.eq(scope))
                .filter(Column::Name.eq(name))
                .filter(Column::Version.eq(version))
                .filter(Column::Status.eq(current.status.as_str()))
                .exec(&self.db)
                .await
                .map_err(repository_error)?;
            if updated.rows_affected == 1 {
                return Ok((next, outcome));
            }
        }
        Err(contention("artifact version").into())
    }
}

/// The versions of `table` a package's latest is chosen from: keyed for search, published, of
/// the query's kind, scope and visibility. (An unkeyed version could be neither outranked nor
/// outrank another: its package would be answered twice.)
fn admitted(query: &ArtifactQuery, table: DynIden) -> Condition {
    let column = |c: Column| Expr::col((table.clone(), c));
    let mut condition = Condition::all()
        .add(column(Column::PrecedenceKey).is_not_null())
        .add(column(Column::Status).eq(ArtifactStatus::Published.as_str()));
    if let Some(kind) = query.kind {
        condition = condition.add(column(Column::Kind).eq(kind.as_str()));
    }
    if let Some(scope) = &query.scope {
        condition = condition.add(column(Column::Scope).eq(scope.as_str()));
    }
    if !query.include_private {
        condition = condition.add(column(Column::Visibility).eq(Visibility::Public.as_str()));
    }
    condition
}

/// An admitted version of the same package that outranks the outer row: the outer row is its
/// package's latest when there is none.
fn outranking(query: &ArtifactQuery) -> SelectStatement {
    let newer: DynIden = Alias::new("newer").into_iden();
    let outer = artifact_versions::Entity.into_iden();
    let same = |c: Column| Expr::col((newer.clone(), c)).equals((outer.clone(), c));
    Query::select()
        .expr(Expr::val(1))
        .from_as(artifact_versions::Entity, newer.clone())
        .cond_where(
            admitted(query, newer.clone())
                .add(same(Column::Scope))
                .add(same(Column::Name))
                .add(
                    Expr::col((newer.clone(), Column::PrecedenceKey))
                        .gt(Expr::col((outer.clone(), Column::PrecedenceKey))),
                ),
        )
        .to_owned()
}

/// What a search reads of a version: no manifest, no signature.
#[derive(Debug, FromQueryResult)]
struct ListingColumns {
    scope: String,
    name: String,
    version: String,
    kind: String,
    visibility: String,
    publisher: String,
    facets: Option<String>,
    description: Option<String>,
}

impl ListingColumns {
    fn into_listed(self) -> Result<ListedVersion, RepositoryError> {
        let (mut tags, mut hooks) = (Vec::new(), Vec::new());
        for line in self.facets.as_deref().unwrap_or_default().lines() {
            if let Some(tag) = line.strip_prefix("tag:") {
                tags.push(tag.to_owned());
            } else if let Some(hook) = line.strip_prefix("hook:") {
                hooks.push(hook.to_owned());
            }
        }
        Ok(ListedVersion {
            identity: stored_identity(&self.scope, &self.name, &self.version)?,
            kind: stored_kind(&self.kind)?,
            visibility: stored_visibility(&self.visibility)?,
            publisher: self.publisher,
            description: self.description.unwrap_or_default(),
            tags,
            hooks,
        })
    }
}

/// What a version listing reads of a version.
#[derive(Debug, FromQueryResult)]
struct VersionColumns {
    scope: String,
    name: String,
    version: String,
    visibility: String,
    status: String,
    published_at: DateTime<Utc>,
}

impl VersionColumns {
    fn into_row(self) -> Result<VersionRow, RepositoryError> {
        Ok(VersionRow {
            identity: stored_identity(&self.scope, &self.name, &self.version)?,
            visibility: stored_visibility(&self.visibility)?,
            status: stored_status(&self.status)?,
            published_at: self.published_at,
        })
    }
}

fn stored_identity(scope: &str, name: &str, version: &str) -> Result<ArtifactIdentity, RepositoryError> {
    ArtifactIdentity::parse(scope, name, version)
        .map_err(|error| corrupt("registry_artifact_versions.version", error.to_string()))
}

fn stored_kind(kind: &str) -> Result<ArtifactKind, RepositoryError> {
    ArtifactKind::parse(kind).ok_or_else(|| corrupt("registry_artifact_versions.kind", format!("kind {kind:?}")))
}

fn stored_visibility(visibility: &str) -> Result<Visibility, RepositoryError> {
    Visibility::parse(visibility).ok_or_else(|| {
        corrupt(
            "registry_artifact_versions.visibility",
            format!("visibility {visibility:?}"),
        )
    })
}

fn stored_status(status: &str) -> Result<ArtifactStatus, RepositoryError> {
    ArtifactStatus::parse(status)
        .ok_or_else(|| corrupt("registry_artifact_versions.status", format!("status {status:?}")))
}

fn pattern(text: String) -> LikeExpr {
    LikeExpr::new(text).escape(LIKE_ESCAPE)
}

/// `column` compared and ordered by its bytes: PostgreSQL would otherwise use the database's
/// collation (which may skip punctuation); SQLite's default and MySQL's `utf8mb4_bin` already do.
fn byte_wise(column: Column, backend: DbBackend) -> Expr {
    match backend {
        DbBackend::Postgres => Expr::cust(format!("\"{}\" COLLATE \"C\"", column.as_str())),
        _ => Expr::col(column),
    }
}

fn primary_key(identity: &ArtifactIdentity) -> (String, String, String) {
    (
        identity.scope.as_str().to_owned(),
        identity.name.as_str().to_owned(),
        identity.version.as_str().to_owned(),
    )
}

fn version_row(version: &ArtifactVersion, stored_bytes: u64) -> artifact_versions::ActiveModel {
    let (scope, name, semver) = primary_key(&version.identity);
    let search = SearchColumns::of(&version.identity, &version.manifest);
    artifact_versions::ActiveModel {
        scope: Set(scope),
        name: Set(name),
        version: Set(semver),
        kind: Set(version.kind.as_str().to_owned()),
        visibility: Set(version.visibility.as_str().to_owned()),
        publisher: Set(version.publisher.clone()),
        manifest: Set(version.manifest.clone()),
        signature_algorithm: Set(version.signature.algorithm.as_str().to_owned()),
        signature_public_key_id: Set(version.signature.public_key_id.clone()),
        signature_value: Set(version.signature.value.clone()),
        sigstore_bundle: Set(version.signature.sigstore_bundle.clone()),
        author_public_key: Set(version.author_public_key.clone()),
        bundle_sri: Set(version.bundle_sri.clone()),
        status: Set(version.status.as_str().to_owned()),
        yank_reason: Set(version.yank_reason.clone()),
        published_at: Set(version.published_at),
        yanked_at: Set(version.yanked_at),
        precedence_key: Set(Some(search.precedence_key)),
        search_text: Set(Some(search.search_text)),
        facets: Set(Some(search.facets)),
        description: Set(Some(search.description)),
        release_key: Set(Some(version.identity.version.release().to_owned())),
        stored_bytes: Set(Some(publisher_usage::stored(stored_bytes))),
    }
}

fn version_from_row(row: artifact_versions::Model) -> Result<ArtifactVersion, RepositoryError> {
    let unreadable = |column, detail: String| corrupt(column, detail);
    Ok(ArtifactVersion {
        identity: stored_identity(&row.scope, &row.name, &row.version)?,
        kind: stored_kind(&row.kind)?,
        visibility: stored_visibility(&row.visibility)?,
        status: stored_status(&row.status)?,
        publisher: row.publisher,
        manifest: row.manifest,
        signature: StoredSignature {
            algorithm: SignatureAlgorithm::parse(&row.signature_algorithm).ok_or_else(|| {
                unreadable(
                    "registry_artifact_versions.signature_algorithm",
                    format!("algorithm {:?}", row.signature_algorithm),
                )
            })?,
            public_key_id: row.signature_public_key_id,
            value: row.signature_value,
            sigstore_bundle: row.sigstore_bundle,
        },
        author_public_key: row.author_public_key,
        bundle_sri: row.bundle_sri,
        yank_reason: row.yank_reason,
        published_at: row.published_at,
        yanked_at: row.yanked_at,
    })
}
