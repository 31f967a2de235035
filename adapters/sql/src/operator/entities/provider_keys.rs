use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "provider_keys")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub principal_type: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub principal_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub provider: String,
    pub label: Option<String>,
    pub last_four: String,
    pub master_key_id: String,
    pub salt_hex: String,
    pub ciphertext_hex: String,
    pub created_at: DateTimeUtc,
    pub last_used_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
