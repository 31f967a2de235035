use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "credit_reservations")]
pub struct Model {
    /// The transaction id of the reservation's `render_charge` row.
    #[sea_orm(primary_key, auto_increment = false)]
    pub transaction_id: String,
    pub principal_type: String,
    pub principal_id: String,
    pub amount_cents: i64,
    pub related_session_id: Option<String>,
    pub opened_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
