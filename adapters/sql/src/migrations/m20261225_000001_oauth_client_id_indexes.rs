//! Indexes on `oauth_client_keys.client_id` and `oauth_authorization_codes.client_id`: the code
//! sweep deletes a registered client only when no authorization code and no delivered key refers
//! to it (`adapters/sql/src/oauth/clients.rs`, `forget_unused`), two `NOT EXISTS` lookups by
//! `client_id` for each client it considers, which without these read both tables whole. Neither
//! column has a foreign key, so MariaDB (whose InnoDB indexes a foreign key's columns itself) had
//! indexed neither either.
//!
//! A metadata-document `client_id` is a URL of any length, so no index may refuse a long one:
//! PostgreSQL gets a hash index (a B-tree refuses a row over 2704 bytes; the lookups compare for
//! equality only); MariaDB a B-tree, on the first 255 characters of `oauth_client_keys.client_id`
//! (a `longtext`, which it indexes only by a prefix; a registered client's id, the only kind the
//! sweep looks up, fits whole) and on the whole of the codes' `client_id` (a `VARCHAR(255)`
//! there, until `m20261227_000001_oauth_code_client_id_text`); SQLite a plain one. Each is
//! created only when missing: MariaDB commits each statement of a migration by itself, so a run
//! that stopped between them is finished here.

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// (index, table, whether MariaDB stores the column as `longtext`; the codes' one becomes
/// `longtext` in `m20261227_000001_oauth_code_client_id_text`, which makes its index again).
const INDEXES: [(&str, &str, bool); 2] = [
    ("ix_oauth_client_keys_client_id", "oauth_client_keys", true),
    (
        "ix_oauth_authorization_codes_client_id",
        "oauth_authorization_codes",
        false,
    ),
];

const COLUMN: &str = "client_id";

/// Characters of a `longtext` `client_id` MariaDB indexes: as many as `oauth_clients.client_id`,
/// a `VARCHAR(255)`, holds.
const MARIADB_PREFIX: u32 = 255;

/// The index `name` on `table.client_id`; `text`: MariaDB stores the column as `longtext`.
pub(super) fn client_id_index(name: &str, table: &str, text: bool, backend: DbBackend) -> IndexCreateStatement {
    let mut index = Index::create();
    index.name(name).table(Alias::new(table));
    match backend {
        DbBackend::Postgres => {
            index.col(Alias::new(COLUMN)).index_type(IndexType::Hash);
        }
        DbBackend::MySql if text => {
            index.col((Alias::new(COLUMN), MARIADB_PREFIX));
        }
        _ => {
            index.col(Alias::new(COLUMN));
        }
    }
    index.to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let backend = manager.get_database_backend();
        for (name, table, text) in INDEXES {
            if manager.has_index(table, name).await? {
                continue;
            }
            manager
                .create_index(client_id_index(name, table, text, backend))
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, table, _) in INDEXES {
            if !manager.has_index(table, name).await? {
                continue;
            }
            manager
                .drop_index(Index::drop().name(name).table(Alias::new(table)).to_owned())
                .await?;
        }
        Ok(())
    }
}
