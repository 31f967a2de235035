use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "wallets")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub principal_type: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub principal_id: String,
    pub balance_cents: i64,
    pub lifetime_granted_cents: i64,
    pub lifetime_spent_cents: i64,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
