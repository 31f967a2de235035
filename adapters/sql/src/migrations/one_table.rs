//! The steps of a migration that adds a table: `up` creates it if it is missing (so a migration
//! cut off midway on MySQL, which commits each DDL statement, runs again), `down` drops it.

use sea_orm_migration::prelude::*;

use super::columns::Columns;

/// `CREATE TABLE IF NOT EXISTS table (...)`, with the columns and keys `define` adds, built for
/// the manager's backend.
pub(crate) async fn create_table_if_missing(
    manager: &SchemaManager<'_>,
    table: impl IntoTableRef,
    define: impl FnOnce(&mut TableCreateStatement, Columns),
) -> Result<(), DbErr> {
    let mut statement = Table::create();
    statement.table(table).if_not_exists();
    define(&mut statement, Columns::new(manager.get_database_backend()));
    manager.create_table(statement).await
}

/// `DROP TABLE table`.
pub(crate) async fn drop_table(manager: &SchemaManager<'_>, table: impl IntoTableRef) -> Result<(), DbErr> {
    manager.drop_table(Table::drop().table(table).to_owned()).await
}

/// `DROP TABLE IF EXISTS table`.
pub(crate) async fn drop_table_if_exists(manager: &SchemaManager<'_>, table: impl IntoTableRef) -> Result<(), DbErr> {
    manager
        .drop_table(Table::drop().table(table).if_exists().to_owned())
        .await
}
