//! `write_guards`: one row per bounded scope (`apps` of an owner, `blueprints` of an app) that a
//! write transaction locks before it counts the scope's rows and inserts one
//! (`crate::write_guards`), so concurrent inserts at a bound queue instead of all counting the
//! same number and overshooting it.

use sea_orm_migration::prelude::*;

use super::columns::Columns;

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
        let c = Columns::new(manager.get_database_backend());
        manager
            .create_table(
                Table::create()
                    .table(T::Table)
                    .if_not_exists()
                    .col(c.string(T::Scope))
                    .col(c.string(T::Holder))
                    .col(c.time(T::TakenAt))
                    .primary_key(Index::create().col(T::Scope).col(T::Holder))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(WriteGuards::Table).if_exists().to_owned())
            .await
    }
}
