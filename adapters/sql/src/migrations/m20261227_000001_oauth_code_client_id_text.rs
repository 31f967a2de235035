//! `oauth_authorization_codes.client_id` as text on MariaDB: a metadata-document `client_id` is a
//! URL of any length, and the column was a `VARCHAR(255)` there, so a code for a client whose URL
//! is longer could not be stored (strict mode refuses the row; without it the id would be cut and
//! the code never redeemed). It becomes a `longtext`, like `oauth_client_keys.client_id`, and its
//! index (`m20261225_000001_oauth_client_id_indexes`) one on the first 255 characters, as
//! MariaDB indexes a `longtext` only by a prefix. On PostgreSQL (`varchar` with no length) and
//! SQLite the column already holds any length: nothing to do.
//!
//! MariaDB commits each statement by itself: each step can run again after a run that stopped
//! between them. Rolling back makes the column a `VARCHAR(255)` again, which MariaDB refuses
//! while a code of a longer `client_id` is stored (a code lives five minutes).

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

use super::columns::Columns;
use super::m20261225_000001_oauth_client_id_indexes::client_id_index;

#[derive(DeriveMigrationName)]
pub struct Migration;

const TABLE: &str = "oauth_authorization_codes";
const INDEX: &str = "ix_oauth_authorization_codes_client_id";

/// The column as `text` (`true`) or as the `VARCHAR(255)` it was, with its index to match.
async fn store_client_id_as(manager: &SchemaManager<'_>, text: bool) -> Result<(), DbErr> {
    let backend = manager.get_database_backend();
    if backend != DbBackend::MySql {
        return Ok(());
    }
    // MariaDB refuses to change the type of a column an index covers whole into `longtext`.
    if manager.has_index(TABLE, INDEX).await? {
        manager
            .drop_index(Index::drop().name(INDEX).table(Alias::new(TABLE)).to_owned())
            .await?;
    }
    let c = Columns::new(backend);
    let column = Alias::new("client_id");
    let column = if text { c.text(column) } else { c.string(column) };
    manager
        .alter_table(Table::alter().table(Alias::new(TABLE)).modify_column(column).to_owned())
        .await?;
    manager.create_index(client_id_index(INDEX, TABLE, text, backend)).await
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        store_client_id_as(manager, true).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        store_client_id_as(manager, false).await
    }
}
