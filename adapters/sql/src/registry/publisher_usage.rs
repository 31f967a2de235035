//! What each publisher's versions hold (`registry_publisher_usage.stored_bytes`,
//! m20261226_000002), charged inside the transaction that stores a version: a conditional
//! update that adds the version's bytes only while the sum stays within the bound, so
//! publishes at the same moment never pass it together (the row's lock orders them).

use sea_orm::sea_query::{Expr, ExprTrait, OnConflict, Query};
use sea_orm::{ConnectionTrait, DbErr, DeriveIden};

#[derive(DeriveIden)]
enum RegistryPublisherUsage {
    Table,
    Publisher,
    StoredBytes,
}

use RegistryPublisherUsage as T;

/// Makes the publisher's row, committed on its own before any transaction locks it (an insert
/// racing another for a missing key inside a transaction could deadlock on MySQL's gap locks).
pub(super) async fn ensure_row(db: &impl ConnectionTrait, publisher: &str) -> Result<(), DbErr> {
    let insert = Query::insert()
        .into_table(T::Table)
        .columns([T::Publisher, T::StoredBytes])
        .values_panic([publisher.into(), 0i64.into()])
        .on_conflict(
            OnConflict::column(T::Publisher)
                // MySQL spells "do nothing" as an update of the key to itself.
                .do_nothing_on([T::Publisher])
                .to_owned(),
        )
        .to_owned();
    db.execute(&insert).await.map(drop)
}

/// Adds `bytes` to the publisher's usage when that keeps it at most `max`; answers whether it
/// did. The row exists ([`ensure_row`]).
pub(super) async fn charge(db: &impl ConnectionTrait, publisher: &str, bytes: u64, max: u64) -> Result<bool, DbErr> {
    let Some(room) = max.checked_sub(bytes) else {
        return Ok(false);
    };
    let update = Query::update()
        .table(T::Table)
        .value(T::StoredBytes, Expr::col(T::StoredBytes).add(stored(bytes)))
        .and_where(Expr::col(T::Publisher).eq(publisher))
        .and_where(Expr::col(T::StoredBytes).lte(stored(room)))
        .to_owned();
    // `bytes` is never 0 (a manifest is stored), so a charged row changed: MySQL counts it.
    Ok(db.execute(&update).await?.rows_affected() == 1)
}

/// Adds `bytes` to the publisher's usage, whatever the bound: a version stored before it was
/// counted (`version_sizes.rs`). The row exists ([`ensure_row`]).
pub(super) async fn add(db: &impl ConnectionTrait, publisher: &str, bytes: u64) -> Result<(), DbErr> {
    let update = Query::update()
        .table(T::Table)
        .value(T::StoredBytes, Expr::col(T::StoredBytes).add(stored(bytes)))
        .and_where(Expr::col(T::Publisher).eq(publisher))
        .to_owned();
    db.execute(&update).await.map(drop)
}

/// The publisher's usage; 0 before its first publish.
pub(super) async fn read(db: &impl ConnectionTrait, publisher: &str) -> Result<u64, DbErr> {
    let select = Query::select()
        .column(T::StoredBytes)
        .from(T::Table)
        .and_where(Expr::col(T::Publisher).eq(publisher))
        .to_owned();
    let Some(row) = db.query_one(&select).await? else {
        return Ok(0);
    };
    let held: i64 = row.try_get("", "stored_bytes")?;
    Ok(u64::try_from(held).unwrap_or_default())
}

/// A byte count as the column holds it (BIGINT): bounds are far below `i64::MAX`.
pub(super) fn stored(bytes: u64) -> i64 {
    i64::try_from(bytes).unwrap_or(i64::MAX)
}
