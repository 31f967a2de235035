//! The org an app belongs to (`svc apps configure --org-id`): renders of the app are charged to
//! the org's wallet. Kept with the app's hosted settings; null: the app belongs to no org.

use sea_orm_migration::prelude::*;

use super::fit;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum AppHostedSettings {
    Table,
    OrgId,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let b = manager.get_database_backend();
        manager
            .alter_table(
                Table::alter()
                    .table(AppHostedSettings::Table)
                    .add_column(fit(
                        ColumnDef::new(AppHostedSettings::OrgId).string().null().to_owned(),
                        b,
                    ))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(AppHostedSettings::Table)
                    .drop_column(AppHostedSettings::OrgId)
                    .to_owned(),
            )
            .await
    }
}
