use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "coupons")]
pub struct Model {
    /// sha256 hex of the code (`CouponCode::stored_hash`); the code itself is never stored.
    #[sea_orm(primary_key, auto_increment = false)]
    pub code_hash: String,
    pub credit_cents: i64,
    pub status: String,
    pub created_at: DateTimeUtc,
    pub expires_at: Option<DateTimeUtc>,
    pub activated_at: Option<DateTimeUtc>,
    pub redeemed_by_principal_type: Option<String>,
    pub redeemed_by_principal_id: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
