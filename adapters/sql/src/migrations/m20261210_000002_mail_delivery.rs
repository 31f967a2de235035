//! Delivery state of the mail outbox: how many attempts a mail has had, when the next may run
//! (also the lease a sender takes on it), the last failure, and when delivery gave up on it. The row stays the truth: a mail
//! is sent until `sent_at` is stamped, whatever crashes in between.

use sea_orm_migration::prelude::*;

use super::fit;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum MailOutbox {
    Table,
    Attempts,
    NextAttemptAt,
    LastError,
    GivenUpAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let b = manager.get_database_backend();
        // One column per statement: SQLite adds a single column per ALTER TABLE.
        let columns = [
            ColumnDef::new(MailOutbox::Attempts)
                .integer()
                .not_null()
                .default(0)
                .to_owned(),
            fit(
                ColumnDef::new(MailOutbox::NextAttemptAt)
                    .timestamp_with_time_zone()
                    .null()
                    .to_owned(),
                b,
            ),
            fit(ColumnDef::new(MailOutbox::LastError).text().null().to_owned(), b),
            fit(
                ColumnDef::new(MailOutbox::GivenUpAt)
                    .timestamp_with_time_zone()
                    .null()
                    .to_owned(),
                b,
            ),
        ];
        for column in columns {
            manager
                .alter_table(Table::alter().table(MailOutbox::Table).add_column(column).to_owned())
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [
            MailOutbox::GivenUpAt,
            MailOutbox::LastError,
            MailOutbox::NextAttemptAt,
            MailOutbox::Attempts,
        ] {
            manager
                .alter_table(Table::alter().table(MailOutbox::Table).drop_column(column).to_owned())
                .await?;
        }
        Ok(())
    }
}
