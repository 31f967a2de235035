//! `write_guards`: one row per bounded scope (`apps` of an owner, `blueprints` of an app) that a
//! write transaction locks before it counts the scope's rows and inserts one
//! (`crate::write_guards`), so concurrent inserts at a bound queue instead of all counting the
//! same number and overshooting it.

use sea_orm_migration::prelude::*;

use super::one_table::{create_table_if_missing, drop_table_if_exists};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum WriteGuards {
    Table,
    Scope,
    Holder,
    TakenAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use WriteGuards as T;
        create_table_if_missing(manager, T::Table, |table, c| {
            table
                .col(c.string(T::Scope))
                .col(c.string(T::Holder))
                .col(c.time(T::TakenAt))
                .primary_key(Index::create().col(T::Scope).col(T::Holder));
        })
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table_if_exists(manager, WriteGuards::Table).await
    }
}
