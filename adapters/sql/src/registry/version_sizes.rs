//! Each version's `stored_bytes` (m20261228_000001): its bundle's bytes plus its manifest's as
//! compact JSON, what it costs its publisher (docs/registry.md, "The publish quotas"). A publish
//! writes it with the version; a version a registry of an earlier release stored is sized here,
//! from its bundle file, when a registry of this release starts.
//!
//! Sizing also charges the publisher, once, for a version stored before its publisher's usage
//! was counted at all: one published before m20261226_000002 was applied. A version published
//! after it was charged as it was stored (by a release that counted usage but kept no size), so
//! it is only sized.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Alias, Expr, ExprTrait, Query};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, QueryResult, TransactionTrait};
use serde_json::Value;
use svc_application::ports::registry::BundleStore;
use svc_domain::artifact::BundleDigest;
use svc_domain::text::json_len;

use super::earlier_releases::BackfillError;
use super::entities::artifact_versions::{Column, Entity};
use super::keying::stored_identity;
use super::publisher_usage;

/// Versions sized per page: each reads its manifest, which may be large.
const PAGE: u64 = 32;

/// The migration from which each publish charges its publisher.
const USAGE_MIGRATION: &str = "m20261226_000002_registry_publisher_usage";

/// Sizes every version without a size that is otherwise complete (keyed, released, described:
/// sizing marks the row as done, `earlier_releases.rs`); answers how many it sized. A version
/// whose bundle is missing costs its manifest.
pub(super) async fn size_unsized_versions(
    db: &DatabaseConnection,
    bundles: &dyn BundleStore,
) -> Result<u64, BackfillError> {
    let counted_from = usage_counted_from(db).await?;
    let waiting = Query::select()
        .columns([
            Column::Scope,
            Column::Name,
            Column::Version,
            Column::Publisher,
            Column::Manifest,
            Column::BundleSri,
            Column::PublishedAt,
        ])
        .from(Entity)
        .and_where(Expr::col(Column::StoredBytes).is_null())
        .and_where(Expr::col(Column::Description).is_not_null())
        .and_where(Expr::col(Column::PrecedenceKey).is_not_null())
        .and_where(Expr::col(Column::ReleaseKey).is_not_null())
        .limit(PAGE)
        .to_owned();
    let mut sized = 0;
    loop {
        let rows = db.query_all(&waiting).await?;
        if rows.is_empty() {
            return Ok(sized);
        }
        for row in &rows {
            let bytes = bundle_len(bundles, row).await? + manifest_len(row);
            let published_at: DateTime<Utc> = row.try_get("", "published_at")?;
            let uncharged = counted_from.is_some_and(|from| published_at.timestamp() < from);
            if size_one(db, row, bytes, uncharged).await? {
                sized += 1;
            }
        }
    }
}

/// Records `bytes` as the row's size, and charges them when `uncharged`, in one transaction;
/// false when another registry starting at the same time sized it first.
async fn size_one(db: &DatabaseConnection, row: &QueryResult, bytes: u64, uncharged: bool) -> Result<bool, DbErr> {
    let (scope, name, version) = stored_identity(row)?;
    let publisher: String = row.try_get("", "publisher")?;
    if uncharged {
        // Committed on its own, before the transaction locks it (publisher_usage.rs).
        publisher_usage::ensure_row(db, &publisher).await?;
    }
    let txn = db.begin().await?;
    let update = Query::update()
        .table(Entity)
        .value(Column::StoredBytes, publisher_usage::stored(bytes))
        .and_where(Expr::col(Column::Scope).eq(scope))
        .and_where(Expr::col(Column::Name).eq(name))
        .and_where(Expr::col(Column::Version).eq(version))
        .and_where(Expr::col(Column::StoredBytes).is_null())
        .to_owned();
    let won = txn.execute(&update).await?.rows_affected() == 1;
    if won && uncharged {
        publisher_usage::add(&txn, &publisher, bytes).await?;
    }
    txn.commit().await?;
    Ok(won)
}

/// The size of the row's bundle file; 0 when it is missing, unreadable (logged: one bad file
/// must not keep the registry from starting) or its hash unreadable.
async fn bundle_len(bundles: &dyn BundleStore, row: &QueryResult) -> Result<u64, BackfillError> {
    let sri: String = row.try_get("", "bundle_sri")?;
    let Some(digest) = BundleDigest::from_sri(&sri) else {
        return Ok(0);
    };
    match bundles.stored_len(&digest).await {
        Ok(len) => Ok(len.unwrap_or(0)),
        Err(error) => {
            tracing::warn!(bundle = %sri, error = format!("{error:#}"), "an earlier version's bundle could not be sized; counted as 0 bytes");
            Ok(0)
        }
    }
}

fn manifest_len(row: &QueryResult) -> u64 {
    let manifest: Value = row.try_get("", "manifest").unwrap_or(Value::Null);
    json_len(&manifest) as u64
}

/// When publishes began charging their publishers (unix seconds): the time
/// [`USAGE_MIGRATION`] was applied; `None` if it is not recorded (nothing is charged then).
async fn usage_counted_from(db: &DatabaseConnection) -> Result<Option<i64>, DbErr> {
    let select = Query::select()
        .column(Alias::new("applied_at"))
        .from(Alias::new("seaql_migrations"))
        .and_where(Expr::col(Alias::new("version")).eq(USAGE_MIGRATION))
        .to_owned();
    match db.query_one(&select).await? {
        Some(row) => Ok(Some(row.try_get("", "applied_at")?)),
        None => Ok(None),
    }
}
