//! The blueprint cache grows the fields search, the manifest catalog, pools and the operator
//! blueprint tools need: display fields, fixture props, the stored embedding vector, featured,
//! persona, aesthetic, the operator default flag, where the component came from, and `updated_at`
//! (the watermark replicas refresh their in-memory index from).
//!
//! SQLite adds one column per `ALTER TABLE`, and only with a constant default, so every column is
//! its own statement and `updated_at` is nullable (backfilled from `created_at`; the repository
//! always writes it).

use sea_orm_migration::prelude::*;

use super::columns::Columns;

#[derive(DeriveMigrationName)]
pub struct Migration;

const TABLE: &str = "blueprints";

fn columns(c: Columns) -> Vec<ColumnDef> {
    vec![
        c.optional_text("name"),
        c.optional_text("description"),
        c.optional_string("category"),
        c.optional_text("fixture_props"),
        c.fit(ColumnDef::new("embedding").binary().null()),
        c.optional_string("embedding_model"),
        c.flag("featured").default(false).to_owned(),
        c.optional_string("persona"),
        c.optional_string("aesthetic"),
        c.flag("is_operator_default").default(false).to_owned(),
        c.string("source_kind").default("llm").to_owned(),
        c.optional_time("updated_at"),
    ]
}

const INDEXES: [(&str, &[&str]); 2] = [
    ("blueprints_updated_at", &["updated_at"]),
    ("blueprints_app_contract", &["app_id", "contract_hash"]),
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for mut column in columns(Columns::new(manager.get_database_backend())) {
            manager
                .alter_table(
                    Table::alter()
                        .table(Alias::new(TABLE))
                        .add_column(&mut column)
                        .to_owned(),
                )
                .await?;
        }
        manager
            .get_connection()
            .execute_unprepared("UPDATE blueprints SET updated_at = created_at WHERE updated_at IS NULL")
            .await?;
        for (name, cols) in INDEXES {
            let mut index = Index::create();
            index.name(name).table(Alias::new(TABLE)).if_not_exists();
            for col in cols {
                index.col(Alias::new(*col));
            }
            manager.create_index(index.to_owned()).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, _) in INDEXES {
            let mut drop = Index::drop();
            drop.name(name).table(Alias::new(TABLE));
            // MySQL has no DROP INDEX IF EXISTS; there the index is known to exist.
            if manager.get_database_backend() != sea_orm::DbBackend::MySql {
                drop.if_exists();
            }
            manager.drop_index(drop.to_owned()).await?;
        }
        for column in columns(Columns::new(manager.get_database_backend())).into_iter().rev() {
            manager
                .alter_table(
                    Table::alter()
                        .table(Alias::new(TABLE))
                        .drop_column(Alias::new(column.get_column_name()))
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
