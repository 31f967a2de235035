use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveValue::Set, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
use svc_application::ports::RepositoryError;
use svc_application::ports::registry::{ArtifactQuery, ArtifactRepository, TransitionError};
use svc_domain::artifact::{
    ArtifactError, ArtifactIdentity, ArtifactKind, ArtifactName, ArtifactScope, ArtifactStatus, ArtifactVersion,
    SignatureAlgorithm, StoredSignature, Visibility, YankOutcome,
};

use super::entities::artifact_versions::{self, Column};
use crate::errors::{RACE_ATTEMPTS, contention, corrupt, repository_error};

pub struct SeaOrmArtifactRepository {
    db: DatabaseConnection,
}

impl SeaOrmArtifactRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

#[async_trait::async_trait]
impl ArtifactRepository for SeaOrmArtifactRepository {
    async fn publish(&self, version: &ArtifactVersion) -> Result<(), TransitionError<ArtifactError>> {
        match artifact_versions::Entity::insert(version_row(version))
            .exec_without_returning(&self.db)
            .await
        {
            Ok(_) => Ok(()),
            Err(error) => match repository_error(error) {
                RepositoryError::Conflict(_) => Err(TransitionError::Rejected(ArtifactError::VersionExists)),
                other => Err(other.into()),
            },
        }
    }

    async fn get(&self, identity: &ArtifactIdentity) -> Result<Option<ArtifactVersion>, RepositoryError> {
        let row = artifact_versions::Entity::find_by_id(primary_key(identity))
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        row.map(version_from_row).transpose()
    }

    async fn versions(
        &self,
        scope: &ArtifactScope,
        name: &ArtifactName,
    ) -> Result<Vec<ArtifactVersion>, RepositoryError> {
        artifact_versions::Entity::find()
            .filter(Column::Scope.eq(scope.as_str()))
            .filter(Column::Name.eq(name.as_str()))
            .all(&self.db)
            .await
            .map_err(repository_error)?
            .into_iter()
            .map(version_from_row)
            .collect()
    }

    async fn search(&self, query: &ArtifactQuery) -> Result<Vec<ArtifactVersion>, RepositoryError> {
        let mut select =
            artifact_versions::Entity::find().filter(Column::Status.eq(ArtifactStatus::Published.as_str()));
        if let Some(kind) = query.kind {
            select = select.filter(Column::Kind.eq(kind.as_str()));
        }
        if let Some(scope) = &query.scope {
            select = select.filter(Column::Scope.eq(scope.as_str()));
        }
        if !query.include_private {
            select = select.filter(Column::Visibility.eq(Visibility::Public.as_str()));
        }
        select
            .all(&self.db)
            .await
            .map_err(repository_error)?
            .into_iter()
            .map(version_from_row)
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

fn primary_key(identity: &ArtifactIdentity) -> (String, String, String) {
    (
        identity.scope.as_str().to_owned(),
        identity.name.as_str().to_owned(),
        identity.version.as_str().to_owned(),
    )
}

fn version_row(version: &ArtifactVersion) -> artifact_versions::ActiveModel {
    let (scope, name, semver) = primary_key(&version.identity);
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
    }
}

fn version_from_row(row: artifact_versions::Model) -> Result<ArtifactVersion, RepositoryError> {
    let unreadable = |column, detail: String| corrupt(column, detail);
    Ok(ArtifactVersion {
        identity: ArtifactIdentity::parse(&row.scope, &row.name, &row.version)
            .map_err(|error| unreadable("registry_artifact_versions.version", error.to_string()))?,
        kind: ArtifactKind::parse(&row.kind)
            .ok_or_else(|| unreadable("registry_artifact_versions.kind", format!("kind {:?}", row.kind)))?,
        visibility: Visibility::parse(&row.visibility).ok_or_else(|| {
            unreadable(
                "registry_artifact_versions.visibility",
                format!("visibility {:?}", row.visibility),
            )
        })?,
        status: ArtifactStatus::parse(&row.status)
            .ok_or_else(|| unreadable("registry_artifact_versions.status", format!("status {:?}", row.status)))?,
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
