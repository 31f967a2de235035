//! `oauth_client_keys`: the key each redeemed code delivered to a client for an owner, so a
//! client that connects again has its earlier key revoked (Document 2: one row in the key list
//! per connected client). A URL `client_id` can be long, so it is text and the index is on the
//! owner alone (an owner holds a handful of keys).

use sea_orm_migration::prelude::*;

use super::columns::Columns;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum OauthClientKeys {
    Table,
    KeyId,
    ClientId,
    OwnerId,
    DeliveredAt,
}

const INDEX: &str = "ix_oauth_client_keys_owner_id";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let c = Columns::new(manager.get_database_backend());
        manager
            .create_table(
                Table::create()
                    .table(OauthClientKeys::Table)
                    .col(c.key(OauthClientKeys::KeyId))
                    .col(c.text(OauthClientKeys::ClientId))
                    .col(c.string(OauthClientKeys::OwnerId))
                    .col(c.time(OauthClientKeys::DeliveredAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name(INDEX)
                    .table(OauthClientKeys::Table)
                    .col(OauthClientKeys::OwnerId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(OauthClientKeys::Table).if_exists().to_owned())
            .await
    }
}
