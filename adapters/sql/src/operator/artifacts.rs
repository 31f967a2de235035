use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveValue::Set, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
use svc_application::ports::RepositoryError;
use svc_application::ports::operator::{ArtifactRepository, TransitionError};
use svc_domain::artifact::{
    ArtifactError, ArtifactIdentity, ArtifactKind, ArtifactSignature, ArtifactStatus, ArtifactVersion, Visibility,
    YankOutcome,
};

use super::entities::artifact_versions;
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

    async fn yank(
        &self,
        identity: &ArtifactIdentity,
        now: DateTime<Utc>,
    ) -> Result<(ArtifactVersion, YankOutcome), TransitionError<ArtifactError>> {
        for _ in 0..RACE_ATTEMPTS {
            let current = self
                .get(identity)
                .await?
                .ok_or(TransitionError::Rejected(ArtifactError::NotFound))?;
            let (next, outcome) = current.yank(now);
            if next == current {
                return Ok((next, outcome));
            }
            // Compare-and-set on the status that was read; the first yank's time is kept.
            let (scope, name, version) = primary_key(identity);
            let updated = artifact_versions::Entity::update_many()
                .col_expr(artifact_versions::Column::Status, Expr::value(next.status.as_str()))
                .col_expr(artifact_versions::Column::YankedAt, Expr::value(next.yanked_at))
                .filter(artifact_versions::Column::Scope.eq(scope))
                .filter(artifact_versions::Column::Name.eq(name))
                .filter(artifact_versions::Column::Version.eq(version))
                .filter(artifact_versions::Column::Status.eq(current.status.as_str()))
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
        identity.scope.clone(),
        identity.name.clone(),
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
        manifest: Set(version.manifest.clone()),
        signature_algorithm: Set(version.signature.algorithm.clone()),
        signature_public_key_id: Set(version.signature.public_key_id.clone()),
        signature_bundle_sha384: Set(version.signature.bundle_sha384.clone()),
        author_public_key: Set(version.author_public_key.clone()),
        bundle_sri: Set(version.bundle_sri.clone()),
        status: Set(version.status.as_str().to_owned()),
        published_at: Set(version.published_at),
        yanked_at: Set(version.yanked_at),
    }
}

fn version_from_row(row: artifact_versions::Model) -> Result<ArtifactVersion, RepositoryError> {
    let unreadable = |detail: String| corrupt("artifact_versions", detail);
    Ok(ArtifactVersion {
        identity: ArtifactIdentity::parse(&row.scope, &row.name, &row.version)
            .map_err(|error| unreadable(error.to_string()))?,
        kind: ArtifactKind::parse(&row.kind).ok_or_else(|| unreadable(format!("kind {:?}", row.kind)))?,
        visibility: Visibility::parse(&row.visibility)
            .ok_or_else(|| unreadable(format!("visibility {:?}", row.visibility)))?,
        status: ArtifactStatus::parse(&row.status).ok_or_else(|| unreadable(format!("status {:?}", row.status)))?,
        manifest: row.manifest,
        signature: ArtifactSignature {
            algorithm: row.signature_algorithm,
            public_key_id: row.signature_public_key_id,
            bundle_sha384: row.signature_bundle_sha384,
        },
        author_public_key: row.author_public_key,
        bundle_sri: row.bundle_sri,
        published_at: row.published_at,
        yanked_at: row.yanked_at,
    })
}
