//! `oauth_client_keys`: the key each redeemed code delivered to a client's connection (client,
//! owner, app), so a client that connects again has its earlier key revoked (Document 2: one row
//! in the key list per connected client). `seq` orders the deliveries the same way on every
//! replica. A URL `client_id` can be long, so it is text and the indexes are on the owner (an
//! owner holds a handful of keys) and the key. Guarded like `m20261219`: MariaDB commits each
//! statement of a migration by itself, so a run that stopped between them is finished here.

use sea_orm_migration::prelude::*;

use super::one_table::{create_table_if_missing, drop_table_if_exists};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum OauthClientKeys {
    Table,
    Seq,
    KeyId,
    ClientId,
    OwnerId,
    /// The app of a per-app connection; empty for a universal one.
    AppId,
    DeliveredAt,
}

const OWNER_INDEX: &str = "ix_oauth_client_keys_owner_id";
const KEY_INDEX: &str = "ix_oauth_client_keys_key_id";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        create_table_if_missing(manager, OauthClientKeys::Table, |table, c| {
            table
                .col(c.big(OauthClientKeys::Seq).auto_increment().primary_key())
                .col(c.string(OauthClientKeys::KeyId))
                .col(c.text(OauthClientKeys::ClientId))
                .col(c.string(OauthClientKeys::OwnerId))
                .col(c.string(OauthClientKeys::AppId))
                .col(c.time(OauthClientKeys::DeliveredAt));
        })
        .await?;
        let table = OauthClientKeys::Table.to_string();
        for (name, column) in [
            (OWNER_INDEX, OauthClientKeys::OwnerId),
            (KEY_INDEX, OauthClientKeys::KeyId),
        ] {
            if !manager.has_index(&table, name).await? {
                manager
                    .create_index(
                        Index::create()
                            .name(name)
                            .table(OauthClientKeys::Table)
                            .col(column)
                            .to_owned(),
                    )
                    .await?;
            }
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        drop_table_if_exists(manager, OauthClientKeys::Table).await
    }
}
