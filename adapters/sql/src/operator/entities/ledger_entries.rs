use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ledger_entries")]
pub struct Model {
    /// Write order; the listing cursor.
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub transaction_id: String,
    pub principal_type: String,
    pub principal_id: String,
    pub kind: String,
    pub delta_cents: i64,
    pub balance_after_cents: i64,
    pub reason: String,
    pub created_at: DateTimeUtc,
    pub related_session_id: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
