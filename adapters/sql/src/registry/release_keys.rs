//! Each version's release key: its version without build metadata (`1.2.3` of `1.2.3+fix`),
//! unique per package by the index `RELEASE_INDEX` (m20261219_000001). SemVer 2.0.0 §10 gives
//! `1.2.3` and `1.2.3+fix` one precedence, so the registry holds one of them: the service refuses
//! the second after reading the package's versions, and this index refuses it when two publishes
//! pass that read at the same moment.
//!
//! Versions stored before the key existed are keyed by the migration, in the order they were
//! published; afterwards, at a registry's start, any that a registry of an earlier release
//! published since (a rolling upgrade). Of twins stored before the index (the race it closes), the
//! first published keeps the release and each later one is keyed [`left_out`]: its own version
//! followed by `+`, which no release key contains, so it is never NULL (keyed again) and never
//! collides.

use sea_orm::sea_query::{Expr, ExprTrait, Query};
use sea_orm::{ConnectionTrait, DbErr, Order};
use svc_domain::artifact::SemanticVersion;

use super::entities::artifact_versions::{Column, Entity};
use super::keying::{next_page, stored_identity};

/// The unique index over (scope, name, release key).
pub(crate) const RELEASE_INDEX: &str = "ux_registry_artifact_versions_release";

/// The release key of a stored version: its release, or (never stored by publish) its own text.
pub(crate) fn release_key(version: &str) -> String {
    SemanticVersion::parse(version).map_or_else(|_| version.to_owned(), |parsed| parsed.release().to_owned())
}

/// The key of a later twin of a release another version holds: see the module doc.
fn left_out(version: &str) -> String {
    format!("{version}+")
}

/// Keys every version without a release key, earliest published first; answers how many it
/// keyed.
pub async fn key_unreleased_versions<C: ConnectionTrait>(db: &C) -> Result<u64, DbErr> {
    let backend = db.get_database_backend();
    let unkeyed = Query::select()
        .columns([Column::Scope, Column::Name, Column::Version])
        .from(Entity)
        .and_where(Expr::col(Column::ReleaseKey).is_null())
        .order_by(Column::PublishedAt, Order::Asc)
        .order_by(Column::Version, Order::Asc)
        .to_owned();
    let mut keyed = 0;
    loop {
        let rows = next_page(db, &unkeyed).await?;
        if rows.is_empty() {
            return Ok(keyed);
        }
        for row in &rows {
            let (scope, name, version) = stored_identity(row)?;
            let release = release_key(&version);
            let key = if release_taken(db, &scope, &name, &release).await? {
                left_out(&version)
            } else {
                release
            };
            let update = Query::update()
                .table(Entity)
                .value(Column::ReleaseKey, key)
                .and_where(Expr::col(Column::Scope).eq(scope))
                .and_where(Expr::col(Column::Name).eq(name))
                .and_where(Expr::col(Column::Version).eq(version))
                .to_owned();
            db.execute_raw(backend.build(&update)).await?;
            keyed += 1;
        }
    }
}

/// Whether another version of the package already holds `release`.
async fn release_taken<C: ConnectionTrait>(db: &C, scope: &str, name: &str, release: &str) -> Result<bool, DbErr> {
    let backend = db.get_database_backend();
    let holder = Query::select()
        .column(Column::Version)
        .from(Entity)
        .and_where(Expr::col(Column::Scope).eq(scope))
        .and_where(Expr::col(Column::Name).eq(name))
        .and_where(Expr::col(Column::ReleaseKey).eq(release))
        .limit(1)
        .to_owned();
    Ok(db.query_one_raw(backend.build(&holder)).await?.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_left_out_twin_never_holds_a_release() {
        let versions = ["1.2.3", "1.2.3+fix", "1.2.3-rc.1+a.b"];
        for version in versions {
            assert!(!release_key(version).contains('+'), "{version}");
            assert!(left_out(version).contains('+'), "{version}");
        }
        let left: std::collections::HashSet<String> = versions.iter().map(|v| left_out(v)).collect();
        assert_eq!(left.len(), versions.len(), "one key per version");
    }
}
