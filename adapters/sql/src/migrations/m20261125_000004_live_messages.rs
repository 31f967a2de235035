//! Live events too large for a NOTIFY payload travel through this table (PostgreSQL only uses it).

use sea_orm_migration::prelude::*;

use super::one_table::{create_table_if_missing, drop_table_if_exists};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table_if_missing(manager, Alias::new("live_messages"), |table, c| {
            table
                .col(c.big("id").auto_increment().primary_key())
                .col(c.text("body"))
                .col(c.time("created_at"));
        })
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table_if_exists(manager, Alias::new("live_messages")).await
    }
}
