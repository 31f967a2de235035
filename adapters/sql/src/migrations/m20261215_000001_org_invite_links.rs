//! One-time links of org invite mails (hosted mode, `/account/invite?token=`): only the sha256
//! of the link's token is kept, with the invite it opens.

use sea_orm_migration::prelude::*;

use super::fit;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum OrgInviteLinks {
    Table,
    TokenHash,
    InviteId,
    CreatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let b = manager.get_database_backend();
        manager
            .create_table(
                Table::create()
                    .table(OrgInviteLinks::Table)
                    .if_not_exists()
                    .col(
                        ColumnDef::new(OrgInviteLinks::TokenHash)
                            .string_len(64)
                            .not_null()
                            .primary_key(),
                    )
                    .col(ColumnDef::new(OrgInviteLinks::InviteId).string().not_null())
                    .col(fit(
                        ColumnDef::new(OrgInviteLinks::CreatedAt)
                            .timestamp_with_time_zone()
                            .not_null()
                            .to_owned(),
                        b,
                    ))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_org_invite_links_invite_id")
                    .table(OrgInviteLinks::Table)
                    .col(OrgInviteLinks::InviteId)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(OrgInviteLinks::Table).to_owned())
            .await
    }
}
