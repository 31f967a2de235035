//! `credit_reservations`: the open reservation of each cold render's charge (hosted mode),
//! written in the transaction of its `render_charge` row and deleted when the render settles or
//! refunds it, so a reservation whose process died is still there to be refunded by the sweep.
//! Keyed by the charge's transaction id; the sweep reads it by `opened_at`. Guarded like
//! `m20261220`: MariaDB commits each statement of a migration by itself, so a run that stopped
//! between them is finished here.

use sea_orm_migration::prelude::*;

use super::one_table::{create_table_if_missing, drop_table_if_exists};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum CreditReservations {
    Table,
    TransactionId,
    PrincipalType,
    PrincipalId,
    AmountCents,
    RelatedSessionId,
    OpenedAt,
}

const OPENED_AT_INDEX: &str = "ix_credit_reservations_opened_at";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use CreditReservations as T;
        create_table_if_missing(manager, T::Table, |table, c| {
            table
                .col(c.key(T::TransactionId))
                .col(c.string(T::PrincipalType))
                .col(c.string(T::PrincipalId))
                .col(c.big(T::AmountCents))
                .col(c.optional_string(T::RelatedSessionId))
                .col(c.time(T::OpenedAt));
        })
        .await?;
        if manager.has_index(&T::Table.to_string(), OPENED_AT_INDEX).await? {
            return Ok(());
        }
        manager
            .create_index(
                Index::create()
                    .name(OPENED_AT_INDEX)
                    .table(T::Table)
                    .col(T::OpenedAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table_if_exists(manager, CreditReservations::Table).await
    }
}
