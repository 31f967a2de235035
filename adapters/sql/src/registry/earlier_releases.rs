//! What a registry does as it starts for the versions a registry of an earlier release stored
//! (before a migration, or during a rolling upgrade): they lack columns this release writes with
//! each version, and get them here: search keys (`keying.rs`), release key (`release_keys.rs`),
//! description (`descriptions.rs`) and, last, size (`version_sizes.rs`).
//!
//! A NULL `stored_bytes` marks such a version: this release writes it with every version, and
//! sizing fills it in only once the other columns are. So one probe of its index answers whether
//! there is anything to do, and a start (`svc registry serve`, `token mint`, `yank`) with
//! nothing to do reads nothing else. A version an earlier release stores while this runs stays
//! unsized, and is completed by the next start.

use sea_orm::sea_query::{Expr, ExprTrait, Query};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr};
use svc_application::ports::registry::{BundleStore, BundleStoreError};

use super::descriptions::describe_unsized_versions;
use super::entities::artifact_versions::{Column, Entity};
use super::keying::key_unkeyed_versions;
use super::release_keys::key_unreleased_versions;
use super::version_sizes::size_unsized_versions;

/// How many versions each step completed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EarlierReleaseBackfill {
    pub keyed: u64,
    pub released: u64,
    pub described: u64,
    pub sized: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum BackfillError {
    #[error(transparent)]
    Database(#[from] DbErr),
    #[error("cannot read a bundle's size")]
    Bundles(#[from] BundleStoreError),
}

/// Completes every version an earlier release stored; `bundles` holds their bundles, for their
/// sizes. Without it (a command run where the bundles may not be, such as `svc registry token
/// mint --database-url`, which must not take a missing file for a lost bundle) versions are not
/// sized, and the next start with the bundles sizes them.
pub async fn backfill_earlier_release_versions(
    db: &DatabaseConnection,
    bundles: Option<&dyn BundleStore>,
) -> Result<EarlierReleaseBackfill, BackfillError> {
    if !any_unsized(db).await? {
        return Ok(EarlierReleaseBackfill::default());
    }
    Ok(EarlierReleaseBackfill {
        keyed: key_unkeyed_versions(db).await?,
        released: key_unreleased_versions(db).await?,
        described: describe_unsized_versions(db).await?,
        sized: match bundles {
            Some(bundles) => size_unsized_versions(db, bundles).await?,
            None => 0,
        },
    })
}

/// One probe of `ix_registry_artifact_versions_stored_bytes`.
async fn any_unsized(db: &DatabaseConnection) -> Result<bool, DbErr> {
    let probe = Query::select()
        .column(Column::Version)
        .from(Entity)
        .and_where(Expr::col(Column::StoredBytes).is_null())
        .limit(1)
        .to_owned();
    Ok(db.query_one(&probe).await?.is_some())
}
