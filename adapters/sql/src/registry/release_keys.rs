//! Each version's release key: its version without build metadata (`1.2.3` of `1.2.3+fix`),
//! unique per package by the index `RELEASE_INDEX` (m20261219_000001). SemVer 2.0.0 §10 gives
//! `1.2.3` and `1.2.3+fix` one precedence, so the registry holds one of them: the service refuses
//! the second after reading the package's versions, and this index refuses it when two publishes
//! pass that read at the same moment.
//!
//! Versions stored before the key existed are keyed by the migration, in the order they were
//! published; afterwards, at a registry's start, any that a registry of an earlier release
//! published since (a rolling upgrade). Of twins stored before the index (the race it closes), the
//! first keyed (the first published, unless the keying races a publish) keeps the release and
//! each other one is keyed [`left_out`]: a text with `+`, which no release key contains, so it is
//! never NULL (keyed again) and never collides.

use sea_orm::sea_query::{Expr, ExprTrait, Query};
use sea_orm::{ConnectionTrait, DbErr, Order};
use svc_domain::artifact::SemanticVersion;

use super::entities::artifact_versions::{Column, Entity};
use super::keying::{next_page, stored_identity};
use crate::errors::is_unique_violation;

/// The unique index over (scope, name, release key).
pub(crate) const RELEASE_INDEX: &str = "ux_registry_artifact_versions_release";

/// The release key of a stored version: its release, or (never stored by publish) its own text.
pub(crate) fn release_key(version: &str) -> String {
    SemanticVersion::parse(version).map_or_else(|_| version.to_owned(), |parsed| parsed.release().to_owned())
}

/// The key of a later twin of a release another version holds (see the module doc): its own
/// version where that carries build metadata (it contains `+`, which no release does), else the
/// version followed by `+`.
fn left_out(version: &str) -> String {
    if version.contains('+') {
        version.to_owned()
    } else {
        format!("{version}+")
    }
}

/// Keys every version without a release key, earliest published first; answers how many it
/// keyed.
pub async fn key_unreleased_versions<C: ConnectionTrait>(db: &C) -> Result<u64, DbErr> {
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
            let holds_release = !release_taken(db, &scope, &name, &version, &release).await?
                && match set_unkeyed(db, &scope, &name, &version, &release).await {
                    Ok(()) => true,
                    // A publish (or another registry starting) took the release since the look.
                    // Inside the migration's transaction on PostgreSQL the violation ends the
                    // transaction: the migration fails and runs again at the next start.
                    Err(error) if is_unique_violation(&error) => false,
                    Err(error) => return Err(error),
                };
            if !holds_release {
                set_unkeyed(db, &scope, &name, &version, &left_out(&version)).await?;
            }
            keyed += 1;
        }
    }
}

/// Keys `version` as `key` unless it is keyed already (by another registry keying at the same
/// time, whose key stands).
async fn set_unkeyed<C: ConnectionTrait>(
    db: &C,
    scope: &str,
    name: &str,
    version: &str,
    key: &str,
) -> Result<(), DbErr> {
    let update = Query::update()
        .table(Entity)
        .value(Column::ReleaseKey, key)
        .and_where(Expr::col(Column::Scope).eq(scope))
        .and_where(Expr::col(Column::Name).eq(name))
        .and_where(Expr::col(Column::Version).eq(version))
        .and_where(Expr::col(Column::ReleaseKey).is_null())
        .to_owned();
    db.execute_raw(db.get_database_backend().build(&update)).await.map(drop)
}

/// Whether a version of the package other than `version` already holds `release`.
async fn release_taken<C: ConnectionTrait>(
    db: &C,
    scope: &str,
    name: &str,
    version: &str,
    release: &str,
) -> Result<bool, DbErr> {
    let backend = db.get_database_backend();
    let holder = Query::select()
        .column(Column::Version)
        .from(Entity)
        .and_where(Expr::col(Column::Scope).eq(scope))
        .and_where(Expr::col(Column::Name).eq(name))
        .and_where(Expr::col(Column::ReleaseKey).eq(release))
        .and_where(Expr::col(Column::Version).ne(version))
        .limit(1)
        .to_owned();
    Ok(db.query_one_raw(backend.build(&holder)).await?.is_some())
}
